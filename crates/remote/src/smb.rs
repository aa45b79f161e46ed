//! SMB 2 and 3 spoken by naslab itself (the `smb2` crate's wire layer): no kernel
//! mount, no admin rights on the client, and each trace op sent as the requests a
//! Windows client would send for it: CREATE, READ, WRITE, FLUSH, SET_INFO (end of file,
//! allocation size, times), QUERY_INFO of the volume's size, LOCK, CLOSE, directory
//! queries, delete and rename. naslab keeps no
//! client cache, so every data op reaches the server.
//!
//! The crate is async; each connection drives it from its own single-threaded tokio
//! runtime (`backend::waiter`, shared with NFS), so the [`Backend`] trait stays
//! synchronous and streams stay independent.

mod durable;
mod queue;
mod session;

use std::sync::Arc;

use naslab_trace::OpKind;
use smb2::RenameOptions;
use smb2::msg::create::CreateDisposition;
use smb2::msg::flush::FlushRequest;
use smb2::msg::read::ReadRequest;
use smb2::msg::write::WriteResponse;
use smb2::pack::{ReadCursor, Unpack};
use smb2::types::flags::FileAccessMask;
use smb2::types::{Command, FileId};

use self::session::{
    CREDIT_BYTES, FILE_ALLOCATION_INFORMATION, FILE_BASIC_INFORMATION,
    FILE_END_OF_FILE_INFORMATION, FILE_FS_FULL_SIZE_INFORMATION, FILE_NO_INTERMEDIATE_BUFFERING,
    FILE_NON_DIRECTORY_FILE, FILE_RANDOM_ACCESS, FILE_WRITE_THROUGH, STATUS_END_OF_FILE, Session,
    WriteFrom, basic_info_times, credits_for, filetime_now, op_error,
};
use self::session::{Redo, Wait as _};
use crate::remote::{RemoteFs, RemoteSandbox, RemoteSandboxError, RemoteShare, SharePaths};
use crate::url::{ClientOptions, MAX_SMB_IN_FLIGHT, RemoteUrl};
use naslab_backend::FileTable;
use naslab_backend::{
    Backend, BackendOptions, Caps, Handle, IoBuf, IoMemory, LockHow, OpError, OpenHow, QueuedIo,
    Recovery, Target,
};

/// What naslab's SMB client can do.
pub const SMB_CAPS: Caps = Caps {
    // Every op but the links: naslab's SMB client makes neither hard nor symbolic links.
    ops: {
        let mut ops = [true; OpKind::ALL.len()];
        ops[OpKind::Link as usize] = false;
        ops[OpKind::Symlink as usize] = false;
        ops
    },
    // naslab's client keeps no cache: every data op already reaches the server.
    direct_io: true,
    drop_cache: Some(naslab_results::CacheDrop::ServerWriteBack),
    moves_data: true,
    // Each op in flight is a request awaiting its reply (`smb/queue.rs`); beyond the
    // credits the server grants, a request waits for credits before it is sent.
    max_queue_depth: MAX_SMB_QUEUE_DEPTH,
};

/// The most reads and writes a stream keeps in flight over SMB (a trace's `queue_depth`).
/// Samba grants up to 8192 credits by default (`smb2 max credits`), Windows servers
/// fewer; 256 ops of up to 64 KiB fit well within that.
const MAX_SMB_QUEUE_DEPTH: u32 = 256;

/// Why naslab could not start working on an SMB target.
#[derive(Debug, thiserror::Error)]
pub enum SmbError {
    #[error("cannot start the SMB client's runtime: {0}")]
    Runtime(std::io::Error),
    #[error(
        "cannot reach the SMB server at {addr}: {source}; check the host and port in the URL and that the server runs"
    )]
    Connect {
        addr: String,
        #[source]
        source: smb2::Error,
    },
    #[error(
        "the SMB server at {addr} answered, but no session could be set up with it: {source}; check the dialect, signing and encryption the server asks for (Samba: testparm -sv | grep -E 'protocol|signing|encrypt'), and try --smb-encrypt off to see whether encryption is the cause"
    )]
    Handshake {
        addr: String,
        #[source]
        source: smb2::Error,
    },
    #[error("the SMB server at {addr} refused to sign in {who}: {why}")]
    Auth {
        addr: String,
        who: String,
        /// What the refusal means and what to do, with the server's status.
        why: String,
    },
    #[error(
        "the SMB server at {addr} closed the connection while naslab signed in ({source}); {hint}"
    )]
    Dropped {
        addr: String,
        #[source]
        source: smb2::Error,
        /// The likely reason and what to do.
        hint: String,
    },
    #[error(
        "share '{share}' on {addr} asks for encryption, but the session cannot encrypt ({security}: SMB 2 has no encryption), and Samba hangs up on such a session at its first write; {hint}"
    )]
    CannotEncrypt {
        addr: String,
        share: String,
        security: String,
        /// What to do.
        hint: String,
    },
    #[error(
        "cannot open share '{share}' on {addr}: {source}; check the share's name (smbclient -L can list them)"
    )]
    Share {
        addr: String,
        share: String,
        #[source]
        source: smb2::Error,
    },
    #[error("the SMB server at {addr} refused share '{share}' to {who}: {why}")]
    ShareRefused {
        addr: String,
        share: String,
        who: String,
        /// What the refusal means and what to do, with the server's status.
        why: String,
    },
    #[error(
        "the SMB server at {addr} did not encrypt the session on share '{share}' ({security}), and --smb-encrypt required forbids working unencrypted; have the server encrypt (Samba: smb encrypt = desired or required) or use --smb-encrypt desired"
    )]
    NotEncrypted {
        addr: String,
        share: String,
        security: String,
    },
    #[error("{0}; check that the server runs and answers")]
    NoReply(String),
    #[error(transparent)]
    Sandbox(#[from] RemoteSandboxError),
}

/// An SMB share as a target: `smb://[user@]host[:port]/share[/path]`.
pub struct SmbTarget {
    url: RemoteUrl,
    password: String,
    opts: ClientOptions,
    settings: naslab_results::SmbSettings,
    /// naslab's directory, and the session that checks and empties it between
    /// iterations.
    share: RemoteShare<Session>,
}

impl std::fmt::Debug for SmbTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the password.
        write!(f, "SmbTarget({})", self.url)
    }
}

impl SmbTarget {
    /// Signs in, opens the share and checks (or makes and marks) `<path>/naslab` there.
    /// `password` is used to sign in and is never shown.
    pub fn connect(url: RemoteUrl, password: String) -> Result<SmbTarget, SmbError> {
        SmbTarget::connect_with(url, password, ClientOptions::default())
    }

    /// [`SmbTarget::connect`] with the client's timeout and encryption chosen.
    pub fn connect_with(
        url: RemoteUrl,
        password: String,
        opts: ClientOptions,
    ) -> Result<SmbTarget, SmbError> {
        SmbTarget::connect_in(url, password, opts, None, false)
    }

    /// [`SmbTarget::connect_with`], working in `<path>/<client>/naslab` when `client`
    /// is given (a multi-client job's own directory, made when missing); with `join`,
    /// joining the `naslab` directory the job's first client holds (`--shared-files`).
    pub fn connect_in(
        url: RemoteUrl,
        password: String,
        opts: ClientOptions,
        client: Option<&str>,
        join: bool,
    ) -> Result<SmbTarget, SmbError> {
        let mut admin = Session::open(&url, &password, opts)?;
        let sandbox = crate::marker::wait_for_holder(
            || RemoteSandbox::open_in(&mut admin, &url.path, client, join),
            |e| matches!(e, crate::remote::RemoteSandboxError::NotHeld(_)),
        )?;
        Ok(SmbTarget {
            settings: admin.settings.clone(),
            share: RemoteShare::new(url.to_string(), sandbox, admin),
            url,
            password,
            opts,
        })
    }

    /// The target's URL (without any password).
    pub fn url(&self) -> &RemoteUrl {
        &self.url
    }

    /// The dialect and encryption the server agreed on, e.g. "SMB 3.1.1, encrypted
    /// (AES-128-GCM)".
    pub fn security(&self) -> String {
        session::security(&self.settings)
    }

    /// The session's options and what the server agreed to, as the results record them.
    pub fn settings(&self) -> &naslab_results::SmbSettings {
        &self.settings
    }
}

impl Target for SmbTarget {
    fn backend_name(&self) -> &'static str {
        "smb"
    }

    fn caps(&self) -> Caps {
        SMB_CAPS
    }

    /// Every request's future can sign in again from inside the op when it finds its
    /// connection broken (NTLM, key derivation, TREE_CONNECT), so it holds room for
    /// that: more than the 256 KiB a stream has by default, in a debug build (a stack
    /// overflow in `smb_backend_runs_every_op_and_the_server_holds_the_bytes`).
    fn stream_stack_bytes(&self) -> usize {
        1 << 20
    }

    fn connect(
        &self,
        workload_dir: &str,
        files: Arc<FileTable>,
        _options: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        let mut session =
            Session::open(&self.url, &self.password, self.opts).map_err(|e| OpError {
                errno: crate::errno::ENOTCONN,
                detail: Some(e.to_string()),
            })?;
        session.w.share_silence_with(&self.share.admin().w);
        let dir = format!("{}/{workload_dir}", self.share.sandbox().root());
        let paths = SharePaths::new(dir, files);
        Ok(Box::new(SmbBackend {
            queue: queue::SmbQueue::default(),
            memory: IoMemory::default(),
            session,
            paths,
            handles: Vec::new(),
            free: Vec::new(),
            recovery: Recovery::default(),
        }))
    }

    fn fresh_workload_dir(&self, name: &str) -> Result<(), OpError> {
        self.share.fresh_workload_dir(name)
    }

    fn remove_all(mut self: Box<Self>) -> Result<bool, OpError> {
        self.share.remove_all()
    }
}

/// The data of a READ response's body (the bytes after the 64-byte header), borrowed
/// where it lies rather than copied out: StructureSize (2 bytes, 17), DataOffset (1
/// byte, from the start of the header), a reserved byte, DataLength (4), then
/// DataRemaining and a reserved field (4 each).
fn read_data(body: &[u8]) -> Result<&[u8], OpError> {
    let bad = |why: &str| OpError {
        errno: crate::errno::EIO,
        detail: Some(format!("SMB: a malformed READ response ({why})")),
    };
    if body.len() < 16 || u16::from_le_bytes([body[0], body[1]]) != 17 {
        return Err(bad("not a READ response's fixed part"));
    }
    let offset = (body[2] as usize).saturating_sub(smb2::msg::header::Header::SIZE);
    let len = u32::from_le_bytes([body[4], body[5], body[6], body[7]]) as usize;
    if len == 0 {
        return Ok(&[]);
    }
    body.get(offset..offset + len)
        .ok_or_else(|| bad("its data lies past its end"))
}

/// The largest READ op sent as one request whatever `--smb-in-flight` says. Alternated
/// against smbclient on a lab Samba (docs/benchmarks.md), one READ of 1 or 2 MiB ran
/// level with or above it every time, while 2 to 8 pieces in flight ran from 0.7 to 1.2
/// times it from one run to the next; from 4 MiB on, pieces keep the server busy and win.
const SPLIT_READS_ABOVE: usize = 2 << 20;

/// The largest WRITE op sent as one request whatever `--smb-in-flight` says. A WRITE is
/// signed whole before its first byte goes out, and the server takes it in whole before
/// it checks the signature and writes; in pieces, the client signs the next while the
/// server handles the last. Alternated on a lab Samba (docs/benchmarks.md), 1 and 2 MiB
/// writes in pieces of 512 KiB ran faster than as one WRITE in 10 pairs of 10.
const SPLIT_WRITES_ABOVE: usize = MIN_PIECE;

/// The smallest request a large op is split into: below it, the server's and the
/// client's fixed costs per request outweigh what keeping both busy gains.
const MIN_PIECE: usize = 512 << 10;

/// How long each READ or WRITE of an op of `len` bytes is. An op of more than
/// `split_above` ([`SPLIT_READS_ABOVE`] or [`SPLIT_WRITES_ABOVE`]) is split into
/// `in_flight` requests sent at once, so that the server handles one piece while the
/// client checks or signs another, each a whole number of credits and none under
/// [`MIN_PIECE`]; a smaller op, or any op with `in_flight` 1, is one request as far as
/// the server's maximum `max` allows.
fn piece_len(len: usize, max: usize, in_flight: usize, split_above: usize) -> usize {
    let piece = if in_flight <= 1 || len <= split_above {
        len
    } else {
        len.div_ceil(in_flight)
            .next_multiple_of(CREDIT_BYTES)
            .max(MIN_PIECE)
    };
    piece.min(max).max(1)
}

/// What the pieces of one op moved, in order: the bytes up to the first piece that
/// moved less than it asked for (the file's end, or a full disk) and whether there was
/// one; or the first piece's error.
fn whole_prefix(
    pieces: [Result<Piece, OpError>; MAX_SMB_IN_FLIGHT],
) -> Result<(usize, bool), OpError> {
    let mut done = 0;
    for piece in pieces {
        match piece? {
            Piece::None => break,
            Piece::Moved { moved, asked } => {
                done += moved;
                if moved < asked {
                    return Ok((done, true));
                }
            }
        }
    }
    Ok((done, false))
}

/// What one request of an op moved.
enum Piece {
    /// The op had no piece left for this request.
    None,
    Moved {
        moved: usize,
        asked: usize,
    },
}

/// One READ of `part`'s length at `offset`, its data copied into `part` as soon as it
/// arrives.
async fn read_piece(
    s: &Session,
    file_id: FileId,
    offset: u64,
    part: Option<&mut [u8]>,
) -> Result<Piece, OpError> {
    let Some(part) = part else {
        return Ok(Piece::None);
    };
    let req = ReadRequest {
        padding: 0x50,
        flags: 0,
        length: part.len() as u32,
        offset,
        file_id,
        minimum_count: 0,
        channel: 0,
        remaining_bytes: 0,
        read_channel_info: vec![],
    };
    let asked = part.len();
    let frame = s.send(Command::Read, &req, credits_for(asked)).await?;
    match frame.header.status.0 {
        0 => {}
        STATUS_END_OF_FILE => return Ok(Piece::Moved { moved: 0, asked }),
        _ => {
            return Err(op_error(smb2::Error::Protocol {
                status: frame.header.status,
                command: Command::Read,
            }));
        }
    }
    let data = read_data(&frame.body)?;
    let moved = data.len().min(asked);
    part[..moved].copy_from_slice(&data[..moved]);
    Ok(Piece::Moved { moved, asked })
}

/// One WRITE of `part` at `offset`.
async fn write_piece(
    s: &Session,
    file_id: FileId,
    offset: u64,
    part: Option<&[u8]>,
) -> Result<Piece, OpError> {
    let Some(data) = part else {
        return Ok(Piece::None);
    };
    let req = WriteFrom {
        file_id,
        offset,
        data,
    };
    let asked = data.len();
    let frame = s.send(Command::Write, &req, credits_for(asked)).await?;
    if frame.header.status.0 != 0 {
        return Err(op_error(smb2::Error::Protocol {
            status: frame.header.status,
            command: Command::Write,
        }));
    }
    let resp = WriteResponse::unpack(&mut ReadCursor::new(&frame.body)).map_err(op_error)?;
    Ok(Piece::Moved {
        moved: (resp.count as usize).min(asked),
        asked,
    })
}

/// One open file.
#[derive(Debug, Clone, Copy)]
struct Open {
    file_id: FileId,
    /// The session it was opened in, or claimed back on ([`Session::generation`]): a
    /// handle of an earlier one was lost with it.
    generation: u64,
    /// For append opens: where the next write goes.
    append_at: Option<u64>,
    /// The file, and how it was opened: what a claim on a new session names.
    file: u32,
    access: u32,
    options: u32,
    /// Whether a durable handle was asked for, and the one the server granted, while
    /// it may still be claimed back.
    asked: bool,
    durable: Option<durable::Grant>,
    /// Why the handle is gone, once a reconnect left it behind.
    lost: Option<Lost>,
}

/// Why a handle did not outlive its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lost {
    /// No durable handle was asked for (a share that grants none, the dialect).
    Unasked,
    /// One was asked for and not granted.
    Refused,
    /// Granted, and the server refused the claim on the new session (the errno of
    /// its answer).
    Unclaimed(i32),
}

impl Lost {
    fn why(self) -> String {
        let what = "SMB: the handle was lost with its session when the connection broke";
        match self {
            Lost::Unasked => {
                format!("{what} (no durable handle was asked for: the share grants none)")
            }
            Lost::Refused => format!("{what} (the server granted no durable handle for it)"),
            Lost::Unclaimed(errno) => format!(
                "{what} (the server refused to give its durable handle back on the new session: {})",
                crate::errno::describe(errno)
            ),
        }
    }
}

/// One stream's SMB connection.
pub struct SmbBackend {
    /// Reads and writes in flight at a queue depth above 1. Declared before the session,
    /// so that its requests (which borrow the session) are dropped first.
    queue: queue::SmbQueue,
    /// What the stream lent the queue's ops (dropped after the queue).
    memory: IoMemory,
    session: Session,
    /// Each file's path on the share, made when asked for.
    paths: SharePaths,
    handles: Vec<Option<Open>>,
    free: Vec<usize>,
    /// What the connection did to get over broken ones.
    recovery: Recovery,
}

impl SmbBackend {
    /// Runs `op`; when the connection broke under it (lost, not silent), signs in again
    /// on a new connection, claims back the durable handles the server granted, and
    /// runs it again, within the I/O timeout from its start. Other handles of the lost
    /// session are gone with it: an op on one fails with ESTALE, which does not stop
    /// the run.
    fn again<T: Default>(
        &mut self,
        redo: Redo,
        mut op: impl FnMut(&mut Self) -> Result<T, OpError>,
    ) -> Result<T, OpError> {
        let started = std::time::Instant::now();
        let mut redone = false;
        let r = 'op: loop {
            match op(self) {
                Err(e) if self.session.lost(&e) => {
                    let mut e = e;
                    loop {
                        if let Err(e) = self.session.reconnect(started, e) {
                            break 'op Err(e);
                        }
                        self.recovery.reconnects += 1;
                        match self.reclaim() {
                            Ok(()) => break,
                            // The new connection broke too: another one.
                            Err(lost) => e = lost,
                        }
                    }
                    self.recovery.retries += 1;
                    redone = true;
                }
                Err(e) if redone && redo.done(&e) => break Ok(T::default()),
                r => break r,
            }
        };
        self.session.end_recovery(redone);
        r
    }

    /// On a new session, claims back each open handle of the lost one whose durable
    /// handle the server granted; the others are lost. Fails only when the new
    /// connection broke too (the claims not made yet are made on the next one).
    fn reclaim(&mut self) -> Result<(), OpError> {
        let now = self.session.generation;
        for i in 0..self.handles.len() {
            let Some(o) = self.handles[i] else { continue };
            if o.generation == now || o.lost.is_some() {
                continue;
            }
            let claimed = match o.durable {
                Some(grant) => {
                    let path = self.path(o.file)?;
                    self.session
                        .reclaim(&path, o.access, o.options, &grant, o.file_id)
                        .map_err(|e| (o.asked, Some(e)))
                }
                None => Err((o.asked, None)),
            };
            let Some(Some(h)) = self.handles.get_mut(i) else {
                continue;
            };
            match claimed {
                Ok(file_id) => {
                    h.file_id = file_id;
                    h.generation = now;
                    self.recovery.durable.reclaimed += 1;
                }
                Err((_, Some(e))) if self.session.lost(&e) => return Err(e),
                Err((asked, refused)) => {
                    h.durable = None;
                    h.lost = Some(match refused {
                        Some(e) => Lost::Unclaimed(e.errno),
                        None if asked => Lost::Refused,
                        None => Lost::Unasked,
                    });
                    self.recovery.durable.lost += 1;
                }
            }
        }
        Ok(())
    }

    fn path(&self, file: u32) -> Result<String, OpError> {
        self.paths.path(file)
    }

    fn open_of(&self, h: Handle) -> Result<Open, OpError> {
        let o = (h as usize)
            .checked_sub(1)
            .and_then(|i| self.handles.get(i).copied().flatten())
            .ok_or(OpError::errno(crate::errno::EBADF))?;
        if o.generation != self.session.generation {
            return Err(OpError {
                errno: crate::errno::ESTALE,
                detail: Some(o.lost.unwrap_or(Lost::Refused).why()),
            });
        }
        Ok(o)
    }

    fn is_dir(&self, file: u32) -> bool {
        self.paths.is_dir(file)
    }
}

impl Drop for SmbBackend {
    fn drop(&mut self) {
        for o in self.handles.iter().flatten() {
            if o.generation == self.session.generation {
                let _ = self.session.close(o.file_id);
            }
        }
    }
}

/// Each op once, on the session as it is; [`SmbBackend::again`] gets over a broken
/// connection around them.
impl SmbBackend {
    fn open_once(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError> {
        let mut access = FileAccessMask::FILE_READ_ATTRIBUTES;
        if how.read || !how.write {
            access |= FileAccessMask::FILE_READ_DATA;
        }
        if how.write {
            access |= FileAccessMask::FILE_WRITE_DATA
                | FileAccessMask::FILE_APPEND_DATA
                | FileAccessMask::FILE_WRITE_ATTRIBUTES;
        }
        let disposition = match (how.create, how.truncate) {
            (true, _) if how.exclusive => CreateDisposition::FileCreate,
            (true, true) => CreateDisposition::FileOverwriteIf,
            (true, false) => CreateDisposition::FileOpenIf,
            (false, true) => CreateDisposition::FileOverwrite,
            (false, false) => CreateDisposition::FileOpen,
        };
        let mut options = FILE_NON_DIRECTORY_FILE;
        if how.sync {
            options |= FILE_WRITE_THROUGH;
        }
        // naslab's client caches nothing (the batch oplock asked for with a durable
        // handle is given up at the first break); these pass the trace's hints on to
        // the server as Windows' redirector does.
        if how.direct {
            options |= FILE_NO_INTERMEDIATE_BUFFERING;
        }
        if how.random {
            options |= FILE_RANDOM_ACCESS;
        }
        let path = self.path(file)?;
        let c = self
            .session
            .create_file(&path, access, disposition, options)?;
        if c.asked {
            self.recovery.durable.asked += 1;
        }
        if c.grant.is_some() {
            self.recovery.durable.granted += 1;
        }
        let open = Open {
            file_id: c.resp.file_id,
            generation: self.session.generation,
            append_at: how.append.then_some(c.resp.end_of_file),
            file,
            access,
            options,
            asked: c.asked,
            durable: c.grant,
            lost: None,
        };
        let slot = match self.free.pop() {
            Some(i) => {
                self.handles[i] = Some(open);
                i
            }
            None => {
                self.handles.push(Some(open));
                self.handles.len() - 1
            }
        };
        Ok(slot as Handle + 1)
    }

    fn close_once(&mut self, h: Handle) -> Result<(), OpError> {
        let i = (h as usize)
            .checked_sub(1)
            .filter(|&i| matches!(self.handles.get(i), Some(Some(_))))
            .ok_or(OpError::errno(crate::errno::EBADF))?;
        let r = self.open_of(h).and_then(|o| {
            self.session.forget_oplock(o.file_id);
            self.session.close(o.file_id)
        });
        // A CLOSE whose connection broke is sent again; the handle goes otherwise (a
        // lost handle's close fails, and the handle is gone all the same).
        if !r.as_ref().is_err_and(|e| self.session.lost(e)) {
            self.handles[i] = None;
            self.free.push(i);
        }
        r
    }

    fn read_once(&mut self, h: Handle, offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        let o = self.open_of(h)?;
        let s = &self.session;
        let piece = piece_len(buf.len(), s.max_read, s.in_flight, SPLIT_READS_ABOVE);
        let mut done = 0usize;
        while done < buf.len() {
            let end = (done + s.in_flight * piece).min(buf.len());
            let mut parts = buf[done..end].chunks_mut(piece);
            let at = offset + done as u64;
            let reads: [_; MAX_SMB_IN_FLIGHT] = std::array::from_fn(|i| {
                read_piece(s, o.file_id, at + (i * piece) as u64, parts.next())
            });
            let reads = std::pin::pin!(reads);
            let (got, short) = whole_prefix(s.wait_all(reads)?)?;
            done += got;
            if short {
                break;
            }
        }
        Ok(done)
    }

    fn write_once(&mut self, h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        let o = self.open_of(h)?;
        let s = &self.session;
        let base = o.append_at.unwrap_or(offset);
        let piece = piece_len(buf.len(), s.max_write, s.in_flight, SPLIT_WRITES_ABOVE);
        let mut done = 0usize;
        while done < buf.len() {
            let end = (done + s.in_flight * piece).min(buf.len());
            let mut parts = buf[done..end].chunks(piece);
            let at = base + done as u64;
            let writes: [_; MAX_SMB_IN_FLIGHT] = std::array::from_fn(|i| {
                write_piece(s, o.file_id, at + (i * piece) as u64, parts.next())
            });
            let writes = std::pin::pin!(writes);
            let (wrote, short) = whole_prefix(s.wait_all(writes)?)?;
            done += wrote;
            if short {
                break;
            }
        }
        if let Some(at) = o.append_at
            && let Some(Some(open)) = self.handles.get_mut(h as usize - 1)
        {
            open.append_at = Some(at + done as u64);
        }
        Ok(done)
    }

    fn fsync_once(&mut self, h: Handle) -> Result<(), OpError> {
        let o = self.open_of(h)?;
        let req = FlushRequest { file_id: o.file_id };
        self.session.call(Command::Flush, &req, 1).map(|_| ())
    }

    fn truncate_once(&mut self, h: Handle, len: u64) -> Result<(), OpError> {
        let o = self.open_of(h)?;
        self.session
            .set_info(o.file_id, FILE_END_OF_FILE_INFORMATION, len)
    }

    fn fallocate_once(&mut self, h: Handle, offset: u64, len: u64) -> Result<(), OpError> {
        // SMB reserves space by allocation size: never lower it (that would cut the
        // file), only raise it to cover the range.
        let o = self.open_of(h)?;
        let (allocated, _eof) = self.session.standard_info(o.file_id)?;
        let want = offset.saturating_add(len);
        if want > allocated {
            self.session
                .set_info(o.file_id, FILE_ALLOCATION_INFORMATION, want)?;
        }
        Ok(())
    }

    fn stat_once(&mut self, file: u32) -> Result<u64, OpError> {
        let path = self.path(file)?;
        let conn = self.session.client.connection_mut();
        self.session
            .w
            .wait(self.session.tree.stat(conn, &path))
            .map(|i| i.size)
    }

    fn mkdir_once(&mut self, file: u32) -> Result<(), OpError> {
        let path = self.path(file)?;
        self.session.make_dir(&path)
    }

    fn readdir_once(&mut self, file: u32) -> Result<u64, OpError> {
        let path = self.path(file)?;
        self.session.list(&path).map(|v| v.len() as u64)
    }

    fn unlink_once(&mut self, file: u32) -> Result<(), OpError> {
        let path = self.path(file)?;
        if self.is_dir(file) {
            self.session.remove_dir(&path)
        } else {
            self.session.remove_file(&path)
        }
    }

    fn rename_once(&mut self, from: u32, to: u32) -> Result<(), OpError> {
        let a = self.path(from)?;
        let b = self.path(to)?;
        let conn = self.session.client.connection_mut();
        self.session.w.wait(self.session.tree.rename_with(
            conn,
            &a,
            &b,
            RenameOptions::new().replace_if_exists(true),
        ))
    }

    fn statfs_once(&mut self, file: u32) -> Result<(), OpError> {
        // As Windows asks for a volume's free space: open the entry (file or
        // directory), query the volume's full size information, close.
        let path = self.path(file)?;
        let r = self.session.create(
            &path,
            FileAccessMask::FILE_READ_ATTRIBUTES,
            CreateDisposition::FileOpen,
            0,
        )?;
        let asked = self
            .session
            .query_info(
                r.file_id,
                smb2::msg::query_info::InfoType::Filesystem,
                FILE_FS_FULL_SIZE_INFORMATION,
                256,
            )
            .and_then(|b| {
                // TotalAllocationUnits, two counts of free units, sectors per unit and
                // bytes per sector: 32 bytes.
                if b.len() < 32 {
                    return Err(OpError {
                        errno: crate::errno::EIO,
                        detail: Some("SMB: short FileFsFullSizeInformation reply".into()),
                    });
                }
                Ok(())
            });
        let closed = self.session.close(r.file_id);
        asked.and(closed)
    }

    fn utime_once(&mut self, file: u32) -> Result<(), OpError> {
        // Open for its attributes, set the access and write times to now, close.
        let path = self.path(file)?;
        let r = self.session.create(
            &path,
            FileAccessMask::FILE_WRITE_ATTRIBUTES,
            CreateDisposition::FileOpen,
            0,
        )?;
        let set = self.session.set_info_buffer(
            r.file_id,
            FILE_BASIC_INFORMATION,
            basic_info_times(filetime_now()),
        );
        let closed = self.session.close(r.file_id);
        set.and(closed)
    }

    fn lock_once(&mut self, h: Handle, offset: u64, len: u64, how: LockHow) -> Result<(), OpError> {
        let o = self.open_of(h)?;
        self.session.lock(o.file_id, offset, len, how)
    }

    fn drop_cache_once(&mut self, file: u32) -> Result<(), OpError> {
        // No client cache to drop; ask the server to write the file back, as posix's
        // fsync before dropping pages does.
        let path = self.path(file)?;
        let r = self.session.create(
            &path,
            FileAccessMask::FILE_WRITE_DATA,
            CreateDisposition::FileOpen,
            FILE_NON_DIRECTORY_FILE,
        )?;
        let flushed = self
            .session
            .call(Command::Flush, &FlushRequest { file_id: r.file_id }, 1)
            .map(|_| ());
        let closed = self.session.close(r.file_id);
        flushed.and(closed)
    }
}

impl Backend for SmbBackend {
    fn caps(&self) -> Caps {
        SMB_CAPS
    }

    fn open(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError> {
        self.again(Redo::Same, |b| b.open_once(file, how))
    }

    fn close(&mut self, h: Handle) -> Result<(), OpError> {
        self.again(Redo::Same, |b| b.close_once(h))
    }

    fn read(&mut self, h: Handle, offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        self.again(Redo::Same, |b| b.read_once(h, offset, buf))
    }

    fn write(&mut self, h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        self.again(Redo::Same, |b| b.write_once(h, offset, buf))
    }

    fn fsync(&mut self, h: Handle) -> Result<(), OpError> {
        self.again(Redo::Same, |b| b.fsync_once(h))
    }

    fn truncate(&mut self, h: Handle, len: u64) -> Result<(), OpError> {
        self.again(Redo::Same, |b| b.truncate_once(h, len))
    }

    fn fallocate(&mut self, h: Handle, offset: u64, len: u64) -> Result<(), OpError> {
        self.again(Redo::Same, |b| b.fallocate_once(h, offset, len))
    }

    fn stat(&mut self, file: u32) -> Result<u64, OpError> {
        self.again(Redo::Same, |b| b.stat_once(file))
    }

    fn mkdir(&mut self, file: u32) -> Result<(), OpError> {
        self.again(Redo::Exists, |b| b.mkdir_once(file))
    }

    fn readdir(&mut self, file: u32) -> Result<u64, OpError> {
        self.again(Redo::Same, |b| b.readdir_once(file))
    }

    fn unlink(&mut self, file: u32) -> Result<(), OpError> {
        self.again(Redo::Gone, |b| b.unlink_once(file))
    }

    fn rename(&mut self, from: u32, to: u32) -> Result<(), OpError> {
        self.again(Redo::Gone, |b| b.rename_once(from, to))
    }

    fn statfs(&mut self, file: u32) -> Result<(), OpError> {
        self.again(Redo::Same, |b| b.statfs_once(file))
    }

    fn utime(&mut self, file: u32) -> Result<(), OpError> {
        self.again(Redo::Same, |b| b.utime_once(file))
    }

    fn lock(&mut self, h: Handle, offset: u64, len: u64, how: LockHow) -> Result<(), OpError> {
        self.again(Redo::Same, |b| b.lock_once(h, offset, len, how))
    }

    fn drop_cache(&mut self, file: u32) -> Result<(), OpError> {
        self.again(Redo::Same, |b| b.drop_cache_once(file))
    }

    fn queued(&mut self, _depth: u32, memory: &IoMemory) -> Result<&mut dyn QueuedIo, OpError> {
        naslab_backend::lend_once(&mut self.memory, memory);
        Ok(self)
    }

    fn recovery(&self) -> Recovery {
        self.recovery
    }
}

impl SmbBackend {
    /// Queues `op` on its handle's file as the session has it now; an op on a handle
    /// lost with an earlier session completes at once with its errno (ESTALE).
    fn push(&mut self, op: queue::Queued, done: &mut Vec<(u64, i64)>) {
        match self.open_of(op.handle) {
            Ok(o) => {
                let session: *const Session = &self.session;
                // SAFETY: the session lives as long as the queue (declared after it, so
                // dropped after it), and the caller of queue_read or queue_write
                // promised the buffer until the op is reaped.
                unsafe { self.queue.push(session, o.file_id, op) };
            }
            Err(e) => done.push((op.tag, -i64::from(e.errno))),
        }
    }
}

impl QueuedIo for SmbBackend {
    fn queue_read(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let bytes = self.memory.locate(buf)?;
        let o = self.open_of(h)?;
        let session: *const Session = &self.session;
        let op = queue::Queued {
            tag,
            handle: h,
            offset,
            len: buf.len,
            buf: queue::Buf::Read(bytes),
        };
        // SAFETY: the session lives as long as the queue (declared after it, so dropped
        // after it); the bytes are in the memory lent to the queue, kept here until after
        // the queue is dropped and untouched by their lender until the op is reaped.
        unsafe { self.queue.push(session, o.file_id, op) };
        Ok(())
    }

    fn queue_write(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let bytes = self.memory.locate(buf)?;
        let o = self.open_of(h)?;
        // An append handle writes at its end, which moves as each write is queued.
        let at = o.append_at.unwrap_or(offset);
        if let Some(end) = o.append_at
            && let Some(Some(open)) = self.handles.get_mut(h as usize - 1)
        {
            open.append_at = Some(end + buf.len as u64);
        }
        let session: *const Session = &self.session;
        let op = queue::Queued {
            tag,
            handle: h,
            offset: at,
            len: buf.len,
            buf: queue::Buf::Write(bytes),
        };
        // SAFETY: as for queue_read.
        unsafe { self.queue.push(session, o.file_id, op) };
        Ok(())
    }

    /// Reaps as the queue does; when the connection broke under queued ops (lost, not
    /// silent), signs in again, claims back the durable handles, and sends every op
    /// that was in flight again, whole, within the I/O timeout from this call's start,
    /// as [`SmbBackend::again`] does for one op.
    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        let started = std::time::Instant::now();
        let mut redone = false;
        let mut got = 0usize;
        let r = loop {
            if self.queue.is_empty() {
                break Ok(());
            }
            let (from, mut broken) = (done.len(), Vec::new());
            let reaped = self
                .queue
                .reap(&self.session, min.saturating_sub(got), done, &mut broken);
            got += done.len() - from;
            let e = match reaped {
                Err(e) if self.session.lost(&e) => e,
                Err(e) => break Err(e),
                Ok(()) if broken.is_empty() => break Ok(()),
                Ok(()) => OpError::errno(crate::errno::ENOTCONN),
            };
            // The ops still in flight went with the connection too.
            broken.extend(self.queue.take_back());
            let mut e = e;
            let reconnected = loop {
                if let Err(e) = self.session.reconnect(started, e) {
                    break Err(e);
                }
                self.recovery.reconnects += 1;
                match self.reclaim() {
                    Ok(()) => break Ok(()),
                    Err(lost) => e = lost,
                }
            };
            if let Err(e) = reconnected {
                break Err(e);
            }
            self.recovery.retries += broken.len() as u64;
            redone = true;
            for op in broken {
                let before = done.len();
                self.push(op, done);
                got += done.len() - before;
            }
        };
        self.session.end_recovery(redone);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_errnos_and_lost_connections_are_fatal() {
        let e = |s: u32| {
            op_error(smb2::Error::Protocol {
                status: smb2::types::status::NtStatus(s),
                command: Command::Create,
            })
        };
        assert_eq!(e(0xC000_0034).errno, crate::errno::ENOENT);
        assert_eq!(e(0xC000_0035).errno, crate::errno::EEXIST);
        assert_eq!(e(0xC000_007F).errno, crate::errno::ENOSPC);
        assert!(e(0xC000_020C).is_fatal());
        assert!(op_error(smb2::Error::Disconnected).is_fatal());
        assert_eq!(credits_for(1), 1);
        assert_eq!(credits_for(65536), 1);
        assert_eq!(credits_for(65537), 2);
        assert_eq!(credits_for(8 << 20), 128);
    }

    /// What driving an async client from a per-stream runtime costs per request:
    /// `cargo test -p naslab-remote --features smb -- --ignored --nocapture block_on`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn block_on_overhead_per_request() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let n = 200_000u32;
        let t0 = std::time::Instant::now();
        for i in 0..n {
            let v = rt.block_on(async move { std::hint::black_box(i) });
            std::hint::black_box(v);
        }
        let per = t0.elapsed().as_nanos() as f64 / n as f64;
        println!("block_on on a current-thread runtime: {per:.0} ns per request");
    }

    #[test]
    fn a_posix_range_to_the_end_and_times_to_set_take_smbs_shape() {
        use naslab_backend::lock_length;
        use session::basic_info_times;
        assert_eq!(lock_length(10, 20), 20);
        // POSIX's length 0 is every byte on, where SMB's would be none.
        assert_eq!(lock_length(0, 0), u64::MAX);
        assert_eq!(lock_length(1000, 0), u64::MAX - 1000);
        // FILE_BASIC_INFORMATION: creation, access, write and change times, attributes,
        // reserved; 0 leaves a field as it is.
        let b = basic_info_times(0x0102_0304_0506_0708);
        assert_eq!(b.len(), 40);
        assert_eq!(&b[0..8], &[0; 8]);
        assert_eq!(&b[8..16], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(&b[16..24], &0x0102_0304_0506_0708u64.to_le_bytes());
        assert_eq!(&b[24..40], &[0; 16]);
        // 2020-01-01 UTC is 132,223,104,000,000,000 in FILETIME; now is later.
        assert!(session::filetime_now() > 132_223_104_000_000_000);
    }

    #[test]
    fn a_closed_port_is_a_clear_error() {
        let url: RemoteUrl = "smb://127.0.0.1:1/share".parse().unwrap();
        let e = SmbTarget::connect(url, String::new()).unwrap_err();
        assert!(e.to_string().contains("cannot reach"), "{e}");
    }

    #[test]
    fn a_borrowed_write_packs_as_the_crates_own_write_request() {
        use smb2::msg::write::WriteRequest;
        use smb2::pack::{Pack, WriteCursor};
        let file_id = FileId {
            persistent: 0x0102_0304_0506_0708,
            volatile: 0x1112_1314_1516_1718,
        };
        for data in [&b""[..], b"x", &[7u8; 70_000][..]] {
            let ours = WriteFrom {
                file_id,
                offset: 0x2122_2324_2526_2728,
                data,
            };
            let theirs = WriteRequest {
                data_offset: 0x70,
                offset: 0x2122_2324_2526_2728,
                file_id,
                channel: 0,
                remaining_bytes: 0,
                write_channel_info_offset: 0,
                write_channel_info_length: 0,
                flags: 0,
                data: data.to_vec(),
            };
            let (mut a, mut b) = (WriteCursor::new(), WriteCursor::new());
            ours.pack(&mut a);
            theirs.pack(&mut b);
            assert_eq!(
                a.into_inner(),
                b.into_inner(),
                "{} bytes of data",
                data.len()
            );
        }
    }

    #[test]
    fn an_op_is_split_into_whole_credits_of_at_least_half_a_mib() {
        const MIB: usize = 1 << 20;
        let read = |len, max, in_flight| piece_len(len, max, in_flight, SPLIT_READS_ABOVE);
        let write = |len, max, in_flight| piece_len(len, max, in_flight, SPLIT_WRITES_ABOVE);
        // Eight in flight: a 4 MiB op is 8 pieces of 512 KiB, an 8 MiB one 8 of 1 MiB.
        for piece in [read, write] {
            assert_eq!(piece(4 * MIB, 8 * MIB, 8), MIB / 2);
            assert_eq!(piece(8 * MIB, 8 * MIB, 8), MIB);
            // Never under 512 KiB: a 3 MiB op is six pieces.
            assert_eq!(piece(3 * MIB, 8 * MIB, 8), MIB / 2);
            assert_eq!(piece(2 * MIB + 1, 8 * MIB, 8), MIB / 2);
            assert_eq!(piece(4096, 8 * MIB, 8), 4096);
            assert_eq!(piece(MIB / 2, 8 * MIB, 8), MIB / 2);
            // A whole number of credits.
            assert_eq!(piece(5 * MIB + 1, 8 * MIB, 8), 11 * CREDIT_BYTES);
            // Never over the server's maximum: a server of 64 KiB reads gets 64 KiB
            // pieces, whatever the op's size.
            assert_eq!(piece(4 * MIB, 64 << 10, 8), 64 << 10);
            assert_eq!(piece(MIB, 64 << 10, 8), 64 << 10);
            // One at a time: the op whole, as far as the server's maximum allows.
            assert_eq!(piece(MIB, 8 * MIB, 1), MIB);
            assert_eq!(piece(4 * MIB, 8 * MIB, 1), 4 * MIB);
            assert_eq!(piece(16 * MIB, 8 * MIB, 1), 8 * MIB);
            assert_eq!(piece(0, 8 * MIB, 1), 1);
        }
        // Up to 2 MiB, a READ is one request: a 1 or 2 MiB op is whole.
        assert_eq!(read(MIB, 8 * MIB, 8), MIB);
        assert_eq!(read(2 * MIB, 8 * MIB, 8), 2 * MIB);
        // A WRITE of more than 512 KiB is in pieces: 1 MiB in two, 2 MiB in four.
        assert_eq!(write(MIB, 8 * MIB, 8), MIB / 2);
        assert_eq!(write(MIB / 2 + 1, 8 * MIB, 8), MIB / 2);
        assert_eq!(write(2 * MIB, 8 * MIB, 8), MIB / 2);
        assert_eq!(write(MIB, 8 * MIB, 2), MIB / 2);
    }

    #[test]
    fn an_ops_pieces_count_up_to_the_first_short_one() {
        let moved = |moved, asked| Ok(Piece::Moved { moved, asked });
        let mut pieces: [Result<Piece, OpError>; MAX_SMB_IN_FLIGHT] =
            std::array::from_fn(|_| Ok(Piece::None));
        assert_eq!(whole_prefix(pieces).unwrap(), (0, false));
        pieces = std::array::from_fn(|_| Ok(Piece::None));
        pieces[0] = moved(10, 10);
        pieces[1] = moved(7, 10);
        // Past a short piece nothing counts (the file ended there).
        pieces[2] = moved(10, 10);
        assert_eq!(whole_prefix(pieces).unwrap(), (17, true));
        pieces = std::array::from_fn(|_| Ok(Piece::None));
        pieces[0] = moved(10, 10);
        pieces[1] = moved(4, 4);
        assert_eq!(whole_prefix(pieces).unwrap(), (14, false));
        pieces = std::array::from_fn(|_| Ok(Piece::None));
        pieces[0] = moved(10, 10);
        pieces[1] = Err(OpError::errno(crate::errno::ENOSPC));
        assert_eq!(
            whole_prefix(pieces).unwrap_err().errno,
            crate::errno::ENOSPC
        );
    }

    #[test]
    fn read_data_is_where_the_response_says() {
        let mut body = vec![17, 0, 0x50, 0, 5, 0, 0, 0];
        body.extend_from_slice(&[0; 8]);
        body.extend_from_slice(b"hello, and more");
        assert_eq!(read_data(&body).unwrap(), b"hello");
        // An offset further on, as a server may choose.
        body[2] = 0x52;
        assert_eq!(read_data(&body).unwrap(), b"llo, ");
        body[4] = 100;
        assert!(
            read_data(&body)
                .unwrap_err()
                .to_string()
                .contains("past its end")
        );
        body[0] = 9;
        assert!(read_data(&body).is_err());
        assert!(read_data(&[17, 0]).is_err());
        body[0] = 17;
        body[4] = 0;
        assert_eq!(read_data(&body).unwrap(), b"");
    }
}
