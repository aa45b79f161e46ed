//! Who this client is, for the notes naslab leaves in the directories it holds.

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// This machine's host name as the kernel holds it; empty when it cannot be read.
#[cfg(not(windows))]
pub fn host_name() -> String {
    read_trimmed("/proc/sys/kernel/hostname")
}

/// This machine's NetBIOS name, as Windows gives it to every process.
#[cfg(windows)]
pub fn host_name() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_default()
}

/// The kernel's boot id (a UUID that changes at every boot); empty when unreadable.
pub fn boot_id() -> String {
    read_trimmed("/proc/sys/kernel/random/boot_id")
}
