//! Several READs and WRITEs in flight on one NFSv3 connection (a queue depth above 1),
//! as Linux's RPC slot table keeps them: each call has its own XID, the calls go out one
//! after another on the stream's connection without waiting, and the replies are
//! matched to them by XID in whatever order the server sends them.
//!
//! An op of more than the server's largest READ or WRITE is several calls, all in
//! flight together. The calls queued since the last wait go out together in
//! [`NfsQueue::reap`], which then reads replies until enough ops have completed; calls
//! still unanswered go on being answered in the later waits. A connection that breaks
//! under the queue is made again and every call not yet answered is sent again on the
//! new one (READ and WRITE are idempotent; a WRITE sent again may get a new verifier,
//! which the file's COMMIT then reads as writes the server may have lost).

use std::collections::HashMap;
use std::io::Cursor;

use nfs3_client::RpcError;
use nfs3_client::nfs3_types::nfs3::{
    NFS_PROGRAM, Nfs3Result, PROGRAM, READ3args, READ3resfail, VERSION, WRITE3args, WRITE3res,
    nfs_fh3, nfsstat3, post_op_attr, stable_how, writeverf3,
};
use nfs3_client::nfs3_types::rpc::{
    RPC_VERSION_2, accept_stat_data, call_body, msg_body, opaque_auth, reply_body, rpc_msg,
};
use nfs3_client::nfs3_types::xdr_codec::{Opaque, Pack, Unpack};
use tokio::io::Interest;
use tokio::net::TcpStream;

use super::session::{Call as _, Session, broken, rpc_error, status_error};
use naslab_backend::{Handle, OpError};

/// The size of each read from the socket while no larger reply is awaited.
const READ_CHUNK: usize = 256 << 10;

/// One READ or WRITE call: its part of an op.
#[derive(Debug, Clone, Copy)]
struct Piece {
    /// The op's place in [`NfsQueue::ops`].
    op: usize,
    /// Where the piece starts in the op's buffer.
    at: usize,
    len: usize,
}

/// One op in flight.
struct Op {
    tag: u64,
    handle: Handle,
    write: bool,
    fh: nfs_fh3,
    offset: u64,
    len: usize,
    /// The op's buffer: filled by a read, sent by a write.
    buf: *mut u8,
    stable: stable_how,
    /// Calls not yet answered.
    left: usize,
    /// The end of the first piece that moved fewer bytes than it asked: the op moved
    /// the bytes before it (the end of the file, a full disk).
    short: Option<usize>,
    error: Option<OpError>,
    /// The first write verifier its replies carried, and whether another differed.
    verf: Option<writeverf3>,
    mixed: bool,
}

/// A completed op, as the backend books it.
pub(super) struct Reaped {
    pub(super) tag: u64,
    pub(super) handle: Handle,
    /// The bytes moved, or the failure.
    pub(super) result: Result<usize, OpError>,
    /// For a write: how it was sent, its verifier and whether its replies disagreed.
    pub(super) write: Option<(stable_how, Option<writeverf3>, bool)>,
}

/// The reads and writes of one stream in flight on its NFS connection.
pub(super) struct NfsQueue {
    ops: Vec<Option<Op>>,
    free_ops: Vec<usize>,
    /// Calls queued and not yet sent (or to be sent again on a new connection).
    unsent: Vec<Piece>,
    /// Calls sent and not yet answered, by XID.
    sent: HashMap<u32, Piece>,
    next_xid: u32,
    /// Calls packed and not yet all written to the socket, from `out_at` on.
    out: Vec<u8>,
    out_at: usize,
    /// Bytes read from the socket and not yet taken as replies.
    inbuf: Vec<u8>,
    in_len: usize,
    /// Set when the queue failed: the ops it held complete with this error.
    failed: Option<OpError>,
}

// SAFETY: a queue belongs to one stream's backend and is used on that stream's thread
// only; the raw buffers it holds belong to ops the stream keeps until they are reaped.
unsafe impl Send for NfsQueue {}

impl Default for NfsQueue {
    fn default() -> Self {
        NfsQueue {
            ops: Vec::new(),
            free_ops: Vec::new(),
            unsent: Vec::new(),
            sent: HashMap::new(),
            next_xid: first_xid(),
            out: Vec::new(),
            out_at: 0,
            inbuf: Vec::new(),
            in_len: 0,
            failed: None,
        }
    }
}

/// Where a queue's XIDs start: apart from the crate's own calls on the connection (which
/// start at a random XID too) and from an earlier stream's, whose calls a server's
/// duplicate request cache may still hold.
fn first_xid() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() ^ (d.as_secs() as u32).rotate_left(7))
        .unwrap_or(0);
    nanos ^ std::process::id().rotate_left(16) ^ 0x5a5a_0000
}

impl NfsQueue {
    /// Whether no op is in flight.
    pub(super) fn is_empty(&self) -> bool {
        self.ops.len() == self.free_ops.len()
    }

    /// Queues an op of `len` bytes at `offset`, in calls of at most `max` bytes.
    ///
    /// # Safety
    /// `buf` must stay valid for `len` bytes (and, for a read, unused by anything else)
    /// until the op has been reaped or the queue dropped.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn push(
        &mut self,
        write: bool,
        handle: Handle,
        fh: nfs_fh3,
        stable: stable_how,
        offset: u64,
        buf: *mut u8,
        len: usize,
        max: usize,
        tag: u64,
    ) {
        let max = max.max(1);
        let pieces = len.div_ceil(max).max(1);
        let op = Op {
            tag,
            handle,
            write,
            fh,
            offset,
            len,
            buf,
            stable,
            left: pieces,
            short: None,
            error: None,
            verf: None,
            mixed: false,
        };
        let i = match self.free_ops.pop() {
            Some(i) => {
                self.ops[i] = Some(op);
                i
            }
            None => {
                self.ops.push(Some(op));
                self.ops.len() - 1
            }
        };
        for p in 0..pieces {
            let at = p * max;
            self.unsent.push(Piece {
                op: i,
                at,
                len: (len - at).min(max),
            });
        }
    }

    /// Sends what was queued and reads replies until at least `min` ops have completed
    /// (all of them, if fewer are in flight), each wait within the session's I/O
    /// timeout; a connection that broke is made again and the calls not yet answered
    /// sent again on it. Gives the completed ops; an error when the queue failed, after
    /// which every op it held completes with that error.
    pub(super) fn reap(
        &mut self,
        session: &mut Session,
        min: usize,
        done: &mut Vec<Reaped>,
    ) -> Result<(), OpError> {
        if let Some(e) = self.failed.clone() {
            self.fail_all(&e, done);
            return Ok(());
        }
        let in_flight = self.ops.len() - self.free_ops.len();
        let want = done.len() + min.min(in_flight);
        session.begin_op();
        let mut redone = false;
        loop {
            let need = want.saturating_sub(done.len());
            // With --retrans-timeout, a wait in which no op completed for that long takes
            // the connection for broken, as a request alone does.
            let r = session.w.call_retrans(
                session.retrans,
                self.drive(&session.stream, &session.cred, need, done),
            );
            match r {
                Ok(()) => {
                    session.end_recovery(redone);
                    return Ok(());
                }
                Err(e) if broken(&e) => {
                    self.resend_all();
                    if let Err(e) = session.recover(e) {
                        session.end_recovery(redone);
                        return Err(self.fail(rpc_error(e)));
                    }
                    redone = true;
                }
                Err(e) => {
                    session.end_recovery(redone);
                    // Replies may still come for calls this queue gave up: nothing more
                    // is sent on the connection.
                    session.w.mark_dead();
                    return Err(self.fail(rpc_error(e)));
                }
            }
        }
    }

    /// The queue failed with `e`: its ops complete with it at the next reap.
    fn fail(&mut self, e: OpError) -> OpError {
        self.failed = Some(e.clone());
        e
    }

    /// Completes every op in flight with `e`.
    fn fail_all(&mut self, e: &OpError, done: &mut Vec<Reaped>) {
        self.unsent.clear();
        self.sent.clear();
        for i in 0..self.ops.len() {
            if let Some(op) = self.ops[i].take() {
                self.free_ops.push(i);
                done.push(Reaped {
                    tag: op.tag,
                    handle: op.handle,
                    result: Err(e.clone()),
                    write: None,
                });
            }
        }
    }

    /// After the connection broke: every call not yet answered goes out again, in the
    /// order they were first sent, and nothing half-read or half-written is kept.
    fn resend_all(&mut self) {
        let mut again: Vec<(u32, Piece)> = self.sent.drain().collect();
        // XIDs rise by one per call, wrapping: order them from the oldest.
        let base = self.next_xid;
        again.sort_by_key(|(xid, _)| xid.wrapping_sub(base));
        let mut pieces: Vec<Piece> = again.into_iter().map(|(_, p)| p).collect();
        pieces.append(&mut self.unsent);
        self.unsent = pieces;
        self.out.clear();
        self.out_at = 0;
        self.in_len = 0;
    }

    /// Packs one call into `out`, with its record mark.
    fn pack_call(&mut self, p: Piece, cred: &opaque_auth<'static>) -> Result<u32, RpcError> {
        let xid = self.next_xid;
        self.next_xid = self.next_xid.wrapping_add(1);
        let Some(op) = self.ops[p.op].as_mut() else {
            return Err(RpcError::WrongLength);
        };
        let proc = if op.write {
            NFS_PROGRAM::NFSPROC3_WRITE
        } else {
            NFS_PROGRAM::NFSPROC3_READ
        };
        let msg = rpc_msg {
            xid,
            body: msg_body::CALL(call_body {
                rpcvers: RPC_VERSION_2,
                prog: PROGRAM,
                vers: VERSION,
                proc: proc as u32,
                cred: cred.borrow(),
                verf: opaque_auth::default(),
            }),
        };
        let mark_at = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        msg.pack(&mut self.out)?;
        let offset = op.offset + p.at as u64;
        let file = std::mem::take(&mut op.fh);
        let packed = if op.write {
            // SAFETY: the op's `len` bytes at `buf` stay valid until it is reaped
            // (`push`'s contract), and `at..at + len` lies within them.
            let data = unsafe { std::slice::from_raw_parts(op.buf.add(p.at), p.len) };
            let args = WRITE3args {
                file,
                offset,
                count: p.len as u32,
                stable: op.stable,
                data: Opaque::borrowed(data),
            };
            let r = args.pack(&mut self.out);
            op.fh = args.file;
            r
        } else {
            let args = READ3args {
                file,
                offset,
                count: p.len as u32,
            };
            let r = args.pack(&mut self.out);
            op.fh = args.file;
            r
        };
        packed?;
        let len = self.out.len() - mark_at - 4;
        let mark = u32::try_from(len).map_err(|_| RpcError::WrongLength)? | 0x8000_0000;
        self.out[mark_at..mark_at + 4].copy_from_slice(&mark.to_be_bytes());
        Ok(xid)
    }

    /// Sends the calls queued, then writes what is left of them and reads replies as
    /// the socket allows, until `need` more ops have completed.
    async fn drive(
        &mut self,
        stream: &TcpStream,
        cred: &opaque_auth<'static>,
        need: usize,
        done: &mut Vec<Reaped>,
    ) -> Result<(), RpcError> {
        for p in std::mem::take(&mut self.unsent) {
            let xid = self.pack_call(p, cred)?;
            self.sent.insert(xid, p);
        }
        let mut got = 0usize;
        // With nothing to wait for, the calls still go out.
        while got < need || (need == 0 && self.out_at < self.out.len()) {
            let sending = self.out_at < self.out.len();
            let interest = if sending {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            let ready = stream.ready(interest).await?;
            if sending && ready.is_writable() {
                match stream.try_write(&self.out[self.out_at..]) {
                    Ok(n) => self.out_at += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e.into()),
                }
                if self.out_at == self.out.len() {
                    self.out.clear();
                    self.out_at = 0;
                }
            }
            if ready.is_readable() {
                if self.inbuf.len() - self.in_len < READ_CHUNK / 4 {
                    self.inbuf.resize(self.in_len + READ_CHUNK, 0);
                }
                match stream.try_read(&mut self.inbuf[self.in_len..]) {
                    Ok(0) => {
                        return Err(std::io::Error::from(std::io::ErrorKind::UnexpectedEof).into());
                    }
                    Ok(n) => self.in_len += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e.into()),
                }
                got += self.take_replies(done)?;
            }
        }
        Ok(())
    }

    /// Takes every whole reply read so far; gives how many ops they completed.
    fn take_replies(&mut self, done: &mut Vec<Reaped>) -> Result<usize, RpcError> {
        let mut inbuf = std::mem::take(&mut self.inbuf);
        let mut at = 0usize;
        let mut completed = 0usize;
        let r = loop {
            let have = self.in_len - at;
            if have < 4 {
                break Ok(());
            }
            let mark = u32::from_be_bytes([inbuf[at], inbuf[at + 1], inbuf[at + 2], inbuf[at + 3]]);
            if mark & 0x8000_0000 == 0 {
                // The server splits no reply into fragments (ganesha, Linux's nfsd).
                break Err(RpcError::FragmentedReply);
            }
            let len = (mark & 0x7fff_ffff) as usize;
            if have < 4 + len {
                // Room for the whole reply, so that it is read in as few reads as may be.
                let room = 4 + len;
                if inbuf.len() - at < room {
                    inbuf.copy_within(at..self.in_len, 0);
                    self.in_len -= at;
                    at = 0;
                    if inbuf.len() < room {
                        inbuf.resize(room, 0);
                    }
                }
                break Ok(());
            }
            match self.take_reply(&inbuf[at + 4..at + 4 + len], done) {
                Ok(n) => completed += n,
                Err(e) => break Err(e),
            }
            at += 4 + len;
        };
        if at > 0 {
            inbuf.copy_within(at..self.in_len, 0);
            self.in_len -= at;
        }
        self.inbuf = inbuf;
        r.map(|()| completed)
    }

    /// Takes one reply: its piece's result goes to its op, which completes with its
    /// last piece. Gives 1 when it completed an op.
    fn take_reply(&mut self, record: &[u8], done: &mut Vec<Reaped>) -> Result<usize, RpcError> {
        let mut c = Cursor::new(record);
        let (msg, _) = rpc_msg::unpack(&mut c)?;
        let Some(p) = self.sent.remove(&msg.xid) else {
            return Err(RpcError::UnexpectedXid);
        };
        let accepted = match msg.body {
            msg_body::REPLY(reply_body::MSG_ACCEPTED(r)) => Ok(r),
            msg_body::REPLY(reply_body::MSG_DENIED(r)) => Err(RpcError::from(r)),
            msg_body::CALL(_) => return Err(RpcError::UnexpectedCall),
        };
        let Some(op) = self.ops[p.op].as_mut() else {
            return Err(RpcError::UnexpectedXid);
        };
        let outcome = match accepted {
            Ok(r) if matches!(r.reply_data, accept_stat_data::SUCCESS) => {
                if op.write {
                    take_write(&mut c, op, p)?
                } else {
                    take_read(&mut c, op, p)?
                }
            }
            Ok(r) => match RpcError::try_from(r.reply_data) {
                Ok(e) => Err(rpc_error(e)),
                Err(_) => Err(rpc_error(RpcError::WrongLength)),
            },
            Err(e) => Err(rpc_error(e)),
        };
        match outcome {
            Ok(moved) if moved < p.len => {
                let end = p.at + moved;
                op.short = Some(op.short.map_or(end, |s| s.min(end)));
            }
            Ok(_) => {}
            Err(e) => {
                op.error.get_or_insert(e);
            }
        }
        op.left -= 1;
        if op.left > 0 {
            return Ok(0);
        }
        let Some(op) = self.ops[p.op].take() else {
            return Ok(0);
        };
        self.free_ops.push(p.op);
        let result = match op.error {
            Some(e) => Err(e),
            None => Ok(op.short.unwrap_or(op.len)),
        };
        done.push(Reaped {
            tag: op.tag,
            handle: op.handle,
            result,
            write: op.write.then_some((op.stable, op.verf, op.mixed)),
        });
        Ok(1)
    }
}

/// A READ reply's results: the data goes straight into the op's buffer. Gives the
/// bytes copied, or the server's refusal.
fn take_read(
    c: &mut Cursor<&[u8]>,
    op: &mut Op,
    p: Piece,
) -> Result<Result<usize, OpError>, RpcError> {
    let (status, _) = nfsstat3::unpack(c)?;
    if status != nfsstat3::NFS3_OK {
        READ3resfail::unpack(c)?;
        return Ok(Err(status_error(status)));
    }
    post_op_attr::unpack(c)?;
    let _count = u32::unpack(c)?;
    let _eof = bool::unpack(c)?;
    let (len, _) = u32::unpack(c)?;
    let len = len as usize;
    let at = c.position() as usize;
    let data = c.get_ref().get(at..at + len).ok_or(RpcError::WrongLength)?;
    let copied = len.min(p.len);
    // SAFETY: the op's `len` bytes at `buf` belong to it alone until it is reaped
    // (`push`'s contract), and `at..at + p.len` lies within them.
    let into = unsafe { std::slice::from_raw_parts_mut(op.buf.add(p.at), p.len) };
    into[..copied].copy_from_slice(&data[..copied]);
    Ok(Ok(copied))
}

/// A WRITE reply's results: the bytes the server took, and its verifier.
fn take_write(
    c: &mut Cursor<&[u8]>,
    op: &mut Op,
    p: Piece,
) -> Result<Result<usize, OpError>, RpcError> {
    match WRITE3res::unpack(c)?.0 {
        Nfs3Result::Ok(ok) => {
            op.mixed |= op.verf.is_some_and(|v| v != ok.verf);
            op.verf.get_or_insert(ok.verf);
            Ok(Ok((ok.count as usize).min(p.len)))
        }
        Nfs3Result::Err((s, _)) => Ok(Err(status_error(s))),
    }
}
