//! Where files land on disk: FIEMAP extents counted exactly as e2fsprogs' `filefrag`
//! counts them, the ideal count from each file system's longest extent, a layout score,
//! and the allocation lab that replays the write patterns behind Samba's fragmentation.

pub mod analyze;
pub mod error;
pub mod fiemap;
pub mod filesystem;
pub mod limits;
pub mod loopdev;
pub mod matrix;
pub mod mounts;
pub mod patterns;
pub mod process;
pub mod requirements;

pub use analyze::{
    analyze_file, analyze_file_in, analyze_tree, analyze_tree_beneath, analyze_tree_in,
    count_like_filefrag, walk, walk_dir, walk_dir_in, walk_in, FileLayout, Skipped, Totals,
    TreeLayout,
};
pub use error::LayoutError;
pub use filesystem::FsKind;
pub use matrix::{run_matrix, CaseInfo, Cell, FsMount, MatrixOptions, MatrixResult, ScratchFs};
pub use mounts::{Mount, Mounts};
pub use patterns::{run_pattern, Pattern, PatternOptions, PatternRun};
