//! The HTML report and comparison pages, built from run directories with real op
//! records: self-contained, their data readable, and every bad input a note or a clear
//! error rather than a panic.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::Read;
use std::path::Path;

use common::{run_dir_with_records, single_run, write_records, write_run_json};
use naslab_report::{
    IterationPass, ReportError, ReportOptions, StreamedIteration, compare, compare_html, load_run,
    report_html, report_html_streamed, write_run_report,
};
use serde_json::Value;

/// The page's embedded JSON.
fn page_data(html: &str) -> Value {
    let start = html.find("id=\"naslab-data\">").expect("data element") + 17;
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// The decompressed bytes of the blob element `id`.
fn blob(html: &str, id: &str) -> Vec<u8> {
    let tag = format!("id=\"{id}\">");
    let start = html.find(&tag).unwrap_or_else(|| panic!("no blob {id}")) + tag.len();
    let end = start + html[start..].find("</script>").unwrap();
    let text = &html[start..end];
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let mut raw = Vec::new();
    for chunk in text.as_bytes().chunks(4) {
        let pad = chunk.iter().filter(|&&c| c == b'=').count();
        let n = chunk.iter().fold(0u32, |n, &c| {
            n << 6 | if c == b'=' { 0 } else { val(c) as u32 }
        });
        raw.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8][..3 - pad]);
    }
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(&raw[..])
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn html_of(dir: &Path, opts: &ReportOptions) -> String {
    String::from_utf8(report_html(&load_run(dir).unwrap(), opts)).unwrap()
}

#[test]
fn the_report_is_one_self_contained_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_dir_with_records(tmp.path(), 400);
    let html = html_of(&dir, &ReportOptions::default());
    assert!(html.starts_with("<!doctype html>"));
    assert!(html.contains("Content-Security-Policy"));
    for external in ["src=\"http", "href=\"http", "<link ", "src=\"//", "@import"] {
        assert!(
            !html.contains(external),
            "the report refers outside itself: {external}"
        );
    }
    assert!(html.contains("uPlot"), "the chart library is inline");
    let data = page_data(&html);
    assert_eq!(data["kind"], "report");
    assert_eq!(data["run"]["workloads"][0]["name"], "OfficeProductivity");
    assert_eq!(data["kinds"][3], "read");
}

#[test]
fn every_view_has_data_from_the_records() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_dir_with_records(tmp.path(), 400);
    let html = html_of(&dir, &ReportOptions::default());
    let data = page_data(&html);
    let it = &data["workloads"][0]["iterations"][0];
    assert_eq!(it["ops"], 400);
    assert_eq!(it["files"].as_array().unwrap().len(), 7);
    let series = &it["series"];
    let ops: u64 = series["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(ops, 400);
    let read: u64 = series["read_bytes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert!(read > 0);
    let lat = &it["latency"]["by_op"];
    assert_eq!(lat[0][0], "all");
    let all: u64 = lat[0][1]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(all, 400);
    assert!(it["sizes"]["by_op"].as_array().unwrap().len() == 2);
    let stats = it["file_stats"].as_array().unwrap();
    assert_eq!(stats.len(), 7);
    assert!(
        stats
            .iter()
            .all(|s| s["latency"]["count"].as_u64().unwrap() > 0)
    );
    assert!(
        stats
            .iter()
            .map(|s| s["errors"].as_u64().unwrap())
            .sum::<u64>()
            == 8
    );
    // The transaction list: every op, in columns of the declared layout.
    let rows = &it["rows"];
    assert_eq!(rows["shown"], 400);
    let layout = &rows["blob"];
    let raw = blob(&html, layout["id"].as_str().unwrap());
    assert_eq!(raw.len() as u64, layout["bytes"].as_u64().unwrap());
    assert_eq!(raw.len(), 400 * (5 * 8 + 2 * 4 + 1));
    // The access map: every read and write, drawn from the rows (which hold every op),
    // so it needs no columns of its own.
    let access = &it["access"];
    assert_eq!(access["seen"], 200);
    assert_eq!(access["shown"], 200);
    assert_eq!(access["stride"], 1);
    assert!(access["blob"].is_null(), "{access}");
    assert!(it.get("notes").is_none(), "{:?}", it["notes"]);
}

/// Each iteration's views made by an [`IterationPass`] fed the first `keep` op records of
/// its records file (all of them with `u64::MAX`), by records file name.
fn streamed(
    dir: &Path,
    opts: ReportOptions,
    keep: u64,
) -> std::collections::HashMap<String, StreamedIteration> {
    let run = load_run(dir).unwrap();
    let mut made = std::collections::HashMap::new();
    for it in run.result.workloads.iter().flat_map(|w| &w.iterations) {
        let name = it.records.clone().unwrap();
        let mut pass = IterationPass::new(opts);
        let mut ops = 0;
        for record in naslab_trace::open_trace(&dir.join(&name)).unwrap() {
            match record.unwrap() {
                naslab_trace::Record::File(f) => pass.file(&f),
                naslab_trace::Record::Op(op, Some(m)) if ops < keep => {
                    pass.op(&op, &m);
                    ops += 1;
                }
                _ => {}
            }
        }
        made.insert(name, pass.finish(it.clock_start_ns, it.wall_ns));
    }
    made
}

#[test]
fn views_streamed_while_records_are_written_make_the_page_the_records_make() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_dir_with_records(tmp.path(), 1000);
    let run = load_run(&dir).unwrap();
    // A capped list, so both iterations' access maps have blobs of their own to place.
    let opts = ReportOptions {
        max_rows: 100,
        access_points: 50,
    };
    let (page, _) = report_html_streamed(&run, &opts, streamed(&dir, opts, u64::MAX));
    let from_records = report_html(&run, &opts);
    assert!(page.len() > 10_000);
    assert!(
        page == from_records,
        "the streamed page differs from the records' page"
    );
    let html = String::from_utf8(page).unwrap();
    for id in ["w0-i0-rows", "w0-i0-map", "w1-i0-rows"] {
        assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
    }
    // The streamed views are what the page shows: fed half the ops, it shows half.
    let (half, _) = report_html_streamed(&run, &opts, streamed(&dir, opts, 500));
    let it = &page_data(&String::from_utf8(half).unwrap())["workloads"][0]["iterations"][0];
    assert_eq!(it["rows"]["total"], 500);
    // Views kept with other options are not used: the page reads the records.
    let other = ReportOptions {
        max_rows: 10,
        ..opts
    };
    let (page, _) = report_html_streamed(&run, &opts, streamed(&dir, other, 500));
    assert!(page == from_records);
}

#[test]
fn a_capped_list_says_so_and_the_charts_still_count_everything() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_dir_with_records(tmp.path(), 1000);
    let opts = ReportOptions {
        max_rows: 100,
        access_points: 50,
    };
    let html = html_of(&dir, &opts);
    let it = &page_data(&html)["workloads"][0]["iterations"][0];
    assert_eq!(it["rows"]["shown"], 100);
    assert_eq!(it["rows"]["total"], 1000);
    // The rows miss ops, so the map has its own sample: about one read or write in every
    // `stride`, a power of two that keeps it within 50 points.
    let access = &it["access"];
    let seen = access["seen"].as_u64().unwrap();
    let stride = access["stride"].as_u64().unwrap();
    assert_eq!(seen, 500);
    assert_eq!(stride, 16);
    let shown = access["shown"].as_u64().unwrap();
    assert!(
        (16..=50).contains(&shown),
        "{shown} of {seen} at 1 in {stride}"
    );
    let layout = &access["blob"];
    let raw = blob(&html, layout["id"].as_str().unwrap());
    assert_eq!(raw.len() as u64, layout["bytes"].as_u64().unwrap());
    let notes = it["notes"].to_string();
    assert!(notes.contains("first 100 of 1000"), "{notes}");
    let all: u64 = it["latency"]["by_op"][0][1]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(all, 1000);
}

#[test]
fn missing_or_broken_records_become_notes_not_failures() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_dir_with_records(tmp.path(), 40);
    std::fs::remove_file(dir.join("OfficeProductivity.ops.jsonl.zst")).unwrap();
    std::fs::write(dir.join("copy.ops.jsonl.zst"), b"{\"type\":\"header\",\"format\":\"naslab-trace\",\"version\":1,\"workload\":\"c\"}\n{\"type\":\"file\",\"id\":1,\"path\":\"a\",\"exists\":true}\n{\"type\":\"op\",\"op\":\"read\",\"file\":1,\"len\":5,\"sched_ns\":1,\"issued_ns\":1,\"done_ns\":9,\"result\":5}\nnot json\n").unwrap();
    let html = html_of(&dir, &ReportOptions::default());
    let data = page_data(&html);
    let first = data["workloads"][0]["iterations"][0]["notes"].to_string();
    assert!(first.contains("cannot read the op records"), "{first}");
    let second = &data["workloads"][1]["iterations"][0];
    assert_eq!(second["ops"], 1, "the op before the bad line is kept");
    assert!(
        second["notes"].to_string().contains("line 4"),
        "{}",
        second["notes"]
    );
}

#[test]
fn records_outside_the_run_directory_are_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let mut run = single_run();
    run.workloads[0].iterations[0].records = Some("../../etc/passwd".into());
    write_run_json(&dir, &run);
    let html = html_of(&dir, &ReportOptions::default());
    let notes = page_data(&html)["workloads"][0]["iterations"][0]["notes"].to_string();
    // Said as it is, not taken for a run made with --no-records.
    assert!(
        notes.contains("not a file name in the run directory"),
        "{notes}"
    );
    assert!(!notes.contains("--no-records"), "{notes}");
}

#[test]
fn records_that_are_a_fifo_are_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let mut run = single_run();
    run.workloads[0].iterations[0].records = Some("ops.fifo".into());
    write_run_json(&dir, &run);
    // No writer ever opens it: reading it would wait for ever.
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("ops.fifo"))
        .status()
        .unwrap();
    assert!(made.success());
    let html = html_of(&dir, &ReportOptions::default());
    let notes = page_data(&html)["workloads"][0]["iterations"][0]["notes"].to_string();
    assert!(notes.contains("not a regular file (a FIFO)"), "{notes}");
}

#[test]
fn a_run_without_records_still_has_its_overview() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let mut run = single_run();
    run.options.records = false;
    for w in &mut run.workloads {
        for it in &mut w.iterations {
            it.records = None;
        }
    }
    write_run_json(&dir, &run);
    let path = write_run_report(&dir, &run).unwrap();
    let html = std::fs::read_to_string(path).unwrap();
    let data = page_data(&html);
    assert!(data["workloads"][0]["iterations"][0]["rows"].is_null());
    assert!(
        data["workloads"][0]["iterations"][0]["notes"]
            .to_string()
            .contains("--no-records")
    );
}

#[test]
fn file_names_cannot_break_out_of_the_page() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let mut run = single_run();
    run.workloads[0].name = "</script><script>alert(1)</script>".into();
    write_run_json(&dir, &run);
    let html = html_of(&dir, &ReportOptions::default());
    assert_eq!(html.matches("<script>alert").count(), 0);
    assert_eq!(
        page_data(&html)["run"]["workloads"][0]["name"],
        "</script><script>alert(1)</script>"
    );
}

#[test]
fn directories_that_are_not_runs_get_errors_that_say_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = load_run(&tmp.path().join("nope")).unwrap_err();
    assert!(matches!(missing, ReportError::NoDir(_)));
    assert!(missing.to_string().contains("naslab run"));
    // The label directory (one level too high) names the run directories below it.
    let run = tmp.path().join("out").join("lab").join("20260101T000000Z");
    write_run_json(&run, &single_run());
    let err = load_run(&tmp.path().join("out")).unwrap_err().to_string();
    assert!(
        err.contains("no run.json") && err.contains("20260101T000000Z"),
        "{err}"
    );
    // Garbage, and a newer layout.
    let bad = tmp.path().join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(
        bad.join("run.json"),
        b"{\"schema_version\": 1, \"workloads\": 3}",
    )
    .unwrap();
    assert!(matches!(
        load_run(&bad).unwrap_err(),
        ReportError::BadRunJson { .. }
    ));
    std::fs::write(bad.join("run.json"), b"\xff\x00").unwrap();
    assert!(matches!(
        load_run(&bad).unwrap_err(),
        ReportError::BadRunJson { .. }
    ));
    std::fs::write(bad.join("run.json"), b"{\"schema_version\": 99}").unwrap();
    let newer = load_run(&bad).unwrap_err().to_string();
    assert!(newer.contains("newer naslab"), "{newer}");
}

#[test]
fn the_comparison_page_overlays_each_runs_charts() {
    let tmp = tempfile::tempdir().unwrap();
    let a = run_dir_with_records(&tmp.path().join("a"), 400);
    let b = run_dir_with_records(&tmp.path().join("b"), 800);
    let runs = vec![load_run(&a).unwrap(), load_run(&b).unwrap()];
    let c = compare(&runs, 0);
    let html = String::from_utf8(compare_html(&runs, &c)).unwrap();
    let data = page_data(&html);
    assert_eq!(data["kind"], "compare");
    let w = &data["workloads"][0];
    for r in 0..2 {
        // Each run on its own time grid: its own measured phase in at most 1000 round bins.
        let wall = runs[r].result.workloads[0].iterations[0].wall_ns;
        let bin = w["bin_ns"][r].as_u64().unwrap();
        assert_eq!(bin, naslab_report::round_bin_ns(wall));
        assert!(wall.div_ceil(bin) <= 1000 && wall.div_ceil(bin) > 100);
        let s = &w["runs"][r]["series"];
        assert_eq!(
            s["bin_ns"].as_u64().unwrap(),
            bin,
            "the run's own time grid"
        );
        assert_eq!(w["runs"][r]["wall_ns"].as_u64().unwrap(), wall);
        let ops: u64 = s["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(ops, [400, 800][r]);
    }
    assert_eq!(data["comparison"]["mean"], naslab_report::MEAN_NAME);
}

#[test]
fn a_large_run_keeps_the_access_map_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("big");
    std::fs::create_dir_all(&dir).unwrap();
    let ops = 120_000u64;
    let wall = write_records(
        &dir.join("OfficeProductivity.ops.jsonl.zst"),
        "OfficeProductivity",
        40,
        ops,
        1_000,
    );
    let mut run = single_run();
    run.workloads.truncate(1);
    run.workloads[0].iterations[0].wall_ns = wall;
    write_run_json(&dir, &run);
    let opts = ReportOptions {
        max_rows: 2_000_000,
        access_points: 10_000,
    };
    let html = html_of(&dir, &opts);
    let it = &page_data(&html)["workloads"][0]["iterations"][0];
    assert_eq!(it["rows"]["shown"], ops);
    assert_eq!(it["access"]["seen"], ops / 2);
    // Every op is in the rows: the map draws from them, no sample of its own.
    assert!(it["access"]["blob"].is_null());
    // With the rows capped, the sample stays within its bound.
    let opts = ReportOptions {
        max_rows: 1_000,
        access_points: 10_000,
    };
    let html = html_of(&dir, &opts);
    let it = &page_data(&html)["workloads"][0]["iterations"][0];
    assert!(it["access"]["shown"].as_u64().unwrap() <= 10_000);
    assert_eq!(it["access"]["stride"], 8);
}

#[test]
fn the_pages_warnings_are_worded_as_the_terminal_words_them() {
    use naslab_results::Warning;
    use naslab_results::export::{Exporter, Table};
    let tmp = tempfile::tempdir().unwrap();
    let dir = run_dir_with_records(tmp.path(), 40);
    let mut run = load_run(&dir).unwrap().result;
    let workload = run.workloads[0].name.clone();
    run.warnings.push(Warning::PacingLag {
        workload: workload.clone(),
        p99_ns: 2_500_000,
    });
    run.warnings.push(Warning::ReadsInFlightBound {
        workload: workload.clone(),
        in_flight: 4,
        queue_depth: 32,
        max_read: 16 << 20,
    });
    run.warnings
        .push(Warning::UnalignedDirect { workload, ops: 3 });
    write_run_json(&dir, &run);
    let page = page_data(&html_of(&dir, &ReportOptions::default()));
    let table = String::from_utf8(Table.export(&run)).unwrap();
    let shown: Vec<&str> = page["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(shown.len(), run.warnings.len(), "{shown:?}");
    for line in &shown {
        assert!(
            table.contains(line),
            "the page says {line:?}; the terminal:\n{table}"
        );
    }
    assert!(
        shown[1].contains("within 2500.0 µs of their schedule"),
        "{}",
        shown[1]
    );
}
