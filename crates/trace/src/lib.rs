//! The trace: a workload's file set plus its streams of operations, and the versioned
//! format that carries it, as JSON Lines or in a compact binary encoding of the same
//! records (see `docs/trace-format.md`).
//!
//! This crate does no I/O besides reading and writing trace files (and opening any file
//! naslab writes at a path it was given, [`create_output`]).

mod binary;
mod error;
mod line_blocks;
mod memory;
mod model;
mod op_line;
mod out_file;
mod path;
mod printable;
mod read_ahead;
mod reader;
mod writer;

pub use binary::BINARY_MAGIC;
pub use error::TraceError;
pub use memory::Trace;
pub use model::{
    Expected, FileDecl, FileKind, Header, Measured, Op, OpFlags, OpKind, Prepare, Record,
};
pub use out_file::create_output;
pub use path::{MAX_PATH_BYTES, check_rel_path};
pub use printable::{printable, printable_lines};
pub use read_ahead::{Numbered, ReadAhead};
pub use reader::{
    BoundedLine, MAX_LINE_BYTES, TraceReader, open_trace, read_all, read_bounded_line, read_trace,
};
pub use writer::{Sink, TraceWriter, create_trace, create_trace_parallel, is_binary_name};

/// The format name every trace's first line carries.
pub const FORMAT_NAME: &str = "naslab-trace";
/// The format version this build writes: version 2 added the `statfs`, `utime`, `lock`
/// and `unlock` ops and an op's `expect`; version 3 the `excl` flag of a `create`.
pub const FORMAT_VERSION: u32 = 3;
/// The oldest format version this build reads (every later one up to
/// [`FORMAT_VERSION`] is read too; a newer one is refused by name).
pub const OLDEST_FORMAT_VERSION: u32 = 1;
/// The deepest queue a trace may ask for.
pub const MAX_QUEUE_DEPTH: u32 = 1024;
