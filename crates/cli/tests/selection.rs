//! Picking workloads on the command line: --suite with --workload, the IOMeter-style
//! names, `list`, and the shell completions and man page.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::{naslab, run_err, run_ok, text};

/// Every file under `dir`, relative paths, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn workload_with_suite_picks_from_the_suite() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let res = run_ok(
        naslab()
            .args(["run", "--suite", "naspt", "--workload", "hdvideo_1record"])
            .args(["--scale", "0.002", "--json", "-t"])
            .arg(target.path())
            .arg("--out")
            .arg(out.path().join("r")),
    );
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    let names: Vec<&str> = run["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["HDVideo_1Record"]);
    assert_eq!(run["options"]["extra"]["suite"], "naspt");
    assert!(
        run["workloads"][0]["iterations"][0]["op_stats"]["write"]["count"]
            .as_u64()
            .is_some_and(|n| n > 0)
    );
}

#[test]
fn a_workload_outside_the_suite_or_twice_is_refused_and_leaves_no_directory() {
    let target = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let results = out.path().join("results");
    let err = run_err(
        naslab()
            .args(["run", "--suite", "iometer", "--workload", "PhotoAlbum"])
            .args(["--scale", "0.002", "-t"])
            .arg(target.path())
            .arg("--out")
            .arg(&results),
    );
    assert!(
        err.contains("PhotoAlbum is not in the iometer suite")
            && err.contains("IOMeter_4K_RandRead_QD1"),
        "{err}"
    );
    assert!(!results.exists(), "{:?}", tree(out.path()));
    let err = run_err(
        naslab()
            .args(["run", "--workload", "PhotoAlbum,photoalbum"])
            .args(["--scale", "0.002", "-t"])
            .arg(target.path())
            .arg("--out")
            .arg(&results),
    );
    assert!(
        err.contains("two workloads are named 'PhotoAlbum'"),
        "{err}"
    );
    assert!(!results.exists(), "{:?}", tree(out.path()));
    // An existing results directory stays, empty as it was.
    std::fs::create_dir(&results).unwrap();
    run_err(
        naslab()
            .args(["run", "--workload", "PhotoAlbum,PhotoAlbum"])
            .args(["--scale", "0.002", "-t"])
            .arg(target.path())
            .arg("--out")
            .arg(&results),
    );
    assert!(results.is_dir());
    assert_eq!(tree(&results), Vec::<String>::new());
}

#[test]
fn iometer_names_describe_run_and_are_listed() {
    let out = run_ok(naslab().args(["list", "--trace-dir", "/nonexistent"]));
    let listing = text(&out.stdout);
    assert!(
        listing
            .lines()
            .any(|l| l.starts_with("suite") && l.contains("iometer")),
        "{listing}"
    );
    for t in &naslab_workload::synthetic::iometer::TESTS {
        assert!(
            listing
                .lines()
                .any(|l| l.starts_with("iometer") && l.contains(t.name)),
            "{} missing from:\n{listing}",
            t.name
        );
    }

    let d = run_ok(naslab().args([
        "describe",
        "IOMeter_4K_RandRead_QD1",
        "--scale",
        "0.01",
        "--json",
    ]));
    let d: serde_json::Value = serde_json::from_slice(&d.stdout).unwrap();
    // 1 GiB at scale 0.01, rounded up to whole 4 KiB blocks: one pass of 4 KiB reads.
    let size = ((1u64 << 30) as f64 * 0.01) as u64;
    let blocks = size.div_ceil(4096);
    assert_eq!(d["reads"].as_u64(), Some(blocks), "{d}");
    assert_eq!(d["writes"].as_u64(), Some(0), "{d}");

    let target = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let res = run_ok(
        naslab()
            .args(["run", "--workload", "iometer_128k_seqwrite_qd1"])
            .args(["--scale", "0.002", "--json", "-t"])
            .arg(target.path())
            .arg("--out")
            .arg(results.path()),
    );
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    let w = &run["workloads"][0];
    assert_eq!(w["name"], "IOMeter_128K_SeqWrite_QD1");
    assert!(w["source"].as_str().unwrap().contains("iometer"), "{w}");
    let writes = &w["iterations"][0]["op_stats"]["write"];
    let size = ((1u64 << 30) as f64 * 0.002) as u64;
    let bytes = size.div_ceil(128 << 10) * (128 << 10);
    assert_eq!(writes["bytes"].as_u64(), Some(bytes), "{writes}");
}

#[test]
fn completions_name_every_command_for_each_shell() {
    let commands = ["run", "list", "describe", "report", "compare", "lab", "man"];
    for (shell, marker) in [
        ("bash", "complete -F _naslab"),
        ("zsh", "#compdef naslab"),
        ("fish", "complete -c naslab"),
    ] {
        let out = run_ok(naslab().args(["completions", shell]));
        let script = text(&out.stdout);
        assert!(script.contains(marker), "{shell}: no '{marker}'");
        for c in commands {
            assert!(script.contains(c), "{shell}: no '{c}'");
        }
        // The run command's flags are offered (fish spells them `-l workload`).
        assert!(
            script.contains("--workload") || script.contains("-l workload"),
            "{shell}"
        );
    }
    // clap refuses an unknown shell (exit code 2) and names the ones it knows.
    let out = naslab().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("bash") && err.contains("fish"), "{err}");
}

#[test]
fn the_man_page_is_roff_and_one_page_per_command_can_be_written() {
    let out = run_ok(naslab().arg("man"));
    let page = text(&out.stdout);
    assert!(
        page.contains(".TH naslab 1"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(page.contains(".SH SUBCOMMANDS") && page.contains("naslab\\-run(1)"));
    let dir = tempfile::tempdir().unwrap();
    run_ok(naslab().arg("man").arg("--dir").arg(dir.path()));
    let run_page = std::fs::read_to_string(dir.path().join("naslab-run.1")).unwrap();
    assert!(run_page.contains("\\-\\-suite"), "{run_page}");
    assert!(dir.path().join("naslab-compare.1").is_file());
    assert!(dir.path().join("naslab.1").is_file());
}

#[test]
fn a_bad_suite_date_or_block_size_is_refused_by_the_parser_naming_the_flag() {
    for (args, flag, says) in [
        (
            &["run", "--suite", "nasbench"][..],
            "--suite",
            "the suites are: naspt, iometer",
        ),
        (
            &["lab", "matrix", "--suite", "x"][..],
            "--suite",
            "the suites are: naspt, iometer",
        ),
        (
            &["results", "--since", "last week"][..],
            "--since",
            "write 2026-03-01",
        ),
        (
            &["results", "--until", "2026-3-1"][..],
            "--until",
            "write 2026-03-01",
        ),
        (
            &["ingest", "64q", "1", "1", "1"][..],
            "BLOCK_SIZE",
            "unknown unit in '64q'",
        ),
    ] {
        let out = naslab().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(flag) && err.contains(says), "{args:?}: {err}");
    }
    // A suite's name in any case is the catalog's; a block size takes a unit.
    let target = tempfile::tempdir().unwrap();
    let results = tempfile::tempdir().unwrap();
    let res = run_ok(
        naslab()
            .args(["run", "--suite", "NASPT", "--workload", "HDVideo_1Play"])
            .args(["--scale", "0.002", "--backend", "null", "--json", "--out"])
            .arg(results.path()),
    );
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    assert_eq!(run["options"]["extra"]["suite"], "naspt");
    let res = run_ok(
        naslab()
            .args(["ingest", "64k", "2", "3", "3", "--json", "-t"])
            .arg(target.path())
            .arg("--out")
            .arg(results.path()),
    );
    let run: serde_json::Value = serde_json::from_slice(&res.stdout).unwrap();
    let writes = &run["workloads"][0]["iterations"][0]["op_stats"]["write"];
    assert_eq!(
        writes["bytes"].as_u64(),
        Some(64 * 1024 * 2 * 3),
        "{writes}"
    );
}
