//! Ctrl-C and SIGTERM during a run: the first stops the run cleanly (ops in flight
//! finish, results so far are written), a second exits at once.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Set by the first signal; the run stops issuing ops when it sees it.
pub static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that stopped the run (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        let msg = b"\ninterrupted again: exiting now, results of the current workload are lost\n";
        // SAFETY: write and _exit are async-signal-safe.
        unsafe {
            libc::write(2, msg.as_ptr().cast(), msg.len());
            libc::_exit(128 + sig);
        }
    }
    STOP.store(true, Ordering::SeqCst);
    let msg = b"\ninterrupted: letting ops in flight finish, then writing the results so far (press Ctrl-C again to exit at once)\n";
    // SAFETY: write is async-signal-safe.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

/// Catches SIGINT and SIGTERM from here on.
pub fn install() {
    // SAFETY: on_signal only touches atomics and calls async-signal-safe functions.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        act.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(libc::SIGINT, &act, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &act, std::ptr::null_mut());
    }
}

/// The signal's name once one stopped the run: `SIGINT` or `SIGTERM`.
pub fn stopped_by() -> Option<&'static str> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        libc::SIGTERM => Some("SIGTERM"),
        _ => Some("SIGINT"),
    }
}

/// The exit status for a run a signal stopped: 130, whether SIGINT or SIGTERM stopped
/// it (run.json's `aborted` names which), so scripts see one status for "stopped, results
/// kept".
pub fn exit_status() -> Option<i32> {
    stopped_by().map(|_| 130)
}
