//! Where the server put a workload's files: extents counted with FIEMAP on the
//! server's own file system (naslab-layout, which counts as e2fsprogs' filefrag does).

use std::path::{Path, PathBuf};

use naslab_layout::{TreeLayout, analyze_tree_beneath};

use crate::error::LabError;

/// naslab's directory in the share (the engine's sandbox root).
const ROOT_NAME: &str = "naslab";

/// A workload's directory on the server's file system, under the lab's share.
pub fn workload_dir(share_dir: &Path, workload: &str) -> PathBuf {
    share_dir.join(ROOT_NAME).join(workload)
}

/// The layout of every file the workload left in its directory (its prepared files and
/// those it wrote), written back first so delayed allocations have their blocks. No
/// symbolic link below the share is followed.
pub fn workload_layout(
    share_dir: &Path,
    workload: &str,
    top: usize,
) -> Result<TreeLayout, LabError> {
    Ok(analyze_tree_beneath(
        share_dir,
        &[ROOT_NAME, workload],
        top,
        true,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn the_layout_follows_no_link_below_the_share() {
        let share = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("big"), vec![1u8; 65536]).unwrap();
        let w = workload_dir(share.path(), "W");
        std::fs::create_dir_all(&w).unwrap();
        std::fs::write(w.join("a"), vec![2u8; 4096]).unwrap();
        symlink(outside.path(), w.join("sub")).unwrap();
        symlink(outside.path().join("big"), w.join("link")).unwrap();
        let t = match workload_layout(share.path(), "W", 1) {
            Ok(t) => t,
            Err(e) if e.to_string().contains("does not report file extents") => {
                naslab_test_support::cannot_run(&e.to_string());
                return;
            }
            Err(e) => panic!("{e}"),
        };
        assert_eq!((t.totals.files, t.totals.size_bytes), (1, 4096), "{t:?}");
        assert_eq!(t.root, w);
        // The largest file is the real one, not the larger file the link names.
        let largest = t.largest.as_ref().unwrap();
        assert_eq!(
            (largest.path.as_path(), largest.size_bytes),
            (w.join("a").as_path(), 4096)
        );
        // The workload's directory, or naslab's, as a link: refused.
        std::fs::remove_dir_all(&w).unwrap();
        symlink(outside.path(), &w).unwrap();
        let e = workload_layout(share.path(), "W", 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot open"), "{e}");
        let share2 = tempfile::tempdir().unwrap();
        symlink(share.path().join("naslab"), share2.path().join("naslab")).unwrap();
        let e = workload_layout(share2.path(), "W", 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot open"), "{e}");
    }
}
