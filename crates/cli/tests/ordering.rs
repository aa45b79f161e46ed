//! Traces of several streams replayed as fast as possible keep the order their streams
//! had on shared names (`naslab run`'s ordering), and `--no-ordering` gives it up.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;

use common::*;

/// A trace written by hand: stream 0 stats a file of its own 2,000 times, makes `d/f`
/// and writes it, then stats again; stream 1, 5 µs after the create as recorded, opens
/// `d/f` and reads it.
fn handoff_trace() -> String {
    let mut t = String::new();
    t.push_str(r#"{"type":"header","format":"naslab-trace","version":1,"workload":"handoff"}"#);
    t.push('\n');
    t.push_str(
        r#"{"type":"file","id":1,"path":"busy","size":4096,"exists":true}
{"type":"file","id":2,"path":"d","kind":"dir","exists":false}
{"type":"file","id":3,"path":"d/f","exists":false}
"#,
    );
    let op = |t: &mut String, stream: u32, t_us: u64, op: &str, file: u32, more: &str| {
        let _ = writeln!(
            t,
            r#"{{"type":"op","op":"{op}","stream":{stream},"t_us":{t_us},"file":{file}{more}}}"#
        );
    };
    for i in 0..2000 {
        op(&mut t, 0, i, "stat", 1, "");
    }
    op(&mut t, 0, 2000, "mkdir", 2, "");
    op(&mut t, 0, 2001, "create", 3, "");
    op(&mut t, 0, 2002, "write", 3, r#","offset":0,"len":4096"#);
    op(&mut t, 0, 2003, "close", 3, "");
    for i in 0..2000 {
        op(&mut t, 0, 2010 + i, "stat", 1, "");
    }
    op(&mut t, 1, 2006, "open", 3, r#","flags":"read""#);
    op(&mut t, 1, 2007, "read", 3, r#","offset":0,"len":4096"#);
    op(&mut t, 1, 2008, "close", 3, "");
    t
}

/// Runs `trace` `batch` times at `--pace afap` on a fresh directory; the command's
/// output and each iteration's errors and ordering.
fn replay(
    d: &Path,
    trace: &Path,
    batch: u32,
    extra: &[&str],
) -> (Output, Vec<(u64, serde_json::Value)>) {
    let target = tempfile::tempdir().unwrap();
    let out = d.join(format!("out-{}", extra.join("")));
    let res = naslab()
        .arg("run")
        .arg(trace)
        .arg("-t")
        .arg(target.path())
        .args([
            "--pace",
            "afap",
            "--cache",
            "keep",
            "--no-records",
            "--batch",
        ])
        .arg(batch.to_string())
        .args(extra)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let run = json(&only_run_dir(&out).join("run.json"));
    let its = run["workloads"][0]["iterations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|it| (it["errors"].as_u64().unwrap(), it["ordering"].clone()))
        .collect();
    (res, its)
}

/// Prints what each iteration met (for the record) and returns the errors.
fn errors_of(what: &str, its: &[(u64, serde_json::Value)]) -> Vec<u64> {
    for (i, (errors, o)) in its.iter().enumerate() {
        println!("{what} run {}: {errors} errors, ordering {o}", i + 1);
    }
    its.iter().map(|(e, _)| *e).collect()
}

#[test]
fn a_file_made_in_one_stream_and_used_in_another_replays_in_order() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("handoff.jsonl");
    std::fs::write(&trace, handoff_trace()).unwrap();
    let (res, its) = replay(d.path(), &trace, 20, &[]);
    assert!(res.status.success(), "{}", text(&res.stderr));
    assert_eq!(its.len(), 20);
    assert_eq!(errors_of("ordered", &its), vec![0; 20]);
    for (_, o) in &its {
        assert_eq!(o["edges"], 1, "{o}");
        assert_eq!(o["name_edges"], 1, "{o}");
        assert_eq!(o["enforced"], true, "{o}");
        // Stream 1 waits at most once (not at all when its thread came late enough).
        let waits = o["waits"].as_u64().unwrap();
        assert!(waits <= 1, "{o}");
        assert_eq!(waits == 0, o["wait_total_ns"] == 0, "{o}");
    }
    let table = text(&res.stdout);
    assert!(
        table.contains("ordering   1 edges between streams (1 name, 0 fsync, 0 sequence)"),
        "{table}"
    );

    // As before ordering: stream 1's open fails, and its read and close with it.
    let (res, its) = replay(d.path(), &trace, 1, &["--no-ordering"]);
    assert_eq!(res.status.code(), Some(3), "failed ops exit 3");
    assert_eq!(errors_of("unordered", &its), vec![3]);
    assert_eq!(its[0].1["enforced"], false);
    assert_eq!(its[0].1["waits"], 0);
    assert!(text(&res.stdout).contains("not kept (--no-ordering)"));
}

#[test]
fn dbench_with_four_clients_replays_without_errors() {
    let Some(_) = tool_or_skip("dbench") else {
        return;
    };
    let loadfile = Path::new("/usr/share/dbench/client.txt");
    let full = std::fs::read_to_string(loadfile)
        .unwrap_or_else(|e| panic!("dbench's loadfile {}: {e}", loadfile.display()));
    // Its first 2,000 lines: the clients' directories made and removed, files
    // created, written, renamed and deleted in them.
    let head: String = full.lines().take(2000).flat_map(|l| [l, "\n"]).collect();
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("client.txt");
    std::fs::write(&input, head).unwrap();
    let trace = d.path().join("dbench4.jsonl");
    run_ok(
        naslab()
            .args(["import", "dbench", "--clients", "4"])
            .arg(&input)
            .arg("-o")
            .arg(&trace),
    );
    let (res, its) = replay(d.path(), &trace, 20, &[]);
    assert!(res.status.success(), "{}", text(&res.stderr));
    assert_eq!(errors_of("dbench --clients 4", &its), vec![0; 20]);
    let edges = its[0].1["name_edges"].as_u64().unwrap();
    assert!(edges > 0, "the clients share \\clients: {}", its[0].1);
}

#[test]
fn a_captured_tar_czf_replays_without_errors() {
    need_tool("strace", "-V");
    need_tool("tar", "--version");
    need_tool("gzip", "--version");
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    for (i, dir) in ["src", "src/sub"].iter().enumerate() {
        std::fs::create_dir_all(root.join(dir)).unwrap();
        for f in 0..8u64 {
            let body: Vec<u8> = (0..(f + 1) * 7000 + i as u64)
                .map(|b| ((b * 2_654_435_761) >> 13) as u8)
                .collect();
            std::fs::write(root.join(dir).join(format!("f{f}")), body).unwrap();
        }
    }
    let trace = d.path().join("tar.jsonl");
    run_ok(
        naslab()
            .current_dir(&root)
            .arg("capture")
            .arg("--root")
            .arg(&root)
            .arg("-o")
            .arg(&trace)
            .args(["--", "tar", "czf", "out.tgz", "src"]),
    );
    let (res, its) = replay(d.path(), &trace, 20, &[]);
    assert!(res.status.success(), "{}", text(&res.stderr));
    assert_eq!(errors_of("tar czf", &its), vec![0; 20]);
    // gzip writes the archive tar's side made: it starts after that stream ended.
    assert!(its[0].1["edges"].as_u64().unwrap() >= 1, "{}", its[0].1);
}

/// Captures `script` (run by sh in `root`) into a trace.
fn capture_sh(root: &Path, trace: &Path, script: &str) {
    need_tool("strace", "-V");
    run_ok(
        naslab()
            .current_dir(root)
            .arg("capture")
            .arg("--root")
            .arg(root)
            .arg("-o")
            .arg(trace)
            .args(["--", "sh", "-c", script]),
    );
}

#[test]
fn a_captured_hard_link_and_copy_replays_without_errors() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a"), vec![5u8; 1234]).unwrap();
    let trace = d.path().join("ln.jsonl");
    capture_sh(&root, &trace, "ln a b && cat b > c");
    let (res, its) = replay(d.path(), &trace, 20, &[]);
    assert!(res.status.success(), "{}", text(&res.stderr));
    assert_eq!(errors_of("ln a b && cat b > c", &its), vec![0; 20]);
    assert!(its[0].1["edges"].as_u64().unwrap() >= 1, "{}", its[0].1);
}

#[test]
fn a_captured_git_init_add_commit_replays_without_errors() {
    need_tool("git", "--version");
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("repo");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("README"), "hello\n").unwrap();
    for i in 0..12 {
        std::fs::write(root.join(format!("src/f{i}.c")), format!("int f{i};\n")).unwrap();
    }
    let trace = d.path().join("git.jsonl");
    capture_sh(
        &root,
        &trace,
        "git init -q && git add . && git -c user.name=n -c user.email=n@example.org commit -qm first",
    );
    let (res, its) = replay(d.path(), &trace, 20, &[]);
    assert!(res.status.success(), "{}", text(&res.stderr));
    assert_eq!(errors_of("git init/add/commit", &its), vec![0; 20]);
    // Its processes ran one after another: each starts after the one before it ended.
    let o = &its[0].1;
    assert!(o["sequence_edges"].as_u64().unwrap() >= 2, "{o}");

    // As before ordering, the same trace fails.
    let (_, its) = replay(d.path(), &trace, 1, &["--no-ordering", "--tolerate-errors"]);
    let errors = errors_of("git init/add/commit, --no-ordering", &its);
    assert!(errors[0] > 0, "{errors:?}");
}
