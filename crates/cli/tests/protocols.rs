//! The `naslab` binary with protocol targets and the lab: URLs and their errors, `lab
//! up` / `run` / `lab down` over SMB and NFS, and a two-configuration `lab matrix`.
//! The lab tests need root (loop devices, mounts, servers) and say so when skipped.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

mod common;
use common::lab::{Down, lab_ready, matrix_comparison, open_for_lab, up_on_dir, walk_sizes};
use common::{repo_root, run_err, run_ok, text, usage_err};

/// The binary, without a password from the caller's environment.
fn naslab() -> Command {
    let mut c = common::naslab();
    c.env_remove("NASLAB_SMB_PASSWORD");
    c
}

#[test]
fn urls_with_passwords_or_bad_parts_are_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let e = run_err(
        naslab()
            .args([
                "run",
                "--workload",
                "HDVideo_1Play",
                "--target",
                "smb://bob:hunter2@127.0.0.1/share",
                "--out",
            ])
            .arg(dir.path()),
    );
    assert!(
        e.contains("NASLAB_SMB_PASSWORD") && !e.contains("hunter2"),
        "{e}"
    );
    let e = run_err(
        naslab()
            .args([
                "run",
                "--workload",
                "HDVideo_1Play",
                "--target",
                "nfs://127.0.0.1",
                "--out",
            ])
            .arg(dir.path()),
    );
    assert!(e.contains("names no export"), "{e}");
    let e = run_err(
        naslab()
            .args([
                "run",
                "--workload",
                "HDVideo_1Play",
                "--target",
                "smb://127.0.0.1:1/share",
                "--out",
            ])
            .arg(dir.path()),
    );
    assert!(
        e.contains("cannot reach the SMB server at 127.0.0.1:1"),
        "{e}"
    );
    // A user with no password and no terminal to ask on.
    let e = run_err(
        naslab()
            .args([
                "run",
                "--workload",
                "HDVideo_1Play",
                "--target",
                "smb://bob@127.0.0.1:1/share",
                "--out",
            ])
            .arg(dir.path())
            .stdin(std::process::Stdio::null()),
    );
    assert!(e.contains("NASLAB_SMB_PASSWORD is not set"), "{e}");
    let e = usage_err(
        naslab()
            .args([
                "run",
                "--workload",
                "HDVideo_1Play",
                "--backend",
                "null",
                "--client-profile",
                "macos",
                "--out",
            ])
            .arg(dir.path()),
        "--client-profile",
    );
    assert!(e.contains("plain and windows"), "{e}");
}

#[test]
fn lab_up_run_down_over_smb_and_nfs() {
    for server in ["samba", "nfs"] {
        if !lab_ready(server) {
            return;
        }
        let base = tempfile::tempdir().unwrap();
        open_for_lab(base.path());
        let name = format!("cli-{server}");
        let up = run_ok(
            naslab()
                .args([
                    "lab",
                    "up",
                    "--fs",
                    "ext4",
                    "--size",
                    "256M",
                    "--server",
                    server,
                    "--name",
                    &name,
                    "--lab-dir",
                ])
                .arg(base.path()),
        );
        let _down = Down::new(base.path(), &name);
        let url = text(&up.stdout).trim().to_string();
        assert!(
            url.starts_with(if server == "samba" {
                "smb://naslab-lab@127.0.0.1:"
            } else {
                "nfs://127.0.0.1:"
            }),
            "{url}"
        );
        let status = run_ok(
            naslab()
                .args(["lab", "status", "--lab-dir"])
                .arg(base.path()),
        );
        assert!(text(&status.stdout).contains(&url));
        let out = base.path().join("results");
        let state: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(base.path().join(&name).join("state.json")).unwrap(),
        )
        .unwrap();
        let password = state["password"].as_str().unwrap_or_default().to_string();
        assert_eq!(password.is_empty(), server != "samba");
        let run = run_ok(
            naslab()
                .env("NASLAB_SMB_PASSWORD", &password)
                .args([
                    "run",
                    "--workload",
                    "FileCopyToNAS,FileCopyFromNAS",
                    "--scale",
                    "0.002",
                    "--json",
                    "--target",
                    &url,
                    "--out",
                ])
                .arg(&out),
        );
        let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(
            v["target"]["backend"],
            if server == "samba" { "smb" } else { "nfs" }
        );
        assert_eq!(v["target"]["path"], url.as_str());
        // The source is the URL as `run --target` takes it again, without secrets.
        assert_eq!(v["target"]["source"], url.as_str());
        assert!(!text(&run.stdout).contains(&password) || password.is_empty());
        // The protocol client's options and what the server agreed to, typed.
        let p = &v["options"]["protocol"];
        assert_eq!(p["io_timeout_ns"], 30_000_000_000u64, "{p}");
        assert!(p["max_read_bytes"].as_u64().unwrap() >= 4096, "{p}");
        if server == "samba" {
            assert_eq!(p["protocol"], "smb", "{p}");
            assert_eq!(p["encrypt_asked"], "desired", "{p}");
            assert_eq!(p["in_flight"], 8, "{p}");
            assert_eq!(p["dialects_offered"].as_array().unwrap().len(), 5, "{p}");
            assert!(p["dialect"].as_str().unwrap().starts_with("SMB "), "{p}");
            assert_eq!(p["encrypted"], p.get("cipher").is_some(), "{p}");
        } else {
            assert_eq!(p["protocol"], "nfs", "{p}");
            assert_eq!(
                (&p["version"], &p["auth"]),
                (&3.into(), &"AUTH_UNIX".into()),
                "{p}"
            );
            // SAFETY: geteuid has no preconditions.
            assert_eq!(p["uid"], unsafe { libc::geteuid() }, "{p}");
        }
        for w in v["workloads"].as_array().unwrap() {
            let it = &w["iterations"][0];
            assert_eq!(it["errors"], 0, "{it}");
            assert!(it["throughput_mb_s"].as_f64().unwrap() > 0.0);
        }
        // The copy to the NAS wrote exactly the bytes the server now holds.
        let state: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(base.path().join(&name).join("state.json")).unwrap(),
        )
        .unwrap();
        let share = Path::new(state["share_dir"].as_str().unwrap());
        let written = v["workloads"][0]["iterations"][0]["bytes_written"]
            .as_u64()
            .unwrap();
        let on_server: u64 = walk_sizes(&share.join("naslab/FileCopyToNAS"));
        assert_eq!(on_server, written);
        // `clean` over the protocol removes naslab's directory on the server, and only it.
        let clean = || {
            let out = run_ok(
                naslab()
                    .env("NASLAB_SMB_PASSWORD", &password)
                    .args(["clean", "--target", &url]),
            );
            text(&out.stderr)
        };
        std::fs::write(share.join("keep.txt"), b"not naslab's").unwrap();
        let cleaned = clean();
        assert!(cleaned.contains("removed"), "{cleaned}");
        assert!(!share.join("naslab").exists());
        assert_eq!(
            std::fs::read(share.join("keep.txt")).unwrap(),
            b"not naslab's"
        );
        // Again: nothing there, and nothing left behind by looking.
        let again = clean();
        assert!(again.contains("nothing to clean"), "{again}");
        assert!(!share.join("naslab").exists());
        run_ok(
            naslab()
                .args(["lab", "down", "--name", &name, "--lab-dir"])
                .arg(base.path()),
        );
        let status = run_ok(
            naslab()
                .args(["lab", "status", "--lab-dir"])
                .arg(base.path()),
        );
        assert!(text(&status.stdout).contains("no lab is up"));
    }
}

#[test]
fn lab_matrix_compares_two_samba_settings_with_the_windows_profile() {
    if !lab_ready("samba") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    open_for_lab(base.path());
    let out = base.path().join("results");
    let run = run_ok(
        naslab()
            .args([
                "lab",
                "matrix",
                "--fs",
                "ext4",
                "--server",
                "samba",
                "--opts",
                "sa_no=strict allocate = no",
                "--opts",
                "sa_yes=strict allocate = yes",
                "--workload",
                "HDVideo_RecordThenPlay",
                "--client-profile",
                "windows",
                "--scale",
                "0.005",
                "--size",
                "256M",
                "--lab-dir",
            ])
            .arg(base.path())
            .arg("--out")
            .arg(&out),
    );
    let table = text(&run.stdout);
    assert!(
        table.contains("ext4-samba-sa_no") && table.contains("ext4-samba-sa_yes"),
        "{table}"
    );
    let cmp = matrix_comparison(&out);
    for row in cmp["cells"].as_array().unwrap() {
        let c = &row[0];
        assert!(c["error"].is_null(), "{c}");
        assert!(c["throughput_mb_s"].as_f64().unwrap() > 0.0);
        assert!(c["hint_writes"].as_u64().unwrap() > 0);
        assert_eq!(c["files"], 1);
        assert!(c["extents"].as_u64().unwrap() >= 1);
        // The recording holds exactly what the recorder wrote: 0.5 % of 1.6 GB.
        assert_eq!(c["bytes"], 8_000_000);
        // The one file is the largest, named under the workload's directory.
        assert_eq!(c["largest"][1], 8_000_000, "{c}");
        assert_eq!(c["largest"][2], c["extents"], "{c}");
        assert!(!c["largest"][0].as_str().unwrap().starts_with('/'), "{c}");
    }
    let status = run_ok(
        naslab()
            .args(["lab", "status", "--lab-dir"])
            .arg(base.path()),
    );
    assert!(
        text(&status.stdout).contains("no lab is up"),
        "every configuration was taken down"
    );
}

/// The server's processes: the one the lab started and, for Samba, the children it
/// forked for each client.
fn server_pids(lab: &Path, name: &str) -> Vec<i32> {
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(lab.join("state.json")).unwrap()).unwrap();
    let main: Vec<i32> = state["processes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pid"].as_i64().unwrap() as i32)
        .collect();
    let mut all = main.clone();
    if name == "samba" {
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            let after = &stat[stat.rfind(')').unwrap() + 2..];
            let ppid: i32 = after.split(' ').nth(1).unwrap().parse().unwrap();
            if main.contains(&ppid) {
                all.push(e.file_name().to_str().unwrap().parse().unwrap());
            }
        }
    }
    all
}

#[test]
fn a_server_that_stops_answering_ends_the_run_on_time_saying_so() {
    for (server, timeout) in [("samba", "30s"), ("nfs", "5s")] {
        if !lab_ready(server) {
            return;
        }
        let base = tempfile::tempdir().unwrap();
        open_for_lab(base.path());
        let name = format!("stop-{server}");
        let up = run_ok(
            naslab()
                .args([
                    "lab", "up", "--fs", "dir", "--server", server, "--name", &name,
                ])
                .arg("--lab-dir")
                .arg(base.path()),
        );
        let _down = Down::new(base.path(), &name);
        let url = text(&up.stdout).trim().to_string();
        let lab = base.path().join(&name);
        let state: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(lab.join("state.json")).unwrap())
                .unwrap();
        let out = base.path().join("results");
        let child = naslab()
            .env(
                "NASLAB_SMB_PASSWORD",
                state["password"].as_str().unwrap_or_default(),
            )
            .args([
                "run",
                "--workload",
                "FileCopyToNAS",
                "--scale",
                "0.05",
                "--pace",
                "delay:20ms",
                "--io-timeout",
                timeout,
                "--target",
                &url,
                "--out",
            ])
            .arg(&out)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_secs(3));
        let pids = server_pids(&lab, server);
        for &p in &pids {
            // SAFETY: plain signals to processes this test's lab started.
            unsafe { libc::kill(p, libc::SIGSTOP) };
        }
        let stopped = std::time::Instant::now();
        let result = child.wait_with_output().unwrap();
        let took = stopped.elapsed();
        let ended = std::time::SystemTime::now();
        for &p in &pids {
            // SAFETY: as above.
            unsafe { libc::kill(p, libc::SIGCONT) };
        }
        let err = text(&result.stderr);
        assert!(!result.status.success(), "{err}");
        // How soon after the timeout it ended depends on the machine's load: printed,
        // not asserted; the message below says it was the timeout that ended it.
        eprintln!("{server}: ended {took:?} after SIGSTOP");
        let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
        let want = format!(
            "no reply from 127.0.0.1:{port} within {}",
            timeout.trim_end_matches('s')
        );
        assert!(
            err.contains(&want) && err.contains("line "),
            "{server}: {err}"
        );
        // Its lock stays on the silent server, and the user is told how to lift it.
        assert!(
            err.contains("could not give up") && err.contains("naslab/.naslab-lock"),
            "{server}: {err}"
        );
        // The results were written.
        let run_json = std::fs::read_dir(out.join("run"))
            .unwrap()
            .flatten()
            .next()
            .unwrap()
            .path()
            .join("run.json");
        let written = std::fs::metadata(&run_json).unwrap().modified().unwrap();
        let gap = ended.duration_since(written).unwrap_or_default();
        eprintln!("{server}: exited {gap:?} after writing run.json");
    }
}

/// A run killed outright (SIGKILL) cannot remove its lock from the share; the next run
/// on this machine sees that its holder is gone, takes the lock over and runs.
#[test]
fn a_lock_left_by_a_run_killed_outright_is_taken_over_by_the_next_run_here() {
    for server in ["samba", "nfs"] {
        if !lab_ready(server) {
            return;
        }
        let base = tempfile::tempdir().unwrap();
        let lab = up_on_dir(base.path(), &format!("kill-{server}"), server);
        let run = |pace: &str| {
            let mut c = naslab();
            c.env("NASLAB_SMB_PASSWORD", &lab.password)
                .args(["run", "--workload", "FileCopyToNAS", "--scale", "0.01"])
                .args(["--pace", pace, "--target", &lab.url, "--out"])
                .arg(base.path().join("results"));
            c
        };
        let mut first = run("delay:20ms")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let lock = lab.share_dir.join("naslab/.naslab-lock");
        let holder = format!("naslab pid {} on ", first.id());
        let mut held = Vec::new();
        for _ in 0..200 {
            held = std::fs::read_dir(&lock)
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default();
            if held.iter().any(|h: &String| h.starts_with(&holder)) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        assert!(
            held.iter().any(|h| h.starts_with(&holder)),
            "{server}: {held:?}"
        );
        first.kill().unwrap();
        first.wait().unwrap();
        assert!(
            lock.is_dir(),
            "{server}: a killed run cannot let go of its lock"
        );
        let second = run_ok(&mut run("afap"));
        let err = text(&second.stderr);
        assert!(
            err.contains(&format!("was still held by {}", held[0]))
                && err.contains("naslab took it over"),
            "{server}: {err}"
        );
        assert!(
            !lock.exists(),
            "{server}: the second run let go of the lock"
        );
    }
}

/// The seeds' file-server test has about 590 connections: 600 over each protocol, each
/// its own session writing its own file, and the server's disk holds every one.
#[test]
fn six_hundred_connections_each_write_their_file_over_smb_and_nfs() {
    for server in ["samba", "nfs"] {
        if !lab_ready(server) {
            return;
        }
        let base = tempfile::tempdir().unwrap();
        let lab = up_on_dir(base.path(), &format!("c600-{server}"), server);
        let run = run_ok(
            naslab()
                .env("NASLAB_SMB_PASSWORD", &lab.password)
                .args(["fileserver", "-c", "600", "-f", "1", "--phase", "write"])
                .args(["--json", "--target", &lab.url, "--out"])
                .arg(base.path().join("results")),
        );
        let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        let it = &v["workloads"][0]["iterations"][0];
        assert_eq!(it["errors"], 0, "{server}: {}", it["errors"]);
        assert_eq!(it["streams"].as_array().unwrap().len(), 600, "{server}");
        let written = it["bytes_written"].as_u64().unwrap();
        // What the server's own file system holds: one file per connection, every byte.
        let dir = lab.share_dir.join("naslab/FileServer_Write");
        let conns: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(conns.len(), 600, "{server}: connection directories");
        let files: usize = conns
            .iter()
            .map(|c| std::fs::read_dir(c.path()).unwrap().count())
            .sum();
        assert_eq!(files, 600, "{server}: files");
        assert_eq!(walk_sizes(&dir), written, "{server}: bytes on the server");
    }
}

/// What `naslab run` of the document-save example says when it fails against `url`,
/// with the further arguments `args` (an SMB URL's user has a password).
fn example_run_err(url: &str, args: &[&str]) -> String {
    let work = tempfile::tempdir().unwrap();
    run_err(
        naslab()
            .env("NASLAB_SMB_PASSWORD", "x")
            .arg("run")
            .arg(repo_root().join("examples/document-save.jsonl"))
            .args(["-t", url])
            .args(args)
            .arg("--out")
            .arg(work.path().join("out")),
    )
}

/// A peer on a free loopback port that hands each connection it accepts to `serve`;
/// its port.
fn peer(mut serve: impl FnMut(std::net::TcpStream) + Send + 'static) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            serve(conn);
        }
    });
    port
}

/// A refused connection to an NFS target names the service and the address that refused
/// it, so the URL's ports are seen to be used (the port after the host is the NFS
/// service's; the MOUNT service is found through the portmapper unless ?mountport).
#[test]
fn a_refused_nfs_connection_names_the_port_that_refused_it() {
    // A port nothing listens on: bound, then let go.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = example_run_err(&format!("nfs://127.0.0.1:1/x?mountport={closed}"), &[]);
    assert!(
        err.contains(&format!(
            "the MOUNT service (?mountport) at 127.0.0.1:{closed} refused the connection"
        )),
        "{err}"
    );
}

/// An NFS URL whose port belongs to a peer that accepts the connection and then says
/// nothing: naslab cannot tell it from a slow server before the timeout, and says so,
/// naming the port as the likely mistake rather than a server that does not run.
#[test]
fn a_silent_peer_on_an_nfs_port_is_named_as_likely_not_an_rpc_server() {
    // Holds every connection open, reading nothing, writing nothing.
    let mut held = Vec::new();
    let port = peer(move |conn| held.push(conn));
    let err = example_run_err(
        &format!("nfs://127.0.0.1:1/x?mountport={port}"),
        &["--io-timeout", "1s"],
    );
    assert!(
        err.contains(&format!("MOUNT service at 127.0.0.1:{port}: no reply"))
            && err.contains("accepted the connection and then sent nothing back")
            && err.contains("likely not one"),
        "{err}"
    );
}

/// An SMB server that takes the connection and hangs up during the sign-in was
/// reached: it is said to have closed the connection, with what may make it do so,
/// not to be unreachable.
#[test]
fn an_smb_server_that_hangs_up_on_the_sign_in_is_not_called_unreachable() {
    use std::io::Read;
    // Reads the start of the NEGOTIATE, then closes the connection.
    let port = peer(|mut conn| {
        let mut start = [0u8; 4];
        let _ = conn.read_exact(&mut start);
    });
    let err = example_run_err(
        &format!("smb://u@127.0.0.1:{port}/share"),
        &["--io-timeout", "5s"],
    );
    assert!(
        err.contains(&format!(
            "the SMB server at 127.0.0.1:{port} closed the connection while naslab signed in"
        )) && err.contains("--smb-encrypt off signs in there")
            && !err.contains("cannot reach"),
        "{err}"
    );
}

/// Every file under `a` is under `b` with the same size, and `b` holds no other; the
/// number of files.
fn same_layout(a: &Path, b: &Path) -> usize {
    let names = |d: &Path| {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .flatten()
            .map(|e| e.file_name())
            .collect();
        v.sort();
        v
    };
    let (na, nb) = (names(a), names(b));
    assert_eq!(na, nb, "{} against {}", a.display(), b.display());
    let mut files = 0;
    for n in na {
        let (pa, pb) = (a.join(&n), b.join(&n));
        if pa.is_dir() {
            files += same_layout(&pa, &pb);
        } else {
            let (la, lb) = (pa.metadata().unwrap().len(), pb.metadata().unwrap().len());
            assert_eq!(la, lb, "{} against {}", pb.display(), pa.display());
            files += 1;
        }
    }
    files
}

/// Every 4 KiB block of every file under `dir` long enough to hold `--verify`'s 48-byte
/// header starts with it (docs/data.md): the magic, the run's one seed, and the block's
/// own number, so each block is where it was written. The number of blocks checked.
fn blocks_describe_themselves(dir: &Path, seed: &mut Option<[u8; 8]>) -> usize {
    let mut checked = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            checked += blocks_describe_themselves(&p, seed);
            continue;
        }
        let data = std::fs::read(&p).unwrap();
        for (i, block) in data.chunks(4096).enumerate() {
            if block.len() < 48 {
                continue;
            }
            assert_eq!(&block[0..8], b"naslabV1", "{} block {i}", p.display());
            let s: [u8; 8] = block[8..16].try_into().unwrap();
            assert_eq!(
                *seed.get_or_insert(s),
                s,
                "{} block {i}: another run's",
                p.display()
            );
            let n = u64::from_le_bytes(block[24..32].try_into().unwrap());
            assert_eq!(
                n,
                i as u64,
                "{} block {i} says it is block {n}",
                p.display()
            );
            checked += 1;
        }
    }
    checked
}

/// An NFSv4.1 stream that waits longer than the server's lease between two ops (a trace
/// paced as recorded, 75 s of think time against nfs-ganesha's 60 s lease) keeps its
/// open state: the client's lease is renewed while the stream waits, so the read after
/// the pause and the close succeed. Without the renewal the read failed with ENOTCONN
/// and stopped the run.
#[test]
fn nfs_4_1_keeps_its_open_file_over_a_pause_longer_than_the_lease() {
    if !lab_ready("nfs") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let trace = base.path().join("idle.jsonl");
    std::fs::write(
        &trace,
        concat!(
            r#"{"type":"header","format":"naslab-trace","version":1,"workload":"Idle"}"#, "\n",
            r#"{"type":"file","id":1,"path":"data.bin","size":1048576,"exists":true}"#, "\n",
            r#"{"type":"op","op":"open","file":1,"flags":"read","stream":0,"t_us":0}"#, "\n",
            r#"{"type":"op","op":"read","file":1,"offset":0,"len":65536,"stream":0,"t_us":1000}"#, "\n",
            r#"{"type":"op","op":"read","file":1,"offset":65536,"len":65536,"stream":0,"t_us":75000000}"#, "\n",
            r#"{"type":"op","op":"close","file":1,"stream":0,"t_us":75001000}"#, "\n",
        ),
    )
    .unwrap();
    let lab = up_on_dir(base.path(), "lease", "nfs");
    let url = format!("{}?vers=4.1", lab.url.split('?').next().unwrap());
    let o = run_ok(
        naslab()
            .arg("run")
            .arg(&trace)
            .args(["--pace", "original", "--json", "--target", &url, "--out"])
            .arg(base.path().join("out")),
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let it = &v["workloads"][0]["iterations"][0];
    assert_eq!(it["errors"], 0, "{it}");
    assert_eq!(it["ops"], 4, "{it}");
    assert_eq!(it["bytes_read"], 2 * 65536, "{it}");
    assert!(it["aborted"].is_null(), "{it}");
    drop(lab);
}

/// NFSv4.1 against the lab's ganesha: three NAS workloads with `--verify`, the
/// version recorded in run.json, the files on the server's disk those the same trace
/// left on a local directory, and each of their blocks read from the server's disk
/// holding what was written there. Then the same export with NFSv3
/// switched off on the server: version 4.1 still runs there, version 3 is refused, so
/// the server is seen to have been spoken to in version 4.
#[test]
fn nfs_4_1_runs_the_nas_workloads_with_every_byte_on_the_server() {
    if !lab_ready("nfs") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    let workloads = ["FileCopyToNAS", "PhotoAlbum", "DirectoryCopyToNAS"];
    let run = |target: &str, out: &Path| {
        let o = run_ok(
            naslab()
                .args(["run", "--workload", &workloads.join(",")])
                .args(["--scale", "0.002", "--seed", "7", "--verify", "--json"])
                .args(["--target", target, "--out"])
                .arg(out),
        );
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let local = base.path().join("local");
    std::fs::create_dir(&local).unwrap();
    run(local.to_str().unwrap(), &base.path().join("r-local"));
    let lab = up_on_dir(base.path(), "v4", "nfs");
    for (vers, minor) in [("4.1", 1)] {
        let url = format!("{}?vers={vers}", lab.url.split('?').next().unwrap());
        let v = run(&url, &base.path().join(format!("r-{vers}")));
        let p = &v["options"]["protocol"];
        assert_eq!(
            (&p["version"], &p["minor_version"]),
            (&4.into(), &minor.into()),
            "{p}"
        );
        assert!(p.get("mount_port").is_none(), "{p}");
        assert_eq!(v["target"]["source"], url.as_str());
        for w in v["workloads"].as_array().unwrap() {
            let it = &w["iterations"][0];
            assert_eq!(it["errors"], 0, "{vers} {}: {it}", w["name"]);
            assert!(it["ops"].as_u64().unwrap() > 0, "{vers}: {it}");
        }
        // The server's own file system holds the files the same run made on a local
        // directory, each block the one written there.
        let (mut files, mut blocks, mut seed) = (0, 0, None);
        for w in workloads {
            let on_server = lab.share_dir.join("naslab").join(w);
            files += same_layout(&local.join("naslab").join(w), &on_server);
            blocks += blocks_describe_themselves(&on_server, &mut seed);
        }
        assert!(blocks >= files, "{vers}: {blocks} blocks in {files} files");
        assert!(files > 10, "{vers}: only {files} files compared");
    }
    drop(lab);
    // NFSv3 switched off on the server: 4.1 still works, 3 is refused.
    let base = tempfile::tempdir().unwrap();
    open_for_lab(base.path());
    let up = run_ok(
        naslab()
            .args([
                "lab", "up", "--fs", "dir", "--server", "nfs", "--name", "only4",
            ])
            .args(["--opt", "global: Protocols = 4", "--opt", "Protocols = 4"])
            .arg("--lab-dir")
            .arg(base.path()),
    );
    let _down = Down::new(base.path(), "only4");
    let url = text(&up.stdout).trim().to_string();
    assert!(url.ends_with("?vers=4.1"), "{url}");
    let v = run(&url, &base.path().join("r"));
    for w in v["workloads"].as_array().unwrap() {
        assert_eq!(w["iterations"][0]["errors"], 0, "{}", w["name"]);
    }
    let v3 = url.replace("?vers=4.1", "");
    let e = run_err(
        naslab()
            .args(["run", "--workload", "FileCopyToNAS", "--scale", "0.002"])
            .args(["--io-timeout", "5s", "--target", &v3, "--out"])
            .arg(base.path().join("r3")),
    );
    assert!(e.contains("cannot mount"), "{e}");
}

/// `lab matrix --nfs-versions 3,4.1`: one configuration per version on the same kind of
/// server, labelled by version, each run's run.json saying the version its client spoke.
#[test]
fn lab_matrix_runs_each_nfs_configuration_in_each_version_asked() {
    if !lab_ready("nfs") {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    open_for_lab(base.path());
    let out = base.path().join("results");
    let run = run_ok(
        naslab()
            .args(["lab", "matrix", "--fs", "dir", "--server", "nfs"])
            .args(["--nfs-versions", "3,4.1", "--workload", "FileCopyToNAS"])
            .args(["--scale", "0.002", "--lab-dir"])
            .arg(base.path())
            .arg("--out")
            .arg(&out),
    );
    let table = text(&run.stdout);
    assert!(
        table.contains("dir-nfs-defaults") && table.contains("dir-nfs4.1-defaults"),
        "{table}"
    );
    let cmp = matrix_comparison(&out);
    let versions: Vec<_> = cmp["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["nfs_version"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(versions, ["3", "4.1"]);
    for (i, (major, minor)) in [(3, None), (4, Some(1))].into_iter().enumerate() {
        let c = &cmp["cells"][i][0];
        assert!(c["error"].is_null(), "{c}");
        assert!(c["throughput_mb_s"].as_f64().unwrap() > 0.0, "{c}");
        let dir = Path::new(cmp["runs"][i].as_str().unwrap());
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).unwrap()).unwrap();
        let p = &r["options"]["protocol"];
        assert_eq!(p["version"], major, "{p}");
        assert_eq!(
            p.get("minor_version").and_then(|m| m.as_u64()),
            minor,
            "{p}"
        );
    }
}
