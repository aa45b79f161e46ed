//! The op records file: every issued op in the trace format plus what was measured,
//! merged across streams in issue order. It is itself a trace, so a result can be
//! replayed again as input.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, mpsc};

use naslab_trace::{
    FileDecl, Header, Measured, Op, Sink, TraceError, TraceWriter, create_trace_parallel,
};

use crate::beside;
use crate::plan::Plan;
use crate::replay::{Following, ReplayOutcome};
use crate::spool::{CompiledOp, MEASURED_SIZE, SpoolReader, decode_measured};
use crate::spool_io::{Landed, Landing};

/// What sees every record as it is written, on a thread of its own beside the writer
/// (the report's pass over the iteration, so that it needs not read the file back).
pub trait RecordSink: Send {
    /// A file record, in the file's order.
    fn file(&mut self, decl: &FileDecl);
    /// An op record and its measurement, in the file's order.
    fn op(&mut self, op: &Op, measured: &Measured);
    /// Every record was written, of a measured phase that began at `clock_start_ns` (its
    /// first issue) and lasted `wall_ns`: what the sink made stands. Not called when
    /// writing failed.
    fn finish(self: Box<Self>, clock_start_ns: u64, wall_ns: u64);
}

/// Ops handed to the sink's thread at a time.
const SINK_BATCH: usize = 8192;

/// Why the records could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("cannot read back op measurements: {0}")]
    Spool(#[from] std::io::Error),
    /// A stream's measurements could not be written to its spool, beside the records.
    #[error("cannot keep op measurements beside them: {0}")]
    Kept(std::io::Error),
    #[error("the thread writing the op records panicked")]
    Panicked,
}

/// Measurements read from a spool as they land on file, waiting for the next ones while
/// its stream still runs.
struct Tail {
    landing: Arc<Landing>,
    landed: Landed,
    /// Measurements read from the file so far.
    read: u64,
    chunk: Vec<u8>,
    pos: usize,
    /// Measurements read at a time.
    batch: u64,
}

/// What the merge reads of one spool at a time (its ops, or its measurements): the
/// most, for a phase of a few streams.
const READ_AHEAD_MAX: usize = 256 << 10;
/// The least, whatever the number of streams.
const READ_AHEAD_MIN: usize = 16 << 10;
/// What the merge holds read ahead over all its streams' spools, ops and measurements
/// together, when each stream's part of it lies between the two above: so 600
/// connections' records are merged in 32 MiB, not 300.
const READ_AHEAD_TOTAL: usize = 32 << 20;

/// The bytes read ahead of each of `streams` streams' two spools.
fn read_ahead(streams: usize) -> usize {
    (READ_AHEAD_TOTAL / 2 / streams.max(1)).clamp(READ_AHEAD_MIN, READ_AHEAD_MAX)
}

impl Tail {
    /// Follows `landing`'s spool, reading `bytes` of it at a time.
    fn new(landing: Arc<Landing>, bytes: usize) -> Self {
        Tail {
            landing,
            landed: Landed::default(),
            read: 0,
            chunk: Vec::new(),
            pos: 0,
            batch: (bytes / MEASURED_SIZE).max(1) as u64,
        }
    }

    fn next(&mut self) -> std::io::Result<Option<Measured>> {
        if self.pos == self.chunk.len() && !self.refill()? {
            return Ok(None);
        }
        let b: &[u8; MEASURED_SIZE] = self.chunk[self.pos..self.pos + MEASURED_SIZE]
            .try_into()
            .expect("a whole measurement");
        self.pos += MEASURED_SIZE;
        Ok(Some(decode_measured(b)))
    }

    /// Reads the next landed measurements, waiting for them; false at the spool's end.
    #[cold]
    fn refill(&mut self) -> std::io::Result<bool> {
        loop {
            if let (Some(file), true) = (&self.landed.file, self.read < self.landed.records) {
                let n = (self.landed.records - self.read).min(self.batch);
                self.chunk.resize(n as usize * MEASURED_SIZE, 0);
                crate::positioned::read_exact_at(
                    file,
                    &mut self.chunk,
                    self.read * MEASURED_SIZE as u64,
                )?;
                self.read += n;
                self.pos = 0;
                return Ok(true);
            }
            match self.landed.ended {
                Some(true) => return Ok(false),
                Some(false) => {
                    return Err(std::io::Error::other(
                        "a stream ended before all its measurements were kept",
                    ));
                }
                None => self.landed = self.landing.wait_past(self.read),
            }
        }
    }
}

/// One stream's ops and their measurements, in its order.
struct Cursor {
    ops: SpoolReader,
    measured: Tail,
    stream: u32,
}

impl Cursor {
    fn next(&mut self) -> std::io::Result<Option<(CompiledOp, Measured)>> {
        match self.measured.next()? {
            None => Ok(None),
            Some(m) => Ok(self.ops.next_op()?.map(|op| (op, m))),
        }
    }
}

type Merged = Result<(u64, Option<Box<dyn RecordSink>>), RecordsError>;

/// The op records of one measured phase, written while the phase runs when the streams
/// leave a CPU for it: a thread merges the streams' ops with their measurements as the
/// spool I/O thread lands them (each stream's [`Landing`]), on that CPU with the threads
/// it starts (compression, the sink's pass), the streams on the others
/// ([`crate::beside`]). Otherwise the merge starts once the phase has ended. Either way
/// the file is the same, record for record.
pub struct LiveRecords<'scope, 'env> {
    scope: &'scope std::thread::Scope<'scope, 'env>,
    plan: &'env Plan,
    path: PathBuf,
    landings: Vec<Arc<Landing>>,
    /// The CPU the merge works on beside the phase.
    cpu: Option<usize>,
    /// The generator's name and the sink, until the merge starts with them.
    waiting: Option<(String, Option<Box<dyn RecordSink>>)>,
    /// Taken by [`LiveRecords::finish`]; a value dropped with it still there was
    /// abandoned.
    merge: Option<std::thread::ScopedJoinHandle<'scope, Merged>>,
}

impl<'scope, 'env> LiveRecords<'scope, 'env> {
    /// Writes `plan`'s op records to `path` (zstd when it ends in `.zst`), each record
    /// handed to `sink` too, when there is one: beside the phase on `cpu` (see
    /// [`crate::beside::cpu_for`]), else once it has ended.
    pub fn start(
        scope: &'scope std::thread::Scope<'scope, 'env>,
        path: &Path,
        plan: &'env Plan,
        generator: String,
        sink: Option<Box<dyn RecordSink>>,
        cpu: Option<usize>,
    ) -> Result<Self, RecordsError> {
        let mut live = LiveRecords {
            scope,
            plan,
            path: path.to_path_buf(),
            landings: plan.streams.iter().map(|_| Arc::default()).collect(),
            cpu,
            waiting: Some((generator, sink)),
            merge: None,
        };
        if cpu.is_some() {
            live.start_merge()?;
        }
        Ok(live)
    }

    fn start_merge(&mut self) -> Result<(), RecordsError> {
        let Some((generator, sink)) = self.waiting.take() else {
            return Ok(());
        };
        let (plan, path, landings, cpu) = (
            self.plan,
            self.path.clone(),
            self.landings.clone(),
            self.cpu,
        );
        let merge = std::thread::Builder::new()
            .name("records".into())
            .spawn_scoped(self.scope, move || {
                if let Some(cpu) = cpu {
                    beside::enter(cpu);
                }
                write_records(&path, plan, &landings, &generator, sink)
            })
            .map_err(RecordsError::Spool)?;
        self.merge = Some(merge);
        Ok(())
    }

    /// How the replay lets the merge follow it: one [`Landing`] per stream of the plan's
    /// measured phase, and the CPU its streams keep off.
    pub fn following(&self) -> Following<'_> {
        Following {
            landings: &self.landings,
            kept_cpu: self.cpu,
        }
    }

    /// The phase ended (its stream threads have): the rest of the records are written at
    /// full speed from now on, on every CPU.
    pub fn phase_over(&mut self) -> Result<(), RecordsError> {
        self.let_go();
        self.start_merge()
    }

    /// Every stream thread has ended: a spool its stream did not finish never will be,
    /// and the threads beside the phase may use every CPU.
    fn let_go(&mut self) {
        for l in &self.landings {
            l.end(false);
        }
        // Once: the phase is over for good, and nothing follows it after this.
        if let Some(kept) = self.cpu.take() {
            beside::leave_all(kept);
        }
    }

    /// The phase ended with `outcome`: writes the rest of the records and finishes the
    /// sink with the phase's timing. The outcome's spools are let go on a thread of
    /// their own while the sink finishes (freeing hundreds of MB of page cache takes a
    /// tenth of a second per 3 M ops). Returns the ops written.
    pub fn finish(mut self, outcome: ReplayOutcome) -> Result<u64, RecordsError> {
        self.phase_over()?;
        let merged = match self.merge.take().map(|h| h.join()) {
            Some(Ok(merged)) => merged,
            _ => Err(RecordsError::Panicked),
        };
        let (written, sink) = merged?;
        let (start, wall) = (outcome.start_ns, outcome.wall_ns);
        std::thread::scope(|scope| {
            let freed = std::thread::Builder::new()
                .name("spool-free".into())
                .spawn_scoped(scope, move || drop(outcome));
            if let Some(sink) = sink {
                sink.finish(start, wall);
            }
            // Had the thread not started, the outcome was dropped here already.
            if let Ok(h) = freed {
                let _ = h.join();
            }
        });
        Ok(written)
    }
}

impl Drop for LiveRecords<'_, '_> {
    /// Not finished: the phase failed, so the records stop and what was written goes.
    fn drop(&mut self) {
        let Some(merge) = self.merge.take() else {
            return;
        };
        self.let_go();
        let _ = merge.join();
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Writes the op records, handing each record to `sink` too, on a thread of its own
/// beside the writer, and returns the count and the sink (not finished).
fn write_records(
    path: &Path,
    plan: &Plan,
    landings: &[Arc<Landing>],
    generator: &str,
    sink: Option<Box<dyn RecordSink>>,
) -> Merged {
    let Some(mut sink) = sink else {
        return write_merged(path, plan, landings, generator, &mut |_, _| {}).map(|n| (n, None));
    };
    for decl in file_decls(plan) {
        sink.file(&decl);
    }
    let (tx, rx) = mpsc::sync_channel::<Vec<(Op, Measured)>>(4);
    std::thread::scope(|scope| {
        let fed = std::thread::Builder::new()
            .name("report-pass".into())
            .spawn_scoped(scope, move || {
                for batch in rx {
                    for (op, m) in &batch {
                        sink.op(op, m);
                    }
                }
                sink
            });
        let mut tx = fed.is_ok().then_some(tx);
        let mut batch = Vec::with_capacity(SINK_BATCH);
        let written = write_merged(path, plan, landings, generator, &mut |op, m| {
            batch.push((*op, *m));
            if batch.len() == SINK_BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(SINK_BATCH));
                // A sink that stopped taking records only loses its own result.
                if tx.as_ref().is_some_and(|t| t.send(full).is_err()) {
                    tx = None;
                }
            }
        });
        if let Some(tx) = tx {
            let _ = tx.send(batch);
        }
        let sink = fed.ok().and_then(|h| h.join().ok());
        written.map(|n| (n, sink))
    })
}

/// The plan's file records, in the records file's order.
fn file_decls(plan: &Plan) -> impl Iterator<Item = FileDecl> + '_ {
    plan.files.entries.iter().filter_map(|e| {
        Some(FileDecl {
            id: e.id?,
            path: e.path.clone(),
            kind: e.kind,
            size: e.size,
            exists: e.exists,
            prepare: e.prepare,
        })
    })
}

/// Writes the records, passing each op and its measurement to `each` as it goes.
fn write_merged(
    path: &Path,
    plan: &Plan,
    landings: &[Arc<Landing>],
    generator: &str,
    each: &mut dyn FnMut(&Op, &Measured),
) -> Result<u64, RecordsError> {
    let mut w = create_trace_parallel(path)?;
    let mut header: Header = plan.header.clone();
    header.generator = Some(generator.to_string());
    w.header(&header)?;
    for decl in file_decls(plan) {
        w.file(&decl)?;
    }
    let mut cursors = Vec::new();
    let bytes = read_ahead(plan.streams.len());
    for (sp, landing) in plan.streams.iter().zip(landings) {
        cursors.push(Cursor {
            ops: sp.ops.reader_with_buffer(bytes)?,
            measured: Tail::new(Arc::clone(landing), bytes),
            stream: sp.stream,
        });
    }
    let id_of = |index: u32| plan.files.entries[index as usize].id.unwrap_or(u32::MAX);
    let record_of = |op: CompiledOp, stream: u32| Op {
        stream,
        t_us: op.t_us,
        kind: op.kind,
        file: id_of(op.file),
        offset: op.offset,
        len: op.len,
        flags: op.flags,
        to: (op.to != u32::MAX).then(|| id_of(op.to)),
        warmup: false,
        expect: op.expect,
    };
    let mut written = 0u64;
    let mut put = |w: &mut TraceWriter<Sink>, op: &Op, m: &Measured| -> Result<(), RecordsError> {
        w.op(op, Some(m))?;
        each(op, m);
        written += 1;
        Ok(())
    };
    if let [only] = cursors.as_mut_slice() {
        // One stream: its order is the issue order.
        while let Some((op, m)) = only.next()? {
            put(&mut w, &record_of(op, only.stream), &m)?;
        }
    } else {
        let mut heads: Vec<Option<(CompiledOp, Measured)>> = Vec::with_capacity(cursors.len());
        let mut heap = BinaryHeap::new();
        for (i, c) in cursors.iter_mut().enumerate() {
            let head = c.next()?;
            if let Some((_, m)) = &head {
                heap.push(Reverse((m.issued_ns, i)));
            }
            heads.push(head);
        }
        while let Some(Reverse((_, i))) = heap.pop() {
            let Some((op, m)) = heads[i].take() else {
                continue;
            };
            put(&mut w, &record_of(op, cursors[i].stream), &m)?;
            let next = cursors[i].next()?;
            if let Some((_, m)) = &next {
                heap.push(Reverse((m.issued_ns, i)));
            }
            heads[i] = next;
        }
    }
    w.close()?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merge_reads_ahead_within_its_bounds_and_its_total() {
        assert_eq!(read_ahead(0), READ_AHEAD_MAX);
        assert_eq!(read_ahead(1), READ_AHEAD_MAX);
        assert_eq!(read_ahead(64), READ_AHEAD_MAX);
        for streams in [1, 2, 65, 100, 600, 1024, 4096] {
            let each = read_ahead(streams);
            assert!((READ_AHEAD_MIN..=READ_AHEAD_MAX).contains(&each));
            // Within the total unless every stream is already at the least.
            assert!(2 * each * streams <= READ_AHEAD_TOTAL || each == READ_AHEAD_MIN);
        }
        assert!(2 * read_ahead(600) * 600 <= 32 << 20);
        assert_eq!(read_ahead(4096), READ_AHEAD_MIN);
    }
}
