//! Compiling a trace into a plan: every check that can fail is made here, before
//! preparation, so a bad trace never starts a run. Ops go to per-stream spools.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use naslab_trace::{
    check_rel_path, FileKind, Header, OpFlags, OpKind, Prepare, Record, Trace, TraceError,
    TraceReader, MAX_QUEUE_DEPTH,
};

use crate::buffer::StreamBuffers;
use crate::spool::{CompiledOp, Spool, SpoolWriter};

/// The largest single read, write or fallocate a trace may ask for.
pub const MAX_OP_BYTES: u64 = 256 << 20;

/// One entry of the run's file set, by dense index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// The id the trace gave it; `None` for a parent directory preparation adds.
    pub id: Option<u32>,
    pub path: String,
    pub kind: FileKind,
    pub size: u64,
    pub exists: bool,
    pub prepare: Prepare,
}

/// The run's file set; backends and ops name entries by index into it.
#[derive(Debug, Clone, Default)]
pub struct FileTable {
    pub entries: Vec<FileEntry>,
}

impl FileTable {
    /// The entry's path relative to the workload directory.
    pub fn path(&self, index: u32) -> &str {
        self.entries
            .get(index as usize)
            .map(|e| e.path.as_str())
            .unwrap_or("")
    }
}

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
    match cause.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::EDQUOT) => "; the file system is full: free space there",
        Some(libc::EMFILE) | Some(libc::ENFILE) => {
            "; too many open files: every stream keeps a spool file open, so raise the limit (ulimit -n) or use fewer streams"
        }
        Some(libc::EACCES) | Some(libc::EPERM) => {
            "; permission denied: give a directory naslab may write in"
        }
        Some(libc::EROFS) => "; the file system is read-only: give a writable directory",
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
    /// The stream's largest read and largest write (both phases), which size its buffers.
    pub max_read: u64,
    pub max_write: u64,
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

/// A trace file's records with their line numbers.
pub fn records_from_reader<R: BufRead>(
    mut reader: TraceReader<R>,
) -> impl Iterator<Item = Result<(Record, u64), TraceError>> {
    std::iter::from_fn(move || match reader.next_record() {
        Ok(Some(r)) => Some(Ok((r, reader.line()))),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    })
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

struct StreamState {
    stream: u32,
    writer: SpoolWriter,
    warmup: Option<SpoolWriter>,
    measuring: bool,
    slots: HashMap<u32, u32>,
    open: Vec<bool>,
    last_t_us: u64,
    max_read: u64,
    max_write: u64,
}

/// Compiles `records` (from `source`, named in errors) into a plan, spooling ops into `spool_dir`.
pub fn compile(
    source: &Path,
    records: impl Iterator<Item = Result<(Record, u64), TraceError>>,
    spool_dir: &Path,
) -> Result<Plan, PlanError> {
    let invalid = |line: u64, message: String| PlanError::Invalid {
        path: source.to_path_buf(),
        line,
        message,
    };
    let spool_err = |cause: std::io::Error| PlanError::Spool {
        dir: spool_dir.to_path_buf(),
        cause,
    };
    let mut header = None;
    let mut entries: Vec<FileEntry> = Vec::new();
    let mut index_of: HashMap<u32, u32> = HashMap::new();
    let mut paths: HashSet<String> = HashSet::new();
    let mut files_done = false;
    let mut streams: Vec<StreamState> = Vec::new();
    let mut stream_index: HashMap<u32, usize> = HashMap::new();
    let mut plan_counts = [0u64; OpKind::ALL.len()];
    let mut warmup_counts = [0u64; OpKind::ALL.len()];
    let mut first_line = [0u64; OpKind::ALL.len()];
    let (mut max_len, mut rd, mut wr, mut unaligned) = (0u64, 0u64, 0u64, 0u64);
    let mut direct_opens = 0u64;
    let mut t0_us = u64::MAX;

    for item in records {
        let (record, line) = item?;
        match record {
            Record::Header(h) => {
                if header.is_some() {
                    return Err(invalid(
                        line,
                        "a second header line; a trace has exactly one".into(),
                    ));
                }
                if let Some(d) = h.queue_depth {
                    if !(1..=MAX_QUEUE_DEPTH).contains(&d) {
                        return Err(invalid(
                            line,
                            format!("queue_depth {d} is out of range; use 1 to {MAX_QUEUE_DEPTH}"),
                        ));
                    }
                }
                header = Some(h)
            }
            Record::File(f) => {
                // What a reader checks as it reads, checked again for in-memory traces.
                if header.is_none() {
                    return Err(invalid(line, "the first line must be the header".into()));
                }
                if files_done {
                    return Err(invalid(
                        line,
                        "a file line after the first op; declare every file before the ops".into(),
                    ));
                }
                check_rel_path(&f.path).map_err(|why| invalid(line, why))?;
                if index_of.insert(f.id, entries.len() as u32).is_some() {
                    return Err(invalid(line, format!("file id {} is declared twice", f.id)));
                }
                if !paths.insert(f.path.clone()) {
                    return Err(invalid(
                        line,
                        format!("path '{}' is declared twice", f.path),
                    ));
                }
                entries.push(FileEntry {
                    id: Some(f.id),
                    path: f.path,
                    kind: f.kind,
                    size: f.size,
                    exists: f.exists,
                    prepare: f.prepare,
                });
            }
            Record::Op(op, _) => {
                if header.is_none() {
                    return Err(invalid(line, "the first line must be the header".into()));
                }
                if op.offset.checked_add(op.len).is_none() {
                    return Err(invalid(line, "offset + len overflows".into()));
                }
                if !files_done {
                    files_done = true;
                    add_parents(&mut entries).map_err(|m| invalid(line, m))?;
                }
                // A reader checks this as it reads; an in-memory trace is checked here.
                let undeclared = |id: u32| {
                    invalid(
                        line,
                        format!(
                            "the {} op refers to file {id}, which no file line declares; declare it before the ops",
                            op.kind
                        ),
                    )
                };
                let file = *index_of.get(&op.file).ok_or_else(|| undeclared(op.file))?;
                let to = match op.to {
                    Some(t) => *index_of.get(&t).ok_or_else(|| undeclared(t))?,
                    None if op.kind == OpKind::Rename => {
                        return Err(invalid(line, "the rename op has no 'to'".into()))
                    }
                    None => u32::MAX,
                };
                let entry = &entries[file as usize];
                check_kind_fits(op.kind, entry).map_err(|m| invalid(line, m))?;
                if op.kind == OpKind::Rename && entries[to as usize].kind != entry.kind {
                    return Err(invalid(
                        line,
                        "rename between a file and a directory".into(),
                    ));
                }
                if matches!(op.kind, OpKind::Read | OpKind::Write | OpKind::Fallocate)
                    && op.len > MAX_OP_BYTES
                {
                    return Err(invalid(
                        line,
                        format!(
                            "a {} of {} bytes is over naslab's limit of {MAX_OP_BYTES} bytes per op; split it into smaller ops",
                            op.kind, op.len
                        ),
                    ));
                }
                let si = match stream_index.get(&op.stream) {
                    Some(&i) => i,
                    None => {
                        let buffer = if streams.len() < 64 { 1 << 16 } else { 1 << 12 };
                        streams.push(StreamState {
                            stream: op.stream,
                            writer: SpoolWriter::new(spool_dir, buffer).map_err(spool_err)?,
                            warmup: None,
                            measuring: false,
                            slots: HashMap::new(),
                            open: Vec::new(),
                            last_t_us: 0,
                            max_read: 0,
                            max_write: 0,
                        });
                        stream_index.insert(op.stream, streams.len() - 1);
                        streams.len() - 1
                    }
                };
                let st = &mut streams[si];
                if op.t_us < st.last_t_us {
                    return Err(invalid(
                        line,
                        format!(
                            "time goes backwards in stream {}: t_us {} after {}; a stream's ops must be in time order",
                            op.stream, op.t_us, st.last_t_us
                        ),
                    ));
                }
                st.last_t_us = op.t_us;
                if op.warmup {
                    if st.measuring {
                        return Err(invalid(
                            line,
                            format!(
                                "a warm-up op after stream {}'s measured ops; a stream's warm-up ops come first",
                                op.stream
                            ),
                        ));
                    }
                } else if !st.measuring {
                    st.measuring = true;
                    if let Some(slot) = st.open.iter().position(|&o| o) {
                        let file = st
                            .slots
                            .iter()
                            .find(|(_, &s)| s as usize == slot)
                            .map(|(&f, _)| f);
                        let path = file
                            .map(|f| entries[f as usize].path.clone())
                            .unwrap_or_default();
                        return Err(invalid(
                            line,
                            format!(
                                "stream {} leaves '{path}' open at the end of its warm-up; close it in the warm-up",
                                op.stream
                            ),
                        ));
                    }
                }
                if !op.warmup {
                    t0_us = t0_us.min(op.t_us);
                }
                let next_slot = st.slots.len() as u32;
                let slot = *st.slots.entry(file).or_insert(next_slot);
                if slot as usize == st.open.len() {
                    st.open.push(false);
                }
                let is_open = st.open[slot as usize];
                match op.kind {
                    OpKind::Open | OpKind::Create => {
                        if is_open {
                            return Err(invalid(
                                line,
                                format!(
                                    "stream {} opens '{}' again without closing it; add a close op first",
                                    op.stream, entry.path
                                ),
                            ));
                        }
                        st.open[slot as usize] = true;
                    }
                    kind if kind.needs_handle() => {
                        if !is_open {
                            return Err(invalid(
                                line,
                                format!(
                                    "stream {} issues a {} on '{}' without opening it; add an open or create op before it",
                                    op.stream, kind, entry.path
                                ),
                            ));
                        }
                        if kind == OpKind::Close {
                            st.open[slot as usize] = false;
                        }
                    }
                    _ => {}
                }
                match op.kind {
                    OpKind::Read => {
                        rd += op.len;
                        st.max_read = st.max_read.max(op.len);
                    }
                    OpKind::Write => {
                        wr += op.len;
                        st.max_write = st.max_write.max(op.len);
                    }
                    _ => {}
                }
                if matches!(op.kind, OpKind::Open | OpKind::Create)
                    && op.flags.contains(OpFlags::DIRECT)
                {
                    direct_opens += 1;
                }
                if matches!(op.kind, OpKind::Read | OpKind::Write) {
                    max_len = max_len.max(op.len);
                    if !op.offset.is_multiple_of(512) || !op.len.is_multiple_of(512) {
                        unaligned += 1;
                    }
                }
                let k = op.kind.index();
                if plan_counts[k] + warmup_counts[k] == 0 {
                    first_line[k] = line;
                }
                let writer = if op.warmup {
                    warmup_counts[k] += 1;
                    let w = match st.warmup.take() {
                        Some(w) => w,
                        None => SpoolWriter::new(spool_dir, 1 << 12).map_err(spool_err)?,
                    };
                    st.warmup.insert(w)
                } else {
                    plan_counts[k] += 1;
                    &mut st.writer
                };
                writer
                    .push_op(&CompiledOp {
                        kind: op.kind,
                        flags: op.flags,
                        slot,
                        file,
                        to,
                        t_us: op.t_us,
                        offset: op.offset,
                        len: op.len,
                        line,
                    })
                    .map_err(spool_err)?;
            }
        }
    }
    let header = header.ok_or_else(|| {
        invalid(
            1,
            "the trace is empty; a trace starts with a header line (see docs/trace-format.md)"
                .into(),
        )
    })?;
    if !files_done {
        add_parents(&mut entries).map_err(|m| invalid(0, m))?;
    }
    let mut stream_plans = Vec::with_capacity(streams.len());
    let mut warmup_plans = Vec::new();
    for st in streams {
        let slots = st.slots.len() as u32;
        if st.open.iter().any(|&o| o) && !st.measuring {
            return Err(invalid(
                0,
                format!(
                    "stream {} ends its warm-up with a file still open; close it in the warm-up",
                    st.stream
                ),
            ));
        }
        if let Some(w) = st.warmup {
            warmup_plans.push(StreamPlan {
                stream: st.stream,
                ops: w.finish().map_err(spool_err)?,
                slots,
                max_read: st.max_read,
                max_write: st.max_write,
            });
        }
        let ops = st.writer.finish().map_err(spool_err)?;
        if !ops.is_empty() {
            stream_plans.push(StreamPlan {
                stream: st.stream,
                ops,
                slots,
                max_read: st.max_read,
                max_write: st.max_write,
            });
        }
    }
    Ok(Plan {
        header,
        source: source.display().to_string(),
        files: Arc::new(FileTable { entries }),
        streams: stream_plans,
        warmup: warmup_plans,
        warmup_counts,
        t0_us: if t0_us == u64::MAX { 0 } else { t0_us },
        op_counts: plan_counts,
        first_line,
        max_len,
        planned_read_bytes: rd,
        planned_write_bytes: wr,
        unaligned_ops: unaligned,
        direct_opens,
    })
}

fn check_kind_fits(kind: OpKind, entry: &FileEntry) -> Result<(), String> {
    let wants_dir = matches!(kind, OpKind::Mkdir | OpKind::Readdir);
    let any = matches!(kind, OpKind::Stat | OpKind::Unlink | OpKind::Rename);
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
                    ))
                }
                Some((FileKind::Dir, false)) if e.exists => {
                    return Err(format!(
                        "'{}' exists before the test but its directory '{p}' does not; declare '{p}' with exists true",
                        e.path
                    ))
                }
                Some(_) => {}
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
