//! The table lines of a multi-client run: per workload, the spread of the clients'
//! throughput, the slowest client and how far apart the clients started.

use std::fmt::Write;

use naslab_results::{RunResult, duration_text};

/// The clients section printed after the aggregate table; empty for a single-client run.
pub fn clients_table(run: &RunResult) -> String {
    let Some(multi) = &run.multi_client else {
        return String::new();
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{} clients (aggregate above: all clients' bytes over first start to last completion)",
        multi.clients.len()
    );
    let _ = writeln!(
        out,
        "{:<24} {:>12} {:>12} {:>12} {:>22}  slowest client",
        "workload", "min MB/s", "median MB/s", "max MB/s", "start skew (% phase)"
    );
    for w in &run.workloads {
        // Each client's figure for this workload: its median iteration's throughput.
        let mut per: Vec<(f64, u32, &str)> = multi
            .clients
            .iter()
            .filter_map(|c| {
                let cw = c.workloads.iter().find(|x| x.name == w.name)?;
                Some((cw.throughput_mb_s, c.rank, c.host.as_str()))
            })
            .collect();
        if per.is_empty() {
            continue;
        }
        per.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = per.len();
        let median = if n % 2 == 1 {
            per[n / 2].0
        } else {
            (per[n / 2 - 1].0 + per[n / 2].0) / 2.0
        };
        let (slow, rank, host) = per[0];
        // The iteration whose start skew was the largest share of its phase.
        let skew = multi
            .start_skew
            .iter()
            .filter(|s| s.workload == w.name)
            .max_by(|a, b| share(a).total_cmp(&share(b)));
        let skew_text = skew.map_or_else(
            || "-".to_string(),
            |s| format!("{} ({:.1} %)", duration_text(s.skew_ns), share(s) * 100.0),
        );
        let _ = writeln!(
            out,
            "{:<24} {:>12.2} {:>12.2} {:>12.2} {:>22}  {rank} on {host} ({slow:.2} MB/s)",
            w.name,
            per[0].0,
            median,
            per[n - 1].0,
            skew_text
        );
        if multi
            .start_skew
            .iter()
            .any(|s| s.workload == w.name && s.aggregate_below_clients)
        {
            let _ = writeln!(
                out,
                "{:<24} aggregate below every client's own figure: the clients' phases barely overlapped",
                ""
            );
        }
    }
    let worst = multi
        .clients
        .iter()
        .max_by_key(|c| c.clock_uncertainty_ns)
        .map(|c| c.clock_uncertainty_ns)
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "clocks aligned to client 0's within {:.1} µs; start skew: the spread of the clients' first ops on that common clock",
        worst as f64 / 1e3
    );
    out
}

/// The skew's share of its measured phase.
fn share(s: &naslab_results::StartSkew) -> f64 {
    s.skew_ns as f64 / s.wall_ns.max(1) as f64
}
