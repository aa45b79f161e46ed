//! `naslab capture` and `naslab import`: real workloads in, as naslab traces.

#[cfg(target_os = "linux")]
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::bail;
use clap::{Args, ValueEnum};
#[cfg(target_os = "linux")]
use naslab_capture::{CaptureOptions, DEFAULT_COLLECTOR_SOCKET, Via, capture, serve_collector};
use naslab_capture::{Format, ImportOptions, import};

#[cfg(target_os = "linux")]
#[derive(Args, Debug)]
pub struct CaptureArgs {
    /// Record operations on files under this directory, with paths relative to it
    /// [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The trace to write (compressed with zstd when it ends in .zst).
    #[arg(
        long,
        short = 'o',
        value_name = "TRACE",
        default_value = "capture.jsonl"
    )]
    pub output: PathBuf,
    /// The workload's name in the trace [default: the trace file's name].
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Also keep strace's own output in this file (strace only: with --via auto, asks
    /// for strace).
    #[arg(long, value_name = "FILE")]
    pub keep_log: Option<PathBuf>,
    /// How the command is followed: eBPF on the kernel's syscall tracepoints (root, a
    /// kernel with BTF), strace (ptrace; no root needed), or auto: eBPF when it can be
    /// loaded here, else strace, saying why.
    #[arg(long, value_enum, default_value_t = CaptureVia::Auto, value_name = "HOW")]
    pub via: CaptureVia,
    /// Capture through the collector kept loaded on this socket (`naslab collector`),
    /// and fail if none listens there [default: the one on /run/naslab/collector.sock
    /// when it listens, else eBPF loaded for this capture].
    #[arg(long, value_name = "SOCKET")]
    pub collector: Option<PathBuf>,
    /// The command to run, and its arguments (after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<OsString>,
}

/// `naslab collector [--socket PATH]`
#[cfg(target_os = "linux")]
#[derive(Args, Debug)]
pub struct CollectorArgs {
    /// Where captures reach the collector (a Unix socket only root may use).
    #[arg(long, value_name = "PATH", default_value = DEFAULT_COLLECTOR_SOCKET)]
    pub socket: PathBuf,
}

/// The collectors `naslab capture --via` chooses from.
#[cfg(target_os = "linux")]
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureVia {
    /// eBPF when it loads, else strace.
    Auto,
    /// eBPF programs on the kernel's syscall tracepoints.
    Ebpf,
    /// strace (ptrace).
    Strace,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportFormat {
    /// A log of `strace -f -ttt -T -yy -s 4096 -o LOG CMD` (see docs/capture.md).
    Strace,
    /// A dbench (NetBench) loadfile, like dbench's client.txt.
    Dbench,
    /// A fio iolog, version 2 or 3 (fio's write_iolog=).
    FioIolog,
    /// A Process Monitor CSV export (File > Save > CSV).
    Procmon,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The input's format.
    #[arg(value_enum)]
    pub format: ImportFormat,
    /// The file to import.
    pub input: PathBuf,
    /// The trace to write (compressed with zstd when it ends in .zst).
    #[arg(long, short = 'o', value_name = "TRACE")]
    pub output: PathBuf,
    /// The workload's name in the trace [default: the trace file's name].
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// strace: keep operations under this directory [default: the current directory];
    /// fio-iolog: file names under it become relative to it.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// dbench: how many clients replay the loadfile, each as its own stream in its own
    /// directory (client1 in paths becomes clientN).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub clients: u32,
    /// procmon: keep only this process's events (its Process Name, e.g. WINWORD.EXE).
    #[arg(long, value_name = "NAME")]
    pub process: Option<String>,
    /// procmon: the Windows directory that becomes the workload directory
    /// (e.g. 'C:\Users\me\Documents'); events outside it are left out
    /// [default: every path, without its drive letter].
    #[arg(long, value_name = "PATH")]
    pub windows_root: Option<String>,
}

/// The workload name a trace file's name gives: `build.jsonl.zst` → `build`.
fn workload_name(given: Option<String>, output: &Path) -> String {
    given.unwrap_or_else(|| {
        output
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.split('.').next())
            .filter(|n| !n.is_empty())
            .unwrap_or("captured")
            .to_string()
    })
}

/// `naslab capture [--root DIR] [-o TRACE] -- CMD ARGS...`
#[cfg(target_os = "linux")]
pub fn capture_cmd(args: CaptureArgs) -> anyhow::Result<()> {
    let root = match args.root {
        Some(r) => r,
        None => std::env::current_dir()?,
    };
    let opts = CaptureOptions {
        root,
        workload: workload_name(args.workload, &args.output),
        output: args.output,
        command: args.command,
        keep_log: args.keep_log,
        via: match args.via {
            CaptureVia::Auto => Via::Auto,
            CaptureVia::Ebpf => Via::Ebpf,
            CaptureVia::Strace => Via::Strace,
        },
        collector: args.collector,
    };
    crate::out_file::check(&opts.output, crate::out_file::Writing::Other)?;
    if let Some(log) = &opts.keep_log {
        crate::out_file::check(log, crate::out_file::Writing::Other)?;
    }
    let done = capture(&opts)?;
    if let Some(why) = &done.fallback {
        eprintln!("capturing with strace, not eBPF: {why}");
    }
    if let Some(why) = &done.kept_refused {
        eprintln!("not through the kept-loaded collector: {why}");
    }
    match &done.kept {
        Some(socket) => eprintln!(
            "collector: {} (kept loaded, {})",
            done.collector,
            socket.display()
        ),
        None => eprintln!("collector: {}", done.collector),
    }
    eprint!("{}", done.summary);
    eprintln!("trace written to {}", opts.output.display());
    if !done.status.success() {
        bail!(
            "the command ended with {}; the trace holds what it did until then",
            done.status
        );
    }
    Ok(())
}

/// `naslab collector [--socket PATH]`: in the foreground until stopped.
#[cfg(target_os = "linux")]
pub fn collector_cmd(args: CollectorArgs) -> anyhow::Result<()> {
    let socket = args.socket;
    // Stopped by a signal, it takes its socket away so that no capture finds it; the
    // programs are detached as the process ends (their descriptors close).
    {
        let socket = socket.clone();
        ctrlc::set_handler(move || {
            let _ = std::fs::remove_file(&socket);
            eprintln!("collector stopped");
            std::process::exit(0);
        })?;
    }
    serve_collector(
        &socket,
        || {
            eprintln!(
                "collector loaded and attached; captures run as root use it through {} (stop with Ctrl-C)",
                socket.display()
            )
        },
        |pid, held| eprintln!("capture by pid {pid} done, {:.3} s", held.as_secs_f64()),
    )?;
    Ok(())
}

/// `naslab import FORMAT FILE -o TRACE`
pub fn import_cmd(args: ImportArgs) -> anyhow::Result<()> {
    if args.clients == 0 {
        bail!("--clients must be at least 1");
    }
    let format = match args.format {
        ImportFormat::Strace => Format::Strace,
        ImportFormat::Dbench => Format::Dbench,
        ImportFormat::FioIolog => Format::FioIolog,
        ImportFormat::Procmon => Format::Procmon,
    };
    let opts = ImportOptions {
        workload: workload_name(args.workload, &args.output),
        root: args.root,
        clients: args.clients,
        process: args.process,
        windows_root: args.windows_root,
    };
    crate::out_file::check(&args.output, crate::out_file::Writing::Other)?;
    let summary = import(format, &args.input, &args.output, &opts)?;
    eprint!("{summary}");
    eprintln!("trace written to {}", args.output.display());
    Ok(())
}
