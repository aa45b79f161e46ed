//! Layouts on Linux: each file's extents from FIEMAP, its file system from `statfs` and
//! the mount table, and trees walked beneath a held directory, no link followed (the
//! figures themselves are `file_layout`'s).

use std::collections::HashMap;
use std::ffi::{CStr, CString, OsStr};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::LayoutError;
use crate::fiemap::{self, FiemapError};
use crate::file_layout::tree;
pub use crate::file_layout::{FileLayout, Skipped, Totals, TreeLayout};
use crate::limits::{FsInfo, extent_limit, fs_info_in};
use naslab_host::Mounts;

/// Reads one regular file's layout. With `sync`, its dirty data is written back first.
/// (To look at many files, read the mount table once and call [`analyze_file_in`].)
pub fn analyze_file(path: &Path, sync: bool) -> Result<FileLayout, LayoutError> {
    analyze_file_in(path, sync, &Mounts::read())
}

/// [`analyze_file`] with a mount table read beforehand.
pub fn analyze_file_in(
    path: &Path,
    sync: bool,
    mounts: &Mounts,
) -> Result<FileLayout, LayoutError> {
    // Checked before opening: opening a device can have effects of its own.
    let before = std::fs::metadata(path).map_err(LayoutError::io("examine", path))?;
    if !before.is_file() {
        return Err(LayoutError::NotFileOrDir(path.to_path_buf()));
    }
    analyze_regular(path, sync, mounts, &mut HashMap::new())
}

/// Maps a file already seen to be a regular file. It is opened non-blocking, so a FIFO
/// put in its place meanwhile cannot hang the caller (it is then refused). What is
/// known of each file system is kept in `fs_by_dev`, read once per device.
fn analyze_regular(
    path: &Path,
    sync: bool,
    mounts: &Mounts,
    fs_by_dev: &mut HashMap<u64, FsInfo>,
) -> Result<FileLayout, LayoutError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(LayoutError::io("open", path))?;
    analyze_open(file, path, sync, mounts, fs_by_dev)
}

/// Maps a file already open (`path` names it in the result and in errors).
fn analyze_open(
    file: File,
    path: &Path,
    sync: bool,
    mounts: &Mounts,
    fs_by_dev: &mut HashMap<u64, FsInfo>,
) -> Result<FileLayout, LayoutError> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata().map_err(LayoutError::io("examine", path))?;
    if !meta.is_file() {
        return Err(LayoutError::NotFileOrDir(path.to_path_buf()));
    }
    let fs = match fs_by_dev.get(&meta.dev()) {
        Some(fs) => fs.clone(),
        None => {
            let fs = fs_info_in(&file, mounts).map_err(LayoutError::io("statfs", path))?;
            fs_by_dev.insert(meta.dev(), fs.clone());
            fs
        }
    };
    let extents = match fiemap::extents(&file, sync) {
        Ok(e) => e,
        Err(FiemapError::Unsupported) => {
            return Err(LayoutError::Unsupported {
                path: path.to_path_buf(),
                fs: fs.name,
            });
        }
        Err(FiemapError::Io(source)) => {
            return Err(LayoutError::Fiemap {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let limit = extent_limit(&file, &fs);
    Ok(FileLayout::from_extents(
        path.to_path_buf(),
        fs.name,
        meta.len(),
        fs.block_bytes,
        limit,
        &extents,
    ))
}

/// Calls `on_file` with every regular file under `root` (itself, if it is a file) and
/// its layout or error. Symbolic links below `root` are not followed and other file
/// systems mounted below it are not entered. Returns what could not be listed.
pub fn walk(
    root: &Path,
    sync: bool,
    on_file: impl FnMut(&Path, Result<FileLayout, LayoutError>),
) -> Result<Vec<Skipped>, LayoutError> {
    walk_in(root, sync, &Mounts::read(), on_file)
}

/// [`walk`] with a mount table read beforehand.
pub fn walk_in(
    root: &Path,
    sync: bool,
    mounts: &Mounts,
    mut on_file: impl FnMut(&Path, Result<FileLayout, LayoutError>),
) -> Result<Vec<Skipped>, LayoutError> {
    // The root is followed if it is a link; links below it are not.
    let meta = std::fs::metadata(root).map_err(LayoutError::io("examine", root))?;
    if meta.is_file() {
        on_file(root, analyze_file_in(root, sync, mounts));
        return Ok(Vec::new());
    }
    if !meta.is_dir() {
        return Err(LayoutError::NotFileOrDir(root.to_path_buf()));
    }
    use std::os::unix::fs::OpenOptionsExt;
    let dir = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(root)
        .map_err(LayoutError::io("open", root))?;
    walk_dir_in(OwnedFd::from(dir), root, sync, mounts, on_file)
}

/// Like [`walk`] over the directory `dir` is open on (`shown` names it in the results):
/// every entry is opened beneath that descriptor without following a symbolic link, so
/// a link put anywhere in the tree, even during the walk, is never followed.
pub fn walk_dir(
    dir: OwnedFd,
    shown: &Path,
    sync: bool,
    on_file: impl FnMut(&Path, Result<FileLayout, LayoutError>),
) -> Result<Vec<Skipped>, LayoutError> {
    walk_dir_in(dir, shown, sync, &Mounts::read(), on_file)
}

/// [`walk_dir`] with a mount table read beforehand.
pub fn walk_dir_in(
    dir: OwnedFd,
    shown: &Path,
    sync: bool,
    mounts: &Mounts,
    mut on_file: impl FnMut(&Path, Result<FileLayout, LayoutError>),
) -> Result<Vec<Skipped>, LayoutError> {
    let st = fstat(dir.as_raw_fd()).map_err(LayoutError::io("examine", shown))?;
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Err(LayoutError::NotFileOrDir(shown.to_path_buf()));
    }
    let dev = st.st_dev;
    let mut fs_by_dev = HashMap::new();
    let mut skipped = Vec::new();
    let mut stack = vec![(dir, shown.to_path_buf())];
    while let Some((dir, dir_path)) = stack.pop() {
        let mut names = match list_dir(dir.as_raw_fd()) {
            Ok(n) => n,
            Err(e) => {
                skipped.push(Skipped {
                    path: dir_path,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        names.sort();
        for (name, d_type) in names.into_iter().rev() {
            let path = dir_path.join(OsStr::from_bytes(name.to_bytes()));
            let skip = |path: PathBuf, e: std::io::Error| Skipped {
                path,
                reason: e.to_string(),
            };
            // What the entry is, from the directory itself where the file system says
            // (then the open below checks it again); otherwise asked before opening,
            // since opening a device can have effects of its own.
            let kind = match d_type {
                libc::DT_REG => libc::S_IFREG,
                libc::DT_DIR => libc::S_IFDIR,
                libc::DT_UNKNOWN => match lstat_at(dir.as_raw_fd(), &name) {
                    Ok(m) if m.st_mode & libc::S_IFMT == libc::S_IFDIR && m.st_dev != dev => {
                        skipped.push(Skipped {
                            path,
                            reason: "another file system is mounted here".into(),
                        });
                        continue;
                    }
                    Ok(m) => m.st_mode & libc::S_IFMT,
                    Err(e) => {
                        skipped.push(skip(path, e));
                        continue;
                    }
                },
                _ => continue,
            };
            match kind {
                libc::S_IFDIR => {
                    let flags = libc::O_RDONLY | libc::O_DIRECTORY;
                    match open_at(dir.as_raw_fd(), &name, flags) {
                        // Swapped for another file system's directory since the look.
                        Ok(d) if fstat(d.as_raw_fd()).ok().map(|s| s.st_dev) != Some(dev) => {
                            skipped.push(Skipped {
                                path,
                                reason: "another file system is mounted here".into(),
                            })
                        }
                        Ok(d) => stack.push((d, path)),
                        Err(e) => skipped.push(skip(path, e)),
                    }
                }
                libc::S_IFREG => {
                    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY;
                    let r = open_at(dir.as_raw_fd(), &name, flags)
                        .map_err(LayoutError::io("open", &path))
                        .and_then(|fd| {
                            analyze_open(File::from(fd), &path, sync, mounts, &mut fs_by_dev)
                        });
                    on_file(&path, r);
                }
                _ => {}
            }
        }
    }
    Ok(skipped)
}

/// Opens `name` in `dir`, never following a symbolic link (one fails with `ELOOP`).
fn open_at(dir: RawFd, name: &CStr, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    // SAFETY: name is NUL-terminated; dir is an open directory.
    let fd = unsafe {
        libc::openat(
            dir,
            name.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the kernel just gave us this descriptor.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstat(fd: RawFd) -> std::io::Result<libc::stat> {
    // SAFETY: st is written by the kernel before it is read.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid stat the kernel fills; fd is the caller's open descriptor.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// The status of `name` in `dir` (of a link itself, not of what it names).
fn lstat_at(dir: RawFd, name: &CStr) -> std::io::Result<libc::stat> {
    // SAFETY: name is NUL-terminated; st is written by the kernel before it is read.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: name is NUL-terminated and outlives the call; st is a valid stat to fill.
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(st)
}

/// The entries of the directory open on `fd` (without `.` and `..`), each with the type the directory
/// records for it (`DT_UNKNOWN` where the file system keeps none).
fn list_dir(fd: RawFd) -> std::io::Result<Vec<(CString, u8)>> {
    // fdopendir takes over the descriptor it is given, so it gets its own.
    let own = open_at(fd, c".", libc::O_RDONLY | libc::O_DIRECTORY)?;
    // SAFETY: own is an open directory; on success the stream owns it.
    let stream = unsafe { libc::fdopendir(own.as_raw_fd()) };
    if stream.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    std::mem::forget(own);
    let mut names = Vec::new();
    let result = loop {
        // readdir reports an error only through errno, so it is cleared first.
        // SAFETY: errno is this thread's; stream is open until closedir below.
        unsafe { *libc::__errno_location() = 0 };
        // SAFETY: stream is an open directory stream until closedir below.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            let e = std::io::Error::last_os_error();
            break if e.raw_os_error() == Some(0) {
                Ok(())
            } else {
                Err(e)
            };
        }
        // SAFETY: d_name is a NUL-terminated name inside the entry readdir returned.
        let name = unsafe { CStr::from_ptr((*entry).d_name.as_ptr()) };
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            // SAFETY: as above.
            names.push((name.to_owned(), unsafe { (*entry).d_type }));
        }
    };
    // SAFETY: stream came from fdopendir and is closed once.
    unsafe { libc::closedir(stream) };
    result.map(|()| names)
}

/// Reads every file under `root`, keeping the `top` worst.
pub fn analyze_tree(root: &Path, top: usize, sync: bool) -> Result<TreeLayout, LayoutError> {
    analyze_tree_in(root, top, sync, &Mounts::read())
}

/// [`analyze_tree`] with a mount table read beforehand.
pub fn analyze_tree_in(
    root: &Path,
    top: usize,
    sync: bool,
    mounts: &Mounts,
) -> Result<TreeLayout, LayoutError> {
    tree(root, top, |on_file| walk_in(root, sync, mounts, on_file))
}

/// [`analyze_tree`] of the directory `base/rel[0]/rel[1]/...`: `base` is followed if it
/// is a link, but no component of `rel` nor anything below is (a link fails the call).
pub fn analyze_tree_beneath(
    base: &Path,
    rel: &[&str],
    top: usize,
    sync: bool,
) -> Result<TreeLayout, LayoutError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut dir = OwnedFd::from(
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(base)
            .map_err(LayoutError::io("open", base))?,
    );
    let mut root = base.to_path_buf();
    for name in rel {
        root.push(name);
        let c = CString::new(*name).map_err(|_| LayoutError::NotFileOrDir(root.clone()))?;
        dir = open_at(dir.as_raw_fd(), &c, libc::O_RDONLY | libc::O_DIRECTORY)
            .map_err(LayoutError::io("open", &root))?;
    }
    let mounts = Mounts::read();
    tree(&root, top, |on_file| {
        walk_dir_in(dir, &root, sync, &mounts, on_file)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extent::{Extent, count_like_filefrag};
    use crate::fiemap::{EXTENT_DELALLOC, EXTENT_LAST, EXTENT_UNKNOWN, EXTENT_UNWRITTEN};
    use crate::file_layout::{ExtentLimit, ideal_extents};

    fn ext(logical: u64, physical: u64, length: u64) -> Extent {
        Extent {
            logical,
            physical,
            length,
            flags: 0,
        }
    }

    const K4: u64 = 4096;

    #[test]
    fn contiguous_records_count_as_one_like_filefrag() {
        let e = [ext(0, 100 * K4, 8 * K4), ext(8 * K4, 108 * K4, 8 * K4)];
        assert_eq!(count_like_filefrag(&e), 1);
    }

    #[test]
    fn a_jump_on_disk_starts_a_new_extent() {
        let e = [ext(0, 100 * K4, 8 * K4), ext(8 * K4, 500 * K4, 8 * K4)];
        assert_eq!(count_like_filefrag(&e), 2);
    }

    #[test]
    fn a_hole_matched_by_a_gap_on_disk_is_not_a_new_extent() {
        // Logical gap of 4 blocks, physical gap of 4 blocks: filefrag's "expected".
        let e = [ext(0, 100 * K4, 8 * K4), ext(12 * K4, 112 * K4, 8 * K4)];
        assert_eq!(count_like_filefrag(&e), 1);
    }

    #[test]
    fn a_file_starting_with_a_hole_has_one_extent_and_empty_files_none() {
        assert_eq!(count_like_filefrag(&[ext(64 * K4, 7 * K4, K4)]), 1);
        assert_eq!(count_like_filefrag(&[]), 0);
    }

    #[test]
    fn an_extent_at_offset_zero_never_counts_twice() {
        // filefrag's quirk: logical 0 is never "a new extent", even after others.
        let e = [ext(0, 100 * K4, K4), ext(0, 900 * K4, K4)];
        assert_eq!(count_like_filefrag(&e), 1);
    }

    #[test]
    fn score_counts_blocks_that_follow_their_predecessor() {
        let limit = ExtentLimit {
            bytes: 32768 * K4,
            encoded_bytes: None,
        };
        let e = [ext(0, 100 * K4, 4 * K4), ext(4 * K4, 200 * K4, 4 * K4)];
        let f = FileLayout::from_extents("f".into(), "ext4".into(), 8 * K4, K4, Some(limit), &e);
        assert_eq!((f.blocks, f.following_blocks), (8, 6));
        assert_eq!(f.score(), Some(6.0 / 7.0));
        assert_eq!(f.extents, 2);
        assert_eq!(f.ideal_extents, Some(1));
        assert_eq!(f.ratio(), Some(2.0));
    }

    #[test]
    fn unwritten_and_delalloc_records_are_reported_as_such() {
        let mut a = ext(0, 100 * K4, 4 * K4);
        a.flags = EXTENT_UNWRITTEN;
        let mut b = ext(4 * K4, 0, 4 * K4);
        b.flags = EXTENT_DELALLOC | EXTENT_UNKNOWN | EXTENT_LAST;
        let f = FileLayout::from_extents("f".into(), "ext4".into(), 8 * K4, K4, None, &[a, b]);
        assert_eq!((f.unwritten_extents, f.delalloc_extents), (1, 1));
        // Only the located blocks count for the score.
        assert_eq!(f.blocks, 4);
        assert_eq!(f.ideal_extents, None);
        assert_eq!(f.ratio(), None);
    }

    #[test]
    fn ideal_extents_round_up_to_the_longest_extent() {
        let l = ExtentLimit {
            bytes: 128 << 20,
            encoded_bytes: Some(128 << 10),
        };
        assert_eq!(ideal_extents(0, 0, l), 0);
        assert_eq!(ideal_extents(1, 0, l), 1);
        assert_eq!(ideal_extents(128 << 20, 0, l), 1);
        assert_eq!(ideal_extents((128 << 20) + 1, 0, l), 2);
        assert_eq!(ideal_extents(1 << 20, 1 << 20, l), 8);
    }
}
