//! Running the workloads through the engine's [`Session`] (each one's iterations in
//! turn, the warnings its plan calls for), with what the terminal adds ([`CliHooks`]):
//! progress, signals, the exports written after each workload, and at the end the
//! report, the table and the view printed.

use std::any::Any;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use anyhow::{Context, bail};
use naslab_engine::{
    Plan, PlanSource, Progress, RecordSink, RunError, RunHooks, RunOutcome, Session,
};
use naslab_report::{IterationPass, ReportOptions, StreamedIteration};
use naslab_results::{IterationLayout, IterationResult, RunResult, Warning};
use naslab_trace::{FileDecl, Measured, Op};

use super::compile::check_unique;
use super::run_dir::make_run_dir;
use super::{RunContext, Workload};
use crate::multi::Concluded;
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
    execute_returning(ctx, workloads, view).1
}

/// Like [`execute_with`], also giving back the run's results when it measured anything
/// (`lab matrix` reads its cells from them). In a multi-client job the results are
/// this client's own, before the merge.
pub fn execute_returning(
    ctx: RunContext,
    workloads: Vec<Workload>,
    view: Option<View>,
) -> (Option<RunResult>, anyhow::Result<()>) {
    if let Err(e) = check_unique(&workloads) {
        // Nothing ran: leave no empty run directory behind.
        ctx.discard();
        return (None, Err(e));
    }
    let plans: Vec<&Plan> = workloads.iter().map(|w| &w.plan).collect();
    let (outcome, streamed) = run_session(&ctx, &mut plans.iter());
    let RunOutcome { run, failure } = outcome;
    let failure = failure.map(|f| f.to_string());
    let new_run_dir = || make_run_dir(&ctx.results_base);
    let concluded = match ctx.coord.conclude(&run, failure, &new_run_dir) {
        Ok(c) => c,
        Err(e) => return (Some(run), Err(e)),
    };
    // In a job, every client but rank 0 is done: rank 0 writes the job's results.
    let Some(concluded) = concluded else {
        return (Some(run), Ok(()));
    };
    if concluded.merged.is_none()
        && run.workloads.is_empty()
        && stopped().is_none()
        && let Some(why) = concluded.failure
    {
        // Nothing was measured: leave no empty run directory behind (the plans'
        // spools in it go first).
        drop(plans);
        drop(workloads);
        ctx.discard();
        return (None, Err(anyhow::anyhow!(why)));
    }
    // The plans' spools are let go while the results are written: closing them frees
    // their page cache, a tenth of a second per 3 M ops. (Had the thread not started,
    // they were let go here already.)
    drop(plans);
    let freed = std::thread::Builder::new()
        .name("spool-free".into())
        .spawn(move || drop(workloads));
    let finished = finish(&ctx, &run, concluded, view, streamed);
    if let Ok(h) = freed {
        let _ = h.join();
    }
    (Some(run), finished)
}

/// Workloads made one at a time after the results so far, and what they add to the
/// results once the run ends (a sweep's load points and its curve).
pub trait RunSource: PlanSource {
    /// Adds to the results before they are written and printed.
    fn complete(&mut self, run: &mut RunResult);
}

/// Like [`execute_returning`], with the workloads made one at a time by `source`. In a
/// multi-client job, `source` completes each client's results before they are sent to
/// rank 0, whose completion (a sweep's merged points) the merged results keep.
pub fn execute_from(
    ctx: RunContext,
    source: &mut dyn RunSource,
    view: Option<View>,
) -> (Option<RunResult>, anyhow::Result<()>) {
    let (outcome, streamed) = run_session(&ctx, source);
    let RunOutcome { mut run, failure } = outcome;
    let failure = failure.map(|f| f.to_string());
    source.complete(&mut run);
    let new_run_dir = || make_run_dir(&ctx.results_base);
    let concluded = match ctx.coord.conclude(&run, failure, &new_run_dir) {
        Ok(c) => c,
        Err(e) => return (Some(run), Err(e)),
    };
    // In a job, every client but rank 0 is done: rank 0 writes the job's results.
    let Some(mut concluded) = concluded else {
        return (Some(run), Ok(()));
    };
    if concluded.merged.is_none()
        && run.workloads.is_empty()
        && stopped().is_none()
        && let Some(why) = concluded.failure
    {
        ctx.discard();
        return (None, Err(anyhow::anyhow!(why)));
    }
    // A job that stopped early says why in its own words (naming the client that failed
    // first); the sweep's reason is that one.
    if let Some((merged, _)) = &mut concluded.merged
        && let (Some(sweep), Some(why)) = (&mut merged.sweep, &merged.aborted)
    {
        sweep.stopped = Some(why.clone());
    }
    let finished = finish(&ctx, &run, concluded, view, streamed);
    (Some(run), finished)
}

/// Runs the plans `source` gives through the engine's session with the terminal's
/// hooks; gives back the outcome and the report's views made while records were written.
fn run_session(
    ctx: &RunContext,
    source: &mut dyn PlanSource,
) -> (RunOutcome, HashMap<String, StreamedIteration>) {
    crate::interrupt::keep_results();
    let session = Session {
        target: ctx.target.as_ref(),
        target_info: ctx.target_info.clone(),
        options: ctx.options.clone(),
        replay: ctx.replay.clone(),
        cache: ctx.cache,
        drop_all_caches: ctx.drop_all_caches,
        run_dir: &ctx.run_dir,
        started_at: rfc3339_now(),
        label: ctx.label.clone(),
        device: ctx.device.clone(),
    };
    let mut hooks = CliHooks {
        ctx,
        streamed: Arc::default(),
    };
    let outcome = session.run_from(source, &mut hooks);
    let streamed = std::mem::take(&mut *hooks.streamed.lock().unwrap_or_else(|e| e.into_inner()));
    (outcome, streamed)
}

/// What the terminal adds to a run: a progress display, Ctrl-C and SIGTERM, a
/// multi-client job's votes, the file layout after each iteration, and the exports
/// written after each workload.
struct CliHooks<'a> {
    ctx: &'a RunContext,
    /// The report's views of each iteration, made while its records were written (by
    /// records file name).
    streamed: Streamed,
}

type Streamed = Arc<Mutex<HashMap<String, StreamedIteration>>>;

/// The report's pass over an iteration's records, fed as they are written.
struct ReportPass {
    pass: IterationPass,
    records: String,
    into: Streamed,
}

impl RecordSink for ReportPass {
    fn file(&mut self, decl: &FileDecl) {
        self.pass.file(decl);
    }
    fn op(&mut self, op: &Op, measured: &Measured) {
        self.pass.op(op, measured);
    }
    fn finish(self: Box<Self>, clock_start_ns: u64, wall_ns: u64) {
        let made = self.pass.finish(clock_start_ns, wall_ns);
        if let Ok(mut streamed) = self.into.lock() {
            streamed.insert(self.records, made);
        }
    }
}

impl RunHooks for CliHooks<'_> {
    fn iteration_started(&mut self, plan: &Plan, progress: Arc<Progress>) -> Box<dyn Any> {
        let name = &plan.header.workload;
        Box::new(Display::start(
            name,
            progress,
            plan.prepared_bytes(),
            plan.ops(),
        ))
    }

    fn stopped(&self) -> Option<String> {
        if !self.ctx.coord.stops_on_its_own() {
            return None;
        }
        stopped()
    }

    fn after_iteration(
        &mut self,
        outcome: Result<IterationResult, RunError>,
    ) -> Result<IterationResult, RunError> {
        self.ctx.coord.after_iteration(outcome)
    }

    fn record_sink(&self, records: &str) -> Option<Box<dyn RecordSink>> {
        // A multi-client run's report reads the records merged from every client.
        if !self.ctx.coord.writes_own_results() {
            return None;
        }
        Some(Box::new(ReportPass {
            pass: IterationPass::new(ReportOptions::default()),
            records: records.to_string(),
            into: self.streamed.clone(),
        }))
    }

    /// Extents are read through FIEMAP on Linux and `FSCTL_GET_RETRIEVAL_POINTERS` on
    /// Windows: elsewhere there is no layout.
    #[cfg(not(any(target_os = "linux", windows)))]
    fn layout(&self, _plan: &Plan) -> Option<IterationLayout> {
        None
    }

    #[cfg(windows)]
    fn layout(&self, plan: &Plan) -> Option<IterationLayout> {
        // By the preparer alone when the clients share one file set, as on Linux.
        let joined = self
            .ctx
            .replay
            .start_gate
            .as_ref()
            .and_then(|g| g.shared())
            .is_some_and(|s| !s.preparer);
        if joined {
            return None;
        }
        crate::cmd::frag::iteration_layout_in(self.ctx.target.as_ref(), plan)
    }

    #[cfg(target_os = "linux")]
    fn layout(&self, plan: &Plan) -> Option<IterationLayout> {
        // One FIEMAP per file (by the preparer alone when the clients share one file
        // set, which it may already be emptying for the next iteration).
        let joined = self
            .ctx
            .replay
            .start_gate
            .as_ref()
            .and_then(|g| g.shared())
            .is_some_and(|s| !s.preparer);
        let sandbox = self.ctx.target.local_root().filter(|_| !joined)?;
        crate::cmd::frag::iteration_layout(sandbox, plan)
    }

    fn warning(&mut self, warning: &Warning) {
        // Said as soon as it is known; the table and run.json list it again at the end.
        eprintln!("warning: {warning}");
    }

    fn workload_done(&mut self, run: &RunResult) -> Result<(), String> {
        if !self.ctx.coord.writes_own_results() {
            return Ok(());
        }
        write_exports(&self.ctx.run_dir, run).map_err(|e| format!("{e:#}"))
    }
}

/// "stopped by SIGNAL" once Ctrl-C or SIGTERM has come.
fn stopped() -> Option<String> {
    crate::interrupt::stopped_by().map(|sig| format!("stopped by {sig}"))
}

/// Writes the final exports and the report, prints the table (and what `concluded`
/// adds to it) and `view`, and turns a failure (or `--verify`'s mismatches, or failed
/// ops) into the command's error. The results are the run's own, in its run directory,
/// or a job's merged ones in theirs.
fn finish(
    ctx: &RunContext,
    own: &RunResult,
    concluded: Concluded,
    view: Option<View>,
    streamed: HashMap<String, StreamedIteration>,
) -> anyhow::Result<()> {
    let Concluded {
        merged,
        failure,
        table,
    } = concluded;
    // A job's report reads the merged records: no views were made beside them.
    let (run, run_dir, streamed) = match &merged {
        Some((run, dir)) => (run, dir.as_path(), HashMap::new()),
        None => (own, ctx.run_dir.as_path(), streamed),
    };
    let failure = failure.or_else(|| verify_failure(run));
    let failed_ops = (!ctx.tolerate_errors).then(|| OpsFailed::of(run)).flatten();
    // Results that cannot be saved (a full --out) are still printed: the table is then
    // all that is left of them.
    let saved = write_exports(run_dir, run);
    if saved.is_ok() {
        // The HTML report is a view of what is already saved: if it cannot be written
        // the run still succeeded, and `naslab report` can make it later.
        if let Err(e) = naslab_report::write_run_report_streamed(run_dir, run, streamed) {
            eprintln!(
                "warning: report.html was not written ({e}); run `naslab report {}` to try again",
                run_dir.display()
            );
        }
    }
    let printed = crate::stdout::print_export(run, ctx.json)
        .and_then(|()| print_table(&table, ctx.json))
        .and_then(|()| match view {
            Some(v) if saved.is_ok() => write_view(&v, run, run_dir, ctx.json),
            _ => Ok(()),
        });
    if let Err(e) = saved {
        let kept = kept_files(run_dir);
        bail!(
            "{}{e:#}; the results are not saved: the table printed is what was measured{}; free space in '{}' or give another --out",
            failure.map(|f| format!("{f}\n")).unwrap_or_default(),
            if kept.is_empty() {
                String::new()
            } else {
                format!(
                    ", and '{}' keeps what could be written ({})",
                    run_dir.display(),
                    kept.join(", ")
                )
            },
            run_dir.display()
        );
    }
    eprintln!("results: {}", run_dir.display());
    // The run's own failure comes first; then one printing the results (they are
    // saved either way).
    match failure {
        Some(why) => bail!(
            "{why}\nthe results measured so far are in '{}'",
            run_dir.display()
        ),
        None => printed.and(match failed_ops {
            Some(failed) => Err(failed.into()),
            None => Ok(()),
        }),
    }
}

/// What follows the results table (a job's clients' spread): on stdout, or on stderr
/// under `--json`, which keeps stdout for the JSON.
fn print_table(table: &str, json: bool) -> anyhow::Result<()> {
    if table.is_empty() {
        Ok(())
    } else if json {
        eprint!("{table}");
        Ok(())
    } else {
        crate::stdout::print(table)
    }
}

/// The files in the run directory, by name (what a run that could not save everything
/// leaves), leaving out the half-written temporary copies.
fn kept_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !(n.starts_with('.') && n.ends_with(".tmp")))
        .collect();
    names.sort();
    names
}

/// A run that finished, but some of whose ops failed: the command exits with
/// [`OpsFailed::EXIT_STATUS`] unless `--tolerate-errors` was given.
#[derive(Debug)]
pub struct OpsFailed {
    /// The failed ops, every workload's iterations together.
    pub ops: u64,
    /// Per op type, failures by errno ("read EBADF 3").
    pub by_kind: Vec<String>,
}

impl OpsFailed {
    /// The command's exit status for a run with failed ops (1 is a run that could not
    /// run or stopped, 130 one a signal stopped).
    pub const EXIT_STATUS: i32 = 3;

    /// The failures of `run`, when there were any.
    pub fn of(run: &RunResult) -> Option<OpsFailed> {
        let mut ops = 0;
        let mut by: std::collections::BTreeMap<(String, String), u64> = Default::default();
        for it in run.workloads.iter().flat_map(|w| &w.iterations) {
            ops += it.errors;
            for (kind, s) in &it.op_stats {
                for (errno, n) in &s.errors_by_errno {
                    *by.entry((kind.clone(), errno.clone())).or_insert(0) += n;
                }
            }
        }
        let by_kind = by
            .into_iter()
            .map(|((kind, errno), n)| format!("{kind} {errno} {n}"))
            .collect();
        (ops > 0).then_some(OpsFailed { ops, by_kind })
    }
}

impl std::fmt::Display for OpsFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ops failed ({}); the results count them by errno and keep their latencies apart from the others'. If the workload is expected to fail some ops, pass --tolerate-errors to exit 0",
            self.ops,
            self.by_kind.join(", ")
        )
    }
}

impl std::error::Error for OpsFailed {}

/// Renders `view` of `run`, writes it into the run directory and prints it (to stderr
/// under `--json`, which keeps stdout for the JSON).
pub fn write_view(view: &View, run: &RunResult, run_dir: &Path, json: bool) -> anyhow::Result<()> {
    let text = (view.render)(run, run_dir)?;
    let path = run_dir.join(view.file_name);
    std::fs::write(&path, &text).with_context(|| format!("cannot write '{}'", path.display()))?;
    if json {
        eprint!("{text}");
        Ok(())
    } else {
        crate::stdout::print(&format!("\n{text}"))
    }
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
