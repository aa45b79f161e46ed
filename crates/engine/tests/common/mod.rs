//! What the engine's tests share: declaring files and building an iteration.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use naslab_engine::plan::{compile, records_from_trace, Plan};
use naslab_engine::{IterationSpec, Progress, ReplayOptions, Target};
use naslab_results::CacheMode;
use naslab_trace::{FileDecl, FileKind, Prepare, Trace};

/// A regular file of the trace.
pub fn file(id: u32, path: &str, size: u64, exists: bool, prepare: Prepare) -> FileDecl {
    FileDecl {
        id,
        path: path.into(),
        kind: FileKind::File,
        size,
        exists,
        prepare,
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
    }
}

pub fn plan_of(trace: &Trace, spool: &Path) -> Plan {
    compile(Path::new("test.jsonl"), records_from_trace(trace), spool).expect("trace compiles")
}
