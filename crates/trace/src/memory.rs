use std::io::Write;

use crate::model::{FileDecl, Header, Op, Record};
use crate::{TraceError, TraceWriter};

/// A whole trace held in memory: what generators build. Large captured traces are
/// never loaded like this; they are read as a stream with [`crate::TraceReader`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    pub header: Header,
    pub files: Vec<FileDecl>,
    /// Ops of all streams, each stream's ops in issue order.
    pub ops: Vec<Op>,
}

impl Trace {
    /// An empty trace for `workload`.
    pub fn new(workload: impl Into<String>) -> Trace {
        Trace {
            header: Header::new(workload),
            files: Vec::new(),
            ops: Vec::new(),
        }
    }

    /// Writes the trace through `writer` (header, files, ops).
    pub fn write_to<W: Write>(&self, writer: &mut TraceWriter<W>) -> Result<(), TraceError> {
        writer.header(&self.header)?;
        for f in &self.files {
            writer.file(f)?;
        }
        for op in &self.ops {
            writer.op(op, None)?;
        }
        Ok(())
    }

    /// The trace as plain JSON Lines bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = TraceWriter::new("<memory>".into(), Vec::new());
        // Writing into a Vec cannot fail.
        let _ = self.write_to(&mut w);
        w.finish().unwrap_or_default()
    }

    /// The trace as records, in file order, as a reader would yield them.
    pub fn records(&self) -> impl Iterator<Item = Result<Record, TraceError>> + '_ {
        std::iter::once(Ok(Record::Header(self.header.clone())))
            .chain(self.files.iter().map(|f| Ok(Record::File(f.clone()))))
            .chain(self.ops.iter().map(|op| Ok(Record::Op(*op, None))))
    }
}
