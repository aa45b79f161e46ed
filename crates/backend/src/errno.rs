//! The errno numbers failures are counted by. Results name a failure by its POSIX name
//! on every system, so a run made on Windows counts the same failure under the same
//! number as one made on Linux: there they are libc's own, elsewhere Linux's values.

#[cfg(target_os = "linux")]
pub use libc::{
    EACCES, EAGAIN, EBADF, EBUSY, EDQUOT, EEXIST, EFAULT, EFBIG, EINTR, EINVAL, EIO, EISDIR, ELOOP,
    EMFILE, EMLINK, ENAMETOOLONG, ENFILE, ENOENT, ENOLCK, ENOSPC, ENOSYS, ENOTCONN, ENOTDIR,
    ENOTEMPTY, ENXIO, EOPNOTSUPP, EPERM, EREMOTE, EROFS, ESRCH, ESTALE, ETIMEDOUT, EWOULDBLOCK,
    EXDEV,
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
    pub const EFAULT: i32 = 14;
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
        e.raw_os_error().map(of_win32)
    }
    #[cfg(not(windows))]
    {
        e.raw_os_error()
    }
}

/// The errno that stands for a Win32 error code, so failures are counted under the
/// same names on every system.
#[cfg(windows)]
pub fn of_win32(code: i32) -> i32 {
    let Ok(code) = u32::try_from(code) else {
        return EIO;
    };
    use windows_sys::Win32::Foundation as w;
    match code {
        w::ERROR_FILE_NOT_FOUND | w::ERROR_PATH_NOT_FOUND | w::ERROR_BAD_PATHNAME => ENOENT,
        w::ERROR_ACCESS_DENIED | w::ERROR_PRIVILEGE_NOT_HELD => EACCES,
        w::ERROR_FILE_EXISTS | w::ERROR_ALREADY_EXISTS => EEXIST,
        w::ERROR_DISK_FULL | w::ERROR_HANDLE_DISK_FULL => ENOSPC,
        w::ERROR_DISK_QUOTA_EXCEEDED => EDQUOT,
        w::ERROR_DIR_NOT_EMPTY => ENOTEMPTY,
        w::ERROR_WRITE_PROTECT => EROFS,
        w::ERROR_SHARING_VIOLATION | w::ERROR_BUSY => EBUSY,
        // A range another handle holds, for a lock or a read or write in it: EAGAIN, as
        // SMB's STATUS_FILE_LOCK_CONFLICT is counted (and as a mandatory lock fails a
        // read or write on Linux).
        w::ERROR_LOCK_VIOLATION => EAGAIN,
        w::ERROR_NOT_LOCKED => ENOLCK,
        w::ERROR_INVALID_NAME | w::ERROR_INVALID_PARAMETER => EINVAL,
        w::ERROR_FILENAME_EXCED_RANGE => ENAMETOOLONG,
        w::ERROR_DIRECTORY => ENOTDIR,
        w::ERROR_NOT_SUPPORTED | w::ERROR_INVALID_FUNCTION => EOPNOTSUPP,
        w::ERROR_TOO_MANY_OPEN_FILES => EMFILE,
        w::ERROR_INVALID_HANDLE => EBADF,
        w::ERROR_NOT_SAME_DEVICE => EXDEV,
        w::ERROR_CANT_ACCESS_FILE
        | w::ERROR_CANT_RESOLVE_FILENAME
        | w::ERROR_STOPPED_ON_SYMLINK
        | w::ERROR_REPARSE_POINT_ENCOUNTERED => ELOOP,
        w::ERROR_NETNAME_DELETED
        | w::ERROR_UNEXP_NET_ERR
        | w::ERROR_BAD_NETPATH
        | w::ERROR_NETWORK_UNREACHABLE
        | w::ERROR_CONNECTION_ABORTED
        | w::ERROR_DEV_NOT_EXIST => ENOTCONN,
        w::ERROR_SEM_TIMEOUT | w::WAIT_TIMEOUT => ETIMEDOUT,
        _ => EIO,
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
