//! Faults on the path between a lab's clients and its server, injected while a run goes
//! on and undone by themselves: the link cut for a while (every connection closed, new
//! ones refused), every connection reset, or the server stopped and started again on
//! the same ports and share. Each step is stamped with the wall clock, so what a run
//! saw can be set against what was done.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::LabError;
use crate::process::Proc;
use crate::state::{LabState, lab_dir};

/// How long a stopped server may take to go before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// What to do to the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Disable every proxy of the lab's link for this long, then enable them again:
    /// each connection through the link is closed at once and new ones are refused
    /// until the link is back.
    Cut(Duration),
    /// Disable and at once enable every proxy: every connection is closed, new ones are
    /// accepted.
    Reset,
    /// Hold everything sent through the link, both ways, for this long, then let it
    /// through: connections stay open (new ones are accepted and held too), and a
    /// client learns of the fault only by its own timeouts.
    BlackHole(Duration),
    /// Stop the server (by its PID) and start it again on the same ports, share and
    /// configuration.
    RestartServer,
}

/// One step of a fault, when it was done.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultStep {
    /// Nanoseconds since the Unix epoch (UTC).
    pub at_unix_ns: u64,
    pub what: String,
}

/// What a fault did, step by step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultReport {
    pub steps: Vec<FaultStep>,
    /// From the moment the path broke to the moment it was whole again (the cut or
    /// the restart), ns.
    pub broken_ns: u64,
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos().try_into().unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// A Unix time in ns as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn utc_text(unix_ns: u64) -> String {
    let secs = (unix_ns / 1_000_000_000) as i64;
    let ms = (unix_ns / 1_000_000) % 1000;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (the proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Injects `fault` into the lab `name` under `base` and returns once the path is whole
/// again, with what was done and when.
pub fn inject(base: &Path, name: &str, fault: Fault) -> Result<FaultReport, LabError> {
    if !naslab_host::process::is_root() {
        return Err(LabError::NotRoot);
    }
    let dir = lab_dir(base, name)?;
    let mut state = LabState::load(&dir)?.ok_or_else(|| LabError::NotUp {
        name: name.to_string(),
        dir: dir.clone(),
    })?;
    let mut steps = Vec::new();
    let mut step = |what: String| {
        let at = now_ns();
        steps.push(FaultStep {
            at_unix_ns: at,
            what,
        });
        at
    };
    let no_link = || {
        LabError::Invalid {
        what: "fault",
        value: name.to_string(),
        why: "the lab has no link to cut: bring it up with `--link rtt=0` (a proxy that adds no delay), or use --restart-server".into(),
    }
    };
    // Every proxy of the lab's link and of each client's own: they share one emulator.
    let links: Vec<&crate::link::LabLink> = state
        .link
        .iter()
        .chain(state.client_links.iter().filter_map(|c| c.link.as_ref()))
        .collect();
    let names: Vec<&str> = links
        .iter()
        .flat_map(|l| l.proxies.iter().map(|p| p.name.as_str()))
        .collect();
    let api_port = links.first().map(|l| l.api_port);
    let (broke, whole) = match fault {
        Fault::BlackHole(d) => {
            let api_port = api_port.ok_or_else(no_link)?;
            for (i, n) in names.iter().enumerate() {
                if let Err(e) = crate::toxiproxy::black_hole(api_port, n) {
                    for done in &names[..i] {
                        let _ = crate::toxiproxy::mend_black_hole(api_port, done);
                    }
                    return Err(e);
                }
            }
            let broke = step(format!(
                "link black-holed: proxies {} hold what they are sent (connections kept open)",
                names.join(", ")
            ));
            std::thread::sleep(d);
            let mut failed = None;
            for n in &names {
                if let Err(e) = crate::toxiproxy::mend_black_hole(api_port, n) {
                    failed.get_or_insert(e);
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
            let whole = step(format!(
                "link restored: proxies {} let what they held through",
                names.join(", ")
            ));
            (broke, whole)
        }
        Fault::Cut(_) | Fault::Reset => {
            let api_port = api_port.ok_or_else(no_link)?;
            for (i, n) in names.iter().enumerate() {
                if let Err(e) = crate::toxiproxy::set_enabled(api_port, n, false) {
                    // The proxies already cut are enabled again: a failed fault leaves
                    // the lab's link whole.
                    for done in &names[..i] {
                        let _ = crate::toxiproxy::set_enabled(api_port, done, true);
                    }
                    return Err(e);
                }
            }
            let broke = step(format!(
                "link cut: proxies {} disabled (their connections closed, new ones refused)",
                names.join(", ")
            ));
            if let Fault::Cut(d) = fault {
                std::thread::sleep(d);
            }
            // Every proxy is enabled again even when one fails, then the failure told.
            let mut failed = None;
            for n in &names {
                if let Err(e) = crate::toxiproxy::set_enabled(api_port, n, true) {
                    failed.get_or_insert(e);
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
            let whole = step(format!(
                "link restored: proxies {} enabled",
                names.join(", ")
            ));
            (broke, whole)
        }
        Fault::RestartServer => {
            let server_name = match state.server {
                crate::ServerKind::Samba => "smbd",
                crate::ServerKind::Nfs => "ganesha.nfsd",
            };
            let i = state
                .processes
                .iter()
                .position(|p| p.name == server_name)
                .ok_or_else(|| {
                    LabError::Leftovers(format!(
                        "the lab's state records no {server_name} process; take it down and up again"
                    ))
                })?;
            let old: Proc = state.processes[i].clone();
            let broke = step(format!("stopping {server_name} (pid {})", old.pid));
            old.stop(STOP_GRACE)?;
            step(format!("{server_name} (pid {}) stopped", old.pid));
            let new = crate::server::start_again(&dir, state.server, &state.ports, &old)?;
            state.processes[i] = new.clone();
            state.save(&dir)?;
            let whole = step(format!(
                "{server_name} started again (pid {}) on port(s) {}",
                new.pid,
                state
                    .ports
                    .iter()
                    .map(u16::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
            (broke, whole)
        }
    };
    Ok(FaultReport {
        steps,
        broken_ns: whole.saturating_sub(broke),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_times_read_as_utc() {
        assert_eq!(utc_text(0), "1970-01-01T00:00:00.000Z");
        // 2026-11-27 15:52:40.123 UTC.
        assert_eq!(
            utc_text(1_795_794_760_123_000_000),
            "2026-11-27T15:52:40.123Z"
        );
        assert_eq!(
            utc_text(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000Z"
        );
    }
}
