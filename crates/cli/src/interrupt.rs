//! Ctrl-C, SIGTERM and SIGHUP, from naslab's first instruction to its last.
//!
//! Until a run starts keeping results ([`keep_results`]: loading traces, opening the
//! target, any command that measures nothing) the first signal ends naslab at once,
//! removing the run directory it had made if still empty; the target's lock goes with
//! the process. Once a run keeps results, the first stops it cleanly (ops in flight
//! finish, results so far are written) and a second exits at once. SIGHUP (the terminal
//! closed) counts as SIGTERM, unless naslab was started with it ignored (`nohup`).

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

/// Set by the first signal; the run stops issuing ops when it sees it.
pub static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that stopped the run (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Whether a run keeps results: a signal then stops it rather than ending naslab.
static KEEPING: AtomicBool = AtomicBool::new(false);
/// The run directory, then the directories made for it (deepest first), to remove when
/// a signal ends naslab before the run keeps anything. Set once, never freed.
static MADE: AtomicPtr<Vec<CString>> = AtomicPtr::new(std::ptr::null_mut());

fn say(msg: &[u8]) {
    // SAFETY: write is async-signal-safe; msg is valid for its length.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

extern "C" fn on_signal(sig: libc::c_int) {
    if !KEEPING.load(Ordering::SeqCst) {
        say(b"\ninterrupted: exiting (nothing was being measured)\n");
        let made = MADE.load(Ordering::SeqCst);
        if !made.is_null() {
            // SAFETY: MADE is set once from a leaked Vec that is never freed or changed.
            for dir in unsafe { &*made } {
                // SAFETY: rmdir is async-signal-safe and removes only an empty directory.
                unsafe { libc::rmdir(dir.as_ptr()) };
            }
        }
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        say(b"\ninterrupted again: exiting now, results of the current workload are lost\n");
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
    STOP.store(true, Ordering::SeqCst);
    say(b"\ninterrupted: letting ops in flight finish, then writing the results so far (press Ctrl-C again to exit at once)\n");
}

/// Catches SIGINT, SIGTERM and (unless ignored) SIGHUP from here on: called first thing.
pub fn install() {
    // SAFETY: on_signal only touches atomics and calls async-signal-safe functions;
    // sigaction with a null new action only reads the current one.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        act.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut act.sa_mask);
        libc::sigaction(libc::SIGINT, &act, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &act, std::ptr::null_mut());
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGHUP, std::ptr::null(), &mut old);
        if old.sa_sigaction != libc::SIG_IGN {
            libc::sigaction(libc::SIGHUP, &act, std::ptr::null_mut());
        }
    }
}

/// Notes the run directory and the directories made for it (outermost first), which a
/// signal before [`keep_results`] removes again if they are still empty.
pub fn remove_on_exit(run_dir: &std::path::Path, made: &[PathBuf]) {
    use std::os::unix::ffi::OsStrExt;
    let dirs: Vec<CString> = std::iter::once(run_dir)
        .chain(made.iter().rev().map(PathBuf::as_path))
        .filter_map(|d| CString::new(d.as_os_str().as_bytes()).ok())
        .collect();
    let leaked = Box::into_raw(Box::new(dirs));
    // Only the first is kept: a process makes one run directory.
    if MADE
        .compare_exchange(
            std::ptr::null_mut(),
            leaked,
            Ordering::SeqCst,
            Ordering::SeqCst,
        )
        .is_err()
    {
        // SAFETY: leaked came from Box::into_raw above and was not published.
        drop(unsafe { Box::from_raw(leaked) });
    }
}

/// Runs `f` with SIGINT, SIGTERM and SIGHUP held back on this thread, so that a signal
/// that comes while `f` makes the run directory (and notes it with [`remove_on_exit`])
/// is handled after, when the directory is known and can be removed again; it is not
/// lost.
pub fn held_back<T>(f: impl FnOnce() -> T) -> T {
    // SAFETY: the sets are initialised by sigemptyset before use, and pthread_sigmask
    // only changes this thread's mask, restored below.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
        let r = f();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        r
    }
}

/// From here on a signal stops the run, whose results are then written, rather than
/// ending naslab at once.
pub fn keep_results() {
    KEEPING.store(true, Ordering::SeqCst);
}

/// The signal's name once one stopped the run: `SIGINT`, `SIGTERM` or `SIGHUP`.
pub fn stopped_by() -> Option<&'static str> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        libc::SIGTERM => Some("SIGTERM"),
        libc::SIGHUP => Some("SIGHUP"),
        _ => Some("SIGINT"),
    }
}

/// The exit status for a run a signal stopped: 130, whichever signal stopped it
/// (run.json's `aborted` names which), so scripts see one status for "stopped, results
/// kept".
pub fn exit_status() -> Option<i32> {
    stopped_by().map(|_| 130)
}
