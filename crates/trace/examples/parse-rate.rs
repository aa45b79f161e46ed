//! Reads a trace with the checking reader and prints how many records per second it
//! parsed (used by bench/end-to-end.sh; the file should be in the page cache).
//!
//! usage: parse-rate TRACE

use std::time::Instant;

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: parse-rate TRACE");
        std::process::exit(2);
    };
    let path = std::path::PathBuf::from(path);
    let t0 = Instant::now();
    let mut reader = match naslab_trace::open_trace(&path) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let (mut records, mut ops) = (0u64, 0u64);
    loop {
        match reader.next_record() {
            Ok(Some(r)) => {
                records += 1;
                ops += matches!(r, naslab_trace::Record::Op(..)) as u64;
            }
            Ok(None) => break,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
    let s = t0.elapsed().as_secs_f64();
    println!(
        "trace parsing: {ops} ops ({records} records) in {s:.3} s: {:.2} M ops/s (goal >= 3.0)",
        ops as f64 / s / 1e6
    );
}
