//! The op records file: every issued op in the trace format plus what was measured,
//! merged across streams in issue order. It is itself a trace, so a result can be
//! replayed again as input.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::sync::mpsc;

use naslab_trace::{
    create_trace_parallel, FileDecl, Header, Measured, Op, Sink, TraceError, TraceWriter,
};

use crate::plan::Plan;
use crate::replay::ReplayOutcome;
use crate::spool::{CompiledOp, SpoolReader};

/// What sees every record as it is written, on a thread of its own beside the writer
/// (the report's pass over the iteration, so that it needs not read the file back).
pub trait RecordSink: Send {
    /// A file record, in the file's order.
    fn file(&mut self, decl: &FileDecl);
    /// An op record and its measurement, in the file's order.
    fn op(&mut self, op: &Op, measured: &Measured);
    /// Every record was written: what the sink made stands. Not called when writing
    /// failed.
    fn finish(self: Box<Self>);
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
}

struct Cursor {
    ops: SpoolReader,
    measured: SpoolReader,
    stream: u32,
}

impl Cursor {
    fn next(&mut self) -> std::io::Result<Option<(CompiledOp, Measured)>> {
        match self.measured.next_measured()? {
            None => Ok(None),
            Some(m) => Ok(self.ops.next_op()?.map(|op| (op, m))),
        }
    }
}

/// Writes the op records of one replay to `path` (zstd when it ends in `.zst`), and
/// hands each record to `sink` too, when there is one. Takes the outcome: its spools
/// are let go once read, on a thread of their own while the sink finishes (freeing
/// hundreds of MB of page cache takes a tenth of a second per 3 M ops).
pub fn write_records(
    path: &Path,
    plan: &Plan,
    outcome: ReplayOutcome,
    generator: &str,
    sink: Option<Box<dyn RecordSink>>,
) -> Result<u64, RecordsError> {
    let Some(mut sink) = sink else {
        return write_merged(path, plan, &outcome, generator, &mut |_, _| {});
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
        let written = write_merged(path, plan, &outcome, generator, &mut |op, m| {
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
        let freed = std::thread::Builder::new()
            .name("spool-free".into())
            .spawn_scoped(scope, move || drop(outcome));
        if let (Ok(_), Ok(Ok(sink))) = (&written, fed.map(|h| h.join())) {
            sink.finish();
        }
        // Had the thread not started, the outcome was dropped here already.
        if let Ok(h) = freed {
            let _ = h.join();
        }
        written
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
    outcome: &ReplayOutcome,
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
    for (sp, so) in plan.streams.iter().zip(&outcome.streams) {
        if let Some(m) = &so.measured {
            cursors.push(Cursor {
                ops: sp.ops.reader()?,
                measured: m.reader()?,
                stream: sp.stream,
            });
        }
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
