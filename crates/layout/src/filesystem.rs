//! The file systems naslab makes: how each is made (its mkfs) and mounted, for the
//! allocation matrix's loop images and the lab's served file system alike.

use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::error::LayoutError;
use naslab_host::process::{run, tool};

/// A file system as naslab makes and mounts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum FsKind {
    /// mkfs.ext4 defaults, mounted with delayed allocation (the kernel's default).
    #[serde(rename = "ext4")]
    Ext4,
    /// The same file system mounted `nodelalloc`: blocks are allocated as each write
    /// arrives, as ext3 and the NAS of the NASPT paper did.
    #[serde(rename = "ext4-nodelalloc")]
    Ext4NoDelalloc,
    /// mkfs.ext3 (block maps, no extents), mounted as ext3: the ext4 driver serves it
    /// and does not delay allocation for ext3, as the old ext3 driver did not.
    #[serde(rename = "ext3")]
    Ext3,
    /// mkfs.xfs defaults.
    #[serde(rename = "xfs")]
    Xfs,
    /// mkfs.btrfs defaults.
    #[serde(rename = "btrfs")]
    Btrfs,
    /// No file system of its own: a directory on the host's file system (the lab only;
    /// no image, no loop device).
    #[serde(rename = "dir")]
    Dir,
}

impl FsKind {
    /// Every kind, in the order help and tables list them.
    pub const ALL: [FsKind; 6] = [
        FsKind::Ext4,
        FsKind::Ext4NoDelalloc,
        FsKind::Ext3,
        FsKind::Xfs,
        FsKind::Btrfs,
        FsKind::Dir,
    ];

    /// The kinds made with mkfs on an image: all but [`FsKind::Dir`].
    pub const MADE: [FsKind; 5] = [
        FsKind::Ext4,
        FsKind::Ext4NoDelalloc,
        FsKind::Ext3,
        FsKind::Xfs,
        FsKind::Btrfs,
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

    /// The mkfs program, its Debian package, and its arguments before the device;
    /// `None` for [`FsKind::Dir`], which is not made.
    pub fn mkfs(self) -> Option<(&'static str, &'static str, &'static [&'static str])> {
        match self {
            FsKind::Ext4 | FsKind::Ext4NoDelalloc => {
                Some(("mkfs.ext4", "e2fsprogs", &["-q", "-F"]))
            }
            FsKind::Ext3 => Some(("mkfs.ext3", "e2fsprogs", &["-q", "-F"])),
            FsKind::Xfs => Some(("mkfs.xfs", "xfsprogs", &["-q", "-f"])),
            FsKind::Btrfs => Some(("mkfs.btrfs", "btrfs-progs", &["-q", "-f"])),
            FsKind::Dir => None,
        }
    }

    /// Makes this file system on `device` (an image file or a block device) with its
    /// mkfs; returns that command line without the device, or `None` for
    /// [`FsKind::Dir`], which is not made.
    pub fn make_on(self, device: &Path) -> Result<Option<String>, LayoutError> {
        let Some((prog, package, args)) = self.mkfs() else {
            return Ok(None);
        };
        let mkfs = tool(prog, package)?;
        let mut argv: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
        argv.push(device.as_os_str());
        run(&mkfs, &argv)?;
        Ok(self.mkfs_line())
    }

    /// The mkfs command line without the device (`mkfs.xfs -q -f`); `None` for
    /// [`FsKind::Dir`].
    pub fn mkfs_line(self) -> Option<String> {
        self.mkfs()
            .map(|(prog, _, args)| format!("{prog} {}", args.join(" ")))
    }

    /// The type and options given to mount; `None` for [`FsKind::Dir`], which is not
    /// mounted.
    pub fn mount(self) -> Option<(&'static str, Option<&'static str>)> {
        match self {
            FsKind::Ext4 => Some(("ext4", None)),
            FsKind::Ext4NoDelalloc => Some(("ext4", Some("nodelalloc"))),
            FsKind::Ext3 => Some(("ext3", None)),
            FsKind::Xfs => Some(("xfs", None)),
            FsKind::Btrfs => Some(("btrfs", None)),
            FsKind::Dir => None,
        }
    }

    /// The names of `kinds`, for "the choices are ..." messages.
    pub fn names(kinds: &[FsKind]) -> String {
        let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
        names.join(", ")
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
                format!(
                    "unknown file system '{s}'; the choices are {}",
                    FsKind::names(&FsKind::ALL)
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_serde_uses_them() {
        for k in FsKind::ALL {
            assert_eq!(k.name().parse::<FsKind>(), Ok(k));
            assert_eq!(
                serde_json::to_string(&k).unwrap(),
                format!("\"{}\"", k.name())
            );
        }
        assert!(
            "ntfs"
                .parse::<FsKind>()
                .unwrap_err()
                .contains("ext4-nodelalloc")
        );
    }

    #[test]
    fn every_made_kind_has_mkfs_and_mount_and_dir_has_neither() {
        for k in FsKind::MADE {
            assert!(k.mkfs().is_some() && k.mount().is_some(), "{k}");
        }
        assert!(FsKind::Dir.mkfs().is_none() && FsKind::Dir.mount().is_none());
        assert_eq!(FsKind::Xfs.mkfs_line().as_deref(), Some("mkfs.xfs -q -f"));
        assert_eq!(FsKind::Dir.mkfs_line(), None);
        assert!(!FsKind::MADE.contains(&FsKind::Dir));
    }
}
