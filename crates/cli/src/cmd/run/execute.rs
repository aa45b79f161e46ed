//! Running the workloads: each one's iterations in turn, the warnings its plan calls
//! for, the exports written after each workload, and at the end the report, the table
//! and the view printed.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context};
use naslab_engine::environment::environment;
use naslab_engine::{run_iteration, IterationSpec, Pacing, Plan, Progress};
use naslab_results::export::{Exporter, Json, Table};
use naslab_results::{
    CacheMode, Environment, IterationResult, RunResult, Warning, WorkloadResult, SCHEMA_VERSION,
};

use super::compile::check_unique;
use super::{RunContext, Workload};
use crate::output::write_exports;
use crate::progress::Display;
use crate::timestamp::rfc3339_now;

/// Makes a view's text from the run's results and its directory.
pub type Render = dyn Fn(&RunResult, &Path) -> anyhow::Result<String>;

/// A workload family's own table (iozone's matrices, the file server's response times,
/// ...), made from the run's results and its directory (where the op records are).
pub struct View {
    /// The file it is written to in the run directory.
    pub file_name: &'static str,
    pub render: Box<Render>,
}

/// Runs every workload's iterations, writing the exports after each, and prints the table.
pub fn execute(ctx: RunContext, workloads: Vec<Workload>) -> anyhow::Result<()> {
    execute_with(ctx, workloads, None)
}

/// Like [`execute`], then prints `view` (also when the run stopped early) and writes it
/// into the run directory.
pub fn execute_with(
    ctx: RunContext,
    workloads: Vec<Workload>,
    view: Option<View>,
) -> anyhow::Result<()> {
    if let Err(e) = check_unique(&workloads) {
        // Nothing ran: leave no empty run directory behind.
        ctx.discard();
        return Err(e);
    }
    let env = environment();
    let mut run = RunResult {
        schema_version: SCHEMA_VERSION,
        naslab_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: rfc3339_now(),
        environment: env.clone(),
        target: ctx.target_info.clone(),
        options: ctx.options.clone(),
        workloads: Vec::new(),
        warnings: Vec::new(),
        aborted: None,
        label: Some(ctx.label.clone()),
        device: ctx.device.clone(),
        multi_client: None,
    };
    let mut failure = None;
    crate::interrupt::install();
    for w in &workloads {
        if let Some(why) = stopped() {
            failure = Some(why);
            break;
        }
        let plan = &w.plan;
        let name = plan.header.workload.clone();
        run.warnings.extend(plan_warnings(&ctx, plan, &env));
        let (results, stop) = run_iterations(&ctx, plan);
        if let Some(why) = stop {
            failure = Some(why);
            if !results.is_empty() {
                run.workloads.push(WorkloadResult::from_iterations(
                    name,
                    plan.source.clone(),
                    results,
                ));
            }
            break;
        }
        run.warnings.extend(pacing_lag(&ctx, &name, &results));
        run.workloads.push(WorkloadResult::from_iterations(
            name,
            plan.source.clone(),
            results,
        ));
        write_exports(&ctx.run_dir, &run)?;
    }
    if crate::multi::active() {
        // Rank 0 writes the job's one result from every client's.
        return crate::multi::finish(run, failure, ctx.json, view);
    }
    if run.workloads.is_empty() && stopped().is_none() {
        if let Some(why) = failure {
            // Nothing was measured: leave no empty run directory behind (the plans'
            // spools in it go first).
            drop(workloads);
            ctx.discard();
            bail!("{why}");
        }
    }
    finish(&ctx, run, failure, view)
}

/// "stopped by SIGNAL" once Ctrl-C or SIGTERM has come.
fn stopped() -> Option<String> {
    crate::interrupt::stopped_by().map(|sig| format!("stopped by {sig}"))
}

/// What the plan itself says about the figures to come: a data set the client cache
/// holds, reads in flight bounded by the queue depth, direct I/O falling back.
fn plan_warnings(ctx: &RunContext, plan: &Plan, env: &Environment) -> Vec<Warning> {
    let name = &plan.header.workload;
    let mut warnings = Vec::new();
    if ctx.cache == CacheMode::Keep
        && ctx.target.caps().moves_data
        && plan.direct_opens == 0
        && plan.prepared_bytes() + plan.planned_write_bytes < env.memory_bytes
    {
        warnings.push(Warning::FitsInClientCache {
            workload: name.clone(),
            data_bytes: plan.prepared_bytes() + plan.planned_write_bytes,
            memory_bytes: env.memory_bytes,
        });
    }
    if let Some((in_flight, max_read)) = plan.reads_in_flight_bound() {
        warnings.push(Warning::ReadsInFlightBound {
            workload: name.clone(),
            in_flight,
            queue_depth: plan.queue_depth(),
            max_read,
        });
    }
    if ctx.cache == CacheMode::Direct && plan.unaligned_ops > 0 {
        warnings.push(Warning::UnalignedDirect {
            workload: name.clone(),
            ops: plan.unaligned_ops,
        });
    }
    warnings
}

/// Runs a workload's iterations; returns those measured and, when the run must stop
/// (an iteration aborted or failed, or a signal came), why.
fn run_iterations(ctx: &RunContext, plan: &Plan) -> (Vec<IterationResult>, Option<String>) {
    let name = &plan.header.workload;
    let iterations = ctx.options.iterations.max(1);
    let mut results = Vec::new();
    for i in 1..=iterations {
        let records_path = ctx.options.records.then(|| {
            let file = if iterations > 1 {
                format!("{name}.{i}.ops.jsonl.zst")
            } else {
                format!("{name}.ops.jsonl.zst")
            };
            ctx.run_dir.join(file)
        });
        let progress = Arc::new(Progress::default());
        let display = Display::start(name, progress.clone(), plan.prepared_bytes(), plan.ops());
        let spec = IterationSpec {
            plan,
            target: ctx.target.as_ref(),
            cache: ctx.cache,
            replay: ctx.replay,
            spool_dir: &ctx.run_dir,
            records_path,
            progress: &progress,
            drop_all_caches: ctx.drop_all_caches,
        };
        let outcome = crate::multi::after_iteration(run_iteration(&spec, i));
        drop(display);
        match outcome {
            Ok(mut r) => {
                if let Some(why) = stopped() {
                    r.aborted.get_or_insert(why);
                }
                // Not measured: one FIEMAP per file, after the measured phase (by the
                // preparer alone when the clients share one file set, which it may
                // already be emptying for the next iteration).
                let joined = ctx
                    .replay
                    .start_gate
                    .and_then(|g| g.shared)
                    .is_some_and(|s| !s.preparer);
                if let Some(sb) = ctx.target.local_root().filter(|_| !joined) {
                    r.layout = crate::cmd::frag::iteration_layout(sb, plan);
                }
                let aborted = r.aborted.clone();
                results.push(r);
                if let Some(why) = aborted {
                    let failure = match stopped() {
                        Some(signal) => signal,
                        None => format!("{name} stopped early: {}:{why}", plan.source),
                    };
                    return (results, Some(failure));
                }
            }
            Err(e) => {
                let failure = stopped().unwrap_or_else(|| format!("{name}: {e}"));
                return (results, Some(failure));
            }
        }
    }
    (results, None)
}

/// Under `--pace original`, a warning when ops were issued late: the worst iteration's
/// p99 lag above 1 ms.
fn pacing_lag(ctx: &RunContext, name: &str, results: &[IterationResult]) -> Option<Warning> {
    let worst = results.iter().map(|r| r.pacing_lag.p99_ns).max()?;
    (ctx.replay.pacing == Pacing::Original && worst > 1_000_000).then(|| Warning::PacingLag {
        workload: name.to_string(),
        p99_ns: worst,
    })
}

/// Writes the final exports and the report, prints the table and `view`, and turns a
/// failure (or `--verify`'s mismatches) into the command's error.
fn finish(
    ctx: &RunContext,
    mut run: RunResult,
    failure: Option<String>,
    view: Option<View>,
) -> anyhow::Result<()> {
    run.aborted = failure.clone();
    let failure = failure.or_else(|| verify_failure(&run));
    write_exports(&ctx.run_dir, &run)?;
    // The HTML report is a view of what is already saved: if it cannot be written the
    // run still succeeded, and `naslab report` can make it later.
    if let Err(e) = naslab_report::write_run_report(&ctx.run_dir, &run) {
        eprintln!(
            "warning: report.html was not written ({e}); run `naslab report {}` to try again",
            ctx.run_dir.display()
        );
    }
    let shown: &dyn Exporter = if ctx.json { &Json } else { &Table };
    print!("{}", String::from_utf8_lossy(&shown.export(&run)));
    if let Some(v) = view {
        write_view(&v, &run, &ctx.run_dir, ctx.json)?;
    }
    eprintln!("results: {}", ctx.run_dir.display());
    match failure {
        Some(why) => bail!(
            "{why}\nthe results measured so far are in '{}'",
            ctx.run_dir.display()
        ),
        None => Ok(()),
    }
}

/// Renders `view` of `run`, writes it into the run directory and prints it (to stderr
/// under `--json`, which keeps stdout for the JSON).
pub fn write_view(view: &View, run: &RunResult, run_dir: &Path, json: bool) -> anyhow::Result<()> {
    let text = (view.render)(run, run_dir)?;
    let path = run_dir.join(view.file_name);
    std::fs::write(&path, &text).with_context(|| format!("cannot write '{}'", path.display()))?;
    if json {
        eprint!("{text}");
    } else {
        print!("\n{text}");
    }
    Ok(())
}

/// With `--verify`: the mismatches found, as the run's failure.
fn verify_failure(run: &RunResult) -> Option<String> {
    let mut total = naslab_results::VerifySummary::default();
    for it in run.workloads.iter().flat_map(|w| &w.iterations) {
        if let Some(v) = &it.verify {
            total.add_counts(v);
        }
    }
    if total.total() == 0 {
        return None;
    }
    let kinds: Vec<String> = total
        .by_kind()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{n} {}", k.label()))
        .collect();
    Some(format!(
        "--verify found {} blocks that did not hold what was written ({}); run.json lists them with what was expected and found",
        total.total(),
        kinds.join(", ")
    ))
}
