//! One module per subcommand.

mod alloc;
mod backup;
mod bigdir;
pub mod capture;
mod clean;
mod compare;
mod describe;
mod device;
mod docs;
mod fileserver;
mod frag;
mod ingest;
mod iozone;
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

#[cfg(feature = "mpi")]
pub(crate) use run::run_dir::make_run_dir;
#[cfg(feature = "mpi")]
pub(crate) use run::write_view;
pub(crate) use run::View;

/// Runs the subcommand the user asked for.
pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    let run_opts = match &cli.command {
        Command::Run(a) => Some(&a.opts),
        Command::Fileserver(a) => Some(&a.opts),
        Command::Backup(a) => Some(&a.opts),
        Command::Iozone(a) => Some(&a.opts),
        Command::Ingest(a) => Some(&a.opts),
        Command::Bigdir(a) => Some(&a.opts),
        _ => None,
    };
    // Known before anything can fail, so a client that fails early still casts the
    // votes the others wait for.
    crate::multi::share_files(run_opts.is_some_and(|o| o.shared_files));
    if crate::multi::active() && run_opts.is_none() {
        anyhow::bail!("only the workload commands (run, fileserver, backup, iozone, ingest, bigdir) run as a multi-client job under mpirun; start other commands without mpirun");
    }
    crate::multi::after_command(command(cli))
}

fn command(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Clean(a) => clean::clean(a),
        Command::Report(a) => report::report(a),
        Command::Compare(a) => compare::compare(a),
        Command::Iozone(a) => iozone::iozone(a),
        Command::Bigdir(a) => bigdir::bigdir(a),
        Command::Ingest(a) => ingest::ingest(a),
        Command::Fileserver(a) => fileserver::fileserver(a),
        Command::Backup(a) => backup::backup(a),
        Command::Frag(a) => frag::frag(a),
        Command::Alloc(a) => alloc::alloc(a),
        Command::Lab(a) => lab::lab(a),
        Command::List(a) => list::list(a),
        Command::Describe(a) => describe::describe_cmd(a),
        Command::ExportTrace(a) => describe::export(a),
        Command::Records(a) => records::records_cmd(a),
        Command::Capture(a) => capture::capture_cmd(a),
        Command::Import(a) => capture::import_cmd(a),
        Command::Completions(a) => docs::completions(a),
        Command::Man(a) => docs::man(a),
        Command::Results(a) => results::results(a),
        Command::Sweep(a) => sweep::sweep(*a),
    }
}
