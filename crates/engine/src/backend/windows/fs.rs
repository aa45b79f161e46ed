//! Paths, Win32 errors as errnos, and the requests naslab's marked directory is kept
//! with on a Windows directory ([`RemoteFs`], as on a share).

use std::fs::OpenOptions;
use std::io::Write;
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation as w;
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_OPEN_REPARSE_POINT,
};

use crate::backend::remote::{EntryKind, RemoteFs};
use crate::backend::OpError;
use crate::errno;

/// The errno that stands for a Win32 error code, so failures are counted under the
/// same names on every system.
pub fn errno_of(code: i32) -> i32 {
    let Ok(code) = u32::try_from(code) else {
        return errno::EIO;
    };
    match code {
        w::ERROR_FILE_NOT_FOUND | w::ERROR_PATH_NOT_FOUND | w::ERROR_BAD_PATHNAME => errno::ENOENT,
        w::ERROR_ACCESS_DENIED | w::ERROR_PRIVILEGE_NOT_HELD => errno::EACCES,
        w::ERROR_FILE_EXISTS | w::ERROR_ALREADY_EXISTS => errno::EEXIST,
        w::ERROR_DISK_FULL | w::ERROR_HANDLE_DISK_FULL => errno::ENOSPC,
        w::ERROR_DISK_QUOTA_EXCEEDED => errno::EDQUOT,
        w::ERROR_DIR_NOT_EMPTY => errno::ENOTEMPTY,
        w::ERROR_WRITE_PROTECT => errno::EROFS,
        w::ERROR_SHARING_VIOLATION | w::ERROR_LOCK_VIOLATION | w::ERROR_BUSY => errno::EBUSY,
        w::ERROR_INVALID_NAME | w::ERROR_INVALID_PARAMETER => errno::EINVAL,
        w::ERROR_FILENAME_EXCED_RANGE => errno::ENAMETOOLONG,
        w::ERROR_DIRECTORY => errno::ENOTDIR,
        w::ERROR_NOT_SUPPORTED | w::ERROR_INVALID_FUNCTION => errno::EOPNOTSUPP,
        w::ERROR_TOO_MANY_OPEN_FILES => errno::EMFILE,
        w::ERROR_INVALID_HANDLE => errno::EBADF,
        w::ERROR_NOT_SAME_DEVICE => errno::EXDEV,
        w::ERROR_CANT_ACCESS_FILE
        | w::ERROR_CANT_RESOLVE_FILENAME
        | w::ERROR_STOPPED_ON_SYMLINK
        | w::ERROR_REPARSE_POINT_ENCOUNTERED => errno::ELOOP,
        w::ERROR_NETNAME_DELETED
        | w::ERROR_UNEXP_NET_ERR
        | w::ERROR_BAD_NETPATH
        | w::ERROR_NETWORK_UNREACHABLE
        | w::ERROR_CONNECTION_ABORTED
        | w::ERROR_DEV_NOT_EXIST => errno::ENOTCONN,
        w::ERROR_SEM_TIMEOUT | w::WAIT_TIMEOUT => errno::ETIMEDOUT,
        _ => errno::EIO,
    }
}

/// An I/O error as an [`OpError`], its Win32 code turned into an errno.
pub fn io_err(e: std::io::Error) -> OpError {
    OpError {
        errno: e.raw_os_error().map_or(errno::EIO, errno_of),
        detail: None,
    }
}

/// The absolute form of `dir` (against the current directory for a relative one).
pub fn absolute(dir: &Path) -> std::io::Result<PathBuf> {
    std::path::absolute(dir)
}

/// `base` joined with a `/`-separated relative path (`""`: `base` itself).
pub fn join(base: &Path, rel: &str) -> PathBuf {
    let mut p = base.to_path_buf();
    for part in rel.split('/').filter(|s| !s.is_empty()) {
        p.push(part);
    }
    p
}

fn kind_of(attributes: u32) -> EntryKind {
    if attributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        EntryKind::Link
    } else if attributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
        EntryKind::Dir
    } else {
        EntryKind::File
    }
}

/// The target directory, seen as [`RemoteFs`] sees a share: paths relative to it.
#[derive(Debug)]
pub struct LocalFs {
    base: PathBuf,
}

impl LocalFs {
    /// The file system under `base` (absolute).
    pub fn new(base: PathBuf) -> LocalFs {
        LocalFs { base }
    }

    /// What the target directory itself is.
    pub fn kind_of_base(&mut self) -> Result<EntryKind, OpError> {
        let m = std::fs::symlink_metadata(&self.base).map_err(io_err)?;
        Ok(kind_of(m.file_attributes()))
    }

    fn at(&self, rel: &str) -> PathBuf {
        join(&self.base, rel)
    }
}

impl RemoteFs for LocalFs {
    fn kind(&mut self, path: &str) -> Result<Option<EntryKind>, OpError> {
        // symlink_metadata opens the entry itself, never what a reparse point names.
        match std::fs::symlink_metadata(self.at(path)) {
            Ok(m) => Ok(Some(kind_of(m.file_attributes()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io_err(e)),
        }
    }

    fn make_dir(&mut self, path: &str) -> Result<(), OpError> {
        std::fs::create_dir(self.at(path)).map_err(io_err)
    }

    fn put_file(&mut self, path: &str, data: &[u8]) -> Result<(), OpError> {
        // The entry itself is opened, never what a reparse point names.
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(self.at(path))
            .map_err(io_err)?;
        let m = f.metadata().map_err(io_err)?;
        if kind_of(m.file_attributes()) != EntryKind::File {
            return Err(OpError {
                errno: errno::ELOOP,
                detail: Some(format!("'{path}' is not a regular file of its own")),
            });
        }
        f.set_len(0).map_err(io_err)?;
        f.write_all(data).map_err(io_err)
    }

    fn list(&mut self, path: &str) -> Result<Vec<(String, EntryKind)>, OpError> {
        let mut out = Vec::new();
        for e in std::fs::read_dir(self.at(path)).map_err(io_err)? {
            let e = e.map_err(io_err)?;
            // On Windows an entry's metadata comes from the listing itself.
            let m = e.metadata().map_err(io_err)?;
            out.push((
                e.file_name().to_string_lossy().into_owned(),
                kind_of(m.file_attributes()),
            ));
        }
        Ok(out)
    }

    fn remove_file(&mut self, path: &str) -> Result<(), OpError> {
        let p = self.at(path);
        match std::fs::remove_file(&p) {
            Ok(()) => Ok(()),
            // A junction or a directory symbolic link is removed as a directory (the
            // link itself, never what it names).
            Err(e) => match std::fs::symlink_metadata(&p) {
                Ok(m) if m.file_attributes() & FILE_ATTRIBUTE_DIRECTORY != 0 => {
                    std::fs::remove_dir(&p).map_err(io_err)
                }
                _ => Err(io_err(e)),
            },
        }
    }

    fn remove_dir(&mut self, path: &str) -> Result<(), OpError> {
        std::fs::remove_dir(self.at(path)).map_err(io_err)
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), OpError> {
        std::fs::rename(self.at(from), self.at(to)).map_err(io_err)
    }
}
