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
    /// Replay traces, built-in workloads or a suite against a target and print the results table.
    Run(RunArgs),
    /// List the built-in suites and workloads and the traces in the trace directory.
    List(ListArgs),
    /// Print a workload's characteristics, computed from its trace (Table 1 of the NASPT paper).
    Describe(DescribeArgs),
    /// Write a built-in workload's trace to a file, for inspection or replay elsewhere.
    ExportTrace(ExportArgs),
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

/// How built-in workloads are generated.
#[derive(Args, Debug, Clone)]
pub struct GenArgs {
    /// Size relative to the published workload: multiplies bytes (file sizes, and so data
    /// ops); file counts stay. 0.01 runs the whole NAS suite in minutes.
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Seed for the generators' random choices (same seed and scale, same trace).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Where the user's own traces are found.
#[derive(Args, Debug, Clone)]
pub struct TraceDirArg {
    /// Directory of the user's own traces (*.jsonl, *.jsonl.zst), listed and run by name
    /// [default: $XDG_CONFIG_HOME/naslab/traces or ~/.config/naslab/traces]
    #[arg(long, value_name = "DIR")]
    pub trace_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Trace files to replay (.jsonl or .jsonl.zst), one workload each.
    #[arg(value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Run a suite of built-in workloads (see `naslab list`).
    #[arg(long)]
    pub suite: Option<String>,
    /// Run these workloads, by name: built-in ones or traces in the trace directory.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub workload: Vec<String>,
    #[command(flatten)]
    pub generate: GenArgs,
    #[command(flatten)]
    pub trace_dir: TraceDirArg,
    /// Iterations per workload, each on a freshly prepared file set; the figure is the median.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub batch: u32,
    /// Also drop the whole page cache (/proc/sys/vm/drop_caches) before measuring; needs root.
    #[arg(long)]
    pub drop_all_caches: bool,
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
pub struct ListArgs {
    #[command(flatten)]
    pub trace_dir: TraceDirArg,
}

#[derive(Args, Debug)]
pub struct DescribeArgs {
    /// A built-in workload's name, a trace in the trace directory, or a trace file's path.
    pub workload: String,
    #[command(flatten)]
    pub generate: GenArgs,
    #[command(flatten)]
    pub trace_dir: TraceDirArg,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// A built-in workload's name.
    pub workload: String,
    /// The file to write (compressed with zstd when it ends in .zst).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: PathBuf,
    #[command(flatten)]
    pub generate: GenArgs,
}

#[derive(Args, Debug)]
pub struct CleanArgs {
    /// The target whose naslab/ directory to remove.
    #[arg(long, short = 't', value_name = "DIR")]
    pub target: PathBuf,
}
