//! `naslab capture --via ebpf` and `--via strace` give the same trace for the same
//! program: the same files declared, and in each stream the same ops (kind, path,
//! offset, length, flags). Needs root (eBPF) and the programs compared; skipped with a
//! note otherwise, failed under NASLAB_REQUIRE_ROOT=1.
#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

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

/// Captures `cmd` in a fresh copy of the tree `setup` makes, once through each
/// collector, and checks that the traces are the same.
fn same_trace(setup: impl Fn(&Path), cmd: &[&str]) -> Seen {
    let d = tempfile::tempdir().unwrap();
    let mut got = Vec::new();
    for via in ["strace", "ebpf"] {
        let root = d.path().join(format!("root-{via}"));
        std::fs::create_dir(&root).unwrap();
        setup(&root);
        let out = d.path().join(format!("{via}.jsonl"));
        let res = run_ok(
            naslab()
                .current_dir(&root)
                // Commits made by both runs get the same time, so the same object names.
                .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
                .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z")
                .args(["capture", "--via", via, "-o"])
                .arg(&out)
                .arg("--")
                .args(cmd),
        );
        let err = text(&res.stderr);
        assert!(err.contains(&format!("collector: {via}")), "{err}");
        got.push(seen(&out));
    }
    let ebpf = got.pop().unwrap();
    let strace = got.pop().unwrap();
    assert!(strace.generator.contains("capture (strace) of:"));
    assert!(ebpf.generator.contains("capture (ebpf) of:"));
    assert!(!ebpf.streams.is_empty(), "no op captured");
    assert_eq!(strace.files, ebpf.files, "the files declared differ");
    for (n, ops) in &strace.streams {
        let other = ebpf.streams.get(n).cloned().unwrap_or_default();
        let at = ops.iter().zip(&other).position(|(a, b)| a != b);
        assert!(
            at.is_none() && ops.len() == other.len(),
            "stream {n} differs at op {at:?} (strace {} ops, eBPF {}): strace {:?}, eBPF {:?}",
            ops.len(),
            other.len(),
            at.map(|i| &ops[i..(i + 3).min(ops.len())]),
            at.map(|i| &other[i..(i + 3).min(other.len())]),
        );
    }
    assert_eq!(strace.streams.len(), ebpf.streams.len());
    ebpf
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
