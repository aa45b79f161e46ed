//! `--verify` over SMB and NFS: blocks are damaged on the server's own file system
//! between the write and the read (the trace waits two seconds), and an older version
//! of a block is put back; naslab must catch each and name it. Needs root and the
//! servers: skipped with a note otherwise, failed when NASLAB_REQUIRE_ROOT=1.

#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{lab, nfs, smb};
use naslab_engine::{
    DataMode, DataSpec, IterationSpec, Pacing, Progress, ReplayOptions, Target, compile,
    records_from_trace, run_iteration,
};
use naslab_lab::{FsKind, ServerKind};
use naslab_results::{CacheMode, IterationResult, MismatchKind};
use naslab_trace::{FileDecl, Op, OpFlags, OpKind, Trace};

const BLOCK: u64 = 4096;

fn op(t_us: u64, kind: OpKind, file: u32, offset: u64, len: u64) -> Op {
    let mut o = Op::new(0, t_us, kind, file);
    o.offset = offset;
    o.len = len;
    o.flags = match kind {
        OpKind::Create => OpFlags::WRITE,
        OpKind::Open => OpFlags::READ,
        _ => OpFlags::default(),
    };
    o
}

/// a.bin prepared; b.bin written (16 KiB), written over one second later (its first
/// 8 KiB), then read three seconds in.
fn trace(name: &str) -> Trace {
    let mut t = Trace::new(name);
    t.files.push(FileDecl::file(1, "a.bin", 64 << 10, true));
    t.files.push(FileDecl::file(2, "b.bin", 0, false));
    t.ops.push(op(0, OpKind::Create, 2, 0, 0));
    t.ops.push(op(0, OpKind::Write, 2, 0, 16 << 10));
    t.ops.push(op(0, OpKind::Fsync, 2, 0, 0));
    t.ops.push(op(1_000_000, OpKind::Write, 2, 0, 8 << 10));
    t.ops.push(op(1_000_000, OpKind::Fsync, 2, 0, 0));
    t.ops.push(op(1_000_000, OpKind::Close, 2, 0, 0));
    t.ops.push(op(3_000_000, OpKind::Open, 2, 0, 0));
    t.ops.push(op(3_000_000, OpKind::Read, 2, 0, 16 << 10));
    t.ops.push(op(3_000_000, OpKind::Close, 2, 0, 0));
    t
}

fn read_at(path: &Path, offset: u64, len: u64) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).unwrap();
    let mut b = vec![0u8; len as usize];
    f.read_exact_at(&mut b, offset).unwrap();
    b
}

fn write_at(path: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, offset).unwrap();
    f.sync_all().unwrap();
}

/// On the server's file system, while the trace waits: block 1 of b.bin gets its
/// first version back after the second write (lost write), half of block 2 is zeroed
/// (torn), block 3 becomes a prepared block of a.bin (misplaced).
fn damage(dir: PathBuf) {
    let b = dir.join("b.bin");
    let start = Instant::now();
    while std::fs::metadata(&b).map(|m| m.len()).unwrap_or(0) < 16 << 10 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "b.bin never written"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    let first = read_at(&b, BLOCK, BLOCK);
    while read_at(&b, BLOCK, BLOCK) == first {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never written over"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    write_at(&b, BLOCK, &first);
    write_at(&b, 2 * BLOCK + 2048, &[0u8; 2048]);
    let a0 = read_at(&dir.join("a.bin"), 0, BLOCK);
    write_at(&b, 3 * BLOCK, &a0);
}

fn run(target: &dyn Target, share_dir: &Path, name: &str, spool: &Path) -> IterationResult {
    let t = trace(name);
    let plan = compile(Path::new("t.jsonl"), records_from_trace(&t), spool).unwrap();
    let progress = Progress::default();
    let spec = IterationSpec {
        plan: &plan,
        target,
        cache: CacheMode::Drop,
        replay: ReplayOptions {
            pacing: Pacing::Original,
            data: DataSpec {
                mode: DataMode::Random,
                seed: 77,
                verify: true,
            },
            ..ReplayOptions::default()
        },
        spool_dir: spool,
        records_path: None,
        progress: &progress,
        drop_all_caches: false,
        record_sink: None,
    };
    let dir = naslab_lab::layout::workload_dir(share_dir, name);
    std::thread::scope(|s| {
        s.spawn(move || damage(dir));
        run_iteration(&spec, 1).unwrap()
    })
}

fn check(r: &IterationResult) {
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    let v = r.verify.clone().expect("verified");
    let got: Vec<(MismatchKind, u64, &str)> = v
        .mismatches
        .iter()
        .map(|m| (m.kind, m.offset, m.during.as_str()))
        .collect();
    let mut want = Vec::new();
    for during in ["read", "read-back"] {
        want.push((MismatchKind::LostWrite, BLOCK, during));
        want.push((MismatchKind::TornWrite, 2 * BLOCK, during));
        want.push((MismatchKind::MisplacedWrite, 3 * BLOCK, during));
    }
    assert_eq!(got, want, "{v:#?}");
    assert_eq!(v.corrupt + v.stale_reads, 0);
    assert!(v.read_back_bytes >= (64 << 10) + (16 << 10));
}

#[test]
fn verify_over_smb_names_a_lost_a_torn_and_a_misplaced_write() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    let target = smb(&st);
    check(&run(&target, &st.share_dir, "SmbVerify", base.path()));
    drop(target);
    guard.down().unwrap();
}

#[test]
fn verify_over_nfs_names_a_lost_a_torn_and_a_misplaced_write() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let target = nfs(&st.url);
    check(&run(&target, &st.share_dir, "NfsVerify", base.path()));
    drop(target);
    guard.down().unwrap();
}

/// a.bin prepared (1 MiB + 100 bytes) and c.bin written in 64 KiB writes (1 MiB).
fn content_trace(name: &str) -> Trace {
    let mut t = Trace::new(name);
    t.files
        .push(FileDecl::file(1, "a.bin", (1 << 20) + 100, true));
    t.files.push(FileDecl::file(2, "c.bin", 0, false));
    t.ops.push(op(0, OpKind::Create, 2, 0, 0));
    for i in 0..16u64 {
        t.ops.push(op(0, OpKind::Write, 2, i << 16, 1 << 16));
    }
    t.ops.push(op(0, OpKind::Close, 2, 0, 0));
    t
}

/// Runs the content trace with the default data and counts, on the server's file
/// system, the distinct 4 KiB blocks of both files together.
fn check_distinct(target: &dyn Target, share_dir: &Path, name: &str, spool: &Path) {
    let t = content_trace(name);
    let plan = compile(Path::new("t.jsonl"), records_from_trace(&t), spool).unwrap();
    let progress = Progress::default();
    let spec = IterationSpec {
        plan: &plan,
        target,
        cache: CacheMode::Drop,
        replay: ReplayOptions::default(),
        spool_dir: spool,
        records_path: None,
        progress: &progress,
        drop_all_caches: false,
        record_sink: None,
    };
    let r = run_iteration(&spec, 1).unwrap();
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    let dir = naslab_lab::layout::workload_dir(share_dir, name);
    let mut blocks = std::collections::HashSet::new();
    let mut n = 0;
    for f in ["a.bin", "c.bin"] {
        let bytes = std::fs::read(dir.join(f)).unwrap();
        for b in bytes.chunks_exact(BLOCK as usize) {
            blocks.insert(b.to_vec());
            n += 1;
        }
    }
    assert_eq!(n, 512, "256 whole blocks in each file");
    assert_eq!(blocks.len(), n, "every block written is unique");
}

#[test]
fn every_block_written_over_smb_and_nfs_is_unique() {
    for server in [ServerKind::Samba, ServerKind::Nfs] {
        needs_root_and_servers!(server);
        let base = tempfile::tempdir().unwrap();
        let guard = lab(base.path(), FsKind::Dir, server, &[]);
        let st = guard.lab().state.clone();
        let target: Box<dyn Target> = match server {
            ServerKind::Samba => Box::new(smb(&st)),
            ServerKind::Nfs => Box::new(nfs(&st.url)),
        };
        check_distinct(target.as_ref(), &st.share_dir, "Distinct", base.path());
        drop(target);
        guard.down().unwrap();
    }
}
