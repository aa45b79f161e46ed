//! `naslab sweep` as a multi-client job under `mpirun -n 3` (binary built with
//! `--features mpi`): each point's load shared by the clients, its figures the merge of
//! theirs (equal to the point built from all their op records together), the stop
//! rules decided once for every client, and one client's failure stopping the job with
//! its own error named first. How far apart the clients start each point is a figure
//! of bench/mpi-clients.sh, not a bound here.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]
#![cfg(feature = "mpi")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::lab::{lab_ready, up_on_dir};
use common::mpi::mpirun;
use common::{json, naslab, only_run_dir, run_ok, text};
use naslab_results::sweep::PointBuilder;
use serde_json::Value;

fn points(j: &Value) -> &Vec<Value> {
    j["sweep"]["points"].as_array().unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// Workload `name`'s first iteration in the merged results, and in each client's own.
fn iterations<'a>(j: &'a Value, name: &str) -> (&'a Value, Vec<&'a Value>) {
    let of = |ws: &'a Value| {
        ws.as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name)
            .map(|w| &w["iterations"][0])
    };
    let merged = of(&j["workloads"]).unwrap();
    let clients = j["multi_client"]["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| of(&c["workloads"]).unwrap())
        .collect();
    (merged, clients)
}

/// The point rebuilt from the job's merged op records (every client's ops, each
/// client's streams numbered after the ones before), as one builder given all of them.
fn point_from_merged_records(
    run: &Path,
    p: &Value,
    warmup_ns: u64,
    streams_per_user: Option<u32>,
    window_end_ns: Option<u64>,
) -> Value {
    let name = p["workload"].as_str().unwrap();
    let mut b = PointBuilder::new(warmup_ns, streams_per_user);
    b.read_records(&run.join(format!("{name}.ops.nbt.zst")))
        .unwrap();
    let mut point = serde_json::to_value(b.finish(
        name.to_string(),
        p["load"].as_f64().unwrap(),
        window_end_ns,
    ))
    .unwrap();
    // The verdicts and the clients' shares are the sweep's, not the records'.
    for k in ["met_cap", "cap_ns", "saturated", "clients"] {
        point.as_object_mut().unwrap().remove(k);
    }
    point
}

fn without_verdicts(p: &Value) -> Value {
    let mut p = p.clone();
    for k in ["met_cap", "cap_ns", "saturated", "clients"] {
        p.as_object_mut().unwrap().remove(k);
    }
    p
}

/// `naslab sweep` of OfficeProductivity users (each a 200 ms stagger apart at most).
fn users_args(target: &str, out: &Path, users: &str) -> Vec<String> {
    [
        "sweep",
        "--workload",
        "OfficeProductivity",
        "--scale",
        "0.005",
        "--stagger",
        "200ms",
        "--users",
        users,
        "--target",
        target,
        "--out",
        &out.display().to_string(),
    ]
    .map(String::from)
    .to_vec()
}

/// A users sweep (3 then 6 users of OfficeProductivity) by 3 clients against a local
/// directory: each point is exactly N times one user's ops, the clients' shares add up
/// to it, and its figures are the merge of every client's ops, not an average.
#[test]
fn a_users_sweep_by_three_clients_is_n_times_one_users_ops_and_the_merge_of_theirs() {
    let Some((mut job, _turn)) = mpirun(3) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (target, out, single_target, single_out) = (
        tmp.path().join("t"),
        tmp.path().join("o"),
        tmp.path().join("t1"),
        tmp.path().join("o1"),
    );
    for d in [&target, &single_target] {
        std::fs::create_dir_all(d).unwrap();
    }
    let args = |target: &PathBuf, out: &PathBuf, users: &str| {
        users_args(&target.display().to_string(), out, users)
    };
    // One user alone, for one user's ops.
    run_ok(naslab().args(args(&single_target, &single_out, "1")));
    let one = json(&only_run_dir(&single_out).join("run.json"));
    let one_user_ops = u(&one["workloads"][0]["iterations"][0]["ops"]);
    assert!(one_user_ops > 0);

    let o = job.args(args(&target, &out, "3,6")).output().unwrap();
    let stderr = text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let run = only_run_dir(&out);
    let j = json(&run.join("run.json"));
    let pts = points(&j);
    assert_eq!(pts.len(), 2, "{stderr}");
    // The point lines are rank 0's alone.
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("sweep ")).count(),
        2,
        "{stderr}"
    );
    // One user's streams, from its op records.
    let streams_per_user = {
        let name = one["workloads"][0]["name"].as_str().unwrap();
        let records = only_run_dir(&single_out).join(format!("{name}.ops.nbt.zst"));
        let mut streams = 0u32;
        for r in naslab_trace::open_trace(&records).unwrap() {
            if let naslab_trace::Record::Op(op, _) = r.unwrap() {
                streams = streams.max(op.stream + 1);
            }
        }
        streams
    };
    for (p, n) in pts.iter().zip([3u64, 6]) {
        let name = p["workload"].as_str().unwrap();
        assert_eq!(name, format!("OfficeProductivity@{n}users"));
        let (merged, clients) = iterations(&j, name);
        // N users run N times one user's ops, exactly.
        assert_eq!(u(&merged["ops"]), n * one_user_ops, "{name}");
        assert_eq!(u(&p["all"]["count"]), n * one_user_ops, "{name}");
        // The clients' shares: as even as can be (3 users: 1 each; 6: 2 each).
        let client_ops: Vec<u64> = clients.iter().map(|c| u(&c["ops"])).collect();
        assert_eq!(client_ops, vec![n / 3 * one_user_ops; 3], "{name}");
        let shares: Vec<u64> = p["clients"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(u)
            .collect();
        assert_eq!(
            shares, client_ops,
            "{name}: the point's shares are the clients' ops"
        );
        assert_eq!(shares.iter().sum::<u64>(), u(&p["all"]["count"]));
        // The per-user spread is over every user of every client.
        assert_eq!(u(&p["users"]["users"]), n, "{name}");
        assert_eq!(u(&p["all"]["errors"]), 0);
        // The figures are those of every client's ops in one histogram.
        assert_eq!(
            point_from_merged_records(&run, p, 0, Some(streams_per_user), None),
            without_verdicts(p),
            "{name}"
        );
        let skew = u(&p["clients"]["start_skew_ns"]);
        eprintln!(
            "{name}: {} ops = {n} x {one_user_ops}; clients {shares:?}; start skew {:.1} us (clocks within {:.1} us)",
            u(&p["all"]["count"]),
            skew as f64 / 1e3,
            u(&p["clients"]["clock_uncertainty_ns"]) as f64 / 1e3
        );
    }
}

/// A rate sweep by 3 clients on the null backend: each point's ops are the clients'
/// added up, and its figures those of all their ops together.
#[test]
fn a_rate_sweep_by_three_clients_is_the_sum_of_their_ops() {
    let Some((mut job, _turn)) = mpirun(3) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let o = job
        .args(["sweep", "--rate", "300,600", "--connections", "2"])
        .args([
            "--arrivals",
            "poisson",
            "--point-time",
            "1s",
            "--warmup",
            "200ms",
        ])
        .args(["--backend", "null", "--target"])
        .arg(tmp.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let run = only_run_dir(&out);
    let j = json(&run.join("run.json"));
    let pts = points(&j);
    assert_eq!(pts.len(), 2, "{stderr}");
    for p in pts {
        let name = p["workload"].as_str().unwrap();
        let (merged, clients) = iterations(&j, name);
        let client_ops: Vec<u64> = clients.iter().map(|c| u(&c["ops"])).collect();
        assert_eq!(u(&merged["ops"]), client_ops.iter().sum::<u64>(), "{name}");
        // Every op of the point is in the window or in the warm-up.
        assert_eq!(
            u(&p["all"]["count"]) + u(&p["warmup_ops"]),
            u(&merged["ops"]),
            "{name}"
        );
        let shares: Vec<u64> = p["clients"]["ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(u)
            .collect();
        assert_eq!(shares.len(), 3);
        assert_eq!(shares.iter().sum::<u64>(), u(&p["all"]["count"]), "{name}");
        assert_eq!(
            point_from_merged_records(&run, p, 200_000_000, None, Some(1_200_000_000)),
            without_verdicts(p),
            "{name}"
        );
        eprintln!(
            "{name}: offered {:.1} ops/s, achieved {:.1} ops/s; window ops {} = {shares:?} summed",
            p["offered_ops_s"].as_f64().unwrap(),
            p["achieved_ops_s"].as_f64().unwrap(),
            u(&p["all"]["count"])
        );
    }
}

/// An automatic sweep whose cap fires at its second point: every client stops there
/// (none runs the third), and the job says why once.
#[test]
fn an_automatic_sweep_whose_cap_fires_stops_every_client_at_the_same_point() {
    let Some((mut job, _turn)) = mpirun(3) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    // Each client's one connection serves 1000 ops/s (1 ms a op): 300 ops/s offered in
    // all is far below the job's 3000, 6000 twice above it, so the queue grows through
    // the point and its p99 passes the 500 ms cap; the saturation rule is set aside.
    let o = job
        .args([
            "sweep",
            "--start",
            "300",
            "--step",
            "x20",
            "--connections",
            "1",
        ])
        .args(["--arrivals", "uniform", "--null-service-time", "1ms"])
        .args(["--point-time", "2s", "--warmup", "200ms"])
        .args(["--cap", "all:p99<=500ms", "--saturation", "99"])
        .args(["--backend", "null", "--target"])
        .arg(tmp.path())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let j = json(&only_run_dir(&out).join("run.json"));
    let pts = points(&j);
    assert_eq!(pts.len(), 2, "{stderr}");
    assert_eq!(pts[0]["met_cap"], true, "{stderr}");
    assert_eq!(pts[1]["met_cap"], false, "{stderr}");
    let stopped = j["sweep"]["stopped"].as_str().unwrap();
    assert!(stopped.contains("over the cap"), "{stopped}");
    assert_eq!(j["sweep"]["knee"], 300.0);
    // Every client ran the two points and no third.
    let names: Vec<&str> = pts
        .iter()
        .map(|p| p["workload"].as_str().unwrap())
        .collect();
    for c in j["multi_client"]["clients"].as_array().unwrap() {
        let ran: Vec<&str> = c["workloads"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["name"].as_str().unwrap())
            .collect();
        assert_eq!(ran, names, "client {}", c["rank"]);
    }
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("sweep ")).count(),
        2,
        "{stderr}"
    );
}

/// A client that cannot make its file set stops the whole sweep, its own error first.
#[test]
fn a_client_that_cannot_write_its_target_stops_the_sweep_naming_itself() {
    let Some((mut job, _turn)) = mpirun(3) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("t");
    std::fs::create_dir_all(&target).unwrap();
    // Client 2's directory is a plain file: it cannot make its file set there.
    std::fs::write(target.join("client-2"), b"in the way").unwrap();
    let out = tmp.path().join("o");
    let o: Output = job
        .args(["sweep", "--rate", "300,600", "--point-time", "1s"])
        .args(["--target"])
        .arg(&target)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = text(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let first_error = stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default();
    assert!(
        first_error.contains(&format!("client 2 on {}", host.trim()))
            && first_error.contains("client-2"),
        "the job's error is client 2's own: {stderr}"
    );
    // No point was measured, and no later point was started.
    assert!(!stderr.lines().any(|l| l.starts_with("sweep ")), "{stderr}");
}

/// The users sweep by 3 clients over the lab's Samba and NFS: each client signs in on
/// its own, and the point is 3 times one user's ops, its clients' ops added up.
#[test]
fn a_users_sweep_by_three_clients_over_a_lab_samba_and_nfs_adds_up() {
    for server in ["samba", "nfs"] {
        if !lab_ready(server) {
            continue;
        }
        let Some((mut job, _turn)) = mpirun(3) else {
            return;
        };
        let base = tempfile::tempdir().unwrap();
        let lab = up_on_dir(base.path(), &format!("mpi-sweep-{server}"), server);
        let (o1, o3) = (base.path().join("o1"), base.path().join("o3"));
        run_ok(
            naslab()
                .env("NASLAB_SMB_PASSWORD", &lab.password)
                .args(users_args(&lab.url, &o1, "1")),
        );
        run_ok(
            job.env("NASLAB_SMB_PASSWORD", &lab.password)
                .args(users_args(&lab.url, &o3, "3")),
        );
        let one = json(&only_run_dir(&o1).join("run.json"));
        let j = json(&only_run_dir(&o3).join("run.json"));
        let one_user_ops = u(&one["workloads"][0]["iterations"][0]["ops"]);
        let p = &points(&j)[0];
        let (merged, clients) = iterations(&j, p["workload"].as_str().unwrap());
        assert_eq!(u(&merged["ops"]), 3 * one_user_ops, "{server}");
        assert_eq!(u(&p["all"]["count"]), 3 * one_user_ops, "{server}");
        let client_ops: Vec<u64> = clients.iter().map(|c| u(&c["ops"])).collect();
        assert_eq!(client_ops, vec![one_user_ops; 3], "{server}");
        assert_eq!(u(&p["users"]["users"]), 3, "{server}");
        assert_eq!(u(&p["all"]["errors"]), 0, "{server}");
        eprintln!(
            "{server}: {} ops = 3 x {one_user_ops}; start skew {:.1} us",
            u(&p["all"]["count"]),
            u(&p["clients"]["start_skew_ns"]) as f64 / 1e3
        );
    }
}
