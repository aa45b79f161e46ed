// Generated from the Rust types that serialise the report's data (crates/report/src/ts_types.rs,
// with ts-rs); do not edit. Regenerate: NASLAB_UPDATE_SNAPSHOTS=1 cargo test -p naslab-report --test ts_types

export type RunResult = { schema_version: number, naslab_version: string, 
/**
 * Wall-clock start of the run, RFC 3339 UTC.
 */
started_at: string, environment: Environment, target: TargetInfo, options: RunOptions, workloads: Array<WorkloadResult>, warnings: Array<Warning>, 
/**
 * Set when the run stopped early: what went wrong. The results before it are kept.
 */
aborted?: string | null, 
/**
 * The run's label (`--label`, the LABEL of OUT/LABEL/TIMESTAMP).
 */
label?: string | null, 
/**
 * The device measured and the user's notes about it, as given on the command line.
 */
device?: Device, 
/**
 * Set when the run was one job of several clients (`mpirun -n N naslab run ...`):
 * `workloads` then hold the aggregate, and this each client's own figures.
 */
multi_client?: MultiClient | null, 
/**
 * A capacity sweep's load points and curve (`naslab sweep`); each point is one of
 * `workloads`.
 */
sweep?: Sweep | null, };

export type Device = { 
/**
 * Vendor and model, e.g. "Synology DS920+".
 */
name?: string | null, 
/**
 * The device's firmware or software version.
 */
firmware?: string | null, 
/**
 * Free text: the setup, what was changed, anything worth remembering.
 */
notes?: string | null, 
/**
 * key=value tags, e.g. disks=4, raid=5.
 */
tags?: { [key in string]: string }, };

export type MultiClient = { 
/**
 * One entry per client (MPI rank), in rank order.
 */
clients: Array<ClientResult>, 
/**
 * How far apart the clients started each workload's measured phases, one entry per
 * iteration (empty in results written before this was kept).
 */
start_skew: Array<StartSkew>, };

export type ClientResult = { 
/**
 * The MPI rank; also the `client` field of its op records.
 */
rank: number, host: string, 
/**
 * Its CLOCK_MONOTONIC minus rank 0's, measured by ping-pong before the last measured
 * phase began (0 for rank 0).
 */
clock_offset_ns: number, 
/**
 * Half the round trip of the ping-pong the offset came from: the true offset lies
 * within this of `clock_offset_ns`.
 */
clock_uncertainty_ns: number, 
/**
 * How late it woke, past the common start moment, for the last measured phase (a
 * busy host's scheduler, or the start message arriving late).
 */
start_late_ns: number, 
/**
 * Its own results: the same figures a single-client run has, its op times on the
 * run's common time base.
 */
workloads: Array<WorkloadResult>, 
/**
 * Set when this client stopped early, or could not run: why.
 */
aborted?: string | null, 
/**
 * The target it used: the job's, or its own (`--client-target`). Absent in files
 * made before clients recorded it.
 */
target?: string, 
/**
 * Its network path to a URL target: the link it crossed and the round trip it
 * measured itself. The run's `options.link` is the clients' common path, absent
 * when their links differ.
 */
link?: LinkSettings | null, };

export type StartSkew = { workload: string, 
/**
 * 1-based, as in the workload's iterations.
 */
iteration: number, 
/**
 * The latest client's first issue minus the earliest's: the spread of the clients'
 * starts (each client wakes for the common start moment, some later than others on
 * a busy host), not the clocks' alignment, which is far finer.
 */
skew_ns: number, 
/**
 * The aggregate's measured phase: first client's first issue to last completion.
 */
wall_ns: number, 
/**
 * Whether the aggregate throughput came out below every client's own: the clients'
 * phases barely overlapped (a phase short against the skew), so the aggregate
 * measures the skew more than the target.
 */
aggregate_below_clients?: boolean, };

export type Environment = { host: string, kernel: string, os: string, cpu: string, cpus: number, memory_bytes: number, };

export type TargetInfo = { 
/**
 * The target as given (a directory, or later a URL).
 */
path: string, 
/**
 * The backend that spoke to it (posix, null, ...).
 */
backend: string, 
/**
 * The file-system type under the target directory (ext4, xfs, nfs, ...), when known.
 */
fs_type: string, 
/**
 * The device or export the target lives on, when known.
 */
source: string, 
/**
 * What `--cache drop` does on this target's backend (absent in results from
 * before it was recorded, and for backends that cannot drop a cache).
 */
cache_drop?: CacheDrop | null, };

export type CacheMode = "drop" | "keep" | "direct";

export type CacheDrop = "page_cache" | "unbuffered_open" | "server_write_back" | "nothing";

export type RunOptions = { 
/**
 * `afap`, `original` or `delay:<ns>ns`.
 */
pacing: string, cache: CacheMode, 
/**
 * Whether every op's record was kept in the run directory.
 */
records: boolean, 
/**
 * Iterations per workload (batch mode).
 */
iterations: number, 
/**
 * What written blocks hold: `random`, `zero`, `compress:PCT` or `dedupe:PCT`
 * (empty in results from before it was recorded).
 */
data: string, 
/**
 * Whether written blocks described themselves and every read was checked.
 */
verify: boolean, 
/**
 * Whether the op records were written after the measured phase rather than beside
 * it (`--records-after-phase`).
 */
records_after_phase: boolean, 
/**
 * `--time-limit`: the measured phase stopped issuing this long after its first op.
 */
time_limit_ns?: number | null, 
/**
 * `--drop-all-caches`: the whole page cache was dropped after preparation.
 */
drop_all_caches: boolean, 
/**
 * `--shared-files`: a multi-client job's clients worked on one file set.
 */
shared_files: boolean, 
/**
 * `--realtime` was asked for; what the kernel granted is in each iteration's
 * `realtime`, and what it refused in the warnings.
 */
realtime: boolean, 
/**
 * `--no-ordering`: the streams were replayed without the order between them (each
 * iteration's `ordering` says what that order held).
 */
no_ordering: boolean, 
/**
 * `--client-profile`: the client whose extra requests were modelled (`windows`).
 */
client_profile?: string | null, 
/**
 * The null backend's simulated service times, when the null backend ran.
 */
null_backend?: NullSettings | null, 
/**
 * A URL target's protocol client: its options and what the server agreed to.
 */
protocol?: ProtocolSettings | null, 
/**
 * A URL target's network path: the link a lab emulated, and the round trip
 * naslab measured before the run.
 */
link?: LinkSettings | null, 
/**
 * The workload's parameters: scale, seed, suite, a generator's description. In
 * files of schema version 1 also the settings now typed above.
 */
extra: { [key in string]: string }, };

export type NullSettings = { 
/**
 * Each op's fixed service time, ns (0: none).
 */
service_time_ns: number, 
/**
 * A stall: the op of each connection that takes longer, and by how much.
 */
stall?: NullStall | null, };

export type NullStall = { 
/**
 * The op's index on its connection, from 0.
 */
op: number, 
/**
 * How much longer it takes, ns.
 */
extra_ns: number, };

export type ProtocolSettings = { "protocol": "smb" } & SmbSettings | { "protocol": "nfs" } & NfsSettings;

export type SmbSettings = { 
/**
 * `--io-timeout`: how long a request waits for its reply, ns.
 */
io_timeout_ns: number, 
/**
 * `--smb-encrypt`: `required`, `desired` or `off`.
 */
encrypt_asked: string, 
/**
 * `--smb-in-flight`: the most READs or WRITEs one op keeps in flight.
 */
in_flight: number, 
/**
 * The dialects the client offered, e.g. `SMB 2.0.2` ... `SMB 3.1.1`.
 */
dialects_offered: Array<string>, 
/**
 * The dialect the server chose, e.g. `SMB 3.1.1`.
 */
dialect: string, 
/**
 * Whether the session's messages are encrypted.
 */
encrypted: boolean, 
/**
 * The cipher they are encrypted with, e.g. `AES-128-GCM`.
 */
cipher?: string | null, 
/**
 * Whether the session's messages are signed (encrypted ones carry no signature).
 */
signed: boolean, 
/**
 * The signing algorithm, e.g. `AES-128-GMAC`.
 */
signing_algorithm?: string | null, 
/**
 * Whether the server requires signing.
 */
server_requires_signing: boolean, 
/**
 * The largest READ and WRITE the server takes, bytes.
 */
max_read_bytes: number, max_write_bytes: number, 
/**
 * `--retrans-timeout`: how long a request waits for its reply before its
 * connection is taken for broken and the request sent again on a new one, ns;
 * absent when not set.
 */
retrans_timeout_ns?: number | null, };

export type NfsSettings = { 
/**
 * The NFS version spoken: 3 or 4.
 */
version: number, 
/**
 * Version 4's minor version (1 or 2), as the server accepted it in the session's
 * compounds; absent for version 3.
 */
minor_version?: number | null, 
/**
 * `--io-timeout`: how long a request waits for its reply, ns.
 */
io_timeout_ns: number, 
/**
 * `--retrans-timeout` (NFSv3): how long a request waits for its reply before it is
 * sent again on a new connection, ns; absent when not set (and for NFSv4.1).
 */
retrans_timeout_ns?: number | null, 
/**
 * The RPC credential flavour (`AUTH_UNIX`) and the ids it carries.
 */
auth: string, uid: number, gid: number, 
/**
 * The NFS server's port, and the MOUNT service's when the URL gave one (else the
 * portmapper was asked).
 */
port: number, mount_port?: number | null, 
/**
 * The largest READ and WRITE the server takes (FSINFO's rtmax and wtmax), bytes.
 */
max_read_bytes: number, max_write_bytes: number, 
/**
 * Version 4.1 and later: the slots of the session's fore channel the server granted
 * (CREATE_SESSION's `ca_maxrequests`), the most requests it holds at once on a
 * connection. A trace's `queue_depth` above it keeps no more than this many reads
 * and writes in flight per stream: the rest wait for a slot. Absent for version 3.
 */
session_slots?: number | null, };

export type LinkSettings = { 
/**
 * The link a lab emulated (`naslab lab up --link`); absent for a real server or a
 * lab without one.
 */
emulated?: EmulatedLink | null, 
/**
 * The round trip naslab measured itself before the run; absent when the probe
 * failed (the run's warnings say why).
 */
probe?: RttProbe | null, };

export type EmulatedLink = { 
/**
 * The profile it came from (`lan`, `wifi`, ...), or `custom` for explicit settings.
 */
profile: string, 
/**
 * The round-trip delay added, ns: half each way (the odd millisecond on the way
 * to the server).
 */
rtt_ns: number, 
/**
 * How far the delay toward the client varies either way, ns (uniformly).
 */
jitter_ns: number, 
/**
 * The rate each direction is held to, bit/s (0: not limited).
 */
rate_bit_s: number, 
/**
 * The emulator (`toxiproxy`), its version as it reports it, and where it delays:
 * `stream` (each chunk of data read from a connection) or `packet`.
 */
emulator: string, emulator_version: string, delay_level: string, };

export type RttProbe = { 
/**
 * What was timed: `SMB2 ECHO` or `NFS NULL` (one request and its reply each).
 */
method: string, samples: number, 
/**
 * The median, fastest and slowest round trip, ns.
 */
median_ns: number, min_ns: number, max_ns: number, };

export type RealtimeGranted = { 
/**
 * Whether the process's memory was locked (mlockall).
 */
memory_locked: boolean, 
/**
 * The phase's stream threads, and how many of them ran under SCHED_FIFO, at nice
 * -20 (streams too busy to sleep ask for that instead), and pinned to a CPU.
 */
streams: number, fifo_streams: number, nice_streams: number, pinned_streams: number, 
/**
 * Why the kernel refused what it refused, each reason once.
 */
refused?: Array<string>, };

export type Setting = { name: string, value: string, };

export type WorkloadResult = { name: string, 
/**
 * Where its ops came from (a trace file, or a generator and its parameters).
 */
source: string, iterations: Array<IterationResult>, 
/**
 * The median of the iterations' throughput: the workload's figure.
 */
throughput_mb_s: number, throughput_min_mb_s: number, throughput_max_mb_s: number, };

export type PrepareResult = { files: number, dirs: number, bytes: number, wall_ns: number, };

export type IterationResult = { 
/**
 * 1-based.
 */
iteration: number, prepare: PrepareResult, 
/**
 * From the first op's issue to the last op's completion: the measured phase.
 */
wall_ns: number, 
/**
 * The replay clock's reading at the first issue. Op records carry times on that
 * clock (zero is the moment every stream was released); subtract this to get time
 * into the measured phase.
 */
clock_start_ns: number, bytes_read: number, bytes_written: number, 
/**
 * (bytes read + written) / wall time, in MB/s (1 MB = 10^6 bytes).
 */
throughput_mb_s: number, 
/**
 * Ops issued (successful or not).
 */
ops: number, 
/**
 * Ops the workload's measured phase holds: `ops` falls short of it when the
 * iteration stopped early (0 in results written before this was kept).
 */
ops_planned?: number, 
/**
 * Ops that failed.
 */
errors: number, 
/**
 * Ops that failed as the trace expected (not in `errors`; see
 * [`OpStats::expected_failures`]).
 */
expected_failures?: number, 
/**
 * Per op type: count, bytes, errors and latency.
 */
op_stats: { [key in string]: OpStats }, 
/**
 * How late ops were issued against their schedule (zero under `afap`).
 */
pacing_lag: LatencySummary, 
/**
 * When the fastest stream finished ("first done"), ns into the measured phase.
 */
first_done_ns: number, 
/**
 * When the slowest stream finished ("last done"); equals `wall_ns`.
 */
last_done_ns: number, streams: Array<StreamResult>, 
/**
 * The op records file, relative to the run directory.
 */
records?: string | null, 
/**
 * Set when this iteration stopped early.
 */
aborted?: string | null, 
/**
 * Whether the time limit (`--time-limit`) ended the measured phase before the trace did.
 */
time_limited?: boolean, 
/**
 * Where the workload's files landed on disk, read after the measured phase (local
 * targets whose file system reports extents only).
 */
layout?: IterationLayout | null, 
/**
 * What `--verify` checked and found.
 */
verify?: VerifySummary | null, 
/**
 * The order kept between the workload's streams and what it cost (absent for a
 * workload of one stream).
 */
ordering?: OrderingSummary | null, 
/**
 * Whether the writes' data was made ahead of the streams by threads of their own,
 * and how often it was ready (absent when each stream made its writes' data itself,
 * between its ops).
 */
write_data_ahead?: WriteDataAhead | null, 
/**
 * Under `--realtime`: what the kernel granted the measured phase's streams.
 */
realtime?: RealtimeGranted | null, 
/**
 * What the ops waited through when the path to the server broke (absent when no
 * connection broke).
 */
failover?: FailoverSummary | null, 
/**
 * SMB durable handles asked for, granted, reclaimed and lost (absent when no
 * open asked for one).
 */
durable_handles?: DurableHandles | null, };

export type IterationLayout = { prepared: LayoutSummary, written: LayoutSummary, };

export type LayoutSummary = { files: number, bytes: number, extents: number, 
/**
 * The fewest extents the file system's longest extent allows for this data.
 */
ideal_extents: number, 
/**
 * The share of blocks right after their predecessor on disk (1.0: every file in one run).
 */
score?: number | null, 
/**
 * What the score is over: block pairs (each file's blocks less one), and the pairs
 * whose second block follows the first on disk. Layouts of several clients add up.
 */
block_pairs: number, following_blocks: number, };

export type OrderingSummary = { 
/**
 * Whether the edges were kept (false under `--no-ordering`: counted, not waited for).
 */
enforced: boolean, 
/**
 * Every edge of the measured phase.
 */
edges: number, 
/**
 * Edges for a name made, renamed or removed in one stream and used in another.
 */
name_edges: number, 
/**
 * Edges for an fsync before another stream's read of the file.
 */
sync_edges: number, 
/**
 * Edges for a stream that starts after another one ended.
 */
sequence_edges: number, 
/**
 * Edges whose source op had not completed when the waiting stream came to them.
 */
waits: number, 
/**
 * All those waits together.
 */
wait_total_ns: number, 
/**
 * The longest one.
 */
wait_longest_ns: number, };

export type WriteDataAhead = { ready: number, made_by_stream: number, };

export type FailoverSummary = { 
/**
 * Ops whose latency includes getting over a broken connection (a new connection,
 * requests sent again): each one's latency is the stall it saw.
 */
stalled_ops: number, 
/**
 * Their latencies together, ns.
 */
stall_total_ns: number, 
/**
 * The longest of them, ns, and its op kind.
 */
longest_stall_ns: number, longest_stall_op: string, 
/**
 * Ops that failed from the first stall on (a stalled op that could not be carried,
 * an op on a handle lost with its session), and the first of them named.
 */
failed_ops: number, failed: Array<FailedOp>, 
/**
 * When the first stalled op was issued, ns into the measured phase.
 */
first_stall_ns: number, 
/**
 * The failover gap, ns: from the issue of the first op that stalled to the
 * completion of the first op that succeeded after a stall, in any stream that
 * stalled. Absent when none did.
 */
gap_ns?: number | null, 
/**
 * New connections made after one broke, and requests sent again on them.
 */
reconnects: number, retries: number, 
/**
 * NFS: files whose unstable writes the server may have lost (its write verifier
 * changed before their COMMIT: it restarted in between, and naslab keeps no copy of
 * the data to send again).
 */
unconfirmed_writes?: number, };

export type FailedOp = { 
/**
 * Its kind (`write`, `open`...), its file (relative to the workload directory) and
 * why it failed.
 */
op: string, path: string, error: string, };

export type DurableHandles = { asked: number, granted: number, reclaimed: number, lost: number, };

export type OpStats = { count: number, 
/**
 * Bytes moved by reads or writes of this type.
 */
bytes: number, errors: number, 
/**
 * Ops that failed with the error the trace expected of them (the traced program's
 * own failing calls, such as a lookup of a name that does not exist): part of the
 * workload, not in `errors`. Their latency is in `failed_latency`.
 */
expected_failures?: number, 
/**
 * Ops the trace expected to fail that succeeded: counted in `errors` too, and their
 * latency in `latency`.
 */
missing_failures?: number, 
/**
 * Failures by errno name (ENOENT, ...).
 */
errors_by_errno?: { [key in string]: number }, 
/**
 * Issue to completion of the ops that succeeded.
 */
latency: LatencySummary, 
/**
 * Issue to completion of the ops that failed (`errors` of them, less
 * `missing_failures`, plus `expected_failures`), kept apart from
 * `latency`: a failure that never reached the target (EBADF after a failed open)
 * takes a fraction of a microsecond and would pull the figures down. Absent when
 * none failed, and in run.json files written before naslab kept them apart, whose
 * `latency` holds both (see [`OpStats::latency_holds_failures`]).
 */
failed_latency?: LatencySummary | null, };

export type StreamResult = { 
/**
 * The stream number from the trace.
 */
stream: number, ops: number, bytes: number, 
/**
 * When its last op completed, ns into the measured phase.
 */
done_ns: number, };

export type Warning = { "kind": "fits_in_client_cache", workload: string, data_bytes: number, memory_bytes: number, } | { "kind": "drop_may_leave_pages", workload: string, data_bytes: number, memory_bytes: number, } | { "kind": "unaligned_direct", workload: string, ops: number, } | { "kind": "pacing_lag", workload: string, p99_ns: number, } | { "kind": "reads_in_flight_bound", workload: string, in_flight: number, queue_depth: number, max_read: number, } | { "kind": "start_skew", workload: string, skew_ns: number, wall_ns: number, } | { "kind": "aggregate_below_clients", workload: string, 
/**
 * Bytes per second, the aggregate's and the slowest client's.
 */
aggregate_bytes_s: number, slowest_client_bytes_s: number, skew_ns: number, } | { "kind": "realtime_refused", workload: string, 
/**
 * Why, each reason once.
 */
refused: Array<string>, 
/**
 * What was granted, e.g. `0/2 streams under SCHED_FIFO, 0 niced, 2 pinned, memory not locked`.
 */
granted: string, } | { "kind": "realtime_nice", workload: string, streams: number, };

export type LatencySummary = { count: number, avg_ns: number, stddev_ns: number, min_ns: number, p50_ns: number, p90_ns: number, p99_ns: number, p999_ns: number, max_ns: number, };

export type VerifySummary = { 
/**
 * Workload and read-back reads whose bytes were compared.
 */
reads_checked: number, bytes_checked: number, 
/**
 * Bytes read back after the workload.
 */
read_back_bytes: number, lost_writes: number, stale_reads: number, misplaced_writes: number, torn_writes: number, corrupt: number, 
/**
 * The first mismatches, with what was expected and what was found.
 */
mismatches?: Array<Mismatch>, };

export type Mismatch = { 
/**
 * The file, relative to the workload's directory.
 */
file: string, offset: number, len: number, kind: MismatchKind, expected: string, found: string, 
/**
 * `read` (a workload read), `warmup` or `read-back` (the check after the workload).
 */
during: string, };

export type MismatchKind = "lost_write" | "stale_read" | "misplaced_write" | "torn_write" | "corrupt";

export type Sweep = { unit: LoadUnit, 
/**
 * `uniform` or `poisson` for rate points; absent for users.
 */
arrivals?: string | null, 
/**
 * Each point's warm-up, discarded, ns.
 */
warmup_ns: number, 
/**
 * A point is saturated when achieved < offered x (1 - this).
 */
saturation_margin: number, cap?: Cap | null, points: Array<LoadPoint>, 
/**
 * The highest load up to which every point met the cap and was not saturated.
 */
knee?: number | null, 
/**
 * The highest achieved ops/s of any point.
 */
peak_achieved_ops_s: number, 
/**
 * The area under mean response time against achieved ops/s, divided by the peak
 * achieved ops/s (see [`overall_response_ns`]).
 */
overall_response_ns: number, 
/**
 * Why the sweep ended before its last point, if it did.
 */
stopped?: string | null, };

export type LoadUnit = "users" | "ops_per_s";

export type Cap = { 
/**
 * The op type it applies to, or `all`.
 */
op: string, 
/**
 * The percentile, 0 to 100 (`avg` is written as -1).
 */
percentile: number, limit_ns: number, };

export type LoadPoint = { 
/**
 * The run's workload that ran this point (its figures, records and report).
 */
workload: string, 
/**
 * The load asked for, in the sweep's unit.
 */
load: number, 
/**
 * Ops scheduled in the measured window, per second of it.
 */
offered_ops_s: number, 
/**
 * Ops completed per second from the window's start to the last completion (or to
 * the schedule's end, if later), whenever they were scheduled: below the offered
 * rate when the target could not keep up.
 */
achieved_ops_s: number, 
/**
 * Bytes read and written by those ops per second, as `achieved_ops_s`.
 */
throughput_mb_s: number, 
/**
 * The measured window: ops scheduled from the warm-up's end on, ns.
 */
window_start_ns: number, window_ns: number, 
/**
 * Ops scheduled during the warm-up, run but not counted.
 */
warmup_ops: number, 
/**
 * Every op of the window.
 */
all: PointOps, 
/**
 * By op type (its name).
 */
ops: { [key in string]: PointOps }, 
/**
 * How late ops were issued after their scheduled start (the queue in the client).
 */
lag: LatencySummary, 
/**
 * For users points: how each user fared.
 */
users?: UserSpread | null, 
/**
 * Whether the point met the sweep's cap, when it has one.
 */
met_cap?: boolean | null, 
/**
 * The figure the cap was held to (its percentile of its op type's response time,
 * ns); absent without a cap, or when the point had no op of that type.
 */
cap_ns?: number | null, 
/**
 * Whether achieved fell short of offered by more than the saturation margin.
 */
saturated: boolean, 
/**
 * For a multi-client job's point: how its clients shared it.
 */
clients?: PointClients | null, };

export type PointOps = { 
/**
 * Ops of this type scheduled in the point's measured window.
 */
count: number, errors: number, 
/**
 * From the op's scheduled start to its completion: what the user waited.
 */
response: LatencySummary, 
/**
 * From the op's actual issue to its completion: what the server took.
 */
service: LatencySummary, 
/**
 * The response-time quantiles at every whole percentile 1..=100 (for caps at any
 * percentile and for drawing bands), ns.
 */
response_percentiles_ns?: Array<number>, };

export type UserSpread = { users: number, min_avg_response_ns: number, median_avg_response_ns: number, max_avg_response_ns: number, };

export type PointClients = { 
/**
 * Each client's ops of the measured window, by rank.
 */
ops: Array<number>, 
/**
 * The spread of the clients' starts of the point on the common time base: the
 * latest client's wake past the agreed start moment minus the earliest's, ns.
 */
start_skew_ns: number, 
/**
 * The worst uncertainty of a client's clock against rank 0's at that start, ns
 * (the skew is known within it).
 */
clock_uncertainty_ns: number, };

export type ReportPage = { kind: "report", title: string, generated_by: string, run_dir: string, kinds: Array<string>, run: RunResult, 
/**
 * The run's warnings worded as the terminal and the text exports word them.
 */
warnings: Array<string>, 
/**
 * The settings that shaped the measurement, worded as `compare` words them.
 */
settings: Array<Setting>, workloads: Array<WorkloadPage>, };

export type WorkloadPage = { name: string, 
/**
 * The iteration whose throughput is the workload's figure.
 */
median: number | null, iterations: Array<IterationPage>, };

export type IterationPage = { iteration: number, records: string | null, 
/**
 * Ops read from the records.
 */
ops: number, 
/**
 * Why some of the views are missing or partial, for the reader.
 */
notes: Array<string>, 
/**
 * The file table ops refer to by index.
 */
files: Array<FileView>, 
/**
 * Throughput and latency over time.
 */
series: TimeSeries | null, 
/**
 * Latency histogram.
 */
latency: LatencyHistView | null, 
/**
 * Transfer-size histogram.
 */
sizes: SizeHistView | null, 
/**
 * Per-file statistics, busiest first.
 */
file_stats: Array<FileStatView>, 
/**
 * The access map.
 */
access: AccessView | null, 
/**
 * The transaction list.
 */
rows: RowsView | null, 
/**
 * A multi-client run's clients, each with the views of its own ops (no access map
 * or transaction list; its `files` is empty, as the indices are this one's).
 */
clients: Array<ClientData>, };

export type IterationData = { 
/**
 * Ops read from the records.
 */
ops: number, 
/**
 * Why some of the views are missing or partial, for the reader.
 */
notes: Array<string>, 
/**
 * The file table ops refer to by index.
 */
files: Array<FileView>, 
/**
 * Throughput and latency over time.
 */
series: TimeSeries | null, 
/**
 * Latency histogram.
 */
latency: LatencyHistView | null, 
/**
 * Transfer-size histogram.
 */
sizes: SizeHistView | null, 
/**
 * Per-file statistics, busiest first.
 */
file_stats: Array<FileStatView>, 
/**
 * The access map.
 */
access: AccessView | null, 
/**
 * The transaction list.
 */
rows: RowsView | null, 
/**
 * A multi-client run's clients, each with the views of its own ops (no access map
 * or transaction list; its `files` is empty, as the indices are this one's).
 */
clients: Array<ClientData>, };

export type ClientData = { 
/**
 * The MPI rank (the `client` field of its op records).
 */
rank: number, data: IterationData, };

export type FileView = { 
/**
 * Path under the workload directory.
 */
path: string, 
/**
 * Size preparation gave it.
 */
size: number, 
/**
 * Whether it is a directory.
 */
dir: boolean, };

export type FileStatView = { 
/**
 * Index into the iteration's file table.
 */
file: number, 
/**
 * Ops on it (any kind).
 */
ops: number, 
/**
 * Reads of it.
 */
reads: number, 
/**
 * Writes to it.
 */
writes: number, 
/**
 * Bytes its reads returned.
 */
bytes_read: number, 
/**
 * Bytes its writes moved.
 */
bytes_written: number, 
/**
 * Ops on it that failed.
 */
errors: number, 
/**
 * Latency of all its ops.
 */
latency: StatsSummary, };

export type StatsSummary = { 
/**
 * Values seen.
 */
count: number, 
/**
 * Exact mean.
 */
mean_ns: number, 
/**
 * Population standard deviation.
 */
stddev_ns: number, 
/**
 * Smallest value.
 */
min_ns: number, 
/**
 * Median (bucketed).
 */
p50_ns: number, 
/**
 * 90th percentile (bucketed).
 */
p90_ns: number, 
/**
 * 99th percentile (bucketed).
 */
p99_ns: number, 
/**
 * Largest value.
 */
max_ns: number, };

export type TimeSeries = { 
/**
 * Width of one bin, ns.
 */
bin_ns: number, 
/**
 * Bytes read that completed in each bin.
 */
read_bytes: Array<number>, 
/**
 * Bytes written that completed in each bin.
 */
write_bytes: Array<number>, 
/**
 * Ops that completed in each bin.
 */
ops: Array<number>, 
/**
 * The slowest op completing in each bin, ns (0 when none did): the outliers survive binning.
 */
latency_max_ns: Array<number>, 
/**
 * Sum of the latencies of the ops completing in each bin, ns (mean = sum / ops).
 */
latency_sum_ns: Array<number>, 
/**
 * The periods the page offers, in bins (1 first): whole numbers of bins whose length
 * is 1, 2 or 5 × 10^k ns, at least two periods long.
 */
periods: Array<number>, 
/**
 * For each entry of `periods`, the latency percentiles of the ops completing in each
 * period: exact, or within 1.2 % past [`PERCENTILE_OPS_MAX`] ops; absent when the
 * latencies were not kept.
 */
latency_percentiles: Array<PeriodPercentiles> | null, 
/**
 * Whether `latency_percentiles` were taken from logarithmic buckets (within 1.2 %)
 * rather than exactly, as past [`PERCENTILE_OPS_MAX`] ops.
 */
percentiles_from_buckets: boolean, };

export type PeriodPercentiles = { 
/**
 * The period's length in bins.
 */
bins: number, 
/**
 * Median latency per period, ns (`None` when no op completed in it).
 */
p50_ns: Array<number | null>, 
/**
 * 99th percentile latency per period, ns.
 */
p99_ns: Array<number | null>, };

export type LatencyHistView = { 
/**
 * Buckets per power of ten.
 */
per_decade: number, 
/**
 * The first bucket shown: its lower edge is 10^(first / per_decade) ns.
 */
first: number, 
/**
 * Counts per bucket from `first` on; `all` holds every op.
 */
by_op: Array<[string, Array<number>]>, };

export type SizeHistView = { 
/**
 * The first bucket shown: bucket b holds sizes in [2^(b-1), 2^b), bucket 0 holds 0.
 */
first: number, 
/**
 * Counts per bucket from `first` on.
 */
by_op: Array<[string, Array<number>]>, };

export type AccessView = { 
/**
 * Reads and writes in the records.
 */
seen: number, 
/**
 * Points in the sample.
 */
shown: number, 
/**
 * The sample holds about one in every `stride` reads and writes (chosen by a hash of
 * their position in the records, so no periodic pattern hides from it).
 */
stride: number, 
/**
 * Where the sample's columns are (t_ns, offset, len, row, file, kind); absent when
 * the transaction list's rows hold every op, which the page then draws from.
 */
blob: BlobLayout | null, };

export type RowsView = { 
/**
 * Ops in the records.
 */
total: number, 
/**
 * Rows in the list (the first `shown` ops in issue order).
 */
shown: number, 
/**
 * Where the columns are (start_ns, latency_ns, offset, len, result, file, stream, kind).
 */
blob: BlobLayout, };

export type BlobLayout = { 
/**
 * The blob's element id in the page.
 */
id: string, 
/**
 * Rows in every column.
 */
rows: number, 
/**
 * Decompressed size in bytes.
 */
bytes: number, 
/**
 * The columns, in order.
 */
columns: Array<ColumnLayout>, };

export type ColumnLayout = { 
/**
 * The column's name (`start_ns`, `file`, ...).
 */
name: string, 
/**
 * Its element type.
 */
type: ColumnType, 
/**
 * Byte offset of the column in the decompressed blob.
 */
offset: number, 
/**
 * Whether each value is stored as the difference from the one before (undo with a running sum).
 */
delta: boolean, };

export type ColumnType = "f64" | "u32" | "u8";

export type ComparePage = { kind: "compare", title: string, generated_by: string, kinds: Array<string>, comparison: Comparison, workloads: Array<CompareWorkload>, };

export type CompareWorkload = { name: string, 
/**
 * Per run: its own bin width (a round width giving at most DEFAULT_BINS bins).
 */
bin_ns: Array<number | null>, 
/**
 * Per run (in the comparison's order): its median iteration's charts, if it has the workload.
 */
runs: Array<CompareRunData | null>, };

export type CompareRunData = { iteration: number, 
/**
 * The measured phase's length: the run's own time axis.
 */
wall_ns: number, notes: Array<string>, series: TimeSeries | null, latency: LatencyHistView | null, sizes: SizeHistView | null, };

export type Comparison = { 
/**
 * The runs, in the order given (the baseline among them).
 */
runs: Array<RunInfo>, 
/**
 * The baseline's index in `runs`.
 */
baseline: number, 
/**
 * What the averages are.
 */
mean: string, 
/**
 * One row per workload, in order of first appearance.
 */
workloads: Array<WorkloadRow>, 
/**
 * Each run's geometric mean of its ratios over `mean_workloads`.
 */
mean_ratio: Array<number | null>, 
/**
 * The workloads every run has (with a ratio above zero): what the means cover.
 */
mean_workloads: Array<string>, 
/**
 * The settings that differ between runs, so their figures may not be comparable.
 */
differences: Array<SettingDiff>, 
/**
 * Each run's capacity sweep (`naslab sweep`), when it is one: its curve is compared
 * by knee, peak achieved rate and overall response time, and drawn in the page.
 */
sweeps: Array<Sweep | null>, 
/**
 * Runs made behind different emulated links, as a sweep against the round trip;
 * absent unless at least two runs crossed different links.
 */
links: LinkSweep | null, };

export type RunInfo = { 
/**
 * A column letter: A, B, C ...
 */
letter: string, 
/**
 * The column's heading: the device (`--device`) when the run names one, with the
 * letter added when two runs name the same device; otherwise the letter.
 */
column: string, 
/**
 * Its label and time stamp (`run/20260101T000000Z`), or its path when those repeat.
 */
name: string, 
/**
 * The device measured, as given with `--device` (and `--firmware`).
 */
device: string | null, 
/**
 * The run directory.
 */
dir: string, 
/**
 * When it started.
 */
started_at: string, 
/**
 * What it measured: target path, backend, file system and source.
 */
target: string, 
/**
 * Cache mode and pacing.
 */
options: string, };

export type Spread = { 
/**
 * This run's median over the baseline's (as in `ratio`).
 */
ratio: number, 
/**
 * The uncertainty of `ratio`: half of each run's min..max range relative to its
 * median, added in quadrature, times the ratio.
 */
plus_minus: number, 
/**
 * Whether the two runs' min..max ranges do not overlap: the difference is larger
 * than the spread of the iterations.
 */
beyond_spread: boolean, 
/**
 * Iterations behind this run's and the baseline's figures.
 */
iterations: [number, number], };

export type WorkloadRow = { 
/**
 * The workload.
 */
name: string, 
/**
 * Each run's throughput (its median iteration), when the run has the workload.
 */
mb_s: Array<number | null>, 
/**
 * Each run's min..max throughput over its iterations.
 */
mb_s_range: Array<[number, number] | null>, 
/**
 * Each run's throughput over the baseline's, when both have it and the baseline's is above zero.
 */
ratio: Array<number | null>, 
/**
 * For runs with several iterations (and a baseline with several): the ratio with its spread.
 */
spread: Array<Spread | null>, 
/**
 * Whether the row is in the geometric mean (every run has it, with a ratio above zero).
 */
in_mean: boolean, };

export type SettingDiff = { 
/**
 * What differs: `pacing`, `cache mode`, `scale`, `naslab version` ...
 */
setting: string, 
/**
 * Each run's value, `-` where the run does not record it.
 */
values: Array<string>, };

export type LinkSweep = { lines: Array<LinkLine>, 
/**
 * The capacity sweeps (`naslab sweep` runs) among the runs, per configuration:
 * each one's knee and peak against its link. Empty when no run is a sweep.
 */
capacity: Array<CapacityLine>, };

export type LinkLine = { workload: string, 
/**
 * The configuration: its target kind and the letters of its runs (`smb: A, C, E`).
 */
configuration: string, points: Array<LinkPoint>, 
/**
 * Whether every point ran the same number of ops, as they must to compare.
 */
same_ops: boolean, };

export type LinkPoint = { 
/**
 * The run's index in the comparison.
 */
run: number, 
/**
 * The link's profile (`lan`, `custom`, ...), or `none` for the server's own port.
 */
link: string, 
/**
 * The round trip the link added, ns (0: no emulated link).
 */
rtt_ns: number, 
/**
 * The rate the link held each direction to, bit/s (0: not limited).
 */
rate_bit_s: number, 
/**
 * The round trip naslab measured before the run, ns, when it did.
 */
rtt_probed_ns: number | null, 
/**
 * The workload's throughput (its median iteration).
 */
mb_s: number, 
/**
 * The median iteration's mean response time of the workload's ops, ns.
 */
mean_op_ns: number, 
/**
 * The median iteration's ops and measured phase.
 */
ops: number, wall_ns: number, };

export type CapacityLine = { configuration: string, points: Array<CapacityPoint>, };

export type CapacityPoint = { 
/**
 * The run's index in the comparison, and its letter.
 */
run: number, column: string, link: string, rtt_ns: number, rate_bit_s: number, rtt_probed_ns: number | null, 
/**
 * The sweep's unit of load (`users`, `ops/s`) and its points.
 */
unit: string, points: number, 
/**
 * The highest load every point up to met the cap and kept up; absent: none did.
 */
knee: number | null, peak_achieved_ops_s: number, overall_response_ns: number, };
