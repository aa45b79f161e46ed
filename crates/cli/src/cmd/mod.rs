//! One module per subcommand.

#[cfg(target_os = "linux")]
mod alloc;
mod backends;
mod backup;
mod bigdir;
pub mod capture;
mod clean;
mod compare;
mod describe;
mod device;
mod docs;
mod fileserver;
pub(crate) mod frag;
mod ingest;
mod iozone;
#[cfg(target_os = "linux")]
mod lab;
mod list;
mod metrics;
mod protocol;
mod records;
mod report;
mod results;
mod run;
pub use run::OpsFailed;
mod sources;
mod sweep;

use crate::args::{Cli, Command};

use std::sync::Arc;

use crate::multi::Coordinator;

/// Runs the subcommand the user asked for.
pub fn dispatch(cli: Cli, coord: &Arc<dyn Coordinator>) -> anyhow::Result<()> {
    let run_opts = match &cli.command {
        Command::Run(a) => Some(&a.opts),
        Command::Fileserver(a) => Some(&a.opts),
        Command::Backup(a) => Some(&a.opts),
        Command::Iozone(a) => Some(&a.opts),
        Command::Ingest(a) => Some(&a.opts),
        Command::Bigdir(a) => Some(&a.opts),
        Command::Sweep(a) => Some(&a.opts),
        _ => None,
    };
    // Known before anything can fail, so a client that fails early still casts the
    // votes the others wait for.
    coord.share_files(run_opts.is_some_and(|o| o.shared_files));
    if coord.is_job() && run_opts.is_none() {
        anyhow::bail!(
            "only the workload commands (run, fileserver, backup, iozone, ingest, bigdir, sweep) run as a multi-client job under mpirun; start other commands without mpirun"
        );
    }
    coord.after_command(command(cli, coord))
}

/// The refusal of a command this system cannot run: what it needs, and what to do.
#[cfg(not(target_os = "linux"))]
fn not_here(command: &str, why: &str, instead: &str) -> anyhow::Error {
    anyhow::anyhow!("`naslab {command}` is not available on Windows: {why}; {instead}")
}

fn command(cli: Cli, coord: &Arc<dyn Coordinator>) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(a) => run::run(a, coord),
        Command::Clean(a) => clean::clean(a),
        Command::Report(a) => report::report(a),
        Command::Compare(a) => compare::compare(a),
        Command::Iozone(a) => iozone::iozone(a, coord),
        Command::Bigdir(a) => bigdir::bigdir(a, coord),
        Command::Ingest(a) => ingest::ingest(a, coord),
        Command::Fileserver(a) => fileserver::fileserver(a, coord),
        Command::Backup(a) => backup::backup(a, coord),
        Command::Frag(a) => frag::frag(a),
        #[cfg(target_os = "linux")]
        Command::Alloc(a) => alloc::alloc(a),
        #[cfg(target_os = "linux")]
        Command::Lab(a) => lab::lab(a),
        #[cfg(not(target_os = "linux"))]
        Command::Alloc(_) => Err(not_here(
            "alloc",
            "it times Linux's allocation calls (posix_fallocate) and reads the extents through FIEMAP, and its matrix makes Linux file systems on loop devices",
            "run it on Linux",
        )),
        #[cfg(not(target_os = "linux"))]
        Command::Lab(_) => Err(not_here(
            "lab",
            "it mounts Linux file systems on loop devices and starts Samba or nfs-ganesha",
            "start a lab on a Linux machine and give its smb:// URL, or a share mapped from it, as --target here",
        )),
        #[cfg(not(target_os = "linux"))]
        Command::Capture(_) => Err(not_here(
            "capture",
            "it records a program's file I/O through Linux's eBPF tracepoints or strace, which Windows has not",
            "record the application with Process Monitor and turn its CSV into a trace with `naslab import procmon` (docs/capture.md)",
        )),
        #[cfg(not(target_os = "linux"))]
        Command::Collector(_) => Err(not_here(
            "collector",
            "it keeps Linux's eBPF capture programs loaded",
            "record the application with Process Monitor and turn its CSV into a trace with `naslab import procmon` (docs/capture.md)",
        )),
        Command::List(a) => list::list(a),
        Command::Backends(a) => backends::backends(a),
        Command::Describe(a) => describe::describe_cmd(a),
        Command::ExportTrace(a) => describe::export(a),
        Command::Records(a) => records::records_cmd(a),
        #[cfg(target_os = "linux")]
        Command::Capture(a) => capture::capture_cmd(a),
        #[cfg(target_os = "linux")]
        Command::Collector(a) => capture::collector_cmd(a),
        Command::Import(a) => capture::import_cmd(a),
        Command::Completions(a) => docs::completions(a),
        Command::Man(a) => docs::man(a),
        Command::Results(a) => results::results(a),
        Command::Sweep(a) => sweep::sweep(*a, coord),
    }
}
