//! The op records file: every issued op in the trace format plus what was measured,
//! merged across streams in issue order. It is itself a trace, so a result can be
//! replayed again as input.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;

use naslab_trace::{create_trace_parallel, FileDecl, Header, Measured, Op, TraceError};

use crate::plan::Plan;
use crate::replay::ReplayOutcome;
use crate::spool::{CompiledOp, SpoolReader};

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

/// Writes the op records of one replay to `path` (zstd when it ends in `.zst`).
pub fn write_records(
    path: &Path,
    plan: &Plan,
    outcome: &ReplayOutcome,
    generator: &str,
) -> Result<u64, RecordsError> {
    let mut w = create_trace_parallel(path)?;
    let mut header: Header = plan.header.clone();
    header.generator = Some(generator.to_string());
    w.header(&header)?;
    for e in &plan.files.entries {
        if let Some(id) = e.id {
            w.file(&FileDecl {
                id,
                path: e.path.clone(),
                kind: e.kind,
                size: e.size,
                exists: e.exists,
                prepare: e.prepare,
            })?;
        }
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
    if let [only] = cursors.as_mut_slice() {
        // One stream: its order is the issue order.
        while let Some((op, m)) = only.next()? {
            w.op(&record_of(op, only.stream), Some(&m))?;
            written += 1;
        }
        w.close()?;
        return Ok(written);
    }
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
        w.op(&record_of(op, cursors[i].stream), Some(&m))?;
        written += 1;
        let next = cursors[i].next()?;
        if let Some((_, m)) = &next {
            heap.push(Reverse((m.issued_ns, i)));
        }
        heads[i] = next;
    }
    w.close()?;
    Ok(written)
}
