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
        eprintln!("error: {}", message(&e));
        std::process::exit(interrupt::exit_status().unwrap_or(1));
    }
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
