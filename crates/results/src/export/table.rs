use std::fmt::Write;

use super::{Exporter, us};
use crate::{
    IterationResult, OpStats, OrderingSummary, RunResult, VerifySummary, Warning, duration_text,
};
use naslab_trace::printable;

/// The terminal table: one row per workload (throughput, ops, bytes, and the read, write
/// and open latencies the original toolkit showed), then each workload's op types with
/// avg / p99 / max latency, then warnings. Latencies are those of the ops that
/// succeeded; an op type with failures has a second line with the failed ops' own.
pub struct Table;

fn avg_us(it: &IterationResult, ops: &[&str]) -> String {
    let (mut n, mut sum) = (0u64, 0u128);
    for op in ops {
        if let Some(s) = it.op(op) {
            n += s.latency.count;
            sum += s.latency.avg_ns as u128 * s.latency.count as u128;
        }
    }
    if n == 0 {
        "-".to_string()
    } else {
        format!("{}", us((sum / n as u128) as u64))
    }
}

/// An op type's failures by errno: "ENOENT 3, EBADF 1", then those the trace expected.
fn errnos(s: &OpStats) -> String {
    let mut by: Vec<String> = s
        .errors_by_errno
        .iter()
        .map(|(errno, n)| format!("{errno} {n}"))
        .collect();
    if s.expected_failures > 0 {
        by.push(format!("{} as expected", s.expected_failures));
    }
    by.join(", ")
}

/// The order kept between a workload's streams, in one line; `None` when it has no
/// edge (its streams share nothing, or it has one stream).
pub fn ordering_line(o: &OrderingSummary) -> Option<String> {
    if o.edges == 0 {
        return None;
    }
    let edges = format!(
        "{} edges between streams ({} name, {} fsync, {} sequence)",
        o.edges, o.name_edges, o.sync_edges, o.sequence_edges
    );
    Some(if !o.enforced {
        format!("{edges}, not kept (--no-ordering)")
    } else if o.waits == 0 {
        format!("{edges}, no stream had to wait")
    } else {
        format!(
            "{edges}: {} waits, {} in all, longest {}",
            o.waits,
            duration_text(o.wait_total_ns),
            duration_text(o.wait_longest_ns)
        )
    })
}

/// What `--verify` checked and found, in one line.
pub fn verify_line(v: &VerifySummary) -> String {
    let mut line = format!(
        "{} reads checked ({:.2} MB, {:.2} MB read back): ",
        v.reads_checked,
        v.bytes_checked as f64 / 1e6,
        v.read_back_bytes as f64 / 1e6
    );
    if v.total() == 0 {
        line.push_str("every block as written");
    } else {
        let kinds: Vec<String> = v
            .by_kind()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{n} {}", k.label()))
            .collect();
        line.push_str(&format!(
            "{} MISMATCHED blocks ({})",
            v.total(),
            kinds.join(", ")
        ));
    }
    line
}

/// A multi-client run's clients side by side, per workload (each client's median
/// iteration): what each got, and over which link, so one client's slow path shows
/// against the others'.
fn clients_section(o: &mut String, run: &RunResult) {
    let Some(m) = run.multi_client.as_ref().filter(|m| m.clients.len() > 1) else {
        return;
    };
    let _ = writeln!(
        o,
        "\nper client (its median iteration):\n    {:<10} {:<16} {:>9} {:>9} {:>13} {:>12}  link",
        "client", "host", "MB/s", "ops", "mean op µs", "rtt probed"
    );
    for w in &run.workloads {
        let _ = writeln!(o, "{}", printable(&w.name));
        for c in &m.clients {
            let own = c.workloads.iter().find(|x| x.name == w.name);
            let Some((cw, it)) = own.and_then(|x| Some((x, x.median_iteration()?))) else {
                let _ = writeln!(
                    o,
                    "    {:<10} {:<16} no results",
                    c.rank,
                    printable(&c.host)
                );
                continue;
            };
            let link = c.link.as_ref();
            let _ = writeln!(
                o,
                "    {:<10} {:<16} {:>9.2} {:>9} {:>13} {:>12}  {}",
                c.rank,
                printable(&c.host),
                cw.throughput_mb_s,
                it.ops,
                us(it.mean_op_ns()),
                link.map_or_else(|| "-".into(), |l| l.probed_text()),
                link.map_or_else(|| "-".into(), |l| l.short_text()),
            );
        }
    }
}

impl Exporter for Table {
    fn file_name(&self) -> &'static str {
        "results.txt"
    }

    fn export(&self, run: &RunResult) -> Vec<u8> {
        let mut o = String::new();
        let batch = run.workloads.iter().any(|w| w.iterations.len() > 1);
        let _ = writeln!(
            o,
            "{:<24} {:>9} {:>9} {:>9} {:>10} {:>11} {:>11} {:>14} {:>8}{}",
            "workload",
            "MB/s",
            "ops",
            "read MB",
            "write MB",
            "read µs",
            "write µs",
            "open+create µs",
            "wall s",
            if batch { "  min..max MB/s (runs)" } else { "" }
        );
        for w in &run.workloads {
            let Some(it) = w.median_iteration() else {
                continue;
            };
            let mut spread = if batch {
                format!(
                    "  {:.2}..{:.2} ({})",
                    w.throughput_min_mb_s,
                    w.throughput_max_mb_s,
                    w.iterations.len()
                )
            } else {
                String::new()
            };
            if let Some(short) = w.cut_short() {
                spread.push_str("  ");
                spread.push_str(&short);
            }
            let _ = writeln!(
                o,
                "{:<24} {:>9.2} {:>9} {:>9.2} {:>10.2} {:>11} {:>11} {:>14} {:>8.3}{}",
                printable(&w.name),
                w.throughput_mb_s,
                it.ops,
                it.bytes_read as f64 / 1e6,
                it.bytes_written as f64 / 1e6,
                avg_us(it, &["read"]),
                avg_us(it, &["write"]),
                avg_us(it, &["open", "create"]),
                it.wall_ns as f64 / 1e9,
                spread
            );
        }
        let _ = writeln!(
            o,
            "\nlatency per op type (µs{}):",
            if batch { ", median iteration" } else { "" }
        );
        for w in &run.workloads {
            let Some(it) = w.median_iteration() else {
                continue;
            };
            let _ = writeln!(o, "{}", printable(&w.name));
            for (name, s) in &it.op_stats {
                let mut errors = if s.errors > 0 {
                    format!("  {} errors", s.errors)
                } else {
                    String::new()
                };
                if s.missing_failures > 0 {
                    let _ = write!(
                        errors,
                        " ({} succeeded where the trace expected a failure)",
                        s.missing_failures
                    );
                }
                if s.expected_failures > 0 {
                    let _ = write!(errors, "  {} failed as expected", s.expected_failures);
                }
                let _ = writeln!(
                    o,
                    "    {:<10} {:>9} ops   avg {:>10}   p99 {:>10}   max {:>10}{}{}",
                    name,
                    s.count,
                    us(s.latency.avg_ns),
                    us(s.latency.p99_ns),
                    us(s.latency.max_ns),
                    errors,
                    if s.latency_holds_failures() {
                        " (latency includes the failed ops)"
                    } else {
                        ""
                    }
                );
                if let Some(f) = &s.failed_latency {
                    let _ = writeln!(
                        o,
                        "    {:<10} {:>9} ops   avg {:>10}   p99 {:>10}   max {:>10}  failed: {}",
                        "",
                        f.count,
                        us(f.avg_ns),
                        us(f.p99_ns),
                        us(f.max_ns),
                        errnos(s)
                    );
                }
            }
            if let Some(l) = &it.layout {
                let _ = writeln!(
                    o,
                    "    layout     prepared {} files in {} extents (ideal {}), written {} files in {} extents (ideal {})",
                    l.prepared.files,
                    l.prepared.extents,
                    l.prepared.ideal_extents,
                    l.written.files,
                    l.written.extents,
                    l.written.ideal_extents
                );
            }
            if let Some(v) = &it.verify {
                let _ = writeln!(o, "    verify     {}", verify_line(v));
            }
            if let Some(f) = &it.failover {
                let _ = writeln!(o, "    failover   {}", f.line());
                if let Some(d) = &it.durable_handles {
                    let _ = writeln!(o, "    durable    handles {}", d.line());
                }
            }
            if let Some(line) = it.ordering.as_ref().and_then(ordering_line) {
                let _ = writeln!(o, "    ordering   {line}");
            }
            if let Some(why) = &it.aborted {
                let _ = writeln!(o, "    stopped early: {}", printable(why));
            }
        }
        clients_section(&mut o, run);
        // One line per warning, but a warning many workloads share is said once.
        let cache_warnings: Vec<&Warning> = run
            .warnings
            .iter()
            .filter(|w| matches!(w, Warning::FitsInClientCache { .. }))
            .collect();
        for warning in &run.warnings {
            if cache_warnings.len() <= 3 || !matches!(warning, Warning::FitsInClientCache { .. }) {
                let _ = writeln!(o, "warning: {}", printable(&warning.to_string()));
            }
        }
        if cache_warnings.len() > 3 {
            let _ = writeln!(
                o,
                "warning: the data of {} workloads fit in this client's memory and caches were kept, so reads may be served by the client; use --cache drop or --cache direct (run.json lists them)",
                cache_warnings.len()
            );
        }
        if let Some(why) = &run.aborted {
            let _ = writeln!(o, "run stopped early: {}", printable(why));
        }
        o.into_bytes()
    }
}
