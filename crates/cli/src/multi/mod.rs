//! Multi-client runs: `mpirun -n N naslab run ...` (binary built with the `mpi` feature)
//! runs as one job of N clients, each on its own file set, starting every measured phase
//! together, with one merged result written by rank 0. Without an MPI launcher, or
//! without the feature, every function here leaves a run as it is. See
//! `docs/multi-client.md`.

#[cfg(feature = "mpi")]
mod comm;
#[cfg_attr(feature = "mpi", allow(dead_code))]
mod launcher;
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
mod leftovers;
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
mod merge;
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
mod spread;

#[cfg(feature = "mpi")]
pub use enabled::*;

#[cfg(not(feature = "mpi"))]
pub use disabled::*;

#[cfg(not(feature = "mpi"))]
mod disabled {
    use std::path::PathBuf;

    use naslab_engine::{RunError, StartGate};
    use naslab_results::{IterationResult, RunResult};

    use crate::args::RunOpts;
    use crate::cmd::View;

    /// Nothing to keep alive without MPI.
    pub struct Guard;

    /// Without MPI there is no job to join: under an MPI launcher of several processes,
    /// each would run alone on the same target (and all but one find it in use), so this
    /// says what is missing and exits.
    pub fn init() -> Option<Guard> {
        if let Some((launcher, size)) = super::launcher::several_processes() {
            let n = size.map_or_else(|| "several".to_string(), |n| n.to_string());
            eprintln!(
                "error: this naslab was built without MPI (the mpi feature), but {launcher} started {n} of it: it cannot be one client of a multi-client job. Build it with `cargo build --release -p naslab --features mpi` (OpenMPI's libmpi and headers needed, see docs/multi-client.md) and start that binary under mpirun, or start this one without mpirun"
            );
            std::process::exit(2);
        }
        None
    }
    pub fn end(_guard: Option<Guard>) {}
    pub fn active() -> bool {
        false
    }
    pub fn client_dir() -> Option<String> {
        None
    }
    pub fn rank_and_size() -> Option<(u32, u32)> {
        None
    }
    pub fn run_dir(_opts: &RunOpts) -> anyhow::Result<Option<PathBuf>> {
        Ok(None)
    }
    pub fn start_gate(_shared: bool) -> Option<StartGate> {
        None
    }
    pub fn share_files(_shared: bool) {}
    pub fn shared_target_taken() {}
    pub fn await_shared_target() -> anyhow::Result<()> {
        Ok(())
    }
    pub fn after_iteration(
        outcome: Result<IterationResult, RunError>,
    ) -> Result<IterationResult, RunError> {
        outcome
    }
    pub fn finish(
        _run: RunResult,
        _failure: Option<String>,
        _json: bool,
        _view: Option<View>,
    ) -> anyhow::Result<()> {
        Ok(())
    }
    pub fn after_command(result: anyhow::Result<()>) -> anyhow::Result<()> {
        result
    }
}

#[cfg(feature = "mpi")]
mod enabled {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};

    use crate::cmd::View;
    use anyhow::{bail, Context};
    use naslab_engine::{RunError, SharedSet, StartGate};
    use naslab_results::{IterationResult, RunResult};

    use super::comm::{self, with};
    use super::merge::{failure_of, merge, others_failures, ClientReport, Gathered};
    use crate::args::RunOpts;

    pub use super::comm::init;

    /// Finalises MPI (before the process exits, which would skip it).
    pub fn end(guard: Option<super::comm::Guard>) {
        drop(guard);
    }

    /// Whether this process is one client of a multi-client job.
    pub fn active() -> bool {
        with(|_| ()).is_some()
    }

    /// The name of this client's own directory under the target, `client-<rank>` (each
    /// client has its own `naslab` directory and file set there); `None` outside a job.
    pub fn client_dir() -> Option<String> {
        with(|c| format!("client-{}", c.rank))
    }

    /// Whether the clients share one file set (`--shared-files`): then they vote at its
    /// barrier in every iteration too. Set before anything can fail.
    pub fn share_files(shared: bool) {
        with(|c| c.shared = shared);
    }

    /// On client 0 with `--shared-files`, once it holds the shared target: tells the
    /// others to join it.
    pub fn shared_target_taken() {
        if with(|c| c.shared && c.rank == 0).unwrap_or(false) {
            comm::send_target_word(true);
        }
    }

    /// On the other clients with `--shared-files`, before they join the shared target:
    /// waits for client 0 to say it holds it, and fails at once when it could not.
    pub fn await_shared_target() -> anyhow::Result<()> {
        if !with(|c| c.shared && c.rank != 0).unwrap_or(false) {
            return Ok(());
        }
        if !comm::receive_target_word() {
            bail!("not started: client 0 could not take the shared target (--shared-files), so there is no file set to join; its own error says why");
        }
        Ok(())
    }

    /// This client's rank and the job's number of clients; `None` outside a job.
    pub fn rank_and_size() -> Option<(u32, u32)> {
        with(|c| (c.rank, c.size))
    }

    /// In a multi-client job every client works in a private directory; rank 0 makes the
    /// one run directory under `--out`/`--label` at the end.
    pub fn run_dir(opts: &RunOpts) -> anyhow::Result<Option<PathBuf>> {
        if !active() {
            return Ok(None);
        }
        if opts.no_records {
            bail!("a multi-client run merges every client's op records into one result; leave out --no-records");
        }
        let rank = with(|c| c.rank).unwrap_or(0);
        super::leftovers::remove_dead_clients_dirs(&std::env::temp_dir());
        let dir = tempfile::Builder::new()
            .prefix(&super::leftovers::private_dir_prefix(rank))
            .tempdir()
            .context("cannot make a private directory for this client's spools")?
            .keep();
        with(|c| {
            c.results_base = Some(opts.out.join(&opts.label));
            c.private_dir = Some(dir.clone());
        });
        Ok(Some(dir))
    }

    /// The start gate of every measured phase, in a multi-client job; `shared`: the
    /// clients share one file set, which client 0 prepares.
    pub fn start_gate(shared: bool) -> Option<StartGate> {
        let rank = with(|c| c.rank)?;
        Some(StartGate {
            wait: &comm::start_gate,
            peer_failed: &comm::peer_failed,
            shared: shared.then_some(SharedSet {
                preparer: rank == 0,
                prepared: &comm::shared_set_ready,
            }),
        })
    }

    /// Tells every client whether this one's iteration failed (or a signal stopped it),
    /// and marks a successful iteration stopped when another client failed, so every
    /// client ends together: a client decides to stop only through this vote, never on
    /// its own between iterations (see `stopped`).
    pub fn after_iteration(
        outcome: Result<IterationResult, RunError>,
    ) -> Result<IterationResult, RunError> {
        if !active() {
            return outcome;
        }
        let signal = crate::interrupt::stopped_by().map(|sig| format!("stopped by {sig}"));
        let mine = signal.is_some()
            || match &outcome {
                Ok(r) => r.aborted.is_some(),
                Err(RunError::NotStarted(_)) => false,
                Err(_) => true,
            };
        if mine {
            with(|c| c.caused = true);
        }
        let lowest = comm::end_of_iteration(mine);
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

    /// Sends this client's results to rank 0; rank 0 merges them and writes the job's
    /// one run directory, prints the table and the command's `view` of the merged
    /// result, and fails when any client did.
    pub fn finish(
        mut run: RunResult,
        failure: Option<String>,
        json: bool,
        view: Option<View>,
    ) -> anyhow::Result<()> {
        run.aborted = failure.clone();
        send_and_merge(Some(run), failure, json, view)
    }

    /// Ends a multi-client command: a client that failed before its results were sent
    /// still votes and reports, so the others stop instead of waiting for it.
    pub fn after_command(result: anyhow::Result<()>) -> anyhow::Result<()> {
        let Some(finished) = with(|c| c.finished) else {
            return result;
        };
        if finished {
            return result;
        }
        // Client 0 that never held the shared target says so, so the others stop
        // waiting for it.
        comm::send_target_word(false);
        let why = match &result {
            Ok(()) => "ended without results".to_string(),
            Err(e) => format!("{e:#}"),
        };
        with(|c| c.caused = true);
        comm::end_of_iteration(true);
        send_and_merge(None, Some(why), false, None)
    }

    fn send_and_merge(
        run: Option<RunResult>,
        failure: Option<String>,
        json: bool,
        view: Option<View>,
    ) -> anyhow::Result<()> {
        let (rank, host, caused, late, private, base, clocks) = with(|c| {
            c.finished = true;
            (
                c.rank,
                c.host.clone(),
                c.caused,
                c.start_late_ns,
                c.private_dir.clone(),
                c.results_base.clone(),
                c.clocks.clone(),
            )
        })
        .context("not a multi-client run")?;
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
            failure: failure.clone(),
            caused,
            start_late_ns: late,
            records: names.clone(),
        };
        let mut parts = vec![serde_json::to_vec(&report)?];
        for n in &names {
            let path = private.as_ref().map(|p| p.join(n)).unwrap_or_default();
            parts.push(std::fs::read(&path).unwrap_or_default());
        }
        let gathered = comm::gather(parts);
        let cleanup = || {
            if let Some(p) = &private {
                let _ = std::fs::remove_dir_all(p);
            }
        };
        let Some(all) = gathered else {
            // Rank 0 reports for the job.
            cleanup();
            return Ok(());
        };
        let result = write_job(
            all,
            private.as_deref(),
            base.as_deref(),
            &clocks,
            json,
            view,
        );
        cleanup();
        result
    }

    /// On rank 0: every client's parts into one run directory.
    fn write_job(
        all: Vec<Vec<Vec<u8>>>,
        private: Option<&Path>,
        base: Option<&Path>,
        clocks: &[(i64, u64)],
        json: bool,
        view: Option<View>,
    ) -> anyhow::Result<()> {
        let scratch = match private {
            Some(p) => p.to_path_buf(),
            None => tempfile::tempdir()?.keep(),
        };
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
        let failure = failure_of(&clients);
        let (Some(base), true) = (base, measured) else {
            let why = failure.unwrap_or_else(|| "no client measured anything".into());
            if private.is_none() {
                let _ = std::fs::remove_dir_all(&scratch);
            }
            bail!("{why}{}", others_failures(&clients));
        };
        let template = clients
            .iter()
            .find_map(|c| c.report.run.clone())
            .context("no client sent results")?;
        let run_dir = crate::cmd::make_run_dir(base)?;
        let shared = with(|c| c.shared).unwrap_or(false);
        let run = merge(&template, &clients, &run_dir, shared)?;
        crate::output::write_exports(&run_dir, &run)?;
        if let Err(e) = naslab_report::write_run_report(&run_dir, &run) {
            eprintln!(
                "warning: report.html was not written ({e}); run `naslab report {}` to try again",
                run_dir.display()
            );
        }
        let spread = super::spread::clients_table(&run);
        let printed = crate::stdout::print_export(&run, json)
            .and_then(|()| {
                if json {
                    eprint!("{spread}");
                    Ok(())
                } else {
                    crate::stdout::print(&spread)
                }
            })
            .and_then(|()| {
                view.map_or(Ok(()), |v| crate::cmd::write_view(&v, &run, &run_dir, json))
            });
        eprintln!("results: {}", run_dir.display());
        match run.aborted {
            Some(why) => bail!(
                "{why}\nthe results measured so far are in '{}'",
                run_dir.display()
            ),
            None => printed,
        }
    }
}
