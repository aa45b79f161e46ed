//! Tables of the workload families whose source documents printed their own: iozone's
//! matrices, the big-directory tool's columns, the ingest script's rows, the file
//! server's response times and the backup's throughput. Each is made from the one
//! result model (and, for the big directory, the op records).

pub mod backup;
pub mod bigdir;
pub mod fileserver;
pub mod ingest;
pub mod iozone;

use crate::{IterationResult, RunResult, WorkloadResult};

/// The workload called `name`, if the run has it.
pub(crate) fn workload<'a>(run: &'a RunResult, name: &str) -> Option<&'a WorkloadResult> {
    run.workloads.iter().find(|w| w.name == name)
}

/// Mean latency of an op type in ms, if the iteration had any.
pub(crate) fn avg_ms(it: &IterationResult, op: &str) -> Option<f64> {
    it.op(op)
        .filter(|s| s.count > 0)
        .map(|s| s.latency.avg_ns as f64 / 1e6)
}
