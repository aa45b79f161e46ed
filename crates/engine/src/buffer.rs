//! Data buffers: page-aligned (so direct I/O can use them) and, for writing, filled
//! with bytes that neither compress nor deduplicate, so a target cannot shortcut them.

use std::alloc::{alloc_zeroed, dealloc, Layout};

const ALIGN: usize = 4096;

/// A page-aligned byte buffer.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is plain owned memory with no shared aliasing.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (at least one page).
    pub fn zeroed(len: usize) -> AlignedBuf {
        let len = len.max(ALIGN).next_multiple_of(ALIGN);
        let layout =
            Layout::from_size_align(len, ALIGN).expect("page-multiple length is a valid layout");
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }

    /// A zeroed buffer of `len` bytes, or `None` when the memory cannot be had.
    pub fn try_zeroed(len: usize) -> Option<AlignedBuf> {
        let len = len.max(ALIGN).checked_next_multiple_of(ALIGN)?;
        let layout = Layout::from_size_align(len, ALIGN).ok()?;
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(AlignedBuf { ptr, len })
    }

    /// A patterned buffer as [`AlignedBuf::patterned`], or `None` when the memory cannot be had.
    pub fn try_patterned(len: usize, seed: u64) -> Option<AlignedBuf> {
        let mut b = AlignedBuf::try_zeroed(len)?;
        fill_pattern(b.as_mut_slice(), seed);
        Some(b)
    }

    /// A buffer of `len` bytes filled with the write pattern starting at `seed`.
    pub fn patterned(len: usize, seed: u64) -> AlignedBuf {
        let mut b = AlignedBuf::zeroed(len);
        fill_pattern(b.as_mut_slice(), seed);
        b
    }

    /// Its bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for the buffer's life.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Its bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for len bytes and uniquely borrowed through &mut self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }

    /// Its length.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (never: buffers hold at least a page).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: ptr came from alloc_zeroed with this very layout.
        unsafe { dealloc(self.ptr, Layout::from_size_align_unchecked(self.len, ALIGN)) }
    }
}

/// The most read buffer one stream holds for ops in flight: with larger reads, fewer
/// are in flight at once (always at least one), so memory does not grow with queue
/// depth times op size.
pub const STREAM_READ_BUDGET: u64 = 256 << 20;

/// How one stream's I/O buffers are sized: only as large as its own reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamBuffers {
    /// Bytes of each read buffer (the stream's largest read, page-rounded).
    pub read_slot_len: usize,
    /// Reads that can be in flight at once.
    pub read_slots: usize,
    /// Bytes of the write pattern (the stream's largest write, page-rounded).
    pub write_len: usize,
}

impl StreamBuffers {
    /// Buffers for a stream whose largest read and write are `max_read` and `max_write`
    /// bytes, at queue depth `depth`.
    pub fn for_stream(max_read: u64, max_write: u64, depth: u32) -> StreamBuffers {
        let page = |n: u64| n.next_multiple_of(ALIGN as u64) as usize;
        let read_slot_len = page(max_read);
        let read_slots = if max_read == 0 {
            0
        } else {
            (STREAM_READ_BUDGET / read_slot_len as u64).clamp(1, u64::from(depth.max(1))) as usize
        };
        StreamBuffers {
            read_slot_len,
            read_slots,
            write_len: page(max_write),
        }
    }

    /// What the buffers take in all.
    pub fn bytes(&self) -> u64 {
        (self.read_slot_len * self.read_slots + self.write_len) as u64
    }
}

/// Fills `buf` with xorshift64* output: incompressible and different for every seed.
pub fn fill_pattern(buf: &mut [u8], seed: u64) {
    let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
    if x == 0 {
        x = 1;
    }
    for chunk in buf.chunks_mut(8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_patterned() {
        let b = AlignedBuf::patterned(10_000, 7);
        assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.len(), 12_288);
        let zeros = b.as_slice().iter().filter(|&&x| x == 0).count();
        assert!(zeros < 200, "{zeros} zero bytes");
        assert_ne!(
            AlignedBuf::patterned(4096, 1).as_slice(),
            AlignedBuf::patterned(4096, 2).as_slice()
        );
    }
}

#[cfg(test)]
mod stream_buffer_tests {
    use super::*;

    #[test]
    fn buffers_follow_the_streams_own_ops_and_stay_bounded() {
        // Queue depth 1024 and one 256 MiB read: one read buffer, not 256 GiB.
        let b = StreamBuffers::for_stream(256 << 20, 0, 1024);
        assert_eq!(
            (b.read_slots, b.read_slot_len, b.write_len),
            (1, 256 << 20, 0)
        );
        assert_eq!(b.bytes(), 256 << 20);
        // Small reads keep the full queue depth.
        let b = StreamBuffers::for_stream(65536, 4096, 32);
        assert_eq!(
            (b.read_slots, b.read_slot_len, b.write_len),
            (32, 65536, 4096)
        );
        // 4 MiB reads at depth 128 fit 64 in the budget.
        assert_eq!(StreamBuffers::for_stream(4 << 20, 0, 128).read_slots, 64);
        // A stream that only writes holds no read buffer.
        let b = StreamBuffers::for_stream(0, 1000, 8);
        assert_eq!((b.read_slots, b.write_len), (0, 4096));
    }

    #[test]
    fn an_impossible_buffer_is_none_not_an_abort() {
        assert!(AlignedBuf::try_zeroed(usize::MAX - 10).is_none());
        assert!(AlignedBuf::try_zeroed(1 << 62).is_none());
    }
}
