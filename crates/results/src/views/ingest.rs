use std::fmt::Write;

use crate::RunResult;

/// One ingest workload's parameters, for the table's first columns.
#[derive(Debug, Clone)]
pub struct IngestRow {
    /// The workload's name in the run.
    pub workload: String,
    pub block_size: u64,
    /// Blocks in all (BLOCKSPERFILE x TOTALFILES).
    pub block_count: u64,
    pub files_per_dir: u64,
}

/// The ingest script's table (seed 001): per iteration the seconds and transfer rate, then
/// the average; capacity in MB of 2^20 bytes as the script computed it, Mb/s = MB/s x 8.
pub fn ingest_table(run: &RunResult, rows: &[IngestRow]) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{:>12} {:>10} {:>12} {:>14} {:>9} {:>13} {:>12} {:>12}",
        "FilesPerDir",
        "Block Size",
        "Block Count",
        "Capacity (MB)",
        "Iteration",
        "Total Seconds",
        "Rate (MB/s)",
        "Rate (Mb/s)"
    );
    for row in rows {
        let Some(w) = run.workloads.iter().find(|w| w.name == row.workload) else {
            continue;
        };
        let capacity = (row.block_size * row.block_count) as f64 / 1024.0 / 1024.0;
        let (mut secs_sum, mut rate_sum, mut n) = (0.0, 0.0, 0.0);
        for it in &w.iterations {
            let secs = it.wall_ns as f64 / 1e9;
            let rate = if secs > 0.0 { capacity / secs } else { 0.0 };
            secs_sum += secs;
            rate_sum += rate;
            n += 1.0;
            let _ = writeln!(
                o,
                "{:>12} {:>10} {:>12} {:>14.3} {:>9} {:>13.3} {:>12.3} {:>12.3}",
                row.files_per_dir,
                row.block_size,
                row.block_count,
                capacity,
                it.iteration,
                secs,
                rate,
                rate * 8.0
            );
        }
        if n > 0.0 {
            let _ = writeln!(
                o,
                "{:>12} {:>10} {:>12} {:>14.3} {:>9} {:>13.3} {:>12.3} {:>12.3}",
                row.files_per_dir,
                row.block_size,
                row.block_count,
                capacity,
                "average",
                secs_sum / n,
                rate_sum / n,
                rate_sum / n * 8.0
            );
        }
    }
    o
}
