//! The memory a stream lends its queue of reads and writes, and how a queued op names
//! its part of it: a region's number and a range in it ([`IoBuf`]), never an address.
//!
//! A queue keeps the [`IoMemory`] it was made with, so the regions live as long as any
//! op of it can use them, whoever drops what first. What the lender still owes is that
//! it does not touch a range while an op it lent it to is in flight; that is the promise
//! of [`IoRegion`]'s implementors.

use std::sync::Arc;

use crate::OpError;

/// Bytes at a fixed address that a queue's reads fill and its writes send while they
/// are in flight, from the kernel or a protocol client's thread.
///
/// # Safety
/// An implementor promises that [`IoRegion::base`] points to [`IoRegion::len`] bytes
/// that stay allocated at that address for the value's whole life, and that its owner
/// holds no reference to a range lent to a queued op from the moment the op is queued
/// until it has been reaped: meanwhile the bytes are written (a read) or read (a write)
/// through the address alone.
pub unsafe trait IoRegion: Send + Sync {
    /// The first byte.
    fn base(&self) -> *mut u8;
    /// How many bytes there are.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One queued op's bytes: `len` bytes from `offset` in region `region` of the queue's
/// [`IoMemory`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoBuf {
    pub region: usize,
    pub offset: usize,
    pub len: usize,
}

/// The regions a stream lends its queue, numbered in the order given.
#[derive(Clone, Default)]
pub struct IoMemory {
    regions: Vec<Arc<dyn IoRegion>>,
}

impl std::fmt::Debug for IoMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.regions.iter().map(|r| r.len()))
            .finish()
    }
}

impl IoMemory {
    /// Memory of `regions`, which [`IoBuf::region`] numbers from 0.
    pub fn new(regions: Vec<Arc<dyn IoRegion>>) -> IoMemory {
        IoMemory { regions }
    }

    /// Whether it has no region (nothing lent yet).
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// Where `buf`'s bytes start; an error when they lie outside its region, so a queue
    /// never hands out an address beyond the memory it was lent.
    pub fn locate(&self, buf: IoBuf) -> Result<*mut u8, OpError> {
        let region = self.regions.get(buf.region);
        match (region, buf.offset.checked_add(buf.len)) {
            (Some(r), Some(end)) if end <= r.len() => Ok(r.base().wrapping_add(buf.offset)),
            _ => Err(OpError {
                errno: crate::errno::EFAULT,
                detail: Some(format!(
                    "an op's buffer ({} bytes from {} in region {}) lies outside the memory lent to the queue ({:?} bytes by region)",
                    buf.len, buf.offset, buf.region, self
                )),
            }),
        }
    }
}

/// The alignment of an [`AlignedBuf`], and the unit of its length: a page, as direct
/// I/O needs.
pub const ALIGN: usize = 4096;

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
            let layout = std::alloc::Layout::from_size_align(len, ALIGN)
                .expect("page-multiple length is a valid layout");
            std::alloc::handle_alloc_error(layout)
        })
    }

    /// A zeroed buffer of `len` bytes, or `None` when the memory cannot be had.
    pub fn try_zeroed(len: usize) -> Option<AlignedBuf> {
        let len = len.max(ALIGN).checked_next_multiple_of(ALIGN)?;
        let layout = std::alloc::Layout::from_size_align(len, ALIGN).ok()?;
        // SAFETY: layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
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
        unsafe {
            std::alloc::dealloc(
                self.ptr,
                std::alloc::Layout::from_size_align_unchecked(self.len, ALIGN),
            )
        }
    }
}

/// A page-aligned buffer a stream lends its queue (shared with it through an `Arc`).
/// Its bytes are reached only through [`LentBuf::bytes`] and [`LentBuf::bytes_mut`],
/// whose callers promise that no op in flight has them: that is how it keeps
/// [`IoRegion`]'s promise.
pub struct LentBuf(AlignedBuf);

// SAFETY: every access to the bytes goes through the unsafe accessors below, whose
// callers promise exclusive use of their range against queued ops and each other.
unsafe impl Sync for LentBuf {}

impl LentBuf {
    /// A zeroed buffer of `len` bytes (page-rounded), or `None` when the memory cannot
    /// be had.
    pub fn try_zeroed(len: usize) -> Option<LentBuf> {
        AlignedBuf::try_zeroed(len).map(LentBuf)
    }

    /// Its length.
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether it is empty (never: buffers hold at least a page).
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }

    /// `len` bytes from `start`, to read.
    ///
    /// # Safety
    /// No queued op in flight reads into these bytes, and nothing writes them while the
    /// slice lives.
    ///
    /// # Panics
    /// When the range is not within the buffer.
    pub unsafe fn bytes(&self, start: usize, len: usize) -> &[u8] {
        assert!(start.checked_add(len).is_some_and(|end| end <= self.0.len));
        // SAFETY: in bounds (checked above); unaliased by the caller's promise.
        unsafe { std::slice::from_raw_parts(self.0.ptr.add(start), len) }
    }

    /// `len` bytes from `start`, to write.
    ///
    /// # Safety
    /// No queued op in flight uses these bytes, and nothing else reaches them while the
    /// slice lives.
    ///
    /// # Panics
    /// When the range is not within the buffer.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn bytes_mut(&self, start: usize, len: usize) -> &mut [u8] {
        assert!(start.checked_add(len).is_some_and(|end| end <= self.0.len));
        // SAFETY: in bounds (checked above); unaliased by the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.0.ptr.add(start), len) }
    }
}

// SAFETY: the allocation is fixed for the buffer's life, and its bytes are reached only
// through the accessors whose callers promise not to touch what an op in flight uses.
unsafe impl IoRegion for LentBuf {
    fn base(&self) -> *mut u8 {
        self.0.ptr
    }
    fn len(&self) -> usize {
        self.0.len
    }
}

/// Keeps `slot` (a queue's lent memory) as it is once set; sets it from `memory` at the
/// queue's first use. A queue's ops name the regions it was made with.
pub fn lend_once(slot: &mut IoMemory, memory: &IoMemory) {
    if slot.is_empty() {
        *slot = memory.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(n: usize) -> Arc<dyn IoRegion> {
        Arc::new(LentBuf::try_zeroed(n).expect("memory"))
    }

    #[test]
    fn buffers_are_aligned_and_whole_pages() {
        let b = AlignedBuf::zeroed(10_000);
        assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.len(), 12_288);
        assert!(b.as_slice().iter().all(|&x| x == 0));
    }

    #[test]
    fn a_buffer_is_found_in_its_region_and_refused_beyond_it() {
        let (a, b) = (bytes(4096), bytes(8192));
        let mem = IoMemory::new(vec![Arc::clone(&a), Arc::clone(&b)]);
        let at = |region, offset, len| {
            mem.locate(IoBuf {
                region,
                offset,
                len,
            })
        };
        assert_eq!(at(0, 0, 4096).ok(), Some(a.base()));
        assert_eq!(at(1, 8000, 192).ok(), Some(b.base().wrapping_add(8000)));
        for (region, offset, len) in [(0, 1, 4096), (1, 8192, 1), (2, 0, 1), (0, usize::MAX, 2)] {
            let e = at(region, offset, len).expect_err("outside");
            assert_eq!(e.errno, crate::errno::EFAULT);
            assert!(
                e.detail
                    .is_some_and(|d| d.contains("outside the memory lent"))
            );
        }
    }

    #[test]
    fn a_queue_keeps_the_memory_it_was_first_lent() {
        let first = IoMemory::new(vec![bytes(4096)]);
        let mut slot = IoMemory::default();
        lend_once(&mut slot, &first);
        lend_once(&mut slot, &IoMemory::new(vec![bytes(8192), bytes(4096)]));
        assert_eq!(format!("{slot:?}"), "[4096]");
    }
}
