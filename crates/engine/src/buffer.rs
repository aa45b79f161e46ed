//! Data buffers, page-aligned so direct I/O can use them (what writes carry is made by
//! [`crate::data`]).

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
    /// A zeroed buffer of `len` bytes (at least one page); aborts when the memory cannot
    /// be had, as any allocation does.
    pub fn zeroed(len: usize) -> AlignedBuf {
        AlignedBuf::try_zeroed(len).unwrap_or_else(|| {
            let len = len.max(ALIGN).next_multiple_of(ALIGN);
            let layout = Layout::from_size_align(len, ALIGN)
                .expect("page-multiple length is a valid layout");
            std::alloc::handle_alloc_error(layout)
        })
    }

    /// A zeroed buffer of `len` bytes, or `None` when the memory cannot be had.
    pub fn try_zeroed(len: usize) -> Option<AlignedBuf> {
        let len = len.max(ALIGN).checked_next_multiple_of(ALIGN)?;
        let layout = Layout::from_size_align(len, ALIGN).ok()?;
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        (!ptr.is_null()).then_some(AlignedBuf { ptr, len })
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

/// The most one stream holds for the reads (and, apart, for the writes) it has in
/// flight: with larger ops, fewer are in flight at once (always at least one), so memory
/// does not grow with queue depth times op size.
pub const STREAM_READ_BUDGET: u64 = 256 << 20;

/// How one stream's I/O buffers are sized: only as large as its own reads and writes.
/// Every data op in flight holds one of `slots` buffer slots: a read uses its slot in the
/// read buffer, a write its slot in the write buffer (filled with the write's own data
/// before it is issued).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamBuffers {
    /// Bytes of each read slot (the stream's largest read, page-rounded).
    pub read_slot_len: usize,
    /// Bytes of each write slot (the stream's largest write, page-rounded).
    pub write_slot_len: usize,
    /// Data ops that can be in flight at once.
    pub slots: usize,
}

impl StreamBuffers {
    /// Buffers for a stream whose largest read and write are `max_read` and `max_write`
    /// bytes, at queue depth `depth`.
    pub fn for_stream(max_read: u64, max_write: u64, depth: u32) -> StreamBuffers {
        let page = |n: u64| n.next_multiple_of(ALIGN as u64) as usize;
        let largest = page(max_read.max(max_write)).max(ALIGN) as u64;
        // At least one slot, even when every read and write is empty (its slots are then
        // empty too): each data op in flight needs one.
        let slots = (STREAM_READ_BUDGET / largest).clamp(1, u64::from(depth.max(1))) as usize;
        StreamBuffers {
            read_slot_len: page(max_read),
            write_slot_len: page(max_write),
            slots,
        }
    }

    /// What the buffers take in all.
    pub fn bytes(&self) -> u64 {
        ((self.read_slot_len + self.write_slot_len) * self.slots) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_whole_pages() {
        let b = AlignedBuf::zeroed(10_000);
        assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.len(), 12_288);
        assert!(b.as_slice().iter().all(|&x| x == 0));
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
            (b.slots, b.read_slot_len, b.write_slot_len),
            (1, 256 << 20, 0)
        );
        assert_eq!(b.bytes(), 256 << 20);
        // Small ops keep the full queue depth, each with a read and a write slot.
        let b = StreamBuffers::for_stream(65536, 4096, 32);
        assert_eq!(
            (b.slots, b.read_slot_len, b.write_slot_len),
            (32, 65536, 4096)
        );
        assert_eq!(b.bytes(), 32 * (65536 + 4096));
        // 4 MiB reads at depth 128 fit 64 in the budget.
        assert_eq!(StreamBuffers::for_stream(4 << 20, 0, 128).slots, 64);
        // A stream that only writes holds no read buffer.
        let b = StreamBuffers::for_stream(0, 1000, 8);
        assert_eq!((b.slots, b.read_slot_len, b.write_slot_len), (8, 0, 4096));
        // Nothing to read or write: no buffer bytes at all, yet ops still take turns.
        let b = StreamBuffers::for_stream(0, 0, 8);
        assert_eq!((b.bytes(), b.slots), (0, 8));
    }

    #[test]
    fn an_impossible_buffer_is_none_not_an_abort() {
        assert!(AlignedBuf::try_zeroed(usize::MAX - 10).is_none());
        assert!(AlignedBuf::try_zeroed(1 << 62).is_none());
    }
}
