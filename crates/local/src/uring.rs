use io_uring::{IoUring, opcode, types};

use naslab_backend::{Handle, IoBuf, IoMemory, OpError, QueuedIo};

/// An io_uring submission and completion queue for one stream's reads and writes.
pub struct UringQueue {
    /// Declared before the memory: dropped first, as the ring's ops use the memory.
    ring: IoUring,
    setup: RingSetup,
    /// What the stream lent the queue's ops.
    memory: IoMemory,
}

/// How a ring hands back completions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingSetup {
    /// `SINGLE_ISSUER | DEFER_TASKRUN | COOP_TASKRUN` (Linux 6.1 and later): completions
    /// are posted when the stream asks for them, as many as have arrived. fio sets the
    /// same flags.
    Deferred,
    /// `COOP_TASKRUN` only (Linux 5.19 and 6.0).
    Cooperative,
    /// Neither (older kernels): a waiting stream was found to be woken once per batch,
    /// with the whole queue completed, so the queue drained before it was refilled.
    Plain,
}

impl UringQueue {
    /// A ring with room for `depth` ops in flight over `memory`, made on the thread that
    /// will submit to it (a deferred ring takes submissions from that thread only).
    ///
    /// Deferred task running is asked for first. Without it the kernel posts each
    /// completion through task work that wakes the waiting thread; on a virtio disk that
    /// thread was woken once per batch, with all 32 ops of a depth-32 queue completed,
    /// so the queue drained to 0 before it was refilled (26 of 32 ops in flight by
    /// Little's law, where fio, which defers, kept 32). Deferred, the wait ends at the
    /// first completion and the queue is refilled as completions come.
    pub fn new(depth: u32, memory: &IoMemory) -> Result<UringQueue, OpError> {
        let entries = depth.max(1).next_power_of_two();
        let mut last = None;
        for setup in [
            RingSetup::Deferred,
            RingSetup::Cooperative,
            RingSetup::Plain,
        ] {
            let mut b: io_uring::Builder = IoUring::builder();
            match setup {
                RingSetup::Deferred => {
                    b.setup_single_issuer()
                        .setup_defer_taskrun()
                        .setup_coop_taskrun();
                }
                RingSetup::Cooperative => {
                    b.setup_coop_taskrun();
                }
                RingSetup::Plain => {}
            }
            match b.build(entries) {
                Ok(ring) => {
                    return Ok(UringQueue {
                        ring,
                        setup,
                        memory: memory.clone(),
                    });
                }
                // An older kernel refuses flags it does not know with EINVAL.
                Err(e) if e.raw_os_error() == Some(crate::errno::EINVAL) => last = Some(e),
                Err(e) => {
                    last = Some(e);
                    break;
                }
            }
        }
        let e = last.unwrap_or_else(|| std::io::Error::from_raw_os_error(crate::errno::EINVAL));
        Err(OpError {
            errno: e.raw_os_error().unwrap_or(crate::errno::EIO),
            detail: Some(format!(
                "io_uring is not available ({e}); queue depths above 1 need it: check /proc/sys/kernel/io_uring_disabled"
            )),
        })
    }

    /// How the ring was made.
    pub fn setup(&self) -> RingSetup {
        self.setup
    }

    /// Queues one op. It goes to the kernel with the others queued since the last wait,
    /// in the call that then waits for the first completion ([`QueuedIo::submit_and_reap`]):
    /// the ops that refill the slots of one batch of completions go together.
    ///
    /// Submitting each op in a call of its own as it came left the queue short: on a
    /// virtio disk at depth 32, a batch of about 11 completions was refilled one
    /// `io_uring_enter` at a time, about 8 µs each, and by Little's law 26 to 29 ops
    /// were in flight where fio keeps 31.9. Refilled together, 31.0 to 31.5 are
    /// (docs/benchmarks.md). A whole queue of 32 submitted together on a ring without
    /// deferred completions drained it instead, since the wait then ended with all 32
    /// completed (see [`UringQueue::new`]).
    fn push(&mut self, sqe: io_uring::squeue::Entry) -> Result<(), OpError> {
        // SAFETY: the entry's buffer is in the memory the queue was lent, which the queue
        // keeps (and drops after the ring); its lender does not touch it until the op is
        // reaped (IoRegion's promise).
        unsafe { self.ring.submission().push(&sqe) }.map_err(|_| OpError {
            errno: crate::errno::EBUSY,
            detail: Some("the io_uring submission queue is full".into()),
        })
    }
}

impl QueuedIo for UringQueue {
    fn queue_read(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let at = self.memory.locate(buf)?;
        let sqe = opcode::Read::new(types::Fd(h as i32), at, buf.len as u32)
            .offset(offset)
            .build()
            .user_data(tag);
        self.push(sqe)
    }

    fn queue_write(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let at = self.memory.locate(buf)?;
        let sqe = opcode::Write::new(types::Fd(h as i32), at, buf.len as u32)
            .offset(offset)
            .build()
            .user_data(tag);
        self.push(sqe)
    }

    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        loop {
            match self.ring.submit_and_wait(min) {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(crate::errno::EINTR) => continue,
                Err(e) => {
                    return Err(OpError::errno(
                        e.raw_os_error().unwrap_or(crate::errno::EIO),
                    ));
                }
            }
        }
        for cqe in self.ring.completion() {
            done.push((cqe.user_data(), cqe.result() as i64));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's major and minor version.
    fn kernel() -> (u32, u32) {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut parts = release
            .split(|c: char| !c.is_ascii_digit())
            .map(|p| p.parse::<u32>().unwrap_or(0));
        (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
    }

    #[test]
    fn a_ring_defers_its_completions_where_the_kernel_can() {
        let q = UringQueue::new(32, &IoMemory::default()).expect("io_uring");
        if kernel() >= (6, 1) {
            assert_eq!(q.setup(), RingSetup::Deferred);
        } else if kernel() >= (5, 19) {
            assert_ne!(q.setup(), RingSetup::Plain);
        }
    }
}
