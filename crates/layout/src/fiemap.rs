//! The FIEMAP ioctl: a file's extents as its file system reports them, read in batches
//! until the extent flagged last.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

pub use crate::extent::{
    EXTENT_DATA_INLINE, EXTENT_DATA_TAIL, EXTENT_DELALLOC, EXTENT_ENCODED, EXTENT_LAST,
    EXTENT_MERGED, EXTENT_NOT_ALIGNED, EXTENT_SHARED, EXTENT_UNKNOWN, EXTENT_UNWRITTEN, Extent,
};

/// `FS_IOC_FIEMAP`, `_IOWR('f', 11, struct fiemap)` with the 32-byte `struct fiemap`.
const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// Asks the file system to write the file's dirty pages back before mapping it, so
/// delayed allocations have real blocks.
const FIEMAP_FLAG_SYNC: u32 = 0x1;
/// Extents per ioctl: the same batch as filefrag (a 16 KiB buffer).
const BATCH: usize = 292;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct RawExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

#[repr(C)]
struct Request {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [RawExtent; BATCH],
}

/// Why FIEMAP could not map a file.
#[derive(Debug)]
pub enum FiemapError {
    /// The file system has no FIEMAP (EOPNOTSUPP, ENOTTY).
    Unsupported,
    /// Any other failure.
    Io(io::Error),
}

fn call(file: &File, req: &mut Request) -> io::Result<()> {
    // SAFETY: req is a properly laid out struct fiemap followed by room for
    // `extent_count` extents, and lives for the whole call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), FS_IOC_FIEMAP as _, req as *mut Request) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Every extent of `file`, in file order. With `sync`, dirty data is written back first
/// (FIEMAP_FLAG_SYNC, or an fsync where the file system refuses the flag), so delayed
/// allocations are mapped to the blocks they got.
pub fn extents(file: &File, sync: bool) -> Result<Vec<Extent>, FiemapError> {
    thread_local! {
        // One request buffer per thread, reused for every file: a walk of many small
        // files otherwise spends much of its time making and copying it.
        static REQUEST: std::cell::RefCell<Box<Request>> = std::cell::RefCell::new(Box::new(Request {
            start: 0,
            length: u64::MAX,
            flags: 0,
            mapped_extents: 0,
            extent_count: BATCH as u32,
            reserved: 0,
            extents: [RawExtent::default(); BATCH],
        }));
    }
    REQUEST.with(|req| extents_with(file, sync, &mut req.borrow_mut()))
}

fn extents_with(file: &File, sync: bool, req: &mut Request) -> Result<Vec<Extent>, FiemapError> {
    let mut out = Vec::new();
    let mut start = 0u64;
    let mut flags = if sync { FIEMAP_FLAG_SYNC } else { 0 };
    loop {
        req.start = start;
        req.length = u64::MAX;
        req.flags = flags;
        req.mapped_extents = 0;
        req.extent_count = BATCH as u32;
        if let Err(e) = call(file, req) {
            match e.raw_os_error() {
                Some(libc::EBADR) if flags & FIEMAP_FLAG_SYNC != 0 => {
                    file.sync_all().map_err(FiemapError::Io)?;
                    flags &= !FIEMAP_FLAG_SYNC;
                    continue;
                }
                Some(libc::EOPNOTSUPP) | Some(libc::ENOTTY) => {
                    return Err(FiemapError::Unsupported);
                }
                _ => return Err(FiemapError::Io(e)),
            }
        }
        // The first call did the write-back; later batches need not repeat it.
        flags &= !FIEMAP_FLAG_SYNC;
        let n = (req.mapped_extents as usize).min(BATCH);
        if n == 0 {
            break;
        }
        let mut last = false;
        for raw in &req.extents[..n] {
            out.push(Extent {
                logical: raw.logical,
                physical: raw.physical,
                length: raw.length,
                flags: raw.flags,
            });
            last |= raw.flags & EXTENT_LAST != 0;
        }
        let tail = req.extents[n - 1];
        let next = tail.logical.saturating_add(tail.length);
        // A file system that never flags the last extent, or maps nothing new, ends here.
        if last || next <= start {
            break;
        }
        start = next;
    }
    Ok(out)
}
