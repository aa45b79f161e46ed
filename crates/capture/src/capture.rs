//! `naslab capture`: runs a command, follows what it does under a root and turns it
//! into a trace. Two collectors give the same calls to one importer: eBPF programs on
//! the kernel's syscall tracepoints (root, a recent kernel), and strace, whose output is
//! read through a pipe as it comes (works without root, where ptrace is allowed).

use std::ffi::{CString, OsString};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use crate::builder::{Builder, Summary};
use crate::strace::{LineFault, StraceImporter, TRACED_CALLS};
use crate::{ImportError, tree};

/// What to capture.
#[derive(Debug, Clone)]
pub struct CaptureOptions {
    /// Ops under this directory are recorded, with paths relative to it.
    pub root: PathBuf,
    /// The program and its arguments.
    pub command: Vec<OsString>,
    /// The trace to write.
    pub output: PathBuf,
    /// The workload's name in the trace.
    pub workload: String,
    /// Also keep strace's raw output here (strace only).
    pub keep_log: Option<PathBuf>,
    /// Which collector follows the command.
    pub via: Via,
    /// The socket of a collector kept loaded (`naslab collector`) that eBPF capture
    /// must use; `None`: the one at the default socket when it listens, else eBPF
    /// loaded for this capture.
    pub collector: Option<PathBuf>,
}

/// The collector `naslab capture --via` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// eBPF when it can be loaded here, else strace.
    Auto,
    Ebpf,
    Strace,
}

/// What a capture made, and how the command ended.
pub struct Captured {
    pub summary: Summary,
    pub status: ExitStatus,
    /// The collector used: `ebpf` or `strace`.
    pub collector: &'static str,
    /// With `--via auto`, why eBPF was not used.
    pub fallback: Option<String>,
    /// The socket of the kept-loaded collector the capture went through, if one did.
    pub kept: Option<PathBuf>,
    /// Why a collector found at the default socket was not used.
    pub kept_refused: Option<String>,
}

/// The eBPF collector, loaded; or why it cannot be used here.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn load_ebpf() -> Result<crate::ebpf::Collector, String> {
    crate::ebpf::Collector::load()
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn load_ebpf() -> Result<std::convert::Infallible, String> {
    Err(X86_ONLY.into())
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
const X86_ONLY: &str = "the eBPF collector knows the system calls of x86_64 only";

/// The kept-loaded collector on `socket`, when one listens there.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn borrow_ebpf(socket: &Path) -> Result<Option<crate::ebpf::Collector>, String> {
    crate::ebpf::Collector::borrow(socket)
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn borrow_ebpf(_socket: &Path) -> Result<Option<std::convert::Infallible>, String> {
    Err(X86_ONLY.into())
}

/// Where `naslab collector` listens unless told otherwise, and where `naslab capture`
/// looks for one.
pub const DEFAULT_COLLECTOR_SOCKET: &str = "/run/naslab/collector.sock";

/// `naslab collector`: loads and attaches the eBPF programs once and lends them to
/// every capture through `socket`, one capture at a time, until the process is stopped.
/// `ready` is called once captures can connect; `served` after each, with the
/// capture's pid and how long it held the collector.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
pub fn serve_collector(
    socket: &Path,
    ready: impl FnOnce(),
    served: impl FnMut(i32, std::time::Duration),
) -> Result<(), ImportError> {
    let c = crate::ebpf::Collector::load().map_err(|why| {
        ImportError::Usage(format!("the eBPF collector cannot be loaded here: {why}"))
    })?;
    crate::ebpf::service::serve(c, socket, ready, served).map_err(ImportError::Usage)
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
pub fn serve_collector(
    _socket: &Path,
    _ready: impl FnOnce(),
    _served: impl FnMut(i32, std::time::Duration),
) -> Result<(), ImportError> {
    Err(ImportError::Usage(X86_ONLY.into()))
}

/// The strace options capture uses: every thread and child (`-f`), start times in µs
/// (`-ttt`), durations (`-T`), descriptors decoded to paths (`-yy`), threads' ends
/// (`-q` keeps the exit notices `-qq` would drop), paths whole
/// (`-s 4096`), and only the calls that matter, filtered in the kernel.
pub fn strace_args(log: &Path) -> Vec<OsString> {
    let calls: Vec<String> = TRACED_CALLS.iter().map(|c| format!("?{c}")).collect();
    let mut a: Vec<OsString> = [
        "-f",
        "-ttt",
        "-T",
        "-yy",
        "-q",
        "-s",
        "4096",
        "--seccomp-bpf",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    a.push("-e".into());
    a.push(format!("trace={}", calls.join(",")).into());
    a.push("-o".into());
    a.push(log.as_os_str().to_owned());
    a.push("--".into());
    a
}

/// Runs the command under strace and writes the trace.
pub fn capture(opts: &CaptureOptions) -> Result<Captured, ImportError> {
    if opts.command.is_empty() {
        return Err(ImportError::Usage(
            "no command to capture; give it after '--': naslab capture -- CMD ARGS...".into(),
        ));
    }
    let root = std::fs::canonicalize(&opts.root).map_err(|e| {
        ImportError::Usage(format!(
            "the root '{}' cannot be used: {e}; give an existing directory with --root",
            opts.root.display()
        ))
    })?;
    if !root.is_dir() {
        return Err(ImportError::Usage(format!(
            "the root '{}' is not a directory",
            root.display()
        )));
    }
    let out_abs = std::path::absolute(&opts.output).unwrap_or_else(|_| opts.output.clone());
    let out_abs = match (out_abs.parent(), out_abs.file_name()) {
        (Some(p), Some(n)) => std::fs::canonicalize(p)
            .map(|p| p.join(n))
            .unwrap_or(out_abs.clone()),
        _ => out_abs.clone(),
    };
    let mut except = vec![out_abs.clone()];
    if let Some(k) = &opts.keep_log {
        except.push(std::path::absolute(k).unwrap_or_else(|_| k.clone()));
    }
    if opts.via == Via::Ebpf && opts.keep_log.is_some() {
        return Err(ImportError::Usage(
            "--keep-log keeps strace's output: use it with --via strace".into(),
        ));
    }
    if opts.collector.is_some() && (opts.via == Via::Strace || opts.keep_log.is_some()) {
        return Err(ImportError::Usage(
            "--collector is eBPF's: leave out --via strace and --keep-log to use it".into(),
        ));
    }
    let socket = opts
        .collector
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_COLLECTOR_SOCKET));
    let mut kept = None;
    let mut kept_refused = None;
    // The tree is listed while the eBPF program loads (both before the command
    // starts): each takes milliseconds, and they use different CPUs.
    let (loaded, listing) = std::thread::scope(|s| {
        let lister = s.spawn(|| tree::list(&root, &except));
        // A collector kept loaded, when one listens: nothing to load. One named with
        // --collector must be there; one at the default socket that cannot be used is
        // passed over, saying why.
        // SAFETY: geteuid has no preconditions.
        let as_root = unsafe { libc::geteuid() } == 0;
        let borrowed = match opts.via {
            Via::Strace => Ok(None),
            _ if opts.keep_log.is_some() => Ok(None),
            // Only root may use a collector (and only root can run one): another user
            // passes over the default socket without a word.
            _ if !as_root && opts.collector.is_none() => Ok(None),
            _ => match borrow_ebpf(&socket) {
                Ok(None) if opts.collector.is_some() => Err(ImportError::Usage(format!(
                    "no collector listens on {}; start one with `naslab collector --socket {0}`, or leave out --collector",
                    socket.display()
                ))),
                Err(why) if opts.collector.is_some() => Err(ImportError::Usage(why)),
                Err(why) => {
                    kept_refused = Some(why);
                    Ok(None)
                }
                Ok(c) => Ok(c),
            },
        };
        let loaded = match borrowed {
            Err(e) => Err(e),
            Ok(Some(c)) => {
                kept = Some(socket.clone());
                Ok((Some(c), None))
            }
            Ok(None) => match opts.via {
                Via::Strace => Ok((None, None)),
                _ if opts.keep_log.is_some() => Ok((
                    None,
                    Some("--keep-log asks for strace's output".to_string()),
                )),
                Via::Ebpf => load_ebpf().map(|c| (Some(c), None)).map_err(|why| {
                    ImportError::Usage(format!(
                        "the eBPF collector cannot be used here: {why}; use --via strace"
                    ))
                }),
                Via::Auto => match load_ebpf() {
                    Ok(c) => Ok((Some(c), None)),
                    Err(why) => Ok((None, Some(why))),
                },
            },
        };
        let listing = lister
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the listing thread panicked")));
        (loaded, listing)
    });
    let (ebpf, fallback) = loaded?;
    let collector = if ebpf.is_some() { "ebpf" } else { "strace" };
    let listing = listing.map_err(|e| ImportError::Read {
        path: root.clone(),
        source: e,
    })?;
    let mut b = Builder::new(
        &opts.workload,
        &format!(
            "naslab {} capture ({collector}) of: {}",
            env!("CARGO_PKG_VERSION"),
            opts.command
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        ),
    )?;
    b.set_snapshot(listing.entries);
    for _ in 0..listing.left_out {
        b.skip("entries of the tree before the run that are no file or directory (symbolic links, devices)");
    }
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    if let Some(c) = ebpf {
        let mut imp = StraceImporter::new(&root);
        let (status, lost, detaching) = c.run(&opts.command, |p| imp.parsed(p, &mut b))?;
        if lost > 0 {
            b.warn(format!(
                "{lost} system calls were lost (the kernel's ring buffer was full while naslab fell behind): the trace misses them; capture again, or with --via strace"
            ));
        }
        imp.finish(&mut b);
        let summary = b.finish(&opts.output);
        detaching.wait();
        let summary = summary?;
        return Ok(Captured {
            summary,
            status,
            collector,
            fallback,
            kept,
            kept_refused,
        });
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    if let Some(never) = ebpf {
        match never {}
    }

    let dir = tempfile::tempdir().map_err(|e| {
        ImportError::Usage(format!(
            "cannot make a temporary directory: {e}; set TMPDIR"
        ))
    })?;
    let fifo = dir.path().join("strace.pipe");
    let c = CString::new(fifo.as_os_str().as_bytes())
        .map_err(|_| ImportError::Usage("bad temporary path".into()))?;
    // SAFETY: c is a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(ImportError::Usage(format!(
            "cannot make a pipe for strace's output: {}",
            std::io::Error::last_os_error()
        )));
    }
    let mut child = Command::new("strace")
        .args(strace_args(&fifo))
        .args(&opts.command)
        .spawn()
        .map_err(|e| {
            ImportError::Usage(if e.kind() == std::io::ErrorKind::NotFound {
                "strace is not installed; install it (apt-get install strace) to capture"
                    .to_string()
            } else {
                format!("cannot start strace: {e}")
            })
        })?;
    // If strace dies before it opens the pipe, the blocked open below is released by
    // a writer of our own once strace has ended.
    let waiter = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            let status = child.wait();
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags_nonblock()
                .open(&fifo);
            status
        })
    };
    let file = std::fs::File::open(&fifo).map_err(|e| ImportError::Read {
        path: fifo.clone(),
        source: e,
    })?;
    let mut keep = match &opts.keep_log {
        Some(p) => Some(std::io::BufWriter::new(
            naslab_trace::create_output(p)
                .map_err(|e| ImportError::Write(format!("{}: {e}", p.display())))?,
        )),
        None => None,
    };
    let mut imp = StraceImporter::new(&root);
    let mut input = BufReader::with_capacity(1 << 20, file);
    let mut buf = Vec::new();
    let mut n = 0u64;
    let mut fault = None;
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                fault = Some(ImportError::Read {
                    path: fifo.clone(),
                    source: e,
                });
                break;
            }
        }
        n += 1;
        if let Some(k) = keep.as_mut() {
            let _ = k.write_all(&buf);
        }
        if fault.is_some() {
            continue;
        }
        let text = String::from_utf8_lossy(&buf);
        if let Err(f) = imp.line(&text, &mut b) {
            // Keep draining the pipe so the command is not blocked, then report.
            fault = Some(match f {
                LineFault::Text(m) => ImportError::Line {
                    path: PathBuf::from("(strace output)"),
                    line: n,
                    message: m,
                },
                LineFault::Import(e) => e,
            });
        }
    }
    let status = waiter
        .join()
        .map_err(|_| ImportError::Usage("the strace waiter failed".into()))?
        .map_err(|e| ImportError::Usage(format!("strace: {e}")))?;
    if let Some(k) = keep.as_mut() {
        let _ = k.flush();
    }
    if let Some(f) = fault {
        return Err(f);
    }
    if n == 0 && !status.success() {
        return Err(ImportError::Usage(format!(
            "strace wrote nothing and ended with {status}; check that the command exists and that ptrace is allowed here (in a container, run it with the SYS_PTRACE capability)"
        )));
    }
    imp.finish(&mut b);
    let summary = b.finish(&opts.output)?;
    Ok(Captured {
        summary,
        status,
        collector,
        fallback,
        kept,
        kept_refused,
    })
}

trait NonBlock {
    fn custom_flags_nonblock(&mut self) -> &mut Self;
}

impl NonBlock for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NONBLOCK)
    }
}
