//! Layouts on Windows: each file's extents from `FSCTL_GET_RETRIEVAL_POINTERS` (see
//! [`crate::retrieval`]), in clusters of the volume's size, counted as on Linux; a tree
//! walked without entering any reparse point (symbolic link, junction, mount point).

use std::fs::File;
use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_OPEN_REPARSE_POINT, GetVolumeInformationByHandleW,
};

use crate::error::LayoutError;
use crate::file_layout::{FileLayout, Skipped, TreeLayout, tree};
use crate::retrieval::{self, RetrievalError};

/// The name of the file system holding the open file (NTFS, ReFS, FAT32, ...).
fn fs_name(file: &File) -> String {
    let mut name = [0u16; 64];
    // SAFETY: only the file system's name is asked for, into a buffer of the length
    // passed; the handle is open.
    let ok = unsafe {
        GetVolumeInformationByHandleW(
            file.as_raw_handle(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            name.as_mut_ptr(),
            name.len() as u32,
        )
    };
    if ok == 0 {
        return "unknown".into();
    }
    let n = name.iter().position(|&c| c == 0).unwrap_or(name.len());
    String::from_utf16_lossy(&name[..n])
}

/// Reads one regular file's layout (`path` followed if it is a link, as on Linux).
/// With `sync`, its cached data is written back first where naslab may write the file.
pub fn analyze_file(path: &Path, sync: bool) -> Result<FileLayout, LayoutError> {
    let before = std::fs::metadata(path).map_err(LayoutError::io("examine", path))?;
    if !before.is_file() {
        return Err(LayoutError::NotFileOrDir(path.to_path_buf()));
    }
    let file = File::open(path).map_err(LayoutError::io("open", path))?;
    analyze_open(&file, path, sync)
}

/// Maps a file already open (`path` names it in the result and in errors).
fn analyze_open(file: &File, path: &Path, sync: bool) -> Result<FileLayout, LayoutError> {
    if sync {
        // FlushFileBuffers needs a handle that may write; a file naslab may not write is
        // mapped as it is (NTFS gives clusters as data is written, not at write-back).
        if let Ok(w) = std::fs::OpenOptions::new().write(true).open(path) {
            let _ = w.sync_all();
        }
    }
    layout_of_open(file, path)
}

/// The layout of a regular file already open, as it is now (a caller that opens files
/// its own way writes their data back first); `path` names it in the result and in
/// errors.
pub fn layout_of_open(file: &File, path: &Path) -> Result<FileLayout, LayoutError> {
    let meta = file.metadata().map_err(LayoutError::io("examine", path))?;
    if !meta.is_file() {
        return Err(LayoutError::NotFileOrDir(path.to_path_buf()));
    }
    let fs = fs_name(file);
    let extents = match retrieval::extents(file) {
        Ok(e) => e,
        Err(RetrievalError::Unsupported(_)) => {
            return Err(LayoutError::Unsupported {
                path: path.to_path_buf(),
                fs,
            });
        }
        Err(RetrievalError::Runs(e)) => {
            return Err(LayoutError::Fiemap {
                path: path.to_path_buf(),
                source: std::io::Error::other(e),
            });
        }
        Err(RetrievalError::Io(source)) => {
            return Err(LayoutError::Fiemap {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let cluster =
        retrieval::cluster_bytes(file).map_err(LayoutError::io("query the volume of", path))?;
    Ok(FileLayout::from_extents(
        path.to_path_buf(),
        fs,
        meta.len(),
        cluster,
        None,
        &extents,
    ))
}

/// Calls `on_file` with every regular file under `root` (itself, if it is a file) and
/// its layout or error. `root` is followed if it is a link; no reparse point below it
/// is entered or mapped (a mount point below is another volume). Returns what could not
/// be listed.
pub fn walk(
    root: &Path,
    sync: bool,
    mut on_file: impl FnMut(&Path, Result<FileLayout, LayoutError>),
) -> Result<Vec<Skipped>, LayoutError> {
    let meta = std::fs::metadata(root).map_err(LayoutError::io("examine", root))?;
    if meta.is_file() {
        on_file(root, analyze_file(root, sync));
        return Ok(Vec::new());
    }
    if !meta.is_dir() {
        return Err(LayoutError::NotFileOrDir(root.to_path_buf()));
    }
    let mut skipped = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if dir == root => return Err(LayoutError::io("list", root)(e)),
            Err(e) => {
                skipped.push(Skipped {
                    path: dir,
                    reason: format!("cannot list it: {e}"),
                });
                continue;
            }
        };
        let mut names: Vec<_> = entries.filter_map(Result::ok).collect();
        names.sort_by_key(|e| e.file_name());
        for entry in names {
            let path = entry.path();
            // The entry's own attributes (a link's, not its target's).
            let Ok(m) = entry.metadata() else { continue };
            if m.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
                continue;
            }
            if m.is_dir() {
                dirs.push(path);
            } else if m.is_file() {
                // Opened as it is: a file swapped for a link since the listing is the
                // link itself, refused below.
                let opened = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
                    .open(&path)
                    .map_err(LayoutError::io("open", &path));
                let r = opened.and_then(|f| {
                    let a = f.metadata().map_err(LayoutError::io("examine", &path))?;
                    if a.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
                        return Err(LayoutError::NotFileOrDir(path.clone()));
                    }
                    analyze_open(&f, &path, sync)
                });
                on_file(&path, r);
            }
        }
    }
    Ok(skipped)
}

/// Reads every file under `root`, keeping the `top` worst.
pub fn analyze_tree(root: &Path, top: usize, sync: bool) -> Result<TreeLayout, LayoutError> {
    tree(root, top, |on_file| walk(root, sync, on_file))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of 3 clusters' worth of data and a directory holding it, a link beside.
    fn made() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("d")).unwrap();
        std::fs::write(dir.path().join("d").join("a.dat"), vec![5u8; 3 * 65536]).unwrap();
        dir
    }

    /// What a file's layout must be where the volume reports extents: its data mapped in
    /// whole clusters, nothing unknown.
    fn check_mapped(f: &FileLayout) {
        assert_eq!(f.size_bytes, 3 * 65536);
        assert!(f.block_bytes >= 512, "{f:?}");
        assert_eq!(
            f.mapped_bytes,
            (3 * 65536u64).next_multiple_of(f.block_bytes)
        );
        assert!(f.extents >= 1);
    }

    #[test]
    fn a_file_is_mapped_or_refused_as_unsupported_by_name() {
        let dir = made();
        let path = dir.path().join("d").join("a.dat");
        match analyze_file(&path, true) {
            Ok(f) => check_mapped(&f),
            Err(e @ LayoutError::Unsupported { .. }) => {
                let shown = e.to_string();
                assert!(
                    shown.contains("does not report file extents")
                        && shown.contains("FSCTL_GET_RETRIEVAL_POINTERS")
                        && shown.contains("a.dat"),
                    "{shown}"
                );
            }
            Err(e) => panic!("neither mapped nor refused as unsupported: {e}"),
        }
    }

    #[test]
    fn a_tree_walk_meets_every_file_and_no_directory() {
        let dir = made();
        std::fs::write(dir.path().join("b.dat"), b"small").unwrap();
        let mut seen = Vec::new();
        let skipped = walk(dir.path(), false, |p, r| {
            seen.push(p.strip_prefix(dir.path()).unwrap().to_path_buf());
            if let Ok(f) = r {
                assert_eq!(f.path, p);
            }
        })
        .unwrap();
        assert!(skipped.is_empty(), "{skipped:?}");
        seen.sort();
        assert_eq!(
            seen,
            [
                Path::new("b.dat").to_path_buf(),
                Path::new("d").join("a.dat")
            ]
        );
    }
}
