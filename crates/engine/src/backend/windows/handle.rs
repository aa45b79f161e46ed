//! Opening one entry of the workload directory on Windows and checking what was opened,
//! and the data and metadata requests on an open handle.

use std::fs::{File, OpenOptions};
use std::os::windows::fs::{FileExt, OpenOptionsExt};
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::ERROR_ACCESS_DENIED;
use windows_sys::Win32::Storage::FileSystem::{
    FileAllocationInfo, GetFileInformationByHandle, GetFinalPathNameByHandleW,
    SetFileInformationByHandle, BY_HANDLE_FILE_INFORMATION, FILE_ALLOCATION_INFO,
    FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_BACKUP_SEMANTICS,
    FILE_FLAG_NO_BUFFERING, FILE_FLAG_OPEN_REPARSE_POINT, FILE_FLAG_RANDOM_ACCESS,
    FILE_FLAG_WRITE_THROUGH, FILE_NAME_NORMALIZED, FILE_READ_ATTRIBUTES, VOLUME_NAME_DOS,
};

use super::fs::io_err;
use crate::backend::OpError;
use crate::errno;

/// The offset that makes a write land at the end of the file (both halves of the
/// OVERLAPPED offset all ones), as every write through an `O_APPEND` descriptor does.
pub const APPEND: u64 = u64::MAX;

/// How an entry is opened.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenSpec {
    pub read: bool,
    pub write: bool,
    pub create: bool,
    /// Emptied once the open handle has been checked.
    pub truncate: bool,
    /// Every write goes through to the disk or server (`FILE_FLAG_WRITE_THROUGH`).
    pub sync: bool,
    /// No cache at all (`FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH`).
    pub direct: bool,
    /// No read-ahead (`FILE_FLAG_RANDOM_ACCESS`).
    pub random: bool,
    /// A directory is wanted (`FILE_FLAG_BACKUP_SEMANTICS`).
    pub dir: bool,
}

impl OpenSpec {
    /// The CreateFileW flags this open passes besides the access and disposition.
    pub fn flags(&self) -> u32 {
        let mut flags = FILE_FLAG_OPEN_REPARSE_POINT;
        if self.direct {
            flags |= FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH;
        }
        if self.sync {
            flags |= FILE_FLAG_WRITE_THROUGH;
        }
        if self.random {
            flags |= FILE_FLAG_RANDOM_ACCESS;
        }
        if self.dir {
            flags |= FILE_FLAG_BACKUP_SEMANTICS;
        }
        flags
    }
}

/// An open file of a stream.
#[derive(Debug)]
pub struct Opened {
    pub file: File,
    /// Under direct I/O, a buffered handle of the same file for unaligned ops.
    pub buffered: Option<File>,
    pub direct: bool,
    /// Every write lands at the end of the file.
    pub append: bool,
    pub path: PathBuf,
    pub spec: OpenSpec,
}

/// Opens `path` as `spec` says, never following a reparse point at its last component.
pub fn open(path: &Path, spec: &OpenSpec) -> Result<File, OpError> {
    let mut o = OpenOptions::new();
    if spec.read || spec.write {
        o.read(spec.read).write(spec.write);
    } else {
        o.access_mode(FILE_READ_ATTRIBUTES);
    }
    o.create(spec.create && spec.write)
        .custom_flags(spec.flags())
        .open(path)
        .map_err(io_err)
}

fn info(f: &File) -> Result<BY_HANDLE_FILE_INFORMATION, OpError> {
    // SAFETY: all-zero is a valid BY_HANDLE_FILE_INFORMATION (plain integers).
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is the open file's own, and info is ours to fill.
    if unsafe { GetFileInformationByHandle(f.as_raw_handle(), &mut info) } == 0 {
        return Err(io_err(std::io::Error::last_os_error()));
    }
    Ok(info)
}

/// The path Windows reports for what `f` is (`\\?\C:\...` or `\\?\UNC\...`), reparse
/// points on the way resolved: where the handle really is.
pub fn final_path(f: &File) -> Result<String, OpError> {
    let mut buf = vec![0u16; 512];
    loop {
        // SAFETY: buf is ours and its length is passed; the handle is open.
        let n = unsafe {
            GetFinalPathNameByHandleW(
                f.as_raw_handle(),
                buf.as_mut_ptr(),
                buf.len() as u32,
                FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
            )
        } as usize;
        if n == 0 {
            return Err(io_err(std::io::Error::last_os_error()));
        }
        if n < buf.len() {
            return Ok(String::from_utf16_lossy(&buf[..n]));
        }
        buf.resize(n + 1, 0);
    }
}

/// The final path of the directory at `dir`, checked to be a directory of its own.
pub fn final_path_of_dir(dir: &Path) -> Result<String, OpError> {
    let spec = OpenSpec {
        read: true,
        dir: true,
        ..OpenSpec::default()
    };
    let f = open(dir, &spec)?;
    let i = info(&f)?;
    if i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(refused(
            dir,
            errno::ELOOP,
            "is a reparse point (a symbolic link, junction or mount point)",
        ));
    }
    final_path(&f)
}

fn refused(path: &Path, errno: i32, why: &str) -> OpError {
    OpError {
        errno,
        detail: Some(format!(
            "'{}' {why}; naslab does not write or read through it and stops (was it put there during the run?)",
            path.display()
        )),
    }
}

/// Whether `inner` is `dir` or lies under it.
fn lies_in(inner: &str, dir: &str) -> bool {
    inner
        .strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('\\'))
}

/// Checks what `f` (opened at `path`) is: no reparse point, a directory exactly when one
/// is wanted, a file with no other name (a hard link would share it with a file
/// outside), and, wherever it really is, under the workload directory `dir_final`.
fn check(f: &File, path: &Path, spec: &OpenSpec, dir_final: &str) -> Result<(), OpError> {
    let i = info(f)?;
    if i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(refused(
            path,
            errno::ELOOP,
            "is a reparse point (a symbolic link, junction or mount point)",
        ));
    }
    let is_dir = i.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0;
    if is_dir != spec.dir {
        return Err(if is_dir {
            refused(
                path,
                errno::EISDIR,
                "is a directory, where the workload has a file",
            )
        } else {
            refused(
                path,
                errno::ENOTDIR,
                "is a file, where the workload has a directory",
            )
        });
    }
    if !is_dir && i.nNumberOfLinks > 1 {
        return Err(refused(
            path,
            errno::EMLINK,
            &format!(
                "has {} names (hard links), so it is also a file outside the workload",
                i.nNumberOfLinks
            ),
        ));
    }
    let real = final_path(f)?;
    if !lies_in(&real, dir_final) {
        return Err(refused(
            path,
            errno::EXDEV,
            &format!("is really '{real}', outside the workload directory (a junction or link on the way)"),
        ));
    }
    Ok(())
}

/// Opens `path` and checks it (see [`check`]); a truncating open empties the file only
/// once it passed, so nothing that fails is changed.
pub fn open_checked(path: &Path, spec: &OpenSpec, dir_final: &str) -> Result<File, OpError> {
    let f = match open(path, spec) {
        Ok(f) => f,
        // Windows refuses to open a directory as a file with "access denied".
        Err(e) if e.errno == errno::EACCES && !spec.dir => {
            return Err(match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => refused(
                    path,
                    errno::EISDIR,
                    "is a directory, where the workload has a file",
                ),
                _ => e,
            })
        }
        Err(e) => return Err(e),
    };
    check(&f, path, spec, dir_final)?;
    if spec.truncate && spec.write {
        f.set_len(0).map_err(io_err)?;
    }
    Ok(f)
}

/// Checks that the directory `path` is in is under the workload directory, reached
/// through no reparse point.
pub fn check_parent(path: &Path, dir_final: &str) -> Result<(), OpError> {
    let Some(parent) = path.parent() else {
        return Err(OpError::errno(errno::EINVAL));
    };
    let spec = OpenSpec {
        read: true,
        dir: true,
        ..OpenSpec::default()
    };
    open_checked(parent, &spec, dir_final).map(drop)
}

/// Reads at `offset` (ReadFile with the offset in its OVERLAPPED); 0 at end of file.
#[inline]
pub fn read_at(f: &File, buf: &mut [u8], offset: u64) -> Result<usize, OpError> {
    f.seek_read(buf, offset).map_err(io_err)
}

/// Writes at `offset` (WriteFile with the offset in its OVERLAPPED; [`APPEND`]: at the
/// end of the file).
#[inline]
pub fn write_at(f: &File, buf: &[u8], offset: u64) -> Result<usize, OpError> {
    f.seek_write(buf, offset).map_err(io_err)
}

/// FlushFileBuffers. Windows flushes only through a handle that may write; fsync on a
/// read-only descriptor writes the file back on Linux, so a read-only handle's file is
/// flushed through a writable handle opened for the purpose.
pub fn flush(f: &File, path: &Path, spec: &OpenSpec) -> Result<(), OpError> {
    match f.sync_all() {
        Ok(()) => Ok(()),
        Err(e) if !spec.write && e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32) => {
            let w = OpenSpec {
                write: true,
                ..OpenSpec::default()
            };
            open(path, &w)?.sync_all().map_err(io_err)
        }
        Err(e) => Err(io_err(e)),
    }
}

/// Makes the file hold `end` bytes, allocated (as fallocate with no flags does: the
/// size grows to `end`, never shrinks). The allocation is asked for first; a file
/// system that does not take the request (Wine's does not) still gets the end of file,
/// which allocates on NTFS.
pub fn allocate(f: &File, end: u64) -> Result<(), OpError> {
    let len = f.metadata().map_err(io_err)?.len();
    if end <= len {
        return Ok(());
    }
    let alloc = FILE_ALLOCATION_INFO {
        AllocationSize: i64::try_from(end).map_err(|_| OpError::errno(errno::EFBIG))?,
    };
    // SAFETY: the struct is the one FileAllocationInfo takes, and its size is passed.
    // Its refusal is not a failure (see above).
    unsafe {
        SetFileInformationByHandle(
            f.as_raw_handle(),
            FileAllocationInfo,
            (&alloc as *const FILE_ALLOCATION_INFO).cast(),
            std::mem::size_of::<FILE_ALLOCATION_INFO>() as u32,
        )
    };
    f.set_len(end).map_err(io_err)
}

/// The size of the entry at `path`, opened for its attributes only and checked.
pub fn size_of_entry(path: &Path, dir_final: &str) -> Result<u64, OpError> {
    let f = open(
        path,
        &OpenSpec {
            dir: true,
            ..OpenSpec::default()
        },
    )?;
    let i = info(&f)?;
    if i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(refused(
            path,
            errno::ELOOP,
            "is a reparse point (a symbolic link, junction or mount point)",
        ));
    }
    let real = final_path(&f)?;
    if !lies_in(&real, dir_final) {
        return Err(refused(
            path,
            errno::EXDEV,
            "lies outside the workload directory",
        ));
    }
    Ok((u64::from(i.nFileSizeHigh) << 32) | u64::from(i.nFileSizeLow))
}

/// Removes the file or empty directory at `path` (a reparse point there is removed
/// itself, never what it names).
pub fn remove(path: &Path, is_dir: bool, dir_final: &str) -> Result<(), OpError> {
    check_parent(path, dir_final)?;
    if is_dir {
        std::fs::remove_dir(path).map_err(io_err)
    } else {
        std::fs::remove_file(path).map_err(io_err)
    }
}

/// Renames `from` to `to`, replacing a file there.
pub fn rename(from: &Path, to: &Path, dir_final: &str) -> Result<(), OpError> {
    check_parent(from, dir_final)?;
    check_parent(to, dir_final)?;
    std::fs::rename(from, to).map_err(io_err)
}

/// Writes the file's cached data back, then opens it once without buffering, which
/// makes the cache manager write back and purge the pages it holds of the file (when no
/// other handle keeps them cached or mapped).
pub fn write_back_and_purge(path: &Path, dir_final: &str) -> Result<(), OpError> {
    let w = OpenSpec {
        read: true,
        write: true,
        ..OpenSpec::default()
    };
    open_checked(path, &w, dir_final)?
        .sync_all()
        .map_err(io_err)?;
    let unbuffered = OpenSpec {
        read: true,
        direct: true,
        ..OpenSpec::default()
    };
    open_checked(path, &unbuffered, dir_final).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_lies_in_a_directory_only_below_a_separator() {
        assert!(lies_in(r"\\?\C:\t\naslab\w", r"\\?\C:\t\naslab\w"));
        assert!(lies_in(r"\\?\C:\t\naslab\w\a.dat", r"\\?\C:\t\naslab\w"));
        assert!(!lies_in(r"\\?\C:\t\naslab\wx\a.dat", r"\\?\C:\t\naslab\w"));
        assert!(!lies_in(r"\\?\C:\elsewhere", r"\\?\C:\t\naslab\w"));
    }

    #[test]
    fn direct_opens_unbuffered_and_write_through_and_never_follow() {
        let d = OpenSpec {
            direct: true,
            ..OpenSpec::default()
        };
        let f = d.flags();
        assert_eq!(f & FILE_FLAG_NO_BUFFERING, FILE_FLAG_NO_BUFFERING);
        assert_eq!(f & FILE_FLAG_WRITE_THROUGH, FILE_FLAG_WRITE_THROUGH);
        assert_eq!(
            f & FILE_FLAG_OPEN_REPARSE_POINT,
            FILE_FLAG_OPEN_REPARSE_POINT
        );
        let plain = OpenSpec::default().flags();
        assert_eq!(plain, FILE_FLAG_OPEN_REPARSE_POINT);
    }
}
