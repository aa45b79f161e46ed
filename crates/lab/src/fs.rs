//! The lab's file system: a fresh image made with the file system's own mkfs, attached
//! to a loop device (direct I/O, so the host's page cache holds no second copy) and
//! mounted; or, for `dir`, a plain directory on the host's file system.

use std::path::{Path, PathBuf};

pub use naslab_host::loopdev::mount_options;
pub use naslab_layout::FsKind;

use crate::error::LabError;
use crate::process::{run, tool};

/// Makes the file system in `image` (a new sparse file of `size_bytes`).
pub fn make_image(fs: FsKind, image: &Path, size_bytes: u64) -> Result<String, LabError> {
    let Some((prog, package, _)) = fs.mkfs() else {
        return Ok(String::new());
    };
    // Said before an image is made for nothing.
    tool(prog, package)?;
    let f = std::fs::File::create(image).map_err(LabError::io("create", image))?;
    f.set_len(size_bytes).map_err(LabError::io("size", image))?;
    drop(f);
    Ok(fs.make_on(image)?.unwrap_or_default())
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
    let Some((fstype, options)) = fs.mount() else {
        return Err(LabError::Invalid {
            what: "--fs",
            value: fs.to_string(),
            why: "a directory on the host is served as it is, not mounted".into(),
        });
    };
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
