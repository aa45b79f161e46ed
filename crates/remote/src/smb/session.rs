//! One SMB session on one share, on its own runtime: the requests naslab builds and
//! sends itself, and the path-based calls the remote sandbox needs.

use std::time::Duration;

use naslab_results::SmbSettings;
use smb2::crypto::encryption::Cipher;
use smb2::crypto::signing::SigningAlgorithm;

use smb2::client::connection::Connection;
use smb2::msg::close::CloseRequest;
use smb2::msg::create::{
    CreateDisposition, CreateRequest, CreateResponse, ImpersonationLevel, ShareAccess,
};
use smb2::msg::lock::{
    LockElement, LockRequest, SMB2_LOCKFLAG_EXCLUSIVE_LOCK, SMB2_LOCKFLAG_FAIL_IMMEDIATELY,
    SMB2_LOCKFLAG_SHARED_LOCK, SMB2_LOCKFLAG_UNLOCK,
};
use smb2::msg::query_info::{InfoType, QueryInfoRequest, QueryInfoResponse};
use smb2::msg::set_info::SetInfoRequest;
use smb2::msg::write::WriteRequest;
use smb2::pack::{Pack, ReadCursor, Unpack, WriteCursor};
use smb2::types::flags::{Capabilities, FileAccessMask, FileAttributes};
use smb2::types::{Command, CreditCharge, Dialect, FileId, OplockLevel};
use smb2::{ClientConfig, ErrorKind, SmbClient, Tree};

use super::SmbError;
use super::durable;
use crate::remote::{AdminSession, EntryKind, RemoteFs};
use crate::url::MAX_SMB_IN_FLIGHT;
use crate::url::{ClientOptions, RemoteUrl, SmbEncrypt};
use crate::waiter::{Silence, Waiter};
use naslab_backend::{LockHow, OpError, lock_length};

pub(super) const FILE_WRITE_THROUGH: u32 = 0x0000_0002;
pub(super) const FILE_NON_DIRECTORY_FILE: u32 = 0x0000_0040;
/// The server should not buffer this handle's data (Windows' FILE_FLAG_NO_BUFFERING).
pub(super) const FILE_NO_INTERMEDIATE_BUFFERING: u32 = 0x0000_0008;
/// The handle is accessed at random (Windows' FILE_FLAG_RANDOM_ACCESS).
pub(super) const FILE_RANDOM_ACCESS: u32 = 0x0000_0800;
pub(super) const FILE_ALLOCATION_INFORMATION: u8 = 19;
pub(super) const FILE_END_OF_FILE_INFORMATION: u8 = 20;
pub(super) const FILE_STANDARD_INFORMATION: u8 = 5;
pub(super) const FILE_BASIC_INFORMATION: u8 = 4;
/// FileFsFullSizeInformation (MS-FSCC 2.5.4): the volume's size and free space, what
/// Windows asks for `GetDiskFreeSpaceEx`.
pub(super) const FILE_FS_FULL_SIZE_INFORMATION: u8 = 7;
pub(super) const STATUS_END_OF_FILE: u32 = 0xC000_0011;
/// One credit pays for up to 64 KiB of a READ or WRITE (MS-SMB2 3.1.5.2).
pub(super) const CREDIT_BYTES: usize = 65536;

/// Maps an SMB failure to the errno the results report, keeping the server's words.
pub(super) fn op_error(e: smb2::Error) -> OpError {
    let errno = match &e {
        smb2::Error::Protocol { status, .. } => match status.0 {
            0xC000_0034 | 0xC000_003A | 0xC000_000F => crate::errno::ENOENT,
            0xC000_0035 => crate::errno::EEXIST,
            0xC000_0022 => crate::errno::EACCES,
            0xC000_0101 => crate::errno::ENOTEMPTY,
            0xC000_00BA => crate::errno::EISDIR,
            0xC000_0103 => crate::errno::ENOTDIR,
            0xC000_007F | 0xC000_0044 => crate::errno::ENOSPC,
            0xC000_00A2 => crate::errno::EROFS,
            0xC000_0043 => crate::errno::EBUSY,
            0xC000_00BB => crate::errno::EOPNOTSUPP,
            0xC000_000D => crate::errno::EINVAL,
            0xC000_0033 => crate::errno::ENAMETOOLONG,
            0xC000_0128 | 0xC000_0008 => crate::errno::EBADF,
            0xC000_0203 | 0xC000_020C | 0xC000_0184 => crate::errno::ENOTCONN,
            // STATUS_FILE_LOCK_CONFLICT, STATUS_LOCK_NOT_GRANTED: another holds the range.
            0xC000_0054 | 0xC000_0055 => crate::errno::EAGAIN,
            // STATUS_RANGE_NOT_LOCKED: an unlock of a range this handle does not hold.
            0xC000_007E => crate::errno::ENOLCK,
            // STATUS_INVALID_LOCK_RANGE.
            0xC000_01A1 => crate::errno::EINVAL,
            _ => crate::errno::EIO,
        },
        _ => match e.kind() {
            ErrorKind::NotFound => crate::errno::ENOENT,
            ErrorKind::AlreadyExists => crate::errno::EEXIST,
            ErrorKind::AccessDenied => crate::errno::EACCES,
            ErrorKind::SharingViolation => crate::errno::EBUSY,
            ErrorKind::IsADirectory => crate::errno::EISDIR,
            ErrorKind::NotADirectory => crate::errno::ENOTDIR,
            ErrorKind::DiskFull => crate::errno::ENOSPC,
            ErrorKind::InvalidName => crate::errno::EINVAL,
            ErrorKind::Unsupported => crate::errno::EOPNOTSUPP,
            // A server that went away or stopped answering: the run cannot go on.
            ErrorKind::ConnectionLost | ErrorKind::TimedOut | ErrorKind::SessionExpired => {
                crate::errno::ENOTCONN
            }
            _ => crate::errno::EIO,
        },
    };
    OpError {
        errno,
        detail: Some(format!("SMB: {e}")),
    }
}

/// A session's requests, each on its runtime and at most the I/O timeout.
pub(super) trait Wait {
    /// Waits for `fut` (one request and its reply) at most the I/O timeout. A server
    /// that does not answer in time, or went away, marks the session dead.
    fn wait<T>(
        &self,
        fut: impl std::future::Future<Output = Result<T, smb2::Error>>,
    ) -> Result<T, OpError>;
}

impl Wait for Waiter {
    fn wait<T>(
        &self,
        fut: impl std::future::Future<Output = Result<T, smb2::Error>>,
    ) -> Result<T, OpError> {
        // With --retrans-timeout, a reply that has not come within it takes this
        // connection for broken (the server is not marked silent): the caller signs in
        // again on a new one and sends the request again.
        if let Some(r) = self.retrans_now() {
            return match self.run_for(r, fut) {
                Some(res) => res.map_err(|e| fail(self, e)),
                None => {
                    self.mark_dead();
                    Err(OpError {
                        errno: crate::errno::ENOTCONN,
                        detail: Some(format!(
                            "SMB: no reply from {} within the retransmit timeout ({} s)",
                            self.addr(),
                            r.as_secs_f64()
                        )),
                    })
                }
            };
        }
        match self.request(fut) {
            Ok(r) => r.map_err(|e| fail(self, e)),
            Err(Silence::Earlier) => Err(OpError {
                errno: crate::errno::ENOTCONN,
                detail: Some(format!("SMB: {} stopped answering earlier", self.addr())),
            }),
            Err(Silence::Now) => Err(OpError {
                errno: crate::errno::ENOTCONN,
                detail: Some(self.no_reply()),
            }),
        }
    }
}

/// An SMB failure as the results report it; a lost connection marks the session dead.
fn fail(w: &Waiter, e: smb2::Error) -> OpError {
    let timed_out = e.kind() == ErrorKind::TimedOut;
    let mut err = op_error(e);
    if err.errno == crate::errno::ENOTCONN {
        w.mark_dead();
    }
    if timed_out {
        err.errno = crate::errno::ENOTCONN;
        err.detail = Some(w.no_reply());
    }
    err
}

/// How an op reads the answer to a request sent again after its connection broke: the
/// server may have made the change the first time, its reply lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Redo {
    /// As the first answer would be.
    Same,
    /// A make (CREATE of a directory): "already there" counts as done.
    Exists,
    /// A removal or a rename: "not there" counts as done.
    Gone,
}

impl Redo {
    /// Whether `e`, the answer to a request sent again, means the change was made.
    pub(super) fn done(self, e: &OpError) -> bool {
        match self {
            Redo::Same => false,
            Redo::Exists => e.errno == crate::errno::EEXIST,
            Redo::Gone => e.errno == crate::errno::ENOENT,
        }
    }
}

/// How long to wait between attempts to connect again, at most.
const RECONNECT_PAUSE_MAX: Duration = Duration::from_millis(100);

/// How many sign-ins (TCP connect, NEGOTIATE, SESSION_SETUP) may be under way at once
/// in this process. A server takes connections from a short accept queue (Samba's
/// holds 50) and forks a process for each; hundreds of connections opened at once
/// overflow it, and the kernel then drops the surplus. Taking turns keeps every
/// connection of a many-connection workload.
const SIGN_INS_AT_ONCE: usize = 16;

/// A turn to sign in; the next waiting sign-in goes when it is dropped.
struct SignIns;

static SIGNING_IN: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
static SIGN_IN_DONE: std::sync::Condvar = std::sync::Condvar::new();

impl SignIns {
    fn take() -> SignIns {
        let mut n = SIGNING_IN.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= SIGN_INS_AT_ONCE {
            n = SIGN_IN_DONE.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
        SignIns
    }
}

impl Drop for SignIns {
    fn drop(&mut self) {
        *SIGNING_IN.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        SIGN_IN_DONE.notify_one();
    }
}

/// An open SMB session on one share, on its own runtime.
pub(super) struct Session {
    pub(super) w: Waiter,
    pub(super) client: SmbClient,
    pub(super) tree: Tree,
    pub(super) max_read: usize,
    pub(super) max_write: usize,
    /// How many READs or WRITEs one op keeps in flight at most.
    pub(super) in_flight: usize,
    /// What was asked for and agreed on, for the results.
    pub(super) settings: SmbSettings,
    /// The share, to connect to again after a reconnect.
    share: String,
    /// Whether every message must be encrypted (`--smb-encrypt required`).
    encrypt_required: bool,
    /// How many times the session was made again after its connection broke: handles
    /// of an earlier one are gone.
    pub(super) generation: u64,
    /// The I/O timeout an op has in all, recovery included (the waiter's own timeout
    /// is shortened while an op is carried over a new connection).
    budget: Duration,
    /// The durable handle file opens ask for (by the dialect); `None` once the share
    /// granted a batch oplock without one, which says it grants none.
    pub(super) durable: Option<durable::Kind>,
}

/// What a CREATE of a file for an op gave: the response, whether a durable handle was
/// asked for, and the one granted.
pub(super) struct Created {
    pub(super) resp: CreateResponse,
    pub(super) asked: bool,
    pub(super) grant: Option<durable::Grant>,
}

/// The dialect and whether the session is encrypted, for people: e.g. "SMB 3.1.1,
/// encrypted (AES-128-GCM)".
pub(super) fn security(s: &SmbSettings) -> String {
    match &s.cipher {
        Some(cipher) => format!("{}, encrypted ({cipher})", s.dialect),
        None => format!("{}, not encrypted", s.dialect),
    }
}

/// The name of an encrypted session's cipher.
fn cipher_name(cipher: Option<Cipher>) -> &'static str {
    match cipher {
        Some(Cipher::Aes128Gcm) => "AES-128-GCM",
        Some(Cipher::Aes256Gcm) => "AES-256-GCM",
        Some(Cipher::Aes256Ccm) => "AES-256-CCM",
        // SMB 3.0 and 3.0.2 have no cipher negotiation: AES-128-CCM.
        Some(Cipher::Aes128Ccm) | None => "AES-128-CCM",
    }
}

impl Session {
    pub(super) fn open(
        url: &RemoteUrl,
        password: &str,
        opts: ClientOptions,
    ) -> Result<Session, SmbError> {
        let addr = url.address();
        let mut w = Waiter::new(addr.clone(), opts.io_timeout).map_err(SmbError::Runtime)?;
        w.set_retrans(opts.retrans_timeout);
        let config = ClientConfig {
            addr: addr.clone(),
            timeout: opts.io_timeout,
            // naslab's own deadline (`Wait::wait`) decides; the crate's, which may
            // stretch while it believes the server alive, only backs it up.
            response_timeout: Some(opts.io_timeout.saturating_mul(2)),
            username: url.user.clone().unwrap_or_default(),
            password: password.to_string(),
            encryption: opts.smb_encrypt != SmbEncrypt::Off,
            // The request pattern is naslab's to choose: no compression, no reconnects
            // behind its back, no DFS detours.
            auto_reconnect: false,
            compression: false,
            dfs_enabled: false,
            ..ClientConfig::default()
        };
        let who = || {
            url.user
                .as_deref()
                .map(|u| format!("user '{u}'"))
                .unwrap_or_else(|| "a guest".into())
        };
        let silent = || SmbError::NoReply(w.no_reply());
        let _turn = SignIns::take();
        let connected = w.run(SmbClient::connect(config));
        let mut client = connected.ok_or_else(silent)?.map_err(|source| {
            let status = match &source {
                smb2::Error::Protocol { status, command } if *command == Command::SessionSetup => {
                    Some(status.0)
                }
                _ => None,
            };
            if status == Some(STATUS_ACCESS_DENIED) {
                // ACCESS_DENIED while signing in is how Samba refuses a client that
                // cannot encrypt when encryption is required; it says nothing about
                // the password.
                SmbError::Auth {
                    addr: addr.clone(),
                    who: who(),
                    why: match opts.smb_encrypt {
                        SmbEncrypt::Off => format!("the server requires encryption and --smb-encrypt off forbids it ({source}); leave --smb-encrypt at desired"),
                        _ => format!("the server refused the session ({source}); a server that requires encryption does this when the dialect it agreed on cannot encrypt (SMB 2.x): allow SMB 3 on the server"),
                    },
                }
            } else if status.is_some()
                || matches!(
                    source.kind(),
                    ErrorKind::AuthRequired
                        | ErrorKind::AccessDenied
                        | ErrorKind::GuestSessionRefused
                )
                || matches!(source, smb2::Error::Auth { .. })
            {
                SmbError::Auth {
                    addr: addr.clone(),
                    who: who(),
                    why: auth_hint(&source, url.user.is_some()),
                }
            } else if matches!(source.kind(), ErrorKind::TimedOut) {
                silent()
            } else if matches!(source, smb2::Error::Disconnected) {
                // The socket was open and the server hung up on the handshake.
                SmbError::Dropped {
                    addr: addr.clone(),
                    source,
                    hint: match opts.smb_encrypt {
                        SmbEncrypt::Off => "the server's log says why (Samba: log level = 3)".into(),
                        _ => "Samba does this when it wants encryption (smb encrypt = desired) but speaks no SMB 3 (server max protocol = SMB2_02 or SMB2_10) and the client offers to encrypt: --smb-encrypt off signs in there, unencrypted; or allow SMB 3 on the server".into(),
                    },
                }
            } else if matches!(
                source.kind(),
                ErrorKind::InvalidData | ErrorKind::SignatureInvalid | ErrorKind::Unsupported
            ) {
                // The server answered: the host and port are right.
                SmbError::Handshake {
                    addr: addr.clone(),
                    source,
                }
            } else {
                SmbError::Connect {
                    addr: addr.clone(),
                    source,
                }
            }
        })?;
        drop(_turn);
        // A new connection is dialled once per `reconnect`: naslab's own loop
        // (`Session::reconnect`) paces the tries and bounds them by the op's I/O timeout.
        // The crate's default would try four times 0.5, 1 and 2 s apart and then refuse
        // for 10 s, so a path back for a while was found up to seconds late.
        client.set_reconnect_policy(smb2::ReconnectPolicy {
            max_attempts: 1,
            initial_backoff: Duration::ZERO,
            max_backoff: Duration::ZERO,
            total_budget: opts.io_timeout,
            failure_cooldown: Duration::ZERO,
        });
        if opts.smb_encrypt == SmbEncrypt::Required {
            encrypt_from_now(&mut client);
        }
        let share = w.run(client.connect_share(&url.share));
        let tree = share.ok_or_else(silent)?.map_err(|source| {
            let denied = matches!(
                &source,
                smb2::Error::Protocol { status, .. } if status.0 == STATUS_ACCESS_DENIED
            );
            match source.kind() {
                ErrorKind::TimedOut => silent(),
                _ if denied => SmbError::ShareRefused {
                    addr: addr.clone(),
                    share: url.share.clone(),
                    who: who(),
                    why: share_refusal_hint(&source, url.user.is_some(), opts.smb_encrypt),
                },
                _ => SmbError::Share {
                    addr: addr.clone(),
                    share: url.share.clone(),
                    source,
                },
            }
        })?;
        let params = client.params();
        let (max_read, max_write) = params
            .as_ref()
            .map(|p| (p.max_read_size as usize, p.max_write_size as usize))
            .unwrap_or((CREDIT_BYTES, CREDIT_BYTES));
        let dialect = params
            .as_ref()
            .map(|p| p.dialect.to_string())
            .unwrap_or_else(|| "SMB".into());
        let encrypted = client.connection().should_encrypt();
        let signing = client.session();
        let settings = SmbSettings {
            io_timeout_ns: opts.io_timeout.as_nanos().try_into().unwrap_or(u64::MAX),
            encrypt_asked: opts.smb_encrypt.name().to_string(),
            in_flight: opts.smb_in_flight.clamp(1, MAX_SMB_IN_FLIGHT) as u32,
            // The crate offers every dialect it speaks in its NEGOTIATE.
            dialects_offered: smb2::types::Dialect::ALL
                .iter()
                .map(ToString::to_string)
                .collect(),
            dialect,
            encrypted,
            cipher: encrypted
                .then(|| cipher_name(params.as_ref().and_then(|p| p.cipher)).to_string()),
            signed: signing.should_sign,
            signing_algorithm: signing.should_sign.then(|| {
                match signing.signing_algorithm {
                    SigningAlgorithm::HmacSha256 => "HMAC-SHA256",
                    // The key is 128 bits whatever the cipher (MS-SMB2 3.2.5.3.1), and
                    // Samba's smbstatus names them so too.
                    SigningAlgorithm::AesCmac => "AES-128-CMAC",
                    SigningAlgorithm::AesGmac => "AES-128-GMAC",
                }
                .to_string()
            }),
            server_requires_signing: params.as_ref().is_some_and(|p| p.signing_required),
            max_read_bytes: max_read.max(4096) as u64,
            max_write_bytes: max_write.max(4096) as u64,
            retrans_timeout_ns: opts
                .retrans_timeout
                .map(|r| r.as_nanos().try_into().unwrap_or(u64::MAX)),
        };
        if tree.encrypt_data && !encrypted {
            // The server wants the share encrypted and the dialect cannot: Samba
            // offers the share, then drops the connection when data is written.
            return Err(SmbError::CannotEncrypt {
                addr,
                share: url.share.clone(),
                security: security(&settings),
                hint: match opts.smb_encrypt {
                    SmbEncrypt::Off => "allow SMB 3 on the server (Samba: server max protocol)".into(),
                    _ => "--smb-encrypt off signs in there without offering encryption (Samba then does not ask for it), unencrypted; or allow SMB 3 on the server (Samba: server max protocol)".into(),
                },
            });
        }
        if opts.smb_encrypt == SmbEncrypt::Required && !encrypted {
            return Err(SmbError::NotEncrypted {
                addr,
                share: url.share.clone(),
                security: security(&settings),
            });
        }
        Ok(Session {
            w,
            client,
            tree,
            max_read: max_read.max(4096),
            max_write: max_write.max(4096),
            in_flight: opts.smb_in_flight.clamp(1, MAX_SMB_IN_FLIGHT),
            settings,
            share: url.share.clone(),
            encrypt_required: opts.smb_encrypt == SmbEncrypt::Required,
            generation: 0,
            budget: opts.io_timeout,
            durable: params.as_ref().map(|p| durable::Kind::of(p.dialect)),
        })
    }

    /// The I/O timeout an op has in all (a request sent again after a reconnect waits
    /// only what its op has left of it).
    pub(super) fn timeout(&self) -> Duration {
        self.budget
    }

    /// After an op that was carried over a new connection: the requests that follow
    /// wait the whole timeout again.
    pub(super) fn end_recovery(&mut self, redone: bool) {
        if redone {
            self.w.set_timeout(self.timeout());
        }
    }

    /// Whether `e` says the connection was lost (closed, reset), not that the server
    /// stayed silent: a new connection may carry the request.
    pub(super) fn lost(&self, e: &OpError) -> bool {
        e.errno == crate::errno::ENOTCONN && !self.w.is_silent()
    }

    /// Makes a new connection and session on the share, trying until the I/O timeout
    /// from `started` is spent; `e` is what broke the old one.
    pub(super) fn reconnect(
        &mut self,
        started: std::time::Instant,
        e: OpError,
    ) -> Result<(), OpError> {
        let deadline = started + self.timeout();
        let mut pause = Duration::from_millis(10);
        let mut last = e.to_string();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(OpError {
                    errno: crate::errno::ENOTCONN,
                    detail: Some(format!(
                        "SMB: the connection to {} broke and no new session carried the request within the I/O timeout ({} s; the last failure: {last}); check the path to the server, or give --io-timeout more",
                        self.w.addr(),
                        self.timeout().as_secs_f64()
                    )),
                });
            }
            // Through a path that holds what is sent, each attempt waits at most the
            // retransmit timeout, then another connection is tried.
            match self.sign_in_again(self.w.retrans_limit(left)) {
                Ok(()) => {
                    // The request sent again waits what the op has left, so the I/O
                    // timeout bounds the whole op, as over NFS.
                    let left = deadline.saturating_duration_since(std::time::Instant::now());
                    self.w.set_timeout(left.max(Duration::from_millis(1)));
                    return Ok(());
                }
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(pause.min(left));
            pause = (pause * 2).min(RECONNECT_PAUSE_MAX);
        }
    }

    /// A path-based request of the remote sandbox, made again on a new session when
    /// its connection broke (read as `redo` says).
    fn redo<T: Default>(
        &mut self,
        redo: Redo,
        mut op: impl FnMut(&mut Session) -> Result<T, OpError>,
    ) -> Result<T, OpError> {
        let started = std::time::Instant::now();
        let mut redone = false;
        let r = loop {
            match op(self) {
                Err(e) if self.lost(&e) => {
                    if let Err(e) = self.reconnect(started, e) {
                        break Err(e);
                    }
                    redone = true;
                }
                Err(e) if redone && redo.done(&e) => break Ok(T::default()),
                r => break r,
            }
        };
        self.end_recovery(redone);
        r
    }

    /// Signs in again on a new connection (NEGOTIATE, SESSION_SETUP with the same
    /// credentials) and connects to the share, within `left`. The old session's
    /// handles are gone: [`Session::generation`] counts it.
    pub(super) fn sign_in_again(&mut self, left: Duration) -> Result<(), OpError> {
        let started = std::time::Instant::now();
        let no_time = || OpError {
            errno: crate::errno::ENOTCONN,
            detail: Some(format!(
                "SMB: no new session within {} s",
                left.as_secs_f64()
            )),
        };
        let client = &mut self.client;
        self.w
            .run_for(left, client.reconnect())
            .ok_or_else(no_time)?
            .map_err(op_error)?;
        if self.encrypt_required {
            encrypt_from_now(&mut self.client);
        }
        let rest = left.saturating_sub(started.elapsed());
        let client = &mut self.client;
        let tree = self
            .w
            .run_for(rest, client.connect_share(&self.share))
            .ok_or_else(no_time)?
            .map_err(op_error)?;
        self.tree = tree;
        self.generation += 1;
        self.w.revive();
        Ok(())
    }

    pub(super) fn conn(&self) -> &Connection {
        self.client.connection()
    }

    pub(super) fn wire_path(path: &str) -> String {
        smb2::encode_path(path)
    }

    /// Sends one request; its reply whatever its status.
    pub(super) fn call_raw(
        &self,
        command: Command,
        body: &dyn smb2::pack::Pack,
        credits: u16,
    ) -> Result<smb2::client::connection::Frame, OpError> {
        self.w.wait(self.execute(command, body, credits))
    }

    /// One request on the share, charged `credits` (at least one).
    fn execute<'a>(
        &'a self,
        command: Command,
        body: &'a dyn smb2::pack::Pack,
        credits: u16,
    ) -> impl std::future::Future<Output = Result<smb2::client::connection::Frame, smb2::Error>> + 'a
    {
        self.conn().execute_with_credits(
            command,
            body,
            Some(self.tree.tree_id),
            CreditCharge(credits.max(1)),
        )
    }

    /// One request and its reply, whatever its status, as part of the requests
    /// [`Self::wait_all`] waits for; an error that lost the connection marks it dead.
    pub(super) async fn send(
        &self,
        command: Command,
        body: &dyn smb2::pack::Pack,
        credits: u16,
    ) -> Result<smb2::client::connection::Frame, OpError> {
        self.execute(command, body, credits)
            .await
            .map_err(|e| fail(&self.w, e))
    }

    /// Runs `requests` (each made of [`Self::send`]s) at once, all within the I/O
    /// timeout, and gives each one's outcome in order.
    pub(super) fn wait_all<F: std::future::Future, const N: usize>(
        &self,
        requests: std::pin::Pin<&mut [F; N]>,
    ) -> Result<[F::Output; N], OpError> {
        self.w
            .wait(async { Ok(crate::waiter::join_all(requests).await) })
    }

    /// Sends one request and checks its status.
    pub(super) fn call(
        &self,
        command: Command,
        body: &dyn smb2::pack::Pack,
        credits: u16,
    ) -> Result<smb2::client::connection::Frame, OpError> {
        let frame = self.call_raw(command, body, credits)?;
        if frame.header.status.0 != 0 {
            return Err(op_error(smb2::Error::Protocol {
                status: frame.header.status,
                command,
            }));
        }
        Ok(frame)
    }

    pub(super) fn create(
        &self,
        path: &str,
        access: u32,
        disposition: CreateDisposition,
        options: u32,
    ) -> Result<CreateResponse, OpError> {
        self.send_create(
            path,
            access,
            disposition,
            options,
            OplockLevel::None,
            vec![],
        )
    }

    /// One CREATE of `path` (shared for reading, writing and deleting, as Windows
    /// opens files), asking for `oplock` with the packed create `contexts`; the
    /// server's reply.
    fn send_create(
        &self,
        path: &str,
        access: u32,
        disposition: CreateDisposition,
        options: u32,
        oplock: OplockLevel,
        contexts: Vec<u8>,
    ) -> Result<CreateResponse, OpError> {
        let req = CreateRequest {
            requested_oplock_level: oplock,
            impersonation_level: ImpersonationLevel::Impersonation,
            desired_access: FileAccessMask::new(access | FileAccessMask::SYNCHRONIZE),
            file_attributes: FileAttributes::NORMAL,
            share_access: ShareAccess(
                ShareAccess::FILE_SHARE_READ
                    | ShareAccess::FILE_SHARE_WRITE
                    | ShareAccess::FILE_SHARE_DELETE,
            ),
            create_disposition: disposition,
            create_options: options,
            name: Self::wire_path(path),
            create_contexts: contexts,
        };
        let frame = self.call(Command::Create, &req, 1)?;
        CreateResponse::unpack(&mut ReadCursor::new(&frame.body)).map_err(op_error)
    }

    /// CREATE of a file for an op; when the session asks for durable handles, with the
    /// request and the batch oplock the server grants one with. An oplock granted is
    /// registered, so that the connection answers its break at once.
    pub(super) fn create_file(
        &mut self,
        path: &str,
        access: u32,
        disposition: CreateDisposition,
        options: u32,
    ) -> Result<Created, OpError> {
        let ask = match self.durable {
            Some(kind) => Some((kind, durable::new_guid()?)),
            None => None,
        };
        let (oplock, contexts) = match ask {
            Some((kind, guid)) => (OplockLevel::Batch, durable::request(kind, guid)),
            None => (OplockLevel::None, Vec::new()),
        };
        let resp = self.send_create(path, access, disposition, options, oplock, contexts)?;
        let grant = match ask {
            Some((kind, guid)) => durable::granted(kind, guid, &resp.create_contexts)?,
            None => None,
        };
        if resp.oplock_level != OplockLevel::None {
            self.conn().register_oplock(resp.file_id, self.tree.tree_id);
            self.w.answer_while_idle();
        }
        // A batch oplock granted without a durable handle: the share grants none
        // (Samba: durable handles = no, or posix locking, kernel oplocks or kernel
        // share modes on), so later opens ask for neither.
        if ask.is_some() && grant.is_none() && resp.oplock_level == OplockLevel::Batch {
            self.durable = None;
        }
        Ok(Created {
            resp,
            asked: ask.is_some(),
            grant,
        })
    }

    /// Claims back, on this session, the open `grant` names (`file_id` on the lost
    /// session), opened at `path` with `access` and `options`: the CREATE carries the
    /// reconnect context alone. The open's file id on this session.
    pub(super) fn reclaim(
        &self,
        path: &str,
        access: u32,
        options: u32,
        grant: &durable::Grant,
        file_id: FileId,
    ) -> Result<FileId, OpError> {
        let resp = self.send_create(
            path,
            access,
            CreateDisposition::FileOpen,
            options,
            OplockLevel::Batch,
            durable::reconnect(grant, file_id),
        )?;
        if resp.oplock_level != OplockLevel::None {
            self.conn().register_oplock(resp.file_id, self.tree.tree_id);
        }
        Ok(resp.file_id)
    }

    /// A handle closed: its oplock, if any, is no longer the connection's to answer.
    pub(super) fn forget_oplock(&self, file_id: FileId) {
        self.conn().forget_oplock(file_id);
    }

    pub(super) fn close(&self, file_id: FileId) -> Result<(), OpError> {
        self.call(Command::Close, &CloseRequest { flags: 0, file_id }, 1)
            .map(|_| ())
    }

    pub(super) fn set_info(&self, file_id: FileId, class: u8, value: u64) -> Result<(), OpError> {
        let req = SetInfoRequest {
            info_type: InfoType::File,
            file_info_class: class,
            additional_information: 0,
            file_id,
            buffer: value.to_le_bytes().to_vec(),
        };
        self.call(Command::SetInfo, &req, 1).map(|_| ())
    }

    /// SET_INFO of a file information class with the whole buffer given.
    pub(super) fn set_info_buffer(
        &self,
        file_id: FileId,
        class: u8,
        buffer: Vec<u8>,
    ) -> Result<(), OpError> {
        let req = SetInfoRequest {
            info_type: InfoType::File,
            file_info_class: class,
            additional_information: 0,
            file_id,
            buffer,
        };
        self.call(Command::SetInfo, &req, 1).map(|_| ())
    }

    /// QUERY_INFO of an information class on an open file; the reply's buffer.
    pub(super) fn query_info(
        &self,
        file_id: FileId,
        info_type: InfoType,
        class: u8,
        output_buffer_length: u32,
    ) -> Result<Vec<u8>, OpError> {
        let req = QueryInfoRequest {
            info_type,
            file_info_class: class,
            output_buffer_length,
            additional_information: 0,
            flags: 0,
            file_id,
            input_buffer: vec![],
        };
        let frame = self.call(Command::QueryInfo, &req, 1)?;
        let resp =
            QueryInfoResponse::unpack(&mut ReadCursor::new(&frame.body)).map_err(op_error)?;
        Ok(resp.output_buffer)
    }

    /// LOCK of one range, failing at once where another holds it (as `F_SETLK` does);
    /// `len` 0 reaches to the end of what a file can hold, as in POSIX.
    pub(super) fn lock(
        &self,
        file_id: FileId,
        offset: u64,
        len: u64,
        how: LockHow,
    ) -> Result<(), OpError> {
        let flags = match how {
            LockHow::Shared => SMB2_LOCKFLAG_SHARED_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY,
            LockHow::Exclusive => SMB2_LOCKFLAG_EXCLUSIVE_LOCK | SMB2_LOCKFLAG_FAIL_IMMEDIATELY,
            LockHow::Unlock => SMB2_LOCKFLAG_UNLOCK,
        };
        let req = LockRequest {
            lock_sequence: 0,
            file_id,
            locks: vec![LockElement {
                offset,
                length: lock_length(offset, len),
                flags,
            }],
        };
        self.call(Command::Lock, &req, 1).map(|_| ())
    }

    /// The allocation size and end of file of an open file.
    pub(super) fn standard_info(&self, file_id: FileId) -> Result<(u64, u64), OpError> {
        let b = self.query_info(file_id, InfoType::File, FILE_STANDARD_INFORMATION, 64)?;
        let word = |at: usize| -> Result<u64, OpError> {
            b.get(at..at + 8)
                .and_then(|s| s.try_into().ok())
                .map(u64::from_le_bytes)
                .ok_or_else(|| OpError {
                    errno: crate::errno::EIO,
                    detail: Some("SMB: short FileStandardInformation reply".into()),
                })
        };
        Ok((word(0)?, word(8)?))
    }

    pub(super) fn path_kind(&mut self, path: &str) -> Result<Option<EntryKind>, OpError> {
        let conn = self.client.connection_mut();
        match self.w.wait(self.tree.stat(conn, path)) {
            Ok(info) if info.is_link() => Ok(Some(EntryKind::Link)),
            Ok(info) if info.is_directory => Ok(Some(EntryKind::Dir)),
            Ok(_) => Ok(Some(EntryKind::File)),
            Err(e) => {
                if e.errno == crate::errno::ENOENT {
                    Ok(None)
                } else {
                    Err(e)
                }
            }
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A polite goodbye to a live server, briefly; none to a dead one, whose
        // silence would otherwise hold the process up for another timeout.
        if self.w.is_dead() {
            return;
        }
        let conn = self.client.connection_mut();
        let _ = self.w.run_for(DISCONNECT_WAIT, self.tree.disconnect(conn));
    }
}

/// How long the TREE_DISCONNECT at the end may take.
const DISCONNECT_WAIT: Duration = Duration::from_millis(500);

/// The remote sandbox's requests, once each.
impl Session {
    fn kind_once(&mut self, path: &str) -> Result<Option<EntryKind>, OpError> {
        self.path_kind(path)
    }
    fn make_dir_once(&mut self, path: &str) -> Result<(), OpError> {
        let conn = self.client.connection_mut();
        self.w.wait(self.tree.create_directory(conn, path))
    }
    fn put_file_once(&mut self, path: &str, data: &[u8]) -> Result<(), OpError> {
        let r = self.create(
            path,
            FileAccessMask::FILE_WRITE_DATA,
            CreateDisposition::FileOverwriteIf,
            FILE_NON_DIRECTORY_FILE,
        )?;
        let req = WriteFrom {
            file_id: r.file_id,
            offset: 0,
            data,
        };
        let written = self.call(Command::Write, &req, 1).map(|_| ());
        let closed = self.close(r.file_id);
        written.and(closed)
    }
    fn list_once(&mut self, path: &str) -> Result<Vec<(String, EntryKind)>, OpError> {
        let conn = self.client.connection_mut();
        let entries = self.w.wait(self.tree.list_directory(conn, path))?;
        Ok(entries
            .into_iter()
            .filter(|e| e.name != "." && e.name != "..")
            .map(|e| {
                let kind = if e.is_link() {
                    EntryKind::Link
                } else if e.is_directory {
                    EntryKind::Dir
                } else {
                    EntryKind::File
                };
                (e.name, kind)
            })
            .collect())
    }
    fn remove_file_once(&mut self, path: &str) -> Result<(), OpError> {
        let conn = self.client.connection_mut();
        self.w.wait(self.tree.delete_file(conn, path))
    }
    fn remove_dir_once(&mut self, path: &str) -> Result<(), OpError> {
        let conn = self.client.connection_mut();
        self.w.wait(self.tree.delete_directory(conn, path))
    }
    fn rename_once(&mut self, from: &str, to: &str) -> Result<(), OpError> {
        let conn = self.client.connection_mut();
        let options = smb2::RenameOptions::new().replace_if_exists(false);
        self.w.wait(self.tree.rename_with(conn, from, to, options))
    }
}

impl AdminSession for Session {
    fn set_request_timeout(&mut self, wait: Duration) {
        self.budget = wait;
        self.w.set_timeout(wait);
    }
}

impl RemoteFs for Session {
    fn kind(&mut self, path: &str) -> Result<Option<EntryKind>, OpError> {
        self.redo(Redo::Same, |s| s.kind_once(path))
    }
    fn make_dir(&mut self, path: &str) -> Result<(), OpError> {
        self.redo(Redo::Exists, |s| s.make_dir_once(path))
    }
    fn put_file(&mut self, path: &str, data: &[u8]) -> Result<(), OpError> {
        self.redo(Redo::Same, |s| s.put_file_once(path, data))
    }
    fn list(&mut self, path: &str) -> Result<Vec<(String, EntryKind)>, OpError> {
        self.redo(Redo::Same, |s| s.list_once(path))
    }
    fn remove_file(&mut self, path: &str) -> Result<(), OpError> {
        self.redo(Redo::Gone, |s| s.remove_file_once(path))
    }
    fn remove_dir(&mut self, path: &str) -> Result<(), OpError> {
        self.redo(Redo::Gone, |s| s.remove_dir_once(path))
    }
    fn rename(&mut self, from: &str, to: &str) -> Result<(), OpError> {
        self.redo(Redo::Gone, |s| s.rename_once(from, to))
    }
}

/// Encrypts every request from the TREE_CONNECT on, as Windows and smbclient do when
/// they require encryption of a server that only allows it: an SMB 3 server answers
/// an encrypted request encrypted, whether or not it asked for encryption itself
/// (MS-SMB2 3.3.5.2.1). Needs a session with encryption keys (SMB 3 with encryption
/// negotiated); without them nothing changes and the caller's check refuses the
/// session as unencrypted.
fn encrypt_from_now(client: &mut SmbClient) {
    if client.connection().should_encrypt() {
        return;
    }
    let (Some(enc), Some(dec)) = (
        client.session().encryption_key.clone(),
        client.session().decryption_key.clone(),
    ) else {
        return;
    };
    let Some(params) = client.params() else {
        return;
    };
    let cipher = match (params.dialect, params.cipher) {
        (_, Some(c)) => c,
        // SMB 3.0 and 3.0.2 have one cipher, if the server offered to encrypt.
        (Dialect::Smb3_0 | Dialect::Smb3_0_2, None)
            if params.capabilities.0 & Capabilities::ENCRYPTION != 0 =>
        {
            Cipher::Aes128Ccm
        }
        _ => return,
    };
    client
        .connection_mut()
        .activate_encryption(enc, dec, cipher);
}

/// STATUS_ACCESS_DENIED.
const STATUS_ACCESS_DENIED: u32 = 0xC000_0022;

/// Why a share refused a signed-in session (STATUS_ACCESS_DENIED in TREE_CONNECT), in
/// the user's terms, and what to do about it.
fn share_refusal_hint(e: &smb2::Error, named_user: bool, encrypt: SmbEncrypt) -> String {
    if !named_user {
        return format!(
            "the share admits no guests ({e}); name a user in the URL (smb://user@host/share) and set NASLAB_SMB_PASSWORD"
        );
    }
    match encrypt {
        SmbEncrypt::Off => format!(
            "a share that requires encryption (Samba: smb encrypt = required on the share) refuses an unencrypted session so, and --smb-encrypt off forbids encrypting ({e}); leave --smb-encrypt at desired. If the share does not require encryption, the user is not allowed on it (Samba: valid users, invalid users)"
        ),
        _ => format!(
            "the user is not allowed on this share ({e}); check the share's valid users and invalid users on the server"
        ),
    }
}

/// Why a sign-in failed, in the user's terms, and what to do about it.
fn auth_hint(e: &smb2::Error, named_user: bool) -> String {
    let status = match e {
        smb2::Error::Protocol { status, .. } => Some(status.0),
        _ => None,
    };
    match status {
        Some(0xC000_006D) if named_user => format!(
            "wrong user name or password ({e}); check the user in the URL and the password in NASLAB_SMB_PASSWORD"
        ),
        Some(0xC000_006D) | Some(0xC000_0022) if !named_user => format!(
            "the server admits no guests ({e}); name a user in the URL (smb://user@host/share) and set NASLAB_SMB_PASSWORD"
        ),
        Some(0xC000_0072) => format!("the account is disabled on the server ({e})"),
        Some(0xC000_0071) | Some(0xC000_0224) => {
            format!("the account's password has expired or must be changed on the server ({e})")
        }
        Some(0xC000_0234) => format!("the account is locked out on the server ({e})"),
        Some(0xC000_0418) => format!(
            "the server blocks NTLM sign-ins (NT_STATUS_NTLM_BLOCKED: {e}; Samba: ntlm auth = disabled), and naslab signs in with NTLMv2 only (it has no Kerberos); allow NTLMv2 on the server (Samba: ntlm auth = ntlmv2-only)"
        ),
        _ => match e.kind() {
            ErrorKind::GuestSessionRefused => format!(
                "the server answered with a guest session instead of the named account ({e}); check the user in the URL and NASLAB_SMB_PASSWORD"
            ),
            _ => format!("{e}; check the user in the URL and NASLAB_SMB_PASSWORD"),
        },
    }
}

/// A WRITE request whose data is the caller's buffer, borrowed: it is packed straight
/// into the message, so a write's data is copied once on its way to the socket (the
/// `smb2` crate's own `WriteRequest` owns its data, which would cost a copy more).
pub(super) struct WriteFrom<'a> {
    pub(super) file_id: FileId,
    pub(super) offset: u64,
    pub(super) data: &'a [u8],
}

impl Pack for WriteFrom<'_> {
    fn pack(&self, cursor: &mut WriteCursor) {
        // MS-SMB2 2.2.21: StructureSize 49, then a fixed part of 48 bytes in all.
        cursor.reserve(48 + self.data.len().max(1));
        cursor.write_u16_le(WriteRequest::STRUCTURE_SIZE);
        // DataOffset: the header (64 bytes) plus the fixed part.
        cursor.write_u16_le(0x70);
        cursor.write_u32_le(self.data.len() as u32);
        cursor.write_u64_le(self.offset);
        cursor.write_u64_le(self.file_id.persistent);
        cursor.write_u64_le(self.file_id.volatile);
        // Channel, RemainingBytes, WriteChannelInfoOffset and -Length, Flags: none.
        cursor.write_u32_le(0);
        cursor.write_u32_le(0);
        cursor.write_u16_le(0);
        cursor.write_u16_le(0);
        cursor.write_u32_le(0);
        if self.data.is_empty() {
            // The one byte of Buffer that StructureSize 49 counts.
            cursor.write_u8(0);
        } else {
            cursor.write_bytes(self.data);
        }
    }
}

/// A FILE_BASIC_INFORMATION buffer (MS-FSCC 2.4.7) that sets the last access and last
/// write times to `filetime` (100 ns since 1601) and leaves the rest as it is (0).
pub(super) fn basic_info_times(filetime: u64) -> Vec<u8> {
    let mut b = vec![0u8; 40];
    b[8..16].copy_from_slice(&filetime.to_le_bytes());
    b[16..24].copy_from_slice(&filetime.to_le_bytes());
    b
}

/// This machine's clock as a Windows FILETIME.
pub(super) fn filetime_now() -> u64 {
    const UNIX_EPOCH_AS_FILETIME: u64 = 116_444_736_000_000_000;
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    UNIX_EPOCH_AS_FILETIME + (since.as_nanos() / 100) as u64
}

pub(super) fn credits_for(len: usize) -> u16 {
    len.div_ceil(CREDIT_BYTES).clamp(1, u16::MAX as usize) as u16
}
