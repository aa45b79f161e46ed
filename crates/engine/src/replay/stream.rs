//! One stream's replay loop, one op at a time, and the bookkeeping both loops share.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use naslab_trace::{Measured, OpFlags, OpKind};

use super::{Fatal, Progress, ReplayError, StreamOutcome};
use crate::backend::{Backend, Handle, OpError, OpenHow};
use crate::buffer::AlignedBuf;
use crate::clock::Clock;
use crate::pacing::Pacing;
use crate::plan::{Plan, StreamPlan};
use crate::spool::CompiledOp;
use crate::spool_io::{BackgroundWriter, PrefetchReader};

/// A handle slot whose open failed or which was closed.
pub(super) const NO_HANDLE: Handle = u64::MAX;

/// How often a stream publishes its counters for the progress display.
const PROGRESS_EVERY: u64 = 256;

/// Everything one stream needs while it replays.
pub(super) struct StreamRun<'a, C> {
    pub plan: &'a Plan,
    pub sp: &'a StreamPlan,
    pub clock: C,
    pub pacing: Pacing,
    pub stop_on_error: bool,
    pub time_limit_ns: Option<u64>,
    pub stop: &'a AtomicBool,
    pub progress: &'a Progress,
    pub measured: Option<BackgroundWriter>,
    /// Read buffers, `slot_len` bytes per op that can be in flight.
    pub rbuf: AlignedBuf,
    /// The write pattern, shared by every write.
    pub wbuf: AlignedBuf,
    pub slot_len: usize,
    pub spool_dir: &'a Path,
    /// Ops and bytes already added to the progress counters.
    pub published: (u64, u64),
}

impl<C: Clock> StreamRun<'_, C> {
    pub(super) fn spool_err(&self, source: std::io::Error) -> ReplayError {
        ReplayError::Spool {
            dir: self.spool_dir.to_path_buf(),
            source,
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
        out.unaligned_direct_ops = backend.unaligned_direct_ops();
        if let Some(m) = self.measured.take() {
            out.measured = Some(m.finish().map_err(|e| self.spool_err(e))?);
        }
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
        while let Some(op) = reader.next_op().map_err(|e| self.spool_err(e))? {
            if self.stop.load(Ordering::Relaxed) {
                break;
            }
            let due = self.pacing.due(op.t_us, t0_us, prev_done);
            if let Some(d) = due {
                self.clock.wait_until(d);
            }
            let issued = self.clock.now_ns();
            if self.past_time_limit(out, issued) {
                break;
            }
            let result = self.execute(backend, &op, handles);
            let done = self.clock.now_ns();
            prev_done = Some(done);
            let (m, stop) = self.account(out, &op, due, issued, done, result);
            self.push_measured(&m)?;
            if stop {
                break;
            }
        }
        Ok(prev_done)
    }

    /// Whether `now` is past the time limit (marking the stream as cut short if so).
    #[inline]
    pub(super) fn past_time_limit(&self, out: &mut StreamOutcome, now: u64) -> bool {
        let Some(limit) = self.time_limit_ns else {
            return false;
        };
        let past = now >= out.first_issued_ns.saturating_add(limit);
        out.time_limited |= past;
        past
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
        result: Result<i64, OpError>,
    ) -> (Measured, bool) {
        let k = op.kind.index();
        let sched = due.unwrap_or(issued);
        if let Some(h) = out.latency[k].as_mut() {
            h.record(done - issued);
        }
        if let (Some(lag), Some(_)) = (out.lag.as_mut(), due) {
            lag.record(issued.saturating_sub(sched));
        }
        out.first_issued_ns = out.first_issued_ns.min(issued);
        out.counts[k] += 1;
        out.ops += 1;
        let mut stop = false;
        let code = match result {
            Ok(v) => {
                match op.kind {
                    OpKind::Read => out.bytes_read += v as u64,
                    OpKind::Write => out.bytes_written += v as u64,
                    _ => {}
                }
                v
            }
            Err(error) => {
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
                        error,
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

    /// Appends a measurement to the stream's spool, when records are kept.
    #[inline]
    pub(super) fn push_measured(&mut self, m: &Measured) -> Result<(), ReplayError> {
        if let Some(w) = self.measured.as_mut() {
            if let Err(e) = w.push_measured(m) {
                return Err(self.spool_err(e));
            }
        }
        Ok(())
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
                Err(OpError::errno(libc::EBADF))
            } else {
                Ok(h)
            }
        };
        match op.kind {
            OpKind::Read => {
                let h = handle()?;
                let buf = &mut self.rbuf.as_mut_slice()[..op.len as usize];
                backend.read(h, op.offset, buf).map(|n| n as i64)
            }
            OpKind::Write => {
                let h = handle()?;
                let buf = &self.wbuf.as_slice()[..op.len as usize];
                backend.write(h, op.offset, buf).map(|n| n as i64)
            }
            OpKind::Open | OpKind::Create => {
                let f = op.flags;
                let create = op.kind == OpKind::Create;
                let how = OpenHow {
                    read: f.contains(OpFlags::READ) || (!create && !f.contains(OpFlags::WRITE)),
                    write: create || f.contains(OpFlags::WRITE),
                    create,
                    truncate: create || f.contains(OpFlags::TRUNC),
                    append: f.contains(OpFlags::APPEND),
                    sync: f.contains(OpFlags::SYNC),
                };
                handles[slot] = NO_HANDLE;
                let h = backend.open(op.file, how)?;
                handles[slot] = h;
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
        }
    }
}
