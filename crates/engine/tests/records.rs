//! The op records, written while the measured phase runs or after it: every op once,
//! in issue order, the sink fed what the file holds and told the phase's timing, and
//! nothing left behind by a phase that failed.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use common::{file, plan_of, records_of, spec_of};
use naslab_engine::plan::Plan;
use naslab_engine::records::LiveRecords;
use naslab_engine::replay::ReplayError;
use naslab_engine::{
    IterationSpec, MonotonicClock, NullTarget, Progress, RecordSink, ReplayOptions, ReplayOutcome,
    RunError, StartGate, beside, replay_with, run_iteration,
};
use naslab_results::CacheMode;
use naslab_trace::{FileDecl, Measured, Op, OpFlags, OpKind, Prepare, Trace};

const STREAMS: u32 = 4;
/// Each stream's reads: several chunks of measurements, so that they land while the
/// merge follows them.
const READS: u64 = 30_000;

/// `streams` streams reading their own files, each at offsets of its own.
fn trace_of(streams: u32) -> Trace {
    let mut t = Trace::new("live");
    for s in 0..streams {
        t.files
            .push(file(s + 1, &format!("f{s}"), 1 << 20, true, Prepare::Copy));
        let mut o = Op::new(s, 0, OpKind::Open, s + 1);
        o.flags = OpFlags::READ;
        t.ops.push(o);
        for i in 0..READS {
            let mut r = Op::new(s, i, OpKind::Read, s + 1);
            r.offset = (i * (s as u64 + 1) % 256) * 4096;
            r.len = 4096;
            t.ops.push(r);
        }
        t.ops.push(Op::new(s, READS, OpKind::Close, s + 1));
    }
    t
}

/// What a sink saw: every op and measurement, then the timing it was finished with.
#[derive(Default)]
struct Seen {
    files: usize,
    ops: Vec<(Op, Measured)>,
    finished: Option<(u64, u64)>,
}

struct Collect(Arc<Mutex<Seen>>);

impl RecordSink for Collect {
    fn file(&mut self, _: &FileDecl) {
        self.0.lock().unwrap().files += 1;
    }
    fn op(&mut self, op: &Op, m: &Measured) {
        self.0.lock().unwrap().ops.push((*op, *m));
    }
    fn finish(self: Box<Self>, clock_start_ns: u64, wall_ns: u64) {
        self.0.lock().unwrap().finished = Some((clock_start_ns, wall_ns));
    }
}

/// An iteration of `plan` on the null backend, its records kept at `path`.
fn null_spec<'a>(
    plan: &'a Plan,
    spool: &'a Path,
    path: &Path,
    progress: &'a Progress,
    replay: ReplayOptions,
) -> IterationSpec<'a> {
    IterationSpec {
        replay,
        ..spec_of(
            plan,
            &NullTarget,
            CacheMode::Keep,
            spool,
            Some(path.to_path_buf()),
            progress,
        )
    }
}

/// Checks that the records hold every op of [`trace_of`] `streams` once, in issue order,
/// each stream's reads in its own order.
fn check_records(recs: &[(Op, Measured)], streams: u32, what: &str) {
    assert_eq!(recs.len() as u64, streams as u64 * (READS + 2), "{what}");
    assert!(
        recs.windows(2)
            .all(|w| w[0].1.issued_ns <= w[1].1.issued_ns),
        "{what}: the records are in issue order"
    );
    for s in 0..streams {
        let offsets: Vec<u64> = recs
            .iter()
            .filter(|(o, _)| o.stream == s && o.kind == OpKind::Read)
            .map(|(o, _)| o.offset)
            .collect();
        let want: Vec<u64> = (0..READS)
            .map(|i| (i * (s as u64 + 1) % 256) * 4096)
            .collect();
        assert!(offsets == want, "{what}: stream {s}'s reads, in its order");
    }
}

/// Replays `plan` on the null backend, keeping measurements that `live` follows; the
/// clock is `clock`'s, or none (the phase refused at its start).
fn replay_followed(
    plan: &Plan,
    spool: &Path,
    live: &LiveRecords,
    clock: Option<MonotonicClock>,
) -> Result<ReplayOutcome, ReplayError> {
    let options = ReplayOptions {
        records: true,
        ..ReplayOptions::default()
    };
    let progress = Progress::default();
    let following = Some(live.following());
    replay_with(
        plan,
        &NullTarget,
        "live",
        options,
        spool,
        &progress,
        None,
        following,
        || clock,
    )
}

#[test]
fn records_followed_beside_a_replay_are_merged_as_after_it() {
    // Four streams on the CPUs left beside the kept one: on a machine of up to four CPUs
    // more streams than CPUs, so that some lag and the merge waits for their
    // measurements to land.
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&trace_of(STREAMS), spool.path());
    let path = spool.path().join("beside.ops.nbt.zst");
    let kept = beside::cpu_for(&ReplayOptions::default(), 0).expect("a CPU");
    std::thread::scope(|scope| {
        let mut live =
            LiveRecords::start(scope, &path, &plan, "test".into(), None, Some(kept)).unwrap();
        assert_eq!(live.following().kept_cpu, Some(kept));
        let clock = Some(MonotonicClock::starting_now());
        let out = replay_followed(&plan, spool.path(), &live, clock).unwrap();
        live.phase_over().unwrap();
        assert_eq!(live.finish(out).unwrap(), STREAMS as u64 * (READS + 2));
    });
    check_records(&records_of(&path), STREAMS, "beside");
}

#[test]
fn records_followed_beside_a_phase_that_never_starts_are_removed() {
    // The merge already runs (beside the phase) when the phase fails to start.
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&trace_of(STREAMS), spool.path());
    let path = spool.path().join("failed.ops.nbt.zst");
    let kept = beside::cpu_for(&ReplayOptions::default(), 0).expect("a CPU");
    std::thread::scope(|scope| {
        let live =
            LiveRecords::start(scope, &path, &plan, "test".into(), None, Some(kept)).unwrap();
        let refused = replay_followed(&plan, spool.path(), &live, None);
        assert!(refused.is_err(), "a phase refused at its start fails");
        drop(live);
    });
    assert!(!path.exists(), "{} is left", path.display());
}

#[test]
fn records_written_beside_the_phase_or_after_it_hold_every_op_once_in_issue_order() {
    // One stream, so that on any machine of two CPUs or more a CPU is kept for the
    // records and run_iteration writes them beside the phase.
    const ONE: u32 = 1;
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&trace_of(ONE), spool.path());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for after in [false, true] {
        let path = spool.path().join(format!("live-{after}.ops.nbt.zst"));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let theirs = Arc::clone(&seen);
        let make = move |name: &str| -> Option<Box<dyn RecordSink>> {
            assert!(name.starts_with("live-"), "{name}");
            Some(Box::new(Collect(Arc::clone(&theirs))))
        };
        let progress = Progress::default();
        let replay = ReplayOptions {
            records_after_phase: after,
            ..ReplayOptions::default()
        };
        assert_eq!(
            beside::cpu_for(&replay, ONE as usize).is_some(),
            !after && cpus > 1,
            "where the records are written (after: {after}, {cpus} CPUs)"
        );
        let spec = IterationSpec {
            record_sink: Some(&make),
            ..null_spec(&plan, spool.path(), &path, &progress, replay)
        };
        let result = run_iteration(&spec, 1).unwrap();
        assert_eq!(result.ops, ONE as u64 * (READS + 2));
        let recs = records_of(&path);
        check_records(&recs, ONE, &format!("after: {after}"));
        assert_eq!(recs[0].1.issued_ns, result.clock_start_ns);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.files, ONE as usize);
        assert!(seen.ops == recs, "the sink sees what the file holds");
        assert_eq!(
            seen.finished,
            Some((result.clock_start_ns, result.wall_ns)),
            "the sink is finished with the phase's timing"
        );
        assert_eq!(
            result.records.as_deref(),
            path.file_name().unwrap().to_str()
        );
    }
}

#[test]
fn a_client_whose_phase_never_starts_leaves_no_records() {
    // A multi-client job's client, refused at the start gate: its records are written
    // after the phase, never beside it (its fellows may share the machine).
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&trace_of(STREAMS), spool.path());
    struct Refusing;
    impl StartGate for Refusing {
        fn wait(&self) -> Result<u64, String> {
            Err("client 1 failed".to_string())
        }
        fn peer_failed(&self) -> bool {
            false
        }
    }
    let path = spool.path().join("never.ops.nbt.zst");
    let progress = Progress::default();
    let replay = ReplayOptions {
        start_gate: Some(std::sync::Arc::new(Refusing)),
        ..ReplayOptions::default()
    };
    assert_eq!(
        beside::cpu_for(&replay, 0),
        None,
        "no CPU kept for a client"
    );
    let spec = null_spec(&plan, spool.path(), &path, &progress, replay);
    match run_iteration(&spec, 1) {
        Err(RunError::NotStarted(why)) => assert_eq!(why, "client 1 failed"),
        other => panic!("{:?}", other.map(|r| r.ops)),
    }
    assert!(!path.exists(), "{} is left", path.display());
}
