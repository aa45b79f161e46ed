//! NFS version 4.1 and 4.2 spoken by naslab itself, through the `nfs-rs` client
//! library: no kernel mount and no admin rights on the client. Each stream's connection
//! is a client of its own (EXCHANGE_ID, CREATE_SESSION; every request a COMPOUND that
//! starts with SEQUENCE). Each trace op becomes the requests a cacheless NFSv4 client
//! sends for it: OPEN (creating with mode 0644, or for reading or both) and CLOSE, READ,
//! WRITE (UNSTABLE, then COMMIT for fsync, at close after unstable writes, and after
//! each write of a `sync` open), SETATTR for truncate and times (to the client's clock),
//! LOOKUP (its reply carrying the attributes) for stat, GETATTR of the space for statfs,
//! CREATE for mkdir, READDIR, REMOVE and RENAME. Directory handles are looked up once
//! and kept, as for NFSv3. Neither space reservation, locks nor links are offered yet.
//!
//! The library's calls are async: each connection runs its requests on a single-thread
//! tokio runtime of its own, one at a time and each at most the I/O timeout, as the
//! NFSv3 and SMB backends do (`backend::waiter`).

mod queue;
mod session;

use std::sync::Arc;

use bytes::Bytes;
use naslab_trace::OpKind;

use self::queue::Nfs4Queue;
use self::session::Session;
use crate::remote::{HandleTable, RemoteSandbox, RemoteSandboxError, RemoteShare, SharePaths};
use crate::url::{ClientOptions, RemoteUrl};
use naslab_backend::FileTable;
use naslab_backend::{
    Backend, BackendOptions, Caps, Handle, IoBuf, IoMemory, OpError, OpenHow, QueuedIo, Target,
};

pub(super) const NFS4_CAPS: Caps = {
    let mut ops = [true; OpKind::ALL.len()];
    // OpKind's discriminants are its indices.
    ops[OpKind::Fallocate as usize] = false;
    ops[OpKind::Link as usize] = false;
    ops[OpKind::Symlink as usize] = false;
    ops[OpKind::Lock as usize] = false;
    ops[OpKind::Unlock as usize] = false;
    Caps {
        ops,
        // naslab's client keeps no cache: every data op already reaches the server.
        direct_io: true,
        drop_cache: Some(naslab_results::CacheDrop::ServerWriteBack),
        moves_data: true,
        // Each op in flight is a request holding one of the session's slots
        // (`nfs4/queue.rs`); beyond the slots the server grants, a request waits for one.
        max_queue_depth: MAX_NFS4_QUEUE_DEPTH,
    }
};

/// The most reads and writes a stream keeps in flight over NFSv4.1 (a trace's
/// `queue_depth`), as for NFSv3; the session's slots may hold fewer at once.
const MAX_NFS4_QUEUE_DEPTH: u32 = 256;

/// Why naslab could not start working on an NFSv4 target.
#[derive(Debug, thiserror::Error)]
pub enum Nfs4Error {
    #[error("cannot mount {export} from {host} over NFSv{version}: {detail}")]
    Mount {
        host: String,
        export: String,
        version: &'static str,
        detail: String,
    },
    #[error("cannot start the NFS client's runtime: {0}")]
    Runtime(std::io::Error),
    #[error(transparent)]
    Sandbox(#[from] RemoteSandboxError),
}

/// An export as an NFSv4.1 or 4.2 target: `nfs://host[:port]/path?vers=4.1`, the path
/// being the export's place in the server's pseudo-file system (and any directory
/// under it).
pub struct Nfs4Target {
    url: RemoteUrl,
    timeout: std::time::Duration,
    share: RemoteShare<Session>,
}

impl std::fmt::Debug for Nfs4Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Nfs4Target({})", self.url)
    }
}

impl Nfs4Target {
    /// Makes a session with the server, looks up the URL's path and checks (or makes
    /// and marks) `<path>/naslab` there.
    pub fn connect(url: RemoteUrl) -> Result<Nfs4Target, Nfs4Error> {
        Nfs4Target::connect_in(url, ClientOptions::default(), None, false)
    }

    /// [`Nfs4Target::connect`] with the client's options, working in
    /// `<path>/<client>/naslab` when `client` is given (a multi-client job's own
    /// directory); with `join`, joining the `naslab` directory the job's first client
    /// holds (`--shared-files`).
    pub fn connect_in(
        url: RemoteUrl,
        opts: ClientOptions,
        client: Option<&str>,
        join: bool,
    ) -> Result<Nfs4Target, Nfs4Error> {
        let timeout = opts.io_timeout;
        let mut admin = Session::open(&url, timeout)?;
        let as_root = admin.settings.uid == 0;
        // The URL's whole path is the session's root: NFSv4 looks it up from the
        // pseudo-root, with no export list to split it against.
        let sandbox = crate::marker::wait_for_holder(
            || RemoteSandbox::open_in(&mut admin, "", client, join),
            |e| matches!(e, RemoteSandboxError::NotHeld(_)),
        )
        .map_err(|e| crate::nfs::squash_hint(e, as_root))?;
        Ok(Nfs4Target {
            share: RemoteShare::new(url.to_string(), sandbox, admin),
            url,
            timeout,
        })
    }

    /// The target's URL.
    pub fn url(&self) -> &RemoteUrl {
        &self.url
    }

    /// The client's options, the version spoken and the session's transfer sizes, as
    /// the results record them.
    pub fn settings(&self) -> naslab_results::NfsSettings {
        self.share.admin().settings.clone()
    }
}

impl Target for Nfs4Target {
    fn backend_name(&self) -> &'static str {
        "nfs"
    }

    fn caps(&self) -> Caps {
        NFS4_CAPS
    }

    /// The client library's calls nest deeply: its mount needed between 256 and 512
    /// KiB of a debug build's stack; 2 MiB leaves room.
    fn stream_stack_bytes(&self) -> usize {
        2 << 20
    }

    fn connect(
        &self,
        workload_dir: &str,
        files: Arc<FileTable>,
        _options: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        let mut session = Session::open(&self.url, self.timeout).map_err(|e| OpError {
            errno: crate::errno::ENOTCONN,
            detail: Some(e.to_string()),
        })?;
        session.w.share_silence_with(&self.share.admin().w);
        let dir = format!("{}/{workload_dir}", self.share.sandbox().root());
        Ok(Box::new(Nfs4Backend {
            queue: Nfs4Queue::default(),
            memory: IoMemory::default(),
            reaped: Vec::new(),
            session,
            paths: SharePaths::new(dir, files),
            handles: HandleTable::default(),
        }))
    }

    fn fresh_workload_dir(&self, name: &str) -> Result<(), OpError> {
        self.share.fresh_workload_dir(name)
    }

    fn remove_all(mut self: Box<Self>) -> Result<bool, OpError> {
        self.share.remove_all()
    }
}

/// One open file: its handle (the library keeps the open's stateid by it) and what
/// the client tracks.
struct Open {
    fh: Bytes,
    /// A `sync` open: each write is committed before it returns.
    sync: bool,
    /// Unstable writes not yet committed.
    dirty: bool,
    /// For append opens: where the next write goes.
    append_at: Option<u64>,
}

/// One stream's NFSv4 connection.
pub struct Nfs4Backend {
    /// Reads and writes in flight (declared first: dropped before the session).
    queue: Nfs4Queue,
    /// What the stream lent the queue's ops (dropped after the queue).
    memory: IoMemory,
    /// The queue's completions, booked against their handles before they are reported.
    reaped: Vec<queue::Done>,
    session: Session,
    /// Each file's path on the server, made when asked for.
    paths: SharePaths,
    handles: HandleTable<Open>,
}

impl Backend for Nfs4Backend {
    fn caps(&self) -> Caps {
        NFS4_CAPS
    }

    fn open(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError> {
        let path = self.paths.path(file)?;
        if how.create && how.exclusive {
            // The client library's OPEN creates UNCHECKED4 only: an exclusive create is
            // a LOOKUP that must find nothing, then the OPEN (one more round trip, and
            // not atomic against another client making the name in between).
            match self.session.resolve(&path) {
                Ok(_) => return Err(OpError::errno(crate::errno::EEXIST)),
                Err(e) if e.errno == crate::errno::ENOENT => {}
                Err(e) => return Err(e),
            }
        }
        let (fh, mut size) = self.session.open_file(&path, how.create, how.write)?;
        if how.truncate && size > 0 {
            if let Err(e) = self.session.set_size(&fh, 0) {
                let _ = self.session.close(fh);
                return Err(e);
            }
            size = 0;
        }
        let open = Open {
            fh,
            sync: how.sync,
            dirty: false,
            append_at: how.append.then_some(size),
        };
        Ok(self.handles.insert(open))
    }

    fn close(&mut self, h: Handle) -> Result<(), OpError> {
        let o = self.handles.take(h)?;
        let committed = if o.dirty {
            self.session.commit(&o.fh)
        } else {
            Ok(())
        };
        let closed = self.session.close(o.fh);
        committed.and(closed)
    }

    fn read(&mut self, h: Handle, offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        let fh = self.handles.get_mut(h)?.fh.clone();
        self.session.read_into(&fh, offset, buf)
    }

    fn write(&mut self, h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        let o = self.handles.get_mut(h)?;
        let (fh, sync) = (o.fh.clone(), o.sync);
        let at = o.append_at.unwrap_or(offset);
        let (n, stable) = self.session.write_at(&fh, at, buf)?;
        if sync && !stable {
            self.session.commit(&fh)?;
        }
        let o = self.handles.get_mut(h)?;
        o.dirty |= !sync && !stable;
        if let Some(a) = o.append_at.as_mut() {
            *a += n as u64;
        }
        Ok(n)
    }

    fn fsync(&mut self, h: Handle) -> Result<(), OpError> {
        let o = self.handles.get_mut(h)?;
        o.dirty = false;
        let fh = o.fh.clone();
        self.session.commit(&fh)
    }

    fn truncate(&mut self, h: Handle, len: u64) -> Result<(), OpError> {
        let fh = self.handles.get_mut(h)?.fh.clone();
        self.session.set_size(&fh, len)
    }

    fn fallocate(&mut self, _h: Handle, _offset: u64, _len: u64) -> Result<(), OpError> {
        Err(OpError {
            errno: crate::errno::EOPNOTSUPP,
            detail: Some("naslab's NFSv4 client does not reserve space".into()),
        })
    }

    fn stat(&mut self, file: u32) -> Result<u64, OpError> {
        let path = self.paths.path(file)?;
        self.session.resolve(&path).map(|(_, _, size)| size)
    }

    fn statfs(&mut self, _file: u32) -> Result<(), OpError> {
        self.session.fs_stat()
    }

    fn utime(&mut self, file: u32) -> Result<(), OpError> {
        let path = self.paths.path(file)?;
        let (fh, _, _) = self.session.resolve(&path)?;
        self.session.touch(&fh)
    }

    fn mkdir(&mut self, file: u32) -> Result<(), OpError> {
        use crate::remote::RemoteFs;
        let path = self.paths.path(file)?;
        self.session.make_dir(&path)
    }

    fn readdir(&mut self, file: u32) -> Result<u64, OpError> {
        let path = self.paths.path(file)?;
        let fh = self.session.dir(&path)?;
        self.session.count_entries(&fh)
    }

    fn unlink(&mut self, file: u32) -> Result<(), OpError> {
        let path = self.paths.path(file)?;
        self.session.remove(&path)
    }

    fn rename(&mut self, from: u32, to: u32) -> Result<(), OpError> {
        let a = self.paths.path(from)?;
        let b = self.paths.path(to)?;
        self.session.rename_paths(&a, &b)
    }

    fn drop_cache(&mut self, file: u32) -> Result<(), OpError> {
        // No client cache to drop; commit the server's copy, as NFSv3 does (COMMIT
        // needs no open state).
        let path = self.paths.path(file)?;
        let (fh, _, _) = self.session.resolve(&path)?;
        self.session.commit(&fh)
    }

    fn queued(&mut self, depth: u32, memory: &IoMemory) -> Result<&mut dyn QueuedIo, OpError> {
        if depth > MAX_NFS4_QUEUE_DEPTH {
            return Err(OpError {
                errno: crate::errno::EINVAL,
                detail: Some(format!(
                    "NFSv4.1 keeps at most {MAX_NFS4_QUEUE_DEPTH} reads and writes in flight per stream"
                )),
            });
        }
        naslab_backend::lend_once(&mut self.memory, memory);
        Ok(self)
    }
}

impl QueuedIo for Nfs4Backend {
    fn queue_read(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let bytes = self.memory.locate(buf)?;
        let fh = self.handles.get_mut(h)?.fh.clone();
        let session: *const Session = &self.session;
        // SAFETY: the session lives as long as the queue (declared after it, so dropped
        // after it); the bytes are in the memory lent to the queue, kept here until after
        // the queue is dropped and untouched by their lender until the op is reaped.
        unsafe { self.queue.read(session, h, fh, offset, bytes, buf.len, tag) };
        Ok(())
    }

    fn queue_write(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let bytes = self.memory.locate(buf)?;
        let o = self.handles.get_mut(h)?;
        let at = crate::remote::queued_write_at(&mut o.append_at, offset, buf.len);
        let (fh, sync) = (o.fh.clone(), o.sync);
        let session: *const Session = &self.session;
        // SAFETY: as for queue_read.
        unsafe {
            self.queue
                .write(session, h, fh, sync, at, bytes, buf.len, tag)
        };
        Ok(())
    }

    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        if self.queue.is_empty() {
            return Ok(());
        }
        self.reaped.clear();
        let r = self.queue.reap(&self.session, min, &mut self.reaped);
        for d in self.reaped.drain(..) {
            if d.unstable
                && let Ok(o) = self.handles.get_mut(d.handle)
            {
                o.dirty = true;
            }
            done.push((
                d.tag,
                match d.result {
                    Ok(n) => n as i64,
                    Err(e) => -(e.errno as i64),
                },
            ));
        }
        r
    }
}
