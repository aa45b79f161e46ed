//! `naslab sweep` end to end, against its own op records: on the null backend with a
//! fixed service time (a server of known speed), a saturated point must stop the sweep
//! and a stall must show in the response time of every op scheduled behind it; a users
//! sweep must run exactly N copies of a workload, and its knee and overall response time
//! must be what docs/capacity.md says. (The queueing figures themselves are checked
//! exactly, on a scripted clock, in the engine's tests/openloop.rs.)

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use common::*;
use naslab_trace::{OpKind, Record, open_trace};
use serde_json::Value;

/// The timing-sensitive sweeps run one at a time: two spinning servers on two CPUs
/// would disturb each other's service times.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// One op of a point, from its records.
#[derive(Debug, Clone, Copy)]
struct Rec {
    kind: OpKind,
    sched: u64,
    issued: u64,
    done: u64,
}

/// Runs `naslab sweep ARGS` on the null backend; the run directory and run.json.
fn sweep(dir: &Path, args: &[&str]) -> (PathBuf, Value, String) {
    let out = dir.join("out");
    let o = run_ok(
        naslab()
            .arg("sweep")
            .args(args)
            .args(["--backend", "null", "--target"])
            .arg(dir)
            .arg("--out")
            .arg(&out),
    );
    let run = only_run_dir(&out);
    let j = json(&run.join("run.json"));
    (run, j, text(&o.stderr))
}

/// A point's ops (reads and writes only), from its records.
fn records(run: &Path, point: &Value) -> Vec<Rec> {
    let name = point["workload"].as_str().unwrap();
    let path = run.join(format!("{name}.ops.nbt.zst"));
    let mut out = Vec::new();
    for r in open_trace(&path).unwrap() {
        if let Record::Op(op, Some(m)) = r.unwrap() {
            out.push(Rec {
                kind: op.kind,
                sched: m.sched_ns,
                issued: m.issued_ns,
                done: m.done_ns,
            });
        }
    }
    out
}

fn points(j: &Value) -> &Vec<Value> {
    j["sweep"]["points"].as_array().unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap()
}

#[test]
fn a_saturated_point_achieves_the_service_rate_and_stops_the_sweep() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // A server of 500 µs serves 2000 ops/s at most: 4000 offered saturates it, and 500
    // (a quarter of its capacity) leaves it idle three quarters of the time, so a busy
    // machine's delays do not saturate that point too.
    let (run, j, err) = sweep(
        dir.path(),
        &[
            "--rate",
            "500,4000,8000",
            "--connections",
            "1",
            "--arrivals",
            "uniform",
            "--null-service-time",
            "500us",
            "--point-time",
            "3s",
            "--warmup",
            "500ms",
        ],
    );
    let pts = points(&j);
    assert_eq!(
        pts.len(),
        2,
        "the sweep stops at the saturated point:\n{err}"
    );
    assert_eq!(pts[0]["saturated"], false);
    assert_eq!(pts[1]["saturated"], true);
    let stopped = j["sweep"]["stopped"].as_str().unwrap();
    assert!(stopped.contains("saturated"), "{stopped}");
    assert_eq!(j["sweep"]["knee"], 500.0);
    // Always busy: the achieved rate is one op per mean service time (within 8 %: the
    // replay's own time between ops, and a busy machine's preemptions of it, count as
    // idle time of the server).
    let ops: Vec<Rec> = records(&run, &pts[1])
        .into_iter()
        .filter(|r| r.kind == OpKind::Read && r.sched >= 500_000_000)
        .collect();
    let mean_s =
        ops.iter().map(|r| (r.done - r.issued) as f64).sum::<f64>() / ops.len() as f64 / 1e9;
    let achieved = f(&pts[1]["achieved_ops_s"]);
    assert!(
        (achieved * mean_s - 1.0).abs() < 0.08,
        "achieved {achieved:.0} ops/s with a mean service of {:.1} µs",
        mean_s * 1e6
    );
    // Each point's line was printed as it ended.
    assert_eq!(
        err.lines().filter(|l| l.starts_with("sweep ")).count(),
        2,
        "{err}"
    );
}

#[test]
fn a_stall_shows_in_every_response_behind_it_and_in_one_service_time() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    // 1000 ops/s to a server of 100 µs; its 3000th op (the open is its 0th) takes 1 s more.
    let (run, j, _) = sweep(
        dir.path(),
        &[
            "--rate",
            "1000",
            "--connections",
            "1",
            "--arrivals",
            "uniform",
            "--null-service-time",
            "100us",
            "--null-stall",
            "1s@3000",
            "--point-time",
            "7s",
            "--warmup",
            "1s",
        ],
    );
    let p = &points(&j)[0];
    let ops = records(&run, p);
    let stalled: Vec<&Rec> = ops
        .iter()
        .filter(|r| r.done - r.issued >= 1_000_000_000)
        .collect();
    assert_eq!(stalled.len(), 1, "one op stalled");
    let s = stalled[0];
    // Every op scheduled while the server stalled waited for it: its response runs to
    // the stall's end at least. Arrivals come every millisecond, so the ops scheduled
    // during the stall are as many as the milliseconds it lasted, however long that was
    // on this machine.
    let behind: Vec<&Rec> = ops
        .iter()
        .filter(|r| r.sched >= s.issued && r.sched < s.done)
        .collect();
    let lasted_ms = (s.done - s.issued) / 1_000_000;
    assert!(
        behind.len().abs_diff(lasted_ms as usize) <= 1,
        "{} ops scheduled during a stall of {lasted_ms} ms",
        behind.len()
    );
    for r in &behind {
        assert!(r.done - r.sched >= s.done - r.sched, "{r:?}");
    }
    // The point's figures show it in the response times only.
    assert!(u(&p["all"]["response"]["max_ns"]) >= 1_000_000_000);
    assert!(
        u(&p["all"]["response"]["p99_ns"]) >= 500_000_000,
        "{}",
        p["all"]["response"]
    );
    // The service times hold one slow op among thousands: below the responses' p99.
    assert!(
        u(&p["all"]["service"]["p99_ns"]) < u(&p["all"]["response"]["p99_ns"]),
        "{} {}",
        p["all"]["service"],
        p["all"]["response"]
    );
}

/// The overall response time as docs/capacity.md defines it, computed apart.
fn overall_response(pts: &[Value]) -> f64 {
    let mut xy: Vec<(f64, f64)> = pts
        .iter()
        .map(|p| (f(&p["achieved_ops_s"]), f(&p["all"]["response"]["avg_ns"])))
        .collect();
    xy.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
    let peak = xy.last().unwrap().0;
    let mut area = xy[0].0 * xy[0].1;
    for i in 1..xy.len() {
        area += (xy[i].0 - xy[i - 1].0) * (xy[i].1 + xy[i - 1].1) / 2.0;
    }
    area / peak
}

#[test]
fn a_users_sweep_runs_n_copies_of_the_workload_and_computes_its_curve_as_documented() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let out = dir.path().join("out");
    let o = run_ok(
        naslab()
            .args([
                "sweep",
                "--workload",
                "OfficeProductivity",
                "--scale",
                "0.005",
            ])
            .args(["--users", "1,2,4", "--stagger", "200ms", "--keep-going"])
            .args(["--cap", "all:p99<=10s", "--target"])
            .arg(&target)
            .arg("--out")
            .arg(&out),
    );
    let run = only_run_dir(&out);
    let j = json(&run.join("run.json"));
    let pts = points(&j);
    assert_eq!(pts.len(), 3);
    let ops_of = |i: usize| u(&j["workloads"][i]["iterations"][0]["ops"]);
    for (i, n) in [1u64, 2, 4].iter().enumerate() {
        assert_eq!(
            j["workloads"][i]["name"],
            format!("OfficeProductivity@{n}users")
        );
        assert_eq!(
            ops_of(i),
            n * ops_of(0),
            "{n} users run {n} times one user's ops"
        );
        assert_eq!(u(&pts[i]["all"]["count"]), ops_of(i));
        assert_eq!(u(&pts[i]["all"]["errors"]), 0);
        assert_eq!(u(&pts[i]["users"]["users"]), *n);
    }
    // The knee: the last load before the first point over the cap, saturated or failing.
    let mut knee = None;
    for p in pts {
        if p["met_cap"] == false || p["saturated"] == true || u(&p["all"]["errors"]) > 0 {
            break;
        }
        knee = Some(f(&p["load"]));
    }
    assert_eq!(j["sweep"]["knee"].as_f64(), knee);
    let ort = overall_response(pts);
    let got = u(&j["sweep"]["overall_response_ns"]) as f64;
    assert!(
        (got - ort).abs() <= 1.0,
        "overall response {got} against {ort}"
    );
    let peak = pts
        .iter()
        .map(|p| f(&p["achieved_ops_s"]))
        .fold(0.0, f64::max);
    assert_eq!(f(&j["sweep"]["peak_achieved_ops_s"]), peak);
    // The table, printed and kept.
    let table = std::fs::read_to_string(run.join("sweep.txt")).unwrap();
    assert!(
        table.contains("knee:") && table.contains("overall response time"),
        "{table}"
    );
    assert!(text(&o.stdout).contains("capacity sweep"));
}

#[test]
fn sweeps_refuse_what_they_cannot_measure() {
    let dir = tempfile::tempdir().unwrap();
    let base = |args: &[&str]| {
        let mut c = naslab();
        c.arg("sweep")
            .args(args)
            .args(["--backend", "null", "--out"])
            .arg(dir.path().join("o"));
        c
    };
    for (args, says) in [
        (&["--users", "1,2"][..], "--workload"),
        (&["--rate", "100", "--no-records"][..], "op records"),
        (&["--rate", "100,100"][..], "given twice"),
        (&["--rate", "0"][..], "not possible"),
        (
            &["--rate", "100", "--start", "1", "--step", "2"][..],
            "not both",
        ),
        (&["--start", "100"][..], "--rate A,B,C"),
        (
            &["--rate", "100", "--cap", "read:p99"][..],
            "OP:pNN<=DURATION",
        ),
        (&["--rate", "100", "--mix", "read=120"][..], "percentage"),
        (
            &[
                "--workload",
                "OfficeProductivity",
                "--users",
                "2",
                "--batch",
                "2",
            ][..],
            "once",
        ),
    ] {
        let err = run_err(&mut base(args));
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let err = run_err(
        naslab()
            .args([
                "run",
                "--workload",
                "PhotoAlbum",
                "--null-service-time",
                "1ms",
            ])
            .args(["--target"])
            .arg(dir.path()),
    );
    assert!(err.contains("--backend null"), "{err}");
}

#[test]
fn users_sweeps_run_over_smb_and_nfs_with_n_times_one_users_ops() {
    for server in ["samba", "nfs"] {
        if !common::lab::lab_ready(server) {
            continue;
        }
        let base = tempfile::tempdir().unwrap();
        let lab = common::lab::up_on_dir(base.path(), &format!("sweep-{server}"), server);
        let out = base.path().join("results");
        let mut c = naslab();
        c.env_remove("NASLAB_SMB_PASSWORD")
            .env("NASLAB_SMB_PASSWORD", &lab.password)
            .args([
                "sweep",
                "--workload",
                "OfficeProductivity",
                "--scale",
                "0.002",
            ])
            .args(["--users", "1,2,3", "--stagger", "100ms", "--keep-going"])
            .args(["--target", &lab.url, "--out"])
            .arg(&out);
        run_ok(&mut c);
        let run = only_run_dir(&out);
        let j = json(&run.join("run.json"));
        let pts = points(&j);
        assert_eq!(pts.len(), 3, "{server}");
        let ops_of = |i: usize| u(&j["workloads"][i]["iterations"][0]["ops"]);
        for (i, n) in [1u64, 2, 3].iter().enumerate() {
            assert_eq!(ops_of(i), n * ops_of(0), "{server}: {n} users");
            assert_eq!(u(&pts[i]["all"]["count"]), ops_of(i), "{server}");
            assert_eq!(u(&pts[i]["all"]["errors"]), 0, "{server}");
            assert!(
                u(&pts[i]["all"]["response"]["avg_ns"]) >= u(&pts[i]["all"]["service"]["avg_ns"])
            );
        }
        // The last point's users each had their own copy of the files on the server.
        let wl = lab.share_dir.join("naslab/OfficeProductivity@3users");
        for user in ["user-000", "user-001", "user-002"] {
            assert!(
                wl.join(user).is_dir(),
                "{server}: {} has no {user}",
                wl.display()
            );
        }
    }
}

#[test]
fn the_office_preset_gives_each_user_both_workloads_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_, j, _) = sweep(
        dir.path(),
        &[
            "--preset",
            "office",
            "--users",
            "1,2",
            "--scale",
            "0.002",
            "--stagger",
            "10ms",
        ],
    );
    let pts = points(&j);
    assert_eq!(pts.len(), 2);
    assert_eq!(
        j["workloads"][1]["name"],
        "OfficeProductivity+FileCopyToNAS@2users"
    );
    let ops_of = |i: usize| u(&j["workloads"][i]["iterations"][0]["ops"]);
    assert_eq!(ops_of(1), 2 * ops_of(0));
    // Each user ran both workloads: the streams of one user are both workloads' streams.
    assert_eq!(
        j["workloads"][0]["iterations"][0]["streams"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

/// GET /metrics from `addr`: the body.
fn scrape(addr: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .ok()?;
    let mut r = String::new();
    s.read_to_string(&mut r).ok()?;
    let (head, body) = r.split_once("\r\n\r\n")?;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("application/openmetrics-text"), "{head}");
    Some(body.to_string())
}

#[test]
fn the_metrics_endpoint_serves_each_point_as_run_json_has_it() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut child = naslab()
        .args([
            "sweep",
            "--rate",
            "100,200,300",
            "--arrivals",
            "uniform",
            "--connections",
            "2",
        ])
        .args([
            "--point-time",
            "2s",
            "--warmup",
            "200ms",
            "--metrics",
            "127.0.0.1:0",
        ])
        .args(["--backend", "null", "--null-service-time", "200us", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (mut addr, mut scraped) = (String::new(), Vec::new());
    for line in stderr.lines() {
        let line = line.unwrap();
        if let Some(url) = line.strip_prefix("metrics: http://") {
            addr = url.trim_end_matches("/metrics").to_string();
        }
        // A point's line comes once its figures are served: scrape while the next runs.
        if line.starts_with("sweep ")
            && let Some(body) = scrape(&addr)
        {
            scraped.push(body);
        }
    }
    assert!(child.wait().unwrap().success());
    assert!(scraped.len() >= 2, "scraped after {} points", scraped.len());
    let j = json(&only_run_dir(&out).join("run.json"));
    for (i, body) in scraped.iter().enumerate() {
        assert!(
            body.contains(&format!("naslab_sweep_points_done {}", i + 1)),
            "{body}"
        );
        let p = &points(&j)[i];
        let name = p["workload"].as_str().unwrap();
        let count = u(&p["ops"]["read"]["count"]);
        assert!(
            body.contains(&format!(
                r#"naslab_sweep_ops{{point="{name}",op="read"}} {count}"#
            )),
            "{name}: {count} reads in run.json\n{body}"
        );
        let p99 = u(&p["all"]["response"]["p99_ns"]) as f64 / 1e9;
        let key = format!(
            r#"naslab_sweep_latency_seconds{{point="{name}",op="all",latency="response",quantile="0.99"}} "#
        );
        let served: f64 = body
            .lines()
            .find_map(|l| l.strip_prefix(&key))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key}\n{body}"));
        assert_eq!(served, p99, "{name}");
        // The reads' response-time histogram: its count is run.json's, and each bucket
        // holds the reads of the window at most its bound, counted here from the
        // records (an op within the histogram's 0.1 % of a bound may land either side).
        let served = |suffix: &str, le: &str| -> u64 {
            let key = format!(
                r#"naslab_sweep_op_latency_seconds_{suffix}{{{le}point="{name}",op="read",latency="response"}} "#
            );
            body.lines()
                .find_map(|l| l.strip_prefix(&key))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no {key}\n{body}"))
        };
        assert_eq!(served("count", ""), count, "{name}");
        let window = u(&p["window_start_ns"]);
        let reads: Vec<u64> = records(&only_run_dir(&out), p)
            .iter()
            .filter(|r| r.kind == OpKind::Read && r.sched >= window)
            .map(|r| r.done - r.sched)
            .collect();
        assert_eq!(reads.len() as u64, count, "{name}");
        assert_eq!(served("bucket", r#"le="+Inf","#), count, "{name}");
        for (le, bound) in [
            ("0.0002", 200_000u64),
            ("0.0005", 500_000),
            ("0.001", 1_000_000),
        ] {
            let exact = reads.iter().filter(|&&v| v <= bound).count() as i64;
            let near = reads
                .iter()
                .filter(|&&v| v.abs_diff(bound) <= bound / 1000 + 1)
                .count() as i64;
            let got = served("bucket", &format!(r#"le="{le}","#)) as i64;
            assert!(
                (got - exact).abs() <= near,
                "{name}: {got} reads at most {le} s served, {exact} in the records ({near} within 0.1 %)"
            );
        }
    }
    let err = run_err(
        naslab()
            .args([
                "sweep",
                "--rate",
                "10",
                "--backend",
                "null",
                "--metrics",
                "203.0.113.1:1",
            ])
            .arg("--out")
            .arg(dir.path().join("o2")),
    );
    assert!(err.contains("cannot listen"), "{err}");
}

/// Each stream's scheduled starts in a point's records, in order.
fn schedules(run: &Path, point: &Value) -> std::collections::BTreeMap<u32, Vec<u64>> {
    let name = point["workload"].as_str().unwrap();
    let mut out: std::collections::BTreeMap<u32, Vec<u64>> = Default::default();
    for r in open_trace(&run.join(format!("{name}.ops.nbt.zst"))).unwrap() {
        if let Record::Op(op, Some(m)) = r.unwrap() {
            out.entry(op.stream).or_default().push(m.sched_ns);
        }
    }
    out
}

#[test]
fn the_fileserver_and_ingest_presets_pace_each_user_at_the_user_rate() {
    // fileserver at --scale 0.2: each user one connection with 2 files, of 4 KB and
    // 8 KB (seed 000's sizes in turn), written then read in 4 KB records: create, 1
    // write, close, create, 2 writes, close, then the same with opens and reads.
    // ingest at --scale 0.02: 2 files of 16 x 64 KB in one new directory: a mkdir, then
    // per file a create, 16 writes and a close.
    for (preset, scale, ops_per_user, written_per_user) in [
        ("fileserver", "0.2", 14u64, 4096u64 + 8192),
        ("ingest", "0.02", 1 + 2 * 18, 2 * 16 * 65536),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (run, j, _) = sweep(
            dir.path(),
            &[
                "--preset",
                preset,
                "--users",
                "1,3",
                "--scale",
                scale,
                "--user-rate",
                "500",
                "--arrivals",
                "uniform",
                "--stagger",
                "10ms",
                // A busy machine may not keep the pace: the schedule is checked, not the lag.
                "--keep-going",
            ],
        );
        let pts = points(&j);
        assert_eq!(pts.len(), 2, "{preset}");
        for (i, n) in [1u64, 3].iter().enumerate() {
            let it = &j["workloads"][i]["iterations"][0];
            assert_eq!(u(&it["ops"]), n * ops_per_user, "{preset}: {n} users");
            assert_eq!(u(&it["errors"]), 0, "{preset}: {n} users");
            assert_eq!(u(&it["bytes_written"]), n * written_per_user, "{preset}");
            // Every stream asks for its ops one per 2 ms (the user rate), in order.
            let s = schedules(&run, &pts[i]);
            assert_eq!(s.len() as u64, *n, "{preset}: one stream per user");
            for times in s.values() {
                assert_eq!(times.len() as u64, ops_per_user);
                for w in times.windows(2) {
                    assert_eq!(w[1] - w[0], 2_000_000, "{preset}: {times:?}");
                }
            }
        }
    }
    // A workload without timing is swept by users only with a pace.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("Flat.jsonl");
    std::fs::write(
        &trace,
        "{\"type\":\"header\",\"format\":\"naslab-trace\",\"version\":1,\"workload\":\"Flat\"}\n\
         {\"type\":\"file\",\"id\":0,\"path\":\"f\",\"size\":8192,\"exists\":true}\n\
         {\"type\":\"op\",\"op\":\"open\",\"stream\":0,\"t_us\":0,\"file\":0,\"flags\":\"read\"}\n\
         {\"type\":\"op\",\"op\":\"read\",\"stream\":0,\"t_us\":0,\"file\":0,\"offset\":0,\"len\":4096}\n\
         {\"type\":\"op\",\"op\":\"close\",\"stream\":0,\"t_us\":0,\"file\":0}\n",
    )
    .unwrap();
    let flat = trace.to_str().unwrap();
    let err = run_err(
        naslab()
            .args(["sweep", "--workload", flat, "--users", "1"])
            .args(["--backend", "null", "--out"])
            .arg(dir.path().join("o")),
    );
    assert!(err.contains("--user-rate"), "{err}");
    let (_, j, _) = sweep(
        dir.path(),
        &[
            "--workload",
            flat,
            "--users",
            "1,2",
            "--user-rate",
            "500",
            "--keep-going",
        ],
    );
    assert_eq!(u(&j["workloads"][1]["iterations"][0]["ops"]), 6);

    // Users each on their own file set never wait for each other, even when one ends
    // before the next starts (4 users of 4 ms within 2 s): an open-loop point has no
    // sequence between its users.
    let dir = tempfile::tempdir().unwrap();
    let (_, j, _) = sweep(
        dir.path(),
        &[
            "--workload",
            flat,
            "--users",
            "4",
            "--user-rate",
            "500",
            "--stagger",
            "2s",
            "--keep-going",
        ],
    );
    let it = &j["workloads"][0]["iterations"][0];
    assert_eq!(u(&it["ops"]), 12);
    let ordering = &it["ordering"];
    assert_eq!(u(&ordering["sequence_edges"]), 0, "{ordering}");
    assert_eq!(u(&ordering["edges"]), 0, "{ordering}");
}
