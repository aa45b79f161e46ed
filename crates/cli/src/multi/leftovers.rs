//! The private directories of clients that were killed outright: a client keeps its
//! spools and op records in `$TMPDIR/naslab-client-<rank>-<pid>-<host>-*` until it has
//! sent them, and one killed with SIGKILL cannot remove its own. The next job's client on
//! the same host removes those whose process is gone (a directory another host made, on
//! a shared `$TMPDIR`, is never touched).

use std::path::Path;

const PREFIX: &str = "naslab-client-";

/// The start of this client's private directory's name: rank, process id and host.
pub fn private_dir_prefix(rank: u32) -> String {
    format!("{PREFIX}{rank}-{}-{}-", std::process::id(), this_host())
}

/// This host's name, with anything but letters and digits as `_` (so it holds no `-`).
fn this_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The process id in a private directory's name, if it is one made on `host`.
fn pid_of(name: &str, host: &str) -> Option<u32> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let _rank: u32 = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    if parts.next()? != host {
        return None;
    }
    // The random part tempfile adds.
    parts.next()?;
    Some(pid)
}

/// Whether process `pid` exists on this host.
fn alive(pid: u32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

/// Removes every client's private directory in `tmp` whose process is gone (a client
/// killed outright). Directories of running processes, and anything else, are left.
pub fn remove_dead_clients_dirs(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    let host = this_host();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| pid_of(n, &host)) else {
            continue;
        };
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && !alive(pid) {
            // Another client on this host may be removing it at the same moment.
            match std::fs::remove_dir_all(e.path()) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => eprintln!(
                    "warning: cannot remove '{}', left by a client killed earlier: {err}",
                    e.path().display()
                ),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dead_clients_directories_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let host = this_host();
        // A pid past the kernel's limit (pid_max is at most 2^22) never runs.
        let dead = tmp
            .path()
            .join(format!("naslab-client-2-4999999-{host}-abc123"));
        let elsewhere = tmp.path().join("naslab-client-2-4999999-otherhost-abc123");
        let mine = tmp.path().join(format!("{}xyz", private_dir_prefix(0)));
        let other = tmp.path().join("naslab-client-notes");
        for d in [&dead, &elsewhere, &mine, &other] {
            std::fs::create_dir(d).unwrap();
            std::fs::write(d.join("spool"), b"x").unwrap();
        }
        remove_dead_clients_dirs(tmp.path());
        assert!(!dead.exists());
        assert!(elsewhere.exists());
        assert!(mine.exists());
        assert!(other.exists());
        assert_eq!(pid_of("naslab-client-3-77-h-q1w2", "h"), Some(77));
        assert_eq!(pid_of("naslab-client-3-q1w2", "h"), None);
    }
}
