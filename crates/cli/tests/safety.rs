//! What a careless or hostile neighbour cannot make naslab do: follow a link out of its
//! directory, share a target with a second naslab, lose results to Ctrl-C, or write
//! over a run's files.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

const ROUNDS: usize = 30;

/// A workload that, every `--pace` gap, creates `d/f<i>` and removes `d/k<i>` (a
/// prepared file): 3 × ROUNDS ops inside directory `d`.
fn race_trace(dir: &Path) -> PathBuf {
    let path = dir.join("race.jsonl");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    writeln!(
        w,
        r#"{{"type":"header","format":"naslab-trace","version":1,"workload":"Race"}}"#
    )
    .unwrap();
    writeln!(
        w,
        r#"{{"type":"file","id":1,"path":"d","kind":"dir","exists":true}}"#
    )
    .unwrap();
    for i in 0..ROUNDS {
        writeln!(
            w,
            r#"{{"type":"file","id":{},"path":"d/f{i}","exists":false}}"#,
            10 + i
        )
        .unwrap();
        writeln!(
            w,
            r#"{{"type":"file","id":{},"path":"d/k{i}","size":100,"exists":true}}"#,
            1000 + i
        )
        .unwrap();
    }
    for i in 0..ROUNDS {
        let t = i * 300;
        writeln!(
            w,
            r#"{{"type":"op","op":"create","t_us":{t},"file":{}}}"#,
            10 + i
        )
        .unwrap();
        writeln!(
            w,
            r#"{{"type":"op","op":"close","t_us":{},"file":{}}}"#,
            t + 100,
            10 + i
        )
        .unwrap();
        writeln!(
            w,
            r#"{{"type":"op","op":"unlink","t_us":{},"file":{}}}"#,
            t + 200,
            1000 + i
        )
        .unwrap();
    }
    w.flush().unwrap();
    path
}

/// Every entry under `root` with its size and content.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        let content = if p.is_dir() {
            b"<dir>".to_vec()
        } else {
            std::fs::read(&p).unwrap()
        };
        out.insert(p, content);
    }
    out
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn start_paced(trace: &Path, target: &Path, out: &Path, gap: &str, walk: bool) -> Child {
    let mut cmd = naslab();
    cmd.arg("run")
        .arg(trace)
        .arg("-t")
        .arg(target)
        .arg("--out")
        .arg(out)
        .arg("--pace")
        .arg(format!("delay:{gap}"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if walk {
        cmd.env("NASLAB_NO_OPENAT2", "1");
    }
    cmd.spawn().unwrap()
}

/// Swaps `d` in the workload directory for a link to `outside` while a paced run works
/// in it, and checks nothing outside changed and the run says why it stopped.
fn swapped_directory_is_not_followed(walk: bool) {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    let outside = work.path().join("outside");
    let out = work.path().join("out");
    std::fs::create_dir_all(&target).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    // Files the run would create or delete there, were it to follow the link.
    for i in 0..ROUNDS {
        std::fs::write(outside.join(format!("k{i}")), format!("user file {i}")).unwrap();
    }
    std::fs::write(outside.join("f29"), b"precious").unwrap();
    let before = snapshot(&outside);
    let trace = race_trace(work.path());
    let child = start_paced(&trace, &target, &out, "50ms", walk);
    let d = target.join("naslab/Race/d");
    wait_for("the run to create d/f2", || d.join("f2").exists());
    std::fs::rename(&d, target.join("naslab/Race/moved")).unwrap();
    std::os::unix::fs::symlink(&outside, &d).unwrap();
    let done = child.wait_with_output().unwrap();
    let err = text(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{err}");
    assert!(
        err.contains("ELOOP") && err.contains("symbolic link"),
        "{err}"
    );
    assert_eq!(snapshot(&outside), before, "files outside naslab/ changed");
    let run = json(&only_run_dir(&out).join("run.json"));
    assert!(run["aborted"].as_str().unwrap().contains("ELOOP"), "{run}");
    let it = &run["workloads"][0]["iterations"][0];
    // The op that met the link is the failure (another may have found `d` missing
    // in the instant between the rename and the link).
    assert!(it["errors"].as_u64().unwrap() >= 1, "{it}");
    let planned = it["ops_planned"].as_u64().unwrap();
    assert_eq!(planned, 3 * ROUNDS as u64);
    assert!(it["ops"].as_u64().unwrap() < planned);
    // The next run removes the link itself, never what it points to.
    run_ok(naslab().arg("clean").arg("-t").arg(&target));
    assert_eq!(snapshot(&outside), before);
}

#[test]
fn a_directory_swapped_for_a_link_mid_run_is_not_followed_with_openat2() {
    swapped_directory_is_not_followed(false);
}

#[test]
fn a_directory_swapped_for_a_link_mid_run_is_not_followed_by_the_component_walk() {
    swapped_directory_is_not_followed(true);
}

/// Under `NASLAB_NO_OPENAT2=1` the posix target makes no openat2 call at all, and without
/// it every open under the workload directory is one (seen by strace).
#[test]
fn the_component_walk_replaces_openat2_when_asked() {
    let Some(strace) = tool_or_skip("strace") else {
        return;
    };
    for walk in [false, true] {
        let work = tempfile::tempdir().unwrap();
        let log = work.path().join("strace.log");
        let mut cmd = Command::new(&strace);
        cmd.args(["-f", "-qq", "-e", "trace=openat2", "-o"])
            .arg(&log)
            .arg(env!("CARGO_BIN_EXE_naslab"))
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .arg("-t")
            .arg(work.path())
            .arg("--out")
            .arg(work.path().join("out"));
        if walk {
            cmd.env("NASLAB_NO_OPENAT2", "1");
        }
        run_ok(&mut cmd);
        let calls = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .filter(|l| l.contains("openat2("))
            .count();
        if walk {
            assert_eq!(calls, 0, "the component walk made openat2 calls");
        } else {
            assert!(calls >= 10, "only {calls} openat2 calls");
        }
    }
}

#[test]
fn clean_refuses_a_marker_that_is_a_link() {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    let precious = work.path().join("precious");
    std::fs::create_dir_all(target.join("naslab")).unwrap();
    std::fs::create_dir_all(&precious).unwrap();
    std::fs::write(precious.join("marker"), b"any file").unwrap();
    std::fs::write(target.join("naslab/thesis.tex"), b"user data").unwrap();
    std::os::unix::fs::symlink(precious.join("marker"), target.join("naslab/.naslab-owned"))
        .unwrap();
    let err = run_err(naslab().arg("clean").arg("-t").arg(&target));
    assert!(err.contains("not a regular file"), "{err}");
    assert_eq!(
        std::fs::read(target.join("naslab/thesis.tex")).unwrap(),
        b"user data"
    );
    assert_eq!(std::fs::read(precious.join("marker")).unwrap(), b"any file");
    // A run refuses it too.
    let err = run_err(
        naslab()
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(work.path().join("out")),
    );
    assert!(err.contains("not a regular file"), "{err}");
    assert!(target.join("naslab/thesis.tex").is_file());
    // Nor is a hard link to another file (which the run would rewrite) trusted.
    std::fs::remove_file(target.join("naslab/.naslab-owned")).unwrap();
    std::fs::hard_link(precious.join("marker"), target.join("naslab/.naslab-owned")).unwrap();
    let err = run_err(naslab().arg("clean").arg("-t").arg(&target));
    assert!(err.contains("hard link"), "{err}");
    assert_eq!(std::fs::read(precious.join("marker")).unwrap(), b"any file");
    assert!(target.join("naslab/thesis.tex").is_file());
}

#[test]
fn a_second_run_or_a_clean_is_told_who_holds_the_target_and_ctrl_c_keeps_the_results() {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    let out = work.path().join("out");
    std::fs::create_dir_all(&target).unwrap();
    let trace = race_trace(work.path());
    let child = start_paced(&trace, &target, &out, "100ms", false);
    let pid = child.id();
    wait_for("the run to start its measured phase", || {
        target.join("naslab/Race/d/f1").exists()
    });
    let holder = format!("is in use by naslab pid {pid} since ");
    let err = run_err(
        naslab()
            .arg("run")
            .arg(&trace)
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(work.path().join("out2")),
    );
    assert!(err.contains(&holder), "{err}");
    assert!(
        !work.path().join("out2/run").exists()
            || std::fs::read_dir(work.path().join("out2/run"))
                .unwrap()
                .next()
                .is_none(),
        "the refused run left a run directory"
    );
    let err = run_err(naslab().arg("clean").arg("-t").arg(&target));
    assert!(err.contains(&holder), "{err}");
    assert!(
        target.join("naslab/Race/d").is_dir(),
        "clean removed files in use"
    );
    // Nor may a run take naslab's directory on the held target, or one inside it, as
    // its own target.
    for inner in [target.join("naslab"), target.join("naslab/Race/d")] {
        let err = run_err(
            naslab()
                .arg("run")
                .arg(&trace)
                .arg("-t")
                .arg(&inner)
                .arg("--out")
                .arg(work.path().join("out3")),
        );
        assert!(
            err.contains("is inside") && err.contains("naslab's own directory"),
            "{err}"
        );
        assert!(!inner.join("naslab").exists());
    }

    // Ctrl-C: ops in flight finish, what was done is written, exit 130.
    // SAFETY: kill on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGINT) }, 0);
    let done = child.wait_with_output().unwrap();
    let err = text(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{err}");
    assert!(err.contains("stopped by SIGINT"), "{err}");
    let dir = only_run_dir(&out);
    let run = json(&dir.join("run.json"));
    assert_eq!(run["aborted"], "stopped by SIGINT", "{run}");
    let it = &run["workloads"][0]["iterations"][0];
    let ops = it["ops"].as_u64().unwrap();
    assert!(ops > 0 && ops < 3 * ROUNDS as u64, "{it}");
    assert_eq!(it["errors"], 0);
    let table = std::fs::read_to_string(dir.join("results.txt")).unwrap();
    assert!(
        table.contains(&format!("aborted {ops}/{}", 3 * ROUNDS)),
        "{table}"
    );
    let csv = std::fs::read_to_string(dir.join("naspt.csv")).unwrap();
    assert!(
        csv.contains(&format!("Race (aborted {ops}/{})", 3 * ROUNDS)),
        "{csv}"
    );
    assert!(dir.join("report.html").is_file());
    assert!(dir.join("Race.ops.nbt.zst").is_file());
    // The records hold exactly the ops done.
    let records = run_ok(naslab().arg("records").arg(dir.join("Race.ops.nbt.zst")));
    let op_lines = text(&records.stdout)
        .lines()
        .filter(|l| l.contains(r#""type":"op""#))
        .count();
    assert_eq!(op_lines as u64, ops);
    // The lock went with the process: the target can be cleaned now.
    run_ok(naslab().arg("clean").arg("-t").arg(&target));
    assert!(!target.join("naslab").exists());
}

#[test]
fn reports_never_write_over_a_runs_files_and_out_stays_outside_the_sandbox() {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    let out = work.path().join("out");
    std::fs::create_dir_all(&target).unwrap();
    run_ok(
        naslab()
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(&out),
    );
    let dir = only_run_dir(&out);
    let before = std::fs::read(dir.join("run.json")).unwrap();
    for name in [
        "run.json",
        "results.txt",
        "naspt.csv",
        "DocumentSave.ops.nbt.zst",
    ] {
        let err = run_err(
            naslab()
                .arg("report")
                .arg(&dir)
                .arg("-o")
                .arg(dir.join(name)),
        );
        assert!(err.contains("will not write over it"), "{name}: {err}");
    }
    // Through a link too.
    std::os::unix::fs::symlink(dir.join("run.json"), work.path().join("alias")).unwrap();
    let err = run_err(
        naslab()
            .arg("report")
            .arg(&dir)
            .arg("-o")
            .arg(work.path().join("alias")),
    );
    assert!(err.contains("symbolic link"), "{err}");
    assert_eq!(std::fs::read(dir.join("run.json")).unwrap(), before);
    // report.html may be rewritten, and a new file may be made.
    run_ok(
        naslab()
            .arg("report")
            .arg(&dir)
            .arg("-o")
            .arg(dir.join("report.html")),
    );
    run_ok(
        naslab()
            .args(["report", "--format", "csv"])
            .arg(&dir)
            .arg("-o")
            .arg(dir.join("summary.csv")),
    );

    // --out inside <target>/naslab is refused, also when reached through a link.
    std::os::unix::fs::symlink(target.join("naslab"), work.path().join("sneaky")).unwrap();
    // And through a `..` after a directory not made yet, which the kernel climbs from
    // once --out is made.
    for bad in [
        target.join("naslab/results"),
        work.path().join("sneaky/r"),
        target.join("x/../naslab/y"),
        target.join("x/y/../../naslab/z"),
    ] {
        let err = run_err(
            naslab()
                .arg("run")
                .arg(repo_root().join("examples/document-save.jsonl"))
                .arg("-t")
                .arg(&target)
                .arg("--out")
                .arg(&bad),
        );
        assert!(err.contains("which naslab empties on every run"), "{err}");
    }
    assert!(!target.join("naslab/results").exists());
    assert!(!target.join("naslab/y").exists() && !target.join("naslab/z").exists());
}

#[test]
fn a_run_that_fails_before_measuring_leaves_no_run_directory() {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    let out = work.path().join("out");
    std::fs::create_dir_all(&target).unwrap();
    // Preparation fails: a name longer than any file system allows.
    let long = work.path().join("long.jsonl");
    std::fs::write(
        &long,
        format!(
            "{}\n{}\n{}\n{}\n",
            r#"{"type":"header","format":"naslab-trace","version":1,"workload":"Long"}"#,
            r#"{"type":"file","id":2,"path":"big","size":1048576,"exists":true}"#,
            format_args!(
                r#"{{"type":"file","id":1,"path":"{}","size":10,"exists":true}}"#,
                "n".repeat(300)
            ),
            r#"{"type":"op","op":"stat","file":1}"#
        ),
    )
    .unwrap();
    let err = run_err(
        naslab()
            .arg("run")
            .arg(&long)
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(&out),
    );
    assert!(err.contains("ENAMETOOLONG"), "{err}");
    assert!(!err.contains("results measured so far"), "{err}");
    // What it had prepared before is taken back, and it says so.
    assert!(
        err.contains("the files it had prepared were removed"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(target.join("naslab/Long"))
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left on the target: {left:?}");
    // No run directory, and the results and label directories this run made are gone.
    assert!(
        !out.exists(),
        "{:?}",
        std::fs::read_dir(&out).map(|d| d.count())
    );
    // Two traces naming one workload.
    let example = repo_root().join("examples/document-save.jsonl");
    let err = run_err(
        naslab()
            .arg("run")
            .arg(&example)
            .arg(&example)
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(&out),
    );
    assert!(err.contains("two workloads are named"), "{err}");
    // No run directory: the label directory is empty, or gone when this run made it.
    let left = std::fs::read_dir(out.join("run")).map_or(0, |d| d.count());
    assert_eq!(left, 0);
}

#[test]
fn a_second_ctrl_c_exits_at_once() {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    std::fs::create_dir_all(&target).unwrap();
    let trace = race_trace(work.path());
    let mut child = start_paced(&trace, &target, &work.path().join("out"), "100ms", false);
    let pid = child.id() as i32;
    wait_for("the measured phase", || {
        target.join("naslab/Race/d/f1").exists()
    });
    // Standard signals do not queue: the second is sent once the first was handled.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    // SAFETY: kill on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    loop {
        let line = rx.recv_timeout(Duration::from_secs(10)).expect("a notice");
        if line.starts_with("interrupted:") {
            break;
        }
    }
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    let err = reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted again: exiting now"), "{err}");
    assert!(
        !err.contains("results: "),
        "it went on to write results: {err}"
    );
}

#[test]
fn sigterm_and_sighup_stop_a_run_like_ctrl_c() {
    for (signal, name) in [(libc::SIGTERM, "SIGTERM"), (libc::SIGHUP, "SIGHUP")] {
        stopped_like_ctrl_c(signal, name);
    }
}

fn stopped_like_ctrl_c(signal: libc::c_int, name: &str) {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("target");
    let out = work.path().join("out");
    std::fs::create_dir_all(&target).unwrap();
    let trace = race_trace(work.path());
    let child = start_paced(&trace, &target, &out, "100ms", false);
    wait_for("the measured phase", || {
        target.join("naslab/Race/d/f1").exists()
    });
    // SAFETY: kill on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let done = child.wait_with_output().unwrap();
    let err = text(&done.stderr);
    assert_eq!(done.status.code(), Some(130), "{name}: {err}");
    let dir = only_run_dir(&out);
    let run = json(&dir.join("run.json"));
    assert_eq!(run["aborted"], format!("stopped by {name}"), "{run}");
    assert!(dir.join("report.html").is_file());
}

/// Waits for `child` to end; kills it and fails if it has not within a minute (the
/// signal it was sent was lost).
fn ended(mut child: Child, what: &str) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{what}: naslab did not end: {}", text(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A signal while the trace is read from a FIFO ends naslab (130), leaves no run
/// directory and frees the target: with a writer that feeds it slowly, and with no
/// writer at all, also when SIGINT was ignored when naslab started (as a job started in
/// the background by a script).
#[test]
fn a_signal_while_a_trace_loads_from_a_fifo_ends_naslab_and_frees_the_target() {
    for (feed, signal, ignored) in [
        (true, libc::SIGINT, false),
        (false, libc::SIGINT, true),
        (false, libc::SIGTERM, false),
    ] {
        let case = format!("feed {feed}, signal {signal}, ignored {ignored}");
        let work = tempfile::tempdir().unwrap();
        let target = work.path().join("target");
        let out = work.path().join("out");
        std::fs::create_dir_all(&target).unwrap();
        let fifo = work.path().join("trace.fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: c is NUL-terminated.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let mut cmd = naslab();
        cmd.arg("run")
            .arg(&fifo)
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(&out)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if ignored {
            // SAFETY: signal between fork and exec touches only the child.
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
                    libc::signal(libc::SIGINT, libc::SIG_IGN);
                    Ok(())
                });
            }
        }
        let child = cmd.spawn().unwrap();
        let pid = child.id() as i32;
        // The writer is kept open (fed no more) until naslab has ended.
        let _writer = feed.then(|| {
            let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
            w.write_all(b"{\"type\":\"header\",\"format\":\"naslab-trace\",\"version\":1,\"workload\":\"Slow\"}\n")
                .unwrap();
            w
        });
        wait_for("the target to be held", || {
            target.join("naslab/.naslab-owned").exists()
        });
        // SAFETY: kill on our own child's pid.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
        let done = ended(child, &case);
        let err = text(&done.stderr);
        assert_eq!(done.status.code(), Some(130), "{case}: {err}");
        assert!(err.contains("interrupted: exiting"), "{case}: {err}");
        let left = std::fs::read_dir(out.join("run")).map_or(0, |d| d.count());
        assert_eq!(left, 0, "{case}: a run directory was left");
        run_ok(naslab().arg("clean").arg("-t").arg(&target));
    }
    // `describe` too.
    let work = tempfile::tempdir().unwrap();
    let fifo = work.path().join("trace.fifo");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: c is NUL-terminated.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let child = naslab()
        .arg("describe")
        .arg(&fifo)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut w = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    w.write_all(
        b"{\"type\":\"header\",\"format\":\"naslab-trace\",\"version\":1,\"workload\":\"Slow\"}\n",
    )
    .unwrap();
    // SAFETY: kill on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let done = ended(child, "describe");
    assert_eq!(done.status.code(), Some(130), "{}", text(&done.stderr));
    drop(w);
}
