//! The engine's behaviour end to end: pacing against a scripted clock, preparation,
//! both backends, failures and the safety rules.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

mod common;
use common::{file, plan_of, records_of, run_once, run_with, spec_of};

use naslab_engine::backend::{BackendOptions, IoBuf, IoMemory};
use naslab_engine::plan::{FileTable, compile, records_from_trace};
use naslab_engine::prepare::prepare;
use naslab_engine::{
    Backend, Caps, Clock, Handle, NullTarget, OpError, OpenHow, Pacing, Progress, ReplayOptions,
    ScriptedClock, Target, replay, run_iteration,
};
use naslab_local::{PosixTarget, Sandbox};
use naslab_results::CacheMode;
use naslab_trace::{FileDecl, Measured, Op, OpFlags, OpKind, Prepare, Trace};

fn op(stream: u32, t_us: u64, kind: OpKind, file: u32, offset: u64, len: u64) -> Op {
    let mut o = Op::new(stream, t_us, kind, file);
    o.offset = offset;
    o.len = len;
    o
}

fn compile_error(trace: &Trace) -> String {
    let dir = tempfile::tempdir().unwrap();
    match compile(
        Path::new("bad.jsonl"),
        records_from_trace(trace),
        dir.path(),
    ) {
        Ok(_) => panic!("the trace compiled"),
        Err(e) => e.to_string(),
    }
}

/// A backend whose every op takes a fixed time on a scripted clock, and which logs calls.
#[derive(Clone)]
struct ScriptedTarget {
    clock: ScriptedClock,
    service_ns: u64,
    log: Arc<Mutex<Vec<String>>>,
    fail_write_after: Option<u64>,
    /// A file whose opens fail with ENOENT.
    fail_open: Option<u32>,
}

struct ScriptedBackend {
    t: ScriptedTarget,
    writes: u64,
}

impl ScriptedBackend {
    fn take(&mut self, what: String) {
        self.t.clock.advance(self.t.service_ns);
        self.t.log.lock().unwrap().push(what);
    }
}

const ALL_CAPS: Caps = Caps {
    ops: [true; OpKind::ALL.len()],
    direct_io: false,
    drop_cache: None,
    moves_data: false,
    max_queue_depth: 1,
};

impl Target for ScriptedTarget {
    fn backend_name(&self) -> &'static str {
        "scripted"
    }
    fn caps(&self) -> Caps {
        ALL_CAPS
    }
    fn connect(
        &self,
        _d: &str,
        _f: Arc<FileTable>,
        _o: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        Ok(Box::new(ScriptedBackend {
            t: self.clone(),
            writes: 0,
        }))
    }
}

impl Backend for ScriptedBackend {
    fn caps(&self) -> Caps {
        ALL_CAPS
    }
    fn open(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError> {
        self.take(format!("open {file} create={}", how.create));
        if self.t.fail_open == Some(file) {
            return Err(OpError::errno(libc::ENOENT));
        }
        Ok(file as u64 + 10)
    }
    fn close(&mut self, h: Handle) -> Result<(), OpError> {
        self.take(format!("close {h}"));
        Ok(())
    }
    fn read(&mut self, _h: Handle, _o: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        self.take(format!("read {}", buf.len()));
        Ok(buf.len())
    }
    fn write(&mut self, _h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        self.writes += 1;
        if self.t.fail_write_after.is_some_and(|n| self.writes > n) {
            self.take("write ENOSPC".into());
            return Err(OpError::errno(libc::ENOSPC));
        }
        self.take(format!("write {offset} {}", buf.len()));
        Ok(buf.len())
    }
    fn fsync(&mut self, _h: Handle) -> Result<(), OpError> {
        self.take("fsync".into());
        Ok(())
    }
    fn truncate(&mut self, _h: Handle, len: u64) -> Result<(), OpError> {
        self.take(format!("truncate {len}"));
        Ok(())
    }
    fn fallocate(&mut self, _h: Handle, _o: u64, _l: u64) -> Result<(), OpError> {
        self.take("fallocate".into());
        Ok(())
    }
    fn stat(&mut self, _f: u32) -> Result<u64, OpError> {
        self.take("stat".into());
        Ok(0)
    }
    fn mkdir(&mut self, f: u32) -> Result<(), OpError> {
        self.take(format!("mkdir {f}"));
        Ok(())
    }
    fn readdir(&mut self, _f: u32) -> Result<u64, OpError> {
        self.take("readdir".into());
        Ok(0)
    }
    fn unlink(&mut self, _f: u32) -> Result<(), OpError> {
        self.take("unlink".into());
        Ok(())
    }
    fn rename(&mut self, _a: u32, _b: u32) -> Result<(), OpError> {
        self.take("rename".into());
        Ok(())
    }
}

fn scripted(service_ns: u64) -> ScriptedTarget {
    ScriptedTarget {
        clock: ScriptedClock::new(),
        service_ns,
        log: Arc::new(Mutex::new(Vec::new())),
        fail_write_after: None,
        fail_open: None,
    }
}

/// Four reads at t = 0, 100, 150 and 1000 µs.
fn paced_trace() -> Trace {
    let mut t = Trace::new("paced");
    t.files.push(file(1, "f", 1 << 20, true, Prepare::Copy));
    let mut o = op(0, 0, OpKind::Open, 1, 0, 0);
    o.flags = OpFlags::READ;
    t.ops.push(o);
    for (i, at) in [0u64, 100, 150, 1000].into_iter().enumerate() {
        t.ops
            .push(op(0, at, OpKind::Read, 1, i as u64 * 4096, 4096));
    }
    t.ops.push(op(0, 1000, OpKind::Close, 1, 0, 0));
    t
}

fn measurements(pacing: Pacing, service_ns: u64) -> Vec<Measured> {
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&paced_trace(), spool.path());
    let target = scripted(service_ns);
    let clock = target.clock.clone();
    let options = ReplayOptions {
        pacing,
        records: true,
        ..ReplayOptions::default()
    };
    let progress = Progress::default();
    let out = replay(
        &plan,
        &target,
        "paced",
        options,
        spool.path(),
        &progress,
        move || clock,
    )
    .expect("replay runs");
    let mut r = out.streams[0].measured.as_ref().unwrap().reader().unwrap();
    let mut v = Vec::new();
    while let Some(m) = r.next_measured().unwrap() {
        v.push(m);
    }
    assert_eq!(v.len(), 6);
    v
}

#[test]
fn afap_issues_each_op_when_the_previous_completes() {
    let m = measurements(Pacing::Afap, 10_000);
    for (i, x) in m.iter().enumerate() {
        assert_eq!(x.sched_ns, x.issued_ns, "afap has no schedule of its own");
        assert_eq!(x.done_ns - x.issued_ns, 10_000);
        assert_eq!(x.issued_ns, i as u64 * 10_000);
    }
}

#[test]
fn original_pacing_follows_the_trace_and_records_lag() {
    // 80 µs per op: the read due at 150 µs is late (the one due at 100 µs ends at 180 µs).
    let m = measurements(Pacing::Original, 80_000);
    let sched: Vec<u64> = m.iter().map(|x| x.sched_ns).collect();
    let issued: Vec<u64> = m.iter().map(|x| x.issued_ns).collect();
    assert_eq!(sched, [0, 0, 100_000, 150_000, 1_000_000, 1_000_000]);
    assert_eq!(issued, [0, 80_000, 160_000, 240_000, 1_000_000, 1_080_000]);
    let lag: Vec<u64> = m.iter().map(|x| x.issued_ns - x.sched_ns).collect();
    assert_eq!(lag, [0, 80_000, 60_000, 90_000, 0, 80_000]);
}

#[test]
fn delay_pacing_leaves_a_fixed_gap_after_each_completion() {
    let m = measurements(Pacing::Delay { gap_ns: 200_000 }, 10_000);
    for w in m.windows(2) {
        assert_eq!(w[1].issued_ns, w[0].done_ns + 200_000);
        assert_eq!(w[1].sched_ns, w[1].issued_ns);
    }
    assert_eq!(m[0].issued_ns, 0);
}

#[test]
fn null_backend_counts_exactly_what_the_trace_asks() {
    let mut t = Trace::new("counts");
    t.files.push(file(1, "a", 1 << 20, true, Prepare::Copy));
    t.files.push(file(2, "b", 0, false, Prepare::Copy));
    for s in 0..3u32 {
        let mut o = op(s, 0, OpKind::Open, 1, 0, 0);
        o.flags = OpFlags::READ;
        t.ops.push(o);
        for i in 0..1000u64 {
            t.ops
                .push(op(s, i, OpKind::Read, 1, (i * 7919 % 256) * 4096, 4096));
        }
        t.ops.push(op(s, 1000, OpKind::Close, 1, 0, 0));
    }
    t.ops.push(op(0, 2000, OpKind::Create, 2, 0, 0));
    t.ops.push(op(0, 2001, OpKind::Write, 2, 0, 1300));
    t.ops.push(op(0, 2002, OpKind::Close, 2, 0, 0));
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let r = run_once(
        &plan,
        &NullTarget,
        CacheMode::Drop,
        spool.path(),
        Some(spool.path().join("r.ops.jsonl.zst")),
    )
    .unwrap();
    assert_eq!(r.ops, 3 * 1002 + 3);
    assert_eq!(r.op("read").unwrap().count, 3000);
    assert_eq!(r.bytes_read, 3000 * 4096);
    assert_eq!(r.bytes_written, 1300);
    assert_eq!(r.op("open").unwrap().count, 3);
    assert_eq!(r.op("create").unwrap().count, 1);
    assert_eq!(r.errors, 0);
    assert_eq!(r.streams.len(), 3);
    assert!(r.wall_ns > 0 && r.throughput_mb_s > 0.0);
    let expected_mb_s = (3000.0 * 4096.0 + 1300.0) / (r.wall_ns as f64 / 1e9) / 1e6;
    assert!((r.throughput_mb_s - expected_mb_s).abs() < 1e-9);
    // The records hold every op, and read back as a trace that compiles again.
    let reader = naslab_trace::open_trace(&spool.path().join("r.ops.jsonl.zst")).unwrap();
    let again = compile(
        Path::new("r.ops.jsonl.zst"),
        naslab_engine::records_from_reader(reader),
        spool.path(),
    )
    .unwrap();
    assert_eq!(again.ops(), r.ops);
    assert_eq!(again.planned_read_bytes, 3000 * 4096);
}

#[test]
fn a_full_target_stops_the_run_and_keeps_what_was_measured() {
    let mut t = Trace::new("full");
    t.files.push(file(1, "out", 0, false, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Create, 1, 0, 0));
    for i in 0..100u64 {
        t.ops.push(op(0, i, OpKind::Write, 1, i * 65536, 65536));
    }
    t.ops.push(op(0, 200, OpKind::Close, 1, 0, 0));
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let mut target = scripted(1000);
    target.fail_write_after = Some(40);
    let r = run_once(&plan, &target, CacheMode::Keep, spool.path(), None).unwrap();
    let why = r.aborted.as_deref().expect("the run stopped");
    assert!(why.contains("line 44"), "{why}");
    assert!(
        why.contains("ENOSPC") && why.contains("free space"),
        "{why}"
    );
    assert_eq!(r.op("write").unwrap().count, 41);
    assert_eq!(r.op("write").unwrap().errors, 1);
    assert_eq!(r.bytes_written, 40 * 65536);
    assert_eq!(r.op("write").unwrap().errors_by_errno["ENOSPC"], 1);
}

#[test]
fn preparation_copies_and_streams_and_leaves_created_files_absent() {
    let mut t = Trace::new("prep");
    t.files
        .push(file(1, "docs/a.doc", 3 << 20, true, Prepare::Copy));
    t.files
        .push(file(2, "media/v.dvr-ms", 200_000, true, Prepare::Stream));
    t.files
        .push(file(3, "docs/new.doc", 5000, false, Prepare::Copy));
    t.files.push(FileDecl::dir(4, "made", false));
    t.files.push(file(5, "made/x", 10, false, Prepare::Copy));
    t.files.push(file(6, "empty", 0, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Mkdir, 4, 0, 0));
    // What the backend is asked to do, in order.
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let target = scripted(0);
    let mut b = target
        .connect("prep", plan.files.clone(), BackendOptions::default())
        .unwrap();
    let done = std::sync::atomic::AtomicU64::new(0);
    let r = prepare(&plan, b.as_mut(), &done).unwrap();
    assert_eq!((r.files, r.dirs, r.bytes), (3, 2, (3 << 20) + 200_000));
    let log = target.log.lock().unwrap().clone();
    let idx = |path: &str| {
        plan.files
            .entries
            .iter()
            .position(|e| e.path == path)
            .unwrap()
    };
    let copy = idx("docs/a.doc");
    let stream = idx("media/v.dvr-ms");
    let at = |s: &str| {
        log.iter()
            .position(|l| l == s)
            .unwrap_or_else(|| panic!("{s} not in {log:?}"))
    };
    // Parents first; the copy sets its size and then writes 1 MiB chunks; the stream
    // only appends 64 KiB chunks; nothing the workload creates is touched.
    assert!(at(&format!("mkdir {}", idx("docs"))) < at(&format!("open {copy} create=true")));
    let copy_at = at(&format!("open {copy} create=true"));
    assert_eq!(log[copy_at + 1], format!("truncate {}", 3 << 20));
    assert_eq!(log[copy_at + 2], format!("write 0 {}", 1 << 20));
    assert_eq!(log[copy_at + 4], format!("write {} {}", 2 << 20, 1 << 20));
    let stream_at = at(&format!("open {stream} create=true"));
    assert_eq!(log[stream_at + 1], "write 0 65536");
    assert_eq!(
        log[stream_at + 4],
        format!("write {} {}", 3 * 65536, 200_000 - 3 * 65536)
    );
    assert!(!log.iter().any(|l| l.starts_with("truncate")
        && l != &format!("truncate {}", 3 << 20)
        && l != "truncate 0"));
    for absent in ["docs/new.doc", "made", "made/x"] {
        let i = idx(absent);
        assert!(
            !log.iter()
                .any(|l| l.ends_with(&format!(" {i} create=true")) || l == &format!("mkdir {i}")),
            "{absent} was prepared"
        );
    }
}

#[test]
fn posix_preparation_builds_the_file_set_on_disk() {
    let mut t = Trace::new("ondisk");
    t.files
        .push(file(1, "docs/a.doc", 3_000_001, true, Prepare::Copy));
    t.files
        .push(file(2, "media/v.dvr-ms", 200_000, true, Prepare::Stream));
    t.files
        .push(file(3, "docs/new.doc", 5000, false, Prepare::Copy));
    t.files.push(FileDecl::dir(4, "made", false));
    t.ops.push(op(0, 0, OpKind::Mkdir, 4, 0, 0));
    t.ops.push(op(0, 1, OpKind::Create, 3, 0, 0));
    t.ops.push(op(0, 2, OpKind::Write, 3, 0, 5000));
    t.ops.push(op(0, 3, OpKind::Close, 3, 0, 0));
    t.ops.push(op(0, 4, OpKind::Readdir, 4, 0, 0));
    let target_dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let target = PosixTarget::new(sandbox.clone());
    let wd = sandbox.fresh_workload_dir("ondisk").unwrap();
    let mut b = target
        .connect("ondisk", plan.files.clone(), BackendOptions::default())
        .unwrap();
    prepare(&plan, b.as_mut(), &Default::default()).unwrap();
    let a = std::fs::read(wd.join("docs/a.doc")).unwrap();
    assert_eq!(a.len(), 3_000_001);
    assert!(
        a.iter().filter(|&&x| x == 0).count() < a.len() / 100,
        "prepared data is not zeros"
    );
    assert_eq!(
        std::fs::metadata(wd.join("media/v.dvr-ms")).unwrap().len(),
        200_000
    );
    assert!(!wd.join("docs/new.doc").exists());
    assert!(!wd.join("made").exists());
    // And the measured phase then creates them.
    let r = run_once(&plan, &target, CacheMode::Drop, spool.path(), None).unwrap();
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    assert_eq!(
        std::fs::metadata(wd.join("docs/new.doc")).unwrap().len(),
        5000
    );
    assert!(wd.join("made").is_dir());
    assert_eq!(r.prepare.bytes, 3_200_001);
}

#[test]
fn posix_backend_does_every_op_for_real() {
    let mut t = Trace::new("ops");
    t.files.push(FileDecl::dir(1, "d", true));
    t.files.push(file(2, "d/a", 10_000, true, Prepare::Copy));
    t.files.push(file(3, "d/b", 0, false, Prepare::Copy));
    t.files.push(FileDecl::dir(4, "d/sub", false));
    t.files.push(file(5, "d/c", 0, false, Prepare::Copy));
    let ops = [
        op(0, 0, OpKind::Stat, 2, 0, 0),
        op(0, 1, OpKind::Open, 2, 0, 0),
        op(0, 2, OpKind::Read, 2, 4096, 4096),
        op(0, 3, OpKind::Close, 2, 0, 0),
        op(0, 4, OpKind::Create, 3, 0, 0),
        op(0, 5, OpKind::Write, 3, 0, 3000),
        op(0, 6, OpKind::Fallocate, 3, 0, 65536),
        op(0, 7, OpKind::Truncate, 3, 0, 1234),
        op(0, 8, OpKind::Fsync, 3, 0, 0),
        op(0, 9, OpKind::Close, 3, 0, 0),
        op(0, 10, OpKind::Mkdir, 4, 0, 0),
        op(0, 11, OpKind::Readdir, 1, 0, 0),
        op(0, 13, OpKind::Unlink, 4, 0, 0),
        op(0, 14, OpKind::Stat, 3, 0, 0),
    ];
    t.ops.extend(ops);
    let mut rename = op(0, 15, OpKind::Rename, 3, 0, 0);
    rename.to = Some(5);
    t.ops.push(rename);
    t.ops.push(op(0, 16, OpKind::Unlink, 3, 0, 0));
    let target_dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let target = PosixTarget::new(sandbox.clone());
    let records = spool.path().join("ops.jsonl");
    let r = run_once(
        &plan,
        &target,
        CacheMode::Drop,
        spool.path(),
        Some(records.clone()),
    )
    .unwrap();
    let wd = sandbox.root().join("ops");
    // The last unlink fails (the file was renamed away): counted, not fatal.
    assert_eq!(r.errors, 1);
    assert_eq!(r.op("unlink").unwrap().errors_by_errno["ENOENT"], 1);
    assert_eq!(r.bytes_read, 4096);
    assert_eq!(r.bytes_written, 3000);
    assert_eq!(std::fs::metadata(wd.join("d/c")).unwrap().len(), 1234);
    assert!(!wd.join("d/sub").exists());
    let results: Vec<i64> = std::fs::read_to_string(&records)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"type\":\"op\""))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["result"].as_i64().unwrap()
        })
        .collect();
    // stat gives the size, read and write the bytes, readdir the entries (a, b, sub), stat of b 1234.
    assert_eq!(
        results,
        [
            10_000,
            0,
            4096,
            0,
            0,
            3000,
            0,
            0,
            0,
            0,
            0,
            3,
            0,
            1234,
            0,
            -(libc::ENOENT as i64)
        ]
    );
}

#[test]
fn links_are_made_inside_the_workload_directory_and_never_followed() {
    use std::os::unix::fs::MetadataExt;
    let mut t = Trace::new("links");
    t.files.push(file(1, "a", 10_000, true, Prepare::Copy));
    t.files.push(file(2, "b", 0, false, Prepare::Copy));
    t.files.push(FileDecl::dir(3, "d", true));
    t.files.push(file(4, "d/s", 0, false, Prepare::Copy));
    t.files.push(FileDecl::dir(5, "d/up", false));
    t.files.push(file(6, "d/gone", 0, false, Prepare::Copy));
    let mut link = op(0, 0, OpKind::Link, 1, 0, 0);
    link.to = Some(2);
    t.ops.push(link);
    // Through the second name: the same file.
    t.ops.push(op(0, 1, OpKind::Open, 2, 0, 0));
    t.ops.push(op(0, 2, OpKind::Read, 2, 0, 4096));
    t.ops.push(op(0, 3, OpKind::Close, 2, 0, 0));
    let mut sym = op(0, 4, OpKind::Symlink, 1, 0, 0);
    sym.to = Some(4);
    t.ops.push(sym);
    let mut sym_dir = op(0, 5, OpKind::Symlink, 3, 0, 0);
    sym_dir.to = Some(5);
    t.ops.push(sym_dir);
    // A stat of a link is of the link itself.
    t.ops.push(op(0, 6, OpKind::Stat, 4, 0, 0));
    // A link made and removed.
    let mut sym2 = op(0, 7, OpKind::Symlink, 1, 0, 0);
    sym2.to = Some(6);
    t.ops.push(sym2);
    t.ops.push(op(0, 8, OpKind::Unlink, 6, 0, 0));
    // Opening a link is refused, never followed: the run stops there.
    t.ops.push(op(0, 9, OpKind::Open, 4, 0, 0));
    t.ops.push(op(0, 10, OpKind::Close, 4, 0, 0));
    let target_dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let target = PosixTarget::new(sandbox.clone());
    let r = run_once(&plan, &target, CacheMode::Keep, spool.path(), None).unwrap();
    let wd = sandbox.root().join("links");
    assert_eq!(r.op("link").unwrap().count, 1, "{:?}", r.op_stats);
    assert_eq!(r.op("symlink").unwrap().count, 3, "{:?}", r.op_stats);
    assert_eq!(r.bytes_read, 4096);
    // Only the open through the symbolic link failed (ELOOP: not followed), and it
    // stopped the run.
    assert_eq!(r.errors, 1, "{:?}", r.op_stats);
    assert_eq!(r.op("open").unwrap().errors_by_errno["ELOOP"], 1);
    assert!(
        r.aborted.as_deref().is_some_and(|a| a.contains("ELOOP")),
        "{:?}",
        r.aborted
    );
    let (a, b) = (
        std::fs::metadata(wd.join("a")).unwrap(),
        std::fs::metadata(wd.join("b")).unwrap(),
    );
    assert_eq!((a.ino(), a.nlink()), (b.ino(), 2));
    assert_eq!(
        std::fs::read_link(wd.join("d/s")).unwrap(),
        Path::new("../a")
    );
    assert_eq!(
        std::fs::read_link(wd.join("d/up")).unwrap(),
        Path::new("../d")
    );
    assert!(std::fs::symlink_metadata(wd.join("d/gone")).is_err());
}

#[test]
fn a_trace_with_hard_links_is_refused_by_verify_and_a_link_needs_its_to_of_the_same_kind() {
    let mut t = Trace::new("links");
    t.files.push(file(1, "a", 100, true, Prepare::Copy));
    t.files.push(file(2, "b", 0, false, Prepare::Copy));
    let mut link = op(0, 0, OpKind::Link, 1, 0, 0);
    link.to = Some(2);
    t.ops.push(link);
    let target_dir = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let target = PosixTarget::new(sandbox.clone());
    let replay = ReplayOptions {
        data: naslab_engine::DataSpec {
            verify: true,
            ..naslab_engine::DataSpec::default()
        },
        ..ReplayOptions::default()
    };
    let e = run_with(&plan, &target, CacheMode::Keep, spool.path(), None, replay)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--verify") && e.contains("line 4"), "{e}");
    // A link op without its 'to', or between a file and a directory, does not compile.
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 100, true, Prepare::Copy));
    t.files.push(FileDecl::dir(2, "d", false));
    t.ops.push(op(0, 0, OpKind::Link, 1, 0, 0));
    assert!(compile_error(&t).contains("has no 'to'"));
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 100, true, Prepare::Copy));
    t.files.push(FileDecl::dir(2, "d", false));
    let mut link = op(0, 0, OpKind::Link, 1, 0, 0);
    link.to = Some(2);
    t.ops.push(link);
    assert!(
        compile_error(&t).contains("same kind"),
        "{}",
        compile_error(&t)
    );
}

#[test]
fn compile_rejects_misuse_with_the_line() {
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 100, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Read, 1, 0, 10));
    let e = compile_error(&t);
    assert!(
        e.starts_with("bad.jsonl:3:") && e.contains("without opening it"),
        "{e}"
    );

    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 100, true, Prepare::Copy));
    t.ops.push(op(0, 5, OpKind::Stat, 1, 0, 0));
    t.ops.push(op(0, 4, OpKind::Stat, 1, 0, 0));
    let e = compile_error(&t);
    assert!(
        e.starts_with("bad.jsonl:4:") && e.contains("time goes backwards"),
        "{e}"
    );

    let mut t = Trace::new("bad");
    t.files.push(FileDecl::dir(1, "d", true));
    t.ops.push(op(0, 0, OpKind::Open, 1, 0, 0));
    assert!(compile_error(&t).contains("declared as a directory"));

    let mut t = Trace::new("bad");
    t.files.push(FileDecl::dir(1, "d", false));
    t.files.push(file(2, "d/x/y", 1, false, Prepare::Copy));
    assert!(compile_error(&t).contains("declare 'd/x' as a directory"));
}

#[test]
fn an_in_memory_trace_naming_an_undeclared_file_is_an_error_not_a_panic() {
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 100, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Stat, 7, 0, 0));
    let e = compile_error(&t);
    assert!(
        e.starts_with("bad.jsonl:3:")
            && e.contains("refers to file 7, which no file line declares"),
        "{e}"
    );
    // The rename target too, and a rename without one.
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 100, true, Prepare::Copy));
    let mut r = op(0, 0, OpKind::Rename, 1, 0, 0);
    r.to = Some(9);
    t.ops.push(r);
    assert!(compile_error(&t).contains("refers to file 9"));
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 100, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Rename, 1, 0, 0));
    assert!(compile_error(&t).contains("has no 'to'"));
}

#[test]
fn an_in_memory_trace_gets_the_readers_checks() {
    let mut t = Trace::new("bad");
    t.files.push(file(1, "../escape", 1, true, Prepare::Copy));
    assert!(compile_error(&t).starts_with("bad.jsonl:2:"));
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 1, true, Prepare::Copy));
    t.files.push(file(1, "b", 1, true, Prepare::Copy));
    assert!(compile_error(&t).contains("file id 1 is declared twice"));
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 1, true, Prepare::Copy));
    t.files.push(file(2, "a", 1, true, Prepare::Copy));
    assert!(compile_error(&t).contains("path 'a' is declared twice"));
    let mut t = Trace::new("bad");
    t.header.queue_depth = Some(5000);
    assert!(compile_error(&t).contains("queue_depth 5000 is out of range"));
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 1, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Open, 1, 0, 0));
    t.ops.push(op(0, 0, OpKind::Read, 1, u64::MAX, 1));
    assert!(compile_error(&t).contains("offset + len overflows"));
}

#[test]
fn every_sized_op_has_the_same_limit() {
    for kind in [OpKind::Read, OpKind::Write, OpKind::Fallocate] {
        let mut t = Trace::new("big");
        t.files.push(file(1, "a", 1, true, Prepare::Copy));
        t.ops.push(op(0, 0, OpKind::Open, 1, 0, 0));
        t.ops.push(op(0, 1, kind, 1, 0, 1 << 40));
        let e = compile_error(&t);
        assert!(
            e.starts_with("bad.jsonl:4:")
                && e.contains(&format!(
                    "a {kind} of 1099511627776 bytes is over naslab's limit"
                )),
            "{e}"
        );
        // At the limit it compiles.
        t.ops[1].len = naslab_engine::plan::MAX_OP_BYTES;
        t.ops.push(op(0, 2, OpKind::Close, 1, 0, 0));
        let spool = tempfile::tempdir().unwrap();
        plan_of(&t, spool.path());
    }
}

#[test]
fn warm_up_ops_go_to_the_warm_up_spool_only() {
    let mut t = Trace::new("warm");
    t.files.push(file(1, "a", 10, true, Prepare::Copy));
    for s in 0..3u32 {
        let mut w = op(s, 0, OpKind::Stat, 1, 0, 0);
        w.warmup = true;
        t.ops.push(w);
        t.ops.push(w);
        t.ops.push(op(s, 1, OpKind::Stat, 1, 0, 0));
    }
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    assert_eq!(plan.warmup.len(), 3);
    assert!(plan.warmup.iter().all(|s| s.ops.len() == 2));
    assert!(plan.streams.iter().all(|s| s.ops.len() == 1));
    assert_eq!(plan.ops(), 3);
    assert_eq!(plan.warmup_counts.iter().sum::<u64>(), 6);
}

/// Every path under `root` except naslab's own directory, with size and mtime.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u64, i64, bool)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p == root.join("naslab") {
                continue;
            }
            let m = std::fs::symlink_metadata(&p).unwrap();
            out.insert(
                p.clone(),
                (
                    m.len(),
                    m.mtime_nsec() + m.mtime() * 1_000_000_000,
                    m.is_dir(),
                ),
            );
            if m.is_dir() {
                todo.push(p);
            }
        }
    }
    out
}

#[test]
fn nothing_outside_naslabs_directory_is_touched() {
    let target = tempfile::tempdir().unwrap();
    let t = target.path();
    std::fs::write(t.join("keep.txt"), b"user data").unwrap();
    std::fs::create_dir_all(t.join("projects/ContentCreation")).unwrap();
    std::fs::write(
        t.join("projects/ContentCreation/video.dvr-ms"),
        vec![7u8; 5000],
    )
    .unwrap();
    std::fs::create_dir(t.join("DocumentSave")).unwrap();
    let before = snapshot(t);

    let mut tr = Trace::new("DocumentSave");
    tr.files
        .push(file(1, "video.dvr-ms", 100_000, true, Prepare::Stream));
    tr.files.push(file(2, "keep.txt", 0, false, Prepare::Copy));
    tr.ops.push(op(0, 0, OpKind::Create, 2, 0, 0));
    tr.ops.push(op(0, 1, OpKind::Write, 2, 0, 100));
    tr.ops.push(op(0, 2, OpKind::Close, 2, 0, 0));
    tr.ops.push(op(0, 3, OpKind::Unlink, 1, 0, 0));
    tr.ops.push(op(0, 4, OpKind::Unlink, 2, 0, 0));
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&tr, spool.path());
    let sandbox = Sandbox::open(t).unwrap();
    let target = PosixTarget::new(sandbox.clone());
    let progress = Progress::default();
    for i in 1..=2 {
        let spec = spec_of(
            &plan,
            &target,
            CacheMode::Drop,
            spool.path(),
            None,
            &progress,
        );
        let r = run_iteration(&spec, i).unwrap();
        assert_eq!(r.errors, 0);
    }
    assert_eq!(snapshot(t), before, "files outside naslab/ changed");
    assert!(
        !sandbox.remove_all().unwrap(),
        "opening made naslab/: it was not there"
    );
    assert!(!t.join("naslab").exists());
    assert_eq!(snapshot(t), before);
    assert_eq!(std::fs::read(t.join("keep.txt")).unwrap(), b"user data");
}

#[test]
fn a_naslab_directory_naslab_did_not_make_is_refused_and_left_alone() {
    let target = tempfile::tempdir().unwrap();
    let t = target.path();
    std::fs::create_dir(t.join("naslab")).unwrap();
    std::fs::write(t.join("naslab/thesis.tex"), b"precious").unwrap();
    let e = Sandbox::open(t).unwrap_err().to_string();
    assert!(e.contains("was not made by naslab"), "{e}");
    assert_eq!(
        std::fs::read(t.join("naslab/thesis.tex")).unwrap(),
        b"precious"
    );

    let other = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(other.path(), other.path().join("x")).ok();
    let t2 = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(other.path(), t2.path().join("naslab")).unwrap();
    let e = Sandbox::open(t2.path()).unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");

    let e = Sandbox::open(&t.join("missing")).unwrap_err().to_string();
    assert!(e.contains("does not exist"), "{e}");
    let e = Sandbox::open(&t.join("naslab/thesis.tex"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a directory"), "{e}");
}

#[test]
fn joining_a_shared_file_set_needs_its_holder_and_takes_nothing() {
    let target = tempfile::tempdir().unwrap();
    let t = target.path();
    // Nobody has made it yet: nothing to join, and nothing is made.
    let e = Sandbox::join(t).unwrap_err().to_string();
    assert!(e.contains("was not held by the first client"), "{e}");
    assert!(!t.join("naslab").exists());
    let holder = Sandbox::open(t).unwrap();
    let marker = std::fs::read_to_string(t.join("naslab/.naslab-owned")).unwrap();
    // While held, others join it (and the holder's word in the marker stays).
    let joined = Sandbox::join(t).unwrap();
    assert_eq!(joined.root(), holder.root());
    let second = Sandbox::join(t).unwrap();
    assert_eq!(
        std::fs::read_to_string(t.join("naslab/.naslab-owned")).unwrap(),
        marker
    );
    // Joining took no lock: another run is still refused by the holder's alone, and
    // once the holder lets go, a run may take it while the joiners are still open.
    let e = Sandbox::open(t).unwrap_err().to_string();
    assert!(e.contains("in use by naslab pid"), "{e}");
    drop(holder);
    let e = Sandbox::join(t).unwrap_err().to_string();
    assert!(e.contains("was not held"), "{e}");
    let next = Sandbox::open(t).unwrap();
    drop((joined, second, next));
}

#[test]
fn a_clients_directory_is_made_in_the_target_and_never_followed_as_a_link() {
    let target = tempfile::tempdir().unwrap();
    let t = target.path();
    let sb = Sandbox::open_client(t, "client-0").unwrap();
    assert_eq!(sb.root(), t.join("client-0/naslab"));
    assert!(t.join("client-0/naslab/.naslab-owned").is_file());
    // Cleaning removes naslab's directory, not the client's.
    assert!(!sb.remove_all().unwrap(), "opening made it");
    assert!(!t.join("client-0/naslab").exists());
    assert!(t.join("client-0").is_dir());

    // A client directory that is a link elsewhere is refused and nothing is made there.
    let elsewhere = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), t.join("client-1")).unwrap();
    let e = Sandbox::open_client(t, "client-1").unwrap_err().to_string();
    assert!(e.contains("symbolic link"), "{e}");
    assert_eq!(std::fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    let e = Sandbox::open_client(t, "../x").unwrap_err().to_string();
    assert!(e.contains("reserved"), "{e}");
}

#[test]
fn monotonic_clock_waits_until_its_deadline() {
    let c = naslab_engine::MonotonicClock::starting_now();
    let start = c.now_ns();
    c.wait_until(start + 2_000_000);
    assert!(c.now_ns() >= start + 2_000_000);
}

/// Pages of `path` resident in the page cache, by mincore(2) over a mapping of it.
fn resident_pages(path: &Path) -> usize {
    use std::os::unix::io::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    // SAFETY: a read-only shared mapping of an open file, unmapped below; mincore only
    // writes one byte per page into `vec`.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        assert_ne!(addr, libc::MAP_FAILED);
        let mut vec = vec![0u8; len.div_ceil(4096)];
        assert_eq!(libc::mincore(addr, len, vec.as_mut_ptr()), 0);
        libc::munmap(addr, len);
        vec.iter().filter(|&&b| b & 1 == 1).count()
    }
}

#[test]
fn cache_drop_leaves_no_prepared_page_in_memory_and_keep_leaves_them() {
    let mut t = Trace::new("cached");
    t.files.push(file(1, "f", 8 << 20, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Stat, 1, 0, 0));
    // tmpfs keeps everything in memory whatever it is told: use the disk under the tests.
    let target_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let target = PosixTarget::new(sandbox.clone());
    let path = sandbox.root().join("cached/f");
    let mut resident = Vec::new();
    for cache in [CacheMode::Keep, CacheMode::Drop] {
        run_once(&plan, &target, cache, spool.path(), None).unwrap();
        resident.push(resident_pages(&path));
    }
    assert_eq!(
        resident[0], 2048,
        "kept: every page of the 8 MiB file stays cached"
    );
    assert_eq!(resident[1], 0, "dropped: no page stays cached");
}

/// Random reads and writes with `depth` in flight, bracketed by opens and closes.
fn queued_trace(depth: u32, reads: u64) -> Trace {
    let mut t = Trace::new("queued");
    t.header.queue_depth = Some(depth);
    t.files.push(file(1, "data", 8 << 20, true, Prepare::Copy));
    t.files.push(file(2, "out", 0, false, Prepare::Copy));
    let mut o = op(0, 0, OpKind::Open, 1, 0, 0);
    o.flags = OpFlags::READ;
    t.ops.push(o);
    for i in 0..reads {
        t.ops
            .push(op(0, i, OpKind::Read, 1, (i * 7919 % 2048) * 4096, 4096));
    }
    t.ops.push(op(0, reads, OpKind::Close, 1, 0, 0));
    t.ops.push(op(0, reads, OpKind::Create, 2, 0, 0));
    for i in 0..256u64 {
        t.ops
            .push(op(0, reads + i, OpKind::Write, 2, i * 65536, 65536));
    }
    t.ops.push(op(0, reads + 300, OpKind::Close, 2, 0, 0));
    t
}

#[test]
fn queued_replay_on_posix_moves_every_byte_and_keeps_trace_order() {
    let target_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let t = queued_trace(16, 5000);
    let plan = plan_of(&t, spool.path());
    let target = PosixTarget::new(sandbox.clone());
    let records = spool.path().join("q.ops.jsonl");
    let r = run_once(
        &plan,
        &target,
        CacheMode::Keep,
        spool.path(),
        Some(records.clone()),
    )
    .unwrap();
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    assert_eq!(r.op("read").unwrap().count, 5000);
    assert_eq!(r.bytes_read, 5000 * 4096);
    assert_eq!(r.bytes_written, 256 * 65536);
    assert_eq!(
        std::fs::metadata(sandbox.root().join("queued/out"))
            .unwrap()
            .len(),
        256 * 65536
    );
    let recs = records_of(&records);
    assert_eq!(recs.len(), 5000 + 256 + 4);
    // In trace order (one stream), each op's completion after its issue, and reads overlap.
    let offsets: Vec<u64> = recs
        .iter()
        .filter(|(o, _)| o.kind == OpKind::Read)
        .map(|(o, _)| o.offset)
        .collect();
    let expected: Vec<u64> = (0..5000u64).map(|i| (i * 7919 % 2048) * 4096).collect();
    assert_eq!(offsets, expected);
    assert!(recs.iter().all(|(_, m)| m.done_ns >= m.issued_ns));
    // Reads were in flight together: many were issued before the read ahead of them
    // in the trace had completed.
    let overlapping = recs
        .windows(2)
        .filter(|w| {
            w[0].0.kind == OpKind::Read
                && w[1].0.kind == OpKind::Read
                && w[1].1.issued_ns < w[0].1.done_ns
        })
        .count();
    assert!(
        overlapping > 1000,
        "reads did not overlap ({overlapping} of 4999)"
    );
    // The close waits for every read before it.
    let close = recs
        .iter()
        .position(|(o, _)| o.kind == OpKind::Close)
        .unwrap();
    let last_read_done = recs[..close].iter().map(|(_, m)| m.done_ns).max().unwrap();
    assert!(recs[close].1.issued_ns >= last_read_done);
}

#[test]
fn queued_replay_on_the_null_backend_counts_exactly() {
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&queued_trace(32, 10_000), spool.path());
    let r = run_once(&plan, &NullTarget, CacheMode::Drop, spool.path(), None).unwrap();
    assert_eq!(r.ops, 10_000 + 256 + 4);
    assert_eq!(r.bytes_read, 10_000 * 4096);
    assert_eq!(r.bytes_written, 256 * 65536);
}

#[test]
fn a_backend_without_queues_is_refused_before_anything_runs() {
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&queued_trace(4, 10), spool.path());
    let target = scripted(10);
    let e = run_once(&plan, &target, CacheMode::Keep, spool.path(), None)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("at most 1 ops in flight") && e.contains("asks for 4"),
        "{e}"
    );
    assert!(target.log.lock().unwrap().is_empty(), "nothing was issued");
}

#[test]
fn warm_up_ops_run_first_unmeasured_and_the_measured_phase_sees_their_files() {
    let mut t = Trace::new("warm");
    t.files.push(file(1, "made", 0, false, Prepare::Copy));
    for s in 0..4u32 {
        // Each stream writes its part of the file during the warm-up...
        let mut w = op(s, 0, OpKind::Open, 1, 0, 0);
        w.kind = if s == 0 { OpKind::Create } else { OpKind::Open };
        w.flags = OpFlags::WRITE;
        w.warmup = true;
        if s == 0 {
            t.ops.push(w);
            for i in 0..64u64 {
                let mut o = op(0, 1, OpKind::Write, 1, i * 65536, 65536);
                o.warmup = true;
                t.ops.push(o);
            }
            let mut c = op(0, 2, OpKind::Close, 1, 0, 0);
            c.warmup = true;
            t.ops.push(c);
        }
    }
    // ...then stream 1 reads it, measured.
    let mut o = op(1, 10, OpKind::Open, 1, 0, 0);
    o.flags = OpFlags::READ;
    t.ops.push(o);
    for i in 0..64u64 {
        t.ops.push(op(1, 11, OpKind::Read, 1, i * 65536, 65536));
    }
    t.ops.push(op(1, 12, OpKind::Close, 1, 0, 0));
    let target_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    assert_eq!(plan.warmup.len(), 1);
    assert_eq!(plan.ops(), 66);
    let target = PosixTarget::new(sandbox.clone());
    let records = spool.path().join("w.ops.jsonl");
    let r = run_once(
        &plan,
        &target,
        CacheMode::Drop,
        spool.path(),
        Some(records.clone()),
    )
    .unwrap();
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    assert_eq!(r.ops, 66);
    assert_eq!(r.bytes_read, 64 * 65536);
    assert_eq!(r.bytes_written, 0);
    assert!(r.op("create").is_none() && r.op("write").is_none());
    assert_eq!(records_of(&records).len(), 66);
    assert_eq!(r.streams.len(), 1);
}

#[test]
fn warm_up_rules_are_checked() {
    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 10, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Stat, 1, 0, 0));
    let mut w = op(0, 1, OpKind::Stat, 1, 0, 0);
    w.warmup = true;
    t.ops.push(w);
    assert!(compile_error(&t).contains("come first"));

    let mut t = Trace::new("bad");
    t.files.push(file(1, "a", 10, true, Prepare::Copy));
    let mut w = op(0, 0, OpKind::Open, 1, 0, 0);
    w.warmup = true;
    t.ops.push(w);
    t.ops.push(op(0, 1, OpKind::Read, 1, 0, 10));
    assert!(compile_error(&t).contains("open at the end of its warm-up"));
}

#[test]
fn the_time_limit_ends_the_measured_phase() {
    let mut t = Trace::new("long");
    t.files.push(file(1, "a", 4096, true, Prepare::Copy));
    for i in 0..1000u64 {
        t.ops.push(op(0, i, OpKind::Stat, 1, 0, 0));
    }
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let target = scripted(1_000_000);
    let clock = target.clock.clone();
    let options = ReplayOptions {
        time_limit_ns: Some(100_000_000),
        ..ReplayOptions::default()
    };
    let out = replay(
        &plan,
        &target,
        "long",
        options,
        spool.path(),
        &Progress::default(),
        move || clock,
    )
    .unwrap();
    // 1 ms per op: ops issued at 0..=99 ms run, the one due at 100 ms does not.
    assert_eq!(out.streams[0].ops, 100);
    assert!(out.streams[0].time_limited);
}

/// Two stats, the second an hour after the first, replayed at the trace's own pace.
fn an_hour_apart() -> Trace {
    let mut t = Trace::new("later");
    t.files.push(file(1, "a", 4096, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Stat, 1, 0, 0));
    t.ops.push(op(0, 3_600_000_000, OpKind::Stat, 1, 0, 0));
    t
}

#[test]
fn the_time_limit_ends_a_paced_wait_on_time() {
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&an_hour_apart(), spool.path());
    let target = scripted(1_000_000);
    let clock = target.clock.clone();
    let options = ReplayOptions {
        pacing: Pacing::Original,
        time_limit_ns: Some(2_000_000_000),
        ..ReplayOptions::default()
    };
    let out = replay(
        &plan,
        &target,
        "later",
        options,
        spool.path(),
        &Progress::default(),
        {
            let c = clock.clone();
            move || c
        },
    )
    .unwrap();
    assert_eq!(out.streams[0].ops, 1, "the op an hour away is not issued");
    assert!(out.streams[0].time_limited);
    // The stream gave up waiting at the limit (2 s after its first op), not an hour on.
    let now = naslab_engine::Clock::now_ns(&clock);
    assert!(
        (2_000_000_000..2_100_000_000).contains(&now),
        "the wait ended at {now} ns"
    );
}

#[test]
fn a_stop_from_outside_ends_a_paced_wait_and_keeps_what_was_done() {
    static CANCEL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&an_hour_apart(), spool.path());
    let target = NullTarget;
    let options = ReplayOptions {
        pacing: Pacing::Original,
        cancel: Some(&CANCEL),
        ..ReplayOptions::default()
    };
    let setter = std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_millis(200));
        CANCEL.store(true, std::sync::atomic::Ordering::SeqCst);
    });
    let out = replay(
        &plan,
        &target,
        "later",
        options,
        spool.path(),
        &Progress::default(),
        naslab_engine::MonotonicClock::starting_now,
    )
    .unwrap();
    setter.join().unwrap();
    // The op an hour on was never issued: the stop ended the wait (had it not, the
    // wait would have run its hour and issued it).
    assert_eq!(out.streams[0].ops, 1);
    assert!(out.fatal().is_none());
}

#[test]
fn a_held_target_names_its_holder_until_released() {
    let t = tempfile::tempdir().unwrap();
    let first = Sandbox::open(t.path()).unwrap();
    let e = Sandbox::open(t.path()).unwrap_err().to_string();
    let holder = format!("is in use by naslab pid {} since ", std::process::id());
    assert!(e.contains(&holder), "{e}");
    // Clones share the lock; dropping the last releases it.
    let clone = first.clone();
    drop(first);
    assert!(Sandbox::open(t.path()).is_err());
    drop(clone);
    assert!(
        Sandbox::open(t.path()).unwrap().remove_all().unwrap(),
        "it was there before this open"
    );
    assert!(!t.path().join("naslab").exists());
}

#[test]
fn the_time_limit_ends_a_paced_wait_of_a_queued_replay_on_time() {
    // queued_trace's reads, paced: the first 200 reads 1 ms apart, the rest an hour on.
    let target_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let mut t = queued_trace(8, 400);
    for o in t.ops.iter_mut() {
        o.t_us = if o.t_us < 200 {
            o.t_us * 1000
        } else {
            3_600_000_000 + o.t_us
        };
    }
    let plan = plan_of(&t, spool.path());
    let target = PosixTarget::new(sandbox.clone());
    let replay = ReplayOptions {
        pacing: Pacing::Original,
        time_limit_ns: Some(1_000_000_000),
        ..ReplayOptions::default()
    };
    let r = run_with(&plan, &target, CacheMode::Keep, spool.path(), None, replay).unwrap();
    assert!(r.time_limited);
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    // The open and the 200 reads due in the first 200 ms ran; nothing an hour on did.
    assert_eq!(r.op("read").map_or(0, |s| s.count), 200, "{:?}", r.op_stats);
    assert_eq!(r.op("write").map_or(0, |s| s.count), 0, "{:?}", r.op_stats);
}

#[test]
fn a_queued_stream_whose_reads_and_writes_are_all_empty_runs_them_and_ends() {
    // Queue depth 8, and every read and write of zero bytes: the stream has no buffer
    // bytes at all, yet each op still needs its place in the queue.
    let mut t = Trace::new("empty");
    t.header.queue_depth = Some(8);
    t.files.push(file(1, "f", 4096, true, Prepare::Copy));
    let mut o = op(0, 0, OpKind::Open, 1, 0, 0);
    o.flags = OpFlags::READ | OpFlags::WRITE;
    t.ops.push(o);
    for i in 0..20u64 {
        let kind = if i % 2 == 0 {
            OpKind::Read
        } else {
            OpKind::Write
        };
        t.ops.push(op(0, i, kind, 1, i * 512, 0));
    }
    t.ops.push(op(0, 20, OpKind::Close, 1, 0, 0));
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let spool = tempfile::tempdir().unwrap();
        let plan = plan_of(&t, spool.path());
        let r = run_once(&plan, &NullTarget, CacheMode::Keep, spool.path(), None).unwrap();
        let _ = done.send((r.ops, r.errors, r.op("read").map(|s| s.count)));
    });
    // A replay that cannot take its next op would spin for ever: fail instead.
    let (ops, errors, reads) = result
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the replay of empty reads and writes at depth 8 never ended");
    assert_eq!((ops, errors, reads), (22, 0, Some(10)));
}

#[test]
fn failed_ops_are_timed_apart_from_the_ops_that_succeeded() {
    // 10 reads of 25 µs each on a file that opens; then 5 reads of a file whose open
    // fails, which fail with EBADF at once, never reaching the backend.
    let mut t = Trace::new("failing");
    t.files.push(file(1, "a", 1 << 20, true, Prepare::Copy));
    t.files.push(file(2, "b", 0, false, Prepare::Copy));
    for (f, reads) in [(1u32, 10u64), (2, 5)] {
        let mut o = op(0, 0, OpKind::Open, f, 0, 0);
        o.flags = OpFlags::READ;
        t.ops.push(o);
        for i in 0..reads {
            t.ops.push(op(0, 0, OpKind::Read, f, i * 4096, 4096));
        }
    }
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let mut target = scripted(25_000);
    let files = plan.files.clone();
    target.fail_open = files
        .entries
        .iter()
        .position(|e| e.path == "b")
        .map(|i| i as u32);
    assert!(target.fail_open.is_some());
    let clock = target.clock.clone();
    let progress = Progress::default();
    let out = replay(
        &plan,
        &target,
        "failing",
        ReplayOptions::default(),
        spool.path(),
        &progress,
        move || clock,
    )
    .expect("replay runs");
    let r = naslab_engine::summarize::summarize(0, Default::default(), &out);
    let reads = r.op("read").unwrap();
    assert_eq!((reads.count, reads.errors), (15, 5));
    assert_eq!(reads.errors_by_errno["EBADF"], 5);
    // The successful reads' figures are theirs alone: 25 µs each, not pulled down by
    // the failures' zero.
    assert_eq!(reads.latency.count, 10);
    assert_eq!(
        (
            reads.latency.min_ns,
            reads.latency.avg_ns,
            reads.latency.max_ns
        ),
        (25_000, 25_000, 25_000)
    );
    let failed = reads.failed_latency.expect("the failed reads' latency");
    assert_eq!((failed.count, failed.max_ns), (5, 0));
    assert!(!reads.latency_holds_failures());
    // The failed open took its 25 µs at the backend, and is timed apart too.
    let opens = r.op("open").unwrap();
    assert_eq!((opens.count, opens.errors, opens.latency.count), (2, 1, 1));
    assert_eq!(opens.failed_latency.unwrap().avg_ns, 25_000);
    // An op type without failures has no failed latency at all.
    let mut ok = Trace::new("fine");
    ok.files.push(file(1, "a", 1 << 20, true, Prepare::Copy));
    let mut o = op(0, 0, OpKind::Open, 1, 0, 0);
    o.flags = OpFlags::READ;
    ok.ops.push(o);
    ok.ops.push(op(0, 0, OpKind::Read, 1, 0, 4096));
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&ok, spool.path());
    let r = run_once(&plan, &scripted(1000), CacheMode::Keep, spool.path(), None).unwrap();
    assert!(r.op("read").unwrap().failed_latency.is_none());
}

/// A device on a scripted clock for queued ops: submitting one takes `submit_ns`, and
/// each op completes `service_ns` after its submission, however many are in flight. A
/// reap returns every op completed by then, moving the clock to the next completion
/// when none has.
#[derive(Clone)]
struct QueueDevice {
    clock: ScriptedClock,
    submit_ns: u64,
    service_ns: u64,
}

struct QueueDeviceBackend {
    d: QueueDevice,
    /// (completes at, tag, bytes)
    in_flight: Vec<(u64, u64, i64)>,
    memory: IoMemory,
}

const QUEUE_CAPS: Caps = Caps {
    ops: [true; OpKind::ALL.len()],
    direct_io: false,
    drop_cache: None,
    moves_data: false,
    max_queue_depth: 256,
};

impl Target for QueueDevice {
    fn backend_name(&self) -> &'static str {
        "queue-device"
    }
    fn caps(&self) -> Caps {
        QUEUE_CAPS
    }
    fn connect(
        &self,
        _d: &str,
        _f: Arc<FileTable>,
        _o: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        Ok(Box::new(QueueDeviceBackend {
            d: self.clone(),
            in_flight: Vec::new(),
            memory: IoMemory::default(),
        }))
    }
}

impl QueueDeviceBackend {
    fn submit(&mut self, tag: u64, len: usize) {
        self.d.clock.advance(self.d.submit_ns);
        let at = self.d.clock.now_ns() + self.d.service_ns;
        self.in_flight.push((at, tag, len as i64));
    }
}

impl naslab_engine::backend::QueuedIo for QueueDeviceBackend {
    fn queue_read(&mut self, _h: Handle, _o: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        // The bytes must be within what the stream lent, as a real device would need.
        self.memory.locate(buf)?;
        self.submit(tag, buf.len);
        Ok(())
    }
    fn queue_write(&mut self, _h: Handle, _o: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        self.memory.locate(buf)?;
        self.submit(tag, buf.len);
        Ok(())
    }
    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        self.in_flight.sort_unstable();
        if let Some(&(at, _, _)) = self.in_flight.get(min.max(1) - 1) {
            self.d.clock.wait_until(at);
        }
        let now = self.d.clock.now_ns();
        let n = self.in_flight.partition_point(|&(at, _, _)| at <= now);
        done.extend(self.in_flight.drain(..n).map(|(_, tag, r)| (tag, r)));
        Ok(())
    }
}

impl Backend for QueueDeviceBackend {
    fn caps(&self) -> Caps {
        QUEUE_CAPS
    }
    fn open(&mut self, file: u32, _how: OpenHow) -> Result<Handle, OpError> {
        Ok(file as u64 + 10)
    }
    fn close(&mut self, _h: Handle) -> Result<(), OpError> {
        Ok(())
    }
    fn read(&mut self, _h: Handle, _o: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        Ok(buf.len())
    }
    fn write(&mut self, _h: Handle, _o: u64, buf: &[u8]) -> Result<usize, OpError> {
        Ok(buf.len())
    }
    fn fsync(&mut self, _h: Handle) -> Result<(), OpError> {
        Ok(())
    }
    fn truncate(&mut self, _h: Handle, _len: u64) -> Result<(), OpError> {
        Ok(())
    }
    fn fallocate(&mut self, _h: Handle, _o: u64, _l: u64) -> Result<(), OpError> {
        Ok(())
    }
    fn stat(&mut self, _f: u32) -> Result<u64, OpError> {
        Ok(0)
    }
    fn mkdir(&mut self, _f: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn readdir(&mut self, _f: u32) -> Result<u64, OpError> {
        Ok(0)
    }
    fn unlink(&mut self, _f: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn rename(&mut self, _a: u32, _b: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn queued(
        &mut self,
        _depth: u32,
        memory: &IoMemory,
    ) -> Result<&mut dyn naslab_engine::backend::QueuedIo, OpError> {
        naslab_engine::backend::lend_once(&mut self.memory, memory);
        Ok(self)
    }
}

/// Replays `plan` (one stream: an open, reads, a close) on `device`'s scripted clock;
/// the reads' (issued, done), in trace order.
fn queued_reads(plan: &naslab_engine::Plan, device: &QueueDevice, dir: &Path) -> Vec<(u64, u64)> {
    let clock = device.clock.clone();
    let options = ReplayOptions {
        records: true,
        ..ReplayOptions::default()
    };
    let progress = Progress::default();
    let out =
        replay(plan, device, "q", options, dir, &progress, move || clock).expect("replay runs");
    assert!(out.fatal().is_none());
    let mut r = out.streams[0].measured.as_ref().unwrap().reader().unwrap();
    let mut all = Vec::new();
    while let Some(m) = r.next_measured().unwrap() {
        assert!(m.result >= 0, "{m:?}");
        all.push((m.issued_ns, m.done_ns));
    }
    // Less the open and the close.
    all[1..all.len() - 1].to_vec()
}

/// Ops in flight on average over the reads' span, by Little's law: the sum of their
/// latencies over the span.
fn little(reads: &[(u64, u64)]) -> f64 {
    let first = reads.iter().map(|r| r.0).min().unwrap();
    let last = reads.iter().map(|r| r.1).max().unwrap();
    let busy: u64 = reads.iter().map(|(i, d)| d - i).sum();
    busy as f64 / (last - first) as f64
}

#[test]
fn a_queued_stream_keeps_its_queue_at_depth_by_littles_law() {
    // A device that takes 200 µs per op at any depth, 1 µs to submit one: a stream that
    // refills each slot as its op completes keeps `depth` in flight all along.
    for depth in [2u32, 8, 32] {
        let spool = tempfile::tempdir().unwrap();
        let mut t = queued_trace(depth, 20_000);
        // Only the reads: the trace's writes to another file are another phase.
        t.ops.retain(|o| o.file == 1);
        let plan = plan_of(&t, spool.path());
        let device = QueueDevice {
            clock: ScriptedClock::new(),
            submit_ns: 1_000,
            service_ns: 200_000,
        };
        let reads = queued_reads(&plan, &device, spool.path());
        assert_eq!(reads.len(), 20_000);
        let in_flight = little(&reads);
        assert!(
            (in_flight - depth as f64).abs() <= depth as f64 * 0.01,
            "depth {depth}: {in_flight:.3} in flight by Little's law"
        );
        // Counted at each issue: once the queue has filled, every read is issued with
        // depth - 1 others outstanding (issued before it, reaped after it).
        for (k, &(issued, _)) in reads.iter().enumerate().skip(depth as usize) {
            let outstanding = reads[..k]
                .iter()
                .rev()
                .take(4 * depth as usize)
                .filter(|&&(_, done)| done > issued)
                .count();
            assert_eq!(
                outstanding,
                depth as usize - 1,
                "depth {depth}: read {k} was issued with {outstanding} others in flight"
            );
        }
    }
}

#[test]
fn a_queued_stream_on_a_disk_is_refilled_as_completions_come_not_when_all_have() {
    // 4 KiB random O_DIRECT reads at depth 32 on a file on disk. A reap that finds the
    // whole queue completed means the queue drained to 0 before it was refilled: with a
    // ring whose completions wake the stream once per batch, most reaps were such (1,982
    // of 2,100 on a virtio disk); refilled as they come, hardly any are.
    let target_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let depth = 32u32;
    let reads = 20_000u64;
    let blocks = (64u64 << 20) / 4096;
    let mut t = Trace::new("deep");
    t.header.queue_depth = Some(depth);
    t.files
        .push(file(1, "data", blocks * 4096, true, Prepare::Copy));
    let mut o = op(0, 0, OpKind::Open, 1, 0, 0);
    o.flags = OpFlags::READ | OpFlags::DIRECT | OpFlags::RANDOM;
    t.ops.push(o);
    for i in 0..reads {
        t.ops
            .push(op(0, 0, OpKind::Read, 1, (i * 7919 % blocks) * 4096, 4096));
    }
    t.ops.push(op(0, 0, OpKind::Close, 1, 0, 0));
    let plan = plan_of(&t, spool.path());
    let target = PosixTarget::new(sandbox.clone());
    let records = spool.path().join("deep.ops.jsonl");
    let r = run_once(
        &plan,
        &target,
        CacheMode::Keep,
        spool.path(),
        Some(records.clone()),
    )
    .unwrap();
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    // Completions reaped together share their completion time.
    let mut per_reap: BTreeMap<u64, usize> = BTreeMap::new();
    for (o, m) in records_of(&records) {
        if o.kind == OpKind::Read {
            *per_reap.entry(m.done_ns).or_default() += 1;
        }
    }
    let whole = per_reap.values().filter(|&&n| n == depth as usize).count();
    assert!(
        whole * 10 < per_reap.len(),
        "{whole} of {} reaps found all {depth} ops completed: the queue drained before it was refilled",
        per_reap.len()
    );
}

#[test]
fn statfs_utime_locks_and_expected_failures_run_on_a_local_directory() {
    use naslab_trace::Expected;
    let mut t = Trace::new("attrs");
    t.files.push(file(1, "a", 100, true, Prepare::Copy));
    t.files.push(file(2, "gone", 0, false, Prepare::Copy));
    t.files.push(file(3, "here", 10, true, Prepare::Copy));
    t.ops.push(op(0, 0, OpKind::Statfs, 1, 0, 0));
    t.ops.push(op(0, 1, OpKind::Utime, 1, 0, 0));
    let mut o = op(0, 2, OpKind::Open, 1, 0, 0);
    o.flags = OpFlags::READ | OpFlags::WRITE;
    t.ops.push(o);
    t.ops.push(op(0, 3, OpKind::Lock, 1, 10, 20));
    // Stream 1 opens the file too: the range stream 0 holds is not its to take.
    let mut o1 = op(1, 4, OpKind::Open, 1, 0, 0);
    o1.flags = OpFlags::READ | OpFlags::WRITE;
    t.ops.push(o1);
    let mut busy = op(1, 5, OpKind::Lock, 1, 15, 1);
    busy.expect = Some(Expected::WouldBlock);
    t.ops.push(busy);
    t.ops.push(op(1, 6, OpKind::Close, 1, 0, 0));
    t.ops.push(op(0, 7, OpKind::Unlock, 1, 10, 20));
    t.ops.push(op(0, 8, OpKind::Close, 1, 0, 0));
    // Lookups expected to fail: an open and a stat of a name that does not exist (the
    // open leaves no handle to close), and one of a name that does, whose success is
    // the error.
    for (kind, f) in [(OpKind::Open, 2), (OpKind::Stat, 2), (OpKind::Stat, 3)] {
        let mut e = op(0, 9, kind, f, 0, 0);
        e.expect = Some(Expected::NotFound);
        t.ops.push(e);
    }
    let target_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sandbox = Sandbox::open(target_dir.path()).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let target = PosixTarget::new(sandbox.clone());
    let before = std::time::SystemTime::now() - std::time::Duration::from_secs(2);
    let r = run_once(&plan, &target, CacheMode::Keep, spool.path(), None).unwrap();
    for (kind, count) in [("statfs", 1), ("utime", 1), ("lock", 2), ("unlock", 1)] {
        assert_eq!(r.op(kind).map(|s| s.count), Some(count), "{:?}", r.op_stats);
    }
    let lock = r.op("lock").unwrap();
    assert_eq!((lock.errors, lock.expected_failures), (0, 1), "{lock:?}");
    let open = r.op("open").unwrap();
    assert_eq!((open.errors, open.expected_failures), (0, 1), "{open:?}");
    let stat = r.op("stat").unwrap();
    assert_eq!(
        (stat.errors, stat.expected_failures, stat.missing_failures),
        (1, 1, 1),
        "{stat:?}"
    );
    assert_eq!((r.errors, r.expected_failures), (1, 3));
    // utime set the file's times to the run's.
    let mtime = std::fs::metadata(target_dir.path().join("naslab/attrs/a"))
        .unwrap()
        .modified()
        .unwrap();
    assert!(mtime >= before, "{mtime:?}");
}

#[test]
fn the_null_backend_does_an_expected_failure_as_the_trace_says() {
    use naslab_trace::Expected;
    let mut t = Trace::new("nullfail");
    t.files.push(file(1, "gone", 0, false, Prepare::Copy));
    let mut e = op(0, 0, OpKind::Stat, 1, 0, 0);
    e.expect = Some(Expected::NotFound);
    t.ops.push(e);
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(&t, spool.path());
    let records = spool.path().join("n.ops.jsonl");
    let r = run_once(
        &plan,
        &NullTarget,
        CacheMode::Keep,
        spool.path(),
        Some(records.clone()),
    )
    .unwrap();
    let stat = r.op("stat").unwrap();
    assert_eq!((stat.errors, stat.expected_failures), (0, 1), "{stat:?}");
    // Recorded as the failure it stands for, with the failed ops' latency, so records
    // and figures agree (as merging a multi-client run checks).
    assert_eq!(stat.failed_latency.as_ref().map(|l| l.count), Some(1));
    let recs = records_of(&records);
    assert_eq!(recs[0].1.result, -(libc::ENOENT as i64));
}
