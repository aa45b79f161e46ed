//! The mount table, from /proc/self/mountinfo: which mount holds a path (its type and
//! source, for the results' environment) and which type a device is mounted as (for a
//! file's layout). Read once and asked many times.

use std::path::{Path, PathBuf};

/// One line of the mount table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The mounted device (`makedev(major, minor)`).
    pub dev: u64,
    /// Where it is mounted.
    pub point: PathBuf,
    /// The file system's type (ext4, xfs, tmpfs, fuse.sshfs, ...).
    pub fs_type: String,
    /// What is mounted: a device, a share, or a name such as `tmpfs`.
    pub source: String,
}

/// The mount table, in its order. A snapshot: read it again after mounting anything.
#[derive(Debug, Clone, Default)]
pub struct Mounts {
    mounts: Vec<Mount>,
}

impl Mounts {
    /// Reads /proc/self/mountinfo (an empty table when it cannot be read).
    pub fn read() -> Mounts {
        std::fs::read_to_string("/proc/self/mountinfo")
            .map(|t| Mounts::parse(&t))
            .unwrap_or_default()
    }

    /// Parses mountinfo text, a mount per line: "ID PARENT MAJOR:MINOR ROOT POINT
    /// OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS". Lines not of that shape are
    /// left out.
    pub fn parse(text: &str) -> Mounts {
        let mounts = text
            .lines()
            .filter_map(|line| {
                let (head, tail) = line.split_once(" - ")?;
                let mut head = head.split(' ');
                let dev = parse_dev(head.nth(2)?)?;
                let point = unescape(head.nth(1)?);
                let mut tail = tail.split(' ');
                let fs_type = unescape(tail.next()?);
                let source = unescape(tail.next().unwrap_or(""));
                Some(Mount {
                    dev,
                    point: PathBuf::from(point),
                    fs_type,
                    source,
                })
            })
            .collect();
        Mounts { mounts }
    }

    /// The type of the mount of device `dev` (the last matching line, as the latest
    /// mount hides earlier ones).
    pub fn type_of(&self, dev: u64) -> Option<&str> {
        self.mounts
            .iter()
            .rev()
            .find(|m| m.dev == dev)
            .map(|m| m.fs_type.as_str())
    }

    /// The mount holding `path`, an absolute path with no symbolic links in it
    /// (canonicalize it first): the longest mount point it lies under, the latest of
    /// equally long ones, as the latest mount hides earlier ones.
    pub fn holding(&self, path: &Path) -> Option<&Mount> {
        self.mounts
            .iter()
            .filter(|m| path.starts_with(&m.point))
            .max_by_key(|m| m.point.as_os_str().len())
    }
}

fn parse_dev(s: &str) -> Option<u64> {
    let (major, minor) = s.split_once(':')?;
    Some(libc::makedev(major.parse().ok()?, minor.parse().ok()?))
}

/// mountinfo writes space, tab, newline and backslash as octal escapes.
fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    s.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
30 22 0:26 / /tmp rw shared:5 master:2 - tmpfs tmpfs rw
31 22 7:3 / /mnt/a rw - ext3 /dev/loop3 rw
32 22 7:3 / /mnt/a rw - xfs /dev/loop3 rw
33 22 7:4 / /mnt/with\\040space rw - btrfs /dev/loop4 rw
34 22 0:50 / /mnt/ab rw - fuse.sshfs me@host:/x rw
garbage line
";

    #[test]
    fn mount_types_are_found_by_device_the_latest_mount_winning() {
        let m = Mounts::parse(TABLE);
        assert_eq!(m.type_of(libc::makedev(254, 0)), Some("ext4"));
        assert_eq!(m.type_of(libc::makedev(0, 26)), Some("tmpfs"));
        assert_eq!(m.type_of(libc::makedev(7, 3)), Some("xfs"));
        assert_eq!(m.type_of(libc::makedev(8, 1)), None);
    }

    #[test]
    fn a_path_is_held_by_the_longest_mount_point_it_lies_under() {
        let m = Mounts::parse(TABLE);
        let held = |p: &str| {
            m.holding(Path::new(p))
                .map(|m| (m.fs_type.as_str(), m.source.as_str()))
        };
        assert_eq!(held("/"), Some(("ext4", "/dev/vda")));
        assert_eq!(held("/home/x"), Some(("ext4", "/dev/vda")));
        assert_eq!(held("/tmp/a/b"), Some(("tmpfs", "tmpfs")));
        // the latest of two mounts on one point
        assert_eq!(held("/mnt/a/f"), Some(("xfs", "/dev/loop3")));
        // whole components only: /mnt/abc is not under /mnt/ab
        assert_eq!(held("/mnt/abc"), Some(("ext4", "/dev/vda")));
        assert_eq!(held("/mnt/ab/f"), Some(("fuse.sshfs", "me@host:/x")));
        assert_eq!(held("/mnt/with space/f"), Some(("btrfs", "/dev/loop4")));
        assert_eq!(Mounts::parse("garbage").holding(Path::new("/")), None);
    }
}
