//! One NFSv3 connection: its runtime and TCP stream behind the crate's async traits, the
//! RPCs naslab sends, the directory handles it has looked up, and the path-based calls
//! the remote sandbox needs.

use std::future::Future;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nfs3_client::io::{AsyncRead, AsyncWrite};
use nfs3_client::net::Connector;
use nfs3_client::nfs3_types::nfs3::{
    COMMIT3args, CREATE3args, FSINFO3args, FSSTAT3args, GETATTR3args, LOOKUP3args, MKDIR3args,
    Nfs3Option, Nfs3Result, READ3args, READDIR3args, READDIRPLUS3args, REMOVE3args, RENAME3args,
    RMDIR3args, SETATTR3args, WRITE3args, createhow3, diropargs3, filename3, ftype3, nfs_fh3,
    nfsstat3, sattr3, set_atime, set_mtime, stable_how, writeverf3,
};
use nfs3_client::nfs3_types::rpc::{auth_unix, opaque_auth};
use nfs3_client::nfs3_types::xdr_codec::Opaque;
use nfs3_client::{Nfs3Client, Nfs3ConnectionBuilder, RpcError};
use tokio::net::TcpStream;

use super::NfsError;
use crate::remote::{AdminSession, DirHandles, EntryKind, RemoteFs, split_path as split};
use crate::url::{RemoteUrl, no_reply};
use crate::waiter::Waiter;
use naslab_backend::{OpError, Recovery};

/// The most naslab asks for in one READ or WRITE: the server's `rtmax`/`wtmax` when
/// smaller, else 1 MiB, the most Linux's NFS client moves in one request. nfs-ganesha
/// offers far more; alternated against it on loopback (docs/benchmarks.md), 8 MiB ops
/// in one request each ran at 0.6 to 0.9 times the rate of the same ops in 1 MiB
/// requests, and requests of 2 or 4 MiB ran within a few percent of 1 MiB ones.
pub(super) const MAX_XFER: u32 = 1 << 20;

/// One RPC on a session's connection: `rpc!(session, method(args...))`. When the
/// connection broke under it (reset, closed, refused: see [`broken`]), the session makes
/// a new one and sends the request again ([`Session::recover`]), within what is left of
/// the op's I/O timeout. Gives the result and whether the request was sent more than
/// once (a request that changes the namespace reads its answer in that light).
macro_rules! rpc {
    ($s:expr, $method:ident ( $($arg:expr),* )) => {{
        let mut redone = false;
        loop {
            let r = $s.w.call_retrans($s.retrans, $s.client.$method($($arg),*));
            match r {
                Err(e) if $crate::nfs::session::broken(&e) => {
                    if let Err(e) = $s.recover(e) {
                        $s.end_recovery(redone);
                        break (Err(e), redone);
                    }
                    redone = true;
                }
                r => {
                    $s.end_recovery(redone);
                    break (r, redone);
                }
            }
        }
    }};
}

/// Whether an RPC failed because its connection broke (closed, reset, or refused when
/// made again), not because the server said no or stayed silent: a new connection may
/// carry it. A silent server (no reply within the I/O timeout) is not retried: the op's
/// time is up.
pub(crate) fn broken(e: &RpcError) -> bool {
    use std::io::ErrorKind as K;
    matches!(e, RpcError::Io(io) if matches!(
        io.kind(),
        K::UnexpectedEof
            | K::ConnectionReset
            | K::ConnectionAborted
            | K::BrokenPipe
            | K::NotConnected
            | K::ConnectionRefused
    ))
}

/// The longest pause between two attempts to connect again.
const RECONNECT_PAUSE_MAX: Duration = Duration::from_millis(100);

/// A connection's RPCs, each on its runtime and at most the I/O timeout.
pub(super) trait Call {
    /// One RPC and its reply, at most the timeout; a server silent that long (or found
    /// silent earlier) is an I/O error of kind `TimedOut`: "no reply from HOST:PORT
    /// within N s".
    fn call<T>(&self, fut: impl Future<Output = Result<T, RpcError>>) -> Result<T, RpcError>;

    /// [`Call::call`], but with `retrans` shorter than what the request may wait, a
    /// reply that has not come within it is an error of kind `ConnectionAborted` (the
    /// connection taken for broken: the caller makes a new one and sends the request
    /// again), and the connection is not marked silent.
    fn call_retrans<T>(
        &self,
        retrans: Option<Duration>,
        fut: impl Future<Output = Result<T, RpcError>>,
    ) -> Result<T, RpcError>;
}

impl Call for Waiter {
    fn call<T>(&self, fut: impl Future<Output = Result<T, RpcError>>) -> Result<T, RpcError> {
        let no_reply = || {
            RpcError::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                self.no_reply(),
            ))
        };
        match self.request(fut) {
            Ok(Err(RpcError::Io(e))) if e.kind() == std::io::ErrorKind::TimedOut => {
                self.mark_dead();
                Err(no_reply())
            }
            Ok(r) => r,
            Err(_) => Err(no_reply()),
        }
    }

    fn call_retrans<T>(
        &self,
        retrans: Option<Duration>,
        fut: impl Future<Output = Result<T, RpcError>>,
    ) -> Result<T, RpcError> {
        let Some(r) = retrans.filter(|r| *r < self.timeout()) else {
            return self.call(fut);
        };
        if self.is_dead() || self.is_silent() {
            return self.call(fut);
        }
        match self.run_for(r, fut) {
            Some(Err(RpcError::Io(e))) if e.kind() == std::io::ErrorKind::TimedOut => {
                Err(RpcError::Io(std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    format!(
                        "no reply from {} within the retransmit timeout",
                        self.addr()
                    ),
                )))
            }
            Some(res) => res,
            None => Err(RpcError::Io(std::io::Error::new(
                std::io::ErrorKind::ConnectionAborted,
                format!(
                    "no reply from {} within the retransmit timeout ({} s)",
                    self.addr(),
                    r.as_secs_f64()
                ),
            ))),
        }
    }
}

/// A TCP connection on the session's runtime, behind the crate's async I/O traits. The
/// stream is shared with the session's queue of reads and writes in flight
/// ([`super::queue`]), which uses it only while no request of the crate's is under way.
pub(super) struct TcpIo(pub(super) Arc<TcpStream>);

impl AsyncRead for TcpIo {
    async fn async_read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            match self.0.try_read(buf) {
                Ok(0) if !buf.is_empty() => return Err(std::io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => self.0.readable().await?,
                Err(e) => return Err(e),
            }
        }
    }
}

impl AsyncWrite for TcpIo {
    async fn async_write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        loop {
            match self.0.try_write(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => self.0.writable().await?,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Opens connections for the crate (portmapper, MOUNT, NFS), each at most the timeout
/// to connect, and keeps the last one it made: after a mount, the NFS connection.
struct TcpConnector {
    timeout: Duration,
    last: Arc<Mutex<Option<Arc<TcpStream>>>>,
}

impl TcpConnector {
    fn new(timeout: Duration) -> TcpConnector {
        TcpConnector {
            timeout,
            last: Arc::default(),
        }
    }
}

impl Connector for TcpConnector {
    type Connection = TcpIo;

    async fn connect(&self, addr: SocketAddr) -> std::io::Result<TcpIo> {
        let s = match tokio::time::timeout(self.timeout, TcpStream::connect(addr)).await {
            Ok(s) => s?,
            Err(_) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    no_reply(&addr.to_string(), self.timeout),
                ));
            }
        };
        s.set_nodelay(true)?;
        let s = Arc::new(s);
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(&s));
        Ok(TcpIo(s))
    }

    async fn connect_with_port(&self, _addr: SocketAddr, _port: u16) -> std::io::Result<TcpIo> {
        // naslab needs no admin rights, so it never binds a privileged port.
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

pub(super) fn nfs_errno(s: nfsstat3) -> i32 {
    match s {
        nfsstat3::NFS3ERR_NAMETOOLONG => crate::errno::ENAMETOOLONG,
        nfsstat3::NFS3ERR_NOTEMPTY => crate::errno::ENOTEMPTY,
        nfsstat3::NFS3ERR_DQUOT => crate::errno::EDQUOT,
        nfsstat3::NFS3ERR_STALE | nfsstat3::NFS3ERR_BADHANDLE => crate::errno::ESTALE,
        nfsstat3::NFS3ERR_NOTSUPP => crate::errno::EOPNOTSUPP,
        nfsstat3::NFS3ERR_JUKEBOX => crate::errno::EAGAIN,
        nfsstat3::NFS3ERR_SERVERFAULT => crate::errno::EIO,
        nfsstat3::NFS3ERR_REMOTE => crate::errno::EREMOTE,
        nfsstat3::NFS3ERR_TOOSMALL | nfsstat3::NFS3ERR_BAD_COOKIE => crate::errno::EINVAL,
        nfsstat3::NFS3ERR_NOT_SYNC | nfsstat3::NFS3ERR_BADTYPE => crate::errno::EINVAL,
        // The rest are numbered as their errnos (RFC 1813 took them from Unix).
        other => other as i32,
    }
}

pub(super) fn status_error(s: nfsstat3) -> OpError {
    OpError {
        errno: nfs_errno(s),
        detail: Some(format!("NFS: {s}")),
    }
}

/// A failure below NFS (the socket, the RPC layer): the server is gone or broken, so
/// it stops the run.
pub(super) fn rpc_error(e: RpcError) -> OpError {
    let detail = match &e {
        RpcError::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => io.to_string(),
        RpcError::FragmentedReply | RpcError::Xdr(_) | RpcError::UnexpectedXid => {
            format!("NFS RPC: the server's reply is not a valid ONC RPC record ({e})")
        }
        _ => format!("NFS RPC: {e}"),
    };
    OpError {
        errno: crate::errno::ENOTCONN,
        detail: Some(detail),
    }
}

/// What a failed mount says: a silent server, a peer that does not speak ONC RPC at
/// all (a web server, an SMB server on the port...), or the server's own words.
/// For a connection refused while mounting: which of the services it needs (in the order
/// they are asked) refuses, by address, so that a port in the URL is seen to be the
/// one it is for. The client's error does not say which connection failed; one more
/// connection to each says it.
fn refused_at(e: &nfs3_client::ConnectError, services: &[(&str, &str)]) -> Option<String> {
    let nfs3_client::ConnectError::Io(io) = e else {
        return None;
    };
    if io.kind() != std::io::ErrorKind::ConnectionRefused {
        return None;
    }
    services.iter().find_map(|(what, addr)| {
        let sock: SocketAddr = addr.parse().ok()?;
        let refused = std::net::TcpStream::connect_timeout(&sock, Duration::from_secs(2))
            .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused);
        refused.then(|| format!("{what} at {addr} refused the connection"))
    })
}

fn mount_detail(e: &nfs3_client::ConnectError, addr: &str) -> String {
    let text = e.to_string();
    if text.contains("no reply from") {
        return format!("{text}; check that the server runs and answers");
    }
    let not_rpc = matches!(
        e,
        nfs3_client::ConnectError::Mount(nfs3_client::MountError::Rpc(
            RpcError::FragmentedReply | RpcError::Xdr(_) | RpcError::UnexpectedXid
        )) | nfs3_client::ConnectError::Portmap(nfs3_client::PortmapError::Rpc(
            RpcError::FragmentedReply | RpcError::Xdr(_) | RpcError::UnexpectedXid
        ))
    );
    if not_rpc {
        format!("the peer at {addr} does not answer as an NFS/MOUNT (ONC RPC) server ({text})")
    } else {
        text
    }
}

/// A request that changes the namespace (MKDIR, REMOVE, RMDIR, RENAME), sent again after
/// its connection broke, may have been carried out the first time with its reply lost:
/// the server then answers the second one with the error the change itself brings
/// (`done`: EEXIST for MKDIR, ENOENT for the others), which counts as the op done. Only
/// a request that was sent again is read so; the first answer stands as the server gave
/// it. (A change made by somebody else in between cannot be told apart: naslab's
/// directory is its own.)
pub(super) fn done_before(r: Result<(), OpError>, redone: bool, done: i32) -> Result<(), OpError> {
    match r {
        Err(e) if redone && e.errno == done => Ok(()),
        r => r,
    }
}

pub(super) fn check<T, E>(r: Result<Nfs3Result<T, E>, RpcError>) -> Result<T, OpError> {
    match r.map_err(rpc_error)? {
        Nfs3Result::Ok(v) => Ok(v),
        Nfs3Result::Err((s, _)) => Err(status_error(s)),
    }
}

pub(super) fn name(n: &str) -> filename3<'_> {
    filename3(Opaque::borrowed(n.as_bytes()))
}

/// The host's address as text, as the crate wants it.
pub(super) fn host_ip(url: &RemoteUrl) -> Result<String, NfsError> {
    (url.host.as_str(), 0)
        .to_socket_addrs()
        .map_err(|source| NfsError::Resolve {
            host: url.host.clone(),
            source,
        })?
        .next()
        .map(|a| a.ip().to_string())
        .ok_or_else(|| NfsError::Resolve {
            host: url.host.clone(),
            source: std::io::ErrorKind::NotFound.into(),
        })
}

/// The server's export list (the MOUNT protocol's EXPORT call), asking the portmapper
/// for the MOUNT service's port unless the URL gives it.
pub(super) fn list_exports(url: &RemoteUrl, timeout: Duration) -> Result<Vec<String>, String> {
    use nfs3_client::nfs3_types::{mount, portmap};
    let ip: std::net::IpAddr = host_ip(url)
        .map_err(|e| e.to_string())?
        .parse()
        .map_err(|e| format!("{e}"))?;
    let w = Waiter::new(format!("{ip}:111"), timeout).map_err(|e| format!("{e}"))?;
    // Whether the step under way got its connection accepted: a peer that accepts and
    // then says nothing is told apart from one that never answered at all.
    let accepted = std::cell::Cell::new(false);
    // What a step says when the peer at `addr` does not answer in time, and what to do.
    let silent = |what: &str, addr: String| {
        let said = format!("{what} at {addr}: {}", no_reply(&addr, timeout));
        if accepted.replace(false) {
            format!(
                "{said}; it accepted the connection and then sent nothing back, where an ONC RPC server (portmapper, MOUNT, NFS) answers at once, so this port is likely not one (a silent peer cannot be told from a slow server before the timeout: --io-timeout shortens the wait)"
            )
        } else {
            format!("{said}; check that the server runs and answers")
        }
    };
    let connect = |port: u16| {
        let accepted = &accepted;
        async move {
            let io = TcpConnector::new(timeout)
                .connect(SocketAddr::new(ip, port))
                .await?;
            accepted.set(true);
            Ok::<_, std::io::Error>(io)
        }
    };
    let port = match url.mount_port {
        Some(p) => p,
        None => w
            .run(async {
                let io = connect(111).await?;
                let mut pm = nfs3_client::PortmapperClient::new(io);
                pm.getport(mount::PROGRAM, mount::VERSION, portmap::IPPROTO_TCP)
                    .await
                    .map_err(|e| std::io::Error::other(e.to_string()))
            })
            .ok_or_else(|| silent("portmapper", format!("{ip}:111")))?
            .map_err(|e| format!("portmapper at {ip}:111: {e}"))?,
    };
    accepted.set(false);
    let list = w
        .run(async {
            let io = connect(port)
                .await
                .map_err(|e| format!("MOUNT service at {ip}:{port}: {e}"))?;
            let mut mc = nfs3_client::MountClient::new(io);
            mc.export().await.map_err(|e| format!("EXPORT call: {e}"))
        })
        .ok_or_else(|| silent("MOUNT service", format!("{ip}:{port}")))??;
    Ok(list
        .0
        .iter()
        .map(|n| String::from_utf8_lossy(n.ex_dir.0.as_ref()).into_owned())
        .collect())
}

/// Splits `full` (the URL's path, `/a/b/c`) into the longest export in `exports` that
/// holds it, component by component, and the directory inside that export.
pub(super) fn split_export(full: &str, exports: &[String]) -> Option<(String, String)> {
    let parts: Vec<&str> = full.split('/').filter(|c| !c.is_empty()).collect();
    exports
        .iter()
        .filter_map(|e| {
            let ex: Vec<&str> = e.split('/').filter(|c| !c.is_empty()).collect();
            (ex.len() <= parts.len() && ex[..] == parts[..ex.len()]).then_some(ex.len())
        })
        .max()
        .map(|n| (format!("/{}", parts[..n].join("/")), parts[n..].join("/")))
}

/// One NFS connection, with the directory handles it has looked up.
pub(super) struct Session {
    /// Runs the requests, on a runtime of the connection's own.
    pub(super) w: Waiter,
    pub(super) client: Nfs3Client<TcpIo>,
    /// The client's connection, which the queue of reads and writes in flight shares.
    pub(super) stream: Arc<TcpStream>,
    /// The export's root handle.
    root: nfs_fh3,
    /// Directories already looked up, by path relative to the export.
    pub(super) dirs: DirHandles<nfs_fh3>,
    pub(super) rtmax: u32,
    pub(super) wtmax: u32,
    /// The client's version, credential and timeout, and the server's transfer sizes,
    /// for the results.
    pub(super) settings: naslab_results::NfsSettings,
    /// The NFS service's address, for connecting again.
    addr: SocketAddr,
    /// The credential every call carries.
    pub(super) cred: opaque_auth<'static>,
    /// The I/O timeout: what one op may take, recovery included.
    timeout: Duration,
    /// `--retrans-timeout`: a request unanswered this long is sent again on a new
    /// connection (within the I/O timeout).
    pub(super) retrans: Option<Duration>,
    /// When the op under way started ([`Session::begin_op`]); a request outside an op
    /// counts its bound from the moment its connection broke.
    op_started: Option<Instant>,
    /// What the session did to get over broken connections.
    pub(super) recovery: Recovery,
}

/// The uid and gid AUTH_SYS credentials carry: this process's effective ones.
#[cfg(unix)]
pub(crate) fn caller_ids() -> (u32, u32) {
    // SAFETY: geteuid and getegid have no preconditions.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// Windows has no uid or gid: the credentials say nobody (65534), as an export's
/// anonymous user; the export must let that user write.
#[cfg(not(unix))]
pub(crate) fn caller_ids() -> (u32, u32) {
    (65534, 65534)
}

impl Session {
    pub(super) fn open(
        url: &RemoteUrl,
        timeout: Duration,
        retrans: Option<Duration>,
    ) -> Result<Session, NfsError> {
        let export = url.share.clone();
        let host_ip = host_ip(url)?;
        let (uid, gid) = caller_ids();
        let cred = opaque_auth::auth_unix(&auth_unix {
            stamp: std::process::id(),
            machinename: Opaque::owned(b"naslab".to_vec()),
            uid,
            gid,
            gids: vec![],
        });
        let mount_addr = format!("{host_ip}:{}", url.mount_port.unwrap_or(111));
        let addr: SocketAddr = format!("{host_ip}:{}", url.port.unwrap_or(2049))
            .parse()
            .map_err(|_| NfsError::Resolve {
                host: url.host.clone(),
                source: std::io::ErrorKind::InvalidInput.into(),
            })?;
        let connector = TcpConnector::new(timeout);
        let last = Arc::clone(&connector.last);
        let mut b = Nfs3ConnectionBuilder::new(connector, host_ip.clone(), &export)
            .connect_from_privileged_port(false)
            .credential(cred.clone())
            .nfs3_port(url.port.unwrap_or(2049));
        if let Some(m) = url.mount_port {
            b = b.mount_port(m);
        }
        let w = Waiter::new(format!("{host_ip}:{}", url.port.unwrap_or(2049)), timeout)
            .map_err(NfsError::Runtime)?;
        let mount_error = |detail| NfsError::Mount {
            host: url.host.clone(),
            export: export.clone(),
            detail,
        };
        let conn = w
            .run(b.mount())
            .ok_or_else(|| {
                mount_error(format!(
                    "{}; check that the server runs and answers",
                    no_reply(&mount_addr, timeout)
                ))
            })?
            .map_err(|e| {
                let nfs_addr = format!("{host_ip}:{}", url.port.unwrap_or(2049));
                let mount_service = if url.mount_port.is_some() {
                    "the MOUNT service (?mountport)"
                } else {
                    "the portmapper, asked where the MOUNT service is (give ?mountport=N to skip it)"
                };
                let services = [(mount_service, mount_addr.as_str()), ("the NFS service (the URL's port)", nfs_addr.as_str())];
                mount_error(refused_at(&e, &services).unwrap_or_else(|| mount_detail(&e, &mount_addr)))
            })?;
        let root = conn.root_nfs_fh3();
        let mut client = conn.into_nfs3_client();
        let fail = |error| NfsError::Request {
            host: url.host.clone(),
            export: export.clone(),
            error,
        };
        // The connection the mount made last is the NFS service's, which the client got.
        let stream = last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .ok_or_else(|| {
                fail(OpError {
                    errno: crate::errno::ENOTCONN,
                    detail: Some("the NFS connection was not made".into()),
                })
            })?;
        let info = check(w.call(client.fsinfo(&FSINFO3args {
            fsroot: root.clone(),
        })))
        .map_err(fail)?;
        let pick = |v: u32| if v == 0 { MAX_XFER } else { v.min(MAX_XFER) };
        let settings = naslab_results::NfsSettings {
            version: 3,
            minor_version: None,
            io_timeout_ns: timeout.as_nanos().try_into().unwrap_or(u64::MAX),
            retrans_timeout_ns: retrans.map(|r| r.as_nanos().try_into().unwrap_or(u64::MAX)),
            auth: "AUTH_UNIX".to_string(),
            uid,
            gid,
            port: url.port.unwrap_or(2049),
            mount_port: url.mount_port,
            max_read_bytes: pick(info.rtmax).into(),
            max_write_bytes: pick(info.wtmax).into(),
            session_slots: None,
        };
        Ok(Session {
            w,
            client,
            stream,
            root,
            dirs: DirHandles::default(),
            rtmax: pick(info.rtmax),
            wtmax: pick(info.wtmax),
            settings,
            addr,
            cred,
            timeout,
            retrans,
            op_started: None,
            recovery: Recovery::default(),
        })
    }

    /// Marks the start of an op: the requests it sends, and any recovery between them,
    /// end within the I/O timeout from now.
    pub(super) fn begin_op(&mut self) {
        self.op_started = Some(Instant::now());
    }

    /// The connection broke under a request (`e`): makes a new one, trying until the op's
    /// I/O timeout is spent (a path cut, or a server restarting, refuses connections for
    /// a while), and leaves the request to be sent again waiting at most what is left of
    /// it. NFSv3 keeps no state on a connection: the file handles stay good on the new
    /// one (over a server restart too, where the server makes handles that outlive it,
    /// as ganesha's VFS and the kernel's server do).
    pub(super) fn recover(&mut self, e: RpcError) -> Result<(), RpcError> {
        let deadline = self.op_started.unwrap_or_else(Instant::now) + self.timeout;
        let mut pause = Duration::from_millis(10);
        let mut last = e.to_string();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.w.set_timeout(self.timeout);
                return Err(RpcError::Io(std::io::Error::new(
                    std::io::ErrorKind::NotConnected,
                    format!(
                        "the connection to {} broke and no new one carried the request within the I/O timeout ({} s; the last failure: {last}); check the path to the server, or give --io-timeout more",
                        self.addr,
                        self.timeout.as_secs_f64()
                    ),
                )));
            }
            let connector = TcpConnector::new(left);
            match self.w.run_for(left, connector.connect(self.addr)) {
                Some(Ok(io)) => {
                    self.stream = Arc::clone(&io.0);
                    self.client =
                        Nfs3Client::new_with_auth(io, self.cred.clone(), opaque_auth::default());
                    self.recovery.reconnects += 1;
                    self.recovery.retries += 1;
                    // The request sent again waits at most what is left of the op's time.
                    let left = deadline.saturating_duration_since(Instant::now());
                    self.w.set_timeout(left.max(Duration::from_millis(1)));
                    return Ok(());
                }
                Some(Err(err)) => last = err.to_string(),
                None => last = format!("no connection within {} s", left.as_secs_f64()),
            }
            std::thread::sleep(pause.min(left));
            pause = (pause * 2).min(RECONNECT_PAUSE_MAX);
        }
    }

    /// After a request: the requests that follow wait the whole timeout again.
    #[inline]
    pub(super) fn end_recovery(&mut self, redone: bool) {
        if redone {
            self.w.set_timeout(self.timeout);
        }
    }

    pub(super) fn lookup(
        &mut self,
        dir: &nfs_fh3,
        n: &str,
    ) -> Result<(nfs_fh3, Option<(ftype3, u64)>), OpError> {
        let args = LOOKUP3args {
            what: diropargs3 {
                dir: dir.clone(),
                name: name(n),
            },
        };
        let ok = check(rpc!(self, lookup(&args)).0)?;
        let attrs = match ok.obj_attributes {
            Nfs3Option::Some(a) => Some((a.type_, a.size)),
            Nfs3Option::None => None,
        };
        Ok((ok.object, attrs))
    }

    /// The handle of directory `path` (relative to the export), looked up once.
    pub(super) fn dir(&mut self, path: &str) -> Result<nfs_fh3, OpError> {
        if path.is_empty() {
            return Ok(self.root.clone());
        }
        if let Some(fh) = self.dirs.get(path) {
            return Ok(fh);
        }
        let (parent, n) = split(path);
        let pfh = self.dir(parent)?;
        let (fh, attrs) = self.lookup(&pfh, n)?;
        if let Some((t, _)) = attrs
            && t != ftype3::NF3DIR
        {
            return Err(OpError::errno(crate::errno::ENOTDIR));
        }
        self.dirs.insert(path, fh.clone());
        Ok(fh)
    }

    pub(super) fn attrs(&mut self, fh: &nfs_fh3) -> Result<(ftype3, u64), OpError> {
        let ok = check(rpc!(self, getattr(&GETATTR3args { object: fh.clone() })).0)?;
        Ok((ok.obj_attributes.type_, ok.obj_attributes.size))
    }

    /// The handle, type and size of `path`.
    pub(super) fn resolve(&mut self, path: &str) -> Result<(nfs_fh3, ftype3, u64), OpError> {
        if path.is_empty() {
            let root = self.root.clone();
            let (t, s) = self.attrs(&root)?;
            return Ok((root, t, s));
        }
        let (parent, n) = split(path);
        let dfh = self.dir(parent)?;
        let (fh, attrs) = self.lookup(&dfh, n)?;
        let (t, s) = match attrs {
            Some(a) => a,
            None => self.attrs(&fh)?,
        };
        Ok((fh, t, s))
    }

    /// CREATE: UNCHECKED (opens what is there), or GUARDED when `exclusive` (the server
    /// answers `NFS3ERR_EXIST` when the name is taken).
    pub(super) fn create(
        &mut self,
        path: &str,
        truncate: bool,
        exclusive: bool,
    ) -> Result<(nfs_fh3, u64), OpError> {
        let (parent, n) = split(path);
        let dfh = self.dir(parent)?;
        let attributes = sattr3 {
            mode: Nfs3Option::Some(0o644),
            size: if truncate {
                Nfs3Option::Some(0)
            } else {
                Nfs3Option::None
            },
            ..sattr3::default()
        };
        let args = CREATE3args {
            where_: diropargs3 {
                dir: dfh.clone(),
                name: name(n),
            },
            how: if exclusive {
                createhow3::GUARDED(attributes)
            } else {
                createhow3::UNCHECKED(attributes)
            },
        };
        let (r, redone) = rpc!(self, create(&args));
        let ok = match check(r) {
            // A GUARDED create sent again may have been carried out the first time (see
            // [`done_before`]): the file is the one it made.
            Err(e) if exclusive && redone && e.errno == crate::errno::EEXIST => {
                let (fh, _, size) = self.resolve(path)?;
                return Ok((fh, size));
            }
            r => r?,
        };
        let size = match ok.obj_attributes {
            Nfs3Option::Some(a) => Some(a.size),
            Nfs3Option::None => None,
        };
        let fh = match ok.obj {
            Nfs3Option::Some(fh) => fh,
            // The server may leave the handle out; look it up then.
            Nfs3Option::None => self.lookup(&dfh, n)?.0,
        };
        let size = match size {
            Some(s) => s,
            None => self.attrs(&fh)?.1,
        };
        Ok((fh, size))
    }

    pub(super) fn set_size(&mut self, fh: &nfs_fh3, len: u64) -> Result<(), OpError> {
        let args = SETATTR3args {
            object: fh.clone(),
            new_attributes: sattr3 {
                size: Nfs3Option::Some(len),
                ..sattr3::default()
            },
            guard: Nfs3Option::None,
        };
        check(rpc!(self, setattr(&args)).0).map(|_| ())
    }

    /// SETATTR of the access and modification times to the server's clock, as the Linux
    /// client sends for `utimensat(..., NULL)`.
    pub(super) fn touch(&mut self, fh: &nfs_fh3) -> Result<(), OpError> {
        let args = SETATTR3args {
            object: fh.clone(),
            new_attributes: sattr3 {
                atime: set_atime::SET_TO_SERVER_TIME,
                mtime: set_mtime::SET_TO_SERVER_TIME,
                ..sattr3::default()
            },
            guard: Nfs3Option::None,
        };
        check(rpc!(self, setattr(&args)).0).map(|_| ())
    }

    /// FSSTAT of the file system holding `fh`: its size and free space and files.
    pub(super) fn fs_stat(&mut self, fh: &nfs_fh3) -> Result<(), OpError> {
        let args = FSSTAT3args { fsroot: fh.clone() };
        check(rpc!(self, fsstat(&args)).0).map(|_| ())
    }

    /// COMMIT of the whole file. The handle is lent to the request and given back (no
    /// copy of it per request), as in [`Session::read_into`] and [`Session::write_at`].
    pub(super) fn commit(&mut self, fh: &mut nfs_fh3) -> Result<writeverf3, OpError> {
        let args = COMMIT3args {
            file: std::mem::take(fh),
            offset: 0,
            count: 0,
        };
        let r = check(rpc!(self, commit(&args)).0).map(|ok| ok.verf);
        *fh = args.file;
        r
    }

    /// READs `buf.len()` bytes at `offset` into `buf`, at most `rtmax` a request; fewer
    /// at the end of the file.
    pub(super) fn read_into(
        &mut self,
        fh: &mut nfs_fh3,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<usize, OpError> {
        let mut args = READ3args {
            file: std::mem::take(fh),
            offset,
            count: 0,
        };
        let rtmax = self.rtmax as usize;
        let mut read = || {
            let mut done = 0usize;
            while done < buf.len() {
                let n = (buf.len() - done).min(rtmax);
                args.offset = offset + done as u64;
                args.count = n as u32;
                // The data goes from the reply straight into the op's buffer.
                let into = &mut buf[done..done + n];
                let ok = check(rpc!(self, read_into(&args, into)).0)?;
                done += ok.copied;
                if ok.copied < n || ok.eof {
                    break;
                }
            }
            Ok(done)
        };
        let r = read();
        *fh = args.file;
        r
    }

    /// WRITEs `data` at `offset`, at most `wtmax` a request. Gives the bytes written, the
    /// server's write verifier (the first reply's; none when nothing was sent), and
    /// whether the replies carried different ones (the server restarted between them).
    pub(super) fn write_at(
        &mut self,
        fh: &mut nfs_fh3,
        offset: u64,
        data: &[u8],
        stable: stable_how,
    ) -> Result<(usize, Option<writeverf3>, bool), OpError> {
        let mut args = WRITE3args {
            file: std::mem::take(fh),
            offset,
            count: 0,
            stable,
            data: Opaque::borrowed(&[]),
        };
        let wtmax = self.wtmax as usize;
        let mut write = || {
            let mut done = 0usize;
            let mut verf: Option<writeverf3> = None;
            let mut mixed = false;
            while done < data.len() {
                let n = (data.len() - done).min(wtmax);
                args.offset = offset + done as u64;
                args.count = n as u32;
                args.data = Opaque::borrowed(&data[done..done + n]);
                let ok = check(rpc!(self, write(&args)).0)?;
                mixed |= verf.is_some_and(|v| v != ok.verf);
                verf.get_or_insert(ok.verf);
                let wrote = (ok.count as usize).min(n);
                done += wrote;
                if wrote == 0 {
                    break;
                }
            }
            Ok((done, verf, mixed))
        };
        let r = write();
        *fh = args.file;
        r
    }

    pub(super) fn count_entries(&mut self, fh: &nfs_fh3) -> Result<u64, OpError> {
        let mut cookie = 0;
        let mut cookieverf = Default::default();
        let mut n = 0u64;
        // Bounded: a server that never says eof cannot keep naslab here forever.
        for _ in 0..1_000_000 {
            let args = READDIR3args {
                dir: fh.clone(),
                cookie,
                cookieverf,
                count: 65536,
            };
            let ok = check(rpc!(self, readdir(&args)).0)?;
            cookieverf = ok.cookieverf;
            let entries = ok.reply.entries.into_inner();
            for e in &entries {
                let nm: &[u8] = e.name.0.as_ref();
                if nm != b"." && nm != b".." {
                    n += 1;
                }
            }
            match entries.last() {
                Some(last) if !ok.reply.eof => cookie = last.cookie,
                _ => return Ok(n),
            }
        }
        Err(OpError {
            errno: crate::errno::EIO,
            detail: Some("NFS: READDIR never reached the end".into()),
        })
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
            Ok((_, ftype3::NF3DIR, _)) => Ok(Some(EntryKind::Dir)),
            Ok((_, ftype3::NF3LNK, _)) => Ok(Some(EntryKind::Link)),
            Ok(_) => Ok(Some(EntryKind::File)),
            Err(e) if e.errno == crate::errno::ENOENT => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn make_dir(&mut self, path: &str) -> Result<(), OpError> {
        let (parent, n) = split(path);
        let dfh = self.dir(parent)?;
        let args = MKDIR3args {
            where_: diropargs3 {
                dir: dfh,
                name: name(n),
            },
            attributes: sattr3 {
                mode: Nfs3Option::Some(0o755),
                ..sattr3::default()
            },
        };
        let (r, redone) = rpc!(self, mkdir(&args));
        done_before(check(r).map(|_| ()), redone, crate::errno::EEXIST)
    }

    fn put_file(&mut self, path: &str, data: &[u8]) -> Result<(), OpError> {
        let (mut fh, _) = self.create(path, true, false)?;
        self.write_at(&mut fh, 0, data, stable_how::FILE_SYNC)
            .map(|_| ())
    }

    fn list(&mut self, path: &str) -> Result<Vec<(String, EntryKind)>, OpError> {
        let fh = self.dir(path)?;
        let mut out = Vec::new();
        let mut cookie = 0;
        let mut cookieverf = Default::default();
        for _ in 0..1_000_000 {
            let args = READDIRPLUS3args {
                dir: fh.clone(),
                cookie,
                cookieverf,
                dircount: 65536,
                maxcount: 262144,
            };
            let ok = check(rpc!(self, readdirplus(&args)).0)?;
            cookieverf = ok.cookieverf;
            let entries = ok.reply.entries.into_inner();
            for e in &entries {
                let nm = String::from_utf8_lossy(e.name.0.as_ref()).into_owned();
                if nm == "." || nm == ".." {
                    continue;
                }
                let kind = match &e.name_attributes {
                    Nfs3Option::Some(a) if a.type_ == ftype3::NF3DIR => EntryKind::Dir,
                    Nfs3Option::Some(a) if a.type_ == ftype3::NF3LNK => EntryKind::Link,
                    Nfs3Option::Some(_) => EntryKind::File,
                    Nfs3Option::None => {
                        let p = if path.is_empty() {
                            nm.clone()
                        } else {
                            format!("{path}/{nm}")
                        };
                        self.kind(&p)?.unwrap_or(EntryKind::File)
                    }
                };
                out.push((nm, kind));
            }
            match entries.last() {
                Some(last) if !ok.reply.eof => cookie = last.cookie,
                _ => return Ok(out),
            }
        }
        Err(OpError {
            errno: crate::errno::EIO,
            detail: Some("NFS: READDIRPLUS never reached the end".into()),
        })
    }

    fn remove_file(&mut self, path: &str) -> Result<(), OpError> {
        let (parent, n) = split(path);
        let dfh = self.dir(parent)?;
        let args = REMOVE3args {
            object: diropargs3 {
                dir: dfh,
                name: name(n),
            },
        };
        let (r, redone) = rpc!(self, remove(&args));
        done_before(check(r).map(|_| ()), redone, crate::errno::ENOENT)
    }

    fn remove_dir(&mut self, path: &str) -> Result<(), OpError> {
        let (parent, n) = split(path);
        let dfh = self.dir(parent)?;
        let args = RMDIR3args {
            object: diropargs3 {
                dir: dfh,
                name: name(n),
            },
        };
        self.dirs.forget(path);
        let (r, redone) = rpc!(self, rmdir(&args));
        done_before(check(r).map(|_| ()), redone, crate::errno::ENOENT)
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), OpError> {
        let ((pa, na), (pb, nb)) = (split(from), split(to));
        let args = RENAME3args {
            from: diropargs3 {
                dir: self.dir(pa)?,
                name: name(na),
            },
            to: diropargs3 {
                dir: self.dir(pb)?,
                name: name(nb),
            },
        };
        self.dirs.forget(from);
        self.dirs.forget(to);
        let (r, redone) = rpc!(self, rename(&args));
        done_before(check(r).map(|_| ()), redone, crate::errno::ENOENT)
    }
}
