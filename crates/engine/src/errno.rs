//! The errno numbers failures are counted by. Results name a failure by its POSIX name
//! on every system, so a run made on Windows counts the same failure under the same
//! number as one made on Linux: there they are libc's own, elsewhere Linux's values.

#[cfg(target_os = "linux")]
pub use libc::{
    EACCES, EAGAIN, EBADF, EBUSY, EDQUOT, EEXIST, EFBIG, EINTR, EINVAL, EIO, EISDIR, ELOOP, EMFILE,
    EMLINK, ENAMETOOLONG, ENFILE, ENOENT, ENOLCK, ENOSPC, ENOSYS, ENOTCONN, ENOTDIR, ENOTEMPTY,
    ENXIO, EOPNOTSUPP, EPERM, EREMOTE, EROFS, ESRCH, ESTALE, ETIMEDOUT, EWOULDBLOCK, EXDEV,
};

#[cfg(not(target_os = "linux"))]
mod linux_values {
    pub const EPERM: i32 = 1;
    pub const ENOENT: i32 = 2;
    pub const ESRCH: i32 = 3;
    pub const EINTR: i32 = 4;
    pub const EIO: i32 = 5;
    pub const ENXIO: i32 = 6;
    pub const EBADF: i32 = 9;
    pub const EAGAIN: i32 = 11;
    pub const EWOULDBLOCK: i32 = EAGAIN;
    pub const EACCES: i32 = 13;
    pub const EBUSY: i32 = 16;
    pub const EEXIST: i32 = 17;
    pub const EXDEV: i32 = 18;
    pub const ENOTDIR: i32 = 20;
    pub const EISDIR: i32 = 21;
    pub const EINVAL: i32 = 22;
    pub const ENFILE: i32 = 23;
    pub const EMFILE: i32 = 24;
    pub const EFBIG: i32 = 27;
    pub const ENOSPC: i32 = 28;
    pub const EROFS: i32 = 30;
    pub const EMLINK: i32 = 31;
    pub const ENAMETOOLONG: i32 = 36;
    pub const ENOLCK: i32 = 37;
    pub const ENOSYS: i32 = 38;
    pub const ENOTEMPTY: i32 = 39;
    pub const ELOOP: i32 = 40;
    pub const EREMOTE: i32 = 66;
    pub const EOPNOTSUPP: i32 = 95;
    pub const ENOTCONN: i32 = 107;
    pub const ETIMEDOUT: i32 = 110;
    pub const ESTALE: i32 = 116;
    pub const EDQUOT: i32 = 122;
}
#[cfg(not(target_os = "linux"))]
pub use linux_values::*;

/// The errno of an I/O error from the system (a Win32 error on Windows, mapped to the
/// errno that stands for it).
pub fn of_io(e: &std::io::Error) -> Option<i32> {
    #[cfg(windows)]
    {
        e.raw_os_error().map(crate::backend::win32_errno)
    }
    #[cfg(not(windows))]
    {
        e.raw_os_error()
    }
}

/// A short description of an errno, for messages (the system's own words on Linux).
pub fn describe(errno: i32) -> String {
    #[cfg(target_os = "linux")]
    {
        std::io::Error::from_raw_os_error(errno).to_string()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let words = match errno {
            EPERM => "operation not permitted",
            ENOENT => "no such file or directory",
            EIO => "input/output error",
            ENXIO => "not a file naslab may open",
            EBADF => "bad handle",
            EACCES => "access denied",
            EBUSY => "in use",
            EEXIST => "file exists",
            EXDEV => "crosses a mount point",
            ENOTDIR => "not a directory",
            EISDIR => "is a directory",
            EINVAL => "invalid argument",
            EMFILE | ENFILE => "too many open files",
            EFBIG => "file too large",
            ENOSPC => "no space left on the volume",
            EROFS => "read-only volume",
            EMLINK => "too many links",
            ENAMETOOLONG => "name too long",
            ENOLCK => "no lock held on that range",
            EAGAIN => "held by another",
            ENOTEMPTY => "directory not empty",
            ELOOP => "a symbolic link or reparse point, not followed",
            EOPNOTSUPP => "not supported",
            ENOTCONN => "not connected",
            ETIMEDOUT => "timed out",
            ESTALE => "stale handle",
            EDQUOT => "quota exceeded",
            _ => "error",
        };
        format!("{words} (errno {errno})")
    }
}
