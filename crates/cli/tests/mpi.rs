//! Multi-client runs under `mpirun` (binary built with `--features mpi`): one result from
//! four clients, equal to four single-client runs; the barrier start; a failing client
//! stopping the job.
#![cfg(feature = "mpi")]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{naslab, text};
use naslab_results::{LatencyHistogram, RunResult};
use naslab_trace::{open_trace, Record};

const WORKLOADS: &str = "PhotoAlbum,FileCopyToNAS";

/// `mpirun` with what this machine needs (root, more ranks than cores), or `None` (then
/// the test fails when NASLAB_REQUIRE_ROOT=1, as CI sets).
fn mpirun(ranks: u32) -> Option<Command> {
    let mpirun = common::tool_or_skip("mpirun")?;
    let mut c = Command::new(mpirun);
    c.args(["--allow-run-as-root", "--oversubscribe", "-n"])
        .arg(ranks.to_string())
        .arg(env!("CARGO_BIN_EXE_naslab"));
    Some(c)
}

fn run_json_files(out: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![out.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "run.json") {
                found.push(p);
            }
        }
    }
    found
}

fn read_run(path: &Path) -> RunResult {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn four_clients_make_one_result_equal_to_four_single_runs() {
    let Some(mut job) = mpirun(4) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (t1, o1, t4, o4) = (
        tmp.path().join("t1"),
        tmp.path().join("o1"),
        tmp.path().join("t4"),
        tmp.path().join("o4"),
    );
    for d in [&t1, &t4] {
        std::fs::create_dir_all(d).unwrap();
    }
    let args = |target: &Path, out: &Path| -> Vec<String> {
        vec![
            "run".into(),
            "--workload".into(),
            WORKLOADS.into(),
            "--scale".into(),
            "0.005".into(),
            "--target".into(),
            target.display().to_string(),
            "--out".into(),
            out.display().to_string(),
        ]
    };
    common::run_ok(naslab().args(args(&t1, &o1)));
    let started = Instant::now();
    let out = job.args(args(&t4, &o4)).output().unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "mpirun failed:\nstdout: {}\nstderr: {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    eprintln!("{stdout}");
    let singles = run_json_files(&o1);
    let jobs = run_json_files(&o4);
    assert_eq!(singles.len(), 1);
    assert_eq!(
        jobs.len(),
        1,
        "a four-client job writes exactly one run directory: {jobs:?}"
    );
    // Every client worked in its own directory under the target.
    for r in 0..4 {
        assert!(t4.join(format!("client-{r}/naslab")).is_dir());
    }
    let single = read_run(&singles[0]);
    let job = read_run(&jobs[0]);
    let multi = job
        .multi_client
        .as_ref()
        .expect("run.json names the clients");
    assert_eq!(multi.clients.len(), 4);
    assert_eq!(
        multi.clients.iter().map(|c| c.rank).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert!(job.aborted.is_none(), "{:?}", job.aborted);
    assert_eq!(job.workloads.len(), 2);
    // FileCopyToNAS writes its copy once, front to back: the aggregate bytes written are
    // the sizes of the four copies, as stat finds them in each client's own
    // <target>/client-<rank>/naslab/<workload>/.
    let copies: u64 = (0..4)
        .map(|r| {
            let copy = t4.join(format!("client-{r}/naslab/FileCopyToNAS/Backup.bkf"));
            std::fs::metadata(&copy)
                .unwrap_or_else(|e| panic!("{}: {e}", copy.display()))
                .len()
        })
        .sum();
    let copy = job
        .workloads
        .iter()
        .find(|w| w.name == "FileCopyToNAS")
        .unwrap();
    assert!(copies > 0);
    assert_eq!(copy.iterations[0].bytes_written, copies);
    let run_dir = jobs[0].parent().unwrap();
    for (w, s) in job.workloads.iter().zip(&single.workloads) {
        assert_eq!(w.name, s.name);
        let (a, one) = (&w.iterations[0], &s.iterations[0]);
        // The aggregate is exactly four clients' worth of the single run.
        assert_eq!(a.ops, 4 * one.ops, "{}", w.name);
        assert_eq!(a.bytes_read, 4 * one.bytes_read, "{}", w.name);
        assert_eq!(a.bytes_written, 4 * one.bytes_written, "{}", w.name);
        assert_eq!(
            a.op_stats.keys().collect::<Vec<_>>(),
            one.op_stats.keys().collect::<Vec<_>>()
        );
        for (op, st) in &one.op_stats {
            assert_eq!(a.op_stats[op].count, 4 * st.count, "{} {op}", w.name);
            assert_eq!(a.op_stats[op].bytes, 4 * st.bytes, "{} {op}", w.name);
        }
        // The clients' own figures add up to the aggregate.
        let clients: Vec<_> = multi
            .clients
            .iter()
            .map(|c| {
                let cw = c.workloads.iter().find(|x| x.name == w.name).unwrap();
                &cw.iterations[0]
            })
            .collect();
        assert_eq!(clients.iter().map(|c| c.ops).sum::<u64>(), a.ops);
        assert_eq!(
            clients
                .iter()
                .map(|c| c.bytes_read + c.bytes_written)
                .sum::<u64>(),
            a.bytes_read + a.bytes_written
        );
        for (op, st) in &a.op_stats {
            let n: u64 = clients.iter().map(|c| c.op_stats[op].count).sum();
            assert_eq!(n, st.count, "{} {op}", w.name);
        }
        // The aggregate spans the first start to the last completion.
        let first = clients.iter().map(|c| c.clock_start_ns).min().unwrap();
        let last = clients
            .iter()
            .map(|c| c.clock_start_ns + c.wall_ns)
            .max()
            .unwrap();
        assert_eq!(a.wall_ns, last - first);
        let mb_s = (a.bytes_read + a.bytes_written) as f64 / (a.wall_ns as f64 / 1e9) / 1e6;
        assert!((a.throughput_mb_s - mb_s).abs() < 1e-9 * mb_s.max(1.0));

        // The merged records hold every client's ops, in issue order, with a client field.
        let records = run_dir.join(a.records.as_ref().expect("merged records"));
        let mut reader = open_trace(&records).unwrap();
        let mut per_client: BTreeMap<u32, u64> = BTreeMap::new();
        let mut first_issue: BTreeMap<u32, u64> = BTreeMap::new();
        let mut latency: BTreeMap<String, LatencyHistogram> = BTreeMap::new();
        let mut last_issued = 0;
        let mut paths = BTreeSet::new();
        while let Some(rec) = reader.next_record().unwrap() {
            match rec {
                Record::File(f) => {
                    paths.insert(f.path.split('/').next().unwrap().to_string());
                }
                Record::Op(op, Some(m)) => {
                    let c = reader.client().expect("every merged op names its client");
                    *per_client.entry(c).or_default() += 1;
                    first_issue.entry(c).or_insert(m.issued_ns);
                    assert!(m.issued_ns >= last_issued, "records are in issue order");
                    last_issued = m.issued_ns;
                    latency
                        .entry(op.kind.name().to_string())
                        .or_default()
                        .record(m.done_ns - m.issued_ns);
                }
                _ => {}
            }
        }
        assert_eq!(
            paths,
            (0..4)
                .map(|r| format!("client-{r}"))
                .collect::<BTreeSet<_>>()
        );
        for (r, c) in clients.iter().enumerate() {
            assert_eq!(per_client.get(&(r as u32)), Some(&c.ops), "client {r}");
        }
        // Latency figures are those of every op's latency together (merged histograms).
        for (op, h) in &latency {
            assert_eq!(a.op_stats[op].latency, h.summary(), "{} {op}", w.name);
        }
        // Barrier start: on the common time base every client's first op is issued
        // within 1 ms of the others' when each client has a CPU of its own. With more
        // clients than CPUs the kernel's scheduler, not naslab, decides who runs first,
        // so the bound is looser there.
        let lo = first_issue.values().min().unwrap();
        let hi = first_issue.values().max().unwrap();
        let skew = hi - lo;
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let bound = if cpus >= 4 { 1_000_000 } else { 50_000_000 };
        eprintln!(
            "{}: first ops issued at {:?} ns; start skew {:.1} µs (bound {} ms on {cpus} CPUs)",
            w.name,
            first_issue,
            skew as f64 / 1e3,
            bound / 1_000_000
        );
        assert!(skew < bound, "start skew {skew} ns");
    }
    for c in &multi.clients {
        eprintln!(
            "client {} on {}: clock offset {} ns ± {} ns, woke {:.1} µs after the start",
            c.rank,
            c.host,
            c.clock_offset_ns,
            c.clock_uncertainty_ns,
            c.start_late_ns as f64 / 1e3
        );
        // One host, one CLOCK_MONOTONIC: the measured offset must be zero within its
        // uncertainty.
        assert!(
            c.clock_offset_ns.unsigned_abs() <= c.clock_uncertainty_ns,
            "client {}: offset {} ± {}",
            c.rank,
            c.clock_offset_ns,
            c.clock_uncertainty_ns
        );
        assert_eq!(c.host, hostname());
    }
    assert!(stdout.contains("4 clients"), "{stdout}");
    assert!(stdout.contains("slowest client"), "{stdout}");
    eprintln!("four-client job took {:.1} s", took.as_secs_f64());
}

#[test]
fn a_client_that_cannot_write_its_target_stops_the_job() {
    let Some(mut job) = mpirun(4) else { return };
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("t");
    std::fs::create_dir_all(&target).unwrap();
    // Client 2's directory is a plain file: it cannot make its file set there.
    std::fs::write(target.join("client-2"), b"in the way").unwrap();
    let out_dir = tmp.path().join("o");
    let started = Instant::now();
    let out = job
        .args([
            "run",
            "--workload",
            WORKLOADS,
            "--scale",
            "0.005",
            "--target",
        ])
        .arg(&target)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let host = hostname();
    assert!(
        stderr.contains(&format!("client 2 on {host}")),
        "the message names the client and its host: {stderr}"
    );
    assert!(stderr.contains("client-2"), "{stderr}");
    assert!(took < Duration::from_secs(60), "took {took:?}");
    // Nothing was measured, so no run directory was left.
    assert!(run_json_files(&out_dir).is_empty());
    // The other clients stopped before their measured phase.
    for r in [0, 1, 3] {
        let dir = target.join(format!("client-{r}/naslab"));
        assert!(dir.is_dir(), "client {r} prepared");
    }
    eprintln!("the job stopped {:.1} s after it began", took.as_secs_f64());
}
