//! The work done beside a measured phase (the op records and the report's pass over
//! them) on a CPU of its own, so that the streams never share a CPU with it.
//!
//! Sharing would cost them: the kernel gives even a SCHED_IDLE thread a slice now and
//! then, and a stream that waits for it waits until the next tick (4 ms at 250 Hz; seen
//! as the slowest op of a run). So that work runs beside the phase only when the streams
//! leave a CPU free: it is pinned to the first CPU the thread starting the run may use
//! (where interrupts and housekeeping usually land already), and the stream threads to
//! the others. Where the process may also set threads back from SCHED_IDLE (root,
//! CAP_SYS_NICE, or an RLIMIT_NICE of 20), that work runs under it too, yielding at once
//! to anything else on its CPU, such as the spool I/O thread. Once the phase ends, the
//! threads on that CPU alone may use every CPU again, under the ordinary policy.

use std::sync::OnceLock;

use crate::realtime::{Tid, allowed_cpus, cpus_of, pin_thread, pin_to};
use crate::replay::ReplayOptions;

#[cfg(target_os = "linux")]
use libc::{SCHED_IDLE, SCHED_OTHER};
// Scheduling classes are Linux's: elsewhere no thread is ever idle-class.
#[cfg(not(target_os = "linux"))]
const SCHED_OTHER: i32 = 0;
#[cfg(not(target_os = "linux"))]
const SCHED_IDLE: i32 = 5;

#[cfg(not(target_os = "linux"))]
fn set_policy(_tid: Tid, _policy: i32) -> bool {
    false
}

#[cfg(not(target_os = "linux"))]
fn policy_of(_tid: Tid) -> i32 {
    SCHED_OTHER
}

#[cfg(target_os = "linux")]
fn set_policy(tid: Tid, policy: libc::c_int) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler reads a valid sched_param and changes only the policy.
    unsafe { libc::sched_setscheduler(tid, policy, &param) == 0 }
}

#[cfg(target_os = "linux")]
fn policy_of(tid: Tid) -> libc::c_int {
    // SAFETY: sched_getscheduler only reads the thread's policy.
    unsafe { libc::sched_getscheduler(tid) }
}

/// The CPU kept for the op records written beside a measured phase of `streams` stream
/// threads replayed as `options` say, when they leave one free: the first the calling
/// thread may use. None with `--records-after-phase`, and for a multi-client job's client,
/// whose fellows may share this machine and its CPUs (the kept one would not be free).
pub fn cpu_for(options: &ReplayOptions, streams: usize) -> Option<usize> {
    if options.records_after_phase || options.start_gate.is_some() {
        return None;
    }
    let allowed = allowed_cpus();
    (allowed.len() > streams).then(|| allowed[0])
}

/// The CPUs the stream threads may use while `kept` is kept for the work beside them.
pub(crate) fn stream_cpus(kept: usize) -> Vec<usize> {
    allowed_cpus().into_iter().filter(|&c| c != kept).collect()
}

/// Whether a thread of this process may enter SCHED_IDLE and leave it again (tried once,
/// on a thread of its own), the process running under the ordinary policy.
pub(crate) fn idle_allowed() -> bool {
    static ALLOWED: OnceLock<bool> = OnceLock::new();
    *ALLOWED.get_or_init(|| {
        policy_of(0) == SCHED_OTHER
            && std::thread::Builder::new()
                .name("idle-probe".into())
                .spawn(|| set_policy(0, SCHED_IDLE) && set_policy(0, SCHED_OTHER))
                .ok()
                .and_then(|h| h.join().ok())
                .unwrap_or(false)
    })
}

/// Moves the calling thread to `cpu`, under SCHED_IDLE where [`idle_allowed`]; the
/// threads it starts from now on inherit both.
pub(crate) fn enter(cpu: usize) {
    let _ = pin_to(&[cpu]);
    if idle_allowed() {
        set_policy(0, SCHED_IDLE);
    }
}

/// Lets the threads of this process that run on `kept` alone (those [`enter`] moved
/// there, and the threads they started) use every CPU the calling thread may, under the
/// ordinary policy. Threads pinned anywhere else are left as they are.
pub(crate) fn leave_all(kept: usize) {
    let allowed = allowed_cpus();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        if cpus_of(tid) != [kept] {
            continue;
        }
        if policy_of(tid) == SCHED_IDLE {
            set_policy(tid, SCHED_OTHER);
        }
        let _ = pin_thread(tid, &allowed);
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_is_kept_only_when_the_streams_leave_one() {
        let allowed = allowed_cpus();
        let plain = ReplayOptions::default();
        assert_eq!(cpu_for(&plain, allowed.len()), None);
        assert_eq!(cpu_for(&plain, 0), Some(allowed[0]));
        let after = ReplayOptions {
            records_after_phase: true,
            ..plain.clone()
        };
        assert_eq!(cpu_for(&after, 0), None, "--records-after-phase");
        if allowed.len() > 1 {
            assert_eq!(cpu_for(&plain, allowed.len() - 1), Some(allowed[0]));
            assert_eq!(stream_cpus(allowed[0]), allowed[1..]);
        }
    }

    #[test]
    fn threads_moved_beside_and_their_children_are_let_go_at_the_end() {
        let _pinning = crate::realtime::PINNING
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let allowed = allowed_cpus();
        let kept = allowed[0];
        let (tx, rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let parent = std::thread::spawn(move || {
            enter(kept);
            let child = std::thread::spawn(move || {
                // SAFETY: gettid has no preconditions.
                tx.send(unsafe { libc::gettid() }).unwrap();
                go_rx.recv().unwrap();
                (policy_of(0), cpus_of(0))
            });
            child.join().unwrap()
        });
        let child = rx.recv().unwrap();
        assert_eq!(cpus_of(child), [kept], "a child inherits the CPU");
        if naslab_test_support::root_or_skip("setting a thread back from SCHED_IDLE") {
            assert!(idle_allowed(), "root may enter SCHED_IDLE and leave it");
            assert_eq!(policy_of(child), libc::SCHED_IDLE, "and the policy");
        }
        // A thread pinned elsewhere on purpose keeps its CPU.
        let elsewhere = allowed.get(1).copied();
        let (pinned_tx, pinned_rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let pinned = std::thread::spawn(move || {
            if let Some(cpu) = elsewhere {
                pin_to(&[cpu]).unwrap();
            }
            pinned_tx.send(()).unwrap();
            done_rx.recv().unwrap();
            cpus_of(0)
        });
        pinned_rx.recv().unwrap();
        leave_all(kept);
        go_tx.send(()).unwrap();
        done_tx.send(()).unwrap();
        assert_eq!(parent.join().unwrap(), (libc::SCHED_OTHER, allowed.clone()));
        let expected = elsewhere.map_or(allowed.clone(), |cpu| vec![cpu]);
        assert_eq!(
            pinned.join().unwrap(),
            expected,
            "a thread pinned elsewhere"
        );
        assert_eq!(policy_of(0), libc::SCHED_OTHER, "others are left alone");
        assert_eq!(cpus_of(0), allowed);
    }
}
