//! `naslab run` writing report.html, `naslab report` rebuilding every format from a run
//! directory, and `naslab compare`, end to end on the null backend.

use std::path::{Path, PathBuf};

mod common;
use common::*;

/// Runs the example trace on the null backend under `out/label` and returns the run directory.
fn example_run(out: &Path, label: &str) -> PathBuf {
    run_ok(
        naslab()
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .args(["--backend", "null", "--label", label, "--out"])
            .arg(out),
    );
    let base = out.join(label);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    dirs.pop().unwrap()
}

#[test]
fn a_run_leaves_a_self_contained_html_report() {
    let out = tempfile::tempdir().unwrap();
    let dir = example_run(out.path(), "a");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.starts_with("<!doctype html>"));
    assert!(html.contains("id=\"naslab-data\""));
    assert!(html.contains("DocumentSave"));
    assert!(!html.contains("src=\"http"));
}

#[test]
fn report_rebuilds_every_format_from_the_run_directory() {
    let out = tempfile::tempdir().unwrap();
    let dir = example_run(out.path(), "a");
    std::fs::remove_file(dir.join("report.html")).unwrap();
    let res = run_ok(naslab().arg("report").arg(&dir));
    assert!(text(&res.stderr).contains("report.html"));
    assert!(dir.join("report.html").is_file());

    let table = text(&run_ok(naslab().arg("report").arg(&dir).args(["--format", "table"])).stdout);
    assert_eq!(
        table,
        std::fs::read_to_string(dir.join("results.txt")).unwrap()
    );
    let json = text(&run_ok(naslab().arg("report").arg(&dir).args(["--format", "json"])).stdout);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["workloads"][0]["name"], "DocumentSave");
    let md = text(&run_ok(naslab().arg("report").arg(&dir).args(["--format", "md"])).stdout);
    assert!(
        md.starts_with("# naslab results") && md.contains("| DocumentSave |"),
        "{md}"
    );
    let csv = text(&run_ok(naslab().arg("report").arg(&dir).args(["--format", "csv"])).stdout);
    assert!(csv.starts_with("workload,iteration,median,"));
    assert!(
        csv.lines()
            .any(|l| l.starts_with("DocumentSave,1,true,") && l.contains(",read,")),
        "{csv}"
    );

    let file = out.path().join("elsewhere.md");
    run_ok(
        naslab()
            .arg("report")
            .arg(&dir)
            .args(["--format", "md", "-o"])
            .arg(&file),
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), md);
    let html = out.path().join("small.html");
    run_ok(
        naslab()
            .arg("report")
            .arg(&dir)
            .args(["--max-rows", "3", "-o"])
            .arg(&html),
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("the transaction list holds the first 3 of"),
        "the cap is noted"
    );
}

#[test]
fn report_on_a_directory_that_is_not_a_run_says_what_to_give() {
    let out = tempfile::tempdir().unwrap();
    let dir = example_run(out.path(), "a");
    let err = run_err(naslab().arg("report").arg(out.path()));
    assert!(err.contains("no run.json"), "{err}");
    assert!(
        err.contains(&dir.file_name().unwrap().to_string_lossy().to_string()),
        "{err}"
    );
    let err = run_err(naslab().arg("report").arg(out.path().join("missing")));
    assert!(err.contains("does not exist"), "{err}");
    let err = run_err(naslab().arg("report").arg(dir.join("run.json")));
    assert!(err.contains("give the directory"), "{err}");
}

#[test]
fn report_survives_damaged_records() {
    let out = tempfile::tempdir().unwrap();
    let dir = example_run(out.path(), "a");
    let records = dir.join("DocumentSave.ops.jsonl.zst");
    let bytes = std::fs::read(&records).unwrap();
    std::fs::write(&records, &bytes[..bytes.len() / 2]).unwrap();
    run_ok(naslab().arg("report").arg(&dir));
    std::fs::write(&records, b"\x28\xb5\x2f\xfd garbage").unwrap();
    run_ok(naslab().arg("report").arg(&dir));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("cannot read the op records") || html.contains("stop being readable"));
}

#[test]
fn missing_records_are_one_note_on_the_page_and_a_warning_on_the_terminal() {
    let out = tempfile::tempdir().unwrap();
    let dir = example_run(out.path(), "a");
    std::fs::remove_file(dir.join("DocumentSave.ops.jsonl.zst")).unwrap();
    let res = run_ok(naslab().arg("report").arg(&dir));
    let err = text(&res.stderr);
    let warnings: Vec<&str> = err.lines().filter(|l| l.starts_with("warning: ")).collect();
    assert_eq!(warnings.len(), 1, "{err}");
    assert!(
        warnings[0].starts_with("warning: DocumentSave, iteration 1: cannot read the op records"),
        "{err}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("cannot read the op records"));
    assert!(
        !html.contains("hold no ops"),
        "no second, contradicting note"
    );
}

#[test]
fn compare_prints_throughput_relative_to_the_baseline() {
    let out = tempfile::tempdir().unwrap();
    let a = example_run(out.path(), "nas1");
    let b = example_run(out.path(), "nas2");
    let table = text(&run_ok(naslab().arg("compare").arg(&a).arg(&b)).stdout);
    assert!(table.contains("geometric mean"), "{table}");
    assert!(
        table.contains("A: nas1/") && table.contains("(baseline)"),
        "{table}"
    );
    assert!(table.contains("DocumentSave"), "{table}");
    let md = text(
        &run_ok(naslab().arg("compare").arg(&a).arg(&b).args([
            "--format",
            "md",
            "--baseline",
            "nas2",
        ]))
        .stdout,
    );
    assert!(md.contains("relative to B,"), "{md}");
    let csv = text(
        &run_ok(
            naslab()
                .arg("compare")
                .arg(&a)
                .arg(&b)
                .args(["--format", "csv"]),
        )
        .stdout,
    );
    assert!(csv.starts_with("workload,"), "{csv}");
    let json = text(
        &run_ok(
            naslab()
                .arg("compare")
                .arg(&a)
                .arg(&b)
                .args(["--format", "json"]),
        )
        .stdout,
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["workloads"][0]["ratio"][0], 1.0);
    assert_eq!(v["mean"], naslab_report::MEAN_NAME);
    assert_eq!(v["mean_workloads"][0], "DocumentSave");
    let page = out.path().join("cmp.html");
    run_ok(
        naslab()
            .arg("compare")
            .arg(&a)
            .arg(&b)
            .args(["--format", "html", "-o"])
            .arg(&page),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("\"kind\":\"compare\""));
    let err = run_err(
        naslab()
            .arg("compare")
            .arg(&a)
            .args(["--baseline", "nowhere"]),
    );
    assert!(err.contains("none of the runs"), "{err}");
    let err = run_err(naslab().arg("compare").arg(&a).arg(out.path()));
    assert!(err.contains("no run.json"), "{err}");
}
