//! Several reads and writes in flight on one SMB connection (a queue depth above 1).
//!
//! Each queued op becomes a request future kept until it completes. The connection's
//! runtime runs only while the stream waits in [`QueuedIo::submit_and_reap`], so the ops
//! queued since the last wait go out together there, and every op still in flight goes
//! on being driven by the later waits: the same shape as the io_uring queue of local
//! targets. The server holds as many requests at once as the stream has queued (the
//! credits the server grants permitting: a request waits for its credits otherwise).
//!
//! Each op's description (its handle, offset, buffer and length) is kept with it until it
//! completes, so that ops whose connection broke under them can be sent again, whole, on
//! a new one ([`SmbQueue::take_back`]).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use smb2::types::FileId;

use super::session::{Session, Wait as _};
use super::{Piece, read_piece, write_piece};
use naslab_backend::OpError;

/// One op's requests, run to its end: its tag and its result (bytes, or a negated errno).
type Request = Pin<Box<dyn Future<Output = (u64, i64)>>>;

/// What a queued op is, to send it again on a new connection.
#[derive(Debug, Clone, Copy)]
pub(super) struct Queued {
    pub tag: u64,
    pub handle: naslab_backend::Handle,
    /// Where it reads or writes (an append's place, fixed when it was queued).
    pub offset: u64,
    pub len: usize,
    pub buf: Buf,
}

/// A queued op's buffer: read into, or written from.
#[derive(Debug, Clone, Copy)]
pub(super) enum Buf {
    Read(*mut u8),
    Write(*const u8),
}

/// The requests of one stream's queue.
#[derive(Default)]
pub(super) struct SmbQueue {
    in_flight: Vec<(Queued, Request)>,
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

    /// Queues `op` on the open file `file_id`: a read into its buffer or a write from
    /// it, in requests of at most the server's largest read or write, one after another.
    ///
    /// # Safety
    /// `session` must outlive the op, and the op's buffer must stay valid (and, for a
    /// read, unused by anything else) for its `len` bytes until the op has been reaped,
    /// taken back or the queue dropped.
    pub(super) unsafe fn push(&mut self, session: *const Session, file_id: FileId, op: Queued) {
        // SAFETY: the caller's promises, passed on.
        unsafe {
            match op.buf {
                Buf::Read(buf) => self.read(session, file_id, op, buf),
                Buf::Write(buf) => self.write(session, file_id, op, buf),
            }
        }
    }

    /// A read of `op.len` bytes at `op.offset` into `buf`, as [`SmbQueue::push`].
    ///
    /// # Safety
    /// As for [`SmbQueue::push`].
    unsafe fn read(&mut self, session: *const Session, file_id: FileId, op: Queued, buf: *mut u8) {
        let Queued {
            tag, offset, len, ..
        } = op;
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
        self.in_flight.push((op, Box::pin(fut)));
    }

    /// A write of `op.len` bytes from `buf` at `op.offset`, as [`SmbQueue::push`].
    ///
    /// # Safety
    /// As for [`SmbQueue::push`].
    unsafe fn write(
        &mut self,
        session: *const Session,
        file_id: FileId,
        op: Queued,
        buf: *const u8,
    ) {
        let Queued {
            tag, offset, len, ..
        } = op;
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
        self.in_flight.push((op, Box::pin(fut)));
    }

    /// Drives every op in flight on the session's runtime until at least `min` have
    /// completed (all of them, if fewer are in flight), within the I/O timeout; appends
    /// each completed op's tag and result to `done`, and to `broken` instead the ops
    /// that failed because their connection was lost (ENOTCONN), to be sent again.
    pub(super) fn reap(
        &mut self,
        session: &Session,
        min: usize,
        done: &mut Vec<(u64, i64)>,
        broken: &mut Vec<Queued>,
    ) -> Result<(), OpError> {
        let want = min.min(self.in_flight.len());
        let in_flight = &mut self.in_flight;
        let lost = -i64::from(crate::errno::ENOTCONN);
        let mut got = 0usize;
        session.w.wait(std::future::poll_fn(|cx| {
            let mut i = 0;
            while i < in_flight.len() {
                match in_flight[i].1.as_mut().poll(cx) {
                    Poll::Ready(out) => {
                        if out.1 == lost && session.lost(&OpError::errno(crate::errno::ENOTCONN)) {
                            broken.push(in_flight[i].0);
                        } else {
                            done.push(out);
                        }
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

    /// Takes back every op still in flight (their requests dropped unanswered), to be
    /// sent again on a new connection after the old one was lost.
    pub(super) fn take_back(&mut self) -> Vec<Queued> {
        self.in_flight.drain(..).map(|(op, _)| op).collect()
    }
}
