//! Where the server put a workload's files: extents counted with FIEMAP on the
//! server's own file system (naslab-layout, which counts as e2fsprogs' filefrag does).

use std::path::{Path, PathBuf};

use naslab_layout::{analyze_tree, TreeLayout};

use crate::error::LabError;

/// A workload's directory on the server's file system, under the lab's share.
pub fn workload_dir(share_dir: &Path, workload: &str) -> PathBuf {
    share_dir.join("naslab").join(workload)
}

/// The layout of every file the workload left in its directory (its prepared files and
/// those it wrote), written back first so delayed allocations have their blocks.
pub fn workload_layout(
    share_dir: &Path,
    workload: &str,
    top: usize,
) -> Result<TreeLayout, LabError> {
    Ok(analyze_tree(&workload_dir(share_dir, workload), top, true)?)
}
