//! Queue depth over the protocols, seen on the wire: a relay between naslab and the
//! lab's server (common/wire.rs) reads each request and reply as it passes and counts
//! the requests the server holds at once. IOMeter-shaped 4 KiB random reads (and 64 KiB
//! random writes) at depth 1 and 32, with `--verify`: at depth 32 the relay sees 32
//! requests outstanding, the op records show 32 ops in flight at once, and the server's
//! disk holds the same bytes as after depth 1. Needs root and the servers: skipped with
//! a note otherwise, failed under NASLAB_REQUIRE_ROOT=1.

#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;

use common::wire::{Framing, Relay, max_in_flight};
use common::*;
use naslab_lab::{FsKind, ServerKind};
use naslab_trace::{FileDecl, Op, OpFlags, OpKind, Trace};

/// Reads of 4 KiB spread over a 4 MiB file, then 64 KiB writes over its first 4 MiB,
/// at `depth`.
fn iometer(depth: u32) -> Trace {
    let mut t = Trace::new("Queued");
    t.header.queue_depth = (depth > 1).then_some(depth);
    t.files.push(FileDecl::file(1, "q.bin", 4 << 20, true));
    let mut open = Op::new(0, 0, OpKind::Open, 1);
    open.flags = OpFlags::READ | OpFlags::WRITE;
    t.ops.push(open);
    for i in 0..512u64 {
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

/// Runs `iometer(depth)` over `target` with `--verify` and op records; the result,
/// the most reads and writes in flight at once by the records, and the server's file
/// after it.
fn run_at(
    target: &dyn naslab_engine::Target,
    share_dir: &Path,
    spool: &Path,
    depth: u32,
) -> (naslab_results::IterationResult, usize, Vec<u8>) {
    let plan = naslab_engine::compile(
        Path::new("queued.jsonl"),
        naslab_engine::records_from_trace(&iometer(depth)),
        spool,
    )
    .unwrap();
    let records = spool.join(format!("records-{depth}.jsonl"));
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
        records_path: Some(records.clone()),
        progress: &progress,
        drop_all_caches: false,
        record_sink: None,
    };
    let r = naslab_engine::run_iteration(&spec, 1).unwrap();
    let in_flight = max_in_flight(&records, &[OpKind::Read, OpKind::Write]);
    let file = naslab_lab::layout::workload_dir(share_dir, "Queued").join("q.bin");
    (r, in_flight, std::fs::read(file).unwrap())
}

/// Depth 1 then depth 32 over `target`, reached through `relay`: the counts and checks
/// the tests share.
fn depth_1_and_32(target: &dyn naslab_engine::Target, relay: &Relay, share_dir: &Path) {
    depth_1_and_32_capped(target, relay, share_dir, 32)
}

/// As [`depth_1_and_32`], where the server holds at most `cap` requests at once on a
/// connection (NFSv4.1's session slots).
fn depth_1_and_32_capped(
    target: &dyn naslab_engine::Target,
    relay: &Relay,
    share_dir: &Path,
    cap: usize,
) {
    let spool = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    let mut writes = Vec::new();
    let mut bytes = Vec::new();
    for depth in [1u32, 32] {
        relay.reset();
        let (r, in_flight, on_disk) = run_at(target, share_dir, spool.path(), depth);
        let wire = relay.counts();
        eprintln!(
            "depth {depth}: the relay saw {} requests, at most {} READs outstanding on a connection ({} requests of any kind over all connections: {:?}; {} interim, {} unmatched, {} unreadable); the records show {in_flight} ops in flight at most",
            wire.requests,
            wire.max_reads_outstanding,
            wire.max_outstanding,
            wire.held_at_max,
            wire.interim,
            wire.unmatched,
            wire.opaque
        );
        assert_eq!(r.errors, 0, "{:?}", r.op_stats);
        assert_eq!(r.bytes_read, 512 * 4096);
        assert_eq!(r.bytes_written, 4 << 20);
        let v = r.verify.clone().expect("verified");
        assert!(v.mismatches.is_empty(), "{:?}", v.mismatches);
        assert_eq!(wire.opaque, 0, "every header on the wire was readable");
        assert_eq!(
            wire.unmatched, 0,
            "every reply answered a request in flight"
        );
        assert!(wire.requests >= 576, "{wire:?}");
        seen.push((wire.max_reads_outstanding, in_flight));
        writes.push(wire.max_writes_outstanding);
        bytes.push(on_disk);
    }
    // The reads are on the wire as the replay issues them; the writes that prepare the
    // file before the run (several requests in flight over SMB for a large one) are not
    // the run's.
    assert_eq!(seen[0], (1, 1), "depth 1: one read at a time");
    let deep = cap.min(32);
    assert_eq!(
        seen[1],
        (deep, deep),
        "depth 32: (on the wire, in the records)"
    );
    // The 64 KiB writes to the one file go out together too (none overlaps another).
    // They follow the reads, each taking a place a read freed as it is reaped, so how
    // many overlap depends on timing (11 to 30 here); more than one shows the client
    // does not hold writes to a file back one at a time.
    eprintln!(
        "WRITEs outstanding at most: depth 1 {}, depth 32 {}",
        writes[0], writes[1]
    );
    assert!(writes[1] > 1, "depth 32: WRITEs in flight together");
    assert!(
        bytes[0] == bytes[1],
        "depth 32 left other bytes than depth 1"
    );
}

/// naslab's NFSv3 client on the lab's export through a relay in front of its NFS
/// service (the MOUNT service is reached directly).
fn nfs_through_relay(st: &naslab_lab::LabState) -> (naslab_targets::NfsTarget, Relay) {
    assert!(
        st.url.contains("mountport="),
        "the lab serves NFSv3: {}",
        st.url
    );
    let nfs_port = st.ports[0];
    let relay = Relay::start(nfs_port, Framing::OncRpc);
    let url = st.url.replacen(
        &format!("127.0.0.1:{nfs_port}/"),
        &format!("127.0.0.1:{}/", relay.port()),
        1,
    );
    (nfs(&url), relay)
}

/// naslab's SMB client on the lab's share through a relay in front of smbd, signed but
/// not encrypted (so that the relay reads every header), with `retrans` as
/// `--retrans-timeout`.
fn smb_through_relay(
    st: &naslab_lab::LabState,
    retrans: Option<std::time::Duration>,
) -> (naslab_targets::SmbTarget, Relay) {
    let port = st.ports[0];
    let relay = Relay::start(port, Framing::Smb2);
    let mut relayed = st.clone();
    relayed.url = st.url.replacen(
        &format!("127.0.0.1:{port}/"),
        &format!("127.0.0.1:{}/", relay.port()),
        1,
    );
    let opts = naslab_targets::url::ClientOptions {
        smb_encrypt: naslab_targets::url::SmbEncrypt::Off,
        retrans_timeout: retrans,
        ..naslab_targets::url::ClientOptions::default()
    };
    (smb_with(&relayed, opts).unwrap(), relay)
}

/// What a run of `iometer` that rode out a broken or silent path holds (`what` names
/// the run in messages): no op failed, every byte moved, every read checked, and its
/// failover booked with at least one reconnect and request sent again. Its failover.
fn rode_out(r: &naslab_results::IterationResult, what: &str) -> naslab_results::FailoverSummary {
    assert_eq!(r.errors, 0, "{what}: {:?}", r.op_stats);
    assert_eq!(r.bytes_read, 512 * 4096, "{what}");
    assert_eq!(r.bytes_written, 4 << 20, "{what}");
    let v = r.verify.clone().expect("verified");
    assert!(v.mismatches.is_empty(), "{what}: {:?}", v.mismatches);
    let f = r.failover.clone().expect("the broken path is booked");
    eprintln!("{what}: {f:?}; durable handles {:?}", r.durable_handles);
    assert!(f.reconnects >= 1 && f.retries >= 1, "{what}: {f:?}");
    assert!(f.stalled_ops >= 1, "{what}: {f:?}");
    assert_eq!(f.failed_ops, 0, "{what}: {f:?}");
    f
}

/// Ops larger than the server's 1 MiB transfer size at depth 4 over NFSv3: each is
/// several calls in flight together, the last read ends at the end of the file (its
/// third call finds nothing), and what is read and written is exact.
#[test]
fn nfs3_ops_of_several_calls_go_out_together_and_stop_at_the_end_of_the_file() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let (target, relay) = nfs_through_relay(&st);
    assert_eq!(target.settings().max_read_bytes, 1 << 20);
    let mut t = Trace::new("Large");
    t.header.queue_depth = Some(4);
    t.files.push(FileDecl::file(1, "big.bin", 8 << 20, true));
    let mut open = Op::new(0, 0, OpKind::Open, 1);
    open.flags = OpFlags::READ | OpFlags::WRITE;
    t.ops.push(open);
    for i in 0..3u64 {
        let mut r = Op::new(0, 0, OpKind::Read, 1);
        r.offset = i * (3 << 20);
        r.len = 3 << 20;
        t.ops.push(r);
    }
    for i in 0..3u64 {
        let mut w = Op::new(0, 0, OpKind::Write, 1);
        w.offset = (8 << 20) + i * (5 << 19);
        w.len = 5 << 19;
        t.ops.push(w);
    }
    t.ops.push(Op::new(0, 0, OpKind::Close, 1));
    let spool = tempfile::tempdir().unwrap();
    let plan = naslab_engine::compile(
        Path::new("large.jsonl"),
        naslab_engine::records_from_trace(&t),
        spool.path(),
    )
    .unwrap();
    let progress = naslab_engine::Progress::default();
    let spec = naslab_engine::IterationSpec {
        plan: &plan,
        target: &target,
        cache: naslab_results::CacheMode::Drop,
        replay: naslab_engine::ReplayOptions {
            data: naslab_engine::DataSpec {
                mode: naslab_engine::DataMode::Random,
                seed: 9,
                verify: true,
            },
            ..naslab_engine::ReplayOptions::default()
        },
        spool_dir: spool.path(),
        records_path: None,
        progress: &progress,
        drop_all_caches: false,
        record_sink: None,
    };
    relay.reset();
    let r = naslab_engine::run_iteration(&spec, 1).unwrap();
    let wire = relay.counts();
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    // 3 + 3 + 2 MiB: the last read stops at the end of the file.
    assert_eq!(r.bytes_read, 8 << 20);
    assert_eq!(r.bytes_written, 3 * (5 << 19));
    let v = r.verify.clone().expect("verified");
    assert!(v.mismatches.is_empty(), "{:?}", v.mismatches);
    // Three reads of three calls each, in flight together.
    assert_eq!(wire.max_reads_outstanding, 9, "{wire:?}");
    let file = naslab_lab::layout::workload_dir(&st.share_dir, "Large").join("big.bin");
    assert_eq!(
        std::fs::metadata(file).unwrap().len(),
        (8 << 20) + 3 * (5 << 19)
    );
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

/// Queued UNSTABLE writes leave their file to be committed, as writes one at a time
/// do: the close after them sends one COMMIT (NFSv3 procedure 21), and a close with
/// nothing written since sends none.
#[test]
fn nfs3_queued_writes_are_committed_at_close() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let (target, relay) = nfs_through_relay(&st);
    let (mut b, h) = one_open_file(&target, "Commit");
    let data = std::sync::Arc::new(naslab_engine::buffer::LentBuf::try_zeroed(4 * 4096).unwrap());
    // SAFETY: nothing is queued yet.
    unsafe { data.bytes_mut(0, 4 * 4096) }.fill(7);
    let memory = naslab_engine::backend::IoMemory::new(vec![data]);
    let mut done = Vec::new();
    {
        let q = b.queued(4, &memory).unwrap();
        for i in 0..4 {
            let buf = naslab_engine::backend::IoBuf {
                region: 0,
                offset: i as usize * 4096,
                len: 4096,
            };
            q.queue_write(h, i * 4096, buf, i).unwrap();
        }
        while done.len() < 4 {
            q.submit_and_reap(1, &mut done).unwrap();
        }
    }
    assert!(done.iter().all(|&(_, r)| r == 4096), "{done:?}");
    relay.reset();
    b.close(h).unwrap();
    let commits = |r: &Relay| r.counts().by_command.get(&21).copied().unwrap_or(0);
    assert_eq!(commits(&relay), 1, "{:?}", relay.counts().by_command);
    let h = b
        .open(
            0,
            naslab_engine::OpenHow {
                read: true,
                write: true,
                ..Default::default()
            },
        )
        .unwrap();
    relay.reset();
    b.close(h).unwrap();
    assert_eq!(
        commits(&relay),
        0,
        "nothing written: {:?}",
        relay.counts().by_command
    );
    let file = naslab_lab::layout::workload_dir(&st.share_dir, "Commit").join("data.bin");
    assert_eq!(std::fs::read(file).unwrap(), vec![7u8; 4 * 4096]);
    drop(b);
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

#[test]
fn nfs3_at_depth_32_the_server_holds_32_calls() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let (target, relay) = nfs_through_relay(&st);
    assert!(naslab_engine::Target::caps(&target).max_queue_depth >= 32);
    depth_1_and_32(&target, &relay, &st.share_dir);
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

/// The connection broken under 32 calls in flight (the relay closes both ends after
/// the run's 100th READ, dropping what it had not forwarded): the stream connects again
/// and sends every call not yet answered again; no op fails, each read is what the file
/// holds, the server's file is the one depth 1 leaves, and the run books the reconnect
/// and the ops that waited through it.
#[test]
fn nfs3_calls_in_flight_go_again_over_a_new_connection() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let (target, relay) = nfs_through_relay(&st);
    let spool = tempfile::tempdir().unwrap();
    let (_, _, bytes_one) = run_at(&target, &st.share_dir, spool.path(), 1);
    relay.cut_after_reads(100);
    let (r, in_flight, bytes_deep) = run_at(&target, &st.share_dir, spool.path(), 32);
    assert_eq!(relay.cuts(), 1, "the relay broke the connections once");
    rode_out(&r, "after the cut");
    assert_eq!(in_flight, 32);
    assert!(
        bytes_one == bytes_deep,
        "the cut left other bytes than depth 1"
    );
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

/// The SMB connection cut under 32 queued ops (the relay closes both sides of every
/// connection at the run's 100th READ, dropping what it had not forwarded), on a share
/// granting durable handles: the stream signs in again, claims its file's handle back
/// and sends every op that was in flight again; no op fails, each read is what the file
/// holds, the server's file is the one depth 1 leaves, and the run books the reconnect
/// and the ops that waited through it.
#[test]
fn smb_queued_ops_go_again_over_a_new_connection_on_their_durable_handle() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(
        base.path(),
        FsKind::Dir,
        ServerKind::Samba,
        &["durable handles = yes"],
    );
    let st = guard.lab().state.clone();
    let (target, relay) = smb_through_relay(&st, None);
    let spool = tempfile::tempdir().unwrap();
    let (_, _, bytes_one) = run_at(&target, &st.share_dir, spool.path(), 1);
    relay.cut_after_reads(100);
    let (r, in_flight, bytes_deep) = run_at(&target, &st.share_dir, spool.path(), 32);
    assert_eq!(relay.cuts(), 1, "the relay broke the connections once");
    rode_out(&r, "after the cut");
    let d = r.durable_handles.expect("durable handles asked for");
    assert_eq!((d.granted, d.reclaimed, d.lost), (1, 1, 0), "{d:?}");
    assert_eq!(in_flight, 32);
    assert!(
        bytes_one == bytes_deep,
        "the cut left other bytes than depth 1"
    );
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

/// The SMB path gone silent (the relay black-holes every connection at the run's 100th
/// READ: nothing more goes through them, and they stay open, as do new ones), at depth 1
/// and at depth 32, on a share granting durable handles: with `--retrans-timeout 300ms`
/// a request (or, queued, the stream's ops) unanswered that long takes the connection
/// for broken; the stream signs in again on a new one, which the relay forwards, claims
/// its handle back and sends the ops again. No op fails, the reads check and the
/// server's file is the one an undisturbed run leaves.
#[test]
fn smb_requests_go_again_after_the_retransmit_timeout() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(
        base.path(),
        FsKind::Dir,
        ServerKind::Samba,
        &["durable handles = yes"],
    );
    let st = guard.lab().state.clone();
    let (target, relay) = smb_through_relay(&st, Some(std::time::Duration::from_millis(300)));
    assert_eq!(target.settings().retrans_timeout_ns, Some(300_000_000));
    let spool = tempfile::tempdir().unwrap();
    let (_, _, undisturbed) = run_at(&target, &st.share_dir, spool.path(), 1);
    for depth in [1u32, 32] {
        let cuts = relay.cuts();
        relay.black_hole_after_reads(100);
        let (r, in_flight, bytes) = run_at(&target, &st.share_dir, spool.path(), depth);
        assert_eq!(relay.cuts(), cuts + 1, "depth {depth}: black-holed once");
        let f = rode_out(&r, &format!("depth {depth}, after the black hole"));
        // The stall is at least the retransmit timeout the request waited in vain.
        assert!(f.longest_stall_ns >= 300_000_000, "depth {depth}: {f:?}");
        // The handle is reclaimed on each new connection: once, or more when a request
        // sent again on the new one also waits past the timeout (a loaded server).
        let d = r.durable_handles.expect("durable handles asked for");
        assert_eq!((d.granted, d.lost), (1, 0), "depth {depth}: {d:?}");
        assert!(
            d.reclaimed >= 1 && d.reclaimed <= f.reconnects,
            "depth {depth}: {d:?}, {f:?}"
        );
        assert_eq!(in_flight, depth as usize);
        assert!(
            bytes == undisturbed,
            "depth {depth}: the server's file differs"
        );
    }
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

/// naslab's NFSv4.1 client on the lab's export through a relay in front of its NFS
/// service.
fn nfs41_through_relay(st: &naslab_lab::LabState) -> (naslab_targets::Nfs4Target, Relay) {
    let nfs_port = st.ports[0];
    let relay = Relay::start(nfs_port, Framing::OncRpc);
    let url = st.url.replacen(
        &format!("127.0.0.1:{nfs_port}/"),
        &format!("127.0.0.1:{}/", relay.port()),
        1,
    );
    let url = format!("{}?vers=4.1", url.split('?').next().unwrap());
    let target = naslab_targets::Nfs4Target::connect(url.parse().unwrap()).expect("v4.1 mounts");
    (target, relay)
}

/// Over NFSv4.1 each request holds one of the session's slots: at a depth above the
/// slots ganesha grants (64), the server holds no more requests than that at once,
/// while the op records count the ops queued behind them as in flight (their latency
/// includes the wait for a slot), and every op completes.
/// The path gone silent under 32 calls in flight (the relay black-holes the
/// connections after the run's 100th READ: nothing more goes through them, and they stay
/// open): with `--retrans-timeout 300ms` the stream takes its connection for broken when
/// no op has completed for that long, connects again and sends the calls not yet
/// answered again; no op fails, the reads check and the server's file is the one depth
/// 1 leaves.
#[test]
fn nfs3_calls_in_flight_go_again_after_the_retransmit_timeout() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let nfs_port = st.ports[0];
    let relay = Relay::start(nfs_port, Framing::OncRpc);
    let url = st.url.replacen(
        &format!("127.0.0.1:{nfs_port}/"),
        &format!("127.0.0.1:{}/", relay.port()),
        1,
    );
    let opts = naslab_targets::url::ClientOptions {
        retrans_timeout: Some(std::time::Duration::from_millis(300)),
        ..naslab_targets::url::ClientOptions::default()
    };
    let target =
        naslab_targets::NfsTarget::connect_with(url.parse().unwrap(), opts).expect("nfs mounts");
    let spool = tempfile::tempdir().unwrap();
    let (_, _, bytes_one) = run_at(&target, &st.share_dir, spool.path(), 1);
    relay.black_hole_after_reads(100);
    let (r, in_flight, bytes_deep) = run_at(&target, &st.share_dir, spool.path(), 32);
    assert_eq!(
        relay.cuts(),
        1,
        "the relay black-holed the connections once"
    );
    let f = rode_out(&r, "after the black hole");
    // The ops in flight waited at least the retransmit timeout.
    assert!(f.longest_stall_ns >= 300_000_000, "{f:?}");
    assert_eq!(in_flight, 32);
    assert!(
        bytes_one == bytes_deep,
        "the black hole left other bytes than depth 1"
    );
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

#[test]
fn nfs41_the_session_slots_cap_the_requests_in_flight() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let (target, relay) = nfs41_through_relay(&st);
    let slots = target
        .settings()
        .session_slots
        .expect("the session's slots") as usize;
    let depth = (slots + 36) as u32;
    let spool = tempfile::tempdir().unwrap();
    relay.reset();
    let (r, in_flight, _) = run_at(&target, &st.share_dir, spool.path(), depth);
    let wire = relay.counts();
    eprintln!(
        "{slots} slots, depth {depth}: {} READs outstanding at most on the wire, {in_flight} ops in flight by the records",
        wire.max_reads_outstanding
    );
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    assert_eq!(r.bytes_read, 512 * 4096);
    assert_eq!(wire.max_reads_outstanding, slots);
    assert_eq!(in_flight, depth as usize);
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

#[test]
fn nfs41_at_depth_32_the_server_holds_32_compounds() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let (target, relay) = nfs41_through_relay(&st);
    assert!(naslab_engine::Target::caps(&target).max_queue_depth >= 32);
    // The slots ganesha granted the session bound the requests it holds at once.
    let slots = target
        .settings()
        .session_slots
        .expect("the session's slots");
    eprintln!("ganesha granted {slots} session slots");
    depth_1_and_32_capped(&target, &relay, &st.share_dir, slots as usize);
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

#[test]
fn smb_at_depth_32_the_server_holds_32_requests() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    let (target, relay) = smb_through_relay(&st, None);
    depth_1_and_32(&target, &relay, &st.share_dir);
    drop(target);
    drop(relay);
    guard.down().unwrap();
}

/// IOMeter's own QD32 cells (the generator's `IOMeter_4K_RandRead_QD32` and
/// `IOMeter_4K_RandWrite_QD32`, a 4 MiB test file) over `target` through `relay`: the
/// server holds 32 READs, then 32 WRITEs, at once, and the op records have 32 ops in
/// flight. The writes run without `--verify`, whose rule that an op overlapping one in
/// flight waits for it would hold back a write drawn at a block already in flight.
fn iometer_cells_at_32(target: &dyn naslab_engine::Target, relay: &Relay, label: &str) {
    use naslab_workload::synthetic::iometer;
    for (name, write) in [
        ("IOMeter_4K_RandRead_QD32", false),
        ("IOMeter_4K_RandWrite_QD32", true),
    ] {
        let test = iometer::lookup(name).unwrap();
        let params = naslab_workload::GenParams {
            seed: 3,
            scale: 1.0 / 256.0,
        };
        let trace = iometer::generate(test, &params);
        assert_eq!(trace.header.queue_depth, Some(32));
        let spool = tempfile::tempdir().unwrap();
        let plan = naslab_engine::compile(
            Path::new("iometer.jsonl"),
            naslab_engine::records_from_trace(&trace),
            spool.path(),
        )
        .unwrap();
        let records = spool.path().join("records.jsonl");
        let progress = naslab_engine::Progress::default();
        let spec = naslab_engine::IterationSpec {
            plan: &plan,
            target,
            cache: naslab_results::CacheMode::Drop,
            replay: naslab_engine::ReplayOptions {
                data: naslab_engine::DataSpec {
                    mode: naslab_engine::DataMode::Random,
                    seed: 5,
                    verify: !write,
                },
                ..naslab_engine::ReplayOptions::default()
            },
            spool_dir: spool.path(),
            records_path: Some(records.clone()),
            progress: &progress,
            drop_all_caches: false,
            record_sink: None,
        };
        relay.reset();
        let r = naslab_engine::run_iteration(&spec, 1).unwrap();
        let wire = relay.counts();
        let kind = if write { OpKind::Write } else { OpKind::Read };
        let in_flight = max_in_flight(&records, &[kind]);
        let on_wire = if write {
            wire.max_writes_outstanding
        } else {
            wire.max_reads_outstanding
        };
        eprintln!(
            "{label} {name}: {} ops, {on_wire} outstanding at most on the wire, {in_flight} in flight by the records",
            r.op(if write { "write" } else { "read" }).unwrap().count
        );
        assert_eq!(r.errors, 0, "{:?}", r.op_stats);
        assert_eq!(on_wire, 32, "{label} {name}: {wire:?}");
        assert_eq!(in_flight, 32, "{label} {name}");
    }
}

#[test]
fn iometer_qd32_cells_keep_32_requests_at_the_server() {
    needs_root_and_servers!(ServerKind::Nfs);
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let (target, relay) = nfs_through_relay(&st);
    iometer_cells_at_32(&target, &relay, "NFSv3");
    drop((target, relay));
    let (target, relay) = nfs41_through_relay(&st);
    iometer_cells_at_32(&target, &relay, "NFSv4.1");
    drop((target, relay));
    guard.down().unwrap();

    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    let (target, relay) = smb_through_relay(&st, None);
    iometer_cells_at_32(&target, &relay, "SMB");
    drop((target, relay));
    guard.down().unwrap();
}
