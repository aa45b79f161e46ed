//! NFS version 3 spoken by naslab itself (the `nfs3_client` crate's RPC layer): no
//! kernel mount and no admin rights on the client. Each trace op becomes the requests a
//! cacheless NFSv3 client sends for it: LOOKUP (or CREATE) to open, READ, WRITE
//! (UNSTABLE, or FILE_SYNC on a `sync` open), COMMIT for fsync and at close after
//! unstable writes (close-to-open, as the Linux client does), SETATTR for truncate and
//! for times (to the server's clock), GETATTR/LOOKUP for stat, FSSTAT for statfs, MKDIR,
//! READDIR, REMOVE/RMDIR and RENAME. NFSv3 has no way to reserve space, so `fallocate`
//! is not offered, and its locks are another protocol's (NLM), so neither are `lock` and
//! `unlock`.
//!
//! The crate's I/O traits are async: each connection runs its requests on a
//! single-thread tokio runtime of its own, one at a time and each at most the I/O
//! timeout, as the SMB backend does (`backend::waiter`).

mod queue;
mod session;

#[cfg(unix)]
pub(crate) use session::caller_ids;

use std::sync::Arc;

use naslab_trace::OpKind;
use nfs3_client::nfs3_types::nfs3::{ftype3, nfs_fh3, stable_how, writeverf3};

use self::queue::NfsQueue;
use self::session::Session;
use crate::remote::{
    HandleTable, RemoteFs, RemoteSandbox, RemoteSandboxError, RemoteShare, SharePaths,
};
use crate::url::{ClientOptions, RemoteUrl};
use naslab_backend::FileTable;
use naslab_backend::{
    Backend, BackendOptions, Caps, Handle, IoBuf, IoMemory, OpError, OpenHow, QueuedIo, Recovery,
    Target,
};

/// What naslab's NFS client can do.
pub const NFS_CAPS: Caps = {
    let mut ops = [true; OpKind::ALL.len()];
    // OpKind's discriminants are its indices.
    ops[OpKind::Fallocate as usize] = false;
    // naslab's NFS client makes neither hard nor symbolic links.
    ops[OpKind::Link as usize] = false;
    ops[OpKind::Symlink as usize] = false;
    // NFSv3 has no byte-range locks of its own: they belong to a separate protocol
    // (NLM, with its status monitor and a callback service on the client), which
    // naslab's client does not speak.
    ops[OpKind::Lock as usize] = false;
    ops[OpKind::Unlock as usize] = false;
    Caps {
        ops,
        // naslab's client keeps no cache: every data op already reaches the server.
        direct_io: true,
        drop_cache: Some(naslab_results::CacheDrop::ServerWriteBack),
        moves_data: true,
        // Each op in flight is one call or more awaiting its reply on the stream's
        // connection (`nfs/queue.rs`).
        max_queue_depth: MAX_NFS_QUEUE_DEPTH,
    }
};

/// The most reads and writes a stream keeps in flight over NFSv3 (a trace's
/// `queue_depth`). Linux's client lets a TCP connection have up to 65536 calls
/// outstanding (`sunrpc.tcp_max_slot_table_entries`); nfs-ganesha stops reading a
/// connection that has 512 requests in progress (`Dispatch_Max_Reqs_Xprt`), which 256
/// ops of up to 1 MiB each (one call apiece at ganesha's 1 MiB transfer size) stay below.
pub(super) const MAX_NFS_QUEUE_DEPTH: u32 = 256;

/// Why naslab could not start working on an NFS target.
#[derive(Debug, thiserror::Error)]
pub enum NfsError {
    #[error("cannot resolve '{host}': {source}")]
    Resolve {
        host: String,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "cannot mount {export} from {host}: {detail}; check the host, the export and the ports in the URL (nfs://host:NFSPORT/export?mountport=N) and that the server runs"
    )]
    Mount {
        host: String,
        export: String,
        detail: String,
    },
    #[error("cannot use {export} on {host}: {error}")]
    Request {
        host: String,
        export: String,
        error: OpError,
    },
    #[error(
        "no export on {host} holds '{path}'; the server exports: {exports}. Write the URL as nfs://{host}/EXPORT[/directory inside it]"
    )]
    NoExport {
        host: String,
        path: String,
        exports: String,
    },
    #[error("cannot start the NFS client's runtime: {0}")]
    Runtime(std::io::Error),
    #[error(transparent)]
    Sandbox(#[from] RemoteSandboxError),
}

/// An NFSv3 export as a target: `nfs://host[:port]/export[/path][?mountport=N]`.
pub struct NfsTarget {
    url: RemoteUrl,
    timeout: std::time::Duration,
    retrans: Option<std::time::Duration>,
    share: RemoteShare<Session>,
}

impl std::fmt::Debug for NfsTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NfsTarget({})", self.url)
    }
}

impl NfsTarget {
    /// Mounts the export (over the MOUNT protocol, not the kernel) and checks (or makes
    /// and marks) `<path>/naslab` there.
    pub fn connect(url: RemoteUrl) -> Result<NfsTarget, NfsError> {
        NfsTarget::connect_with(url, ClientOptions::default())
    }

    /// [`NfsTarget::connect`] with the client's timeout chosen.
    pub fn connect_with(url: RemoteUrl, opts: ClientOptions) -> Result<NfsTarget, NfsError> {
        NfsTarget::connect_in(url, opts, None, false)
    }

    /// [`NfsTarget::connect_with`], working in `<path>/<client>/naslab` when `client`
    /// is given (a multi-client job's own directory, made when missing); with `join`,
    /// joining the `naslab` directory the job's first client holds (`--shared-files`).
    pub fn connect_in(
        url: RemoteUrl,
        opts: ClientOptions,
        client: Option<&str>,
        join: bool,
    ) -> Result<NfsTarget, NfsError> {
        let timeout = opts.io_timeout;
        let url = resolve_export(url, timeout)?;
        let mut admin = Session::open(&url, timeout, opts.retrans_timeout)?;
        // The uid the server is told, whoever this process is.
        let as_root = admin.settings.uid == 0;
        let sandbox = crate::marker::wait_for_holder(
            || RemoteSandbox::open_in(&mut admin, &url.path, client, join),
            |e| matches!(e, crate::remote::RemoteSandboxError::NotHeld(_)),
        )
        .map_err(|e| squash_hint(e, as_root))?;
        Ok(NfsTarget {
            share: RemoteShare::new(url.to_string(), sandbox, admin),
            url,
            timeout,
            retrans: opts.retrans_timeout,
        })
    }

    /// The target's URL.
    pub fn url(&self) -> &RemoteUrl {
        &self.url
    }

    /// The client's options and the server's transfer sizes, as the results record them.
    pub fn settings(&self) -> naslab_results::NfsSettings {
        self.share.admin().settings.clone()
    }
}

/// A refusal to root, which AUTH_SYS names as uid 0, says what squashing root does:
/// the export treats it as its anonymous user, who may not write where root could.
pub(super) fn squash_hint(e: RemoteSandboxError, as_root: bool) -> RemoteSandboxError {
    match e {
        RemoteSandboxError::Request {
            action,
            path,
            mut error,
        } if as_root && error.errno == crate::errno::EACCES => {
            let said = error
                .detail
                .take()
                .unwrap_or_else(|| "permission denied".into());
            error.detail = Some(format!(
                "{said}; naslab runs as root (uid 0), and an export that squashes root (root_squash, the Linux server's default; ganesha: Squash = Root_Squash or All_Squash) treats it as its anonymous user (anonuid, Anonymous_Uid), who may not write here: make the directory writable by that user, export it with no_root_squash (ganesha: Squash = No_Root_Squash), or run naslab as the directory's owner"
            ));
            RemoteSandboxError::Request {
                action,
                path,
                error,
            }
        }
        other => other,
    }
}

/// Finds where the export ends in the URL's path: the longest export on the server's
/// list that holds the path; the rest is the directory inside it. When the server
/// will not list its exports, the whole path is tried as the export.
fn resolve_export(url: RemoteUrl, timeout: std::time::Duration) -> Result<RemoteUrl, NfsError> {
    let full = if url.path.is_empty() {
        url.share.clone()
    } else {
        format!("{}/{}", url.share, url.path)
    };
    let exports = match session::list_exports(&url, timeout) {
        Ok(list) => list,
        // A silent server: say so now rather than after a second wait in MNT.
        Err(e) if e.contains("no reply from") => {
            return Err(NfsError::Mount {
                host: url.host.clone(),
                export: full,
                detail: e,
            });
        }
        Err(_) => return Ok(url),
    };
    match session::split_export(&full, &exports) {
        Some((share, path)) => Ok(RemoteUrl { share, path, ..url }),
        None => Err(NfsError::NoExport {
            host: url.host.clone(),
            path: full,
            exports: if exports.is_empty() {
                "none".into()
            } else {
                exports.join(", ")
            },
        }),
    }
}

impl Target for NfsTarget {
    fn backend_name(&self) -> &'static str {
        "nfs"
    }

    fn caps(&self) -> Caps {
        NFS_CAPS
    }

    fn connect(
        &self,
        workload_dir: &str,
        files: Arc<FileTable>,
        _options: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        let mut session =
            Session::open(&self.url, self.timeout, self.retrans).map_err(|e| OpError {
                errno: crate::errno::ENOTCONN,
                detail: Some(e.to_string()),
            })?;
        session.w.share_silence_with(&self.share.admin().w);
        let dir = format!("{}/{workload_dir}", self.share.sandbox().root());
        let paths = SharePaths::new(dir, files);
        Ok(Box::new(NfsBackend {
            queue: NfsQueue::default(),
            memory: IoMemory::default(),
            session,
            paths,
            handles: HandleTable::default(),
            reaped: Vec::new(),
        }))
    }

    fn fresh_workload_dir(&self, name: &str) -> Result<(), OpError> {
        self.share.fresh_workload_dir(name)
    }

    fn remove_all(mut self: Box<Self>) -> Result<bool, OpError> {
        self.share.remove_all()
    }
}

/// One open file: NFS has no open, so this is the handle and what the client tracks.
struct Open {
    fh: nfs_fh3,
    stable: stable_how,
    /// Unstable writes not yet committed.
    dirty: bool,
    /// For append opens: where the next write goes.
    append_at: Option<u64>,
    /// The write verifier the first unstable write since the last COMMIT got.
    verf: Option<writeverf3>,
    /// Whether a later unstable write got another verifier.
    verf_changed: bool,
}

impl Open {
    /// Books an unstable write's verifier.
    fn wrote(&mut self, verf: Option<writeverf3>, mixed: bool) {
        self.verf_changed |= mixed;
        if let Some(v) = verf {
            self.verf_changed |= self.verf.is_some_and(|had| had != v);
            self.verf.get_or_insert(v);
        }
    }

    /// After a COMMIT that answered `committed`: whether the writes it covered may be
    /// lost (the server's verifier changed since the first of them). Starts afresh.
    fn committed(&mut self, committed: writeverf3) -> bool {
        let lost = self.verf_changed || self.verf.is_some_and(|v| v != committed);
        self.verf = None;
        self.verf_changed = false;
        lost
    }
}

/// One stream's NFS connection.
pub struct NfsBackend {
    /// Reads and writes in flight (declared first: dropped before the session).
    queue: NfsQueue,
    /// What the stream lent the queue's ops (dropped after the queue).
    memory: IoMemory,
    session: Session,
    /// Each file's path on the share, made when asked for.
    paths: SharePaths,
    handles: HandleTable<Open>,
    /// The queue's completions, booked against their handles before they are reported.
    reaped: Vec<queue::Reaped>,
}

impl NfsBackend {
    fn path(&self, file: u32) -> Result<String, OpError> {
        self.paths.path(file)
    }

    fn is_dir(&self, file: u32) -> bool {
        self.paths.is_dir(file)
    }
}

impl Backend for NfsBackend {
    fn caps(&self) -> Caps {
        NFS_CAPS
    }

    fn open(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError> {
        self.session.begin_op();
        let path = self.path(file)?;
        let (fh, size) = if how.create {
            self.session.create(&path, how.truncate, how.exclusive)?
        } else {
            let (fh, t, size) = self.session.resolve(&path)?;
            if t == ftype3::NF3DIR {
                return Err(OpError::errno(crate::errno::EISDIR));
            }
            if how.truncate && size > 0 {
                self.session.set_size(&fh, 0)?;
                (fh, 0)
            } else {
                (fh, size)
            }
        };
        let open = Open {
            fh,
            stable: if how.sync {
                stable_how::FILE_SYNC
            } else {
                stable_how::UNSTABLE
            },
            dirty: false,
            append_at: how.append.then_some(size),
            verf: None,
            verf_changed: false,
        };
        Ok(self.handles.insert(open))
    }

    fn close(&mut self, h: Handle) -> Result<(), OpError> {
        self.session.begin_op();
        let mut o = self.handles.take(h)?;
        if o.dirty {
            let v = self.session.commit(&mut o.fh)?;
            if o.committed(v) {
                self.session.recovery.unconfirmed_writes += 1;
            }
        }
        Ok(())
    }

    fn read(&mut self, h: Handle, offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        self.session.begin_op();
        let o = self.handles.get_mut(h)?;
        self.session.read_into(&mut o.fh, offset, buf)
    }

    fn write(&mut self, h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        self.session.begin_op();
        let o = self.handles.get_mut(h)?;
        let stable = o.stable;
        let at = o.append_at.unwrap_or(offset);
        let (n, verf, mixed) = self.session.write_at(&mut o.fh, at, buf, stable)?;
        if stable == stable_how::UNSTABLE {
            o.dirty = true;
            o.wrote(verf, mixed);
        }
        if let Some(a) = o.append_at.as_mut() {
            *a += n as u64;
        }
        Ok(n)
    }

    fn fsync(&mut self, h: Handle) -> Result<(), OpError> {
        self.session.begin_op();
        let o = self.handles.get_mut(h)?;
        o.dirty = false;
        let v = self.session.commit(&mut o.fh)?;
        if o.committed(v) {
            self.session.recovery.unconfirmed_writes += 1;
        }
        Ok(())
    }

    fn truncate(&mut self, h: Handle, len: u64) -> Result<(), OpError> {
        self.session.begin_op();
        let fh = self.handles.get_mut(h)?.fh.clone();
        self.session.set_size(&fh, len)
    }

    fn fallocate(&mut self, _h: Handle, _offset: u64, _len: u64) -> Result<(), OpError> {
        Err(OpError {
            errno: crate::errno::EOPNOTSUPP,
            detail: Some("NFSv3 cannot reserve space".into()),
        })
    }

    fn stat(&mut self, file: u32) -> Result<u64, OpError> {
        self.session.begin_op();
        let path = self.path(file)?;
        self.session.resolve(&path).map(|(_, _, size)| size)
    }

    fn statfs(&mut self, file: u32) -> Result<(), OpError> {
        self.session.begin_op();
        let path = self.path(file)?;
        let (fh, _, _) = self.session.resolve(&path)?;
        self.session.fs_stat(&fh)
    }

    fn utime(&mut self, file: u32) -> Result<(), OpError> {
        self.session.begin_op();
        let path = self.path(file)?;
        let (fh, _, _) = self.session.resolve(&path)?;
        self.session.touch(&fh)
    }

    fn mkdir(&mut self, file: u32) -> Result<(), OpError> {
        self.session.begin_op();
        let path = self.path(file)?;
        self.session.make_dir(&path)
    }

    fn readdir(&mut self, file: u32) -> Result<u64, OpError> {
        self.session.begin_op();
        let path = self.path(file)?;
        let fh = self.session.dir(&path)?;
        self.session.count_entries(&fh)
    }

    fn unlink(&mut self, file: u32) -> Result<(), OpError> {
        self.session.begin_op();
        let path = self.path(file)?;
        if self.is_dir(file) {
            self.session.remove_dir(&path)
        } else {
            self.session.remove_file(&path)
        }
    }

    fn rename(&mut self, from: u32, to: u32) -> Result<(), OpError> {
        let a = self.path(from)?;
        let b = self.path(to)?;
        self.session.begin_op();
        self.session.rename(&a, &b)
    }

    fn drop_cache(&mut self, file: u32) -> Result<(), OpError> {
        self.session.begin_op();
        // No client cache to drop; commit the server's copy, as posix's fsync before
        // dropping pages does.
        let path = self.path(file)?;
        let (mut fh, _, _) = self.session.resolve(&path)?;
        self.session.commit(&mut fh).map(|_| ())
    }

    fn recovery(&self) -> Recovery {
        self.session.recovery
    }

    fn queued(&mut self, depth: u32, memory: &IoMemory) -> Result<&mut dyn QueuedIo, OpError> {
        if depth > MAX_NFS_QUEUE_DEPTH {
            return Err(OpError {
                errno: crate::errno::EINVAL,
                detail: Some(format!(
                    "NFSv3 keeps at most {MAX_NFS_QUEUE_DEPTH} reads and writes in flight per stream"
                )),
            });
        }
        naslab_backend::lend_once(&mut self.memory, memory);
        Ok(self)
    }
}

impl QueuedIo for NfsBackend {
    fn queue_read(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let bytes = self.memory.locate(buf)?;
        let o = self.handles.get_mut(h)?;
        let max = self.session.rtmax as usize;
        // SAFETY: the bytes are in the memory lent to the queue, kept here until after
        // the queue is dropped and untouched by their lender until the op is reaped.
        unsafe {
            self.queue.push(
                false,
                h,
                o.fh.clone(),
                o.stable,
                offset,
                bytes,
                buf.len,
                max,
                tag,
            )
        };
        Ok(())
    }

    fn queue_write(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let bytes = self.memory.locate(buf)?;
        let o = self.handles.get_mut(h)?;
        let at = crate::remote::queued_write_at(&mut o.append_at, offset, buf.len);
        let max = self.session.wtmax as usize;
        // SAFETY: as for queue_read; a write's bytes are only read from.
        unsafe {
            self.queue.push(
                true,
                h,
                o.fh.clone(),
                o.stable,
                at,
                bytes,
                buf.len,
                max,
                tag,
            )
        };
        Ok(())
    }

    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        if self.queue.is_empty() {
            return Ok(());
        }
        self.reaped.clear();
        let r = self.queue.reap(&mut self.session, min, &mut self.reaped);
        for c in self.reaped.drain(..) {
            // A write the server took any of (a reply with a verifier) leaves data to
            // commit, even when another of its calls failed.
            if let Some((stable, verf, mixed)) = c.write
                && stable == stable_how::UNSTABLE
                && verf.is_some()
                && let Ok(o) = self.handles.get_mut(c.handle)
            {
                o.dirty = true;
                o.wrote(verf, mixed);
            }
            done.push((
                c.tag,
                match c.result {
                    Ok(n) => n as i64,
                    Err(e) => -(e.errno as i64),
                },
            ));
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::session::{nfs_errno, rpc_error};
    use super::*;
    use nfs3_client::RpcError;
    use nfs3_client::nfs3_types::nfs3::nfsstat3;

    #[test]
    fn the_longest_export_holding_the_path_wins() {
        let ex: Vec<String> = ["/", "/volume1", "/volume1/share", "/vol"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let s = |full: &str| session::split_export(full, &ex);
        assert_eq!(
            s("/volume1/share/sub/x"),
            Some(("/volume1/share".into(), "sub/x".into()))
        );
        assert_eq!(
            s("/volume1/shared"),
            Some(("/volume1".into(), "shared".into()))
        );
        assert_eq!(
            s("/volume1/share"),
            Some(("/volume1/share".into(), String::new()))
        );
        assert_eq!(s("/other"), Some(("/".into(), "other".into())));
        let ex = vec!["/exports/bench".to_string()];
        assert_eq!(session::split_export("/exports", &ex), None);
        assert_eq!(
            session::split_export("/exports/bench/a", &ex),
            Some(("/exports/bench".into(), "a".into()))
        );
    }

    #[test]
    fn statuses_map_to_errnos() {
        assert_eq!(nfs_errno(nfsstat3::NFS3ERR_NOENT), crate::errno::ENOENT);
        assert_eq!(nfs_errno(nfsstat3::NFS3ERR_NOSPC), crate::errno::ENOSPC);
        assert_eq!(
            nfs_errno(nfsstat3::NFS3ERR_NOTEMPTY),
            crate::errno::ENOTEMPTY
        );
        assert_eq!(nfs_errno(nfsstat3::NFS3ERR_STALE), crate::errno::ESTALE);
        assert!(rpc_error(RpcError::Io(std::io::ErrorKind::ConnectionReset.into())).is_fatal());
        assert!(!NFS_CAPS.can(OpKind::Fallocate) && NFS_CAPS.can(OpKind::Write));
        assert!(NFS_CAPS.can(OpKind::Statfs) && NFS_CAPS.can(OpKind::Utime));
        for k in [OpKind::Lock, OpKind::Unlock] {
            assert!(!NFS_CAPS.can(k), "{k}");
        }
    }

    #[test]
    fn a_change_sent_again_that_finds_itself_done_counts_as_done() {
        use super::session::done_before;
        let enoent = || Err(OpError::errno(crate::errno::ENOENT));
        // The first answer stands as the server gave it.
        assert_eq!(done_before(enoent(), false, crate::errno::ENOENT), enoent());
        // Sent again after a lost reply: the name already gone is the REMOVE done.
        assert_eq!(done_before(enoent(), true, crate::errno::ENOENT), Ok(()));
        // Another error is still one.
        let eacces = || Err(OpError::errno(crate::errno::EACCES));
        assert_eq!(done_before(eacces(), true, crate::errno::ENOENT), eacces());
    }

    #[test]
    fn writes_a_restarted_server_may_have_lost_are_told_at_their_commit() {
        let v = |b: u8| writeverf3([b; 8]);
        let mut o = Open {
            fh: nfs_fh3::default(),
            stable: stable_how::UNSTABLE,
            dirty: true,
            append_at: None,
            verf: None,
            verf_changed: false,
        };
        o.wrote(Some(v(1)), false);
        o.wrote(Some(v(1)), false);
        assert!(
            !o.committed(v(1)),
            "one verifier throughout: the writes are safe"
        );
        o.wrote(Some(v(1)), false);
        assert!(o.committed(v(2)), "the server restarted before the COMMIT");
        o.wrote(Some(v(2)), false);
        o.wrote(Some(v(3)), false);
        assert!(o.committed(v(3)), "it restarted between the writes");
        o.wrote(Some(v(3)), true);
        assert!(
            o.committed(v(3)),
            "it restarted between one write's requests"
        );
        assert!(!o.committed(v(4)), "nothing written since the last COMMIT");
    }

    #[test]
    fn a_closed_port_is_a_clear_error() {
        let url: RemoteUrl = "nfs://127.0.0.1:1/x?mountport=1".parse().unwrap();
        let e = NfsTarget::connect(url).unwrap_err();
        assert!(e.to_string().contains("cannot mount"), "{e}");
    }
}
