//! The op tables' min, max and mean are the op records' exact figures (not histogram
//! buckets), in run.json and, rounded once the same way, in the CSV.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;

use common::{naslab, run_ok};
use naslab_results::export::Us;
use naslab_trace::{Record, open_trace};

#[derive(Default, Debug)]
struct Exact {
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

#[test]
fn min_max_and_mean_equal_the_records_exact_figures() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    run_ok(
        naslab()
            .args([
                "run",
                "--workload",
                "PhotoAlbum",
                "--workload",
                "OfficeProductivity",
            ])
            .args(["--scale", "0.01", "--batch", "2", "--cache", "keep", "-t"])
            .arg(target.path())
            .arg("--out")
            .arg(out.path()),
    );
    let dir = common::only_run_dir(out.path());
    let run = common::json(&dir.join("run.json"));
    let csv =
        common::text(&run_ok(naslab().arg("report").arg(&dir).args(["--format", "csv"])).stdout);
    let mut checked = 0;
    for w in run["workloads"].as_array().unwrap() {
        let name = w["name"].as_str().unwrap();
        for it in w["iterations"].as_array().unwrap() {
            let i = it["iteration"].as_u64().unwrap();
            let records = dir.join(format!("{name}.{i}.ops.nbt.zst"));
            let mut exact: BTreeMap<String, Exact> = BTreeMap::new();
            for r in open_trace(&records).unwrap() {
                if let Record::Op(op, Some(m)) = r.unwrap() {
                    let ns = m.done_ns - m.issued_ns;
                    let e = exact.entry(op.kind.to_string()).or_insert(Exact {
                        min: u64::MAX,
                        ..Exact::default()
                    });
                    e.count += 1;
                    e.sum += ns as u128;
                    e.min = e.min.min(ns);
                    e.max = e.max.max(ns);
                }
            }
            assert!(exact.len() >= 3, "{name}: {exact:?}");
            for (op, e) in &exact {
                let l = &it["op_stats"][op.as_str()]["latency"];
                assert_eq!(l["count"].as_u64(), Some(e.count), "{name} {i} {op}");
                assert_eq!(l["min_ns"].as_u64(), Some(e.min), "{name} {i} {op}");
                assert_eq!(l["max_ns"].as_u64(), Some(e.max), "{name} {i} {op}");
                let mean = (e.sum / e.count as u128) as u64;
                assert_eq!(l["avg_ns"].as_u64(), Some(mean), "{name} {i} {op}");
                for p in ["p50_ns", "p90_ns", "p99_ns", "p999_ns"] {
                    let v = l[p].as_u64().unwrap();
                    assert!(e.min <= v && v <= e.max, "{name} {i} {op} {p} {v}: {e:?}");
                }
                // The CSV row shows the same extremes, rounded as every export rounds.
                let row = csv
                    .lines()
                    .find(|r| {
                        r.starts_with(&format!("{name},{i},")) && r.contains(&format!(",{op},"))
                    })
                    .unwrap_or_else(|| panic!("no CSV row for {name} {i} {op}"));
                let cols: Vec<&str> = row.split(',').collect();
                assert_eq!(cols[9], Us(mean).to_string(), "{row}");
                assert_eq!(cols[11], Us(e.min).to_string(), "{row}");
                assert_eq!(cols[16], Us(e.max).to_string(), "{row}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 12, "checked {checked} op types");
}
