//! A run of several workloads as one result: each workload's iterations in turn (a
//! batch), the warnings its plan and its figures call for, and the [`RunResult`] they
//! make. One API serves `naslab run` and the other workload commands, `lab matrix` and
//! multi-client jobs; what differs between them (progress on a terminal, signals, a
//! multi-client job's votes, the file layout taken after each iteration, saving the
//! results after each workload) comes in through [`RunHooks`].

use std::any::Any;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use naslab_results::{
    CacheMode, Device, Environment, IterationLayout, IterationResult, RunOptions, RunResult,
    SCHEMA_VERSION, TargetInfo, Warning, WorkloadResult,
};

use crate::backend::Target;
use crate::pacing::Pacing;
use crate::plan::Plan;
use crate::records::RecordSink;
use crate::replay::{Progress, ReplayOptions};
use crate::run::{IterationSpec, RunError, run_iteration};

/// What a run needs besides its workloads.
pub struct Session<'a> {
    pub target: &'a dyn Target,
    /// The target as the results name it.
    pub target_info: TargetInfo,
    /// The options as the results record them (iterations, records, cache ...).
    pub options: RunOptions,
    pub replay: ReplayOptions,
    pub cache: CacheMode,
    /// After each iteration's preparation, drop the whole page cache too.
    pub drop_all_caches: bool,
    /// The run directory: the plans' spools and the op records go here.
    pub run_dir: &'a Path,
    /// When the run started (RFC 3339, UTC).
    pub started_at: String,
    pub label: String,
    pub device: Device,
}

/// What a caller adds to a run. Every method has a default that does nothing.
pub trait RunHooks {
    /// Called as an iteration of `plan` starts, with the counters it updates; what it
    /// returns is dropped when the iteration ends (a progress display, say).
    fn iteration_started(&mut self, _plan: &Plan, _progress: Arc<Progress>) -> Box<dyn Any> {
        Box::new(())
    }
    /// Why the run must stop now (a signal came), if it must.
    fn stopped(&self) -> Option<String> {
        None
    }
    /// Sees each iteration's outcome before the run does (a multi-client job's vote).
    fn after_iteration(
        &mut self,
        outcome: Result<IterationResult, RunError>,
    ) -> Result<IterationResult, RunError> {
        outcome
    }
    /// What also sees an iteration's op records as they are written, while its measured
    /// phase runs (the report's pass over them), given the records file's name.
    fn record_sink(&self, _records: &str) -> Option<Box<dyn RecordSink>> {
        None
    }
    /// The layout of the workload's files after an iteration, when it can be taken.
    fn layout(&self, _plan: &Plan) -> Option<IterationLayout> {
        None
    }
    /// Called after each workload finishes with the results so far (to save them);
    /// an error stops the run.
    fn workload_done(&mut self, _run: &RunResult) -> Result<(), String> {
        Ok(())
    }
    /// Told each warning about how the client ran a measured phase (what the kernel
    /// refused `--realtime`) as the iteration that found it ends, so the user hears of
    /// it before the run is over; it is in the results' warnings too.
    fn warning(&mut self, _warning: &Warning) {}
}

/// Where a run's plans come from, one at a time.
pub trait PlanSource {
    /// The next workload's plan, given the results so far; `None` when there are no
    /// more, an error when it could not be made.
    fn next_plan(&mut self, run: &RunResult) -> Option<Result<&Plan, String>>;
}

/// A list of plans known before the run.
impl PlanSource for std::slice::Iter<'_, &Plan> {
    fn next_plan(&mut self, _run: &RunResult) -> Option<Result<&Plan, String>> {
        self.next().map(|p| Ok(*p))
    }
}

/// A run's results, and why it stopped early when it did.
pub struct RunOutcome {
    pub run: RunResult,
    pub failure: Option<SessionError>,
}

/// Why a run stopped before its last workload's last iteration. What was measured
/// before it is kept in the outcome's results either way.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The caller's hooks said to stop (a signal came): their words.
    #[error("{0}")]
    Stopped(String),
    /// The next workload's plan could not be made (the plan source's words).
    #[error("{0}")]
    Plan(String),
    /// An iteration was measured but ended short of its trace (a fatal op failure).
    #[error("{workload} stopped early: {source_name}:{why}")]
    CutShort {
        workload: String,
        /// Where the workload's ops came from (its trace).
        source_name: String,
        why: String,
    },
    /// An iteration could not run.
    #[error("{workload}: {error}")]
    Iteration {
        workload: String,
        #[source]
        error: RunError,
    },
    /// An iteration was measured whole but its op records could not all be written.
    #[error("{workload}: cannot write op records to '{}': {source}; the figures measured are kept", path.display())]
    RecordsLost {
        workload: String,
        path: PathBuf,
        #[source]
        source: crate::records::RecordsError,
    },
    /// The results could not be saved after a workload (a full `--out`).
    #[error("cannot save the results: {0}")]
    Save(String),
}

impl Session<'_> {
    /// Runs each plan's iterations in turn, stopping at the first that fails or is cut
    /// short (or when `hooks` says to stop, or its results cannot be saved). What was
    /// measured is always returned, with why it stopped early as the failure.
    pub fn run(&self, plans: &[&Plan], hooks: &mut dyn RunHooks) -> RunOutcome {
        let mut each = plans.iter();
        self.run_from(&mut each, hooks)
    }

    /// Like [`Session::run`], with the plans made one at a time by `source`, which sees
    /// the results so far before it makes the next (a sweep's load points, each chosen
    /// after the last one's figures). A plan `source` fails to make stops the run there.
    pub fn run_from(&self, source: &mut dyn PlanSource, hooks: &mut dyn RunHooks) -> RunOutcome {
        let env = crate::environment::environment();
        let mut run = RunResult {
            schema_version: SCHEMA_VERSION,
            naslab_version: env!("CARGO_PKG_VERSION").to_string(),
            started_at: self.started_at.clone(),
            environment: env.clone(),
            target: self.target_info.clone(),
            options: self.options.clone(),
            workloads: Vec::new(),
            warnings: Vec::new(),
            aborted: None,
            label: Some(self.label.clone()),
            device: self.device.clone(),
            multi_client: None,
            sweep: None,
        };
        let mut failure = None;
        loop {
            if let Some(why) = hooks.stopped() {
                failure = Some(SessionError::Stopped(why));
                break;
            }
            let plan = match source.next_plan(&run) {
                None => break,
                Some(Ok(plan)) => plan,
                Some(Err(why)) => {
                    failure = Some(SessionError::Plan(why));
                    break;
                }
            };
            let name = plan.header.workload.clone();
            run.warnings.extend(self.plan_warnings(plan, &env));
            let (results, stop, warned) = self.iterations(plan, hooks);
            run.warnings.extend(warned);
            let finished = stop.is_none();
            if finished {
                run.warnings.extend(self.pacing_lag(&name, &results));
            }
            if !results.is_empty() || finished {
                run.workloads.push(WorkloadResult::from_iterations(
                    name,
                    plan.source.clone(),
                    results,
                ));
            }
            if let Some(why) = stop {
                failure = Some(why);
                break;
            }
            // Results that cannot be saved (a full --out) stop the run; what was
            // measured is still returned, to be printed.
            if let Err(why) = hooks.workload_done(&run) {
                failure = Some(SessionError::Save(why));
                break;
            }
        }
        run.aborted = failure.as_ref().map(ToString::to_string);
        RunOutcome { run, failure }
    }

    /// What the plan itself says about the figures to come: a data set the client cache
    /// holds, reads in flight bounded by the queue depth, direct I/O falling back.
    fn plan_warnings(&self, plan: &Plan, env: &Environment) -> Vec<Warning> {
        let name = &plan.header.workload;
        let mut warnings = Vec::new();
        // A data set the client's memory can hold, when the client may keep it there:
        // caches kept, or dropped by a backend whose drop may leave pages (Windows).
        let data_bytes = plan.prepared_bytes() + plan.planned_write_bytes;
        let caps = self.target.caps();
        let fits = plan.direct_opens == 0 && data_bytes < env.memory_bytes;
        let drop_leaves = caps
            .drop_cache
            .is_some_and(naslab_results::CacheDrop::may_leave_pages);
        match self.cache {
            CacheMode::Keep if fits && caps.moves_data => {
                warnings.push(Warning::FitsInClientCache {
                    workload: name.clone(),
                    data_bytes,
                    memory_bytes: env.memory_bytes,
                });
            }
            CacheMode::Drop if fits && drop_leaves => {
                warnings.push(Warning::DropMayLeavePages {
                    workload: name.clone(),
                    data_bytes,
                    memory_bytes: env.memory_bytes,
                });
            }
            _ => {}
        }
        if let Some((in_flight, max_read)) = plan.reads_in_flight_bound() {
            warnings.push(Warning::ReadsInFlightBound {
                workload: name.clone(),
                in_flight,
                queue_depth: plan.queue_depth(),
                max_read,
            });
        }
        if self.cache == CacheMode::Direct && plan.unaligned_ops > 0 {
            warnings.push(Warning::UnalignedDirect {
                workload: name.clone(),
                ops: plan.unaligned_ops,
            });
        }
        warnings
    }

    /// Under `--pace original`, a warning when ops were issued late: the worst
    /// iteration's p99 lag above 1 ms.
    fn pacing_lag(&self, name: &str, results: &[IterationResult]) -> Option<Warning> {
        let worst = results.iter().map(|r| r.pacing_lag.p99_ns).max()?;
        (self.replay.pacing == Pacing::Original && worst > 1_000_000).then(|| Warning::PacingLag {
            workload: name.to_string(),
            p99_ns: worst,
        })
    }

    /// Where an iteration's op records go: `<workload>.ops.nbt.zst`, with the
    /// iteration's number in a batch.
    fn records_path(&self, name: &str, iteration: u32) -> Option<PathBuf> {
        let file = if self.options.iterations > 1 {
            format!("{name}.{iteration}.ops.nbt.zst")
        } else {
            format!("{name}.ops.nbt.zst")
        };
        self.options.records.then(|| self.run_dir.join(file))
    }

    /// Under `--realtime`, what the kernel refused an iteration's streams, and the
    /// streams of a paced replay too busy to sleep that ran niced instead.
    fn realtime_warnings(&self, name: &str, r: &IterationResult) -> Vec<Warning> {
        let Some(g) = &r.realtime else {
            return Vec::new();
        };
        let mut warnings = Vec::new();
        if !g.refused.is_empty() {
            warnings.push(Warning::RealtimeRefused {
                workload: name.to_string(),
                refused: g.refused.clone(),
                granted: g.summary(),
            });
        }
        if g.nice_streams > 0 && self.replay.pacing != Pacing::Afap {
            warnings.push(Warning::RealtimeNice {
                workload: name.to_string(),
                streams: g.nice_streams,
            });
        }
        warnings
    }

    /// Runs a workload's iterations; returns those measured, when the run must stop (an
    /// iteration aborted or failed, or `hooks` says so) why, and the warnings about how
    /// the client ran them (each kind once per workload, already told to `hooks`).
    fn iterations(
        &self,
        plan: &Plan,
        hooks: &mut dyn RunHooks,
    ) -> (Vec<IterationResult>, Option<SessionError>, Vec<Warning>) {
        let name = &plan.header.workload;
        let mut results = Vec::new();
        let mut warned: Vec<Warning> = Vec::new();
        for i in 1..=self.options.iterations.max(1) {
            let progress = Arc::new(Progress::default());
            let watching = hooks.iteration_started(plan, progress.clone());
            let sinks = |records: &str| hooks.record_sink(records);
            let spec = IterationSpec {
                plan,
                target: self.target,
                cache: self.cache,
                replay: self.replay.clone(),
                spool_dir: self.run_dir,
                records_path: self.records_path(name, i),
                progress: &progress,
                drop_all_caches: self.drop_all_caches,
                record_sink: Some(&sinks),
            };
            let outcome = run_iteration(&spec, i);
            let outcome = hooks.after_iteration(outcome);
            drop(watching);
            match outcome {
                Ok(mut r) => {
                    for w in self.realtime_warnings(name, &r) {
                        if !warned
                            .iter()
                            .any(|k| std::mem::discriminant(k) == std::mem::discriminant(&w))
                        {
                            hooks.warning(&w);
                            warned.push(w);
                        }
                    }
                    if let Some(why) = hooks.stopped() {
                        r.aborted.get_or_insert(why);
                    }
                    // Not measured: taken after the measured phase.
                    r.layout = hooks.layout(plan);
                    let aborted = r.aborted.clone();
                    results.push(r);
                    if let Some(why) = aborted {
                        let failure = match hooks.stopped() {
                            Some(signal) => SessionError::Stopped(signal),
                            None => SessionError::CutShort {
                                workload: name.clone(),
                                source_name: plan.source.clone(),
                                why,
                            },
                        };
                        return (results, Some(failure), warned);
                    }
                }
                Err(RunError::RecordsLost {
                    result,
                    path,
                    source,
                }) => {
                    // The iteration was measured whole: its figures count, and the run
                    // stops, since what follows could not be saved either.
                    let failure = SessionError::RecordsLost {
                        workload: name.clone(),
                        path,
                        source,
                    };
                    results.push(*result);
                    return (results, Some(failure), warned);
                }
                Err(error) => {
                    let failure = match hooks.stopped() {
                        Some(signal) => SessionError::Stopped(signal),
                        None => SessionError::Iteration {
                            workload: name.clone(),
                            error,
                        },
                    };
                    return (results, Some(failure), warned);
                }
            }
        }
        (results, None, warned)
    }
}
