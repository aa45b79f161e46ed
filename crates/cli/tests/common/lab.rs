//! Labs for the binary's tests: whether one can run here, bringing one up with `naslab
//! lab up` and taking it down again however the test ends.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{root_or_skip, run_ok, text, tool_or_skip};

/// The binary, without a password from the caller's environment.
fn naslab() -> Command {
    let mut c = super::naslab();
    c.env_remove("NASLAB_SMB_PASSWORD");
    c
}

/// Whether a lab serving with `server` ("samba" or "nfs") can run here (root, the
/// server installed); says why not, and fails under NASLAB_REQUIRE_ROOT=1.
pub fn lab_ready(server: &str) -> bool {
    if !root_or_skip("the lab (loop devices, mounts and servers)") {
        return false;
    }
    let tool = if server == "samba" {
        "smbd"
    } else {
        "ganesha.nfsd"
    };
    tool_or_skip(tool).is_some()
}

/// Takes the lab down when dropped, so a failed assertion leaves no server behind.
pub struct Down(pub PathBuf, pub String);

impl Down {
    pub fn new(base: &Path, name: &str) -> Down {
        Down(base.to_path_buf(), name.to_string())
    }
}

impl Drop for Down {
    fn drop(&mut self) {
        let _ = naslab()
            .args(["lab", "down", "--name", &self.1, "--lab-dir"])
            .arg(&self.0)
            .output();
    }
}

/// Lets the lab's servers, which work as an unprivileged account, pass through `dir`.
pub fn open_for_lab(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).unwrap();
}

/// The bytes of every file under `dir`.
pub fn walk_sizes(dir: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let m = e.metadata().unwrap();
        n += if m.is_dir() {
            walk_sizes(&e.path())
        } else {
            m.len()
        };
    }
    n
}

/// A lab that is up: its URL, its password (Samba's; empty for NFS) and the directory
/// its server serves. Taken down when dropped.
pub struct Lab {
    pub url: String,
    pub password: String,
    pub share_dir: PathBuf,
    _down: Down,
}

/// Brings up a lab named `name` on a plain directory under `base` (which must outlive
/// it), serving with `server`.
pub fn up_on_dir(base: &Path, name: &str, server: &str) -> Lab {
    open_for_lab(base);
    let up = run_ok(
        naslab()
            .args(["lab", "up", "--fs", "dir", "--server", server])
            .args(["--name", name, "--lab-dir"])
            .arg(base),
    );
    let down = Down::new(base, name);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(base.join(name).join("state.json")).unwrap())
            .unwrap();
    Lab {
        url: text(&up.stdout).trim().to_string(),
        password: state["password"].as_str().unwrap_or_default().to_string(),
        share_dir: PathBuf::from(state["share_dir"].as_str().unwrap()),
        _down: down,
    }
}

/// The comparison.json of the one matrix run whose results went to `out`.
pub fn matrix_comparison(out: &Path) -> serde_json::Value {
    let dir = std::fs::read_dir(out.join("matrix"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    serde_json::from_str(&std::fs::read_to_string(dir.join("comparison.json")).unwrap()).unwrap()
}
