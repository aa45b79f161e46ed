use std::fmt::Write;

use naslab_workload::catalog;
use naslab_workload::synthetic::iometer;

use super::sources::{trace_dir, user_traces};
use crate::args::ListArgs;

/// `naslab list`: suites, built-in workloads and the user's traces, one line each.
pub fn list(args: ListArgs) -> anyhow::Result<()> {
    let mut o = String::new();
    o.push_str(
        "suite    naspt                      the twelve NAS Performance Toolkit workloads\n",
    );
    let _ = writeln!(
        o,
        "suite    {:<26} the IOMeter-style set: 4 KiB random and 128 KiB sequential, 1 and 32 outstanding",
        iometer::SUITE
    );
    for w in catalog() {
        let _ = writeln!(o, "{:<8} {:<26} {}", w.suite, w.name, w.summary);
    }
    for t in &iometer::TESTS {
        let _ = writeln!(o, "{:<8} {:<26} {}", iometer::SUITE, t.name, summary(t));
    }
    if let Some(dir) = trace_dir(&args.trace_dir) {
        let traces = user_traces(&dir)?;
        for (name, path) in &traces {
            let _ = writeln!(o, "{:<8} {:<26} {}", "trace", name, path.display());
        }
        if traces.is_empty() {
            eprintln!(
                "(no traces in '{}'; put .jsonl or .nbt files there (either may be .zst) to run them by name)",
                dir.display()
            );
        }
    }
    crate::stdout::print(&o)
}

/// One line saying what an IOMeter-style test does.
fn summary(t: &iometer::IometerTest) -> String {
    format!(
        "{} KiB {} {}s, {} outstanding, over one 1 GiB test file (at scale 1)",
        t.block >> 10,
        if t.random { "random" } else { "sequential" },
        if t.write { "write" } else { "read" },
        t.depth
    )
}
