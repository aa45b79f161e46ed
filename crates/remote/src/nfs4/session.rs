//! One NFSv4.1 (or 4.2) connection: the `nfs-rs` client's mount (its own client ID and
//! session, made by EXCHANGE_ID and CREATE_SESSION) on a runtime of the connection's
//! own, the directory handles it has looked up, and the path-based calls the remote
//! sandbox needs.

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use nfs_rs::{Mount, Nfs4ErrorCode, NfsError as LibError};

use crate::remote::{AdminSession, DirHandles, EntryKind, RemoteFs, split_path as split};
use crate::url::RemoteUrl;
use crate::waiter::Waiter;
use naslab_backend::OpError;

use super::Nfs4Error;

/// The most naslab asks for in one READ or WRITE: 1 MiB, as for NFSv3, or less when the
/// server's session says so (a 1 MiB WRITE and its compound's other ops must fit the
/// session's largest request; ganesha's is 1 MiB, so it offers 1,044,480 bytes).
pub(super) const MAX_XFER: u32 = 1 << 20;

/// NFSv4's file types (`nfs_ftype4`), as the client's attributes carry them.
const NF4DIR: u32 = 2;
const NF4LNK: u32 = 5;

/// The errno an NFSv4 status stands for. Most of the classic ones are numbered as their
/// errnos (RFC 8881 took them from NFSv3, which took them from Unix).
pub(super) fn nfs4_errno(s: Nfs4ErrorCode) -> i32 {
    use crate::errno as e;
    match s {
        Nfs4ErrorCode::NFS4ERR_PERM => e::EPERM,
        Nfs4ErrorCode::NFS4ERR_NOENT => e::ENOENT,
        Nfs4ErrorCode::NFS4ERR_IO => e::EIO,
        Nfs4ErrorCode::NFS4ERR_NXIO => e::ENXIO,
        Nfs4ErrorCode::NFS4ERR_ACCESS => e::EACCES,
        Nfs4ErrorCode::NFS4ERR_EXIST => e::EEXIST,
        Nfs4ErrorCode::NFS4ERR_XDEV => e::EXDEV,
        Nfs4ErrorCode::NFS4ERR_NOTDIR => e::ENOTDIR,
        Nfs4ErrorCode::NFS4ERR_ISDIR => e::EISDIR,
        Nfs4ErrorCode::NFS4ERR_INVAL => e::EINVAL,
        Nfs4ErrorCode::NFS4ERR_FBIG => e::EFBIG,
        Nfs4ErrorCode::NFS4ERR_NOSPC => e::ENOSPC,
        Nfs4ErrorCode::NFS4ERR_ROFS => e::EROFS,
        Nfs4ErrorCode::NFS4ERR_MLINK => e::EMLINK,
        Nfs4ErrorCode::NFS4ERR_NAMETOOLONG => e::ENAMETOOLONG,
        Nfs4ErrorCode::NFS4ERR_NOTEMPTY => e::ENOTEMPTY,
        Nfs4ErrorCode::NFS4ERR_DQUOT => e::EDQUOT,
        Nfs4ErrorCode::NFS4ERR_STALE | Nfs4ErrorCode::NFS4ERR_BADHANDLE => e::ESTALE,
        Nfs4ErrorCode::NFS4ERR_NOTSUPP => e::EOPNOTSUPP,
        Nfs4ErrorCode::NFS4ERR_DELAY => e::EAGAIN,
        Nfs4ErrorCode::NFS4ERR_SYMLINK => e::ELOOP,
        Nfs4ErrorCode::NFS4ERR_WRONG_TYPE => e::EINVAL,
        Nfs4ErrorCode::NFS4ERR_DENIED | Nfs4ErrorCode::NFS4ERR_LOCKED => e::EAGAIN,
        _ => e::EIO,
    }
}

/// A failed request as an op error: the server's status as its errno, anything below
/// NFS (the socket, the RPC layer, a lost session) as `ENOTCONN`, which stops the run.
pub(super) fn op_error(e: LibError) -> OpError {
    let errno = match &e {
        LibError::Nfs4(s) => nfs4_errno(*s),
        LibError::LockDenied { .. } => crate::errno::EAGAIN,
        LibError::Unsupported(_) => crate::errno::EOPNOTSUPP,
        LibError::InvalidInput(_) | LibError::ModeViolation(_) => crate::errno::EINVAL,
        _ => crate::errno::ENOTCONN,
    };
    OpError {
        errno,
        detail: Some(format!("NFSv4: {e}")),
    }
}

/// One NFSv4 connection, with the directory handles it has looked up.
pub(super) struct Session {
    /// Runs the requests, on a runtime of the connection's own.
    pub(super) w: Waiter,
    mount: Box<dyn Mount>,
    /// The export's root handle (the URL's path, looked up from the pseudo-root).
    root: Bytes,
    /// Directories already looked up, by path relative to the URL's path.
    pub(super) dirs: DirHandles<Bytes>,
    pub(super) rmax: u32,
    pub(super) wmax: u32,
    pub(super) settings: naslab_results::NfsSettings,
}

impl Session {
    /// Connects, makes the client's session with the server and looks up the URL's
    /// path from the pseudo-root, each step at most `timeout`.
    pub(super) fn open(url: &RemoteUrl, timeout: Duration) -> Result<Session, Nfs4Error> {
        let port = url.port.unwrap_or(2049);
        let addr = url.address();
        let w = Waiter::new(addr.clone(), timeout).map_err(Nfs4Error::Runtime)?;
        let (uid, gid) = crate::nfs::caller_ids();
        let host = if url.host.contains(':') {
            format!("[{}]", url.host)
        } else {
            url.host.clone()
        };
        let version = url.nfs_version.name();
        // The library reads the port, ids and version from a URL of its own form; the
        // path is the export's, each component percent-encoded again.
        let path: String = url
            .share
            .split('/')
            .filter(|c| !c.is_empty())
            .map(|c| format!("/{}", encode(c)))
            .collect();
        let lib_url = format!(
            "nfs://{host}:{port}{path}?version={version}&nfsport={port}&uid={uid}&gid={gid}"
        );
        let mount_error = |detail: String| Nfs4Error::Mount {
            host: url.host.clone(),
            export: url.share.clone(),
            version,
            detail,
        };
        let mount = w
            .run(Box::pin(nfs_rs::parse_url_and_mount(&lib_url)))
            .ok_or_else(|| {
                mount_error(format!(
                    "{}; check that the server runs, answers and offers NFSv{version}",
                    w.no_reply()
                ))
            })?
            .map_err(|e| mount_error(mount_detail(&e, &addr, version)))?;
        let root = w
            .run(mount.getfh())
            .ok_or_else(|| mount_error(w.no_reply()))?;
        let pick = |v: u32| if v == 0 { MAX_XFER } else { v.min(MAX_XFER) };
        let (rmax, wmax) = (
            pick(mount.get_max_read_size()),
            pick(mount.get_max_write_size()),
        );
        let (major, minor) = url.nfs_version.numbers();
        let slots = w
            .run(mount.nfs41_channel_limits())
            .flatten()
            .map(|l| l.max_requests);
        let settings = naslab_results::NfsSettings {
            version: major,
            minor_version: minor,
            io_timeout_ns: timeout.as_nanos().try_into().unwrap_or(u64::MAX),
            retrans_timeout_ns: None,
            auth: "AUTH_UNIX".to_string(),
            uid,
            gid,
            port,
            mount_port: None,
            max_read_bytes: rmax.into(),
            max_write_bytes: wmax.into(),
            session_slots: slots,
        };
        // The library renews the client's lease with a task of the connection's runtime
        // (a SEQUENCE every so often), which runs only while the runtime does: run it
        // between ops too, or a stream idle past the server's lease loses its open state.
        let mut w = w;
        w.answer_while_idle();
        Ok(Session {
            w,
            mount,
            root,
            dirs: DirHandles::default(),
            rmax,
            wmax,
            settings,
        })
    }

    /// The library's client, for requests kept in flight together ([`super::queue`]).
    pub(super) fn mount(&self) -> &dyn Mount {
        &*self.mount
    }

    /// One request and its reply, at most the I/O timeout; a server silent that long
    /// (or found silent earlier on this target) fails it with `ENOTCONN`.
    pub(super) fn call<T>(
        &self,
        fut: impl Future<Output = Result<T, LibError>>,
    ) -> Result<T, OpError> {
        // The library's futures are large (tens of KiB in a debug build): kept on the
        // heap, not on the stream thread's stack.
        match self.w.request(Box::pin(fut)) {
            Ok(r) => r.map_err(op_error),
            Err(_) => Err(OpError {
                errno: crate::errno::ENOTCONN,
                detail: Some(self.w.no_reply()),
            }),
        }
    }

    /// The handle of directory `path`, looked up one component at a time from the
    /// nearest directory already known.
    pub(super) fn dir(&mut self, path: &str) -> Result<Bytes, OpError> {
        if path.is_empty() {
            return Ok(self.root.clone());
        }
        if let Some(fh) = self.dirs.get(path) {
            return Ok(fh);
        }
        let (parent, n) = split(path);
        let pfh = self.dir(parent)?;
        let obj = self.call(self.mount.lookup(pfh, n))?;
        if obj.attr.as_ref().is_some_and(|a| a.type_ != NF4DIR) {
            return Err(OpError::errno(crate::errno::ENOTDIR));
        }
        self.dirs.insert(path, obj.fh.clone());
        Ok(obj.fh)
    }

    /// `path`'s handle, type and size: a LOOKUP in its directory (the reply carries
    /// its attributes), or a GETATTR of the root.
    pub(super) fn resolve(&mut self, path: &str) -> Result<(Bytes, u32, u64), OpError> {
        if path.is_empty() {
            let root = self.root.clone();
            let a = self.call(self.mount.getattr(root.clone()))?;
            return Ok((root, a.type_, a.filesize));
        }
        let (parent, n) = split(path);
        let dfh = self.dir(parent)?;
        let obj = self.call(self.mount.lookup(dfh, n))?;
        let a = match obj.attr {
            Some(a) => a,
            None => self.call(self.mount.getattr(obj.fh.clone()))?,
        };
        Ok((obj.fh, a.type_, a.filesize))
    }

    /// Opens `path` (OPEN with CLAIM_NULL, creating it with mode 0644 when `create`),
    /// holding open state until [`Session::close`]. Its handle and size.
    pub(super) fn open_file(
        &mut self,
        path: &str,
        create: bool,
        write: bool,
    ) -> Result<(Bytes, u64), OpError> {
        let (parent, n) = split(path);
        let dfh = self.dir(parent)?;
        let obj = if create {
            self.call(self.mount.create(dfh, n, Some(0o644)))?
        } else {
            let access = if write {
                nfs_rs::OPEN_BOTH
            } else {
                nfs_rs::OPEN_READ
            };
            self.call(self.mount.open(dfh, n, access))?
        };
        let size = match &obj.attr {
            Some(a) if a.type_ == NF4DIR => {
                let _ = self.close(obj.fh.clone());
                return Err(OpError::errno(crate::errno::EISDIR));
            }
            Some(a) => a.filesize,
            None => self.call(self.mount.getattr(obj.fh.clone()))?.filesize,
        };
        Ok((obj.fh, size))
    }

    /// CLOSE: gives the open state back.
    pub(super) fn close(&mut self, fh: Bytes) -> Result<(), OpError> {
        self.call(self.mount.close(fh))
    }

    /// SETATTR of the size.
    pub(super) fn set_size(&mut self, fh: &Bytes, len: u64) -> Result<(), OpError> {
        self.call(
            self.mount
                .setattr(fh.clone(), None, None, None, None, Some(len), None, None),
        )
    }

    /// SETATTR of the access and modification times to the client's clock: the
    /// library sets times as the client gives them (SET_TO_CLIENT_TIME4), not to the
    /// server's.
    pub(super) fn touch(&mut self, fh: &Bytes) -> Result<(), OpError> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let t = nfs_rs::Time {
            seconds: u32::try_from(now.as_secs()).unwrap_or(u32::MAX),
            nseconds: now.subsec_nanos(),
        };
        self.call(
            self.mount
                .setattr(fh.clone(), None, None, None, None, None, Some(t), Some(t)),
        )
    }

    /// GETATTR of the file system's space and file counts.
    pub(super) fn fs_stat(&mut self) -> Result<(), OpError> {
        self.call(self.mount.fsstat()).map(|_| ())
    }

    /// COMMIT of the whole file.
    pub(super) fn commit(&mut self, fh: &Bytes) -> Result<(), OpError> {
        self.call(self.mount.commit(fh.clone(), 0, 0))
    }

    /// READs of at most the session's size each, into `buf`, until it is full or the
    /// file ends.
    pub(super) fn read_into(
        &mut self,
        fh: &Bytes,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize, OpError> {
        let rmax = self.rmax as usize;
        let mut done = 0usize;
        while done < buf.len() {
            let n = (buf.len() - done).min(rmax);
            let at = offset + done as u64;
            let data = self.call(self.mount.read(fh.clone(), at, n as u32))?;
            let got = data.len().min(n);
            buf[done..done + got].copy_from_slice(&data[..got]);
            done += got;
            if got < n {
                break;
            }
        }
        Ok(done)
    }

    /// UNSTABLE WRITEs of at most the session's size each; whether every one came
    /// back committed to stable storage (FILE_SYNC) with the bytes written.
    pub(super) fn write_at(
        &mut self,
        fh: &Bytes,
        offset: u64,
        data: &[u8],
    ) -> Result<(usize, bool), OpError> {
        let wmax = self.wmax as usize;
        let mut done = 0usize;
        let mut stable = true;
        while done < data.len() {
            let n = (data.len() - done).min(wmax);
            let at = offset + done as u64;
            let chunk = Bytes::copy_from_slice(&data[done..done + n]);
            let out = self.call(self.mount.write(fh.clone(), at, chunk))?;
            stable &= out.committed == nfs_rs::WriteCommitted::FileSync;
            let wrote = (out.count as usize).min(n);
            done += wrote;
            if wrote == 0 {
                break;
            }
        }
        Ok((done, stable))
    }

    /// READDIR of a directory to its end: the number of entries.
    pub(super) fn count_entries(&mut self, fh: &Bytes) -> Result<u64, OpError> {
        let entries = self.call(async {
            let mut stream = self.mount.readdir(fh.clone()).await;
            let mut n = 0u64;
            while let Some(e) = next(&mut stream).await {
                let e = e?;
                if e.file_name != "." && e.file_name != ".." {
                    n += 1;
                }
            }
            Ok(n)
        })?;
        Ok(entries)
    }

    /// RENAME of `from` to `to` (paths under the URL's path).
    pub(super) fn rename_paths(&mut self, from: &str, to: &str) -> Result<(), OpError> {
        let ((pa, na), (pb, nb)) = (split(from), split(to));
        let fa = self.dir(pa)?;
        let fb = self.dir(pb)?;
        self.dirs.forget(from);
        self.dirs.forget(to);
        self.call(self.mount.rename(fa, na, fb, nb))
    }

    /// REMOVE of a file or an empty directory (one operation for both in NFSv4).
    pub(super) fn remove(&mut self, path: &str) -> Result<(), OpError> {
        let (parent, n) = split(path);
        let dfh = self.dir(parent)?;
        self.dirs.forget(path);
        self.call(self.mount.remove(dfh, n))
    }

    /// Ends the session and the client ID (DESTROY_SESSION, DESTROY_CLIENTID), at most
    /// a short wait: the server forgets this client's state at once instead of at the
    /// end of its lease.
    pub(super) fn unmount(&mut self) {
        let _ = self
            .w
            .run_for(Duration::from_secs(2), Box::pin(self.mount.umount()));
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.unmount();
    }
}

/// A stream's next item.
async fn next<S: futures_core::Stream + Unpin + ?Sized>(s: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| std::pin::Pin::new(&mut *s).poll_next(cx)).await
}

/// A path component percent-encoded for the library's URL.
fn encode(c: &str) -> String {
    let mut out = String::with_capacity(c.len());
    for b in c.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What a failed mount says: a refused connection, a server that does not offer the
/// version, the export missing from its pseudo-file system, or the library's words.
fn mount_detail(e: &LibError, addr: &str, version: &str) -> String {
    match e {
        LibError::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            format!("{addr} refused the connection; check the host and the NFS port in the URL, and that the server runs")
        }
        LibError::Nfs4(Nfs4ErrorCode::NFS4ERR_MINOR_VERS_MISMATCH) => format!(
            "the server does not offer NFSv{version}; ask for another (vers=3, 4.1 or 4.2), or enable it on the server (ganesha: NFSV4 {{ Minor_Versions = 1, 2; }})"
        ),
        LibError::Nfs4(Nfs4ErrorCode::NFS4ERR_INVAL) if version == "4.2" => {
            "the server refused to start an NFSv4.2 client (EXCHANGE_ID: invalid argument; nfs-ganesha 4.3 answers so); ask for vers=4.1".into()
        }
        LibError::Nfs4(Nfs4ErrorCode::NFS4ERR_NOENT) => {
            "the server's NFSv4 pseudo-file system has no such path; write the export's pseudo path (ganesha: Pseudo = ...; Linux: the path under fsid=0, or the exported path)".into()
        }
        LibError::Rpc(text) if text.contains("mismatch") || text.contains("PROG_MISMATCH") => format!(
            "the server does not speak NFS version 4 on {addr} ({text}); ask for vers=3, or enable NFSv4 on the server (ganesha: Protocols = 3, 4)"
        ),
        other => other.to_string(),
    }
}

impl AdminSession for Session {
    fn forget_lookups(&mut self) {
        self.dirs.clear();
    }

    fn set_request_timeout(&mut self, wait: Duration) {
        self.w.set_timeout(wait);
    }
}

impl RemoteFs for Session {
    fn kind(&mut self, path: &str) -> Result<Option<EntryKind>, OpError> {
        match self.resolve(path) {
            Ok((_, NF4DIR, _)) => Ok(Some(EntryKind::Dir)),
            Ok((_, NF4LNK, _)) => Ok(Some(EntryKind::Link)),
            Ok(_) => Ok(Some(EntryKind::File)),
            Err(e) if e.errno == crate::errno::ENOENT => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn make_dir(&mut self, path: &str) -> Result<(), OpError> {
        let (parent, n) = split(path);
        let dfh = self.dir(parent)?;
        self.call(self.mount.mkdir(dfh, n, 0o755)).map(|_| ())
    }

    fn put_file(&mut self, path: &str, data: &[u8]) -> Result<(), OpError> {
        let (fh, size) = self.open_file(path, true, true)?;
        let r = (|| {
            if size > 0 {
                self.set_size(&fh, 0)?;
            }
            let (_, stable) = self.write_at(&fh, 0, data)?;
            if !stable {
                self.commit(&fh)?;
            }
            Ok(())
        })();
        let closed = self.close(fh);
        r.and(closed)
    }

    fn list(&mut self, path: &str) -> Result<Vec<(String, EntryKind)>, OpError> {
        let fh = self.dir(path)?;
        self.call(async {
            let mut stream = self.mount.readdirplus(fh).await;
            let mut out = Vec::new();
            while let Some(e) = next(&mut stream).await {
                let e = e?;
                if e.file_name == "." || e.file_name == ".." {
                    continue;
                }
                let kind = match e.attr.as_ref().map(|a| a.type_) {
                    Some(NF4DIR) => EntryKind::Dir,
                    Some(NF4LNK) => EntryKind::Link,
                    _ => EntryKind::File,
                };
                out.push((e.file_name, kind));
            }
            Ok(out)
        })
    }

    fn remove_file(&mut self, path: &str) -> Result<(), OpError> {
        self.remove(path)
    }

    fn remove_dir(&mut self, path: &str) -> Result<(), OpError> {
        self.remove(path)
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), OpError> {
        self.rename_paths(from, to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_errnos() {
        use crate::errno as e;
        for (s, want) in [
            (Nfs4ErrorCode::NFS4ERR_NOENT, e::ENOENT),
            (Nfs4ErrorCode::NFS4ERR_EXIST, e::EEXIST),
            (Nfs4ErrorCode::NFS4ERR_ACCESS, e::EACCES),
            (Nfs4ErrorCode::NFS4ERR_NOTEMPTY, e::ENOTEMPTY),
            (Nfs4ErrorCode::NFS4ERR_ISDIR, e::EISDIR),
            (Nfs4ErrorCode::NFS4ERR_STALE, e::ESTALE),
            (Nfs4ErrorCode::NFS4ERR_DENIED, e::EAGAIN),
            (Nfs4ErrorCode::NFS4ERR_SERVERFAULT, e::EIO),
        ] {
            assert_eq!(nfs4_errno(s), want, "{s:?}");
        }
        let io = op_error(LibError::Io(std::io::ErrorKind::ConnectionReset.into()));
        assert_eq!(io.errno, crate::errno::ENOTCONN);
        assert!(io.detail.unwrap().starts_with("NFSv4: "));
    }

    #[test]
    fn export_paths_are_encoded_for_the_library() {
        assert_eq!(encode("a b%"), "a%20b%25");
        assert_eq!(encode("naslab-1.x_~"), "naslab-1.x_~");
    }
}
