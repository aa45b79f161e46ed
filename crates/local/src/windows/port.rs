//! Several reads and writes in flight on one stream (a queue depth above 1): overlapped
//! `ReadFile`/`WriteFile` at an offset on handles opened without
//! `FILE_SYNCHRONOUS_IO_NONALERT`, their completions reaped from an I/O completion port
//! with `GetQueuedCompletionStatusEx`, as io_uring's are on Linux.
//!
//! Each op in flight owns one slot: its OVERLAPPED, at an address that does not move
//! until the op is reaped (the kernel writes its status there). An op that fails as it
//! is issued (no `ERROR_IO_PENDING`) posts no completion, so its result is kept here and
//! handed back with the next reap; one that completes at once posts its completion like
//! one that went pending, since the handles are not marked to skip the port on success.

use std::fs::File;
use std::os::windows::io::AsRawHandle;

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_HANDLE_EOF, ERROR_IO_PENDING, GetLastError, HANDLE, INVALID_HANDLE_VALUE,
    NTSTATUS, STATUS_END_OF_FILE, WAIT_TIMEOUT,
};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::IO::{
    CancelIoEx, CreateIoCompletionPort, GetQueuedCompletionStatusEx, OVERLAPPED, OVERLAPPED_ENTRY,
};

use super::fs::errno_of;
use super::nt::errno_of_status;
use crate::errno;
use naslab_backend::OpError;

/// One op's place in the queue.
#[repr(C)]
struct Slot {
    /// First, so a completion's OVERLAPPED pointer is its slot's address.
    ov: OVERLAPPED,
    /// The handle it was issued on (to cancel it).
    handle: HANDLE,
    tag: u64,
    busy: bool,
}

/// An I/O completion port and the ops in flight on it.
pub struct Port {
    port: HANDLE,
    slots: Box<[Slot]>,
    free: Vec<usize>,
    /// Results known when their op was issued (it failed at once).
    ready: Vec<(u64, i64)>,
    in_flight: usize,
    /// The most ops in flight at one time (issued, their completion not reaped yet).
    most_in_flight: usize,
    /// How many ops were still in progress when their call returned (`ERROR_IO_PENDING`)
    /// rather than done in it.
    went_pending: u64,
    entries: Vec<OVERLAPPED_ENTRY>,
}

// SAFETY: the port and the OVERLAPPEDs are used by the one stream that owns the backend,
// one thread at a time; the raw handles in them are plain values.
unsafe impl Send for Port {}

/// How long a dropped queue waits for the ops it cancelled, in all.
const DRAIN_MS: u32 = 5_000;

impl Port {
    /// A completion port with room for `depth` ops in flight.
    pub fn new(depth: u32) -> Result<Port, OpError> {
        let depth = depth.max(1) as usize;
        // SAFETY: a new port, no file yet; the handle returned is ours.
        let port =
            unsafe { CreateIoCompletionPort(INVALID_HANDLE_VALUE, std::ptr::null_mut(), 0, 1) };
        if port.is_null() {
            let e = std::io::Error::last_os_error();
            return Err(OpError {
                errno: e.raw_os_error().map(errno_of).unwrap_or(errno::EIO),
                detail: Some(format!(
                    "no I/O completion port ({e}); queue depths above 1 need one"
                )),
            });
        }
        let slots = (0..depth)
            .map(|_| Slot {
                // SAFETY: all-zero is a valid OVERLAPPED.
                ov: unsafe { std::mem::zeroed() },
                handle: std::ptr::null_mut(),
                tag: 0,
                busy: false,
            })
            .collect();
        Ok(Port {
            port,
            slots,
            free: (0..depth).rev().collect(),
            ready: Vec::new(),
            in_flight: 0,
            most_in_flight: 0,
            went_pending: 0,
            // SAFETY: all-zero is a valid OVERLAPPED_ENTRY (integers and a null pointer).
            entries: vec![unsafe { std::mem::zeroed() }; depth],
        })
    }

    /// Makes the completions of `f`'s reads and writes come to this port (`f` opened
    /// overlapped).
    pub fn watch(&self, f: &File) -> Result<(), OpError> {
        // SAFETY: both handles are open; associating a file adds nothing to free.
        let done = unsafe { CreateIoCompletionPort(f.as_raw_handle(), self.port, 0, 0) };
        if done.is_null() {
            return Err(OpError::last_os());
        }
        Ok(())
    }

    /// The ops issued whose completion has not been reaped.
    #[cfg(test)]
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The most ops that were in flight at one time.
    #[cfg(test)]
    pub fn most_in_flight(&self) -> usize {
        self.most_in_flight
    }

    /// How many ops were still in progress when their `ReadFile` or `WriteFile`
    /// returned.
    #[cfg(test)]
    pub fn went_pending(&self) -> u64 {
        self.went_pending
    }

    /// Issues a read (`write`: false) or write of `len` bytes at `offset` on `h`, a
    /// handle opened overlapped and watched by this port.
    ///
    /// # Safety
    /// `h` must stay open, and `buf` valid for `len` bytes and, for a read, unused by
    /// anything else, until the op's completion has been reaped.
    pub unsafe fn issue(
        &mut self,
        h: HANDLE,
        write: bool,
        offset: u64,
        buf: *mut u8,
        len: usize,
        tag: u64,
    ) -> Result<(), OpError> {
        let len = u32::try_from(len).map_err(|_| OpError {
            errno: errno::EINVAL,
            detail: Some(format!(
                "an op of {len} bytes is more than one ReadFile or WriteFile moves"
            )),
        })?;
        let Some(i) = self.free.pop() else {
            return Err(OpError {
                errno: errno::EBUSY,
                detail: Some("every slot of the I/O queue is in flight".into()),
            });
        };
        let slot = &mut self.slots[i];
        // SAFETY: all-zero is a valid OVERLAPPED (no event: the port is told).
        slot.ov = unsafe { std::mem::zeroed() };
        slot.ov.Anonymous.Anonymous.Offset = offset as u32;
        slot.ov.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
        slot.handle = h;
        slot.tag = tag;
        let ov: *mut OVERLAPPED = &mut slot.ov;
        // SAFETY: the OVERLAPPED stays in its slot, which is not reused until the op is
        // reaped; the buffer is the caller's promise. No byte count is asked for, as an
        // overlapped call's may not be known yet.
        let started = unsafe {
            if write {
                WriteFile(h, buf, len, std::ptr::null_mut(), ov)
            } else {
                ReadFile(h, buf, len, std::ptr::null_mut(), ov)
            }
        };
        // SAFETY: no call in between.
        let code = unsafe { GetLastError() };
        if started != 0 || code == ERROR_IO_PENDING {
            if started == 0 {
                self.went_pending += 1;
            }
            self.slots[i].busy = true;
            self.in_flight += 1;
            self.most_in_flight = self.most_in_flight.max(self.in_flight);
            return Ok(());
        }
        // Failed as it was issued. Windows then posts nothing for it, but Wine posts a
        // completion for a read met by the end of a file: whatever is at the port now is
        // taken before the slot can be used again, so no completion of this op is taken
        // for another's.
        let mut now = std::mem::take(&mut self.ready);
        let drained = self.drain(&mut now);
        self.ready = now;
        drained?;
        self.free.push(i);
        let result = if !write && code == ERROR_HANDLE_EOF {
            0
        } else {
            -i64::from(errno_of(code as i32))
        };
        self.ready.push((tag, result));
        Ok(())
    }

    /// Waits until at least `min` ops have completed (fewer when fewer are in flight),
    /// and appends each completion's tag and result (bytes, or a negated errno) to `done`.
    pub fn reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        let mut got = self.ready.len();
        done.append(&mut self.ready);
        while got < min && self.in_flight > 0 {
            got += self.wait(u32::MAX, done)?.1;
        }
        Ok(())
    }

    /// Takes every completion at the port now, without waiting.
    fn drain(&mut self, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        while self.wait(0, done)?.0 > 0 {}
        Ok(())
    }

    /// One `GetQueuedCompletionStatusEx`, waiting up to `ms`: how many completions it
    /// removed, and how many of them were ops of this queue, appended to `done`.
    fn wait(&mut self, ms: u32, done: &mut Vec<(u64, i64)>) -> Result<(usize, usize), OpError> {
        let mut n = 0u32;
        // SAFETY: entries is ours, its length passed.
        let ok = unsafe {
            GetQueuedCompletionStatusEx(
                self.port,
                self.entries.as_mut_ptr(),
                self.entries.len() as u32,
                &mut n,
                ms,
                0,
            )
        };
        if ok == 0 {
            // SAFETY: no call in between.
            if unsafe { GetLastError() } == WAIT_TIMEOUT {
                return Ok((0, 0));
            }
            return Err(OpError::last_os());
        }
        let base = self.slots.as_ptr() as usize;
        let size = std::mem::size_of::<Slot>();
        let mut got = 0;
        for e in &self.entries[..n as usize] {
            // A completion that is not one of these slots' (none is expected) is passed
            // over.
            let at = e.lpOverlapped as usize;
            if at < base
                || !(at - base).is_multiple_of(size)
                || (at - base) / size >= self.slots.len()
            {
                continue;
            }
            let i = (at - base) / size;
            let slot = &mut self.slots[i];
            if !slot.busy {
                continue;
            }
            slot.busy = false;
            // The op's NTSTATUS, which the kernel wrote in its OVERLAPPED.
            let status = slot.ov.Internal as NTSTATUS;
            let result = if status >= 0 {
                i64::from(e.dwNumberOfBytesTransferred)
            } else if status == STATUS_END_OF_FILE {
                0
            } else {
                -i64::from(errno_of_status(status))
            };
            done.push((slot.tag, result));
            self.free.push(i);
            self.in_flight -= 1;
            got += 1;
        }
        Ok((n as usize, got))
    }
}

impl Drop for Port {
    fn drop(&mut self) {
        if self.in_flight > 0 {
            for s in self.slots.iter().filter(|s| s.busy) {
                // SAFETY: the op's own handle and OVERLAPPED; a finished op is not found.
                unsafe { CancelIoEx(s.handle, &s.ov) };
            }
            let mut done = Vec::new();
            let mut waited = 0;
            while self.in_flight > 0 && waited < DRAIN_MS {
                if self.wait(100, &mut done).is_err() {
                    break;
                }
                waited += 100;
            }
            if self.in_flight > 0 {
                // The kernel may still write in these OVERLAPPEDs: they are never freed.
                std::mem::forget(std::mem::take(&mut self.slots));
            }
        }
        // SAFETY: the port is ours and closed once.
        unsafe { CloseHandle(self.port) };
    }
}
