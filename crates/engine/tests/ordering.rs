//! Ordering between streams: the edges compile derives from a trace's recorded order
//! (few, and none where streams share nothing), and a replay that keeps them.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use common::{file, plan_of, records_of, run_with};
use naslab_engine::plan::{EdgeCounts, EdgeKind, Plan, Wait};
use naslab_engine::{ReplayOptions, TimedNullTarget};
use naslab_local::{PosixTarget, Sandbox};
use naslab_results::CacheMode;
use naslab_trace::{FileDecl, FileKind, Measured, Op, OpFlags, OpKind, Prepare, Trace};

fn op(stream: u32, t_us: u64, kind: OpKind, file: u32) -> Op {
    Op::new(stream, t_us, kind, file)
}

fn data(stream: u32, t_us: u64, kind: OpKind, file: u32, len: u64) -> Op {
    let mut o = op(stream, t_us, kind, file);
    o.len = len;
    o
}

fn open(stream: u32, t_us: u64, file: u32) -> Op {
    let mut o = op(stream, t_us, OpKind::Open, file);
    o.flags = OpFlags::READ;
    o
}

fn edges(plan: &Plan) -> EdgeCounts {
    plan.edges
}

/// Stream 0 keeps busy with `busy` stats of a file of its own, then makes `d/f` and
/// writes it, and keeps busy again; stream 1, once `d/f` exists by the recorded times,
/// opens and reads it. Without ordering, stream 1's open comes before the create.
fn handoff(busy: u64) -> Trace {
    let mut t = Trace::new("handoff");
    t.files.push(file(1, "busy", 4096, true, Prepare::Copy));
    t.files.push(FileDecl::dir(2, "d", false));
    t.files.push(file(3, "d/f", 0, false, Prepare::Copy));
    for i in 0..busy {
        t.ops.push(op(0, i, OpKind::Stat, 1));
    }
    let at = busy;
    t.ops.push(op(0, at, OpKind::Mkdir, 2));
    t.ops.push(op(0, at + 1, OpKind::Create, 3));
    t.ops.push(data(0, at + 2, OpKind::Write, 3, 4096));
    t.ops.push(op(0, at + 3, OpKind::Close, 3));
    for i in 0..busy {
        t.ops.push(op(0, at + 10 + i, OpKind::Stat, 1));
    }
    // A delay after the create, as recorded.
    let later = at + 5;
    t.ops.push(open(1, later, 3));
    t.ops.push(data(1, later + 1, OpKind::Read, 3, 4096));
    t.ops.push(op(1, later + 2, OpKind::Close, 3));
    t
}

#[test]
fn a_name_made_in_one_stream_and_used_in_another_is_one_edge() {
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&handoff(10), spool.path());
    assert_eq!(
        edges(&plan),
        EdgeCounts {
            name: 1,
            sync: 0,
            sequence: 0
        },
        "the parent directory's mkdir is implied by the create that follows it"
    );
    assert_eq!(
        plan.streams[1].order.waits,
        vec![Wait {
            at: 0,
            source: 0,
            count: 12,
            kind: EdgeKind::Name
        }],
        "stream 1's open waits for stream 0's create (its 12th op)"
    );
    assert_eq!(plan.streams[0].order.sources, vec![11]);
    assert!(plan.streams[0].order.waits.is_empty());
    assert!(plan.streams[1].order.sources.is_empty());
}

/// Two streams, each in a directory of its own, with `ops` writes each.
fn disjoint(ops: u64) -> Trace {
    let mut t = Trace::new("disjoint");
    for s in 0..2u32 {
        let (dir, f) = (10 * s + 1, 10 * s + 2);
        t.files.push(FileDecl::dir(dir, format!("s{s}"), false));
        t.files
            .push(file(f, &format!("s{s}/f"), 0, false, Prepare::Copy));
        t.ops.push(op(s, 0, OpKind::Mkdir, dir));
        t.ops.push(op(s, 1, OpKind::Create, f));
        for i in 0..ops {
            let mut w = data(s, 2 + i, OpKind::Write, f, 4096);
            w.offset = i * 4096;
            t.ops.push(w);
        }
        t.ops.push(op(s, 2 + ops, OpKind::Fsync, f));
        t.ops.push(op(s, 3 + ops, OpKind::Close, f));
        t.ops.push(open(s, 4 + ops, f));
        t.ops.push(data(s, 5 + ops, OpKind::Read, f, 4096));
        t.ops.push(op(s, 6 + ops, OpKind::Close, f));
    }
    t
}

#[test]
fn streams_on_disjoint_files_get_no_edge() {
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&disjoint(10), spool.path());
    assert_eq!(edges(&plan), EdgeCounts::default());
    assert!(plan.streams.iter().all(|s| s.order == Default::default()));
}

#[test]
fn streams_that_ran_one_after_another_are_chained_once_each() {
    // Three streams, each starting after the one before it ended, each making a file in
    // the one directory they share: two edges, not three.
    let mut t = Trace::new("chain");
    t.files.push(file(0, "d", 0, true, Prepare::Copy));
    t.files[0].kind = FileKind::Dir;
    for s in 0..3u32 {
        t.files
            .push(file(s + 1, &format!("d/f{s}"), 0, false, Prepare::Copy));
        let base = 1000 * s as u64;
        t.ops.push(op(s, base, OpKind::Create, s + 1));
        t.ops.push(op(s, base + 10, OpKind::Close, s + 1));
    }
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    assert_eq!(
        edges(&plan),
        EdgeCounts {
            name: 0,
            sync: 0,
            sequence: 2
        }
    );
    let first = |s: usize| plan.streams[s].order.waits.clone();
    assert_eq!(first(0), vec![]);
    assert_eq!(
        first(1),
        vec![Wait {
            at: 0,
            source: 0,
            count: 2,
            kind: EdgeKind::Sequence
        }]
    );
    assert_eq!(
        first(2),
        vec![Wait {
            at: 0,
            source: 1,
            count: 2,
            kind: EdgeKind::Sequence
        }]
    );

    // The same streams each in a directory of its own (as a sweep's users are): they
    // share no entry, so none waits for another, however they were staggered.
    let mut apart = t.clone();
    apart.files.truncate(1);
    apart.files[0].path = "u0".into();
    for s in 0..3u32 {
        apart
            .files
            .push(file(s + 1, &format!("u{s}/f{s}"), 0, false, Prepare::Copy));
    }
    for s in 1..3u32 {
        let id = apart.files.len() as u32;
        apart
            .files
            .push(file(id, &format!("u{s}"), 0, true, Prepare::Copy));
        apart.files[id as usize].kind = FileKind::Dir;
    }
    let plan = plan_of(&apart, spool.path());
    assert_eq!(edges(&plan), EdgeCounts::default());

    // The same trace with no timing: the lines give no sequence between streams.
    for o in &mut t.ops {
        o.t_us = 0;
    }
    let plan = plan_of(&t, spool.path());
    assert_eq!(edges(&plan), EdgeCounts::default());
}

#[test]
fn a_trace_without_timing_is_ordered_by_its_lines() {
    // dbench's way: every client's line n before any client's line n + 1, no times.
    let mut t = Trace::new("untimed");
    t.files.push(FileDecl::dir(1, "clients", false));
    t.files.push(FileDecl::dir(2, "clients/c1", false));
    t.files.push(FileDecl::dir(3, "clients/c2", false));
    t.ops.push(op(0, 0, OpKind::Mkdir, 1));
    t.ops.push(op(0, 0, OpKind::Mkdir, 2));
    t.ops.push(op(1, 0, OpKind::Mkdir, 3));
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    assert_eq!(edges(&plan).name, 1, "c2's mkdir waits for 'clients'");
    assert_eq!(plan.streams[1].order.waits[0].count, 1);
}

#[test]
fn a_directory_renamed_in_one_stream_orders_uses_of_what_lies_deep_inside_it() {
    // Stream 0 renames 'a' (holding x/y) to 'b' between stream 1's read of a/x/y and
    // stream 2's read of b/x/y: the rename waits for the first, the second for it,
    // though neither file is in the renamed directory itself.
    let mut t = Trace::new("moved");
    t.files.push(FileDecl::dir(1, "a", true));
    t.files.push(FileDecl::dir(2, "a/x", true));
    t.files.push(file(3, "a/x/y", 4096, true, Prepare::Copy));
    t.files.push(FileDecl::dir(4, "b", false));
    t.files.push(FileDecl::dir(5, "b/x", false));
    t.files.push(file(6, "b/x/y", 0, false, Prepare::Copy));
    t.files.push(file(7, "z", 0, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Stat, 1));
    let mut rename = op(0, 10, OpKind::Rename, 1);
    rename.to = Some(4);
    t.ops.push(rename);
    t.ops.push(open(1, 5, 3));
    t.ops.push(op(1, 6, OpKind::Close, 3));
    // From the start, so that no stream follows another as a whole.
    t.ops.push(op(2, 0, OpKind::Stat, 7));
    t.ops.push(open(2, 20, 6));
    t.ops.push(op(2, 21, OpKind::Close, 6));
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let waits = |s: usize| {
        plan.streams[s]
            .order
            .waits
            .iter()
            .map(|w| (w.at, w.source, w.count))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        waits(0),
        vec![(1, 1, 1)],
        "the rename waits for a/x/y's open"
    );
    assert_eq!(
        waits(2),
        vec![(1, 0, 2)],
        "b/x/y's open waits for the rename"
    );
    assert!(waits(1).is_empty());
    assert_eq!(edges(&plan).name, 2);
}

#[test]
fn ops_at_the_same_time_stay_concurrent() {
    let mut t = Trace::new("ties");
    t.files.push(file(1, "f", 0, false, Prepare::Copy));
    t.ops.push(op(0, 5, OpKind::Create, 1));
    t.ops.push(op(0, 6, OpKind::Close, 1));
    t.ops.push(op(1, 5, OpKind::Stat, 1));
    t.ops.push(op(1, 7, OpKind::Stat, 1));
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    // The stat at 5 is as early as the create; the one at 7 follows it.
    assert_eq!(plan.streams[1].order.waits.len(), 1);
    assert_eq!(plan.streams[1].order.waits[0].at, 1);
}

#[test]
fn a_removal_waits_for_each_other_streams_last_use_and_a_read_for_the_fsync() {
    let mut t = Trace::new("uses");
    t.files.push(file(1, "f", 4096, true, Prepare::Copy));
    // Streams 1 and 2 read f (opening it twice each); stream 0 then fsyncs and removes it.
    for s in [1u32, 2] {
        for k in 0..2u64 {
            t.ops.push(open(s, 10 * k + s as u64, 1));
            t.ops.push(op(s, 10 * k + s as u64 + 1, OpKind::Close, 1));
        }
        // Still running after the removal, so no sequence edge stands for the uses.
        t.ops.push(op(s, 200, OpKind::Stat, 2));
    }
    t.files.push(file(2, "other", 0, true, Prepare::Copy));
    let mut w = open(0, 40, 1);
    w.flags = OpFlags::WRITE;
    t.ops.push(w);
    t.ops.push(op(0, 41, OpKind::Fsync, 1));
    t.ops.push(op(0, 42, OpKind::Close, 1));
    t.ops.push(op(0, 50, OpKind::Unlink, 1));
    // A fourth stream reads f after the fsync, before the removal.
    t.ops.push(open(3, 45, 1));
    t.ops.push(data(3, 46, OpKind::Read, 1, 4096));
    t.ops.push(op(3, 47, OpKind::Close, 1));
    t.ops.push(op(3, 300, OpKind::Stat, 2));
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let e = edges(&plan);
    assert_eq!(e.sync, 1, "{e:?}");
    // The unlink waits for the last open of streams 1, 2 and 3: three name edges.
    assert_eq!(e.name, 3, "{e:?}");
    let unlink = &plan.streams[2].order.waits;
    assert_eq!(plan.streams[2].stream, 0);
    assert_eq!(unlink.len(), 3, "{unlink:?}");
    assert!(unlink.iter().all(|w| w.at == 3));
}

/// Replays `trace` (a [`handoff`]) on a fresh directory `times` times and returns each
/// run's errors and waits. Ordered, each run's op records must show the hand-over kept:
/// stream 1's open of `d/f` issued only once stream 0's create of it had completed.
fn replay_errors(trace: &Trace, times: usize, unordered: bool) -> Vec<(u64, u64)> {
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(trace, spool.path());
    (0..times)
        .map(|i| {
            let dir = tempfile::tempdir().unwrap();
            let target = PosixTarget::new(Sandbox::open(dir.path()).unwrap());
            let options = ReplayOptions {
                unordered,
                ..ReplayOptions::default()
            };
            let path = spool.path().join(format!("run{i}.ops.nbt.zst"));
            let r = run_with(
                &plan,
                &target,
                CacheMode::Keep,
                spool.path(),
                Some(path.clone()),
                options,
            )
            .unwrap();
            let o = r
                .ordering
                .expect("a trace of two streams reports its ordering");
            assert_eq!(o.edges, 1);
            assert_eq!(o.enforced, !unordered);
            if !unordered {
                let recs = records_of(&path);
                let find = |stream: u32, kind: OpKind| {
                    recs.iter()
                        .find(|(op, _)| op.stream == stream && op.kind == kind)
                        .map(|(_, m)| *m)
                        .unwrap()
                };
                let (create, open) = (find(0, OpKind::Create), find(1, OpKind::Open));
                assert!(
                    open.issued_ns >= create.done_ns,
                    "run {i}: stream 1 opened d/f at {} ns, before stream 0's create of it completed at {} ns",
                    open.issued_ns,
                    create.done_ns
                );
                // The only wait (stream 1's, before its first op) lies between the
                // phase's start and that open's issue, on the records' clock.
                assert!(
                    o.wait_total_ns <= open.issued_ns && o.wait_longest_ns == o.wait_total_ns,
                    "run {i}: {o:?}, open issued at {} ns",
                    open.issued_ns
                );
                assert_eq!(o.waits == 0, o.wait_total_ns == 0, "run {i}: {o:?}");
            }
            (r.errors, o.waits)
        })
        .collect()
}

/// The stats stream 0 makes before the hand-over when replayed without ordering: enough
/// that stream 1, started with it, comes to its open first.
const UNORDERED_BUSY: u64 = 20_000;

#[test]
fn a_handed_over_file_replays_without_errors_only_when_ordered() {
    let trace = handoff(2000);
    let ordered = replay_errors(&trace, 20, false);
    println!("ordered (errors, waits) per run: {ordered:?}");
    assert!(
        ordered.iter().all(|&(errors, _)| errors == 0),
        "{ordered:?}"
    );
    // Unordered, with ten times the stats before the create: a window of tens of
    // milliseconds, so stream 1 comes to its open inside it even on a busy machine.
    let unordered = replay_errors(&handoff(UNORDERED_BUSY), 1, true);
    println!("unordered (errors, waits): {unordered:?}");
    // Stream 1 opens d/f while stream 0 is still on its 20,000 stats: the open fails
    // (ENOENT), and the read and close on its handle with it.
    assert_eq!(unordered[0].0, 3, "{unordered:?}");
    assert_eq!(unordered[0].1, 0, "nothing waits with --no-ordering");
}

#[test]
fn streams_on_disjoint_files_overlap_in_time() {
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&disjoint(200), spool.path());
    // A server that takes 2 ms an op (sleeping, mostly): each stream spans 0.4 s, so
    // only an order between them, not a busy machine late to start one, keeps them
    // from overlapping.
    let target = TimedNullTarget {
        service_ns: 2_000_000,
        stall: None,
    };
    let path = spool.path().join("disjoint.ops.nbt.zst");
    let r = run_with(
        &plan,
        &target,
        CacheMode::Keep,
        spool.path(),
        Some(path.clone()),
        ReplayOptions::default(),
    )
    .unwrap();
    assert_eq!(r.errors, 0);
    let o = r.ordering.unwrap();
    assert_eq!((o.edges, o.waits), (0, 0));
    let recs = records_of(&path);
    let span = |s: u32| {
        let mine: Vec<&Measured> = recs
            .iter()
            .filter(|(op, _)| op.stream == s)
            .map(|(_, m)| m)
            .collect();
        let first = mine.iter().map(|m| m.issued_ns).min().unwrap();
        let last = mine.iter().map(|m| m.done_ns).max().unwrap();
        (first, last)
    };
    let (a, b) = (span(0), span(1));
    println!("stream 0 ran {a:?}, stream 1 ran {b:?}");
    assert!(
        a.0 < b.1 && b.0 < a.1,
        "each stream issued ops while the other was still running: {a:?} {b:?}"
    );
}

#[test]
fn a_link_made_in_one_stream_orders_the_uses_of_its_new_name() {
    let mut t = Trace::new("links");
    t.files.push(file(1, "a", 4096, true, Prepare::Copy));
    t.files.push(file(2, "b", 0, false, Prepare::Copy));
    t.files.push(file(3, "s", 0, false, Prepare::Copy));
    let mut link = op(0, 10, OpKind::Link, 1);
    link.to = Some(2);
    t.ops.push(link);
    let mut symlink = op(0, 11, OpKind::Symlink, 1);
    symlink.to = Some(3);
    t.ops.push(symlink);
    t.ops.push(op(0, 30, OpKind::Stat, 1));
    // Stream 1 opens the new name after the link, and stats the symlink's name.
    t.ops.push(open(1, 20, 2));
    t.ops.push(op(1, 21, OpKind::Close, 2));
    t.ops.push(op(1, 22, OpKind::Stat, 3));
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let waits = &plan.streams[1].order.waits;
    assert_eq!(edges(&plan).name, 2, "{waits:?}");
    assert_eq!(
        waits.iter().map(|w| (w.at, w.count)).collect::<Vec<_>>(),
        vec![(0, 1), (2, 2)]
    );
}

#[test]
fn a_handed_over_file_is_waited_for_with_several_ops_in_flight() {
    // The same hand-over with a queue depth of 4: stream 1 waits with nothing in flight.
    let mut trace = handoff(2000);
    trace.header.queue_depth = Some(4);
    let ordered = replay_errors(&trace, 5, false);
    println!("queued, ordered (errors, waits) per run: {ordered:?}");
    assert!(
        ordered.iter().all(|&(errors, _)| errors == 0),
        "{ordered:?}"
    );
    trace = handoff(UNORDERED_BUSY);
    trace.header.queue_depth = Some(4);
    let unordered = replay_errors(&trace, 1, true);
    assert_eq!(unordered[0].0, 3, "{unordered:?}");
}
