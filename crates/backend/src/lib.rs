//! The seam every target sits behind: the [`Target`] and [`Backend`] traits, what a
//! backend can do ([`Caps`]), the arguments and errors of its ops, and the run's file
//! table that names the files. The engine replays against these traits; each backend
//! crate implements them.

pub mod clock;
pub mod errno;
mod files;
pub mod host;
pub mod marker;
mod memory;
mod null;
mod profile;
pub mod utc;

pub use files::{FileEntry, FileTable};
pub use memory::{ALIGN, AlignedBuf, IoBuf, IoMemory, IoRegion, LentBuf, lend_once};
pub use null::{NULL_CAPS, NullBackend, NullTarget, TimedNullTarget};
pub use profile::{
    ClientProfile, HINT_LEAD_BYTES, HINT_STRIDE_BYTES, HINT_WRITE_OP, ProfiledTarget,
};

use std::sync::Arc;

use naslab_trace::OpKind;

/// An open file as the backend knows it.
pub type Handle = u64;

/// Why one op failed: an errno (the POSIX name of the failure) and, for protocol
/// backends, the server's own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    pub errno: i32,
    pub detail: Option<String>,
}

impl OpError {
    /// An error from an errno alone.
    pub fn errno(errno: i32) -> Self {
        OpError {
            errno,
            detail: None,
        }
    }

    /// The current thread's last OS error.
    pub fn last_os() -> Self {
        let code = std::io::Error::last_os_error().raw_os_error();
        #[cfg(windows)]
        let code = code.map(errno::of_win32);
        OpError::errno(code.unwrap_or(crate::errno::EIO))
    }

    /// Whether the failure means the target cannot go on (full, read-only, broken, or
    /// something put in the workload directory that naslab never writes through: a
    /// symbolic link, a hard link to a file elsewhere, a device node, a mount): the run
    /// stops, keeping what it measured.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self.errno,
            crate::errno::ENOSPC
                | crate::errno::EDQUOT
                | crate::errno::EROFS
                | crate::errno::EIO
                | crate::errno::ENOTCONN
                | crate::errno::ELOOP
                | crate::errno::EMLINK
                | crate::errno::ENXIO
                | crate::errno::EXDEV
        )
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({})",
            errno_name(self.errno),
            crate::errno::describe(self.errno)
        )?;
        if let Some(d) = &self.detail {
            write!(f, ": {d}")?;
        }
        Ok(())
    }
}

/// The symbolic name of an errno, as results report failures.
pub fn errno_name(errno: i32) -> String {
    let name = match errno {
        crate::errno::EPERM => "EPERM",
        crate::errno::ENOENT => "ENOENT",
        crate::errno::EIO => "EIO",
        crate::errno::EBADF => "EBADF",
        crate::errno::EACCES => "EACCES",
        crate::errno::EEXIST => "EEXIST",
        crate::errno::ENOTDIR => "ENOTDIR",
        crate::errno::EISDIR => "EISDIR",
        crate::errno::EINVAL => "EINVAL",
        crate::errno::EMFILE => "EMFILE",
        crate::errno::EFBIG => "EFBIG",
        crate::errno::ENOSPC => "ENOSPC",
        crate::errno::EROFS => "EROFS",
        crate::errno::ENAMETOOLONG => "ENAMETOOLONG",
        crate::errno::ENOTEMPTY => "ENOTEMPTY",
        crate::errno::EOPNOTSUPP => "EOPNOTSUPP",
        crate::errno::EDQUOT => "EDQUOT",
        crate::errno::ENOTCONN => "ENOTCONN",
        crate::errno::ESTALE => "ESTALE",
        crate::errno::ETIMEDOUT => "ETIMEDOUT",
        crate::errno::ELOOP => "ELOOP",
        crate::errno::EXDEV => "EXDEV",
        crate::errno::EINTR => "EINTR",
        crate::errno::EMLINK => "EMLINK",
        crate::errno::ENXIO => "ENXIO",
        crate::errno::EAGAIN => "EAGAIN",
        crate::errno::ENOLCK => "ENOLCK",
        _ => return format!("errno {errno}"),
    };
    name.to_string()
}

/// How an `open` or `create` op opens its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpenHow {
    pub read: bool,
    pub write: bool,
    pub create: bool,
    /// With `create`: fail with `EEXIST` when an entry has the name (the trace's `excl`).
    pub exclusive: bool,
    pub truncate: bool,
    pub append: bool,
    pub sync: bool,
    /// This handle's reads and writes bypass the client cache (the trace's `direct`).
    pub direct: bool,
    /// Random access: the client should not read ahead (the trace's `random`).
    pub random: bool,
}

/// What a `lock` op does to its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockHow {
    /// A shared (read) lock.
    Shared,
    /// An exclusive (write) lock.
    Exclusive,
    /// Releases the range.
    Unlock,
}

/// The length to lock for a POSIX range on a system whose lengths are exact (SMB's LOCK,
/// Windows' `LockFileEx`): POSIX's `len` 0, to the end of the file however far it grows,
/// is every byte from `offset` on, where their own length 0 would lock no byte.
pub fn lock_length(offset: u64, len: u64) -> u64 {
    if len == 0 { u64::MAX - offset } else { len }
}

/// What a protocol connection did to get over a broken path to its server (a path
/// cut, connections reset, the server restarted), counted from its start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recovery {
    /// New connections made after one broke.
    pub reconnects: u64,
    /// Requests sent again on a new connection.
    pub retries: u64,
    /// Files whose unstable (NFS UNSTABLE) writes the server may have lost: its write
    /// verifier changed between the writes and their COMMIT, so it restarted in between,
    /// and naslab keeps no copy of the data to send again as a caching client would.
    pub unconfirmed_writes: u64,
    /// SMB durable handles: file opens that asked for one, those granted, those
    /// claimed back on a new session after a reconnect, and the handles open at a
    /// reconnect that were not (none granted, or the claim refused).
    pub durable: DurableCounts,
}

/// SMB durable handles asked for, granted, reclaimed and lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DurableCounts {
    pub asked: u64,
    pub granted: u64,
    pub reclaimed: u64,
    pub lost: u64,
}

impl Recovery {
    /// Whether the connection got over a broken one since `before` was read: a new
    /// connection made, or a request sent again.
    #[inline]
    pub fn recovered_since(&self, before: &Recovery) -> bool {
        self.reconnects != before.reconnects || self.retries != before.retries
    }
}

/// What a backend can do; an op it cannot do fails before the run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Op kinds the backend implements.
    pub ops: [bool; OpKind::ALL.len()],
    /// Whether data ops can bypass the client cache.
    pub direct_io: bool,
    /// How it drops a file's cached pages for `--cache drop`; `None` when it cannot.
    pub drop_cache: Option<naslab_results::CacheDrop>,
    /// Whether its bytes are real: the null backend moves none.
    pub moves_data: bool,
    /// The most reads and writes one stream can have in flight (1: one at a time).
    pub max_queue_depth: u32,
}

impl Caps {
    /// Whether the backend can do `kind`.
    pub fn can(&self, kind: OpKind) -> bool {
        self.ops[kind.index()]
    }
}

/// One connection to a target: issues ops for one stream. Files are named by their
/// index in the run's [`FileTable`], which the backend got when it was connected.
pub trait Backend: Send {
    /// What it can do.
    fn caps(&self) -> Caps;
    /// Opens (or with `how.create`, creates) a file.
    fn open(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError>;
    fn close(&mut self, h: Handle) -> Result<(), OpError>;
    /// Reads at `offset` into `buf`; returns the bytes read (fewer at end of file).
    fn read(&mut self, h: Handle, offset: u64, buf: &mut [u8]) -> Result<usize, OpError>;
    /// Writes `buf` at `offset`; returns the bytes written.
    fn write(&mut self, h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError>;
    fn fsync(&mut self, h: Handle) -> Result<(), OpError>;
    fn truncate(&mut self, h: Handle, len: u64) -> Result<(), OpError>;
    fn fallocate(&mut self, h: Handle, offset: u64, len: u64) -> Result<(), OpError>;
    /// Returns the entry's size.
    fn stat(&mut self, file: u32) -> Result<u64, OpError>;
    fn mkdir(&mut self, file: u32) -> Result<(), OpError>;
    /// Lists a directory; returns how many entries it holds.
    fn readdir(&mut self, file: u32) -> Result<u64, OpError>;
    /// Removes a file or an empty directory.
    fn unlink(&mut self, file: u32) -> Result<(), OpError>;
    fn rename(&mut self, from: u32, to: u32) -> Result<(), OpError>;
    /// Makes `to` a second name of the file `file` (a hard link). Only a backend whose
    /// `Caps` say it can is asked.
    fn link(&mut self, file: u32, to: u32) -> Result<(), OpError> {
        let _ = (file, to);
        Err(OpError::errno(crate::errno::EOPNOTSUPP))
    }
    /// Makes `link` a symbolic link naming `target` by its path relative to the link's
    /// directory. Only a backend whose `Caps` say it can is asked.
    fn symlink(&mut self, target: u32, link: u32) -> Result<(), OpError> {
        let _ = (target, link);
        Err(OpError::errno(crate::errno::EOPNOTSUPP))
    }
    /// Asks about the file system holding the entry (its size and free space). Only a
    /// backend whose `Caps` say it can is asked.
    fn statfs(&mut self, file: u32) -> Result<(), OpError> {
        let _ = file;
        Err(OpError::errno(crate::errno::EOPNOTSUPP))
    }
    /// Sets the entry's access and modification times to now. Only a backend whose
    /// `Caps` say it can is asked.
    fn utime(&mut self, file: u32) -> Result<(), OpError> {
        let _ = file;
        Err(OpError::errno(crate::errno::EOPNOTSUPP))
    }
    /// Takes (`lock`) or releases a byte-range lock on an open file, `shared` or
    /// exclusive, without waiting: a range held by another fails with EAGAIN. `len` 0
    /// reaches to the end of the file. Only a backend whose `Caps` say it can is asked.
    fn lock(&mut self, h: Handle, offset: u64, len: u64, how: LockHow) -> Result<(), OpError> {
        let _ = (h, offset, len, how);
        Err(OpError::errno(crate::errno::EOPNOTSUPP))
    }
    /// Writes back and drops the client's cached pages of a file (not measured).
    fn drop_cache(&mut self, _file: u32) -> Result<(), OpError> {
        Err(OpError::errno(crate::errno::EOPNOTSUPP))
    }
    /// How many data ops could not bypass the cache although direct I/O was asked for.
    fn unaligned_direct_ops(&self) -> u64 {
        0
    }
    /// What the connection did so far to get over a broken path to its server (none
    /// for local targets). Read after each op: an op during which it grew waited
    /// through the recovery.
    fn recovery(&self) -> Recovery {
        Recovery::default()
    }
    /// The backend's queue for several reads and writes in flight, made on first use with
    /// room for `depth` ops and lent `memory`, which its ops' [`IoBuf`]s name (later
    /// calls get the queue as it was made).
    fn queued(&mut self, _depth: u32, _memory: &IoMemory) -> Result<&mut dyn QueuedIo, OpError> {
        Err(OpError::errno(crate::errno::EOPNOTSUPP))
    }
}

/// Reads and writes with several in flight on one stream (io_uring on posix targets).
/// An op names its bytes by where they are in the memory the queue was lent, so no
/// caller hands a queue an address.
pub trait QueuedIo {
    /// Queues a read of `buf.len` bytes at `offset` into `buf`; `tag` comes back with its
    /// completion.
    fn queue_read(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError>;
    /// Queues a write of `buf.len` bytes at `offset` from `buf`.
    fn queue_write(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError>;
    /// Submits everything queued and waits until at least `min` ops have completed;
    /// appends each completion's tag and result (bytes, or a negated errno) to `done`.
    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError>;
}

/// Options every backend gets.
#[derive(Debug, Clone, Copy, Default)]
pub struct BackendOptions {
    /// Bypass the client cache for data ops.
    pub direct: bool,
    /// What the client sends besides the trace's own requests (see [`ProfiledTarget`]).
    pub client_profile: ClientProfile,
}

/// The stack of a stream's thread, unless its target needs more: small, since a run may
/// have hundreds of streams.
pub const STREAM_STACK_BYTES: usize = 256 << 10;

/// A place workloads run against; makes one backend per stream.
pub trait Target: Send + Sync {
    /// The backend's name (posix, null, ...).
    fn backend_name(&self) -> &'static str;
    /// What its backends can do.
    fn caps(&self) -> Caps;
    /// A new connection for one stream, working in `workload_dir` (relative to the target).
    fn connect(
        &self,
        workload_dir: &str,
        files: Arc<FileTable>,
        options: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError>;
    /// The stack each stream's thread needs for this target's backend.
    fn stream_stack_bytes(&self) -> usize {
        STREAM_STACK_BYTES
    }
    /// Checks that direct I/O works in `workload_dir` (some file systems refuse it).
    fn check_direct(&self, _workload_dir: &str) -> Result<(), OpError> {
        Ok(())
    }
    /// Empties (or makes) the workload's directory inside naslab's marked directory
    /// before an iteration: the local sandbox for posix, the protocol's own
    /// for remote targets; the null target has none.
    fn fresh_workload_dir(&self, _workload_dir: &str) -> Result<(), OpError> {
        Ok(())
    }
    /// Protocol requests the target's connections sent for the workload beyond its own
    /// ops (a client profile's hints), by name, since the last call; each is reported
    /// apart from the workload's figures.
    fn take_extra_ops(&self, _workload_dir: &str) -> Vec<(String, naslab_results::OpStats)> {
        Vec::new()
    }
    /// naslab's marked directory on a local file system (a directory or a mounted
    /// share), where the files a run leaves can be examined; `None` for protocol
    /// targets and the null target.
    #[cfg(target_os = "linux")]
    fn local_root(&self) -> Option<&dyn LocalRoot> {
        None
    }
    /// naslab's marked directory on a directory target, by its path (Windows, where
    /// there is no sandbox); `None` for protocol targets and the null target.
    #[cfg(not(target_os = "linux"))]
    fn local_dir(&self) -> Option<std::path::PathBuf> {
        None
    }
    /// Calls `on_file` with every regular file a run left in `workload_dir` and its
    /// layout, written back first (Windows, where naslab's directory is walked through
    /// the run's own checked opens, never entering a reparse point). Returns what could
    /// not be listed; `None` for protocol targets and the null target.
    #[cfg(windows)]
    fn walk_layout(
        &self,
        workload_dir: &str,
        on_file: &mut dyn FnMut(
            &std::path::Path,
            Result<naslab_layout::FileLayout, naslab_layout::LayoutError>,
        ),
    ) -> Option<Result<Vec<naslab_layout::Skipped>, naslab_layout::LayoutError>> {
        let _ = (workload_dir, on_file);
        None
    }
    /// Removes naslab's marked directory and everything in it (`naslab clean`), and lets
    /// go of the target. Whether the directory was there before the target was opened
    /// (opening makes it when missing); the null target has none.
    fn remove_all(self: Box<Self>) -> Result<bool, OpError> {
        Ok(false)
    }
}

/// naslab's marked directory on a local file system as a run's layout and clean-up see
/// it (the local sandbox): its path, and a workload's directory opened beneath it.
#[cfg(target_os = "linux")]
pub trait LocalRoot {
    /// The marked directory's path.
    fn root(&self) -> &std::path::Path;
    /// Opens the workload's directory `name` beneath the marked directory.
    fn open_workload_dir(&self, name: &str) -> std::io::Result<std::os::fd::OwnedFd>;
}
