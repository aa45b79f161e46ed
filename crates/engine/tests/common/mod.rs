//! What the engine's tests share: declaring files and building an iteration.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use naslab_engine::plan::{Plan, compile, records_from_trace};
use naslab_engine::{IterationSpec, Progress, ReplayOptions, RunError, Target, run_iteration};
use naslab_results::{CacheMode, IterationResult};
use naslab_trace::{FileDecl, Measured, Op, Prepare, Trace};

/// A regular file of the trace.
pub fn file(id: u32, path: &str, size: u64, exists: bool, prepare: Prepare) -> FileDecl {
    FileDecl {
        prepare,
        ..FileDecl::file(id, path, size, exists)
    }
}

/// An iteration with default replay options.
pub fn spec_of<'a>(
    plan: &'a Plan,
    target: &'a dyn Target,
    cache: CacheMode,
    spool_dir: &'a Path,
    records_path: Option<PathBuf>,
    progress: &'a Progress,
) -> IterationSpec<'a> {
    IterationSpec {
        plan,
        target,
        cache,
        replay: ReplayOptions::default(),
        spool_dir,
        records_path,
        progress,
        drop_all_caches: false,
        record_sink: None,
    }
}

/// Runs `plan` on `target` as iteration 1, with default replay options.
pub fn run_once(
    plan: &Plan,
    target: &dyn Target,
    cache: CacheMode,
    spool_dir: &Path,
    records_path: Option<PathBuf>,
) -> Result<IterationResult, RunError> {
    run_with(
        plan,
        target,
        cache,
        spool_dir,
        records_path,
        ReplayOptions::default(),
    )
}

/// Runs `plan` on `target` as iteration 1, replayed as `replay` says.
pub fn run_with(
    plan: &Plan,
    target: &dyn Target,
    cache: CacheMode,
    spool_dir: &Path,
    records_path: Option<PathBuf>,
    replay: ReplayOptions,
) -> Result<IterationResult, RunError> {
    let progress = Progress::default();
    let spec = IterationSpec {
        replay,
        ..spec_of(plan, target, cache, spool_dir, records_path, &progress)
    };
    run_iteration(&spec, 1)
}

pub fn plan_of(trace: &Trace, spool: &Path) -> Plan {
    compile(Path::new("test.jsonl"), records_from_trace(trace), spool).expect("trace compiles")
}

/// Every op of an op records file (or trace) with its measurement, in the file's order.
pub fn records_of(path: &Path) -> Vec<(Op, Measured)> {
    naslab_trace::open_trace(path)
        .expect("the records open")
        .filter_map(|r| match r.expect("each record reads") {
            naslab_trace::Record::Op(op, Some(m)) => Some((op, m)),
            _ => None,
        })
        .collect()
}
