use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::LatencySummary;

/// The version of run.json's layout; bumped whenever a field changes meaning or goes away.
/// Version 2 records the settings that were strings in `options.extra` (time limit, the
/// null backend's, the protocol client's) as typed fields, and `--realtime` with what the
/// kernel granted; files of version 1 still load, their settings left in `extra`.
pub const SCHEMA_VERSION: u32 = 2;

/// Everything one `naslab run` measured: written as run.json and read by every exporter.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct RunResult {
    pub schema_version: u32,
    pub naslab_version: String,
    /// Wall-clock start of the run, RFC 3339 UTC.
    pub started_at: String,
    pub environment: Environment,
    pub target: TargetInfo,
    pub options: RunOptions,
    pub workloads: Vec<WorkloadResult>,
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// Set when the run stopped early: what went wrong. The results before it are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
    /// The run's label (`--label`, the LABEL of OUT/LABEL/TIMESTAMP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The device measured and the user's notes about it, as given on the command line.
    #[serde(default, skip_serializing_if = "Device::is_empty")]
    pub device: Device,
    /// Set when the run was one job of several clients (`mpirun -n N naslab run ...`):
    /// `workloads` then hold the aggregate, and this each client's own figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_client: Option<MultiClient>,
    /// A capacity sweep's load points and curve (`naslab sweep`); each point is one of
    /// `workloads`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep: Option<crate::sweep::Sweep>,
}

/// The device under test as the user named it, with their notes: how runs are found
/// again by device (`naslab results --device`) and labelled in comparisons.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Device {
    /// Vendor and model, e.g. "Synology DS920+".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The device's firmware or software version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    /// Free text: the setup, what was changed, anything worth remembering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// key=value tags, e.g. disks=4, raid=5.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
}

impl Device {
    /// Whether nothing was given.
    pub fn is_empty(&self) -> bool {
        *self == Device::default()
    }
}

/// The clients of a multi-client run and how their clocks were aligned.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct MultiClient {
    /// One entry per client (MPI rank), in rank order.
    pub clients: Vec<ClientResult>,
    /// How far apart the clients started each workload's measured phases, one entry per
    /// iteration (empty in results written before this was kept).
    #[serde(default)]
    pub start_skew: Vec<StartSkew>,
}

/// How far apart the clients of a multi-client job started one measured phase, on the
/// job's common time base, against how long the phase lasted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct StartSkew {
    pub workload: String,
    /// 1-based, as in the workload's iterations.
    pub iteration: u32,
    /// The latest client's first issue minus the earliest's: the spread of the clients'
    /// starts (each client wakes for the common start moment, some later than others on
    /// a busy host), not the clocks' alignment, which is far finer.
    pub skew_ns: u64,
    /// The aggregate's measured phase: first client's first issue to last completion.
    pub wall_ns: u64,
    /// Whether the aggregate throughput came out below every client's own: the clients'
    /// phases barely overlapped (a phase short against the skew), so the aggregate
    /// measures the skew more than the target.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub aggregate_below_clients: bool,
}

/// One client of a multi-client run: where it ran, its clock and its own results.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct ClientResult {
    /// The MPI rank; also the `client` field of its op records.
    pub rank: u32,
    pub host: String,
    /// Its CLOCK_MONOTONIC minus rank 0's, measured by ping-pong before the last measured
    /// phase began (0 for rank 0).
    pub clock_offset_ns: i64,
    /// Half the round trip of the ping-pong the offset came from: the true offset lies
    /// within this of `clock_offset_ns`.
    pub clock_uncertainty_ns: u64,
    /// How late it woke, past the common start moment, for the last measured phase (a
    /// busy host's scheduler, or the start message arriving late).
    #[serde(default)]
    pub start_late_ns: u64,
    /// Its own results: the same figures a single-client run has, its op times on the
    /// run's common time base.
    pub workloads: Vec<WorkloadResult>,
    /// Set when this client stopped early, or could not run: why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
    /// The target it used: the job's, or its own (`--client-target`). Absent in files
    /// made before clients recorded it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub target: String,
    /// Its network path to a URL target: the link it crossed and the round trip it
    /// measured itself. The run's `options.link` is the clients' common path, absent
    /// when their links differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<crate::LinkSettings>,
}

/// The client machine the run was measured on.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct Environment {
    pub host: String,
    pub kernel: String,
    pub os: String,
    pub cpu: String,
    pub cpus: u32,
    pub memory_bytes: u64,
}

/// What was measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct TargetInfo {
    /// The target as given (a directory, or later a URL).
    pub path: String,
    /// The backend that spoke to it (posix, null, ...).
    pub backend: String,
    /// The file-system type under the target directory (ext4, xfs, nfs, ...), when known.
    pub fs_type: String,
    /// The device or export the target lives on, when known.
    pub source: String,
    /// What `--cache drop` does on this target's backend (absent in results from
    /// before it was recorded, and for backends that cannot drop a cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_drop: Option<CacheDrop>,
}

/// How a backend drops the client's cache of the prepared files for `--cache drop`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum CacheDrop {
    /// Each file written back (`fsync`) and its pages dropped from Linux's page cache
    /// (`POSIX_FADV_DONTNEED`): its next read goes to the device or server.
    PageCache,
    /// Each file written back (`FlushFileBuffers`) and opened once without buffering,
    /// which has Windows' cache manager purge the pages it holds of the file. Memory
    /// Windows keeps apart from the cache manager (the standby list) is not purged
    /// without an administrator, so reads may still be served from memory.
    UnbufferedOpen,
    /// naslab's own protocol client keeps no cache; each file is written back on the
    /// server (SMB FLUSH, NFS COMMIT), whose own cache stays as a real client leaves it.
    ServerWriteBack,
    /// The null backend: no data, nothing cached.
    Nothing,
}

impl CacheDrop {
    /// Whether pages of the prepared files may outlive the drop in the client's memory.
    pub fn may_leave_pages(self) -> bool {
        self == CacheDrop::UnbufferedOpen
    }

    /// How the drop was made, in a few words.
    pub fn text(self) -> &'static str {
        match self {
            CacheDrop::PageCache => "fsync and POSIX_FADV_DONTNEED of each file",
            CacheDrop::UnbufferedOpen => {
                "FlushFileBuffers and an unbuffered open of each file (standby list kept)"
            }
            CacheDrop::ServerWriteBack => "the server writing each file back (no client cache)",
            CacheDrop::Nothing => "nothing (the null backend caches nothing)",
        }
    }
}

/// Whether client caches were dropped before the measured phase, kept, or bypassed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, TS)]
#[serde(rename_all = "lowercase")]
pub enum CacheMode {
    /// The prepared files' cached pages were written back and dropped before measuring.
    #[default]
    Drop,
    /// Whatever preparation left in the client cache stayed there.
    Keep,
    /// Data ops bypassed the client cache (O_DIRECT where the target allows it).
    Direct,
}

/// The options the run was made with, after validation.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct RunOptions {
    /// `afap`, `original` or `delay:<ns>ns`.
    pub pacing: String,
    pub cache: CacheMode,
    /// Whether every op's record was kept in the run directory.
    pub records: bool,
    /// Iterations per workload (batch mode).
    pub iterations: u32,
    /// What written blocks hold: `random`, `zero`, `compress:PCT` or `dedupe:PCT`
    /// (empty in results from before it was recorded).
    #[serde(default)]
    pub data: String,
    /// Whether written blocks described themselves and every read was checked.
    #[serde(default)]
    pub verify: bool,
    /// Whether the op records were written after the measured phase rather than beside
    /// it (`--records-after-phase`).
    #[serde(default)]
    pub records_after_phase: bool,
    /// `--time-limit`: the measured phase stopped issuing this long after its first op.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_limit_ns: Option<u64>,
    /// `--drop-all-caches`: the whole page cache was dropped after preparation.
    #[serde(default)]
    pub drop_all_caches: bool,
    /// `--shared-files`: a multi-client job's clients worked on one file set.
    #[serde(default)]
    pub shared_files: bool,
    /// `--realtime` was asked for; what the kernel granted is in each iteration's
    /// `realtime`, and what it refused in the warnings.
    #[serde(default)]
    pub realtime: bool,
    /// `--no-ordering`: the streams were replayed without the order between them (each
    /// iteration's `ordering` says what that order held).
    #[serde(default)]
    pub no_ordering: bool,
    /// `--client-profile`: the client whose extra requests were modelled (`windows`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_profile: Option<String>,
    /// The null backend's simulated service times, when the null backend ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_backend: Option<crate::NullSettings>,
    /// A URL target's protocol client: its options and what the server agreed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<crate::ProtocolSettings>,
    /// A URL target's network path: the link a lab emulated, and the round trip
    /// naslab measured before the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<crate::LinkSettings>,
    /// The workload's parameters: scale, seed, suite, a generator's description. In
    /// files of schema version 1 also the settings now typed above.
    #[serde(default)]
    pub extra: BTreeMap<String, String>,
}

/// One workload's results over all its iterations.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct WorkloadResult {
    pub name: String,
    /// Where its ops came from (a trace file, or a generator and its parameters).
    pub source: String,
    pub iterations: Vec<IterationResult>,
    /// The median of the iterations' throughput: the workload's figure.
    pub throughput_mb_s: f64,
    pub throughput_min_mb_s: f64,
    pub throughput_max_mb_s: f64,
}

impl WorkloadResult {
    /// Builds the result from its iterations, with the median and spread of throughput.
    pub fn from_iterations(name: String, source: String, iterations: Vec<IterationResult>) -> Self {
        let mut t: Vec<f64> = iterations.iter().map(|i| i.throughput_mb_s).collect();
        t.sort_by(f64::total_cmp);
        let median = match t.len() {
            0 => 0.0,
            n if n % 2 == 1 => t[n / 2],
            n => (t[n / 2 - 1] + t[n / 2]) / 2.0,
        };
        WorkloadResult {
            name,
            source,
            throughput_mb_s: median,
            throughput_min_mb_s: t.first().copied().unwrap_or(0.0),
            throughput_max_mb_s: t.last().copied().unwrap_or(0.0),
            iterations,
        }
    }

    /// The iteration whose throughput is the median (the lower middle one for an even count).
    pub fn median_iteration(&self) -> Option<&IterationResult> {
        let mut idx: Vec<usize> = (0..self.iterations.len()).collect();
        idx.sort_by(|&a, &b| {
            self.iterations[a]
                .throughput_mb_s
                .total_cmp(&self.iterations[b].throughput_mb_s)
        });
        idx.get(idx.len().saturating_sub(1) / 2)
            .map(|&i| &self.iterations[i])
    }
}

/// What preparation built (not measured as part of the workload).
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct PrepareResult {
    pub files: u64,
    pub dirs: u64,
    pub bytes: u64,
    pub wall_ns: u64,
}

/// One measured replay of a workload.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct IterationResult {
    /// 1-based.
    pub iteration: u32,
    pub prepare: PrepareResult,
    /// From the first op's issue to the last op's completion: the measured phase.
    pub wall_ns: u64,
    /// The replay clock's reading at the first issue. Op records carry times on that
    /// clock (zero is the moment every stream was released); subtract this to get time
    /// into the measured phase.
    pub clock_start_ns: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// (bytes read + written) / wall time, in MB/s (1 MB = 10^6 bytes).
    pub throughput_mb_s: f64,
    /// Ops issued (successful or not).
    pub ops: u64,
    /// Ops the workload's measured phase holds: `ops` falls short of it when the
    /// iteration stopped early (0 in results written before this was kept).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ops_planned: u64,
    /// Ops that failed.
    pub errors: u64,
    /// Ops that failed as the trace expected (not in `errors`; see
    /// [`OpStats::expected_failures`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub expected_failures: u64,
    /// Per op type: count, bytes, errors and latency.
    pub op_stats: BTreeMap<String, OpStats>,
    /// How late ops were issued against their schedule (zero under `afap`).
    pub pacing_lag: LatencySummary,
    /// When the fastest stream finished ("first done"), ns into the measured phase.
    pub first_done_ns: u64,
    /// When the slowest stream finished ("last done"); equals `wall_ns`.
    pub last_done_ns: u64,
    pub streams: Vec<StreamResult>,
    /// The op records file, relative to the run directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<String>,
    /// Set when this iteration stopped early.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aborted: Option<String>,
    /// Whether the time limit (`--time-limit`) ended the measured phase before the trace did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub time_limited: bool,
    /// Where the workload's files landed on disk, read after the measured phase (local
    /// targets whose file system reports extents only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<IterationLayout>,
    /// What `--verify` checked and found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::VerifySummary>,
    /// The order kept between the workload's streams and what it cost (absent for a
    /// workload of one stream).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordering: Option<OrderingSummary>,
    /// Whether the writes' data was made ahead of the streams by threads of their own,
    /// and how often it was ready (absent when each stream made its writes' data itself,
    /// between its ops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_data_ahead: Option<WriteDataAhead>,
    /// Under `--realtime`: what the kernel granted the measured phase's streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub realtime: Option<crate::RealtimeGranted>,
    /// What the ops waited through when the path to the server broke (absent when no
    /// connection broke).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<crate::FailoverSummary>,
    /// SMB durable handles asked for, granted, reclaimed and lost (absent when no
    /// open asked for one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable_handles: Option<crate::DurableHandles>,
}

/// Writes whose data a thread made ahead of the stream, off the time between its ops
/// (docs/replay.md, "Write data"), and writes whose data the stream made itself because
/// that thread was behind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct WriteDataAhead {
    pub ready: u64,
    pub made_by_stream: u64,
}

impl WriteDataAhead {
    /// Adds another client's counts.
    pub fn add(&mut self, other: &WriteDataAhead) {
        self.ready += other.ready;
        self.made_by_stream += other.made_by_stream;
    }
}

/// The happens-before edges a replay kept between its streams (see docs/capture.md),
/// and how long streams waited for them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct OrderingSummary {
    /// Whether the edges were kept (false under `--no-ordering`: counted, not waited for).
    pub enforced: bool,
    /// Every edge of the measured phase.
    pub edges: u64,
    /// Edges for a name made, renamed or removed in one stream and used in another.
    pub name_edges: u64,
    /// Edges for an fsync before another stream's read of the file.
    pub sync_edges: u64,
    /// Edges for a stream that starts after another one ended.
    pub sequence_edges: u64,
    /// Edges whose source op had not completed when the waiting stream came to them.
    pub waits: u64,
    /// All those waits together.
    pub wait_total_ns: u64,
    /// The longest one.
    pub wait_longest_ns: u64,
}

impl OrderingSummary {
    /// Adds another client's edges and waits (no edge joins two clients): counts and
    /// wait times add, the longest wait is the longer of the two; `enforced` is left as
    /// it is (every client of a job replays with the same options).
    pub fn add(&mut self, other: &OrderingSummary) {
        self.edges += other.edges;
        self.name_edges += other.name_edges;
        self.sync_edges += other.sync_edges;
        self.sequence_edges += other.sequence_edges;
        self.waits += other.waits;
        self.wait_total_ns += other.wait_total_ns;
        self.wait_longest_ns = self.wait_longest_ns.max(other.wait_longest_ns);
    }
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl IterationResult {
    /// How the iteration ended short of its trace, for tables: `aborted 4246/21034` or
    /// `time-limited 300/1000` (ops done out of ops planned); `None` when it ran whole.
    pub fn cut_short(&self) -> Option<String> {
        let what = if self.aborted.is_some() {
            "aborted"
        } else if self.time_limited {
            "time-limited"
        } else {
            return None;
        };
        Some(if self.ops_planned > 0 {
            format!("{what} {}/{}", self.ops, self.ops_planned)
        } else {
            format!("{what} after {} ops", self.ops)
        })
    }
}

impl WorkloadResult {
    /// The first iteration that ended short of its trace, if any (naming the iteration
    /// when there are several: `run 2 aborted 280/1000`).
    pub fn cut_short(&self) -> Option<String> {
        let (it, short) = self
            .iterations
            .iter()
            .find_map(|it| it.cut_short().map(|s| (it, s)))?;
        Some(if self.iterations.len() > 1 {
            format!("run {} {short}", it.iteration)
        } else {
            short
        })
    }
}

/// The on-disk layout of an iteration's files: those preparation made and those the
/// workload created.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct IterationLayout {
    pub prepared: LayoutSummary,
    pub written: LayoutSummary,
}

/// Extents of a set of files, counted as e2fsprogs' filefrag counts them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
pub struct LayoutSummary {
    pub files: u64,
    pub bytes: u64,
    pub extents: u64,
    /// The fewest extents the file system's longest extent allows for this data.
    pub ideal_extents: u64,
    /// The share of blocks right after their predecessor on disk (1.0: every file in one run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// What the score is over: block pairs (each file's blocks less one), and the pairs
    /// whose second block follows the first on disk. Layouts of several clients add up.
    #[serde(default)]
    pub block_pairs: u64,
    #[serde(default)]
    pub following_blocks: u64,
}

impl LayoutSummary {
    /// Adds another set of files (another client's): counts add, the score is taken
    /// again over every block pair.
    pub fn add(&mut self, other: &LayoutSummary) {
        self.files += other.files;
        self.bytes += other.bytes;
        self.extents += other.extents;
        self.ideal_extents += other.ideal_extents;
        self.block_pairs += other.block_pairs;
        self.following_blocks += other.following_blocks;
        self.score =
            (self.block_pairs > 0).then(|| self.following_blocks as f64 / self.block_pairs as f64);
    }
}

impl IterationResult {
    /// The stats of one op type, when the workload had any.
    pub fn op(&self, name: &str) -> Option<&OpStats> {
        self.op_stats.get(name)
    }

    /// The mean issue-to-completion time of the workload's own ops, ns: not the extra
    /// requests a client profile adds (`hint_*`), nor preparation's or warm-up's.
    pub fn mean_op_ns(&self) -> u64 {
        let (mut sum, mut n) = (0u128, 0u128);
        for (name, s) in &self.op_stats {
            if name.starts_with("hint_")
                || name.starts_with("prepare_")
                || name.starts_with("warmup_")
            {
                continue;
            }
            sum += u128::from(s.latency.avg_ns) * u128::from(s.latency.count);
            n += u128::from(s.latency.count);
        }
        sum.checked_div(n).map_or(0, |m| m as u64)
    }
}

/// The figures of one op type within an iteration.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct OpStats {
    pub count: u64,
    /// Bytes moved by reads or writes of this type.
    pub bytes: u64,
    pub errors: u64,
    /// Ops that failed with the error the trace expected of them (the traced program's
    /// own failing calls, such as a lookup of a name that does not exist): part of the
    /// workload, not in `errors`. Their latency is in `failed_latency`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub expected_failures: u64,
    /// Ops the trace expected to fail that succeeded: counted in `errors` too, and their
    /// latency in `latency`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub missing_failures: u64,
    /// Failures by errno name (ENOENT, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_errno: BTreeMap<String, u64>,
    /// Issue to completion of the ops that succeeded.
    pub latency: LatencySummary,
    /// Issue to completion of the ops that failed (`errors` of them, less
    /// `missing_failures`, plus `expected_failures`), kept apart from
    /// `latency`: a failure that never reached the target (EBADF after a failed open)
    /// takes a fraction of a microsecond and would pull the figures down. Absent when
    /// none failed, and in run.json files written before naslab kept them apart, whose
    /// `latency` holds both (see [`OpStats::latency_holds_failures`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_latency: Option<LatencySummary>,
}

impl OpStats {
    /// Whether `latency` also holds the failed ops' latencies: a result written before
    /// they were kept apart (errors, no `failed_latency`, and a latency count that takes
    /// them in).
    pub fn latency_holds_failures(&self) -> bool {
        self.errors > 0 && self.failed_latency.is_none() && self.latency.count == self.count
    }

    /// Adds another's count, bytes and errors (by errno too). Latency is not added: it
    /// comes from merged histograms, never from summaries.
    pub fn add_counts(&mut self, other: &OpStats) {
        self.count += other.count;
        self.bytes += other.bytes;
        self.errors += other.errors;
        self.expected_failures += other.expected_failures;
        self.missing_failures += other.missing_failures;
        for (errno, n) in &other.errors_by_errno {
            *self.errors_by_errno.entry(errno.clone()).or_insert(0) += n;
        }
    }
}

/// One stream's share of an iteration.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct StreamResult {
    /// The stream number from the trace.
    pub stream: u32,
    pub ops: u64,
    pub bytes: u64,
    /// When its last op completed, ns into the measured phase.
    pub done_ns: u64,
}

/// Something the user should know about a result, with what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// The data fits in client memory and caches were kept: reads may never reach the target.
    FitsInClientCache {
        workload: String,
        data_bytes: u64,
        memory_bytes: u64,
    },
    /// `--cache drop` on a backend that may leave the files' pages in memory (Windows:
    /// the standby list), with a data set that fits in that memory.
    DropMayLeavePages {
        workload: String,
        data_bytes: u64,
        memory_bytes: u64,
    },
    /// `--direct` was asked for, but some ops were not aligned and went through the page cache.
    UnalignedDirect { workload: String, ops: u64 },
    /// The pacing could not keep up: ops were issued late.
    PacingLag { workload: String, p99_ns: u64 },
    /// Reads were so large that a stream could keep fewer of them in flight than the
    /// trace's queue depth (each stream holds at most a fixed amount of read buffers).
    ReadsInFlightBound {
        workload: String,
        in_flight: u32,
        queue_depth: u32,
        max_read: u64,
    },
    /// A multi-client job's clients started a measured phase far apart against the
    /// phase's length: the aggregate spans the skew too.
    StartSkew {
        workload: String,
        skew_ns: u64,
        wall_ns: u64,
    },
    /// A multi-client job's aggregate throughput came out below every client's own
    /// (the clients' phases barely overlapped).
    AggregateBelowClients {
        workload: String,
        /// Bytes per second, the aggregate's and the slowest client's.
        aggregate_bytes_s: u64,
        slowest_client_bytes_s: u64,
        skew_ns: u64,
    },
    /// `--realtime` was asked for and the kernel refused some of it: ops may have been
    /// issued late while other processes took the CPUs.
    RealtimeRefused {
        workload: String,
        /// Why, each reason once.
        refused: Vec<String>,
        /// What was granted, e.g. `0/2 streams under SCHED_FIFO, 0 niced, 2 pinned, memory not locked`.
        granted: String,
    },
    /// Under `--realtime` with paced ops, streams had too little time between their ops
    /// to sleep, so they ran at nice -20 rather than under SCHED_FIFO.
    RealtimeNice { workload: String, streams: u32 },
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Warning::FitsInClientCache {
                workload,
                data_bytes,
                memory_bytes,
            } => write!(
                f,
                "{workload}: its {:.1} MB of data fit in this client's {:.1} GB of memory and caches were kept, so reads may be served by the client; use --cache drop or --cache direct",
                *data_bytes as f64 / 1e6,
                *memory_bytes as f64 / 1e9
            ),
            Warning::DropMayLeavePages {
                workload,
                data_bytes,
                memory_bytes,
            } => write!(
                f,
                "{workload}: its {:.1} MB of data fit in this PC's {:.1} GB of memory, and --cache drop purges only what Windows' cache manager holds of each file (not the standby list, which needs an administrator), so reads may be served from memory; use --cache direct, or a file set larger than the memory",
                *data_bytes as f64 / 1e6,
                *memory_bytes as f64 / 1e9
            ),
            Warning::UnalignedDirect { workload, ops } => write!(
                f,
                "{workload}: {ops} ops were not aligned for direct I/O and went through the page cache; their latencies include client caching"
            ),
            Warning::PacingLag { workload, p99_ns } => write!(
                f,
                "{workload}: 99 % of ops were issued within {:.1} µs of their schedule but some were later; the client could not keep the trace's pace, so compare with --pace afap",
                *p99_ns as f64 / 1e3
            ),
            Warning::ReadsInFlightBound {
                workload,
                in_flight,
                queue_depth,
                max_read,
            } => write!(
                f,
                "{workload}: with reads of up to {max_read} bytes ({:.2} MB) a stream kept at most {in_flight} reads in flight, not the trace's queue depth of {queue_depth}, to bound its read buffers; split the reads into smaller ones to keep the full depth",
                *max_read as f64 / 1e6
            ),
            Warning::StartSkew {
                workload,
                skew_ns,
                wall_ns,
            } => write!(
                f,
                "{workload}: the clients started {} apart, {:.1} % of the {} measured phase, so the aggregate spans their skew too; give each client a CPU of its own (fewer clients per host) or a longer phase (a larger --scale)",
                duration_text(*skew_ns),
                *skew_ns as f64 * 100.0 / (*wall_ns).max(1) as f64,
                duration_text(*wall_ns)
            ),
            Warning::AggregateBelowClients {
                workload,
                aggregate_bytes_s,
                slowest_client_bytes_s,
                skew_ns,
            } => write!(
                f,
                "{workload}: the aggregate ({:.1} MB/s) is below every client's own figure (slowest {:.1} MB/s): the clients' phases barely overlapped (started {} apart), so it measures the start skew, not the target; use a longer phase (a larger --scale) or fewer clients per host",
                *aggregate_bytes_s as f64 / 1e6,
                *slowest_client_bytes_s as f64 / 1e6,
                duration_text(*skew_ns)
            ),
            Warning::RealtimeRefused {
                workload,
                refused,
                granted,
            } => write!(
                f,
                "{workload}: --realtime: {}; the streams ran with {granted}, so other processes could delay their ops: run as root (or with CAP_SYS_NICE and CAP_IPC_LOCK) for all of it",
                refused.join("; ")
            ),
            Warning::RealtimeNice { workload, streams } => write!(
                f,
                "{workload}: --realtime: {streams} stream(s) had too little time between their ops to sleep, so each runs at nice -20 rather than under SCHED_FIFO, which the kernel would stop for up to 50 ms each second (docs/benchmarks.md)"
            ),
        }
    }
}

/// A duration in the unit that suits it: µs below a millisecond, ms below a second.
pub fn duration_text(ns: u64) -> String {
    if ns < 1_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{:.2} s", ns as f64 / 1e9)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_read_back_from_json_are_the_figures_written() {
        // 3172 / 3173 is one a parser that is not exact reads back 1 ulp off (seen in a
        // file layout's score), which then showed in a report rebuilt from run.json.
        for score in [
            3172.0 / 3173.0,
            0.1 + 0.2,
            1.0 / 3.0,
            123456.789e-300,
            2.0f64.sqrt(),
        ] {
            let layout = LayoutSummary {
                score: Some(score),
                ..LayoutSummary::default()
            };
            let text = serde_json::to_string(&layout).unwrap();
            let back: LayoutSummary = serde_json::from_str(&text).unwrap();
            assert_eq!(
                back.score.map(f64::to_bits),
                Some(score.to_bits()),
                "{text}"
            );
        }
    }

    #[test]
    fn op_stats_add_counts_bytes_and_errors_by_errno_but_not_latency() {
        let one = |count, bytes, errno: &str, n| OpStats {
            count,
            bytes,
            errors: n,
            expected_failures: 0,
            missing_failures: 0,
            errors_by_errno: BTreeMap::from([(errno.to_string(), n)]),
            latency: LatencySummary {
                count,
                ..LatencySummary::default()
            },
            failed_latency: None,
        };
        let mut a = one(3, 300, "ENOENT", 1);
        a.add_counts(&one(4, 40, "ENOENT", 2));
        a.add_counts(&one(5, 5, "EIO", 1));
        assert_eq!((a.count, a.bytes, a.errors), (12, 345, 4));
        assert_eq!(
            a.errors_by_errno,
            BTreeMap::from([("EIO".to_string(), 1), ("ENOENT".to_string(), 3)])
        );
        assert_eq!(a.latency.count, 3, "latency is left alone");
    }

    #[test]
    fn ordering_adds_edges_and_waits_and_keeps_the_longest_wait() {
        let mut a = OrderingSummary {
            enforced: true,
            edges: 6,
            name_edges: 3,
            sync_edges: 2,
            sequence_edges: 1,
            waits: 2,
            wait_total_ns: 900,
            wait_longest_ns: 700,
        };
        a.add(&OrderingSummary {
            enforced: false,
            edges: 4,
            name_edges: 1,
            sync_edges: 0,
            sequence_edges: 3,
            waits: 1,
            wait_total_ns: 500,
            wait_longest_ns: 500,
        });
        assert_eq!(
            a,
            OrderingSummary {
                enforced: true,
                edges: 10,
                name_edges: 4,
                sync_edges: 2,
                sequence_edges: 4,
                waits: 3,
                wait_total_ns: 1_400,
                wait_longest_ns: 700,
            }
        );
    }
}
