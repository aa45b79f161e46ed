//! `--verify` meets a real stale cache: on a loop-mounted ext4, a block's older version
//! is put in the file's page cache while the disk beneath holds the current one (written
//! to the loop device directly, past the file system). The workload's read gets the
//! cached old copy; naslab reads the block again after dropping the file's cached pages,
//! gets the right one from the disk, and must call it a stale read, not a lost write.
//! Needs root (loop device, mount): skipped with a note otherwise, failed when
//! NASLAB_REQUIRE_ROOT=1.

#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use naslab_engine::{
    DataMode, DataSpec, IterationSpec, Pacing, Progress, ReplayOptions, compile,
    records_from_trace, run_iteration,
};
use naslab_layout::{FsKind, ScratchFs};
use naslab_results::{CacheMode, MismatchKind};
use naslab_targets::{PosixTarget, Sandbox};
use naslab_trace::{FileDecl, Op, OpFlags, OpKind, Trace};

const BLOCK: u64 = 4096;

fn sh(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Where a file's logical block `block` lies on the device, in bytes, from filefrag's
/// extent list (`ext: logical_start.. logical_end: physical_start.. physical_end: ...`,
/// in file-system blocks, 4 KiB here).
fn physical_offset(file: &Path, block: u64) -> u64 {
    let out = sh("filefrag", &["-v", file.to_str().unwrap()]);
    assert!(out.contains(&format!("blocks of {BLOCK} bytes")), "{out}");
    for line in out.lines() {
        let f: Vec<&str> = line
            .split(|c: char| c == ':' || c.is_whitespace() || c == '.')
            .filter(|s| !s.is_empty())
            .collect();
        // ext, logical start, logical end, physical start, physical end, length, ...
        if f.len() >= 6 && f[0].chars().all(|c| c.is_ascii_digit()) {
            let (l0, l1, p0) = (
                f[1].parse::<u64>(),
                f[2].parse::<u64>(),
                f[3].parse::<u64>(),
            );
            if let (Ok(l0), Ok(l1), Ok(p0)) = (l0, l1, p0)
                && (l0..=l1).contains(&block)
            {
                return (p0 + block - l0) * BLOCK;
            }
        }
    }
    panic!("filefrag shows no extent for block {block}:\n{out}");
}

/// Writes one block to the device itself at `offset`, with O_DIRECT: past the file
/// system, its page cache and the device's own.
fn write_device(dev: &Path, offset: u64, bytes: &[u8]) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut buf = naslab_engine::buffer::AlignedBuf::zeroed(BLOCK as usize);
    buf.as_mut_slice().copy_from_slice(bytes);
    let f = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(dev)
        .unwrap();
    f.write_all_at(buf.as_slice(), offset).unwrap();
    f.sync_all().unwrap();
}

/// Drops a file's cached pages (they are clean: naslab synced its writes).
fn drop_pages(path: &Path) {
    let f = File::open(path).unwrap();
    // SAFETY: the descriptor is open for the call.
    let e = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(e, 0);
}

fn read_block(path: &Path, block: u64) -> Vec<u8> {
    let mut b = vec![0u8; BLOCK as usize];
    File::open(path)
        .unwrap()
        .read_exact_at(&mut b, block * BLOCK)
        .unwrap();
    b
}

fn op(t_us: u64, kind: OpKind, offset: u64, len: u64) -> Op {
    let mut o = Op::new(0, t_us, kind, 1);
    o.offset = offset;
    o.len = len;
    o.flags = match kind {
        OpKind::Create => OpFlags::WRITE,
        OpKind::Open => OpFlags::READ,
        _ => OpFlags::default(),
    };
    o
}

/// b.bin: two blocks written and synced, written over and synced a second later, then
/// read three seconds in.
fn trace() -> Trace {
    let mut t = Trace::new("Stale");
    t.files.push(FileDecl::file(1, "b.bin", 0, false));
    t.ops.push(op(0, OpKind::Create, 0, 0));
    t.ops.push(op(0, OpKind::Write, 0, 2 * BLOCK));
    t.ops.push(op(0, OpKind::Fsync, 0, 0));
    t.ops.push(op(1_000_000, OpKind::Write, 0, 2 * BLOCK));
    t.ops.push(op(1_000_000, OpKind::Fsync, 0, 0));
    t.ops.push(op(1_000_000, OpKind::Close, 0, 0));
    t.ops.push(op(3_000_000, OpKind::Open, 0, 0));
    t.ops.push(op(3_000_000, OpKind::Read, 0, 2 * BLOCK));
    t.ops.push(op(3_000_000, OpKind::Close, 0, 0));
    t
}

/// Between the rewrite and the read: block 1's first version into the file's page
/// cache, its current version back on the disk beneath.
fn make_cache_stale(b: &Path, dev: &Path) {
    let start = Instant::now();
    while std::fs::metadata(b).map(|m| m.len()).unwrap_or(0) < 2 * BLOCK {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "b.bin never written"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(200));
    let first = read_block(b, 1);
    while read_block(b, 1) == first {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "never written over"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Past the rewrite's fsync (it follows the write at once).
    std::thread::sleep(Duration::from_millis(300));
    let current = read_block(b, 1);
    let at = physical_offset(b, 1);
    write_device(dev, at, &first);
    drop_pages(b);
    assert!(read_block(b, 1) == first, "the old version is now cached");
    write_device(dev, at, &current);
    assert!(
        read_block(b, 1) == first,
        "the cache still serves the old one"
    );
}

#[test]
fn an_old_copy_in_a_cache_is_a_stale_read_not_a_lost_write() {
    if !naslab_test_support::root_or_skip("a loop device and a mount") {
        return;
    }
    for tool in ["mkfs.ext4", "losetup", "filefrag"] {
        if naslab_test_support::tool_or_skip(tool).is_none() {
            return;
        }
    }
    // 512 MiB (sparse): a smaller ext4 gets 1 KiB blocks, and BLOCK is 4 KiB.
    let scratch = ScratchFs::new(512 << 20, None).expect("a loop device");
    let fs = scratch.format(FsKind::Ext4).expect("a fresh ext4");
    let spool = tempfile::tempdir().unwrap();
    let t = trace();
    let plan = compile(Path::new("t.jsonl"), records_from_trace(&t), spool.path()).unwrap();
    let sandbox = Sandbox::open(fs.path()).unwrap();
    let target = PosixTarget::new(sandbox.clone());
    let progress = Progress::default();
    let spec = IterationSpec {
        plan: &plan,
        target: &target,
        cache: CacheMode::Keep,
        replay: ReplayOptions {
            pacing: Pacing::Original,
            data: DataSpec {
                mode: DataMode::Random,
                seed: 0x57a1e,
                verify: true,
            },
            ..ReplayOptions::default()
        },
        spool_dir: spool.path(),
        records_path: None,
        progress: &progress,
        drop_all_caches: false,
        record_sink: None,
    };
    let b = sandbox.root().join("Stale/b.bin");
    let dev = scratch.device().to_path_buf();
    let r = std::thread::scope(|s| {
        s.spawn(move || make_cache_stale(&b, &dev));
        run_iteration(&spec, 1).unwrap()
    });
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    let v = r.verify.expect("verified");
    let got: Vec<(MismatchKind, u64, &str)> = v
        .mismatches
        .iter()
        .map(|m| (m.kind, m.offset, m.during.as_str()))
        .collect();
    // Only the workload's read saw the old copy; the read-back found the disk right.
    assert_eq!(
        got,
        vec![(MismatchKind::StaleRead, BLOCK, "read")],
        "{v:#?}"
    );
    assert!(
        v.mismatches[0].found.contains("read again, it was right"),
        "{}",
        v.mismatches[0].found
    );
    assert_eq!((v.stale_reads, v.lost_writes, v.corrupt), (1, 0, 0));
    drop(sandbox);
    drop(target);
}
