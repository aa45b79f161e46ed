//! `naslab capture`: a program's file I/O under a root, as strace sees it, becomes a
//! trace; replaying that trace and capturing the replay gives the same ops back.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{naslab, need_tool, run_ok, text};
use naslab_trace::{Expected, FileKind, OpKind, Record};

/// One op as the round trip compares them: kind, path, offset, length.
type Seq = Vec<(OpKind, String, u64, u64)>;

struct Read {
    /// path → (kind, size, exists)
    files: BTreeMap<String, (FileKind, u64, bool)>,
    streams: BTreeMap<u32, Seq>,
    /// Each stream's op times (t_us).
    times: BTreeMap<u32, Vec<u64>>,
    flags: Vec<(OpKind, String, String)>,
}

fn read_trace(path: &Path) -> Read {
    let recs = naslab_trace::read_all(path, std::fs::File::open(path).unwrap()).unwrap();
    let mut names = BTreeMap::new();
    let mut r = Read {
        files: BTreeMap::new(),
        streams: BTreeMap::new(),
        times: BTreeMap::new(),
        flags: Vec::new(),
    };
    for rec in recs {
        match rec {
            Record::File(f) => {
                names.insert(f.id, f.path.clone());
                r.files.insert(f.path, (f.kind, f.size, f.exists));
            }
            Record::Op(op, _) => {
                let name = names[&op.file].clone();
                let mut name_to = name.clone();
                if let Some(to) = op.to {
                    name_to = format!("{name} -> {}", names[&to]);
                }
                if matches!(op.kind, OpKind::Open | OpKind::Create) {
                    r.flags.push((op.kind, name.clone(), op.flags.to_string()));
                }
                r.streams
                    .entry(op.stream)
                    .or_default()
                    .push((op.kind, name_to, op.offset, op.len));
                r.times.entry(op.stream).or_default().push(op.t_us);
            }
            Record::Header(_) => {}
        }
    }
    r
}

/// A replay's captured ops without what naslab adds to each open: one stat of the file
/// it opened (it checks that the file is a regular file on the target with one name
/// before using it) and, for an open that truncates, the truncation it applies only after
/// that check. Fails the test if an open lacks its check.
fn without_open_checks(seq: &[(OpKind, String, u64, u64)]) -> Vec<(OpKind, String, u64, u64)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < seq.len() {
        let op = seq[i].clone();
        i += 1;
        if matches!(op.0, OpKind::Open | OpKind::Create) {
            let check = (OpKind::Stat, op.1.clone(), 0, 0);
            assert_eq!(
                seq.get(i),
                Some(&check),
                "an open of {} without its check",
                op.1
            );
            i += 1;
            if seq.get(i) == Some(&(OpKind::Truncate, op.1.clone(), 0, 0)) {
                i += 1;
            }
        }
        out.push(op);
    }
    out
}

fn capture(root: &Path, out: &Path, cmd: &[&str], cwd: &Path) -> String {
    need_tool("strace", "-V");
    let res = run_ok(
        naslab()
            .current_dir(cwd)
            .arg("capture")
            .arg("--root")
            .arg(root)
            .arg("-o")
            .arg(out)
            .arg("--")
            .args(cmd),
    );
    text(&res.stderr)
}

fn op(kind: OpKind, path: &str, offset: u64, len: u64) -> (OpKind, String, u64, u64) {
    (kind, path.to_string(), offset, len)
}

/// A small program whose every file operation under the root is known: two threads,
/// one after the other, so each is a stream of its own.
const PROGRAM: &str = r#"
import mmap, os, subprocess, sys, threading
root = sys.argv[1]
p = lambda *a: os.path.join(root, *a)
def first():
    fd = os.open(p("in.dat"), os.O_RDONLY)
    os.read(fd, 4096)
    os.read(fd, 4096)
    os.close(fd)
    fd = os.open(p("out", "x.bin"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"a" * 1000)
    os.pwrite(fd, b"b" * 500, 8192)
    os.fsync(fd)
    os.ftruncate(fd, 4000)
    os.close(fd)
    os.rename(p("out", "x.bin"), p("out", "y.bin"))
    os.stat(p("out", "y.bin"))
    os.listdir(p("out"))
    os.unlink(p("out", "y.bin"))
    os.mkdir(p("out", "sub"))
    os.rmdir(p("out", "sub"))
    try:
        os.stat(p("missing"))
    except FileNotFoundError:
        pass
def second():
    fd = os.open(p("b.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for _ in range(3):
        os.write(fd, b"c" * 100)
    os.close(fd)
    with open(p("in.dat"), "rb") as f:
        m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        m.close()
    subprocess.run([p("tool")], check=True)
    with open(p("tool"), "rb") as f:
        f.read(10)
    with open(p("libx.so.1"), "rb") as f:
        f.read(10)
for fn in (first, second):
    t = threading.Thread(target=fn)
    t.start()
    t.join()
"#;

fn small_program_setup(d: &Path) -> (PathBuf, PathBuf) {
    let root = d.join("root");
    std::fs::create_dir_all(root.join("out")).unwrap();
    std::fs::write(root.join("in.dat"), vec![7u8; 6000]).unwrap();
    std::fs::copy("/bin/true", root.join("tool")).unwrap();
    std::fs::write(root.join("libx.so.1"), b"not really a library").unwrap();
    let prog = d.join("prog.py");
    std::fs::write(&prog, PROGRAM).unwrap();
    (root, prog)
}

#[test]
fn capture_of_a_small_program_records_exactly_its_ops() {
    need_tool("python3", "--version");
    let d = tempfile::tempdir().unwrap();
    let (root, prog) = small_program_setup(d.path());
    let out = d.path().join("prog.jsonl");
    let said = capture(
        &root,
        &out,
        &["python3", prog.to_str().unwrap(), root.to_str().unwrap()],
        d.path(),
    );
    let t = read_trace(&out);
    use OpKind::*;
    let expected_first: Seq = vec![
        op(Open, "in.dat", 0, 0),
        op(Read, "in.dat", 0, 4096),
        op(Read, "in.dat", 4096, 4096),
        op(Close, "in.dat", 0, 0),
        op(Create, "out/x.bin", 0, 0),
        op(Write, "out/x.bin", 0, 1000),
        op(Write, "out/x.bin", 8192, 500),
        op(Fsync, "out/x.bin", 0, 0),
        op(Truncate, "out/x.bin", 0, 4000),
        op(Close, "out/x.bin", 0, 0),
        op(Rename, "out/x.bin -> out/y.bin", 0, 0),
        op(Stat, "out/y.bin", 0, 0),
        op(Readdir, "out", 0, 0),
        op(Unlink, "out/y.bin", 0, 0),
        op(Mkdir, "out/sub", 0, 0),
        op(Unlink, "out/sub", 0, 0),
        // A stat that found nothing: kept, expected to find nothing again.
        op(Stat, "missing", 0, 0),
    ];
    let expected_second: Seq = vec![
        op(Create, "b.log", 0, 0),
        op(Write, "b.log", 0, 100),
        op(Write, "b.log", 100, 100),
        op(Write, "b.log", 200, 100),
        op(Close, "b.log", 0, 0),
    ];
    let streams: Vec<&Seq> = t.streams.values().collect();
    assert_eq!(streams.len(), 2, "{:#?}\n{said}", t.streams);
    assert_eq!(streams[0], &expected_first, "{said}");
    // The second thread also opens in.dat (for the mmap) and stats it (Python's
    // buffered open does an fstat); mmap'd bytes are invisible, as documented.
    let second: Seq = streams[1]
        .iter()
        .filter(|o| o.1 != "in.dat")
        .cloned()
        .collect();
    assert_eq!(second, expected_second, "{said}");
    // The file set is the tree before the run, with sizes; what the run made is absent.
    assert_eq!(t.files["in.dat"], (FileKind::File, 6000, true));
    assert_eq!(t.files["out"], (FileKind::Dir, 0, true));
    assert!(!t.files["out/x.bin"].2);
    assert!(!t.files["b.log"].2);
    assert!(
        t.flags
            .contains(&(Create, "b.log".to_string(), "append".to_string()))
    );
    assert!(
        t.flags
            .contains(&(Open, "in.dat".to_string(), "read".to_string()))
    );
    // What was left out, and why.
    let count = |why: &str| -> u64 {
        said.lines()
            .find(|l| l.contains(why))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    assert_eq!(count("ops on executables run under the root"), 3, "{said}");
    assert_eq!(count("ops on shared libraries"), 3, "{said}");
    assert_eq!(count("mmap of a file under the root"), 1, "{said}");
    assert_eq!(
        count("failed calls (newfstatat ENOENT)") + count("failed calls (statx ENOENT)"),
        0,
        "{said}"
    );
    assert!(count("ops on files outside the root") > 0, "{said}");
    assert!(said.contains("memory-mapped (in.dat)"), "{said}");
}

/// Lays out `src` under `root`: files of known sizes in two directories.
fn source_tree(root: &Path) -> BTreeMap<String, u64> {
    let sizes = [
        ("src/a.txt", 10u64),
        ("src/b.bin", 300_000),
        ("src/sub/c.dat", 70_000),
        ("src/sub/empty", 0),
    ];
    let mut m = BTreeMap::new();
    for (p, size) in sizes {
        let path = root.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let body: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&path, body).unwrap();
        m.insert(p.to_string(), size);
    }
    m
}

/// Bytes per file of the ops of `kind`; a read counts what it can return from a file of
/// the size the file set declares (a read at the end of a file asks for more than it gets).
fn bytes_by_file(t: &Read, kind: OpKind) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for seq in t.streams.values() {
        for (k, path, offset, len) in seq {
            if *k == kind {
                let got = match t.files.get(path) {
                    Some((_, size, true)) if kind == OpKind::Read => {
                        (*len).min(size.saturating_sub(*offset))
                    }
                    _ => *len,
                };
                *m.entry(path.clone()).or_default() += got;
            }
        }
    }
    m
}

fn ops_of(t: &Read, kind: OpKind) -> Vec<String> {
    let mut v: Vec<String> = t
        .streams
        .values()
        .flatten()
        .filter(|o| o.0 == kind)
        .map(|o| o.1.clone())
        .collect();
    v.sort();
    v
}

#[test]
fn capture_of_cp_r_reads_every_file_and_writes_its_copy() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    let sizes = source_tree(&root);
    let out = d.path().join("cp.jsonl");
    capture(&root, &out, &["cp", "-r", "src", "dst"], &root);
    let t = read_trace(&out);
    for (p, size) in &sizes {
        assert_eq!(t.files[p], (FileKind::File, *size, true), "{p}");
    }
    assert!(!t.files["dst"].2);
    assert_eq!(ops_of(&t, OpKind::Mkdir), vec!["dst", "dst/sub"]);
    let created = ops_of(&t, OpKind::Create);
    assert_eq!(
        created,
        vec!["dst/a.txt", "dst/b.bin", "dst/sub/c.dat", "dst/sub/empty"]
    );
    let read = bytes_by_file(&t, OpKind::Read);
    let written = bytes_by_file(&t, OpKind::Write);
    for (p, size) in &sizes {
        let copy = p.replacen("src/", "dst/", 1);
        assert_eq!(read.get(p).copied().unwrap_or(0), *size, "{p} read");
        assert_eq!(
            written.get(&copy).copied().unwrap_or(0),
            *size,
            "{copy} written"
        );
    }
    assert_eq!(ops_of(&t, OpKind::Readdir), vec!["src", "src/sub"]);
}

#[test]
fn capture_of_tar_create_and_extract() {
    need_tool("tar", "--version");
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    let sizes = source_tree(&root);
    let out = d.path().join("tar-c.jsonl");
    capture(&root, &out, &["tar", "-cf", "all.tar", "src"], &root);
    let t = read_trace(&out);
    let read = bytes_by_file(&t, OpKind::Read);
    for (p, size) in &sizes {
        assert_eq!(read.get(p).copied().unwrap_or(0), *size, "{p} read");
    }
    let tar_size = std::fs::metadata(root.join("all.tar")).unwrap().len();
    assert_eq!(bytes_by_file(&t, OpKind::Write)["all.tar"], tar_size);
    assert!(!t.files["all.tar"].2);

    std::fs::create_dir(root.join("x")).unwrap();
    let out = d.path().join("tar-x.jsonl");
    capture(&root, &out, &["tar", "-xf", "all.tar", "-C", "x"], &root);
    let t = read_trace(&out);
    // The archive exists before the extraction, with its size; it is read whole.
    assert_eq!(t.files["all.tar"], (FileKind::File, tar_size, true));
    let written = bytes_by_file(&t, OpKind::Write);
    for (p, size) in &sizes {
        let x = format!("x/{p}");
        assert_eq!(written.get(&x).copied().unwrap_or(0), *size, "{x} written");
    }
    assert!(bytes_by_file(&t, OpKind::Read)["all.tar"] >= tar_size);
    assert_eq!(
        ops_of(&t, OpKind::Create),
        vec![
            "x/src/a.txt",
            "x/src/b.bin",
            "x/src/sub/c.dat",
            "x/src/sub/empty"
        ]
    );
}

/// Capture a program, replay its trace with naslab on a directory, capture the replay:
/// each stream's ops (kind, file, offset, length) come back the same.
#[test]
fn round_trip_capture_replay_capture_gives_the_same_ops() {
    need_tool("python3", "--version");
    let d = tempfile::tempdir().unwrap();
    let (root, prog) = small_program_setup(d.path());
    let first = d.path().join("RoundTrip.jsonl");
    capture(
        &root,
        &first,
        &["python3", prog.to_str().unwrap(), root.to_str().unwrap()],
        d.path(),
    );
    let target = d.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let results = d.path().join("results");
    let replay = |extra: &[&str]| {
        let mut cmd: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        cmd.extend(
            [
                env!("CARGO_BIN_EXE_naslab"),
                "run",
                first.to_str().unwrap(),
                "--target",
                target.to_str().unwrap(),
                "--cache",
                "keep",
                "--out",
                results.to_str().unwrap(),
            ]
            .map(String::from),
        );
        cmd
    };
    // A first replay makes the workload directory the second one is captured under.
    let plain = replay(&[]);
    run_ok(Command::new(&plain[0]).args(&plain[1..]));
    let workdir = target.join("naslab/RoundTrip");
    assert!(workdir.is_dir());
    let second = d.path().join("replayed.jsonl");
    let cmd = replay(&[]);
    let cmd: Vec<&str> = cmd.iter().map(|s| s.as_str()).collect();
    capture(&workdir, &second, &cmd, d.path());
    let a = read_trace(&first);
    let mut b = read_trace(&second);
    for seq in b.streams.values_mut() {
        *seq = without_open_checks(seq);
    }
    // naslab's main thread prepares the file set (its own stream, which ends before the
    // replay starts); each replayed stream runs on a thread of its own.
    let mut unmatched: Vec<u32> = b.streams.keys().copied().collect();
    for (s, seq) in &a.streams {
        let found = unmatched
            .iter()
            .position(|k| &b.streams[k] == seq)
            .unwrap_or_else(|| {
                panic!(
                    "stream {s} of the capture has no equal in the replay's capture:\n{seq:#?}\nreplay:\n{:#?}",
                    b.streams
                )
            });
        unmatched.remove(found);
    }
    // The unmatched stream is naslab's main thread: it prepares the file set before the
    // replay and checks it afterwards, but issues nothing while the streams run.
    let replayed: Vec<u64> = b
        .times
        .iter()
        .filter(|(k, _)| !unmatched.contains(k))
        .flat_map(|(_, t)| t.iter().copied())
        .collect();
    let (start, end) = (
        *replayed.iter().min().unwrap(),
        *replayed.iter().max().unwrap(),
    );
    assert!(unmatched.len() <= 1, "{unmatched:?}");
    for k in &unmatched {
        assert!(
            b.times[k].iter().all(|&t| t < start || t > end),
            "stream {k} of the replay's capture ran during the replay: {:#?}",
            b.streams[k]
        );
    }
}

#[test]
fn capture_without_a_command_or_with_a_bad_root_says_what_to_do() {
    let d = tempfile::tempdir().unwrap();
    let err = common::run_err(
        naslab()
            .args(["capture", "--root"])
            .arg(d.path().join("nope"))
            .args(["-o"])
            .arg(d.path().join("t.jsonl"))
            .args(["--", "true"]),
    );
    assert!(
        err.contains("give an existing directory with --root"),
        "{err}"
    );
}

/// A directory renamed during the capture takes its files along: a file opened under the
/// new name is the one that existed under the old name (opened, not created, and as
/// long), and the trace replays without an error.
#[test]
fn a_renamed_directory_takes_its_files_along_in_the_trace() {
    need_tool("python3", "--version");
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir_all(root.join("A/deep")).unwrap();
    std::fs::write(root.join("A/x"), vec![1u8; 6000]).unwrap();
    std::fs::write(root.join("A/deep/y"), vec![2u8; 3000]).unwrap();
    let prog = d.path().join("prog.py");
    std::fs::write(
        &prog,
        r#"
import os, sys
p = lambda *a: os.path.join(sys.argv[1], *a)
os.rename(p("A"), p("B"))
fd = os.open(p("B", "x"), os.O_RDWR | os.O_CREAT, 0o644)
os.read(fd, 4096)
os.read(fd, 4096)
os.close(fd)
with open(p("B", "deep", "y"), "rb") as f:
    f.read()
os.unlink(p("B", "deep", "y"))
os.rmdir(p("B", "deep"))
"#,
    )
    .unwrap();
    let trace = d.path().join("DirRename.jsonl");
    capture(
        &root,
        &trace,
        &["python3", prog.to_str().unwrap(), root.to_str().unwrap()],
        d.path(),
    );
    let t = read_trace(&trace);
    let ops: Vec<_> = t.streams.values().flatten().cloned().collect();
    assert!(
        ops.contains(&op(OpKind::Rename, "A -> B", 0, 0)),
        "{ops:#?}"
    );
    assert!(ops.contains(&op(OpKind::Open, "B/x", 0, 0)), "{ops:#?}");
    assert!(!ops.iter().any(|o| o.0 == OpKind::Create), "{ops:#?}");
    // Reads as the program asked for them (the second past the end of B/x).
    assert!(
        ops.contains(&op(OpKind::Read, "B/x", 4096, 4096)),
        "{ops:#?}"
    );
    assert!(
        ops.contains(&op(OpKind::Read, "B/deep/y", 0, 3001)),
        "{ops:#?}"
    );
    assert_eq!(t.files["A/x"], (naslab_trace::FileKind::File, 6000, true));
    assert!(!t.files["B/x"].2, "B/x is made by the rename");
    let it = replay_iteration(&trace, d.path(), "afap");
    assert_eq!(it["errors"], 0, "{it}");
    assert_eq!(it["op_stats"]["read"]["bytes"], 6000 + 3000, "{it}");
}

#[test]
fn hard_and_symbolic_links_are_captured_and_replayed_inside_the_workload_directory() {
    use std::os::unix::fs::MetadataExt;
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("a"), vec![7u8; 3000]).unwrap();
    let trace = d.path().join("Links.jsonl");
    capture(
        &root,
        &trace,
        &[
            "sh",
            "-c",
            "ln a b && cat b > c && ln -s a s && cat s > e && ln -s ../a sub/l && cat sub/l > f",
        ],
        &root,
    );
    let t = read_trace(&trace);
    let ops: Vec<_> = t.streams.values().flatten().cloned().collect();
    for want in [
        op(OpKind::Link, "a -> b", 0, 0),
        op(OpKind::Symlink, "a -> s", 0, 0),
        op(OpKind::Symlink, "a -> sub/l", 0, 0),
    ] {
        assert!(ops.contains(&want), "{want:?} in {ops:#?}");
    }
    // The reads through the hard link are of its own name; those through the symbolic
    // links are of the file they name (the path strace decoded for the descriptor).
    let opened = ops_of(&t, OpKind::Open);
    for (path, times) in [("b", 1), ("a", 2), ("s", 0), ("sub/l", 0)] {
        let n = opened.iter().filter(|p| *p == path).count();
        assert_eq!(n, times, "opens of {path}: {opened:?}");
    }
    let it = replay_iteration(&trace, d.path(), "original");
    assert_eq!(it["errors"], 0, "{it}");
    assert_eq!(it["op_stats"]["link"]["count"], 1, "{it}");
    assert_eq!(it["op_stats"]["symlink"]["count"], 2, "{it}");
    // The links it made: inside the workload directory, naming what the program's did.
    let wd = replay_target(d.path(), "original").join("naslab/Links");
    let (a, b) = (
        std::fs::metadata(wd.join("a")).unwrap(),
        std::fs::metadata(wd.join("b")).unwrap(),
    );
    assert_eq!(a.ino(), b.ino());
    assert_eq!(std::fs::read_link(wd.join("s")).unwrap(), Path::new("a"));
    assert_eq!(
        std::fs::read_link(wd.join("sub/l")).unwrap(),
        Path::new("../a")
    );
}

/// The target directory [`replay_iteration`] replays in under `pace`.
fn replay_target(dir: &Path, pace: &str) -> PathBuf {
    dir.join(format!("target-{pace}"))
}

/// Runs `trace` on a fresh target under `pace` (see [`replay_target`]) and returns its
/// first iteration, with failed ops allowed (the caller says which failures it accepts).
fn replay_iteration(trace: &Path, dir: &Path, pace: &str) -> serde_json::Value {
    let target = replay_target(dir, pace);
    std::fs::create_dir(&target).unwrap();
    let res = naslab()
        .arg("run")
        .arg(trace)
        .args(["--json", "--tolerate-errors", "--pace", pace, "--target"])
        .arg(&target)
        .arg("--out")
        .arg(dir.join(format!("results-{pace}")))
        .output()
        .unwrap();
    assert!(res.status.success(), "{}", text(&res.stderr));
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    run["workloads"][0]["iterations"][0].clone()
}

/// The ops of an iteration that failed for a reason hard links can cause: the link
/// itself failing otherwise than by a missing file, or a file refused for its names.
fn link_failures(it: &serde_json::Value) -> Vec<String> {
    let mut failed = Vec::new();
    for (op, stats) in it["op_stats"].as_object().unwrap() {
        for (errno, n) in stats["errors_by_errno"].as_object().into_iter().flatten() {
            let ordering = errno == "ENOENT" || errno == "EBADF";
            if errno == "EMLINK" || (op == "link" && !ordering) {
                failed.push(format!("{op} {errno} {n}"));
            }
        }
    }
    failed
}

#[test]
fn a_file_the_trace_hard_linked_is_opened_through_its_new_name() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a"), vec![5u8; 1234]).unwrap();
    let trace = d.path().join("ln.jsonl");
    capture(&root, &trace, &["sh", "-c", "ln a b && cat b > c"], &root);
    let t = read_trace(&trace);
    let ops: Vec<_> = t.streams.values().flatten().cloned().collect();
    assert!(ops.contains(&op(OpKind::Link, "a -> b", 0, 0)), "{ops:#?}");
    // In the order the program ran (the link before the copy), nothing fails: the file
    // has two names, both given by the trace, and is read through the second.
    let it = replay_iteration(&trace, d.path(), "original");
    assert_eq!(it["errors"], 0, "{it}");
    assert_eq!(it["op_stats"]["link"]["count"], 1, "{it}");
    assert_eq!(it["op_stats"]["read"]["bytes"], 1234, "{it}");
    assert_eq!(it["op_stats"]["write"]["bytes"], 1234, "{it}");
    // As fast as possible too: the streams keep their recorded order on the names they
    // share, and no file is refused for the names the trace gave it.
    let it = replay_iteration(&trace, d.path(), "afap");
    assert_eq!(it["op_stats"]["link"]["count"], 1, "{it}");
    assert_eq!(link_failures(&it), Vec::<String>::new(), "{it}");
    assert_eq!(it["errors"], 0, "{it}");
}

#[test]
fn a_captured_git_commit_replays_its_hard_links() {
    need_tool("git", "--version");
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("repo");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("README"), "hello\n").unwrap();
    std::fs::write(root.join("src/main.c"), "int main(void) { return 0; }\n").unwrap();
    let trace = d.path().join("git.jsonl");
    // git writes each object to a temporary file and links it to its name.
    capture(
        &root,
        &trace,
        &[
            "sh",
            "-c",
            "git init -q && git add . && git -c user.name=n -c user.email=n@example.org commit -qm first",
        ],
        &root,
    );
    let links = ops_of(&read_trace(&trace), OpKind::Link);
    assert!(
        links.len() >= 3,
        "an object per file and tree, and the commit: {links:?}"
    );
    let it = replay_iteration(&trace, d.path(), "original");
    assert_eq!(it["errors"], 0, "{it}");
    assert_eq!(it["op_stats"]["link"]["count"], links.len(), "{it}");
    let it = replay_iteration(&trace, d.path(), "afap");
    assert_eq!(link_failures(&it), Vec::<String>::new(), "{it}");
    assert_eq!(it["errors"], 0, "{it}");
}

#[test]
fn times_file_system_queries_and_locks_are_captured_and_replayed() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("g"), vec![1u8; 100]).unwrap();
    let trace = d.path().join("Attrs.jsonl");
    // touch sets the times of a file it makes (by descriptor) and of one that exists
    // (by path); stat -f asks about the file system; flock takes a whole-file lock;
    // python takes and releases a byte-range lock.
    let script = "touch -d 2020-01-01 f; touch -d 2020-01-01 g; stat -f f > /dev/null; \
                  flock g true; python3 -c \"import fcntl, os; fd = os.open('g', os.O_RDWR); \
                  fcntl.lockf(fd, fcntl.LOCK_EX, 20, 10); fcntl.lockf(fd, fcntl.LOCK_UN, 20, 10); \
                  r, w = os.pipe(); os.splice(fd, w, 50, offset_src=30)\"";
    capture(&root, &trace, &["sh", "-c", script], &root);
    let t = read_trace(&trace);
    let ops: Vec<_> = t.streams.values().flatten().cloned().collect();
    let count = |k: OpKind, p: &str| ops.iter().filter(|o| o.0 == k && o.1 == p).count();
    assert_eq!(count(OpKind::Utime, "f"), 1, "{ops:#?}");
    assert_eq!(count(OpKind::Utime, "g"), 1, "{ops:#?}");
    assert_eq!(count(OpKind::Statfs, "f"), 1, "{ops:#?}");
    // splice from the file into a pipe reads the range it moved.
    assert!(ops.contains(&op(OpKind::Read, "g", 30, 50)), "{ops:#?}");
    // flock's whole file (released by its close), then lockf's 20 bytes at 10 (its length comes first).
    for want in [
        op(OpKind::Lock, "g", 0, 0),
        op(OpKind::Lock, "g", 10, 20),
        op(OpKind::Unlock, "g", 10, 20),
    ] {
        assert!(ops.contains(&want), "{want:?} in {ops:#?}");
    }
    // Every process ended with its files closed: flock's lock goes with its close when
    // flock exits, which python's lock then waits for.
    let handles = |k: OpKind| ops.iter().filter(|o| o.0 == k).count();
    assert_eq!(
        handles(OpKind::Open) + handles(OpKind::Create),
        handles(OpKind::Close),
        "{ops:#?}"
    );
    let it = replay_iteration(&trace, d.path(), "afap");
    assert_eq!(it["errors"], 0, "{it}");
    assert_eq!(it["op_stats"]["utime"]["count"], 2, "{it}");
    assert_eq!(it["op_stats"]["statfs"]["count"], 1, "{it}");
    assert_eq!(it["op_stats"]["lock"]["count"], 2, "{it}");
    assert_eq!(it["op_stats"]["unlock"]["count"], 1, "{it}");
}

#[test]
fn exclusive_creates_are_kept_and_a_taken_name_fails_as_expected_in_the_replay() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("old"), b"there before").unwrap();
    let trace = d.path().join("Excl.jsonl");
    // A lock file's dance: made exclusively, probed again (taken), and a probe of a file
    // that was there before the program.
    let script = "import os\n\
        x = os.O_CREAT | os.O_EXCL | os.O_WRONLY\n\
        fd = os.open('lock', x); os.write(fd, b'1'); os.close(fd)\n\
        for name in ('lock', 'old'):\n    \
            try: os.open(name, x)\n    \
            except FileExistsError: pass\n";
    capture(&root, &trace, &["python3", "-c", script], &root);
    let t = read_trace(&trace);
    let creates: Vec<_> = t
        .flags
        .iter()
        .filter(|(k, _, _)| *k == OpKind::Create)
        .map(|(_, p, f)| format!("{p} {f}"))
        .collect();
    assert_eq!(
        creates,
        ["lock excl", "lock excl", "old excl"],
        "{:#?}",
        t.flags
    );
    assert_eq!(t.files["old"], (FileKind::File, 12, true), "{:?}", t.files);
    let recs = naslab_trace::read_all(&trace, std::fs::File::open(&trace).unwrap()).unwrap();
    let expects: Vec<_> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Op(op, _) if op.kind == OpKind::Create => Some(op.expect),
            _ => None,
        })
        .collect();
    assert_eq!(
        expects,
        [None, Some(Expected::Exists), Some(Expected::Exists)]
    );
    let it = replay_iteration(&trace, d.path(), "afap");
    assert_eq!(it["errors"], 0, "{it}");
    assert_eq!(it["op_stats"]["create"]["count"], 3, "{it}");
    assert_eq!(it["op_stats"]["create"]["expected_failures"], 2, "{it}");
    // Replayed without `excl`, the probes would succeed: each is an error then.
    let plain = d.path().join("Plain.jsonl");
    std::fs::write(
        &plain,
        std::fs::read_to_string(&trace)
            .unwrap()
            .replace("\"flags\":\"excl\"", "\"flags\":\"write\""),
    )
    .unwrap();
    std::fs::create_dir(d.path().join("plain")).unwrap();
    let it = replay_iteration(&plain, &d.path().join("plain"), "afap");
    assert_eq!(it["errors"], 2, "{it}");
}
