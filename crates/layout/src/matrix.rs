//! The file-system matrix: every pattern on a freshly made ext4, ext4 without delayed
//! allocation, ext3, xfs and btrfs, each in a loop image under a temporary directory.
//! Every mount, loop device and image is a guard, so all are undone on any exit.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::LayoutError;
use crate::filesystem::FsKind;
use crate::patterns::{Pattern, PatternOptions, PatternRun, run_pattern};
use naslab_host::loopdev::{LoopDevice, Mount};
use naslab_host::process::{is_root, tool};

/// What the matrix runs.
#[derive(Debug, Clone)]
pub struct MatrixOptions {
    /// The file systems, in column order ([`FsKind::MADE`] only: `dir` is not made).
    pub cases: Vec<FsKind>,
    /// The patterns, in row order.
    pub patterns: Vec<Pattern>,
    /// The sizes every pattern writes with.
    pub pattern: PatternOptions,
    /// Each image's size; by default room for twice the file and then some.
    pub image_bytes: Option<u64>,
    /// Where the temporary directory of images and mount points goes ($TMPDIR by default).
    pub work_dir: Option<PathBuf>,
}

impl MatrixOptions {
    /// The image size used: the given one, or max(512 MiB, 2 x size + 256 MiB).
    pub fn image_bytes(&self) -> u64 {
        self.image_bytes
            .unwrap_or_else(|| (2 * self.pattern.size_bytes + (256 << 20)).max(512 << 20))
    }
}

/// How one file system was made and mounted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseInfo {
    pub fs: FsKind,
    /// The mkfs command line (device left out).
    pub mkfs: String,
    /// The mount's options as the kernel reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_options: Option<String>,
    /// ext only: whether the kernel delays allocation on this mount.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delalloc: Option<bool>,
    /// Why this file system could not be run at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One pattern on one file system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    pub fs: FsKind,
    pub pattern: Pattern,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<PatternRun>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The whole matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatrixResult {
    pub image_bytes: u64,
    pub options: PatternOptions,
    pub cases: Vec<CaseInfo>,
    pub cells: Vec<Cell>,
}

impl MatrixResult {
    /// The cell of a pattern on a file system.
    pub fn cell(&self, fs: FsKind, pattern: Pattern) -> Option<&Cell> {
        self.cells
            .iter()
            .find(|c| c.fs == fs && c.pattern == pattern)
    }
}

/// Runs every pattern on every file system, each on a fresh mkfs. Needs root. A file
/// system that cannot be made is reported in its `CaseInfo` and the others still run;
/// `progress` hears each step.
pub fn run_matrix(
    opts: &MatrixOptions,
    cancel: &AtomicBool,
    mut progress: impl FnMut(&str),
) -> Result<MatrixResult, LayoutError> {
    if !is_root() {
        return Err(LayoutError::NeedsRoot);
    }
    opts.pattern.validate()?;
    let image_bytes = opts.image_bytes();
    let mut result = MatrixResult {
        image_bytes,
        options: opts.pattern,
        cases: Vec::new(),
        cells: Vec::new(),
    };
    for &case in &opts.cases {
        if cancel.load(Ordering::Relaxed) {
            return Err(LayoutError::Interrupted);
        }
        let mut info = CaseInfo {
            fs: case,
            mkfs: case.mkfs_line().unwrap_or_default(),
            mount_options: None,
            delalloc: None,
            error: None,
        };
        match run_case(case, opts, image_bytes, cancel, &mut info, &mut progress) {
            Ok(cells) => result.cells.extend(cells),
            Err(LayoutError::Interrupted) => return Err(LayoutError::Interrupted),
            Err(e) => {
                progress(&format!("{case}: {e}"));
                info.error = Some(e.to_string());
            }
        }
        result.cases.push(info);
    }
    Ok(result)
}

/// A loop image in a temporary directory, ready to be formatted and mounted. Dropping
/// it detaches the device, then removes the directory; mounts made by [`ScratchFs::format`]
/// borrow it, so they are always unmounted first.
pub struct ScratchFs {
    // Field order is drop order: the device goes before the directory holding its image.
    device: LoopDevice,
    mnt: PathBuf,
    dir: tempfile::TempDir,
}

impl ScratchFs {
    /// Makes a sparse image of `image_bytes` under `work_dir` ($TMPDIR when `None`) and
    /// attaches it to a loop device. Needs root.
    pub fn new(image_bytes: u64, work_dir: Option<&Path>) -> Result<ScratchFs, LayoutError> {
        if !is_root() {
            return Err(LayoutError::NeedsRoot);
        }
        let builder = {
            let mut b = tempfile::Builder::new();
            b.prefix("naslab-matrix-");
            b
        };
        let dir = match work_dir {
            Some(d) => builder.tempdir_in(d),
            None => builder.tempdir(),
        }
        .map_err(LayoutError::io(
            "make a temporary directory in",
            work_dir
                .map(Path::to_path_buf)
                .unwrap_or_else(std::env::temp_dir),
        ))?;
        let image = dir.path().join("fs.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).map_err(LayoutError::io("create", &mnt))?;
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(image_bytes))
            .map_err(LayoutError::io("create the image", &image))?;
        let device = LoopDevice::attach(&image)?;
        Ok(ScratchFs { device, mnt, dir })
    }

    /// The loop device.
    pub fn device(&self) -> &Path {
        self.device.path()
    }

    /// The directory holding the image and the mount point.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Makes a fresh `case` file system on the device and mounts it; the guard unmounts.
    pub fn format(&self, case: FsKind) -> Result<FsMount<'_>, LayoutError> {
        let (_, (fstype, options)) = made(case)?;
        case.make_on(self.device.path())?;
        let mount = Mount::new(self.device.path(), &self.mnt, fstype, options)?;
        Ok(FsMount {
            mount,
            _fs: std::marker::PhantomData,
        })
    }
}

/// A file system mounted from a [`ScratchFs`]; it cannot outlive the image it is on.
pub struct FsMount<'a> {
    mount: Mount,
    _fs: std::marker::PhantomData<&'a ScratchFs>,
}

impl FsMount<'_> {
    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.mount.path()
    }

    /// The options the kernel reports for the mount.
    pub fn options(&self) -> Option<String> {
        self.mount.options()
    }
}

fn run_case(
    case: FsKind,
    opts: &MatrixOptions,
    image_bytes: u64,
    cancel: &AtomicBool,
    info: &mut CaseInfo,
    progress: &mut impl FnMut(&str),
) -> Result<Vec<Cell>, LayoutError> {
    let ((prog, package, _), _) = made(case)?;
    tool(prog, package)?;
    let scratch = ScratchFs::new(image_bytes, opts.work_dir.as_deref())?;
    let mut cells = Vec::new();
    for &pattern in &opts.patterns {
        if cancel.load(Ordering::Relaxed) {
            return Err(LayoutError::Interrupted);
        }
        progress(&format!("{case}: {pattern}"));
        let mount = scratch.format(case)?;
        if info.mount_options.is_none() {
            info.mount_options = mount.options();
            info.delalloc = ext_delalloc(scratch.device());
        }
        let outcome = run_pattern(mount.path(), pattern, &opts.pattern, cancel);
        drop(mount);
        match outcome {
            Ok(run) => cells.push(Cell {
                fs: case,
                pattern,
                run: Some(run),
                error: None,
            }),
            Err(LayoutError::Interrupted) => return Err(LayoutError::Interrupted),
            Err(e) => cells.push(Cell {
                fs: case,
                pattern,
                run: None,
                error: Some(e.to_string()),
            }),
        }
    }
    Ok(cells)
}

type Mkfs = (&'static str, &'static str, &'static [&'static str]);
type MountAs = (&'static str, Option<&'static str>);

/// How `case` is made and mounted; an error for a kind that is not made on an image.
fn made(case: FsKind) -> Result<(Mkfs, MountAs), LayoutError> {
    case.mkfs()
        .zip(case.mount())
        .ok_or_else(|| LayoutError::InvalidOption {
            flag: "--fs",
            message: format!(
                "{case} is not made on an image; the matrix makes {}",
                FsKind::names(&FsKind::MADE)
            ),
        })
}

/// Whether an ext mount on `device` delays allocation, from /proc/fs/ext4/NAME/options.
fn ext_delalloc(device: &Path) -> Option<bool> {
    let name = device.file_name()?;
    let text =
        std::fs::read_to_string(Path::new("/proc/fs/ext4").join(name).join("options")).ok()?;
    text.lines().find_map(|l| match l.trim() {
        "delalloc" => Some(true),
        "nodelalloc" => Some(false),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_refused_as_a_matrix_case() {
        let e = made(FsKind::Dir).unwrap_err().to_string();
        assert!(e.contains("dir is not made") && e.contains("btrfs"), "{e}");
        assert!(FsKind::MADE.into_iter().all(|k| made(k).is_ok()));
    }

    #[test]
    fn images_have_room_for_twice_the_file() {
        let mut o = MatrixOptions {
            cases: vec![],
            patterns: vec![],
            pattern: PatternOptions::default(),
            image_bytes: None,
            work_dir: None,
        };
        assert_eq!(o.image_bytes(), 512 << 20);
        o.pattern.size_bytes = 1 << 30;
        assert_eq!(o.image_bytes(), (2 << 30) + (256 << 20));
    }
}
