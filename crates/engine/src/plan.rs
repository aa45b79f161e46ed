//! Compiling a trace into a plan: every check that can fail is made here, before
//! preparation, so a bad trace never starts a run. Ops go to per-stream spools.
//! The plan's types are here; how records become one is in `compile`.

mod compile;
mod ordering;

pub use compile::compile;
pub use naslab_backend::{FileEntry, FileTable};
pub use ordering::{EdgeCounts, EdgeKind, StreamOrder, Wait};

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;

use naslab_trace::{FileKind, Header, OpKind, Record, Trace, TraceError, TraceReader};

use crate::buffer::StreamBuffers;
use crate::spool::Spool;

/// The largest single read, write or fallocate a trace may ask for.
pub const MAX_OP_BYTES: u64 = 256 << 20;

/// A trace that failed to compile, or could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error("cannot spool the trace into '{dir}': {cause}{}", spool_hint(cause))]
    Spool { dir: PathBuf, cause: std::io::Error },
}

/// What to do about a spool file that cannot be made or written, by its cause.
pub fn spool_hint(cause: &std::io::Error) -> &'static str {
    match crate::errno::of_io(cause) {
        Some(crate::errno::ENOSPC) | Some(crate::errno::EDQUOT) => {
            "; the file system is full: free space there"
        }
        Some(crate::errno::EMFILE) | Some(crate::errno::ENFILE) => {
            "; too many open files: every stream keeps a spool file open, so raise the limit (ulimit -n) or use fewer streams"
        }
        Some(crate::errno::EACCES) | Some(crate::errno::EPERM) => {
            "; permission denied: give a directory naslab may write in"
        }
        Some(crate::errno::EROFS) => "; the file system is read-only: give a writable directory",
        _ => "",
    }
}

/// One stream's compiled ops.
pub struct StreamPlan {
    /// The stream number from the trace.
    pub stream: u32,
    pub ops: Spool,
    /// Handle slots the stream uses.
    pub slots: u32,
    /// Its ops of each kind (in this phase), which size its latency histograms.
    pub op_counts: [u64; OpKind::ALL.len()],
    /// The stream's largest read and largest write (both phases), which size its buffers.
    pub max_read: u64,
    pub max_write: u64,
    /// The most measured ops the stream issues within one second of trace time (whole
    /// seconds of `t_us`): how little time `--pace original` leaves it to sleep.
    pub densest_second: u64,
    /// Its waits for other streams' ops, and which of its ops they wait for.
    pub order: StreamOrder,
}

/// A compiled trace, ready to prepare and replay.
pub struct Plan {
    pub header: Header,
    /// Where the trace came from, for results.
    pub source: String,
    pub files: Arc<FileTable>,
    /// The measured ops of each stream.
    pub streams: Vec<StreamPlan>,
    /// The warm-up ops of the streams that have any: run before the measured phase, as a
    /// phase of their own, and not measured.
    pub warmup: Vec<StreamPlan>,
    /// Warm-up ops per kind.
    pub warmup_counts: [u64; OpKind::ALL.len()],
    /// The smallest `t_us` of any op: time zero for `original` pacing.
    pub t0_us: u64,
    /// Ops per kind.
    pub op_counts: [u64; OpKind::ALL.len()],
    /// The first line of each kind, for errors about kinds a backend lacks.
    pub first_line: [u64; OpKind::ALL.len()],
    /// The largest read or write.
    pub max_len: u64,
    pub planned_read_bytes: u64,
    pub planned_write_bytes: u64,
    /// Data ops whose offset or length is not a multiple of 512 (matters for direct I/O).
    pub unaligned_ops: u64,
    /// Opens and creates whose flags ask for direct I/O (`direct`).
    pub direct_opens: u64,
    /// How many happens-before edges the measured phase's streams have, by kind (see
    /// `plan/ordering.rs`); the warm-up's edges are in its streams' `order`.
    pub edges: EdgeCounts,
}

impl Plan {
    /// Measured ops in all streams.
    pub fn ops(&self) -> u64 {
        self.op_counts.iter().sum()
    }

    /// How many reads and writes each stream may have in flight.
    pub fn queue_depth(&self) -> u32 {
        self.header.queue_depth.unwrap_or(1).max(1)
    }

    /// The I/O buffers the larger of its two phases holds at once, all streams together.
    pub fn buffer_bytes(&self) -> u64 {
        let depth = self.queue_depth();
        let phase = |streams: &[StreamPlan]| -> u64 {
            streams
                .iter()
                .map(|s| StreamBuffers::for_stream(s.max_read, s.max_write, depth).bytes())
                .sum()
        };
        phase(&self.streams).max(phase(&self.warmup))
    }

    /// When the read buffer limit keeps some stream below the queue depth: the fewest
    /// reads any stream may have in flight, and that stream's largest read.
    pub fn reads_in_flight_bound(&self) -> Option<(u32, u64)> {
        let depth = self.queue_depth();
        self.streams
            .iter()
            .chain(&self.warmup)
            .filter(|s| s.max_read > 0)
            .map(|s| {
                let b = StreamBuffers::for_stream(s.max_read, s.max_write, depth);
                (b.slots as u32, s.max_read)
            })
            .filter(|&(slots, _)| slots < depth)
            .min()
    }

    /// Bytes preparation writes.
    pub fn prepared_bytes(&self) -> u64 {
        self.files
            .entries
            .iter()
            .filter(|e| e.exists && e.kind == FileKind::File)
            .map(|e| e.size)
            .sum()
    }
}

/// A trace file's records with their line numbers, read ahead on a thread of their own
/// ([`naslab_trace::ReadAhead`]), so that reading, decompressing and checking the trace
/// overlap compiling it on another CPU.
pub fn records_from_reader<R: BufRead + Send + 'static>(
    reader: TraceReader<R>,
) -> impl Iterator<Item = Result<(Record, u64), TraceError>> {
    naslab_trace::ReadAhead::start(reader).map(|r| r.map(|n| (n.record, n.line)))
}

/// An in-memory trace's records, numbered as the lines `naslab export-trace` writes.
pub fn records_from_trace(
    trace: &Trace,
) -> impl Iterator<Item = Result<(Record, u64), TraceError>> + '_ {
    trace
        .records()
        .enumerate()
        .map(|(i, r)| r.map(|r| (r, i as u64 + 1)))
}
