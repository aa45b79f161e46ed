use std::fmt::Write;

use super::workload;
use crate::RunResult;

/// The backup table (seed 000): files backed up, bytes, total extents of the backed-up
/// files (when the target's layout could be read), throughput in MB/min (MB = 10^6
/// bytes) and time taken.
pub fn backup_table(run: &RunResult) -> String {
    let mut o = String::new();
    let Some(it) = workload(run, "Backup").and_then(|w| w.median_iteration()) else {
        return o;
    };
    let extents = it
        .layout
        .as_ref()
        .map(|l| l.prepared.extents + l.written.extents);
    let files = it.op("open").map(|s| s.count).unwrap_or(0);
    let minutes = it.wall_ns as f64 / 60e9;
    let _ = writeln!(o, "{:<32} {:>16}", "Backup test", "");
    let _ = writeln!(o, "{:<32} {:>16}", "Total Files", files);
    let _ = writeln!(o, "{:<32} {:>16}", "Total Bytes", it.bytes_read);
    match extents {
        Some(e) => {
            let _ = writeln!(o, "{:<32} {:>16}", "Total Extents", e);
        }
        None => {
            let _ = writeln!(o, "{:<32} {:>16}", "Total Extents", "not measured");
        }
    }
    let rate = if minutes > 0.0 {
        it.bytes_read as f64 / 1e6 / minutes
    } else {
        0.0
    };
    let _ = writeln!(o, "{:<32} {:>16.2}", "Backup Throughput (MB/min)", rate);
    let _ = writeln!(
        o,
        "{:<32} {:>16.3}",
        "Time taken (s)",
        it.wall_ns as f64 / 1e9
    );
    o
}
