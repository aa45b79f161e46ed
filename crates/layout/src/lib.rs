//! Where files land on disk: FIEMAP extents counted exactly as e2fsprogs' `filefrag`
//! counts them, the ideal count from each file system's longest extent, a layout score,
//! and the allocation lab that replays the write patterns behind Samba's fragmentation.
//!
//! Extents come from Linux's FIEMAP, or on Windows from `FSCTL_GET_RETRIEVAL_POINTERS`
//! mapped to the same extents; the lab's file systems come from Linux loop devices and
//! mounts (naslab-host), so on Windows only layouts and the portable part (what a file
//! system is called) are built.

#[cfg(target_os = "linux")]
pub mod analyze;
pub mod error;
pub mod extent;
#[cfg(target_os = "linux")]
pub mod fiemap;
pub mod file_layout;
pub mod filesystem;
#[cfg(target_os = "linux")]
pub mod limits;
#[cfg(target_os = "linux")]
pub mod matrix;
#[cfg(target_os = "linux")]
pub mod patterns;
pub mod retrieval;
#[cfg(windows)]
pub mod windows;

#[cfg(target_os = "linux")]
pub use analyze::{
    analyze_file, analyze_file_in, analyze_tree, analyze_tree_beneath, analyze_tree_in, walk,
    walk_dir, walk_dir_in, walk_in,
};
pub use error::LayoutError;
pub use extent::count_like_filefrag;
pub use file_layout::{FileLayout, Skipped, Totals, TreeLayout};
pub use filesystem::FsKind;
#[cfg(target_os = "linux")]
pub use matrix::{CaseInfo, Cell, FsMount, MatrixOptions, MatrixResult, ScratchFs, run_matrix};
#[cfg(target_os = "linux")]
pub use patterns::{Pattern, PatternOptions, PatternRun, run_pattern};
#[cfg(windows)]
pub use windows::{analyze_file, analyze_tree, layout_of_open, walk};
