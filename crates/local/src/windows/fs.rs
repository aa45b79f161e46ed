//! Paths, Win32 errors as errnos, and the requests naslab's marked directory is kept
//! with on a Windows directory ([`RemoteFs`], as on a share).

use std::io::Write;
use std::os::windows::fs::MetadataExt;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT,
};

use super::handle::{Names, OpenSpec, Root};
use crate::errno;
use naslab_backend::OpError;
use naslab_remote::remote::{EntryKind, RemoteFs};

pub use naslab_backend::errno::of_win32 as errno_of;

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
