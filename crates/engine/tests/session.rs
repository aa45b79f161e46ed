//! A run of several workloads through the engine's session: the batch, the results in
//! order, the hooks called as they say, and a stop (a failed iteration, a signal)
//! ending the run with what was measured.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::any::Any;
use std::sync::Arc;

use common::{file, plan_of};
use naslab_engine::plan::Plan;
use naslab_engine::{NullTarget, Progress, RunError, RunHooks, Session, SessionError};
use naslab_results::{CacheMode, IterationResult, RunOptions, RunResult};
use naslab_trace::{Op, OpKind, Prepare, Trace};

/// A workload of `n` ops: an open, 4 KiB reads of one prepared file, a close.
fn reads(name: &str, n: u64) -> Trace {
    let mut t = Trace::new(name);
    t.files.push(file(1, "f", 1 << 20, true, Prepare::Stream));
    t.ops.push(Op::new(0, 0, OpKind::Open, 1));
    for i in 1..n - 1 {
        let mut o = Op::new(0, i, OpKind::Read, 1);
        o.offset = (i * 4096) % (1 << 20);
        o.len = 4096;
        t.ops.push(o);
    }
    t.ops.push(Op::new(0, n, OpKind::Close, 1));
    t
}

/// Workloads A (10 ops) and B (20 ops), compiled into a temporary directory.
fn two_workloads() -> (tempfile::TempDir, Plan, Plan) {
    let dir = tempfile::tempdir().unwrap();
    let a = plan_of(&reads("A", 10), dir.path());
    let b = plan_of(&reads("B", 20), dir.path());
    (dir, a, b)
}

#[derive(Default)]
struct Log {
    started: Vec<String>,
    saved: Vec<Vec<String>>,
    /// Fail the iteration numbered this (counting every iteration of the run).
    fail_at: Option<usize>,
    /// Say "stopped" once this many iterations have started.
    stop_after: Option<usize>,
    /// Fail to save the results (as a full --out does).
    save_fails: bool,
}

impl RunHooks for Log {
    fn iteration_started(&mut self, plan: &Plan, _progress: Arc<Progress>) -> Box<dyn Any> {
        self.started.push(plan.header.workload.clone());
        Box::new(())
    }
    fn stopped(&self) -> Option<String> {
        self.stop_after
            .filter(|&n| self.started.len() >= n)
            .map(|_| "stopped by SIGINT".to_string())
    }
    fn after_iteration(
        &mut self,
        outcome: Result<IterationResult, RunError>,
    ) -> Result<IterationResult, RunError> {
        if self.fail_at == Some(self.started.len()) {
            return Err(RunError::NotStarted("told to fail".into()));
        }
        outcome
    }
    fn workload_done(&mut self, run: &RunResult) -> Result<(), String> {
        self.saved
            .push(run.workloads.iter().map(|w| w.name.clone()).collect());
        if self.save_fails {
            return Err("No space left on device".into());
        }
        Ok(())
    }
}

fn session<'a>(target: &'a NullTarget, dir: &'a std::path::Path, iterations: u32) -> Session<'a> {
    Session {
        target,
        target_info: Default::default(),
        options: RunOptions {
            iterations,
            records: false,
            ..Default::default()
        },
        replay: Default::default(),
        cache: CacheMode::Keep,
        drop_all_caches: false,
        run_dir: dir,
        started_at: "2026-11-23T00:00:00Z".into(),
        label: "t".into(),
        device: Default::default(),
    }
}

#[test]
fn a_batch_of_two_workloads_makes_one_result_saved_after_each_workload() {
    let (dir, a, b) = two_workloads();
    let target = NullTarget;
    let mut log = Log::default();
    let out = session(&target, dir.path(), 3).run(&[&a, &b], &mut log);
    assert!(out.failure.is_none() && out.run.aborted.is_none());
    assert_eq!(log.started, ["A", "A", "A", "B", "B", "B"]);
    assert_eq!(log.saved, vec![vec!["A"], vec!["A", "B"]]);
    let run = out.run;
    assert_eq!(run.started_at, "2026-11-23T00:00:00Z");
    assert_eq!(run.label.as_deref(), Some("t"));
    let got: Vec<(&str, Vec<u64>)> = run
        .workloads
        .iter()
        .map(|w| {
            (
                w.name.as_str(),
                w.iterations.iter().map(|i| i.ops).collect(),
            )
        })
        .collect();
    assert_eq!(got, vec![("A", vec![10, 10, 10]), ("B", vec![20, 20, 20])]);
    let numbers: Vec<u32> = run.workloads[1]
        .iterations
        .iter()
        .map(|i| i.iteration)
        .collect();
    assert_eq!(numbers, [1, 2, 3]);
}

#[test]
fn a_failed_iteration_ends_the_run_keeping_what_was_measured() {
    let (dir, a, b) = two_workloads();
    let target = NullTarget;
    // The second iteration of A fails: A keeps its first, B never starts.
    let mut log = Log {
        fail_at: Some(2),
        ..Log::default()
    };
    let out = session(&target, dir.path(), 2).run(&[&a, &b], &mut log);
    let failure = out.failure.expect("the run stopped");
    assert!(
        matches!(&failure, SessionError::Iteration { workload, .. } if workload == "A"),
        "{failure:?}"
    );
    let why = failure.to_string();
    assert!(
        why.starts_with("A: ") && why.contains("told to fail"),
        "{why}"
    );
    assert_eq!(out.run.aborted.as_deref(), Some(why.as_str()));
    assert_eq!(log.started, ["A", "A"]);
    assert!(log.saved.is_empty(), "no workload finished");
    assert_eq!(out.run.workloads.len(), 1);
    assert_eq!(out.run.workloads[0].iterations.len(), 1);
}

#[test]
fn a_signal_ends_the_run_naming_it() {
    let (dir, a, b) = two_workloads();
    let target = NullTarget;
    let mut log = Log {
        stop_after: Some(1),
        ..Log::default()
    };
    let out = session(&target, dir.path(), 1).run(&[&a, &b], &mut log);
    assert!(
        matches!(&out.failure, Some(SessionError::Stopped(s)) if s == "stopped by SIGINT"),
        "{:?}",
        out.failure
    );
    assert_eq!(log.started, ["A"]);
    // A's iteration is kept, marked with the signal.
    let it = &out.run.workloads[0].iterations[0];
    assert_eq!(it.aborted.as_deref(), Some("stopped by SIGINT"));
    assert_eq!(out.run.workloads.len(), 1);
}

#[test]
fn results_that_cannot_be_saved_end_the_run_but_are_returned() {
    let (dir, a, b) = two_workloads();
    let target = NullTarget;
    let mut log = Log {
        save_fails: true,
        ..Log::default()
    };
    let out = session(&target, dir.path(), 2).run(&[&a, &b], &mut log);
    let failure = out.failure.expect("the run stopped");
    assert!(matches!(failure, SessionError::Save(_)), "{failure:?}");
    let why = failure.to_string();
    assert!(
        why.contains("cannot save the results") && why.contains("No space left"),
        "{why}"
    );
    assert_eq!(out.run.aborted.as_deref(), Some(why.as_str()));
    // A was measured whole and is kept; B never started.
    assert_eq!(log.started, ["A", "A"]);
    let got: Vec<(&str, usize)> = out
        .run
        .workloads
        .iter()
        .map(|w| (w.name.as_str(), w.iterations.len()))
        .collect();
    assert_eq!(got, [("A", 2)]);
}

/// The null target with a Windows directory's way of dropping caches, which may leave
/// a file's pages in the PC's memory.
struct DropLeavesPages;

impl naslab_engine::Target for DropLeavesPages {
    fn backend_name(&self) -> &'static str {
        "windows"
    }
    fn caps(&self) -> naslab_engine::Caps {
        naslab_engine::Caps {
            drop_cache: Some(naslab_results::CacheDrop::UnbufferedOpen),
            ..NullTarget.caps()
        }
    }
    fn connect(
        &self,
        dir: &str,
        files: Arc<naslab_engine::plan::FileTable>,
        options: naslab_engine::BackendOptions,
    ) -> Result<Box<dyn naslab_engine::Backend>, naslab_engine::OpError> {
        NullTarget.connect(dir, files, options)
    }
}

#[test]
fn a_drop_that_may_leave_pages_warns_when_the_data_fits_in_memory() {
    use naslab_engine::Target;
    use naslab_results::Warning;
    let (dir, a, _) = two_workloads();
    let warned = |target: &dyn Target, cache: CacheMode| {
        let s = Session {
            target,
            cache,
            ..session(&NullTarget, dir.path(), 1)
        };
        let out = s.run(&[&a], &mut Log::default());
        assert!(out.failure.is_none(), "{:?}", out.failure);
        out.run
            .warnings
            .iter()
            .filter(|w| matches!(w, Warning::DropMayLeavePages { .. }))
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    // A's 1 MiB fits in any machine's memory.
    let w = warned(&DropLeavesPages, CacheMode::Drop);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("--cache direct"), "{w:?}");
    assert!(warned(&DropLeavesPages, CacheMode::Direct).is_empty());
    assert!(
        warned(&NullTarget, CacheMode::Drop).is_empty(),
        "the null backend caches nothing"
    );
}
