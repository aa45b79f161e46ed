use naslab_workload::catalog;

use super::sources::{trace_dir, user_traces};
use crate::args::ListArgs;

/// `naslab list`: suites, built-in workloads and the user's traces, one line each.
pub fn list(args: ListArgs) -> anyhow::Result<()> {
    println!("suite    naspt                   the twelve NAS Performance Toolkit workloads");
    for w in catalog() {
        println!("{:<8} {:<23} {}", w.suite, w.name, w.summary);
    }
    if let Some(dir) = trace_dir(&args.trace_dir) {
        let traces = user_traces(&dir)?;
        for (name, path) in &traces {
            println!("{:<8} {:<23} {}", "trace", name, path.display());
        }
        if traces.is_empty() {
            eprintln!(
                "(no traces in '{}'; put .jsonl or .jsonl.zst files there to run them by name)",
                dir.display()
            );
        }
    }
    Ok(())
}
