//! Paths, Win32 errors as errnos, and the requests naslab's marked directory is kept
//! with on a Windows directory ([`RemoteFs`], as on a share).

use std::io::Write;
use std::os::windows::fs::MetadataExt;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation as w;
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT,
};

use super::handle::{Names, OpenSpec, Root};
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
        w::ERROR_SHARING_VIOLATION | w::ERROR_BUSY => errno::EBUSY,
        // A range another handle holds, for a lock or a read or write in it: EAGAIN, as
        // SMB's STATUS_FILE_LOCK_CONFLICT is counted (and as a mandatory lock fails a
        // read or write on Linux).
        w::ERROR_LOCK_VIOLATION => errno::EAGAIN,
        w::ERROR_NOT_LOCKED => errno::ENOLCK,
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

/// What the directory at `path` (the target the user named) is.
pub fn kind_of_path(path: &Path) -> Result<EntryKind, OpError> {
    let m = std::fs::symlink_metadata(path).map_err(io_err)?;
    Ok(kind_of(m.file_attributes()))
}

/// The target directory, seen as [`RemoteFs`] sees a share: paths relative to it, each
/// opened relative to its handle and checked as the workload's entries are (see
/// [`Root`]), so emptying a workload directory never goes through a link.
#[derive(Debug)]
pub struct LocalFs {
    root: Root,
    names: Names,
    to: Names,
}

impl LocalFs {
    /// The file system under the directory at `base`, held open.
    pub fn open(base: &Path) -> Result<LocalFs, OpError> {
        Ok(LocalFs {
            root: Root::at_path(base)?,
            names: Names::default(),
            to: Names::default(),
        })
    }

    /// The directory `rel` below the target, opened for a stream of its own.
    pub fn dir(&self, rel: &str) -> Result<Root, OpError> {
        self.root.below(rel)
    }
}

impl RemoteFs for LocalFs {
    fn kind(&mut self, path: &str) -> Result<Option<EntryKind>, OpError> {
        self.root.kind(self.names.of(path)?)
    }

    fn make_dir(&mut self, path: &str) -> Result<(), OpError> {
        self.root.make_dir(self.names.of(path)?)
    }

    fn put_file(&mut self, path: &str, data: &[u8]) -> Result<(), OpError> {
        let spec = OpenSpec {
            write: true,
            create: true,
            truncate: true,
            ..OpenSpec::default()
        };
        let mut f = self.root.open(self.names.of(path)?, &spec)?;
        f.write_all(data).map_err(io_err)
    }

    fn list(&mut self, path: &str) -> Result<Vec<(String, EntryKind)>, OpError> {
        let names = self.root.names_in(self.names.of(path)?)?;
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let p = format!("{}/{name}", path.trim_end_matches('/'));
            let p = p.trim_start_matches('/');
            // Listed but not to be opened (a link that names nothing): a link.
            let kind = self
                .root
                .kind(self.names.of(p)?)?
                .unwrap_or(EntryKind::Link);
            out.push((name, kind));
        }
        Ok(out)
    }

    fn remove_file(&mut self, path: &str) -> Result<(), OpError> {
        self.root.remove_itself(self.names.of(path)?, false)
    }

    fn remove_dir(&mut self, path: &str) -> Result<(), OpError> {
        self.root.remove_itself(self.names.of(path)?, true)
    }

    fn rename(&mut self, from: &str, to: &str) -> Result<(), OpError> {
        let to = self.to.of(to)?;
        self.root.rename(self.names.of(from)?, to)
    }
}
