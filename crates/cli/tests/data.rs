//! `--data` and `--verify` through the binary: what run.json, results.txt and
//! report.html say, the exit status when a block comes back wrong, and bad input.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;
use common::*;

#[test]
fn the_data_mode_and_verification_are_recorded_and_shown() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let res = run_ok(
        naslab()
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .args(["--data", "compress:30", "--verify", "--target"])
            .arg(target.path())
            .arg("--out")
            .arg(out.path()),
    );
    let table = text(&res.stdout);
    assert!(
        table.contains("    verify     ") && table.contains("every block as written"),
        "{table}"
    );
    let dir = only_run_dir(out.path());
    let run = json(&dir.join("run.json"));
    assert_eq!(run["options"]["data"], "compress:30");
    assert_eq!(run["options"]["verify"], true);
    let v = &run["workloads"][0]["iterations"][0]["verify"];
    assert_eq!(v["lost_writes"], 0);
    assert_eq!(v["corrupt"], 0);
    // The trace's six reads, then the three files it leaves, read back.
    assert_eq!(v["reads_checked"], 6 + 3, "{v}");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<h2>Data verification</h2>"));
}

#[test]
fn a_block_damaged_during_the_run_fails_it_and_is_listed() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("gap.jsonl");
    let lines = [
        r#"{"type":"header","format":"naslab-trace","version":1,"workload":"Gap"}"#,
        r#"{"type":"file","id":1,"path":"b.bin","exists":false}"#,
        r#"{"type":"op","op":"create","stream":0,"t_us":0,"file":1,"flags":"write"}"#,
        r#"{"type":"op","op":"write","stream":0,"t_us":0,"file":1,"offset":0,"len":8192}"#,
        r#"{"type":"op","op":"close","stream":0,"t_us":0,"file":1}"#,
        r#"{"type":"op","op":"open","stream":0,"t_us":2000000,"file":1,"flags":"read"}"#,
        r#"{"type":"op","op":"read","stream":0,"t_us":2000000,"file":1,"offset":0,"len":8192}"#,
        r#"{"type":"op","op":"close","stream":0,"t_us":2000000,"file":1}"#,
    ];
    std::fs::write(&trace, lines.join("\n") + "\n").unwrap();
    let target = dir.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let out = dir.path().join("out");
    let child = naslab()
        .arg("run")
        .arg(&trace)
        .args(["--verify", "--pace", "original", "--target"])
        .arg(&target)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let b = target.join("naslab/Gap/b.bin");
    let start = Instant::now();
    while std::fs::metadata(&b).map(|m| m.len()).unwrap_or(0) < 8192 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "b.bin never written"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    // Block 1 overwritten with noise behind naslab's back.
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(&b).unwrap();
    f.write_all_at(&noise, 4096).unwrap();
    drop(f);
    let res = child.wait_with_output().unwrap();
    assert!(!res.status.success(), "a mismatch must fail the run");
    let err = text(&res.stderr);
    assert!(
        err.contains("--verify found 2 blocks that did not hold what was written (2 corrupt)"),
        "{err}"
    );
    let table = text(&res.stdout);
    assert!(table.contains("2 MISMATCHED blocks (2 corrupt)"), "{table}");
    let run = json(&only_run_dir(&out).join("run.json"));
    let m = &run["workloads"][0]["iterations"][0]["verify"]["mismatches"][0];
    assert_eq!(m["file"], "b.bin");
    assert_eq!(m["offset"], 4096);
    assert_eq!(m["kind"], "corrupt");
    assert_eq!(m["during"], "read");
    let html = std::fs::read_to_string(only_run_dir(&out).join("report.html")).unwrap();
    assert!(html.contains("<td>corrupt</td><td>b.bin</td><td>4096</td>"));
}

#[test]
fn bad_data_options_are_refused_with_what_to_do() {
    let target = tempfile::tempdir().unwrap();
    let trace = repo_root().join("examples/document-save.jsonl");
    let err = usage_err(
        naslab()
            .arg("run")
            .arg(&trace)
            .args(["--data", "ones", "--target"])
            .arg(target.path()),
        "--data",
    );
    assert!(
        err.contains("use random, zero, compress:PCT or dedupe:PCT"),
        "{err}"
    );
    let err = usage_err(
        naslab()
            .arg("run")
            .arg(&trace)
            .args(["--data", "compress:120", "--target"])
            .arg(target.path()),
        "--data",
    );
    assert!(err.contains("from 0 to 100"), "{err}");
    let err = run_err(
        naslab()
            .arg("run")
            .arg(&trace)
            .args(["--data", "zero", "--verify", "--target"])
            .arg(target.path()),
    );
    assert!(
        err.contains("use it with --data random or compress:PCT"),
        "{err}"
    );
}

/// Sizes of the regular files under `dir`, read through the file system itself.
fn file_sizes(dir: &Path) -> Vec<u64> {
    let mut sizes = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let ft = e.file_type().unwrap();
        if ft.is_dir() {
            sizes.extend(file_sizes(&e.path()));
        } else if ft.is_file() {
            sizes.push(e.metadata().unwrap().len());
        }
    }
    sizes
}

#[test]
fn verify_counts_match_the_trace_and_the_files_left_on_disk() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let trace = repo_root().join("examples/document-save.jsonl");
    let res = run_ok(
        naslab()
            .arg("run")
            .arg(&trace)
            .args(["--verify", "--target"])
            .arg(target.path())
            .arg("--out")
            .arg(out.path()),
    );
    // The trace's reads, summed from its lines.
    let (mut trace_reads, mut trace_read_bytes) = (0u64, 0u64);
    for line in std::fs::read_to_string(&trace).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["type"] == "op" && v["op"] == "read" {
            trace_reads += 1;
            trace_read_bytes += v["len"].as_u64().unwrap();
        }
    }
    // What the workload left, as stat sees it; the read-back reads it in 1 MiB reads.
    let left = file_sizes(&target.path().join("naslab/DocumentSave"));
    let left_bytes: u64 = left.iter().sum();
    let back_reads: u64 = left.iter().map(|s| s.div_ceil(1 << 20)).sum();
    assert!(left_bytes > 0 && trace_reads > 0);

    let run = json(&only_run_dir(out.path()).join("run.json"));
    let v = &run["workloads"][0]["iterations"][0]["verify"];
    assert_eq!(v["read_back_bytes"], left_bytes, "{v}");
    assert_eq!(v["bytes_checked"], trace_read_bytes + left_bytes, "{v}");
    assert_eq!(v["reads_checked"], trace_reads + back_reads, "{v}");
    let table = text(&res.stdout);
    let line = format!(
        "{} reads checked ({:.2} MB, {:.2} MB read back)",
        trace_reads + back_reads,
        (trace_read_bytes + left_bytes) as f64 / 1e6,
        left_bytes as f64 / 1e6
    );
    assert!(table.contains(&line), "{line} not in\n{table}");
}
