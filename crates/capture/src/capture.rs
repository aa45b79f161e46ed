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
}

/// The eBPF collector, loaded; or why it cannot be used here.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn load_ebpf() -> Result<crate::ebpf::Collector, String> {
    crate::ebpf::Collector::load()
}

#[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
fn load_ebpf() -> Result<std::convert::Infallible, String> {
    Err("the eBPF collector knows the system calls of x86_64 only".into())
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
    // The tree is listed while the eBPF program loads (both before the command
    // starts): each takes milliseconds, and they use different CPUs.
    let (loaded, listing) = std::thread::scope(|s| {
        let lister = s.spawn(|| tree::list(&root, &except));
        let loaded = match opts.via {
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
