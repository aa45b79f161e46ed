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
