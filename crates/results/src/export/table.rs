use std::fmt::Write;

use super::{us, Exporter};
use crate::RunResult;

/// The terminal table: one line per workload, then its op types with avg / p99 / max latency.
pub struct Table;

impl Exporter for Table {
    fn file_name(&self) -> &'static str {
        "results.txt"
    }

    fn export(&self, run: &RunResult) -> Vec<u8> {
        let mut o = String::new();
        let batch = run.workloads.iter().any(|w| w.iterations.len() > 1);
        let _ = writeln!(
            o,
            "{:<24} {:>10} {:>10} {:>11} {:>11} {:>9}{}",
            "workload",
            "MB/s",
            "ops",
            "read MB",
            "written MB",
            "wall s",
            if batch { "   min..max MB/s" } else { "" }
        );
        for w in &run.workloads {
            let Some(it) = w.median_iteration() else {
                continue;
            };
            let spread = if batch {
                format!(
                    "   {:.2}..{:.2} ({} runs)",
                    w.throughput_min_mb_s,
                    w.throughput_max_mb_s,
                    w.iterations.len()
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                o,
                "{:<24} {:>10.2} {:>10} {:>11.2} {:>11.2} {:>9.3}{}",
                w.name,
                w.throughput_mb_s,
                it.ops,
                it.bytes_read as f64 / 1e6,
                it.bytes_written as f64 / 1e6,
                it.wall_ns as f64 / 1e9,
                spread
            );
            for (name, s) in &it.op_stats {
                let errors = if s.errors > 0 {
                    format!("  {} errors", s.errors)
                } else {
                    String::new()
                };
                let _ = writeln!(
                    o,
                    "    {:<10} {:>9} ops   avg {:>10.1} µs   p99 {:>10.1} µs   max {:>10.1} µs{}",
                    name,
                    s.count,
                    us(s.latency.avg_ns),
                    us(s.latency.p99_ns),
                    us(s.latency.max_ns),
                    errors
                );
            }
            if let Some(why) = &it.aborted {
                let _ = writeln!(o, "    stopped early: {why}");
            }
        }
        for warning in &run.warnings {
            let _ = writeln!(o, "warning: {warning}");
        }
        if let Some(why) = &run.aborted {
            let _ = writeln!(o, "run stopped early: {why}");
        }
        o.into_bytes()
    }
}
