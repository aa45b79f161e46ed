//! The runtime a protocol connection's requests run on. The protocol crates are async;
//! naslab gives each connection a single-thread tokio runtime of its own, so the
//! [`naslab_backend::Backend`] trait stays synchronous and streams stay independent. Each request
//! is waited for at most the I/O timeout; one the server leaves unanswered that long
//! marks the connection dead, and every later request on it fails at once (the closes
//! and commits after a fatal error do not wait again). Connections a target makes share
//! one more flag, the server's silence: once any of them waited in vain, the others
//! (and the target letting its share go) send nothing more either.

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::url::no_reply;

/// Why a request got no reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Silence {
    /// An earlier request found the server gone or silent: this one was not sent.
    Earlier,
    /// The server did not answer within the timeout; the connection is now dead.
    Now,
}

/// One connection's runtime, deadline and liveness.
pub(crate) struct Waiter {
    /// Runs the runtime while the stream is between ops, once asked to
    /// ([`Waiter::answer_while_idle`]). Declared before the runtime, so that its thread
    /// is stopped first.
    idle: Option<super::idle_driver::IdleDriver>,
    rt: Arc<tokio::runtime::Runtime>,
    /// `host:port`, for messages.
    addr: String,
    timeout: Duration,
    /// `--retrans-timeout` (SMB): a request unanswered this long marks this connection
    /// dead, not the server silent, for the caller to make a new one.
    retrans: Option<Duration>,
    dead: Cell<bool>,
    /// Set by whichever connection to the server found it silent.
    silent: Arc<AtomicBool>,
}

impl Waiter {
    /// A runtime for the connection to `addr` (`host:port`), whose requests wait at most
    /// `timeout`.
    pub(crate) fn new(addr: String, timeout: Duration) -> std::io::Result<Waiter> {
        super::heap::keep_large_blocks();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        Ok(Waiter {
            idle: None,
            rt: Arc::new(rt),
            addr,
            timeout,
            retrans: None,
            dead: Cell::new(false),
            silent: Arc::new(AtomicBool::new(false)),
        })
    }

    /// From now on, the runtime runs while the stream is between ops too
    /// (`backend::idle_driver`): what the server sends unasked, an oplock break, is
    /// answered then, and the runtime's own timed tasks (an NFSv4 lease renewal) run. A
    /// thread that cannot be started leaves things as they were: the server then waits
    /// for the stream's next request.
    #[cfg_attr(
        not(any(feature = "smb", all(unix, feature = "nfs"))),
        allow(dead_code)
    )]
    pub(crate) fn answer_while_idle(&mut self) {
        if self.idle.is_none() {
            self.idle = super::idle_driver::IdleDriver::start(Arc::clone(&self.rt)).ok();
        }
    }

    /// Sets the retransmit timeout ([`Waiter::retrans_now`]).
    #[cfg_attr(not(feature = "smb"), allow(dead_code))]
    pub(crate) fn set_retrans(&mut self, retrans: Option<Duration>) {
        self.retrans = retrans;
    }

    /// The retransmit timeout a request waits now: set, shorter than the I/O timeout
    /// left, and on a connection neither dead nor found silent.
    #[cfg_attr(not(feature = "smb"), allow(dead_code))]
    pub(crate) fn retrans_now(&self) -> Option<Duration> {
        self.retrans
            .filter(|r| *r < self.timeout && !self.is_dead() && !self.is_silent())
    }

    /// `limit`, or the retransmit timeout when it is set and shorter: how long one try
    /// at a new connection may wait.
    #[cfg_attr(not(feature = "smb"), allow(dead_code))]
    pub(crate) fn retrans_limit(&self, limit: Duration) -> Duration {
        self.retrans.map_or(limit, |r| r.min(limit))
    }

    /// Shares `other`'s knowledge of the server's silence (connections of one target).
    pub(crate) fn share_silence_with(&mut self, other: &Waiter) {
        self.silent = Arc::clone(&other.silent);
    }

    /// `host:port` of the connection.
    #[cfg_attr(not(feature = "smb"), allow(dead_code))]
    pub(crate) fn addr(&self) -> &str {
        &self.addr
    }

    /// "no reply from HOST:PORT within N s".
    pub(crate) fn no_reply(&self) -> String {
        no_reply(&self.addr, self.timeout)
    }

    /// Whether a request found the server gone or silent.
    #[cfg_attr(not(feature = "smb"), allow(dead_code))]
    pub(crate) fn is_dead(&self) -> bool {
        self.dead.get()
    }

    /// Whether a connection to the server waited in vain for a reply (this one or
    /// another of its target).
    #[cfg_attr(not(feature = "smb"), allow(dead_code))]
    pub(crate) fn is_silent(&self) -> bool {
        self.silent.load(Ordering::Relaxed)
    }

    /// A connection made again after its old one broke: requests go out again, unless
    /// the server was found silent.
    #[cfg_attr(not(feature = "smb"), allow(dead_code))]
    pub(crate) fn revive(&self) {
        if !self.is_silent() {
            self.dead.set(false);
        }
    }

    /// Marks the connection dead: later requests fail without being sent.
    pub(crate) fn mark_dead(&self) {
        self.dead.set(true);
    }

    /// What a request waits at most now.
    #[cfg_attr(not(feature = "nfs"), allow(dead_code))]
    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Makes later requests wait at most `timeout`.
    pub(crate) fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Runs `fut` (connecting, signing in, mounting...) to its end; `None` when it took
    /// longer than the timeout.
    pub(crate) fn run<T>(&self, fut: impl Future<Output = T>) -> Option<T> {
        self.run_for(self.timeout, fut)
    }

    /// Runs `fut` to its end; `None` when it took longer than `limit`.
    pub(crate) fn run_for<T>(&self, limit: Duration, fut: impl Future<Output = T>) -> Option<T> {
        // Pinned on this stack, so that what the runtime is given is small: tokio puts
        // a future of more than 2 KiB (16 KiB in a release build) on the heap, an
        // allocation per request with the SMB crate's request futures.
        let fut = std::pin::pin!(fut);
        if let Some(d) = &self.idle {
            d.enter();
        }
        // The timer is made inside the runtime, which drives it.
        let r = self
            .rt
            .block_on(async move { tokio::time::timeout(limit, fut).await })
            .ok();
        if let Some(d) = &self.idle {
            d.leave();
        }
        r
    }

    /// One request and its reply, at most the timeout. A connection found dead earlier
    /// sends nothing; a request left unanswered marks it dead.
    pub(crate) fn request<T>(&self, fut: impl Future<Output = T>) -> Result<T, Silence> {
        if self.dead.get() || self.silent.load(Ordering::Relaxed) {
            self.dead.set(true);
            return Err(Silence::Earlier);
        }
        self.run(fut).ok_or_else(|| {
            self.dead.set(true);
            self.silent.store(true, Ordering::Relaxed);
            Silence::Now
        })
    }
}

/// Runs `futs` together on the connection's thread, each to its end, and gives their
/// outputs in order: one op's requests in flight at once, with nothing allocated. The
/// futures are pinned where the caller made them: a stream's stack is small, and they
/// are not.
#[cfg_attr(not(feature = "smb"), allow(dead_code))]
pub(crate) async fn join_all<F: Future, const N: usize>(
    mut futs: std::pin::Pin<&mut [F; N]>,
) -> [F::Output; N] {
    use std::task::Poll;

    let mut outs: [Option<F::Output>; N] = std::array::from_fn(|_| None);
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, out) in outs.iter_mut().enumerate() {
            if out.is_some() {
                continue;
            }
            // SAFETY: the array is pinned, and none of its futures is ever moved out
            // of it, so each stays where it was first polled.
            let fut = unsafe { futs.as_mut().map_unchecked_mut(|a| &mut a[i]) };
            match fut.poll(cx) {
                Poll::Ready(v) => *out = Some(v),
                Poll::Pending => pending = true,
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outs.map(|o| o.expect("every future ran to its end"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_left_unanswered_marks_the_connection_dead() {
        let mut w = Waiter::new("192.0.2.1:445".into(), Duration::from_secs(30)).unwrap();
        // As a target being let go does: its requests wait less from then on.
        w.set_timeout(Duration::from_millis(100));
        assert_eq!(w.request(async { 7 }), Ok(7));
        assert!(!w.is_dead());
        let silent = std::future::pending::<()>();
        assert_eq!(w.request(silent), Err(Silence::Now));
        assert!(w.is_dead());
        // Nothing more is sent, and nothing waits.
        assert_eq!(w.request(async { 7 }), Err(Silence::Earlier));
        assert_eq!(w.no_reply(), "no reply from 192.0.2.1:445 within 0.1 s");
        // Running without a request's bookkeeping still works (a goodbye, say).
        assert_eq!(w.run_for(Duration::from_secs(1), async { 8 }), Some(8));
    }

    #[test]
    fn join_all_runs_its_futures_together_and_keeps_their_order() {
        let w = Waiter::new("192.0.2.1:445".into(), Duration::from_secs(30)).unwrap();
        // Each but the last waits for the one after it to have started: run one at a
        // time, the first would never end.
        let started = std::cell::RefCell::new(Vec::new());
        let ended = std::cell::RefCell::new(Vec::new());
        let one = |i: usize| {
            let (started, ended) = (&started, &ended);
            async move {
                started.borrow_mut().push(i);
                std::future::poll_fn(|cx| {
                    if i == 3 || started.borrow().contains(&(i + 1)) {
                        std::task::Poll::Ready(())
                    } else {
                        cx.waker().wake_by_ref();
                        std::task::Poll::Pending
                    }
                })
                .await;
                ended.borrow_mut().push(i);
                i * 10
            }
        };
        let futs = std::pin::pin!([one(0), one(1), one(2), one(3)]);
        let outs = w
            .run_for(Duration::from_secs(5), join_all(futs))
            .expect("the futures ran together");
        assert_eq!(outs, [0, 10, 20, 30]);
        assert_eq!(*started.borrow(), [0, 1, 2, 3]);
        assert_eq!(*ended.borrow(), [3, 0, 1, 2]);
    }

    #[test]
    fn a_connection_that_waited_in_vain_silences_the_others_of_its_target() {
        let admin = Waiter::new("192.0.2.1:445".into(), Duration::from_secs(30)).unwrap();
        let mut stream = Waiter::new("192.0.2.1:445".into(), Duration::from_millis(50)).unwrap();
        let mut other = Waiter::new("192.0.2.1:445".into(), Duration::from_secs(30)).unwrap();
        stream.share_silence_with(&admin);
        other.share_silence_with(&admin);
        let lone = Waiter::new("192.0.2.1:445".into(), Duration::from_secs(30)).unwrap();
        assert_eq!(other.request(async { 1 }), Ok(1));
        assert_eq!(
            stream.request(std::future::pending::<()>()),
            Err(Silence::Now)
        );
        // The others send nothing more (a wait would end in Now, 30 s later).
        assert_eq!(
            other.request(std::future::pending::<()>()),
            Err(Silence::Earlier)
        );
        assert_eq!(
            admin.request(std::future::pending::<()>()),
            Err(Silence::Earlier)
        );
        assert!(other.is_dead() && admin.is_dead());
        // A connection of another target is not told.
        assert_eq!(lone.request(async { 2 }), Ok(2));
    }
}
