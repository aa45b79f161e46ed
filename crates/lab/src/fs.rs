//! The lab's file system: a fresh image made with the file system's own mkfs, attached
//! to a loop device (direct I/O, so the host's page cache holds no second copy) and
//! mounted; or, for `dir`, a plain directory on the host's file system.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use naslab_layout::FsCase;

use crate::error::LabError;
use crate::process::{run, tool};

/// The file systems a lab can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FsKind {
    /// mkfs.ext4 defaults, delayed allocation on (the kernel's default).
    #[serde(rename = "ext4")]
    Ext4,
    /// The same, mounted `nodelalloc`: blocks are allocated as each write arrives, as
    /// ext3 and the NAS of the paper did.
    #[serde(rename = "ext4-nodelalloc")]
    Ext4NoDelalloc,
    /// mkfs.ext3 (block maps, no extents), mounted as ext3: the ext4 driver serves it
    /// and allocates each block as its write arrives, as the paper's ext3 NAS did.
    #[serde(rename = "ext3")]
    Ext3,
    #[serde(rename = "xfs")]
    Xfs,
    #[serde(rename = "btrfs")]
    Btrfs,
    /// A directory on the host's own file system (no image, no loop device).
    #[serde(rename = "dir")]
    Dir,
}

impl FsKind {
    /// Every kind, in the order the help lists them.
    pub const ALL: [FsKind; 6] = [
        FsKind::Ext4,
        FsKind::Ext4NoDelalloc,
        FsKind::Ext3,
        FsKind::Xfs,
        FsKind::Btrfs,
        FsKind::Dir,
    ];

    /// The name used on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            FsKind::Ext4 => "ext4",
            FsKind::Ext4NoDelalloc => "ext4-nodelalloc",
            FsKind::Ext3 => "ext3",
            FsKind::Xfs => "xfs",
            FsKind::Btrfs => "btrfs",
            FsKind::Dir => "dir",
        }
    }

    /// The mkfs program, its Debian package and its arguments before the image.
    fn mkfs(self) -> Option<(&'static str, &'static str, &'static [&'static str])> {
        self.case().map(FsCase::mkfs)
    }

    /// The type and options given to mount.
    fn mount(self) -> (&'static str, Option<&'static str>) {
        self.case().map_or(("ext4", None), FsCase::mount)
    }

    /// The same file system as the allocation lab makes it; `None` for `dir`.
    fn case(self) -> Option<FsCase> {
        match self {
            FsKind::Ext4 => Some(FsCase::Ext4),
            FsKind::Ext4NoDelalloc => Some(FsCase::Ext4NoDelalloc),
            FsKind::Ext3 => Some(FsCase::Ext3),
            FsKind::Xfs => Some(FsCase::Xfs),
            FsKind::Btrfs => Some(FsCase::Btrfs),
            FsKind::Dir => None,
        }
    }
}

impl std::fmt::Display for FsKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FsKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        FsKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!("unknown file system '{s}'; the choices are ext4, ext4-nodelalloc, ext3, xfs, btrfs and dir")
            })
    }
}

/// Makes the file system in `image` (a new sparse file of `size_bytes`).
pub fn make_image(fs: FsKind, image: &Path, size_bytes: u64) -> Result<String, LabError> {
    let Some((prog, package, args)) = fs.mkfs() else {
        return Ok(String::new());
    };
    let mkfs = tool(prog, package)?;
    let f = std::fs::File::create(image).map_err(LabError::io("create", image))?;
    f.set_len(size_bytes).map_err(LabError::io("size", image))?;
    drop(f);
    let mut argv: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    argv.push(image.as_os_str());
    run(&mkfs, &argv)?;
    Ok(format!("{prog} {}", args.join(" ")))
}

/// Attaches `image` to a free loop device with direct I/O; returns the device.
pub fn attach(image: &Path) -> Result<PathBuf, LabError> {
    let losetup = tool("losetup", "mount")?;
    let out = run(
        &losetup,
        &[
            "-f".as_ref(),
            "--show".as_ref(),
            "--direct-io=on".as_ref(),
            image.as_os_str(),
        ],
    )?;
    let dev = PathBuf::from(out.trim());
    if !out.trim().starts_with("/dev/loop") {
        return Err(LabError::Command {
            command: format!("losetup -f --show {}", image.display()),
            status: "unexpected output".into(),
            stderr: out,
        });
    }
    Ok(dev)
}

/// Whether loop device `dev` is still attached to `image` (so detaching it cannot hit
/// a device someone else attached since).
pub fn backs(dev: &Path, image: &Path) -> bool {
    let Some(name) = dev.file_name() else {
        return false;
    };
    let sys = Path::new("/sys/block").join(name).join("loop/backing_file");
    match std::fs::read_to_string(sys) {
        Ok(s) => {
            let want = std::fs::canonicalize(image).unwrap_or_else(|_| image.to_path_buf());
            Path::new(s.trim()) == want || Path::new(s.trim()) == image
        }
        Err(_) => false,
    }
}

/// Detaches loop device `dev` if it still backs `image`.
pub fn detach(dev: &Path, image: &Path) -> Result<(), LabError> {
    if !backs(dev, image) {
        return Ok(());
    }
    let losetup = tool("losetup", "mount")?;
    retry(|| run(&losetup, &["-d".as_ref(), dev.as_os_str()]).map(|_| ()))
}

/// Mounts `dev` on `at` as `fs` mounts, nosuid and nodev; returns the options the kernel reports.
pub fn mount(fs: FsKind, dev: &Path, at: &Path) -> Result<String, LabError> {
    let mount = tool("mount", "mount")?;
    let (fstype, options) = fs.mount();
    // No set-user-ID programs or device nodes from what clients write.
    let options = match options {
        Some(o) => format!("nosuid,nodev,{o}"),
        None => "nosuid,nodev".to_string(),
    };
    let argv: Vec<&std::ffi::OsStr> = vec![
        "-t".as_ref(),
        fstype.as_ref(),
        "-o".as_ref(),
        options.as_ref(),
    ];
    let mut argv = argv;
    argv.push(dev.as_os_str());
    argv.push(at.as_os_str());
    run(&mount, &argv)?;
    Ok(mount_options(at).unwrap_or_default())
}

/// The options of the file system mounted at `at`, if one is.
pub fn mount_options(at: &Path) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let want = at.to_string_lossy();
    text.lines().rev().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        (f.len() >= 4 && f[1] == want).then(|| f[3].to_string())
    })
}

/// Unmounts `at` if something is mounted there.
pub fn unmount(at: &Path) -> Result<(), LabError> {
    if mount_options(at).is_none() {
        return Ok(());
    }
    let umount = tool("umount", "mount")?;
    retry(|| run(&umount, &[at.as_os_str()]).map(|_| ()))
}

/// Tries a few times: the kernel may hold a device or mount for a moment after its
/// last user went away.
fn retry(mut f: impl FnMut() -> Result<(), LabError>) -> Result<(), LabError> {
    let mut last = Ok(());
    for attempt in 0..8u64 {
        last = f();
        if last.is_ok() {
            return last;
        }
        std::thread::sleep(std::time::Duration::from_millis(100 * (attempt + 1)));
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        for k in FsKind::ALL {
            assert_eq!(k.name().parse::<FsKind>().unwrap(), k);
        }
        assert!("ext2"
            .parse::<FsKind>()
            .unwrap_err()
            .contains("ext4-nodelalloc"));
    }
}
