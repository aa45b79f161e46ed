//! `naslab run` writing report.html, `naslab report` rebuilding every format from a run
//! directory, and `naslab compare`, end to end on the null backend.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::Path;

mod common;
use common::*;

/// Runs the example trace on the null backend under `out/label` and returns the run directory.
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
fn the_runs_own_report_reads_no_records_back_and_equals_the_rebuilt_one() {
    need_tool("strace", "-V");
    // Written beside the measured phase (the default) and after it.
    for (label, after) in [("s", None), ("a", Some("--records-after-phase"))] {
        let out = tempfile::tempdir().unwrap();
        let log = out.path().join("run.strace");
        // Two iterations of a two-stream trace: records merged across streams, and each
        // iteration's views placed on the page under its own ids.
        run_ok(
            std::process::Command::new("strace")
                .args(["-f", "-qq", "-o"])
                .arg(&log)
                .args(["-e", "trace=openat"])
                .arg(env!("CARGO_BIN_EXE_naslab"))
                .arg("run")
                .arg(repo_root().join("examples/document-save.jsonl"))
                .args(["--backend", "null", "--batch", "2", "--label", label])
                .args(after)
                .arg("--out")
                .arg(out.path()),
        );
        let dir = only_run_under(&out.path().join(label));
        let log = std::fs::read_to_string(&log).unwrap();
        let opens: Vec<&str> = log.lines().filter(|l| l.contains(".ops.nbt.zst")).collect();
        assert_eq!(opens.len(), 2, "one open per iteration's records:\n{log}");
        assert!(
            opens
                .iter()
                .all(|l| l.contains("O_WRONLY") && l.contains("O_CREAT")),
            "the records are only written, never read back for the report:\n{}",
            opens.join("\n")
        );
        let again = out.path().join("again.html");
        run_ok(naslab().arg("report").arg(&dir).arg("-o").arg(&again));
        let (made, rebuilt) = (
            std::fs::read(dir.join("report.html")).unwrap(),
            std::fs::read(&again).unwrap(),
        );
        assert!(made.len() > 10_000, "a page with its data");
        assert!(
            made == rebuilt,
            "{after:?}: the page made during the run and the one rebuilt from its records differ ({} and {} bytes)",
            made.len(),
            rebuilt.len()
        );
    }
}

#[test]
fn report_survives_damaged_records() {
    let out = tempfile::tempdir().unwrap();
    let dir = example_run(out.path(), "a");
    let records = dir.join("DocumentSave.ops.nbt.zst");
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
    std::fs::remove_file(dir.join("DocumentSave.ops.nbt.zst")).unwrap();
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

/// The JSON a report page embeds for its views.
fn page_data(html: &str) -> serde_json::Value {
    let tag = "id=\"naslab-data\">";
    let start = html.find(tag).expect("the page's data element") + tag.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

/// One op's measurements, from its record line.
struct Measured {
    kind: String,
    file: u64,
    len: u64,
    done_ns: u64,
    latency_ns: u64,
    result: i64,
}

/// The nearest-rank percentile `pct` (the value at rank ⌈pct/100 · n⌉, ascending).
fn nearest_rank(v: &[u64], pct: usize) -> Option<u64> {
    let mut s = v.to_vec();
    s.sort_unstable();
    let rank = (s.len() * pct).div_ceil(100).max(1);
    s.get(rank - 1).copied()
}

#[test]
fn the_pages_per_file_figures_time_series_and_period_percentiles_follow_from_the_records() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    run_ok(
        naslab()
            .args(["run", "--workload", "OfficeProductivity", "--scale", "0.01"])
            .arg("--target")
            .arg(target.path())
            .arg("--out")
            .arg(out.path()),
    );
    let dir = only_run_dir(out.path());
    let run = json(&dir.join("run.json"));
    let it = &run["workloads"][0]["iterations"][0];
    let clock_start = it["clock_start_ns"].as_u64().unwrap();

    // The records, written out as JSON Lines and parsed line by line: file paths and
    // measured ops.
    let raw = run_ok(
        naslab()
            .arg("records")
            .arg(dir.join(it["records"].as_str().unwrap())),
    );
    let mut paths = std::collections::HashMap::new();
    let mut ops = Vec::new();
    for line in text(&raw.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str() {
            Some("file") => {
                paths.insert(
                    v["id"].as_u64().unwrap(),
                    v["path"].as_str().unwrap().to_string(),
                );
            }
            Some("op") if v.get("done_ns").is_some() => {
                let (issued, done) = (
                    v["issued_ns"].as_u64().unwrap(),
                    v["done_ns"].as_u64().unwrap(),
                );
                ops.push(Measured {
                    kind: v["op"].as_str().unwrap().to_string(),
                    file: v["file"].as_u64().unwrap(),
                    len: v["len"].as_u64().unwrap_or(0),
                    done_ns: done.saturating_sub(clock_start),
                    latency_ns: done - issued,
                    result: v["result"].as_i64().unwrap(),
                });
            }
            _ => {}
        }
    }
    assert_eq!(Some(ops.len() as u64), it["ops"].as_u64());

    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    let page = page_data(&html);
    let shown = &page["workloads"][0]["iterations"][0];
    assert_eq!(shown["ops"].as_u64(), Some(ops.len() as u64));

    // Per file: ops, reads, writes, bytes, errors and the latency's count, min, max, mean.
    #[derive(Default, Debug, PartialEq)]
    struct PerFile {
        ops: u64,
        reads: u64,
        writes: u64,
        bytes_read: u64,
        bytes_written: u64,
        errors: u64,
        min_ns: u64,
        max_ns: u64,
    }
    let mut want: std::collections::BTreeMap<String, (PerFile, Vec<u64>)> = Default::default();
    for op in &ops {
        let (f, latencies) = want.entry(paths[&op.file].clone()).or_insert((
            PerFile {
                min_ns: u64::MAX,
                ..PerFile::default()
            },
            Vec::new(),
        ));
        f.ops += 1;
        f.errors += (op.result < 0) as u64;
        f.min_ns = f.min_ns.min(op.latency_ns);
        f.max_ns = f.max_ns.max(op.latency_ns);
        latencies.push(op.latency_ns);
        let moved = op.result.max(0) as u64;
        match op.kind.as_str() {
            "read" => (f.reads, f.bytes_read) = (f.reads + 1, f.bytes_read + moved),
            "write" => (f.writes, f.bytes_written) = (f.writes + 1, f.bytes_written + moved),
            _ => {}
        }
    }
    let files = shown["files"].as_array().unwrap();
    let stats = shown["file_stats"].as_array().unwrap();
    assert_eq!(stats.len(), want.len());
    for s in stats {
        let path = files[s["file"].as_u64().unwrap() as usize]["path"]
            .as_str()
            .unwrap();
        let (w, latencies) = &want[path];
        let n = |k: &str| s[k].as_u64().unwrap();
        let l = &s["latency"];
        let got = PerFile {
            ops: n("ops"),
            reads: n("reads"),
            writes: n("writes"),
            bytes_read: n("bytes_read"),
            bytes_written: n("bytes_written"),
            errors: n("errors"),
            min_ns: l["min_ns"].as_u64().unwrap(),
            max_ns: l["max_ns"].as_u64().unwrap(),
        };
        assert_eq!(&got, w, "{path}");
        assert_eq!(l["count"].as_u64(), Some(w.ops), "{path}");
        // Mean and population standard deviation: exact.
        let mean = latencies.iter().map(|&x| x as u128).sum::<u128>() as f64 / w.ops as f64;
        let var = latencies
            .iter()
            .map(|&x| (x as f64 - mean).powi(2))
            .sum::<f64>()
            / w.ops as f64;
        for (k, exact) in [("mean_ns", mean), ("stddev_ns", var.sqrt())] {
            let got = l[k].as_f64().unwrap();
            assert!(
                (got - exact).abs() <= 1e-6 * exact.max(1.0),
                "{path}: {k} {got}, records give {exact}"
            );
        }
        // Percentiles: the middle of a 2.3 % bucket, so within 1.2 % of the exact one.
        for (k, pct) in [("p50_ns", 50), ("p90_ns", 90), ("p99_ns", 99)] {
            let exact = nearest_rank(latencies, pct).unwrap() as f64;
            let got = l[k].as_u64().unwrap() as f64;
            assert!(
                (got - exact).abs() <= 0.012 * exact + 1.0,
                "{path}: {k} {got}, records give {exact}"
            );
        }
    }
    assert!(want.values().any(|(f, _)| f.reads > 0) && want.values().any(|(f, _)| f.writes > 0));

    // The latency histogram: every op once, under "all" and under its own type.
    for pair in shown["latency"]["by_op"].as_array().unwrap() {
        let kind = pair[0].as_str().unwrap();
        let want = ops
            .iter()
            .filter(|o| kind == "all" || o.kind == kind)
            .count() as u64;
        let got: u64 = pair[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(got, want, "latency histogram, {kind}");
    }
    let kinds: std::collections::BTreeSet<&str> = ops.iter().map(|o| o.kind.as_str()).collect();
    assert_eq!(
        shown["latency"]["by_op"].as_array().unwrap().len(),
        kinds.len() + 1
    );

    // Transfer sizes: bucket b holds [2^(b-1), 2^b), bucket 0 holds 0.
    let sizes = &shown["sizes"];
    let first = sizes["first"].as_u64().unwrap() as usize;
    for pair in sizes["by_op"].as_array().unwrap() {
        let kind = pair[0].as_str().unwrap();
        let mut counts = vec![0u64; 65];
        for op in ops.iter().filter(|o| o.kind == kind) {
            counts[(u64::BITS - op.len.leading_zeros()) as usize] += 1;
        }
        let got: Vec<u64> = pair[1]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert!(counts[..first].iter().all(|&c| c == 0), "{kind}");
        assert_eq!(got[..], counts[first..first + got.len()], "{kind}");
        assert_eq!(
            got.iter().sum::<u64>(),
            counts.iter().sum::<u64>(),
            "{kind}"
        );
    }

    // The time series: each op in the bin of its completion time.
    let series = &shown["series"];
    let bin_ns = series["bin_ns"].as_u64().unwrap();
    let col = |k: &str| -> Vec<u64> {
        series[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let bins = col("ops").len();
    let mut by_bin: Vec<Vec<&Measured>> = vec![Vec::new(); bins];
    for op in &ops {
        by_bin[((op.done_ns / bin_ns) as usize).min(bins - 1)].push(op);
    }
    let moved = |b: &[&Measured], kind: &str| -> u64 {
        b.iter()
            .filter(|o| o.kind == kind)
            .map(|o| o.result.max(0) as u64)
            .sum()
    };
    let want_col =
        |f: &dyn Fn(&[&Measured]) -> u64| -> Vec<u64> { by_bin.iter().map(|b| f(b)).collect() };
    assert_eq!(col("ops"), want_col(&|b| b.len() as u64));
    assert_eq!(col("read_bytes"), want_col(&|b| moved(b, "read")));
    assert_eq!(col("write_bytes"), want_col(&|b| moved(b, "write")));
    assert_eq!(
        col("latency_max_ns"),
        want_col(&|b| b.iter().map(|o| o.latency_ns).max().unwrap_or(0))
    );
    let sums: Vec<f64> = series["latency_sum_ns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    for (i, b) in by_bin.iter().enumerate() {
        assert_eq!(
            sums[i],
            b.iter().map(|o| o.latency_ns).sum::<u64>() as f64,
            "bin {i}"
        );
    }

    // Each period offered: its p50 and p99 over the ops completing in it.
    let periods = col("periods");
    let pct = series["latency_percentiles"]
        .as_array()
        .expect("the percentiles");
    assert_eq!(pct.len(), periods.len());
    assert!(periods.len() >= 3, "{periods:?}");
    for (p, &k) in pct.iter().zip(&periods) {
        assert_eq!(p["bins"].as_u64(), Some(k));
        let (mut spread, mut empty) = (0, 0);
        for (j, chunk) in by_bin.chunks(k as usize).enumerate() {
            let lat: Vec<u64> = chunk.iter().flatten().map(|o| o.latency_ns).collect();
            let (p50, p99) = (nearest_rank(&lat, 50), nearest_rank(&lat, 99));
            assert_eq!(p["p50_ns"][j].as_u64(), p50, "{k} bins, period {j}");
            assert_eq!(p["p99_ns"][j].as_u64(), p99, "{k} bins, period {j}");
            assert_eq!(
                p["p50_ns"][j].is_null(),
                lat.is_empty(),
                "{k} bins, period {j}"
            );
            spread += (p50 < p99) as u32;
            empty += lat.is_empty() as u32;
        }
        assert_eq!(
            p["p50_ns"].as_array().unwrap().len(),
            bins.div_ceil(k as usize)
        );
        // Periods whose p50 and p99 differ: the check above tells them apart.
        assert!(
            spread > 0,
            "{k} bins: {empty} empty periods, none with p50 below p99"
        );
    }
}
