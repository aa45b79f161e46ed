//! naslab's extent counts against the real `filefrag`, file by file, on deliberately
//! fragmented files in fresh ext4, ext4 (nodelalloc), ext3, xfs and btrfs loop images.
//! Needs root and loop devices; without them it says it was skipped (.ci/run is root).

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use naslab_layout::{FsKind, ScratchFs, analyze_file};
use naslab_test_support::{root_or_skip, tool_or_skip};

const K: u64 = 1024;
const M: u64 = 1024 * K;

fn data(len: u64, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31) ^ seed | 1)
        .collect()
}

fn create(path: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .unwrap()
}

/// Two files growing at once, each write made durable before the other's: the case
/// delayed allocation cannot help with.
fn interleaved(dir: &Path) -> Vec<PathBuf> {
    let (pa, pb) = (dir.join("interleaved-a"), dir.join("interleaved-b"));
    let (a, b) = (create(&pa), create(&pb));
    let chunk = data(64 * K, 7);
    for i in 0..256 {
        a.write_all_at(&chunk, i * 64 * K).unwrap();
        a.sync_all().unwrap();
        b.write_all_at(&chunk, i * 64 * K).unwrap();
        b.sync_all().unwrap();
    }
    vec![pa, pb]
}

/// A written file with every other 256 KiB punched out (where the file system can punch).
fn punched(dir: &Path) -> Vec<PathBuf> {
    let p = dir.join("punched");
    let f = create(&p);
    f.write_all_at(&data(32 * M, 3), 0).unwrap();
    f.sync_all().unwrap();
    for i in (0..128).step_by(2) {
        // SAFETY: a valid descriptor and range.
        unsafe {
            libc::fallocate(
                f.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                (i * 256 * K) as i64,
                (256 * K) as i64,
            )
        };
    }
    f.sync_all().unwrap();
    vec![p]
}

/// One byte every 9123 bytes: sparse blocks whose gaps may mirror the holes on disk.
fn sparse(dir: &Path) -> Vec<PathBuf> {
    let p = dir.join("sparse");
    let f = create(&p);
    for i in 0..2000u64 {
        f.write_all_at(b"x", i * 9123 + 9122).unwrap();
    }
    f.sync_all().unwrap();
    vec![p]
}

/// Preallocated space written here and there: unwritten and written extents mixed.
fn prealloc_mixed(dir: &Path) -> Vec<PathBuf> {
    let p = dir.join("prealloc-mixed");
    let f = create(&p);
    // SAFETY: a valid descriptor and range.
    unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, (16 * M) as i64) };
    let block = data(4 * K, 9);
    for i in 0..256 {
        f.write_all_at(&block, i * 64 * K).unwrap();
    }
    f.sync_all().unwrap();
    vec![p]
}

/// 4 KiB blocks written in a scrambled order, synced every 16 writes.
fn shuffled(dir: &Path) -> Vec<PathBuf> {
    let p = dir.join("shuffled");
    let f = create(&p);
    let block = data(4 * K, 5);
    let n = 4096u64;
    // 1237 is odd, so i -> i * 1237 mod 4096 visits every block once.
    for i in 0..n {
        f.write_all_at(&block, ((i * 1237) % n) * 4 * K).unwrap();
        if i % 16 == 15 {
            f.sync_all().unwrap();
        }
    }
    f.sync_all().unwrap();
    vec![p]
}

/// Small posix_fallocate calls that do not end on block boundaries (the fallocate+1
/// pattern).
fn small_fallocates(dir: &Path) -> Vec<PathBuf> {
    let p = dir.join("small-fallocates");
    let f = create(&p);
    for i in 0..2000i64 {
        // SAFETY: a valid descriptor and range.
        unsafe { libc::posix_fallocate(f.as_raw_fd(), i * 9123, 9123) };
    }
    f.sync_all().unwrap();
    vec![p]
}

/// A file written start to end, an empty file and a tiny one.
fn plain(dir: &Path) -> Vec<PathBuf> {
    let big = dir.join("sequential");
    let f = create(&big);
    let chunk = data(M, 1);
    for i in 0..160 {
        f.write_all_at(&chunk, i * M).unwrap();
    }
    f.sync_all().unwrap();
    let empty = dir.join("empty");
    create(&empty);
    let tiny = dir.join("tiny");
    std::fs::write(
        &tiny,
        b"a hundred bytes or so, enough to need a block of its own somewhere on the disk...",
    )
    .unwrap();
    vec![big, empty, tiny]
}

/// `filefrag FILE`'s count and the number of rows `filefrag -v FILE` lists.
fn filefrag(tool: &Path, file: &Path) -> (u64, u64) {
    let out = Command::new(tool).arg(file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().last().unwrap_or("");
    let tail = line.rsplit(": ").next().unwrap_or("");
    let count: u64 = tail
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("cannot parse filefrag's '{line}'"));
    let out = Command::new(tool).arg("-v").arg(file).output().unwrap();
    let rows = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.split(':')
                .next()
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                && t.contains("..")
        })
        .count() as u64;
    (count, rows)
}

#[test]
fn extent_counts_equal_filefrags_on_ext4_xfs_and_btrfs() {
    if !root_or_skip("comparing with filefrag on loop devices") {
        return;
    }
    let Some(tool) = tool_or_skip("filefrag") else {
        return;
    };
    let scratch = ScratchFs::new(1 << 30, None).expect("a loop image");
    let builders: [fn(&Path) -> Vec<PathBuf>; 7] = [
        interleaved,
        punched,
        sparse,
        prealloc_mixed,
        shuffled,
        small_fallocates,
        plain,
    ];
    let mut compared = 0;
    let mut mismatches = Vec::new();
    println!(
        "{:<16} {:<18} {:>9} {:>9} {:>9} {:>9}",
        "fs", "file", "naslab", "filefrag", "records", "-v rows"
    );
    for case in FsKind::MADE {
        let (mkfs, _, _) = case.mkfs().expect("every made kind has its mkfs");
        if tool_or_skip(mkfs).is_none() {
            continue;
        }
        let mount = scratch.format(case).expect("mkfs and mount");
        let files: Vec<PathBuf> = builders.iter().flat_map(|b| b(mount.path())).collect();
        for f in &files {
            let ours = analyze_file(f, true).unwrap();
            let (count, rows) = filefrag(&tool, f);
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            println!(
                "{:<16} {:<18} {:>9} {:>9} {:>9} {:>9}",
                case.name(),
                name,
                ours.extents,
                count,
                ours.fiemap_records,
                rows
            );
            compared += 1;
            if ours.extents != count || ours.fiemap_records != rows {
                mismatches.push(format!(
                    "{case} {name}: naslab {} extents / {} records, filefrag {count} / {rows}",
                    ours.extents, ours.fiemap_records
                ));
            }
        }
    }
    println!("{compared} files compared, {} mismatches", mismatches.len());
    assert!(compared > 0);
    assert!(mismatches.is_empty(), "{mismatches:#?}");
}
