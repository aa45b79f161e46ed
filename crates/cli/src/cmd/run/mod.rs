//! `naslab run` and what every workload command shares: compiling the workloads
//! (`compile`), checking the options and opening the target (`context`, `target`),
//! making the run directory (`run_dir`), and running the iterations and writing the
//! results (`execute`).

mod compile;
mod context;
mod execute;
mod link;
pub(crate) mod run_dir;
mod target;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::bail;
use naslab_engine::{Plan, ReplayOptions, Target};
use naslab_results::{CacheMode, Device, RunOptions, TargetInfo};

pub use compile::compile_traces;
pub use context::context;
#[cfg(target_os = "linux")]
pub use execute::execute_returning;
pub use execute::{OpsFailed, RunSource, View, execute, execute_from, execute_with};

use super::sources::{Source, gen_params, pick_from_suite, resolve, trace_dir};
use crate::args::RunArgs;
use crate::multi::Coordinator;

/// A workload ready to run: its compiled plan and where it came from.
pub struct Workload {
    pub plan: Plan,
}

/// What a run needs besides its workloads.
pub struct RunContext {
    pub target: Box<dyn Target>,
    pub target_info: TargetInfo,
    pub run_dir: PathBuf,
    pub options: RunOptions,
    pub replay: ReplayOptions,
    pub cache: CacheMode,
    pub drop_all_caches: bool,
    pub json: bool,
    /// The results and label directories this run made, to remove again if nothing ran.
    pub made_dirs: Vec<PathBuf>,
    /// `--label`.
    pub label: String,
    /// The device and notes given on the command line.
    pub device: Device,
    /// `--tolerate-errors`: failed ops do not make the command fail.
    pub tolerate_errors: bool,
    /// Where run directories are made (`--out`/`--label`): a job's rank 0 makes the
    /// job's one there.
    pub results_base: PathBuf,
    /// A lone run's or a multi-client job's decisions.
    pub coord: Arc<dyn Coordinator>,
}

impl RunContext {
    /// Removes the run directory, and the directories made for it, when they are still
    /// empty: a run that never started leaves nothing behind.
    pub fn discard(&self) {
        let _ = std::fs::remove_dir(&self.run_dir);
        for d in self.made_dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// `naslab run TRACE...`.
pub fn run(args: RunArgs, coord: &Arc<dyn Coordinator>) -> anyhow::Result<()> {
    let dir = trace_dir(&args.trace_dir);
    let mut sources: Vec<Source> = args.traces.iter().cloned().map(Source::File).collect();
    match &args.suite {
        // --workload with --suite picks from the suite.
        Some(s) => sources.extend(pick_from_suite(s, &args.workload)?),
        None => {
            for name in &args.workload {
                sources.push(resolve(name, dir.as_deref())?);
            }
        }
    }
    if sources.is_empty() {
        bail!(
            "nothing to run: give trace files, --suite naspt|iometer or --workload NAME (see `naslab list`)"
        );
    }
    let params = gen_params(&args.generate)?;
    let mut extra = BTreeMap::new();
    if sources.iter().any(|s| matches!(s, Source::Builtin(_))) {
        extra.insert("scale".to_string(), params.scale.to_string());
        extra.insert("seed".to_string(), params.seed.to_string());
    }
    if let Some(s) = &args.suite {
        extra.insert("suite".to_string(), s.clone());
    }
    let ctx = context(&args.opts, coord, CacheMode::Drop, extra)?;
    match compile::compile_all(&sources, &params, &ctx.run_dir) {
        Ok(workloads) => execute(ctx, workloads),
        Err(e) => {
            // Nothing ran: leave no empty run directory behind.
            ctx.discard();
            Err(e)
        }
    }
}
