//! A TCP relay between naslab and a lab's server that reads the protocol's framing on
//! the way through and counts the requests the server holds at each moment: requests
//! forwarded to the server minus the replies it sent back, matched by their ids. It
//! sees the wire, not naslab's own bookkeeping.
//!
//! - ONC RPC (NFS): record marking (a 4-byte mark, the high bit ending a record); a
//!   call's and a reply's XID and message type open the record.
//! - SMB2: NetBIOS session framing (a zero byte and a 3-byte length); each message of
//!   a compound is counted by its MessageId; an interim STATUS_PENDING response is not
//!   the request's answer; a CANCEL has none; an oplock break (MessageId all ones) is
//!   no answer to anything. Encrypted (transform) and compressed messages cannot be
//!   read: they are counted apart, so that a test can insist on plain headers.
//!
//! Each chunk read from one side is scanned whole (every request in it counted) before
//! any of it is forwarded, so a reply can never be seen before the request it answers
//! was counted; requests that follow within half a millisecond join the chunk, so that
//! a burst the client wrote one request at a time is counted whole before the server
//! can answer its first.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// How the protocol frames its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    OncRpc,
    Smb2,
}

/// What the relay saw since it started or was last reset.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// Requests forwarded to the server.
    pub requests: u64,
    /// Final replies returned to the client that answered a request in flight.
    pub replies: u64,
    /// SMB2 interim responses (STATUS_PENDING).
    pub interim: u64,
    /// Replies that matched no request in flight.
    pub unmatched: u64,
    /// Messages whose headers could not be read (SMB2 encrypted or compressed).
    pub opaque: u64,
    /// The most requests in flight at once, over all the relay's connections.
    pub max_outstanding: usize,
    /// The requests in flight at that moment: each one's connection and command (the
    /// SMB2 command code; the RPC procedure number).
    pub held_at_max: Vec<(u64, u32)>,
    /// The most READ requests in flight at once on one connection.
    pub max_reads_outstanding: usize,
    /// Requests by command (the SMB2 command code; the RPC procedure number).
    pub by_command: std::collections::BTreeMap<u32, u64>,
    /// The most WRITE requests in flight at once on one connection.
    pub max_writes_outstanding: usize,
}

#[derive(Default)]
struct Book {
    framing: Option<Framing>,
    /// Both sockets of each connection relayed, to break them at once.
    conns: Vec<(TcpStream, TcpStream)>,
    /// Breaks every connection when this many READs have been counted.
    cut_at_reads: Option<u64>,
    /// Black-holes every connection when this many READs have been counted.
    hole_at_reads: Option<u64>,
    /// Connections black-holed: what they carry is read and dropped.
    held: std::collections::HashSet<u64>,
    /// Connections accepted so far (their ids run from 0).
    opened: u64,
    reads: u64,
    /// Connections broken so far.
    cuts: u64,
    counts: Counts,
    /// Requests in flight, by connection and id, with their command.
    outstanding: HashMap<(u64, u64), u32>,
}

/// A relay listening on a loopback port of its own, forwarding to `upstream`.
pub struct Relay {
    port: u16,
    book: Arc<Mutex<Book>>,
    stop: Arc<AtomicBool>,
    accept: Option<JoinHandle<()>>,
}

impl Relay {
    /// Starts relaying from a new loopback port to `127.0.0.1:upstream`.
    pub fn start(upstream: u16, framing: Framing) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let book = Arc::new(Mutex::new(Book {
            framing: Some(framing),
            ..Book::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let next_conn = Arc::new(AtomicU64::new(0));
        let accept = {
            let (book, stop) = (Arc::clone(&book), Arc::clone(&stop));
            std::thread::spawn(move || {
                for client in listener.incoming() {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(client) = client else { continue };
                    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                        continue;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let conn = next_conn.fetch_add(1, Ordering::Relaxed);
                    {
                        let mut b = book.lock().unwrap();
                        b.opened = conn + 1;
                        if let (Ok(c), Ok(s)) = (client.try_clone(), server.try_clone()) {
                            b.conns.push((c, s));
                        }
                    }
                    for (from, to, requests) in [
                        (
                            client.try_clone().unwrap(),
                            server.try_clone().unwrap(),
                            true,
                        ),
                        (server, client, false),
                    ] {
                        let book = Arc::clone(&book);
                        std::thread::spawn(move || {
                            pump(from, to, framing, requests, conn, &book);
                        });
                    }
                }
            })
        };
        Relay {
            port,
            book,
            stop,
            accept: Some(accept),
        }
    }

    /// The port naslab connects to instead of the server's.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// What it saw so far.
    pub fn counts(&self) -> Counts {
        self.book.lock().unwrap().counts.clone()
    }

    /// Starts counting afresh (requests still in flight stay in flight).
    pub fn reset(&self) {
        self.book.lock().unwrap().counts = Counts::default();
    }

    /// Breaks every connection it relays (both ends closed, what was read and not yet
    /// forwarded dropped) as soon as it has counted `reads` more READ requests: a path
    /// cut under requests in flight. New connections are relayed as before.
    pub fn cut_after_reads(&self, reads: u64) {
        let mut b = self.book.lock().unwrap();
        b.cut_at_reads = Some(b.reads + reads);
    }

    /// Black-holes every connection it relays as soon as it has counted `reads` more
    /// READ requests: from then on what either side sends on them is read and dropped
    /// (the connections stay open), as a path that went silent. New connections are
    /// relayed as before.
    pub fn black_hole_after_reads(&self, reads: u64) {
        let mut b = self.book.lock().unwrap();
        b.hole_at_reads = Some(b.reads + reads);
    }

    /// How many times it broke or black-holed the connections.
    pub fn cuts(&self) -> u64 {
        self.book.lock().unwrap().cuts
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accepting thread, which then sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}

/// How long the relay waits for more of a burst of requests before forwarding it.
const COALESCE: std::time::Duration = std::time::Duration::from_micros(500);

/// Forwards `from` to `to`, counting each whole message of the chunks it reads before
/// forwarding them: requests when `requests`, replies otherwise.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    framing: Framing,
    requests: bool,
    conn: u64,
    book: &Mutex<Book>,
) {
    let mut pending: Vec<u8> = Vec::new();
    // Where the next message's frame starts in `pending`.
    let mut scanned = 0usize;
    // ONC RPC: the XID and type of the record under way (its first fragment's).
    let mut record: Option<(u32, u32, u32)> = None;
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        pending.extend_from_slice(&chunk[..n]);
        if requests {
            // A burst of requests written one after another (an SMB client writes each
            // on its own) is taken whole before any of it is counted and forwarded: what
            // follows within COALESCE joins it. This can only hold requests back, never
            // make the server see more at once than the client sent without waiting.
            let _ = from.set_read_timeout(Some(COALESCE));
            while pending.len() < (8 << 20) {
                match from.read(&mut chunk) {
                    Ok(n) if n > 0 => pending.extend_from_slice(&chunk[..n]),
                    _ => break,
                }
            }
            let _ = from.set_read_timeout(None);
        }
        let cut = {
            let mut b = book.lock().unwrap();
            while let Some((len, body)) = frame(framing, &pending[scanned..]) {
                match framing {
                    Framing::OncRpc => rpc_message(&mut b, conn, requests, body, len, &mut record),
                    Framing::Smb2 => smb_message(&mut b, conn, requests, body),
                }
                scanned += 4 + len;
            }
            if b.hole_at_reads.is_some_and(|at| b.reads >= at) {
                b.hole_at_reads = None;
                b.cuts += 1;
                let opened = b.opened;
                b.held.extend(0..opened);
            }
            let held = b.held.contains(&conn);
            let cut = b.cut_at_reads.is_some_and(|at| b.reads >= at);
            if cut {
                b.cut_at_reads = None;
                b.cuts += 1;
                for (c, s) in b.conns.drain(..) {
                    let _ = c.shutdown(Shutdown::Both);
                    let _ = s.shutdown(Shutdown::Both);
                }
            }
            if held {
                // Nothing goes through: dropped as it came.
                pending.clear();
                scanned = 0;
                continue;
            }
            cut
        };
        if cut || to.write_all(&pending[..scanned]).is_err() {
            break;
        }
        pending.drain(..scanned);
        scanned = 0;
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}

/// The length of the frame at the start of `buf` and its body, once it is whole.
fn frame(framing: Framing, buf: &[u8]) -> Option<(usize, &[u8])> {
    if buf.len() < 4 {
        return None;
    }
    let len = match framing {
        Framing::OncRpc => {
            (u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) & 0x7fff_ffff) as usize
        }
        Framing::Smb2 => u32::from_be_bytes([0, buf[1], buf[2], buf[3]]) as usize,
    };
    (buf.len() >= 4 + len).then(|| (len, &buf[..4 + len]))
}

/// One ONC RPC fragment (`frag`, with its mark): a record's first fragment names its
/// XID and type; its last one completes it.
fn rpc_message(
    b: &mut Book,
    conn: u64,
    requests: bool,
    frag: &[u8],
    _len: usize,
    record: &mut Option<(u32, u32, u32)>,
) {
    let last = frag[0] & 0x80 != 0;
    let body = &frag[4..];
    if record.is_none() && body.len() >= 8 {
        let word = |i: usize| u32::from_be_bytes([body[i], body[i + 1], body[i + 2], body[i + 3]]);
        // A call's procedure follows its RPC version, program and program version.
        let proc = if body.len() >= 24 { word(20) } else { 0 };
        // An NFSv4 COMPOUND is told by what it does after SEQUENCE and PUTFH.
        let proc = match (word(4), body.len() >= 24 && word(16) == 4 && proc == 1) {
            (0, true) => v4_op(body).map_or(proc, |op| V4_OP + op),
            _ => proc,
        };
        *record = Some((word(0), word(4), proc));
    }
    if !last {
        return;
    }
    let Some((xid, kind, proc)) = record.take() else {
        return;
    };
    match (requests, kind) {
        (true, 0) => request(b, conn, u64::from(xid), proc),
        (false, 1) => reply(b, conn, u64::from(xid)),
        _ => b.counts.unmatched += 1,
    }
}

/// Where an NFSv4 COMPOUND's op numbers start among the commands counted: the op after
/// its SEQUENCE and PUTFH.
pub const V4_OP: u32 = 1000;
const OP_SEQUENCE: u32 = 53;
const OP_PUTFH: u32 = 22;
/// NFSv4's READ and WRITE ops.
const OP_READ: u32 = 25;
const OP_WRITE: u32 = 38;

/// The op an NFSv4 COMPOUND call does after its SEQUENCE and PUTFH (its first other op).
fn v4_op(call: &[u8]) -> Option<u32> {
    let word = |i: usize| -> Option<u32> {
        call.get(i..i + 4)
            .map(|w| u32::from_be_bytes([w[0], w[1], w[2], w[3]]))
    };
    let padded = |n: u32| (n as usize).div_ceil(4) * 4;
    // xid, type, rpcvers, prog, vers, proc; then the credential and the verifier.
    let mut at = 24;
    for _ in 0..2 {
        let len = word(at + 4)?;
        at += 8 + padded(len);
    }
    // The tag, the minor version, the number of ops.
    let tag = word(at)?;
    at += 4 + padded(tag) + 8;
    loop {
        let op = word(at)?;
        at += 4;
        match op {
            // Session id, sequence id, slot, highest slot, cache this.
            OP_SEQUENCE => at += 16 + 16,
            OP_PUTFH => at += 4 + padded(word(at)?),
            other => return Some(other),
        }
    }
}

const STATUS_PENDING: u32 = 0x0000_0103;
const FLAG_RESPONSE: u32 = 0x1;
const FLAG_ASYNC: u32 = 0x2;
const CANCEL: u16 = 0x000C;

/// One NetBIOS frame (`frame`, with its header) of SMB2 messages, a compound's chained
/// by their NextCommand offsets.
fn smb_message(b: &mut Book, conn: u64, requests: bool, frame: &[u8]) {
    let msg = &frame[4..];
    if msg.len() < 4 || msg[1..4] != *b"SMB" || msg[0] != 0xFE {
        b.counts.opaque += 1;
        return;
    }
    let mut at = 0usize;
    loop {
        let Some(h) = msg.get(at..at + 64) else {
            b.counts.opaque += 1;
            return;
        };
        let u32_at = |o: usize| u32::from_le_bytes([h[o], h[o + 1], h[o + 2], h[o + 3]]);
        let status = u32_at(8);
        let command = u16::from_le_bytes([h[12], h[13]]);
        let flags = u32_at(16);
        let next = u32_at(20) as usize;
        let mut id = [0u8; 8];
        id.copy_from_slice(&h[24..32]);
        let id = u64::from_le_bytes(id);
        if requests {
            if command != CANCEL {
                request(b, conn, id, u32::from(command));
            }
        } else if flags & FLAG_RESPONSE != 0 {
            if status == STATUS_PENDING && flags & FLAG_ASYNC != 0 {
                b.counts.interim += 1;
            } else if id != u64::MAX {
                reply(b, conn, id);
            }
        }
        if next == 0 {
            return;
        }
        at += next;
    }
}

fn request(b: &mut Book, conn: u64, id: u64, command: u32) {
    b.counts.requests += 1;
    *b.counts.by_command.entry(command).or_default() += 1;
    b.outstanding.insert((conn, id), command);
    if b.outstanding.len() > b.counts.max_outstanding {
        b.counts.max_outstanding = b.outstanding.len();
        let mut held: Vec<(u64, u32)> = b.outstanding.iter().map(|(&(c, _), &k)| (c, k)).collect();
        held.sort();
        b.counts.held_at_max = held;
    }
    // READ: SMB2 command 8, NFSv3 procedure 6, an NFSv4 COMPOUND that reads; WRITE:
    // SMB2 command 9, NFSv3 procedure 7, a COMPOUND that writes.
    let read = |k: u32| match b.framing {
        Some(Framing::Smb2) => k == 8,
        _ => k == 6 || k == V4_OP + OP_READ,
    };
    let write = |k: u32| match b.framing {
        Some(Framing::Smb2) => k == 9,
        _ => k == 7 || k == V4_OP + OP_WRITE,
    };
    let on_conn = |is: &dyn Fn(u32) -> bool| {
        b.outstanding
            .iter()
            .filter(|&(&(c, _), &k)| c == conn && is(k))
            .count()
    };
    if read(command) {
        let n = on_conn(&read);
        b.reads += 1;
        b.counts.max_reads_outstanding = b.counts.max_reads_outstanding.max(n);
    } else if write(command) {
        let n = on_conn(&write);
        b.counts.max_writes_outstanding = b.counts.max_writes_outstanding.max(n);
    }
}

fn reply(b: &mut Book, conn: u64, id: u64) {
    if b.outstanding.remove(&(conn, id)).is_some() {
        b.counts.replies += 1;
    } else {
        b.counts.unmatched += 1;
    }
}

/// The most ops of `kinds` in flight at once by the op records' issue and completion
/// times (a completion at the very moment of an issue ends first).
pub fn max_in_flight(records: &std::path::Path, kinds: &[naslab_trace::OpKind]) -> usize {
    let mut edges: Vec<(u64, i32)> = Vec::new();
    for rec in naslab_trace::open_trace(records).unwrap() {
        if let naslab_trace::Record::Op(op, Some(m)) = rec.unwrap()
            && kinds.contains(&op.kind)
        {
            edges.push((m.issued_ns, 1));
            edges.push((m.done_ns, -1));
        }
    }
    edges.sort();
    let (mut now, mut max) = (0i32, 0i32);
    for (_, d) in edges {
        now += d;
        max = max.max(now);
    }
    max as usize
}
