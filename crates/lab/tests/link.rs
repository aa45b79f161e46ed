//! The lab's emulated link (Toxiproxy) against real servers: the URL leads through it,
//! naslab's own round-trip probe reads the delay it adds, a workload pays that delay on
//! every op, and a read is held to its rate. Needs root, the servers and Toxiproxy's
//! server: skipped with a note otherwise, failed under NASLAB_REQUIRE_ROOT=1.
//!
//! Bounds: a delay line cannot answer early, so the lower bounds on time are strict,
//! and a rate-limited read may run at most 10 % above its rate (Toxiproxy's timer
//! error). How close the probe reads to the set round trip is a timing figure a busy
//! machine moves: bench/link.sh measures it (docs/network.md).

#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::*;
use naslab_lab::{FsKind, ServerKind};
use naslab_targets::probe;
use naslab_targets::url::RemoteUrl;
use naslab_trace::{FileDecl, Op, OpFlags, OpKind, Trace};

fn probe_of(url: &str) -> naslab_results::RttProbe {
    let url: RemoteUrl = url.parse().unwrap();
    probe::rtt(&url, probe::SAMPLES, Duration::from_secs(10)).unwrap()
}

/// The probe over `server`'s lab at rtt=10ms never reads under 10 ms; the same
/// server's own port, bypassing the link, answers the probe too (both printed).
fn probe_reads_the_emulated_round_trip(server: ServerKind) {
    let base = tempfile::tempdir().unwrap();
    let guard = lab_with_link(base.path(), FsKind::Dir, server, "rtt=10ms");
    let st = guard.lab().state.clone();
    let link = st.link.clone().expect("the state records the link");
    assert_eq!(link.link.rtt_ns, 10_000_000);
    assert_eq!(link.link.emulator, "toxiproxy");
    assert_eq!(link.link.emulator_version, naslab_lab::toxiproxy::VERSION);
    assert_ne!(st.url, link.direct_url, "the URL leads through the link");
    for p in &link.proxies {
        assert!(st.url.contains(&p.listen_port.to_string()), "{}", st.url);
        assert!(st.ports.contains(&p.upstream_port));
        let toxics = naslab_lab::toxiproxy::toxics_now(link.api_port, &p.name).unwrap();
        let delays: Vec<i64> = toxics
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["type"] == "latency")
            .map(|t| t["attributes"]["latency"].as_i64().unwrap())
            .collect();
        assert_eq!(delays, [5, 5], "{}: half each way", p.name);
    }
    let through = probe_of(&st.url);
    let direct = probe_of(&link.direct_url);
    eprintln!(
        "{server}: through the link {}; direct {}",
        through.summary(),
        direct.summary()
    );
    assert!(
        through.min_ns >= 10_000_000,
        "no round trip beats the delay: {through:?}"
    );
    let procs = st.processes.clone();
    assert!(procs.iter().any(|p| p.name == "toxiproxy-server"));
    guard.down().unwrap();
    assert!(procs.iter().all(|p| !p.alive()), "Toxiproxy stopped too");
}

#[test]
fn smb_probe_reads_the_emulated_round_trip() {
    needs_root_and_servers!(ServerKind::Samba);
    needs_emulator!();
    probe_reads_the_emulated_round_trip(ServerKind::Samba);
}

#[test]
fn nfs_probe_reads_the_emulated_round_trip() {
    needs_root_and_servers!(ServerKind::Nfs);
    needs_emulator!();
    probe_reads_the_emulated_round_trip(ServerKind::Nfs);
}

/// Round trips an op needs at the least over `server`'s protocol: one request and its
/// reply, but for NFS's close, which NFSv3 has no request for (naslab's client sends a
/// COMMIT only when unstable writes are left).
fn round_trips(server: ServerKind, kind: &str) -> u64 {
    match (server, kind) {
        (ServerKind::Nfs, "close") => 0,
        _ => 1,
    }
}

/// One stream issues the small workload's ops one after another, each waiting for the
/// replies it needs: the measured phase takes at least (round trips) × the round-trip
/// time, and no op that needs a reply beats that time.
fn workload_pays_the_round_trip_on_every_op(server: ServerKind) {
    let base = tempfile::tempdir().unwrap();
    let guard = lab_with_link(base.path(), FsKind::Dir, server, "rtt=10ms");
    let st = guard.lab().state.clone();
    let trace = small_trace("Delayed", false);
    let r = match server {
        ServerKind::Samba => run(&trace, &smb(&st), base.path()),
        ServerKind::Nfs => run(&trace, &nfs(&st.url), base.path()),
    };
    check_counts(&r, &trace);
    assert_eq!(r.ops, trace.ops.len() as u64);
    let trips: u64 = trace
        .ops
        .iter()
        .map(|o| round_trips(server, o.kind.name()))
        .sum();
    eprintln!(
        "{server}: {} ops, {trips} round trips over rtt=10ms took {:.1} ms (at least {} ms)",
        r.ops,
        r.wall_ns as f64 / 1e6,
        trips * 10
    );
    assert!(trips > 60, "the workload is made of ops that need replies");
    assert!(r.wall_ns >= trips * 10_000_000, "{} ns", r.wall_ns);
    for (name, s) in &r.op_stats {
        if round_trips(server, name) > 0 {
            assert!(
                s.latency.min_ns >= 10_000_000,
                "{name}: fastest {} ns beats the round trip",
                s.latency.min_ns
            );
        }
    }
    guard.down().unwrap();
}

#[test]
fn smb_workload_pays_the_round_trip_on_every_op() {
    needs_root_and_servers!(ServerKind::Samba);
    needs_emulator!();
    workload_pays_the_round_trip_on_every_op(ServerKind::Samba);
}

#[test]
fn nfs_workload_pays_the_round_trip_on_every_op() {
    needs_root_and_servers!(ServerKind::Nfs);
    needs_emulator!();
    workload_pays_the_round_trip_on_every_op(ServerKind::Nfs);
}

/// Bytes the rate test reads, in reads of `READ` bytes.
const FILE: u64 = 8 << 20;
const READ: u64 = 1 << 20;

/// A prepared 8 MiB file read from start to end.
fn sequential_read() -> Trace {
    let mut t = Trace::new("RateRead");
    t.files.push(FileDecl::file(1, "big.bin", FILE, true));
    let mut o = Op::new(0, 0, OpKind::Open, 1);
    o.flags = OpFlags::READ;
    t.ops.push(o);
    for i in 0..FILE / READ {
        let mut r = Op::new(0, 0, OpKind::Read, 1);
        r.offset = i * READ;
        r.len = READ;
        t.ops.push(r);
    }
    t.ops.push(Op::new(0, 0, OpKind::Close, 1));
    t
}

/// An 8 MiB read over rate=100mbit runs at no more than 100 Mbit/s + 10 %.
fn read_is_held_to_the_rate(server: ServerKind) {
    let base = tempfile::tempdir().unwrap();
    let guard = lab_with_link(base.path(), FsKind::Dir, server, "rate=100mbit");
    let st = guard.lab().state.clone();
    let trace = sequential_read();
    let plan = naslab_engine::compile(
        std::path::Path::new("rate.jsonl"),
        naslab_engine::records_from_trace(&trace),
        base.path(),
    )
    .unwrap();
    let target: Box<dyn naslab_engine::Target> = match server {
        ServerKind::Samba => Box::new(smb(&st)),
        ServerKind::Nfs => Box::new(nfs(&st.url)),
    };
    let progress = naslab_engine::Progress::default();
    let spec = naslab_engine::IterationSpec {
        plan: &plan,
        target: target.as_ref(),
        cache: naslab_results::CacheMode::Drop,
        replay: naslab_engine::ReplayOptions::default(),
        spool_dir: base.path(),
        records_path: None,
        progress: &progress,
        drop_all_caches: false,
        record_sink: None,
    };
    let r = naslab_engine::run_iteration(&spec, 1).unwrap();
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    assert_eq!(r.bytes_read, FILE);
    let mbit_s = r.bytes_read as f64 * 8.0 / (r.wall_ns as f64 / 1e9) / 1e6;
    eprintln!("{server}: 8 MiB read over rate=100mbit at {mbit_s:.1} Mbit/s");
    assert!(mbit_s <= 110.0, "{mbit_s:.1} Mbit/s");
    drop(target);
    guard.down().unwrap();
}

#[test]
fn smb_read_is_held_to_the_rate() {
    needs_root_and_servers!(ServerKind::Samba);
    needs_emulator!();
    read_is_held_to_the_rate(ServerKind::Samba);
}

#[test]
fn nfs_read_is_held_to_the_rate() {
    needs_root_and_servers!(ServerKind::Nfs);
    needs_emulator!();
    read_is_held_to_the_rate(ServerKind::Nfs);
}

/// The wifi profile: 3 ms with 1 ms of jitter on the way back, 100 Mbit/s each way, as
/// Toxiproxy holds it; its round trip never falls below the lowest draw (2 ms toward
/// the server, 0 back).
#[test]
fn the_wifi_profile_is_what_toxiproxy_holds_and_its_floor_holds() {
    needs_root_and_servers!(ServerKind::Nfs);
    needs_emulator!();
    let base = tempfile::tempdir().unwrap();
    let guard = lab_with_link(base.path(), FsKind::Dir, ServerKind::Nfs, "wifi");
    let st = guard.lab().state.clone();
    let link = st.link.clone().unwrap();
    assert_eq!(link.link.profile, "wifi");
    assert_eq!(
        (link.link.rtt_ns, link.link.jitter_ns, link.link.rate_bit_s),
        (3_000_000, 1_000_000, 100_000_000)
    );
    for p in &link.proxies {
        let toxics = naslab_lab::toxiproxy::toxics_now(link.api_port, &p.name).unwrap();
        let mut held: Vec<(String, String, i64, i64)> = toxics
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let a = &t["attributes"];
                let (x, y) = if t["type"] == "latency" {
                    (
                        a["latency"].as_i64().unwrap(),
                        a["jitter"].as_i64().unwrap(),
                    )
                } else {
                    (a["rate"].as_i64().unwrap(), 0)
                };
                (
                    t["type"].as_str().unwrap().to_string(),
                    t["stream"].as_str().unwrap().to_string(),
                    x,
                    y,
                )
            })
            .collect();
        held.sort();
        let want = |t: &str, s: &str, x, y| (t.to_string(), s.to_string(), x, y);
        assert_eq!(
            held,
            [
                want("bandwidth", "downstream", 12_500, 0),
                want("bandwidth", "upstream", 12_500, 0),
                want("latency", "downstream", 1, 1),
                want("latency", "upstream", 2, 0),
            ],
            "{}",
            p.name
        );
    }
    let p = probe_of(&st.url);
    eprintln!("wifi: {}", p.summary());
    assert!(p.min_ns >= 2_000_000, "{p:?}");
    guard.down().unwrap();
}

/// One 4 MiB file: 256 reads of 4 KiB at random places, then 64 writes of 64 KiB, each
/// in its own place in a shuffled order, `depth` of them in flight.
fn queued(depth: u32) -> Trace {
    let mut t = Trace::new("Queued");
    t.header.queue_depth = (depth > 1).then_some(depth);
    t.files.push(FileDecl::file(1, "q.bin", 4 << 20, true));
    let mut open = Op::new(0, 0, OpKind::Open, 1);
    open.flags = OpFlags::READ | OpFlags::WRITE;
    t.ops.push(open);
    for i in 0..256u64 {
        let mut r = Op::new(0, 0, OpKind::Read, 1);
        r.offset = (i * 379 % 1024) * 4096;
        r.len = 4096;
        t.ops.push(r);
    }
    for i in 0..64u64 {
        let mut w = Op::new(0, 0, OpKind::Write, 1);
        w.offset = (i * 37 % 64) * (64 << 10);
        w.len = 64 << 10;
        t.ops.push(w);
    }
    t.ops.push(Op::new(0, 0, OpKind::Close, 1));
    t
}

/// Runs `queued(depth)` over `target` with its data checked as it is read
/// (`--verify`); the result and the server's file after it.
fn run_queued(
    target: &dyn naslab_engine::Target,
    share_dir: &std::path::Path,
    spool: &std::path::Path,
    depth: u32,
) -> (naslab_results::IterationResult, Vec<u8>) {
    let plan = naslab_engine::compile(
        std::path::Path::new("queued.jsonl"),
        naslab_engine::records_from_trace(&queued(depth)),
        spool,
    )
    .unwrap();
    let progress = naslab_engine::Progress::default();
    let spec = naslab_engine::IterationSpec {
        plan: &plan,
        target,
        cache: naslab_results::CacheMode::Drop,
        replay: naslab_engine::ReplayOptions {
            data: naslab_engine::DataSpec {
                mode: naslab_engine::DataMode::Random,
                seed: 5,
                verify: true,
            },
            ..naslab_engine::ReplayOptions::default()
        },
        spool_dir: spool,
        records_path: None,
        progress: &progress,
        drop_all_caches: false,
        record_sink: None,
    };
    let r = naslab_engine::run_iteration(&spec, 1).unwrap();
    let file = naslab_lab::layout::workload_dir(share_dir, "Queued").join("q.bin");
    (r, std::fs::read(file).unwrap())
}

/// At queue depth 32 over SMB the requests are in flight together: behind a 10 ms link,
/// where each one takes at least 10 ms, the run ends in far less than its requests'
/// round trips one after another, which depth 1 cannot beat; and it reads what the
/// server holds and leaves on the server the same bytes as depth 1.
#[test]
fn smb_queue_depth_keeps_its_requests_in_flight_together() {
    needs_root_and_servers!(ServerKind::Samba);
    needs_emulator!();
    let base = tempfile::tempdir().unwrap();
    let guard = lab_with_link(base.path(), FsKind::Dir, ServerKind::Samba, "rtt=10ms");
    let st = guard.lab().state.clone();
    let target = smb(&st);
    assert!(naslab_engine::Target::caps(&target).max_queue_depth >= 32);
    let (one, bytes_one) = run_queued(&target, &st.share_dir, base.path(), 1);
    let (deep, bytes_deep) = run_queued(&target, &st.share_dir, base.path(), 32);
    for r in [&one, &deep] {
        assert_eq!(r.errors, 0, "{:?}", r.op_stats);
        assert_eq!(r.bytes_read, 256 * 4096);
        assert_eq!(r.bytes_written, 4 << 20);
        let v = r.verify.clone().expect("verified");
        assert!(v.mismatches.is_empty(), "{:?}", v.mismatches);
    }
    assert!(
        bytes_one == bytes_deep,
        "depth 32 left other bytes than depth 1"
    );
    // A delay line cannot answer early: one request at a time, the 320 reads and writes
    // take at least 3.2 s.
    let serial_ns = 320 * 10_000_000;
    let mean = |r: &naslab_results::IterationResult, k: &str| r.op(k).unwrap().latency.avg_ns;
    assert!(mean(&one, "read") >= 10_000_000, "{:?}", one.op_stats);
    assert!(one.wall_ns >= serial_ns, "{} ns", one.wall_ns);
    eprintln!(
        "rtt=10ms: depth 1 {:.2} s, depth 32 {:.2} s (reads {:.1} ms and {:.1} ms on average)",
        one.wall_ns as f64 / 1e9,
        deep.wall_ns as f64 / 1e9,
        mean(&one, "read") as f64 / 1e6,
        mean(&deep, "read") as f64 / 1e6
    );
    assert!(
        deep.wall_ns * 4 < serial_ns,
        "depth 32 took {} ns: its requests did not overlap",
        deep.wall_ns
    );
    drop(target);
    guard.down().unwrap();
}
