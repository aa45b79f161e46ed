//! Runs found again by device: --device, --firmware, --notes and --tag into run.json and
//! the report, and `naslab results` listing and filtering what a results directory holds.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{json, naslab, run_err, run_ok, text, usage_err};

/// One null-backend run of a small built-in workload; returns its run directory.
fn null_run(out: &Path, label: &str, workload: &str, extra: &[&str]) -> PathBuf {
    let res = run_ok(
        naslab()
            .args([
                "run",
                "--backend",
                "null",
                "--scale",
                "0.001",
                "--workload",
                workload,
            ])
            .args(["--label", label])
            .args(extra)
            .arg("--out")
            .arg(out),
    );
    let err = text(&res.stderr);
    let dir = err
        .lines()
        .find_map(|l| l.strip_prefix("results: "))
        .unwrap_or_else(|| panic!("no results line in: {err}"));
    PathBuf::from(dir)
}

/// `naslab results OUT --json ARGS`: the run directories listed.
fn listed(out: &Path, args: &[&str]) -> Vec<String> {
    let res = run_ok(naslab().arg("results").arg(out).arg("--json").args(args));
    let v: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["run_dir"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn device_notes_and_tags_reach_run_json_and_the_report() {
    let out = tempfile::tempdir().unwrap();
    let dir = null_run(
        out.path(),
        "nas-a",
        "FileCopyToNAS",
        &[
            "--device",
            "Acme StorBox 4",
            "--firmware",
            "7.2.1",
            "--notes",
            "4 disks, RAID 5",
            "--tag",
            "disks=4",
            "--tag",
            "raid=5",
        ],
    );
    let run = json(&dir.join("run.json"));
    assert_eq!(run["label"], "nas-a");
    assert_eq!(run["device"]["name"], "Acme StorBox 4");
    assert_eq!(run["device"]["firmware"], "7.2.1");
    assert_eq!(run["device"]["notes"], "4 disks, RAID 5");
    assert_eq!(run["device"]["tags"]["disks"], "4");
    assert_eq!(run["device"]["tags"]["raid"], "5");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains("<title>naslab report: Acme StorBox 4, nas-a/"),
        "{}",
        &html[..300]
    );
    assert!(html.contains("4 disks, RAID 5"));

    // Without the flags, run.json has no device at all.
    let plain = null_run(out.path(), "plain", "FileCopyToNAS", &[]);
    let run = json(&plain.join("run.json"));
    assert!(run.get("device").is_none(), "{}", run["device"]);

    // A bad tag is refused before anything runs.
    let err = run_err(
        naslab()
            .args(["run", "--backend", "null", "--workload", "FileCopyToNAS"])
            .args(["--tag", "raid"])
            .arg("--out")
            .arg(out.path().join("never")),
    );
    assert!(err.contains("--tag 'raid' must be KEY=VALUE"), "{err}");
    assert!(!out.path().join("never").exists());
}

#[test]
fn results_lists_and_filters_the_runs_of_a_directory() {
    let out = tempfile::tempdir().unwrap();
    let a = null_run(
        out.path(),
        "nas-a",
        "FileCopyToNAS",
        &["--device", "Acme StorBox 4"],
    );
    let b = null_run(
        out.path(),
        "nas-b",
        "FileCopyFromNAS",
        &["--device", "Other Vendor X1", "--firmware", "2.0"],
    );
    // An older run, as if measured on 2025-06-30 in the afternoon.
    let old = out.path().join("nas-a").join("20250630T150000Z");
    std::fs::create_dir_all(&old).unwrap();
    let mut run = json(&a.join("run.json"));
    run["started_at"] = "2025-06-30T15:00:00Z".into();
    std::fs::write(old.join("run.json"), serde_json::to_vec(&run).unwrap()).unwrap();
    // Something that is not a run is skipped with a warning, not fatal.
    std::fs::create_dir_all(out.path().join("junk")).unwrap();
    std::fs::write(out.path().join("junk").join("run.json"), "not json").unwrap();

    let s = |p: &Path| p.display().to_string();
    // Oldest first.
    let all = listed(out.path(), &[]);
    assert_eq!(all.len(), 3, "{all:?}");
    assert_eq!(all[0], s(&old));
    assert_eq!(listed(out.path(), &["--device", "acme"]), [s(&old), s(&a)]);
    assert_eq!(listed(out.path(), &["--device", "x1"]), [s(&b)]);
    assert_eq!(listed(out.path(), &["--label", "nas-b"]), [s(&b)]);
    assert_eq!(
        listed(out.path(), &["--workload", "filecopytonas"]),
        [s(&old), s(&a)]
    );
    assert_eq!(listed(out.path(), &["--until", "2025-06-30"]), [s(&old)]);
    assert!(listed(out.path(), &["--until", "2025-06-30T14:59"]).is_empty());
    assert_eq!(
        listed(out.path(), &["--since", "2025-06-30T15:00"]).len(),
        3
    );
    let since_july = listed(out.path(), &["--since", "2025-07-01"]);
    assert_eq!(since_july.len(), 2);
    assert!(since_july.contains(&s(&a)) && since_july.contains(&s(&b)));

    // The table: a header and one line per run, with the device and firmware.
    let res = run_ok(naslab().arg("results").arg(out.path()));
    let table = text(&res.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 4, "{table}");
    assert!(lines[0].starts_with("started (UTC)") && lines[0].contains("device"));
    assert!(lines[1].starts_with("2025-06-30 15:00:00") && lines[1].contains("Acme StorBox 4"));
    assert!(table.contains("Other Vendor X1 (2.0)"), "{table}");
    assert!(text(&res.stderr).contains("junk"), "{}", text(&res.stderr));

    let err = usage_err(
        naslab()
            .arg("results")
            .arg(out.path())
            .args(["--since", "last week"]),
        "--since",
    );
    assert!(err.contains("2026-03-01"), "{err}");
    let err = run_err(naslab().arg("results").arg(out.path().join("nope")));
    assert!(err.contains("no results directory"), "{err}");
}
