//! How the process's allocator treats large blocks. The protocol crates receive every
//! reply into buffers of their own (a 4 MiB READ reply is a 4 MiB allocation, freed as
//! soon as its data is copied out). glibc gives such blocks to the kernel and back:
//! from 128 KiB up they come from mmap, and a freed block at the top of a thread's heap
//! is handed back with madvise once the heap's free top passes the trim threshold. Each
//! read then faults its pages in again, so the client measures its own page faults
//! rather than the server. Keeping freed memory for reuse makes the next reply's buffer
//! the same, already mapped, memory.

use std::sync::Once;

/// Blocks up to this size come from the heap (glibc's ceiling for the setting).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 32 << 20;
/// Free memory a heap keeps at its top before any is handed back.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: libc::c_int = 512 << 20;

/// Has the allocator keep and reuse large freed blocks, once per process (each protocol
/// connection's [`crate::waiter::Waiter`] asks). Where the C library is not glibc this
/// does nothing.
pub(crate) fn keep_large_blocks() {
    static DONE: Once = Once::new();
    DONE.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes allocator settings; both values are in range.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    });
}
