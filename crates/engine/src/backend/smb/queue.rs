//! Several reads and writes in flight on one SMB connection (a queue depth above 1).
//!
//! Each queued op becomes a request future kept until it completes. The connection's
//! runtime runs only while the stream waits in [`QueuedIo::submit_and_reap`], so the ops
//! queued since the last wait go out together there, and every op still in flight goes
//! on being driven by the later waits: the same shape as the io_uring queue of local
//! targets. The server holds as many requests at once as the stream has queued (the
//! credits the server grants permitting: a request waits for its credits otherwise).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use smb2::types::FileId;

use super::session::{Session, Wait as _};
use super::{read_piece, write_piece, Piece};
use crate::backend::OpError;

/// One op's requests, run to its end: its tag and its result (bytes, or a negated errno).
type Request = Pin<Box<dyn Future<Output = (u64, i64)>>>;

/// The requests of one stream's queue.
#[derive(Default)]
pub(super) struct SmbQueue {
    in_flight: Vec<Request>,
}

// SAFETY: a queue belongs to one stream's backend; its futures are made, polled and
// dropped on that stream's thread only (the backend moves to the thread before its
// first op and stays there), like the session whose runtime drives them.
unsafe impl Send for SmbQueue {}

/// A result as the queue reports it: the bytes moved, or the negated errno.
fn as_result(r: Result<usize, OpError>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => -(e.errno as i64),
    }
}

/// One op of `len` bytes as requests of at most `max` bytes one after another, each
/// made by `piece(from, to)` for its part of the op, until a short one (the end of the
/// file, a full disk) or a failure: the op's tag and its result.
async fn whole<F, R>(tag: u64, len: usize, max: usize, mut piece: F) -> (u64, i64)
where
    F: FnMut(usize, usize) -> R,
    R: Future<Output = Result<Piece, OpError>>,
{
    let max = max.max(1);
    let mut done = 0usize;
    while done < len {
        match piece(done, (done + max).min(len)).await {
            Ok(Piece::Moved { moved, asked }) => {
                done += moved;
                if moved < asked {
                    break;
                }
            }
            Ok(Piece::None) => break,
            Err(e) => return (tag, as_result(Err(e))),
        }
    }
    (tag, as_result(Ok(done)))
}

impl SmbQueue {
    /// Whether an op is still in flight.
    pub(super) fn is_empty(&self) -> bool {
        self.in_flight.is_empty()
    }

    /// Queues a read of `len` bytes at `offset` into `buf`, in requests of at most the
    /// server's largest read, one after another.
    ///
    /// # Safety
    /// `session` must outlive the op, and `buf` must stay valid and unused by anything
    /// else for `len` bytes until the op has been reaped (or the queue dropped).
    pub(super) unsafe fn read(
        &mut self,
        session: *const Session,
        file_id: FileId,
        offset: u64,
        buf: *mut u8,
        len: usize,
        tag: u64,
    ) {
        // SAFETY: the caller promised the session outlives the op.
        let max = unsafe { &*session }.max_read;
        let fut = whole(tag, len, max, move |from, to| {
            // SAFETY: the caller promised the session outlives the op, and `len` bytes
            // at `buf` for this op alone until it is reaped; `from..to` lies within them.
            let (s, part) = unsafe {
                (
                    &*session,
                    std::slice::from_raw_parts_mut(buf.add(from), to - from),
                )
            };
            read_piece(s, file_id, offset + from as u64, Some(part))
        });
        self.in_flight.push(Box::pin(fut));
    }

    /// Queues a write of `len` bytes from `buf` at `offset`, as [`SmbQueue::read`].
    ///
    /// # Safety
    /// As for [`SmbQueue::read`].
    pub(super) unsafe fn write(
        &mut self,
        session: *const Session,
        file_id: FileId,
        offset: u64,
        buf: *const u8,
        len: usize,
        tag: u64,
    ) {
        // SAFETY: the caller promised the session outlives the op.
        let max = unsafe { &*session }.max_write;
        let fut = whole(tag, len, max, move |from, to| {
            // SAFETY: as for `read`: the session and the op's `len` bytes outlive it.
            let (s, part) = unsafe {
                (
                    &*session,
                    std::slice::from_raw_parts(buf.add(from), to - from),
                )
            };
            write_piece(s, file_id, offset + from as u64, Some(part))
        });
        self.in_flight.push(Box::pin(fut));
    }

    /// Drives every op in flight on the session's runtime until at least `min` have
    /// completed (all of them, if fewer are in flight), within the I/O timeout; appends
    /// each completed op's tag and result to `done`.
    pub(super) fn reap(
        &mut self,
        session: &Session,
        min: usize,
        done: &mut Vec<(u64, i64)>,
    ) -> Result<(), OpError> {
        let want = min.min(self.in_flight.len());
        let in_flight = &mut self.in_flight;
        let mut got = 0usize;
        session.w.wait(std::future::poll_fn(|cx| {
            let mut i = 0;
            while i < in_flight.len() {
                match in_flight[i].as_mut().poll(cx) {
                    Poll::Ready(out) => {
                        done.push(out);
                        got += 1;
                        // The order of the ones left does not matter: each has its tag.
                        drop(in_flight.swap_remove(i));
                    }
                    Poll::Pending => i += 1,
                }
            }
            if got >= want {
                Poll::Ready(Ok::<(), smb2::Error>(()))
            } else {
                Poll::Pending
            }
        }))
    }
}
