//! The table lines of a multi-client run: per workload, the spread of the clients'
//! throughput and the slowest client.

use std::fmt::Write;

use naslab_results::RunResult;

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
        "{:<24} {:>12} {:>12} {:>12}  slowest client",
        "workload", "min MB/s", "median MB/s", "max MB/s"
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
        let _ = writeln!(
            out,
            "{:<24} {:>12.2} {:>12.2} {:>12.2}  {rank} on {host} ({slow:.2} MB/s)",
            w.name,
            per[0].0,
            median,
            per[n - 1].0
        );
    }
    let worst = multi
        .clients
        .iter()
        .max_by_key(|c| c.clock_uncertainty_ns)
        .map(|c| c.clock_uncertainty_ns)
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "clocks aligned to client 0's within {:.1} µs",
        worst as f64 / 1e3
    );
    out
}
