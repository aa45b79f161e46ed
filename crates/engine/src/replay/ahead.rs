//! Write data made ahead: a stream that issues one op at a time would otherwise generate
//! each write's data between the previous op's completion and the write's issue, where
//! the device idles (128 KiB took about 35 µs here, against a write of 220 µs). A
//! thread of the stream's own reads the stream's ops ahead and fills a small ring of
//! buffers with the data of its next writes, so the stream finds them ready. A stream
//! with several ops in flight gains the same where its device completes a write in the
//! submitting call (zram, the page cache); each of its writes holds its slot until it
//! completes.
//!
//! The data is the same as when the stream makes it itself (the same block keys and
//! generations): only where and when it is made changes. When the maker falls behind,
//! the stream takes the slot and fills it itself, as it would without the ring, so a busy
//! machine is never slower than without it; how many writes were made that way is
//! counted.
//!
//! Each slot's state is one word, `write index << 2 | state`, so a slot is only ever
//! filled for the one write it is meant for and never while the stream writes from it.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
use std::thread::Thread;
use std::time::Duration;

use naslab_trace::OpKind;

use crate::buffer::AlignedBuf;
use crate::data::{self, BLOCK, DataSpec};
use crate::spool::CompiledOp;
use crate::spool_io::PrefetchReader;

/// Free for the write of its index (the maker may fill it).
const FREE: u64 = 0;
/// Being filled by the maker.
const FILLING: u64 = 1;
/// Filled by the maker, for the write of its index.
const READY: u64 = 2;
/// Taken by the stream, which fills it itself.
const TAKEN: u64 = 3;

/// What the ring holds in all, at most, unless the writes in flight need more (its
/// slots, each one of the stream's writes).
const RING_BYTES: usize = 16 << 20;
/// Slots in the ring of a stream that issues one op at a time, at most.
const MAX_SLOTS: usize = 8;

fn word(index: u64, state: u64) -> u64 {
    index << 2 | state
}

/// The generation of the `n`-th write (from 1) a stream makes in a phase: unique in the
/// run, above a base of the phase and the stream.
pub(super) fn generation(phase: u64, stream: u32, n: u64) -> u64 {
    ((phase + 1) << 56 | (stream as u64 + 1) << 32) + n
}

/// The buffers of a stream's next writes and who holds each.
pub(super) struct Ahead {
    buf: AlignedBuf,
    base: *mut u8,
    slot_len: usize,
    states: Vec<AtomicU64>,
    /// Set when the stream is done: the maker stops.
    done: AtomicBool,
    /// The maker, parked while every slot is ahead of the stream.
    maker: OnceLock<Thread>,
    /// The write index whose release wakes the parked maker (`u64::MAX`: not parked).
    wake_at: AtomicU64,
    /// How many writes past the one holding the slot the maker waits for are released
    /// before it is woken (see [`Ahead::wake_index`]).
    wake_lag: u64,
    /// Writes the stream found ready, and writes it filled itself.
    found_ready: AtomicU64,
    filled_by_stream: AtomicU64,
}

// SAFETY: a slot's bytes are written only by whoever moved its state word to FILLING
// (the maker) or TAKEN (the stream), and read by the stream only while the slot is READY
// or TAKEN for the write it issues; the state words order those accesses (release on
// each hand-over, acquire on each take).
unsafe impl Sync for Ahead {}
// SAFETY: the buffer is owned memory; the raw pointer is into it.
unsafe impl Send for Ahead {}

// SAFETY: the buffer is allocated for the ring's life and never moves (`base` points
// into it). A write queued from its slot holds the slot TAKEN until it has been reaped
// and released, and the maker fills only slots it moved from FREE: nobody touches a lent
// slot's bytes meanwhile.
unsafe impl naslab_backend::IoRegion for Ahead {
    fn base(&self) -> *mut u8 {
        self.base
    }
    fn len(&self) -> usize {
        self.buf.len()
    }
}

/// The figures of one stream's ring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AheadCounts {
    /// Writes whose data the maker had ready.
    pub found_ready: u64,
    /// Writes whose data the stream made itself (the maker was behind).
    pub filled_by_stream: u64,
}

impl Ahead {
    /// A ring for writes of at most `slot_len` bytes of a stream that has up to
    /// `in_flight` writes in flight at once, or `None` when the memory cannot be had
    /// (the stream then makes its data itself).
    ///
    /// A write holds its slot until it completes, so the ring has more slots than writes
    /// in flight (else the maker could never be ahead): up to twice as many within
    /// [`RING_BYTES`], and at least one more.
    pub(super) fn new(slot_len: usize, in_flight: usize) -> Option<Ahead> {
        let slot_len = slot_len.max(BLOCK);
        let in_flight = in_flight.max(1);
        let slots = (RING_BYTES / slot_len)
            .min(MAX_SLOTS.max(2 * in_flight))
            .max(in_flight + 1);
        let mut buf = AlignedBuf::try_zeroed(slot_len * slots)?;
        let base = buf.as_mut_slice().as_mut_ptr();
        Some(Ahead {
            buf,
            base,
            slot_len,
            states: (0..slots as u64)
                .map(|i| AtomicU64::new(word(i, FREE)))
                .collect(),
            done: AtomicBool::new(false),
            maker: OnceLock::new(),
            wake_at: AtomicU64::new(u64::MAX),
            wake_lag: if in_flight > 1 { 0 } else { slots as u64 / 2 },
            found_ready: AtomicU64::new(0),
            filled_by_stream: AtomicU64::new(0),
        })
    }

    fn slots(&self) -> u64 {
        self.states.len() as u64
    }

    fn state(&self, index: u64) -> &AtomicU64 {
        &self.states[(index % self.slots()) as usize]
    }

    /// The bytes of the slot of write `index`.
    ///
    /// # Safety
    /// The caller holds the slot (FILLING or TAKEN for it, or READY and taken by the
    /// stream), so nobody else touches these bytes meanwhile.
    #[allow(clippy::mut_from_ref)]
    unsafe fn slot_mut(&self, index: u64, len: usize) -> &mut [u8] {
        debug_assert!(len <= self.slot_len && self.buf.len() >= self.slot_len);
        let at = (index % self.slots()) as usize * self.slot_len;
        // SAFETY: `at + len` is within the buffer (a slot is `slot_len` bytes and `len`
        // at most that), and the caller holds the slot.
        unsafe { std::slice::from_raw_parts_mut(self.base.add(at), len) }
    }

    /// The maker's loop, on a thread of its own: reads the stream's ops and fills the
    /// slots of its writes in order, each as soon as the stream has released it, until
    /// the ops end or the stream is done.
    pub(super) fn make(&self, mut ops: PrefetchReader, data: DataSpec, phase: u64, stream: u32) {
        let _ = self.maker.set(std::thread::current());
        let mut scratch = vec![0u8; BLOCK];
        let mut index = 0u64;
        while let Ok(Some(op)) = ops.next_op() {
            if op.kind != OpKind::Write {
                continue;
            }
            if !self.claim(index) {
                if self.done.load(Ordering::Acquire) {
                    return;
                }
                // The stream took it: on to the next.
                index += 1;
                continue;
            }
            // SAFETY: the slot is FILLING for `index`: only this thread touches it.
            let out = unsafe { self.slot_mut(index, op.len as usize) };
            let generation = generation(phase, stream, index + 1);
            data::fill(&data, op.file, op.offset, generation, out, &mut scratch);
            self.state(index)
                .store(word(index, READY), Ordering::Release);
            index += 1;
        }
    }

    /// The maker's claim on write `index`'s slot: waits (parked) until the stream has
    /// released it. False when the stream took it first, or is done.
    fn claim(&self, index: u64) -> bool {
        let state = self.state(index);
        loop {
            if self.done.load(Ordering::Acquire) {
                return false;
            }
            let now = state.load(Ordering::Acquire);
            if now == word(index, FREE) {
                if state
                    .compare_exchange(
                        now,
                        word(index, FILLING),
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    )
                    .is_ok()
                {
                    return true;
                }
                continue;
            }
            if now == word(index, TAKEN) || now >> 2 > index {
                return false;
            }
            // Still held by an earlier write: parked until the stream releases it.
            self.wake_at.store(self.wake_index(index), Ordering::SeqCst);
            if state.load(Ordering::SeqCst) != now {
                self.wake_at.store(u64::MAX, Ordering::SeqCst);
                continue;
            }
            std::thread::park_timeout(Duration::from_millis(5));
            self.wake_at.store(u64::MAX, Ordering::SeqCst);
        }
    }

    /// The write whose release wakes the maker parked for write `index`'s slot, which
    /// write `index - slots` holds. One op at a time, the stream releases one write after
    /// another: the maker is woken once half the ring is free, so it wakes once per few
    /// writes, not after each. With writes in flight, the stream releases a whole batch
    /// at once, as its completions are reaped, and queues the next batch right after:
    /// the maker is woken by the release of the slot itself, so it makes the next batch's
    /// data while this one is in flight. (Woken half a ring later, it was woken by the
    /// release after which the stream needed that batch's data at once: at depth 32 on
    /// zram the stream made 5 to 7 % of its 128 KiB writes' data itself.)
    fn wake_index(&self, index: u64) -> u64 {
        (index + self.wake_lag).saturating_sub(self.slots())
    }

    /// The stream's take of write `index`'s slot (the `index`-th write from 0, of `len`
    /// bytes to `offset` of `file`): ready from the maker, else filled here now. The
    /// stream holds it until [`Ahead::release`].
    pub(super) fn take(
        &self,
        index: u64,
        op: &CompiledOp,
        data: &DataSpec,
        generation: u64,
        scratch: &mut [u8],
    ) {
        let state = self.state(index);
        let mut spins = 0u32;
        loop {
            let now = state.load(Ordering::Acquire);
            if now == word(index, READY) {
                self.found_ready.fetch_add(1, Ordering::Relaxed);
                break;
            }
            if now == word(index, FREE)
                && state
                    .compare_exchange(now, word(index, TAKEN), Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                // SAFETY: the slot is TAKEN for `index`: the maker will not touch it.
                let out = unsafe { self.slot_mut(index, op.len as usize) };
                data::fill(data, op.file, op.offset, generation, out, scratch);
                self.filled_by_stream.fetch_add(1, Ordering::Relaxed);
                break;
            }
            // The stream itself still holds the slot for a write a lap earlier: no one
            // else can release it, so waiting would never end (the queued loop asks
            // `held_back` first so that this cannot come about).
            assert!(
                !self.held_back(index),
                "write {index}'s slot in the ring is still held by write {}: the stream would wait for itself",
                now >> 2
            );
            // FILLING: the maker is at it now.
            spins += 1;
            if spins < 1 << 12 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Whether write `index`'s slot is still held by the stream for an earlier write, one
    /// still in flight: ops complete in any order, and one can stay in flight for a
    /// whole lap of the ring while the others go on. Taking the slot then would wait
    /// for a completion that only the stream itself can reap.
    pub(super) fn held_back(&self, index: u64) -> bool {
        let now = self.state(index).load(Ordering::Acquire);
        now >> 2 < index && matches!(now & 3, READY | TAKEN)
    }

    /// Where the slot of write `index` starts in the ring (a queued write names its data
    /// by it).
    pub(super) fn slot_offset(&self, index: u64) -> usize {
        (index % self.slots()) as usize * self.slot_len
    }

    /// The data of write `index`, which the stream holds (between [`Ahead::take`] and
    /// [`Ahead::release`]).
    pub(super) fn held(&self, index: u64, len: usize) -> &[u8] {
        debug_assert!(matches!(
            self.state(index).load(Ordering::Acquire),
            w if w == word(index, READY) || w == word(index, TAKEN)
        ));
        // SAFETY: READY or TAKEN for `index`, held by the stream until its release.
        unsafe { self.slot_mut(index, len) }
    }

    /// The stream is done with write `index`'s slot: it becomes free for the write one
    /// ring later.
    pub(super) fn release(&self, index: u64) {
        self.state(index)
            .store(word(index + self.slots(), FREE), Ordering::Release);
        fence(Ordering::SeqCst);
        if index >= self.wake_at.load(Ordering::SeqCst)
            && let Some(t) = self.maker.get()
        {
            t.unpark();
        }
    }

    /// The stream is done: the maker stops.
    pub(super) fn finish(&self) {
        self.done.store(true, Ordering::Release);
        if let Some(t) = self.maker.get() {
            t.unpark();
        }
    }

    /// A guard that finishes the ring when dropped, so the maker stops however the
    /// stream ends (a panic too: the maker would otherwise wait for ever, and the
    /// replay's scope with it).
    pub(super) fn finish_on_drop(&self) -> impl Drop + '_ {
        struct Finish<'a>(&'a Ahead);
        impl Drop for Finish<'_> {
            fn drop(&mut self) {
                self.0.finish();
            }
        }
        Finish(self)
    }

    pub(super) fn counts(&self) -> AheadCounts {
        AheadCounts {
            found_ready: self.found_ready.load(Ordering::Relaxed),
            filled_by_stream: self.filled_by_stream.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use naslab_trace::OpFlags;

    use super::*;

    fn write(offset: u64) -> CompiledOp {
        CompiledOp {
            kind: OpKind::Write,
            flags: OpFlags::default(),
            slot: 0,
            file: 0,
            to: u32::MAX,
            t_us: 0,
            offset,
            len: BLOCK as u64,
            line: 1,
            expect: None,
        }
    }

    #[test]
    fn a_ring_has_more_slots_than_writes_in_flight() {
        for (slot_len, in_flight, slots) in [
            (128 << 10, 1, 8),
            (128 << 10, 32, 64),
            (4 << 20, 1, 4),
            (8 << 20, 1, 2),
            (4 << 20, 32, 33),
        ] {
            let ring = Ahead::new(slot_len, in_flight).unwrap();
            assert_eq!(ring.slots(), slots, "{slot_len} {in_flight}");
        }
    }

    /// A ring with no maker (the stream fills each slot itself) after one lap of
    /// writes, each released but write 0, still in flight; with its slot count, data
    /// spec and scratch.
    fn a_lap_with_write_0_in_flight() -> (Ahead, u64, DataSpec, Vec<u8>) {
        let ring = Ahead::new(BLOCK, 1).unwrap();
        let n = ring.slots();
        let data = DataSpec::default();
        let mut scratch = vec![0u8; BLOCK];
        for i in 0..n {
            assert!(!ring.held_back(i), "write {i}");
            ring.take(i, &write(i * BLOCK as u64), &data, i + 1, &mut scratch);
            if i != 0 {
                ring.release(i);
            }
        }
        (ring, n, data, scratch)
    }

    /// Writes complete in any order: one that stays in flight while a whole lap of the
    /// ring goes by holds its slot back from the write one lap later, which must then
    /// not be taken (the stream would wait for a completion only it can reap).
    #[test]
    fn a_write_still_in_flight_a_lap_later_holds_its_slot_back() {
        let (ring, n, data, mut scratch) = a_lap_with_write_0_in_flight();
        assert!(ring.held_back(n), "write {n} shares write 0's slot");
        assert!(!ring.held_back(n + 1));
        ring.release(0);
        assert!(!ring.held_back(n));
        ring.take(n, &write(0), &data, n + 1, &mut scratch);
        assert_eq!(ring.counts().filled_by_stream, n + 1);
    }

    #[test]
    #[should_panic(expected = "the stream would wait for itself")]
    fn taking_a_slot_the_stream_still_holds_fails_at_once_instead_of_waiting_for_ever() {
        let (ring, n, data, mut scratch) = a_lap_with_write_0_in_flight();
        // Write 0 was never released: write n's take cannot be served by anyone.
        ring.take(n, &write(0), &data, n + 1, &mut scratch);
    }

    /// A stream with writes in flight releases a batch of them at once and then needs
    /// the data of the writes one ring later: the maker must be woken by that batch's
    /// release, not by the next one's. One op at a time, it wakes once half the ring has
    /// been released.
    #[test]
    fn the_maker_is_woken_by_the_release_of_the_slot_it_waits_for_when_writes_are_queued() {
        let queued = Ahead::new(128 << 10, 32).unwrap();
        let n = queued.slots();
        for needed in [n, n + 1, 5 * n + 7] {
            let holder = needed - n;
            assert_eq!(queued.wake_index(needed), holder, "write {needed}");
        }
        let one = Ahead::new(128 << 10, 1).unwrap();
        let n = one.slots();
        assert_eq!(one.wake_index(n), n / 2);
        assert_eq!(one.wake_index(3), 0);
    }

    #[test]
    fn a_stream_that_panics_still_stops_its_maker() {
        let ring = Ahead::new(BLOCK, 1).unwrap();
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _finished = ring.finish_on_drop();
            panic!("the stream failed");
        }));
        assert!(ended.is_err());
        assert!(
            ring.done.load(Ordering::Acquire),
            "the maker was told to stop"
        );
    }
}
