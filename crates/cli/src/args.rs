//! The command line, as clap sees it: raw flag values, validated in `cmd`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Measures NAS and file-system performance the way users feel it.
#[derive(Parser, Debug)]
#[command(name = "naslab", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Replay traces against a target and print the results table.
    Run(RunArgs),
    /// Remove everything naslab made under a target (its marked naslab/ directory).
    Clean(CleanArgs),
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendName {
    /// The kernel's file API on a local directory or mounted share.
    Posix,
    /// No I/O at all: measures naslab itself.
    Null,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheArg {
    /// Write back and drop the prepared files' cached pages before measuring.
    Drop,
    /// Leave the client cache as preparation left it.
    Keep,
    /// Bypass the client cache (O_DIRECT); unaligned ops fall back to the cache.
    Direct,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Trace files to replay (.jsonl or .jsonl.zst), one workload each.
    #[arg(value_name = "TRACE", required = true)]
    pub traces: Vec<PathBuf>,
    /// The directory to run in: a mounted share or a local disk. naslab works in TARGET/naslab/.
    #[arg(long, short = 't', value_name = "DIR")]
    pub target: Option<PathBuf>,
    /// Which backend speaks to the target.
    #[arg(long, value_enum, default_value = "posix")]
    pub backend: BackendName,
    /// Pacing: afap (as fast as possible), original (the trace's timestamps) or delay:DURATION.
    #[arg(long, default_value = "afap", value_name = "MODE")]
    pub pace: String,
    /// Client cache handling between preparation and the measured phase.
    #[arg(long, value_enum, default_value = "drop")]
    pub cache: CacheArg,
    /// Same as --cache direct.
    #[arg(long, conflicts_with = "cache")]
    pub direct: bool,
    /// Where run directories are made.
    #[arg(long, default_value = "naslab-results", value_name = "DIR")]
    pub out: PathBuf,
    /// A name for this run (the run directory is OUT/LABEL/TIMESTAMP).
    #[arg(long, default_value = "run")]
    pub label: String,
    /// Do not keep the per-op records (saves disk on very long runs).
    #[arg(long)]
    pub no_records: bool,
    /// Stop at the first failed op instead of counting failures.
    #[arg(long)]
    pub stop_on_error: bool,
    /// Print the results as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct CleanArgs {
    /// The target whose naslab/ directory to remove.
    #[arg(long, short = 't', value_name = "DIR")]
    pub target: PathBuf,
}
