use io_uring::{opcode, types, IoUring};

use super::{Handle, OpError, QueuedIo};

/// An io_uring submission and completion queue for one stream's reads and writes.
pub struct UringQueue {
    ring: IoUring,
}

impl UringQueue {
    /// A ring with room for `depth` ops in flight.
    pub fn new(depth: u32) -> Result<UringQueue, OpError> {
        let entries = depth.max(1).next_power_of_two();
        let ring = IoUring::new(entries).map_err(|e| OpError {
            errno: e.raw_os_error().unwrap_or(libc::EIO),
            detail: Some(format!(
                "io_uring is not available ({e}); queue depths above 1 need it: check /proc/sys/kernel/io_uring_disabled"
            )),
        })?;
        Ok(UringQueue { ring })
    }

    /// Queues one op and submits it at once. Submitting each op as it comes, not the
    /// whole queue in one call, keeps the device's queue full as ops complete one by
    /// one: a batch of 32 submitted together tends to complete together too, and the
    /// device then idles while the next batch is made (4 KiB random reads at depth 32
    /// ran at about 80 k IOPS that way, against 110 to 124 k submitted one by one).
    fn push(&mut self, sqe: io_uring::squeue::Entry) -> Result<(), OpError> {
        // SAFETY: the caller of queue_read/queue_write promised the buffer outlives the op.
        unsafe { self.ring.submission().push(&sqe) }.map_err(|_| OpError {
            errno: libc::EBUSY,
            detail: Some("the io_uring submission queue is full".into()),
        })?;
        // A failed submit leaves the entry queued: the next submit_and_reap sends it and
        // reports a lasting failure. (Returning an error here would free the op's buffer
        // while the kernel may still get the entry.)
        let _ = self.ring.submit();
        Ok(())
    }
}

impl QueuedIo for UringQueue {
    unsafe fn queue_read(
        &mut self,
        h: Handle,
        offset: u64,
        buf: *mut u8,
        len: usize,
        tag: u64,
    ) -> Result<(), OpError> {
        let sqe = opcode::Read::new(types::Fd(h as i32), buf, len as u32)
            .offset(offset)
            .build()
            .user_data(tag);
        self.push(sqe)
    }

    unsafe fn queue_write(
        &mut self,
        h: Handle,
        offset: u64,
        buf: *const u8,
        len: usize,
        tag: u64,
    ) -> Result<(), OpError> {
        let sqe = opcode::Write::new(types::Fd(h as i32), buf, len as u32)
            .offset(offset)
            .build()
            .user_data(tag);
        self.push(sqe)
    }

    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        loop {
            match self.ring.submit_and_wait(min) {
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) => return Err(OpError::errno(e.raw_os_error().unwrap_or(libc::EIO))),
            }
        }
        for cqe in self.ring.completion() {
            done.push((cqe.user_data(), cqe.result() as i64));
        }
        Ok(())
    }
}
