//! Multi-client jobs for the tests: `mpirun` with what this machine needs, one job at a
//! time.

use std::process::Command;
use std::sync::{Mutex, MutexGuard};

/// `mpirun -n RANKS naslab` with what this machine needs (root, more ranks than cores),
/// or `None` (then the test fails when NASLAB_REQUIRE_ROOT=1, as CI sets), with this
/// test's turn to run jobs: one job at a time, as the jobs' clients would otherwise take
/// each other's CPUs, and the start-skew figures would measure that.
pub fn mpirun(ranks: u32) -> Option<(Command, MutexGuard<'static, ()>)> {
    let command = mpirun_command(ranks)?;
    Some((command, mpirun_turn()))
}

/// This test's turn to run jobs (see [`mpirun`]), for a test that builds its own
/// command line.
pub fn mpirun_turn() -> MutexGuard<'static, ()> {
    static ONE_JOB: Mutex<()> = Mutex::new(());
    ONE_JOB.lock().unwrap_or_else(|e| e.into_inner())
}

/// The `mpirun` command line of [`mpirun`], for a test that already has its turn. A job
/// that hangs is ended after 10 minutes (the test then fails) rather than holding the
/// suite.
pub fn mpirun_command(ranks: u32) -> Option<Command> {
    let mpirun = super::tool_or_skip("mpirun")?;
    let mut c = Command::new(mpirun);
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--timeout",
        "600",
        "-n",
    ])
    .arg(ranks.to_string())
    .arg(env!("CARGO_BIN_EXE_naslab"));
    Some(c)
}
