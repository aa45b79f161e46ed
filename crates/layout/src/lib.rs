//! Where files land on disk: FIEMAP extents counted exactly as e2fsprogs' `filefrag`
//! counts them, the ideal count from each file system's longest extent, a layout score,
//! and the allocation lab that replays the write patterns behind Samba's fragmentation.

//!
//! Extents come from Linux's FIEMAP and the lab's file systems from Linux loop devices
//! and mounts: on other systems only the portable part is built (what a file system is
//! called, running tools, what a test that cannot run does).

#[cfg(target_os = "linux")]
pub mod analyze;
pub mod error;
#[cfg(target_os = "linux")]
pub mod fiemap;
pub mod filesystem;
#[cfg(target_os = "linux")]
pub mod limits;
#[cfg(target_os = "linux")]
pub mod loopdev;
#[cfg(target_os = "linux")]
pub mod matrix;
#[cfg(target_os = "linux")]
pub mod mounts;
#[cfg(target_os = "linux")]
pub mod patterns;
pub mod process;
pub mod requirements;

#[cfg(target_os = "linux")]
pub use analyze::{
    analyze_file, analyze_file_in, analyze_tree, analyze_tree_beneath, analyze_tree_in,
    count_like_filefrag, walk, walk_dir, walk_dir_in, walk_in, FileLayout, Skipped, Totals,
    TreeLayout,
};
pub use error::LayoutError;
pub use filesystem::FsKind;
#[cfg(target_os = "linux")]
pub use matrix::{run_matrix, CaseInfo, Cell, FsMount, MatrixOptions, MatrixResult, ScratchFs};
#[cfg(target_os = "linux")]
pub use mounts::{Mount, Mounts};
#[cfg(target_os = "linux")]
pub use patterns::{run_pattern, Pattern, PatternOptions, PatternRun};
