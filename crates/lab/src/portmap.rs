//! The one rpcbind every NFS lab on this machine registers with. The portmapper's port
//! (111) is fixed, so labs share it: the first NFS lab that finds nothing listening
//! starts `rpcbind -f`, the others use it, and the last lab to go stops it. Who uses it
//! is kept in `/run/naslab-lab/rpcbind.json`, read and changed only under an `flock`
//! on `rpcbind.lock` beside it, so a lab coming up and one going down at the same
//! moment cannot stop rpcbind under the other's ganesha, nor leave it running with no
//! user. An rpcbind naslab did not start (the system's) is used and never stopped.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::LabError;
use crate::process::{Proc, listening, spawn, tool};
use crate::state::LabState;

/// The portmapper's port, which NFSv3 servers register with.
pub const RPCBIND_PORT: u16 = 111;
/// Where the shared rpcbind's users, lock and log are kept.
const DIR: &str = "/run/naslab-lab";

/// Who started rpcbind and who uses it.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Registry {
    /// The rpcbind naslab started, while it runs.
    rpcbind: Option<Proc>,
    /// The lab directories whose ganesha registers with it.
    users: Vec<PathBuf>,
}

/// The registry, held under its lock until dropped.
struct Held {
    _lock: File,
    path: PathBuf,
    registry: Registry,
}

impl Held {
    fn take() -> Result<Held, LabError> {
        let dir = Path::new(DIR);
        std::fs::create_dir_all(dir).map_err(LabError::io("create", dir))?;
        let lock_path = dir.join("rpcbind.lock");
        let lock = File::create(&lock_path).map_err(LabError::io("create", &lock_path))?;
        // SAFETY: flock on a descriptor we own; it is released when the file closes.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } < 0 {
            return Err(LabError::io("lock", &lock_path)(
                std::io::Error::last_os_error(),
            ));
        }
        let path = dir.join("rpcbind.json");
        let mut registry: Registry = match std::fs::read(&path) {
            Ok(b) => serde_json::from_slice(&b).unwrap_or_default(),
            Err(_) => Registry::default(),
        };
        // A lab whose state file is gone was taken down (or never came up): it uses
        // nothing. A lab that crashed keeps its state file and stays a user until its
        // `down`.
        registry
            .users
            .retain(|u| matches!(LabState::load(u), Ok(Some(_))));
        if registry.rpcbind.as_ref().is_some_and(|p| !p.alive()) {
            registry.rpcbind = None;
        }
        Ok(Held {
            _lock: lock,
            path,
            registry,
        })
    }

    fn save(&self) -> Result<(), LabError> {
        let text = serde_json::to_vec_pretty(&self.registry).unwrap_or_default();
        std::fs::write(&self.path, text).map_err(LabError::io("write", &self.path))
    }
}

/// The registry held locked while a lab's ganesha starts. ganesha clears the NFS and
/// MOUNT programs' entries in rpcbind and then sets its own; two starting at once can
/// both clear and then one fails to set ("Cannot register NFS V3 on TCP"). Holding this
/// until ganesha has initialized makes NFS labs start one at a time.
pub struct Starting {
    _held: Held,
}

/// Makes sure an rpcbind answers on port 111 for the lab in `lab_dir`, starting one if
/// nothing does, and counts the lab among its users. The returned guard keeps other NFS
/// labs from starting their ganesha until it is dropped.
pub fn acquire(lab_dir: &Path, start_timeout: Duration) -> Result<Starting, LabError> {
    let mut held = Held::take()?;
    if held.registry.rpcbind.is_none() && !listening(RPCBIND_PORT) {
        let rpcbind = tool("rpcbind", "rpcbind")?;
        // -f: stay in the foreground, so naslab owns it and stops it by PID.
        let p = spawn(
            "rpcbind",
            &rpcbind,
            &["-f".as_ref()],
            &Path::new(DIR).join("rpcbind.out"),
        )?;
        // Recorded before waiting, so a failure below still leaves it to be stopped.
        held.registry.rpcbind = Some(p.clone());
        held.save()?;
        if let Err(e) = p.wait_listening(RPCBIND_PORT, start_timeout) {
            let _ = p.stop(Duration::from_secs(5));
            held.registry.rpcbind = None;
            held.save()?;
            return Err(e);
        }
    }
    if held.registry.rpcbind.is_some() && !held.registry.users.iter().any(|u| u == lab_dir) {
        held.registry.users.push(lab_dir.to_path_buf());
    }
    held.save()?;
    Ok(Starting { _held: held })
}

/// The lab in `lab_dir` no longer uses rpcbind; the last user stops the one naslab
/// started. Whether it is stopped or left for other labs is told on stderr.
pub fn release(lab_dir: &Path) -> Result<(), LabError> {
    let mut held = Held::take()?;
    held.registry.users.retain(|u| u != lab_dir);
    let Some(p) = held.registry.rpcbind.clone() else {
        return held.save();
    };
    if held.registry.users.is_empty() {
        p.stop(Duration::from_secs(10))?;
        held.registry.rpcbind = None;
    } else {
        eprintln!(
            "note: rpcbind (pid {}) is left running for {} other nfs lab(s); the last one stops it",
            p.pid,
            held.registry.users.len()
        );
    }
    held.save()
}

/// The rpcbind naslab started, if one runs, and the lab directories that use it.
pub fn registered() -> Result<(Option<Proc>, Vec<PathBuf>), LabError> {
    let held = Held::take()?;
    Ok((held.registry.rpcbind.clone(), held.registry.users.clone()))
}
