//! Facts about the client and the target that every result carries.

use naslab_results::Environment;

pub use naslab_backend::host::{boot_id, host_name};

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// Physical memory in bytes: (total, available), from GlobalMemoryStatusEx.
#[cfg(windows)]
fn windows_memory() -> Option<(u64, u64)> {
    use windows_sys::Win32::System::SystemInformation::{GlobalMemoryStatusEx, MEMORYSTATUSEX};
    // Under Wine, calls made by several threads at once just after its server started
    // were seen to fail: asked again, a few times.
    for _ in 0..5 {
        // SAFETY: all-zero is a valid MEMORYSTATUSEX; its length is set before the call.
        let mut m: MEMORYSTATUSEX = unsafe { std::mem::zeroed() };
        m.dwLength = std::mem::size_of::<MEMORYSTATUSEX>() as u32;
        // SAFETY: m is ours, with dwLength set as the call requires.
        if unsafe { GlobalMemoryStatusEx(&mut m) } != 0 && m.ullTotalPhys > 0 {
            return Some((m.ullTotalPhys, m.ullAvailPhys));
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    None
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
    #[cfg(windows)]
    let memory_bytes = windows_memory().map_or(memory_bytes, |(total, _)| total);
    #[cfg(windows)]
    let os = String::from("Windows");
    #[cfg(not(windows))]
    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_default();
    #[cfg(windows)]
    let cpu = std::env::var("PROCESSOR_IDENTIFIER").unwrap_or(cpu);
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
    #[cfg(not(windows))]
    let available = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| kib(&t, "MemAvailable:"))
        .map(|b| (b, "of memory is available"));
    #[cfg(windows)]
    let available = windows_memory().map(|(_, avail)| (avail, "of memory is available"));
    let left = address_space_left(&kib);
    match (available, left) {
        (Some(a), Some(l)) => Some(if l.0 < a.0 { l } else { a }),
        (a, l) => a.or(l),
    }
}

/// Windows gives a process no address-space limit of its own.
#[cfg(not(unix))]
fn address_space_left(_kib: &dyn Fn(&str, &str) -> Option<u64>) -> Option<(u64, &'static str)> {
    None
}

/// What the address-space limit leaves, when there is one.
#[cfg(unix)]
fn address_space_left(kib: &dyn Fn(&str, &str) -> Option<u64>) -> Option<(u64, &'static str)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct it is given.
    let limited = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } == 0
        && limit.rlim_cur != libc::RLIM_INFINITY;
    if limited {
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
    }
}
