use std::fmt::Write;

use super::{Exporter, us};
use crate::{CacheMode, IterationResult, RunResult};

/// results.md: the suite table, each workload's latency per op type, warnings and the
/// environment, as Markdown for pasting into issues, wikis and reviews.
pub struct Markdown;

/// Text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The count-weighted mean latency, in µs, of some op types.
fn mean_us(it: &IterationResult, ops: &[&str]) -> String {
    let (mut n, mut sum) = (0u64, 0u128);
    for s in ops.iter().filter_map(|op| it.op(op)) {
        n += s.latency.count;
        sum += s.latency.avg_ns as u128 * s.latency.count as u128;
    }
    if n == 0 {
        "-".into()
    } else {
        format!("{}", us((sum / n as u128) as u64))
    }
}

impl Exporter for Markdown {
    fn file_name(&self) -> &'static str {
        "results.md"
    }

    fn export(&self, run: &RunResult) -> Vec<u8> {
        let mut o = String::from("# naslab results\n\n");
        let t = &run.target;
        let cache = match (run.options.cache, t.cache_drop) {
            (CacheMode::Drop, Some(how)) => format!("drop ({})", how.text()),
            (CacheMode::Drop, None) => "drop".into(),
            (CacheMode::Keep, _) => "keep".into(),
            (CacheMode::Direct, _) => "direct".into(),
        };
        let fs = if t.fs_type.is_empty() {
            String::new()
        } else {
            format!(", {} on {}", t.fs_type, t.source)
        };
        let _ = writeln!(
            o,
            "Started {} with naslab {}; target `{}` ({}{fs}); cache {cache}; pacing {}; {} iteration(s) per workload.\n",
            run.started_at,
            run.naslab_version,
            t.path,
            t.backend,
            run.options.pacing,
            run.options.iterations
        );
        let batch = run.workloads.iter().any(|w| w.iterations.len() > 1);
        o.push_str("## Suite\n\n");
        o.push_str("| workload | MB/s |");
        if batch {
            o.push_str(" min..max MB/s | runs |");
        }
        o.push_str(" ops | errors | MB read | MB written | read µs | write µs | open+create µs | wall s |\n|---|---:|");
        if batch {
            o.push_str("---:|---:|");
        }
        o.push_str("---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for w in &run.workloads {
            let Some(it) = w.median_iteration() else {
                continue;
            };
            let _ = write!(o, "| {} | {:.2} |", cell(&w.name), w.throughput_mb_s);
            if batch {
                let _ = write!(
                    o,
                    " {:.2}..{:.2} | {} |",
                    w.throughput_min_mb_s,
                    w.throughput_max_mb_s,
                    w.iterations.len()
                );
            }
            let _ = writeln!(
                o,
                " {} | {} | {:.2} | {:.2} | {} | {} | {} | {:.3} |",
                it.ops,
                it.errors,
                it.bytes_read as f64 / 1e6,
                it.bytes_written as f64 / 1e6,
                mean_us(it, &["read"]),
                mean_us(it, &["write"]),
                mean_us(it, &["open", "create"]),
                it.wall_ns as f64 / 1e9
            );
        }
        let _ = writeln!(
            o,
            "\nThroughput in MB/s (1 MB = 10^6 bytes){}; latencies are means in µs.\n",
            if batch {
                " of the median iteration"
            } else {
                ""
            }
        );
        o.push_str("## Latency per op type (µs)\n");
        for w in &run.workloads {
            let Some(it) = w.median_iteration() else {
                continue;
            };
            let _ = writeln!(o, "\n### {}\n", w.name);
            o.push_str("| op | count | bytes | errors | mean µs | std dev µs | min µs | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (name, s) in &it.op_stats {
                // The latency of the ops that succeeded; the failed ones' on a row of
                // their own.
                let mut rows = vec![(cell(name), s.count, s.bytes, &s.latency)];
                if let Some(f) = &s.failed_latency {
                    rows.push((format!("{} (failed)", cell(name)), f.count, 0, f));
                }
                for (label, count, bytes, l) in rows {
                    let _ = writeln!(
                        o,
                        "| {label} | {count} | {bytes} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
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
            if let Some(why) = &it.aborted {
                let _ = writeln!(o, "\nStopped early: {why}");
            }
        }
        let layouts: Vec<_> = run
            .workloads
            .iter()
            .filter_map(|w| Some((w, w.median_iteration()?)))
            .filter_map(|(w, it)| Some((w, it.layout.as_ref()?)))
            .collect();
        if !layouts.is_empty() {
            o.push_str("\n## File layout\n\n");
            o.push_str("Extents as filefrag counts them; ideal: the fewest the file system's longest extent allows; score: the share of blocks right after their predecessor on disk (1 = every file in one run).\n\n");
            o.push_str("| workload | files | count | bytes | extents | ideal extents | score |\n|---|---|---:|---:|---:|---:|---:|\n");
            for (w, l) in layouts {
                for (set, s) in [("prepared", &l.prepared), ("written", &l.written)] {
                    let _ = writeln!(
                        o,
                        "| {} | {set} | {} | {} | {} | {} | {} |",
                        cell(&w.name),
                        s.files,
                        s.bytes,
                        s.extents,
                        s.ideal_extents,
                        s.score.map_or("-".to_string(), |v| format!("{v:.3}"))
                    );
                }
            }
        }
        if !run.warnings.is_empty() || run.aborted.is_some() {
            o.push_str("\n## Warnings\n\n");
            for w in &run.warnings {
                let _ = writeln!(o, "- {w}");
            }
            if let Some(why) = &run.aborted {
                let _ = writeln!(o, "- the run stopped early: {why}");
            }
        }
        let e = &run.environment;
        o.push_str("\n## Environment\n\n| | |\n|---|---|\n");
        for (k, v) in [
            ("host", e.host.clone()),
            ("OS", e.os.clone()),
            ("kernel", e.kernel.clone()),
            ("CPU", format!("{} ({} usable)", e.cpu, e.cpus)),
            ("memory", format!("{:.1} GB", e.memory_bytes as f64 / 1e9)),
        ] {
            let _ = writeln!(o, "| {k} | {} |", cell(&v));
        }
        for (k, v) in &run.options.extra {
            let _ = writeln!(o, "| {} | {} |", cell(k), cell(v));
        }
        o.into_bytes()
    }
}
