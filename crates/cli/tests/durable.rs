//! SMB durable handles and the batch oplock they come with: a second open of a file
//! another stream holds open makes the server break that stream's oplock, and the open
//! waits until the break is acknowledged. naslab answers it at once, also while the
//! holding stream sits between ops. Needs root and Samba; fails under
//! NASLAB_REQUIRE_ROOT=1 without them.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;

mod common;
use common::lab::{lab_ready, up_on_dir};
use common::{json, only_run_dir, run_ok, text};

/// When stream 0 comes back to its file, µs into the trace.
const HOLDER_BACK_US: u64 = 8_000_000;

/// Stream 0 opens `shared.dat` for writing (asking for a durable handle, so with a
/// batch oplock), writes it, and holds it open doing nothing until
/// [`HOLDER_BACK_US`], when it closes it. Stream 1, half a second in, opens the same
/// file, reads it and closes it.
fn two_streams_one_file() -> String {
    let mut t = String::new();
    t.push_str(r#"{"type":"header","format":"naslab-trace","version":1,"workload":"SharedOpen"}"#);
    t.push('\n');
    t.push_str(r#"{"type":"file","id":1,"path":"shared.dat","size":65536,"exists":true}"#);
    t.push('\n');
    let op = |t: &mut String, stream: u32, t_us: u64, op: &str, more: &str| {
        let _ = writeln!(
            t,
            r#"{{"type":"op","op":"{op}","stream":{stream},"t_us":{t_us},"file":1{more}}}"#
        );
    };
    op(&mut t, 0, 0, "open", r#","flags":"write""#);
    op(&mut t, 0, 100, "write", r#","offset":0,"len":4096"#);
    op(&mut t, 0, HOLDER_BACK_US, "close", "");
    op(&mut t, 1, 500_000, "open", r#","flags":"read""#);
    op(&mut t, 1, 500_100, "read", r#","offset":0,"len":4096"#);
    op(&mut t, 1, 500_200, "close", "");
    t
}

/// Stream 1's open breaks stream 0's batch oplock while stream 0 is idle: naslab
/// acknowledges the break then, so stream 1 is done long before stream 0 touches its
/// file again (before this, the break waited for stream 0's next request, eight
/// seconds on; a client that never answers leaves the open waiting out Samba's 35 s
/// break timeout). Both streams' ops succeed, and the durable handle was granted.
#[test]
fn a_second_open_of_a_held_file_does_not_wait_for_the_holder() {
    if !lab_ready("samba") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let lab = up_on_dir(base.path(), "breaks", "samba");
    let trace = base.path().join("shared-open.jsonl");
    std::fs::write(&trace, two_streams_one_file()).unwrap();
    let out = base.path().join("out");
    let res = run_ok(
        common::naslab()
            .env("NASLAB_SMB_PASSWORD", &lab.password)
            .arg("run")
            .arg(&trace)
            .args(["--pace", "original", "--no-ordering", "--target", &lab.url])
            .arg("--lab-dir")
            .arg(base.path())
            .arg("--out")
            .arg(&out),
    );
    let run = json(&only_run_dir(&out).join("run.json"));
    let it = &run["workloads"][0]["iterations"][0];
    assert_eq!(it["errors"], 0, "{it}\n{}", text(&res.stderr));
    let d = &it["durable_handles"];
    assert_eq!(d["asked"], 2, "{it}");
    assert!(d["granted"].as_u64().unwrap() >= 1, "{it}");
    let done = |s: u64| {
        it["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["stream"] == s)
            .unwrap()["done_ns"]
            .as_u64()
            .unwrap()
    };
    // The trace's own schedule is the bound: stream 0 issues nothing before
    // HOLDER_BACK_US, so a break left for its next request ends after it.
    assert!(
        done(1) < HOLDER_BACK_US * 1000,
        "stream 1 ended {} s in, after stream 0 came back to its file ({} s): the oplock break waited for it; {it}",
        done(1) as f64 / 1e9,
        HOLDER_BACK_US as f64 / 1e6
    );
    assert!(done(0) >= HOLDER_BACK_US * 1000, "{it}");
}
