//! The synthetic and multi-client workloads, run for real on a local directory: every
//! count the source documents' tools printed must be exact.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use common::{plan_of, run_once};
use naslab_local::{PosixTarget, Sandbox};
use naslab_results::views::bigdir::bigdir_rows;
use naslab_results::{CacheMode, IterationResult};
use naslab_trace::Trace;
use naslab_workload::GenParams;
use naslab_workload::synthetic::{backup, bigdir, fileserver, ingest, iometer, iozone};

struct Ran {
    result: IterationResult,
    dir: std::path::PathBuf,
    records: std::path::PathBuf,
    _keep: (tempfile::TempDir, tempfile::TempDir),
}

fn run(trace: &Trace, cache: CacheMode) -> Ran {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(trace, spool.path());
    let sandbox = Sandbox::open(target.path()).unwrap();
    let posix = PosixTarget::new(sandbox.clone());
    let records = spool.path().join("r.ops.jsonl.zst");
    let result = run_once(&plan, &posix, cache, spool.path(), Some(records.clone())).unwrap();
    assert_eq!(
        result.errors, 0,
        "{}: {:?}",
        trace.header.workload, result.op_stats
    );
    Ran {
        result,
        dir: sandbox.root().join(&trace.header.workload),
        records,
        _keep: (target, spool),
    }
}

fn count(r: &IterationResult, op: &str) -> u64 {
    r.op(op).map(|s| s.count).unwrap_or(0)
}

#[test]
fn bigdir_makes_exactly_n_entries_and_every_listing_sees_them_all() {
    for kind in [bigdir::Entries::Dirs, bigdir::Entries::Files] {
        let spec = bigdir::BigDir {
            entries: 1050,
            every: 100,
            kind,
        };
        let ran = run(&spec.generate(), CacheMode::Drop);
        assert_eq!(
            std::fs::read_dir(ran.dir.join("big")).unwrap().count(),
            1050
        );
        let rows = bigdir_rows(&ran.records).unwrap();
        let seen: Vec<u64> = rows.iter().map(|r| r.entries).collect();
        let expected: Vec<u64> = (1..=10).map(|i| i * 100).chain([1050]).collect();
        assert_eq!(seen, expected, "{kind:?}");
        assert!(
            rows.iter()
                .all(|r| r.enumeration_ms > 0.0 && r.create_op_ms > 0.0)
        );
        let made = if kind == bigdir::Entries::Dirs {
            "mkdir"
        } else {
            "create"
        };
        assert_eq!(count(&ran.result, made), 1050);
        assert_eq!(count(&ran.result, "readdir"), 11);
    }
}

#[test]
fn ingest_writes_totalfiles_files_filesperdir_to_a_directory() {
    let spec = ingest::Ingest {
        block_size: 35840,
        blocks_per_file: 2,
        total_files: 250,
        files_per_dir: 100,
    };
    let ran = run(&spec.generate(), CacheMode::Drop);
    let mut per_dir: Vec<usize> = std::fs::read_dir(&ran.dir)
        .unwrap()
        .map(|d| std::fs::read_dir(d.unwrap().path()).unwrap().count())
        .collect();
    per_dir.sort();
    assert_eq!(per_dir, [50, 100, 100]);
    assert_eq!(ran.result.bytes_written, spec.bytes());
    assert_eq!(count(&ran.result, "create"), 250);
    assert_eq!(count(&ran.result, "write"), 500);
    assert_eq!(count(&ran.result, "mkdir"), 3);
}

#[test]
fn file_server_op_counts_are_exact_per_type_and_per_connection() {
    let spec = fileserver::FileServer {
        connections: 24,
        first_connection: 0,
        files_per_connection: 5,
        record: 4096,
    };
    let records_of = |c: u32| -> u64 { (0..5).map(|f| spec.size_of(c, f) / 4096).sum() };
    let w = run(&spec.write_phase(), CacheMode::Drop);
    assert_eq!(count(&w.result, "create"), 120);
    assert_eq!(count(&w.result, "close"), 120);
    let writes: u64 = (0..24).map(records_of).sum();
    assert_eq!(count(&w.result, "write"), writes);
    assert_eq!(w.result.bytes_written, spec.bytes());
    assert_eq!(w.result.streams.len(), 24);
    for s in &w.result.streams {
        assert_eq!(s.ops, records_of(s.stream) + 10, "connection {}", s.stream);
    }
    let r = run(&spec.read_phase(), CacheMode::Drop);
    assert_eq!(count(&r.result, "open"), 120);
    assert_eq!(count(&r.result, "read"), writes);
    assert!(
        r.result.op("write").is_none(),
        "the warm-up writes are not measured"
    );
    assert_eq!(r.result.bytes_read, spec.bytes());
    for s in &r.result.streams {
        assert_eq!(
            s.bytes,
            (0..5).map(|f| spec.size_of(s.stream, f)).sum::<u64>()
        );
    }
}

#[test]
fn backup_reads_every_file_the_writers_made() {
    let spec = backup::Backup {
        writers: 16,
        files_per_writer: 3,
        file_size: 256 << 10,
        write_record: 4096,
        read_block: 1 << 20,
    };
    let ran = run(&spec.generate(), CacheMode::Drop);
    assert_eq!(count(&ran.result, "open"), 48);
    assert_eq!(count(&ran.result, "read"), 48);
    assert_eq!(ran.result.bytes_read, 48 * (256 << 10));
    assert_eq!(ran.result.streams.len(), 1, "one reader is measured");
}

#[test]
fn iometer_tests_move_one_pass_of_their_file() {
    let params = GenParams {
        seed: 1,
        scale: 1.0 / 64.0,
    };
    for test in &iometer::TESTS {
        let ran = run(&iometer::generate(test, &params), CacheMode::Keep);
        let bytes = ran.result.bytes_read + ran.result.bytes_written;
        assert_eq!(bytes, iometer::FILE_BYTES / 64, "{}", test.name);
        let kind = if test.write { "write" } else { "read" };
        assert_eq!(
            count(&ran.result, kind),
            (iometer::FILE_BYTES / 64) / test.block,
            "{}",
            test.name
        );
    }
}

#[test]
fn every_iozone_test_runs_and_moves_its_file() {
    for test in iozone::Test::ALL {
        let ran = run(&iozone::cell(test, 256 << 10, 16 << 10, 1), CacheMode::Keep);
        let bytes = ran.result.bytes_read + ran.result.bytes_written;
        assert_eq!(bytes, 256 << 10, "{test:?}");
        let expected_kind = match test {
            iozone::Test::Write
            | iozone::Test::Rewrite
            | iozone::Test::RandomWrite
            | iozone::Test::RecordRewrite => Some("write"),
            iozone::Test::Mixed => None,
            _ => Some("read"),
        };
        if let Some(kind) = expected_kind {
            assert_eq!(count(&ran.result, kind), 16, "{test:?}");
        }
    }
    let tp = iozone::throughput(iozone::Test::Write, 4, 1 << 20, 64 << 10, 1, "tp".into());
    let ran = run(&tp, CacheMode::Keep);
    assert_eq!(ran.result.streams.len(), 4);
    assert_eq!(ran.result.bytes_written, 4 << 20);
}
