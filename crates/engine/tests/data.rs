//! What naslab writes and `--verify`, on a local directory: the bytes on disk are read
//! straight from the file system and judged independently (distinct blocks, zstd).

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use naslab_engine::{DataMode, DataSpec, Pacing, ReplayOptions};
use naslab_local::{PosixTarget, Sandbox};
use naslab_results::{CacheMode, IterationResult, MismatchKind};
use naslab_trace::{FileDecl, Op, OpFlags, OpKind, Prepare, Trace};

mod common;
use common::{file, plan_of, run_with};

const BLOCK: usize = 4096;

struct Ran {
    result: IterationResult,
    dir: PathBuf,
    _keep: (tempfile::TempDir, tempfile::TempDir),
}

/// Runs `trace` on a fresh local directory; `during` gets the workload's directory
/// while the iteration runs (to damage files behind naslab's back).
fn run(trace: &Trace, data: DataSpec, pacing: Pacing, during: impl FnOnce(PathBuf) + Send) -> Ran {
    run_ahead(trace, data, pacing, None, during)
}

/// [`run`], with the write data made ahead or not as `write_ahead` says.
fn run_ahead(
    trace: &Trace,
    data: DataSpec,
    pacing: Pacing,
    write_ahead: Option<bool>,
    during: impl FnOnce(PathBuf) + Send,
) -> Ran {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let spool = tempfile::tempdir().unwrap();
    let plan = plan_of(trace, spool.path());
    let sandbox = Sandbox::open(target.path()).unwrap();
    let posix = PosixTarget::new(sandbox.clone());
    let dir = sandbox.root().join(&trace.header.workload);
    let replay = ReplayOptions {
        pacing,
        data,
        write_ahead,
        ..ReplayOptions::default()
    };
    let result = std::thread::scope(|s| {
        let d = dir.clone();
        s.spawn(move || during(d));
        run_with(&plan, &posix, CacheMode::Drop, spool.path(), None, replay).unwrap()
    });
    assert_eq!(result.errors, 0, "{:?}", result.op_stats);
    Ran {
        result,
        dir,
        _keep: (target, spool),
    }
}

fn spec(mode: DataMode, verify: bool) -> DataSpec {
    DataSpec {
        mode,
        seed: 0x5eed,
        verify,
    }
}

fn op(t_us: u64, kind: OpKind, file: u32, offset: u64, len: u64) -> Op {
    let mut o = Op::new(0, t_us, kind, file);
    o.offset = offset;
    o.len = len;
    if kind == OpKind::Create {
        o.flags = OpFlags::WRITE;
    }
    o
}

/// Whole 4 KiB blocks of a file (a short tail is left out).
fn blocks(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.chunks_exact(BLOCK).collect()
}

fn distinct(bytes: &[u8]) -> usize {
    blocks(bytes).into_iter().collect::<HashSet<_>>().len()
}

/// Compressed size over size, with zstd's default level.
fn zstd_ratio(bytes: &[u8]) -> f64 {
    zstd::encode_all(bytes, 3).unwrap().len() as f64 / bytes.len() as f64
}

/// Two prepared files (copied and streamed) and a new one written in 64 KiB writes, its
/// first MiB then written over.
fn content_trace() -> Trace {
    let mut t = Trace::new("Content");
    t.files.push(FileDecl::dir(0, "in", true));
    t.files.push(file(
        1,
        "in/copied.bin",
        (6 << 20) + 1000,
        true,
        Prepare::Copy,
    ));
    t.files
        .push(file(2, "in/streamed.bin", 2 << 20, true, Prepare::Stream));
    t.files.push(file(3, "new.bin", 0, false, Prepare::Copy));
    t.ops.push(op(0, OpKind::Create, 3, 0, 0));
    for i in 0..128u64 {
        t.ops.push(op(0, OpKind::Write, 3, i << 16, 1 << 16));
    }
    for i in 0..16u64 {
        t.ops.push(op(0, OpKind::Write, 3, i << 16, 1 << 16));
    }
    t.ops.push(op(0, OpKind::Close, 3, 0, 0));
    t
}

#[test]
fn every_block_written_is_unique_and_random_data_does_not_compress() {
    let ran = run(
        &content_trace(),
        spec(DataMode::Random, false),
        Pacing::Afap,
        |_| {},
    );
    let mut all = Vec::new();
    for (name, size) in [
        ("in/copied.bin", (6 << 20) + 1000),
        ("in/streamed.bin", 2 << 20),
        ("new.bin", 8 << 20),
    ] {
        let bytes = std::fs::read(ran.dir.join(name)).unwrap();
        assert_eq!(bytes.len(), size, "{name}");
        assert_eq!(
            distinct(&bytes),
            size / BLOCK,
            "{name}: every block distinct"
        );
        let ratio = zstd_ratio(&bytes);
        assert!(ratio >= 0.99, "{name}: zstd ratio {ratio:.4}");
        all.extend_from_slice(&bytes[..size / BLOCK * BLOCK]);
    }
    assert_eq!(
        distinct(&all),
        all.len() / BLOCK,
        "no block repeats across files"
    );
}

/// Writes of odd lengths at odd offsets over two files, some written over, with reads
/// between: every kind of piece the generator makes.
fn uneven_writes_trace() -> Trace {
    let mut t = Trace::new("Uneven");
    t.files.push(file(0, "a.bin", 0, false, Prepare::Copy));
    t.files.push(file(1, "b.bin", 300_000, true, Prepare::Copy));
    t.ops.push(op(0, OpKind::Create, 0, 0, 0));
    let mut o = op(0, OpKind::Open, 1, 0, 0);
    o.flags = OpFlags::READ | OpFlags::WRITE;
    t.ops.push(o);
    let mut at = 0u64;
    for i in 0..400u64 {
        let len = 1 + (i * 7919) % 70_000;
        let file = (i % 3 == 0) as u32;
        let offset = if file == 0 {
            at
        } else {
            (i * 104_729) % 200_000
        };
        t.ops.push(op(0, OpKind::Write, file, offset, len));
        if i % 5 == 0 {
            t.ops.push(op(0, OpKind::Read, 1, (i * 31) % 100_000, 4096));
        }
        if file == 0 {
            at = if i % 7 == 0 { at / 2 } else { at + len };
        }
    }
    t.ops.push(op(0, OpKind::Close, 0, 0, 0));
    t.ops.push(op(0, OpKind::Close, 1, 0, 0));
    t
}

#[test]
fn data_made_ahead_is_byte_for_byte_what_the_stream_makes_itself() {
    let trace = uneven_writes_trace();
    let writes = trace.ops.iter().filter(|o| o.kind == OpKind::Write).count() as u64;
    for mode in [
        DataMode::Random,
        DataMode::Compress(50),
        DataMode::Dedupe(30),
    ] {
        let itself = run_ahead(&trace, spec(mode, false), Pacing::Afap, Some(false), |_| {});
        let ahead = run_ahead(&trace, spec(mode, false), Pacing::Afap, Some(true), |_| {});
        assert_eq!(itself.result.write_data_ahead, None, "{mode}");
        let counts = ahead.result.write_data_ahead.expect("made ahead");
        assert_eq!(
            counts.ready + counts.made_by_stream,
            writes,
            "{mode}: {counts:?}"
        );
        for name in ["a.bin", "b.bin"] {
            let want = std::fs::read(itself.dir.join(name)).unwrap();
            let got = std::fs::read(ahead.dir.join(name)).unwrap();
            assert_eq!(got.len(), want.len(), "{mode} {name}");
            assert!(got == want, "{mode} {name}: the bytes differ");
        }
        assert_eq!(ahead.result.bytes_written, itself.result.bytes_written);
    }
}

/// Writes of odd lengths, none over another (ops in flight together may complete in any
/// order), at queue depth `depth`.
fn disjoint_writes_trace(depth: u32) -> Trace {
    let mut t = Trace::new("Disjoint");
    t.header.queue_depth = Some(depth);
    t.files.push(file(0, "a.bin", 0, false, Prepare::Copy));
    t.ops.push(op(0, OpKind::Create, 0, 0, 0));
    let mut at = 0u64;
    for i in 0..300u64 {
        let len = 1 + (i * 7919) % 200_000;
        t.ops.push(op(0, OpKind::Write, 0, at, len));
        at += len + i % 3 * 4096;
    }
    t.ops.push(op(0, OpKind::Close, 0, 0, 0));
    t
}

#[test]
fn data_made_ahead_at_queue_depth_8_is_what_one_op_at_a_time_makes() {
    let one = disjoint_writes_trace(1);
    let eight = disjoint_writes_trace(8);
    let data = spec(DataMode::Random, false);
    let itself = run_ahead(&one, data, Pacing::Afap, Some(false), |_| {});
    let queued = run_ahead(&eight, data, Pacing::Afap, Some(false), |_| {});
    let ahead = run_ahead(&eight, data, Pacing::Afap, Some(true), |_| {});
    assert_eq!(queued.result.write_data_ahead, None);
    let counts = ahead
        .result
        .write_data_ahead
        .expect("made ahead at depth 8");
    assert_eq!(counts.ready + counts.made_by_stream, 300, "{counts:?}");
    let want = std::fs::read(itself.dir.join("a.bin")).unwrap();
    for (how, ran) in [("queued", &queued), ("queued, made ahead", &ahead)] {
        let got = std::fs::read(ran.dir.join("a.bin")).unwrap();
        assert_eq!(got.len(), want.len(), "{how}");
        assert!(got == want, "{how}: the bytes differ from one op at a time");
        assert_eq!(
            ran.result.bytes_written, itself.result.bytes_written,
            "{how}"
        );
    }
}

#[test]
fn data_is_not_made_ahead_with_verify_or_zeros() {
    let trace = uneven_writes_trace();
    for data in [spec(DataMode::Random, true), spec(DataMode::Zero, false)] {
        let ran = run_ahead(&trace, data, Pacing::Afap, Some(true), |_| {});
        assert_eq!(ran.result.write_data_ahead, None, "{data:?}");
    }
}

#[test]
fn a_measured_copy_writes_as_many_distinct_blocks_as_it_writes() {
    let params = naslab_workload::GenParams {
        seed: 1,
        scale: 0.02,
    };
    let trace = naslab_workload::generate("FileCopyToNAS", &params).unwrap();
    let ran = run(&trace, spec(DataMode::Random, false), Pacing::Afap, |_| {});
    let written = ran.result.bytes_written as usize;
    assert!(written > 10 << 20, "{written} bytes written");
    let mut files = 0;
    let mut all = Vec::new();
    for e in walk(&ran.dir) {
        let bytes = std::fs::read(&e).unwrap();
        all.extend_from_slice(&bytes);
        files += 1;
    }
    assert_eq!(files, 1, "one file copied");
    assert_eq!(all.len(), written);
    assert_eq!(distinct(&all), written / BLOCK);
    assert!(zstd_ratio(&all) >= 0.99);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn compress_50_compresses_to_half_and_zero_is_zeros() {
    let ran = run(
        &content_trace(),
        spec(DataMode::Compress(50), false),
        Pacing::Afap,
        |_| {},
    );
    for name in ["in/copied.bin", "new.bin"] {
        let bytes = std::fs::read(ran.dir.join(name)).unwrap();
        let ratio = zstd_ratio(&bytes);
        assert!(
            (ratio - 0.5).abs() <= 0.025,
            "{name}: compress:50 gives zstd ratio {ratio:.4}"
        );
        assert_eq!(distinct(&bytes), bytes.len() / BLOCK, "still unique");
    }
    let ran = run(
        &content_trace(),
        spec(DataMode::Zero, false),
        Pacing::Afap,
        |_| {},
    );
    for name in ["in/copied.bin", "in/streamed.bin", "new.bin"] {
        let bytes = std::fs::read(ran.dir.join(name)).unwrap();
        assert!(!bytes.is_empty(), "{name} is empty");
        assert!(bytes.iter().all(|&b| b == 0), "{name} holds non-zero bytes");
    }
}

#[test]
fn dedupe_gives_its_share_of_duplicate_blocks() {
    for pct in [25u8, 60] {
        let ran = run(
            &content_trace(),
            spec(DataMode::Dedupe(pct), false),
            Pacing::Afap,
            |_| {},
        );
        for name in ["in/copied.bin", "in/streamed.bin", "new.bin"] {
            let bytes = std::fs::read(ran.dir.join(name)).unwrap();
            let n = bytes.len() / BLOCK;
            // The duplicates are all one block, so distinct = unique + 1.
            let duplicates = n - (distinct(&bytes) - 1);
            let share = duplicates as f64 / n as f64;
            assert!(
                (share - pct as f64 / 100.0).abs() <= 0.01,
                "{name}: dedupe:{pct} gave {share:.4} duplicates"
            );
        }
    }
}

/// Waits until `path` holds at least `len` bytes, then a little more so the write that
/// made it has finished.
fn wait_for(path: &Path, len: u64) {
    let start = Instant::now();
    while std::fs::metadata(path).map(|m| m.len()).unwrap_or(0) < len {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{path:?} never grew"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(100));
}

fn write_at(path: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.write_all_at(bytes, offset).unwrap();
}

fn read_at(path: &Path, offset: u64, len: usize) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path).unwrap();
    let mut b = vec![0u8; len];
    f.read_exact_at(&mut b, offset).unwrap();
    b
}

/// A prepared file, and a new one written at once and read back `gap_s` seconds later.
fn damage_trace(name: &str, gap_s: u64) -> Trace {
    let mut t = Trace::new(name);
    t.files
        .push(file(1, "a.bin", 64 << 10, true, Prepare::Copy));
    t.files.push(file(2, "b.bin", 0, false, Prepare::Copy));
    t.ops.push(op(0, OpKind::Create, 2, 0, 0));
    t.ops.push(op(0, OpKind::Write, 2, 0, 16 << 10));
    t.ops.push(op(0, OpKind::Fsync, 2, 0, 0));
    t.ops.push(op(0, OpKind::Close, 2, 0, 0));
    let later = gap_s * 1_000_000;
    let mut o = op(later, OpKind::Open, 2, 0, 0);
    o.flags = OpFlags::READ;
    t.ops.push(o);
    t.ops.push(op(later, OpKind::Read, 2, 0, 16 << 10));
    t.ops.push(op(later, OpKind::Close, 2, 0, 0));
    t
}

/// Damages blocks 1 to 3 of b.bin: half of block 1 zeroed (torn), block 2 replaced by a
/// prepared block of a.bin (misplaced), block 3 overwritten with noise (corrupt).
fn damage(dir: &Path) {
    let b = dir.join("b.bin");
    wait_for(&b, 16 << 10);
    write_at(&b, BLOCK as u64 + 2048, &[0u8; 2048]);
    let a0 = read_at(&dir.join("a.bin"), 0, BLOCK);
    write_at(&b, 2 * BLOCK as u64, &a0);
    let mut x = 0x1234_5678_9abc_def0u64;
    let noise: Vec<u8> = (0..BLOCK)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    write_at(&b, 3 * BLOCK as u64, &noise);
}

fn kinds(r: &IterationResult) -> Vec<(MismatchKind, u64, String)> {
    let v = r.verify.as_ref().expect("verified");
    v.mismatches
        .iter()
        .map(|m| (m.kind, m.offset, m.during.clone()))
        .collect()
}

#[test]
fn verify_catches_blocks_damaged_between_the_write_and_the_read_and_names_them() {
    let ran = run(
        &damage_trace("Damage", 2),
        spec(DataMode::Random, true),
        Pacing::Original,
        |d| damage(&d),
    );
    let v = ran.result.verify.clone().unwrap();
    // Each damaged block is found by the workload's read and again by the read-back.
    let mut want = Vec::new();
    for during in ["read", "read-back"] {
        want.push((MismatchKind::TornWrite, 4096, during.to_string()));
        want.push((MismatchKind::MisplacedWrite, 8192, during.to_string()));
        want.push((MismatchKind::Corrupt, 12288, during.to_string()));
    }
    assert_eq!(kinds(&ran.result), want, "{v:#?}");
    assert_eq!(
        (
            v.torn_writes,
            v.misplaced_writes,
            v.corrupt,
            v.lost_writes,
            v.stale_reads
        ),
        (2, 2, 2, 0, 0)
    );
    let m = &v.mismatches[1];
    assert_eq!(m.file, "b.bin");
    assert!(
        m.expected.contains("block 2 (offset 8192) of 'b.bin'"),
        "{}",
        m.expected
    );
    assert!(
        m.found.contains("block 0 (offset 0) of 'a.bin', prepared"),
        "{}",
        m.found
    );
    // The prepared file was read back whole and found intact.
    assert!(v.read_back_bytes >= (64 << 10) + (16 << 10), "{v:?}");
}

#[test]
fn verify_names_an_older_version_put_back_a_lost_write() {
    // b.bin's two blocks are written, then written over a second later; the first
    // version of block 1 is put back before the read.
    let mut t = Trace::new("Lost");
    t.files.push(file(2, "b.bin", 0, false, Prepare::Copy));
    t.ops.push(op(0, OpKind::Create, 2, 0, 0));
    t.ops.push(op(0, OpKind::Write, 2, 0, 8 << 10));
    t.ops.push(op(0, OpKind::Fsync, 2, 0, 0));
    t.ops.push(op(1_000_000, OpKind::Write, 2, 0, 8 << 10));
    t.ops.push(op(1_000_000, OpKind::Fsync, 2, 0, 0));
    t.ops.push(op(1_000_000, OpKind::Close, 2, 0, 0));
    let mut o = op(3_000_000, OpKind::Open, 2, 0, 0);
    o.flags = OpFlags::READ;
    t.ops.push(o);
    t.ops.push(op(3_000_000, OpKind::Read, 2, 0, 8 << 10));
    t.ops.push(op(3_000_000, OpKind::Close, 2, 0, 0));
    let ran = run(&t, spec(DataMode::Random, true), Pacing::Original, |dir| {
        let b = dir.join("b.bin");
        wait_for(&b, 8 << 10);
        let first = read_at(&b, BLOCK as u64, BLOCK);
        let start = Instant::now();
        while read_at(&b, BLOCK as u64, BLOCK) == first {
            assert!(start.elapsed() < Duration::from_secs(20), "never rewritten");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(100));
        write_at(&b, BLOCK as u64, &first);
    });
    let v = ran.result.verify.clone().unwrap();
    assert_eq!(
        kinds(&ran.result),
        vec![
            (MismatchKind::LostWrite, 4096, "read".to_string()),
            (MismatchKind::LostWrite, 4096, "read-back".to_string())
        ],
        "{v:#?}"
    );
    assert!(v.mismatches[0].found.contains("an older version"));
}

#[test]
fn verify_finds_nothing_wrong_in_an_honest_run_of_every_op() {
    // Partial-block writes, appends past a hole, a truncate, a rename and an unlink:
    // every read and the read-back must match what was written.
    let mut t = Trace::new("Honest");
    t.files.push(file(1, "p.bin", 100_000, true, Prepare::Copy));
    t.files.push(file(2, "n.bin", 0, false, Prepare::Copy));
    t.files.push(file(3, "m.bin", 0, false, Prepare::Copy));
    t.files.push(file(4, "gone.bin", 0, false, Prepare::Copy));
    let mut o = op(0, OpKind::Open, 1, 0, 0);
    o.flags = OpFlags::READ | OpFlags::WRITE;
    t.ops.push(o);
    t.ops.push(op(0, OpKind::Write, 1, 5000, 3000));
    t.ops.push(op(0, OpKind::Read, 1, 0, 100_000));
    t.ops.push(op(0, OpKind::Truncate, 1, 70_001, 0));
    t.ops.push(op(0, OpKind::Write, 1, 90_000, 10));
    t.ops.push(op(0, OpKind::Read, 1, 60_000, 40_000));
    t.ops.push(op(0, OpKind::Close, 1, 0, 0));
    t.ops.push(op(0, OpKind::Create, 2, 0, 0));
    t.ops.push(op(0, OpKind::Write, 2, 10, 9000));
    t.ops.push(op(0, OpKind::Write, 2, 20_000, 4096));
    t.ops.push(op(0, OpKind::Close, 2, 0, 0));
    let mut rn = op(0, OpKind::Rename, 2, 0, 0);
    rn.to = Some(3);
    t.ops.push(rn);
    let mut o = op(0, OpKind::Open, 3, 0, 0);
    o.flags = OpFlags::READ;
    t.ops.push(o);
    t.ops.push(op(0, OpKind::Read, 3, 0, 30_000));
    t.ops.push(op(0, OpKind::Close, 3, 0, 0));
    t.ops.push(op(0, OpKind::Create, 4, 0, 0));
    t.ops.push(op(0, OpKind::Write, 4, 0, 4096));
    t.ops.push(op(0, OpKind::Close, 4, 0, 0));
    t.ops.push(op(0, OpKind::Unlink, 4, 0, 0));
    for mode in [DataMode::Random, DataMode::Compress(40)] {
        let ran = run(&t, spec(mode, true), Pacing::Afap, |_| {});
        let v = ran.result.verify.clone().unwrap();
        assert_eq!(v.total(), 0, "{mode}: {v:#?}");
        assert_eq!(
            v.reads_checked,
            3 + 2,
            "three reads, then one per file read back"
        );
        assert_eq!(
            v.read_back_bytes,
            90_010 + 24_096,
            "p.bin and m.bin read back whole"
        );
    }
}
