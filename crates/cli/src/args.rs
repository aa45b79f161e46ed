//! The command line, as clap sees it: each flag typed, so a bad value is refused while
//! parsing, naming the flag; what depends on several flags is checked in `cmd`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use naslab_engine::backend::ClientProfile;
use naslab_engine::{DataMode, Pacing};
#[cfg(target_os = "linux")]
use naslab_lab::ServerKind;
#[cfg(target_os = "linux")]
use naslab_layout::{FsKind, Pattern};
use naslab_targets::url::{DEFAULT_SMB_IN_FLIGHT, MAX_SMB_IN_FLIGHT, SmbEncrypt};
use naslab_workload::synthetic::iozone::Test;
use naslab_workload::synthetic::openloop::Arrivals;

use crate::values::{self, Duration};

/// The version, and whether this binary can be one client of a multi-client job.
#[cfg(feature = "mpi")]
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (with MPI: runs as one client of a multi-client job under mpirun)"
);
#[cfg(not(feature = "mpi"))]
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (without MPI: built without the mpi feature, it cannot run as a client of a multi-client job)"
);

/// What `--help` says about multi-client jobs.
#[cfg(feature = "mpi")]
const MPI_NOTE: &str = "Multi-client jobs: this binary has MPI; `mpirun -n N naslab run ...` runs N clients as one job (docs/multi-client.md).";
#[cfg(not(feature = "mpi"))]
const MPI_NOTE: &str = "Multi-client jobs: this binary has no MPI (build it with `cargo build --release -p naslab --features mpi` to run under mpirun; docs/multi-client.md).";

/// Measures NAS and file-system performance the way users feel it.
#[derive(Parser, Debug)]
#[command(name = "naslab", version = VERSION, about, long_about = None, after_help = MPI_NOTE)]
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
    /// List the backends this build has, how a run picks each, and the ops each can do.
    Backends(BackendsArgs),
    /// Print a workload's characteristics, computed from its trace (Table 1 of the NASPT paper).
    Describe(DescribeArgs),
    /// Write a built-in workload's trace to a file, for inspection or replay elsewhere.
    ExportTrace(ExportArgs),
    /// Write a run's op records (or any trace) as JSON Lines, or convert between JSON
    /// Lines and the binary encoding, losslessly.
    Records(RecordsArgs),
    /// Remove everything naslab made under a target (its marked naslab/ directory).
    Clean(CleanArgs),
    /// Rebuild a run's report from its run directory: HTML (default), JSON, CSV, Markdown or the table.
    Report(ReportArgs),
    /// Compare runs: each workload's throughput relative to a baseline run (NASPT Table 2).
    Compare(CompareArgs),
    /// iozone-style tests: a matrix of file sizes by record sizes, or throughput mode.
    Iozone(IozoneArgs),
    /// Make N entries in one directory, listing it every K (a big-directory test).
    Bigdir(BigDirArgs),
    /// Write TOTALFILES files, FILESPERDIR to a directory (an NFS-style ingest).
    Ingest(IngestArgs),
    /// Many connections writing, then reading back, their own files (a file-server test).
    Fileserver(FileServerArgs),
    /// Files written by many connections at once, then backed up by one reader.
    Backup(BackupArgs),
    /// Show how files lie on disk: extents as filefrag counts them, ideal extents, layout score.
    Frag(FragArgs),
    /// Time Samba's allocation patterns and count the extents each leaves, in a directory or
    /// (as root, with --matrix) on fresh ext4, ext3, xfs and btrfs loop images.
    #[cfg(target_os = "linux")]
    Alloc(AllocArgs),
    /// Not available on Windows (Linux only).
    #[cfg(not(target_os = "linux"))]
    Alloc(Unavailable),
    /// A test NAS on this machine (loop-mounted file system served by Samba or
    /// nfs-ganesha on 127.0.0.1): up, status, down, and a matrix of server settings.
    #[cfg(target_os = "linux")]
    Lab(LabArgs),
    /// Not available on Windows (Linux only).
    #[cfg(not(target_os = "linux"))]
    Lab(Unavailable),
    /// A capacity sweep: load points of more and more users (copies of a workload) or of
    /// a higher offered op rate, each open-loop, until a response-time cap, errors or
    /// saturation stop it; prints the curve, its knee and overall response time.
    Sweep(Box<SweepArgs>),
    /// Run a command and record its file I/O under a directory as a trace (through eBPF
    /// on the kernel's syscall tracepoints, or strace).
    #[cfg(target_os = "linux")]
    Capture(crate::cmd::capture::CaptureArgs),
    /// Not available on Windows (Linux only).
    #[cfg(not(target_os = "linux"))]
    Capture(Unavailable),
    /// Keep the eBPF capture collector loaded between captures, in the foreground until
    /// stopped: each `naslab capture` then borrows it instead of loading its own.
    #[cfg(target_os = "linux")]
    Collector(crate::cmd::capture::CollectorArgs),
    /// Not available on Windows (Linux only).
    #[cfg(not(target_os = "linux"))]
    Collector(Unavailable),
    /// Turn an strace log, a dbench loadfile, a fio iolog or a Process Monitor CSV into a trace.
    Import(crate::cmd::capture::ImportArgs),
    /// Print a shell completion script: bash, zsh or fish.
    Completions(CompletionsArgs),
    /// Print naslab's man page (roff), or write one page per command into a directory.
    Man(ManArgs),
    /// List the runs under a results directory (their run.json files): when, which
    /// device, label, workloads.
    Results(ResultsArgs),
}

/// The arguments of a command this system cannot run: taken as they come, so that the
/// command is refused with the reason rather than as unknown.
#[cfg(not(target_os = "linux"))]
#[derive(Args, Debug)]
pub struct Unavailable {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub rest: Vec<std::ffi::OsString>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
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
    #[arg(long, default_value_t = 1.0, value_parser = values::scale)]
    pub scale: f64,
    /// Seed for the generators' random choices (same seed and scale, same trace).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// Where the user's own traces are found.
#[derive(Args, Debug, Clone)]
pub struct TraceDirArg {
    /// Directory of the user's own traces (*.jsonl, *.nbt, either .zst), listed and run by name
    /// [default: $XDG_CONFIG_HOME/naslab/traces or ~/.config/naslab/traces]
    #[arg(long, value_name = "DIR")]
    pub trace_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Trace files to replay, one workload each: JSON Lines (.jsonl) or naslab's binary
    /// encoding (.nbt, read faster), either compressed with zstd (.zst).
    #[arg(value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// Run a suite of built-in workloads: naspt or iometer (see `naslab list`).
    #[arg(long, value_parser = values::suite)]
    pub suite: Option<String>,
    /// Run these workloads, by name: built-in ones or traces in the trace directory.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub workload: Vec<String>,
    #[command(flatten)]
    pub generate: GenArgs,
    #[command(flatten)]
    pub trace_dir: TraceDirArg,
    #[command(flatten)]
    pub opts: RunOpts,
}

/// How any workload runs and where its results go: shared by `run` and the workload
/// commands (iozone, bigdir, ingest, fileserver, backup).
#[derive(Args, Debug, Clone)]
pub struct RunOpts {
    /// Where to run: a directory (a mounted share or a local disk), or a share spoken to
    /// directly, smb://[user@]host[:port]/share[/path] or nfs://host[:port]/export[/path].
    /// naslab works in TARGET/naslab/.
    #[arg(long, short = 't', value_name = "DIR|URL")]
    pub target: Option<PathBuf>,
    /// In a multi-client job (mpirun), each client's own target instead of --target:
    /// repeat once per client, in rank order (the URLs `lab up --client-links` prints,
    /// each through its own emulated link; or each client's own path to a NAS).
    #[arg(long = "client-target", value_name = "DIR|URL")]
    pub client_targets: Vec<PathBuf>,
    /// The link a lab emulates in front of the target: set by `lab matrix`; `run` finds
    /// it in the state of the lab under --lab-dir whose URL the target is.
    #[arg(skip)]
    pub lab_link: Option<naslab_results::EmulatedLink>,
    /// The SMB password of the lab a `lab matrix` run is against (its generated one),
    /// used before NASLAB_SMB_PASSWORD or a prompt.
    #[arg(skip)]
    pub lab_password: Option<String>,
    /// The directory holding the labs' state (`naslab lab --lab-dir`): a run against a
    /// lab's URL records the link that lab emulates.
    #[arg(long, default_value = "/var/tmp/naslab-lab", value_name = "DIR")]
    pub lab_dir: PathBuf,
    /// Send what this client would besides the workload's requests: `windows` adds the
    /// SMB redirector's preallocation hints (1-byte writes ahead of appends), reported
    /// apart from the workload's figures.
    #[arg(long, value_name = "PROFILE")]
    pub client_profile: Option<ClientProfile>,
    /// smb:// and nfs:// targets: how long a request waits for its reply before the
    /// server counts as gone and the run stops (e.g. 30s, 2m).
    #[arg(long, default_value = "30s", value_name = "DURATION", value_parser = values::io_timeout)]
    pub io_timeout: Duration,
    /// nfs:// (NFSv3) and smb:// targets: how long a request waits for its reply before
    /// its connection is taken for broken (a path that holds what is sent, a black hole),
    /// made again (SMB: signed in again, durable handles claimed back), and the request
    /// sent again, until --io-timeout from the op's start is spent, as an NFS client's
    /// retransmission timeout (timeo). Unset, a request waits the I/O timeout.
    #[arg(long, value_name = "DURATION", value_parser = values::io_timeout)]
    pub retrans_timeout: Option<Duration>,
    /// smb:// targets: required (encrypt, even when the server only allows it; refuse a
    /// server that cannot), desired (encrypt when the server wants it) or off (never
    /// offer encryption).
    #[arg(long, default_value = "desired", value_name = "MODE")]
    pub smb_encrypt: SmbEncrypt,
    /// smb:// targets: how many READs or WRITEs one op keeps in flight at most (1 to
    /// 16). A read of more than 2 MiB, or a write of more than 512 KiB, is split into
    /// that many requests sent at once, none under 512 KiB; 1 sends one request at a
    /// time, each as large as the server allows. A read of 2 MiB or less is one request
    /// either way.
    #[arg(long, default_value_t = DEFAULT_SMB_IN_FLIGHT, value_name = "N",
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_SMB_IN_FLIGHT as u64))]
    pub smb_in_flight: usize,
    /// Which backend speaks to the target: posix (the system's files; on Windows the
    /// windows backend) or null (no I/O). smb and nfs are chosen by their URLs
    /// (`naslab backends` lists them all).
    #[arg(long, value_name = "NAME", default_value = "posix", value_parser = values::backend_name)]
    pub backend: BackendName,
    /// With --backend null: every op takes this long (e.g. 100us), a server of known
    /// speed against which pacing and queueing figures can be checked (docs/capacity.md).
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration)]
    pub null_service_time: Option<Duration>,
    /// With --backend null: the Nth op of each connection (counted from 0) takes DURATION
    /// longer, e.g. 1s@2000: a server's stall, to see what it does to the ops behind it.
    #[arg(long, value_name = "DURATION@N", value_parser = values::stall)]
    pub null_stall: Option<(Duration, u64)>,
    /// Iterations per workload, each on a freshly prepared file set; the figure is the median.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub batch: u32,
    /// Pacing: afap (as fast as possible), original (the trace's timestamps) or delay:DURATION.
    #[arg(long, default_value = "afap", value_name = "MODE")]
    pub pace: Pacing,
    /// Client cache handling between preparation and the measured phase
    /// [default: drop; keep for iozone, as iozone itself does].
    #[arg(long, value_enum)]
    pub cache: Option<CacheArg>,
    /// Same as --cache direct.
    #[arg(long, conflicts_with = "cache")]
    pub direct: bool,
    /// Also drop the whole page cache (/proc/sys/vm/drop_caches) before measuring; needs root.
    #[arg(long)]
    pub drop_all_caches: bool,
    /// End each measured phase this long after its first op (e.g. 30s), skipping the rest. In
    /// a multi-client job (mpirun) it counts from the clients' common start, so every client
    /// stops at the same moment.
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration)]
    pub time_limit: Option<Duration>,
    /// Where run directories are made.
    #[arg(long, default_value = "naslab-results", value_name = "DIR")]
    pub out: PathBuf,
    /// A name for this run (the run directory is OUT/LABEL/TIMESTAMP).
    #[arg(long, default_value = "run")]
    pub label: String,
    /// Do not keep the per-op records (saves disk on very long runs).
    #[arg(long)]
    pub no_records: bool,
    /// Write the op records and the report's pass over them after each measured phase,
    /// not while it runs on CPUs the streams leave idle (docs/architecture.md): nothing
    /// but the workload runs during the phase, and the run takes longer.
    #[arg(long, conflicts_with = "no_records")]
    pub records_after_phase: bool,
    /// In a multi-client job (mpirun): every client works on one file set in
    /// <target>/naslab, prepared once by client 0, instead of each on its own.
    #[arg(long)]
    pub shared_files: bool,
    /// Stop at the first failed op instead of counting failures.
    #[arg(long)]
    pub stop_on_error: bool,
    /// Replay the streams without the order the trace implies between them (a name made
    /// in one stream before another uses it, ...; docs/capture.md): each stream as fast
    /// as its pacing allows, whatever the others have done.
    #[arg(long)]
    pub no_ordering: bool,
    /// Exit 0 when ops failed (they are still counted, by errno, apart from the others'
    /// latencies); without it a run whose ops failed exits with status 3.
    #[arg(long)]
    pub tolerate_errors: bool,
    /// What written blocks hold: random (every 4 KiB block unique and incompressible),
    /// zero, compress:PCT (compresses by about PCT %) or dedupe:PCT (PCT % of blocks
    /// duplicates); see docs/data.md.
    #[arg(long, default_value = "random", value_name = "MODE")]
    pub data: DataMode,
    /// Write self-describing blocks, check every read, read everything back at the end,
    /// and fail if any block is not what was written.
    #[arg(long)]
    pub verify: bool,
    /// Hold paced issue times under load: stream threads under SCHED_FIFO (at nice -20
    /// when their ops leave no time to sleep), each pinned to one of the CPUs idlest just
    /// before the start, memory locked (needs root or CAP_SYS_NICE; what is refused is
    /// said).
    #[arg(long)]
    pub realtime: bool,
    /// Print the results as JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub device: DeviceArgs,
}

#[derive(Args, Debug)]
pub struct BackendsArgs {
    /// Print the list as JSON.
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
pub struct RecordsArgs {
    /// A run's op records (`<workload>.ops.nbt.zst`) or any trace, JSON Lines or binary,
    /// plain or zstd-compressed.
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// Write here instead of standard output: binary when the name ends in .nbt or
    /// .nbt.zst, else JSON Lines; compressed with zstd when it ends in .zst.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CleanArgs {
    /// The target whose naslab/ directory to remove: a directory, or a share spoken to
    /// directly (smb://[user@]host[:port]/share[/path], nfs://host[:port]/export[/path]).
    #[arg(long, short = 't', value_name = "DIR|URL")]
    pub target: PathBuf,
}

#[derive(Args, Debug)]
pub struct FragArgs {
    /// Files and directories to examine (directories are walked, staying on their file
    /// system; on Windows, entering no reparse point).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// How many of a directory's worst files to list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub top: usize,
    /// Read the mapping as it is, without writing dirty data back first (delayed
    /// allocations then show as delalloc).
    #[arg(long)]
    pub no_sync: bool,
}

#[cfg(target_os = "linux")]
#[derive(Args, Debug)]
pub struct AllocArgs {
    /// Where the pattern files go [default: the current directory]; with --matrix, where
    /// the temporary loop images go [default: $TMPDIR].
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Each file's size in bytes (k, m, g, t suffixes, powers of 1024); the default is the seed's
    /// client program, 10,000 blocks of 9123 bytes.
    #[arg(long, default_value = "91230000", value_name = "BYTES", value_parser = values::size)]
    pub size: u64,
    /// The testbench's block: each step of skip, clear, fallocate, fallocate+1 and
    /// unbuffered covers one.
    #[arg(long, default_value = "9123", value_name = "BYTES", value_parser = values::size)]
    pub blksize: u64,
    /// How far beyond the data the hint patterns' 1-byte writes run [default: 15M].
    #[arg(long, value_name = "BYTES", value_parser = values::size)]
    pub hint_lead: Option<u64>,
    /// Patterns to run: skip, clear, fallocate, fallocate+1, unbuffered, hints, hints-fix [default: all].
    #[arg(long, value_delimiter = ',', value_name = "P,...")]
    pub pattern: Vec<Pattern>,
    /// Run every pattern on fresh loop images of each file system (needs root).
    #[arg(long)]
    pub matrix: bool,
    /// The matrix's file systems: ext4, ext4-nodelalloc, ext3, xfs, btrfs [default: all].
    #[arg(long, value_delimiter = ',', value_name = "FS,...", value_parser = values::made_fs)]
    pub fs: Vec<FsKind>,
    /// The matrix's image size [default: max(512M, 2 x size + 256M)].
    #[arg(long, value_name = "BYTES", value_parser = values::size)]
    pub image_size: Option<u64>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct IozoneArgs {
    /// Tests to run: write, rewrite, read, reread, randread, randwrite, bkwdread,
    /// recrewrite, strideread, mixed.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "write,rewrite,read,reread,randread,randwrite,bkwdread,recrewrite,strideread,mixed",
        value_parser = values::iozone_test
    )]
    pub tests: Vec<Test>,
    /// Smallest file size of the matrix.
    #[arg(long, default_value = "64k", value_parser = values::size)]
    pub min_file: u64,
    /// Largest file size of the matrix (powers of two in between).
    #[arg(long, default_value = "16m", value_parser = values::size)]
    pub max_file: u64,
    /// Smallest record size.
    #[arg(long, default_value = "4k", value_parser = values::size)]
    pub min_record: u64,
    /// Largest record size (never more than the file).
    #[arg(long, default_value = "16m", value_parser = values::size)]
    pub max_record: u64,
    /// Throughput mode: this many streams, each on its own file of --size in --record transfers.
    #[arg(long, value_name = "N")]
    pub throughput: Option<u32>,
    /// Throughput mode: each stream's file size.
    #[arg(long, default_value = "100m", value_parser = values::size)]
    pub size: u64,
    /// Throughput mode: the record size.
    #[arg(long, default_value = "64k", value_parser = values::size)]
    pub record: u64,
    /// Seed for the random tests' offsets.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[command(flatten)]
    pub opts: RunOpts,
}

#[derive(Args, Debug)]
pub struct BigDirArgs {
    /// Entries to make in the directory.
    pub entries: u32,
    /// List the directory after every this many entries.
    #[arg(default_value_t = 1)]
    pub every: u32,
    /// Make empty files instead of subdirectories.
    #[arg(long)]
    pub files: bool,
    #[command(flatten)]
    pub opts: RunOpts,
}

#[derive(Args, Debug)]
pub struct IngestArgs {
    /// Bytes per write (K, M, G suffixes as powers of 1024).
    #[arg(value_parser = values::size)]
    pub block_size: u64,
    /// Writes per file.
    pub blocks_per_file: u64,
    /// Files in all.
    pub total_files: u64,
    /// Files per directory (leave out with --sweep).
    #[arg(required_unless_present = "sweep")]
    pub files_per_dir: Option<u64>,
    /// Iterations (each on a fresh directory); the same as --batch.
    #[arg(long, short = 'i', default_value_t = 1)]
    pub iterations: u32,
    /// Run once per files-per-directory value, e.g. 5000,1000,100,10.
    #[arg(long, value_delimiter = ',')]
    pub sweep: Vec<u64>,
    #[command(flatten)]
    pub opts: RunOpts,
}

#[derive(Args, Debug)]
pub struct FileServerArgs {
    /// Connections, each a stream with its own files.
    #[arg(long, short = 'c', default_value_t = 590)]
    pub connections: u32,
    /// Files each connection writes and reads (4 KB to 2 MB in turn).
    #[arg(long, short = 'f', default_value_t = 10)]
    pub files: u32,
    /// Bytes per write and read.
    #[arg(long, default_value = "4k", value_parser = values::size)]
    pub record: u64,
    /// Which phases to measure.
    #[arg(long, value_enum, default_value = "both")]
    pub phase: FileServerPhase,
    #[command(flatten)]
    pub opts: RunOpts,
}

/// `naslab sweep`: a users sweep (`--workload W --users 1,2,4`) or a rate sweep
/// (`--rate 1000,2000` or `--mix ...`), the loads listed or stepped (`--start --step
/// --until`); docs/capacity.md.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Users sweep: the workload each user runs (a built-in one, a trace in the trace
    /// directory, or a trace file), each user on its own copy of its file set; several
    /// (A,B) run at once by each user.
    #[arg(long, value_delimiter = ',', value_name = "NAME[,NAME]")]
    pub workload: Vec<String>,
    /// A sweep of a source document's scenario: `office` (seed 003: up to 30
    /// workstations, each running OfficeProductivity and FileCopyToNAS at once, users
    /// 1,2,4,8,16,30); `fileserver` (seed 000: each user one connection of the file
    /// server, writing then reading back its 10 files of 4 KB to 2 MB in 4 KB records,
    /// users 1,2,4,...,512,590, each at --user-rate, 100 ops/s unless given); `ingest`
    /// (seed 001: each user writing 100 files of 16 x 64 KB, 100 to a directory, users
    /// 1,2,4,...,32, each at --user-rate, 100 ops/s unless given). --scale scales the files
    /// per user; loads, rates and workloads can be overridden by the flags.
    #[arg(long, value_name = "NAME", value_parser = ["office", "fileserver", "ingest"])]
    pub preset: Option<String>,
    /// Users sweep: each user's streams ask for their ops at this many ops/s each
    /// (spaced as --arrivals), replacing the workload's own timing; what a workload
    /// without timing (every op at one instant) needs to be swept by users.
    #[arg(long, value_name = "OPS")]
    pub user_rate: Option<f64>,
    /// Users sweep: the number of users at each point, e.g. 1,2,4,8.
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    pub users: Vec<u32>,
    /// Rate sweep: the offered ops per second at each point, e.g. 1000,2000,4000.
    #[arg(long, value_delimiter = ',', value_name = "R,R,...")]
    pub rate: Vec<f64>,
    /// Stepped loads instead of a list: the first point's load.
    #[arg(long, value_name = "LOAD")]
    pub start: Option<f64>,
    /// Stepped loads: added to the load (e.g. 2) or multiplying it (e.g. x2) at each point.
    #[arg(long, value_name = "N|xF")]
    pub step: Option<String>,
    /// Stepped loads: the highest load to run; without it the sweep goes on until a stop
    /// rule fires (at most 64 points).
    #[arg(long, value_name = "LOAD")]
    pub until: Option<f64>,
    /// Rate sweep: what each op is, KEY=VALUE pairs: read (percent of reads, the rest
    /// writes), block (bytes per op), file (the file they work in)
    /// [default: read=100,block=4k,file=64m].
    #[arg(long, value_name = "MIX")]
    pub mix: Option<String>,
    /// Rate sweep: connections (streams) the rate is spread over, each its own arrival
    /// process; an op waits for its connection's previous one. Under mpirun, per client.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub connections: u32,
    /// Rate sweep: how arrivals are spaced, poisson or uniform.
    #[arg(long, default_value = "poisson", value_name = "KIND")]
    pub arrivals: Arrivals,
    /// Rate sweep: how long each point is measured, after its warm-up.
    #[arg(long, default_value = "10s", value_name = "DURATION", value_parser = values::positive_duration)]
    pub point_time: Duration,
    /// The start of each point whose ops are run but not counted [default: 1s for rate
    /// points, 0 for users points].
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<Duration>,
    /// Users sweep: users start at random offsets within this span of each other.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub stagger: Duration,
    /// A response-time limit every point must meet, OP:pNN<=DURATION or OP:avg<=DURATION
    /// (OP an op type or all), e.g. read:p99<=50ms; the knee is the last load meeting it.
    #[arg(long, value_name = "CAP")]
    pub cap: Option<String>,
    /// A point is saturated when it achieves less than its offered rate by more than this
    /// percentage.
    #[arg(long, default_value_t = 10.0, value_name = "PCT")]
    pub saturation: f64,
    /// Run every point even after one failed the cap, had errors or saturated.
    #[arg(long)]
    pub keep_going: bool,
    /// Serve the sweep's figures as OpenMetrics (Prometheus) at http://ADDR/metrics while
    /// it runs, e.g. 127.0.0.1:9464 (port 0 picks a free one, printed at the start).
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub generate: GenArgs,
    #[command(flatten)]
    pub trace_dir: TraceDirArg,
    #[command(flatten)]
    pub opts: RunOpts,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileServerPhase {
    Write,
    Read,
    Both,
}

#[derive(Args, Debug)]
pub struct BackupArgs {
    /// Connections writing files at once before the backup.
    #[arg(long, default_value_t = 590)]
    pub writers: u32,
    /// Files each writer creates.
    #[arg(long, default_value_t = 5)]
    pub files: u32,
    /// Each file's size.
    #[arg(long, default_value = "1m", value_parser = values::size)]
    pub size: u64,
    /// The writers' record size.
    #[arg(long, default_value = "4k", value_parser = values::size)]
    pub record: u64,
    /// The backup's read size.
    #[arg(long, default_value = "1m", value_parser = values::size)]
    pub block: u64,
    #[command(flatten)]
    pub opts: RunOpts,
}

/// The formats `naslab report` writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    /// The self-contained HTML report (charts, access map, every transaction).
    Html,
    /// run.json's model.
    Json,
    /// One row per workload, iteration and op type.
    Csv,
    /// Markdown tables.
    Md,
    /// The terminal table.
    Table,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The run directory (OUT/LABEL/TIMESTAMP, holding run.json and the op records).
    #[arg(value_name = "RUN_DIR")]
    pub run_dir: PathBuf,
    /// What to write.
    #[arg(long, value_enum, default_value = "html")]
    pub format: ReportFormat,
    /// Where to write it [default: RUN_DIR/report.html for html, standard output otherwise].
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Rows of the HTML transaction list per iteration (later ops stay in the charts and records).
    #[arg(long, default_value_t = 2_000_000, value_name = "N")]
    pub max_rows: usize,
}

/// The formats `naslab compare` writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareFormat {
    /// A terminal table.
    Table,
    /// Markdown.
    Md,
    /// CSV: a ratio and an MB/s column per run.
    Csv,
    /// JSON.
    Json,
    /// A self-contained HTML page with the runs' charts overlaid.
    Html,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The run directories to compare.
    #[arg(value_name = "RUN_DIR", required = true)]
    pub runs: Vec<PathBuf>,
    /// The run the others are divided by: one of RUN_DIR (its path or last component),
    /// or another run directory [default: the first].
    #[arg(long, value_name = "RUN")]
    pub baseline: Option<String>,
    /// What to write.
    #[arg(long, value_enum, default_value = "table")]
    pub format: CompareFormat,
    /// Where to write it [default: standard output; for html, compare.html in the current directory].
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[cfg(target_os = "linux")]
#[derive(Args, Debug)]
pub struct LabArgs {
    #[command(subcommand)]
    pub command: LabCommand,
}

#[cfg(target_os = "linux")]
#[derive(Subcommand, Debug)]
pub enum LabCommand {
    /// Make and mount a file system, start its server on 127.0.0.1 and print the target URL (root).
    Up(LabUpArgs),
    /// Show the labs that are up: their URL, file system, server and processes.
    Status(LabWhere),
    /// Stop exactly what `lab up` started (by PID), unmount and detach (root).
    Down(LabDownArgs),
    /// Run the same workloads against each configuration in turn (up, run, layout, down)
    /// and compare throughput and the server-side file layout (root).
    Matrix(Box<LabMatrixArgs>),
    /// Break the path to a lab's server while a run goes on, and mend it: cut the link
    /// for a while, reset its connections, or restart the server (root). Returns once
    /// the path is whole again, saying what it did and when.
    Fault(LabFaultArgs),
}

#[cfg(target_os = "linux")]
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("fault").required(true).args(["cut", "black_hole", "reset", "restart_server"])))]
pub struct LabFaultArgs {
    /// Cut the link for this long (e.g. 3s): every connection through it is closed and
    /// new ones are refused until it is back. The lab needs a link (`lab up --link`).
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration)]
    pub cut: Option<Duration>,
    /// Black-hole the link for this long (e.g. 3s): what is sent through it either way
    /// is held, the connections stay open, then it all goes through. A client sees it
    /// only by its own timeouts. The lab needs a link.
    #[arg(long, value_name = "DURATION", value_parser = values::positive_duration)]
    pub black_hole: Option<Duration>,
    /// Close every connection through the link at once; new ones are accepted.
    #[arg(long)]
    pub reset: bool,
    /// Stop the server by its PID and start it again on the same ports and share.
    #[arg(long)]
    pub restart_server: bool,
    /// The lab's name.
    #[arg(long, default_value = "default")]
    pub name: String,
    #[command(flatten)]
    pub at: LabWhere,
}

#[cfg(target_os = "linux")]
/// Where labs keep their state.
#[derive(Args, Debug, Clone)]
pub struct LabWhere {
    /// The directory holding every lab's directory (state, configuration, logs).
    #[arg(long, default_value = "/var/tmp/naslab-lab", value_name = "DIR")]
    pub lab_dir: PathBuf,
}

#[cfg(target_os = "linux")]
#[derive(Args, Debug)]
pub struct LabUpArgs {
    /// The file system: ext4, ext4-nodelalloc, ext3, xfs, btrfs, or dir (a plain directory).
    #[arg(long, default_value = "ext4")]
    pub fs: FsKind,
    /// The server: samba or nfs (nfs-ganesha, with rpcbind).
    #[arg(long, default_value = "samba")]
    pub server: ServerKind,
    /// The image's size (k, m, g, t suffixes, powers of 1024).
    #[arg(long, default_value = "4G", value_parser = values::size)]
    pub size: u64,
    /// A server setting, `name = value`, added to the share (Samba) or export (ganesha);
    /// repeat for more.
    #[arg(long = "opt", value_name = "SETTING")]
    pub opts: Vec<String>,
    /// Put an emulated link (Toxiproxy) between clients and the server: a profile (lan,
    /// 10gbe, wifi, vpn, wan), settings (rtt=10ms,jitter=1ms,rate=100mbit), or a profile
    /// with settings changed (wifi,rate=50mbit). The printed URL leads through it.
    #[arg(long, value_name = "PROFILE|SETTINGS")]
    pub link: Option<String>,
    /// Give each client of a multi-client job a path of its own to the server: one link
    /// per client in rank order, separated by ';', each as --link takes it (none: the
    /// server's own port), LINK*N for N clients in a row: 'lan*3;vpn'. `lab up` prints
    /// each client's URL, to give `naslab run` as --client-target, one per client.
    #[arg(long, value_name = "LINK;LINK;...")]
    pub client_links: Option<String>,
    /// The lab's name (its directory under --lab-dir).
    #[arg(long, default_value = "default")]
    pub name: String,
    #[command(flatten)]
    pub at: LabWhere,
}

#[cfg(target_os = "linux")]
#[derive(Args, Debug)]
pub struct LabDownArgs {
    /// The lab's name.
    #[arg(long, default_value = "default")]
    pub name: String,
    #[command(flatten)]
    pub at: LabWhere,
}

#[cfg(target_os = "linux")]
#[derive(Args, Debug)]
pub struct LabMatrixArgs {
    /// File systems to compare (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "ext4")]
    pub fs: Vec<FsKind>,
    /// Servers to compare (comma-separated): samba, nfs.
    #[arg(long, value_delimiter = ',', default_value = "samba")]
    pub server: Vec<ServerKind>,
    /// A named set of server settings, NAME='setting = value; setting = value'; repeat
    /// to compare sets. Without it, each server runs with its defaults.
    #[arg(long = "opts", value_name = "NAME=SETTINGS")]
    pub opts: Vec<String>,
    /// Run a suite of built-in workloads (naspt, iometer).
    #[arg(long, value_parser = values::suite)]
    pub suite: Option<String>,
    /// Run these workloads by name; HDVideo_RecordThenPlay records a video in its
    /// warm-up and plays that recording back as its measured phase.
    #[arg(long, value_delimiter = ',', value_name = "A,B")]
    pub workload: Vec<String>,
    /// Each lab image's size.
    #[arg(long, default_value = "4G", value_parser = values::size)]
    pub size: u64,
    /// Links to compare, separated by ';' when settings are given (lan;wifi;rtt=10ms)
    /// or by ',' for profiles alone (none,lan,wifi,vpn): each configuration runs behind
    /// each link. `none` is the server's own port. Without it, no link.
    #[arg(long, value_name = "A,B")]
    pub links: Option<String>,
    /// The NFS versions to compare on each NFS configuration (comma-separated: 3, 4.1,
    /// 4.2): one configuration per version, the same server for each.
    #[arg(long, value_delimiter = ',', default_value = "3", value_parser = values::nfs_version)]
    pub nfs_versions: Vec<String>,
    /// Keep the servers' page cache between preparation and the measured phase (by
    /// default naslab drops it, so reads come from the lab's disk).
    #[arg(long)]
    pub keep_server_cache: bool,
    #[command(flatten)]
    pub generate: GenArgs,
    #[command(flatten)]
    pub opts_run: RunOpts,
}

/// The shells `naslab completions` writes scripts for.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShellName {
    Bash,
    Zsh,
    Fish,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell, e.g. `naslab completions bash > /etc/bash_completion.d/naslab`.
    #[arg(value_enum)]
    pub shell: ShellName,
}

#[derive(Args, Debug)]
pub struct ManArgs {
    /// Write naslab.1 and a page per command (naslab-run.1, ...) into this directory
    /// instead of printing naslab.1.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,
}

/// The device under test and the user's notes, kept in run.json.
#[derive(Args, Debug, Clone, Default)]
pub struct DeviceArgs {
    /// The device measured, "Vendor Model": kept in run.json, shown in the report,
    /// used by `naslab results --device` and as compare's column label.
    #[arg(long, value_name = "VENDOR MODEL")]
    pub device: Option<String>,
    /// The device's firmware or software version.
    #[arg(long, value_name = "VERSION")]
    pub firmware: Option<String>,
    /// Free-text notes kept with the results (setup, what was changed).
    #[arg(long, value_name = "TEXT")]
    pub notes: Option<String>,
    /// A key=value tag kept with the results (e.g. --tag disks=4 --tag raid=5); repeat for more.
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ResultsArgs {
    /// The results directory to search (run.json files at any depth).
    #[arg(value_name = "DIR", default_value = "naslab-results")]
    pub dir: std::path::PathBuf,
    /// Only runs whose device name contains this (case ignored).
    #[arg(long, value_name = "TEXT")]
    pub device: Option<String>,
    /// Only runs started on or after this UTC date or time (2026-03-01 or 2026-03-01T12:00).
    #[arg(long, value_name = "DATE", value_parser = values::utc_date)]
    pub since: Option<String>,
    /// Only runs started on or before this UTC date or time (the whole day for a date).
    #[arg(long, value_name = "DATE", value_parser = values::utc_date)]
    pub until: Option<String>,
    /// Only runs that measured this workload (case ignored).
    #[arg(long, value_name = "NAME")]
    pub workload: Option<String>,
    /// Only runs with this label.
    #[arg(long, value_name = "LABEL")]
    pub label: Option<String>,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}
