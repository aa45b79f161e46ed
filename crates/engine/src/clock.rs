//! Time for the replay loop: a real monotonic clock, and a scripted one for tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub use naslab_backend::clock::monotonic_ns;

/// A source of time in nanoseconds since the start of the measured phase.
pub trait Clock: Send + Clone {
    /// Now.
    fn now_ns(&self) -> u64;
    /// Returns at `deadline_ns` or as soon after as the clock can.
    fn wait_until(&self, deadline_ns: u64);
}

/// CLOCK_MONOTONIC, read through the vDSO (tens of ns), relative to an epoch.
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    epoch_ns: u64,
    /// How close to a deadline waiting stops sleeping and spins.
    spin_ns: u64,
}

impl MonotonicClock {
    /// A clock whose zero is now.
    pub fn starting_now() -> Self {
        MonotonicClock {
            epoch_ns: monotonic_ns(),
            spin_ns: SPIN_NS,
        }
    }

    /// The same clock, spinning only the last `spin_ns` before a deadline and sleeping
    /// before that (for real-time threads, whose sleeps end on time: a thread that spins
    /// all the time would use up the kernel's real-time budget and be throttled).
    pub fn with_spin_ns(self, spin_ns: u64) -> Self {
        MonotonicClock { spin_ns, ..self }
    }

    /// A clock whose zero is `epoch_ns` on CLOCK_MONOTONIC.
    pub fn with_epoch(epoch_ns: u64) -> Self {
        MonotonicClock {
            epoch_ns,
            spin_ns: SPIN_NS,
        }
    }
}

/// Sleeping is only trusted up to this close to a deadline; the rest is spun.
const SPIN_NS: u64 = 80_000;

impl Clock for MonotonicClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.epoch_ns)
    }

    fn wait_until(&self, deadline_ns: u64) {
        loop {
            let now = self.now_ns();
            if now >= deadline_ns {
                return;
            }
            let left = deadline_ns - now;
            if left > self.spin_ns + self.spin_ns / 4 {
                std::thread::sleep(std::time::Duration::from_nanos(left - self.spin_ns));
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// Asks the kernel to wake this thread's sleeps on time (the default timer slack is 50 µs).
#[cfg(not(target_os = "linux"))]
pub fn tighten_timer_slack() {}

/// Asks the kernel to wake this thread's sleeps on time (the default timer slack is 50 µs).
#[cfg(target_os = "linux")]
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes a plain integer and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// A clock that moves only when told: waiting jumps to the deadline, and a test's
/// backend advances it by the service time it wants each op to take.
#[derive(Clone, Debug, Default)]
pub struct ScriptedClock {
    now: Arc<AtomicU64>,
}

impl ScriptedClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves time forward by `ns`.
    pub fn advance(&self, ns: u64) {
        self.now.fetch_add(ns, Ordering::SeqCst);
    }
}

impl Clock for ScriptedClock {
    fn now_ns(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    fn wait_until(&self, deadline_ns: u64) {
        self.now.fetch_max(deadline_ns, Ordering::SeqCst);
    }
}
