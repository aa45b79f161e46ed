//! `--realtime`: what a paced replay can ask of the kernel so its issue times hold
//! while other processes compete for the CPUs: the stream threads under SCHED_FIFO
//! (they then run before any ordinary process), each pinned to one CPU, and the
//! process's memory locked so no page fault lands in the measured phase. Each is
//! tried separately; what the kernel refuses is reported, never silently assumed.

use std::fmt;

use crate::pacing::Pacing;

/// The real-time priority given to stream threads (1..=99; low enough to leave the
/// kernel's own real-time threads ahead of them).
pub const FIFO_PRIORITY: i32 = 10;

/// Stream threads under `--realtime` sleep until this close to a deadline, then spin.
pub const SPIN_NS: u64 = 15_000;

/// The nice value of a stream thread too busy for SCHED_FIFO (see [`Priority`]).
pub const BUSY_NICE: i32 = -20;

/// How a stream thread asks to run before other processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Priority {
    /// SCHED_FIFO: no ordinary process preempts it. Only for a stream that sleeps a
    /// good part of each second: the kernel stops a real-time thread that keeps its CPU
    /// busy (95 % of each second by default, `sched_rt_runtime_us`; since Linux 6.12
    /// the fair server, when an ordinary thread waits on that CPU) for the rest of the
    /// second, up to 50 ms, and every op due meanwhile is late.
    Fifo,
    /// An ordinary thread at nice -20: its CPU's other ordinary threads get about 1 %
    /// of it, in short slices, and it is never stopped for tens of milliseconds.
    Nice,
}

/// The busy share of a second above which a stream runs at nice -20 rather than under
/// SCHED_FIFO (far from the kernel's 95 %, as the estimate is rough).
pub const FIFO_BUSY_MAX: f64 = 0.5;

/// CPU time an op takes besides the wait before it (issue, timing, the op itself on a
/// fast target), for the busy-share estimate.
const OP_BUSY_NS: u64 = 2_000;

impl Priority {
    /// For a stream paced by `pacing` whose measured ops come at most `densest_second`
    /// to a second of trace time, waiting by sleeping until `spin_ns` before each
    /// deadline and spinning the rest.
    pub fn for_stream(pacing: Pacing, densest_second: u64, spin_ns: u64) -> Priority {
        let busy = match pacing {
            // Each op keeps the CPU busy for its own time and the spin before it.
            Pacing::Original => densest_second as f64 * (spin_ns + OP_BUSY_NS) as f64 / 1e9,
            Pacing::Delay { gap_ns } => {
                (spin_ns.min(gap_ns) + OP_BUSY_NS) as f64 / (gap_ns + OP_BUSY_NS) as f64
            }
            // Back to back: never sleeps.
            Pacing::Afap => 1.0,
        };
        if busy > FIFO_BUSY_MAX {
            Priority::Nice
        } else {
            Priority::Fifo
        }
    }
}

/// What a stream thread got when it asked for real-time treatment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RealtimeGrant {
    /// What it asked for.
    pub asked: Priority,
    /// SCHED_FIFO is in effect.
    pub fifo: bool,
    /// Nice -20 is in effect.
    pub nice: bool,
    /// The thread is pinned to this CPU.
    pub cpu: Option<usize>,
    /// Why something was refused, for the user.
    pub refused: Vec<String>,
}

impl fmt::Display for RealtimeGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let priority = match self.asked {
            Priority::Fifo => format!("SCHED_FIFO {}", if self.fifo { "on" } else { "off" }),
            Priority::Nice => format!("nice {BUSY_NICE} {}", if self.nice { "on" } else { "off" }),
        };
        write!(
            f,
            "{priority}, pinned to {}",
            self.cpu
                .map(|c| format!("CPU {c}"))
                .unwrap_or_else(|| "no CPU".into())
        )
    }
}

/// The CPUs this thread may run on.
pub(crate) fn allowed_cpus() -> Vec<usize> {
    cpus_of(0)
}

/// A thread of this process as the scheduler names it (0: the calling one).
#[cfg(target_os = "linux")]
pub(crate) type Tid = libc::pid_t;
/// A thread of this process as the scheduler names it (0: the calling one).
#[cfg(not(target_os = "linux"))]
pub(crate) type Tid = i32;

/// Pinning and scheduling classes are Linux's; elsewhere every CPU is allowed and
/// nothing is pinned.
#[cfg(not(target_os = "linux"))]
pub(crate) fn cpus_of(_tid: Tid) -> Vec<usize> {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n).collect()
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn pin_thread(_tid: Tid, cpus: &[usize]) -> Result<(), String> {
    Err(format!(
        "pinning to CPU {cpus:?}: not available on this system (naslab pins threads on Linux only)"
    ))
}

#[cfg(not(target_os = "linux"))]
fn set_priority(priority: Priority) -> Result<(), String> {
    Err(match priority {
        Priority::Fifo => "SCHED_FIFO: not available on this system (Linux only)".to_string(),
        Priority::Nice => format!("nice {BUSY_NICE}: not available on this system (Linux only)"),
    })
}

#[cfg(not(target_os = "linux"))]
fn lock_memory() -> Result<(), String> {
    Err("locking memory: not available on this system (Linux only)".to_string())
}

#[cfg(not(target_os = "linux"))]
fn unlock_memory() {}

/// The CPUs thread `tid` of this process (0: the calling one) may run on; empty if it
/// cannot be read.
#[cfg(target_os = "linux")]
pub(crate) fn cpus_of(tid: Tid) -> Vec<usize> {
    // SAFETY: cpu_set_t is plain data; sched_getaffinity fills it for the thread.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: the size matches the set passed.
    let rc = unsafe { libc::sched_getaffinity(tid, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: i is below CPU_SETSIZE.
        .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
        .collect()
}

/// How long [`CpuChoice::sample`] watches the CPUs before choosing.
pub const SAMPLE_MS: u64 = 100;

/// Which CPU each stream thread is pinned to, and where the replay's other threads go.
///
/// A SCHED_FIFO thread that spins to its deadlines keeps its CPU busy all the time at
/// high rates; an ordinary process that shares that CPU is then starved until the
/// kernel hands it a slice of tens of milliseconds (its real-time throttle, or the
/// fair server), and every op due meanwhile is late. So stream threads go to the CPUs
/// that were idlest just before the start, and the replay's own other threads (the
/// spool I/O thread) to the CPUs the streams leave free.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuChoice {
    /// CPUs in the order streams take them: stream `i` gets `order[i % len]`.
    pub order: Vec<usize>,
    /// How busy each CPU of `order` was while watched, in parts per million.
    pub busy_ppm: Vec<u64>,
    /// The allowed CPUs no stream is pinned to and not kept for the work beside the
    /// phase (empty when streams use them all).
    pub rest: Vec<usize>,
}

impl CpuChoice {
    /// Watches the allowed CPUs but `kept` (kept for the work beside the phase, see
    /// [`crate::beside`]) for [`SAMPLE_MS`] and chooses for `streams` streams.
    pub fn sample(streams: usize, kept: Option<usize>) -> CpuChoice {
        let mut allowed = allowed_cpus();
        allowed.retain(|&c| Some(c) != kept);
        let before = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        std::thread::sleep(std::time::Duration::from_millis(SAMPLE_MS));
        let after = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        CpuChoice::from_stat(&allowed, &before, &after, streams)
    }

    /// Orders `allowed` from least to most busy between two /proc/stat snapshots (ties,
    /// and CPUs the snapshots lack, keep the highest-numbered first: the first CPU is
    /// where interrupts and housekeeping usually land).
    pub fn from_stat(allowed: &[usize], before: &str, after: &str, streams: usize) -> CpuChoice {
        let (b, a) = (cpu_times(before), cpu_times(after));
        let busy = |cpu: usize| -> u64 {
            match (b.get(&cpu), a.get(&cpu)) {
                (Some(x), Some(y)) if y.1 > x.1 => {
                    // Busy share in parts per million of the CPU's time between the two.
                    (y.0.saturating_sub(x.0)) * 1_000_000 / (y.1 - x.1)
                }
                _ => 0,
            }
        };
        let mut order: Vec<usize> = allowed.to_vec();
        order.sort_by_key(|&c| (busy(c), std::cmp::Reverse(c)));
        let used = streams.min(order.len());
        let rest = if used < order.len() {
            order[used..].to_vec()
        } else {
            Vec::new()
        };
        let busy_ppm = order.iter().map(|&c| busy(c)).collect();
        CpuChoice {
            order,
            busy_ppm,
            rest,
        }
    }

    /// The CPU stream number `index` is pinned to.
    pub fn for_stream(&self, index: usize) -> Option<usize> {
        (!self.order.is_empty()).then(|| self.order[index % self.order.len()])
    }
}

/// Busy and total time (in clock ticks) of each `cpuN` line of /proc/stat.
fn cpu_times(stat: &str) -> std::collections::HashMap<usize, (u64, u64)> {
    stat.lines()
        .filter_map(|line| {
            let mut fields = line.split_ascii_whitespace();
            let cpu = fields.next()?.strip_prefix("cpu")?.parse::<usize>().ok()?;
            let v: Vec<u64> = fields.filter_map(|f| f.parse().ok()).collect();
            // user nice system idle iowait irq softirq steal (guest time is in user).
            if v.len() < 8 {
                return None;
            }
            let total: u64 = v[..8].iter().sum();
            let idle = v[3] + v[4];
            Some((cpu, (total - idle, total)))
        })
        .collect()
}

/// Under a real-time policy (SCHED_FIFO or SCHED_RR, set by `--realtime` or inherited from
/// `chrt`), raises the calling thread one priority above what it has, so it runs ahead
/// of threads of the same priority on its CPU. False when it is not real-time or the
/// kernel refused.
#[cfg(target_os = "linux")]
pub(crate) fn one_above_own_priority() -> bool {
    // SAFETY: pid 0 is the calling thread; the calls read or set its policy only.
    unsafe {
        let policy = libc::sched_getscheduler(0);
        if policy != libc::SCHED_FIFO && policy != libc::SCHED_RR {
            return false;
        }
        let mut param: libc::sched_param = std::mem::zeroed();
        if libc::sched_getparam(0, &mut param) != 0 {
            return false;
        }
        let max = libc::sched_get_priority_max(policy);
        if param.sched_priority >= max {
            return false;
        }
        param.sched_priority += 1;
        libc::sched_setscheduler(0, policy, &param) == 0
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn one_above_own_priority() -> bool {
    false
}

/// Pins the calling thread to `cpus`; an error says why the kernel refused.
pub fn pin_to(cpus: &[usize]) -> Result<(), String> {
    pin_thread(0, cpus)
}

/// Pins thread `tid` of this process (0: the calling one) to `cpus`.
#[cfg(target_os = "linux")]
pub(crate) fn pin_thread(tid: Tid, cpus: &[usize]) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: the CPUs come from sched_getaffinity, so each is below CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: the set is valid; tid names a thread of this process.
    if unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) } == 0 {
        Ok(())
    } else {
        Err(format!(
            "pinning to CPU {cpus:?}: {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// Pins the calling thread to `cpu` (from a [`CpuChoice`]) and gives it `priority`.
pub fn enter(cpu: Option<usize>, priority: Priority) -> RealtimeGrant {
    let mut grant = RealtimeGrant {
        asked: priority,
        fifo: false,
        nice: false,
        cpu: None,
        refused: Vec::new(),
    };
    if let Some(cpu) = cpu {
        match pin_to(&[cpu]) {
            Ok(()) => grant.cpu = Some(cpu),
            Err(why) => grant.refused.push(why),
        }
    }
    match set_priority(priority) {
        Ok(()) => match priority {
            Priority::Fifo => grant.fifo = true,
            Priority::Nice => grant.nice = true,
        },
        Err(why) => grant.refused.push(why),
    }
    grant
}

/// Gives the calling thread `priority`; an error says why the kernel refused.
#[cfg(target_os = "linux")]
fn set_priority(priority: Priority) -> Result<(), String> {
    match priority {
        Priority::Fifo => {
            let param = libc::sched_param {
                sched_priority: FIFO_PRIORITY,
            };
            // SAFETY: pid 0 is the calling thread; param is valid.
            if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } == 0 {
                Ok(())
            } else {
                Err(format!(
                    "SCHED_FIFO: {} (needs root or CAP_SYS_NICE, and a real-time budget in this cgroup)",
                    std::io::Error::last_os_error()
                ))
            }
        }
        Priority::Nice => {
            // On Linux, PRIO_PROCESS with id 0 sets the calling thread's nice value.
            // SAFETY: setpriority takes plain integers.
            if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, BUSY_NICE) } == 0 {
                Ok(())
            } else {
                Err(format!(
                    "nice {BUSY_NICE}: {} (needs root or CAP_SYS_NICE)",
                    std::io::Error::last_os_error()
                ))
            }
        }
    }
}

/// Locks the process's memory, present and future.
#[cfg(target_os = "linux")]
fn lock_memory() -> Result<(), String> {
    // SAFETY: mlockall takes flags only.
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } == 0 {
        Ok(())
    } else {
        Err(format!(
            "locking memory: {} (needs root or CAP_IPC_LOCK, or a higher RLIMIT_MEMLOCK)",
            std::io::Error::last_os_error()
        ))
    }
}

#[cfg(target_os = "linux")]
fn unlock_memory() {
    // SAFETY: munlockall has no preconditions.
    unsafe { libc::munlockall() };
}

/// What the kernel granted a phase's streams (each stream's [`RealtimeGrant`]) and the
/// process (`memory_refused`: why its memory could not be locked), for the results.
pub fn granted(
    streams: &[crate::replay::StreamOutcome],
    memory_refused: Option<String>,
) -> naslab_results::RealtimeGranted {
    let grants: Vec<&RealtimeGrant> = streams.iter().filter_map(|s| s.realtime.as_ref()).collect();
    let count = |f: fn(&RealtimeGrant) -> bool| grants.iter().filter(|g| f(g)).count() as u32;
    let memory_locked = memory_refused.is_none();
    let mut refused: Vec<String> = memory_refused.into_iter().collect();
    for why in grants.iter().flat_map(|g| &g.refused) {
        if !refused.contains(why) {
            refused.push(why.clone());
        }
    }
    naslab_results::RealtimeGranted {
        memory_locked,
        streams: streams.len() as u32,
        fifo_streams: count(|g| g.fifo),
        nice_streams: count(|g| g.nice),
        pinned_streams: count(|g| g.cpu.is_some()),
        refused,
    }
}

/// Locks the process's memory (present and future) until dropped.
pub struct MemoryLock {
    locked: bool,
}

impl MemoryLock {
    /// Tries mlockall; `Err` says why it was refused.
    pub fn lock() -> Result<MemoryLock, String> {
        lock_memory().map(|()| MemoryLock { locked: true })
    }
}

impl Drop for MemoryLock {
    fn drop(&mut self) {
        if self.locked {
            unlock_memory();
        }
    }
}

/// Held by the tests that pin threads and read their CPUs back, and by the one that
/// lets pinned threads go ([`crate::beside::leave_all`]), so that neither sees the other.
#[cfg(all(test, target_os = "linux"))]
pub(crate) static PINNING: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_grant_says_what_was_refused_and_never_claims_more() {
        let _pinning = PINNING.lock().unwrap_or_else(|e| e.into_inner());
        // Run on a thread of its own, so the test runner's threads keep their policy.
        let (grant, policy, affinity) = std::thread::spawn(|| {
            let g = enter(CpuChoice::sample(1, None).for_stream(0), Priority::Fifo);
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

    #[test]
    fn what_was_granted_counts_each_stream_and_names_each_refusal_once() {
        let streams: Vec<crate::replay::StreamOutcome> = [
            (true, false, Some(1), vec![]),
            (false, false, Some(2), vec!["SCHED_FIFO: EPERM".to_string()]),
            (
                false,
                true,
                None,
                vec!["pinning to CPU [3]: EINVAL".to_string()],
            ),
            (false, false, None, vec!["SCHED_FIFO: EPERM".to_string()]),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, (fifo, nice, cpu, refused))| {
            let mut o =
                crate::replay::StreamOutcome::new(&[0; naslab_trace::OpKind::ALL.len()], i as u32);
            o.realtime = Some(RealtimeGrant {
                asked: if nice { Priority::Nice } else { Priority::Fifo },
                fifo,
                nice,
                cpu,
                refused,
            });
            o
        })
        .collect();
        let g = granted(&streams, Some("locking memory: EPERM".into()));
        assert_eq!(
            (g.streams, g.fifo_streams, g.nice_streams, g.pinned_streams),
            (4, 1, 1, 2)
        );
        assert!(!g.memory_locked);
        assert_eq!(
            g.refused,
            [
                "locking memory: EPERM",
                "SCHED_FIFO: EPERM",
                "pinning to CPU [3]: EINVAL"
            ]
        );
        let g = granted(&streams[..1], None);
        assert!(g.memory_locked && g.refused.is_empty());
    }

    #[test]
    fn a_stream_too_busy_to_sleep_asks_for_nice_rather_than_fifo() {
        let of = |pacing, per_s| Priority::for_stream(pacing, per_s, SPIN_NS);
        // --pace original: 10 k ops a second leave most of each second to sleep;
        // 50 k (one op every 20 us, less than the spin before each) leave none.
        assert_eq!(of(Pacing::Original, 10_000), Priority::Fifo);
        assert_eq!(of(Pacing::Original, 50_000), Priority::Nice);
        assert_eq!(of(Pacing::Original, 0), Priority::Fifo);
        // A fixed gap: 1 ms sleeps, 10 us spins (the densest second does not count).
        let delay = |gap_ns| Pacing::Delay { gap_ns };
        assert_eq!(of(delay(1_000_000), 50_000), Priority::Fifo);
        assert_eq!(of(delay(10_000), 0), Priority::Nice);
        // As fast as possible: never sleeps.
        assert_eq!(of(Pacing::Afap, 0), Priority::Nice);
    }

    #[test]
    fn a_nice_grant_is_what_the_kernel_says_the_thread_has() {
        let (grant, nice) = std::thread::spawn(|| {
            let g = enter(None, Priority::Nice);
            // SAFETY: PRIO_PROCESS with id 0 reads this thread's nice value.
            (g, unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) })
        })
        .join()
        .unwrap();
        assert_eq!(grant.nice, nice == BUSY_NICE, "{grant:?} nice {nice}");
        assert!(!grant.fifo);
        if !grant.nice {
            assert!(
                grant.refused.iter().any(|r| r.contains("nice")),
                "{grant:?}"
            );
        }
        assert!(grant.to_string().starts_with("nice -20"), "{grant}");
    }

    #[test]
    fn streams_take_the_idlest_cpus_and_the_rest_is_left_to_the_other_threads() {
        // cpu1 busy 90 of 100 ticks, cpu0 busy 10, cpu2 and cpu3 idle (ties: higher first).
        let before = "cpu  1 2 3 4 5 6 7 8 0 0\n\
                      cpu0 0 0 0 100 0 0 0 0 0 0\n\
                      cpu1 0 0 0 100 0 0 0 0 0 0\n\
                      cpu2 0 0 0 100 0 0 0 0 0 0\n\
                      cpu3 0 0 0 100 0 0 0 0 0 0\n\
                      intr 5\n";
        let after = "cpu  1 2 3 4 5 6 7 8 0 0\n\
                     cpu0 5 0 4 190 0 0 1 0 0 0\n\
                     cpu1 60 0 20 110 0 5 0 5 0 0\n\
                     cpu2 0 0 0 200 0 0 0 0 0 0\n\
                     cpu3 0 0 0 190 10 0 0 0 0 0\n";
        let c = CpuChoice::from_stat(&[0, 1, 2, 3], before, after, 2);
        assert_eq!(c.order, vec![3, 2, 0, 1]);
        assert_eq!(c.busy_ppm, vec![0, 0, 100_000, 900_000]);
        assert_eq!(c.rest, vec![0, 1]);
        assert_eq!(c.for_stream(0), Some(3));
        assert_eq!(c.for_stream(5), Some(2));
        // More streams than CPUs: they share, and nothing is left for the rest.
        let c = CpuChoice::from_stat(&[0, 1, 2, 3], before, after, 9);
        assert!(c.rest.is_empty());
        // Only the allowed CPUs are chosen; unreadable snapshots keep the plain order.
        let c = CpuChoice::from_stat(&[1, 2], before, after, 1);
        assert_eq!((c.order, c.rest), (vec![2, 1], vec![1]));
        let c = CpuChoice::from_stat(&[0, 1], "", "", 1);
        assert_eq!((c.order, c.rest), (vec![1, 0], vec![0]));
        assert_eq!(CpuChoice::default().for_stream(0), None);
    }

    #[test]
    fn a_cpu_kept_busy_by_another_thread_reads_as_busy_and_no_busier_cpu_goes_first() {
        let _pinning = PINNING.lock().unwrap_or_else(|e| e.into_inner());
        let cpus = allowed_cpus();
        assert!(
            cpus.len() >= 2,
            "this test needs two CPUs this process may use, not {cpus:?}"
        );
        // Keep the highest CPU, the one an idle machine would give stream 0, busy.
        let busy_cpu = *cpus.last().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let spinner = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                pin_to(&[busy_cpu]).unwrap();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        let choice = CpuChoice::sample(1, None);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        spinner.join().unwrap();
        // Read from the kernel's own accounting: the spinning CPU shows as busy, and no
        // CPU busier than it goes first (other tests may keep the rest busy too).
        let at = choice.order.iter().position(|&c| c == busy_cpu).unwrap();
        assert!(choice.busy_ppm[at] >= 800_000, "{choice:?}");
        assert!(choice.busy_ppm[0] <= choice.busy_ppm[at], "{choice:?}");
        assert!(
            choice.busy_ppm.windows(2).all(|w| w[0] <= w[1]),
            "{choice:?}"
        );
    }
}
