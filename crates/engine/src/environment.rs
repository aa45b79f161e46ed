//! Facts about the client and the target that every result carries.

use std::path::Path;

use naslab_layout::Mounts;
use naslab_results::Environment;

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// This machine's host name as the kernel holds it; empty when it cannot be read.
pub fn host_name() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
}

/// The kernel's boot id (a UUID that changes at every boot); empty when unreadable.
pub fn boot_id() -> String {
    read_trimmed("/proc/sys/kernel/random/boot_id")
}

/// The client machine: host, kernel, OS, CPU and memory.
pub fn environment() -> Environment {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let memory_bytes = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0);
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_default();
    Environment {
        host: host_name(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease"),
        os,
        cpu,
        cpus: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        memory_bytes,
    }
}

/// The file-system type and source of the mount that holds `path`, from
/// /proc/self/mountinfo (the longest mount point that is a prefix of the path); empty
/// when either cannot be read.
pub fn mount_of(path: &Path) -> (String, String) {
    let Ok(abs) = std::fs::canonicalize(path) else {
        return (String::new(), String::new());
    };
    Mounts::read()
        .holding(&abs)
        .map(|m| (m.fs_type.clone(), m.source.clone()))
        .unwrap_or_default()
}

/// How much memory new buffers can take: the smaller of the kernel's MemAvailable and
/// what the address-space limit (`ulimit -v`, `prlimit --as`) leaves, with which of the
/// two it is. `None` when neither can be read.
pub fn memory_for_buffers() -> Option<(u64, &'static str)> {
    let kib = |text: &str, key: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|n| n.parse::<u64>().ok())
            .map(|n| n * 1024)
    };
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| kib(&t, "MemAvailable:"))
        .map(|b| (b, "of memory is available"));
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct it is given.
    let limited = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY;
    let left = if limited {
        let used = std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|t| kib(&t, "VmSize:"))
            .unwrap_or(0);
        Some((
            limit.rlim_cur.saturating_sub(used),
            "of address space is left under this process's limit (ulimit -v)",
        ))
    } else {
        None
    };
    match (available, left) {
        (Some(a), Some(l)) => Some(if l.0 < a.0 { l } else { a }),
        (a, l) => a.or(l),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_root_file_system() {
        let (fs, _) = mount_of(Path::new("/"));
        assert!(!fs.is_empty());
        let (proc_fs, _) = mount_of(Path::new("/proc/self"));
        assert_eq!(proc_fs, "proc");
    }
}
