//! The IOMeter-style set opens its test file as IOMeter does, checked with strace: the
//! measured phase's open carries O_DIRECT, and the random tests (only they) ask the
//! kernel for no readahead with POSIX_FADV_RANDOM.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::process::Command;

use common::{need_tool, run_ok, text};

#[test]
fn iometer_opens_its_test_file_direct_and_random_tests_without_readahead() {
    need_tool("strace", "-V");
    // A disk file system (the build directory's), which takes O_DIRECT; /tmp may be tmpfs.
    let d = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = d.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let log = d.path().join("strace.log");
    let tests = [
        ("IOMeter_4K_RandRead_QD1", true),
        ("IOMeter_4K_RandRead_QD32", true),
        ("IOMeter_4K_RandWrite_QD1", true),
        ("IOMeter_4K_RandWrite_QD32", true),
        ("IOMeter_128K_SeqRead_QD1", false),
        ("IOMeter_128K_SeqRead_QD32", false),
        ("IOMeter_128K_SeqWrite_QD1", false),
        ("IOMeter_128K_SeqWrite_QD32", false),
    ];
    let mut cmd = Command::new("strace");
    cmd.args([
        "-f",
        "-qq",
        "-y",
        "-e",
        "trace=openat,openat2,fadvise64",
        "-o",
    ])
    .arg(&log)
    .arg(env!("CARGO_BIN_EXE_naslab"))
    .arg("run")
    .args(["--suite", "iometer", "--scale", "0.01", "-t"])
    .arg(&target)
    .arg("--out")
    .arg(d.path().join("out"));
    run_ok(&mut cmd);
    let log = std::fs::read_to_string(&log).unwrap();
    for (name, random) in tests {
        let file = format!("/naslab/{name}/iobw.tst");
        // Preparation creates the file and drops its cached pages through buffered
        // descriptors; the measured phase's one open is the only direct one.
        let opens: Vec<&str> = log
            .lines()
            .filter(|l| l.contains("openat") && l.contains("\"iobw.tst\""))
            .filter(|l| l.contains(&format!("{name}>")) || l.contains(&format!("{name}/")))
            .collect();
        assert!(opens.len() >= 2, "{name}: prepared and opened: {opens:#?}");
        let direct: Vec<&&str> = opens.iter().filter(|l| l.contains("O_DIRECT")).collect();
        assert_eq!(direct.len(), 1, "{name}: one direct open: {opens:#?}");
        let fadvise_random = log
            .lines()
            .filter(|l| l.contains("fadvise64(") && l.contains(&file))
            .filter(|l| l.contains("POSIX_FADV_RANDOM"))
            .count();
        assert_eq!(
            fadvise_random,
            usize::from(random),
            "{name}: FADV_RANDOM calls on {file}\n{}",
            text(log.as_bytes())
        );
    }
}
