//! The `naslab` command: argument parsing and wiring only.

mod args;
mod cmd;
mod interrupt;
mod multi;
mod output;
mod progress;
mod timestamp;

use clap::Parser;

fn main() {
    let cli = args::Cli::parse();
    // Under mpirun (with the `mpi` feature) this process is one client of a job.
    let mpi = multi::init();
    if let Err(e) = cmd::dispatch(cli) {
        eprintln!("error: {e:#}");
        multi::end(mpi);
        std::process::exit(interrupt::exit_status().unwrap_or(1));
    }
    multi::end(mpi);
}
