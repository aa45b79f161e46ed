//! The monotonic clock every measurement is read from.

/// Nanoseconds on CLOCK_MONOTONIC.
#[cfg(unix)]
#[inline]
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we pass; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Nanoseconds on Windows' performance counter (QueryPerformanceCounter, which
/// `Instant` reads), from the first reading in this process.
#[cfg(windows)]
#[inline]
pub fn monotonic_ns() -> u64 {
    static ORIGIN: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    let origin = *ORIGIN.get_or_init(std::time::Instant::now);
    origin.elapsed().as_nanos() as u64
}
