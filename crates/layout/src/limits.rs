//! Which file system holds a file, its block size, and the longest extent it can give
//! the file: what "ideal extents" is computed from.
//!
//! The limits, from each file system's on-disk format:
//! - ext4, extent-mapped files: an initialized extent covers at most 32768 blocks
//!   (`EXT_INIT_MAX_LEN`, a 15-bit length), 128 MiB with 4 KiB blocks.
//! - ext2/ext3 and ext4 files without the extents flag (indirect-mapped): a run of
//!   blocks cannot cross a block group, whose bitmaps (and inode table, without flex_bg)
//!   sit at its start; a group holds 8 x block size blocks (one bitmap block's bits),
//!   again 128 MiB with 4 KiB blocks. This is also the "ideal" of the NASPT paper's
//!   3.5 GB video (26 extents).
//! - xfs: an extent record holds at most 2^21 - 1 blocks (`XFS_MAX_BMBT_EXTLEN`) and
//!   never crosses an allocation group, so the limit is the smaller of that and the AG
//!   size (from `XFS_IOC_FSGEOMETRY_V1`).
//! - btrfs: a data extent is at most 128 MiB (`BTRFS_MAX_EXTENT_SIZE`), a compressed one
//!   128 KiB (`BTRFS_MAX_COMPRESSED`).
//! - anything else: no limit is known and no ideal is given.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;

use naslab_host::Mounts;

/// `statfs` magic of ext2, ext3 and ext4 (they share it).
pub const EXT4_SUPER_MAGIC: i64 = 0xEF53;
/// `statfs` magic of xfs ("XFSB").
pub const XFS_SUPER_MAGIC: i64 = 0x5846_5342;
/// `statfs` magic of btrfs.
pub const BTRFS_SUPER_MAGIC: i64 = 0x9123_683E;

/// `FIGETBSZ`, `_IO(0x00, 2)`: the block size FIEMAP's callers count in.
const FIGETBSZ: libc::c_ulong = 2;
/// `FS_IOC_GETFLAGS`, `_IOR('f', 1, long)`.
const FS_IOC_GETFLAGS: libc::c_ulong = 0x8008_6601;
/// The inode flag of extent-mapped ext4 files.
const EXT4_EXTENTS_FL: libc::c_long = 0x0008_0000;
/// `XFS_IOC_FSGEOMETRY_V1`, `_IOR('X', 100, struct xfs_fsop_geom_v1)` (112 bytes).
const XFS_IOC_FSGEOMETRY_V1: libc::c_ulong = 0x8070_5864;
/// Blocks in the longest ext4 extent.
pub const EXT4_MAX_EXTENT_BLOCKS: u64 = 32_768;
/// Blocks in the longest xfs extent record.
pub const XFS_MAX_EXTENT_BLOCKS: u64 = (1 << 21) - 1;
/// Bytes in the longest btrfs data extent.
pub const BTRFS_MAX_EXTENT_BYTES: u64 = 128 << 20;
/// Bytes in the longest compressed btrfs extent.
pub const BTRFS_MAX_COMPRESSED_BYTES: u64 = 128 << 10;

/// The file system family, from `statfs`'s magic number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsFamily {
    /// ext2, ext3 or ext4.
    Ext,
    /// xfs.
    Xfs,
    /// btrfs.
    Btrfs,
    /// Anything else, by magic number.
    Other(i64),
}

/// What a layout needs to know about the file system holding a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsInfo {
    pub family: FsFamily,
    /// The mounted type's name (ext3, ext4, xfs, ...), from /proc/self/mountinfo when found.
    pub name: String,
    /// The block size FIEMAP offsets are counted in (`FIGETBSZ`).
    pub block_bytes: u64,
    /// xfs only: blocks per allocation group.
    pub xfs_ag_blocks: Option<u64>,
}

pub use crate::file_layout::ExtentLimit;

/// Reads the file system's family, name and block size for an open file (reading the
/// mount table for the name; to look at many files, read it once with [`Mounts::read`]
/// and call [`fs_info_in`]).
pub fn fs_info(file: &File) -> io::Result<FsInfo> {
    fs_info_in(file, &Mounts::read())
}

/// [`fs_info`], naming the file system from a mount table read beforehand.
pub fn fs_info_in(file: &File, mounts: &Mounts) -> io::Result<FsInfo> {
    // SAFETY: statfs is plain data; fstatfs fills it for a valid descriptor.
    let mut sfs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: file's descriptor is valid and sfs is writable.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut sfs) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let magic = sfs.f_type as i64;
    let family = match magic {
        EXT4_SUPER_MAGIC => FsFamily::Ext,
        XFS_SUPER_MAGIC => FsFamily::Xfs,
        BTRFS_SUPER_MAGIC => FsFamily::Btrfs,
        m => FsFamily::Other(m),
    };
    let mut bsz: libc::c_int = 0;
    // SAFETY: FIGETBSZ writes one int.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            FIGETBSZ as _,
            &mut bsz as *mut libc::c_int,
        )
    };
    let block_bytes = if rc == 0 && bsz > 0 {
        bsz as u64
    } else {
        (sfs.f_bsize as u64).max(1)
    };
    let xfs_ag_blocks = if family == FsFamily::Xfs {
        xfs_ag_blocks(file)
    } else {
        None
    };
    let dev = file.metadata().map(|m| m.dev()).unwrap_or(0);
    let name = mounts
        .type_of(dev)
        .map(str::to_string)
        .unwrap_or_else(|| match family {
            FsFamily::Ext => "ext2/3/4".to_string(),
            FsFamily::Xfs => "xfs".to_string(),
            FsFamily::Btrfs => "btrfs".to_string(),
            FsFamily::Other(m) => format!("fs 0x{m:x}"),
        });
    Ok(FsInfo {
        family,
        name,
        block_bytes,
        xfs_ag_blocks,
    })
}

fn xfs_ag_blocks(file: &File) -> Option<u64> {
    let mut geom = [0u8; 112];
    // SAFETY: XFS_IOC_FSGEOMETRY_V1 writes a 112-byte struct into geom.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            XFS_IOC_FSGEOMETRY_V1 as _,
            geom.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return None;
    }
    // blocksize, rtextsize, agblocks: the third u32.
    let ag = u32::from_ne_bytes([geom[8], geom[9], geom[10], geom[11]]) as u64;
    (ag > 0).then_some(ag)
}

/// Whether an ext file is extent-mapped (has `EXT4_EXTENTS_FL`).
fn ext_extent_mapped(file: &File) -> bool {
    let mut flags: libc::c_long = 0;
    // SAFETY: FS_IOC_GETFLAGS writes the inode flags into a long.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            FS_IOC_GETFLAGS as _,
            &mut flags as *mut libc::c_long,
        )
    };
    rc == 0 && flags & EXT4_EXTENTS_FL != 0
}

/// The longest extent `file` can have on its file system, or `None` where naslab knows
/// no limit.
pub fn extent_limit(file: &File, fs: &FsInfo) -> Option<ExtentLimit> {
    let bs = fs.block_bytes;
    match fs.family {
        // The ext4 extent's limit, else a block group's. At 4 KiB blocks both are 128
        // MiB, and the inode's flags are not asked for (an ioctl a file, a fifth of a
        // walk's system calls).
        FsFamily::Ext if 8 * bs == EXT4_MAX_EXTENT_BLOCKS || ext_extent_mapped(file) => {
            Some(ExtentLimit {
                bytes: EXT4_MAX_EXTENT_BLOCKS * bs,
                encoded_bytes: None,
            })
        }
        FsFamily::Ext => Some(ExtentLimit {
            bytes: 8 * bs * bs,
            encoded_bytes: None,
        }),
        FsFamily::Xfs => {
            let blocks = match fs.xfs_ag_blocks {
                Some(ag) => ag.min(XFS_MAX_EXTENT_BLOCKS),
                None => XFS_MAX_EXTENT_BLOCKS,
            };
            Some(ExtentLimit {
                bytes: blocks * bs,
                encoded_bytes: None,
            })
        }
        FsFamily::Btrfs => Some(ExtentLimit {
            bytes: BTRFS_MAX_EXTENT_BYTES,
            encoded_bytes: Some(BTRFS_MAX_COMPRESSED_BYTES),
        }),
        FsFamily::Other(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(block_bytes: u64) -> FsInfo {
        FsInfo {
            family: FsFamily::Ext,
            name: "ext4".into(),
            block_bytes,
            xfs_ag_blocks: None,
        }
    }

    #[test]
    fn an_ext_limit_is_128_mib_at_4_kib_blocks_and_follows_the_inode_flags_elsewhere() {
        let file = tempfile::tempfile().unwrap();
        // At 4 KiB blocks, 32768 blocks and 8 x 4096 blocks are both 128 MiB.
        let l = extent_limit(&file, &ext(4096)).unwrap();
        assert_eq!(l.bytes, 128 << 20);
        // At 1 and 2 KiB they differ, and the flags decide.
        let mapped = ext_extent_mapped(&file);
        for (bs, extent, group) in [(1024, 32 << 20, 8 << 20), (2048, 64 << 20, 32 << 20)] {
            let l = extent_limit(&file, &ext(bs)).unwrap();
            assert_eq!(
                l.bytes,
                if mapped { extent } else { group },
                "{bs}-byte blocks"
            );
        }
    }
}
