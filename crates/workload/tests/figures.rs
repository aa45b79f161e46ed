//! At scale 1, each workload's statistics (computed from the trace by `describe`) land close to
//! the published figures (NASPT paper, section 4.1, Table 1; see docs/workloads.md). Checked for
//! a few seeds, so the match does not hinge on one random draw.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use naslab_workload::describe::{Description, SizeBucket, describe};
use naslab_workload::{GenParams, generate};

const SEEDS: [u64; 3] = [1, 2, 3];
const MB: f64 = 1e6;
const GB: f64 = 1e9;

fn describe_all(name: &str) -> Vec<Description> {
    SEEDS
        .iter()
        .map(|&seed| describe(&generate(name, &GenParams { seed, scale: 1.0 }).expect("generates")))
        .collect()
}

/// `got` within `tol` (a fraction) of `want`.
fn near(what: &str, got: f64, want: f64, tol: f64) {
    assert!(
        (got - want).abs() <= want.abs() * tol,
        "{what}: {got} is not within {:.0}% of {want}",
        tol * 100.0
    );
}

/// `got` within `points` of `want` (for percentages).
fn near_pts(what: &str, got: f64, want: f64, points: f64) {
    assert!(
        (got - want).abs() <= points,
        "{what}: {got:.2} is not within {points} points of {want}"
    );
}

/// The rate the trace's timestamps imply: bytes read and written over its length (the
/// last op's time; the first is at 0), in MB/s, as Table 1 gives rates.
fn rate_mb_s(d: &Description) -> f64 {
    (d.bytes_read + d.bytes_written) as f64 / MB / (d.duration_us as f64 / 1e6)
}

/// Table 1's rates, which `--pace original` replays at: within 5 %.
#[test]
fn copies_and_content_creation_run_at_table_1_rates() {
    for (name, published) in [
        ("DirectoryCopyToNAS", 15.0),
        ("DirectoryCopyFromNAS", 13.0),
        ("FileCopyToNAS", 55.0),
        ("FileCopyFromNAS", 51.0),
        ("ContentCreation", 0.054),
    ] {
        for d in describe_all(name) {
            near(
                &format!("{name} rate (MB/s)"),
                rate_mb_s(&d),
                published,
                0.05,
            );
        }
    }
}

fn count(b: &[SizeBucket], label: &str) -> u64 {
    b.iter().find(|x| x.label == label).map_or(0, |x| x.count)
}

fn largest_bucket(b: &[SizeBucket]) -> &str {
    b.iter()
        .max_by_key(|x| x.count)
        .map_or("", |x| x.label.as_str())
}

#[test]
fn hd_video_1play() {
    for d in describe_all("HDVideo_1Play") {
        assert_eq!(d.files_declared, 1);
        near("bytes read", d.bytes_read as f64, 1.3 * GB, 0.1);
        assert_eq!(d.bytes_written, 0);
        near_pts("% sequential", d.sequential_pct, 99.5, 0.3);
        assert_eq!(d.median_read, Some(262_144.0));
        near(
            "duration (about ten minutes)",
            d.duration_us as f64 / 1e6,
            600.0,
            0.1,
        );
    }
}

#[test]
fn hd_video_2play() {
    for d in describe_all("HDVideo_2Play") {
        assert_eq!(d.files_declared, 2);
        near("bytes read", d.bytes_read as f64, 1.4 * GB, 0.1);
        near_pts("% sequential", d.sequential_pct, 18.0, 3.0);
        assert_eq!(d.median_read, Some(262_144.0));
        near(
            "duration (about six minutes)",
            d.duration_us as f64 / 1e6,
            360.0,
            0.1,
        );
    }
}

#[test]
fn hd_video_4play() {
    for d in describe_all("HDVideo_4Play") {
        assert_eq!(d.files_declared, 4);
        near("bytes read", d.bytes_read as f64, 1.3 * GB, 0.1);
        near_pts("% sequential", d.sequential_pct, 11.0, 3.0);
        near(
            "duration (3 min 45 s)",
            d.duration_us as f64 / 1e6,
            225.0,
            0.1,
        );
    }
}

#[test]
fn hd_video_1record() {
    for d in describe_all("HDVideo_1Record") {
        assert_eq!((d.files_declared, d.files_created), (1, 1));
        near("bytes written", d.bytes_written as f64, 1.6 * GB, 0.1);
        assert_eq!(d.bytes_read, 0);
        near_pts("% sequential", d.sequential_pct, 99.9, 0.1);
        assert_eq!(d.median_write, Some(262_144.0));
        near(
            "duration (about fifteen minutes)",
            d.duration_us as f64 / 1e6,
            900.0,
            0.1,
        );
    }
}

#[test]
fn hd_video_1play_1record() {
    for d in describe_all("HDVideo_1Play_1Record") {
        assert_eq!(
            (d.files_declared, d.files_prepared, d.files_created),
            (2, 1, 1)
        );
        near(
            "bytes moved (about 1 GB)",
            (d.bytes_read + d.bytes_written) as f64,
            1.0 * GB,
            0.1,
        );
        assert!(d.bytes_read > 0 && d.bytes_written > 0);
        near_pts("% sequential", d.sequential_pct, 20.0, 3.0);
        near(
            "duration (4 min 20 s)",
            d.duration_us as f64 / 1e6,
            260.0,
            0.1,
        );
    }
}

#[test]
fn content_creation() {
    for d in describe_all("ContentCreation") {
        assert_eq!((d.files_declared, d.files_prepared), (98, 79));
        // Section 4.1: 155 MB transferred; Table 1: 12 MB of it read.
        near(
            "bytes moved",
            (d.bytes_read + d.bytes_written) as f64,
            155.0 * MB,
            0.1,
        );
        near("bytes read", d.bytes_read as f64, 12.0 * MB, 0.1);
        near_pts("% writes", d.write_pct, 90.0, 2.0);
        near_pts("% sequential", d.sequential_pct, 40.0, 3.0);
        near("median read", d.median_read.unwrap_or(0.0), 1300.0, 0.1);
        near(
            "median write",
            d.median_write.unwrap_or(0.0),
            12.0 * 1024.0,
            0.1,
        );
        // The one very large output file: written in bits and pieces, about 11 % sequential.
        let big = &d.busiest_files[0];
        assert!(big.path.starts_with("Output/"), "{}", big.path);
        assert_eq!(big.reads, 0);
        near_pts(
            "% sequential in the big file",
            big.sequential_pct,
            11.0,
            3.0,
        );
        // Writes of 512 B, 1 KB, 4 KB ... up to 64 KB.
        for label in ["<=512", "<=1K", "<=4K", "<=64K"] {
            assert!(count(&d.write_sizes, label) > 100, "{label}");
        }
        assert_eq!(
            count(&d.write_sizes, "<=128K") + count(&d.write_sizes, ">1M"),
            0
        );
    }
}

#[test]
fn content_creation_writes_beyond_the_end_of_its_output() {
    let t = generate("ContentCreation", &GenParams::default()).expect("generates");
    let out = t
        .files
        .iter()
        .find(|f| f.path.starts_with("Output/"))
        .expect("output")
        .id;
    let mut end = 0;
    let (mut holes, mut inside) = (0, 0);
    for op in t
        .ops
        .iter()
        .filter(|o| o.file == out && o.kind == naslab_trace::OpKind::Write)
    {
        if op.offset > end {
            holes += 1;
        } else if op.offset + op.len <= end {
            inside += 1;
        }
        end = end.max(op.offset + op.len);
    }
    assert!(
        holes > 100 && inside > 500,
        "holes {holes}, rewrites inside {inside}"
    );
}

#[test]
fn office_productivity() {
    for d in describe_all("OfficeProductivity") {
        assert_eq!(d.files_declared, 607);
        near("bytes read", d.bytes_read as f64, 1.4 * GB, 0.1);
        near("bytes written", d.bytes_written as f64, 1.4 * GB, 0.1);
        near_pts("% sequential", d.sequential_pct, 80.0, 3.0);
        near(
            "median read",
            d.median_read.unwrap_or(0.0),
            2.2 * 1024.0,
            0.1,
        );
        near(
            "median write",
            d.median_write.unwrap_or(0.0),
            1.8 * 1024.0,
            0.1,
        );
        // Many 1 KB and 4 KB reads; mostly 1 KB writes.
        assert!(count(&d.read_sizes, "<=1K") * 5 > d.reads, "1 KB reads");
        assert!(count(&d.read_sizes, "<=4K") * 5 > d.reads, "4 KB reads");
        assert_eq!(largest_bucket(&d.write_sizes), "<=1K");
    }
    let t = generate("OfficeProductivity", &GenParams::default()).expect("generates");
    let sizes: Vec<u64> = t
        .files
        .iter()
        .filter(|f| f.exists)
        .map(|f| f.size)
        .collect();
    assert_eq!(sizes.iter().min(), Some(&12), "smallest file 12 bytes");
    assert!(sizes.iter().any(|&s| s > 200_000_000), "a file over 200 MB");
    for ext in [".doc", ".xls", ".mdb", ".tmp", ".lnk"] {
        assert!(t.files.iter().any(|f| f.path.ends_with(ext)), "{ext}");
    }
}

#[test]
fn file_copies() {
    for (name, reads) in [("FileCopyToNAS", false), ("FileCopyFromNAS", true)] {
        for d in describe_all(name) {
            assert_eq!(d.files_declared, 1);
            assert_eq!(d.files_created, u64::from(!reads));
            let (moved, other, median) = if reads {
                (d.bytes_read, d.bytes_written, d.median_read)
            } else {
                (d.bytes_written, d.bytes_read, d.median_write)
            };
            near("bytes", moved as f64, 1.4 * GB, 0.1);
            assert_eq!(other, 0);
            assert_eq!(median, Some(65_536.0));
            near_pts("% sequential", d.sequential_pct, 100.0, 0.1);
        }
    }
}

#[test]
fn directory_copies() {
    for (name, reads) in [
        ("DirectoryCopyToNAS", false),
        ("DirectoryCopyFromNAS", true),
    ] {
        for d in describe_all(name) {
            assert_eq!(d.files_declared, 2833);
            let (moved, n, buckets) = if reads {
                (d.bytes_read, d.reads, &d.read_sizes)
            } else {
                (d.bytes_written, d.writes, &d.write_sizes)
            };
            near("bytes", moved as f64, 247.0 * MB, 0.1);
            near("average transfer", moved as f64 / n as f64, 41_400.0, 0.1);
            near_pts("% sequential", d.sequential_pct, 52.0, 3.0);
            // Predominantly 64 KB, with a wide scattering under 16 KB.
            assert_eq!(largest_bucket(buckets), "<=64K");
            let under_16k: u64 = ["<=512", "<=1K", "<=2K", "<=4K", "<=8K", "<=16K"]
                .iter()
                .map(|l| count(buckets, l))
                .sum();
            assert!(under_16k * 5 > n, "{under_16k} of {n} under 16 KB");
            if !reads {
                assert!(d.dirs_declared > 10);
            }
        }
    }
}

#[test]
fn photo_album() {
    for d in describe_all("PhotoAlbum") {
        assert_eq!(d.files_declared, 169);
        near("bytes read", d.bytes_read as f64, 0.81 * GB, 0.1);
        assert_eq!(d.writes, 0);
        near_pts("% sequential", d.sequential_pct, 80.0, 3.0);
        // A wide distribution of sizes, including the 568-byte thumbnail reads.
        let used = d.read_sizes.iter().filter(|b| b.count > 100).count();
        assert!(used >= 7, "{used} size buckets in use");
    }
    let t = generate("PhotoAlbum", &GenParams::default()).expect("generates");
    let thumbs = t.ops.iter().filter(|o| o.len == 568).count();
    assert!(thumbs > 2000, "{thumbs} thumbnail reads");
    let raw = t.files.iter().filter(|f| f.path.ends_with(".CR2")).count();
    assert_eq!(raw, 165);
}
