//! Data buffers, page-aligned so direct I/O can use them (what writes carry is made by
//! [`crate::data`]).

pub use naslab_backend::{ALIGN, AlignedBuf, LentBuf};

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
