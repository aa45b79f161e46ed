//! One stream's replay loop, one op at a time, and the bookkeeping both loops share.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use naslab_trace::{Expected, Measured, OpFlags, OpKind};

use super::ahead::{Ahead, generation};
use super::order::Order;
use super::{Fatal, Phase, Progress, ReplayError, StreamOutcome};
use crate::backend::{Backend, Handle, IoMemory, LockHow, OpError, OpenHow};
use crate::buffer::{AlignedBuf, LentBuf, StreamBuffers};
use crate::clock::Clock;
use crate::data::{self, BLOCK, DataSpec};
use crate::pacing::Pacing;
use crate::plan::{Plan, StreamPlan};
use crate::spool::CompiledOp;
use crate::spool_io::{BackgroundWriter, PrefetchReader};
use crate::verify::Verifier;
use naslab_results::{MismatchKind, StreamLatency};

/// A handle slot whose open failed or which was closed.
pub(super) const NO_HANDLE: Handle = u64::MAX;

/// The regions of the memory a stream lends its queue ([`StreamRun::memory`]): its read
/// slots, its write slots, and the ring its writes' data is made ahead in.
pub(super) const READS: usize = 0;
pub(super) const WRITES: usize = 1;
pub(super) const RING: usize = 2;

/// A paced wait looks at the stop flags at least this often.
const WAIT_SLICE_NS: u64 = 20_000_000;

/// How often a stream publishes its counters for the progress display.
const PROGRESS_EVERY: u64 = 256;

/// Where a write's data was generated for and its generation, kept until it completes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Written {
    offset: u64,
    generation: u64,
}

/// Books an op during which the backend got over a broken connection (its recovery
/// counters went from `out.failover.seen` to `recovery`): its latency is its stall.
#[cold]
pub(super) fn stalled(
    out: &mut StreamOutcome,
    op: &CompiledOp,
    issued: u64,
    done: u64,
    result: &Result<i64, OpError>,
    recovery: crate::backend::Recovery,
) {
    let f = &mut out.failover;
    f.seen = recovery;
    let stall = done.saturating_sub(issued);
    f.stalled_ops += 1;
    f.stall_total_ns += stall;
    if stall >= f.longest_stall_ns {
        f.longest_stall_ns = stall;
        f.longest_stall_kind = Some(op.kind);
    }
    f.first_stall_ns.get_or_insert(issued);
    after_stall(out, op, done, result);
}

/// Books an op that completed after the stream's first stall: the first success ends
/// the stream's gap; a failure is counted and named (a handle lost with its session).
#[cold]
pub(super) fn after_stall(
    out: &mut StreamOutcome,
    op: &CompiledOp,
    done: u64,
    result: &Result<i64, OpError>,
) {
    let f = &mut out.failover;
    match result {
        Ok(_) => {
            f.back_ns.get_or_insert(done);
        }
        // A failure the trace expects is no failure.
        Err(e) if op.expect.is_none() => {
            f.failed_ops += 1;
            if f.failed.len() < super::FAILED_NAMED {
                f.failed.push((op.kind, op.file, e.clone()));
            }
        }
        Err(_) => {}
    }
}

/// Everything one stream needs while it replays.
pub(super) struct StreamRun<'a, C> {
    pub plan: &'a Plan,
    pub sp: &'a StreamPlan,
    pub clock: C,
    pub pacing: Pacing,
    pub stop_on_error: bool,
    /// Whether the backend only pretends (null): an op expected to fail that it does
    /// counts as the expected failure.
    pub pretends: bool,
    pub time_limit_ns: Option<u64>,
    /// The time limit counts from the phase's zero, not the stream's first issue: in a
    /// multi-client job, whose clients share that zero, every client then stops at the
    /// same moment.
    pub limit_from_zero: bool,
    pub stop: &'a AtomicBool,
    pub cancel: Option<&'a AtomicBool>,
    pub progress: &'a Progress,
    pub measured: Option<BackgroundWriter>,
    /// How `rbuf` and `wbuf` are cut into slots, one per data op in flight.
    pub sizes: StreamBuffers,
    /// Read buffers, `sizes.read_slot_len` bytes for each of `sizes.slots` ops in flight
    /// (region [`READS`] of `memory`).
    pub rbuf: Arc<LentBuf>,
    /// Write buffers, `sizes.write_slot_len` bytes for each of `sizes.slots` ops in
    /// flight, each filled with its write's data before the write is issued.
    /// (region [`WRITES`] of `memory`).
    pub wbuf: Arc<LentBuf>,
    /// What the stream lends its queue: `rbuf`, `wbuf` and the ring (region [`RING`]),
    /// when it has one.
    pub memory: IoMemory,
    pub spool_dir: &'a Path,
    /// Ops and bytes already added to the progress counters.
    pub published: (u64, u64),
    /// What writes carry.
    pub data: DataSpec,
    /// With `--verify`: what every file should hold.
    pub verifier: Option<&'a Verifier>,
    /// Which of the plan's op sets this replay runs.
    pub phase: Phase,
    /// Writes issued so far (each write's generation follows from it).
    pub writes: u64,
    /// Per handle slot: whether it was opened for appending.
    pub append: Vec<bool>,
    /// Two blocks of room for the data generator and the checks.
    pub scratch: Vec<u8>,
    /// One aligned block for re-reading a block that read back old, made at the first
    /// such block.
    pub recheck: Option<AlignedBuf>,
    /// Why the measurement spool stopped, when it could not be written (a full
    /// directory): the stream goes on, its figures being in memory.
    pub records_lost: Option<std::io::Error>,
    /// The waits for other streams' ops, and the publishing of this one's.
    pub order: Order<'a>,
    /// The ring its writes' data is made ahead in, when the stream issues one op at a
    /// time and a thread makes it (see [`super::ahead`]).
    pub ahead: Option<std::sync::Arc<Ahead>>,
    /// The write whose ring slot the stream holds, from its take to its completion.
    pub held: Option<u64>,
}

impl<C: Clock> StreamRun<'_, C> {
    pub(super) fn spool_err(&self, source: std::io::Error) -> ReplayError {
        ReplayError::Spool {
            dir: self.spool_dir.to_path_buf(),
            cause: source,
        }
    }

    /// Replays the stream's ops, one at a time or queued, and returns what it measured.
    pub(super) fn run(
        &mut self,
        backend: &mut dyn Backend,
        mut reader: PrefetchReader,
        mut out: StreamOutcome,
    ) -> Result<StreamOutcome, ReplayError> {
        let mut handles: Vec<Handle> = vec![NO_HANDLE; self.sp.slots as usize];
        let prev_done = if self.plan.queue_depth() > 1 {
            self.run_queued(backend, &mut reader, &mut out, &mut handles)?
        } else {
            self.run_one_at_a_time(backend, &mut reader, &mut out, &mut handles)?
        };
        self.publish(&out);
        out.done_ns = prev_done.unwrap_or(0);
        // Handles the trace left open are closed outside the measured phase.
        for h in handles.into_iter().filter(|&h| h != NO_HANDLE) {
            let _ = backend.close(h);
        }
        // What the connection went through, counted after those closes too: a COMMIT
        // at close that finds the server's write verifier changed adds an unconfirmed
        // write without any reconnect.
        out.failover.seen = backend.recovery();
        out.unaligned_direct_ops = backend.unaligned_direct_ops();
        if let Some(m) = self.measured.take() {
            match m.finish() {
                Ok(spool) => out.measured = Some(spool),
                Err(e) => self.lose_records(e),
            }
        }
        out.records_lost = self.records_lost.take();
        Ok(out)
    }

    fn run_one_at_a_time(
        &mut self,
        backend: &mut dyn Backend,
        reader: &mut PrefetchReader,
        out: &mut StreamOutcome,
        handles: &mut [Handle],
    ) -> Result<Option<u64>, ReplayError> {
        let t0_us = self.plan.t0_us;
        let mut prev_done: Option<u64> = None;
        let mut seq = 0u64;
        while let Some(op) = reader.next_op().map_err(|e| self.spool_err(e))? {
            if self.halted() || !self.follow(out, seq) {
                break;
            }
            let due = self.pacing.due(op.t_us, t0_us, prev_done);
            let written = (op.kind == OpKind::Write).then(|| self.fill_write(&op, 0));
            let issued = self.issue_alone(backend, &op, due, handles, out);
            if let (Some(ring), Some(index)) = (self.ahead.as_deref(), self.held.take()) {
                ring.release(index);
            }
            let Some((m, stop, result)) = issued else {
                break;
            };
            prev_done = Some(m.done_ns);
            seq += 1;
            self.order.completed(seq);
            self.push_measured(&m)?;
            self.after(backend, &op, 0, written, &result, handles);
            if stop {
                break;
            }
        }
        Ok(prev_done)
    }

    /// Issues `op` by itself once it is `due`, waits for it and books it. Returns its
    /// measurement, whether the run must stop, and its result; `None` when the time limit
    /// or a stop came first and the op was not issued.
    #[inline]
    pub(super) fn issue_alone(
        &mut self,
        backend: &mut dyn Backend,
        op: &CompiledOp,
        due: Option<u64>,
        handles: &mut [Handle],
        out: &mut StreamOutcome,
    ) -> Option<(Measured, bool, Result<i64, OpError>)> {
        // A paced op is issued at the clock reading that found it due, which was
        // already held against the time limit.
        let issued = match due {
            Some(d) => self.wait_due(out, d)?,
            None => {
                let now = self.clock.now_ns();
                if self.past_time_limit(out, now) {
                    return None;
                }
                now
            }
        };
        let result = self.execute(backend, op, handles);
        let done = self.clock.now_ns();
        let recovery = backend.recovery();
        if recovery.recovered_since(&out.failover.seen) {
            stalled(out, op, issued, done, &result, recovery);
        } else if out.failover.first_stall_ns.is_some() {
            after_stall(out, op, done, &result);
        }
        let (m, stop) = self.account(out, op, due, issued, done, &result);
        Some((m, stop, result))
    }

    /// Before the op at `seq` (its place in the stream): waits until every op of another
    /// stream that it must follow has completed. False when the run was stopped or the
    /// time limit came meanwhile: the op is not issued.
    #[inline]
    pub(super) fn follow(&mut self, out: &mut StreamOutcome, seq: u64) -> bool {
        if seq != self.order.wait_at {
            return true;
        }
        self.follow_slowly(out, seq)
    }

    #[cold]
    fn follow_slowly(&mut self, out: &mut StreamOutcome, seq: u64) -> bool {
        while let Some((source, count)) = self.order.pending(seq) {
            let start = self.clock.now_ns();
            let reached = self.order.wait(source, count, || {
                self.halted() || self.past_time_limit(out, self.clock.now_ns())
            });
            let waited = self.clock.now_ns().saturating_sub(start);
            let w = &mut out.order_waits;
            w.waits += 1;
            w.total_ns += waited;
            w.longest_ns = w.longest_ns.max(waited);
            if !reached {
                return false;
            }
        }
        true
    }

    /// Whether the run was stopped: by a fatal failure in any stream, or from outside.
    #[inline]
    pub(super) fn halted(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// When the time limit ends the stream: that long after its first issue, or after the
    /// start of the phase while it has issued nothing (or always, with `limit_from_zero`).
    #[inline]
    fn limit_end(&self, out: &StreamOutcome) -> Option<u64> {
        let base = if self.limit_from_zero || out.first_issued_ns == u64::MAX {
            0
        } else {
            out.first_issued_ns
        };
        self.time_limit_ns.map(|l| base.saturating_add(l))
    }

    /// Whether `now` is past the time limit (marking the stream as cut short if so).
    #[inline]
    pub(super) fn past_time_limit(&self, out: &mut StreamOutcome, now: u64) -> bool {
        let past = self.limit_end(out).is_some_and(|end| now >= end);
        out.time_limited |= past;
        past
    }

    /// Waits until an op's due time and returns the clock reading that found it due.
    /// Returns `None`, without waiting longer, when the time limit comes first or the run
    /// is stopped meanwhile: the op is not issued.
    pub(super) fn wait_due(&self, out: &mut StreamOutcome, due: u64) -> Option<u64> {
        loop {
            if self.halted() {
                return None;
            }
            let now = self.clock.now_ns();
            if self.past_time_limit(out, now) {
                return None;
            }
            if now >= due {
                return Some(now);
            }
            let mut until = due.min(now.saturating_add(WAIT_SLICE_NS));
            if let Some(end) = self.limit_end(out) {
                until = until.min(end);
            }
            self.clock.wait_until(until);
        }
    }

    /// Books one finished op: its latency, counts, bytes and errors, and the progress
    /// counters. Returns its measurement and whether the run must stop here.
    #[inline]
    pub(super) fn account(
        &mut self,
        out: &mut StreamOutcome,
        op: &CompiledOp,
        due: Option<u64>,
        issued: u64,
        done: u64,
        result: &Result<i64, OpError>,
    ) -> (Measured, bool) {
        let k = op.kind.index();
        let sched = due.unwrap_or(issued);
        // An op the trace expects to fail: that failure is no error, but a success is.
        let expected_failure = match (op.expect, result) {
            (Some(want), Err(e)) => e.errno == expected_errno(want),
            _ => false,
        };
        // The null backend's success of an op expected to fail stands for that failure,
        // recorded as one.
        let pretended = match (op.expect, result) {
            (Some(want), Ok(_)) if self.pretends => Some(expected_errno(want)),
            _ => None,
        };
        if result.is_ok() && pretended.is_none() {
            if let Some(h) = out.latency[k].as_mut() {
                h.record(done - issued);
            }
        } else {
            out.failed_latency[k]
                .get_or_insert_with(StreamLatency::new)
                .record(done - issued);
        }
        if let (Some(lag), Some(_)) = (out.lag.as_mut(), due) {
            lag.record(issued.saturating_sub(sched));
        }
        out.first_issued_ns = out.first_issued_ns.min(issued);
        out.counts[k] += 1;
        out.ops += 1;
        let mut stop = false;
        let code = match *result {
            Ok(_) if pretended.is_some() => {
                out.expected_failures[k] += 1;
                -(pretended.unwrap_or(0) as i64)
            }
            Ok(v) => {
                match op.kind {
                    OpKind::Read => out.bytes_read += v as u64,
                    OpKind::Write => out.bytes_written += v as u64,
                    _ => {}
                }
                if op.expect.is_some() {
                    out.errors[k] += 1;
                    out.missing_failures[k] += 1;
                }
                v
            }
            Err(ref error) if expected_failure => {
                out.expected_failures[k] += 1;
                -(error.errno as i64)
            }
            Err(ref error) => {
                out.errors[k] += 1;
                *out.errnos.entry((k, error.errno)).or_insert(0) += 1;
                let code = -(error.errno as i64);
                if (error.is_fatal() || self.stop_on_error) && out.fatal.is_none() {
                    self.stop.store(true, Ordering::Relaxed);
                    out.fatal = Some(Fatal {
                        stream: self.sp.stream,
                        line: op.line,
                        kind: op.kind,
                        path: self.plan.files.path(op.file).to_string(),
                        error: error.clone(),
                    });
                    stop = true;
                }
                code
            }
        };
        if out.ops.is_multiple_of(PROGRESS_EVERY) {
            self.publish(out);
        }
        let m = Measured {
            sched_ns: sched,
            issued_ns: issued,
            done_ns: done,
            result: code,
        };
        (m, stop)
    }

    /// Appends a measurement to the stream's spool, when records are kept. A spool that
    /// cannot be written stops there (see [`StreamRun::lose_records`]); the stream goes on.
    #[inline]
    pub(super) fn push_measured(&mut self, m: &Measured) -> Result<(), ReplayError> {
        if let Some(w) = self.measured.as_mut()
            && let Err(e) = w.push_measured(m)
        {
            self.lose_records(e);
        }
        Ok(())
    }

    /// The measurement spool could not be written: it is dropped, which tells whoever
    /// follows it that it ended short (so nothing waits for the rest), and the stream
    /// keeps its figures, which are in memory, without op records.
    #[cold]
    fn lose_records(&mut self, e: std::io::Error) {
        self.measured = None;
        self.records_lost.get_or_insert(e);
    }

    fn publish(&mut self, out: &StreamOutcome) {
        let bytes = out.bytes_read + out.bytes_written;
        let (ops0, bytes0) = self.published;
        self.progress
            .ops
            .fetch_add(out.ops - ops0, Ordering::Relaxed);
        self.progress
            .bytes
            .fetch_add(bytes - bytes0, Ordering::Relaxed);
        self.published = (out.ops, bytes);
    }

    /// Issues one op and waits for it; returns bytes moved, entries listed or size found.
    #[inline]
    pub(super) fn execute(
        &mut self,
        backend: &mut dyn Backend,
        op: &CompiledOp,
        handles: &mut [Handle],
    ) -> Result<i64, OpError> {
        let slot = op.slot as usize;
        let handle = || {
            let h = handles[slot];
            if h == NO_HANDLE {
                // Its open failed: the op cannot be issued.
                Err(OpError::errno(crate::errno::EBADF))
            } else {
                Ok(h)
            }
        };
        match op.kind {
            OpKind::Read => {
                let h = handle()?;
                // SAFETY: an op issued alone has nothing in flight beside it.
                let buf = unsafe { self.rbuf.bytes_mut(0, op.len as usize) };
                backend.read(h, op.offset, buf).map(|n| n as i64)
            }
            OpKind::Write => {
                let h = handle()?;
                // Filled by `fill_write` before the op was issued.
                let buf = match (self.ahead.as_deref(), self.held) {
                    (Some(ring), Some(index)) => ring.held(index, op.len as usize),
                    // SAFETY: as for a read.
                    _ => unsafe { self.wbuf.bytes(0, op.len as usize) },
                };
                backend.write(h, op.offset, buf).map(|n| n as i64)
            }
            OpKind::Open | OpKind::Create => {
                let f = op.flags;
                let create = op.kind == OpKind::Create;
                let exclusive = create && f.contains(OpFlags::EXCL);
                let how = OpenHow {
                    read: f.contains(OpFlags::READ) || (!create && !f.contains(OpFlags::WRITE)),
                    write: create || f.contains(OpFlags::WRITE),
                    create,
                    exclusive,
                    // An exclusive create makes an empty file or nothing.
                    truncate: (create && !exclusive) || f.contains(OpFlags::TRUNC),
                    append: f.contains(OpFlags::APPEND),
                    sync: f.contains(OpFlags::SYNC),
                    direct: f.contains(OpFlags::DIRECT),
                    random: f.contains(OpFlags::RANDOM),
                };
                handles[slot] = NO_HANDLE;
                let h = backend.open(op.file, how)?;
                handles[slot] = h;
                self.append[slot] = how.append;
                Ok(0)
            }
            OpKind::Close => {
                let h = handle()?;
                handles[slot] = NO_HANDLE;
                backend.close(h).map(|_| 0)
            }
            OpKind::Fsync => backend.fsync(handle()?).map(|_| 0),
            OpKind::Truncate => backend.truncate(handle()?, op.len).map(|_| 0),
            OpKind::Fallocate => backend.fallocate(handle()?, op.offset, op.len).map(|_| 0),
            OpKind::Stat => backend.stat(op.file).map(|s| s as i64),
            OpKind::Mkdir => backend.mkdir(op.file).map(|_| 0),
            OpKind::Readdir => backend.readdir(op.file).map(|n| n as i64),
            OpKind::Unlink => backend.unlink(op.file).map(|_| 0),
            OpKind::Rename => backend.rename(op.file, op.to).map(|_| 0),
            OpKind::Link => backend.link(op.file, op.to).map(|_| 0),
            OpKind::Symlink => backend.symlink(op.file, op.to).map(|_| 0),
            OpKind::Statfs => backend.statfs(op.file).map(|_| 0),
            OpKind::Utime => backend.utime(op.file).map(|_| 0),
            OpKind::Lock | OpKind::Unlock => {
                let how = match op.kind {
                    OpKind::Unlock => LockHow::Unlock,
                    _ if op.flags.contains(OpFlags::READ) => LockHow::Shared,
                    _ => LockHow::Exclusive,
                };
                backend.lock(handle()?, op.offset, op.len, how).map(|_| 0)
            }
        }
    }

    /// How a mismatch found by one of this replay's reads is labelled.
    fn during(&self) -> &'static str {
        match self.phase {
            Phase::Warmup => "warmup",
            Phase::Measured => "read",
        }
    }

    /// Fills write buffer slot `buf` with the data write `op` carries: generated for where
    /// it will land, as a new generation (`1, 2, ...` above a base of the phase and stream,
    /// so unique in the run). Runs before the op is issued, outside its timing.
    #[inline]
    pub(super) fn fill_write(&mut self, op: &CompiledOp, buf: usize) -> Written {
        let index = self.writes;
        self.writes += 1;
        let generation = generation(self.phase as u64, self.sp.stream, self.writes);
        let mut offset = op.offset;
        if let Some(v) = self.verifier
            && self.append.get(op.slot as usize).copied().unwrap_or(false)
        {
            offset = v.size(op.file);
        }
        let written = Written { offset, generation };
        if self.data.only_zeros() {
            // The buffers started zeroed and nothing else is ever put in them.
            return written;
        }
        if let Some(ring) = self.ahead.as_deref() {
            // Made ahead for the op's own offset (a ring is not used with --verify,
            // whose appends learn their offset only now).
            ring.take(
                index,
                op,
                &self.data,
                generation,
                &mut self.scratch[..BLOCK],
            );
            self.held = Some(index);
            return written;
        }
        let len = op.len as usize;
        let start = buf * self.sizes.write_slot_len;
        // SAFETY: slot `buf` is the write's own, not yet queued, and no op in flight
        // holds it (it is back among the free slots only once its last op was reaped).
        let buf = unsafe { self.wbuf.bytes_mut(start, len) };
        data::fill(
            &self.data,
            op.file,
            offset,
            generation,
            buf,
            &mut self.scratch[..BLOCK],
        );
        written
    }

    /// After an op, outside its timing, with `--verify`: books what it changed, and
    /// checks what a read returned (`buf`: its buffer slot; `written`: what a write's
    /// [`Self::fill_write`] made).
    pub(super) fn after(
        &mut self,
        backend: &mut dyn Backend,
        op: &CompiledOp,
        buf: usize,
        written: Option<Written>,
        result: &Result<i64, OpError>,
        handles: &[Handle],
    ) {
        let Some(v) = self.verifier else {
            return;
        };
        match (op.kind, result) {
            (OpKind::Read, Ok(n)) => {
                let start = buf * self.sizes.read_slot_len;
                // SAFETY: the read that filled slot `buf` has been reaped, and the slot is
                // not queued again until this check is done.
                let got = unsafe { self.rbuf.bytes(start, *n as usize) };
                let mut bad = v.check(op.file, op.offset, got, self.during(), &mut self.scratch);
                // An old version read back once more: if the right one comes now, the
                // first read was stale, not the write lost.
                let h = handles.get(op.slot as usize).copied().unwrap_or(NO_HANDLE);
                for m in bad.iter_mut() {
                    if m.kind != MismatchKind::LostWrite || h == NO_HANDLE {
                        continue;
                    }
                    let _ = backend.drop_cache(op.file);
                    let len = m.len as usize;
                    let during = self.during();
                    let recheck = self
                        .recheck
                        .get_or_insert_with(|| AlignedBuf::zeroed(BLOCK));
                    let buf = &mut recheck.as_mut_slice()[..len];
                    if let Ok(got) = backend.read(h, m.offset, buf) {
                        let again = v.check(
                            op.file,
                            m.offset,
                            &recheck.as_slice()[..got],
                            during,
                            &mut self.scratch,
                        );
                        if got == len && again.is_empty() {
                            m.kind = MismatchKind::StaleRead;
                            m.found.push_str("; read again, it was right");
                        }
                    }
                }
                v.record(bad);
            }
            (OpKind::Write, r) => {
                let Some(Written { offset, generation }) = written else {
                    return;
                };
                match r {
                    Ok(n) => v.wrote(op.file, offset, *n as u64, generation, true),
                    Err(_) => v.wrote(op.file, offset, op.len, generation, false),
                }
            }
            (OpKind::Create, Ok(_)) => v.created(op.file),
            (OpKind::Open, Ok(_)) if op.flags.contains(OpFlags::TRUNC) => v.created(op.file),
            (OpKind::Truncate, Ok(_)) => v.truncated(op.file, op.len),
            (OpKind::Fallocate, Ok(_)) => v.allocated(op.file, op.offset + op.len),
            (OpKind::Unlink, Ok(_)) => v.unlinked(op.file),
            (OpKind::Rename, Ok(_)) => v.renamed(op.file, op.to),
            _ => {}
        }
    }
}

/// The errno an expected error stands for.
fn expected_errno(e: Expected) -> i32 {
    use crate::errno;
    match e {
        Expected::NotFound => errno::ENOENT,
        Expected::Exists => errno::EEXIST,
        Expected::NotDir => errno::ENOTDIR,
        Expected::NotEmpty => errno::ENOTEMPTY,
        Expected::Denied => errno::EACCES,
        Expected::WouldBlock => errno::EAGAIN,
    }
}
