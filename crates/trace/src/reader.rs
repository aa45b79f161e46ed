use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::binary::{
    BINARY_MAGIC, Bytes, Deltas, MAX_OP_BYTES, TAG_END, TAG_JSON, TAG_OP, Undecodable, decode_op,
};
use crate::model::{
    Expected, FileDecl, FileKind, Header, Measured, Op, OpFlags, OpKind, Prepare, Record,
};
use crate::op_line::OpFields;
use crate::{
    FORMAT_NAME, FORMAT_VERSION, MAX_QUEUE_DEPTH, OLDEST_FORMAT_VERSION, TraceError, check_rel_path,
};

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// The longest line a trace may hold, newline included. Real lines are a few hundred
/// bytes; the limit keeps a file that is not a trace (`/dev/zero`, one huge line in a
/// small .zst) from filling memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// How [`read_bounded_line`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundedLine {
    /// The input is at its end; nothing was read.
    End,
    /// A line, with its break unless it was the last, is in the buffer.
    Line,
    /// The line is longer than [`MAX_LINE_BYTES`] (break included); it was not read whole.
    TooLong,
}

/// Reads the next line of `input` into `buf` (cleared first), refusing a line longer
/// than [`MAX_LINE_BYTES`] before it is all in memory, so a file with no line breaks
/// (or `/dev/zero`) fails at once. After an error `buf` holds the part of the line read.
pub fn read_bounded_line<R: BufRead + ?Sized>(
    input: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<BoundedLine> {
    buf.clear();
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok(if buf.is_empty() {
                BoundedLine::End
            } else {
                BoundedLine::Line
            });
        }
        let (take, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        if buf.len() + take > MAX_LINE_BYTES {
            return Ok(BoundedLine::TooLong);
        }
        buf.extend_from_slice(&available[..take]);
        input.consume(take);
        if done {
            return Ok(BoundedLine::Line);
        }
    }
}

/// Opens a trace file, plain or zstd-compressed (told apart by its first bytes).
pub fn open_trace(path: &Path) -> Result<TraceReader<Box<dyn BufRead + Send>>, TraceError> {
    let file = File::open(path).map_err(|cause| TraceError::Io {
        path: path.to_path_buf(),
        cause,
    })?;
    read_trace(path, file)
}

/// How much of a trace is read at once: small enough that the lines just read are still
/// in the CPU's cache when they are parsed (1 MiB buffers parsed about an eighth slower).
const READ_BUFFER: usize = 128 << 10;

/// Reads a trace, JSON Lines or binary, plain or zstd-compressed, from `input`; `path`
/// names it in errors.
pub fn read_trace<R: Read + Send + 'static>(
    path: &Path,
    input: R,
) -> Result<TraceReader<Box<dyn BufRead + Send>>, TraceError> {
    let io = |cause| TraceError::Io {
        path: path.to_path_buf(),
        cause,
    };
    let mut file = BufReader::with_capacity(READ_BUFFER, input);
    let compressed = file.fill_buf().map_err(io)?.starts_with(&ZSTD_MAGIC);
    let input: Box<dyn BufRead + Send> = if compressed {
        let decoder = zstd::stream::read::Decoder::with_buffer(file).map_err(io)?;
        Box::new(BufReader::with_capacity(READ_BUFFER, decoder))
    } else {
        Box::new(file)
    };
    let mut reader = TraceReader::new(path.to_path_buf(), input);
    reader.compressed = compressed;
    Ok(reader)
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum LineType {
    Header,
    File,
    Op,
}

/// Every field any line may carry; the `type` field says which apply.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLine {
    #[serde(rename = "type")]
    line_type: LineType,
    // header
    format: Option<String>,
    version: Option<u32>,
    workload: Option<String>,
    description: Option<String>,
    generator: Option<String>,
    queue_depth: Option<u32>,
    // file
    id: Option<u32>,
    path: Option<String>,
    kind: Option<FileKind>,
    size: Option<u64>,
    exists: Option<bool>,
    prepare: Option<Prepare>,
    // op
    op: Option<OpKind>,
    stream: Option<u32>,
    t_us: Option<u64>,
    file: Option<u32>,
    offset: Option<u64>,
    len: Option<u64>,
    flags: Option<OpFlags>,
    to: Option<u32>,
    warmup: Option<bool>,
    expect: Option<Expected>,
    // measured
    sched_ns: Option<u64>,
    issued_ns: Option<u64>,
    done_ns: Option<u64>,
    result: Option<i64>,
    // multi-client op records
    client: Option<u32>,
}

/// What an op line carries, from a line the fast path could not read.
fn op_fields(raw: &RawLine) -> OpFields {
    OpFields {
        op: raw.op,
        stream: raw.stream,
        t_us: raw.t_us,
        file: raw.file,
        offset: raw.offset,
        len: raw.len,
        flags: raw.flags,
        to: raw.to,
        warmup: raw.warmup,
        expect: raw.expect,
        sched_ns: raw.sched_ns,
        issued_ns: raw.issued_ns,
        done_ns: raw.done_ns,
        result: raw.result,
        client: raw.client,
    }
}

/// What the general path reads from an op line, for tests of the fast path: `None`
/// when serde refuses the line or it is not an op line.
#[cfg(test)]
pub(crate) fn general_op_fields(line: &str) -> Option<OpFields> {
    let raw: RawLine = serde_json::from_str(line).ok()?;
    (raw.line_type == LineType::Op).then(|| op_fields(&raw))
}

/// Reads a trace record by record, JSON Lines or binary (told apart by its first byte),
/// checking as it goes: the header first, a known version,
/// entries declared before use, paths that stay inside the workload directory.
/// Memory use does not grow with the number of ops.
pub struct TraceReader<R> {
    path: PathBuf,
    input: R,
    line: u64,
    buf: Vec<u8>,
    compressed: bool,
    header: Option<Header>,
    ids: HashSet<u32>,
    paths: HashSet<String>,
    seen_op: bool,
    client: Option<u32>,
    /// The file id an op line last named, known to be declared.
    last_id: Option<u32>,
    /// Set for a binary trace: what its op records are relative to.
    binary: Option<Deltas>,
    /// A binary trace's end mark has been read.
    ended: bool,
    /// The input's first bytes have been looked at for the binary magic.
    sniffed: bool,
}

impl<R: BufRead> TraceReader<R> {
    /// Reads from `input`; `path` is only used in error messages.
    pub fn new(path: PathBuf, input: R) -> Self {
        TraceReader {
            path,
            input,
            line: 0,
            buf: Vec::new(),
            compressed: false,
            header: None,
            ids: HashSet::new(),
            paths: HashSet::new(),
            seen_op: false,
            client: None,
            last_id: None,
            binary: None,
            ended: false,
            sniffed: false,
        }
    }

    /// Reads the binary encoding's magic bytes when the input starts with them (a JSON
    /// trace never starts with a NUL byte), and from then on decodes binary records.
    fn start_binary(&mut self) -> Result<(), TraceError> {
        self.sniffed = true;
        let first = match self.input.fill_buf() {
            Ok(first) => first,
            Err(e) => return Err(self.read_error(0, e)),
        };
        if first.first() != Some(&0) {
            return Ok(());
        }
        let mut magic = [0u8; BINARY_MAGIC.len()];
        let read = self.input.read_exact(&mut magic);
        if read.is_err() || magic != BINARY_MAGIC {
            return Err(TraceError::Unsupported {
                path: self.path.clone(),
                line: 1,
                message: "the file starts with a NUL byte but is not a naslab binary trace (see docs/trace-format.md)".into(),
            });
        }
        self.binary = Some(Deltas::default());
        Ok(())
    }

    /// The line number of the record last returned (in a binary trace, its record number).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The `client` field of the op last returned: which client of a multi-client run
    /// (`mpirun -n N naslab run`) issued it; `None` in single-client records and traces.
    pub fn client(&self) -> Option<u32> {
        self.client
    }

    /// The trace's file path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the header (which must come first) and returns it.
    pub fn read_header(&mut self) -> Result<Header, TraceError> {
        if let Some(h) = &self.header {
            return Ok(h.clone());
        }
        match self.next_record()? {
            Some(Record::Header(h)) => Ok(h),
            Some(_) => Err(self.invalid("the first line must be the header".into())),
            None => Err(self.invalid(
                "the trace is empty; a trace starts with a header line (see docs/trace-format.md)"
                    .into(),
            )),
        }
    }

    /// The next record, or `None` at the end of the trace.
    pub fn next_record(&mut self) -> Result<Option<Record>, TraceError> {
        if !self.sniffed {
            self.start_binary()?;
        }
        if self.binary.is_some() {
            return self.next_binary();
        }
        loop {
            // The commonest line, a plain op, is read where it lies in the input's
            // buffer; anything else is copied out and read by the general path.
            if let Some(fields) = self.op_in_place() {
                return self.op_line(fields).map(Some);
            }
            if !self.read_line()? {
                return Ok(None);
            }
            if let Some(record) = self.json_record()? {
                return Ok(Some(record));
            }
        }
    }

    /// The record in `buf`, a line of JSON text; `None` for a blank line.
    fn json_record(&mut self) -> Result<Option<Record>, TraceError> {
        if let Some(fields) = crate::op_line::parse_op_line(&self.buf)
            && self.header.is_some()
        {
            return self.op_line(fields).map(Some);
        }
        let text = std::str::from_utf8(&self.buf)
            .map_err(|_| self.invalid("the line is not UTF-8 text".into()))?
            .trim();
        if text.is_empty() {
            return Ok(None);
        }
        let raw: RawLine = match serde_json::from_str(text) {
            Ok(raw) => raw,
            Err(e) => {
                let hint = if self.header.is_none() && self.line == 1 {
                    " (is this a naslab trace? its first line must be the header, see docs/trace-format.md)"
                } else {
                    ""
                };
                // serde numbers lines within the one line it was given: keep its column only.
                let full = e.to_string();
                let at = format!(" at line {} column {}", e.line(), e.column());
                let why = full.strip_suffix(&at).unwrap_or(&full);
                return Err(self.invalid(format!(
                    "not a valid trace line (column {}): {why}{hint}",
                    e.column()
                )));
            }
        };
        self.classify(raw).map(Some)
    }

    /// The next record of a binary trace, `None` after its end mark.
    fn next_binary(&mut self) -> Result<Option<Record>, TraceError> {
        // The end mark was read, and nothing after it: the trace stays ended.
        if self.ended {
            return Ok(None);
        }
        if self.header.is_some()
            && let Some(fields) = self.binary_op_in_place()
        {
            self.line += 1;
            return self.op_line(fields).map(Some);
        }
        let Some(tag) = self.take_byte()? else {
            return Err(self.invalid_at(
                self.line + 1,
                "the binary trace ends without its end mark: the file is truncated; copy or export it again".into(),
            ));
        };
        self.line += 1;
        match tag {
            TAG_OP => {
                if self.header.is_none() {
                    return Err(self.invalid("the first record must be the header".into()));
                }
                let fields = self.binary_op()?;
                self.op_line(fields).map(Some)
            }
            TAG_JSON => {
                let len = self.binary_len()?;
                self.buf.resize(len, 0);
                let complete = self.line - 1;
                match self.input.read_exact(&mut self.buf) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                        return Err(self.truncated());
                    }
                    Err(e) => return Err(self.read_error(complete, e)),
                }
                match self.json_record()? {
                    Some(record) => Ok(Some(record)),
                    None => Err(self.invalid("an empty record".into())),
                }
            }
            TAG_END => {
                self.line -= 1;
                self.ended = true;
                match self.take_byte()? {
                    None => Ok(None),
                    Some(_) => Err(self.invalid_at(
                        self.line + 1,
                        "bytes follow the binary trace's end mark: the file is damaged".into(),
                    )),
                }
            }
            other => Err(self.invalid(format!(
                "unknown record tag {other:#04x}: the file is damaged or not a naslab binary trace"
            ))),
        }
    }

    /// The next record, when it is an op record whole in the input's buffer: decoded
    /// there, and consumed. `None` leaves the input as it was.
    #[inline]
    fn binary_op_in_place(&mut self) -> Option<OpFields> {
        let available = self.input.fill_buf().ok()?;
        if available.first() != Some(&TAG_OP) {
            return None;
        }
        let mut deltas = self.binary?;
        let mut bytes = Bytes { b: available, i: 1 };
        let fields = decode_op(&mut bytes, &mut deltas).ok()?;
        let used = bytes.i;
        self.input.consume(used);
        self.binary = Some(deltas);
        Some(fields)
    }

    /// An op record's body, decoded where it lies in the input's buffer when it is
    /// whole there, else gathered byte by byte across the buffer's end.
    #[inline]
    fn binary_op(&mut self) -> Result<OpFields, TraceError> {
        let complete = self.line - 1;
        let mut deltas = self.binary.unwrap_or_default();
        let available = match self.input.fill_buf() {
            Ok(available) => available,
            Err(e) => return Err(self.read_error(complete, e)),
        };
        let mut bytes = Bytes { b: available, i: 0 };
        let decoded = decode_op(&mut bytes, &mut deltas);
        let used = bytes.i;
        let whole = available.len() >= MAX_OP_BYTES;
        match decoded {
            Ok(fields) => {
                self.input.consume(used);
                self.binary = Some(deltas);
                return Ok(fields);
            }
            Err(Undecodable::Bad(why)) => return Err(self.invalid(why)),
            Err(Undecodable::Short) if whole => {
                return Err(self.invalid("an op record longer than any op".into()));
            }
            Err(Undecodable::Short) => {}
        }
        self.buf.clear();
        loop {
            let Some(b) = self.take_byte()? else {
                return Err(self.truncated());
            };
            self.buf.push(b);
            let mut deltas = self.binary.unwrap_or_default();
            let mut bytes = Bytes { b: &self.buf, i: 0 };
            match decode_op(&mut bytes, &mut deltas) {
                Ok(fields) => {
                    self.binary = Some(deltas);
                    return Ok(fields);
                }
                Err(Undecodable::Bad(why)) => return Err(self.invalid(why)),
                Err(Undecodable::Short) if self.buf.len() >= MAX_OP_BYTES => {
                    return Err(self.invalid("an op record longer than any op".into()));
                }
                Err(Undecodable::Short) => {}
            }
        }
    }

    /// A JSON record's length.
    fn binary_len(&mut self) -> Result<usize, TraceError> {
        self.buf.clear();
        loop {
            let Some(b) = self.take_byte()? else {
                return Err(self.truncated());
            };
            self.buf.push(b);
            match (Bytes { b: &self.buf, i: 0 }).varint() {
                Ok(len) if len < MAX_LINE_BYTES as u64 => return Ok(len as usize),
                Ok(len) => return Err(self.invalid(format!(
                    "a record of {len} bytes, more than a trace record may hold ({MAX_LINE_BYTES})"
                ))),
                Err(Undecodable::Short) => {}
                Err(Undecodable::Bad(why)) => return Err(self.invalid(why)),
            }
        }
    }

    /// The next byte of the input, `None` at its end.
    fn take_byte(&mut self) -> Result<Option<u8>, TraceError> {
        let complete = self.line;
        let available = match self.input.fill_buf() {
            Ok(available) => available,
            Err(e) => return Err(self.read_error(complete, e)),
        };
        let Some(&b) = available.first() else {
            return Ok(None);
        };
        self.input.consume(1);
        Ok(Some(b))
    }

    fn truncated(&self) -> TraceError {
        self.invalid("the binary trace ends inside this record: the file is truncated; copy or export it again".into())
    }

    /// The next line, when it is a plain op line whole in the input's buffer (after the
    /// header): read there, and consumed. `None` leaves the input as it was.
    #[inline]
    fn op_in_place(&mut self) -> Option<OpFields> {
        self.header.as_ref()?;
        let available = self.input.fill_buf().ok()?;
        let end = memchr::memchr(b'\n', available)?;
        if end >= MAX_LINE_BYTES {
            return None;
        }
        let fields = crate::op_line::parse_op_line(&available[..end])?;
        self.input.consume(end + 1);
        self.line += 1;
        Some(fields)
    }

    /// Reads the next line into `buf`, at most [`MAX_LINE_BYTES`] of it; `false` at the end.
    /// `line` counts the line from its first byte, so every error names the line it is in.
    fn read_line(&mut self) -> Result<bool, TraceError> {
        match read_bounded_line(&mut self.input, &mut self.buf) {
            Ok(BoundedLine::End) => Ok(false),
            Ok(BoundedLine::Line) => {
                self.line += 1;
                Ok(true)
            }
            Ok(BoundedLine::TooLong) => Err(self.next_line_too_long()),
            Err(e) => Err(self.read_error(self.line, e)),
        }
    }

    /// A failed read after `complete` whole lines.
    fn read_error(&self, complete: u64, cause: std::io::Error) -> TraceError {
        // The decompressor reports damage as an error without an OS error number.
        if self.compressed && cause.raw_os_error().is_none() {
            TraceError::Corrupt {
                path: self.path.clone(),
                after: complete,
                cause,
            }
        } else {
            TraceError::Io {
                path: self.path.clone(),
                cause,
            }
        }
    }

    fn classify(&mut self, raw: RawLine) -> Result<Record, TraceError> {
        if self.header.is_none() && raw.line_type != LineType::Header {
            return Err(self.invalid(
                "the first line must be the header ({\"type\":\"header\",\"format\":\"naslab-trace\",...})"
                    .into(),
            ));
        }
        match raw.line_type {
            LineType::Header => self.header_line(raw),
            LineType::File => self.file_line(raw),
            LineType::Op => {
                let fields = op_fields(&raw);
                self.op_line(fields)
            }
        }
    }

    fn header_line(&mut self, raw: RawLine) -> Result<Record, TraceError> {
        if self.header.is_some() {
            return Err(self.invalid("a second header line; a trace has exactly one".into()));
        }
        let format = raw.format.unwrap_or_default();
        if format != FORMAT_NAME {
            return Err(TraceError::Unsupported {
                path: self.path.clone(),
                line: self.line,
                message: format!(
                    "format '{format}' is not '{FORMAT_NAME}'; convert the trace first (see docs/trace-format.md)"
                ),
            });
        }
        let version = raw
            .version
            .ok_or_else(|| self.invalid("the header has no 'version'".into()))?;
        if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version) {
            return Err(TraceError::Unsupported {
                path: self.path.clone(),
                line: self.line,
                message: format!(
                    "{FORMAT_NAME} version {version} is not supported: this naslab reads versions {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}; use a naslab release that reads version {version}, or regenerate the trace"
                ),
            });
        }
        let workload = raw
            .workload
            .ok_or_else(|| self.invalid("the header has no 'workload' name".into()))?;
        if let Err(why) = check_rel_path(&workload) {
            return Err(self.invalid(format!("workload name: {why}")));
        }
        if workload.contains('/') {
            return Err(self.invalid(format!(
                "workload name '{workload}' contains '/'; it names one directory"
            )));
        }
        if let Some(d) = raw.queue_depth
            && !(1..=MAX_QUEUE_DEPTH).contains(&d)
        {
            return Err(self.invalid(format!(
                "queue_depth {d} is out of range; use 1 to {MAX_QUEUE_DEPTH}"
            )));
        }
        let header = Header {
            format,
            version,
            workload,
            description: raw.description,
            generator: raw.generator,
            queue_depth: raw.queue_depth,
        };
        self.header = Some(header.clone());
        Ok(Record::Header(header))
    }

    fn file_line(&mut self, raw: RawLine) -> Result<Record, TraceError> {
        if self.seen_op {
            return Err(self.invalid(
                "a file line after the first op; declare every file before the ops".into(),
            ));
        }
        let id = raw
            .id
            .ok_or_else(|| self.invalid("the file line has no 'id'".into()))?;
        let path = raw
            .path
            .ok_or_else(|| self.invalid("the file line has no 'path'".into()))?;
        let exists = raw.exists.ok_or_else(|| {
            self.invalid(format!(
                "file '{path}' has no 'exists': say whether it exists before the measured phase"
            ))
        })?;
        if let Err(why) = check_rel_path(&path) {
            return Err(self.invalid(why));
        }
        if !self.ids.insert(id) {
            return Err(self.invalid(format!("file id {id} is declared twice")));
        }
        if !self.paths.insert(path.clone()) {
            return Err(self.invalid(format!("path '{path}' is declared twice")));
        }
        Ok(Record::File(FileDecl {
            id,
            path,
            kind: raw.kind.unwrap_or_default(),
            size: raw.size.unwrap_or(0),
            exists,
            prepare: raw.prepare.unwrap_or_default(),
        }))
    }

    fn op_line(&mut self, raw: OpFields) -> Result<Record, TraceError> {
        self.seen_op = true;
        self.client = raw.client;
        let kind = raw
            .op
            .ok_or_else(|| self.invalid("the op line has no 'op'".into()))?;
        let file = raw
            .file
            .ok_or_else(|| self.invalid(format!("the {kind} op has no 'file'")))?;
        self.check_declared(kind, file, raw.to)?;
        let (op, measured) = build_op(kind, file, &raw).map_err(|why| self.invalid(why.into()))?;
        Ok(Record::Op(op, measured))
    }

    /// The checks of an op that depend on what came before it: its entries declared.
    #[inline]
    fn check_declared(
        &mut self,
        kind: OpKind,
        file: u32,
        to: Option<u32>,
    ) -> Result<(), TraceError> {
        if self.last_id != Some(file) {
            if !self.ids.contains(&file) {
                return Err(self.invalid(format!(
                    "the {kind} op refers to file {file}, which no file line declares; declare it before the ops"
                )));
            }
            self.last_id = Some(file);
        }
        if let Some(to) = to {
            if !self.ids.contains(&to) {
                return Err(self.invalid(format!(
                    "the {kind} op's 'to' is file {to}, which no file line declares"
                )));
            }
        } else if kind.needs_to() {
            return Err(self.invalid(format!("the {kind} op has no 'to'")));
        }
        Ok(())
    }

    /// The op of the next line, read (on another thread) by [`parsed_op`] from a plain op
    /// line: checked against what came before it, as [`Self::op_line`] checks.
    #[inline]
    pub(crate) fn next_parsed_op(&mut self, parsed: ParsedOp) -> Result<Record, TraceError> {
        // Lines are read in blocks only after the header (`is_json_after_header`).
        debug_assert!(self.header.is_some());
        self.line += 1;
        self.seen_op = true;
        self.client = parsed.client;
        self.check_declared(parsed.op.kind, parsed.op.file, parsed.op.to)?;
        Ok(Record::Op(parsed.op, parsed.measured))
    }

    /// The record of the next line, `line` (its break included or not), by the general
    /// path; `None` for a blank line.
    pub(crate) fn next_line(&mut self, line: &[u8]) -> Result<Option<Record>, TraceError> {
        self.line += 1;
        self.buf.clear();
        self.buf.extend_from_slice(line);
        self.json_record()
    }

    /// The next line is longer than [`MAX_LINE_BYTES`].
    pub(crate) fn next_line_too_long(&mut self) -> TraceError {
        self.line += 1;
        self.invalid(format!(
            "the line is longer than {MAX_LINE_BYTES} bytes, the most a trace line may hold; is this a naslab trace? (see docs/trace-format.md)"
        ))
    }

    /// Reading the input failed after the lines given so far.
    pub(crate) fn failed_read(&self, cause: std::io::Error) -> TraceError {
        self.read_error(self.line, cause)
    }

    /// Whether the trace is JSON Lines after a header: its op lines can be read apart
    /// from the checks (see [`crate::line_blocks`]).
    pub(crate) fn is_json_after_header(&self) -> bool {
        self.sniffed && self.binary.is_none() && self.header.is_some()
    }

    /// The input, for reading whole blocks of lines.
    pub(crate) fn input(&mut self) -> &mut R {
        &mut self.input
    }

    fn invalid(&self, message: String) -> TraceError {
        self.invalid_at(self.line, message)
    }

    fn invalid_at(&self, line: u64, message: String) -> TraceError {
        TraceError::Invalid {
            path: self.path.clone(),
            line,
            message,
        }
    }
}

impl<R: BufRead> Iterator for TraceReader<R> {
    type Item = Result<Record, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

/// An op read from a plain op line with every check that needs nothing before it done.
#[derive(Debug)]
pub(crate) struct ParsedOp {
    pub op: Op,
    pub measured: Option<Measured>,
    pub client: Option<u32>,
}

/// The op of `line` when it is a plain op line whose every check that needs nothing
/// before it passes; `None` leaves the line to the general path, which words any error.
#[inline]
pub(crate) fn parsed_op(line: &[u8]) -> Option<ParsedOp> {
    let raw = crate::op_line::parse_op_line(line)?;
    let (kind, file) = (raw.op?, raw.file?);
    if kind.needs_to() && raw.to.is_none() {
        return None;
    }
    let (op, measured) = build_op(kind, file, &raw).ok()?;
    Some(ParsedOp {
        op,
        measured,
        client: raw.client,
    })
}

/// The op an op line's fields make, or why they make none; the checks that need
/// nothing before the line.
#[inline]
fn build_op(
    kind: OpKind,
    file: u32,
    raw: &OpFields,
) -> Result<(Op, Option<Measured>), &'static str> {
    let op = Op {
        stream: raw.stream.unwrap_or(0),
        t_us: raw.t_us.unwrap_or(0),
        kind,
        file,
        offset: raw.offset.unwrap_or(0),
        len: raw.len.unwrap_or(0),
        flags: raw.flags.unwrap_or_default(),
        to: raw.to,
        warmup: raw.warmup.unwrap_or(false),
        expect: raw.expect,
    };
    if op.offset.checked_add(op.len).is_none() {
        return Err("offset + len overflows");
    }
    if op.flags.contains(OpFlags::EXCL) && kind != OpKind::Create {
        return Err("the flag 'excl' belongs on a 'create' only (an exclusive create)");
    }
    let measured = match (raw.sched_ns, raw.issued_ns, raw.done_ns, raw.result) {
        (None, None, None, None) => None,
        (Some(sched_ns), Some(issued_ns), Some(done_ns), Some(result)) => Some(Measured {
            sched_ns,
            issued_ns,
            done_ns,
            result,
        }),
        _ => return Err("measured fields come together: sched_ns, issued_ns, done_ns and result"),
    };
    Ok((op, measured))
}

/// Reads a whole stream into memory; for tests and small traces only.
pub fn read_all<R: Read>(path: &Path, input: R) -> Result<Vec<Record>, TraceError> {
    TraceReader::new(path.to_path_buf(), BufReader::new(input)).collect()
}
