//! Running the system's tools: finding an executable (also in the sbin directories a
//! user's PATH may lack), running it to completion, and whether this process is root.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::HostError;

/// Finds an executable on PATH or in the sbin directories root's PATH usually has.
pub fn find_tool(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let extra = ["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"];
    std::env::split_paths(&path)
        .chain(extra.iter().map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Runs a command to completion; its stdout on success, an error with its stderr otherwise.
pub fn run(program: &Path, args: &[&std::ffi::OsStr]) -> Result<String, HostError> {
    let shown = std::iter::once(program.display().to_string())
        .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| HostError::Command {
            command: shown.clone(),
            status: "did not start".into(),
            stderr: e.to_string(),
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(HostError::Command {
            command: shown,
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// Finds `name`, or says which package to install.
pub fn tool(name: &'static str, package: &'static str) -> Result<PathBuf, HostError> {
    find_tool(name).ok_or(HostError::ToolMissing {
        tool: name,
        package,
    })
}

/// Whether this process runs as root.
#[cfg(unix)]
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Windows has no root: nothing that needs it (mounts, loop devices) is built there.
#[cfg(not(unix))]
pub fn is_root() -> bool {
    false
}
