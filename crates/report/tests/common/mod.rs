//! Fixtures shared by the report's tests: fixed results, run directories with op
//! records, and snapshot files.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use naslab_results::{
    CacheMode, Device, Environment, IterationResult, LatencySummary, OpStats, PrepareResult,
    RunOptions, RunResult, SCHEMA_VERSION, StreamResult, TargetInfo, Warning, WorkloadResult,
};
use naslab_trace::{FileDecl, Header, Measured, Op, OpKind, create_trace};

fn latency(count: u64, base_ns: u64) -> LatencySummary {
    LatencySummary {
        count,
        avg_ns: base_ns * 2,
        stddev_ns: base_ns,
        min_ns: base_ns / 2,
        p50_ns: base_ns * 2,
        p90_ns: base_ns * 3,
        p99_ns: base_ns * 7,
        p999_ns: base_ns * 11,
        max_ns: base_ns * 13,
    }
}

fn op(count: u64, bytes: u64, base_ns: u64) -> OpStats {
    OpStats {
        count,
        bytes,
        errors: 0,
        expected_failures: 0,
        missing_failures: 0,
        errors_by_errno: BTreeMap::new(),
        latency: latency(count, base_ns),
        failed_latency: None,
    }
}

/// One iteration with read, write, open, create and close stats.
pub fn iteration(n: u32, mb_s: f64, records: Option<&str>) -> IterationResult {
    let mut op_stats = BTreeMap::new();
    op_stats.insert("close".to_string(), op(40, 0, 900));
    op_stats.insert("create".to_string(), op(10, 0, 60_000));
    op_stats.insert("open".to_string(), op(30, 0, 3_000));
    op_stats.insert(
        "read".to_string(),
        op(120, 4_000_000, 20_000 + n as u64 * 1000),
    );
    let mut write = op(80, 2_000_000, 9_000);
    write.errors = 2;
    write.errors_by_errno.insert("ENOSPC".to_string(), 2);
    op_stats.insert("write".to_string(), write);
    IterationResult {
        iteration: n,
        prepare: PrepareResult {
            files: 12,
            dirs: 3,
            bytes: 10_000_000,
            wall_ns: 55_000_000,
        },
        wall_ns: (6_000_000.0 / mb_s * 1000.0) as u64,
        clock_start_ns: 1_000,
        bytes_read: 4_000_000,
        bytes_written: 2_000_000,
        throughput_mb_s: mb_s,
        ops: 280,
        ops_planned: 280,
        errors: 2,
        op_stats,
        pacing_lag: LatencySummary::default(),
        first_done_ns: 1_000_000,
        last_done_ns: (6_000_000.0 / mb_s * 1000.0) as u64,
        streams: vec![StreamResult {
            stream: 0,
            ops: 280,
            bytes: 6_000_000,
            done_ns: 2_000_000,
        }],
        records: records.map(String::from),
        aborted: None,
        ..IterationResult::default()
    }
}

/// A run of two workloads, one iteration each, with a warning.
pub fn single_run() -> RunResult {
    let mut extra = BTreeMap::new();
    extra.insert("scale".to_string(), "0.01".to_string());
    extra.insert("seed".to_string(), "1".to_string());
    RunResult {
        schema_version: SCHEMA_VERSION,
        naslab_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: "2026-01-02T03:04:05Z".to_string(),
        environment: Environment {
            host: "bench-host".into(),
            kernel: "6.1.0".into(),
            os: "Debian GNU/Linux 12 (bookworm)".into(),
            cpu: "Example CPU".into(),
            cpus: 2,
            memory_bytes: 24_000_000_000,
        },
        target: TargetInfo {
            path: "/mnt/nas".into(),
            backend: "posix".into(),
            fs_type: "cifs".into(),
            source: "//nas/share".into(),
            cache_drop: None,
        },
        options: RunOptions {
            pacing: "afap".into(),
            cache: CacheMode::Keep,
            records: true,
            iterations: 1,
            data: "random".into(),
            verify: false,
            extra,
            ..RunOptions::default()
        },
        workloads: vec![
            WorkloadResult::from_iterations(
                "OfficeProductivity".into(),
                "OfficeProductivity (naspt, seed 1, scale 0.01)".into(),
                vec![iteration(1, 41.5, Some("OfficeProductivity.ops.jsonl.zst"))],
            ),
            WorkloadResult::from_iterations(
                "Copy, \"quoted\" | piped".into(),
                "traces/copy.jsonl".into(),
                vec![iteration(1, 83.0, Some("copy.ops.jsonl.zst"))],
            ),
        ],
        warnings: vec![Warning::FitsInClientCache {
            workload: "OfficeProductivity".into(),
            data_bytes: 10_000_000,
            memory_bytes: 24_000_000_000,
        }],
        aborted: None,
        label: Some("nas-a".into()),
        device: Device {
            name: Some("Example NAS-2000".into()),
            firmware: Some("7.2.1".into()),
            notes: Some("4 disks, RAID 5; <b>cache</b> on".into()),
            tags: [("disks".to_string(), "4".to_string())]
                .into_iter()
                .collect(),
        },
        multi_client: None,
        sweep: None,
    }
}

/// A batch run: three iterations per workload, the last one stopped early.
pub fn batch_run() -> RunResult {
    let mut run = single_run();
    run.options.iterations = 3;
    run.options.cache = CacheMode::Drop;
    run.warnings.clear();
    run.workloads = vec![
        WorkloadResult::from_iterations(
            "HDVideo_1Play".into(),
            "HDVideo_1Play (naspt, seed 1, scale 0.01)".into(),
            vec![
                iteration(1, 30.0, None),
                iteration(2, 36.0, None),
                iteration(3, 33.0, None),
            ],
        ),
        WorkloadResult::from_iterations(
            "PhotoAlbum".into(),
            "PhotoAlbum (naspt, seed 1, scale 0.01)".into(),
            vec![iteration(1, 12.0, None), {
                let mut it = iteration(2, 10.0, None);
                it.aborted = Some("write of 'a.jpg' failed: ENOSPC".into());
                it.ops_planned = 1_000;
                it
            }],
        ),
    ];
    run.aborted = Some("PhotoAlbum stopped early".into());
    run
}

/// Writes `run` as run.json into `dir`.
pub fn write_run_json(dir: &Path, run: &RunResult) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("run.json"),
        serde_json::to_vec_pretty(run).unwrap(),
    )
    .unwrap();
}

/// Writes op records: `files` files and `ops` ops on one stream alternating opens,
/// reads, writes and closes, with latencies that grow now and then (a tail), and every
/// 50th op failing. Returns the measured phase's length.
pub fn write_records(
    path: &Path,
    workload: &str,
    files: u32,
    ops: u64,
    clock_start_ns: u64,
) -> u64 {
    let mut w = create_trace(path).unwrap();
    w.header(&Header::new(workload)).unwrap();
    for id in 0..files {
        w.file(&FileDecl {
            id: id + 10,
            path: format!("dir/file{id}.dat"),
            kind: Default::default(),
            size: 1 << 20,
            exists: true,
            prepare: Default::default(),
        })
        .unwrap();
    }
    let mut t = clock_start_ns;
    for i in 0..ops {
        let file = (i / 4 % files as u64) as u32 + 10;
        let kind = match i % 4 {
            0 => OpKind::Open,
            1 => OpKind::Read,
            2 => OpKind::Write,
            _ => OpKind::Close,
        };
        let mut op = Op::new((i % 2) as u32, i, kind, file);
        if matches!(kind, OpKind::Read | OpKind::Write) {
            op.offset = (i * 4096) % (1 << 20);
            op.len = 4096 << (i % 3);
        }
        let lat = if i % 97 == 0 {
            5_000_000
        } else {
            2_000 + (i % 13) * 1000
        };
        let result = if i % 50 == 49 {
            -28
        } else if matches!(kind, OpKind::Read | OpKind::Write) {
            op.len as i64
        } else {
            0
        };
        w.op(
            &op,
            Some(&Measured {
                sched_ns: t,
                issued_ns: t,
                done_ns: t + lat,
                result,
            }),
        )
        .unwrap();
        t += lat + 500;
    }
    w.close().unwrap();
    t - clock_start_ns
}

/// A run directory holding `single_run()` with records for both workloads; the first
/// workload's wall time matches its records.
pub fn run_dir_with_records(root: &Path, ops: u64) -> PathBuf {
    let dir = root.join("run").join("20260102T030405Z");
    let mut run = single_run();
    run.workloads[0].iterations[0].wall_ns = write_records(
        &dir_make(&dir).join("OfficeProductivity.ops.jsonl.zst"),
        "OfficeProductivity",
        7,
        ops,
        1_000,
    );
    run.workloads[1].iterations[0].wall_ns =
        write_records(&dir.join("copy.ops.jsonl.zst"), "copy", 2, 40, 1_000);
    write_run_json(&dir, &run);
    dir
}

fn dir_make(dir: &Path) -> &Path {
    std::fs::create_dir_all(dir).unwrap();
    dir
}

/// Compares `text` with the snapshot file `tests/snapshots/NAME`, or rewrites it when
/// NASLAB_UPDATE_SNAPSHOTS=1.
pub fn snapshot(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("snapshots")
        .join(name);
    if std::env::var("NASLAB_UPDATE_SNAPSHOTS").as_deref() == Ok("1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "no snapshot {}; run with NASLAB_UPDATE_SNAPSHOTS=1 to make it, then review it",
            path.display()
        )
    });
    if want != text {
        let line = want
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| want.lines().count().min(text.lines().count()));
        panic!(
            "{name} differs from its snapshot from line {}:\n  snapshot: {:?}\n  now:      {:?}\n(if the change is intended, rerun with NASLAB_UPDATE_SNAPSHOTS=1 and review the diff)\n--- whole output ---\n{text}",
            line + 1,
            want.lines().nth(line),
            text.lines().nth(line)
        );
    }
}

/// Replaces what changes between machines and versions: the naslab version and the
/// given temporary directory.
pub fn filter(text: &str, tmp: Option<&Path>) -> String {
    let mut t = text.replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
    if let Some(tmp) = tmp {
        let shown = tmp.display().to_string();
        // JSON doubles a Windows path's backslashes.
        t = t
            .replace(&shown.replace('\\', "\\\\"), "[TMP]")
            .replace(&shown, "[TMP]");
        if cfg!(windows) {
            t = slashes_after_tmp(&t);
        }
    }
    t
}

/// The paths under `[TMP]` with `/` between their parts, as on Linux, so one snapshot
/// serves both systems.
fn slashes_after_tmp(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("[TMP]") {
        out.push_str(&rest[..i + 5]);
        rest = &rest[i + 5..];
        let end = rest
            .find(|c: char| c.is_whitespace() || "\",)|`'".contains(c))
            .unwrap_or(rest.len());
        out.push_str(&rest[..end].replace("\\\\", "/").replace('\\', "/"));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}
