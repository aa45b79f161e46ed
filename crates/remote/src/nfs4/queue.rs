//! Several READs and WRITEs in flight on one NFSv4.1 session (a queue depth above 1).
//!
//! Each queued op becomes a future of the library's calls, kept until it completes;
//! the library takes a slot of the session's slot table for each call (waiting for one
//! when all are taken: the server's `ca_maxrequests` bounds what is in flight), gives
//! it its own XID and matches the replies by XID. The connection's runtime runs only
//! while the stream waits in [`Nfs4Queue::reap`], so the ops queued since the last wait
//! go out together there, as over SMB (`smb/queue.rs`).

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

use bytes::Bytes;

use super::session::{Session, op_error};
use naslab_backend::{Handle, OpError};

/// A completed op: its tag, its handle, the bytes moved or the failure, and for a
/// write whether the server left any of it unstable (to be committed at close).
pub(super) struct Done {
    pub(super) tag: u64,
    pub(super) handle: Handle,
    pub(super) result: Result<usize, OpError>,
    pub(super) unstable: bool,
}

type Request = Pin<Box<dyn Future<Output = Done>>>;

/// The requests of one stream's queue.
#[derive(Default)]
pub(super) struct Nfs4Queue {
    in_flight: Vec<Request>,
}

// SAFETY: a queue belongs to one stream's backend; its futures are made, polled and
// dropped on that stream's thread only, like the session whose runtime drives them.
unsafe impl Send for Nfs4Queue {}

impl Nfs4Queue {
    /// Whether no op is in flight.
    pub(super) fn is_empty(&self) -> bool {
        self.in_flight.is_empty()
    }

    /// Queues a read of `len` bytes at `offset` into `buf`, in READs of at most the
    /// session's size, one after another.
    ///
    /// # Safety
    /// `session` must outlive the op, and `buf` must stay valid and unused by anything
    /// else for `len` bytes until the op has been reaped (or the queue dropped).
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn read(
        &mut self,
        session: *const Session,
        handle: Handle,
        fh: Bytes,
        offset: u64,
        buf: *mut u8,
        len: usize,
        tag: u64,
    ) {
        let fut = async move {
            // SAFETY: the caller promised the session outlives the op.
            let s = unsafe { &*session };
            let max = (s.rmax as usize).max(1);
            let mut done = 0usize;
            let result = loop {
                if done >= len {
                    break Ok(done);
                }
                let n = (len - done).min(max);
                match s
                    .mount()
                    .read(fh.clone(), offset + done as u64, n as u32)
                    .await
                {
                    Ok(data) => {
                        let got = data.len().min(n);
                        // SAFETY: the op's `len` bytes at `buf` are its alone until it
                        // is reaped, and `done..done + got` lies within them.
                        let into = unsafe { std::slice::from_raw_parts_mut(buf.add(done), got) };
                        into.copy_from_slice(&data[..got]);
                        done += got;
                        if got < n {
                            break Ok(done);
                        }
                    }
                    Err(e) => break Err(op_error(e)),
                }
            };
            Done {
                tag,
                handle,
                result,
                unstable: false,
            }
        };
        self.in_flight.push(Box::pin(fut));
    }

    /// Queues a write of `len` bytes from `buf` at `offset`, in WRITEs of at most the
    /// session's size; on a `sync` open, a reply that is not FILE_SYNC is followed by a
    /// COMMIT before the op completes, as at depth 1.
    ///
    /// # Safety
    /// As for [`Nfs4Queue::read`] (the buffer is only read from).
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn write(
        &mut self,
        session: *const Session,
        handle: Handle,
        fh: Bytes,
        sync: bool,
        offset: u64,
        buf: *const u8,
        len: usize,
        tag: u64,
    ) {
        let fut = async move {
            // SAFETY: the caller promised the session outlives the op.
            let s = unsafe { &*session };
            let max = (s.wmax as usize).max(1);
            let mut done = 0usize;
            let mut stable = true;
            let mut result = loop {
                if done >= len {
                    break Ok(done);
                }
                let n = (len - done).min(max);
                // SAFETY: the op's `len` bytes at `buf` stay valid until it is reaped,
                // and `done..done + n` lies within them.
                let part = unsafe { std::slice::from_raw_parts(buf.add(done), n) };
                let chunk = Bytes::copy_from_slice(part);
                match s
                    .mount()
                    .write(fh.clone(), offset + done as u64, chunk)
                    .await
                {
                    Ok(out) => {
                        stable &= out.committed == nfs_rs::WriteCommitted::FileSync;
                        let wrote = (out.count as usize).min(n);
                        done += wrote;
                        if wrote == 0 {
                            break Ok(done);
                        }
                    }
                    Err(e) => break Err(op_error(e)),
                }
            };
            if sync
                && !stable
                && done > 0
                && let Err(e) = s.mount().commit(fh.clone(), 0, 0).await
            {
                result = Err(op_error(e));
            }
            Done {
                tag,
                handle,
                result,
                unstable: !sync && !stable && done > 0,
            }
        };
        self.in_flight.push(Box::pin(fut));
    }

    /// Drives every op in flight on the session's runtime until at least `min` have
    /// completed (all of them, if fewer are in flight), within the I/O timeout.
    pub(super) fn reap(
        &mut self,
        session: &Session,
        min: usize,
        done: &mut Vec<Done>,
    ) -> Result<(), OpError> {
        let want = min.min(self.in_flight.len());
        let in_flight = &mut self.in_flight;
        let mut got = 0usize;
        let waited = session.w.request(std::future::poll_fn(|cx| {
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
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }));
        waited.map_err(|_| OpError {
            errno: crate::errno::ENOTCONN,
            detail: Some(session.w.no_reply()),
        })
    }
}
