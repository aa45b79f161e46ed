//! One client of an MPI job as the run's [`Coordinator`]: its own directory on the
//! target, the start gate, the votes after each iteration, and its results sent to rank
//! 0, which merges them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use naslab_engine::{RunError, SharedSet, StartGate};
use naslab_results::{IterationResult, RunResult};

use super::comm::Job;
use super::merge::{ClientReport, Gathered, failure_of, merge, others_failures};
use super::{Concluded, Coordinator, PointPart};
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
    fn stop_preparing(&self) -> Option<String> {
        self.job.failed_before_start()
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
            bail!(
                "not started: client 0 could not take the shared target (--shared-files), so there is no file set to join; its own error says why"
            );
        }
        Ok(())
    }

    fn private_run_dir(&self, opts: &RunOpts) -> anyhow::Result<Option<PathBuf>> {
        if opts.no_records {
            bail!(
                "a multi-client run merges every client's op records into one result; leave out --no-records"
            );
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

    fn between_points(
        &self,
        mine: Vec<u8>,
        decide: &mut dyn FnMut(Vec<PointPart>) -> Vec<u8>,
    ) -> Vec<u8> {
        let verdict = self.job.gather_point(mine).map(|parts| {
            let clocks = self.job.with(|c| c.clocks.clone());
            decide(
                parts
                    .into_iter()
                    .enumerate()
                    .map(|(r, (late, part))| PointPart {
                        rank: r as u32,
                        part,
                        start_late_ns: Some(late),
                        clock_uncertainty_ns: clocks.get(r).map_or(0, |c| c.1),
                    })
                    .collect(),
            )
        });
        self.job.share_verdict(verdict)
    }

    fn failed_before_point(&self) {
        self.job.with(|c| c.caused = true);
        self.job.end_of_iteration(true);
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
        let (rank, size, host, caused, late, private, clocks, shared) = self.job.with(|c| {
            c.finished = true;
            (
                c.rank,
                c.size,
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
        let files: Vec<PathBuf> = names
            .iter()
            .map(|n| private.as_ref().map(|p| p.join(n)).unwrap_or_default())
            .collect();
        let report = ClientReport {
            rank,
            host,
            run,
            failure,
            caused,
            start_late_ns: late,
            records: names,
        };
        let cleanup = || {
            if let Some(p) = &private {
                let _ = std::fs::remove_dir_all(p);
            }
        };
        if rank != 0 {
            // Rank 0 reports for the job.
            self.job.send_results(&serde_json::to_vec(&report)?, &files);
            cleanup();
            return Ok(None);
        }
        let scratch = match &private {
            Some(p) => p.clone(),
            None => tempfile::tempdir()?.keep(),
        };
        // Rank 0's own records are read where they are.
        let own = Gathered {
            records: report.records.iter().cloned().zip(files).collect(),
            report,
            clock: clocks.first().copied().unwrap_or((0, 0)),
        };
        let merged = self
            .receive_all(own, size, &scratch, &clocks)
            .and_then(|clients| merge_gathered(clients, shared, new_run_dir));
        if private.is_none() {
            let _ = std::fs::remove_dir_all(&scratch);
        }
        cleanup();
        merged.map(Some)
    }

    /// On rank 0: every other client's report and records files (saved under
    /// `scratch`), after its own `own`. Every client's files are taken to the end before
    /// any problem is reported, so no client is left sending; a client whose records did
    /// not arrive (it could not read them) fails the merge, naming its error.
    fn receive_all(
        &self,
        own: Gathered,
        size: u32,
        scratch: &Path,
        clocks: &[(i64, u64)],
    ) -> anyhow::Result<Vec<Gathered>> {
        let mut clients = vec![own];
        let mut problems = Vec::new();
        for r in 1..size {
            let (count, head) = self.job.receive_report(r);
            let report: Result<ClientReport, _> = serde_json::from_slice(&head);
            let names = report
                .as_ref()
                .map(|c| c.records.clone())
                .unwrap_or_default();
            let host = report.as_ref().map_or("?", |c| c.host.as_str()).to_string();
            let dir = scratch.join(format!("client-{r}"));
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create '{}'", dir.display()))?;
            let mut records = HashMap::new();
            for i in 0..count as usize {
                // A file name of the client's own making; only its last part is used here.
                let name = names.get(i).cloned().unwrap_or_else(|| format!("file-{i}"));
                let file = Path::new(&name)
                    .file_name()
                    .map_or_else(|| format!("file-{i}"), |f| f.to_string_lossy().into_owned());
                let path = dir.join(file);
                match self.job.receive_file(r, &path) {
                    Ok(()) => {
                        records.insert(name, path);
                    }
                    Err(why) => problems.push(format!(
                        "client {r} on {host} could not send its op records '{name}': {why}"
                    )),
                }
            }
            match report {
                Ok(report) => clients.push(Gathered {
                    report,
                    records,
                    clock: clocks.get(r as usize).copied().unwrap_or((0, 0)),
                }),
                Err(e) => problems.push(format!("client {r} sent an unreadable report: {e}")),
            }
        }
        if let Some(first) = problems.first() {
            bail!(
                "{first}; the job's result is merged from every client's op records, so none was written{}",
                if problems.len() > 1 {
                    format!(" (and {} more such problems)", problems.len() - 1)
                } else {
                    String::new()
                }
            );
        }
        Ok(clients)
    }
}

/// On rank 0: every client's results and records merged into a new run directory.
fn merge_gathered(
    clients: Vec<Gathered>,
    shared: bool,
    new_run_dir: Option<&dyn Fn() -> anyhow::Result<PathBuf>>,
) -> anyhow::Result<Concluded> {
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
