//! The NAS suite through the binary: suite and workload selection, batch mode, cache
//! handling, the user's trace directory, describe and export-trace.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use naslab_engine::plan::{compile, records_from_trace};
use naslab_engine::prepare::prepare;
use naslab_engine::{BackendOptions, Target};
use naslab_targets::{PosixTarget, Sandbox};
use naslab_trace::FileKind;
use naslab_workload::{GenParams, catalog, generate};

mod common;
use common::*;

fn run_json(args: &[&str], target: &Path, out: &Path) -> serde_json::Value {
    let res = run_ok(
        naslab()
            .arg("run")
            .args(args)
            .arg("--json")
            .arg("-t")
            .arg(target)
            .arg("--out")
            .arg(out),
    );
    serde_json::from_slice(&res.stdout).unwrap()
}

#[test]
fn the_suite_runs_all_twelve_and_writes_twelve_csv_rows() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = run_json(
        &["--suite", "naspt", "--scale", "0.002"],
        target.path(),
        out.path(),
    );
    let names: Vec<&str> = run["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = catalog().iter().map(|w| w.name).collect();
    assert_eq!(names, expected);
    for w in run["workloads"].as_array().unwrap() {
        assert!(
            w["throughput_mb_s"].as_f64().unwrap() > 0.0,
            "{}",
            w["name"]
        );
        assert_eq!(w["iterations"][0]["errors"], 0, "{}", w["name"]);
    }
    assert_eq!(run["options"]["extra"]["scale"], "0.002");
    assert_eq!(run["options"]["cache"], "drop");
    assert!(run["warnings"].as_array().unwrap().is_empty());
    let csv = std::fs::read_to_string(only_run_dir(out.path()).join("naspt.csv")).unwrap();
    assert_eq!(csv.lines().count(), 13);
}

#[test]
fn batch_of_three_keeps_three_iterations_and_reports_their_median() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = run_json(
        &[
            "--workload",
            "FileCopyToNAS,ContentCreation",
            "--scale",
            "0.003",
            "--batch",
            "3",
        ],
        target.path(),
        out.path(),
    );
    for w in run["workloads"].as_array().unwrap() {
        let its = w["iterations"].as_array().unwrap();
        assert_eq!(its.len(), 3);
        let mut t: Vec<f64> = its
            .iter()
            .map(|i| i["throughput_mb_s"].as_f64().unwrap())
            .collect();
        let iters: Vec<u64> = its
            .iter()
            .map(|i| i["iteration"].as_u64().unwrap())
            .collect();
        assert_eq!(iters, [1, 2, 3]);
        t.sort_by(f64::total_cmp);
        assert_eq!(w["throughput_mb_s"].as_f64().unwrap(), t[1]);
        assert_eq!(w["throughput_min_mb_s"].as_f64().unwrap(), t[0]);
        assert_eq!(w["throughput_max_mb_s"].as_f64().unwrap(), t[2]);
        // Each iteration prepared its own file set.
        for it in its {
            assert_eq!(it["prepare"]["files"], its[0]["prepare"]["files"]);
        }
    }
    let dir = only_run_dir(out.path());
    for i in 1..=3 {
        assert!(dir.join(format!("FileCopyToNAS.{i}.ops.nbt.zst")).is_file());
    }
    let table = std::fs::read_to_string(dir.join("results.txt")).unwrap();
    assert!(table.contains("min..max"), "{table}");
}

#[test]
fn files_only_written_are_absent_after_preparation_and_the_rest_are_there() {
    let params = GenParams {
        seed: 7,
        scale: 0.001,
    };
    for w in catalog() {
        let trace = generate(w.name, &params).unwrap();
        let target = tempfile::tempdir().unwrap();
        let spool = tempfile::tempdir().unwrap();
        let plan = compile(Path::new(w.name), records_from_trace(&trace), spool.path()).unwrap();
        let sandbox = Sandbox::open(target.path()).unwrap();
        let wd = sandbox.fresh_workload_dir(w.name).unwrap();
        let t = PosixTarget::new(sandbox.clone());
        let mut b = t
            .connect(w.name, plan.files.clone(), BackendOptions::default())
            .unwrap();
        prepare(&plan, b.as_mut(), &Default::default()).unwrap();
        let mut created = 0;
        for f in &trace.files {
            let p = wd.join(&f.path);
            if f.exists {
                let m = std::fs::metadata(&p)
                    .unwrap_or_else(|e| panic!("{}: {} missing: {e}", w.name, f.path));
                if f.kind == FileKind::File {
                    assert_eq!(m.len(), f.size, "{}: {}", w.name, f.path);
                }
            } else {
                created += 1;
                assert!(!p.exists(), "{}: {} exists before the test", w.name, f.path);
            }
        }
        let writes_new = [
            "HDVideo_1Record",
            "HDVideo_1Play_1Record",
            "FileCopyToNAS",
            "DirectoryCopyToNAS",
        ];
        if writes_new.contains(&w.name) {
            assert!(created > 0, "{} creates no file", w.name);
        }
    }
}

#[test]
fn cache_modes_are_recorded_and_keeping_caches_warns() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let args = [
        "--workload",
        "FileCopyFromNAS",
        "--scale",
        "0.002",
        "--cache",
        "keep",
    ];
    let run = run_json(&args, target.path(), out.path());
    assert_eq!(run["options"]["cache"], "keep");
    let w = &run["warnings"][0];
    assert_eq!(w["kind"], "fits_in_client_cache");
    assert_eq!(w["workload"], "FileCopyFromNAS");
    let table = run_ok(
        naslab()
            .arg("run")
            .args(args)
            .arg("-t")
            .arg(target.path())
            .arg("--out")
            .arg(out.path()),
    );
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("warning: FileCopyFromNAS") && text.contains("--cache drop"),
        "{text}"
    );
}

#[test]
fn traces_in_the_trace_directory_are_listed_and_run_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/document-save.jsonl");
    std::fs::copy(&example, dir.path().join("MySave.jsonl")).unwrap();
    // the same trace in the binary encoding, compressed
    run_ok(
        naslab()
            .arg("records")
            .arg(&example)
            .arg("-o")
            .arg(dir.path().join("MyBinarySave.nbt.zst")),
    );
    let list = run_ok(naslab().arg("list").arg("--trace-dir").arg(dir.path()));
    let text = String::from_utf8_lossy(&list.stdout);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("naspt ")).count(),
        12,
        "{text}"
    );
    for name in ["MySave", "MyBinarySave"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("trace") && l.split_whitespace().nth(1) == Some(name)),
            "{name} not listed: {text}"
        );
    }
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut ops = Vec::new();
    for name in ["MySave", "MyBinarySave"] {
        let run = run_json(
            &[
                "--workload",
                name,
                "--trace-dir",
                dir.path().to_str().unwrap(),
            ],
            target.path(),
            out.path(),
        );
        assert_eq!(run["workloads"][0]["name"], "DocumentSave");
        ops.push(run["workloads"][0]["iterations"][0]["ops"].clone());
    }
    assert!(ops[0].as_u64().unwrap() > 0, "{ops:?}");
    assert_eq!(ops[0], ops[1], "the two encodings replay the same ops");
    let err = naslab()
        .args(["run", "--workload", "Nope", "-t"])
        .arg(target.path())
        .output()
        .unwrap();
    let msg = String::from_utf8_lossy(&err.stderr);
    assert!(
        msg.contains("no workload 'Nope'") && msg.contains("naslab list"),
        "{msg}"
    );
}

#[test]
fn exported_traces_replay_to_the_same_ops_and_describe_the_same() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("pa.jsonl.zst");
    run_ok(
        naslab()
            .args(["export-trace", "PhotoAlbum", "--scale", "0.01", "-o"])
            .arg(&file),
    );
    let generated = generate(
        "PhotoAlbum",
        &GenParams {
            seed: 1,
            scale: 0.01,
        },
    )
    .unwrap();
    let from_file = run_ok(naslab().arg("describe").arg(&file).arg("--json"));
    let builtin = run_ok(naslab().args(["describe", "PhotoAlbum", "--scale", "0.01", "--json"]));
    assert_eq!(from_file.stdout, builtin.stdout);
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = run_json(&[file.to_str().unwrap()], target.path(), out.path());
    assert_eq!(
        run["workloads"][0]["iterations"][0]["ops"]
            .as_u64()
            .unwrap(),
        generated.ops.len() as u64
    );
    let text = run_ok(naslab().args(["describe", "ContentCreation"]));
    assert!(String::from_utf8_lossy(&text.stdout).contains("sequential"));
}

#[test]
fn keeping_caches_still_writes_the_prepared_files_back_before_anything_is_timed() {
    need_tool("strace", "-V");
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("wb.jsonl");
    std::fs::write(
        &trace,
        concat!(
            r#"{"type":"header","format":"naslab-trace","version":1,"workload":"WriteBack"}"#,
            "\n",
            r#"{"type":"file","id":1,"path":"a","size":1048576,"exists":true}"#,
            "\n",
            r#"{"type":"file","id":2,"path":"b","size":65536,"exists":true}"#,
            "\n",
            r#"{"type":"op","op":"open","file":1,"flags":"read"}"#,
            "\n",
            r#"{"type":"op","op":"read","file":1,"offset":0,"len":4096}"#,
            "\n",
            r#"{"type":"op","op":"close","file":1}"#,
            "\n",
            r#"{"type":"op","op":"open","file":2,"flags":"read"}"#,
            "\n",
            r#"{"type":"op","op":"read","file":2,"offset":0,"len":4096}"#,
            "\n",
            r#"{"type":"op","op":"close","file":2}"#,
            "\n",
        ),
    )
    .unwrap();
    let target = d.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let text = strace_run("fsync,pread64", &trace, &target, &d.path().join("out"));
    let calls: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once(' ').map(|(_, c)| c.trim_start()))
        .collect();
    let on = |call: &str, file: &str| {
        calls
            .iter()
            .position(|c| c.starts_with(call) && c.contains(&format!("/naslab/WriteBack/{file}>")))
    };
    for file in ["a", "b"] {
        let synced =
            on("fsync(", file).unwrap_or_else(|| panic!("{file} never written back:\n{text}"));
        let read = on("pread64(", file).unwrap_or_else(|| panic!("{file} never read:\n{text}"));
        assert!(
            synced < read,
            "{file} written back after the measured phase began:\n{text}"
        );
        let count = calls
            .iter()
            .filter(|c| {
                c.starts_with("fsync(") && c.contains(&format!("/naslab/WriteBack/{file}>"))
            })
            .count();
        assert_eq!(count, 1, "{file}:\n{text}");
    }
}
