//! Spool I/O off the measured threads: one thread per replay reads the streams' op
//! spools ahead of them and writes their measurement spools behind them, so a stream
//! thread's only system calls during the measured phase are the workload's own ops
//! (and, when a chunk changes hands, a futex wake).
//!
//! Each reader and writer owns two chunks: it works in one while the I/O thread fills
//! or drains the other, so memory stays at four chunks per stream however long the run.
//!
//! A measurement spool can be followed while it is written: its [`Landing`] says how
//! many measurements are on file, so the op records are written during the replay.

use std::fs::File;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};

use naslab_trace::Measured;

use crate::spool::{CompiledOp, MEASURED_SIZE, OP_SIZE, Spool, encode_measured};

/// What the I/O thread is asked to do.
enum Job {
    /// Read up to `buf.capacity()` bytes at `offset` (fewer at the spool's end).
    Read {
        file: Arc<File>,
        offset: u64,
        len: usize,
        buf: Vec<u8>,
        reply: Sender<std::io::Result<Vec<u8>>>,
    },
    /// Write `buf` at `offset`, then hand the emptied buffer back (and say that its
    /// measurements landed).
    Write {
        file: Arc<File>,
        offset: u64,
        buf: Vec<u8>,
        reply: Sender<std::io::Result<Vec<u8>>>,
        landing: Option<Arc<Landing>>,
    },
}

/// A measurement spool as it lands: how many measurements are on file, and whether its
/// stream is done with it. Made before the replay, one per stream, for whoever follows
/// the spools while the streams write them.
#[derive(Default)]
pub struct Landing {
    state: Mutex<Landed>,
    changed: Condvar,
}

/// What a [`Landing`] has seen so far.
#[derive(Clone, Default)]
pub(crate) struct Landed {
    /// The spool's file, once the stream made it.
    pub file: Option<Arc<File>>,
    /// Measurements on file, from the first.
    pub records: u64,
    /// `Some(true)` once every measurement is on file, `Some(false)` when the stream
    /// ended without keeping them all (it failed, or never started).
    pub ended: Option<bool>,
}

impl Landing {
    fn update(&self, change: impl FnOnce(&mut Landed)) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut state);
        self.changed.notify_all();
    }

    fn opened(&self, file: &Arc<File>) {
        self.update(|l| l.file = Some(Arc::clone(file)));
    }

    fn landed(&self, records: u64) {
        self.update(|l| l.records += records);
    }

    /// Marks the spool ended, unless it already was: `whole` when every measurement is
    /// on file.
    pub(crate) fn end(&self, whole: bool) {
        self.update(|l| {
            l.ended.get_or_insert(whole);
        });
    }

    /// Waits until more than `seen` measurements are on file, or the spool has ended.
    pub(crate) fn wait_past(&self, seen: u64) -> Landed {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = self
            .changed
            .wait_while(state, |l| l.records <= seen && l.ended.is_none())
            .unwrap_or_else(|e| e.into_inner());
        state.clone()
    }
}

/// A handle for queuing spool I/O; clone one per stream.
#[derive(Clone)]
pub struct SpoolIo {
    jobs: Sender<Job>,
}

/// The I/O thread's body: does jobs until every [`SpoolIo`] is dropped.
pub struct SpoolIoWorker {
    jobs: Receiver<Job>,
}

impl SpoolIoWorker {
    /// Runs the jobs in the order they come.
    pub fn run(self) {
        for job in self.jobs {
            match job {
                Job::Read {
                    file,
                    offset,
                    len,
                    mut buf,
                    reply,
                } => {
                    buf.resize(len, 0);
                    let r = crate::positioned::read_exact_at(&file, &mut buf, offset).map(|()| buf);
                    let _ = reply.send(r);
                }
                Job::Write {
                    file,
                    offset,
                    mut buf,
                    reply,
                    landing,
                } => {
                    let records = (buf.len() / MEASURED_SIZE) as u64;
                    let r = crate::positioned::write_all_at(&file, &buf, offset).map(|()| {
                        buf.clear();
                        buf
                    });
                    if let Some(l) = landing {
                        match r {
                            Ok(_) => l.landed(records),
                            Err(_) => l.end(false),
                        }
                    }
                    let _ = reply.send(r);
                }
            }
        }
    }
}

/// A spool I/O handle and the worker to run on its own thread.
pub fn spool_io() -> (SpoolIo, SpoolIoWorker) {
    let (jobs, rx) = mpsc::channel();
    (SpoolIo { jobs }, SpoolIoWorker { jobs: rx })
}

fn gone() -> std::io::Error {
    std::io::Error::other("the spool I/O thread stopped")
}

/// Reads an op spool, the next chunk being read ahead by the I/O thread.
pub struct PrefetchReader {
    io: SpoolIo,
    file: Arc<File>,
    chunk_bytes: usize,
    /// Bytes of the spool not yet asked for.
    next_offset: u64,
    end: u64,
    cur: Vec<u8>,
    pos: usize,
    ready: Receiver<std::io::Result<Vec<u8>>>,
    reply: Sender<std::io::Result<Vec<u8>>>,
    /// Chunks asked for and not yet taken.
    pending: usize,
}

impl PrefetchReader {
    /// A reader of `spool`'s ops from the first, in chunks of about `chunk_bytes`; the
    /// first two chunks are asked for at once.
    pub fn new(io: &SpoolIo, spool: &Spool, chunk_bytes: usize) -> std::io::Result<Self> {
        let (reply, ready) = mpsc::channel();
        let chunk_bytes = (chunk_bytes / OP_SIZE).max(1) * OP_SIZE;
        let mut r = PrefetchReader {
            io: io.clone(),
            file: Arc::new(spool.file().try_clone()?),
            chunk_bytes,
            next_offset: 0,
            end: spool.len() * OP_SIZE as u64,
            cur: Vec::new(),
            pos: 0,
            ready,
            reply,
            pending: 0,
        };
        r.ask(Vec::with_capacity(chunk_bytes))?;
        r.ask(Vec::with_capacity(chunk_bytes))?;
        Ok(r)
    }

    fn ask(&mut self, buf: Vec<u8>) -> std::io::Result<()> {
        if self.next_offset >= self.end {
            return Ok(());
        }
        let len = (self.end - self.next_offset).min(self.chunk_bytes as u64) as usize;
        self.io
            .jobs
            .send(Job::Read {
                file: Arc::clone(&self.file),
                offset: self.next_offset,
                len,
                buf,
                reply: self.reply.clone(),
            })
            .map_err(|_| gone())?;
        self.next_offset += len as u64;
        self.pending += 1;
        Ok(())
    }

    /// The next op, or `None` after the last.
    #[inline]
    pub fn next_op(&mut self) -> std::io::Result<Option<CompiledOp>> {
        if self.pos + OP_SIZE > self.cur.len() && !self.advance()? {
            return Ok(None);
        }
        let b: &[u8; OP_SIZE] = self.cur[self.pos..self.pos + OP_SIZE]
            .try_into()
            .expect("a whole op");
        self.pos += OP_SIZE;
        Ok(Some(CompiledOp::decode(b)))
    }

    /// Swaps in the next chunk (asking for the one after); false at the spool's end.
    #[cold]
    fn advance(&mut self) -> std::io::Result<bool> {
        if self.pending == 0 {
            return Ok(false);
        }
        let next = self.ready.recv().map_err(|_| gone())??;
        self.pending -= 1;
        let done = std::mem::replace(&mut self.cur, next);
        self.pos = 0;
        self.ask(done)?;
        Ok(self.cur.len() >= OP_SIZE)
    }
}

/// Appends measurements to a new spool, the I/O thread writing full chunks behind it.
pub struct BackgroundWriter {
    io: SpoolIo,
    file: Arc<File>,
    cur: Vec<u8>,
    /// Where the next chunk goes.
    offset: u64,
    count: u64,
    /// Emptied chunks coming back (and write errors).
    back: Receiver<std::io::Result<Vec<u8>>>,
    reply: Sender<std::io::Result<Vec<u8>>>,
    in_flight: usize,
    /// Told of every chunk on file, when someone follows the spool.
    landing: Option<Arc<Landing>>,
}

impl BackgroundWriter {
    /// A new spool in `dir`, written in chunks of `chunk_bytes`; `landing`, when given,
    /// is told of each chunk once it is on file, and of the end.
    pub fn new(
        io: &SpoolIo,
        dir: &std::path::Path,
        chunk_bytes: usize,
        landing: Option<Arc<Landing>>,
    ) -> std::io::Result<Self> {
        let (reply, back) = mpsc::channel();
        let chunk_bytes = (chunk_bytes / MEASURED_SIZE).max(2) * MEASURED_SIZE;
        // The second chunk waits in the return channel until the first fills.
        reply
            .send(Ok(Vec::with_capacity(chunk_bytes)))
            .map_err(|_| gone())?;
        let file = Arc::new(tempfile::tempfile_in(dir)?);
        if let Some(l) = &landing {
            l.opened(&file);
        }
        Ok(BackgroundWriter {
            io: io.clone(),
            file,
            cur: Vec::with_capacity(chunk_bytes),
            offset: 0,
            count: 0,
            back,
            reply,
            in_flight: 1,
            landing,
        })
    }

    /// Appends one measurement.
    #[inline]
    pub fn push_measured(&mut self, m: &Measured) -> std::io::Result<()> {
        let b = encode_measured(m);
        if self.cur.len() + b.len() > self.cur.capacity() {
            self.hand_over()?;
        }
        self.cur.extend_from_slice(&b);
        self.count += 1;
        Ok(())
    }

    /// Sends the full chunk to be written and takes an emptied one.
    #[cold]
    fn hand_over(&mut self) -> std::io::Result<()> {
        let spare = self.back.recv().map_err(|_| gone())??;
        let full = std::mem::replace(&mut self.cur, spare);
        self.send(full)?;
        Ok(())
    }

    fn send(&mut self, full: Vec<u8>) -> std::io::Result<()> {
        let len = full.len() as u64;
        self.io
            .jobs
            .send(Job::Write {
                file: Arc::clone(&self.file),
                offset: self.offset,
                buf: full,
                reply: self.reply.clone(),
                landing: self.landing.clone(),
            })
            .map_err(|_| gone())?;
        self.offset += len;
        Ok(())
    }

    /// Writes what is left and waits for every write; the spool can then be read.
    pub fn finish(mut self) -> std::io::Result<Spool> {
        let last = std::mem::take(&mut self.cur);
        if !last.is_empty() {
            self.send(last)?;
            self.in_flight += 1;
        }
        for _ in 0..self.in_flight {
            self.back.recv().map_err(|_| gone())??;
        }
        if let Some(l) = &self.landing {
            l.end(true);
        }
        // The writer still holds the file (a follower may too): the spool gets a handle of
        // its own.
        Ok(Spool::from_file(self.file.try_clone()?, self.count))
    }
}

impl Drop for BackgroundWriter {
    /// A writer dropped unfinished (its stream failed) leaves its spool incomplete.
    fn drop(&mut self) {
        if let Some(l) = &self.landing {
            l.end(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spool::SpoolWriter;
    use naslab_trace::{OpFlags, OpKind};

    fn op(i: u64) -> CompiledOp {
        CompiledOp {
            kind: OpKind::ALL[(i % 13) as usize],
            flags: OpFlags((i % 64) as u8),
            slot: i as u32,
            file: (i * 3) as u32,
            to: u32::MAX,
            t_us: i * 7,
            offset: i << 20,
            len: 4096,
            line: i + 3,
            expect: None,
        }
    }

    #[test]
    fn prefetched_ops_and_background_measurements_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let (io, worker) = spool_io();
        std::thread::scope(|s| {
            s.spawn(|| worker.run());
            // Sizes around the chunk boundaries: empty, one op, exactly one chunk, more.
            for n in [0u64, 1, 10, 11, 1000] {
                let mut w = SpoolWriter::new(dir.path(), 4096).unwrap();
                for i in 0..n {
                    w.push_op(&op(i)).unwrap();
                }
                let spool = w.finish().unwrap();
                let mut r = PrefetchReader::new(&io, &spool, 10 * OP_SIZE).unwrap();
                let mut m = BackgroundWriter::new(&io, dir.path(), 3 * 32, None).unwrap();
                for i in 0..n {
                    assert_eq!(r.next_op().unwrap(), Some(op(i)), "op {i} of {n}");
                    m.push_measured(&Measured {
                        sched_ns: i,
                        issued_ns: i + 1,
                        done_ns: i + 2,
                        result: -(i as i64),
                    })
                    .unwrap();
                }
                assert_eq!(r.next_op().unwrap(), None);
                assert_eq!(r.next_op().unwrap(), None);
                let spool = m.finish().unwrap();
                assert_eq!(spool.len(), n);
                let mut back = spool.reader().unwrap();
                for i in 0..n {
                    let got = back.next_measured().unwrap().unwrap();
                    assert_eq!(
                        (got.sched_ns, got.done_ns, got.result),
                        (i, i + 2, -(i as i64))
                    );
                }
                assert_eq!(back.next_measured().unwrap(), None);
            }
            drop(io);
        });
    }
}
