//! Compiling workloads before anything runs: trace files, built-in workloads and a
//! workload command's in-memory traces, each into a plan; two of the same name refused.

use std::path::Path;

use anyhow::bail;
use naslab_engine::{compile, records_from_reader, records_from_trace};
use naslab_trace::{Trace, open_trace};
use naslab_workload::GenParams;

use super::{RunContext, Workload};
use crate::cmd::sources::{Source, build, builtin_suite};

/// Compiles in-memory traces (a workload command's) into workloads; on failure removes
/// the still empty run directory.
pub fn compile_traces(ctx: &RunContext, traces: Vec<Trace>) -> anyhow::Result<Vec<Workload>> {
    let mut out = Vec::new();
    for trace in traces {
        let label = trace
            .header
            .generator
            .clone()
            .unwrap_or_else(|| trace.header.workload.clone());
        match compile(Path::new(&label), records_from_trace(&trace), &ctx.run_dir) {
            Ok(plan) => out.push(Workload { plan }),
            Err(e) => {
                ctx.discard();
                return Err(e.into());
            }
        }
    }
    Ok(out)
}

/// Compiles every workload before anything runs, so a bad one fails the run at once.
pub(super) fn compile_all(
    sources: &[Source],
    params: &GenParams,
    spool: &Path,
) -> anyhow::Result<Vec<Workload>> {
    let mut out = Vec::new();
    for source in sources {
        let plan = match source {
            Source::File(path) => {
                let reader = open_trace(path)?;
                compile(path, records_from_reader(reader), spool)?
            }
            Source::Builtin(name) => {
                let trace = build(name, params)?;
                let suite = builtin_suite(name);
                let label = format!(
                    "{name} ({suite}, seed {}, scale {})",
                    params.seed, params.scale
                );
                compile(Path::new(&label), records_from_trace(&trace), spool)?
            }
        };
        out.push(Workload { plan });
    }
    Ok(out)
}

/// Refuses two workloads of the same name: each runs in its own directory.
pub(super) fn check_unique(workloads: &[Workload]) -> anyhow::Result<()> {
    let mut names = std::collections::HashSet::new();
    for w in workloads {
        if !names.insert(w.plan.header.workload.clone()) {
            bail!(
                "two workloads are named '{}'; each workload runs in its own directory, so give them different names (a workload given twice, or a trace whose header names a built-in one)",
                w.plan.header.workload
            );
        }
    }
    Ok(())
}
