//! One client of an MPI job as the run's [`Coordinator`]: its own directory on the
//! target, the start gate, the votes after each iteration, and its results sent to rank
//! 0, which merges them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context};
use naslab_engine::{RunError, SharedSet, StartGate};
use naslab_results::{IterationResult, RunResult};

use super::comm::Job;
use super::merge::{failure_of, merge, others_failures, ClientReport, Gathered};
use super::{Concluded, Coordinator};
use crate::args::RunOpts;

/// One client of an MPI job.
pub struct MpiJob {
    job: Arc<Job>,
}

impl MpiJob {
    pub fn new(job: Job) -> MpiJob {
        MpiJob { job: Arc::new(job) }
    }
}

/// The engine's side of the job: the start gate of every measured phase.
struct Gate {
    job: Arc<Job>,
    /// The clients share one file set, which client 0 prepares.
    shared: bool,
}

impl StartGate for Gate {
    fn wait(&self) -> Result<u64, String> {
        self.job.start_gate()
    }
    fn peer_failed(&self) -> bool {
        self.job.peer_failed()
    }
    fn shared(&self) -> Option<SharedSet> {
        self.shared.then(|| SharedSet {
            preparer: self.job.with(|c| c.rank) == 0,
        })
    }
    fn prepared(&self, mine: Result<(), String>) -> Result<(), String> {
        self.job.shared_set_ready(mine)
    }
}

impl Coordinator for MpiJob {
    fn is_job(&self) -> bool {
        true
    }

    fn rank_and_size(&self) -> Option<(u32, u32)> {
        Some(self.job.with(|c| (c.rank, c.size)))
    }

    fn client_dir(&self) -> Option<String> {
        Some(self.job.with(|c| format!("client-{}", c.rank)))
    }

    fn share_files(&self, shared: bool) {
        self.job.with(|c| c.shared = shared);
    }

    fn shared_target_taken(&self) {
        if self.job.with(|c| c.shared && c.rank == 0) {
            self.job.send_target_word(true);
        }
    }

    fn await_shared_target(&self) -> anyhow::Result<()> {
        if !self.job.with(|c| c.shared && c.rank != 0) {
            return Ok(());
        }
        if !self.job.receive_target_word() {
            bail!("not started: client 0 could not take the shared target (--shared-files), so there is no file set to join; its own error says why");
        }
        Ok(())
    }

    fn private_run_dir(&self, opts: &RunOpts) -> anyhow::Result<Option<PathBuf>> {
        if opts.no_records {
            bail!("a multi-client run merges every client's op records into one result; leave out --no-records");
        }
        let rank = self.job.with(|c| c.rank);
        super::leftovers::remove_dead_clients_dirs(&std::env::temp_dir());
        let dir = tempfile::Builder::new()
            .prefix(&super::leftovers::private_dir_prefix(rank))
            .tempdir()
            .context("cannot make a private directory for this client's spools")?
            .keep();
        self.job.with(|c| c.private_dir = Some(dir.clone()));
        Ok(Some(dir))
    }

    fn start_gate(&self, shared: bool) -> Option<Arc<dyn StartGate>> {
        Some(Arc::new(Gate {
            job: self.job.clone(),
            shared,
        }))
    }

    fn stops_on_its_own(&self) -> bool {
        // A signal stops this client's phase (the replay's cancel) and is voted on after
        // the iteration, so that every client stops together; a client that stopped on
        // its own between iterations would leave the others waiting for it.
        false
    }

    fn writes_own_results(&self) -> bool {
        // Rank 0 writes the job's one run directory; none writes a partial one of its own
        // (a failure there would stop it alone, out of step with the others).
        false
    }

    /// Tells every client whether this one's iteration failed (or a signal stopped it),
    /// and marks a successful iteration stopped when another client failed, so every
    /// client ends together: a client decides to stop only through this vote, never on
    /// its own between iterations.
    fn after_iteration(
        &self,
        outcome: Result<IterationResult, RunError>,
    ) -> Result<IterationResult, RunError> {
        let signal = crate::interrupt::stopped_by().map(|sig| format!("stopped by {sig}"));
        let mine = signal.is_some()
            || match &outcome {
                Ok(r) => r.aborted.is_some(),
                Err(RunError::NotStarted(_)) => false,
                Err(_) => true,
            };
        if mine {
            self.job.with(|c| c.caused = true);
        }
        let lowest = self.job.end_of_iteration(mine);
        match (outcome, lowest, signal) {
            (Ok(mut r), _, Some(why)) if r.aborted.is_none() => {
                r.aborted = Some(why);
                Ok(r)
            }
            (Ok(mut r), Some(bad), None) if r.aborted.is_none() => {
                r.aborted = Some(format!("stopped because client {bad} failed"));
                Ok(r)
            }
            (outcome, _, _) => outcome,
        }
    }

    fn conclude(
        &self,
        run: &RunResult,
        failure: Option<String>,
        new_run_dir: &dyn Fn() -> anyhow::Result<PathBuf>,
    ) -> anyhow::Result<Option<Concluded>> {
        let mut run = run.clone();
        run.aborted = failure.clone();
        self.send_and_merge(Some(run), failure, Some(new_run_dir))
    }

    fn after_command(&self, result: anyhow::Result<()>) -> anyhow::Result<()> {
        if self.job.with(|c| c.finished) {
            return result;
        }
        // Client 0 that never held the shared target says so, so the others stop
        // waiting for it.
        self.job.send_target_word(false);
        let why = match &result {
            Ok(()) => "ended without results".to_string(),
            Err(e) => format!("{e:#}"),
        };
        self.job.with(|c| c.caused = true);
        self.job.end_of_iteration(true);
        // A client that never made its run's context has no run directory to give: rank
        // 0 then reports the job's failure without writing one.
        self.send_and_merge(None, Some(why), None).map(|_| ())
    }
}

impl MpiJob {
    /// Sends this client's results to rank 0; on rank 0, merges every client's into a
    /// run directory of its own.
    fn send_and_merge(
        &self,
        run: Option<RunResult>,
        failure: Option<String>,
        new_run_dir: Option<&dyn Fn() -> anyhow::Result<PathBuf>>,
    ) -> anyhow::Result<Option<Concluded>> {
        let (rank, host, caused, late, private, clocks, shared) = self.job.with(|c| {
            c.finished = true;
            (
                c.rank,
                c.host.clone(),
                c.caused,
                c.start_late_ns,
                c.private_dir.clone(),
                c.clocks.clone(),
                c.shared,
            )
        });
        let names: Vec<String> = run
            .iter()
            .flat_map(|r| &r.workloads)
            .flat_map(|w| &w.iterations)
            .filter_map(|it| it.records.clone())
            .collect();
        let report = ClientReport {
            rank,
            host,
            run,
            failure,
            caused,
            start_late_ns: late,
            records: names.clone(),
        };
        let mut parts = vec![serde_json::to_vec(&report)?];
        for n in &names {
            let path = private.as_ref().map(|p| p.join(n)).unwrap_or_default();
            parts.push(std::fs::read(&path).unwrap_or_default());
        }
        let gathered = self.job.gather(parts);
        let cleanup = || {
            if let Some(p) = &private {
                let _ = std::fs::remove_dir_all(p);
            }
        };
        let Some(all) = gathered else {
            // Rank 0 reports for the job.
            cleanup();
            return Ok(None);
        };
        let scratch = match &private {
            Some(p) => p.clone(),
            None => tempfile::tempdir()?.keep(),
        };
        let merged = merge_gathered(all, &scratch, &clocks, shared, new_run_dir);
        if private.is_none() {
            let _ = std::fs::remove_dir_all(&scratch);
        }
        cleanup();
        merged.map(Some)
    }
}

/// On rank 0: every client's parts (a report, then its records files) saved under
/// `scratch` and merged into a new run directory.
fn merge_gathered(
    all: Vec<Vec<Vec<u8>>>,
    scratch: &std::path::Path,
    clocks: &[(i64, u64)],
    shared: bool,
    new_run_dir: Option<&dyn Fn() -> anyhow::Result<PathBuf>>,
) -> anyhow::Result<Concluded> {
    let mut clients = Vec::new();
    for (r, parts) in all.into_iter().enumerate() {
        let mut parts = parts.into_iter();
        let head = parts.next().unwrap_or_default();
        let report: ClientReport = serde_json::from_slice(&head)
            .with_context(|| format!("client {r} sent an unreadable report"))?;
        let dir = scratch.join(format!("client-{r}"));
        std::fs::create_dir_all(&dir)?;
        let mut records = HashMap::new();
        for (name, bytes) in report.records.iter().zip(parts) {
            let path = dir.join(name);
            std::fs::write(&path, bytes)?;
            records.insert(name.clone(), path);
        }
        clients.push(Gathered {
            report,
            records,
            clock: clocks.get(r).copied().unwrap_or((0, 0)),
        });
    }
    let measured = clients.iter().any(|c| {
        c.report
            .run
            .as_ref()
            .is_some_and(|r| !r.workloads.is_empty())
    });
    let (true, Some(new_run_dir)) = (measured, new_run_dir) else {
        let why = failure_of(&clients).unwrap_or_else(|| "no client measured anything".into());
        bail!("{why}{}", others_failures(&clients));
    };
    let run_dir = new_run_dir()?;
    let run = merge(&clients, &run_dir, shared)?;
    Ok(Concluded {
        failure: run.aborted.clone(),
        table: super::spread::clients_table(&run),
        merged: Some((run, run_dir)),
    })
}
