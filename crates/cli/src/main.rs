//! The `naslab` command: argument parsing and wiring only.

mod args;
mod cmd;
mod interrupt;
mod output;
mod progress;
mod timestamp;

use clap::Parser;

fn main() {
    let cli = args::Cli::parse();
    if let Err(e) = cmd::dispatch(cli) {
        eprintln!("error: {e:#}");
        std::process::exit(interrupt::exit_status().unwrap_or(1));
    }
}
