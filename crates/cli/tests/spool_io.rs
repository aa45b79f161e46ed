//! During the measured phase, the thread that issues a stream's ops makes no other file
//! I/O: its op spool is read ahead and its measurements written behind by another
//! thread, as strace sees it.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::io::Write;

mod common;
use common::*;

#[test]
fn the_stream_thread_does_no_spool_io_while_it_measures() {
    need_tool("strace", "-V");
    let d = tempfile::tempdir().unwrap();
    let trace = d.path().join("rr.jsonl");
    let ops = 50_000u64;
    {
        let mut w = std::io::BufWriter::new(std::fs::File::create(&trace).unwrap());
        writeln!(
            w,
            r#"{{"type":"header","format":"naslab-trace","version":1,"workload":"SpoolIo"}}"#
        )
        .unwrap();
        writeln!(
            w,
            r#"{{"type":"file","id":1,"path":"data","size":1048576,"exists":true}}"#
        )
        .unwrap();
        writeln!(w, r#"{{"type":"op","op":"open","file":1,"flags":"read"}}"#).unwrap();
        for i in 0..ops {
            let off = (i * 7919 % 256) * 4096;
            writeln!(
                w,
                r#"{{"type":"op","op":"read","file":1,"offset":{off},"len":4096}}"#
            )
            .unwrap();
        }
        writeln!(w, r#"{{"type":"op","op":"close","file":1}}"#).unwrap();
    }
    let target = d.path().join("target");
    std::fs::create_dir(&target).unwrap();
    let text = strace_run(
        "read,write,pread64,pwrite64,readv,writev",
        &trace,
        &target,
        &d.path().join("out"),
    );
    let lines: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(tid, rest)| (tid, rest.trim_start()))
        .collect();
    let data = "/naslab/SpoolIo/data>";
    let is_op = |call: &str| call.starts_with("pread64(") && call.contains(data);
    // The stream thread is the one issuing the workload's reads.
    let tid = lines
        .iter()
        .find(|(_, c)| is_op(c))
        .map(|(t, _)| *t)
        .expect("strace saw the reads");
    let first = lines
        .iter()
        .position(|(t, c)| *t == tid && is_op(c))
        .unwrap();
    let last = lines
        .iter()
        .rposition(|(t, c)| *t == tid && is_op(c))
        .unwrap();
    let own: Vec<&str> = lines[first..=last]
        .iter()
        .filter(|(t, _)| *t == tid)
        .map(|(_, c)| *c)
        .collect();
    let ops_seen = own.iter().filter(|c| is_op(c)).count() as u64;
    let other: Vec<&&str> = own
        .iter()
        .filter(|c| !is_op(c) && !c.starts_with("<... pread64 resumed>"))
        .collect();
    assert_eq!(ops_seen, ops, "every read is the stream thread's");
    assert!(
        other.is_empty(),
        "{} other I/O calls by the stream thread during the measured phase, first: {:?}",
        other.len(),
        other.first()
    );
    // The spools were still read and written (by the I/O thread).
    assert!(
        lines
            .iter()
            .any(|(t, c)| *t != tid && c.starts_with("pwrite64(")),
        "no thread wrote measurements"
    );
}
