use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::model::{FileDecl, Header, Measured, Op, OpKind};
use crate::TraceError;

/// Where a trace is written: a plain file, or a zstd stream when the name ends in `.zst`.
pub enum Sink {
    Plain(BufWriter<File>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<File>>),
    Memory(Vec<u8>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Sink::Plain(w) => w.write(buf),
            Sink::Zstd(w) => w.write(buf),
            Sink::Memory(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Sink::Plain(w) => w.flush(),
            Sink::Zstd(w) => w.flush(),
            Sink::Memory(w) => w.flush(),
        }
    }
}

/// Creates `path` and returns a writer for it, compressed when the name ends in `.zst`.
pub fn create_trace(path: &Path) -> Result<TraceWriter<Sink>, TraceError> {
    let io = |source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = BufWriter::with_capacity(1 << 20, File::create(path).map_err(io)?);
    let sink = if path.extension().is_some_and(|e| e == "zst") {
        Sink::Zstd(zstd::stream::write::Encoder::new(file, 3).map_err(io)?)
    } else {
        Sink::Plain(file)
    };
    Ok(TraceWriter::new(path.to_path_buf(), sink))
}

/// Writes a trace line by line: the header, then file lines, then op lines.
pub struct TraceWriter<W> {
    path: PathBuf,
    out: W,
    line: String,
}

#[derive(Serialize)]
struct Tagged<'a, T> {
    #[serde(rename = "type")]
    line_type: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

impl<W: Write> TraceWriter<W> {
    /// Writes to `out`; `path` is only used in error messages.
    pub fn new(path: PathBuf, out: W) -> Self {
        TraceWriter {
            path,
            out,
            line: String::with_capacity(256),
        }
    }

    fn io(&self, source: std::io::Error) -> TraceError {
        TraceError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn tagged<T: Serialize>(
        &mut self,
        line_type: &'static str,
        body: &T,
    ) -> Result<(), TraceError> {
        let text = serde_json::to_string(&Tagged { line_type, body })
            .map_err(|e| self.io(std::io::Error::other(e)))?;
        writeln!(self.out, "{text}").map_err(|e| self.io(e))
    }

    /// Writes the header line.
    pub fn header(&mut self, header: &Header) -> Result<(), TraceError> {
        self.tagged("header", header)
    }

    /// Writes one file line.
    pub fn file(&mut self, file: &FileDecl) -> Result<(), TraceError> {
        self.tagged("file", file)
    }

    /// Writes one op line, with its measured fields when given.
    pub fn op(&mut self, op: &Op, measured: Option<&Measured>) -> Result<(), TraceError> {
        self.op_line(op, measured, None)
    }

    /// Writes one op line of a multi-client run's merged records: the op, what was
    /// measured, and the client (MPI rank) that issued it.
    pub fn client_op(
        &mut self,
        op: &Op,
        measured: &Measured,
        client: u32,
    ) -> Result<(), TraceError> {
        self.op_line(op, Some(measured), Some(client))
    }

    fn op_line(
        &mut self,
        op: &Op,
        measured: Option<&Measured>,
        client: Option<u32>,
    ) -> Result<(), TraceError> {
        let l = &mut self.line;
        l.clear();
        // Writing into a String cannot fail.
        let _ = write!(
            l,
            "{{\"type\":\"op\",\"op\":\"{}\",\"stream\":{},\"t_us\":{},\"file\":{}",
            op.kind.name(),
            op.stream,
            op.t_us,
            op.file
        );
        let sized = matches!(
            op.kind,
            OpKind::Read | OpKind::Write | OpKind::Fallocate | OpKind::Truncate
        );
        if sized || op.offset != 0 {
            let _ = write!(l, ",\"offset\":{}", op.offset);
        }
        if sized || op.len != 0 {
            let _ = write!(l, ",\"len\":{}", op.len);
        }
        if !op.flags.is_empty() {
            let _ = write!(l, ",\"flags\":\"{}\"", op.flags);
        }
        if let Some(to) = op.to {
            let _ = write!(l, ",\"to\":{to}");
        }
        if op.warmup {
            l.push_str(",\"warmup\":true");
        }
        if let Some(m) = measured {
            let _ = write!(
                l,
                ",\"sched_ns\":{},\"issued_ns\":{},\"done_ns\":{},\"result\":{}",
                m.sched_ns, m.issued_ns, m.done_ns, m.result
            );
        }
        if let Some(c) = client {
            let _ = write!(l, ",\"client\":{c}");
        }
        l.push_str("}\n");
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|e| self.io(e))
    }

    /// Flushes and closes the trace (ending the zstd frame when compressed).
    pub fn finish(self) -> Result<W, TraceError> {
        let TraceWriter { path, mut out, .. } = self;
        out.flush().map_err(|source| TraceError::Io {
            path: path.clone(),
            source,
        })?;
        Ok(out)
    }
}

impl TraceWriter<Sink> {
    /// Flushes, ends the zstd frame if any, and syncs nothing further: the file is complete.
    pub fn close(self) -> Result<(), TraceError> {
        let path = self.path.clone();
        let io = |source| TraceError::Io {
            path: path.clone(),
            source,
        };
        match self.finish()? {
            Sink::Plain(mut w) => w.flush().map_err(io),
            Sink::Zstd(enc) => enc.finish().map_err(io)?.flush().map_err(io),
            Sink::Memory(_) => Ok(()),
        }
    }
}
