//! Failover: the path to a lab's server broken mid-run with `naslab lab fault` (the
//! link cut for 3 s, the server restarted), and what the run says about it: it
//! completes, no op fails, the file on the server's disk is exact (read from the share
//! directory, block by block, not through naslab), and run.json's `failover` holds the
//! stalls and the gap. Needs root, the servers and Toxiproxy's server; fails under
//! NASLAB_REQUIRE_ROOT=1 without them.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::lab::{Down, lab_ready, open_for_lab, up_on_dir};
use common::{cannot_run, json, only_run_dir, run_err, run_ok, text};

/// FileCopyToNAS at this scale writes one file of 70 MB in 64 KiB writes.
const SCALE: &str = "0.05";
const FILE_BYTES: u64 = 70_000_000;
/// The link's rate: the copy takes about 7 s, so a fault lands mid-run.
const LINK: &str = "rate=80mbit";

fn naslab() -> Command {
    let mut c = common::naslab();
    c.env_remove("NASLAB_SMB_PASSWORD");
    c
}

/// A lab of `server` on a directory behind [`LINK`]: its URL, its share directory and
/// the guard that takes it down.
fn lab(server: &str, base: &Path, name: &str, opts: &[&str]) -> (String, PathBuf, String, Down) {
    open_for_lab(base);
    let mut cmd = naslab();
    cmd.args(["lab", "up", "--fs", "dir", "--server", server])
        .args(["--link", LINK, "--name", name, "--lab-dir"])
        .arg(base);
    for o in opts {
        cmd.args(["--opt", o]);
    }
    let up = run_ok(&mut cmd);
    let down = Down::new(base, name);
    let state = json(&base.join(name).join("state.json"));
    let share = PathBuf::from(state["share_dir"].as_str().unwrap());
    let password = state["password"].as_str().unwrap_or_default().to_string();
    (text(&up.stdout).trim().to_string(), share, password, down)
}

/// The file FileCopyToNAS writes, under the share.
fn copied_file(share: &Path) -> PathBuf {
    share.join("naslab/FileCopyToNAS/Backup.bkf")
}

/// Runs FileCopyToNAS against `url` and, once it has written a tenth of its file to the
/// share, injects `fault` into the lab; waits for both. The fault's output, how long the
/// fault command took, and the run's exit status, output and run.json.
fn run_with_fault(
    url: &str,
    password: &str,
    share: &Path,
    base: &Path,
    name: &str,
    fault: &[&str],
    run_args: &[&str],
) -> (String, Duration, bool, String, serde_json::Value) {
    let out = base.join(format!("out-{}", fault.join("")));
    let mut run = naslab()
        .env("NASLAB_SMB_PASSWORD", password)
        .args(["run", "--workload", "FileCopyToNAS", "--scale", SCALE])
        .args(run_args)
        .args(["--target", url, "--lab-dir"])
        .arg(base)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let file = copied_file(share);
    let start = Instant::now();
    while std::fs::metadata(&file).map_or(0, |m| m.len()) < FILE_BYTES / 10 {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the run wrote nothing to {} within 120 s",
            file.display()
        );
        if let Some(status) = run.try_wait().unwrap() {
            let o = run.wait_with_output().unwrap();
            panic!(
                "the run ended ({status}) before the fault: {}",
                text(&o.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let began = Instant::now();
    let f = run_ok(
        naslab()
            .args(["lab", "fault", "--name", name, "--lab-dir"])
            .arg(base)
            .args(fault),
    );
    let took = began.elapsed();
    let done = run.wait_with_output().unwrap();
    // What it printed: the table (stdout), then the rest (stderr).
    let err = text(&done.stdout) + &text(&done.stderr);
    let ok = done.status.success();
    let run_json = if ok {
        json(&only_run_dir(&out).join("run.json"))
    } else {
        serde_json::Value::Null
    };
    (text(&f.stdout), took, ok, err, run_json)
}

/// Checks the copied file on the server's disk, read from the share directory: its size
/// is the trace's, and every 4 KiB block is the self-describing block `--verify` wrote
/// there (its header names this file's block at this offset, both checksums hold), so
/// no write was lost, doubled or misplaced across the fault.
fn check_file_on_disk(share: &Path) {
    use naslab_engine::data::{BLOCK, read_header};
    let path = copied_file(share);
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, FILE_BYTES, "{}", path.display());
    let mut seed_file = None;
    for (i, blk) in bytes.chunks(BLOCK).enumerate() {
        let h = read_header(blk)
            .unwrap_or_else(|| panic!("block {i} of {} is not naslab's", path.display()));
        assert!(h.head_ok, "block {i}: its header does not check");
        // A short last block cannot carry the body's checksum.
        assert!(
            h.body_ok || blk.len() < BLOCK,
            "block {i}: its body does not check"
        );
        assert_eq!(
            h.header.block, i as u64,
            "block {i} holds another block's data"
        );
        let sf = (h.header.seed, h.header.file);
        assert_eq!(
            *seed_file.get_or_insert(sf),
            sf,
            "block {i} is another file's"
        );
    }
}

/// A figure of the fault command's output: "was broken for N s".
fn broken_s(fault_out: &str) -> f64 {
    fault_out
        .split("was broken for ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{fault_out}"))
}

/// The iteration's failover, having checked the run had no failed op.
fn failover(run: &serde_json::Value) -> serde_json::Value {
    let it = &run["workloads"][0]["iterations"][0];
    assert_eq!(it["errors"], 0, "{it}");
    assert!(it.get("aborted").is_none(), "{it}");
    assert_eq!(it["bytes_written"], FILE_BYTES, "{it}");
    let f = it["failover"].clone();
    assert!(f.is_object(), "no failover recorded: {it}");
    assert_eq!(f["failed_ops"], 0, "{f}");
    assert!(f["stalled_ops"].as_u64().unwrap() >= 1, "{f}");
    assert!(f["reconnects"].as_u64().unwrap() >= 1, "{f}");
    assert!(f["retries"].as_u64().unwrap() >= 1, "{f}");
    f
}

fn ready(server: &str) -> bool {
    if !lab_ready(server) {
        return false;
    }
    if let Err(e) = naslab_lab::toxiproxy::find() {
        cannot_run(&e.to_string());
        return false;
    }
    true
}

/// The link cut for 3 s mid-copy over NFS: the client connects again and sends the
/// request in flight again. The gap is the cut, measured: from the issue of the op in
/// flight when the link went (at most one 64 KiB write, 6.6 ms at 80 Mbit/s, before the
/// cut) to its completion once a new connection carried it. Its tolerance: -0.2 s (the
/// cut begins inside the API call that disables the proxies, a few ms before the time
/// stamped, and ends before the call enabling them returns) and +1.5 s (the client's
/// attempts to connect again are at most 100 ms apart, then the write goes through the
/// rate-limited link again; the rest is room for a busy machine, since this is a wall
/// clock around a sleep).
#[test]
fn nfs_rides_out_a_3_s_cut_and_the_gap_is_the_cut() {
    if !ready("nfs") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let (url, share, password, _down) = lab("nfs", base.path(), "cut-nfs", &[]);
    let (said, _, ok, err, run) = run_with_fault(
        &url,
        &password,
        &share,
        base.path(),
        "cut-nfs",
        &["--cut", "3s"],
        &["--verify"],
    );
    assert!(ok, "the run failed: {err}");
    assert!(
        said.contains("link cut: proxies nfs, mount disabled"),
        "{said}"
    );
    assert!(said.contains("link restored"), "{said}");
    // The cut lasts at least what was asked; how much longer depends on the proxy's
    // API calls on a busy machine, so the gap is held to the cut as measured.
    let broken = broken_s(&said);
    assert!(broken >= 3.0, "{said}");
    let f = failover(&run);
    let gap = f["gap_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!(
        (broken - 0.2..=broken + 1.5).contains(&gap),
        "gap {gap} s for a cut of {broken} s: {f}"
    );
    assert!(
        f["longest_stall_ns"].as_u64().unwrap() as f64 / 1e9 >= 3.0 - 0.2,
        "{f}"
    );
    assert!(err.contains("failover   "), "{err}");
    check_file_on_disk(&share);
}

/// The link black-holed for 3 s mid-copy over NFS: the proxies hold what is sent either
/// way and keep the connections open, so the client sees no break, only no reply.
/// With `--retrans-timeout 1s` the client takes a request unanswered for 1 s as a
/// broken connection, makes a new one (held too while the hole lasts) and sends it
/// again. The run completes with no failed op and the file on disk exact; the gap is
/// the hole as measured, within the NFS cut's tolerance plus the retransmit timeout
/// (the request sent again once the path is back may have waited up to that long in
/// the hole).
#[test]
fn nfs_rides_out_a_3_s_black_hole_with_a_retransmit_timeout() {
    if !ready("nfs") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let (url, share, password, _down) = lab("nfs", base.path(), "hole-nfs", &[]);
    let (said, _, ok, err, run) = run_with_fault(
        &url,
        &password,
        &share,
        base.path(),
        "hole-nfs",
        &["--black-hole", "3s"],
        &["--verify", "--retrans-timeout", "1s"],
    );
    assert!(ok, "the run failed: {err}");
    assert!(
        said.contains("link black-holed: proxies nfs, mount hold what they are sent"),
        "{said}"
    );
    assert!(said.contains("link restored"), "{said}");
    assert_eq!(
        run["options"]["protocol"]["retrans_timeout_ns"], 1_000_000_000u64,
        "{}",
        run["options"]
    );
    let broken = broken_s(&said);
    assert!(broken >= 3.0, "{said}");
    let f = failover(&run);
    let gap = f["gap_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!(
        (broken - 0.2..=broken + 1.0 + 1.5).contains(&gap),
        "gap {gap} s for a hole of {broken} s: {f}"
    );
    // Each retransmit timeout spent in the hole made a new connection.
    assert!(f["reconnects"].as_u64().unwrap() >= 2, "{f}");
    check_file_on_disk(&share);
}

/// ganesha stopped and started again mid-copy: NFSv3 keeps no state on a connection and
/// ganesha's file handles outlive it, so the client connects again and goes on. The
/// gap is no longer than the fault command took plus the same +1.5 s; ganesha's write
/// verifier changes with its restart, so the file's unstable writes before it are
/// reported unconfirmed (one file), though the kernel under ganesha kept them: the file
/// on disk is exact.
#[test]
fn nfs_rides_out_a_ganesha_restart() {
    if !ready("nfs") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let (url, share, password, _down) = lab("nfs", base.path(), "restart-nfs", &[]);
    let (said, took, ok, err, run) = run_with_fault(
        &url,
        &password,
        &share,
        base.path(),
        "restart-nfs",
        &["--restart-server"],
        &["--verify"],
    );
    assert!(ok, "the run failed: {err}");
    assert!(said.contains("stopping ganesha.nfsd"), "{said}");
    assert!(said.contains("ganesha.nfsd started again"), "{said}");
    let f = failover(&run);
    let gap = f["gap_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!(
        gap > 0.0 && gap <= took.as_secs_f64() + 1.5,
        "gap {gap} s for a restart that took {took:?}: {f}"
    );
    assert_eq!(f["unconfirmed_writes"], 1, "{f}");
    check_file_on_disk(&share);

    // The lab knows its new ganesha: the old one is gone, the new one runs and is the
    // one `down` will stop.
    let ganesha = |said: &str, word: &str| -> u32 {
        said.split(word)
            .nth(1)
            .and_then(|r| {
                r.split(|c: char| !c.is_ascii_digit())
                    .find(|t| !t.is_empty())
            })
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("{said}"))
    };
    let (old, new) = (
        ganesha(&said, "stopping ganesha.nfsd (pid "),
        ganesha(&said, "started again (pid "),
    );
    assert_ne!(old, new);
    assert!(!Path::new(&format!("/proc/{old}")).exists(), "{said}");
    let state = json(&base.path().join("restart-nfs/state.json"));
    let pids: Vec<u64> = state["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pid"].as_u64().unwrap())
        .collect();
    assert!(
        pids.contains(&u64::from(new)) && !pids.contains(&u64::from(old)),
        "{state}"
    );

    // A reset closes every connection and mends the link at once.
    let reset = text(
        &run_ok(
            naslab()
                .args([
                    "lab",
                    "fault",
                    "--name",
                    "restart-nfs",
                    "--reset",
                    "--lab-dir",
                ])
                .arg(base.path()),
        )
        .stdout,
    );
    assert!(
        reset.contains("link cut") && reset.contains("link restored"),
        "{reset}"
    );
    assert!(broken_s(&reset) < 1.0, "{reset}");
}

/// A lab without a link has nothing to cut: the fault is refused, saying what to do.
#[test]
fn a_cut_needs_a_link() {
    if !lab_ready("nfs") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let _lab = up_on_dir(base.path(), "nolink", "nfs");
    let err = run_err(
        naslab()
            .args([
                "lab",
                "fault",
                "--name",
                "nolink",
                "--cut",
                "1s",
                "--lab-dir",
            ])
            .arg(base.path()),
    );
    assert!(err.contains("the lab has no link to cut"), "{err}");
    assert!(err.contains("--link rtt=0"), "{err}");
}

/// The link cut for 3 s mid-copy over SMB, on a share that grants no durable handles
/// (`durable handles = no`): the client asks for one with the file's open, gets none,
/// signs in again on a new connection, but the file's handle was lost with the old
/// session, so the write in flight and every later op on that handle fail (ESTALE,
/// which does not stop the run) and are counted and named; no op succeeded after the
/// cut, so there is no gap. The file on the server's disk holds what was written before
/// the cut: the bytes the run counts as written, or one write more when the server
/// wrote the one in flight before the connection went.
#[test]
fn smb_without_durable_handles_counts_and_names_the_ops_the_cut_lost() {
    if !ready("samba") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let (url, share, password, _down) =
        lab("samba", base.path(), "cut-smb", &["durable handles = no"]);
    let (said, _, ok, err, run) = run_with_fault(
        &url,
        &password,
        &share,
        base.path(),
        "cut-smb",
        &["--cut", "3s"],
        &["--tolerate-errors"],
    );
    assert!(ok, "the run failed: {err}");
    assert!(said.contains("link cut: proxies smb disabled"), "{said}");
    let it = &run["workloads"][0]["iterations"][0];
    let f = &it["failover"];
    assert!(f.is_object(), "no failover recorded: {it}");
    assert!(f["reconnects"].as_u64().unwrap() >= 1, "{f}");
    assert!(f["stalled_ops"].as_u64().unwrap() >= 1, "{f}");
    let failed = f["failed_ops"].as_u64().unwrap();
    assert!(failed >= 1, "{f}");
    // Every failure of the iteration is one of the failover's, and the other way round.
    assert_eq!(it["errors"].as_u64().unwrap(), failed, "{it}");
    let named = f["failed"].as_array().unwrap();
    assert_eq!(named.len() as u64, failed.min(100), "{f}");
    for n in named {
        assert!(n["path"] == "Backup.bkf", "{n}");
        let e = n["error"].as_str().unwrap();
        assert!(e.starts_with("ESTALE"), "{n}");
        assert!(
            e.contains("the server granted no durable handle for it"),
            "{n}"
        );
    }
    let d = &it["durable_handles"];
    assert_eq!(d["asked"], 1, "{it}");
    assert_eq!(d["granted"], 0, "{it}");
    assert_eq!(d["reclaimed"], 0, "{it}");
    assert_eq!(d["lost"], 1, "{it}");
    assert_eq!(named[0]["op"], "write", "{f}");
    assert!(f.get("gap_ns").is_none(), "{f}");
    assert!(err.contains("failover   "), "{err}");
    let written = it["bytes_written"].as_u64().unwrap();
    assert!(written > 0 && written < FILE_BYTES, "{it}");
    let on_disk = std::fs::metadata(copied_file(&share)).unwrap().len();
    assert!(
        on_disk == written || on_disk == written + 65536,
        "{on_disk} bytes on disk, {written} written"
    );
}

/// A lab Samba granting durable handles: Samba 4.17's defaults do (`durable handles`
/// on, `kernel oplocks` and `kernel share modes` off), said here so that the test
/// does not hang on them.
const DURABLE: &[&str] = &["durable handles = yes"];

/// The link cut for 3 s mid-copy over SMB, on a share granting durable handles, the
/// session on `dialect`: the client signs in again on a new connection, claims the
/// file's handle back (DH2C with the CreateGuid it asked with on SMB 3.x, DHnC with the
/// file id on 2.x) and sends the write in flight again. The run completes with no
/// failed op, the file on the server's disk is exact, and the gap is the cut as
/// measured within the tolerance of the NFS test above.
fn smb_with_durable_handles_rides_out_a_3_s_cut(name: &str, opts: &[&str], dialect: &str) {
    if !ready("samba") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let (url, share, password, _down) = lab("samba", base.path(), name, opts);
    let (said, _, ok, err, run) = run_with_fault(
        &url,
        &password,
        &share,
        base.path(),
        name,
        &["--cut", "3s"],
        &["--verify"],
    );
    assert!(ok, "the run failed: {err}");
    assert_eq!(
        run["options"]["protocol"]["dialect"], dialect,
        "{}",
        run["options"]
    );
    assert!(said.contains("link cut: proxies smb disabled"), "{said}");
    let broken = broken_s(&said);
    assert!(broken >= 3.0, "{said}");
    let f = failover(&run);
    let gap = f["gap_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!(
        (broken - 0.2..=broken + 1.5).contains(&gap),
        "gap {gap} s for a cut of {broken} s: {f}"
    );
    let it = &run["workloads"][0]["iterations"][0];
    let d = &it["durable_handles"];
    // The copy opens its one file once in the measured phase: asked, granted, claimed
    // back at the reconnect.
    assert_eq!(d["asked"], 1, "{it}");
    assert_eq!(d["granted"], 1, "{it}");
    assert_eq!(d["reclaimed"], 1, "{it}");
    assert_eq!(d["lost"], 0, "{it}");
    assert!(
        err.contains("durable    handles 1 asked, 1 granted"),
        "{err}"
    );
    check_file_on_disk(&share);
}

#[test]
fn smb_with_durable_handles_rides_out_a_3_s_cut_and_the_gap_is_the_cut() {
    smb_with_durable_handles_rides_out_a_3_s_cut("cut-dh", DURABLE, "SMB 3.1.1");
}

/// The same on SMB 2.1, whose durable handles are DHnQ and DHnC.
#[test]
fn smb_2_1_durable_handles_ride_out_a_3_s_cut_too() {
    let mut opts = DURABLE.to_vec();
    opts.push("global: server max protocol = SMB2_10");
    smb_with_durable_handles_rides_out_a_3_s_cut("cut-dh21", &opts, "SMB 2.1");
}

/// `--io-timeout` bounds an op's recovery too: with a 1 s timeout, a 4 s cut is more
/// than an op may wait, so the op in flight fails with ENOTCONN saying that no new
/// connection carried it within the I/O timeout, and the run stops there with what it
/// measured.
#[test]
fn nfs_gives_up_on_a_cut_longer_than_the_io_timeout() {
    if !ready("nfs") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let (url, share, password, _down) = lab("nfs", base.path(), "timeout-nfs", &[]);
    let (_, _, ok, err, _) = run_with_fault(
        &url,
        &password,
        &share,
        base.path(),
        "timeout-nfs",
        &["--cut", "4s"],
        &["--io-timeout", "1s"],
    );
    assert!(
        !ok,
        "the run went on through a cut longer than its I/O timeout: {err}"
    );
    assert!(
        err.contains("broke and no new one carried the request within the I/O timeout (1 s"),
        "{err}"
    );
    assert!(err.contains("ENOTCONN"), "{err}");
}
