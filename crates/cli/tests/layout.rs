//! `naslab frag`, `naslab alloc` and the layout a run records, end to end. The matrix
//! test needs root and loop devices and says when it is skipped.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::*;

/// `filefrag FILE`'s extent count.
fn filefrag_count(tool: &Path, file: &Path) -> u64 {
    let out = Command::new(tool).arg(file).output().unwrap();
    let t = text(&out.stdout);
    t.trim_end()
        .rsplit(": ")
        .next()
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("cannot parse filefrag's '{t}'"))
}

/// Files, bytes (by stat) and extents (by filefrag) of every regular file under `dir`,
/// links not followed.
fn filefrag_tree(tool: &Path, dir: &Path) -> (u64, u64, u64) {
    let (mut files, mut bytes, mut extents) = (0, 0, 0);
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let m = e.metadata().unwrap();
        if m.is_dir() {
            let (f, b, x) = filefrag_tree(tool, &e.path());
            (files, bytes, extents) = (files + f, bytes + b, extents + x);
        } else if m.is_file() {
            files += 1;
            bytes += m.len();
            extents += filefrag_count(tool, &e.path());
        }
    }
    (files, bytes, extents)
}

/// A file written as two interleaved halves with syncs between, so it has a few extents.
fn some_file(dir: &Path, name: &str) -> PathBuf {
    use std::os::unix::fs::FileExt;
    let p = dir.join(name);
    let f = std::fs::File::create(&p).unwrap();
    let other = std::fs::File::create(dir.join(format!("{name}.other"))).unwrap();
    let chunk = vec![7u8; 256 << 10];
    for i in 0..16u64 {
        f.write_all_at(&chunk, i * (256 << 10)).unwrap();
        f.sync_all().unwrap();
        other.write_all_at(&chunk, i * (256 << 10)).unwrap();
        other.sync_all().unwrap();
    }
    p
}

#[test]
fn frag_prints_each_files_extents_as_filefrag_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let f = some_file(dir.path(), "data.bin");
    let out = run_ok(naslab().arg("frag").arg(&f));
    let table = text(&out.stdout);
    assert!(
        table.contains("extents") && table.contains("data.bin"),
        "{table}"
    );
    let out = run_ok(naslab().arg("frag").arg("--json").arg(&f));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let file = &j["files"][0];
    assert_eq!(file["size_bytes"], 16 * (256 << 10));
    let extents = file["extents"].as_u64().unwrap();
    assert!(extents >= 1);
    assert!(file["score"].as_f64().is_some());
    let Some(tool) = tool_or_skip("filefrag") else {
        return;
    };
    let n = filefrag_count(&tool, &f);
    assert_eq!(extents, n, "filefrag says {n}");
}

#[test]
fn frag_on_a_directory_sums_the_tree_and_lists_the_worst_files() {
    let dir = tempfile::tempdir().unwrap();
    some_file(dir.path(), "a");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    some_file(&dir.path().join("sub"), "b");
    let out = run_ok(naslab().arg("frag").arg(dir.path()).args(["--top", "1"]));
    let t = text(&out.stdout);
    assert!(t.contains("4 files"), "{t}");
    assert!(t.contains("worst files"), "{t}");
    let out = run_ok(
        naslab()
            .arg("frag")
            .arg(dir.path())
            .args(["--top", "2", "--json"]),
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tree = &j["trees"][0];
    assert_eq!(tree["totals"]["files"], 4);
    assert_eq!(tree["worst"].as_array().unwrap().len(), 2);
    // The totals are stat's sizes and filefrag's counts added up.
    let Some(tool) = tool_or_skip("filefrag") else {
        return;
    };
    let (files, bytes, extents) = filefrag_tree(&tool, dir.path());
    let totals = &tree["totals"];
    assert_eq!(files, 4);
    assert_eq!(totals["size_bytes"], bytes, "{totals}");
    assert_eq!(totals["extents"], extents, "{totals}");
}

#[test]
fn frag_refuses_what_it_cannot_map_and_says_why() {
    let err = run_err(naslab().args(["frag", "/nonexistent/naslab-frag"]));
    assert!(err.contains("cannot examine"), "{err}");
    // procfs has no extents to report.
    let err = run_err(naslab().args(["frag", "/proc/self/status"]));
    assert!(err.contains("does not report file extents"), "{err}");
    // A FIFO is refused at once rather than opened (which would wait for a writer).
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid, NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let err = run_err(naslab().arg("frag").arg(&fifo));
    assert!(
        err.contains("neither a regular file nor a directory"),
        "{err}"
    );
}

/// One path that cannot be mapped does not stop the others: they are reported, the
/// failures are named on stderr and in the JSON, and the command fails.
#[test]
fn frag_reports_unmappable_paths_and_still_maps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let good = some_file(dir.path(), "good.bin");
    let missing = dir.path().join("missing.bin");
    let paths = [
        good.as_os_str(),
        "/proc/self/status".as_ref(),
        missing.as_os_str(),
    ];
    let out = naslab().arg("frag").args(paths).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(stdout.contains("good.bin"), "{stdout}");
    assert!(
        stderr.contains("/proc/self/status") && stderr.contains("does not report file extents"),
        "{stderr}"
    );
    assert!(
        stderr.contains("missing.bin") && stderr.contains("cannot examine"),
        "{stderr}"
    );
    assert!(stderr.contains("2 of 3 paths"), "{stderr}");
    let out = naslab()
        .args(["frag", "--json"])
        .args(paths)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["files"].as_array().unwrap().len(), 1);
    assert_eq!(j["files"][0]["size_bytes"], 16 * (256 << 10));
    let failed: Vec<&str> = j["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["/proc/self/status", missing.to_str().unwrap()]);
}

/// The mount table is read once for all the files of a run, not once per file.
#[test]
fn frag_reads_the_mount_table_once() {
    need_tool("strace", "-V");
    let dir = tempfile::tempdir().unwrap();
    for i in 0..50 {
        std::fs::write(dir.path().join(format!("f{i}")), [1u8; 4096]).unwrap();
    }
    let single = dir.path().join("f0");
    let log = dir.path().join("strace.log");
    let out = Command::new("strace")
        .args(["-f", "-e", "trace=open,openat", "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_naslab"))
        .args(["frag", "--no-sync"])
        .arg(dir.path())
        .arg(&single)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = std::fs::read_to_string(&log).unwrap();
    assert_eq!(t.matches("/proc/self/mountinfo").count(), 1, "{t}");
    // Every file was opened: 50 in the tree (by name beneath the directory's descriptor)
    // and the one given alone (by its path).
    let alone = format!("\"{}/f", dir.path().display());
    assert_eq!(t.matches(&alone).count(), 1, "{t}");
    assert_eq!(t.matches(", \"f").count(), 50, "{t}");
}

#[test]
fn alloc_runs_the_patterns_in_a_directory_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_ok(naslab().arg("alloc").arg("--dir").arg(dir.path()).args([
        "--size",
        "2M",
        "--pattern",
        "skip,clear,hints-fix",
    ]));
    let t = text(&out.stdout);
    for p in ["skip", "clear", "hints-fix"] {
        assert!(t.contains(&format!("\n{p} ")), "{t}");
    }
    assert!(!t.contains("\nunbuffered"), "{t}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let out = run_ok(naslab().arg("alloc").arg("--dir").arg(dir.path()).args([
        "--size",
        "1M",
        "--pattern",
        "fallocate+1",
        "--json",
    ]));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &j["runs"][0];
    assert_eq!(run["pattern"], "fallocate+1");
    assert_eq!(run["bytes_written"], 0);
    assert_eq!(run["layout"]["size_bytes"], (1u64 << 20) / 9123 * 9123);
}

/// The calls and bytes `alloc` reports are the writes, fallocates and truncates strace
/// sees it make, and the bytes those writes returned.
#[test]
fn alloc_reports_the_calls_and_bytes_strace_sees() {
    let Some(strace) = tool_or_skip("strace") else {
        return;
    };
    for pattern in ["clear", "fallocate+1", "hints-fix"] {
        let dir = tempfile::tempdir().unwrap();
        let logs = tempfile::tempdir().unwrap();
        let log = logs.path().join("strace.log");
        let out = run_ok(
            Command::new(&strace)
                .args([
                    "-f",
                    "-qq",
                    "-e",
                    "trace=pwrite64,fallocate,ftruncate",
                    "-o",
                ])
                .arg(&log)
                .arg(env!("CARGO_BIN_EXE_naslab"))
                .arg("alloc")
                .arg("--dir")
                .arg(dir.path())
                .args(["--size", "1M", "--pattern", pattern, "--json"]),
        );
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let run = &j["runs"][0];
        let (mut calls, mut bytes) = (0u64, 0u64);
        for line in std::fs::read_to_string(&log).unwrap().lines() {
            let call = line.split_once(' ').map_or(line, |(_, c)| c).trim_start();
            let result: u64 = call
                .rsplit("= ")
                .next()
                .and_then(|r| r.split(' ').next())
                .and_then(|r| r.parse().ok())
                .unwrap_or_else(|| {
                    panic!("{pattern}: a call that failed or cannot be read: {line}")
                });
            calls += 1;
            if call.starts_with("pwrite64(") {
                bytes += result;
            }
        }
        assert!(calls > 0, "{pattern}: strace saw no call");
        assert_eq!(run["calls"], calls, "{pattern}: {run}");
        assert_eq!(run["bytes_written"], bytes, "{pattern}: {run}");
    }
}

#[test]
fn alloc_names_the_flag_at_fault() {
    let err = usage_err(naslab().args(["alloc", "--pattern", "zero"]), "--pattern");
    assert!(err.contains("fallocate+1"), "{err}");
    let err = usage_err(naslab().args(["alloc", "--size", "12Q"]), "--size");
    assert!(err.contains("use k, m, g or t"), "{err}");
    let err = run_err(naslab().args(["alloc", "--size", "100"]));
    assert!(err.contains("--size") && err.contains("block"), "{err}");
    let err = usage_err(naslab().args(["alloc", "--matrix", "--fs", "ntfs"]), "--fs");
    assert!(err.contains("ext4-nodelalloc"), "{err}");
}

#[test]
fn a_run_records_the_layout_of_prepared_and_written_files() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = tempfile::tempdir().unwrap();
    let probe = naslab().arg("frag").arg(target.path()).output().unwrap();
    if text(&probe.stderr).contains("does not report file extents") {
        cannot_run("the build directory's file system does not report extents (FIEMAP)");
        return;
    }
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/document-save.jsonl");
    let res = run_ok(
        naslab()
            .arg("run")
            .arg(&trace)
            .arg("--target")
            .arg(target.path())
            .arg("--out")
            .arg(out.path()),
    );
    let table = text(&res.stdout);
    assert!(table.contains("    layout     prepared"), "{table}");
    let j = json(&only_run_dir(out.path()).join("run.json"));
    let layout = &j["workloads"][0]["iterations"][0]["layout"];
    let prepared = &layout["prepared"];
    assert!(prepared["files"].as_u64().unwrap() >= 1, "{layout}");
    assert!(prepared["extents"].as_u64().unwrap() >= prepared["files"].as_u64().unwrap());
    assert!(layout["written"]["files"].is_u64(), "{layout}");
    // Prepared and written together are the files the workload left, as stat and
    // filefrag see them.
    let Some(tool) = tool_or_skip("filefrag") else {
        return;
    };
    let (files, bytes, extents) = filefrag_tree(&tool, &target.path().join("naslab/DocumentSave"));
    let sum = |k: &str| prepared[k].as_u64().unwrap() + layout["written"][k].as_u64().unwrap();
    assert_eq!(
        (sum("files"), sum("bytes"), sum("extents")),
        (files, bytes, extents),
        "{layout}"
    );
}

#[test]
fn the_matrix_prints_seconds_and_extents_per_file_system_and_leaves_no_loop_device() {
    if !is_root() {
        let dir = tempfile::tempdir().unwrap();
        let out = run_ok(
            naslab()
                .arg("alloc")
                .arg("--matrix")
                .arg("--dir")
                .arg(dir.path())
                .args(["--size", "1M", "--pattern", "skip"]),
        );
        assert!(text(&out.stderr).contains("needs root"));
        cannot_run("the matrix itself needs root for loop devices");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let out = run_ok(
        naslab()
            .args([
                "alloc",
                "--matrix",
                "--fs",
                "ext4,ext4-nodelalloc,ext3",
                "--pattern",
                "skip,clear",
            ])
            .args(["--size", "4M", "--dir"])
            .arg(work.path()),
    );
    let t = text(&out.stdout);
    let header = t.lines().nth(1).unwrap();
    for fs in ["ext4", "ext4-nodelalloc", "ext3"] {
        assert!(header.contains(fs), "{t}");
    }
    assert!(t.contains("\nskip ") && t.contains("\nclear "), "{t}");
    assert!(t.contains("no delayed allocation"), "{t}");
    // Every image, mount point and loop device is gone.
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
    let loops = Command::new("losetup").arg("-a").output().unwrap();
    let listed = text(&loops.stdout);
    assert!(
        !listed.contains(&work.path().display().to_string()),
        "{listed}"
    );
}
