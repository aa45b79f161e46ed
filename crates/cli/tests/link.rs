//! `naslab lab up --link` and what a run records of the link: a run against the lab's
//! URL says in run.json which link it crossed (profile, settings, emulator and version)
//! and the round trip naslab measured over it; a run against the server's own port
//! records the measured round trip alone. Needs root, the servers and Toxiproxy's
//! server; fails under NASLAB_REQUIRE_ROOT=1 without them.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

mod common;
use common::lab::{Down, lab_ready, matrix_comparison, open_for_lab};
use common::{cannot_run, run_ok, text};

fn naslab() -> Command {
    let mut c = common::naslab();
    c.env_remove("NASLAB_SMB_PASSWORD");
    c
}

/// The run.json of the only run under `out`'s label `run`.
fn run_json(out: &Path) -> serde_json::Value {
    let dir = std::fs::read_dir(out.join("run"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap()
}

/// Runs a small workload against `url`, with the labs under `base`; its run.json.
fn run_against(url: &str, password: &str, base: &Path, out: &Path) -> serde_json::Value {
    let r = run_ok(
        naslab()
            .env("NASLAB_SMB_PASSWORD", password)
            .args([
                "run",
                "--workload",
                "FileCopyToNAS",
                "--scale",
                "0.01",
                "--target",
                url,
                "--lab-dir",
            ])
            .arg(base)
            .arg("--out")
            .arg(out),
    );
    let err = text(&r.stderr);
    assert!(err.contains("round trip to 127.0.0.1:"), "{err}");
    run_json(out)
}

#[test]
fn a_run_through_the_lab_link_records_it_and_the_round_trip_it_measured() {
    for server in ["samba", "nfs"] {
        // A server that is not installed skips its own half, not the other's.
        if !lab_ready(server) {
            continue;
        }
        if let Err(e) = naslab_lab::toxiproxy::find() {
            cannot_run(&e.to_string());
            return;
        }
        let base = tempfile::tempdir().unwrap();
        open_for_lab(base.path());
        let name = format!("link-{server}");
        let up = run_ok(
            naslab()
                .args(["lab", "up", "--fs", "dir", "--server", server])
                .args(["--link", "rtt=10ms,rate=100mbit", "--name", &name])
                .arg("--lab-dir")
                .arg(base.path()),
        );
        let _down = Down::new(base.path(), &name);
        let url = text(&up.stdout).trim().to_string();
        let said = text(&up.stderr);
        assert!(
            said.contains("link: custom: rtt 10.00 ms, 100 Mbit/s (toxiproxy v2.12.0"),
            "{said}"
        );
        let state: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(base.path().join(&name).join("state.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(state["url"], url.as_str());
        let direct = state["link"]["direct_url"].as_str().unwrap().to_string();
        assert_ne!(direct, url);
        let password = state["password"].as_str().unwrap_or_default().to_string();
        let status = text(
            &run_ok(
                naslab()
                    .args(["lab", "status", "--lab-dir"])
                    .arg(base.path()),
            )
            .stdout,
        );
        assert!(
            status.contains("link         custom: rtt 10.00 ms"),
            "{status}"
        );
        assert!(status.contains("toxiproxy-server pid"), "{status}");

        let out = base.path().join("through");
        let run = run_against(&url, &password, base.path(), &out);
        let link = &run["options"]["link"];
        let e = &link["emulated"];
        assert_eq!(e["profile"], "custom", "{link}");
        assert_eq!(e["rtt_ns"], 10_000_000);
        assert_eq!(e["jitter_ns"], 0);
        assert_eq!(e["rate_bit_s"], 100_000_000);
        assert_eq!(e["emulator"], "toxiproxy");
        assert_eq!(e["emulator_version"], "v2.12.0");
        assert_eq!(e["delay_level"], "stream");
        let p = &link["probe"];
        assert_eq!(
            p["method"],
            if server == "samba" {
                "SMB2 ECHO"
            } else {
                "NFS NULL"
            }
        );
        assert_eq!(p["samples"], 21);
        assert!(p["min_ns"].as_u64().unwrap() >= 10_000_000, "{p}");

        // The server's own port: no emulated link, a round trip well under the link's.
        let out = base.path().join("direct");
        let run = run_against(&direct, &password, base.path(), &out);
        let link = &run["options"]["link"];
        assert!(link.get("emulated").is_none(), "{link}");
        assert!(
            link["probe"]["median_ns"].as_u64().unwrap() < 10_000_000,
            "{link}"
        );

        let pid = state["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "toxiproxy-server")
            .unwrap()["pid"]
            .as_u64()
            .unwrap();
        run_ok(
            naslab()
                .args(["lab", "down", "--name", &name, "--lab-dir"])
                .arg(base.path()),
        );
        // Gone, or a zombie its new parent has yet to reap.
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let running = stat
            .rfind(')')
            .is_some_and(|i| !stat[i + 2..].starts_with('Z'));
        assert!(
            !running,
            "toxiproxy-server (pid {pid}) stopped with the lab: {stat}"
        );
    }
}

#[test]
fn a_link_sweep_runs_the_same_ops_at_every_link_and_tables_them_against_rtt() {
    if !lab_ready("samba") {
        return;
    }
    if let Err(e) = naslab_lab::toxiproxy::find() {
        cannot_run(&e.to_string());
        return;
    }
    let base = tempfile::tempdir().unwrap();
    open_for_lab(base.path());
    let out = base.path().join("results");
    let run = run_ok(
        naslab()
            .args(["lab", "matrix", "--fs", "dir", "--server", "samba"])
            .args(["--links", "none;rtt=5ms", "--workload", "FileCopyToNAS"])
            .args(["--scale", "0.01", "--lab-dir"])
            .arg(base.path())
            .arg("--out")
            .arg(&out),
    );
    let table = text(&run.stdout);
    assert!(table.contains("\nlinks:\n"), "{table}");
    let said = text(&run.stderr);
    assert!(
        said.contains("== configuration 2/2: samba on dir (defaults), link rtt=5ms =="),
        "{said}"
    );
    assert!(
        table.contains("dir-samba-defaults-none") && table.contains("dir-samba-defaults-rtt5ms"),
        "{table}"
    );
    let cmp = matrix_comparison(&out);
    let configs = cmp["configs"].as_array().unwrap();
    assert_eq!(configs[0]["link_name"], "none");
    assert_eq!(configs[1]["link_name"], "rtt=5ms");
    let cells: Vec<&serde_json::Value> = cmp["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| &row[0])
        .collect();
    for c in &cells {
        assert!(c["error"].is_null(), "{c}");
        assert!(c["ops"].as_u64().unwrap() > 0, "{c}");
        assert!(c["rtt_measured_ns"].as_u64().is_some(), "{c}");
    }
    assert_eq!(
        cells[0]["ops"], cells[1]["ops"],
        "the same ops at every link"
    );
    let ops = cells[0]["ops"].as_u64().unwrap();
    assert!(
        table.contains(&format!("samba on dir (defaults): {ops} ops at every link")),
        "{table}"
    );
    assert!(cells[1]["rtt_measured_ns"].as_u64().unwrap() >= 5_000_000);
    // Each point's run says which link it crossed.
    let runs = cmp["runs"].as_array().unwrap();
    let link_of = |i: usize| -> serde_json::Value {
        let run_dir = Path::new(runs[i].as_str().unwrap());
        let run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap())
                .unwrap();
        run["options"]["link"].clone()
    };
    assert!(link_of(0).get("emulated").is_none());
    assert_eq!(link_of(1)["emulated"]["rtt_ns"], 5_000_000);
}
