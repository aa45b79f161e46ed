//! A thread that runs a connection's runtime while its stream is between ops, so that
//! what the server sends unasked is answered then too.
//!
//! A connection's runtime (`backend::waiter`) runs only while its stream waits for a
//! request. An SMB server that breaks an oplock the connection holds (another open of
//! the file) waits for the acknowledgement before it lets the other open go on, up to
//! its break timeout (35 s on Samba and Windows); the acknowledgement is sent by a task
//! of the connection's runtime, which nothing runs while the stream sleeps until its
//! next op (pacing, think time, a stream that has finished its ops but not closed its
//! files). Once a connection holds an oplock, this thread runs the runtime whenever the
//! stream has not entered it for [`IDLE`]; the stream takes it back as soon as it
//! makes its next request. The first request after such an idle spell may wait the
//! few microseconds the hand-over takes; requests made back to back never meet the
//! thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long the stream must have left its runtime before the thread runs it: also the
/// longest an unasked message waits for an answer.
pub(crate) const IDLE: Duration = Duration::from_millis(50);

/// What the stream and the thread share.
struct Shared {
    /// The stream is in its runtime (waiting for a request).
    busy: AtomicBool,
    /// When the stream last left its runtime, ns since `epoch`.
    left_ns: AtomicU64,
    epoch: Instant,
    stop: AtomicBool,
    /// Wakes the thread out of the runtime when the stream wants it back.
    want: tokio::sync::Notify,
}

/// The thread, stopped and joined when dropped.
pub(crate) struct IdleDriver {
    shared: Arc<Shared>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl IdleDriver {
    /// Starts the thread for `rt`.
    pub(crate) fn start(rt: Arc<tokio::runtime::Runtime>) -> std::io::Result<IdleDriver> {
        let shared = Arc::new(Shared {
            busy: AtomicBool::new(false),
            left_ns: AtomicU64::new(0),
            epoch: Instant::now(),
            stop: AtomicBool::new(false),
            want: tokio::sync::Notify::new(),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("naslab-idle".into())
            .stack_size(256 << 10)
            .spawn(move || drive(&rt, &s))?;
        Ok(IdleDriver {
            shared,
            thread: Some(thread),
        })
    }

    /// The stream enters its runtime: the thread lets go of it.
    #[inline]
    pub(crate) fn enter(&self) {
        self.shared.busy.store(true, Ordering::SeqCst);
        self.shared.want.notify_one();
    }

    /// The stream left its runtime.
    #[inline]
    pub(crate) fn leave(&self) {
        let now = self.shared.epoch.elapsed().as_nanos() as u64;
        self.shared.left_ns.store(now, Ordering::Relaxed);
        self.shared.busy.store(false, Ordering::SeqCst);
    }
}

impl Drop for IdleDriver {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.want.notify_one();
        if let Some(t) = self.thread.take() {
            // A thread that panicked has nothing left to clean up.
            let _ = t.join();
        }
    }
}

/// The thread: every [`IDLE`], runs the runtime until the stream wants it or the next
/// check, when the stream has been out of it that long.
fn drive(rt: &tokio::runtime::Runtime, s: &Shared) {
    while !s.stop.load(Ordering::SeqCst) {
        std::thread::sleep(IDLE);
        if s.busy.load(Ordering::SeqCst) {
            continue;
        }
        let now = s.epoch.elapsed().as_nanos() as u64;
        if now.saturating_sub(s.left_ns.load(Ordering::Relaxed)) < IDLE.as_nanos() as u64 {
            continue;
        }
        rt.block_on(async {
            tokio::select! {
                _ = s.want.notified() => {}
                _ = tokio::time::sleep(IDLE) => {}
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A task of the runtime runs while nothing else enters it, and the runtime is the
    /// stream's again at once when it enters.
    #[test]
    fn the_runtime_runs_while_the_stream_is_idle() {
        let rt = Arc::new(
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap(),
        );
        let d = IdleDriver::start(Arc::clone(&rt)).unwrap();
        let ran = Arc::new(AtomicBool::new(false));
        let r = Arc::clone(&ran);
        d.enter();
        rt.block_on(async {
            tokio::spawn(async move {
                // Wakes after the stream left the runtime.
                tokio::time::sleep(Duration::from_millis(1)).await;
                r.store(true, Ordering::SeqCst);
            });
        });
        d.leave();
        // Nothing enters the runtime here: only the thread can run the task. (The
        // limit only keeps a failing test from hanging; the thread runs the task
        // within about two IDLE spells.)
        let start = Instant::now();
        while !ran.load(Ordering::SeqCst) {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the runtime's task did not run while the stream was idle"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        d.enter();
        assert_eq!(rt.block_on(async { 7 }), 7);
        d.leave();
        drop(d);
    }
}
