//! Input and memory limits: a file that is not a trace, a huge line in a small .zst and
//! traces with huge ops end with a clear error, never an abort or an out-of-memory kill.
//! Each runs naslab under an address-space limit (as `prlimit --as` sets it).

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

use common::*;

/// naslab with its address space limited to `bytes`.
fn limited(bytes: u64) -> Command {
    let mut cmd = naslab();
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// Runs the command, which must fail by itself with exit code 1 (not a signal); its stderr.
fn fails_cleanly(cmd: &mut Command) -> String {
    let out: Output = cmd.output().expect("naslab starts");
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "status {:?}; stderr: {err}",
        out.status
    );
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "{err}"
    );
    err
}

const GIB: u64 = 1 << 30;

#[test]
fn dev_zero_is_refused_at_its_first_line_in_run_and_describe() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let err = fails_cleanly(
        limited(GIB)
            .args(["run", "/dev/zero", "--backend", "null", "--out"])
            .arg(out.path())
            .arg("--target")
            .arg(target.path()),
    );
    assert!(
        err.contains(
            "/dev/zero:1: the file starts with a NUL byte but is not a naslab binary trace"
        ),
        "{err}"
    );
    let err = fails_cleanly(limited(GIB).args(["describe", "/dev/zero"]));
    assert!(
        err.contains(
            "/dev/zero:1: the file starts with a NUL byte but is not a naslab binary trace"
        ),
        "{err}"
    );
}

/// A small .zst whose second line is 1 GiB long.
fn huge_line_zst(path: &Path) {
    let mut enc = zstd::stream::write::Encoder::new(std::fs::File::create(path).unwrap(), 3)
        .unwrap()
        .auto_finish();
    writeln!(
        enc,
        r#"{{"type":"header","format":"naslab-trace","version":1,"workload":"huge"}}"#
    )
    .unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..1024 {
        enc.write_all(&chunk).unwrap();
    }
    writeln!(enc, r#"{{"type":"file","id":0,"path":"a","exists":true}}"#).unwrap();
}

#[test]
fn a_gibibyte_line_in_a_small_zst_fails_fast_in_run_describe_and_report() {
    let d = tempfile::tempdir().unwrap();
    let zst = d.path().join("huge.jsonl.zst");
    huge_line_zst(&zst);
    assert!(std::fs::metadata(&zst).unwrap().len() < 1 << 20);
    let want = format!("{}:2: the line is longer than 1048576 bytes", zst.display());
    let err = fails_cleanly(
        limited(GIB)
            .arg("run")
            .arg(&zst)
            .args(["--backend", "null", "--out"])
            .arg(d.path().join("out")),
    );
    assert!(err.contains(&want), "{err}");
    let err = fails_cleanly(limited(GIB).arg("describe").arg(&zst));
    assert!(err.contains(&want), "{err}");

    // A run directory whose op records hold the line: the report says where they stop.
    let out = d.path().join("runs");
    run_ok(
        naslab()
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .args(["--backend", "null", "--label", "r", "--out"])
            .arg(&out),
    );
    let run_dir = only_run_dir(&out);
    let records = run_dir.join("DocumentSave.ops.nbt.zst");
    assert!(records.is_file());
    std::fs::copy(&zst, &records).unwrap();
    let html = d.path().join("report.html");
    let out = limited(GIB)
        .arg("report")
        .arg(&run_dir)
        .arg("-o")
        .arg(&html)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("stop being readable at line 2")
            && page.contains("longer than 1048576 bytes"),
        "the report does not say where the records stop"
    );
}

/// A trace of `streams` streams, each opening one file and reading `len` bytes of it.
fn big_read_trace(path: &Path, streams: u32, queue_depth: u32, len: u64) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(w, r#"{{"type":"header","format":"naslab-trace","version":1,"workload":"big","queue_depth":{queue_depth}}}"#).unwrap();
    for s in 0..streams {
        writeln!(
            w,
            r#"{{"type":"file","id":{s},"path":"f{s}","size":{len},"exists":true}}"#
        )
        .unwrap();
    }
    for s in 0..streams {
        for (t, op) in [(0, "open"), (1, "read"), (2, "close")] {
            let sized = if op == "read" {
                format!(r#","offset":0,"len":{len}"#)
            } else {
                String::new()
            };
            let flags = if op == "open" {
                r#","flags":"read""#
            } else {
                ""
            };
            writeln!(
                w,
                r#"{{"type":"op","op":"{op}","stream":{s},"t_us":{t},"file":{s}{sized}{flags}}}"#
            )
            .unwrap();
        }
    }
    w.flush().unwrap();
}

#[test]
fn queue_depth_1024_with_a_256_mib_read_runs_in_bounded_memory() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("deep.jsonl");
    big_read_trace(&trace, 1, 1024, 256 << 20);
    // Buffers of queue depth x largest read would be 256 GiB; one read buffer is 256 MiB.
    let out = limited(GIB)
        .arg("run")
        .arg(&trace)
        .args(["--backend", "null", "--out"])
        .arg(d.path().join("out"))
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert!(out.status.success(), "status {:?}: {err}", out.status);
    let run = json(&only_run_dir(&d.path().join("out")).join("run.json"));
    let warning = &run["warnings"][0];
    assert_eq!(warning["kind"], "reads_in_flight_bound", "{run}");
    assert_eq!(warning["in_flight"], 1);
    assert_eq!(warning["queue_depth"], 1024);
}

#[test]
fn buffers_beyond_the_memory_limit_are_refused_before_the_run() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("wide.jsonl");
    // Eight streams, each with one 256 MiB read: 2 GiB of read buffers, over a 1 GiB limit.
    big_read_trace(&trace, 8, 1, 256 << 20);
    let err = fails_cleanly(
        limited(GIB)
            .arg("run")
            .arg(&trace)
            .args(["--backend", "null", "--out"])
            .arg(d.path().join("out")),
    );
    assert!(
        err.contains("I/O buffers need 2048.0 MiB (largest read 256.0 MiB")
            && err.contains("8 streams")
            && err.contains("of address space is left under this process's limit"),
        "{err}"
    );
    // Without the limit the same trace runs.
    run_ok(
        naslab()
            .arg("run")
            .arg(&trace)
            .args(["--backend", "null", "--out"])
            .arg(d.path().join("out2")),
    );
}

#[test]
fn describe_refuses_what_run_refuses() {
    let d = tempfile::tempdir().unwrap();
    let head = r#"{"type":"header","format":"naslab-trace","version":1,"workload":"w"}"#;
    let file = r#"{"type":"file","id":0,"path":"a","size":10,"exists":true}"#;
    let cases = [
        ("empty.jsonl", String::new(), ":1: the trace is empty"),
        ("blank.jsonl", "\n\n".to_string(), ":1: the trace is empty"),
        (
            "headless.jsonl",
            format!("{file}\n"),
            ":1: the first line must be the header",
        ),
        (
            "unopened.jsonl",
            format!("{head}\n{file}\n{{\"type\":\"op\",\"op\":\"read\",\"file\":0,\"len\":4}}\n"),
            ":3: stream 0 issues a read on 'a' without opening it",
        ),
        (
            "huge-fallocate.jsonl",
            format!(
                "{head}\n{file}\n{{\"type\":\"op\",\"op\":\"open\",\"file\":0}}\n{{\"type\":\"op\",\"op\":\"fallocate\",\"file\":0,\"len\":1099511627776}}\n"
            ),
            ":4: a fallocate of 1099511627776 bytes is over naslab's limit",
        ),
    ];
    for (name, body, want) in cases {
        let path = d.path().join(name);
        std::fs::write(&path, body).unwrap();
        let described = run_err(naslab().arg("describe").arg(&path));
        let ran = run_err(
            naslab()
                .arg("run")
                .arg(&path)
                .args(["--backend", "null", "--out"])
                .arg(d.path().join("out")),
        );
        let want = format!("{}{want}", path.display());
        assert!(described.contains(&want), "describe: {described}");
        assert!(ran.contains(&want), "run: {ran}");
    }
    // What run accepts, describe describes.
    let out = run_ok(
        naslab()
            .arg("describe")
            .arg(repo_root().join("examples/document-save.jsonl")),
    );
    assert!(text(&out.stdout).contains("DocumentSave"));
}

#[test]
fn a_damaged_zst_is_called_damaged_once() {
    let d = tempfile::tempdir().unwrap();
    let zst = d.path().join("doc.jsonl.zst");
    let mut enc = zstd::stream::write::Encoder::new(std::fs::File::create(&zst).unwrap(), 3)
        .unwrap()
        .auto_finish();
    let doc = std::fs::read(repo_root().join("examples/document-save.jsonl")).unwrap();
    // Enough lines for several blocks of compressed data.
    enc.write_all(&doc).unwrap();
    for i in 0..200_000u64 {
        writeln!(
            enc,
            r#"{{"type":"op","op":"stat","stream":9,"t_us":{i},"file":1}}"#
        )
        .unwrap();
    }
    drop(enc);
    let mut bytes = std::fs::read(&zst).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n / 2..n / 2 + 32] {
        *b ^= 0xa5;
    }
    std::fs::write(&zst, &bytes).unwrap();
    for cmd in ["describe", "run"] {
        let err = run_err(naslab().arg(cmd).arg(&zst).args(if cmd == "run" {
            &["--backend", "null"][..]
        } else {
            &[][..]
        }));
        assert!(
            err.contains("the zstd stream is damaged after line"),
            "{err}"
        );
        assert!(!err.contains("permissions"), "{err}");
        // The decompressor's cause, said once.
        let causes: usize = [
            "Data corruption detected",
            "Unknown frame descriptor",
            "checksum",
        ]
        .iter()
        .map(|c| err.matches(c).count())
        .sum();
        assert_eq!(causes, 1, "{err}");
    }
}

#[test]
fn too_many_open_files_says_so_and_not_tmpdir() {
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("streams.jsonl");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&trace).unwrap());
    writeln!(
        w,
        r#"{{"type":"header","format":"naslab-trace","version":1,"workload":"many"}}"#
    )
    .unwrap();
    writeln!(w, r#"{{"type":"file","id":0,"path":"a","exists":true}}"#).unwrap();
    for s in 0..200 {
        writeln!(w, r#"{{"type":"op","op":"stat","stream":{s},"file":0}}"#).unwrap();
    }
    w.flush().unwrap();
    drop(w);
    let mut cmd = naslab();
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 64,
                rlim_max: 64,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let err = run_err(
        cmd.arg("run")
            .arg(&trace)
            .args(["--backend", "null", "--out"])
            .arg(d.path().join("out")),
    );
    assert!(
        err.contains("too many open files") && err.contains("ulimit -n"),
        "{err}"
    );
    assert!(!err.contains("TMPDIR"), "{err}");
}

#[test]
fn export_trace_into_a_directory_says_it_cannot_write() {
    let d = tempfile::tempdir().unwrap();
    let err = run_err(
        naslab()
            .args(["export-trace", "FileCopyToNAS", "--scale", "0.001", "-o"])
            .arg(d.path()),
    );
    assert!(err.contains("cannot write trace"), "{err}");
    assert!(err.contains("it is a directory"), "{err}");
    assert!(!err.contains("cannot read"), "{err}");
}

/// A trace declaring one file at `depth` levels (`a/` repeated, then `f`), then a stat.
fn deep_path_trace(path: &Path, depth: usize) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(
        w,
        r#"{{"type":"header","format":"naslab-trace","version":1,"workload":"Deep"}}"#
    )
    .unwrap();
    writeln!(
        w,
        r#"{{"type":"file","id":1,"path":"{}f","size":10,"exists":true}}"#,
        "a/".repeat(depth)
    )
    .unwrap();
    writeln!(w, r#"{{"type":"op","op":"stat","file":1}}"#).unwrap();
    w.flush().unwrap();
}

/// A path longer than PATH_MAX is refused with its line, whatever its depth, in bounded
/// memory (1 MB of `a/` made describe and run abort under 4 GiB: every parent was a copy
/// of the path); the deepest path allowed compiles.
#[test]
fn a_path_longer_than_path_max_is_refused_at_its_line_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    for bytes in [20_000usize, 80_000, 1_000_000] {
        let trace = dir.path().join(format!("deep{bytes}.jsonl"));
        deep_path_trace(&trace, bytes / 2);
        let err = fails_cleanly(limited(GIB).arg("describe").arg(&trace));
        assert!(
            err.contains(&format!(
                "deep{bytes}.jsonl:2: a path of {} bytes",
                bytes + 1
            )) && err.contains("4095 bytes naslab accepts"),
            "{err}"
        );
        let target = tempfile::tempdir().unwrap();
        let err = fails_cleanly(
            limited(GIB)
                .arg("run")
                .arg(&trace)
                .args(["--backend", "null", "--out"])
                .arg(dir.path().join("out"))
                .arg("--target")
                .arg(target.path()),
        );
        assert!(err.contains(":2: a path of"), "{err}");
    }
    // 2,047 levels in 4,095 bytes: accepted, and described in the same limit.
    let trace = dir.path().join("deepest.jsonl");
    deep_path_trace(&trace, 2047);
    let out = limited(GIB).arg("describe").arg(&trace).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}
