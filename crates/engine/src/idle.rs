//! Idle priority for the work done beside a measured phase: the op records and the
//! report's pass run while the streams do, under SCHED_IDLE, so that they only take a
//! CPU nothing else wants and a stream never waits behind them. Once the phase ends,
//! every such thread is set back to the ordinary policy to finish at full speed.
//!
//! Setting a thread back needs the right to raise its priority (root, CAP_SYS_NICE, or
//! an RLIMIT_NICE of 20): a process without it does that work after the phase instead,
//! as a thread left under SCHED_IDLE could wait for minutes on a busy machine.

use std::sync::OnceLock;

fn set_policy(tid: libc::pid_t, policy: libc::c_int) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: sched_setscheduler reads a valid sched_param and changes only the policy.
    unsafe { libc::sched_setscheduler(tid, policy, &param) == 0 }
}

fn policy_of(tid: libc::pid_t) -> libc::c_int {
    // SAFETY: sched_getscheduler only reads the thread's policy.
    unsafe { libc::sched_getscheduler(tid) }
}

/// Whether threads of this process may work beside a measured phase: it runs under the
/// ordinary policy, and a thread of it can enter SCHED_IDLE and leave it again (tried
/// once, on a thread of its own).
pub fn allowed() -> bool {
    static ALLOWED: OnceLock<bool> = OnceLock::new();
    *ALLOWED.get_or_init(|| {
        policy_of(0) == libc::SCHED_OTHER
            && std::thread::Builder::new()
                .name("idle-probe".into())
                .spawn(|| set_policy(0, libc::SCHED_IDLE) && set_policy(0, libc::SCHED_OTHER))
                .ok()
                .and_then(|h| h.join().ok())
                .unwrap_or(false)
    })
}

/// Puts the calling thread under SCHED_IDLE; the threads it starts from now on inherit
/// it. False when refused.
pub fn enter() -> bool {
    set_policy(0, libc::SCHED_IDLE)
}

/// Sets every thread of this process that runs under SCHED_IDLE back to the ordinary
/// policy (those [`enter`] put there, and the threads they started).
pub fn leave_all() {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|t| t.parse().ok()) else {
            continue;
        };
        if policy_of(tid) == libc::SCHED_IDLE {
            set_policy(tid, libc::SCHED_OTHER);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_threads_and_their_children_are_set_back() {
        if !naslab_layout::requirements::root_or_skip("setting a thread back from SCHED_IDLE") {
            return;
        }
        assert!(allowed(), "root may enter SCHED_IDLE and leave it");
        let (tx, rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let parent = std::thread::spawn(move || {
            assert!(enter());
            let child = std::thread::spawn(move || {
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() };
                tx.send(tid).unwrap();
                go_rx.recv().unwrap();
                policy_of(0)
            });
            child.join().unwrap()
        });
        let child = rx.recv().unwrap();
        assert_eq!(policy_of(child), libc::SCHED_IDLE, "a child inherits it");
        leave_all();
        assert_eq!(policy_of(child), libc::SCHED_OTHER);
        go_tx.send(()).unwrap();
        assert_eq!(parent.join().unwrap(), libc::SCHED_OTHER);
        assert_eq!(policy_of(0), libc::SCHED_OTHER, "others are left alone");
    }
}
