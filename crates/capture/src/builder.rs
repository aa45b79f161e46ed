//! Turning a stream of file operations, as any importer sees them, into a naslab trace.
//!
//! Importers name files by path and streams by whatever their format uses (a thread id,
//! a client number); the builder gives them ids, follows which files exist and which
//! handles each stream holds, so that the trace it writes passes naslab's checks: every
//! read or write has an open handle in its stream, a file the workload creates is
//! declared as not existing, time never goes backwards in a stream. Ops are spooled to
//! an unnamed temporary file as they come, so memory grows with the number of files and
//! streams, never with the number of ops.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

use naslab_trace::{
    Expected, FileDecl, FileKind, Header, Op, OpFlags, OpKind, Prepare, Sink, TraceWriter,
    check_rel_path, create_trace,
};

use crate::ImportError;
use crate::path_tree::PathTree;

/// The largest read or write naslab replays in one op.
pub const MAX_OP_BYTES: u64 = 256 << 20;

/// What the first sight of a path says about whether it existed before the workload ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// The op needs it to exist (an open without create, a read, a stat).
    Existing,
    /// The op makes it (a create, a mkdir, a rename's new name).
    New,
}

/// How an open may create its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Creation {
    /// Open an existing file only.
    #[default]
    Never,
    /// Create it when it does not exist.
    IfAbsent,
    /// Create it, failing when an entry has its name (O_CREAT|O_EXCL, FILE_CREATE).
    Exclusive,
}

/// An open as the application asked for it.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenReq {
    pub read: bool,
    pub write: bool,
    pub create: Creation,
    pub truncate: bool,
    pub append: bool,
    pub sync: bool,
    pub direct: bool,
}

#[derive(Debug, Clone)]
struct Entry {
    path: String,
    kind: FileKind,
    exists_before: bool,
    size_before: u64,
    exists_now: bool,
    size_now: u64,
    /// Written, truncated or created: later observations no longer tell the size before.
    modified: bool,
    /// Seen only by lookups expected to find nothing, which say nothing of its kind: the
    /// first other use may declare it as the other kind.
    kind_unknown: bool,
}

#[derive(Debug, Default)]
struct StreamState {
    number: u32,
    last_t_us: u64,
    /// Open handles per file: how many the application holds, and whether ours can write.
    handles: HashMap<u32, (u32, bool)>,
}

/// Whether entries not yet seen existed before the run.
enum Existence {
    /// The tree was listed before the command ran: anything not in it did not exist.
    Snapshot,
    /// Nothing was listed: the first op on a path tells.
    Infer,
}

/// What an import or capture made, for the user.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub streams: u32,
    pub ops: BTreeMap<OpKind, u64>,
    pub files_existing: u64,
    pub bytes_existing: u64,
    pub files_created: u64,
    /// Things of the input left out, by why.
    pub skipped: BTreeMap<String, u64>,
    /// Ops the builder added or changed to keep the trace replayable, by why.
    pub adjusted: BTreeMap<String, u64>,
    /// Ops kept as the input has them whose replay will not do what the input says, by
    /// why.
    pub doubtful: BTreeMap<String, u64>,
    pub warnings: Vec<String>,
}

impl Summary {
    /// All ops in the trace.
    pub fn total_ops(&self) -> u64 {
        self.ops.values().sum()
    }

    /// Ops of one kind.
    pub fn count(&self, kind: OpKind) -> u64 {
        self.ops.get(&kind).copied().unwrap_or(0)
    }

    /// Skipped items of one kind.
    pub fn skipped(&self, why: &str) -> u64 {
        self.skipped.get(why).copied().unwrap_or(0)
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} ops in {} stream{}; {} existing file{} ({} bytes) declared, {} made by the workload",
            self.total_ops(),
            self.streams,
            if self.streams == 1 { "" } else { "s" },
            self.files_existing,
            if self.files_existing == 1 { "" } else { "s" },
            self.bytes_existing,
            self.files_created
        )?;
        let ops: Vec<String> = self.ops.iter().map(|(k, n)| format!("{k} {n}")).collect();
        if !ops.is_empty() {
            writeln!(f, "ops: {}", ops.join(", "))?;
        }
        if !self.skipped.is_empty() {
            writeln!(f, "left out:")?;
            for (why, n) in &self.skipped {
                writeln!(f, "  {n:>8}  {why}")?;
            }
        }
        if !self.adjusted.is_empty() {
            writeln!(f, "added or changed to keep the trace replayable:")?;
            for (why, n) in &self.adjusted {
                writeln!(f, "  {n:>8}  {why}")?;
            }
        }
        if !self.doubtful.is_empty() {
            writeln!(f, "kept, but their replay will differ:")?;
            for (why, n) in &self.doubtful {
                writeln!(f, "  {n:>8}  {why}")?;
            }
        }
        for w in &self.warnings {
            writeln!(f, "warning: {w}")?;
        }
        Ok(())
    }
}

/// Collects ops from an importer and writes the trace at the end.
pub struct Builder {
    workload: String,
    generator: String,
    existence: Existence,
    entries: Vec<Entry>,
    by_path: HashMap<String, u32>,
    /// The declared paths as a tree: no entry may go inside a file.
    tree: PathTree,
    streams: HashMap<u64, StreamState>,
    spool: TraceWriter<BufWriter<File>>,
    summary: Summary,
}

impl Builder {
    /// A builder that learns from each path's first op whether it existed before.
    pub fn new(workload: &str, generator: &str) -> Result<Builder, ImportError> {
        if let Err(why) = check_rel_path(workload) {
            return Err(ImportError::Usage(format!("workload name: {why}")));
        }
        if workload.contains('/') {
            return Err(ImportError::Usage(format!(
                "workload name '{workload}' contains '/'; give one word"
            )));
        }
        let file = tempfile::tempfile().map_err(|e| {
            ImportError::Write(format!(
                "cannot make a temporary file for the ops: {e}; set TMPDIR to a writable directory"
            ))
        })?;
        Ok(Builder {
            workload: workload.to_string(),
            generator: generator.to_string(),
            existence: Existence::Infer,
            entries: Vec::new(),
            by_path: HashMap::new(),
            tree: PathTree::default(),
            streams: HashMap::new(),
            spool: TraceWriter::new(PathBuf::from("(op spool)"), BufWriter::new(file)),
            summary: Summary::default(),
        })
    }

    /// Declares the tree as it stood before the workload: `(path, kind, size)` each.
    /// Paths not in it did not exist.
    pub fn set_snapshot(&mut self, tree: impl IntoIterator<Item = (String, FileKind, u64)>) {
        self.existence = Existence::Snapshot;
        for (path, kind, size) in tree {
            if check_rel_path(&path).is_err()
                || self.by_path.contains_key(&path)
                || !self.tree.fits(&path, kind)
            {
                continue;
            }
            self.push_entry(path, kind, true, size);
        }
    }

    /// What was imported and left out so far.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Counts one thing of the input left out.
    pub fn skip(&mut self, why: &str) {
        *self.summary.skipped.entry(why.to_string()).or_default() += 1;
    }

    /// How many things were left out for `why` so far.
    pub fn skipped_count(&self, why: &str) -> u64 {
        self.summary.skipped(why)
    }

    /// Counts one op kept as the input has it whose replay will differ from it.
    pub fn warn_count(&mut self, why: &str) {
        *self.summary.doubtful.entry(why.to_string()).or_insert(0) += 1;
    }

    /// Counts one op added or changed to keep the trace replayable.
    pub fn adjust(&mut self, why: &str) {
        *self.summary.adjusted.entry(why.to_string()).or_default() += 1;
    }

    /// Adds a warning shown with the summary.
    pub fn warn(&mut self, text: String) {
        if !self.summary.warnings.contains(&text) {
            self.summary.warnings.push(text);
        }
    }

    /// Declares `path`, which must fit the tree (see [`PathTree::fits`]).
    fn push_entry(&mut self, path: String, kind: FileKind, exists: bool, size: u64) -> u32 {
        let id = self.entries.len() as u32 + 1;
        self.tree.insert(&path, kind);
        self.by_path.insert(path.clone(), id);
        self.entries.push(Entry {
            path,
            kind,
            exists_before: exists,
            size_before: if exists { size } else { 0 },
            exists_now: exists,
            size_now: if exists { size } else { 0 },
            modified: !exists,
            kind_unknown: false,
        });
        id
    }

    fn entry_mut(&mut self, id: u32) -> &mut Entry {
        &mut self.entries[id as usize - 1]
    }

    fn entry(&self, id: u32) -> &Entry {
        &self.entries[id as usize - 1]
    }

    /// The id of `path` (relative to the workload directory), declaring it on first
    /// sight. `None` when the path is not a valid trace path or was seen as the other kind.
    pub fn file(&mut self, path: &str, kind: FileKind, first: Presence) -> Option<u32> {
        if let Some(&id) = self.by_path.get(path) {
            let e = self.entry(id);
            if e.kind != kind {
                if e.kind_unknown && self.tree.rekind(path, kind) {
                    let e = self.entry_mut(id);
                    e.kind = kind;
                    e.kind_unknown = false;
                    return Some(id);
                }
                self.skip("ops on a path seen both as a file and as a directory");
                return None;
            }
            self.entry_mut(id).kind_unknown = false;
            return Some(id);
        }
        if check_rel_path(path).is_err() {
            self.skip("paths a trace cannot hold");
            return None;
        }
        // `naslab run` refuses an entry inside a file: a path used as a file at one time
        // and as a directory at another (removed and made again as the other kind) keeps
        // the kind it was first seen as, and the ops that need the other are left out.
        if !self.tree.fits(path, kind) {
            self.skip("ops on a path seen both as a file and as a directory");
            return None;
        }
        let exists = match self.existence {
            Existence::Snapshot => false,
            // A path inside a directory the workload made cannot have existed before.
            Existence::Infer => first == Presence::Existing && !self.inside_new_dir(path),
        };
        Some(self.push_entry(path.to_string(), kind, exists, 0))
    }

    /// The id of `path` if it is known already.
    pub fn known(&self, path: &str) -> Option<u32> {
        self.by_path.get(path).copied()
    }

    /// Every known path under `dir` (not `dir` itself) that exists now, deepest first.
    pub fn existing_below(&self, dir: &str) -> Vec<u32> {
        let prefix = format!("{dir}/");
        let mut below: Vec<(usize, u32)> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.exists_now && e.path.starts_with(&prefix))
            .map(|(i, e)| (e.path.matches('/').count(), i as u32 + 1))
            .collect();
        below.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        below.into_iter().map(|(_, id)| id).collect()
    }

    /// Whether the entry exists at this point of the workload.
    pub fn exists_now(&self, id: u32) -> bool {
        self.entry(id).exists_now
    }

    /// The entry's size at this point of the workload, as far as the ops tell.
    pub fn size_now(&self, id: u32) -> u64 {
        self.entry(id).size_now
    }

    fn inside_new_dir(&self, path: &str) -> bool {
        let mut p = path;
        while let Some(cut) = p.rfind('/') {
            p = &p[..cut];
            if let Some(&id) = self.by_path.get(p)
                && !self.entry(id).exists_before
            {
                return true;
            }
        }
        false
    }

    /// Records a size seen for the file (a stat, the end of a read) before the workload
    /// changed it: an existing file is prepared at least this large.
    pub fn note_size(&mut self, id: u32, size: u64) {
        if matches!(self.existence, Existence::Snapshot) {
            return;
        }
        let e = self.entry_mut(id);
        if e.exists_before && !e.modified && e.kind == FileKind::File {
            e.size_before = e.size_before.max(size);
            e.size_now = e.size_now.max(size);
        }
    }

    /// Records an extent the file must cover before the workload starts, whatever the
    /// workload does to it later (fio lays its files out before its I/O).
    pub fn note_extent_before(&mut self, id: u32, end: u64) {
        let e = self.entry_mut(id);
        if e.exists_before && e.kind == FileKind::File {
            e.size_before = e.size_before.max(end);
        }
    }

    fn stream(&mut self, key: u64, t_us: u64) -> (u32, u64) {
        let next = self.streams.len() as u32;
        let st = self.streams.entry(key).or_insert_with(|| StreamState {
            number: next,
            ..StreamState::default()
        });
        let t = t_us.max(st.last_t_us);
        st.last_t_us = t;
        (st.number, t)
    }

    fn emit(&mut self, key: u64, t_us: u64, op: Op) -> Result<(), ImportError> {
        let (number, t) = self.stream(key, t_us);
        let op = Op {
            stream: number,
            t_us: t,
            ..op
        };
        *self.summary.ops.entry(op.kind).or_default() += 1;
        self.spool
            .op(&op, None)
            .map_err(|e| ImportError::Write(e.to_string()))
    }

    fn handle(&self, key: u64, id: u32) -> Option<(u32, bool)> {
        self.streams
            .get(&key)
            .and_then(|s| s.handles.get(&id))
            .copied()
            .filter(|(n, _)| *n > 0)
    }

    fn set_handle(&mut self, key: u64, id: u32, value: (u32, bool)) {
        let next = self.streams.len() as u32;
        let st = self.streams.entry(key).or_insert_with(|| StreamState {
            number: next,
            ..StreamState::default()
        });
        if value.0 == 0 {
            st.handles.remove(&id);
        } else {
            st.handles.insert(id, value);
        }
    }

    /// An open or create of a file, as asked for. A stream that has the file open
    /// already keeps its one handle (reopened read-write if the new open writes).
    pub fn open(&mut self, key: u64, t_us: u64, id: u32, req: OpenReq) -> Result<(), ImportError> {
        if let Some((n, writable)) = self.handle(key, id) {
            if req.write && !writable {
                self.reopen_writable(key, t_us, id)?;
            } else {
                self.adjust("opens of a file the stream had open already (one handle kept)");
            }
            self.set_handle(key, id, (n + 1, true));
            return Ok(());
        }
        let mut flags = OpFlags::default();
        for (on, f) in [
            (req.read, OpFlags::READ),
            (req.append, OpFlags::APPEND),
            (req.sync, OpFlags::SYNC),
            (req.direct, OpFlags::DIRECT),
        ] {
            if on {
                flags = flags | f;
            }
        }
        let exists = self.entry(id).exists_now;
        let kind = if !exists && req.create != Creation::Never {
            if req.create == Creation::Exclusive {
                flags = flags | OpFlags::EXCL;
            }
            let e = self.entry_mut(id);
            e.exists_now = true;
            e.size_now = 0;
            e.modified = true;
            OpKind::Create
        } else {
            if req.write {
                flags = flags | OpFlags::WRITE;
            }
            if req.truncate && req.write {
                flags = flags | OpFlags::TRUNC;
                let e = self.entry_mut(id);
                e.size_now = 0;
                e.modified = true;
            }
            OpKind::Open
        };
        let writable = req.write || kind == OpKind::Create;
        self.set_handle(key, id, (1, writable));
        let mut op = Op::new(0, t_us, kind, id);
        op.flags = flags;
        self.emit(key, t_us, op)
    }

    fn reopen_writable(&mut self, key: u64, t_us: u64, id: u32) -> Result<(), ImportError> {
        self.adjust("read-only handles reopened read-write for a write");
        self.emit(key, t_us, Op::new(0, t_us, OpKind::Close, id))?;
        let mut op = Op::new(0, t_us, OpKind::Open, id);
        op.flags = OpFlags::READ | OpFlags::WRITE;
        self.emit(key, t_us, op)
    }

    /// Makes sure the stream holds a handle to the file (writable when `write`), opening
    /// one when the application used a handle another stream or process opened.
    fn ensure_open(
        &mut self,
        key: u64,
        t_us: u64,
        id: u32,
        write: bool,
    ) -> Result<(), ImportError> {
        match self.handle(key, id) {
            Some((n, writable)) => {
                if write && !writable {
                    self.reopen_writable(key, t_us, id)?;
                    self.set_handle(key, id, (n, true));
                }
                Ok(())
            }
            None => {
                self.adjust("opens added where a stream used a handle another stream opened");
                let mut op = Op::new(0, t_us, OpKind::Open, id);
                op.flags = if write {
                    OpFlags::READ | OpFlags::WRITE
                } else {
                    OpFlags::READ
                };
                self.set_handle(key, id, (1, write));
                self.emit(key, t_us, op)
            }
        }
    }

    /// One more application handle on a file the stream has open (a dup): no op.
    pub fn retain(&mut self, key: u64, id: u32) {
        if let Some((n, w)) = self.handle(key, id) {
            self.set_handle(key, id, (n + 1, w));
        }
    }

    /// A close; the trace's close comes when the stream's last handle on the file goes.
    /// A close of a handle the stream never used is no op of its own.
    pub fn close(&mut self, key: u64, t_us: u64, id: u32) -> Result<(), ImportError> {
        let Some((n, w)) = self.handle(key, id) else {
            return Ok(());
        };
        self.set_handle(key, id, (n - 1, w));
        if n == 1 {
            self.emit(key, t_us, Op::new(0, t_us, OpKind::Close, id))?;
        } else {
            // The handle stays open for the stream's other opens of the file (see
            // `open`): this close has no op of its own, but is counted.
            self.skip("closes of a handle kept open for another open of the same file");
        }
        Ok(())
    }

    /// Closes every handle the stream still holds, as the kernel does when the last
    /// thread sharing them ends: one close per file, in the order of the files' ids.
    pub fn close_all(&mut self, key: u64, t_us: u64) -> Result<(), ImportError> {
        let Some(st) = self.streams.get_mut(&key) else {
            return Ok(());
        };
        let mut open: Vec<u32> = st.handles.drain().map(|(id, _)| id).collect();
        open.sort_unstable();
        for id in open {
            self.emit(key, t_us, Op::new(0, t_us, OpKind::Close, id))?;
        }
        Ok(())
    }

    /// A read of `len` bytes at `offset`; `got` is what it returned when known.
    pub fn read(
        &mut self,
        key: u64,
        t_us: u64,
        id: u32,
        offset: u64,
        len: u64,
        got: Option<u64>,
    ) -> Result<(), ImportError> {
        self.ensure_open(key, t_us, id, false)?;
        if let Some(got) = got {
            self.note_size(id, offset.saturating_add(got));
        }
        let len = self.fit(len, got);
        let mut op = Op::new(0, t_us, OpKind::Read, id);
        op.offset = offset;
        op.len = len;
        self.emit(key, t_us, op)
    }

    fn fit(&mut self, len: u64, got: Option<u64>) -> u64 {
        if len <= MAX_OP_BYTES {
            return len;
        }
        self.adjust("reads or writes asked for over 256 MiB, recorded with the bytes moved");
        got.unwrap_or(MAX_OP_BYTES).min(MAX_OP_BYTES)
    }

    /// A write of `len` bytes at `offset`.
    pub fn write(
        &mut self,
        key: u64,
        t_us: u64,
        id: u32,
        offset: u64,
        len: u64,
    ) -> Result<(), ImportError> {
        self.ensure_open(key, t_us, id, true)?;
        let len = self.fit(len, Some(len));
        let e = self.entry_mut(id);
        e.modified = true;
        e.size_now = e.size_now.max(offset.saturating_add(len));
        let mut op = Op::new(0, t_us, OpKind::Write, id);
        op.offset = offset;
        op.len = len;
        self.emit(key, t_us, op)
    }

    /// An fsync or fdatasync.
    pub fn fsync(&mut self, key: u64, t_us: u64, id: u32) -> Result<(), ImportError> {
        self.ensure_open(key, t_us, id, false)?;
        self.emit(key, t_us, Op::new(0, t_us, OpKind::Fsync, id))
    }

    /// Setting the file's size to `len` through a handle.
    pub fn truncate(&mut self, key: u64, t_us: u64, id: u32, len: u64) -> Result<(), ImportError> {
        self.ensure_open(key, t_us, id, true)?;
        let e = self.entry_mut(id);
        e.modified = true;
        e.size_now = len;
        let mut op = Op::new(0, t_us, OpKind::Truncate, id);
        op.len = len;
        self.emit(key, t_us, op)
    }

    /// Allocating `len` bytes at `offset`.
    pub fn fallocate(
        &mut self,
        key: u64,
        t_us: u64,
        id: u32,
        offset: u64,
        len: u64,
    ) -> Result<(), ImportError> {
        self.ensure_open(key, t_us, id, true)?;
        let mut op = Op::new(0, t_us, OpKind::Fallocate, id);
        op.offset = offset;
        op.len = len;
        self.emit(key, t_us, op)
    }

    /// A stat of a file or directory by path.
    pub fn stat(&mut self, key: u64, t_us: u64, id: u32) -> Result<(), ImportError> {
        self.emit(key, t_us, Op::new(0, t_us, OpKind::Stat, id))
    }

    /// A query of the file system holding the entry.
    pub fn statfs(&mut self, key: u64, t_us: u64, id: u32) -> Result<(), ImportError> {
        self.emit(key, t_us, Op::new(0, t_us, OpKind::Statfs, id))
    }

    /// Setting the entry's access and modification times.
    pub fn utime(&mut self, key: u64, t_us: u64, id: u32) -> Result<(), ImportError> {
        self.emit(key, t_us, Op::new(0, t_us, OpKind::Utime, id))
    }

    /// Taking (`unlock` false) or releasing a byte-range lock through the stream's
    /// handle on the file, `shared` or exclusive.
    pub fn lock(
        &mut self,
        key: u64,
        t_us: u64,
        id: u32,
        range: (u64, u64),
        shared: bool,
        unlock: bool,
    ) -> Result<(), ImportError> {
        let exclusive = !shared && !unlock;
        match self.handle(key, id) {
            // A whole-file lock (flock) may be exclusive on a read-only descriptor; a
            // byte-range one, as the replay takes it, may not.
            Some((n, false)) if exclusive => {
                self.adjust(
                    "read-only handles reopened read-write for an exclusive lock (a byte-range lock needs a writable handle)",
                );
                self.emit(key, t_us, Op::new(0, t_us, OpKind::Close, id))?;
                let mut op = Op::new(0, t_us, OpKind::Open, id);
                op.flags = OpFlags::READ | OpFlags::WRITE;
                self.emit(key, t_us, op)?;
                self.set_handle(key, id, (n, true));
            }
            _ => self.ensure_open(key, t_us, id, exclusive)?,
        }
        let kind = if unlock { OpKind::Unlock } else { OpKind::Lock };
        let mut op = Op::new(0, t_us, kind, id);
        (op.offset, op.len) = range;
        if shared {
            op.flags = OpFlags::READ;
        }
        self.emit(key, t_us, op)
    }

    /// A call by path that the traced program saw fail with `expect`: an `open` (of an
    /// existing file, for reading and writing), a `stat` or an `unlink`, replayed
    /// expecting the same failure. It changes nothing the builder tracks; one on an
    /// entry the workload has at that point is counted, since its replay will succeed.
    ///
    /// `entry` is the kind the path is declared as when first seen; a `stat` that finds
    /// nothing says nothing of the kind, so a later use may declare it as the other.
    pub fn failing(
        &mut self,
        key: u64,
        t_us: u64,
        kind: OpKind,
        path: &str,
        entry: FileKind,
        expect: Expected,
    ) -> Result<(), ImportError> {
        let unknown = match self.by_path.get(path) {
            Some(&id) => self.entry(id).kind_unknown,
            None => true,
        };
        // The entry's first sight says it does not exist (yet), unless the call failed
        // because it does.
        let first = if expect == Expected::Exists {
            Presence::Existing
        } else {
            Presence::New
        };
        let Some(id) = self.file(path, entry, first) else {
            return Ok(());
        };
        if kind == OpKind::Stat && expect == Expected::NotFound && !self.exists_now(id) {
            self.entry_mut(id).kind_unknown = unknown;
        }
        if expect == Expected::NotFound && self.exists_now(id) {
            self.warn_count(
                "calls expected to fail with ENOENT on an entry the workload has then (their replay succeeds and counts as an error)",
            );
        }
        if expect == Expected::Exists && !self.exists_now(id) {
            self.warn_count(
                "calls expected to fail with EEXIST on an entry the workload does not have then (their replay succeeds and counts as an error)",
            );
        }
        let mut op = Op::new(0, t_us, kind, id);
        op.flags = match kind {
            OpKind::Open => OpFlags::READ | OpFlags::WRITE,
            // An exclusive create that finds the name taken.
            OpKind::Create => OpFlags::EXCL,
            _ => OpFlags::default(),
        };
        op.expect = Some(expect);
        self.emit(key, t_us, op)
    }

    /// A directory listing.
    pub fn readdir(&mut self, key: u64, t_us: u64, id: u32) -> Result<(), ImportError> {
        self.emit(key, t_us, Op::new(0, t_us, OpKind::Readdir, id))
    }

    /// A mkdir.
    pub fn mkdir(&mut self, key: u64, t_us: u64, id: u32) -> Result<(), ImportError> {
        self.entry_mut(id).exists_now = true;
        self.emit(key, t_us, Op::new(0, t_us, OpKind::Mkdir, id))
    }

    /// Removing a file or an (empty) directory.
    pub fn unlink(&mut self, key: u64, t_us: u64, id: u32) -> Result<(), ImportError> {
        let e = self.entry_mut(id);
        e.exists_now = false;
        e.size_now = 0;
        e.modified = true;
        self.emit(key, t_us, Op::new(0, t_us, OpKind::Unlink, id))
    }

    /// A rename of `from` to `to` (the same kind). A directory takes what is inside it
    /// along: every entry known to exist below `from` now exists below `to` instead.
    pub fn rename(&mut self, key: u64, t_us: u64, from: u32, to: u32) -> Result<(), ImportError> {
        if self.entry(from).kind == FileKind::Dir {
            let (old, new) = (self.entry(from).path.clone(), self.entry(to).path.clone());
            for id in self.existing_below(&old) {
                let e = self.entry(id);
                let moved = format!("{new}{}", &e.path[old.len()..]);
                let (kind, size) = (e.kind, e.size_now);
                let target = match self.by_path.get(&moved) {
                    Some(&t) => t,
                    // Made by this rename: it did not exist before the workload.
                    None if self.tree.fits(&moved, kind) => self.push_entry(moved, kind, false, 0),
                    // Below a file declared at the new place: not followed further (an
                    // op on it is left out when it comes, as any entry inside a file).
                    None => continue,
                };
                self.move_state(id, target, size);
            }
        }
        let size = self.entry(from).size_now;
        self.move_state(from, to, size);
        let mut op = Op::new(0, t_us, OpKind::Rename, from);
        op.to = Some(to);
        self.emit(key, t_us, op)
    }

    /// A hard link: `to` becomes a second name of the file `file` (both files).
    pub fn link(&mut self, key: u64, t_us: u64, file: u32, to: u32) -> Result<(), ImportError> {
        let size = self.entry(file).size_now;
        let t = self.entry_mut(to);
        t.exists_now = true;
        t.size_now = size;
        t.modified = true;
        let mut op = Op::new(0, t_us, OpKind::Link, file);
        op.to = Some(to);
        self.emit(key, t_us, op)
    }

    /// A symbolic link at `link` naming `target` (both of `target`'s kind).
    pub fn symlink(
        &mut self,
        key: u64,
        t_us: u64,
        target: u32,
        link: u32,
    ) -> Result<(), ImportError> {
        let l = self.entry_mut(link);
        l.exists_now = true;
        l.size_now = 0;
        l.modified = true;
        let mut op = Op::new(0, t_us, OpKind::Symlink, target);
        op.to = Some(link);
        self.emit(key, t_us, op)
    }

    /// `from` no longer exists; `to` does, `size` bytes long.
    fn move_state(&mut self, from: u32, to: u32, size: u64) {
        let f = self.entry_mut(from);
        f.exists_now = false;
        f.size_now = 0;
        f.modified = true;
        let t = self.entry_mut(to);
        t.exists_now = true;
        t.size_now = size;
        t.modified = true;
    }

    /// The kind the path was declared as, if it is known.
    pub fn kind_of(&self, path: &str) -> Option<FileKind> {
        self.by_path.get(path).map(|&id| self.entry(id).kind)
    }

    /// Writes the trace to `out` (zstd-compressed when the name ends in `.zst`) and
    /// says what it holds.
    pub fn finish(mut self, out: &Path) -> Result<Summary, ImportError> {
        self.declare_parents();
        self.fix_existence();
        let mut summary = std::mem::take(&mut self.summary);
        summary.streams = self.streams.len() as u32;
        let spool = self
            .spool
            .finish()
            .map_err(|e| ImportError::Write(e.to_string()))?;
        let mut file = spool
            .into_inner()
            .map_err(|e| ImportError::Write(e.error().to_string()))?;
        file.rewind()
            .map_err(|e| ImportError::Write(e.to_string()))?;
        let mut w = create_trace(out)?;
        let mut header = Header::new(self.workload.clone());
        header.generator = Some(self.generator.clone());
        w.header(&header)?;
        for (i, e) in self.entries.iter().enumerate() {
            if e.exists_before {
                if e.kind == FileKind::File {
                    summary.files_existing += 1;
                    summary.bytes_existing += e.size_before;
                }
            } else {
                summary.files_created += 1;
            }
            w.file(&FileDecl {
                id: i as u32 + 1,
                path: e.path.clone(),
                kind: e.kind,
                size: if e.kind == FileKind::File {
                    e.size_before
                } else {
                    0
                },
                exists: e.exists_before,
                prepare: Prepare::Copy,
            })?;
        }
        let werr = |e: std::io::Error| ImportError::Write(format!("{}: {e}", out.display()));
        let mut sink = w.finish()?;
        std::io::copy(&mut std::io::BufReader::new(file), &mut sink).map_err(werr)?;
        match sink {
            Sink::Plain(mut f) => f.flush().map_err(werr)?,
            Sink::Zstd(enc) => enc.finish().map_err(werr)?.flush().map_err(werr)?,
            Sink::Memory(_) => {}
        }
        Ok(summary)
    }

    /// Declares every parent directory of every entry, so that a directory the workload
    /// makes never holds an undeclared one.
    fn declare_parents(&mut self) {
        let mut missing = Vec::new();
        for e in &self.entries {
            let mut p = e.path.as_str();
            while let Some(cut) = p.rfind('/') {
                p = &p[..cut];
                if !self.by_path.contains_key(p) {
                    missing.push(p.to_string());
                }
            }
        }
        missing.sort_by_key(|p| p.matches('/').count());
        for p in missing {
            if !self.by_path.contains_key(&p) {
                let exists = !self.inside_new_dir(&p);
                self.push_entry(p, FileKind::Dir, exists, 0);
            }
        }
    }

    /// An entry that existed cannot sit in a directory that did not; such entries (seen
    /// first through an op that needs them, in a directory the workload made) are
    /// declared as made by the workload.
    fn fix_existence(&mut self) {
        let mut order: Vec<usize> = (0..self.entries.len()).collect();
        order.sort_by_key(|&i| self.entries[i].path.matches('/').count());
        let mut fixed = 0;
        for i in order {
            if !self.entries[i].exists_before {
                continue;
            }
            let path = self.entries[i].path.clone();
            if let Some(cut) = path.rfind('/')
                && let Some(&pid) = self.by_path.get(&path[..cut])
            {
                let parent = self.entry(pid);
                if !parent.exists_before || parent.kind != FileKind::Dir {
                    self.entries[i].exists_before = false;
                    self.entries[i].size_before = 0;
                    fixed += 1;
                }
            }
        }
        for _ in 0..fixed {
            self.adjust(
                "entries first used inside a directory the workload made, declared as made by it",
            );
        }
    }
}

/// Joins a Windows or POSIX path's components under a root, `/`-separated, dropping
/// empty and `.` components and resolving `..` lexically. `None` when it leaves the root.
pub fn normalize(components: impl Iterator<Item = impl AsRef<str>>) -> Option<String> {
    // Built in one string (this runs for every path a capture sees): `starts` holds where
    // each kept component begins, so that `..` cuts the last one off whatever it holds.
    let mut out = String::new();
    let mut starts: Vec<usize> = Vec::new();
    for c in components {
        match c.as_ref() {
            "" | "." => {}
            ".." => {
                let at = starts.pop()?;
                out.truncate(at.saturating_sub(1));
            }
            other => {
                if !out.is_empty() {
                    out.push('/');
                }
                starts.push(out.len());
                out.push_str(other);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_back(path: &Path) -> Vec<naslab_trace::Record> {
        naslab_trace::read_all(path, File::open(path).unwrap()).unwrap()
    }

    #[test]
    fn opens_are_added_and_existence_is_inferred() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("t.jsonl");
        let mut b = Builder::new("w", "test").unwrap();
        let a = b.file("dir/a", FileKind::File, Presence::Existing).unwrap();
        let n = b.file("dir/new", FileKind::File, Presence::New).unwrap();
        // A read with no open in the stream gets one.
        b.read(7, 5, a, 0, 4096, Some(100)).unwrap();
        let create = OpenReq {
            write: true,
            create: Creation::IfAbsent,
            ..OpenReq::default()
        };
        b.open(7, 6, n, create).unwrap();
        b.open(7, 7, n, create).unwrap();
        b.write(7, 8, n, 0, 10).unwrap();
        b.close(7, 9, n).unwrap();
        b.close(7, 10, n).unwrap();
        // Time never goes backwards within a stream.
        b.stat(7, 1, a).unwrap();
        let s = b.finish(&out).unwrap();
        assert_eq!(s.total_ops(), 6);
        assert_eq!(s.count(OpKind::Open), 1);
        assert_eq!(s.count(OpKind::Create), 1);
        assert_eq!(s.count(OpKind::Close), 1);
        let recs = read_back(&out);
        let files: Vec<_> = recs
            .iter()
            .filter_map(|r| match r {
                naslab_trace::Record::File(f) => Some((f.path.clone(), f.exists, f.size)),
                _ => None,
            })
            .collect();
        assert!(files.contains(&("dir/a".into(), true, 100)));
        assert!(files.contains(&("dir/new".into(), false, 0)));
        assert!(files.contains(&("dir".into(), true, 0)));
        let last = recs.last().unwrap();
        match last {
            naslab_trace::Record::Op(op, _) => assert_eq!((op.kind, op.t_us), (OpKind::Stat, 10)),
            _ => panic!("the trace ends with an op"),
        }
    }

    /// Imports `log` as `format` and compiles the trace written, as `naslab run` does.
    fn import_and_compile(format: crate::Format, log: &str) -> (Summary, Result<(), String>) {
        let d = tempfile::tempdir().unwrap();
        let (input, out) = (d.path().join("input"), d.path().join("t.jsonl"));
        std::fs::write(&input, log).unwrap();
        let opts = crate::ImportOptions {
            workload: "w".into(),
            root: Some("/work/app".into()),
            clients: 1,
            process: None,
            windows_root: None,
        };
        let summary = crate::import(format, &input, &out, &opts).unwrap();
        let reader = naslab_trace::open_trace(&out).unwrap();
        let plan = naslab_engine::plan::compile(
            &out,
            naslab_engine::plan::records_from_reader(reader),
            d.path(),
        );
        (summary, plan.map(|_| ()).map_err(|e| e.to_string()))
    }

    #[test]
    fn a_path_used_as_a_file_and_as_a_directory_imports_as_a_trace_that_compiles() {
        // Found by fuzzing: 'x' made as a file, then 'x/y' opened (as if 'x' were
        // removed and made again as a directory): the trace put 'x/y' inside the file
        // 'x', which `naslab run` refuses.
        let strace = "\
100 1700000000.000100 openat(AT_FDCWD</work/app>, \"x\", O_WRONLY|O_CREAT, 0644) = 3</work/app/x> <0.000030>
100 1700000000.000200 close(3</work/app/x>) = 0 <0.000002>
100 1700000000.000300 openat(AT_FDCWD</work/app>, \"x/y\", O_RDONLY) = 4</work/app/x/y> <0.000030>
100 1700000000.000400 read(4</work/app/x/y>, \"ab\", 2) = 2 <0.000002>
100 1700000000.000500 close(4</work/app/x/y>) = 0 <0.000002>
";
        let (summary, compiled) = import_and_compile(crate::Format::Strace, strace);
        assert_eq!(compiled, Ok(()));
        assert_eq!(
            (summary.count(OpKind::Create), summary.count(OpKind::Read)),
            (1, 0)
        );
        assert_eq!(
            summary.skipped("ops on a path seen both as a file and as a directory"),
            2,
            "the open and the read of 'x/y'"
        );
        // The other order: a file below first, then its parent used as a file.
        let fio = "\
fio version 2 iolog
/work/app/d/a/b add
/work/app/d/a add
/work/app/d/a/b open
/work/app/d/a open
/work/app/d/a/b read 0 4096
/work/app/d/a read 0 4096
/work/app/d/a/b close
/work/app/d/a close
";
        let (summary, compiled) = import_and_compile(crate::Format::FioIolog, fio);
        assert_eq!(compiled, Ok(()));
        assert_eq!(summary.count(OpKind::Read), 1);
        assert!(summary.skipped("ops on a path seen both as a file and as a directory") > 0);
    }

    #[test]
    fn normalize_resolves_dots_and_refuses_to_leave() {
        assert_eq!(
            normalize(["a", ".", "b", "..", "c"].iter()),
            Some("a/c".into())
        );
        assert_eq!(normalize(["..", "x"].iter()), None);
        assert_eq!(normalize(["a", "..", "..", "x"].iter()), None);
        assert_eq!(
            normalize(["a", "b", "..", ".."].iter()),
            Some(String::new())
        );
        assert_eq!(
            normalize(["", "a", "", "b", "."].iter()),
            Some("a/b".into())
        );
        assert_eq!(
            normalize(["a", "b", "..", "c", "d", ".."].iter()),
            Some("a/c".into())
        );
        // A component holding a separator (a Windows path split on '\\') goes whole.
        assert_eq!(normalize(["x", "a/b", ".."].iter()), Some("x".into()));
        assert_eq!(normalize(["a/b", "..", "c"].iter()), Some("c".into()));
    }
}
