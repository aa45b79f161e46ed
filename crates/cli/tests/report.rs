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
    only_run_under(&out.join(label))
}

/// What `naslab compare A B ARGS` printed.
fn compare(a: &Path, b: &Path, args: &[&str]) -> String {
    text(&run_ok(naslab().arg("compare").arg(a).arg(b).args(args)).stdout)
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
    let table = compare(&a, &b, &[]);
    assert!(table.contains("geometric mean"), "{table}");
    assert!(
        table.contains("A: nas1/") && table.contains("(baseline)"),
        "{table}"
    );
    assert!(table.contains("DocumentSave"), "{table}");
    let md = compare(&a, &b, &["--format", "md", "--baseline", "nas2"]);
    assert!(md.contains("relative to B,"), "{md}");
    let csv = compare(&a, &b, &["--format", "csv"]);
    assert!(csv.starts_with("workload,"), "{csv}");
    let v: serde_json::Value =
        serde_json::from_str(&compare(&a, &b, &["--format", "json"])).unwrap();
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

#[test]
fn compare_ratios_and_their_geometric_mean_follow_from_each_runs_throughput() {
    let out = tempfile::tempdir().unwrap();
    let run = |label: &str| {
        run_ok(
            naslab()
                .arg("run")
                .args(["--workload", "OfficeProductivity,PhotoAlbum"])
                .args(["--scale", "0.001", "--backend", "null", "--label", label])
                .arg("--out")
                .arg(out.path()),
        );
        let dir = only_run_under(&out.path().join(label));
        let run = json(&dir.join("run.json"));
        let mb_s: Vec<(String, f64)> = run["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                (
                    w["name"].as_str().unwrap().to_string(),
                    w["throughput_mb_s"].as_f64().unwrap(),
                )
            })
            .collect();
        (dir, mb_s)
    };
    let (a, a_mb_s) = run("one");
    let (b, b_mb_s) = run("two");
    let ratios: Vec<(String, f64)> = a_mb_s
        .iter()
        .zip(&b_mb_s)
        .map(|((name, x), (name_b, y))| {
            assert_eq!(name, name_b);
            (name.clone(), y / x)
        })
        .collect();
    assert_eq!(ratios.len(), 2);
    let mean = ratios.iter().map(|(_, r)| r.ln()).sum::<f64>() / 2.0;
    let mean = mean.exp();
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs();

    let v: serde_json::Value =
        serde_json::from_str(&compare(&a, &b, &["--format", "json"])).unwrap();
    for (name, r) in &ratios {
        let w = v["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name.as_str())
            .unwrap();
        let got = w["ratio"][1].as_f64().unwrap();
        assert!(close(got, *r), "{name}: ratio {got}, run.json gives {r}");
    }
    let got = v["mean_ratio"][1].as_f64().unwrap();
    assert!(close(got, mean), "mean {got}, run.json gives {mean}");

    // The table's figures carry three significant digits (0.00391, 0.645, 1.31, 41.5, 1230),
    // counted after rounding (0.9996 is 1.00).
    let three = |x: f64| {
        let decimals = |m: f64| (2 - m.log10().floor() as i32).max(0) as usize;
        let d = decimals(x.abs());
        let rounded: f64 = format!("{x:.d$}").parse().unwrap();
        let d = decimals(rounded.abs());
        format!("{x:.d$}")
    };
    let table = compare(&a, &b, &[]);
    for (name, r) in &ratios {
        let line = table
            .lines()
            .find(|l| l.starts_with(name.as_str()))
            .unwrap_or_else(|| panic!("no {name} line in\n{table}"));
        let r = three(*r);
        assert!(line.contains(&format!(" {r} (")), "{r} not in {line}");
    }
    let line = table
        .lines()
        .find(|l| l.starts_with("geometric mean"))
        .unwrap();
    let mean = three(mean);
    assert!(line.ends_with(&format!(" {mean}")), "{mean} not in {line}");
}
