//! Every generated trace obeys the rules the replay engine checks, at several scales, and
//! generation is deterministic.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use naslab_trace::{FileKind, OpKind, Prepare, Trace, check_rel_path};
use naslab_workload::{GenParams, catalog, generate};

/// Checks one trace; returns the first broken rule.
fn check(t: &Trace) -> Result<(), String> {
    if t.header.description.as_deref().unwrap_or("").is_empty() {
        return Err("no description".into());
    }
    if !t
        .header
        .generator
        .as_deref()
        .unwrap_or("")
        .starts_with("naslab-workload naspt/")
    {
        return Err("no generator".into());
    }
    let mut by_id = HashMap::new();
    let mut by_path = HashMap::new();
    for f in &t.files {
        check_rel_path(&f.path)?;
        if by_id.insert(f.id, f).is_some() {
            return Err(format!("id {} declared twice", f.id));
        }
        if by_path.insert(f.path.as_str(), f).is_some() {
            return Err(format!("path {} declared twice", f.path));
        }
        if !f.exists && f.size != 0 {
            return Err(format!(
                "{} is created by the test but has a prepared size",
                f.path
            ));
        }
    }
    // Current size of every file that exists now; directories made so far.
    let mut size: HashMap<u32, u64> = t
        .files
        .iter()
        .filter(|f| f.exists && f.kind == FileKind::File)
        .map(|f| (f.id, f.size))
        .collect();
    let mut made: HashSet<u32> = HashSet::new();
    let mut open: HashMap<u32, HashSet<u32>> = HashMap::new();
    let mut last_t: HashMap<u32, u64> = HashMap::new();
    let mut touched = HashSet::new();
    let parent_ok = |path: &str, made: &HashSet<u32>| -> bool {
        match path.rsplit_once('/') {
            None => true,
            Some((parent, _)) => match by_path.get(parent) {
                Some(d) if d.kind == FileKind::Dir && !d.exists => made.contains(&d.id),
                Some(d) => d.kind == FileKind::Dir,
                None => true,
            },
        }
    };
    for (i, op) in t.ops.iter().enumerate() {
        let at = format!("op {i} ({} of file {})", op.kind, op.file);
        if op.stream != 0 {
            return Err(format!("{at}: single-user workloads use stream 0"));
        }
        let prev = last_t.entry(op.stream).or_insert(0);
        if op.t_us < *prev {
            return Err(format!("{at}: time goes back"));
        }
        *prev = op.t_us;
        let decl = by_id
            .get(&op.file)
            .ok_or(format!("{at}: undeclared file"))?;
        touched.insert(op.file);
        let handles = open.entry(op.stream).or_default();
        if op.kind.needs_handle() && !handles.contains(&op.file) {
            return Err(format!("{at}: the file is not open in this stream"));
        }
        match op.kind {
            OpKind::Open => {
                if !size.contains_key(&op.file) {
                    return Err(format!("{at}: opens a file that does not exist yet"));
                }
                if !handles.insert(op.file) {
                    return Err(format!("{at}: already open"));
                }
            }
            OpKind::Create => {
                if decl.exists || size.contains_key(&op.file) {
                    return Err(format!("{at}: creates a file that exists"));
                }
                if !parent_ok(&decl.path, &made) {
                    return Err(format!("{at}: its directory is not made yet"));
                }
                size.insert(op.file, 0);
                handles.insert(op.file);
            }
            OpKind::Mkdir => {
                if decl.kind != FileKind::Dir || decl.exists || !made.insert(op.file) {
                    return Err(format!("{at}: mkdir of an existing or non-directory entry"));
                }
                if !parent_ok(&decl.path, &made) {
                    return Err(format!("{at}: its parent is not made yet"));
                }
            }
            OpKind::Close => {
                handles.remove(&op.file);
            }
            OpKind::Read => {
                let s = size[&op.file];
                if op.offset + op.len > s {
                    return Err(format!(
                        "{at}: reads [{}, {}) past the size {s}",
                        op.offset,
                        op.offset + op.len
                    ));
                }
            }
            OpKind::Write => {
                let s = size.get_mut(&op.file).ok_or(format!("{at}: no size"))?;
                *s = (*s).max(op.offset + op.len);
            }
            OpKind::Truncate => {
                size.insert(op.file, op.len);
            }
            OpKind::Fsync | OpKind::Fallocate => {}
            other => return Err(format!("{at}: unexpected op {other}")),
        }
    }
    for (stream, handles) in open {
        if !handles.is_empty() {
            return Err(format!("stream {stream} ends with files open: {handles:?}"));
        }
    }
    if touched.len() != t.files.len() {
        return Err(format!(
            "{} of {} declared entries are never used",
            t.files.len() - touched.len(),
            t.files.len()
        ));
    }
    for f in &t.files {
        if !f.exists && f.kind == FileKind::File && !size.contains_key(&f.id) {
            return Err(format!(
                "{} is declared as created but never created",
                f.path
            ));
        }
    }
    Ok(())
}

fn generation(name: &str, seed: u64, scale: f64) -> Trace {
    generate(name, &GenParams { seed, scale }).expect("generates")
}

#[test]
fn every_workload_obeys_the_rules_at_every_scale() {
    for w in catalog() {
        for scale in [1.0, 0.01, 0.001] {
            let t = generation(w.name, 1, scale);
            assert_eq!(t.header.workload, w.name);
            if let Err(e) = check(&t) {
                panic!("{} at scale {scale}: {e}", w.name);
            }
        }
    }
}

#[test]
fn media_files_are_streamed_and_small_files_copied() {
    for w in catalog() {
        let t = generation(w.name, 1, 1.0);
        for f in t.files.iter().filter(|f| f.exists) {
            // Videos are media whatever their size; other files are media from 1 GB.
            let want = if f.size >= 1_000_000_000 || f.path.ends_with(".dvr-ms") {
                Prepare::Stream
            } else {
                Prepare::Copy
            };
            assert_eq!(f.prepare, want, "{}: {}", w.name, f.path);
        }
    }
}

#[test]
fn scaling_keeps_the_file_set_and_shrinks_the_bytes() {
    for w in catalog() {
        let full = generation(w.name, 7, 1.0);
        let small = generation(w.name, 7, 0.01);
        assert_eq!(full.files.len(), small.files.len(), "{}", w.name);
        for (a, b) in full.files.iter().zip(&small.files) {
            assert_eq!(
                (&a.path, a.kind, a.exists, a.prepare),
                (&b.path, b.kind, b.exists, b.prepare),
                "{}",
                w.name
            );
            assert!(b.size <= a.size);
        }
        let bytes = |t: &Trace| -> u64 {
            t.ops
                .iter()
                .filter(|o| matches!(o.kind, OpKind::Read | OpKind::Write))
                .map(|o| o.len)
                .sum()
        };
        let prepared =
            |t: &Trace| -> u64 { t.files.iter().filter(|f| f.exists).map(|f| f.size).sum() };
        let (bf, bs) = (bytes(&full), bytes(&small));
        assert!(bs * 20 < bf, "{}: {bs} bytes at 0.01 vs {bf} at 1", w.name);
        // Small enough to run the whole suite in minutes: under 40 MB moved and prepared each.
        assert!(
            bs < 40_000_000 && prepared(&small) < 40_000_000,
            "{}: {bs} bytes at 0.01",
            w.name
        );
        // Op sizes do not grow or shrink with the scale; only how many there are.
        let max_len = |t: &Trace| t.ops.iter().map(|o| o.len).max().unwrap_or(0);
        assert!(max_len(&small) <= max_len(&full), "{}", w.name);
        if w.name.contains("Video") || w.name.starts_with("FileCopy") {
            assert_eq!(max_len(&full), max_len(&small), "{}", w.name);
        }
    }
}

#[test]
fn larger_scales_grow_the_bytes() {
    let one = generation("FileCopyFromNAS", 1, 1.0);
    let two = generation("FileCopyFromNAS", 1, 2.0);
    assert_eq!(two.files[0].size, 2 * one.files[0].size);
    assert!(check(&two).is_ok());
}

#[test]
fn the_same_seed_gives_the_same_trace_and_another_seed_another() {
    for w in catalog() {
        let a = generation(w.name, 42, 0.05);
        let b = generation(w.name, 42, 0.05);
        assert_eq!(a.to_bytes(), b.to_bytes(), "{}", w.name);
        let c = generation(w.name, 43, 0.05);
        assert_ne!(a.ops, c.ops, "{}: seed changes nothing", w.name);
    }
}

#[test]
fn traces_round_trip_through_the_format() {
    for w in catalog() {
        let t = generation(w.name, 3, 0.01);
        let bytes = t.to_bytes();
        let records =
            naslab_trace::read_all(std::path::Path::new("mem"), &bytes[..]).expect("reads back");
        assert_eq!(records.len(), 1 + t.files.len() + t.ops.len(), "{}", w.name);
        let d1 = naslab_workload::describe::describe(&t);
        let d2 = naslab_workload::describe::describe_records(records.into_iter());
        assert_eq!(d1, d2, "{}", w.name);
        let reader = naslab_trace::TraceReader::new("mem".into(), &bytes[..]);
        let d3 = naslab_workload::describe::try_describe_records(reader).expect("reads");
        assert_eq!(d1, d3, "{}", w.name);
    }
}

#[test]
fn the_whole_suite_generates_at_full_scale() {
    // How long it takes depends on the machine and its load: printed, not asserted.
    let start = Instant::now();
    let ops: usize = catalog()
        .iter()
        .map(|w| generation(w.name, 1, 1.0).ops.len())
        .sum();
    assert!(ops > 100_000);
    eprintln!(
        "{ops} ops generated in {:.2} s",
        start.elapsed().as_secs_f64()
    );
}

#[test]
fn the_checker_catches_broken_traces() {
    let good = generation("FileCopyFromNAS", 1, 0.01);
    assert!(check(&good).is_ok());
    let mut no_open = good.clone();
    no_open.ops.remove(0);
    assert!(check(&no_open).unwrap_err().contains("not open"));
    let mut past_end = good.clone();
    past_end.ops[1].offset = past_end.files[0].size;
    assert!(check(&past_end).unwrap_err().contains("past the size"));
    let mut left_open = good.clone();
    left_open.ops.pop();
    assert!(check(&left_open).unwrap_err().contains("open"));
    let mut back_in_time = good.clone();
    back_in_time.ops[2].t_us = 0;
    back_in_time.ops[1].t_us = 10;
    assert!(check(&back_in_time).unwrap_err().contains("time goes back"));

    let created = generation("FileCopyToNAS", 1, 0.01);
    assert!(check(&created).is_ok());
    let mut opened = created.clone();
    opened.ops[0].kind = OpKind::Open;
    assert!(check(&opened).unwrap_err().contains("does not exist"));
    let mut prepared = created.clone();
    prepared.files[0].exists = true;
    assert!(
        check(&prepared)
            .unwrap_err()
            .contains("creates a file that exists")
    );

    let tree = generation("DirectoryCopyToNAS", 1, 0.01);
    let mut no_mkdir = tree.clone();
    no_mkdir.ops.retain(|o| o.kind != OpKind::Mkdir);
    assert!(check(&no_mkdir).is_err());
}
