//! Keeping the happens-before edges between streams while they replay.
//!
//! Each stream has a [`Gate`]: how many of its ops have completed, published only at
//! the ops another stream waits for (and at its end), so a stream that nobody waits for
//! touches no shared memory. A stream that must wait reads the source's count; if it is
//! short, it sleeps on a futex word that the source bumps when it publishes, and the
//! source makes the system call to wake it only when someone sleeps there.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use crate::plan::{StreamOrder, Wait};

/// A sleeping wait looks at the stop flags and the time limit at least this often.
const SLEEP_SLICE_NS: i64 = 20_000_000;

/// Spins before sleeping: a hand-over often comes within a few microseconds.
const SPINS: u32 = 200;

/// One stream's completed ops, as other streams see them.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    done: AtomicU64,
    /// Bumped at each publish: the futex word sleepers wait on.
    word: AtomicU32,
    sleepers: AtomicU32,
}

impl Gate {
    /// Says that `count` of the stream's ops have completed (`u64::MAX`: all it will).
    pub(crate) fn publish(&self, count: u64) {
        self.done.fetch_max(count, Ordering::SeqCst);
        self.word.fetch_add(1, Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            futex_wake(&self.word);
        }
    }

    fn reached(&self, count: u64) -> bool {
        self.done.load(Ordering::Acquire) >= count
    }

    /// Sleeps until `count` ops have completed or a slice has passed.
    fn sleep(&self, count: u64) {
        let word = self.word.load(Ordering::SeqCst);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        if self.done.load(Ordering::SeqCst) < count {
            futex_wait(&self.word, word, SLEEP_SLICE_NS);
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(windows)]
fn futex_wait(word: &AtomicU32, expected: u32, timeout_ns: i64) {
    use windows_sys::Win32::System::Threading::WaitOnAddress;
    let ms = u32::try_from(timeout_ns / 1_000_000)
        .unwrap_or(u32::MAX)
        .max(1);
    // SAFETY: the word lives as long as the gates, which outlive every stream thread;
    // WaitOnAddress only reads it and the expected value, both 4 bytes.
    unsafe {
        WaitOnAddress(
            word.as_ptr().cast(),
            (&expected as *const u32).cast(),
            std::mem::size_of::<u32>(),
            ms,
        );
    }
}

#[cfg(windows)]
fn futex_wake(word: &AtomicU32) {
    use windows_sys::Win32::System::Threading::WakeByAddressAll;
    // SAFETY: as in futex_wait.
    unsafe { WakeByAddressAll(word.as_ptr().cast()) };
}

#[cfg(target_os = "linux")]
fn futex_wait(word: &AtomicU32, expected: u32, timeout_ns: i64) {
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: the word lives as long as the gates, which outlive every stream thread;
    // the kernel only reads it and the timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            &ts as *const libc::timespec,
        );
    }
}

#[cfg(target_os = "linux")]
fn futex_wake(word: &AtomicU32) {
    // SAFETY: as in futex_wait.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            i32::MAX,
        );
    }
}

/// What the ordering cost one stream.
#[derive(Debug, Clone, Copy, Default)]
pub struct OrderWaits {
    /// Edges whose source had not completed when the stream came to them.
    pub waits: u64,
    pub total_ns: u64,
    pub longest_ns: u64,
}

/// One stream's side of the ordering during a replay.
pub(super) struct Order<'a> {
    gates: &'a [Gate],
    me: usize,
    waits: &'a [Wait],
    next_wait: usize,
    /// Where the next wait is, `u64::MAX` for none.
    pub(super) wait_at: u64,
    sources: &'a [u64],
    next_source: usize,
    /// The next op others wait for, `u64::MAX` for none.
    source_at: u64,
}

impl<'a> Order<'a> {
    /// The stream at `me` among `gates`; with `enforce` false, it neither waits nor publishes.
    pub(super) fn new(gates: &'a [Gate], me: usize, order: &'a StreamOrder, enforce: bool) -> Self {
        let (waits, sources): (&[Wait], &[u64]) = if enforce {
            (&order.waits, &order.sources)
        } else {
            (&[], &[])
        };
        Order {
            gates,
            me,
            waits,
            next_wait: 0,
            wait_at: waits.first().map_or(u64::MAX, |w| w.at),
            sources,
            next_source: 0,
            source_at: sources.first().copied().unwrap_or(u64::MAX),
        }
    }

    /// The sources the op at `seq` waits for that have not completed yet, moving past
    /// its waits: the first one that is short, if any.
    pub(super) fn pending(&mut self, seq: u64) -> Option<(usize, u64)> {
        while let Some(w) = self.waits.get(self.next_wait) {
            if w.at != seq {
                break;
            }
            let gate = &self.gates[w.source as usize];
            if !gate.reached(w.count) {
                return Some((w.source as usize, w.count));
            }
            self.next_wait += 1;
        }
        self.wait_at = self.waits.get(self.next_wait).map_or(u64::MAX, |w| w.at);
        None
    }

    /// Waits for `count` ops of stream `source`, spinning a little then sleeping; gives
    /// up (false) when `give_up` says so, asked between sleeps.
    pub(super) fn wait(
        &self,
        source: usize,
        count: u64,
        mut give_up: impl FnMut() -> bool,
    ) -> bool {
        let gate = &self.gates[source];
        for _ in 0..SPINS {
            if gate.reached(count) {
                return true;
            }
            std::hint::spin_loop();
        }
        loop {
            if gate.reached(count) {
                return true;
            }
            if give_up() {
                return false;
            }
            gate.sleep(count);
        }
    }

    /// Says that the stream's first `count` ops have completed.
    #[inline]
    pub(super) fn completed(&mut self, count: u64) {
        if count <= self.source_at {
            return;
        }
        while self
            .sources
            .get(self.next_source)
            .is_some_and(|&s| s < count)
        {
            self.next_source += 1;
        }
        self.source_at = self
            .sources
            .get(self.next_source)
            .copied()
            .unwrap_or(u64::MAX);
        self.gates[self.me].publish(count);
    }
}

impl Drop for Order<'_> {
    /// However the stream ends, nothing waits for it any longer.
    fn drop(&mut self) {
        if let Some(g) = self.gates.get(self.me) {
            g.publish(u64::MAX);
        }
    }
}
