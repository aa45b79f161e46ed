//! What a hostile neighbour with write access to the target cannot make naslab do
//! beyond symbolic links: write through a hard link or a device node planted mid-run,
//! delete what is mounted under its directory, or be locked out of its own target by
//! a tree deeper than the open-file limit.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::*;

const ROUNDS: usize = 40;

/// Workload `HL`: each round opens the prepared `docs/big.dat` (1 MiB), writes its first
/// 4 KiB, and creates `docs/new.tmp`, writes 1,300 bytes to it and removes it.
fn rewrite_trace(dir: &Path) -> PathBuf {
    let path = dir.join("rewrite.jsonl");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut line = |s: String| writeln!(w, "{s}").unwrap();
    line(r#"{"type":"header","format":"naslab-trace","version":1,"workload":"HL"}"#.into());
    line(r#"{"type":"file","id":1,"path":"docs/big.dat","size":1048576,"exists":true}"#.into());
    line(r#"{"type":"file","id":2,"path":"docs/new.tmp","exists":false}"#.into());
    for _ in 0..ROUNDS {
        for (op, file, extra) in [
            ("open", 1, r#","flags":"write""#),
            ("write", 1, r#","offset":0,"len":4096"#),
            ("close", 1, ""),
            ("create", 2, ""),
            ("write", 2, r#","offset":0,"len":1300"#),
            ("close", 2, ""),
            ("unlink", 2, ""),
        ] {
            line(format!(
                r#"{{"type":"op","op":"{op}","file":{file}{extra}}}"#
            ));
        }
    }
    w.flush().unwrap();
    path
}

fn start_paced(trace: &Path, target: &Path, out: &Path) -> Child {
    naslab()
        .arg("run")
        .arg(trace)
        .arg("-t")
        .arg(target)
        .arg("--out")
        .arg(out)
        .args(["--pace", "delay:100ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Every file under `root` with a checksum of its content (FNV-1a) and its size.
fn checksums(root: &Path) -> Vec<(PathBuf, u64, usize)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).unwrap() {
        let p = e.unwrap().path();
        let bytes = std::fs::read(&p).unwrap();
        let sum = bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
        });
        out.push((p, sum, bytes.len()));
    }
    out.sort();
    out
}

/// Puts `make`'s entry at `at` in one step (as `ln -f` does): made beside it, then
/// renamed over it.
fn plant(at: &Path, make: impl FnOnce(&Path)) {
    let beside = at.with_extension("planted");
    make(&beside);
    std::fs::rename(&beside, at).unwrap();
}

/// A victim tree beside the target: `big` (1 MiB) and `important` (29 bytes).
fn victim_tree(work: &Path) -> PathBuf {
    let victim = work.join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    let big: Vec<u8> = (0..1u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(victim.join("big"), big).unwrap();
    std::fs::write(victim.join("important"), b"twenty-nine bytes of records\n").unwrap();
    victim
}

#[test]
fn hard_links_planted_mid_run_are_not_written_through() {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("t");
    let out = work.path().join("out");
    std::fs::create_dir_all(&target).unwrap();
    let victim = victim_tree(work.path());
    let before = checksums(&victim);
    let child = start_paced(&rewrite_trace(work.path()), &target, &out);
    let docs = target.join("naslab/HL/docs");
    wait_for("the measured phase", || docs.join("new.tmp").exists());
    plant(&docs.join("big.dat"), |p| {
        std::fs::hard_link(victim.join("big"), p).unwrap()
    });
    plant(&docs.join("new.tmp"), |p| {
        std::fs::hard_link(victim.join("important"), p).unwrap()
    });
    let done = child.wait_with_output().unwrap();
    let err = text(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{err}");
    assert!(
        err.contains("EMLINK") && err.contains("hard links"),
        "{err}"
    );
    assert_eq!(checksums(&victim), before, "the victim tree changed");
    let run = json(&only_run_dir(&out).join("run.json"));
    assert!(run["aborted"].as_str().unwrap().contains("EMLINK"), "{run}");
}

#[test]
fn a_device_node_planted_mid_run_is_not_written_to() {
    if !root_or_skip("making a loop device and a device node") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("t");
    let out = work.path().join("out");
    std::fs::create_dir_all(&target).unwrap();
    let victim = victim_tree(work.path());
    let disk = victim.join("disk.img");
    std::fs::write(&disk, vec![0x5a; 1 << 20]).unwrap();
    let losetup = run_ok(Command::new("losetup").args(["-f", "--show"]).arg(&disk));
    let loop_dev = text(&losetup.stdout).trim().to_string();
    let detach = Detach(loop_dev.clone());
    let rdev = std::os::unix::fs::MetadataExt::rdev(&std::fs::metadata(&loop_dev).unwrap());
    let before = checksums(&victim);
    let child = start_paced(&rewrite_trace(work.path()), &target, &out);
    let docs = target.join("naslab/HL/docs");
    wait_for("the measured phase", || docs.join("new.tmp").exists());
    plant(&docs.join("big.dat"), |p| {
        let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        let made =
            // SAFETY: c is NUL-terminated; mknod makes a block device node there.
            unsafe { libc::mknod(c.as_ptr(), libc::S_IFBLK | 0o666, rdev) };
        assert_eq!(made, 0);
    });
    let done = child.wait_with_output().unwrap();
    let err = text(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{err}");
    assert!(
        err.contains("ENXIO") && err.contains("a block device"),
        "{err}"
    );
    drop(detach);
    assert_eq!(checksums(&victim), before, "the loop device's file changed");
    // The node is left as it was, and removed (not opened) by the next clean.
    let kind = std::fs::symlink_metadata(docs.join("big.dat")).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_block_device(
        &kind.file_type()
    ));
    run_ok(naslab().arg("clean").arg("-t").arg(&target));
    assert!(!target.join("naslab").exists());
}

/// Detaches a loop device when dropped.
struct Detach(String);

impl Drop for Detach {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

/// Unmounts a mount point when dropped.
struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn clean_and_a_new_run_never_descend_into_a_mount_under_the_target() {
    if !root_or_skip("bind-mounting a directory under the target") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("t");
    let out = work.path().join("out");
    std::fs::create_dir_all(&target).unwrap();
    let example = repo_root().join("examples/document-save.jsonl");
    let run = |out: &Path| {
        naslab()
            .arg("run")
            .arg(&example)
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    assert!(run(&out).status.success());
    let victim = victim_tree(work.path());
    let before = checksums(&victim);
    let mnt = target.join("naslab/DocumentSave/mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    run_ok(Command::new("mount").arg("--bind").arg(&victim).arg(&mnt));
    let _unmount = Unmount(mnt.clone());
    let err = run_err(naslab().arg("clean").arg("-t").arg(&target));
    assert!(
        err.contains("DocumentSave/mnt' is a mount point") && err.contains("unmount it"),
        "{err}"
    );
    assert_eq!(checksums(&victim), before, "clean deleted in the mount");
    // The next run empties the workload directory first: refused the same way.
    let again = run(&work.path().join("out2"));
    let err = text(&again.stderr);
    assert_eq!(again.status.code(), Some(1), "{err}");
    assert!(err.contains("DocumentSave/mnt' is a mount point"), "{err}");
    assert_eq!(checksums(&victim), before, "the run deleted in the mount");
}

#[test]
fn a_tree_deeper_than_the_open_file_limit_is_removed() {
    let work = tempfile::tempdir().unwrap();
    let target = work.path().join("t");
    std::fs::create_dir_all(&target).unwrap();
    // 1,500 levels, as a trace may declare (3,001 bytes, under PATH_MAX).
    let deep = work.path().join("deep.jsonl");
    let path = "d/".repeat(1500) + "f";
    std::fs::write(
        &deep,
        format!(
            "{}\n{{\"type\":\"file\",\"id\":1,\"path\":\"{path}\",\"size\":10,\"exists\":true}}\n{}\n",
            r#"{"type":"header","format":"naslab-trace","version":1,"workload":"Deep"}"#,
            r#"{"type":"op","op":"stat","file":1}"#
        ),
    )
    .unwrap();
    let limited = |cmd: &mut Command| {
        // SAFETY: setrlimit between fork and exec touches only the child.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(cmd, || {
                let lim = libc::rlimit {
                    rlim_cur: 1024,
                    rlim_max: 1024,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    };
    for i in 0..2 {
        let mut cmd = naslab();
        cmd.arg("run")
            .arg(&deep)
            .arg("-t")
            .arg(&target)
            .arg("--out")
            .arg(work.path().join(format!("out{i}")));
        limited(&mut cmd);
        run_ok(&mut cmd);
    }
    let mut cmd = naslab();
    cmd.arg("clean").arg("-t").arg(&target);
    limited(&mut cmd);
    run_ok(&mut cmd);
    assert!(!target.join("naslab").exists());
}
