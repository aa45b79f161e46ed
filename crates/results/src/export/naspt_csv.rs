use std::fmt::Write;

use super::{Exporter, csv_field, us};
use crate::RunResult;

/// naspt.csv: one row per workload in the original NAS Performance Toolkit's columns, so
/// spreadsheets made for it keep working. ReadSize and WriteSize are the bytes moved in
/// the measured phase; times are µs from the median iteration.
pub struct NasptCsv;

/// The original toolkit's header line.
pub const NASPT_COLUMNS: &str = "Test Name,Throughput(MB/s),ReadSize(B),WriteSize(B),AveReadTime(usecs),AveWriteTime(usecs),AveOpenTime(usecs),MaxReadTime(usecs),MaxWriteTime(usecs),MaxOpenTime(usecs)";

impl Exporter for NasptCsv {
    fn file_name(&self) -> &'static str {
        "naspt.csv"
    }

    fn export(&self, run: &RunResult) -> Vec<u8> {
        let mut out = String::new();
        out.push_str(NASPT_COLUMNS);
        out.push('\n');
        for w in &run.workloads {
            let Some(it) = w.median_iteration() else {
                continue;
            };
            let lat = |name: &str| it.op(name).map(|s| s.latency).unwrap_or_default();
            // The original counted opens and creates alike: both open a handle.
            let mut open = lat("open");
            let create = lat("create");
            if create.count > 0 {
                let total = open.count + create.count;
                open.avg_ns = ((open.avg_ns as u128 * open.count as u128
                    + create.avg_ns as u128 * create.count as u128)
                    / total as u128) as u64;
                open.max_ns = open.max_ns.max(create.max_ns);
                open.count = total;
            }
            let (read, write) = (lat("read"), lat("write"));
            // A workload that stopped early is named so in its row: its figures cover
            // only the ops it did.
            let name = match w.cut_short() {
                Some(short) => format!("{} ({short})", w.name),
                None => w.name.clone(),
            };
            let _ = writeln!(
                out,
                "{},{:.3},{},{},{},{},{},{},{},{}",
                csv_field(&name),
                w.throughput_mb_s,
                it.bytes_read,
                it.bytes_written,
                us(read.avg_ns),
                us(write.avg_ns),
                us(open.avg_ns),
                us(read.max_ns),
                us(write.max_ns),
                us(open.max_ns),
            );
        }
        out.into_bytes()
    }
}
