//! Loop devices and mounts that undo themselves: each guard detaches or unmounts exactly
//! what it made when dropped, on success, error, panic or interruption alike.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::LayoutError;
use crate::process::{run, tool};

/// A loop device attached to an image file; detached (by its exact path) when dropped.
#[derive(Debug)]
pub struct LoopDevice {
    device: PathBuf,
    losetup: PathBuf,
}

impl LoopDevice {
    /// Attaches `image` to the first free loop device (`losetup -f --show`).
    pub fn attach(image: &Path) -> Result<LoopDevice, LayoutError> {
        let losetup = tool("losetup", "mount")?;
        let out = run(
            &losetup,
            &["-f".as_ref(), "--show".as_ref(), image.as_os_str()],
        )?;
        let device = PathBuf::from(out.trim());
        if !device.starts_with("/dev/") {
            return Err(LayoutError::Command {
                command: format!("losetup -f --show {}", image.display()),
                status: "unexpected output".into(),
                stderr: out,
            });
        }
        Ok(LoopDevice { device, losetup })
    }

    /// The device node, e.g. /dev/loop3.
    pub fn path(&self) -> &Path {
        &self.device
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        // The kernel may still hold the device for a moment after an unmount.
        for attempt in 0..10 {
            if run(&self.losetup, &["-d".as_ref(), self.device.as_os_str()]).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100 * (attempt + 1)));
        }
        eprintln!(
            "warning: could not detach {}; detach it with: losetup -d {}",
            self.device.display(),
            self.device.display()
        );
    }
}

/// A mounted file system; unmounted (by its exact mount point) when dropped.
#[derive(Debug)]
pub struct Mount {
    target: PathBuf,
    umount: PathBuf,
}

impl Mount {
    /// Mounts `source` on `target` as `fstype`, with `options` when given.
    pub fn new(
        source: &Path,
        target: &Path,
        fstype: &str,
        options: Option<&str>,
    ) -> Result<Mount, LayoutError> {
        let mount = tool("mount", "mount")?;
        let umount = tool("umount", "mount")?;
        let mut args: Vec<&std::ffi::OsStr> = vec!["-t".as_ref(), fstype.as_ref()];
        if let Some(o) = options {
            args.push("-o".as_ref());
            args.push(o.as_ref());
        }
        args.push(source.as_os_str());
        args.push(target.as_os_str());
        run(&mount, &args)?;
        Ok(Mount {
            target: target.to_path_buf(),
            umount,
        })
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.target
    }

    /// The options the kernel reports for this mount (from /proc/self/mounts).
    pub fn options(&self) -> Option<String> {
        let text = std::fs::read_to_string("/proc/self/mounts").ok()?;
        let want = self.target.to_string_lossy();
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (f.len() >= 4 && f[1] == want).then(|| f[3].to_string())
            })
            .next_back()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        for attempt in 0..10 {
            if run(&self.umount, &[self.target.as_os_str()]).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100 * (attempt + 1)));
        }
        eprintln!(
            "warning: could not unmount {}; unmount it with: umount {}",
            self.target.display(),
            self.target.display()
        );
    }
}
