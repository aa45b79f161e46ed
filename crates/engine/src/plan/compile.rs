//! Compiling a trace's records into a [`Plan`]: the header, the file set, then each op
//! checked in turn (its files, its shape, its stream's order and handles) and spooled.
//! Every check that can fail is made here, so a bad trace never starts a run.
//!
//! The methods run once per op are `#[inline]`, as is `SpoolWriter::push_op`: without
//! it, release builds (several codegen units) compiled about 10 % fewer ops per second
//! than the single function this replaced.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use naslab_trace::{
    FileDecl, FileKind, Header, MAX_QUEUE_DEPTH, Op, OpFlags, OpKind, Prepare, Record, TraceError,
    check_rel_path,
};

use super::ordering::{Collector, StreamOrder};
use super::{FileEntry, FileTable, MAX_OP_BYTES, Plan, PlanError, StreamPlan};
use crate::spool::{CompiledOp, SpoolWriter};

/// Compiles `records` (from `source`, named in errors) into a plan, spooling ops into `spool_dir`.
pub fn compile(
    source: &Path,
    records: impl Iterator<Item = Result<(Record, u64), TraceError>>,
    spool_dir: &Path,
) -> Result<Plan, PlanError> {
    let mut c = Compiler::new(source, spool_dir);
    for item in records {
        let (record, line) = item?;
        match record {
            Record::Header(h) => c.header(h, line)?,
            Record::File(f) => c.file(f, line)?,
            Record::Op(op, _) => c.op(&op, line)?,
        }
    }
    c.finish()
}

/// Where the records come from and where ops are spooled: what errors name.
struct Places<'a> {
    source: &'a Path,
    spool_dir: &'a Path,
}

impl Places<'_> {
    fn invalid(&self, line: u64, message: String) -> PlanError {
        PlanError::Invalid {
            path: self.source.to_path_buf(),
            line,
            message,
        }
    }

    fn spool(&self, cause: std::io::Error) -> PlanError {
        PlanError::Spool {
            dir: self.spool_dir.to_path_buf(),
            cause,
        }
    }
}

/// The file set as declared so far.
#[derive(Default)]
struct Files {
    entries: Vec<FileEntry>,
    /// Dense index by the trace's file id.
    index_of: HashMap<u32, u32>,
    /// The id and index an op last named (ops tend to name the file before theirs).
    last: std::cell::Cell<Option<(u32, u32)>>,
    paths: HashSet<String>,
    /// Set at the first op: no more declarations, parents added.
    closed: bool,
}

impl Files {
    fn declare(&mut self, f: FileDecl) -> Result<(), String> {
        if self.closed {
            return Err("a file line after the first op; declare every file before the ops".into());
        }
        check_rel_path(&f.path)?;
        if self
            .index_of
            .insert(f.id, self.entries.len() as u32)
            .is_some()
        {
            return Err(format!("file id {} is declared twice", f.id));
        }
        if !self.paths.insert(f.path.clone()) {
            return Err(format!("path '{}' is declared twice", f.path));
        }
        self.entries.push(FileEntry {
            id: Some(f.id),
            path: f.path,
            kind: f.kind,
            size: f.size,
            exists: f.exists,
            prepare: f.prepare,
        });
        Ok(())
    }

    /// Ends the declarations (once): adds the undeclared parent directories.
    #[inline]
    fn close(&mut self) -> Result<(), String> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        add_parents(&mut self.entries)
    }

    /// The entries `op` names (`to` is `u32::MAX` when it names one).
    #[inline]
    fn resolve(&self, op: &Op) -> Result<(u32, u32), String> {
        // A reader checks this as it reads; an in-memory trace is checked here.
        let index = |id: u32| {
            if let Some((last, i)) = self.last.get()
                && last == id
            {
                return Ok(i);
            }
            let found = self.index_of.get(&id).copied();
            if let Some(i) = found {
                self.last.set(Some((id, i)));
            }
            found.ok_or_else(|| {
                format!(
                    "the {} op refers to file {id}, which no file line declares; declare it before the ops",
                    op.kind
                )
            })
        };
        let file = index(op.file)?;
        let to = match op.to {
            Some(t) => index(t)?,
            None if op.kind.needs_to() => return Err(format!("the {} op has no 'to'", op.kind)),
            None => u32::MAX,
        };
        Ok((file, to))
    }

    /// Checks that `op` suits the entries it names and naslab's size limit.
    #[inline]
    fn check_fits(&self, op: &Op, file: u32, to: u32) -> Result<(), String> {
        let entry = &self.entries[file as usize];
        check_kind_fits(op.kind, entry)?;
        if op.kind.needs_to() && self.entries[to as usize].kind != entry.kind {
            return Err(match op.kind {
                OpKind::Rename => "rename between a file and a directory".into(),
                _ => format!(
                    "a {} op whose 'to' ('{}') is not declared of the same kind as the entry it names ('{}'); declare both as files or both as directories",
                    op.kind, self.entries[to as usize].path, entry.path
                ),
            });
        }
        if matches!(op.kind, OpKind::Link | OpKind::Symlink) && to == file {
            return Err(format!("a {} op whose 'to' is its own entry", op.kind));
        }
        if matches!(op.kind, OpKind::Read | OpKind::Write | OpKind::Fallocate)
            && op.len > MAX_OP_BYTES
        {
            return Err(format!(
                "a {} of {} bytes is over naslab's limit of {MAX_OP_BYTES} bytes per op; split it into smaller ops",
                op.kind, op.len
            ));
        }
        Ok(())
    }
}

/// Figures over every op, for the plan.
struct Totals {
    measured: [u64; OpKind::ALL.len()],
    warmup: [u64; OpKind::ALL.len()],
    first_line: [u64; OpKind::ALL.len()],
    max_len: u64,
    read_bytes: u64,
    write_bytes: u64,
    unaligned: u64,
    direct_opens: u64,
    /// The smallest measured `t_us`, `u64::MAX` before the first.
    t0_us: u64,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            measured: [0; OpKind::ALL.len()],
            warmup: [0; OpKind::ALL.len()],
            first_line: [0; OpKind::ALL.len()],
            max_len: 0,
            read_bytes: 0,
            write_bytes: 0,
            unaligned: 0,
            direct_opens: 0,
            t0_us: u64::MAX,
        }
    }
}

impl Totals {
    #[inline]
    fn count(&mut self, op: &Op, line: u64) {
        if !op.warmup {
            self.t0_us = self.t0_us.min(op.t_us);
        }
        match op.kind {
            OpKind::Read => self.read_bytes += op.len,
            OpKind::Write => self.write_bytes += op.len,
            _ => {}
        }
        if matches!(op.kind, OpKind::Open | OpKind::Create) && op.flags.contains(OpFlags::DIRECT) {
            self.direct_opens += 1;
        }
        if matches!(op.kind, OpKind::Read | OpKind::Write) {
            self.max_len = self.max_len.max(op.len);
            if !op.offset.is_multiple_of(512) || !op.len.is_multiple_of(512) {
                self.unaligned += 1;
            }
        }
        let k = op.kind.index();
        if self.measured[k] + self.warmup[k] == 0 {
            self.first_line[k] = line;
        }
        if op.warmup {
            self.warmup[k] += 1;
        } else {
            self.measured[k] += 1;
        }
    }
}

/// One stream as compiled so far: its spools, its phase, its open handles.
struct StreamState {
    stream: u32,
    /// Its place in the order of first ops.
    pos: usize,
    writer: SpoolWriter,
    warmup: Option<SpoolWriter>,
    measuring: bool,
    /// Handle slot by file index.
    slots: HashMap<u32, u32>,
    /// The file index and slot last looked up.
    last_slot: Option<(u32, u32)>,
    /// Whether each slot's file is open.
    open: Vec<bool>,
    last_t_us: u64,
    max_read: u64,
    max_write: u64,
    /// Its ops of each kind, measured and warm-up.
    measured: [u64; OpKind::ALL.len()],
    warmup_counts: [u64; OpKind::ALL.len()],
    /// The second of trace time (t_us / 10^6) the last measured op fell in, the
    /// measured ops in it so far, and the most in any one second.
    second: u64,
    in_second: u64,
    densest_second: u64,
}

impl StreamState {
    fn new(stream: u32, pos: usize, writer: SpoolWriter) -> StreamState {
        StreamState {
            stream,
            pos,
            writer,
            warmup: None,
            measuring: false,
            slots: HashMap::new(),
            last_slot: None,
            open: Vec::new(),
            last_t_us: 0,
            max_read: 0,
            max_write: 0,
            measured: [0; OpKind::ALL.len()],
            warmup_counts: [0; OpKind::ALL.len()],
            second: 0,
            in_second: 0,
            densest_second: 0,
        }
    }

    /// Checks that `op` keeps the stream's time order and its warm-up before its
    /// measured ops, with every file closed at the switch.
    #[inline]
    fn check_order(&mut self, op: &Op, entries: &[FileEntry]) -> Result<(), String> {
        if op.t_us < self.last_t_us {
            return Err(format!(
                "time goes backwards in stream {}: t_us {} after {}; a stream's ops must be in time order",
                op.stream, op.t_us, self.last_t_us
            ));
        }
        self.last_t_us = op.t_us;
        if op.warmup {
            self.warmup_counts[op.kind.index()] += 1;
        } else {
            self.measured[op.kind.index()] += 1;
        }
        if !op.warmup {
            let second = op.t_us / 1_000_000;
            if second != self.second {
                self.second = second;
                self.in_second = 0;
            }
            self.in_second += 1;
            self.densest_second = self.densest_second.max(self.in_second);
        }
        if op.warmup {
            if self.measuring {
                return Err(format!(
                    "a warm-up op after stream {}'s measured ops; a stream's warm-up ops come first",
                    op.stream
                ));
            }
        } else if !self.measuring {
            self.measuring = true;
            if let Some(slot) = self.open.iter().position(|&o| o) {
                let path = self
                    .slots
                    .iter()
                    .find(|&(_, &s)| s as usize == slot)
                    .map(|(&f, _)| entries[f as usize].path.clone())
                    .unwrap_or_default();
                return Err(format!(
                    "stream {} leaves '{path}' open at the end of its warm-up; close it in the warm-up",
                    op.stream
                ));
            }
        }
        Ok(())
    }

    /// The handle slot of `file` (at `path`), after checking that `op` opens a closed
    /// file or uses an open one, and noting the open or close.
    #[inline]
    fn track_handle(&mut self, op: &Op, file: u32, path: &str) -> Result<u32, String> {
        let slot = match self.last_slot {
            Some((f, slot)) if f == file => slot,
            _ => {
                let next_slot = self.slots.len() as u32;
                let slot = *self.slots.entry(file).or_insert(next_slot);
                self.last_slot = Some((file, slot));
                slot
            }
        };
        if slot as usize == self.open.len() {
            self.open.push(false);
        }
        let is_open = self.open[slot as usize];
        match op.kind {
            // An open that must fail leaves no handle.
            OpKind::Open | OpKind::Create if op.expect.is_some() => {}
            OpKind::Open | OpKind::Create => {
                if is_open {
                    return Err(format!(
                        "stream {} opens '{path}' again without closing it; add a close op first",
                        op.stream
                    ));
                }
                self.open[slot as usize] = true;
            }
            kind if kind.needs_handle() => {
                if !is_open {
                    return Err(format!(
                        "stream {} issues a {kind} on '{path}' without opening it; add an open or create op before it",
                        op.stream
                    ));
                }
                if kind == OpKind::Close {
                    self.open[slot as usize] = false;
                }
            }
            _ => {}
        }
        match op.kind {
            OpKind::Read => self.max_read = self.max_read.max(op.len),
            OpKind::Write => self.max_write = self.max_write.max(op.len),
            _ => {}
        }
        Ok(slot)
    }

    /// The spool of the op's phase, the warm-up's made at its first op.
    #[inline]
    fn spool_for(&mut self, warmup: bool, dir: &Path) -> std::io::Result<&mut SpoolWriter> {
        if !warmup {
            return Ok(&mut self.writer);
        }
        let w = match self.warmup.take() {
            Some(w) => w,
            None => SpoolWriter::new(dir, 1 << 12)?,
        };
        Ok(self.warmup.insert(w))
    }

    /// The stream's warm-up plan (if it has one) and measured plan (if it has ops).
    fn finish(
        self,
        places: &Places,
    ) -> Result<(Option<StreamPlan>, Option<StreamPlan>), PlanError> {
        if self.open.iter().any(|&o| o) && !self.measuring {
            return Err(places.invalid(
                0,
                format!(
                    "stream {} ends its warm-up with a file still open; close it in the warm-up",
                    self.stream
                ),
            ));
        }
        let slots = self.slots.len() as u32;
        let plan = |ops, op_counts| StreamPlan {
            stream: self.stream,
            ops,
            op_counts,
            slots,
            max_read: self.max_read,
            max_write: self.max_write,
            densest_second: self.densest_second,
            order: StreamOrder::default(),
        };
        let warmup = match self.warmup {
            Some(w) => Some(plan(
                w.finish().map_err(|e| places.spool(e))?,
                self.warmup_counts,
            )),
            None => None,
        };
        let ops = self.writer.finish().map_err(|e| places.spool(e))?;
        let measured = (!ops.is_empty()).then(|| plan(ops, self.measured));
        Ok((warmup, measured))
    }
}

/// The streams met so far, in the order of their first ops.
#[derive(Default)]
struct Streams {
    list: Vec<StreamState>,
    /// Index into `list` by stream number.
    index: HashMap<u32, usize>,
    /// The stream and index last looked up.
    last: Option<(u32, usize)>,
}

impl Streams {
    /// `stream`'s state, made (with its spool) at the stream's first op.
    #[inline]
    fn get_or_add(&mut self, stream: u32, places: &Places) -> Result<&mut StreamState, PlanError> {
        if let Some((last, i)) = self.last
            && last == stream
        {
            return Ok(&mut self.list[i]);
        }
        let i = match self.index.get(&stream) {
            Some(&i) => i,
            None => {
                // Many streams keep smaller write buffers, to bound the memory they hold.
                let buffer = if self.list.len() < 64 {
                    1 << 16
                } else {
                    1 << 12
                };
                let writer =
                    SpoolWriter::new(places.spool_dir, buffer).map_err(|e| places.spool(e))?;
                let pos = self.list.len();
                self.list.push(StreamState::new(stream, pos, writer));
                self.index.insert(stream, self.list.len() - 1);
                self.list.len() - 1
            }
        };
        self.last = Some((stream, i));
        Ok(&mut self.list[i])
    }
}

/// A trace being compiled, record by record.
struct Compiler<'a> {
    places: Places<'a>,
    header: Option<Header>,
    files: Files,
    streams: Streams,
    totals: Totals,
    order: Collector,
}

impl<'a> Compiler<'a> {
    fn new(source: &'a Path, spool_dir: &'a Path) -> Compiler<'a> {
        Compiler {
            places: Places { source, spool_dir },
            header: None,
            files: Files::default(),
            streams: Streams::default(),
            totals: Totals::default(),
            order: Collector::default(),
        }
    }

    fn header(&mut self, h: Header, line: u64) -> Result<(), PlanError> {
        if self.header.is_some() {
            return Err(self
                .places
                .invalid(line, "a second header line; a trace has exactly one".into()));
        }
        if let Some(d) = h.queue_depth
            && !(1..=MAX_QUEUE_DEPTH).contains(&d)
        {
            return Err(self.places.invalid(
                line,
                format!("queue_depth {d} is out of range; use 1 to {MAX_QUEUE_DEPTH}"),
            ));
        }
        self.header = Some(h);
        Ok(())
    }

    fn file(&mut self, f: FileDecl, line: u64) -> Result<(), PlanError> {
        // What a reader checks as it reads, checked again for in-memory traces.
        if self.header.is_none() {
            return Err(self
                .places
                .invalid(line, "the first line must be the header".into()));
        }
        self.files
            .declare(f)
            .map_err(|m| self.places.invalid(line, m))
    }

    fn op(&mut self, op: &Op, line: u64) -> Result<(), PlanError> {
        let invalid = |m| self.places.invalid(line, m);
        if self.header.is_none() {
            return Err(invalid("the first line must be the header".into()));
        }
        if op.offset.checked_add(op.len).is_none() {
            return Err(invalid("offset + len overflows".into()));
        }
        if !self.files.closed {
            self.files.close().map_err(invalid)?;
            self.order.start(&self.files.entries);
        }
        let (file, to) = self.files.resolve(op).map_err(invalid)?;
        self.files.check_fits(op, file, to).map_err(invalid)?;
        let st = self.streams.get_or_add(op.stream, &self.places)?;
        let entries = &self.files.entries;
        st.check_order(op, entries).map_err(invalid)?;
        let slot = st
            .track_handle(op, file, &entries[file as usize].path)
            .map_err(invalid)?;
        self.totals.count(op, line);
        self.order.note(st.pos, op, file, to, line);
        st.spool_for(op.warmup, self.places.spool_dir)
            .and_then(|w| {
                w.push_op(&CompiledOp {
                    kind: op.kind,
                    flags: op.flags,
                    slot,
                    file,
                    to,
                    t_us: op.t_us,
                    offset: op.offset,
                    len: op.len,
                    line,
                    expect: op.expect,
                })
            })
            .map_err(|e| self.places.spool(e))
    }

    fn finish(mut self) -> Result<Plan, PlanError> {
        let header = self.header.take().ok_or_else(|| {
            self.places.invalid(
                1,
                "the trace is empty; a trace starts with a header line (see docs/trace-format.md)"
                    .into(),
            )
        })?;
        self.files.close().map_err(|m| self.places.invalid(0, m))?;
        let mut streams = Vec::with_capacity(self.streams.list.len());
        let mut warmup = Vec::new();
        for st in self.streams.list {
            let (w, m) = st.finish(&self.places)?;
            warmup.extend(w);
            streams.extend(m);
        }
        let [(measured_order, edges), (warmup_order, _)] = self.order.finish();
        for (sp, o) in streams.iter_mut().zip(measured_order) {
            sp.order = o;
        }
        for (sp, o) in warmup.iter_mut().zip(warmup_order) {
            sp.order = o;
        }
        let t = self.totals;
        Ok(Plan {
            header,
            source: self.places.source.display().to_string(),
            files: Arc::new(FileTable {
                entries: self.files.entries,
            }),
            streams,
            warmup,
            warmup_counts: t.warmup,
            t0_us: if t.t0_us == u64::MAX { 0 } else { t.t0_us },
            op_counts: t.measured,
            first_line: t.first_line,
            max_len: t.max_len,
            planned_read_bytes: t.read_bytes,
            planned_write_bytes: t.write_bytes,
            unaligned_ops: t.unaligned,
            direct_opens: t.direct_opens,
            edges,
        })
    }
}

fn check_kind_fits(kind: OpKind, entry: &FileEntry) -> Result<(), String> {
    let wants_dir = matches!(kind, OpKind::Mkdir | OpKind::Readdir);
    // A hard link names a file (directories have none); a symbolic link may name either.
    let any = matches!(
        kind,
        OpKind::Stat
            | OpKind::Unlink
            | OpKind::Rename
            | OpKind::Symlink
            | OpKind::Statfs
            | OpKind::Utime
    );
    let is_dir = entry.kind == FileKind::Dir;
    if any || wants_dir == is_dir {
        return Ok(());
    }
    let what = if is_dir { "directory" } else { "file" };
    Err(format!(
        "a {kind} op on '{}', which is declared as a {what}; fix the op or the entry's kind",
        entry.path
    ))
}

/// Adds every undeclared parent directory as an entry that preparation creates, and
/// checks that nothing prepared sits in a directory the workload itself creates.
fn add_parents(entries: &mut Vec<FileEntry>) -> Result<(), String> {
    let declared: HashMap<String, (FileKind, bool)> = entries
        .iter()
        .map(|e| (e.path.clone(), (e.kind, e.exists)))
        .collect();
    let mut missing = BTreeSet::new();
    for e in entries.iter() {
        let mut p = e.path.as_str();
        let mut undeclared_below: Option<&str> = None;
        while let Some(cut) = p.rfind('/') {
            p = &p[..cut];
            if let (Some((FileKind::Dir, false)), Some(below)) = (declared.get(p), undeclared_below)
            {
                return Err(format!(
                    "'{below}' is not declared but sits in '{p}', which the workload creates; declare '{below}' as a directory too"
                ));
            }
            match declared.get(p) {
                Some((FileKind::File, _)) => {
                    return Err(format!(
                        "'{}' is inside '{p}', which is declared as a file",
                        e.path
                    ));
                }
                Some((FileKind::Dir, false)) if e.exists => {
                    return Err(format!(
                        "'{}' exists before the test but its directory '{p}' does not; declare '{p}' with exists true",
                        e.path
                    ));
                }
                Some(_) => {}
                // Met before: the walk from there up was made and passed (a directory
                // the workload creates above an undeclared one fails whatever is below).
                None if missing.contains(p) => break,
                None => {
                    undeclared_below = Some(p);
                    missing.insert(p.to_string());
                }
            }
        }
    }
    for path in missing {
        entries.push(FileEntry {
            id: None,
            path,
            kind: FileKind::Dir,
            size: 0,
            exists: true,
            prepare: Prepare::Copy,
        });
    }
    Ok(())
}
