use std::fmt::Write;

use super::{avg_ms, workload};
use crate::{IterationResult, RunResult};

/// The file server's table, shaped like the NSS study's (seed 000): average response
/// times per op type in ms, throughput per connection and completion time, one column
/// per phase. Per-connection throughput is each connection's bytes over its own time to
/// finish (KB = 1000 B), averaged over connections.
pub fn fileserver_table(run: &RunResult) -> String {
    let phases: Vec<(&str, &IterationResult)> = [
        ("Write test", "FileServer_Write"),
        ("Read test", "FileServer_Read"),
    ]
    .into_iter()
    .filter_map(|(label, name)| {
        workload(run, name)
            .and_then(|w| w.median_iteration())
            .map(|it| (label, it))
    })
    .collect();
    let mut o = String::new();
    if phases.is_empty() {
        return o;
    }
    let _ = write!(o, "{:<44}", "File server");
    for (label, _) in &phases {
        let _ = write!(o, " {label:>14}");
    }
    o.push('\n');
    let cell = |v: Option<f64>, digits: usize| match v {
        Some(v) => format!("{v:>14.digits$}"),
        None => format!("{:>14}", "-"),
    };
    let rows: [(&str, &Figure, usize); 9] = [
        ("Connections", &|it| Some(it.streams.len() as f64), 0),
        ("Avg Open response time (ms)", &|it| avg_ms(it, "open"), 3),
        ("Avg Close response time (ms)", &|it| avg_ms(it, "close"), 3),
        (
            "Avg Create response time (ms)",
            &|it| avg_ms(it, "create"),
            3,
        ),
        ("Avg Write response time (ms)", &|it| avg_ms(it, "write"), 3),
        ("Avg Read response time (ms)", &|it| avg_ms(it, "read"), 3),
        (
            "Avg throughput per connection (KB/sec)",
            &per_connection_kb_s,
            1,
        ),
        (
            "Aggregate throughput (MB/sec)",
            &|it| Some(it.throughput_mb_s),
            2,
        ),
        (
            "Time taken for test completion (s)",
            &|it| Some(it.wall_ns as f64 / 1e9),
            3,
        ),
    ];
    for (label, f, digits) in rows {
        let _ = write!(o, "{label:<44}");
        for (_, it) in &phases {
            o.push(' ');
            o.push_str(&cell(f(it), digits));
        }
        o.push('\n');
    }
    o
}

/// One row's figure from a phase's median iteration.
type Figure = dyn Fn(&IterationResult) -> Option<f64>;

fn per_connection_kb_s(it: &IterationResult) -> Option<f64> {
    let rates: Vec<f64> = it
        .streams
        .iter()
        .filter(|s| s.done_ns > 0)
        .map(|s| s.bytes as f64 / 1e3 / (s.done_ns as f64 / 1e9))
        .collect();
    (!rates.is_empty()).then(|| rates.iter().sum::<f64>() / rates.len() as f64)
}
