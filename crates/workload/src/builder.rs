//! A small helper that declares files and appends ops to a one-stream trace with a clock.

use naslab_trace::{FileDecl, FileKind, Op, OpFlags, OpKind, Prepare, Trace};

use crate::params::{GenParams, Scale};

/// Files at least this large at scale 1 are media: preparation streams them instead of copying.
pub(crate) const MEDIA_BYTES: u64 = 1_000_000_000;

/// A declared file: its id and its size at the chosen scale (0 for files the workload creates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileRef {
    pub id: u32,
    pub size: u64,
}

/// Builds one trace: file declarations, then ops on stream 0 stamped with a running clock (µs).
pub(crate) struct Builder {
    trace: Trace,
    scale: Scale,
    now: u64,
    /// Idle time given to [`Builder::think`]: (ops appended before it, µs).
    idle: Vec<(usize, u64)>,
}

impl Builder {
    /// A builder for the workload `name`, described for people by `description`.
    pub fn new(name: &str, description: &str, params: &GenParams) -> Builder {
        let mut trace = Trace::new(name);
        trace.header.description = Some(description.to_string());
        trace.header.generator = Some(format!(
            "naslab-workload naspt/{name} seed={} scale={}",
            params.seed, params.scale
        ));
        Builder {
            trace,
            scale: Scale(params.scale),
            now: 0,
            idle: Vec::new(),
        }
    }

    /// The scale sizes and counts are multiplied by.
    pub fn scale(&self) -> Scale {
        self.scale
    }

    fn declare(
        &mut self,
        path: String,
        kind: FileKind,
        size: u64,
        exists: bool,
        prepare: Prepare,
    ) -> u32 {
        let id = self.trace.files.len() as u32;
        self.trace.files.push(FileDecl {
            id,
            path,
            kind,
            size,
            exists,
            prepare,
        });
        id
    }

    /// Declares a file that exists before the test; `full_size` is its size at scale 1.
    pub fn file(&mut self, path: impl Into<String>, full_size: u64) -> FileRef {
        let size = self.scale.bytes(full_size);
        let prepare = if full_size >= MEDIA_BYTES {
            Prepare::Stream
        } else {
            Prepare::Copy
        };
        let id = self.declare(path.into(), FileKind::File, size, true, prepare);
        FileRef { id, size }
    }

    /// Declares a media file that exists before the test: preparation streams it whatever
    /// its size, as a recorder or a download would have written it.
    pub fn media_file(&mut self, path: impl Into<String>, full_size: u64) -> FileRef {
        let size = self.scale.bytes(full_size);
        let id = self.declare(path.into(), FileKind::File, size, true, Prepare::Stream);
        FileRef { id, size }
    }

    /// Declares a file the workload creates during the test (it starts with a `create`).
    pub fn new_file(&mut self, path: impl Into<String>) -> u32 {
        self.declare(path.into(), FileKind::File, 0, false, Prepare::Copy)
    }

    /// Declares a directory the workload creates during the test (with a `mkdir`).
    pub fn new_dir(&mut self, path: impl Into<String>) -> u32 {
        self.declare(path.into(), FileKind::Dir, 0, false, Prepare::Copy)
    }

    /// The path a declared entry was given.
    pub fn path_of(&self, id: u32) -> &str {
        self.trace
            .files
            .get(id as usize)
            .map_or("", |f| f.path.as_str())
    }

    /// Moves the clock forward by `us`.
    pub fn wait(&mut self, us: u64) {
        self.now += us;
    }

    /// Moves the clock forward by user or application idle time given at scale 1; idle time
    /// scales with the bytes, so a scaled workload keeps its average pace.
    pub fn think(&mut self, us: u64) {
        let us = (us as f64 * self.scale.0).round() as u64;
        self.idle.push((self.trace.ops.len(), us));
        self.now += us;
    }

    /// Bytes read and written so far.
    fn bytes_moved(&self) -> u64 {
        self.trace
            .ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Read | OpKind::Write))
            .map(|o| o.len)
            .sum()
    }

    /// The trace time the ops so far should span (first op at 0, the last at the end) to
    /// move their bytes at `bytes_per_s` on average.
    fn span_for_rate(&self, bytes_per_s: f64) -> f64 {
        self.bytes_moved() as f64 * 1e6 / bytes_per_s
    }

    /// Stretches or shrinks every op's time alike so that the trace so far averages
    /// `bytes_per_s` (bytes read and written over the last op's time): the application's
    /// rate including its pauses, as a published throughput is.
    pub fn time_to_rate(&mut self, bytes_per_s: f64) {
        let end = self.trace.ops.iter().map(|o| o.t_us).max().unwrap_or(0);
        if end == 0 {
            return;
        }
        let k = self.span_for_rate(bytes_per_s) / end as f64;
        for op in &mut self.trace.ops {
            op.t_us = (op.t_us as f64 * k).round() as u64;
        }
        self.now = (self.now as f64 * k).round() as u64;
    }

    /// Stretches or shrinks only the idle time given to [`Builder::think`] so that the
    /// trace so far averages `bytes_per_s`, keeping the pace inside busy periods. When the
    /// busy periods alone take longer than that, idle time goes to zero and the trace runs
    /// faster than asked.
    pub fn idle_to_rate(&mut self, bytes_per_s: f64) {
        let end = self.trace.ops.iter().map(|o| o.t_us).max().unwrap_or(0) as f64;
        // Idle time before the last op counts; a pause after it ends nothing.
        let n = self.trace.ops.len();
        let idle: f64 = self
            .idle
            .iter()
            .filter(|&&(at, _)| at < n)
            .map(|&(_, us)| us as f64)
            .sum();
        if idle == 0.0 {
            return;
        }
        let k = ((self.span_for_rate(bytes_per_s) - (end - idle)) / idle).max(0.0);
        let mut shift = 0.0f64;
        let mut next = 0;
        for (i, op) in self.trace.ops.iter_mut().enumerate() {
            while next < self.idle.len() && self.idle[next].0 <= i {
                shift += (k - 1.0) * self.idle[next].1 as f64;
                next += 1;
            }
            op.t_us = (op.t_us as f64 + shift).round().max(0.0) as u64;
        }
        self.idle.clear();
        self.now = self.trace.ops.last().map_or(self.now, |o| o.t_us);
    }

    /// Moves the clock forward by the time `len` bytes take at `bytes_per_s`.
    pub fn wait_bytes(&mut self, len: u64, bytes_per_s: f64) {
        self.now += (len as f64 * 1e6 / bytes_per_s).round() as u64;
    }

    /// Appends an op, stamped with the clock.
    pub fn op(&mut self, kind: OpKind, file: u32, offset: u64, len: u64, flags: OpFlags) {
        let mut op = Op::new(0, self.now, kind, file);
        op.offset = offset;
        op.len = len;
        op.flags = flags;
        self.trace.ops.push(op);
    }

    /// Appends a prepared op as is (its time must not go back); moves the clock to it.
    pub fn push(&mut self, op: Op) {
        self.now = self.now.max(op.t_us);
        self.trace.ops.push(Op {
            stream: 0,
            t_us: self.now,
            ..op
        });
    }

    /// Opens an existing file.
    pub fn open(&mut self, file: u32, flags: OpFlags) {
        self.op(OpKind::Open, file, 0, 0, flags);
    }

    /// Creates a new file and leaves it open for writing.
    pub fn create(&mut self, file: u32) {
        self.op(OpKind::Create, file, 0, 0, OpFlags::READ | OpFlags::WRITE);
    }

    /// Closes an open file.
    pub fn close(&mut self, file: u32) {
        self.op(OpKind::Close, file, 0, 0, OpFlags::default());
    }

    /// Reads `len` bytes at `offset`.
    pub fn read(&mut self, file: u32, offset: u64, len: u64) {
        self.op(OpKind::Read, file, offset, len, OpFlags::default());
    }

    /// Writes `len` bytes at `offset`.
    pub fn write(&mut self, file: u32, offset: u64, len: u64) {
        self.op(OpKind::Write, file, offset, len, OpFlags::default());
    }

    /// Flushes an open file to stable storage.
    pub fn fsync(&mut self, file: u32) {
        self.op(OpKind::Fsync, file, 0, 0, OpFlags::default());
    }

    /// Creates a declared directory.
    pub fn mkdir(&mut self, dir: u32) {
        self.op(OpKind::Mkdir, dir, 0, 0, OpFlags::default());
    }

    /// Reads `[start, end)` in sequential `chunk`-byte reads (the last one shorter), paced at `bytes_per_s`.
    pub fn read_range(&mut self, file: u32, start: u64, end: u64, chunk: u64, bytes_per_s: f64) {
        let mut off = start;
        while off < end {
            let len = chunk.min(end - off);
            self.read(file, off, len);
            self.wait_bytes(len, bytes_per_s);
            off += len;
        }
    }

    /// Writes `[start, end)` in sequential `chunk`-byte writes (the last one shorter), paced at `bytes_per_s`.
    pub fn write_range(&mut self, file: u32, start: u64, end: u64, chunk: u64, bytes_per_s: f64) {
        let mut off = start;
        while off < end {
            let len = chunk.min(end - off);
            self.write(file, off, len);
            self.wait_bytes(len, bytes_per_s);
            off += len;
        }
    }

    /// The finished trace.
    pub fn finish(self) -> Trace {
        self.trace
    }
}
