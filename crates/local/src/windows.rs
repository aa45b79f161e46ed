//! A local directory, a mapped drive (`Z:\bench`) or a UNC path (`\\nas\share\bench`)
//! on Windows, through the Windows file API and so through the Windows SMB redirector
//! for a share: `NtCreateFile` relative to the workload directory's handle,
//! `ReadFile`/`WriteFile` at an offset, `FlushFileBuffers`, `SetFileInformationByHandle`
//! (end of file, allocation), delete, rename and listings on handles, volume queries,
//! `SetFileTime` and byte-range locks (`LockFileEx`).
//!
//! The sandbox keeps the rules of every target: naslab's marked `naslab/` directory,
//! made, checked, held and emptied by [`RemoteSandbox`] (the lock is its lock directory,
//! as on a share). No reparse point (symbolic link, junction, mount point) is followed:
//! every entry is opened relative to the workload directory's handle, refusing reparse
//! points on the way (`OBJ_DONT_REPARSE`; under Wine, which ignores it, a walk checking
//! each directory), the entry itself opened (`FILE_OPEN_REPARSE_POINT`) and refused when
//! it is a reparse point or not really at its name (see `handle::Root`).

mod fs;
mod handle;
mod layout;
mod nt;
mod port;

use std::collections::HashMap;
use std::fs::File;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use naslab_trace::OpKind;

#[cfg(test)]
use fs::errno_of;
use fs::{LocalFs, io_err};
use handle::{Names, OpenSpec, Opened, Root};
use naslab_backend::FileTable;
use naslab_backend::{
    Backend, BackendOptions, Caps, Handle, IoBuf, IoMemory, LockHow, OpError, OpenHow, QueuedIo,
    Target,
};
use naslab_remote::remote::{RemoteSandbox, RemoteSandboxError};
use port::Port;

/// What the Windows backend can do: no hard or symbolic links (creating a symbolic link
/// needs a privilege most users lack); reads and writes in flight together up to the
/// io_uring backend's limit, overlapped on an I/O completion port.
/// What the Windows backend can do.
pub const WINDOWS_CAPS: Caps = {
    let mut ops = [true; OpKind::ALL.len()];
    ops[OpKind::Link as usize] = false;
    ops[OpKind::Symlink as usize] = false;
    Caps {
        ops,
        direct_io: true,
        drop_cache: Some(naslab_results::CacheDrop::UnbufferedOpen),
        moves_data: true,
        max_queue_depth: MAX_QUEUE_DEPTH,
    }
};

/// The most reads and writes one stream keeps in flight (as on Linux and over SMB).
const MAX_QUEUE_DEPTH: u32 = 256;

/// Unbuffered data ops must be aligned to this (the sector size of nearly every disk;
/// a larger one makes such ops fall back to a buffered handle).
const DIRECT_ALIGN: u64 = 512;

/// A directory on Windows, local or on a share reached through the OS client.
pub struct WindowsTarget {
    /// The target directory in its absolute, extended-length form.
    base: PathBuf,
    /// naslab's marked directory and the file system it is kept on.
    held: Mutex<(RemoteSandbox, LocalFs)>,
}

impl WindowsTarget {
    /// Opens `<dir>/naslab` (`<dir>/<client>/naslab` for a multi-client job's client),
    /// making and marking it when absent, and holds it for this process. With `join`,
    /// joins the directory another process of the same job holds instead.
    pub fn open(
        dir: &Path,
        client: Option<&str>,
        join: bool,
    ) -> Result<WindowsTarget, RemoteSandboxError> {
        let base = fs::absolute(dir).map_err(|e| RemoteSandboxError::Request {
            action: "find",
            path: dir.display().to_string(),
            error: io_err(e),
        })?;
        match fs::kind_of_path(&base) {
            Ok(naslab_remote::remote::EntryKind::Dir) => {}
            Ok(naslab_remote::remote::EntryKind::Link) => {
                return Err(RemoteSandboxError::Link(dir.display().to_string()));
            }
            Ok(naslab_remote::remote::EntryKind::File) => {
                return Err(RemoteSandboxError::NotDir(dir.display().to_string()));
            }
            Err(e) if e.errno == crate::errno::ENOENT => {
                return Err(RemoteSandboxError::Missing(dir.display().to_string()));
            }
            Err(error) => {
                return Err(RemoteSandboxError::Request {
                    action: "open",
                    path: dir.display().to_string(),
                    error,
                });
            }
        }
        let mut fs = LocalFs::open(&base).map_err(|error| RemoteSandboxError::Request {
            action: "open",
            path: dir.display().to_string(),
            error,
        })?;
        let sandbox = if join {
            crate::marker::wait_for_holder(
                || RemoteSandbox::open_in(&mut fs, "", client, true),
                |e| matches!(e, RemoteSandboxError::NotHeld(_)),
            )?
        } else {
            RemoteSandbox::open_in(&mut fs, "", client, false)?
        };
        Ok(WindowsTarget {
            base,
            held: Mutex::new((sandbox, fs)),
        })
    }

    /// naslab's directory (`<target>\naslab`), where every workload runs.
    pub fn root(&self) -> PathBuf {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        fs::join(&self.base, held.0.root())
    }

    /// The workload directory `workload_dir`, opened relative to the target's handle
    /// for a stream of its own.
    fn workload_root(&self, workload_dir: &str) -> Result<Root, OpError> {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.1.dir(&format!("{}/{workload_dir}", held.0.root()))
    }
}

impl Drop for WindowsTarget {
    fn drop(&mut self) {
        let held = self.held.get_mut().unwrap_or_else(|e| e.into_inner());
        let (sandbox, fs) = (&held.0, &mut held.1);
        if let Err(e) = sandbox.release(fs) {
            eprintln!(
                "warning: naslab could not let go of '{}' ({e}); remove '{}' by hand before the next run there",
                sandbox.root(),
                sandbox.lock_path()
            );
        }
    }
}

fn sandbox_err(e: RemoteSandboxError) -> OpError {
    e.into_op_error()
}

impl Target for WindowsTarget {
    fn backend_name(&self) -> &'static str {
        "windows"
    }

    fn caps(&self) -> Caps {
        WINDOWS_CAPS
    }

    fn connect(
        &self,
        workload_dir: &str,
        files: Arc<FileTable>,
        options: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        let root = self.workload_root(workload_dir)?;
        Ok(Box::new(WindowsBackend::new(root, files, options.direct)))
    }

    fn check_direct(&self, workload_dir: &str) -> Result<(), OpError> {
        self.workload_root(workload_dir)?.probe_direct()
    }

    fn local_dir(&self) -> Option<PathBuf> {
        Some(self.root())
    }

    fn walk_layout(
        &self,
        workload_dir: &str,
        on_file: &mut dyn FnMut(
            &Path,
            Result<naslab_layout::FileLayout, naslab_layout::LayoutError>,
        ),
    ) -> Option<Result<Vec<naslab_layout::Skipped>, naslab_layout::LayoutError>> {
        let shown = self.root().join(workload_dir);
        // A workload directory that is a link, or gone, has no layout.
        let root = self.workload_root(workload_dir).ok()?;
        Some(layout::walk(&root, &shown, true, on_file))
    }

    fn fresh_workload_dir(&self, workload_dir: &str) -> Result<(), OpError> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (sandbox, fs) = &mut *held;
        sandbox
            .fresh_workload_dir(fs, workload_dir)
            .map(|_| ())
            .map_err(sandbox_err)
    }

    fn remove_all(self: Box<Self>) -> Result<bool, OpError> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (sandbox, fs) = &mut *held;
        sandbox.remove_all(fs).map_err(sandbox_err)
    }
}

/// One stream's connection to a Windows directory.
pub struct WindowsBackend {
    /// The workload directory, held open: every entry is opened relative to it.
    root: Root,
    files: Arc<FileTable>,
    /// The NT names of the entries an op names, built without an allocation per op.
    names: Names,
    to_names: Names,
    /// The buffer directory listings are read into.
    listing: Vec<u64>,
    direct: bool,
    /// The completion port of a trace with a queue depth above 1, made before any file
    /// is opened: every file is then opened overlapped and watched by it. Dropped before
    /// the handles, so ops still in flight are cancelled and reaped while they are open.
    port: Option<Port>,
    /// What the stream lent the port's ops (dropped after the port).
    memory: IoMemory,
    /// The open handles by the number the replay knows them by.
    open: HashMap<Handle, Opened>,
    next: Handle,
    unaligned: u64,
}

impl WindowsBackend {
    fn new(root: Root, files: Arc<FileTable>, direct: bool) -> WindowsBackend {
        WindowsBackend {
            root,
            files,
            names: Names::default(),
            to_names: Names::default(),
            listing: Vec::new(),
            direct,
            port: None,
            memory: IoMemory::default(),
            open: HashMap::new(),
            next: 1,
            unaligned: 0,
        }
    }

    fn opened(&mut self, h: Handle) -> Result<&mut Opened, OpError> {
        self.open
            .get_mut(&h)
            .ok_or(OpError::errno(crate::errno::EBADF))
    }

    /// The handle a data op of this shape should use: an unbuffered one only when the
    /// op is aligned, else (opened once) a buffered one of the same file.
    fn data_file(&mut self, h: Handle, offset: u64, len: usize) -> Result<&File, OpError> {
        let aligned =
            offset.is_multiple_of(DIRECT_ALIGN) && (len as u64).is_multiple_of(DIRECT_ALIGN);
        let direct = self.opened(h)?.direct;
        if !direct || aligned {
            return Ok(&self.opened(h)?.file);
        }
        self.unaligned += 1;
        let o = self.opened(h)?;
        if o.buffered.is_none() {
            let spec = OpenSpec {
                read: o.spec.read,
                write: o.spec.write,
                overlapped: o.spec.overlapped,
                ..OpenSpec::default()
            };
            let entry = o.entry;
            let name = self.names.of(self.files.path(entry))?;
            let f = self.root.open(name, &spec)?;
            if let Some(port) = &self.port {
                port.watch(&f)?;
            }
            self.opened(h)?.buffered = Some(f);
        }
        self.opened(h)?
            .buffered
            .as_ref()
            .ok_or(OpError::errno(crate::errno::EBADF))
    }
}

impl Backend for WindowsBackend {
    fn caps(&self) -> Caps {
        WINDOWS_CAPS
    }

    fn open(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError> {
        let spec = OpenSpec {
            read: how.read || !how.write,
            write: how.write,
            create: how.create,
            exclusive: how.exclusive,
            truncate: how.truncate,
            sync: how.sync,
            direct: self.direct || how.direct,
            random: how.random,
            dir: false,
            overlapped: self.port.is_some(),
        };
        let name = self.names.of(self.files.path(file))?;
        let f = self.root.open(name, &spec)?;
        if let Some(port) = &self.port {
            port.watch(&f)?;
        }
        let h = self.next;
        self.next += 1;
        self.open.insert(
            h,
            Opened {
                file: f,
                buffered: None,
                direct: spec.direct,
                append: how.append,
                entry: file,
                spec,
            },
        );
        Ok(h)
    }

    fn close(&mut self, h: Handle) -> Result<(), OpError> {
        // Closing the handle is dropping it (CloseHandle).
        self.open
            .remove(&h)
            .map(drop)
            .ok_or(OpError::errno(crate::errno::EBADF))
    }

    #[inline]
    fn read(&mut self, h: Handle, offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        let f = self.data_file(h, offset, buf.len())?;
        handle::read_at(f, buf, offset)
    }

    #[inline]
    fn write(&mut self, h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        let append = self.opened(h)?.append;
        let f = self.data_file(h, offset, buf.len())?;
        if append {
            // As O_APPEND: every write lands at the end of the file, whatever the offset.
            handle::write_at(f, buf, handle::APPEND)
        } else {
            handle::write_at(f, buf, offset)
        }
    }

    fn fsync(&mut self, h: Handle) -> Result<(), OpError> {
        let o = self
            .open
            .get(&h)
            .ok_or(OpError::errno(crate::errno::EBADF))?;
        let (names, root, files) = (&mut self.names, &self.root, &self.files);
        handle::flush(&o.file, &o.spec, |spec| {
            root.open(names.of(files.path(o.entry))?, spec)
        })
    }

    fn truncate(&mut self, h: Handle, len: u64) -> Result<(), OpError> {
        self.opened(h)?.file.set_len(len).map_err(io_err)
    }

    fn fallocate(&mut self, h: Handle, offset: u64, len: u64) -> Result<(), OpError> {
        handle::allocate(&self.opened(h)?.file, offset.saturating_add(len))
    }

    fn stat(&mut self, file: u32) -> Result<u64, OpError> {
        self.root.size_of(self.names.of(self.files.path(file))?)
    }

    fn mkdir(&mut self, file: u32) -> Result<(), OpError> {
        self.root.make_dir(self.names.of(self.files.path(file))?)
    }

    fn readdir(&mut self, file: u32) -> Result<u64, OpError> {
        // The directory is opened and checked, then listed through its handle: the
        // listing never goes through a reparse point.
        let name = self.names.of(self.files.path(file))?;
        self.root.count_entries(name, &mut self.listing)
    }

    fn unlink(&mut self, file: u32) -> Result<(), OpError> {
        let is_dir = self.files.is_dir(file);
        self.root
            .remove(self.names.of(self.files.path(file))?, is_dir)
    }

    fn rename(&mut self, from: u32, to: u32) -> Result<(), OpError> {
        let a = self.names.of(self.files.path(from))?;
        let b = self.to_names.of(self.files.path(to))?;
        self.root.rename(a, b)
    }

    fn statfs(&mut self, file: u32) -> Result<(), OpError> {
        self.root.volume_of(self.names.of(self.files.path(file))?)
    }

    fn utime(&mut self, file: u32) -> Result<(), OpError> {
        self.root.touch(self.names.of(self.files.path(file))?)
    }

    fn lock(&mut self, h: Handle, offset: u64, len: u64, how: LockHow) -> Result<(), OpError> {
        // On the op's own handle: Windows' locks belong to the handle, and conflict
        // between two handles of one process as between two clients.
        handle::lock(&self.opened(h)?.file, offset, len, how)
    }

    fn drop_cache(&mut self, file: u32) -> Result<(), OpError> {
        self.root
            .write_back_and_purge(self.names.of(self.files.path(file))?)
    }

    fn unaligned_direct_ops(&self) -> u64 {
        self.unaligned
    }

    fn queued(&mut self, depth: u32, memory: &IoMemory) -> Result<&mut dyn QueuedIo, OpError> {
        if self.port.is_none() {
            if !self.open.is_empty() {
                // Their handles do synchronous I/O, which no port can queue.
                return Err(OpError {
                    errno: crate::errno::EINVAL,
                    detail: Some("the I/O queue was asked for after files were opened".into()),
                });
            }
            self.port = Some(Port::new(depth)?);
            self.memory = memory.clone();
        }
        Ok(self)
    }
}

impl WindowsBackend {
    /// Issues a queued read or write on the handle its shape needs (see
    /// [`WindowsBackend::data_file`]); an append handle's write lands at the end.
    fn issue(
        &mut self,
        h: Handle,
        write: bool,
        offset: u64,
        buf: IoBuf,
        tag: u64,
    ) -> Result<(), OpError> {
        let at = if write && self.opened(h)?.append {
            handle::APPEND
        } else {
            offset
        };
        if !self.opened(h)?.spec.overlapped {
            return Err(OpError {
                errno: crate::errno::EINVAL,
                detail: Some("a queued op on a file opened for synchronous I/O".into()),
            });
        }
        let bytes = self.memory.locate(buf)?;
        let raw = self.data_file(h, offset, buf.len)?.as_raw_handle();
        let port = self
            .port
            .as_mut()
            .ok_or(OpError::errno(crate::errno::EINVAL))?;
        // SAFETY: the handle stays open until closed by a close op, which the replay
        // runs only once every op in flight was reaped (and the port is dropped before
        // the handles); the bytes are in the memory the port's ops were lent, kept here
        // until after the port is dropped and untouched by their lender until the op is
        // reaped (IoRegion's promise).
        unsafe { port.issue(raw, write, at, bytes, buf.len, tag) }
    }
}

impl QueuedIo for WindowsBackend {
    fn queue_read(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        self.issue(h, false, offset, buf, tag)
    }

    fn queue_write(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        self.issue(h, true, offset, buf, tag)
    }

    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        self.port
            .as_mut()
            .ok_or(OpError::errno(crate::errno::EINVAL))?
            .reap(min, done)
    }
}

#[cfg(test)]
mod tests;
