//! Snapshot tests of every text format, from fixed results: the run exporters (JSON,
//! CSV, Markdown, the table, naspt.csv) and the comparison's table, Markdown, CSV and
//! JSON. NASLAB_UPDATE_SNAPSHOTS=1 rewrites the snapshots in tests/snapshots/.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use common::{batch_run, filter, single_run, snapshot, write_run_json};
use naslab_report::{compare, load_run, resolve_baseline};
use naslab_results::export::{CSV_COLUMNS, Csv, Exporter, Json, Markdown, NasptCsv, Table};

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
    faster.device.name = Some("Other Box 5".into());
    faster.device.firmware = None;
    partial.device = naslab_results::Device::default();
    partial.naslab_version = "0.0.9".into();
    partial.options.pacing = "original".into();
    partial.options.cache = naslab_results::CacheMode::Drop;
    partial.options.extra.insert("scale".into(), "0.02".into());
    partial.options.extra.remove("seed");
    partial.target.backend = "smb".into();
    partial.environment.host = "other-host".into();
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
fn comparison_averages_only_the_workloads_every_run_has() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = three_runs(tmp.path());
    let c = compare(&runs, 0);
    // A and B have OfficeProductivity and Copy; C has OfficeProductivity and OnlyHere:
    // the mean covers OfficeProductivity alone, where B is 2x and C 4x the baseline.
    assert_eq!(c.mean_workloads, ["OfficeProductivity"]);
    assert_eq!(c.mean_ratio[0], Some(1.0));
    assert!((c.mean_ratio[1].unwrap() - 2.0).abs() < 1e-12);
    assert!((c.mean_ratio[2].unwrap() - 4.0).abs() < 1e-12);
    let in_mean: Vec<bool> = c.workloads.iter().map(|w| w.in_mean).collect();
    assert_eq!(in_mean, [true, false, false]);
    assert_eq!(c.workloads.last().unwrap().name, "OnlyHere");
    assert_eq!(c.workloads.last().unwrap().ratio, vec![None, None, None]);
    let table = c.table();
    assert!(
        table.contains("geometric mean over the 1 workload every run has: OfficeProductivity"),
        "{table}"
    );
    assert!(table.contains("not in the mean: Copy, \"quoted\" | piped (not in C); OnlyHere (not in Example NAS-2000 7.2.1, Other Box 5)"), "{table}");
}

#[test]
fn comparison_warns_about_every_setting_that_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = three_runs(tmp.path());
    let c = compare(&runs, 0);
    let differ: Vec<&str> = c.differences.iter().map(|d| d.setting.as_str()).collect();
    assert_eq!(
        differ,
        [
            "cache mode",
            "client host",
            "naslab version",
            "pacing",
            "scale",
            "seed",
            "target kind"
        ]
    );
    let pacing = c
        .differences
        .iter()
        .find(|d| d.setting == "pacing")
        .unwrap();
    assert_eq!(pacing.values, ["afap", "afap", "original"]);
    let warnings = c.warnings().join("\n");
    snapshot("compare-warnings.txt", &filter(&warnings, Some(tmp.path())));
    // The same runs with the same settings: no warning at all.
    let same: Vec<_> = runs.iter().take(2).cloned().collect();
    assert!(compare(&same, 0).differences.is_empty());
}

#[test]
fn a_multi_client_run_is_told_apart_from_a_single_client_one() {
    let tmp = tempfile::tempdir().unwrap();
    let mut job = single_run();
    job.multi_client = Some(naslab_results::MultiClient {
        clients: (0..4)
            .map(|rank| naslab_results::ClientResult {
                rank,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    });
    let mut runs = Vec::new();
    for (name, run) in [("one", &single_run()), ("four", &job)] {
        let d = tmp.path().join(name).join("20260101T000000Z");
        write_run_json(&d, run);
        runs.push(load_run(&d).unwrap());
    }
    let c = compare(&runs, 0);
    let clients = c
        .differences
        .iter()
        .find(|d| d.setting == "clients")
        .expect("the number of clients differs");
    assert_eq!(clients.values, ["1", "4"]);
    let table = c.table();
    let lines: Vec<&str> = table.lines().take(2).collect();
    assert!(!lines[0].contains("clients"), "{table}");
    assert!(lines[1].ends_with("pace afap, 4 clients"), "{table}");
}

#[test]
fn batch_comparisons_give_the_ratio_with_its_spread() {
    let tmp = tempfile::tempdir().unwrap();
    let base = batch_run();
    let mut other = batch_run();
    other.device.name = Some("Faster Box".into());
    // HDVideo_1Play: 30, 33, 36 MB/s against 45, 46, 47: beyond the spread.
    other.workloads[0] = naslab_results::WorkloadResult::from_iterations(
        "HDVideo_1Play".into(),
        "x".into(),
        vec![
            common::iteration(1, 45.0, None),
            common::iteration(2, 47.0, None),
            common::iteration(3, 46.0, None),
        ],
    );
    let mut runs = Vec::new();
    for (name, run) in [("a", &base), ("b", &other)] {
        let d = tmp.path().join(name).join("20260101T000000Z");
        write_run_json(&d, run);
        runs.push(load_run(&d).unwrap());
    }
    let c = compare(&runs, 0);
    let s = c.workloads[0].spread[1].as_ref().unwrap();
    // 46/33, with half-ranges 3/33 and 1/46 in quadrature.
    let r = 46.0 / 33.0;
    assert!((s.ratio - r).abs() < 1e-12);
    let pm = r * ((3.0f64 / 33.0).powi(2) + (1.0f64 / 46.0).powi(2)).sqrt();
    assert!((s.plus_minus - pm).abs() < 1e-12, "{}", s.plus_minus);
    assert!(s.beyond_spread);
    assert_eq!(s.text(), "1.39 ± 0.13× faster");
    // PhotoAlbum: the same iterations, so the ranges overlap.
    let p = c.workloads[1].spread[1].as_ref().unwrap();
    assert!(!p.beyond_spread);
    assert_eq!(p.text(), "1.00 ± 0.13× faster");
    snapshot("compare-batch.txt", &filter(&c.table(), Some(tmp.path())));
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

/// Which systems of size units a text uses: decimal (kB, MB, GB ...), binary (KiB, MiB ...).
fn unit_systems(text: &str) -> Vec<&'static str> {
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    let has = |units: &[&str]| words.iter().any(|w| units.contains(w));
    let mut found = Vec::new();
    if has(&["kB", "MB", "GB", "TB", "PB"]) {
        found.push("decimal");
    }
    if has(&["KiB", "MiB", "GiB", "TiB", "PiB", "KB"]) {
        found.push("binary");
    }
    found
}

#[test]
fn every_text_export_uses_the_decimal_units_only() {
    assert_eq!(unit_systems("1 MiB and 2 MB/s"), ["decimal", "binary"]);
    let mut run = batch_run();
    let workload = run.workloads[0].name.clone();
    // Every kind of warning, so each one's wording is checked too.
    run.warnings
        .push(naslab_results::Warning::ReadsInFlightBound {
            workload: workload.clone(),
            in_flight: 4,
            queue_depth: 32,
            max_read: 16 << 20,
        });
    run.warnings.push(naslab_results::Warning::PacingLag {
        workload: workload.clone(),
        p99_ns: 2_000_000,
    });
    run.warnings
        .push(naslab_results::Warning::UnalignedDirect { workload, ops: 3 });
    let all: [(&str, &dyn Exporter); 4] = [
        ("table", &Table),
        ("markdown", &Markdown),
        ("csv", &Csv),
        ("naspt.csv", &NasptCsv),
    ];
    for (name, e) in all {
        for r in [&run, &single_run()] {
            let text = String::from_utf8(e.export(r)).unwrap();
            let systems = unit_systems(&text);
            assert!(
                !systems.contains(&"binary"),
                "{name} shows binary units:\n{text}"
            );
            // The CSV's column names (throughput_mb_s, avg_us ...) stay as they are.
            if name != "csv" {
                assert_eq!(systems, ["decimal"], "{name} names no unit:\n{text}");
            }
        }
    }
    let table = String::from_utf8(Table.export(&run)).unwrap();
    assert!(
        table.contains("reads of up to 16777216 bytes (16.78 MB)"),
        "{table}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let runs = three_runs(tmp.path());
    let c = compare(&runs, 0);
    for (name, text) in [
        ("compare table", c.table()),
        ("compare md", c.markdown()),
        ("compare csv", c.csv()),
    ] {
        assert_eq!(unit_systems(&text), ["decimal"], "{name}:\n{text}");
    }
}

/// A run whose first workload's file layout was measured.
fn run_with_layout() -> naslab_results::RunResult {
    let mut run = single_run();
    let summary = |files, bytes, extents, ideal, pairs, following| naslab_results::LayoutSummary {
        files,
        bytes,
        extents,
        ideal_extents: ideal,
        score: Some(following as f64 / pairs as f64),
        block_pairs: pairs,
        following_blocks: following,
    };
    run.workloads[0].iterations[0].layout = Some(naslab_results::IterationLayout {
        prepared: summary(12, 48_000_000, 15, 12, 11_700, 11_697),
        written: summary(3, 9_000_000, 40, 3, 2_190, 2_150),
    });
    run
}

#[test]
fn the_file_layout_is_in_the_csv_and_markdown_exports() {
    let run = run_with_layout();
    let csv = export(&Csv, &run);
    let header: Vec<&str> = CSV_COLUMNS.split(',').collect();
    let at = |name: &str| header.iter().position(|c| *c == name).unwrap();
    let mut with_layout = 0;
    for line in csv.lines().skip(1) {
        if !line.starts_with("OfficeProductivity,") {
            // Eight empty fields: no layout measured.
            assert!(
                line.ends_with(",,,,,,,,") && !line.ends_with(",,,,,,,,,"),
                "{line}"
            );
            continue;
        }
        // No field of these rows holds a comma.
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), header.len(), "{line}");
        let layout: Vec<&str> = [
            "prepared_files",
            "prepared_extents",
            "prepared_ideal_extents",
            "prepared_layout_score",
            "written_files",
            "written_extents",
            "written_ideal_extents",
            "written_layout_score",
        ]
        .iter()
        .map(|c| f[at(c)])
        .collect();
        assert_eq!(
            layout,
            ["12", "15", "12", "0.9997", "3", "40", "3", "0.9817"],
            "{line}"
        );
        with_layout += 1;
    }
    assert!(with_layout > 0, "{csv}");
    let md = export(&Markdown, &run);
    assert!(md.contains("\n## File layout\n"), "{md}");
    assert!(
        md.contains("| OfficeProductivity | prepared | 12 | 48000000 | 15 | 12 | 1.000 |"),
        "{md}"
    );
    assert!(
        md.contains("| OfficeProductivity | written | 3 | 9000000 | 40 | 3 | 0.982 |"),
        "{md}"
    );
    // Without a measured layout there is no section.
    assert!(!export(&Markdown, &single_run()).contains("File layout"));
}

/// Five runs, as `lab matrix --links` makes them: an SMB configuration behind no link,
/// 1 ms and 5 ms, and an NFS one behind no link and 5 ms. The comparison reads them as a
/// sweep: one line per workload and configuration, its points in order of round trip,
/// each with the run's own figures; runs without a link make none.
#[test]
fn runs_behind_different_links_compare_as_a_link_sweep() {
    use naslab_results::{EmulatedLink, LinkSettings, RttProbe};
    let tmp = tempfile::tempdir().unwrap();
    let link = |rtt_ms: u64| LinkSettings {
        emulated: (rtt_ms > 0).then(|| EmulatedLink {
            profile: "custom".into(),
            rtt_ns: rtt_ms * 1_000_000,
            emulator: "toxiproxy".into(),
            delay_level: "stream".into(),
            ..EmulatedLink::default()
        }),
        probe: Some(RttProbe {
            method: "SMB2 ECHO".into(),
            samples: 5,
            median_ns: rtt_ms * 1_000_000 + 40_000,
            ..RttProbe::default()
        }),
    };
    // (kind, rtt ms, MB/s): the throughput falls as the round trip grows.
    let made = [
        ("smb", 5, 2.0),
        ("smb", 0, 40.0),
        ("nfs", 5, 3.0),
        ("smb", 1, 20.0),
        ("nfs", 0, 50.0),
    ];
    let mut runs = Vec::new();
    for (i, (kind, rtt, mb_s)) in made.iter().enumerate() {
        let mut r = single_run();
        r.target.backend = kind.to_string();
        r.options.link = Some(link(*rtt));
        for w in &mut r.workloads {
            for it in &mut w.iterations {
                it.throughput_mb_s = *mb_s;
            }
            w.throughput_mb_s = *mb_s;
        }
        let dir = tmp.path().join(format!("run{i}"));
        write_run_json(&dir, &r);
        runs.push(load_run(&dir).unwrap());
    }
    let c = compare(&runs, 0);
    let sweep = c.links.as_ref().expect("a link sweep");
    let first = &runs[0].result.workloads[0];
    let lines: Vec<(&str, &str, Vec<u64>, Vec<f64>)> = sweep
        .lines
        .iter()
        .map(|l| {
            (
                l.workload.as_str(),
                l.configuration.as_str(),
                l.points.iter().map(|p| p.rtt_ns / 1_000_000).collect(),
                l.points.iter().map(|p| p.mb_s).collect(),
            )
        })
        .collect();
    let w0 = first.name.as_str();
    assert_eq!(
        lines[0],
        (w0, "smb: A, B, D", vec![0, 1, 5], vec![40.0, 20.0, 2.0])
    );
    assert_eq!(lines[1], (w0, "nfs: C, E", vec![0, 5], vec![50.0, 3.0]));
    assert_eq!(sweep.lines.len(), 2 * runs[0].result.workloads.len());
    let p = &sweep.lines[0].points[1];
    let it = first.median_iteration().unwrap();
    assert_eq!((p.run, p.ops, p.wall_ns), (3, it.ops, it.wall_ns));
    assert_eq!(p.mean_op_ns, it.mean_op_ns());
    assert!(p.mean_op_ns > 0);
    assert_eq!(p.rtt_probed_ns, Some(1_040_000));
    assert!(sweep.lines.iter().all(|l| l.same_ops));
    let table = c.table();
    assert!(table.contains("link sweep"), "{table}");
    assert!(table.contains("1.000 ms"), "{table}");
    assert!(c.json().contains("\"links\""));

    // Runs behind one link, or none at all, make no sweep.
    let same: Vec<_> = [1, 3]
        .iter()
        .map(|&i| load_run(&tmp.path().join(format!("run{i}"))).unwrap())
        .collect();
    let mut alike = same;
    alike[1] = load_run(&tmp.path().join("run1")).unwrap();
    assert!(compare(&alike, 0).links.is_none());
    let plain = tmp.path().join("plain");
    write_run_json(&plain, &single_run());
    let unlinked = vec![load_run(&plain).unwrap(), load_run(&plain).unwrap()];
    assert!(compare(&unlinked, 0).links.is_none());
}

/// Capacity sweeps made behind different links compose with the link sweep: per
/// configuration (alike but for the path, ports included), each sweep's knee, peak and
/// overall response time by the round trip its link added; runs that are no sweep add
/// no capacity point.
#[test]
fn capacity_sweeps_behind_different_links_compare_by_their_knee() {
    use naslab_results::sweep::{LoadUnit, Sweep};
    use naslab_results::{EmulatedLink, LinkSettings, NfsSettings, ProtocolSettings};
    let tmp = tempfile::tempdir().unwrap();
    // (rtt ms, port, knee, peak ops/s, overall response ns); the last is no sweep.
    let made = [
        (5, 4000, None, 180.0, 2_000_000_000),
        (0, 5000, Some(4.0), 1_000.0, 700_000),
        (1, 6000, Some(2.0), 600.0, 1_500_000),
    ];
    let mut runs = Vec::new();
    for (i, (rtt, port, knee, peak, overall)) in made.iter().enumerate() {
        let mut r = single_run();
        r.target.backend = "nfs".into();
        r.options.protocol = Some(ProtocolSettings::Nfs(NfsSettings {
            port: *port,
            ..NfsSettings::default()
        }));
        r.options.link = Some(LinkSettings {
            emulated: Some(EmulatedLink {
                profile: "custom".into(),
                rtt_ns: rtt * 1_000_000,
                ..EmulatedLink::default()
            }),
            probe: None,
        });
        r.sweep = Some(Sweep {
            unit: LoadUnit::Users,
            arrivals: None,
            warmup_ns: 0,
            saturation_margin: 0.05,
            cap: None,
            points: Vec::new(),
            knee: *knee,
            peak_achieved_ops_s: *peak,
            overall_response_ns: *overall,
            stopped: None,
        });
        let dir = tmp.path().join(format!("sweep{i}"));
        write_run_json(&dir, &r);
        runs.push(load_run(&dir).unwrap());
    }
    let mut plain = single_run();
    plain.target.backend = "nfs".into();
    plain.options.link = runs[1].result.options.link.clone();
    plain.options.protocol = runs[1].result.options.protocol.clone();
    let dir = tmp.path().join("plain");
    write_run_json(&dir, &plain);
    runs.push(load_run(&dir).unwrap());
    let c = compare(&runs, 0);
    let sweep = c.links.as_ref().expect("a link sweep");
    // One configuration: the runs differ in their port and link only.
    assert_eq!(sweep.capacity.len(), 1, "{:?}", sweep.capacity);
    let line = &sweep.capacity[0];
    assert_eq!(line.configuration, "nfs: A, B, C, D");
    let got: Vec<(u64, &str, Option<f64>, f64, u64)> = line
        .points
        .iter()
        .map(|p| {
            (
                p.rtt_ns / 1_000_000,
                p.column.as_str(),
                p.knee,
                p.peak_achieved_ops_s,
                p.overall_response_ns,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, "B", Some(4.0), 1_000.0, 700_000),
            (1, "C", Some(2.0), 600.0, 1_500_000),
            (5, "A", None, 180.0, 2_000_000_000),
        ]
    );
    assert!(
        line.points
            .iter()
            .all(|p| p.unit == "users" && p.points == 0)
    );
    let table = c.table();
    assert!(table.contains("capacity by link"), "{table}");
    assert!(table.contains("4 users"), "{table}");
    assert!(c.json().contains("\"capacity\""));
}
