//! What every test of the `naslab` binary uses: running it and reading what it said.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[cfg(unix)]
pub mod lab;
pub mod mpi;

/// The binary under test.
pub fn naslab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_naslab"))
}

/// The repository's top directory (for examples/).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Output bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs the command, which must succeed.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("naslab starts");
    assert!(
        out.status.success(),
        "naslab failed:\nstdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    out
}

/// Runs the command, which must fail with exit code 1 and no panic; returns its stderr.
pub fn run_err(cmd: &mut Command) -> String {
    let out = cmd.output().expect("naslab starts");
    assert_eq!(out.status.code(), Some(1), "stdout: {}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// Runs the command, which the argument parser must refuse (exit code 2, naming the
/// flag and the bad value); returns its stderr.
pub fn usage_err(cmd: &mut Command, flag: &str) -> String {
    let out = cmd.output().expect("naslab starts");
    assert_eq!(out.status.code(), Some(2), "stdout: {}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("for '{flag} <")), "{err}");
    err
}

/// A JSON file (run.json, results.json...) as a value.
pub fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The run directory of the one run written under `out` (`out/LABEL/RUN`).
pub fn only_run_dir(out: &Path) -> PathBuf {
    let label = std::fs::read_dir(out)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    only_run_under(&label)
}

/// Fails the test unless `tool arg` runs: the test checks naslab against that tool.
pub fn need_tool(tool: &str, arg: &str) {
    let ok = Command::new(tool)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "{tool} is needed for this test: apt-get install {tool} (scripts/test.sh installs it)"
    );
}

#[allow(unused_imports)]
pub use naslab_test_support::{cannot_run, root_or_skip, tool_or_skip};

/// Whether the tests run as root (mounts, loop devices, servers).
#[allow(unused_imports)]
pub use naslab_host::process::is_root;

// ---- Runs under one of several labels ----

/// The one run directory under `label`, an `OUT/LABEL` directory (for an output
/// directory holding several labels, where [`only_run_dir`] cannot tell which to take).
pub fn only_run_under(label: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(label)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs.pop().unwrap()
}

/// Runs the example trace with the null backend under `out/label`; its run directory.
pub fn example_run(out: &Path, label: &str) -> PathBuf {
    example_run_with(out, label, &[])
}

/// [`example_run`] with more `naslab run` arguments.
pub fn example_run_with(out: &Path, label: &str, args: &[&str]) -> PathBuf {
    run_ok(
        naslab()
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .args(["--backend", "null", "--label", label])
            .args(args)
            .arg("--out")
            .arg(out),
    );
    only_run_under(&out.join(label))
}

/// Replays `trace` on `target` with `--cache keep` (results under `out`) under strace,
/// which logs `calls` (`-e trace=` syntax) of every thread with descriptors decoded
/// (`-f -y`); returns the log, one call a line after its thread id.
pub fn strace_run(calls: &str, trace: &Path, target: &Path, out: &Path) -> String {
    need_tool("strace", "-V");
    let log = out.with_extension("strace.log");
    run_ok(
        Command::new("strace")
            .args(["-f", "-qq", "-y", "-o"])
            .arg(&log)
            .args(["-e", &format!("trace={calls}")])
            .arg(env!("CARGO_BIN_EXE_naslab"))
            .arg("run")
            .arg(trace)
            .arg("-t")
            .arg(target)
            .args(["--cache", "keep", "--out"])
            .arg(out),
    );
    std::fs::read_to_string(&log).unwrap()
}
