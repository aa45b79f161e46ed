//! The `naslab` binary end to end: runs, run directories, and every bad input the user
//! can give it.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::*;

#[test]
fn the_example_trace_runs_and_leaves_a_complete_run_directory() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let res = run_ok(
        naslab()
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .arg("--target")
            .arg(target.path())
            .arg("--out")
            .arg(out.path()),
    );
    let table = text(&res.stdout);
    assert!(table.contains("DocumentSave"), "{table}");
    for op in ["read", "write", "rename", "readdir", "fsync"] {
        assert!(
            table.contains(&format!("    {op} ")),
            "{op} missing from\n{table}"
        );
    }
    // Progress is for terminals only: nothing of it in a pipe.
    let err = text(&res.stderr);
    assert!(!err.contains('\r') && !err.contains("measure"), "{err}");
    let dir = only_run_dir(out.path());
    let run = json(&dir.join("run.json"));
    assert_eq!(run["schema_version"], 2);
    assert_eq!(run["target"]["backend"], "posix");
    assert!(!run["target"]["fs_type"].as_str().unwrap().is_empty());
    assert!(!run["environment"]["kernel"].as_str().unwrap().is_empty());
    let it = &run["workloads"][0]["iterations"][0];
    assert_eq!(
        it["bytes_read"],
        2 * 1048576 + 65536 + 4096 + 978944 - 1048576 + 524288
    );
    assert_eq!(it["bytes_written"], 2 * 1048576 + 512);
    assert_eq!(it["ops"], 25);
    assert_eq!(it["op_stats"]["read"]["count"], 6);
    assert_eq!(it["prepare"]["files"], 2);
    let csv = std::fs::read_to_string(dir.join("naspt.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "Test Name,Throughput(MB/s),ReadSize(B),WriteSize(B),AveReadTime(usecs),AveWriteTime(usecs),AveOpenTime(usecs),MaxReadTime(usecs),MaxWriteTime(usecs),MaxOpenTime(usecs)"
    );
    assert!(lines.next().unwrap().starts_with("DocumentSave,"));
    assert!(dir.join("DocumentSave.ops.nbt.zst").is_file());
    assert!(dir.join("results.txt").is_file());
    // The records replay as a trace of their own.
    let target2 = tempfile::tempdir().unwrap();
    run_ok(
        naslab()
            .arg("run")
            .arg(dir.join("DocumentSave.ops.nbt.zst"))
            .arg("--target")
            .arg(target2.path())
            .arg("--out")
            .arg(out.path().join("again")),
    );
}

#[test]
fn a_runs_binary_records_export_to_json_lines_and_back_without_loss() {
    let out = tempfile::tempdir().unwrap();
    let dir = example_run(out.path(), "records");
    let records = dir.join("DocumentSave.ops.nbt.zst");
    let raw = std::fs::read(&records).unwrap();
    assert!(zstd_plain(&raw).starts_with(b"\0naslab-trace binary 1\n"));
    // To standard output: JSON Lines, every op with its measurements.
    let json_lines = text(&run_ok(naslab().arg("records").arg(&records)).stdout);
    let run = json(&dir.join("run.json"));
    let ops = run["workloads"][0]["iterations"][0]["ops"]
        .as_u64()
        .unwrap();
    let measured = json_lines
        .lines()
        .filter(|l| l.starts_with(r#"{"type":"op""#) && l.contains(r#""done_ns":"#))
        .count();
    assert_eq!(measured as u64, ops);
    // JSON Lines to binary and back give the same text.
    let work = tempfile::tempdir().unwrap();
    let jsonl = work.path().join("r.jsonl");
    let nbt = work.path().join("r.nbt");
    run_ok(naslab().arg("records").arg(&records).arg("-o").arg(&jsonl));
    assert_eq!(std::fs::read_to_string(&jsonl).unwrap(), json_lines);
    run_ok(naslab().arg("records").arg(&jsonl).arg("-o").arg(&nbt));
    assert_eq!(
        text(&run_ok(naslab().arg("records").arg(&nbt)).stdout),
        json_lines
    );
    // Never over the file being read.
    let res = naslab()
        .arg("records")
        .arg(&nbt)
        .arg("-o")
        .arg(&nbt)
        .output()
        .unwrap();
    assert!(!res.status.success());
    assert!(text(&res.stderr).contains("is the file being read"));
    assert_eq!(
        text(&run_ok(naslab().arg("records").arg(&nbt)).stdout),
        json_lines
    );
}

/// A JSON Lines trace of `n` measured ops by three clients, in the form naslab writes.
fn many_measured_ops(n: usize) -> String {
    let mut t = String::from(concat!(
        r#"{"type":"header","format":"naslab-trace","version":1,"workload":"Many"}"#,
        "\n",
        r#"{"type":"file","id":0,"path":"a","kind":"file","size":1048576,"exists":true}"#,
        "\n",
    ));
    for i in 0..n {
        t.push_str(&format!(
            "{{\"type\":\"op\",\"op\":\"read\",\"stream\":{},\"t_us\":{i},\"file\":0,\"offset\":{},\"len\":4096,\"sched_ns\":{i},\"issued_ns\":{},\"done_ns\":{},\"result\":4096,\"client\":{}}}\n",
            i % 2,
            (i % 256) * 4096,
            i + 3,
            i + 9,
            i % 3
        ));
    }
    t
}

#[test]
fn a_long_json_lines_trace_converts_without_loss_and_its_errors_keep_their_line() {
    // Long enough to be parsed in blocks on several threads.
    let work = tempfile::tempdir().unwrap();
    let n = 60_000;
    let jsonl = write_file(work.path(), "many.jsonl", &many_measured_ops(n));
    let canonical = text(&run_ok(naslab().arg("records").arg(&jsonl)).stdout);
    let ops = canonical
        .lines()
        .filter(|l| l.contains(r#""done_ns":"#))
        .count();
    assert_eq!(ops, n);
    assert_eq!(
        canonical
            .lines()
            .filter(|l| l.ends_with(r#""client":2}"#))
            .count(),
        n / 3
    );
    let nbt = work.path().join("many.nbt");
    run_ok(naslab().arg("records").arg(&jsonl).arg("-o").arg(&nbt));
    assert_eq!(
        text(&run_ok(naslab().arg("records").arg(&nbt)).stdout),
        canonical
    );
    // A bad line far in: the error names it, as the reader on its own would.
    let mut lines: Vec<&str> = canonical.lines().collect();
    lines[50_000] = r#"{"type":"op","op":"read","file":7}"#;
    let bad = write_file(work.path(), "bad.jsonl", &(lines.join("\n") + "\n"));
    let res = naslab().arg("records").arg(&bad).output().unwrap();
    assert!(!res.status.success());
    let err = text(&res.stderr);
    assert!(err.contains("bad.jsonl:50001: "), "{err}");
    assert!(err.contains("refers to file 7"), "{err}");
}

#[test]
fn a_runs_binary_records_decode_by_the_layout_the_docs_give() {
    need_tool("python3", "--version");
    let out = tempfile::tempdir().unwrap();
    // Paced, so an op's scheduled and issued times differ.
    let dir = example_run_with(out.path(), "layout", &["--pace", "original"]);
    let records = dir.join("DocumentSave.ops.nbt.zst");
    let plain = zstd_plain(&std::fs::read(&records).unwrap());
    // A decoder written from docs/trace-format.md alone, in another language.
    let mut child = Command::new("python3")
        .arg(repo_root().join("crates/cli/tests/tools/nbt_decode.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&plain).unwrap();
    let decoded = child.wait_with_output().unwrap();
    assert!(decoded.status.success(), "{}", text(&decoded.stderr));
    let theirs: Vec<serde_json::Value> = text(&decoded.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // naslab's own JSON Lines, with the fields it leaves out at 0 spelled out.
    let ours: Vec<serde_json::Value> = text(&run_ok(naslab().arg("records").arg(&records)).stdout)
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if v["type"] == "op" {
                for key in ["stream", "offset", "len"] {
                    if v.get(key).is_none() {
                        v[key] = 0.into();
                    }
                }
            }
            v
        })
        .collect();
    assert!(
        ours.iter()
            .any(|v| v.get("to").is_some() && v.get("done_ns").is_some())
    );
    assert!(ours.iter().any(|v| v.get("flags").is_some()));
    assert!(ours.iter().any(|v| v["sched_ns"] != v["issued_ns"]));
    assert_eq!(theirs, ours);
}

fn zstd_plain(raw: &[u8]) -> Vec<u8> {
    zstd::decode_all(raw).unwrap()
}

fn write_file(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    p
}

const HEAD: &str = r#"{"type":"header","format":"naslab-trace","version":1,"workload":"w"}"#;

#[test]
fn bad_traces_give_one_clear_error_with_file_and_line() {
    let d = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let out = d.path().join("out");
    let cases = [
        (
            format!(
                "{HEAD}\n{{\"type\":\"file\",\"id\":1,\"path\":\"a\",\"exists\":true}}\n{{\"type\":\"op\",\"op\":\"stat\",\"file\":2}}\n"
            ),
            ":3: the stat op refers to file 2, which no file line declares",
        ),
        (format!("{HEAD}\n{{oops\n"), ":2: not a valid trace line"),
        (
            r#"{"type":"header","format":"naslab-trace","version":9,"workload":"w"}"#.to_string(),
            ":1: naslab-trace version 9 is not supported",
        ),
        ("\u{0}\u{1}binary".to_string(), ":1:"),
    ];
    for (i, (body, needle)) in cases.iter().enumerate() {
        let trace = write_file(d.path(), &format!("t{i}.jsonl"), body);
        let err = run_err(
            naslab()
                .arg("run")
                .arg(&trace)
                .arg("-t")
                .arg(target.path())
                .arg("--out")
                .arg(&out),
        );
        assert!(err.contains(&format!("t{i}.jsonl{needle}")), "{err}");
        assert_eq!(err.lines().count(), 1, "one error line: {err}");
    }
    // No empty run directories are left behind by runs that never started.
    let leftover: Vec<_> = std::fs::read_dir(out.join("run"))
        .map(|r| r.count())
        .into_iter()
        .collect();
    assert_eq!(leftover.iter().sum::<usize>(), 0);
    let err = run_err(
        naslab()
            .arg("run")
            .arg(d.path().join("nope.jsonl"))
            .arg("-t")
            .arg(target.path())
            .arg("--out")
            .arg(&out),
    );
    assert!(
        err.contains("nope.jsonl") && err.contains("check the path"),
        "{err}"
    );
}

#[test]
fn bad_targets_and_options_are_refused_clearly() {
    let d = tempfile::tempdir().unwrap();
    let trace = repo_root().join("examples/document-save.jsonl");
    let out = d.path().join("out");
    let err = run_err(
        naslab()
            .arg("run")
            .arg(&trace)
            .arg("-t")
            .arg(d.path().join("missing"))
            .arg("--out")
            .arg(&out),
    );
    assert!(err.contains("does not exist"), "{err}");
    let err = run_err(naslab().arg("run").arg(&trace).arg("--out").arg(&out));
    assert!(err.contains("--target DIR is needed"), "{err}");
    // NFSv4.1 keeps its requests on one connection: a retransmit timeout is refused
    // before anything is sent (port 1 on loopback: nothing listens there).
    let err = run_err(
        naslab()
            .arg("run")
            .arg(&trace)
            .args([
                "-t",
                "nfs://127.0.0.1:1/x?vers=4.1",
                "--retrans-timeout",
                "1s",
            ])
            .arg("--out")
            .arg(&out),
    );
    assert!(
        err.contains("--retrans-timeout is for NFSv3 and SMB"),
        "{err}"
    );
    // Values the argument parser refuses, each with the reason it gives.
    for (flag, value, why) in [
        ("--pace", "delay:5", "no unit"),
        ("--time-limit", "0s", "more than zero"),
        ("--io-timeout", "500us", "at least 1ms"),
        ("--client-profile", "mac", "plain and windows"),
        ("--scale", "NaN", "above 0 and at most 4"),
        ("--scale", "0", "above 0 and at most 4"),
        ("--scale", "5", "above 0 and at most 4"),
        ("--scale", "half", "not a number"),
    ] {
        let err = usage_err(
            naslab()
                .arg("run")
                .arg(&trace)
                .arg("-t")
                .arg(d.path())
                .args([flag, value]),
            flag,
        );
        assert!(err.contains(why), "{flag} {value}: {err}");
    }
    std::fs::create_dir(d.path().join("naslab")).unwrap();
    let err = run_err(
        naslab()
            .arg("run")
            .arg(&trace)
            .arg("-t")
            .arg(d.path())
            .arg("--out")
            .arg(&out),
    );
    assert!(err.contains("was not made by naslab"), "{err}");
}

#[test]
fn the_null_backend_needs_no_target() {
    let out = tempfile::tempdir().unwrap();
    let res = run_ok(
        naslab()
            .args(["run", "--backend", "null", "--json", "--out"])
            .arg(out.path())
            .arg(repo_root().join("examples/document-save.jsonl")),
    );
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    assert_eq!(run["target"]["backend"], "null");
    assert_eq!(run["workloads"][0]["iterations"][0]["ops"], 25);
}

/// Mounts a tmpfs with `opts` for the closure, unmounting it afterwards whatever happens.
fn with_tmpfs(opts: &str, f: impl FnOnce(&Path)) {
    let d = tempfile::tempdir().unwrap();
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", opts, "naslab-test"])
        .arg(d.path())
        .status()
        .unwrap()
        .success();
    assert!(ok, "mount tmpfs -o {opts} failed");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(d.path().to_path_buf());
    f(d.path());
}

fn write_trace(path: &Path, ops: impl FnOnce(&mut std::io::BufWriter<std::fs::File>)) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    ops(&mut w);
    w.flush().unwrap();
}

#[test]
fn a_full_disk_stops_the_run_with_the_line_and_keeps_the_results() {
    if !root_or_skip("mounting a small tmpfs") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("fill.jsonl");
    write_trace(&trace, |w| {
        writeln!(
            w,
            r#"{{"type":"header","format":"naslab-trace","version":1,"workload":"Fill"}}"#
        )
        .unwrap();
        writeln!(w, r#"{{"type":"file","id":1,"path":"big","exists":false}}"#).unwrap();
        writeln!(w, r#"{{"type":"op","op":"create","file":1}}"#).unwrap();
        for i in 0..64 {
            writeln!(
                w,
                r#"{{"type":"op","op":"write","file":1,"offset":{},"len":65536}}"#,
                i * 65536
            )
            .unwrap();
        }
        writeln!(w, r#"{{"type":"op","op":"close","file":1}}"#).unwrap();
    });
    with_tmpfs("size=1m", |mnt| {
        let out = d.path().join("out");
        let err = run_err(
            naslab()
                .arg("run")
                .arg(&trace)
                .arg("-t")
                .arg(mnt)
                .arg("--out")
                .arg(&out),
        );
        assert!(
            err.contains("fill.jsonl:") && err.contains("ENOSPC") && err.contains("free space"),
            "{err}"
        );
        assert!(err.contains("results measured so far"), "{err}");
        let run = json(&only_run_dir(&out).join("run.json"));
        assert!(run["aborted"].as_str().unwrap().contains("ENOSPC"));
        let writes = &run["workloads"][0]["iterations"][0]["op_stats"]["write"];
        assert!(writes["count"].as_u64().unwrap() >= 10, "{writes}");
        assert_eq!(writes["errors"], 1);
    });
}

/// The op counts of each kind in a results table printed on the terminal.
fn table_op_counts(table: &str) -> Vec<(String, u64)> {
    table
        .lines()
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let (kind, n, unit) = (words.next()?, words.next()?, words.next()?);
            if unit != "ops" {
                return None;
            }
            Some((kind.to_string(), n.parse().ok()?))
        })
        .collect()
}

#[test]
fn a_full_out_during_the_measured_phase_keeps_the_figures_and_says_what_was_lost() {
    if !root_or_skip("mounting a small tmpfs") {
        return;
    }
    // 65,538 ops: their compiled spool (48 bytes each, 3.1 MB) fits in the 4 MiB --out
    // before the phase; the measurements (32 bytes each, 2.1 MB more) fill it during it.
    let args = [
        "run",
        "--workload",
        "IOMeter_4K_RandRead_QD1",
        "--scale",
        "0.25",
        "--seed",
        "7",
        "--backend",
        "null",
    ];
    let roomy = tempfile::tempdir().unwrap();
    let res = run_ok(naslab().args(args).arg("--out").arg(roomy.path()));
    let want = table_op_counts(&text(&res.stdout));
    assert_eq!(
        want,
        [
            ("close".to_string(), 1),
            ("open".to_string(), 1),
            ("read".to_string(), 65536)
        ],
        "{}",
        text(&res.stdout)
    );
    let roomy_run = json(&only_run_dir(roomy.path()).join("run.json"));
    let roomy_it = &roomy_run["workloads"][0]["iterations"][0];
    with_tmpfs("size=4m", |mnt| {
        let res = naslab().args(args).arg("--out").arg(mnt).output().unwrap();
        let (stdout, stderr) = (text(&res.stdout), text(&res.stderr));
        assert_eq!(res.status.code(), Some(1), "{stdout}\n{stderr}");
        // The table is printed, with the counts of the run that had room.
        assert_eq!(table_op_counts(&stdout), want, "{stdout}\n{stderr}");
        assert!(stdout.contains(" 65538 "), "{stdout}");
        // What could not be saved is named, and why.
        assert!(
            stderr.contains("cannot write op records to")
                && stderr.contains("IOMeter_4K_RandRead_QD1.ops.nbt.zst")
                && stderr.contains("cannot keep op measurements")
                && stderr.contains("No space left on device"),
            "{stderr}"
        );
        assert!(stderr.contains("the figures measured are kept"), "{stderr}");
        // The measured phase ran to its end: the kept run.json holds its figures, the
        // same as the roomy run's, and says why the run stopped.
        let run = json(&only_run_dir(mnt).join("run.json"));
        let it = &run["workloads"][0]["iterations"][0];
        assert_eq!(it["ops"], roomy_it["ops"], "{it}");
        for kind in ["open", "read", "close"] {
            assert_eq!(
                it["op_stats"][kind]["count"], roomy_it["op_stats"][kind]["count"],
                "{kind}: {it}"
            );
        }
        assert_eq!(it["op_stats"]["read"]["bytes"], 65536 * 4096);
        assert!(
            run["aborted"]
                .as_str()
                .is_some_and(|a| a.contains("No space left on device")),
            "{run}"
        );
    });
}

#[test]
fn a_read_only_target_is_named_as_such() {
    if !root_or_skip("mounting a read-only tmpfs") {
        return;
    }
    with_tmpfs("ro,size=1m", |mnt| {
        let out = tempfile::tempdir().unwrap();
        let err = run_err(
            naslab()
                .arg("run")
                .arg(repo_root().join("examples/document-save.jsonl"))
                .arg("-t")
                .arg(mnt)
                .arg("--out")
                .arg(out.path()),
        );
        assert!(
            err.contains("read-only") && err.contains("remount"),
            "{err}"
        );
    });
}

/// naslab's op and byte counts for a run of 100,000 random 4 KiB reads equal what
/// strace sees the process do.
#[test]
fn op_counts_and_bytes_match_strace() {
    need_tool("strace", "-V");
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("rr.jsonl");
    let size: u64 = 16 << 20;
    write_trace(&trace, |w| {
        writeln!(
            w,
            r#"{{"type":"header","format":"naslab-trace","version":1,"workload":"RandRead"}}"#
        )
        .unwrap();
        writeln!(
            w,
            r#"{{"type":"file","id":1,"path":"data","size":{size},"exists":true}}"#
        )
        .unwrap();
        writeln!(w, r#"{{"type":"op","op":"open","file":1,"flags":"read"}}"#).unwrap();
        let mut x: u64 = 88172645463325252;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // A few reads run past the end of the file: short reads count what they got.
            let off = (x % (size / 4096 + 8)) * 4096;
            writeln!(
                w,
                r#"{{"type":"op","op":"read","file":1,"offset":{off},"len":4096}}"#
            )
            .unwrap();
        }
        writeln!(w, r#"{{"type":"op","op":"close","file":1}}"#).unwrap();
    });
    let target = d.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let log = d.path().join("strace.log");
    let out = d.path().join("out");
    run_ok(
        Command::new("strace")
            .args(["-f", "-qq", "-y", "-e", "trace=pread64", "-o"])
            .arg(&log)
            .arg(env!("CARGO_BIN_EXE_naslab"))
            .arg("run")
            .arg(&trace)
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(&out),
    );
    // Count the pread64 calls on the workload's data file (strace -y names each fd's
    // path; the dynamic loader's own pread64 calls on libraries are not naslab's ops).
    // With -f a call may be split into "<unfinished ...>" and "<... resumed>" lines.
    let (mut calls, mut bytes) = (0u64, 0u64);
    let mut pending = std::collections::HashSet::new();
    let data = "/naslab/RandRead/data>";
    let ret_of = |line: &str| -> u64 {
        let (_, ret) = line
            .rsplit_once(" = ")
            .expect("a finished call has a result");
        ret.trim().parse().expect("pread64 returned a count")
    };
    for line in std::fs::read_to_string(&log).unwrap().lines() {
        let pid = line.split_whitespace().next().unwrap_or("").to_string();
        if line.contains("pread64(") && line.contains(data) {
            calls += 1;
            if line.ends_with("<unfinished ...>") {
                pending.insert(pid);
            } else {
                bytes += ret_of(line);
            }
        } else if line.contains("<... pread64 resumed>") && pending.remove(&pid) {
            bytes += ret_of(line);
        }
    }
    assert!(
        pending.is_empty(),
        "unmatched unfinished calls: {pending:?}"
    );
    let run = json(&only_run_dir(&out).join("run.json"));
    let it = &run["workloads"][0]["iterations"][0];
    eprintln!(
        "strace: {calls} pread64 calls, {bytes} bytes; naslab: {} reads, {} bytes",
        it["op_stats"]["read"]["count"], it["bytes_read"]
    );
    assert_eq!(calls, 100_000);
    assert_eq!(it["op_stats"]["read"]["count"].as_u64(), Some(calls));
    assert_eq!(it["bytes_read"].as_u64(), Some(bytes));
    assert!(bytes < 100_000 * 4096, "some reads were short");
}

#[test]
fn clean_removes_only_what_naslab_made() {
    let target = tempfile::tempdir().unwrap();
    std::fs::write(target.path().join("mine.txt"), b"x").unwrap();
    let out = tempfile::tempdir().unwrap();
    run_ok(
        naslab()
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .arg("-t")
            .arg(target.path())
            .arg("--out")
            .arg(out.path()),
    );
    assert!(
        target
            .path()
            .join("naslab/DocumentSave/docs/report.doc")
            .is_file()
    );
    let said = text(&run_ok(naslab().arg("clean").arg("-t").arg(target.path())).stderr);
    assert!(said.starts_with("removed '"), "{said}");
    assert!(!target.path().join("naslab").exists());
    assert!(target.path().join("mine.txt").is_file());
    // Again: nothing there, and nothing made by looking.
    let again = text(&run_ok(naslab().arg("clean").arg("-t").arg(target.path())).stderr);
    assert!(again.starts_with("nothing to clean: "), "{again}");
    assert!(!target.path().join("naslab").exists());
}

#[test]
fn direct_io_works_where_the_file_system_allows_it() {
    let out = tempfile::tempdir().unwrap();
    // The build directory is on a disk file system, which takes O_DIRECT.
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let res = run_ok(
        naslab()
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .args(["--direct", "--json", "-t"])
            .arg(target.path())
            .arg("--out")
            .arg(out.path()),
    );
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    assert_eq!(run["options"]["cache"], "direct");
    assert_eq!(run["workloads"][0]["iterations"][0]["errors"], 0);
    // The one 512-byte write at offset 0 is aligned; every op here is, so no warning.
    assert!(
        run["warnings"].as_array().unwrap().is_empty(),
        "{}",
        run["warnings"]
    );
}

/// A trace of `ops` 4 KiB reads of one file, one every `gap_us`.
fn paced_reads(path: &Path, ops: u64, gap_us: u64) {
    let mut t = String::from(
        "{\"type\":\"header\",\"format\":\"naslab-trace\",\"version\":1,\"workload\":\"Paced\"}\n\
         {\"type\":\"file\",\"id\":1,\"path\":\"f\",\"size\":65536,\"exists\":true}\n\
         {\"type\":\"op\",\"op\":\"open\",\"stream\":0,\"t_us\":0,\"file\":1,\"flags\":\"read\"}\n",
    );
    for i in 0..ops {
        t.push_str(&format!(
            "{{\"type\":\"op\",\"op\":\"read\",\"stream\":0,\"t_us\":{},\"file\":1,\"offset\":{},\"len\":4096}}\n",
            (i + 1) * gap_us,
            (i % 16) * 4096
        ));
    }
    t.push_str(&format!(
        "{{\"type\":\"op\",\"op\":\"close\",\"stream\":0,\"t_us\":{},\"file\":1}}\n",
        (ops + 1) * gap_us
    ));
    std::fs::write(path, t).unwrap();
}

#[test]
fn realtime_gives_fifo_to_a_stream_that_sleeps_and_nice_to_one_that_cannot() {
    need_tool("strace", "-V");
    let dir = tempfile::tempdir().unwrap();
    // 40,000 reads in one second leave no time to sleep (20 us apart, less than the
    // spin before each); 200 reads 1 ms apart leave most of it.
    for (ops, gap_us, nice) in [(40_000, 20, true), (200, 1_000, false)] {
        let trace = dir.path().join(format!("paced{gap_us}.jsonl"));
        paced_reads(&trace, ops, gap_us);
        let log = dir.path().join(format!("paced{gap_us}.strace"));
        let res = run_ok(
            Command::new("strace")
                .args(["-f", "-qq", "-o"])
                .arg(&log)
                .args(["-e", "trace=sched_setscheduler,setpriority"])
                .arg(env!("CARGO_BIN_EXE_naslab"))
                .arg("run")
                .arg(&trace)
                .args(["--backend", "null", "--pace", "original", "--realtime"])
                .arg("--out")
                .arg(dir.path().join("out")),
        );
        let log = std::fs::read_to_string(&log).unwrap();
        let fifo = log.lines().filter(|l| l.contains("SCHED_FIFO")).count();
        let niced = log
            .lines()
            .filter(|l| l.contains("setpriority(PRIO_PROCESS, 0, -20)"))
            .count();
        let err = text(&res.stderr);
        if nice {
            assert_eq!((fifo, niced), (0, 1), "{log}");
            assert!(
                err.contains("runs at nice -20 rather than under SCHED_FIFO"),
                "{err}"
            );
        } else {
            assert_eq!((fifo, niced), (1, 0), "{log}");
            assert!(!err.contains("nice -20"), "{err}");
        }
    }
}

#[test]
fn what_the_kernel_refuses_realtime_is_a_warning_in_run_json_and_on_stderr() {
    need_tool("setpriv", "--version");
    need_tool("prlimit", "--version");
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("paced.jsonl");
    paced_reads(&trace, 200, 1_000);
    let out = dir.path().join("out");
    // Without CAP_SYS_NICE and CAP_IPC_LOCK (even as root), with no real-time priority
    // and no locked memory allowed, the kernel refuses SCHED_FIFO and mlockall.
    let res = run_ok(
        Command::new("setpriv")
            .args([
                "--bounding-set=-sys_nice,-ipc_lock",
                "--inh-caps=-sys_nice,-ipc_lock",
                "prlimit",
                "--rtprio=0",
                "--memlock=0",
            ])
            .arg(env!("CARGO_BIN_EXE_naslab"))
            .arg("run")
            .arg(&trace)
            .args(["--backend", "null", "--pace", "original", "--realtime"])
            .arg("--out")
            .arg(&out),
    );
    let run = json(&only_run_dir(&out).join("run.json"));
    assert_eq!(run["options"]["realtime"], true);
    let granted = &run["workloads"][0]["iterations"][0]["realtime"];
    assert_eq!(granted["streams"], 1, "{granted}");
    assert_eq!(granted["fifo_streams"], 0, "{granted}");
    assert_eq!(granted["memory_locked"], false, "{granted}");
    let warnings = run["warnings"].as_array().unwrap();
    let refused: Vec<&serde_json::Value> = warnings
        .iter()
        .filter(|w| w["kind"] == "realtime_refused")
        .collect();
    assert_eq!(refused.len(), 1, "{warnings:?}");
    let reasons = refused[0]["refused"].to_string();
    assert!(
        reasons.contains("SCHED_FIFO") && reasons.contains("locking memory"),
        "{reasons}"
    );
    let err = text(&res.stderr);
    assert_eq!(
        err.matches("warning: Paced: --realtime: ").count(),
        1,
        "said once, while the run went on: {err}"
    );
}

#[test]
fn failed_ops_keep_their_latency_apart_and_the_run_says_so_in_its_exit_status() {
    // 16 reads of a file that opens, then 8 of one whose open fails (ENOENT): those
    // reads and the close fail with EBADF without reaching the file system.
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("missing.jsonl");
    write_trace(&trace, |w| {
        writeln!(
            w,
            r#"{{"type":"header","format":"naslab-trace","version":1,"workload":"Missing"}}"#
        )
        .unwrap();
        writeln!(
            w,
            r#"{{"type":"file","id":1,"path":"data","size":65536,"exists":true}}"#
        )
        .unwrap();
        writeln!(
            w,
            r#"{{"type":"file","id":2,"path":"gone","exists":false}}"#
        )
        .unwrap();
        for (file, reads) in [(1, 16), (2, 8)] {
            writeln!(
                w,
                r#"{{"type":"op","op":"open","file":{file},"flags":"read"}}"#
            )
            .unwrap();
            for i in 0..reads {
                writeln!(
                    w,
                    r#"{{"type":"op","op":"read","file":{file},"offset":{},"len":4096}}"#,
                    i * 4096
                )
                .unwrap();
            }
            writeln!(w, r#"{{"type":"op","op":"close","file":{file}}}"#).unwrap();
        }
    });
    let target = d.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let run = |out: &Path, tolerate: bool| {
        let mut cmd = naslab();
        cmd.arg("run")
            .arg(&trace)
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(out);
        if tolerate {
            cmd.arg("--tolerate-errors");
        }
        cmd.output().unwrap()
    };
    let out = d.path().join("out");
    let done = run(&out, false);
    let err = text(&done.stderr);
    assert_eq!(done.status.code(), Some(3), "{err}");
    assert!(
        err.contains("10 ops failed")
            && err.contains("read EBADF 8")
            && err.contains("open ENOENT 1")
            && err.contains("--tolerate-errors"),
        "{err}"
    );
    let dir = only_run_dir(&out);
    let reads =
        json(&dir.join("run.json"))["workloads"][0]["iterations"][0]["op_stats"]["read"].clone();
    assert_eq!(
        (reads["count"].as_u64(), reads["errors"].as_u64()),
        (Some(24), Some(8))
    );
    // The 16 reads that reached the file, and apart from them the 8 that failed.
    assert_eq!(reads["latency"]["count"], 16, "{reads}");
    assert_eq!(reads["failed_latency"]["count"], 8, "{reads}");
    let table = std::fs::read_to_string(dir.join("results.txt")).unwrap();
    assert!(table.contains("failed: EBADF 8"), "{table}");
    let export = |format: &str| {
        text(&run_ok(naslab().arg("report").arg(&dir).arg("--format").arg(format)).stdout)
    };
    let csv = export("csv");
    let failed_row = csv
        .lines()
        .find(|l| l.contains(",read:failed,"))
        .unwrap_or_else(|| panic!("no row for the failed reads:\n{csv}"));
    assert!(failed_row.contains(",read:failed,8,0,8,"), "{failed_row}");
    let md = export("md");
    assert!(md.contains("| read (failed) | 8 | 0 | 8 |"), "{md}");
    // Asked to tolerate them, the same run exits 0 and still counts them.
    let out = d.path().join("tolerated");
    let done = run(&out, true);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    let run_json = json(&only_run_dir(&out).join("run.json"));
    assert_eq!(run_json["workloads"][0]["iterations"][0]["errors"], 10);
}

#[test]
fn a_run_json_from_before_failed_ops_were_kept_apart_still_loads_and_says_so() {
    // run.json as naslab wrote it when an op type's latency held its failed ops too.
    let d = tempfile::tempdir().unwrap();
    let dir = example_run(d.path(), "old");
    let path = dir.join("run.json");
    let mut run = json(&path);
    let reads = &mut run["workloads"][0]["iterations"][0]["op_stats"]["read"];
    let count = reads["count"].as_u64().unwrap();
    reads["errors"] = 2.into();
    reads["errors_by_errno"] = serde_json::json!({"EBADF": 2});
    reads["latency"]["count"] = count.into();
    reads.as_object_mut().unwrap().remove("failed_latency");
    std::fs::write(&path, serde_json::to_vec(&run).unwrap()).unwrap();
    let shown = run_ok(
        naslab()
            .arg("report")
            .arg(&dir)
            .arg("--format")
            .arg("table"),
    );
    let table = text(&shown.stdout);
    assert!(
        table.contains("(latency includes the failed ops)"),
        "{table}"
    );
}

/// A binary built without MPI says so in `--version` and `--help`, and under an MPI
/// launcher of several processes refuses to start, saying it has no MPI (rather than
/// running alone and finding the target in use by its fellows).
#[cfg(not(feature = "mpi"))]
#[test]
fn a_binary_without_mpi_says_so_and_refuses_to_run_under_mpirun() {
    let out = run_ok(naslab().arg("--version"));
    assert!(
        text(&out.stdout).contains("without MPI"),
        "{}",
        text(&out.stdout)
    );
    let out = run_ok(naslab().arg("--help"));
    assert!(text(&out.stdout).contains("this binary has no MPI"));
    let d = tempfile::tempdir().unwrap();
    for (var, value) in [("OMPI_COMM_WORLD_SIZE", "3"), ("PMIX_RANK", "1")] {
        let out = naslab()
            .env(var, value)
            .args([
                "run",
                "--workload",
                "PhotoAlbum",
                "--scale",
                "0.001",
                "--target",
            ])
            .arg(d.path())
            .arg("--out")
            .arg(d.path().join("o"))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{var}: {err}");
        assert!(err.contains("built without MPI"), "{var}: {err}");
        assert!(
            !d.path().join("naslab").exists(),
            "{var}: it touched the target"
        );
    }
    // A launcher's job of one process is no job: the run goes ahead.
    run_ok(
        naslab()
            .env("OMPI_COMM_WORLD_SIZE", "1")
            .args([
                "run",
                "--backend",
                "null",
                "--workload",
                "PhotoAlbum",
                "--scale",
                "0.001",
            ])
            .arg("--out")
            .arg(d.path().join("o")),
    );
}

/// `naslab backends` lists every backend with how a run picks it and what this build
/// can do with it (the same capabilities a run checks a trace against).
#[test]
fn backends_lists_how_each_is_chosen_and_what_it_can_do() {
    let out = run_ok(naslab().args(["backends", "--json"]));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |name: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not listed: {rows}"))
    };
    let posix = row("posix");
    assert_eq!(posix["built"], true);
    assert_eq!(posix["lacks"], serde_json::json!([]));
    assert_eq!(posix["chosen_by"], "--target DIR");
    let nfs = row("nfs");
    assert_eq!(nfs["chosen_by"], "--target nfs://...");
    let lacks: Vec<&str> = nfs["lacks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(lacks, ["fallocate", "link", "symlink", "lock", "unlock"]);
    assert_eq!(row("smb")["lacks"], serde_json::json!(["link", "symlink"]));
    assert_eq!(row("null")["moves_data"], false);
    let windows = row("windows");
    assert_eq!(windows["built"], false);
    assert!(windows["missing"].as_str().unwrap().contains("naslab.exe"));
    // The table says the same in words.
    let table = text(&run_ok(naslab().arg("backends")).stdout);
    assert!(
        table.contains("cannot do fallocate, link, symlink, lock, unlock"),
        "{table}"
    );
}

/// `--backend` takes the backends a run picks by name, from the same registry, and says
/// how to get any other.
#[test]
fn backend_names_are_resolved_through_the_registry() {
    let refused = |name: &str| {
        usage_err(
            naslab().args(["run", "--backend", name, "--workload", "PhotoAlbum"]),
            "--backend",
        )
    };
    assert!(refused("smb").contains("give --target smb://HOST/"));
    assert!(refused("nfs").contains("give --target nfs://HOST/"));
    assert!(refused("windows").contains("not in this build (naslab.exe only"));
    let e = refused("ramdisk");
    assert!(e.contains("posix, windows, smb, nfs, null"), "{e}");
    // null needs no target.
    let out = run_ok(naslab().args([
        "run",
        "--backend",
        "null",
        "--workload",
        "PhotoAlbum",
        "--scale",
        "0.001",
        "--json",
    ]));
    let run: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["workloads"][0]["iterations"][0]["errors"], 0);
}
