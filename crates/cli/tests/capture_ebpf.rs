//! `naslab capture --via ebpf` and `--via strace` give the same trace for the same
//! program: the same files declared, and in each stream the same ops (kind, path,
//! offset, length, flags); so does a capture through a collector kept loaded (`naslab
//! collector`). Needs root (eBPF) and the programs compared; skipped with a note
//! otherwise, failed under NASLAB_REQUIRE_ROOT=1.
#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{naslab, root_or_skip, run_err, run_ok, text, tool_or_skip};
use naslab_trace::{FileKind, Record};

/// A trace as the comparison sees it: what precedes the ops, and each stream's ops.
#[derive(Debug, PartialEq)]
struct Seen {
    generator: String,
    /// path → (kind, size, exists before the run)
    files: BTreeMap<String, (FileKind, u64, bool)>,
    /// stream → its ops as (kind, path [-> path], offset, length, flags)
    streams: BTreeMap<u32, Vec<String>>,
}

/// Names a program makes up at random, the same in both traces: git's temporary
/// objects (`tmp_obj_XXXXXX`) and the file `git init` makes to test symbolic links
/// (`.git/tXXXXXX`).
fn steady(path: &str) -> String {
    let mut parent = "";
    let mut out = Vec::new();
    for part in path.split('/') {
        let fixed = if let Some(rest) = part.strip_prefix("tmp_obj_") {
            format!("tmp_obj_{}", "X".repeat(rest.len()))
        } else if parent == ".git"
            && part.len() == 7
            && part.starts_with('t')
            && part.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            "tXXXXXX".to_string()
        } else {
            part.to_string()
        };
        parent = part;
        out.push(fixed);
    }
    out.join("/")
}

fn seen(path: &Path) -> Seen {
    let recs = naslab_trace::read_all(path, std::fs::File::open(path).unwrap()).unwrap();
    let mut names = BTreeMap::new();
    let mut s = Seen {
        generator: String::new(),
        files: BTreeMap::new(),
        streams: BTreeMap::new(),
    };
    for rec in recs {
        match rec {
            Record::Header(h) => s.generator = h.generator.clone().unwrap_or_default(),
            Record::File(f) => {
                let p = steady(&f.path);
                names.insert(f.id, p.clone());
                s.files.insert(p, (f.kind, f.size, f.exists));
            }
            Record::Op(op, _) => {
                let mut name = names[&op.file].clone();
                if let Some(to) = op.to {
                    name = format!("{name} -> {}", names[&to]);
                }
                s.streams.entry(op.stream).or_default().push(format!(
                    "{:?} {name} @{} +{} {}",
                    op.kind, op.offset, op.len, op.flags
                ));
            }
        }
    }
    s
}

/// Whether eBPF capture can be tested here: root, strace and every tool in `tools`.
fn ready(tools: &[&str]) -> bool {
    if !root_or_skip("eBPF capture") {
        return false;
    }
    ["strace"]
        .iter()
        .chain(tools)
        .all(|t| tool_or_skip(t).is_some())
}

/// `naslab collector` on a socket of its own, stopped (by its pid) when dropped.
struct Kept {
    child: Child,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Kept {
    fn start() -> Kept {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("collector.sock");
        let mut child = naslab()
            .args(["collector", "--socket"])
            .arg(&socket)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("naslab collector ended with {status} before it listened");
            }
            assert!(Instant::now() < deadline, "naslab collector did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Kept {
            child,
            socket,
            _dir: dir,
        }
    }

    /// Stops it as Ctrl-C would, and waits for its end.
    fn stop(&mut self) {
        // SAFETY: kill sends a signal to the collector's own pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.stop();
        }
    }
}

/// Captures `cmd` in a fresh copy of the tree `setup` makes, once through each
/// collector (strace, eBPF loaded for the capture, and eBPF kept loaded by `naslab
/// collector`), and checks that the traces are the same.
fn same_trace(setup: impl Fn(&Path), cmd: &[&str]) -> Seen {
    // Programs that list a directory may go through it in inode order (cp -r does),
    // so each copy of the tree must number its inodes in the order they are made. On
    // ext4, another test's deleted file frees a lower number for the next file made
    // here; on tmpfs, numbers only grow on each CPU: the trees are made there, by this
    // thread held on one CPU.
    let shm = Path::new("/dev/shm");
    let d = if shm.is_dir() {
        tempfile::tempdir_in(shm).unwrap()
    } else {
        tempfile::tempdir().unwrap()
    };
    let setup = |root: &Path| on_one_cpu(|| setup(root));
    let kept = Kept::start();
    let mut got = Vec::new();
    for via in ["strace", "ebpf", "kept"] {
        let root = d.path().join(format!("root-{via}"));
        std::fs::create_dir(&root).unwrap();
        setup(&root);
        let out = d.path().join(format!("{via}.jsonl"));
        let mut c = naslab();
        c.current_dir(&root)
            // Commits made by every run get the same time, so the same object names.
            .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z")
            .arg("capture");
        if via == "kept" {
            c.arg("--collector").arg(&kept.socket);
        } else {
            c.args(["--via", via]);
        }
        let res = run_ok(c.arg("-o").arg(&out).arg("--").args(cmd));
        let err = text(&res.stderr);
        let said = match via {
            "kept" => format!("collector: ebpf (kept loaded, {})", kept.socket.display()),
            _ => format!("collector: {via}\n"),
        };
        assert!(err.contains(&said), "{err}");
        got.push(seen(&out));
    }
    let kept = got.pop().unwrap();
    let ebpf = got.pop().unwrap();
    let strace = got.pop().unwrap();
    assert!(strace.generator.contains("capture (strace) of:"));
    assert!(ebpf.generator.contains("capture (ebpf) of:"));
    assert!(kept.generator.contains("capture (ebpf) of:"));
    assert!(!ebpf.streams.is_empty(), "no op captured");
    for (name, other) in [("eBPF", &ebpf), ("eBPF kept loaded", &kept)] {
        assert_same(&strace, other, name);
    }
    ebpf
}

/// Runs `f` with the calling thread held on the CPU it is on, then lets it go again.
fn on_one_cpu(f: impl FnOnce()) {
    // SAFETY: an all-zero cpu_set_t is an empty set; sched_getaffinity and
    // sched_setaffinity read and write the sets given, for the calling thread (0).
    unsafe {
        let mut was: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let got = libc::sched_getaffinity(0, size, &mut was);
        let cpu = libc::sched_getcpu();
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        if got == 0 && cpu >= 0 {
            libc::CPU_SET(cpu as usize, &mut one);
            libc::sched_setaffinity(0, size, &one);
        }
        f();
        if got == 0 {
            libc::sched_setaffinity(0, size, &was);
        }
    }
}

/// The files declared and every stream's ops are the same in `other` as in `strace`.
fn assert_same(strace: &Seen, other: &Seen, name: &str) {
    assert_eq!(
        strace.files, other.files,
        "the files declared differ ({name})"
    );
    for (n, ops) in &strace.streams {
        let theirs = other.streams.get(n).cloned().unwrap_or_default();
        let at = ops.iter().zip(&theirs).position(|(a, b)| a != b);
        assert!(
            at.is_none() && ops.len() == theirs.len(),
            "stream {n} differs at op {at:?} (strace {} ops, {name} {}): strace {:?}, {name} {:?}",
            ops.len(),
            theirs.len(),
            at.map(|i| &ops[i..(i + 3).min(ops.len())]),
            at.map(|i| &theirs[i..(i + 3).min(theirs.len())]),
        );
    }
    assert_eq!(strace.streams.len(), other.streams.len(), "{name}");
}

fn small_tree(root: &Path) {
    let src = root.join("src");
    std::fs::create_dir_all(src.join("sub/deeper")).unwrap();
    std::fs::write(src.join("a.txt"), "hello\n").unwrap();
    std::fs::write(src.join("b.bin"), vec![7u8; 300_000]).unwrap();
    std::fs::write(src.join("sub/c.dat"), vec![1u8; 5000]).unwrap();
    std::fs::write(src.join("sub/empty"), "").unwrap();
    std::fs::write(src.join("sub/deeper/d"), "d").unwrap();
    // Files written in the second git writes its index are "racily clean" to git,
    // which then reads them again, or not, as the clock falls: made old, they are not.
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_577_836_800);
    for f in ["a.txt", "b.bin", "sub/c.dat", "sub/empty", "sub/deeper/d"] {
        let file = std::fs::File::options()
            .write(true)
            .open(src.join(f))
            .unwrap();
        file.set_modified(old).unwrap();
    }
}

#[test]
fn ebpf_and_strace_give_the_same_trace_of_cp_r() {
    if !ready(&["cp"]) {
        return;
    }
    let t = same_trace(small_tree, &["cp", "-r", "src", "dst"]);
    assert!(t.files.contains_key("dst/sub/deeper/d"));
}

#[test]
fn ebpf_and_strace_give_the_same_trace_of_tar_cf() {
    if !ready(&["tar"]) {
        return;
    }
    let t = same_trace(small_tree, &["tar", "cf", "all.tar", "src"]);
    assert!(t.files.contains_key("all.tar"));
}

#[test]
fn ebpf_and_strace_give_the_same_trace_of_git_init_add_commit() {
    if !ready(&["git", "sh"]) {
        return;
    }
    let t = same_trace(
        small_tree,
        &[
            "sh",
            "-c",
            "cd src && git init -q && git add . && git -c user.name=n -c user.email=e@x commit -qm first",
        ],
    );
    assert!(
        t.streams.len() >= 3,
        "git's processes: {:?}",
        t.streams.keys()
    );
    assert!(t.files.contains_key("src/.git/index"));
}

#[test]
fn ebpf_and_strace_give_the_same_trace_of_sqlite3() {
    if !ready(&["sqlite3"]) {
        return;
    }
    let t = same_trace(
        |_| {},
        &[
            "sqlite3",
            "db.sqlite",
            "create table t(a, b); insert into t values (1, 'one'), (2, 'two'); \
             begin; update t set b = 'uno' where a = 1; commit; select * from t;",
        ],
    );
    assert!(
        t.streams[&0]
            .iter()
            .any(|op| op.starts_with("Lock db.sqlite"))
    );
}

/// Threads share their descriptors: a file one thread opens, another writes.
#[test]
fn ebpf_and_strace_give_the_same_trace_of_threads_sharing_descriptors() {
    if !ready(&["python3"]) {
        return;
    }
    let t = same_trace(
        |_| {},
        &[
            "python3",
            "-c",
            "import os, threading\n\
             fd = os.open('shared.txt', os.O_WRONLY | os.O_CREAT, 0o644)\n\
             t = threading.Thread(target=lambda: os.write(fd, b'from a thread'))\n\
             t.start(); t.join()\n\
             os.rename('shared.txt', 'moved.txt')\n\
             os.fsync(fd); os.close(fd)\n",
        ],
    );
    assert!(t.files.contains_key("moved.txt"));
}

/// Where eBPF cannot be loaded (here: not root), auto falls back to strace and says
/// why, and --via ebpf fails naming --via strace.
#[test]
fn without_root_auto_captures_with_strace_and_says_why() {
    if !ready(&["setpriv", "true"]) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("open");
    std::fs::create_dir(&dir).unwrap();
    Command::new("chmod")
        .arg("777")
        .arg(d.path())
        .arg(&dir)
        .status()
        .unwrap();
    let as_nobody = |via: &str| {
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_naslab"))
            .current_dir(&dir)
            .args(["capture", "--via", via, "-o", "t.jsonl", "--", "true"]);
        c
    };
    let res = run_ok(&mut as_nobody("auto"));
    let err = text(&res.stderr);
    assert!(
        err.contains("capturing with strace, not eBPF: eBPF tracing needs root"),
        "{err}"
    );
    assert!(err.contains("collector: strace"), "{err}");
    let err = run_err(&mut as_nobody("ebpf"));
    assert!(err.contains("--via strace"), "{err}");
}

/// strace's own output can be kept only when strace collects: auto then takes strace,
/// saying why, and --via ebpf refuses --keep-log.
#[test]
fn keep_log_asks_for_strace() {
    if tool_or_skip("strace").is_none() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let capture = |via: &str| {
        let mut c = naslab();
        c.current_dir(d.path())
            .args([
                "capture",
                "--via",
                via,
                "-o",
                "t.jsonl",
                "--keep-log",
                "s.log",
            ])
            .args(["--", "sh", "-c", "echo x > f"]);
        c
    };
    let err = run_err(&mut capture("ebpf"));
    assert!(err.contains("--keep-log keeps strace's output"), "{err}");
    let res = run_ok(&mut capture("auto"));
    let err = text(&res.stderr);
    assert!(
        err.contains("capturing with strace, not eBPF: --keep-log asks for strace's output"),
        "{err}"
    );
    assert!(err.contains("collector: strace"), "{err}");
    assert!(
        std::fs::read_to_string(d.path().join("s.log"))
            .unwrap()
            .contains("openat(")
    );
}

/// The kept-loaded collector lends itself to one capture at a time and to root alone,
/// refuses another build, cleans up after a capture that died with its programs still
/// running, and a capture it stops under fails rather than miss calls.
#[test]
fn the_kept_collector_serves_one_capture_at_a_time_and_cleans_up_after_each() {
    if !ready(&["setpriv", "sh", "sleep"]) {
        return;
    }
    let mut kept = Kept::start();
    let socket = kept.socket.clone();
    let capture = |dir: &Path, out: &str, script: &str| {
        let mut c = naslab();
        c.current_dir(dir)
            .arg("capture")
            .arg("--collector")
            .arg(&socket)
            .args(["-o", out, "--", "sh", "-c", script]);
        c
    };
    let files_of = |trace: &Path| -> Vec<String> {
        let mut v: Vec<String> = seen(trace).files.into_keys().collect();
        v.sort();
        v
    };

    // A second collector on a live socket is refused, naming it.
    let err = run_err(naslab().args(["collector", "--socket"]).arg(&socket));
    assert!(err.contains("a collector is already listening on"), "{err}");

    // Nor is a file that is no socket taken for a stale one.
    let plain = socket.with_file_name("not-a-socket");
    std::fs::write(&plain, "keep me").unwrap();
    let err = run_err(naslab().args(["collector", "--socket"]).arg(&plain));
    assert!(err.contains("exists and is no socket"), "{err}");
    assert_eq!(std::fs::read_to_string(&plain).unwrap(), "keep me");

    // A capture of another build is refused, naming both builds.
    let mut conn = std::os::unix::net::UnixStream::connect(&socket).unwrap();
    use std::io::{Read, Write};
    conn.write_all(b"naslab-capture 0123456789abcdef\n")
        .unwrap();
    let mut reply = String::new();
    conn.read_to_string(&mut reply).unwrap();
    assert!(
        reply.starts_with("refused: the collector runs another naslab build")
            && reply.contains("0123456789abcdef"),
        "{reply}"
    );

    // Not root: refused, with what to do.
    let d = tempfile::tempdir().unwrap();
    let err = run_err(
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_naslab"))
            .current_dir(d.path())
            .arg("capture")
            .arg("--collector")
            .arg(&socket)
            .args(["-o", "/dev/null", "--", "true"]),
    );
    assert!(err.contains("only root may use the collector"), "{err}");

    // Two at once: the second waits for the first, saying so; each trace holds its
    // own command's files only.
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    // Each step waits for a file in `d`, outside every capture's root, so that nothing
    // here depends on how soon a command runs; the loops give up after 20 s.
    let wait_for = |name: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !d.path().join(name).exists() {
            assert!(Instant::now() < deadline, "{name} never came");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    const UNTIL: &str =
        "i=0; until [ -e ../$F ] || [ $i -ge 400 ]; do sleep 0.05; i=$((i+1)); done";
    let until = |file: &str| UNTIL.replace("$F", file);
    let first = capture(
        &a,
        "../a.jsonl",
        &format!(": > ../a-up; {}; echo a > a.txt", until("go")),
    )
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for("a-up");
    // The second is let go only once it has said that it waits.
    let mut second = capture(&b, "../b.jsonl", "echo b > b.txt")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = {
        use std::io::BufRead;
        let (tx, rx) = std::sync::mpsc::channel();
        let err = second.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = String::new();
            for line in std::io::BufReader::new(err).lines() {
                let line = line.unwrap();
                if line.contains("waiting for the collector at") {
                    let _ = tx.send(());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        let waited = rx.recv_timeout(Duration::from_secs(20)).is_ok();
        std::fs::write(d.path().join("go"), "").unwrap();
        let status = second.wait().unwrap();
        let all = reader.join().unwrap();
        assert!(status.success(), "{all}");
        assert!(waited, "{all}");
        all
    };
    assert!(said.contains("collector: ebpf (kept loaded"), "{said}");
    let res = first.wait_with_output().unwrap();
    assert!(res.status.success(), "{}", text(&res.stderr));
    assert_eq!(files_of(&d.path().join("a.jsonl")), ["a.txt"]);
    assert_eq!(files_of(&d.path().join("b.jsonl")), ["b.txt"]);

    // A capture killed while its command runs: the command goes on writing in the
    // same directory during the next capture, whose trace must not take those writes.
    let c = d.path().join("c");
    std::fs::create_dir(&c).unwrap();
    let mut dying = capture(
        &c,
        "../dead.jsonl",
        &format!(
            ": > ../c-up; {}; echo y > orphan; : > ../orphan-done",
            until("go2")
        ),
    )
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    wait_for("c-up");
    dying.kill().unwrap();
    dying.wait().unwrap();
    run_ok(&mut capture(
        &c,
        "../next.jsonl",
        &format!(": > ../go2; {}; echo z > mine", until("orphan-done")),
    ));
    assert!(c.join("orphan").exists(), "the orphan did not run on");
    assert_eq!(files_of(&d.path().join("next.jsonl")), ["mine"]);

    // The collector stopped while a capture runs: the capture fails, saying why, and
    // the socket is gone.
    let waiting = capture(
        &c,
        "../cut.jsonl",
        &format!(": > ../cut-up; {}", until("never")),
    )
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    wait_for("cut-up");
    kept.stop();
    let res = waiting.wait_with_output().unwrap();
    assert_eq!(res.status.code(), Some(1));
    let err = text(&res.stderr);
    assert!(
        err.contains("the collector stopped during the capture"),
        "{err}"
    );
    assert!(!socket.exists(), "the socket outlived its collector");
}
