//! What can go wrong reading a layout or running the allocation lab, each with what to do.

use std::path::PathBuf;

/// An error of this crate; every message says what the user can do about it.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// A path could not be opened or examined.
    #[error("cannot {what} '{path}': {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file system does not implement FIEMAP (NFS, SMB, tmpfs before 6.x, most FUSE).
    #[cfg_attr(
        not(windows),
        error(
            "the {fs} file system holding '{path}' does not report file extents (FIEMAP); layouts can be read only on local file systems such as ext4, xfs or btrfs"
        )
    )]
    #[cfg_attr(
        windows,
        error(
            "the {fs} file system holding '{path}' does not report file extents (FSCTL_GET_RETRIEVAL_POINTERS); layouts can be read on a local volume of Windows itself (NTFS, ReFS), not under Wine nor on most network shares"
        )
    )]
    Unsupported { path: PathBuf, fs: String },
    /// A path that is neither a regular file nor a directory.
    #[error("'{0}' is neither a regular file nor a directory; give files or directories")]
    NotFileOrDir(PathBuf),
    /// The FIEMAP ioctl (on Windows `FSCTL_GET_RETRIEVAL_POINTERS`) failed for another
    /// reason.
    #[cfg_attr(
        not(windows),
        error("cannot read the extents of '{path}' (FIEMAP): {source}")
    )]
    #[cfg_attr(
        windows,
        error("cannot read the extents of '{path}' (FSCTL_GET_RETRIEVAL_POINTERS): {source}")
    )]
    Fiemap {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file system ran out of room during an allocation pattern.
    #[error(
        "the file system under '{path}' is full; give a smaller --size or a --dir with more room"
    )]
    NoSpace { path: PathBuf },
    /// A tool the matrix needs is missing, or failed (naslab-host's error).
    #[error(transparent)]
    Host(#[from] naslab_host::HostError),
    /// The matrix needs root for loop devices and mounts.
    #[error(
        "the file-system matrix needs root (it attaches loop devices and mounts file systems); run it as root, or leave out --matrix to run the patterns in --dir"
    )]
    NeedsRoot,
    /// An option value that cannot work.
    #[error("{flag}: {message}")]
    InvalidOption { flag: &'static str, message: String },
    /// The user interrupted the run (Ctrl-C or SIGTERM); everything made was cleaned up.
    #[error("interrupted; the images and mounts made so far were removed")]
    Interrupted,
}

impl LayoutError {
    #[cfg(any(target_os = "linux", windows))]
    pub(crate) fn io(
        what: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| LayoutError::Io { what, path, source }
    }
}
