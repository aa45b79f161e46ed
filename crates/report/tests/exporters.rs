//! Snapshot tests of every text format, from fixed results: the run exporters (JSON,
//! CSV, Markdown, the table, naspt.csv) and the comparison's table, Markdown, CSV and
//! JSON. NASLAB_UPDATE_SNAPSHOTS=1 rewrites the snapshots in tests/snapshots/.

mod common;

use common::{batch_run, filter, single_run, snapshot, write_run_json};
use naslab_report::{compare, load_run, resolve_baseline};
use naslab_results::export::{Csv, Exporter, Json, Markdown, NasptCsv, Table, CSV_COLUMNS};

fn export(e: &dyn Exporter, run: &naslab_results::RunResult) -> String {
    filter(&String::from_utf8(e.export(run)).unwrap(), None)
}

#[test]
fn json_export_matches_its_snapshot() {
    snapshot("run.json", &export(&Json, &single_run()));
}

#[test]
fn csv_export_matches_its_snapshot() {
    let text = export(&Csv, &batch_run());
    assert!(text.starts_with(CSV_COLUMNS));
    snapshot("results-batch.csv", &text);
    snapshot("results.csv", &export(&Csv, &single_run()));
}

#[test]
fn markdown_export_matches_its_snapshot() {
    snapshot("results.md", &export(&Markdown, &single_run()));
    snapshot("results-batch.md", &export(&Markdown, &batch_run()));
}

#[test]
fn table_export_matches_its_snapshot() {
    snapshot("results.txt", &export(&Table, &single_run()));
    snapshot("results-batch.txt", &export(&Table, &batch_run()));
}

#[test]
fn naspt_csv_export_matches_its_snapshot() {
    snapshot("naspt.csv", &export(&NasptCsv, &single_run()));
    snapshot("naspt-batch.csv", &export(&NasptCsv, &batch_run()));
}

#[test]
fn json_export_reads_back_as_the_same_run() {
    let run = single_run();
    let back: naslab_results::RunResult = serde_json::from_slice(&Json.export(&run)).unwrap();
    assert_eq!(Json.export(&back), Json.export(&run));
}

fn three_runs(root: &std::path::Path) -> Vec<naslab_report::LoadedRun> {
    let base = single_run();
    let mut faster = single_run();
    faster.workloads[0].throughput_mb_s *= 2.0;
    faster.workloads[1].throughput_mb_s *= 0.5;
    faster.started_at = "2026-01-03T00:00:00Z".into();
    let mut partial = single_run();
    partial.workloads.truncate(1);
    partial.workloads[0].throughput_mb_s *= 4.0;
    partial
        .workloads
        .push(naslab_results::WorkloadResult::from_iterations(
            "OnlyHere".into(),
            "x".into(),
            vec![common::iteration(1, 5.0, None)],
        ));
    let mut dirs = Vec::new();
    for (name, run) in [("nas1", &base), ("nas2", &faster), ("nas3", &partial)] {
        let d = root.join(name).join("20260101T000000Z");
        write_run_json(&d, run);
        dirs.push(load_run(&d).unwrap());
    }
    dirs
}

#[test]
fn comparison_formats_match_their_snapshots() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = three_runs(tmp.path());
    let c = compare(&runs, 0);
    let f = |t: String| filter(&t, Some(tmp.path()));
    snapshot("compare.txt", &f(c.table()));
    snapshot("compare.md", &f(c.markdown()));
    snapshot("compare.csv", &f(c.csv()));
    snapshot("compare.json", &f(c.json()));
}

#[test]
fn comparison_uses_the_geometric_mean_of_ratios() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = three_runs(tmp.path());
    let c = compare(&runs, 0);
    assert_eq!(c.mean_ratio[0], Some(1.0));
    // Twice as fast on one workload, half as fast on the other: the geometric mean is 1.
    let m = c.mean_ratio[1].unwrap();
    assert!((m - 1.0).abs() < 1e-12, "{m}");
    assert_eq!(c.mean_over[1], 2);
    // The third run shares one workload with the baseline: its mean covers only that one.
    assert_eq!(c.mean_over[2], 1);
    assert!((c.mean_ratio[2].unwrap() - 4.0).abs() < 1e-12);
    assert_eq!(c.workloads.last().unwrap().name, "OnlyHere");
    assert_eq!(c.workloads.last().unwrap().ratio, vec![None, None, None]);
    assert!(c.table().contains("geometric mean"));
}

#[test]
fn a_baseline_is_found_by_path_or_name_and_a_stranger_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut runs = three_runs(tmp.path());
    let second = runs[1].dir.display().to_string();
    assert_eq!(resolve_baseline(&mut runs, Some(&second)).unwrap(), 1);
    assert_eq!(
        resolve_baseline(&mut runs, Some("nas3/20260101T000000Z")).unwrap(),
        2
    );
    assert_eq!(resolve_baseline(&mut runs, None).unwrap(), 0);
    let err = resolve_baseline(&mut runs, Some("nas9"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("none of the runs"), "{err}");
    // A run directory that is not among the runs joins them, first.
    let extra = tmp.path().join("nas0").join("20251231T000000Z");
    write_run_json(&extra, &single_run());
    let n = runs.len();
    assert_eq!(
        resolve_baseline(&mut runs, Some(extra.to_str().unwrap())).unwrap(),
        0
    );
    assert_eq!(runs.len(), n + 1);
    let c = compare(&runs, 0);
    assert!(c.runs[0].name.contains("nas0"));
}
