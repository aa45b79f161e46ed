//! The lab's record of itself: `<base>/<name>/state.json`, rewritten after every step
//! of `up`, so `down` knows exactly what exists even if naslab died half-way.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::LabError;
use crate::fs::FsKind;
use crate::process::Proc;
use crate::server::ServerKind;

/// Where labs live unless told otherwise.
pub const DEFAULT_BASE: &str = "/var/tmp/naslab-lab";

/// Everything one lab made and started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    pub name: String,
    pub fs: FsKind,
    pub server: ServerKind,
    /// The server options given with --opt, as written into its configuration.
    #[serde(default)]
    pub opts: Vec<String>,
    /// The image file, when the file system has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<PathBuf>,
    pub image_bytes: u64,
    /// The mkfs command line.
    #[serde(default)]
    pub mkfs: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loop_device: Option<PathBuf>,
    /// Where the image is mounted (set once the mount succeeded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount: Option<PathBuf>,
    #[serde(default)]
    pub mount_options: String,
    /// The directory the server shares: naslab's files land below it.
    pub share_dir: PathBuf,
    /// Processes started, in order.
    #[serde(default)]
    pub processes: Vec<Proc>,
    /// The target URL to give naslab (set once the server listens).
    #[serde(default)]
    pub url: String,
    /// The server's ports on 127.0.0.1.
    #[serde(default)]
    pub ports: Vec<u16>,
    /// The account an SMB client signs in as (the user the URL names).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user: String,
    /// Its password, generated for this lab (which is why the state file is readable
    /// by root alone).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub password: String,
    /// The emulated link between clients and the server, when `up` was given one: the
    /// URL above leads through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<crate::link::LabLink>,
    /// Each client's own path to the server, in rank order, when `up` was given
    /// `--client-links`: the URL client *r* of a multi-client job is to use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_links: Vec<crate::link::ClientPath>,
}

/// A lab's directory under `base`.
pub fn lab_dir(base: &Path, name: &str) -> Result<PathBuf, LabError> {
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(LabError::BadName(name.to_string()));
    }
    Ok(base.join(name))
}

/// The state file of a lab directory.
pub fn state_path(dir: &Path) -> PathBuf {
    dir.join("state.json")
}

impl LabState {
    /// Writes the state (to a temporary file, then renamed, so a crash leaves the old
    /// or the new one, never half).
    pub fn save(&self, dir: &Path) -> Result<(), LabError> {
        let path = state_path(dir);
        let tmp = dir.join("state.json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(|e| LabError::State {
            path: path.clone(),
            why: e.to_string(),
        })?;
        {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            let _ = std::fs::remove_file(&tmp);
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&tmp)
                .map_err(LabError::io("write", &tmp))?;
            f.write_all((text + "\n").as_bytes())
                .map_err(LabError::io("write", &tmp))?;
        }
        std::fs::rename(&tmp, &path).map_err(LabError::io("write", &path))
    }

    /// Reads a lab's state; `None` when the lab directory holds none.
    pub fn load(dir: &Path) -> Result<Option<LabState>, LabError> {
        let path = state_path(dir);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(LabError::io("read", &path)(e)),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| LabError::State {
                path,
                why: e.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_names_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(LabState::load(dir.path()).unwrap(), None);
        let s = LabState {
            name: "t".into(),
            fs: FsKind::Ext4NoDelalloc,
            server: ServerKind::Samba,
            opts: vec!["strict allocate = yes".into()],
            image: Some(dir.path().join("image")),
            image_bytes: 1 << 30,
            mkfs: "mkfs.ext4 -q -F".into(),
            loop_device: Some("/dev/loop9".into()),
            mount: None,
            mount_options: String::new(),
            share_dir: dir.path().join("mnt/share"),
            processes: vec![],
            url: "smb://127.0.0.1:1/naslab".into(),
            ports: vec![1],
            user: "naslab-lab".into(),
            password: "pw".into(),
            link: None,
            client_links: vec![],
        };
        s.save(dir.path()).unwrap();
        assert_eq!(LabState::load(dir.path()).unwrap(), Some(s));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(state_path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "the password is for root's eyes only");
        std::fs::write(state_path(dir.path()), "{").unwrap();
        assert!(LabState::load(dir.path()).is_err());
        assert!(lab_dir(Path::new("/b"), "a/b").is_err());
        assert!(lab_dir(Path::new("/b"), "..").is_err());
        assert_eq!(
            lab_dir(Path::new("/b"), "m-1").unwrap(),
            Path::new("/b/m-1")
        );
    }
}
