//! Ctrl-C, SIGTERM and SIGHUP, from naslab's first instruction to its last.
//!
//! Until a run starts keeping results ([`keep_results`]: loading traces, opening the
//! target, any command that measures nothing) the first signal ends naslab at once,
//! removing the run directory it had made if still empty; the target's lock goes with
//! the process. Once a run keeps results, the first stops it cleanly (ops in flight
//! finish, results so far are written) and a second exits at once. SIGHUP (the terminal
//! closed) counts as SIGTERM, unless naslab was started with it ignored (`nohup`).

#[cfg(unix)]
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
#[cfg(unix)]
static MADE: AtomicPtr<Vec<CString>> = AtomicPtr::new(std::ptr::null_mut());
#[cfg(windows)]
static MADE: AtomicPtr<Vec<PathBuf>> = AtomicPtr::new(std::ptr::null_mut());

// Windows has no signals: its console's Ctrl-C and Ctrl-Break count as SIGINT, and
// closing the console, logging off or shutting down as SIGTERM.
#[cfg(windows)]
const SIGINT: i32 = 2;
#[cfg(windows)]
const SIGTERM: i32 = 15;
#[cfg(unix)]
use libc::{SIGHUP, SIGTERM};

#[cfg(unix)]
fn say(msg: &[u8]) {
    // SAFETY: write is async-signal-safe; msg is valid for its length.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

#[cfg(unix)]
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

/// The console's Ctrl-C, Ctrl-Break and close events, handled as on_signal handles
/// signals (the handler runs on a thread of its own, so it may do what it needs).
#[cfg(windows)]
unsafe extern "system" fn on_console_event(event: u32) -> windows_sys::core::BOOL {
    use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, CTRL_C_EVENT};
    let _held = HOLD.lock().unwrap_or_else(|e| e.into_inner());
    let sig = if event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT {
        SIGINT
    } else {
        SIGTERM
    };
    if !KEEPING.load(Ordering::SeqCst) {
        eprintln!("\ninterrupted: exiting (nothing was being measured)");
        let made = MADE.load(Ordering::SeqCst);
        if !made.is_null() {
            // SAFETY: MADE is set once from a leaked Vec that is never freed or changed.
            for dir in unsafe { &*made } {
                // Removes only an empty directory.
                let _ = std::fs::remove_dir(dir);
            }
        }
        std::process::exit(130);
    }
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        eprintln!("\ninterrupted again: exiting now, results of the current workload are lost");
        std::process::exit(130);
    }
    STOP.store(true, Ordering::SeqCst);
    eprintln!(
        "\ninterrupted: letting ops in flight finish, then writing the results so far (press Ctrl-C again to exit at once)"
    );
    1
}

/// Catches the console's Ctrl-C, Ctrl-Break and close events from here on.
#[cfg(windows)]
pub fn install() {
    use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;
    // SAFETY: the handler is a plain function that lives as long as the process.
    unsafe { SetConsoleCtrlHandler(Some(on_console_event), 1) };
}

/// Catches SIGINT, SIGTERM and (unless ignored) SIGHUP from here on: called first thing.
#[cfg(unix)]
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
    #[cfg(unix)]
    let dirs: Vec<CString> = {
        use std::os::unix::ffi::OsStrExt;
        std::iter::once(run_dir)
            .chain(made.iter().rev().map(PathBuf::as_path))
            .filter_map(|d| CString::new(d.as_os_str().as_bytes()).ok())
            .collect()
    };
    #[cfg(windows)]
    let dirs: Vec<PathBuf> = std::iter::once(run_dir)
        .chain(made.iter().rev().map(PathBuf::as_path))
        .map(std::path::Path::to_path_buf)
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

/// Held while the run directory is made, and by the console handler before it acts.
#[cfg(windows)]
static HOLD: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` with the console's events held back (their handler waits until `f` is
/// done), as the Unix version holds back signals.
#[cfg(windows)]
pub fn held_back<T>(f: impl FnOnce() -> T) -> T {
    let _held = HOLD.lock().unwrap_or_else(|e| e.into_inner());
    f()
}

/// Runs `f` with SIGINT, SIGTERM and SIGHUP held back on this thread, so that a signal
/// that comes while `f` makes the run directory (and notes it with [`remove_on_exit`])
/// is handled after, when the directory is known and can be removed again; it is not
/// lost.
#[cfg(unix)]
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
        SIGTERM => Some("SIGTERM"),
        #[cfg(unix)]
        SIGHUP => Some("SIGHUP"),
        _ => Some("SIGINT"),
    }
}

/// The exit status for a run a signal stopped: 130, whichever signal stopped it
/// (run.json's `aborted` names which), so scripts see one status for "stopped, results
/// kept".
pub fn exit_status() -> Option<i32> {
    stopped_by().map(|_| 130)
}
