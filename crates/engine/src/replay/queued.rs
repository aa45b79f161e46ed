//! One stream's replay loop with several reads and writes in flight (queue depth above 1).
//!
//! Reads and writes are queued in trace order until the queue is full, go to the kernel
//! together in the call that waits for the first completion, and are reaped as they
//! complete; every other op waits until the queue has
//! drained and then runs alone, so a trace's opens and closes still bracket its I/O.
//! Measurements are written in trace order whatever order ops complete in.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use naslab_trace::{Measured, OpKind};

use super::stream::{NO_HANDLE, READS, RING, StreamRun, WRITES, Written, after_stall, stalled};
use super::{ReplayError, StreamOutcome};
use crate::backend::{Backend, Handle, IoBuf, OpError};
use crate::clock::Clock;
use crate::spool::CompiledOp;
use crate::spool_io::PrefetchReader;

struct InFlight {
    op: CompiledOp,
    due: Option<u64>,
    issued: u64,
    seq: u64,
    /// The buffer slot it holds (its place in the read or the write buffer).
    buf: usize,
    /// For a write: what its buffer was filled with.
    written: Option<Written>,
    /// For a write whose data was made ahead: the write index whose ring slot it holds
    /// until it completes.
    ahead: Option<u64>,
    /// Whether its connection broke and was made again while it was in flight.
    stalled: bool,
}

/// Puts measurements back into trace order.
#[derive(Default)]
struct InOrder {
    next: u64,
    held: BTreeMap<u64, Measured>,
}

/// Whether `op` touches bytes of its file that an op in flight touches, and either writes.
fn overlaps_in_flight(slots: &[Option<InFlight>], op: &CompiledOp) -> bool {
    slots.iter().flatten().any(|f| {
        f.op.file == op.file
            && (f.op.kind == OpKind::Write || op.kind == OpKind::Write)
            && f.op.offset < op.offset + op.len
            && op.offset < f.op.offset + f.op.len
    })
}

/// Tries this many times to reap ops still in flight after a submission failed.
const DRAIN_TRIES: usize = 100;

impl<C: Clock> StreamRun<'_, C> {
    /// Gives a write's ring slot back once the write is done with it.
    fn release_ahead(&self, index: Option<u64>) {
        if let (Some(ring), Some(index)) = (self.ahead.as_deref(), index) {
            ring.release(index);
        }
    }

    fn emit(&mut self, order: &mut InOrder, seq: u64, m: Measured) -> Result<(), ReplayError> {
        if self.measured.is_none() {
            return Ok(());
        }
        if seq != order.next {
            order.held.insert(seq, m);
            return Ok(());
        }
        self.push_measured(&m)?;
        order.next += 1;
        while let Some(m) = order.held.remove(&order.next) {
            self.push_measured(&m)?;
            order.next += 1;
        }
        Ok(())
    }

    pub(super) fn run_queued(
        &mut self,
        backend: &mut dyn Backend,
        reader: &mut PrefetchReader,
        out: &mut StreamOutcome,
        handles: &mut [Handle],
    ) -> Result<Option<u64>, ReplayError> {
        let depth = self.plan.queue_depth() as usize;
        let t0_us = self.plan.t0_us;
        // Each op in flight holds one queue slot (its tag): those not in `free`.
        let mut slots: Vec<Option<InFlight>> = (0..depth).map(|_| None).collect();
        let mut free: Vec<usize> = (0..depth).rev().collect();
        // Reads and writes also need one of the stream's buffer slots, which may be fewer
        // than the queue depth when ops are large.
        let mut free_bufs: Vec<usize> = (0..self.sizes.slots).rev().collect();
        let mut next: Option<CompiledOp> = None;
        let mut exhausted = false;
        let mut stopping = false;
        let mut seq = 0u64;
        let mut order = InOrder::default();
        let mut completions: Vec<(u64, i64)> = Vec::with_capacity(depth);
        let mut prev_done: Option<u64> = None;
        loop {
            // Queue reads and writes until the queue is full or another kind of op comes.
            while !stopping && !free.is_empty() {
                if self.halted() || prev_done.is_some_and(|d| self.past_time_limit(out, d)) {
                    stopping = true;
                    break;
                }
                if next.is_none() && !exhausted {
                    next = reader.next_op().map_err(|e| self.spool_err(e))?;
                    exhausted = next.is_none();
                }
                let Some(op) = next else {
                    break;
                };
                let busy = free.len() < depth;
                if !busy {
                    // Every op issued so far has completed.
                    self.order.completed(seq);
                }
                if seq == self.order.wait_at {
                    // Waits with nothing in flight, so no op's time includes the wait.
                    if busy {
                        break;
                    }
                    if !self.follow(out, seq) {
                        stopping = true;
                        break;
                    }
                }
                let data = matches!(op.kind, OpKind::Read | OpKind::Write)
                    && handles[op.slot as usize] != NO_HANDLE;
                let due = self.pacing.due(op.t_us, t0_us, prev_done);
                if !data {
                    if busy {
                        break;
                    }
                    next = None;
                    // A write without a handle still has its data made, as one op at a
                    // time does: the writes' generations, and the ring's, stay in step.
                    let written = (op.kind == OpKind::Write).then(|| self.fill_write(&op, 0));
                    let issued = self.issue_alone(backend, &op, due, handles, out);
                    let held = self.held.take();
                    self.release_ahead(held);
                    let Some((m, stop, result)) = issued else {
                        stopping = true;
                        break;
                    };
                    prev_done = Some(m.done_ns);
                    self.emit(&mut order, seq, m)?;
                    self.after(backend, &op, 0, written, &result, handles);
                    seq += 1;
                    self.order.completed(seq);
                    stopping |= stop;
                    continue;
                }
                if free_bufs.is_empty() {
                    // Every buffer slot is in flight: reap before queueing more.
                    break;
                }
                if busy
                    && op.kind == OpKind::Write
                    && self
                        .ahead
                        .as_deref()
                        .is_some_and(|r| r.held_back(self.writes))
                {
                    // Its data's slot in the ring still holds a write in flight.
                    break;
                }
                // With --verify, an op waits for in-flight ops it overlaps when either
                // writes, so what each read should return is known.
                if busy && self.verifier.is_some() && overlaps_in_flight(&slots, &op) {
                    break;
                }
                if let Some(d) = due
                    && d > self.clock.now_ns()
                {
                    if busy {
                        break;
                    }
                    if self.wait_due(out, d).is_none() {
                        stopping = true;
                        break;
                    }
                }
                next = None;
                let (Some(slot), Some(b)) = (free.pop(), free_bufs.pop()) else {
                    unreachable!("the loop runs while a queue slot is free, and a buffer slot was");
                };
                let h = handles[op.slot as usize];
                let len = op.len as usize;
                let written = (op.kind == OpKind::Write).then(|| self.fill_write(&op, b));
                // Made ahead, its data is in the ring's slot, held until it completes.
                let ahead = self.held.take();
                // Its issue time is read as it is queued: the time until the kernel takes
                // it (with the others queued, in the next wait) is part of its latency.
                let issued = self.clock.now_ns();
                let buf = match (op.kind, self.ahead.as_deref(), ahead) {
                    (OpKind::Read, ..) => IoBuf {
                        region: READS,
                        offset: b * self.sizes.read_slot_len,
                        len,
                    },
                    (_, Some(ring), Some(index)) => IoBuf {
                        region: RING,
                        offset: ring.slot_offset(index),
                        len,
                    },
                    _ => IoBuf {
                        region: WRITES,
                        offset: b * self.sizes.write_slot_len,
                        len,
                    },
                };
                // Buffer slot `b`, and a write's ring slot, belong to this op alone until
                // it is reaped: they return to `free_bufs` and the ring only then.
                let result =
                    backend
                        .queued(depth as u32, &self.memory)
                        .and_then(|q| match op.kind {
                            OpKind::Read => q.queue_read(h, op.offset, buf, slot as u64),
                            _ => q.queue_write(h, op.offset, buf, slot as u64),
                        });
                match result {
                    Ok(()) => {
                        slots[slot] = Some(InFlight {
                            op,
                            due,
                            issued,
                            seq,
                            buf: b,
                            written,
                            ahead,
                            stalled: false,
                        });
                    }
                    Err(e) => {
                        free.push(slot);
                        free_bufs.push(b);
                        self.release_ahead(ahead);
                        let now = self.clock.now_ns();
                        let (m, stop) = self.account(out, &op, due, now, now, &Err(e));
                        self.emit(&mut order, seq, m)?;
                        stopping |= stop;
                    }
                }
                seq += 1;
            }
            if free.len() == depth {
                if stopping || (exhausted && next.is_none()) {
                    break;
                }
                continue;
            }
            completions.clear();
            let reaped = backend
                .queued(depth as u32, &self.memory)
                .and_then(|q| q.submit_and_reap(1, &mut completions));
            let done = self.clock.now_ns();
            if let Err(e) = reaped {
                self.abandon(backend, depth, &mut slots, out, e, &mut order)?;
                return Ok(Some(done));
            }
            prev_done = Some(done);
            // A connection that broke and was made again during the wait held up every op
            // in flight then: each is booked as a stall when it completes, as one op alone
            // would be.
            let recovery = backend.recovery();
            if recovery.recovered_since(&out.failover.seen) {
                out.failover.seen = recovery;
                for f in slots.iter_mut().flatten() {
                    f.stalled = true;
                }
            }
            for &(tag, res) in &completions {
                let Some(f) = slots.get_mut(tag as usize).and_then(Option::take) else {
                    continue;
                };
                free.push(tag as usize);
                free_bufs.push(f.buf);
                self.release_ahead(f.ahead);
                let result = if res < 0 {
                    Err(OpError::errno(-res as i32))
                } else {
                    Ok(res)
                };
                if f.stalled {
                    stalled(out, &f.op, f.issued, done, &result, recovery);
                } else if out.failover.first_stall_ns.is_some() {
                    after_stall(out, &f.op, done, &result);
                }
                let (m, stop) = self.account(out, &f.op, f.due, f.issued, done, &result);
                self.emit(&mut order, f.seq, m)?;
                self.after(backend, &f.op, f.buf, f.written, &result, handles);
                stopping |= stop;
            }
        }
        Ok(prev_done)
    }

    /// After the queue failed: records the failure, reaps what it can, and if ops stay
    /// in flight leaks the lent memory rather than free what the kernel may still fill.
    fn abandon(
        &mut self,
        backend: &mut dyn Backend,
        depth: usize,
        slots: &mut [Option<InFlight>],
        out: &mut StreamOutcome,
        error: OpError,
        order: &mut InOrder,
    ) -> Result<(), ReplayError> {
        let mut in_flight = slots.iter().flatten().count();
        let mut completions = Vec::new();
        for _ in 0..DRAIN_TRIES {
            if in_flight == 0 {
                break;
            }
            completions.clear();
            if backend
                .queued(depth as u32, &self.memory)
                .and_then(|q| q.submit_and_reap(1, &mut completions))
                .is_err()
            {
                continue;
            }
            for &(tag, _) in &completions {
                if let Some(f) = slots.get_mut(tag as usize).and_then(Option::take) {
                    in_flight -= 1;
                    self.release_ahead(f.ahead);
                }
            }
        }
        if in_flight > 0 {
            // The kernel may still use the memory of ops it never completed: it is never
            // freed.
            std::mem::forget(self.memory.clone());
        }
        // The op that met the failure stands for it in the results.
        if let Some(f) = slots.iter_mut().find_map(Option::take) {
            let now = self.clock.now_ns();
            let mut fatal = error;
            if !fatal.is_fatal() {
                fatal = OpError {
                    errno: crate::errno::EIO,
                    detail: Some(format!("the I/O queue failed: {fatal}")),
                };
            }
            let (m, _) = self.account(out, &f.op, f.due, f.issued, now, &Err(fatal));
            self.emit(order, f.seq, m)?;
        }
        self.stop.store(true, Ordering::Relaxed);
        Ok(())
    }
}
