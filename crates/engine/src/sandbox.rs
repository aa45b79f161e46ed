//! The one directory naslab writes in: `<target>/naslab/`, marked as its own. Nothing
//! outside it is ever created, changed or deleted, and it refuses a `naslab/` it did
//! not make.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The name of naslab's directory under a target.
pub const ROOT_NAME: &str = "naslab";
/// The file that marks the directory as naslab's.
pub const MARKER_NAME: &str = ".naslab-owned";
const MARKER_TEXT: &str = "This directory belongs to naslab, a file-system benchmark.\nnaslab creates, rewrites and deletes everything in it: keep no other files here.\n";

/// Why the target cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("target '{0}' does not exist; create it, or mount the share there, then run again")]
    Missing(PathBuf),
    #[error("target '{0}' is not a directory; give the directory to run in with --target")]
    NotDir(PathBuf),
    #[error(
        "target '{path}' is read-only ({source}); remount it read-write or choose another --target"
    )]
    ReadOnly {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("target '{path}' may not be written by this user ({source}); give a directory you may write in, or fix its permissions")]
    Denied {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("'{0}' exists but was not made by naslab (it has no {MARKER_NAME} file); naslab will not write or delete there: move it away or choose another --target")]
    NotOurs(PathBuf),
    #[error(
        "'{0}' is a symbolic link; naslab will not follow it: remove it or choose another --target"
    )]
    Symlink(PathBuf),
    #[error("workload name '{0}' is reserved; rename the workload")]
    ReservedName(String),
    #[error("cannot {action} '{path}': {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> SandboxError + 'a {
    move |source| match source.raw_os_error() {
        Some(libc::EROFS) => SandboxError::ReadOnly {
            path: path.to_path_buf(),
            source,
        },
        Some(libc::EACCES) | Some(libc::EPERM) => SandboxError::Denied {
            path: path.to_path_buf(),
            source,
        },
        _ => SandboxError::Io {
            action,
            path: path.to_path_buf(),
            source,
        },
    }
}

/// naslab's own directory under a target.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: PathBuf,
}

impl Sandbox {
    /// Opens (creating and marking it if needed) `<target>/naslab`.
    pub fn open(target: &Path) -> Result<Sandbox, SandboxError> {
        let meta = match fs::metadata(target) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(SandboxError::Missing(target.to_path_buf()))
            }
            Err(e) => return Err(io("read", target)(e)),
        };
        if !meta.is_dir() {
            return Err(SandboxError::NotDir(target.to_path_buf()));
        }
        let root = target.join(ROOT_NAME);
        let marker = root.join(MARKER_NAME);
        match fs::symlink_metadata(&root) {
            Ok(m) if m.file_type().is_symlink() => return Err(SandboxError::Symlink(root)),
            Ok(m) if !m.is_dir() => return Err(SandboxError::NotOurs(root)),
            Ok(_) => {
                if !marker.is_file() {
                    return Err(SandboxError::NotOurs(root));
                }
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                fs::create_dir(&root).map_err(io("create", &root))?;
                fs::write(&marker, MARKER_TEXT).map_err(io("write", &marker))?;
            }
            Err(e) => return Err(io("read", &root)(e)),
        }
        Ok(Sandbox { root })
    }

    /// `<target>/naslab`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A workload's directory, emptied: whatever an earlier run left there is removed.
    pub fn fresh_workload_dir(&self, name: &str) -> Result<PathBuf, SandboxError> {
        if name == MARKER_NAME || naslab_trace::check_rel_path(name).is_err() || name.contains('/')
        {
            return Err(SandboxError::ReservedName(name.to_string()));
        }
        let dir = self.root.join(name);
        self.remove_inside(&dir)?;
        fs::create_dir(&dir).map_err(io("create", &dir))?;
        Ok(dir)
    }

    /// Removes a workload's directory if it is there.
    pub fn remove_workload_dir(&self, name: &str) -> Result<(), SandboxError> {
        if name == MARKER_NAME
            || name.contains('/')
            || name.is_empty()
            || name == ".."
            || name == "."
        {
            return Err(SandboxError::ReservedName(name.to_string()));
        }
        self.remove_inside(&self.root.join(name))
    }

    /// Removes everything naslab made under the target, the marked directory included.
    pub fn remove_all(self) -> Result<(), SandboxError> {
        let marker = self.root.join(MARKER_NAME);
        if !marker.is_file() {
            return Err(SandboxError::NotOurs(self.root));
        }
        for entry in fs::read_dir(&self.root).map_err(io("list", &self.root))? {
            let entry = entry.map_err(io("list", &self.root))?;
            if entry.file_name() != MARKER_NAME {
                self.remove_inside(&entry.path())?;
            }
        }
        fs::remove_file(&marker).map_err(io("remove", &marker))?;
        fs::remove_dir(&self.root).map_err(io("remove", &self.root))
    }

    /// Deletes `path`, which must be a direct child of the marked root (a symbolic link
    /// is removed itself, never followed).
    fn remove_inside(&self, path: &Path) -> Result<(), SandboxError> {
        if path.parent() != Some(self.root.as_path()) || !self.root.join(MARKER_NAME).is_file() {
            return Err(SandboxError::NotOurs(path.to_path_buf()));
        }
        match fs::symlink_metadata(path) {
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io("read", path)(e)),
            Ok(m) if m.is_dir() => fs::remove_dir_all(path).map_err(io("remove", path)),
            Ok(_) => fs::remove_file(path).map_err(io("remove", path)),
        }
    }
}

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn permission_denied_is_not_called_read_only() {
        let p = Path::new("/t");
        let denied = io("create", p)(std::io::Error::from_raw_os_error(libc::EACCES)).to_string();
        assert!(
            denied.starts_with("target '/t' may not be written by this user"),
            "{denied}"
        );
        assert!(!denied.contains("read-only"), "{denied}");
        let rofs = io("create", p)(std::io::Error::from_raw_os_error(libc::EROFS)).to_string();
        assert!(rofs.starts_with("target '/t' is read-only"), "{rofs}");
    }
}
