//! A file's extents in bytes, as Linux's FIEMAP reports them and as Windows' retrieval
//! pointers are mapped to (`retrieval`), and how filefrag counts them.

/// The last extent of the file.
pub const EXTENT_LAST: u32 = 0x1;
/// The data's location is not known yet (set with `EXTENT_DELALLOC`).
pub const EXTENT_UNKNOWN: u32 = 0x2;
/// Delayed allocation: the data has no blocks yet.
pub const EXTENT_DELALLOC: u32 = 0x4;
/// The data is encoded (compressed on btrfs).
pub const EXTENT_ENCODED: u32 = 0x8;
/// The extent's offsets may not be block aligned.
pub const EXTENT_NOT_ALIGNED: u32 = 0x100;
/// The data lives inside the inode or with metadata.
pub const EXTENT_DATA_INLINE: u32 = 0x200;
/// Several files share the block (tail packing).
pub const EXTENT_DATA_TAIL: u32 = 0x400;
/// Space allocated but never written: reads return zeros.
pub const EXTENT_UNWRITTEN: u32 = 0x800;
/// The file system merged block mappings into this extent (indirect-mapped files).
pub const EXTENT_MERGED: u32 = 0x1000;
/// The blocks are shared with other files (reflinks, snapshots).
pub const EXTENT_SHARED: u32 = 0x2000;

/// One extent as FIEMAP reports it, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extent {
    /// Offset in the file.
    pub logical: u64,
    /// Offset on the device; meaningless when `EXTENT_UNKNOWN` is set.
    pub physical: u64,
    pub length: u64,
    /// `EXTENT_*` flags.
    pub flags: u32,
}

impl Extent {
    /// Whether a flag (`EXTENT_*`) is set.
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// Whether the extent's physical offset means something.
    pub fn location_known(&self) -> bool {
        !self.has(EXTENT_UNKNOWN | EXTENT_DELALLOC | EXTENT_DATA_INLINE)
    }
}

/// Counts extents exactly as e2fsprogs' filefrag (1.43 and later) does: an extent starts
/// a new one unless it begins at file offset 0, or its physical start is where the
/// previous extent ended, or where the previous one would have put it had the logical
/// gap between them been allocated too.
pub fn count_like_filefrag(extents: &[Extent]) -> u64 {
    let mut total = 0u64;
    let mut last = Extent::default();
    for e in extents {
        let expected_dense = last.physical.wrapping_add(last.length);
        let expected = last
            .physical
            .wrapping_add(e.logical)
            .wrapping_sub(last.logical);
        if e.logical != 0 && e.physical != expected && e.physical != expected_dense {
            total += 1;
        } else if total == 0 {
            total = 1;
        }
        last = *e;
    }
    total
}
