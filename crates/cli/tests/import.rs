//! `naslab import`: strace logs, dbench loadfiles, fio iologs and Process Monitor CSV,
//! each written here from its format's documentation, imported, then replayed with the
//! null backend: the replay runs exactly the ops the input holds.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{naslab, need_tool, run_err, run_ok, text};
use naslab_trace::{OpKind, Record};

/// Imports `body` (written to a file) and returns the trace path and what naslab said.
fn import(dir: &Path, format: &str, name: &str, body: &str, extra: &[&str]) -> (PathBuf, String) {
    let input = dir.join(name);
    std::fs::write(&input, body).unwrap();
    let out = dir.join(format!("{format}.jsonl"));
    let res = run_ok(
        naslab()
            .args(["import", format])
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .args(extra),
    );
    (out, text(&res.stderr))
}

/// Replays a trace with the null backend; returns ops per kind as the run counted them.
fn replay_null(dir: &Path, trace: &Path) -> BTreeMap<String, u64> {
    let out = dir.join("results");
    let res = run_ok(
        naslab()
            .args(["run", "--backend", "null", "--json", "--out"])
            .arg(&out)
            .arg(trace),
    );
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    let it = &run["workloads"][0]["iterations"][0];
    let mut m = BTreeMap::new();
    for k in OpKind::ALL {
        let n = it["op_stats"][k.name()]["count"].as_u64().unwrap_or(0);
        if n > 0 {
            m.insert(k.name().to_string(), n);
        }
    }
    assert_eq!(it["ops"].as_u64(), Some(m.values().sum()));
    assert_eq!(it["errors"].as_u64(), Some(0), "{it}");
    m
}

fn counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect()
}

/// The ops of a trace, in its order.
fn ops_of(trace: &Path) -> Vec<naslab_trace::Op> {
    naslab_trace::read_all(trace, std::fs::File::open(trace).unwrap())
        .unwrap()
        .into_iter()
        .filter_map(|r| match r {
            Record::Op(op, _) => Some(op),
            _ => None,
        })
        .collect()
}

/// `naslab import` printed `N  WHY` under "left out".
fn skipped(said: &str, why: &str) -> u64 {
    said.lines()
        .find(|l| l.contains(why))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// path → (size, exists), from a trace's file lines.
type Files = BTreeMap<String, (u64, bool)>;

/// The trace's file set, and (stream, t_us) of every op.
fn files_and_times(trace: &Path) -> (Files, Vec<(u32, u64)>) {
    let recs = naslab_trace::read_all(trace, std::fs::File::open(trace).unwrap()).unwrap();
    let mut files = BTreeMap::new();
    let mut times = Vec::new();
    for r in recs {
        match r {
            Record::File(f) => {
                files.insert(f.path, (f.size, f.exists));
            }
            Record::Op(op, _) => times.push((op.stream, op.t_us)),
            Record::Header(_) => {}
        }
    }
    (files, times)
}

const STRACE_LOG: &str = r#"100 1700000000.000000 openat(AT_FDCWD</work/app>, "data/in.bin", O_RDONLY|O_CLOEXEC) = 3</work/app/data/in.bin> <0.000010>
100 1700000000.000100 fstat(3</work/app/data/in.bin>, {st_mode=S_IFREG|0644, st_size=10000, ...}) = 0 <0.000005>
100 1700000000.000200 read(3</work/app/data/in.bin>, "abc"..., 4096) = 4096 <0.000010>
100 1700000000.000300 read(3</work/app/data/in.bin>,  <unfinished ...>
101 1700000000.000310 openat(AT_FDCWD</work/app>, "/usr/lib/libc.so.6", O_RDONLY|O_CLOEXEC) = 4</usr/lib/libc.so.6> <0.000010>
100 1700000000.000400 <... read resumed>"def"..., 4096) = 4096 <0.000100>
100 1700000000.000500 lseek(3</work/app/data/in.bin>, 0, SEEK_SET) = 0 <0.000002>
100 1700000000.000600 pread64(3</work/app/data/in.bin>, "x"..., 512, 8192) = 512 <0.000010>
100 1700000000.000700 close(3</work/app/data/in.bin>) = 0 <0.000002>
101 1700000000.000800 mkdir("out", 0755) = 0 <0.000020>
101 1700000000.000900 openat(AT_FDCWD</work/app>, "out/log.txt", O_WRONLY|O_CREAT|O_APPEND, 0644) = 5</work/app/out/log.txt> <0.000030>
101 1700000000.001000 writev(5</work/app/out/log.txt>, [{iov_base="hello ", iov_len=6}, {iov_base="world\n", iov_len=6}], 2) = 12 <0.000010>
101 1700000000.001100 write(5</work/app/out/log.txt>, "more\n", 5) = 5 <0.000010>
101 1700000000.001200 fdatasync(5</work/app/out/log.txt>) = 0 <0.000100>
101 1700000000.001300 ftruncate(5</work/app/out/log.txt>, 100) = 0
101 1700000000.001400 close(5</work/app/out/log.txt>) = 0 <0.000002>
101 1700000000.001500 rename("/work/app/out/log.txt", "/work/app/out/log.old") = 0 <0.000010>
101 1700000000.001600 newfstatat(AT_FDCWD</work/app>, "out/log.old", {st_mode=S_IFREG|0644, st_size=100, ...}, 0) = 0 <0.000005>
101 1700000000.001700 newfstatat(AT_FDCWD</work/app>, "out/none", 0x7ffd12345678, 0) = -1 ENOENT (No such file or directory) <0.000005>
101 1700000000.001800 openat(AT_FDCWD</work/app>, "data", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 6</work/app/data> <0.000010>
101 1700000000.001900 getdents64(6</work/app/data>, 0x5555 /* 3 entries */, 32768) = 80 <0.000010>
101 1700000000.002000 getdents64(6</work/app/data>, 0x5555 /* 0 entries */, 32768) = 0 <0.000010>
101 1700000000.002100 close(6</work/app/data>) = 0 <0.000002>
101 1700000000.002200 unlink("/work/app/out/log.old") = 0 <0.000010>
101 1700000000.002300 unlinkat(AT_FDCWD</work/app>, "out", AT_REMOVEDIR) = 0 <0.000010>
101 1700000000.002400 mmap(NULL, 10000, PROT_READ, MAP_SHARED, 7</work/app/data/in.bin>, 0) = 0x7f0000000000 <0.000010>
101 1700000000.002500 +++ exited with 0 +++
"#;

#[test]
fn an_strace_log_imports_with_every_op_and_replays() {
    let d = tempfile::tempdir().unwrap();
    let (trace, said) = import(
        d.path(),
        "strace",
        "app.log",
        STRACE_LOG,
        &["--root", "/work/app"],
    );
    let expected = counts(&[
        ("open", 1),
        ("create", 1),
        ("close", 2),
        ("read", 3),
        ("write", 2),
        ("fsync", 1),
        ("truncate", 1),
        ("stat", 3),
        ("mkdir", 1),
        ("readdir", 1),
        ("unlink", 2),
        ("rename", 1),
    ]);
    assert_eq!(replay_null(d.path(), &trace), expected, "{said}");
    assert_eq!(skipped(&said, "ops on files outside the root"), 1, "{said}");
    // The stat that found nothing is kept as a stat expected to find nothing.
    assert_eq!(
        skipped(&said, "failed calls (newfstatat ENOENT)"),
        0,
        "{said}"
    );
    let stats: Vec<_> = ops_of(&trace)
        .into_iter()
        .filter(|o| o.kind == OpKind::Stat)
        .map(|o| o.expect)
        .collect();
    assert_eq!(
        stats,
        [None, None, Some(naslab_trace::Expected::NotFound)],
        "{said}"
    );
    assert_eq!(skipped(&said, "mmap of a file under the root"), 1, "{said}");
    assert!(said.contains("memory-mapped (data/in.bin)"), "{said}");
    let (files, times) = files_and_times(&trace);
    // The size strace's fstat saw, not just the bytes read.
    assert_eq!(files["data/in.bin"], (10000, true));
    assert_eq!(files["out/log.txt"], (0, false));
    assert_eq!(files["out"], (0, false));
    // Each thread is a stream; times are µs from the log's first line, and a call split
    // across lines keeps the time it began.
    assert_eq!(
        times,
        vec![
            (0, 0),
            (0, 100),
            (0, 200),
            (0, 300),
            (0, 600),
            (0, 700),
            (1, 800),
            (1, 900),
            (1, 1000),
            (1, 1100),
            (1, 1200),
            (1, 1300),
            (1, 1400),
            (1, 1500),
            (1, 1600),
            (1, 1700),
            (1, 1900),
            (1, 2200),
            (1, 2300),
        ]
    );
}

/// A process that ends holding a locked file, and a thread of it that ended first, and
/// a second process that locks the file after them.
const EXIT_LOG: &str = r#"200 1700000000.000000 clone(child_stack=0x7f0000001000, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM) = 201 <0.000010>
200 1700000000.000100 openat(AT_FDCWD</work/app>, "a", O_RDWR) = 3</work/app/a> <0.000010>
201 1700000000.000200 pread64(3</work/app/a>, "x"..., 10, 0) = 10 <0.000010>
201 1700000000.000300 +++ exited with 0 +++
200 1700000000.000400 flock(3</work/app/a>, LOCK_EX) = 0 <0.000010>
200 1700000000.000500 +++ killed by SIGTERM +++
300 1700000000.000600 openat(AT_FDCWD</work/app>, "a", O_RDWR) = 3</work/app/a> <0.000010>
300 1700000000.000700 flock(3</work/app/a>, LOCK_EX) = 0 <0.000010>
"#;

#[test]
fn files_a_process_left_open_close_when_its_last_thread_ends() {
    let d = tempfile::tempdir().unwrap();
    let (trace, said) = import(
        d.path(),
        "strace",
        "exit.log",
        EXIT_LOG,
        &["--root", "/work/app"],
    );
    let ops: Vec<(u32, u64, &str)> = ops_of(&trace)
        .iter()
        .map(|o| (o.stream, o.t_us, o.kind.name()))
        .collect();
    // The thread's end closes nothing (its process still holds the file); the process's
    // end closes the file for both, releasing the lock before the next process takes
    // it. The last process is still running when the log ends: its file stays open.
    assert_eq!(
        ops,
        vec![
            (0, 100, "open"),
            (1, 200, "open"),
            (1, 200, "read"),
            (0, 400, "lock"),
            (0, 500, "close"),
            (1, 500, "close"),
            (2, 600, "open"),
            (2, 700, "lock"),
        ],
        "{said}"
    );
    // Replayed on a directory as fast as it goes, the second process waits for the
    // first one's close, so its lock is granted: a held lock would fail it (EAGAIN).
    let target = d.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let res = run_ok(
        naslab()
            .args([
                "run",
                "--json",
                "--tolerate-errors",
                "--pace",
                "afap",
                "--target",
            ])
            .arg(&target)
            .arg("--out")
            .arg(d.path().join("results"))
            .arg(&trace),
    );
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    let it = &run["workloads"][0]["iterations"][0];
    assert_eq!(it["op_stats"]["lock"]["count"], 2, "{it}");
    assert_eq!(it["op_stats"]["close"]["count"], 2, "{it}");
    assert_eq!(it["errors"], 0, "{it}");
    // It follows both streams of the first process, which ended at the same time.
    assert_eq!(it["ordering"]["sequence_edges"], 2, "{it}");
}

#[test]
fn a_bad_strace_line_is_named_by_its_number() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("bad.log");
    let body = format!(
        "{}this is not strace output\n",
        &STRACE_LOG[..STRACE_LOG.find("100 1700000000.000200").unwrap()]
    );
    std::fs::write(&input, body).unwrap();
    let err = run_err(
        naslab()
            .args(["import", "strace"])
            .arg(&input)
            .arg("-o")
            .arg(d.path().join("t.jsonl")),
    );
    assert!(err.contains("bad.log:3:"), "{err}");
    assert!(err.contains("strace -f -ttt -T -yy"), "{err}");
}

/// Every NetBench command dbench knows, with time stamps, as dbench's loadfiles have them.
const LOADFILE: &str = r#"# A NetBench excerpt: time, command, arguments, the status the call must give.
0.000 Deltree "\clients\client1" NT_STATUS_OK
0.001 Mkdir "\clients" NT_STATUS_OK
0.002 NTCreateX "\clients\client1" 0x1 0x2 100 NT_STATUS_OK
0.003 Close 100 NT_STATUS_OK
0.004 NTCreateX "\clients\client1\doc.txt" 0x40 0x5 101 NT_STATUS_OK
0.005 WriteX 101 0 65536 65536 NT_STATUS_OK
0.006 WriteX 101 65536 1000 1000 NT_STATUS_OK
0.007 Flush 101 NT_STATUS_OK
0.008 QUERY_FILE_INFORMATION 101 1005 NT_STATUS_OK
0.009 SET_FILE_INFORMATION 101 1004 NT_STATUS_OK
0.010 LockX 101 0 1 NT_STATUS_OK
0.011 UnlockX 101 0 1 NT_STATUS_OK
0.012 ReadX 101 0 4096 4096 NT_STATUS_OK
0.013 Close 101 NT_STATUS_OK
0.014 QUERY_PATH_INFORMATION "\clients\client1\doc.txt" 1004 NT_STATUS_OK
0.015 QUERY_FS_INFORMATION 259 NT_STATUS_OK
0.016 FIND_FIRST "\clients\client1\*" 260 1366 1 NT_STATUS_OK
0.017 NTCreateX "\clients\client1\missing.txt" 0x40 0x1 102 NT_STATUS_OBJECT_NAME_NOT_FOUND
0.018 Rename "\clients\client1\doc.txt" "\clients\client1\doc.bak" NT_STATUS_OK
0.019 Mkdir "\clients\client1\sub" NT_STATUS_OK
0.020 NTCreateX "\clients\client1\sub\a.dat" 0x40 0x2 103 NT_STATUS_OK
0.021 WriteX 103 0 100 100 NT_STATUS_OK
0.022 Close 103 NT_STATUS_OK
0.023 Unlink "\clients\client1\doc.bak" 0x6 NT_STATUS_OK
0.024 Mkdir "\clients\client1\empty" NT_STATUS_OK
0.025 Rmdir "\clients\client1\empty" NT_STATUS_OK
0.026 Deltree "\clients\client1" NT_STATUS_OK
"#;

#[test]
fn a_dbench_loadfile_imports_one_stream_per_client_and_replays() {
    let d = tempfile::tempdir().unwrap();
    let (trace, said) = import(
        d.path(),
        "dbench",
        "client.txt",
        LOADFILE,
        &["--clients", "2"],
    );
    // Per client: mkdir of its directory, sub and empty (and \clients once); two
    // creates; three writes; Flush; QUERY_FILE/PATH_INFORMATION as stats; ReadX; two
    // closes of files; FIND_FIRST as readdir; Rename; Unlink, Rmdir and the Deltree's
    // three unlinks (sub\a.dat, sub, the client's directory).
    let expected = counts(&[
        ("mkdir", 7),
        ("create", 4),
        ("write", 6),
        ("fsync", 2),
        ("stat", 4),
        ("read", 2),
        ("close", 4),
        ("readdir", 2),
        ("rename", 2),
        ("unlink", 10),
        // SET_FILE_INFORMATION's basic information sets the times, LockX and UnlockX
        // lock and unlock, QUERY_FS_INFORMATION asks the file system, and the
        // NTCreateX that must fail is an open expected to fail.
        ("utime", 2),
        ("lock", 2),
        ("unlock", 2),
        ("statfs", 2),
        ("open", 2),
    ]);
    assert_eq!(replay_null(d.path(), &trace), expected, "{said}");
    let ops = ops_of(&trace);
    let failing: Vec<&naslab_trace::Op> = ops.iter().filter(|o| o.expect.is_some()).collect();
    assert_eq!(failing.len(), 2);
    assert!(
        failing
            .iter()
            .all(|o| o.kind == OpKind::Open && o.expect == Some(naslab_trace::Expected::NotFound))
    );
    let lock = ops.iter().find(|o| o.kind == OpKind::Lock).unwrap();
    assert_eq!((lock.offset, lock.len, lock.flags.is_empty()), (0, 1, true));
    for (why, n) in [
        ("Close of a directory handle", 2),
        ("Deltree of a tree the loadfile never made", 2),
    ] {
        assert_eq!(skipped(&said, why), n, "{why}\n{said}");
    }
    let (files, times) = files_and_times(&trace);
    assert!(files.contains_key("clients/client2/sub/a.dat"));
    assert_eq!(files["clients"], (0, false));
    // dbench's time stamps carry over (in µs), the same for both clients.
    let first: Vec<u64> = times.iter().filter(|t| t.0 == 0).map(|t| t.1).collect();
    let second: Vec<u64> = times.iter().filter(|t| t.0 == 1).map(|t| t.1).collect();
    assert_eq!(first[0], 1000);
    assert_eq!(first[1], 2000);
    assert_eq!(*first.last().unwrap(), 26000);
    assert_eq!(second[0], 2000);
}

#[test]
fn a_bad_dbench_line_is_named_by_its_number() {
    let d = tempfile::tempdir().unwrap();
    let input = d.path().join("client.txt");
    std::fs::write(
        &input,
        "0.0 Mkdir \"\\a\" NT_STATUS_OK\n0.1 ReadX 12 zero 4096 4096 NT_STATUS_OK\n",
    )
    .unwrap();
    let err = run_err(
        naslab()
            .args(["import", "dbench"])
            .arg(&input)
            .arg("-o")
            .arg(d.path().join("t.jsonl")),
    );
    assert!(err.contains("client.txt:2:"), "{err}");
}

const IOLOG_V2: &str = "fio version 2 iolog
/data/job/f1 add
/data/job/f2 add
/data/job/f1 open
/data/job/f2 open
/data/job/f1 write 0 4096
/data/job/f1 wait 1000 0
/data/job/f1 read 4096 4096
/data/job/f2 write 8192 512
/data/job/f1 sync 0 0
/data/job/f2 datasync 0 0
/data/job/f2 trim 0 4096
/data/job/f1 close
/data/job/f2 close
";

const IOLOG_V3: &str = "fio version 3 iolog
0 /tmp/x/f add
10 /tmp/x/f open
20 /tmp/x/f read 0 8192
5000 /tmp/x/f read 8192 8192
9000 /tmp/x/f write 0 8192
9500 /tmp/x/f close
";

#[test]
fn fio_iologs_of_versions_2_and_3_import_and_replay() {
    let d = tempfile::tempdir().unwrap();
    let (trace, said) = import(
        d.path(),
        "fio-iolog",
        "v2.log",
        IOLOG_V2,
        &["--root", "/data/job"],
    );
    let expected = counts(&[
        ("open", 2),
        ("write", 2),
        ("read", 1),
        ("fsync", 2),
        ("close", 2),
    ]);
    assert_eq!(replay_null(d.path(), &trace), expected, "{said}");
    assert_eq!(skipped(&said, "trim"), 1, "{said}");
    let (files, times) = files_and_times(&trace);
    // fio lays its files out first: each is as large as its furthest I/O.
    assert_eq!(files["f1"], (8192, true));
    assert_eq!(files["f2"], (8704, true));
    // The wait moves the clock on by 1000 µs.
    assert_eq!(
        times.iter().map(|t| t.1).collect::<Vec<_>>(),
        vec![0, 0, 0, 1000, 1000, 1000, 1000, 1000, 1000]
    );

    let d = tempfile::tempdir().unwrap();
    let (trace, said) = import(d.path(), "fio-iolog", "v3.log", IOLOG_V3, &[]);
    let expected = counts(&[("open", 1), ("read", 2), ("write", 1), ("close", 1)]);
    assert_eq!(replay_null(d.path(), &trace), expected, "{said}");
    let (files, times) = files_and_times(&trace);
    assert_eq!(files["tmp/x/f"], (16384, true));
    assert_eq!(
        times.iter().map(|t| t.1).collect::<Vec<_>>(),
        vec![10, 20, 5000, 9000, 9500]
    );

    let input = d.path().join("bad.log");
    std::fs::write(&input, "fio version 3 iolog\n0 /f add\n5 /f wait 100 0\n").unwrap();
    let err = run_err(
        naslab()
            .args(["import", "fio-iolog"])
            .arg(&input)
            .arg("-o")
            .arg(d.path().join("t.jsonl")),
    );
    assert!(err.contains("bad.log:3:") && err.contains("wait"), "{err}");
}

/// A Process Monitor export of a document save: read the old file, write a temporary
/// one, delete the old one and rename the new one in its place.
const PROCMON: &str = r#""Time of Day","Process Name","PID","Operation","Path","Result","Detail"
"9:00:00.0000000 AM","WINWORD.EXE","1200","CreateFile","C:\Users\me\Docs\report.docx","SUCCESS","Desired Access: Generic Read, Disposition: Open, Options: Synchronous IO Non-Alert, Non-Directory File, Attributes: n/a, ShareMode: Read, Write, AllocationSize: n/a, OpenResult: Opened"
"9:00:00.0001000 AM","WINWORD.EXE","1200","ReadFile","C:\Users\me\Docs\report.docx","SUCCESS","Offset: 0, Length: 32,768, Priority: Normal"
"9:00:00.0002000 AM","WINWORD.EXE","1200","ReadFile","C:\Users\me\Docs\report.docx","END OF FILE","Offset: 32,768, Length: 32,768"
"9:00:00.0003000 AM","WINWORD.EXE","1200","QueryStandardInformationFile","C:\Users\me\Docs\report.docx","SUCCESS","AllocationSize: 36,864, EndOfFile: 32,768, NumberOfLinks: 1, DeletePending: False, Directory: False"
"9:00:00.0003500 AM","Explorer.EXE","880","ReadFile","C:\Users\me\Docs\report.docx","SUCCESS","Offset: 0, Length: 4,096"
"9:00:00.0003600 AM","WINWORD.EXE","1200","ReadFile","C:\Windows\Fonts\arial.ttf","SUCCESS","Offset: 0, Length: 4,096"
"9:00:00.0003700 AM","WINWORD.EXE","1200","RegQueryValue","HKCU\Software\Microsoft\Office\Word","SUCCESS","Type: REG_DWORD, Length: 4, Data: 1"
"9:00:00.0004000 AM","WINWORD.EXE","1200","CloseFile","C:\Users\me\Docs\report.docx","SUCCESS",""
"9:00:01.0000000 AM","WINWORD.EXE","1200","CreateFile","C:\Users\me\Docs\~WRD0001.tmp","SUCCESS","Desired Access: Generic Read/Write, Disposition: Create, Options: Sequential Access, Synchronous IO Non-Alert, Non-Directory File, Attributes: N, ShareMode: None, AllocationSize: 0, OpenResult: Created"
"9:00:01.0001000 AM","WINWORD.EXE","1200","SetEndOfFileInformationFile","C:\Users\me\Docs\~WRD0001.tmp","SUCCESS","EndOfFile: 40,000"
"9:00:01.0002000 AM","WINWORD.EXE","1200","WriteFile","C:\Users\me\Docs\~WRD0001.tmp","SUCCESS","Offset: 0, Length: 40,000, Priority: Normal"
"9:00:01.0003000 AM","WINWORD.EXE","1200","CloseFile","C:\Users\me\Docs\~WRD0001.tmp","SUCCESS",""
"9:00:01.0004000 AM","WINWORD.EXE","1200","CreateFile","C:\Users\me\Docs\report.docx","SUCCESS","Desired Access: Read Attributes, Delete, Synchronize, Disposition: Open, Options: Synchronous IO Non-Alert, Non-Directory File, Open Reparse Point, Attributes: n/a, ShareMode: Read, Write, Delete, AllocationSize: n/a, OpenResult: Opened"
"9:00:01.0005000 AM","WINWORD.EXE","1200","SetDispositionInformationFile","C:\Users\me\Docs\report.docx","SUCCESS","Delete: True"
"9:00:01.0006000 AM","WINWORD.EXE","1200","CloseFile","C:\Users\me\Docs\report.docx","SUCCESS",""
"9:00:01.0007000 AM","WINWORD.EXE","1200","CreateFile","C:\Users\me\Docs\~WRD0001.tmp","SUCCESS","Desired Access: Read Attributes, Delete, Synchronize, Disposition: Open, Options: Synchronous IO Non-Alert, Non-Directory File, Attributes: n/a, ShareMode: Read, Write, Delete, AllocationSize: n/a, OpenResult: Opened"
"9:00:01.0008000 AM","WINWORD.EXE","1200","SetRenameInformationFile","C:\Users\me\Docs\~WRD0001.tmp","SUCCESS","ReplaceIfExists: True, FileName: C:\Users\me\Docs\report.docx"
"9:00:01.0009000 AM","WINWORD.EXE","1200","CloseFile","C:\Users\me\Docs\~WRD0001.tmp","SUCCESS",""
"9:00:02.0000000 AM","WINWORD.EXE","1200","CreateFile","C:\Users\me\Docs\Archive","SUCCESS","Desired Access: Read Data/List Directory, Synchronize, Disposition: Create, Options: Directory File, Synchronous IO Non-Alert, Attributes: N, ShareMode: Read, Write, AllocationSize: 0, OpenResult: Created"
"9:00:02.0001000 AM","WINWORD.EXE","1200","CloseFile","C:\Users\me\Docs\Archive","SUCCESS",""
"9:00:03.0000000 AM","WINWORD.EXE","1200","CreateFile","C:\Users\me\Docs\Pics","SUCCESS","Desired Access: Read Data/List Directory, Synchronize, Disposition: Open, Options: Directory File, Synchronous IO Non-Alert, Attributes: n/a, ShareMode: Read, Write, AllocationSize: n/a, OpenResult: Opened"
"9:00:03.0001000 AM","WINWORD.EXE","1200","QueryDirectory","C:\Users\me\Docs\Pics","SUCCESS","Filter: *, 1: ., 2: .., 3: a.jpg"
"9:00:03.0002000 AM","WINWORD.EXE","1200","QueryDirectory","C:\Users\me\Docs\Pics","SUCCESS","4: b.jpg"
"9:00:03.0003000 AM","WINWORD.EXE","1200","QueryDirectory","C:\Users\me\Docs\Pics","NO MORE FILES",""
"9:00:03.0004000 AM","WINWORD.EXE","1200","CloseFile","C:\Users\me\Docs\Pics","SUCCESS",""
"9:00:03.0005000 AM","WINWORD.EXE","1200","CreateFile","C:\Users\me\Docs\Pics","SUCCESS","Desired Access: Read Data/List Directory, Synchronize, Disposition: Open, Options: Directory File, Synchronous IO Non-Alert, Attributes: n/a, ShareMode: Read, Write, AllocationSize: n/a, OpenResult: Opened"
"9:00:03.0006000 AM","WINWORD.EXE","1200","QueryDirectory","C:\Users\me\Docs\Pics","SUCCESS","Filter: *, 1: ., 2: .., 3: a.jpg, 4: b.jpg"
"9:00:03.0007000 AM","WINWORD.EXE","1200","CloseFile","C:\Users\me\Docs\Pics","SUCCESS",""
"#;

#[test]
fn a_procmon_export_imports_for_one_process_under_a_windows_root_and_replays() {
    let d = tempfile::tempdir().unwrap();
    let (trace, said) = import(
        d.path(),
        "procmon",
        "save.csv",
        PROCMON,
        &[
            "--process",
            "winword.exe",
            "--windows-root",
            r"C:\Users\me\Docs",
        ],
    );
    let expected = counts(&[
        ("open", 1),
        ("read", 1),
        ("close", 2),
        ("create", 1),
        ("truncate", 1),
        ("write", 1),
        ("stat", 4),
        ("unlink", 1),
        ("rename", 1),
        ("mkdir", 1),
        ("readdir", 2),
    ]);
    assert_eq!(replay_null(d.path(), &trace), expected, "{said}");
    for (why, n) in [
        ("events of other processes", 1),
        ("file events outside the Windows root", 1),
        ("ReadFile events that did not succeed", 1),
        ("QueryStandardInformationFile events (not imported)", 1),
        ("RegQueryValue events (not imported)", 1),
        ("QueryDirectory events continuing a listing", 1),
        ("QueryDirectory events that did not succeed", 1),
    ] {
        assert_eq!(skipped(&said, why), n, "{why}\n{said}");
    }
    let (files, times) = files_and_times(&trace);
    assert_eq!(files["report.docx"], (32768, true));
    assert_eq!(files["~WRD0001.tmp"], (0, false));
    assert_eq!(files["Archive"], (0, false));
    // Time of day, in µs since midnight: 9 AM is 32,400 s.
    assert_eq!(times[0], (0, 32_400_000_000));
    assert_eq!(times[1], (0, 32_400_000_100));

    let input = d.path().join("bad.csv");
    let bad = PROCMON.replacen("Offset: 0, Length: 32,768", "Offset: zero", 1);
    std::fs::write(&input, bad).unwrap();
    let err = run_err(
        naslab()
            .args(["import", "procmon"])
            .arg(&input)
            .arg("-o")
            .arg(d.path().join("t.jsonl")),
    );
    assert!(err.contains("bad.csv:3:"), "{err}");
}

/// fio's own iolog of a random read-write job imports with as many reads and writes as
/// fio reports having issued.
#[test]
fn an_iolog_fio_wrote_imports_with_the_ios_fio_counted() {
    need_tool("fio", "--version");
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("job.iolog");
    let res = run_ok(
        std::process::Command::new("fio")
            .args([
                "--name=mixed",
                "--rw=randrw",
                "--bs=4k",
                "--size=512k",
                "--ioengine=psync",
                "--output-format=json",
            ])
            .arg(format!("--filename={}", d.path().join("data").display()))
            .arg(format!("--write_iolog={}", log.display())),
    );
    let fio: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    let job = &fio["jobs"][0];
    let (reads, writes) = (
        job["read"]["total_ios"].as_u64().unwrap(),
        job["write"]["total_ios"].as_u64().unwrap(),
    );
    assert_eq!(reads + writes, 128);
    let out = d.path().join("fio.jsonl");
    run_ok(
        naslab()
            .args(["import", "fio-iolog"])
            .arg(&log)
            .arg("-o")
            .arg(&out)
            .arg("--root")
            .arg(d.path()),
    );
    let got = replay_null(d.path(), &out);
    assert_eq!(got.get("read").copied().unwrap_or(0), reads);
    assert_eq!(got.get("write").copied().unwrap_or(0), writes);
    let (files, _) = files_and_times(&out);
    assert_eq!(files["data"], (512 << 10, true));
}

/// The `ops: open N, create N, ...` line `naslab import` printed, as a map.
fn printed_ops(said: &str) -> BTreeMap<String, u64> {
    let line = said
        .lines()
        .find_map(|l| l.strip_prefix("ops: "))
        .unwrap_or_else(|| panic!("no ops line in\n{said}"));
    line.split(", ")
        .map(|kv| {
            let (k, n) = kv.split_once(' ').unwrap();
            (k.to_string(), n.parse().unwrap())
        })
        .collect()
}

#[test]
fn dbenchs_own_loadfile_imports_with_the_counts_its_lines_give() {
    use naslab_test_support::{cannot_run, tool_or_skip};
    if tool_or_skip("dbench").is_none() {
        return;
    }
    let shipped = Path::new("/usr/share/dbench/client.txt");
    let Ok(body) = std::fs::read_to_string(shipped) else {
        cannot_run(
            "dbench's loadfile /usr/share/dbench/client.txt is missing (apt-get install dbench)",
        );
        return;
    };
    // Its first 40,000 lines: every kind of call, failures the loadfile expects, locks.
    let body: String = body.lines().take(40_000).flat_map(|l| [l, "\n"]).collect();
    let d = tempfile::tempdir().unwrap();
    let (trace, said) = import(d.path(), "dbench", "client.txt", &body, &[]);

    // Calls by name and by whether the loadfile expects them to succeed, counted from
    // the lines themselves.
    let mut calls: BTreeMap<(String, bool), u64> = BTreeMap::new();
    for l in body.lines() {
        let words: Vec<&str> = l.split_whitespace().collect();
        let (Some(name), Some(status)) = (words.first(), words.last()) else {
            continue;
        };
        *calls
            .entry((name.to_string(), *status == "NT_STATUS_OK"))
            .or_default() += 1;
    }
    let ok = |name: &str| calls.get(&(name.to_string(), true)).copied().unwrap_or(0);
    let failing = |name: &str| calls.get(&(name.to_string(), false)).copied().unwrap_or(0);
    assert!(ok("ReadX") > 1000 && ok("WriteX") > 1000 && ok("LockX") > 0);

    let ops = printed_ops(&said);
    let op = |k: &str| ops.get(k).copied().unwrap_or(0);
    assert_eq!(ops, replay_null(d.path(), &trace), "{said}");
    assert_eq!(op("read"), ok("ReadX"), "{said}");
    assert_eq!(op("write"), ok("WriteX"), "{said}");
    assert_eq!(op("fsync"), ok("Flush"), "{said}");
    assert_eq!(op("rename"), ok("Rename"), "{said}");
    assert_eq!(op("unlink"), ok("Unlink"), "{said}");
    // Each successful NTCreateX opens, creates, or (for a directory) stats or makes it;
    // one of a file the stream has open already is folded into the open handle, and so
    // is its Close.
    let folded = skipped(&said, "opens of a file the stream had open already");
    let dir_closes = skipped(&said, "Close of a directory handle");
    let ops = ops_of(&trace);
    let expected = |k: OpKind| {
        ops.iter()
            .filter(|o| o.kind == k && o.expect == Some(naslab_trace::Expected::NotFound))
            .count() as u64
    };
    assert_eq!(
        op("open") - expected(OpKind::Open) + op("create") + op("stat") - expected(OpKind::Stat)
            + op("mkdir")
            + folded,
        ok("NTCreateX") + ok("QUERY_PATH_INFORMATION") + ok("QUERY_FILE_INFORMATION") + ok("Mkdir"),
        "{said}"
    );
    // Every Close is somewhere: a close op, a directory handle's, or one of a handle
    // kept open for another open of the same file.
    let merged_closes = skipped(&said, "closes of a handle kept open");
    assert!(merged_closes > 0, "{said}");
    assert_eq!(
        op("close") + dir_closes + merged_closes,
        ok("Close"),
        "{said}"
    );
    // The calls the trace format once had no op for are there, one op each.
    assert_eq!(op("lock"), ok("LockX"), "{said}");
    assert_eq!(op("unlock"), ok("UnlockX"), "{said}");
    assert_eq!(op("statfs"), ok("QUERY_FS_INFORMATION"), "{said}");
    // dbench's loadfile sets only the basic information (times) of a file.
    assert_eq!(op("utime"), ok("SET_FILE_INFORMATION"), "{said}");
    // The calls that must fail are ops expected to fail: NTCreateX opens, stats of
    // QUERY_PATH_INFORMATION, and FIND_FIRSTs of a pattern that match nothing, which are
    // the listings they are (a listing cannot fail on POSIX).
    assert!(failing("NTCreateX") > 0 && failing("QUERY_PATH_INFORMATION") > 0);
    assert_eq!(expected(OpKind::Open), failing("NTCreateX"), "{said}");
    assert_eq!(
        expected(OpKind::Stat),
        failing("QUERY_PATH_INFORMATION"),
        "{said}"
    );
    let no_match = skipped(&said, "FIND_FIRST patterns that match nothing");
    assert_eq!(no_match, failing("FIND_FIRST"), "{said}");
    assert_eq!(
        op("readdir"),
        ok("FIND_FIRST") + failing("FIND_FIRST"),
        "{said}"
    );
    // Nothing else is left out: the lines under "left out" are the Closes above and
    // the Deltree of a tree not made yet.
    let left_out: u64 = said
        .split("left out:")
        .nth(1)
        .and_then(|rest| rest.split("added or changed").next())
        .map(|block| {
            block
                .lines()
                .filter_map(|l| l.split_whitespace().next()?.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0);
    let deltree = skipped(&said, "Deltree of a tree the loadfile never made");
    assert_eq!(left_out, dir_closes + merged_closes + deltree, "{said}");
}

/// A directory open as recent Process Monitor versions write it (`Options: Directory,
/// ...`), a file inside it, and one folder spelled in two cases.
const PROCMON_DIRS: &str = r#""Time of Day","Process Name","PID","Operation","Path","Result","Detail"
"9:00:00.0000000 AM","app.exe","7","CreateFile","C:\W\Old","SUCCESS","Desired Access: Read Data/List Directory, Synchronize, Disposition: Open, Options: Directory, Synchronous IO Non-Alert, Attributes: n/a, ShareMode: Read, Write, Delete, AllocationSize: n/a, OpenResult: Opened"
"9:00:00.0001000 AM","app.exe","7","CloseFile","C:\W\Old","SUCCESS",""
"9:00:00.0002000 AM","app.exe","7","CreateFile","C:\W\Old\a.txt","SUCCESS","Desired Access: Generic Read, Disposition: Open, Options: Synchronous IO Non-Alert, Non-Directory File, Attributes: n/a, ShareMode: Read, AllocationSize: n/a, OpenResult: Opened"
"9:00:00.0003000 AM","app.exe","7","ReadFile","C:\W\Old\a.txt","SUCCESS","Offset: 0, Length: 100"
"9:00:00.0004000 AM","app.exe","7","CloseFile","C:\W\Old\a.txt","SUCCESS",""
"9:00:01.0000000 AM","app.exe","7","CreateFile","C:\W\Sub Folder\b.txt","SUCCESS","Desired Access: Generic Read, Disposition: Open, Options: Synchronous IO Non-Alert, Non-Directory File, Attributes: n/a, ShareMode: Read, AllocationSize: n/a, OpenResult: Opened"
"9:00:01.0001000 AM","app.exe","7","ReadFile","C:\W\SUB FOLDER\B.TXT","SUCCESS","Offset: 0, Length: 200"
"9:00:01.0002000 AM","app.exe","7","CloseFile","C:\W\sub folder\b.txt","SUCCESS",""
"#;

#[test]
fn procmon_directory_opens_and_case_folded_paths_import_as_windows_meant_them() {
    let d = tempfile::tempdir().unwrap();
    let (trace, said) = import(
        d.path(),
        "procmon",
        "dirs.csv",
        PROCMON_DIRS,
        &["--windows-root", r"C:\W"],
    );
    // `Old` is a directory (its open a stat), so the file inside it replays; the file
    // in `Sub Folder` is one file however it is spelled: one open, read, close.
    let expected = counts(&[("stat", 1), ("open", 2), ("read", 2), ("close", 2)]);
    assert_eq!(replay_null(d.path(), &trace), expected, "{said}");
    let (files, _) = files_and_times(&trace);
    assert_eq!(
        files.keys().map(|k| k.as_str()).collect::<Vec<_>>(),
        ["Old", "Old/a.txt", "Sub Folder", "Sub Folder/b.txt"],
        "{said}"
    );
    assert_eq!(files["Sub Folder/b.txt"], (200, true));
}

#[test]
fn an_empty_log_or_loadfile_is_refused_saying_so() {
    let d = tempfile::tempdir().unwrap();
    for format in ["strace", "dbench", "fio-iolog"] {
        let input = d.path().join(format!("empty-{format}"));
        std::fs::write(&input, "").unwrap();
        let out = d.path().join(format!("{format}.jsonl"));
        let err = run_err(
            naslab()
                .args(["import", format])
                .arg(&input)
                .arg("-o")
                .arg(&out),
        );
        assert!(err.contains("is empty"), "{format}: {err}");
        assert!(!out.exists(), "{format}: a trace was written");
    }
    // Lines, but none about a file under the root: no ops, said with what was left out.
    let input = d.path().join("outside.log");
    std::fs::write(
        &input,
        "100 1700000000.000000 openat(AT_FDCWD</w>, \"/etc/hostname\", O_RDONLY) = 3</etc/hostname> <0.000010>\n100 1700000000.000100 close(3</etc/hostname>) = 0 <0.000002>\n",
    )
    .unwrap();
    // A trace already at the output is left as it was.
    let out = d.path().join("o.jsonl");
    std::fs::write(&out, "an earlier trace").unwrap();
    let err = run_err(
        naslab()
            .args(["import", "strace"])
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .arg("--root")
            .arg(d.path()),
    );
    assert!(
        err.contains("no file operations") && err.contains("outside the root"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "an earlier trace");
}

/// Calls and failures per system call, from the table `strace -c` writes.
fn strace_counts(table: &str) -> BTreeMap<String, (u64, u64)> {
    let mut m = BTreeMap::new();
    for l in table.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        // % time, seconds, usecs/call, calls, [errors,] syscall
        let (calls, errors) = match w.len() {
            5 => (w[3].parse().ok(), Some(0)),
            6 => (w[3].parse().ok(), w[4].parse().ok()),
            _ => continue,
        };
        if let (Some(c), Some(e), Some(name)) = (calls, errors, w.last())
            && *name != "total"
        {
            m.insert(name.to_string(), (c, e));
        }
    }
    m
}

/// What a replay under strace made: calls and failures per system call, the byte-range
/// lock calls among the fcntls, and the run's results.
struct Traced {
    calls: BTreeMap<String, (u64, u64)>,
    locks: u64,
    iteration: serde_json::Value,
}

/// Replays `trace` on a fresh directory under `strace -f -C` (each call, then the
/// table of calls) for the system calls the dbench mapping uses.
fn replay_under_strace(dir: &Path, trace: &Path, name: &str) -> Traced {
    let target = dir.join(format!("{name}-target"));
    std::fs::create_dir(&target).unwrap();
    let table = dir.join(format!("{name}.strace"));
    let res = run_ok(
        std::process::Command::new("strace")
            .args(["-f", "-qq", "-C", "-o"])
            .arg(&table)
            .args([
                "-e",
                "trace=statfs,fstatfs,utimensat,fcntl,openat,openat2,newfstatat,statx",
            ])
            .arg(env!("CARGO_BIN_EXE_naslab"))
            .args(["run", "--json", "--no-records", "--cache", "keep", "-t"])
            .arg(&target)
            .arg("--out")
            .arg(dir.join(format!("{name}-results")))
            .arg(trace),
    );
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    let log = std::fs::read_to_string(&table).unwrap();
    // A call cut by another thread's shows its arguments before `<unfinished ...>` and
    // its result on a `resumed` line: counted by its arguments, once.
    let locks = log
        .lines()
        .filter(|l| l.contains("fcntl(") && l.contains("F_OFD_SETLK"))
        .count() as u64;
    Traced {
        calls: strace_counts(&log),
        locks,
        iteration: run["workloads"][0]["iterations"][0].clone(),
    }
}

#[test]
fn a_replayed_dbench_loadfile_makes_the_calls_its_lines_stand_for() {
    use naslab_test_support::{cannot_run, tool_or_skip};
    if tool_or_skip("dbench").is_none() || tool_or_skip("strace").is_none() {
        return;
    }
    let Ok(body) = std::fs::read_to_string("/usr/share/dbench/client.txt") else {
        cannot_run(
            "dbench's loadfile /usr/share/dbench/client.txt is missing (apt-get install dbench)",
        );
        return;
    };
    // Its first 6,000 lines hold every kind of line, locks and failures included.
    let body: String = body.lines().take(6_000).flat_map(|l| [l, "\n"]).collect();
    let lines = |name: &str, ok: bool| {
        body.lines()
            .filter(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.first() == Some(&name) && (w.last() == Some(&"NT_STATUS_OK")) == ok
            })
            .count() as u64
    };
    let d = tempfile::tempdir().unwrap();
    let (trace, said) = import(d.path(), "dbench", "client.txt", &body, &[]);
    assert!(
        lines("LockX", true) > 0 && lines("NTCreateX", false) > 0,
        "{said}"
    );

    // The same trace without the ops the mapping adds: what naslab calls itself.
    let text = std::fs::read_to_string(&trace).unwrap();
    let plain: String = text
        .lines()
        .filter(|l| {
            ![
                "\"statfs\"",
                "\"utime\"",
                "\"lock\"",
                "\"unlock\"",
                "\"expect\"",
            ]
            .iter()
            .any(|k| l.contains(k))
        })
        .flat_map(|l| [l, "\n"])
        .collect();
    let plain_trace = d.path().join("plain.jsonl");
    std::fs::write(&plain_trace, plain).unwrap();

    let whole = replay_under_strace(d.path(), &trace, "whole");
    let plain = replay_under_strace(d.path(), &plain_trace, "plain");
    let (with, it) = (&whole.calls, &whole.iteration);
    let (without, plain_it) = (&plain.calls, &plain.iteration);
    assert_eq!(it["errors"].as_u64(), Some(0), "{it}");
    assert_eq!(plain_it["errors"].as_u64(), Some(0), "{plain_it}");
    let calls = |m: &BTreeMap<String, (u64, u64)>, names: &[&str]| -> (u64, u64) {
        names.iter().fold((0, 0), |(c, e), n| {
            let (nc, ne) = m.get(*n).copied().unwrap_or((0, 0));
            (c + nc, e + ne)
        })
    };
    let added = |names: &[&str]| {
        let (a, b) = (calls(with, names), calls(without, names));
        (a.0 - b.0, a.1 - b.1)
    };
    let figures = format!("{with:?}\nwithout: {without:?}\n{said}");
    // One call per line where the mapping is one to one.
    assert_eq!(
        added(&["statfs", "fstatfs"]).0,
        lines("QUERY_FS_INFORMATION", true),
        "{figures}"
    );
    assert_eq!(
        added(&["utimensat"]).0,
        lines("SET_FILE_INFORMATION", true),
        "{figures}"
    );
    // naslab uses fcntl for other things too: the locks are told by their command.
    assert_eq!(plain.locks, 0, "{figures}");
    assert_eq!(
        whole.locks,
        lines("LockX", true) + lines("UnlockX", true),
        "{figures}"
    );
    // Each NTCreateX and QUERY_PATH_INFORMATION that must fail fails once (its open or
    // its lookup); the FIND_FIRSTs that must fail are listings, which cannot.
    let failing = lines("NTCreateX", false) + lines("QUERY_PATH_INFORMATION", false);
    let lookups = ["openat", "openat2", "newfstatat", "statx"];
    assert_eq!(added(&lookups).1, failing, "{figures}");
    let expected: u64 = ["open", "stat"]
        .iter()
        .map(|k| it["op_stats"][k]["expected_failures"].as_u64().unwrap_or(0))
        .sum();
    assert_eq!(expected, failing, "{it}");
    assert_eq!(it["expected_failures"].as_u64(), Some(failing), "{it}");
}
