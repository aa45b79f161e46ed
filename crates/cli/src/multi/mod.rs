//! Multi-client runs: `mpirun -n N naslab run ...` (binary built with the `mpi` feature)
//! runs as one job of N clients, each on its own file set, starting every measured phase
//! together, with one merged result written by rank 0. Every decision that differs
//! between a lone run and a job is a [`Coordinator`]'s: [`Solo`] for a lone run, the MPI
//! job's own under mpirun. See `docs/multi-client.md`.

#[cfg(feature = "mpi")]
mod comm;
#[cfg(feature = "mpi")]
mod job;
#[cfg_attr(feature = "mpi", allow(dead_code))]
mod launcher;
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
mod leftovers;
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub mod merge;
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
mod spread;
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
mod transfer;

use std::path::PathBuf;
use std::sync::Arc;

use naslab_engine::{RunError, StartGate};
use naslab_results::{IterationResult, RunResult};

use crate::args::RunOpts;

/// What a run's end makes of its results (see [`Coordinator::conclude`]).
pub struct Concluded {
    /// A job's merged result and the run directory it was written in (its merged records
    /// there already); `None`: the run's own result, in its own run directory.
    pub merged: Option<(RunResult, PathBuf)>,
    /// Why the run (or the job) stopped early, if it did.
    pub failure: Option<String>,
    /// Printed after the results table (a job's clients' spread).
    pub table: String,
}

impl Concluded {
    /// A lone run's end: its own results, in its own run directory.
    pub fn own(failure: Option<String>) -> Concluded {
        Concluded {
            merged: None,
            failure,
            table: String::new(),
        }
    }
}

/// One client's part of a sweep's load point, as rank 0 gets it between points.
pub struct PointPart {
    pub rank: u32,
    /// The client's own figures of the point, in the sweep's encoding.
    pub part: Vec<u8>,
    /// How late the client woke for the point's start, past the agreed moment, ns;
    /// `None` for a lone run (no moment was agreed).
    pub start_late_ns: Option<u64>,
    /// How far the client's clock may be off rank 0's at that start, ns.
    pub clock_uncertainty_ns: u64,
}

/// Everything that differs between a lone run and one client of a multi-client job.
/// Passed in each run's context; a lone run's answers leave the run as it is.
pub trait Coordinator: Send + Sync {
    /// This client's rank and the job's number of clients; `None` outside a job.
    fn rank_and_size(&self) -> Option<(u32, u32)> {
        None
    }

    /// Whether this process is one client of a multi-client job.
    fn is_job(&self) -> bool {
        self.rank_and_size().is_some()
    }

    /// The name of this client's own directory under the target, `client-<rank>` (each
    /// client has its own `naslab` directory and file set there); `None` outside a job.
    fn client_dir(&self) -> Option<String> {
        None
    }

    /// Whether the clients share one file set (`--shared-files`). Set before anything
    /// can fail, so a client that fails early still casts the votes the others wait for.
    fn share_files(&self, _shared: bool) {}

    /// On client 0 with `--shared-files`, once it holds the shared target: tells the
    /// others to join it.
    fn shared_target_taken(&self) {}

    /// On the other clients with `--shared-files`, before they join the shared target:
    /// waits for client 0 to say it holds it, and fails at once when it could not.
    fn await_shared_target(&self) -> anyhow::Result<()> {
        Ok(())
    }

    /// The directory this client works in when it is not the run directory under
    /// `--out`/`--label` (a job's client keeps its spools and records in a private one
    /// until rank 0 merges them); `None` for a lone run.
    fn private_run_dir(&self, _opts: &RunOpts) -> anyhow::Result<Option<PathBuf>> {
        Ok(None)
    }

    /// The start gate of every measured phase; `shared`: the clients share one file
    /// set, which client 0 prepares. `None` for a lone run.
    fn start_gate(&self, _shared: bool) -> Option<Arc<dyn StartGate>> {
        None
    }

    /// Whether a signal may end the run between iterations on this client alone (a
    /// job's clients stop only through their vote after each iteration).
    fn stops_on_its_own(&self) -> bool {
        true
    }

    /// Whether this client writes the run's exports and report itself as it goes (a
    /// job's rank 0 writes them once, from every client's merged results).
    fn writes_own_results(&self) -> bool {
        true
    }

    /// After each iteration: in a job, every client learns whether another failed, and
    /// a successful iteration is marked stopped when one did.
    fn after_iteration(
        &self,
        outcome: Result<IterationResult, RunError>,
    ) -> Result<IterationResult, RunError> {
        outcome
    }

    /// At the end of a run that measured (or tried to): what to write and print. A lone
    /// run's results as they are; in a job, every client sends its results and records
    /// to rank 0, which merges them into a run directory it makes with `new_run_dir` (the
    /// others get `None`: nothing to write). `Err`: the run (or job) failed with
    /// nothing measured.
    fn conclude(
        &self,
        _run: &RunResult,
        failure: Option<String>,
        _new_run_dir: &dyn Fn() -> anyhow::Result<PathBuf>,
    ) -> anyhow::Result<Option<Concluded>> {
        Ok(Some(Concluded::own(failure)))
    }

    /// Between two points of a sweep (every client calls it at the same point): each
    /// client gives its part of the point that ended (`mine`), rank 0 gets them all in
    /// rank order and `decide` makes the verdict from them there, and every client gets
    /// that verdict back. A lone run decides on its own part.
    fn between_points(
        &self,
        mine: Vec<u8>,
        decide: &mut dyn FnMut(Vec<PointPart>) -> Vec<u8>,
    ) -> Vec<u8> {
        decide(vec![PointPart {
            rank: 0,
            part: mine,
            start_late_ns: None,
            clock_uncertainty_ns: 0,
        }])
    }

    /// In a job, a client that fails on its own between a sweep's points, before the next
    /// point's start gate: casts the votes the others wait for there, so they stop at
    /// the gate instead of waiting, and its error is the one the job reports first.
    fn failed_before_point(&self) {}

    /// Ends a command: in a job, a client that failed before its results were sent still
    /// votes and reports, so the others stop instead of waiting for it.
    fn after_command(&self, result: anyhow::Result<()>) -> anyhow::Result<()> {
        result
    }
}

/// A lone run: no other client to agree with.
pub struct Solo;

impl Coordinator for Solo {}

/// Keeps MPI initialised while the command runs; [`end`] finalises it.
#[cfg(feature = "mpi")]
pub type Guard = comm::Guard;
/// Nothing to keep alive without MPI.
#[cfg(not(feature = "mpi"))]
pub struct Guard;

/// This process's coordinator: an MPI job's client when an MPI launcher started it (and
/// the binary has MPI), else [`Solo`]; with what keeps MPI initialised.
#[cfg(feature = "mpi")]
pub fn init() -> (Arc<dyn Coordinator>, Option<Guard>) {
    match comm::init() {
        Some((job, guard)) => (Arc::new(job::MpiJob::new(job)), Some(guard)),
        None => (Arc::new(Solo), None),
    }
}

/// Without MPI there is no job to join: under an MPI launcher of several processes,
/// each would run alone on the same target (and all but one find it in use), so this
/// says what is missing and exits.
#[cfg(not(feature = "mpi"))]
pub fn init() -> (Arc<dyn Coordinator>, Option<Guard>) {
    if let Some((launcher, size)) = launcher::several_processes() {
        let n = size.map_or_else(|| "several".to_string(), |n| n.to_string());
        eprintln!(
            "error: this naslab was built without MPI (the mpi feature), but {launcher} started {n} of it: it cannot be one client of a multi-client job. Build it with `cargo build --release -p naslab --features mpi` (OpenMPI's libmpi and headers needed, see docs/multi-client.md) and start that binary under mpirun, or start this one without mpirun"
        );
        std::process::exit(2);
    }
    (Arc::new(Solo), None)
}

/// Finalises MPI (before the process exits, which would skip it).
#[cfg(feature = "mpi")]
pub fn end(guard: Option<Guard>) {
    drop(guard);
}

/// Nothing to finalise without MPI.
#[cfg(not(feature = "mpi"))]
pub fn end(_guard: Option<Guard>) {}
