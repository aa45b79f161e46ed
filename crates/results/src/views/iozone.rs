use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::RunResult;

/// One cell of an iozone-style matrix: which workload in the run measured it.
#[derive(Debug, Clone)]
pub struct IozoneCell {
    /// iozone's title of the test ("Writer report", ...).
    pub title: &'static str,
    pub file_kb: u64,
    pub record_kb: u64,
    pub workload: String,
}

/// iozone's matrices: per test, file sizes down, record sizes across, kB/s (1 kB = 1024 B)
/// of the median iteration's throughput.
pub fn iozone_matrices(run: &RunResult, cells: &[IozoneCell]) -> String {
    let mut o = String::new();
    let mut titles: Vec<&'static str> = Vec::new();
    for c in cells {
        if !titles.contains(&c.title) {
            titles.push(c.title);
        }
    }
    for title in titles {
        let mine: Vec<&IozoneCell> = cells.iter().filter(|c| c.title == title).collect();
        let records: BTreeSet<u64> = mine.iter().map(|c| c.record_kb).collect();
        let mut rows: BTreeMap<u64, BTreeMap<u64, f64>> = BTreeMap::new();
        for c in &mine {
            if let Some(w) = run.workloads.iter().find(|w| w.name == c.workload) {
                let kb_s = w.throughput_mb_s * 1e6 / 1024.0;
                rows.entry(c.file_kb).or_default().insert(c.record_kb, kb_s);
            }
        }
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\"{title}\"");
        let _ = write!(o, "{:>10}", "kB");
        for r in &records {
            let _ = write!(o, " {:>10}", r);
        }
        o.push('\n');
        for (size, vals) in rows {
            let _ = write!(o, "{size:>10}");
            for r in &records {
                match vals.get(r) {
                    Some(v) => {
                        let _ = write!(o, " {:>10.0}", v);
                    }
                    None => {
                        let _ = write!(o, " {:>10}", "");
                    }
                }
            }
            o.push('\n');
        }
        o.push('\n');
    }
    o
}

/// iozone's throughput-mode lines: per test, the aggregate of all streams.
pub fn iozone_throughput(
    run: &RunResult,
    tests: &[(&'static str, String)],
    streams: u32,
) -> String {
    let mut o = String::new();
    for (label, name) in tests {
        if let Some(w) = run.workloads.iter().find(|w| &w.name == name) {
            let _ = writeln!(
                o,
                "Children see throughput for {streams:>3} {label:<16} = {:>14.2} kB/sec",
                w.throughput_mb_s * 1e6 / 1024.0
            );
        }
    }
    o
}
