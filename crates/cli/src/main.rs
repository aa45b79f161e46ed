//! The `naslab` command: argument parsing and wiring only.

mod args;
mod cmd;
mod interrupt;
mod multi;
mod out_file;
mod output;
mod progress;
mod stdout;
mod timestamp;
mod values;

use clap::Parser;

fn main() {
    // Before anything else: a signal while a trace loads must not be lost.
    interrupt::install();
    let cli = args::Cli::parse();
    // Under mpirun (with the `mpi` feature) this process is one client of a job.
    let (coord, mpi) = multi::init();
    if let Err(e) = cmd::dispatch(cli, &coord) {
        // A reader that stopped reading (`| head`) ends the command quietly, as `cat`.
        if stdout::is_closed(&e) && interrupt::exit_status().is_none() {
            multi::end(mpi);
            return;
        }
        eprintln!("error: {}", naslab_trace::printable_lines(&message(&e)));
        multi::end(mpi);
        let failed_ops = e
            .chain()
            .any(|c| c.is::<cmd::OpsFailed>())
            .then_some(cmd::OpsFailed::EXIT_STATUS);
        std::process::exit(interrupt::exit_status().or(failed_ops).unwrap_or(1));
    }
    multi::end(mpi);
}

/// The error and its causes, joined by ": ", leaving out a cause whose text the message
/// already holds (many messages name their cause and say what to do after it).
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}
