use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::TraceError;
use crate::binary::{BINARY_MAGIC, Deltas, TAG_END, TAG_JSON, encode_op, put_varint};
use crate::model::{FileDecl, Header, Measured, Op, OpKind};

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

/// Whether a trace file of this name is written in the binary encoding: `.nbt`, or
/// `.nbt.zst` compressed; every other name gets JSON Lines.
pub fn is_binary_name(path: &Path) -> bool {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let name = name.strip_suffix(".zst").unwrap_or(&name);
    name.ends_with(".nbt")
}

/// Creates `path` and returns a writer for it: compressed when the name ends in `.zst`,
/// binary when it ends in `.nbt` or `.nbt.zst` ([`is_binary_name`]).
pub fn create_trace(path: &Path) -> Result<TraceWriter<Sink>, TraceError> {
    let io = |cause| TraceError::Write {
        path: path.to_path_buf(),
        cause,
    };
    let file = BufWriter::with_capacity(1 << 20, crate::create_output(path).map_err(io)?);
    let sink = if path.extension().is_some_and(|e| e == "zst") {
        Sink::Zstd(zstd::stream::write::Encoder::new(file, 3).map_err(io)?)
    } else {
        Sink::Plain(file)
    };
    Ok(TraceWriter::for_name(path, sink))
}

/// Like [`create_trace`], for large files written once and read by naslab (the op
/// records): a `.zst` name gets zstd's fastest level, compressed on other threads
/// (one fewer than the CPUs, at least one) while the caller formats the next lines.
pub fn create_trace_parallel(path: &Path) -> Result<TraceWriter<Sink>, TraceError> {
    let io = |cause| TraceError::Write {
        path: path.to_path_buf(),
        cause,
    };
    if path.extension().is_none_or(|e| e != "zst") {
        return create_trace(path);
    }
    let file = BufWriter::with_capacity(1 << 20, crate::create_output(path).map_err(io)?);
    let workers = std::thread::available_parallelism()
        .map(|n| n.get().saturating_sub(1))
        .unwrap_or(1)
        .clamp(1, 8) as u32;
    let mut enc = zstd::stream::write::Encoder::new(file, 1).map_err(io)?;
    enc.multithread(workers).map_err(io)?;
    Ok(TraceWriter::for_name(path, Sink::Zstd(enc)))
}

/// How many bytes of binary records are gathered before they are written out.
const BINARY_BATCH: usize = 64 << 10;

/// Writes a trace record by record: the header, then file records, then op records.
pub struct TraceWriter<W> {
    path: PathBuf,
    out: W,
    line: String,
    /// Set when writing the binary encoding: what op records are written relative to.
    binary: Option<Deltas>,
    bytes: Vec<u8>,
}

#[derive(Serialize)]
struct Tagged<'a, T> {
    #[serde(rename = "type")]
    line_type: &'static str,
    #[serde(flatten)]
    body: &'a T,
}

impl<W: Write> TraceWriter<W> {
    /// Writes JSON Lines to `out`; `path` is only used in error messages.
    pub fn new(path: PathBuf, out: W) -> Self {
        TraceWriter {
            path,
            out,
            line: String::with_capacity(256),
            binary: None,
            bytes: Vec::new(),
        }
    }

    /// Writes the binary encoding to `out` (see `docs/trace-format.md`).
    pub fn new_binary(path: PathBuf, out: W) -> Self {
        TraceWriter {
            binary: Some(Deltas::default()),
            bytes: Vec::with_capacity(BINARY_BATCH + 4096),
            ..TraceWriter::new(path, out)
        }
    }

    /// A writer in the encoding `path`'s name asks for ([`is_binary_name`]).
    pub fn for_name(path: &Path, out: W) -> Self {
        if is_binary_name(path) {
            TraceWriter::new_binary(path.to_path_buf(), out)
        } else {
            TraceWriter::new(path.to_path_buf(), out)
        }
    }

    fn io(&self, cause: std::io::Error) -> TraceError {
        TraceError::Write {
            path: self.path.clone(),
            cause,
        }
    }

    fn tagged<T: Serialize>(
        &mut self,
        line_type: &'static str,
        body: &T,
    ) -> Result<(), TraceError> {
        let text = serde_json::to_string(&Tagged { line_type, body })
            .map_err(|e| self.io(std::io::Error::other(e)))?;
        if self.binary.is_none() {
            return writeln!(self.out, "{text}").map_err(|e| self.io(e));
        }
        let b = &mut self.bytes;
        b.push(TAG_JSON);
        put_varint(b, text.len() as u64);
        b.extend_from_slice(text.as_bytes());
        self.spill()
    }

    /// Hands the binary records gathered so far to the output once there are enough of
    /// them (the output gets large writes, not one per op).
    #[inline]
    fn spill(&mut self) -> Result<(), TraceError> {
        if self.bytes.len() < BINARY_BATCH {
            return Ok(());
        }
        let result = self.out.write_all(&self.bytes);
        self.bytes.clear();
        result.map_err(|e| self.io(e))
    }

    /// Writes the header line (in the binary encoding, after the encoding's magic bytes).
    pub fn header(&mut self, header: &Header) -> Result<(), TraceError> {
        if self.binary.is_some() {
            self.bytes.extend_from_slice(BINARY_MAGIC);
        }
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
        if let Some(deltas) = &mut self.binary {
            encode_op(&mut self.bytes, deltas, op, measured, client);
            return self.spill();
        }
        let l = &mut self.line;
        l.clear();
        l.push_str("{\"type\":\"op\",\"op\":\"");
        l.push_str(op.kind.name());
        l.push_str("\",\"stream\":");
        push_u64(l, op.stream as u64);
        l.push_str(",\"t_us\":");
        push_u64(l, op.t_us);
        l.push_str(",\"file\":");
        push_u64(l, op.file as u64);
        let sized = matches!(
            op.kind,
            OpKind::Read
                | OpKind::Write
                | OpKind::Fallocate
                | OpKind::Truncate
                | OpKind::Lock
                | OpKind::Unlock
        );
        if sized || op.offset != 0 {
            l.push_str(",\"offset\":");
            push_u64(l, op.offset);
        }
        if sized || op.len != 0 {
            l.push_str(",\"len\":");
            push_u64(l, op.len);
        }
        if !op.flags.is_empty() {
            // Writing into a String cannot fail.
            let _ = write!(l, ",\"flags\":\"{}\"", op.flags);
        }
        if let Some(to) = op.to {
            l.push_str(",\"to\":");
            push_u64(l, to as u64);
        }
        if op.warmup {
            l.push_str(",\"warmup\":true");
        }
        if let Some(e) = op.expect {
            l.push_str(",\"expect\":\"");
            l.push_str(e.name());
            l.push('"');
        }
        if let Some(m) = measured {
            l.push_str(",\"sched_ns\":");
            push_u64(l, m.sched_ns);
            l.push_str(",\"issued_ns\":");
            push_u64(l, m.issued_ns);
            l.push_str(",\"done_ns\":");
            push_u64(l, m.done_ns);
            l.push_str(",\"result\":");
            if m.result < 0 {
                l.push('-');
            }
            push_u64(l, m.result.unsigned_abs());
        }
        if let Some(c) = client {
            let _ = write!(l, ",\"client\":{c}");
        }
        l.push_str("}\n");
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|e| self.io(e))
    }

    /// Ends the trace (a binary one with its end mark) and flushes it.
    pub fn finish(self) -> Result<W, TraceError> {
        let TraceWriter {
            path,
            mut out,
            binary,
            mut bytes,
            ..
        } = self;
        let io = |cause| TraceError::Write {
            path: path.clone(),
            cause,
        };
        if binary.is_some() {
            bytes.push(TAG_END);
            out.write_all(&bytes).map_err(io)?;
        }
        out.flush().map_err(io)?;
        Ok(out)
    }
}

impl TraceWriter<Sink> {
    /// Flushes, ends the zstd frame if any, and syncs nothing further: the file is complete.
    pub fn close(self) -> Result<(), TraceError> {
        let path = self.path.clone();
        let io = |cause| TraceError::Write {
            path: path.clone(),
            cause,
        };
        match self.finish()? {
            Sink::Plain(mut w) => w.flush().map_err(io),
            Sink::Zstd(enc) => enc.finish().map_err(io)?.flush().map_err(io),
            Sink::Memory(_) => Ok(()),
        }
    }
}

/// Appends `v` in decimal (what `write!` does, without the formatting machinery).
#[inline]
fn push_u64(out: &mut String, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&digits[i..]).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_in_decimal() {
        for v in [0, 1, 9, 10, 4096, 123_456_789, u64::MAX] {
            let mut s = String::new();
            push_u64(&mut s, v);
            assert_eq!(s, v.to_string());
        }
    }
}
