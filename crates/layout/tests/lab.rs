//! The allocation lab: what each pattern issues, and the layouts that do not depend on
//! chance. The file-system cases need root and loop devices and say when they are skipped.

#![cfg(unix)]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::FileExt;
use std::sync::atomic::AtomicBool;

use naslab_layout::{FsKind, Pattern, PatternOptions, ScratchFs, analyze_file, run_pattern};
use naslab_test_support::{root_or_skip, tool_or_skip};

fn small() -> PatternOptions {
    PatternOptions {
        size_bytes: 2000 * 9123,
        ..PatternOptions::default()
    }
}

#[test]
fn each_pattern_issues_the_calls_and_bytes_it_describes() {
    let dir = tempfile::tempdir().unwrap();
    let o = small();
    let cancel = AtomicBool::new(false);
    let n = o.blocks();
    let bs = o.block_bytes;
    for p in Pattern::ALL {
        let r = run_pattern(dir.path(), p, &o, &cancel).unwrap();
        let expect = match p {
            Pattern::Skip => Some((n, n)),
            Pattern::Clear => Some((2 * n, n * bs)),
            Pattern::Fallocate => Some((2 * n, n)),
            Pattern::FallocatePlus1 => Some((n, 0)),
            Pattern::Unbuffered => Some((n, n * bs)),
            Pattern::Hints | Pattern::HintsFix => None,
        };
        if let Some((calls, bytes)) = expect {
            assert_eq!((r.calls, r.bytes_written), (calls, bytes), "{p}");
        }
        assert_eq!(r.layout.size_bytes, n * bs, "{p}: the file's final size");
        assert!(r.seconds > 0.0);
        // The pattern's file is gone afterwards.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{p}");
    }
}

#[test]
fn hints_run_ahead_of_the_data_and_the_fix_fills_the_gaps_with_zeros() {
    let dir = tempfile::tempdir().unwrap();
    let o = PatternOptions {
        size_bytes: 4 << 20,
        hint_lead_bytes: 1 << 20,
        ..PatternOptions::default()
    };
    let cancel = AtomicBool::new(false);
    let sparse = run_pattern(dir.path(), Pattern::Hints, &o, &cancel).unwrap();
    let fixed = run_pattern(dir.path(), Pattern::HintsFix, &o, &cancel).unwrap();
    // Hints every 128 KiB up to 1 MiB past the last data write (which starts at 4 MiB - 64 KiB).
    let hints = (4 << 20) / (128 << 10) + (1 << 20) / (128 << 10) - 1;
    let data_writes = (4 << 20) / (64 << 10);
    assert_eq!(sparse.bytes_written, (4 << 20) + hints);
    assert_eq!(
        sparse.calls,
        hints + data_writes + 1,
        "hints, data writes, the final truncate"
    );
    // With the fix every hint is within 2 MiB of end of file, so the gaps are zero-filled.
    assert!(fixed.bytes_written > sparse.bytes_written);
    assert_eq!(sparse.layout.size_bytes, 4 << 20);
    assert_eq!(fixed.layout.size_bytes, 4 << 20);
}

#[test]
fn a_raised_cancel_flag_stops_a_pattern_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = AtomicBool::new(true);
    let e = run_pattern(dir.path(), Pattern::Clear, &small(), &cancel).unwrap_err();
    assert!(e.to_string().contains("interrupted"), "{e}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

fn scratch(tools: &[&str]) -> Option<ScratchFs> {
    if !root_or_skip("a scratch file system (loop devices)") {
        return None;
    }
    if tools.iter().any(|t| tool_or_skip(t).is_none()) {
        return None;
    }
    Some(ScratchFs::new(1 << 30, None).expect("a loop image"))
}

#[test]
fn a_512_mib_file_streamed_onto_ext4_with_delayed_allocation_lands_in_a_handful_of_extents() {
    let Some(fs) = scratch(&["mkfs.ext4"]) else {
        return;
    };
    let m = fs.format(FsKind::Ext4).unwrap();
    let path = m.path().join("stream");
    let f = std::fs::File::create(&path).unwrap();
    let chunk = vec![0x5au8; 1 << 20];
    for i in 0..512u64 {
        f.write_all_at(&chunk, i << 20).unwrap();
    }
    f.sync_all().unwrap();
    let l = analyze_file(&path, true).unwrap();
    println!(
        "512 MiB stream on ext4: {} extents, ideal {:?}, score {:?}",
        l.extents,
        l.ideal_extents,
        l.score()
    );
    assert_eq!(l.ideal_extents, Some(4), "128 MiB per ext4 extent");
    assert!(l.extents <= 8, "{l:?}");
    assert_eq!((l.unwritten_extents, l.delalloc_extents), (0, 0));
    assert!(l.score().unwrap() > 0.999, "{l:?}");
}

#[test]
fn skip_leaves_a_block_per_write_whose_gaps_mirror_the_holes_so_filefrag_sees_few_extents() {
    let Some(fs) = scratch(&["mkfs.ext4"]) else {
        return;
    };
    let o = small();
    let cancel = AtomicBool::new(false);
    for case in [FsKind::Ext4, FsKind::Ext4NoDelalloc] {
        let m = fs.format(case).unwrap();
        let r = run_pattern(m.path(), Pattern::Skip, &o, &cancel).unwrap();
        let l = &r.layout;
        println!(
            "skip on {case}: {} extents, {} physical runs, {} records",
            l.extents, l.physical_runs, l.fiemap_records
        );
        // Every 1-byte write got a block of its own, between holes...
        assert_eq!(l.fiemap_records, o.blocks(), "{case}");
        assert!(l.physical_runs * 100 >= o.blocks() * 99, "{case}: {l:?}");
        // ...placed as far apart on disk as in the file, which filefrag does not count.
        assert!(l.extents <= 10, "{case}: {l:?}");
    }
}

#[test]
fn files_growing_together_stay_whole_with_delayed_allocation_and_split_without() {
    let Some(fs) = scratch(&["mkfs.ext4"]) else {
        return;
    };
    let mut per_case = Vec::new();
    for case in [FsKind::Ext4, FsKind::Ext4NoDelalloc] {
        let m = fs.format(case).unwrap();
        let files: Vec<std::fs::File> = (0..4)
            .map(|i| std::fs::File::create(m.path().join(format!("f{i}"))).unwrap())
            .collect();
        let chunk = vec![0x33u8; 64 << 10];
        for k in 0..800u64 {
            for f in &files {
                f.write_all_at(&chunk, k * (64 << 10)).unwrap();
            }
        }
        let mut extents = 0;
        for (i, f) in files.iter().enumerate() {
            f.sync_all().unwrap();
            extents += analyze_file(&m.path().join(format!("f{i}")), true)
                .unwrap()
                .extents;
        }
        println!("four 50 MiB files written together on {case}: {extents} extents");
        per_case.push(extents);
    }
    assert!(per_case[0] <= 8, "{per_case:?}");
    assert!(per_case[1] >= 5 * per_case[0], "{per_case:?}");
}

#[test]
fn fallocate_plus_1_leaves_only_unwritten_extents_and_clear_none() {
    let Some(fs) = scratch(&["mkfs.ext4", "mkfs.xfs"]) else {
        return;
    };
    let o = small();
    let cancel = AtomicBool::new(false);
    for case in [FsKind::Ext4, FsKind::Xfs] {
        let m = fs.format(case).unwrap();
        let pre = run_pattern(m.path(), Pattern::FallocatePlus1, &o, &cancel).unwrap();
        let clear = run_pattern(m.path(), Pattern::Clear, &o, &cancel).unwrap();
        assert!(pre.layout.unwritten_extents > 0, "{case}");
        assert_eq!(
            pre.layout.unwritten_extents, pre.layout.fiemap_records,
            "{case}"
        );
        assert_eq!(clear.layout.unwritten_extents, 0, "{case}");
    }
}
