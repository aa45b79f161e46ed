use std::fmt::Write;

use super::{Exporter, csv_field as field, us};
use crate::RunResult;

/// results.csv: one row per workload, iteration and op type, with the iteration's
/// throughput beside each op's count, bytes, errors and latency figures in µs; tidy
/// (long) data for spreadsheets and plotting tools. `median` marks the iteration whose
/// throughput is the workload's figure. The last columns are the iteration's file layout
/// (the files it prepared, then the files it wrote: files, extents, the ideal extents and
/// the share of blocks that follow their predecessor on disk), empty where the layout was
/// not measured.
/// An op type's latency figures are those of its ops that succeeded; when some failed, a
/// row `TYPE:failed` follows with their count and latency figures.
pub struct Csv;

/// The header line.
pub const CSV_COLUMNS: &str = "workload,iteration,median,throughput_mb_s,wall_s,op,count,bytes,errors,avg_us,stddev_us,min_us,p50_us,p90_us,p99_us,p999_us,max_us,prepared_files,prepared_extents,prepared_ideal_extents,prepared_layout_score,written_files,written_extents,written_ideal_extents,written_layout_score";

/// One set of files' layout as four CSV fields (files, extents, ideal extents, score);
/// empty fields when there is none.
fn layout_fields(l: Option<&crate::LayoutSummary>) -> String {
    match l {
        Some(l) => format!(
            "{},{},{},{}",
            l.files,
            l.extents,
            l.ideal_extents,
            l.score.map_or(String::new(), |s| format!("{s:.4}"))
        ),
        None => ",,,".to_string(),
    }
}

impl Exporter for Csv {
    fn file_name(&self) -> &'static str {
        "results.csv"
    }

    fn export(&self, run: &RunResult) -> Vec<u8> {
        let mut o = String::from(CSV_COLUMNS);
        o.push('\n');
        for w in &run.workloads {
            let median = w.median_iteration().map(|m| m.iteration);
            for it in &w.iterations {
                let layout = format!(
                    "{},{}",
                    layout_fields(it.layout.as_ref().map(|l| &l.prepared)),
                    layout_fields(it.layout.as_ref().map(|l| &l.written))
                );
                for (op, s) in &it.op_stats {
                    // The op type's row: every op counted, the latency of those that
                    // succeeded; then the failed ones' own row, `op:failed`.
                    let mut rows = vec![(op.clone(), s.count, s.bytes, &s.latency)];
                    if let Some(f) = &s.failed_latency {
                        // Expected failures are in this row too, not in `errors`.
                        rows.push((format!("{op}:failed"), f.count, 0, f));
                    }
                    for (name, count, bytes, l) in rows {
                        let _ = writeln!(
                            o,
                            "{},{},{},{:.3},{:.6},{},{},{},{},{},{},{},{},{},{},{},{},{layout}",
                            field(&w.name),
                            it.iteration,
                            median == Some(it.iteration),
                            it.throughput_mb_s,
                            it.wall_ns as f64 / 1e9,
                            field(&name),
                            count,
                            bytes,
                            s.errors,
                            us(l.avg_ns),
                            us(l.stddev_ns),
                            us(l.min_ns),
                            us(l.p50_ns),
                            us(l.p90_ns),
                            us(l.p99_ns),
                            us(l.p999_ns),
                            us(l.max_ns)
                        );
                    }
                }
            }
        }
        o.into_bytes()
    }
}
