//! `--realtime`: what a paced replay can ask of the kernel so its issue times hold
//! while other processes compete for the CPUs: the stream threads under SCHED_FIFO
//! (they then run before any ordinary process), each pinned to one CPU, and the
//! process's memory locked so no page fault lands in the measured phase. Each is
//! tried separately; what the kernel refuses is reported, never silently assumed.

use std::fmt;

/// The real-time priority given to stream threads (1..=99; low enough to leave the
/// kernel's own real-time threads ahead of them).
pub const FIFO_PRIORITY: i32 = 10;

/// What a stream thread got when it asked for real-time treatment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RealtimeGrant {
    /// SCHED_FIFO is in effect.
    pub fifo: bool,
    /// The thread is pinned to this CPU.
    pub cpu: Option<usize>,
    /// Why something was refused, for the user.
    pub refused: Vec<String>,
}

impl fmt::Display for RealtimeGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SCHED_FIFO {}, pinned to {}",
            if self.fifo { "on" } else { "off" },
            self.cpu
                .map(|c| format!("CPU {c}"))
                .unwrap_or_else(|| "no CPU".into())
        )
    }
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it for this thread.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the size matches the set passed.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: i is below CPU_SETSIZE.
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .collect()
}

/// Makes the calling thread (stream number `index` of a replay) a SCHED_FIFO thread
/// pinned to a CPU of its own where there are enough: stream 0 takes the last allowed
/// CPU, stream 1 the one before, and so on, leaving the first for everything else.
pub fn enter(index: usize) -> RealtimeGrant {
    let mut grant = RealtimeGrant::default();
    let cpus = allowed_cpus();
    if !cpus.is_empty() {
        let cpu = cpus[cpus.len() - 1 - index % cpus.len()];
        // SAFETY: as above.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: cpu is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut set) };
        // SAFETY: pid 0 is the calling thread; the set is valid.
        if unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) } == 0 {
            grant.cpu = Some(cpu);
        } else {
            grant.refused.push(format!(
                "pinning to CPU {cpu}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    let param = libc::sched_param {
        sched_priority: FIFO_PRIORITY,
    };
    // SAFETY: pid 0 is the calling thread; param is valid.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0 {
        grant.fifo = true;
    } else {
        grant.refused.push(format!(
            "SCHED_FIFO: {} (needs root or CAP_SYS_NICE, and a real-time budget in this cgroup)",
            std::io::Error::last_os_error()
        ));
    }
    grant
}

/// Locks the process's memory (present and future) until dropped.
pub struct MemoryLock {
    locked: bool,
}

impl MemoryLock {
    /// Tries mlockall; `Err` says why it was refused.
    pub fn lock() -> Result<MemoryLock, String> {
        // SAFETY: mlockall takes flags only.
        if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
            Ok(MemoryLock { locked: true })
        } else {
            Err(format!(
                "locking memory: {} (needs root or CAP_IPC_LOCK, or a higher RLIMIT_MEMLOCK)",
                std::io::Error::last_os_error()
            ))
        }
    }
}

impl Drop for MemoryLock {
    fn drop(&mut self) {
        if self.locked {
            // SAFETY: munlockall has no preconditions.
            unsafe { libc::munlockall() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_says_what_was_refused_and_never_claims_more() {
        // Run on a thread of its own, so the test runner's threads keep their policy.
        let (grant, policy, affinity) = std::thread::spawn(|| {
            let g = enter(0);
            // SAFETY: pid 0 is this thread.
            let policy = unsafe { libc::sched_getscheduler(0) };
            (g, policy, allowed_cpus())
        })
        .join()
        .unwrap();
        assert_eq!(grant.fifo, policy == libc::SCHED_FIFO, "{grant:?}");
        match grant.cpu {
            Some(c) => assert_eq!(affinity, vec![c]),
            None => assert!(!grant.refused.is_empty()),
        }
        if !grant.fifo {
            assert!(grant.refused.iter().any(|r| r.contains("SCHED_FIFO")));
        }
    }
}
