//! Reads a trace and prints how many op records per second were read and checked, two
//! ways: as `naslab run` and `naslab report` read a trace (`ReadAhead`: JSON Lines parsed
//! on several CPUs, checked in order on a thread of its own), and by the checking reader
//! alone on this thread. Used by bench/end-to-end.sh; the file should be in the page
//! cache.
//!
//! usage: parse-rate TRACE

use std::path::Path;
use std::time::Instant;

use naslab_trace::{ReadAhead, Record, TraceError, open_trace};

fn count(records: impl Iterator<Item = Result<Record, TraceError>>) -> (u64, u64) {
    let (mut all, mut ops) = (0u64, 0u64);
    for r in records {
        match r {
            Ok(r) => {
                all += 1;
                ops += matches!(r, Record::Op(..)) as u64;
            }
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
    (all, ops)
}

fn report(how: &str, path: &Path, read: impl FnOnce(&Path) -> (u64, u64)) {
    let t0 = Instant::now();
    let (records, ops) = read(path);
    let s = t0.elapsed().as_secs_f64();
    println!(
        "trace parsing, {how}: {ops} ops ({records} records) in {s:.3} s: {:.2} M ops/s (goal >= 3.0)",
        ops as f64 / s / 1e6
    );
}

fn open(path: &Path) -> naslab_trace::TraceReader<Box<dyn std::io::BufRead + Send>> {
    open_trace(path).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1);
    })
}

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: parse-rate TRACE");
        std::process::exit(2);
    };
    let path = std::path::PathBuf::from(path);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    report(&format!("as runs read it ({cpus} CPUs)"), &path, |p| {
        count(ReadAhead::start(open(p)).map(|r| r.map(|n| n.record)))
    });
    report("the reader alone, one thread", &path, |p| count(open(p)));
}
