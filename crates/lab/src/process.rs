//! The lab's processes and commands: servers started in the foreground in their own
//! session with their output in the lab directory, each known by PID and start time so
//! a reused PID is never signalled, and stopped by that PID alone.

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::LabError;

/// A process the lab started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proc {
    /// What it is (smbd, ganesha.nfsd, rpcbind).
    pub name: String,
    pub pid: u32,
    /// Its start time in clock ticks since boot (/proc/PID/stat field 22): with the
    /// PID, it names this process and no later one that got the same PID.
    pub start_ticks: u64,
    /// Its standard output and error.
    pub log: PathBuf,
}

/// Finds an executable on PATH or in the sbin directories.
pub fn tool(name: &'static str, package: &'static str) -> Result<PathBuf, LabError> {
    Ok(naslab_host::process::tool(name, package)?)
}

/// Runs a command to completion; its stdout, or an error with its stderr.
pub fn run(program: &Path, args: &[&std::ffi::OsStr]) -> Result<String, LabError> {
    Ok(naslab_host::process::run(program, args)?)
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16, LabError> {
    let l = TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).map_err(|source| {
        LabError::Io {
            action: "find a free port on",
            path: "127.0.0.1".into(),
            source,
        }
    })?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|source| LabError::Io {
            action: "find a free port on",
            path: "127.0.0.1".into(),
            source,
        })
}

/// Whether something accepts TCP connections on 127.0.0.1:`port`.
pub fn listening(port: u16) -> bool {
    TcpStream::connect_timeout(
        &SocketAddrV4::new(Ipv4Addr::LOCALHOST, port).into(),
        Duration::from_millis(300),
    )
    .is_ok()
}

/// The start time of `pid` in clock ticks, and whether it is a zombie.
fn stat(pid: u32) -> Option<(u64, bool)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let zombie = fields.first() == Some(&"Z");
    // Field 22 overall is the 20th after the name and state.
    let start = fields.get(19)?.parse().ok()?;
    Some((start, zombie))
}

/// Starts `program` in its own session, its output appended to `log`.
pub fn spawn(
    name: &str,
    program: &Path,
    args: &[&std::ffi::OsStr],
    log: &Path,
) -> Result<Proc, LabError> {
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(LabError::io("open", log))?;
    let err = out.try_clone().map_err(LabError::io("open", log))?;
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .current_dir(log.parent().unwrap_or(Path::new("/")));
    // SAFETY: setsid is async-signal-safe; the server leaves naslab's session so a
    // terminal's hang-up or Ctrl-C does not reach it, and it outlives `lab up`.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|source| LabError::Io {
        action: "start",
        path: program.to_path_buf(),
        source,
    })?;
    let pid = child.id();
    // The child is reaped by `alive`/`stop` (or by init once naslab exits); dropping the
    // handle does not wait for it.
    drop(child);
    let start_ticks = stat(pid).map(|s| s.0).unwrap_or(0);
    Ok(Proc {
        name: name.to_string(),
        pid,
        start_ticks,
        log: log.to_path_buf(),
    })
}

/// Reaps `pid` if it is this process's exited child.
fn reap(pid: u32) -> Option<i32> {
    let mut status = 0;
    // SAFETY: waitpid with WNOHANG only inspects; a pid that is not our child fails.
    let r = unsafe { libc::waitpid(pid as i32, &mut status, libc::WNOHANG) };
    (r == pid as i32).then_some(status)
}

impl Proc {
    /// Whether this very process still runs.
    pub fn alive(&self) -> bool {
        match stat(self.pid) {
            Some((start, zombie)) if start == self.start_ticks => {
                if zombie {
                    reap(self.pid);
                    false
                } else {
                    true
                }
            }
            _ => false,
        }
    }

    /// The error for a server that exited while starting, with its log's last lines.
    fn exited(&self) -> LabError {
        LabError::Exited {
            server: leak_name(&self.name),
            pid: self.pid,
            status: log_tail(&self.log, 5),
            log: self.log.clone(),
        }
    }

    /// Waits until its log holds `line` (a server's own word that it has started), or
    /// fails if it exits first or takes longer than `timeout`.
    pub fn wait_logged(&self, line: &'static str, timeout: Duration) -> Result<(), LabError> {
        self.wait_logged_after(line, 0, timeout)
    }

    /// [`Proc::wait_logged`], looking only past the log's first `from` bytes: a server
    /// started again appends to the log of its earlier run, which already holds the line.
    pub fn wait_logged_after(
        &self,
        line: &'static str,
        from: u64,
        timeout: Duration,
    ) -> Result<(), LabError> {
        let start = Instant::now();
        loop {
            let logged = std::fs::read(&self.log).is_ok_and(|b| {
                let from = (from as usize).min(b.len());
                String::from_utf8_lossy(&b[from..]).contains(line)
            });
            if logged {
                return Ok(());
            }
            if !self.alive() {
                return Err(self.exited());
            }
            if start.elapsed() >= timeout {
                return Err(LabError::NotReady {
                    server: leak_name(&self.name),
                    line,
                    secs: timeout.as_secs(),
                    status: log_tail(&self.log, 5),
                    log: self.log.clone(),
                });
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until it accepts connections on `port`, or fails if it exits first.
    pub fn wait_listening(&self, port: u16, timeout: Duration) -> Result<(), LabError> {
        let start = Instant::now();
        while start.elapsed() < timeout {
            if listening(port) {
                return Ok(());
            }
            if !self.alive() {
                return Err(self.exited());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(LabError::NotListening {
            server: leak_name(&self.name),
            port,
            secs: timeout.as_secs(),
            log: self.log.clone(),
        })
    }

    /// Stops it: SIGTERM, then SIGKILL if it has not gone within `grace`. Only this
    /// process (checked by PID and start time) and the process group it leads (its own
    /// session, made at start: the server's workers) are signalled.
    pub fn stop(&self, grace: Duration) -> Result<(), LabError> {
        if !self.alive() {
            return Ok(());
        }
        // SAFETY: kill on a PID just checked to be this process, and on the process
        // group it leads since `spawn` made it a session leader.
        unsafe {
            libc::kill(-(self.pid as i32), libc::SIGTERM);
            libc::kill(self.pid as i32, libc::SIGTERM);
        }
        let start = Instant::now();
        while start.elapsed() < grace {
            if !self.alive() {
                // Workers that outlived their parent would keep the mount busy.
                // SAFETY: the group id is the leader's PID; kill fails harmlessly with
                // ESRCH when the group is empty.
                unsafe { libc::kill(-(self.pid as i32), libc::SIGKILL) };
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        if self.alive() {
            // SAFETY: as above.
            unsafe {
                libc::kill(-(self.pid as i32), libc::SIGKILL);
                libc::kill(self.pid as i32, libc::SIGKILL);
            }
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(5) {
                if !self.alive() {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            return Err(LabError::Leftovers(format!(
                "{} (pid {}) did not stop; stop it with: kill -9 {}",
                self.name, self.pid, self.pid
            )));
        }
        Ok(())
    }
}

/// The server names errors carry are one of a few fixed strings.
fn leak_name(name: &str) -> &'static str {
    match name {
        "smbd" => "smbd",
        "ganesha.nfsd" => "ganesha.nfsd",
        "rpcbind" => "rpcbind",
        "toxiproxy-server" => "toxiproxy-server",
        _ => "the server",
    }
}

/// The last `lines` non-empty lines of a server's log, joined with " | ", to say in an
/// error why it stopped (the log itself may be gone with a temporary lab by the time
/// somebody reads it).
fn log_tail(log: &Path, lines: usize) -> String {
    let text = match std::fs::read(log) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => return format!("its log is unreadable: {e}"),
    };
    let mut last: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .rev()
        .take(lines)
        .collect();
    if last.is_empty() {
        return "its log is empty".into();
    }
    last.reverse();
    format!("last log lines: {}", last.join(" | "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_started_process_is_known_by_pid_and_start_time_and_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("sleep.log");
        let p = spawn("sleep", Path::new("/bin/sleep"), &["30".as_ref()], &log).unwrap();
        assert!(p.alive());
        let other = Proc {
            start_ticks: p.start_ticks + 1,
            ..p.clone()
        };
        assert!(!other.alive(), "a different start time is another process");
        other.stop(Duration::from_secs(1)).unwrap();
        assert!(p.alive(), "stopping the other one left this one alone");
        p.stop(Duration::from_secs(5)).unwrap();
        assert!(!p.alive());
        let port = free_port().unwrap();
        assert!(port > 0 && !listening(port));
    }
}
