//! One iteration of one workload, end to end: a fresh directory, preparation, cache
//! handling, the measured phase, the op records and the results.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use naslab_results::{CacheMode, IterationResult, PrepareResult};
use naslab_trace::OpKind;

use crate::backend::{BackendOptions, OpError, Target};
use crate::clock::MonotonicClock;
use crate::pacing::Pacing;
use crate::plan::Plan;
use crate::prepare::{PrepareError, drop_caches, prepare_with, write_back};
use crate::records::{LiveRecords, RecordSink, RecordsError};
use crate::replay::{Phase, Progress, ReplayError, ReplayOptions, replay_with};
use crate::summarize::summarize;
use crate::verify::Verifier;

/// Why an iteration could not run (a failure during the measured phase is not one of
/// these: it ends the iteration early and is reported in its results).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(
        "{trace}:{line}: the {backend} backend cannot do '{op}'{why}; run this trace on a backend that can (e.g. posix)"
    )]
    Unsupported {
        backend: &'static str,
        op: OpKind,
        trace: String,
        line: u64,
        /// Why not, when there is more to say (starts with "; " or is empty).
        why: &'static str,
    },
    #[cfg_attr(
        target_os = "linux",
        error(
            "the {backend} backend keeps at most {max} ops in flight per stream, and the workload asks for {asked}; lower its queue_depth or use a backend with queued I/O (posix, smb)"
        )
    )]
    #[cfg_attr(
        not(target_os = "linux"),
        error(
            "the {backend} backend keeps at most {max} ops in flight per stream, and the workload asks for {asked}; lower its queue_depth or use a backend with queued I/O (windows, smb)"
        )
    )]
    QueueDepth {
        backend: &'static str,
        asked: u32,
        max: u32,
    },
    #[error(
        "direct I/O does not work on this target ({0}); the file system may not support O_DIRECT (tmpfs before Linux 6.6 and some FUSE file systems do not): run with --cache drop instead"
    )]
    Direct(OpError),
    #[error("the workload's I/O buffers need {:.1} MiB (largest read {:.1} MiB, largest write {:.1} MiB, queue depth {depth}, {streams} streams), but only {:.1} MiB {what}; free memory, or use smaller ops, a lower queue_depth or fewer streams", mib(*needed), mib(*max_read), mib(*max_write), mib(*available))]
    Memory {
        needed: u64,
        available: u64,
        what: &'static str,
        max_read: u64,
        max_write: u64,
        depth: u32,
        streams: usize,
    },
    #[error(
        "the workload opens its files for direct I/O (flag 'direct'), which does not work on this target ({0}); the file system may not support O_DIRECT (tmpfs before Linux 6.6 and some FUSE file systems do not): run it on a disk file system or a share"
    )]
    DirectOpens(OpError),
    #[error("cannot connect to the target for preparation: {0}")]
    Connect(OpError),
    #[error("cannot empty the workload's directory '{dir}' on the target: {error}")]
    WorkloadDir { dir: String, error: OpError },
    #[error(transparent)]
    Prepare(#[from] PrepareError),
    #[error(
        "cannot drop the page cache through /proc/sys/vm/drop_caches ({0}); it needs root: run as root or without --drop-all-caches"
    )]
    DropAllCaches(std::io::Error),
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error("stopped before the measured phase began")]
    Cancelled,
    #[error("{0}")]
    NotStarted(String),
    #[error("the warm-up failed at {0}")]
    Warmup(String),
    #[error(
        "--verify cannot check a file written through two names, and the trace makes a hard link (the 'link' op on line {0}); run it without --verify"
    )]
    VerifyHardLinks(u64),
    #[error("--verify could not read the workload's files back: {0}")]
    ReadBack(OpError),
    #[error("cannot write op records to '{path}': {source}")]
    Records {
        path: PathBuf,
        #[source]
        source: RecordsError,
    },
    /// The measured phase completed but its op records could not all be written (a full
    /// `--out`): the iteration's figures, made from the measurements, are kept.
    #[error(
        "cannot write op records to '{path}': {source}; the iteration's figures are kept, its records hold only what was written before"
    )]
    RecordsLost {
        result: Box<IterationResult>,
        path: PathBuf,
        #[source]
        source: RecordsError,
    },
}

/// The prefixes of a target's extra protocol ops (a client profile's hints) in an
/// iteration's `op_stats`, by phase: preparation, warm-up, the measured phase.
pub const EXTRA_OP_PHASES: [&str; 3] = ["prepare_", "warmup_", ""];

/// How many of the extra protocol op `op` an iteration's targets sent, all phases.
pub fn extra_op_count(result: &IterationResult, op: &str) -> u64 {
    EXTRA_OP_PHASES
        .iter()
        .filter_map(|phase| result.op_stats.get(&format!("{phase}{op}")))
        .map(|s| s.count)
        .sum()
}

/// Everything an iteration needs.
pub struct IterationSpec<'a> {
    pub plan: &'a Plan,
    pub target: &'a dyn Target,
    pub cache: CacheMode,
    pub replay: ReplayOptions,
    /// Where spools go (a local, writable directory).
    pub spool_dir: &'a Path,
    /// Where the op records go; `None` keeps none.
    pub records_path: Option<PathBuf>,
    pub progress: &'a Progress,
    /// After dropping the prepared files' pages, also drop the whole page cache (root only).
    pub drop_all_caches: bool,
    /// What else sees the op records as they are written, given the records file's name.
    pub record_sink: Option<&'a SinkMaker<'a>>,
}

/// Makes an iteration's [`RecordSink`] from its records file's name (`None`: no sink for
/// this one); the sink is told the phase's timing when it ends.
pub type SinkMaker<'a> = dyn Fn(&str) -> Option<Box<dyn RecordSink>> + 'a;

/// Checks, before anything is written, that the target can do every op of the plan.
pub fn check_caps(plan: &Plan, target: &dyn Target) -> Result<(), RunError> {
    let caps = target.caps();
    if plan.queue_depth() > caps.max_queue_depth {
        return Err(RunError::QueueDepth {
            backend: target.backend_name(),
            asked: plan.queue_depth(),
            max: caps.max_queue_depth,
        });
    }
    for k in OpKind::ALL {
        if plan.op_counts[k.index()] + plan.warmup_counts[k.index()] > 0 && !caps.can(k) {
            return Err(RunError::Unsupported {
                backend: target.backend_name(),
                op: k,
                trace: plan.source.clone(),
                line: plan.first_line[k.index()],
                why: unsupported_why(target.backend_name(), k),
            });
        }
    }
    Ok(())
}

/// What more there is to say of an op a backend cannot do.
fn unsupported_why(backend: &str, op: OpKind) -> &'static str {
    match (backend, op) {
        ("nfs", OpKind::Lock | OpKind::Unlock) => {
            ": NFSv3 has no byte-range locks of its own (they need the separate NLM protocol, which naslab does not speak)"
        }
        _ => "",
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

/// Checks, before anything is written, that the replay's I/O buffers fit in the memory
/// this process can have (see [`crate::buffer::StreamBuffers`] for how they are sized).
pub fn check_memory(plan: &Plan) -> Result<(), RunError> {
    let needed = plan.buffer_bytes();
    let Some((available, what)) = crate::environment::memory_for_buffers() else {
        return Ok(());
    };
    if needed <= available {
        return Ok(());
    }
    let all = || plan.streams.iter().chain(&plan.warmup);
    Err(RunError::Memory {
        needed,
        available,
        what,
        max_read: all().map(|s| s.max_read).max().unwrap_or(0),
        max_write: all().map(|s| s.max_write).max().unwrap_or(0),
        depth: plan.queue_depth(),
        streams: plan.streams.len().max(plan.warmup.len()),
    })
}

/// The preparer's side of a shared file set's barrier ([`crate::SharedSet`]): tells the
/// other clients once that the set is ready, or, when dropped before (an early return),
/// that it is not, so they never wait for a preparer that has gone.
struct SetReady<'a>(Option<&'a dyn crate::StartGate>);

impl SetReady<'_> {
    fn ready(&mut self) -> Result<(), String> {
        match self.0.take() {
            Some(g) => g.prepared(Ok(())),
            None => Ok(()),
        }
    }
}

impl Drop for SetReady<'_> {
    fn drop(&mut self) {
        if let Some(g) = self.0.take() {
            let _ = g.prepared(Err("its preparation stopped early".into()));
        }
    }
}

/// Runs one iteration of a workload.
pub fn run_iteration(spec: &IterationSpec, iteration: u32) -> Result<IterationResult, RunError> {
    let plan = spec.plan;
    // With a file set shared by a multi-client run's clients, only its preparer empties
    // the directory and prepares it; the others wait for it before anything else, and
    // the preparer tells them once it is ready (or, leaving early, that it is not).
    let gate = spec.replay.start_gate.as_deref();
    let shared = gate.and_then(|g| g.shared());
    let preparing = shared.is_none_or(|s| s.preparer);
    if let (Some(g), Some(false)) = (gate, shared.map(|s| s.preparer)) {
        g.prepared(Ok(())).map_err(RunError::NotStarted)?;
    }
    let mut set_ready = SetReady(gate.filter(|_| shared.is_some_and(|s| s.preparer)));
    check_caps(plan, spec.target)?;
    check_memory(plan)?;
    let name = plan.header.workload.as_str();
    if preparing {
        spec.target
            .fresh_workload_dir(name)
            .map_err(|error| RunError::WorkloadDir {
                dir: name.to_string(),
                error,
            })?;
    }
    let mut replay_options = spec.replay.clone();
    replay_options.backend.direct = spec.cache == CacheMode::Direct;
    replay_options.records = spec.records_path.is_some();
    if replay_options.backend.direct {
        spec.target.check_direct(name).map_err(RunError::Direct)?;
    } else if plan.direct_opens > 0 {
        spec.target
            .check_direct(name)
            .map_err(RunError::DirectOpens)?;
    }
    let data = spec.replay.data;
    let links = OpKind::Link.index();
    if data.verify && plan.op_counts[links] + plan.warmup_counts[links] > 0 {
        return Err(RunError::VerifyHardLinks(plan.first_line[links]));
    }
    let verifier = data.verify.then(|| Verifier::new(plan, data));
    let verifier = verifier.as_ref();
    let prepared = {
        let mut backend = spec
            .target
            .connect(name, plan.files.clone(), BackendOptions::default())
            .map_err(RunError::Connect)?;
        let mut prepared = if preparing {
            // Another client that failed before the start stops this preparation at once
            // (the phase would not start anyway).
            let peer_stop = std::cell::OnceCell::new();
            let stop = || {
                spec.replay
                    .cancel
                    .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
                    || gate
                        .and_then(|g| g.stop_preparing())
                        .map(|why| peer_stop.get_or_init(|| why))
                        .is_some()
            };
            let outcome = prepare_with(
                plan,
                backend.as_mut(),
                &spec.progress.prepared_bytes,
                &data,
                verifier,
                &stop,
            );
            let removed_if_failed = |mut e: PrepareError| {
                // A preparation that stops half-way (a full target, most often) takes
                // back what it wrote, or says how to.
                let removed = spec.target.fresh_workload_dir(name).is_ok();
                #[cfg(target_os = "linux")]
                let target = spec.target.local_root().and_then(|r| r.root().parent());
                #[cfg(not(target_os = "linux"))]
                let target = None;
                e.note_left(removed, target);
                e
            };
            match (outcome, peer_stop.into_inner()) {
                (Ok(p), _) => p,
                (Err(e), Some(why)) => {
                    let _ = removed_if_failed(e);
                    return Err(RunError::NotStarted(format!(
                        "stopped preparing after {} of {} bytes: {why}",
                        spec.progress.prepared_bytes.load(Ordering::Relaxed),
                        plan.prepared_bytes()
                    )));
                }
                (Err(e), None) => return Err(removed_if_failed(e).into()),
            }
        } else {
            PrepareResult::default()
        };
        set_ready.ready().map_err(RunError::NotStarted)?;
        if spec.cache == CacheMode::Drop {
            drop_caches(plan, backend.as_mut())?;
        } else if preparing && backend.caps().can(OpKind::Fsync) {
            // Part of the preparation: its data is written back before anything is timed.
            let start = crate::clock::monotonic_ns();
            write_back(plan, backend.as_mut())?;
            prepared.wall_ns += crate::clock::monotonic_ns() - start;
        }
        if spec.drop_all_caches {
            drop_page_cache().map_err(RunError::DropAllCaches)?;
        }
        prepared
    };
    // Extra protocol ops (a client profile's hints) are reported per phase, apart from
    // the workload's own figures.
    let prepare_extra = spec.target.take_extra_ops(name);
    if !plan.warmup.is_empty() {
        warm_up(spec, replay_options.clone(), verifier)?;
    }
    let warmup_extra = spec.target.take_extra_ops(name);
    if spec
        .replay
        .cancel
        .is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed))
    {
        return Err(RunError::Cancelled);
    }
    let generator = format!(
        "naslab {} replay of {}",
        env!("CARGO_PKG_VERSION"),
        plan.source
    );
    let records_name = spec
        .records_path
        .as_ref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    let records_error = |source| RunError::Records {
        path: spec.records_path.clone().unwrap_or_default(),
        source,
    };
    std::thread::scope(|scope| {
        // The op records are written while the measured phase runs, on a CPU of its own
        // when the streams leave one (records.rs, beside.rs).
        let mut records = match &spec.records_path {
            None => None,
            Some(path) => {
                let sink = spec
                    .record_sink
                    .zip(records_name.as_deref())
                    .and_then(|(make, name)| make(name));
                let cpu = crate::beside::cpu_for(&replay_options, plan.streams.len());
                let live = LiveRecords::start(scope, path, plan, generator, sink, cpu);
                Some(live.map_err(records_error)?)
            }
        };
        // A multi-client run starts every client's measured phase at one moment, once all
        // its streams are connected.
        let refused = std::cell::OnceCell::new();
        let outcome = replay_with(
            plan,
            spec.target,
            name,
            replay_options.clone(),
            spec.spool_dir,
            spec.progress,
            verifier,
            records.as_ref().map(|r| r.following()),
            || match gate {
                None => Some(clock_for(&replay_options, None)),
                Some(gate) => match gate.wait() {
                    Ok(epoch) => Some(clock_for(&replay_options, Some(epoch))),
                    Err(why) => {
                        let _ = refused.set(why);
                        None
                    }
                },
            },
        );
        // Dropped before the records are finished, they are removed.
        if let Some(why) = refused.into_inner() {
            return Err(RunError::NotStarted(why));
        }
        let mut outcome = outcome?;
        if let Some(r) = records.as_mut() {
            r.phase_over().map_err(records_error)?;
        }
        let mut result = summarize(iteration, prepared, &outcome);
        result.ops_planned = plan.ops();
        if plan.streams.len() > 1 {
            result.ordering = Some(crate::summarize::ordering(
                &plan.edges,
                &outcome,
                !replay_options.unordered,
            ));
        }
        result.write_data_ahead = crate::summarize::write_data_ahead(&outcome);
        result.failover = crate::summarize::failover(&outcome, &plan.files);
        result.durable_handles = crate::summarize::durable_handles(&outcome);
        if let Some(v) = verifier {
            // Not measured: every file that should exist is read back and checked.
            let mut backend = spec
                .target
                .connect(name, plan.files.clone(), BackendOptions::default())
                .map_err(RunError::Connect)?;
            v.read_back(plan, backend.as_mut())
                .map_err(RunError::ReadBack)?;
            result.verify = Some(v.summary());
        }
        let [prepare, warmup, measured] = EXTRA_OP_PHASES;
        for (prefix, extra) in [
            (prepare, prepare_extra),
            (warmup, warmup_extra),
            (measured, spec.target.take_extra_ops(name)),
        ] {
            for (op, stats) in extra {
                result.op_stats.insert(format!("{prefix}{op}"), stats);
            }
        }
        if let Some(r) = records {
            // A stream whose measurement spool could not be written (a full directory)
            // kept its figures but not its records: the records stop where the merge
            // met its spool's end, and that is the reason given.
            let lost = outcome
                .streams
                .iter_mut()
                .find_map(|s| s.records_lost.take())
                .map(RecordsError::Kept);
            let finished = r.finish(outcome);
            if let Some(source) = lost.or(finished.err()) {
                // The file keeps the records written before the failure, and the
                // figures come from the measurements: both are kept.
                result.records = records_name;
                return Err(RunError::RecordsLost {
                    result: Box::new(result),
                    path: spec.records_path.clone().unwrap_or_default(),
                    source,
                });
            }
            result.records = records_name;
        }
        Ok(result)
    })
}

/// The replay clock: under `--realtime`, waits sleep longer and spin less.
fn clock_for(options: &ReplayOptions, epoch: Option<u64>) -> MonotonicClock {
    let clock = match epoch {
        Some(epoch) => MonotonicClock::with_epoch(epoch),
        None => MonotonicClock::starting_now(),
    };
    if options.realtime {
        clock.with_spin_ns(crate::realtime::SPIN_NS)
    } else {
        clock
    }
}

/// Runs the plan's warm-up ops (all streams at once, as fast as possible, unmeasured,
/// stopping at the first failure), then handles the client cache again, since the
/// warm-up may have written files the measured phase reads.
fn warm_up(
    spec: &IterationSpec,
    measured: ReplayOptions,
    verifier: Option<&Verifier>,
) -> Result<(), RunError> {
    let plan = spec.plan;
    let name = plan.header.workload.as_str();
    let options = ReplayOptions {
        pacing: Pacing::Afap,
        records: false,
        stop_on_error: true,
        phase: Phase::Warmup,
        realtime: false,
        ..measured
    };
    let progress = Progress::default();
    let outcome = replay_with(
        plan,
        spec.target,
        name,
        options,
        spec.spool_dir,
        &progress,
        verifier,
        None,
        || Some(MonotonicClock::starting_now()),
    )?;
    if let Some(f) = outcome.fatal() {
        return Err(RunError::Warmup(format!("{}:{f}", plan.source)));
    }
    if spec.drop_all_caches {
        drop_page_cache().map_err(RunError::DropAllCaches)?;
    }
    if spec.cache == CacheMode::Drop {
        let mut backend = spec
            .target
            .connect(name, plan.files.clone(), BackendOptions::default())
            .map_err(RunError::Connect)?;
        for (i, e) in plan.files.entries.iter().enumerate() {
            if e.kind != naslab_trace::FileKind::File {
                continue;
            }
            match backend.drop_cache(i as u32) {
                Ok(()) => {}
                // The warm-up may have removed it, or never made it.
                Err(err) if err.errno == crate::errno::ENOENT => {}
                Err(err) => {
                    return Err(RunError::Prepare(crate::prepare::PrepareError {
                        path: e.path.clone(),
                        stage: "dropping cached pages after the warm-up",
                        error: err,
                        hint: "",
                        left: String::new(),
                    }));
                }
            }
        }
    }
    Ok(())
}

/// Writes dirty pages back, then drops the whole page cache, dentries and inodes.
#[cfg(not(target_os = "linux"))]
fn drop_page_cache() -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "dropping the whole page cache is done through Linux's /proc/sys/vm/drop_caches, which this system has not",
    ))
}

/// Writes dirty pages back, then drops the whole page cache, dentries and inodes.
#[cfg(target_os = "linux")]
fn drop_page_cache() -> std::io::Result<()> {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", b"3")
}

#[cfg(test)]
mod tests {
    use super::*;
    use naslab_results::OpStats;

    #[test]
    fn ops_a_protocol_cannot_do_say_why() {
        assert!(unsupported_why("nfs", OpKind::Lock).contains("NLM"));
        assert_eq!(unsupported_why("windows", OpKind::Statfs), "");
        assert_eq!(unsupported_why("windows", OpKind::Lock), "");
        assert_eq!(unsupported_why("smb", OpKind::Lock), "");
        assert_eq!(unsupported_why("posix", OpKind::Lock), "");
    }

    #[test]
    fn extra_ops_are_counted_over_every_phase_and_only_by_their_name() {
        let mut r = IterationResult::default();
        for (name, count) in [
            ("prepare_hint_write", 3),
            ("warmup_hint_write", 5),
            ("hint_write", 7),
            ("hint_set_eof", 100),
            ("write", 1000),
        ] {
            r.op_stats.insert(
                name.to_string(),
                OpStats {
                    count,
                    ..OpStats::default()
                },
            );
        }
        assert_eq!(extra_op_count(&r, crate::backend::HINT_WRITE_OP), 15);
        assert_eq!(extra_op_count(&r, "hint_set_eof"), 100);
        assert_eq!(extra_op_count(&r, "nothing"), 0);
    }
}
