//! The measured phase: one thread per stream, each issuing its ops one at a time in
//! trace order, paced, timed on CLOCK_MONOTONIC, and recorded.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock, mpsc};

use naslab_results::StreamLatency;
use naslab_trace::OpKind;

use crate::backend::{BackendOptions, OpError, Target};
use crate::backend::{IoMemory, IoRegion};
use crate::buffer::{LentBuf, StreamBuffers};
use crate::clock::{Clock, tighten_timer_slack};
use crate::data::{BLOCK, DataSpec};
use crate::pacing::Pacing;
use crate::plan::Plan;
use crate::realtime::{self, CpuChoice, MemoryLock, Priority};
use crate::spool::Spool;
use crate::spool_io::{BackgroundWriter, Landing, PrefetchReader, spool_io};
use crate::verify::Verifier;

mod ahead;
mod order;
mod queued;
mod stream;

use ahead::Ahead;
pub use ahead::AheadCounts;
pub use order::OrderWaits;
use order::{Gate, Order};
use stream::StreamRun;

/// Which of a plan's op sets a replay runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    /// The warm-up ops: run first, unmeasured.
    Warmup,
    /// The measured ops.
    #[default]
    Measured,
}

/// How the measured phase runs.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    pub pacing: Pacing,
    pub backend: BackendOptions,
    /// Keep every op's measurement (for the op records file).
    pub records: bool,
    /// Write the op records after the phase, never beside it (see
    /// [`crate::records::LiveRecords`]).
    pub records_after_phase: bool,
    /// Stop at the first failed op, not only at fatal ones.
    pub stop_on_error: bool,
    /// Which ops to run.
    pub phase: Phase,
    /// Stop issuing ops this long after the first one (the rest of the trace is skipped);
    /// a paced wait for a later op ends at the limit too.
    pub time_limit_ns: Option<u64>,
    /// Set from outside (a signal handler) to stop issuing: ops in flight complete, the
    /// rest are skipped, and the outcome holds what was done.
    pub cancel: Option<&'static AtomicBool>,
    /// What written blocks hold.
    pub data: DataSpec,
    /// Stream threads under SCHED_FIFO, pinned, with memory locked (see [`crate::realtime`]).
    pub realtime: bool,
    /// Passed right before the measured phase (not the warm-up) starts; see [`StartGate`].
    pub start_gate: Option<Arc<dyn StartGate>>,
    /// Run the streams without the happens-before edges the plan holds between them
    /// (`--no-ordering`): each as fast as its pacing allows, whatever the others do.
    pub unordered: bool,
    /// Whether a thread makes each writing stream's write data ahead of it (see
    /// [`ahead`]): `None` leaves it to [`writes_made_ahead`]'s rule, `Some(false)` never,
    /// `Some(true)` wherever it can be (whatever the CPUs).
    pub write_ahead: Option<bool>,
}

/// How a multi-client run's clients start and stop their measured phases together: the
/// job's side of each iteration, asked by the engine at the points where clients must
/// agree.
pub trait StartGate: Send + Sync {
    /// Called once per iteration after preparation and warm-up: waits for every client
    /// and returns the CLOCK_MONOTONIC instant that is the measured phase's zero (the
    /// same moment on every client), or why it must not start (another client failed).
    fn wait(&self) -> Result<u64, String>;
    /// Asked every few milliseconds, by the thread that called `wait`, while the
    /// measured phase runs: true once another client has failed, which stops this
    /// client's streams (they issue nothing more).
    fn peer_failed(&self) -> bool;
    /// Asked by the preparing thread between files and chunks while this client prepares
    /// its file set: why it must stop (another client failed before the start), if so.
    fn stop_preparing(&self) -> Option<String> {
        None
    }
    /// Set when the clients share one file set (`--shared-files`).
    fn shared(&self) -> Option<SharedSet> {
        None
    }
    /// With a shared file set: called by every client once the preparer is done (with
    /// its outcome, `Err` being why it failed): returns when the set is ready, or why it
    /// is not (the preparer failed).
    fn prepared(&self, mine: Result<(), String>) -> Result<(), String> {
        mine
    }
}

/// One file set for every client of a multi-client run: the first client empties the
/// workload's directory and prepares it, the others wait ([`StartGate::prepared`]) and
/// prepare nothing.
#[derive(Debug, Clone, Copy)]
pub struct SharedSet {
    /// Whether this client prepares the set.
    pub preparer: bool,
}

/// How often a multi-client run's phase asks whether another client has failed.
const PEER_POLL: std::time::Duration = std::time::Duration::from_millis(5);

impl std::fmt::Debug for dyn StartGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StartGate")
    }
}

/// How a replay's measurements are followed while it runs, for the op records written
/// beside it ([`crate::records::LiveRecords`]).
#[derive(Clone, Copy)]
pub struct Following<'a> {
    /// One per stream, told of each chunk of measurements once it is on file.
    pub landings: &'a [Arc<Landing>],
    /// The CPU the records are written on: the stream threads keep off it.
    pub kept_cpu: Option<usize>,
}

/// Live counters for a progress display; written by the streams, read by anyone.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes preparation has written.
    pub prepared_bytes: AtomicU64,
    /// Ops the measured phase has completed.
    pub ops: AtomicU64,
    /// Bytes the measured phase has moved.
    pub bytes: AtomicU64,
}

/// An op failure that stopped the run.
#[derive(Debug, Clone)]
pub struct Fatal {
    pub stream: u32,
    pub line: u64,
    pub kind: OpKind,
    pub path: String,
    pub error: OpError,
}

impl std::fmt::Display for Fatal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: {} of '{}' (stream {}) failed: {}",
            self.line, self.kind, self.path, self.stream, self.error
        )?;
        match self.error.errno {
            crate::errno::ENOSPC | crate::errno::EDQUOT => {
                write!(
                    f,
                    "; the target is full: free space there or run a smaller --scale"
                )
            }
            crate::errno::EROFS => write!(
                f,
                "; the target became read-only: check it and remount it read-write"
            ),
            crate::errno::ELOOP => write!(
                f,
                "; something put a symbolic link in the workload directory, and naslab follows none: keep other programs out of <target>/naslab"
            ),
            crate::errno::ENOTCONN | crate::errno::EIO => write!(
                f,
                "; the target stopped answering: check the server or device"
            ),
            _ => Ok(()),
        }
    }
}

/// What one stream measured.
pub struct StreamOutcome {
    pub stream: u32,
    pub ops: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    /// Latency of the ops that succeeded, per op kind, indexed by [`OpKind::index`];
    /// `None` for kinds it never issued.
    pub latency: Vec<Option<StreamLatency>>,
    /// Latency of the ops that failed, kept apart (a failure that never reached the
    /// target takes a fraction of a microsecond and would pull the figures down); made at
    /// a kind's first failure.
    pub failed_latency: Vec<Option<StreamLatency>>,
    pub counts: [u64; OpKind::ALL.len()],
    pub errors: [u64; OpKind::ALL.len()],
    /// Ops that failed with the error the trace expected of them (not in `errors`).
    pub expected_failures: [u64; OpKind::ALL.len()],
    /// Ops the trace expected to fail that succeeded (in `errors` too).
    pub missing_failures: [u64; OpKind::ALL.len()],
    /// Failures by (op kind index, errno).
    pub errnos: HashMap<(usize, i32), u64>,
    /// Issue time minus scheduled time, for paced runs (`None` under `afap`).
    pub lag: Option<StreamLatency>,
    /// When its first op was issued.
    pub first_issued_ns: u64,
    /// When its last op completed.
    pub done_ns: u64,
    pub fatal: Option<Fatal>,
    /// Whether the stream stopped at the time limit with ops left.
    pub time_limited: bool,
    /// One measurement per issued op, in the stream's order.
    pub measured: Option<Spool>,
    /// Why `measured` is missing though records were asked for: its spool could not be
    /// written (a full directory). The other figures are whole.
    pub records_lost: Option<std::io::Error>,
    pub unaligned_direct_ops: u64,
    /// How long it waited for other streams' ops it must follow.
    pub order_waits: OrderWaits,
    /// Under `--realtime`: what the stream's thread asked for and was granted.
    pub realtime: Option<realtime::RealtimeGrant>,
    /// When its writes' data was made ahead by a thread of its own: how often it was.
    pub ahead: Option<AheadCounts>,
    /// What its ops waited through when the path to the server broke.
    pub failover: StreamFailover,
}

/// What one stream's ops waited through when the path to the server broke: the ops
/// during which the backend got over a broken connection ([`crate::backend::Recovery`]
/// grew), each one's latency being its stall.
#[derive(Debug, Clone, Default)]
pub struct StreamFailover {
    /// The backend's recovery counters as last read (after the last op).
    pub seen: crate::backend::Recovery,
    /// Ops whose latency includes a recovery.
    pub stalled_ops: u64,
    pub stall_total_ns: u64,
    pub longest_stall_ns: u64,
    pub longest_stall_kind: Option<OpKind>,
    /// When the first stalled op was issued (replay clock).
    pub first_stall_ns: Option<u64>,
    /// When the first op to succeed from then on completed (the stalled op itself,
    /// when it succeeded).
    pub back_ns: Option<u64>,
    /// Ops that failed from the first stall on: kind, file and error (the first
    /// [`FAILED_NAMED`]).
    pub failed: Vec<(OpKind, u32, crate::backend::OpError)>,
    pub failed_ops: u64,
}

/// How many failed ops a stream names; the rest are counted.
pub const FAILED_NAMED: usize = 100;

impl StreamOutcome {
    /// An empty outcome with a histogram for every op kind the stream issues, sized for
    /// its ops of that kind (`counts`) and made before the first op, so no allocation
    /// falls inside the measured phase.
    pub(crate) fn new(counts: &[u64; OpKind::ALL.len()], stream: u32) -> StreamOutcome {
        StreamOutcome {
            stream,
            ops: 0,
            bytes_read: 0,
            bytes_written: 0,
            latency: counts
                .iter()
                .map(|&n| (n > 0).then(|| StreamLatency::for_values(n)))
                .collect(),
            failed_latency: (0..OpKind::ALL.len()).map(|_| None).collect(),
            counts: [0; OpKind::ALL.len()],
            errors: [0; OpKind::ALL.len()],
            expected_failures: [0; OpKind::ALL.len()],
            missing_failures: [0; OpKind::ALL.len()],
            errnos: HashMap::new(),
            lag: None,
            first_issued_ns: u64::MAX,
            done_ns: 0,
            fatal: None,
            time_limited: false,
            measured: None,
            records_lost: None,
            unaligned_direct_ops: 0,
            order_waits: OrderWaits::default(),
            realtime: None,
            ahead: None,
            failover: StreamFailover::default(),
        }
    }
}

/// Why the measured phase could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("cannot connect stream {stream} to the target: {error}")]
    Connect { stream: u32, error: OpError },
    #[error(
        "cannot keep op measurements in '{dir}': {cause}{}",
        crate::plan::spool_hint(cause)
    )]
    Spool {
        dir: std::path::PathBuf,
        cause: std::io::Error,
    },
    #[error("this target cannot keep {depth} ops in flight per stream: {error}")]
    Queue { depth: usize, error: OpError },
    #[error("cannot allocate stream {stream}'s {bytes} bytes ({:.1} MB) of I/O buffers; free memory, raise the memory limit (ulimit -v) or use smaller ops or fewer streams", *bytes as f64 / 1e6)]
    Memory { stream: u32, bytes: u64 },
    #[error("a stream thread failed: {0}")]
    Thread(String),
}

/// The measured phase's outcome.
pub struct ReplayOutcome {
    pub streams: Vec<StreamOutcome>,
    /// When the first op of any stream was issued, on the replay clock.
    pub start_ns: u64,
    /// From the first issue to the last completion.
    pub wall_ns: u64,
    /// Under `--realtime`: what the kernel granted the streams, and what it refused.
    pub realtime: Option<naslab_results::RealtimeGranted>,
}

impl ReplayOutcome {
    /// The first fatal failure, if any stream had one.
    pub fn fatal(&self) -> Option<&Fatal> {
        self.streams.iter().find_map(|s| s.fatal.as_ref())
    }
}

/// A stream whose writes are all smaller makes their data itself: taking a slot from the
/// ring costs about 1 µs more between ops than making 4 KiB in the stream (a 4 KiB random
/// write cell on zram, under `chrt`: 114,500 IOPS with the ring, 126,800 to 137,400
/// without). Those figures are from a slower generator (128 KiB then took about 35 µs
/// to make); at 12.3 GB/s (docs/data.md, 2026-11-28) 4 KiB take about 0.35 µs and 128
/// KiB about 11 µs: by those figures the ring still costs more than it saves for 4 KiB
/// one op at a time. With a queue it came out even: the 4 KiB random write cell at depth
/// 32 on zram, five ABBA rounds against fio with the threshold at 4 KiB and at 16 KiB,
/// IOPS ratio medians 0.976 and 0.969 (docs/benchmarks.md), within the rounds' spread.
const AHEAD_MIN_WRITE: u64 = 16 << 10;

/// Whether a stream writes enough to gain from having its data made ahead.
fn gains_from_ahead(s: &crate::plan::StreamPlan) -> bool {
    s.op_counts[OpKind::Write.index()] > 0 && s.max_write >= AHEAD_MIN_WRITE
}

/// Whether the streams' writes can get their data made ahead (see [`ahead`]), and if so
/// whether they should. They can for streams that write enough to gain from it
/// ([`gains_from_ahead`]), when the data is not all zeros and without `--verify` (whose
/// appends learn their offset only when issued), at any queue depth: a queue overlaps
/// the making with the ops in flight only where the device works apart from the CPU
/// that submits (on zram, or a page-cache write, the write is done in the submitting
/// call, and so was the making before it). They should when there is a CPU for each
/// maker beside each such stream: else the making only moves between the threads of a
/// full machine.
fn writes_made_ahead(
    streams: &[crate::plan::StreamPlan],
    data: &DataSpec,
    verify: bool,
) -> Option<bool> {
    let writing = streams.iter().filter(|s| gains_from_ahead(s)).count();
    if data.only_zeros() || verify || writing == 0 {
        return None;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Some(2 * writing <= cpus)
}

/// Replays `plan` against `target`, in `workload_dir`. `make_clock` is called once all
/// streams are connected; its zero is the start of the measured phase.
pub fn replay<C: Clock + Sync>(
    plan: &Plan,
    target: &dyn Target,
    workload_dir: &str,
    options: ReplayOptions,
    spool_dir: &Path,
    progress: &Progress,
    make_clock: impl FnOnce() -> C,
) -> Result<ReplayOutcome, ReplayError> {
    replay_with(
        plan,
        target,
        workload_dir,
        options,
        spool_dir,
        progress,
        None,
        None,
        || Some(make_clock()),
    )
}

/// Like [`replay`]; with a `verifier`, every write is booked in it and every read is
/// checked against it (outside the ops' timing). With `following` (when
/// `options.records`), each stream's measurements are followed as they land on file.
/// `make_clock` may refuse the start (`None`, a multi-client run whose other client
/// failed): then no op is issued and the replay fails with "stopped before it began".
#[allow(clippy::too_many_arguments)]
pub fn replay_with<C: Clock + Sync>(
    plan: &Plan,
    target: &dyn Target,
    workload_dir: &str,
    options: ReplayOptions,
    spool_dir: &Path,
    progress: &Progress,
    verifier: Option<&Verifier>,
    following: Option<Following>,
    make_clock: impl FnOnce() -> Option<C>,
) -> Result<ReplayOutcome, ReplayError> {
    // Shared by every stream thread.
    let options = &options;
    let streams = match options.phase {
        Phase::Warmup => &plan.warmup,
        Phase::Measured => &plan.streams,
    };
    let n = streams.len();
    // Many streams each get smaller spool buffers, so memory stays modest at 600 streams.
    let buffer = if n > 64 { 16 << 10 } else { 256 << 10 };
    // Streams connect, say they are ready, then block on the gate until the clock is set:
    // every stream starts at once, and a failure to spawn releases the others with None.
    let gate: RwLock<Option<C>> = RwLock::new(None);
    let (ready_tx, ready_rx) = mpsc::channel::<()>();
    let stop = AtomicBool::new(false);
    let depth = plan.queue_depth() as usize;
    // Spools are read ahead and written behind by a thread of their own, so the stream
    // threads do no spool I/O during the measured phase.
    let (io, io_worker) = spool_io();
    // What the kernel refuses is kept for the results (ReplayOutcome::realtime).
    let (_memory_lock, memory_refused) = match options.realtime.then(MemoryLock::lock) {
        Some(Ok(lock)) => (Some(lock), None),
        Some(Err(why)) => (None, Some(why)),
        None => (None, None),
    };
    let kept_cpu = following.and_then(|f| f.kept_cpu);
    // The CPUs the run may use, before any stream thread pins itself.
    let run_cpus = realtime::allowed_cpus();
    let run_cpus = &run_cpus[..];
    let cpus = if options.realtime {
        CpuChoice::sample(n, kept_cpu)
    } else {
        CpuChoice::default()
    };
    let cpus = &cpus;
    // Off the CPU kept for the records written beside the phase (crate::beside).
    let stream_cpus = kept_cpu.map(crate::beside::stream_cpus);
    let stream_cpus = stream_cpus.as_deref();
    let gates: Vec<Gate> = (0..n).map(|_| Gate::default()).collect();
    let gates = &gates[..];
    let make_ahead = writes_made_ahead(streams, &options.data, verifier.is_some())
        .is_some_and(|cpus_spare| options.write_ahead.unwrap_or(cpus_spare));
    let outcomes = std::thread::scope(|scope| {
        let io_thread = std::thread::Builder::new()
            .name("spool-io".into())
            .spawn_scoped(scope, move || {
                // Kept off the stream threads' CPUs, where it would wait behind them: on
                // those left over, else beside the records (which, under --realtime's
                // privileges, run under SCHED_IDLE and yield to it).
                if !cpus.rest.is_empty() {
                    let _ = realtime::pin_to(&cpus.rest);
                } else if let (true, Some(kept)) = (options.realtime, kept_cpu) {
                    let _ = realtime::pin_to(&[kept]);
                }
                io_worker.run()
            })
            .map_err(|e| ReplayError::Thread(format!("cannot start the spool I/O thread: {e}")))?;
        let mut guard = gate.write().unwrap_or_else(|e| e.into_inner());
        let mut handles = Vec::with_capacity(n);
        let mut spawn_error = None;
        for (index, sp) in streams.iter().enumerate() {
            let (gate, stop, ready_tx, io) = (&gate, &stop, ready_tx.clone(), io.clone());
            let files = Arc::clone(&plan.files);
            let builder = std::thread::Builder::new()
                .name(format!("stream-{}", sp.stream))
                .stack_size(target.stream_stack_bytes());
            let spawned = builder.spawn_scoped(scope, move || {
                // Everything that allocates or opens happens before the start.
                let backend = target.connect(workload_dir, files, options.backend);
                let measured = if options.records {
                    let landing = following.and_then(|f| f.landings.get(index)).cloned();
                    Some(BackgroundWriter::new(&io, spool_dir, buffer, landing))
                } else {
                    None
                };
                let reader = PrefetchReader::new(&io, &sp.ops, buffer);
                // A read and a write buffer slot per data op that can be in flight (as many
                // as the stream's budget allows, see StreamBuffers).
                let sizes = StreamBuffers::for_stream(sp.max_read, sp.max_write, depth as u32);
                // The ring of its next writes' data and the maker's own reader of its ops.
                let ahead = if make_ahead && gains_from_ahead(sp) {
                    Ahead::new(sizes.write_slot_len, sizes.slots)
                        .map(Arc::new)
                        .zip(PrefetchReader::new(&io, &sp.ops, buffer).ok())
                } else {
                    None
                };
                drop(io);
                let rbuf = LentBuf::try_zeroed(sizes.read_slot_len * sizes.slots).map(Arc::new);
                // With a ring every write is issued from its slot there: no write buffer.
                let wbuf_len = match ahead {
                    Some(_) => 0,
                    None => sizes.write_slot_len * sizes.slots,
                };
                let wbuf = LentBuf::try_zeroed(wbuf_len).map(Arc::new);
                let mut out = StreamOutcome::new(&sp.op_counts, sp.stream);
                if options.pacing != Pacing::Afap {
                    out.lag = Some(StreamLatency::for_values(sp.op_counts.iter().sum()));
                }
                tighten_timer_slack();
                if let (Some(cpus), false) = (stream_cpus, options.realtime) {
                    let _ = realtime::pin_to(cpus);
                }
                if options.realtime {
                    let priority =
                        Priority::for_stream(options.pacing, sp.densest_second, realtime::SPIN_NS);
                    out.realtime = Some(realtime::enter(cpus.for_stream(index), priority));
                }
                let _ = ready_tx.send(());
                let clock = gate.read().unwrap_or_else(|e| e.into_inner()).clone();
                let mut backend = backend.map_err(|error| {
                    stop.store(true, Ordering::Relaxed);
                    ReplayError::Connect {
                        stream: sp.stream,
                        error,
                    }
                })?;
                let (Some(rbuf), Some(wbuf)) = (rbuf, wbuf) else {
                    stop.store(true, Ordering::Relaxed);
                    return Err(ReplayError::Memory {
                        stream: sp.stream,
                        bytes: sizes.bytes(),
                    });
                };
                // What its queue's ops name their bytes in: regions READS, WRITES, RING.
                let mut regions: Vec<Arc<dyn IoRegion>> = vec![rbuf.clone(), wbuf.clone()];
                if let Some((ring, _)) = &ahead {
                    regions.push(ring.clone());
                }
                let memory = IoMemory::new(regions);
                if depth > 1
                    && let Err(error) = backend.queued(depth as u32, &memory)
                {
                    stop.store(true, Ordering::Relaxed);
                    return Err(ReplayError::Queue { depth, error });
                }
                let spool_err = |cause| ReplayError::Spool {
                    dir: spool_dir.to_path_buf(),
                    cause,
                };
                let measured = measured.transpose().map_err(spool_err)?;
                let reader = reader.map_err(spool_err)?;
                let Some(clock) = clock else {
                    return Err(ReplayError::Thread(
                        "the run was stopped before it began".into(),
                    ));
                };
                let mut run = StreamRun {
                    plan,
                    sp,
                    clock,
                    pacing: options.pacing,
                    stop_on_error: options.stop_on_error,
                    // A backend that moves no data fails nothing either: it does every
                    // op as the trace says, an expected failure too.
                    pretends: !backend.caps().moves_data,
                    time_limit_ns: options.time_limit_ns,
                    limit_from_zero: options.start_gate.is_some(),
                    stop,
                    cancel: options.cancel,
                    progress,
                    measured,
                    sizes,
                    rbuf,
                    wbuf,
                    memory,
                    spool_dir,
                    published: (0, 0),
                    data: options.data,
                    verifier,
                    phase: options.phase,
                    writes: 0,
                    append: vec![false; sp.slots as usize],
                    scratch: vec![0u8; 2 * BLOCK],
                    recheck: None,
                    records_lost: None,
                    order: Order::new(gates, index, &sp.order, !options.unordered),
                    ahead: None,
                    held: None,
                };
                let Some((ring, ops)) = ahead else {
                    return run.run(backend.as_mut(), reader, out);
                };
                run.ahead = Some(Arc::clone(&ring));
                // The maker runs in the replay's scope (joined with the streams), not a
                // scope of the stream's own, whose frames would deepen the stream's stack.
                let (data, phase, stream) = (options.data, options.phase as u64, sp.stream);
                // The maker would inherit the stream's CPU and policy. On the stream's CPU
                // under SCHED_FIFO (--realtime, or chrt) it ran only while the stream
                // slept: on a device that completes in the caller (zram) it never ran,
                // and the stream made all its data itself. It goes to the run's other
                // CPUs, when the stream is pinned off some, and under a real-time policy
                // one priority above the stream's, ahead of the records written beside
                // the phase there (real-time too then, and busy).
                let maker_cpus: Vec<usize> = {
                    let stream_cpus = realtime::allowed_cpus();
                    run_cpus
                        .iter()
                        .copied()
                        .filter(|c| !stream_cpus.contains(c))
                        .collect()
                };
                // The stream waits until the maker has moved: on the stream's CPU under
                // SCHED_FIFO, the maker could not even begin to move while the stream ran.
                let (moved_tx, moved_rx) = mpsc::channel::<()>();
                let maker = std::thread::Builder::new()
                    .name(format!("data-{stream}"))
                    .stack_size(64 << 10)
                    .spawn_scoped(scope, {
                        let ring = Arc::clone(&ring);
                        move || {
                            if !maker_cpus.is_empty() {
                                let _ = realtime::pin_to(&maker_cpus);
                            }
                            realtime::one_above_own_priority();
                            let _ = moved_tx.send(());
                            ring.make(ops, data, phase, stream)
                        }
                    });
                if maker.is_err() {
                    // Without its maker the stream fills each slot itself.
                    ring.finish();
                } else {
                    let _ = moved_rx.recv();
                }
                let finished = ring.finish_on_drop();
                let outcome = run.run(backend.as_mut(), reader, out);
                drop(finished);
                outcome.map(|mut out| {
                    out.ahead = Some(ring.counts());
                    out
                })
            });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error = Some(ReplayError::Thread(format!(
                        "cannot start a thread for stream {}: {e}; lower the number of streams",
                        sp.stream
                    )));
                    break;
                }
            }
        }
        // Once the streams hold their own handles, the I/O thread ends with the last.
        drop(io);
        for _ in 0..handles.len() {
            let _ = ready_rx.recv();
        }
        if spawn_error.is_none() {
            *guard = make_clock();
        }
        drop(guard);
        if let (Some(gate), None, Phase::Measured) =
            (&options.start_gate, &spawn_error, options.phase)
        {
            // Another client's failure stops this one's streams too.
            while !handles.iter().all(|h| h.is_finished()) {
                if gate.peer_failed() {
                    stop.store(true, Ordering::Relaxed);
                    break;
                }
                std::thread::sleep(PEER_POLL);
            }
        }
        let mut outcomes = Vec::with_capacity(n);
        let mut first_error = spawn_error;
        for h in handles {
            match h.join() {
                Ok(Ok(o)) => outcomes.push(o),
                Ok(Err(e)) => {
                    stop.store(true, Ordering::Relaxed);
                    first_error.get_or_insert(e);
                }
                Err(_) => {
                    first_error
                        .get_or_insert(ReplayError::Thread("a stream thread panicked".into()));
                }
            }
        }
        if io_thread.join().is_err() {
            first_error.get_or_insert(ReplayError::Thread("the spool I/O thread panicked".into()));
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(outcomes),
        }
    })?;
    // The measured phase runs from the first issue to the last completion: waking the
    // stream threads is not part of it.
    let start_ns = outcomes
        .iter()
        .map(|o| o.first_issued_ns)
        .min()
        .unwrap_or(0);
    let end_ns = outcomes.iter().map(|o| o.done_ns).max().unwrap_or(0);
    let realtime = options
        .realtime
        .then(|| realtime::granted(&outcomes, memory_refused));
    Ok(ReplayOutcome {
        realtime,
        streams: outcomes,
        start_ns: start_ns.min(end_ns),
        wall_ns: end_ns.saturating_sub(start_ns),
    })
}
