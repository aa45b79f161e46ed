//! Loop devices and mounts that undo themselves: each guard detaches or unmounts exactly
//! what it made when dropped, on success, error, panic or interruption alike.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::HostError;
use crate::process::{run, tool};

/// A loop device attached to an image file; detached (by its exact path) when dropped.
#[derive(Debug)]
pub struct LoopDevice {
    device: PathBuf,
    losetup: PathBuf,
}

impl LoopDevice {
    /// Attaches `image` to the first free loop device (`losetup -f --show`).
    pub fn attach(image: &Path) -> Result<LoopDevice, HostError> {
        let losetup = tool("losetup", "mount")?;
        let out = run(
            &losetup,
            &["-f".as_ref(), "--show".as_ref(), image.as_os_str()],
        )?;
        let device = PathBuf::from(out.trim());
        if !device.starts_with("/dev/") {
            return Err(HostError::Command {
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

/// Runs `program args` until it succeeds, waiting a little longer before each of 10
/// tries (the kernel may still hold a device or mount for a moment after its last
/// user); if it never does, tells the user to `verb` `target` by hand with `command`.
fn undo(program: &Path, args: &[&std::ffi::OsStr], verb: &str, target: &Path, command: &str) {
    for attempt in 0..10 {
        if run(program, args).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100 * (attempt + 1)));
    }
    let target = target.display();
    eprintln!("warning: could not {verb} {target}; {verb} it with: {command} {target}");
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        undo(
            &self.losetup,
            &["-d".as_ref(), self.device.as_os_str()],
            "detach",
            &self.device,
            "losetup -d",
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
    ) -> Result<Mount, HostError> {
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
        mount_options(&self.target)
    }
}

/// The options of the file system mounted at `at` as the kernel reports them (from
/// /proc/self/mounts; the latest mount there wins), or `None` when nothing is mounted
/// there.
pub fn mount_options(at: &Path) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/mounts").ok()?;
    options_in(&text, at)
}

/// [`mount_options`] from the text of a mounts table.
fn options_in(table: &str, at: &Path) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let want = at.as_os_str().as_bytes();
    table.lines().rev().find_map(|l| {
        let f: Vec<&str> = l.split(' ').collect();
        (f.len() >= 4 && unescape(f[1]) == want).then(|| f[3].to_string())
    })
}

/// A field of the mounts table as bytes: the kernel writes a space, tab, newline or
/// backslash in a path as three octal digits after a backslash (`\040` for a space).
fn unescape(field: &str) -> Vec<u8> {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| d[0] <= b'3' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) if b[i] == b'\\' => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    out
}

impl Drop for Mount {
    fn drop(&mut self) {
        undo(
            &self.umount,
            &[self.target.as_os_str()],
            "unmount",
            &self.target,
            "umount",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_points_with_spaces_are_found_and_the_latest_mount_wins() {
        let table = "/dev/vda / ext4 rw,relatime 0 0\n\
                     /dev/loop3 /tmp/my\\040lab/mnt ext4 rw,nodelalloc 0 0\n\
                     /dev/loop4 /tmp/a\\134b xfs ro 0 0\n\
                     tmpfs /tmp/my\\040lab/mnt tmpfs rw,size=4k 0 0\n";
        let at = |p: &str| options_in(table, Path::new(p));
        assert_eq!(at("/tmp/my lab/mnt").as_deref(), Some("rw,size=4k"));
        assert_eq!(at("/tmp/a\\b").as_deref(), Some("ro"));
        assert_eq!(at("/").as_deref(), Some("rw,relatime"));
        assert_eq!(at("/tmp/my\\040lab/mnt"), None);
        assert_eq!(at("/tmp/my"), None);
    }

    #[test]
    fn a_mount_under_a_directory_with_a_space_reports_its_options_and_is_undone() {
        if !naslab_test_support::root_or_skip("mounting a tmpfs") {
            return;
        }
        let base = tempfile::tempdir().unwrap();
        let at = base.path().join("a lab");
        std::fs::create_dir(&at).unwrap();
        let m = Mount::new(Path::new("tmpfs"), &at, "tmpfs", Some("size=64k")).unwrap();
        let options = m.options().unwrap();
        assert!(options.contains("size=64k"), "{options}");
        drop(m);
        assert_eq!(mount_options(&at), None);
    }
}
