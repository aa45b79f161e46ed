//! Fixed-size binary records in unnamed temporary files: the compiled ops a stream
//! replays, and the measurements it takes. Reading one costs a copy of 48 bytes, so
//! the replay loop never parses text, and memory use does not grow with the trace.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use naslab_trace::{Expected, Measured, OpFlags, OpKind};

/// One op, ready to issue: file indices are the run's dense [`crate::plan::FileTable`] ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompiledOp {
    pub kind: OpKind,
    pub flags: OpFlags,
    /// The stream-local handle slot (ops that use or make a handle).
    pub slot: u32,
    pub file: u32,
    /// The rename target's file index, or `u32::MAX`.
    pub to: u32,
    pub t_us: u64,
    pub offset: u64,
    pub len: u64,
    /// The op's line in the trace, for error messages and records.
    pub line: u64,
    /// The error the op must end with, when the traced call failed.
    pub expect: Option<Expected>,
}

pub(crate) const OP_SIZE: usize = 48;
pub(crate) const MEASURED_SIZE: usize = 32;

impl CompiledOp {
    fn encode(&self) -> [u8; OP_SIZE] {
        let mut b = [0u8; OP_SIZE];
        b[0] = self.kind.index() as u8;
        b[1] = self.flags.0;
        b[2] = self.expect.map_or(0, Expected::code);
        b[4..8].copy_from_slice(&self.slot.to_le_bytes());
        b[8..12].copy_from_slice(&self.file.to_le_bytes());
        b[12..16].copy_from_slice(&self.to.to_le_bytes());
        b[16..24].copy_from_slice(&self.t_us.to_le_bytes());
        b[24..32].copy_from_slice(&self.offset.to_le_bytes());
        b[32..40].copy_from_slice(&self.len.to_le_bytes());
        b[40..48].copy_from_slice(&self.line.to_le_bytes());
        b
    }

    pub(crate) fn decode(b: &[u8; OP_SIZE]) -> CompiledOp {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            u64::from_le_bytes(a)
        };
        CompiledOp {
            // The spool only ever holds what encode wrote.
            kind: OpKind::ALL[(b[0] as usize).min(OpKind::ALL.len() - 1)],
            flags: OpFlags(b[1]),
            slot: u32_at(4),
            file: u32_at(8),
            to: u32_at(12),
            t_us: u64_at(16),
            offset: u64_at(24),
            len: u64_at(32),
            line: u64_at(40),
            expect: Expected::from_code(b[2]),
        }
    }
}

#[inline]
pub(crate) fn encode_measured(m: &Measured) -> [u8; MEASURED_SIZE] {
    let mut b = [0u8; MEASURED_SIZE];
    b[0..8].copy_from_slice(&m.sched_ns.to_le_bytes());
    b[8..16].copy_from_slice(&m.issued_ns.to_le_bytes());
    b[16..24].copy_from_slice(&m.done_ns.to_le_bytes());
    b[24..32].copy_from_slice(&m.result.to_le_bytes());
    b
}

pub(crate) fn decode_measured(b: &[u8; MEASURED_SIZE]) -> Measured {
    let at = |i: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[i..i + 8]);
        a
    };
    Measured {
        sched_ns: u64::from_le_bytes(at(0)),
        issued_ns: u64::from_le_bytes(at(8)),
        done_ns: u64::from_le_bytes(at(16)),
        result: i64::from_le_bytes(at(24)),
    }
}

/// Appends fixed-size records to an unnamed temporary file.
pub struct SpoolWriter {
    out: BufWriter<File>,
    count: u64,
}

impl SpoolWriter {
    /// A new spool in `dir` (the file has no name and vanishes with its last handle).
    pub fn new(dir: &Path, buffer_bytes: usize) -> std::io::Result<SpoolWriter> {
        Ok(SpoolWriter {
            out: BufWriter::with_capacity(buffer_bytes, tempfile::tempfile_in(dir)?),
            count: 0,
        })
    }

    /// Appends one op.
    #[inline]
    pub fn push_op(&mut self, op: &CompiledOp) -> std::io::Result<()> {
        self.count += 1;
        self.out.write_all(&op.encode())
    }

    /// Appends one measurement.
    #[inline]
    pub fn push_measured(&mut self, m: &Measured) -> std::io::Result<()> {
        self.count += 1;
        self.out.write_all(&encode_measured(m))
    }

    /// Records written so far.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Ends writing; the spool can then be read from its start, any number of times.
    pub fn finish(self) -> std::io::Result<Spool> {
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        Ok(Spool {
            file,
            count: self.count,
        })
    }
}

/// A finished spool.
pub struct Spool {
    file: File,
    count: u64,
}

impl Spool {
    /// A spool of `count` records already in `file`.
    pub(crate) fn from_file(file: File, count: u64) -> Spool {
        Spool { file, count }
    }

    /// The file holding the records.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }

    /// How many records it holds.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// A reader from the first record.
    pub fn reader(&self) -> std::io::Result<SpoolReader> {
        self.reader_with_buffer(1 << 18)
    }

    /// A reader from the first record, buffering `bytes` at a time.
    pub fn reader_with_buffer(&self, bytes: usize) -> std::io::Result<SpoolReader> {
        let file = self.file.try_clone()?;
        Ok(SpoolReader {
            input: BufReader::with_capacity(bytes, AtReader { file, pos: 0 }),
            left: self.count,
        })
    }
}

/// Reads a file from its own position, at offsets: a handle's clone shares the file
/// position with it, so several readers of one spool (and positioned reads on it, which
/// move the position on Windows) must not depend on it.
struct AtReader {
    file: File,
    pos: u64,
}

impl Read for AtReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = crate::positioned::read_at(&self.file, buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

/// Reads a spool's records in order.
pub struct SpoolReader {
    input: BufReader<AtReader>,
    left: u64,
}

impl SpoolReader {
    /// The next op, or `None` after the last.
    #[inline]
    pub fn next_op(&mut self) -> std::io::Result<Option<CompiledOp>> {
        if self.left == 0 {
            return Ok(None);
        }
        let mut b = [0u8; OP_SIZE];
        self.input.read_exact(&mut b)?;
        self.left -= 1;
        Ok(Some(CompiledOp::decode(&b)))
    }

    /// The next measurement, or `None` after the last.
    pub fn next_measured(&mut self) -> std::io::Result<Option<Measured>> {
        if self.left == 0 {
            return Ok(None);
        }
        let mut b = [0u8; MEASURED_SIZE];
        self.input.read_exact(&mut b)?;
        self.left -= 1;
        Ok(Some(decode_measured(&b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_and_measurements_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SpoolWriter::new(dir.path(), 4096).unwrap();
        let ops: Vec<CompiledOp> = (0..1000u64)
            .map(|i| CompiledOp {
                kind: OpKind::ALL[(i % OpKind::ALL.len() as u64) as usize],
                flags: OpFlags((i % 64) as u8),
                slot: i as u32 * 3,
                file: i as u32,
                to: u32::MAX,
                t_us: i * 7,
                offset: i << 33,
                len: i * 4096,
                line: i + 2,
                expect: Expected::from_code((i % 8) as u8),
            })
            .collect();
        for op in &ops {
            w.push_op(op).unwrap();
        }
        let spool = w.finish().unwrap();
        for _ in 0..2 {
            let mut r = spool.reader().unwrap();
            for op in &ops {
                assert_eq!(r.next_op().unwrap().as_ref(), Some(op));
            }
            assert_eq!(r.next_op().unwrap(), None);
        }
        let mut w = SpoolWriter::new(dir.path(), 64).unwrap();
        let m = Measured {
            sched_ns: 1,
            issued_ns: 2,
            done_ns: u64::MAX,
            result: -5,
        };
        w.push_measured(&m).unwrap();
        let spool = w.finish().unwrap();
        assert_eq!(spool.reader().unwrap().next_measured().unwrap(), Some(m));
    }

    #[test]
    fn readers_of_one_spool_at_once_each_read_every_record() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = SpoolWriter::new(dir.path(), 4096).unwrap();
        let ms: Vec<Measured> = (0..300u64)
            .map(|i| Measured {
                sched_ns: i,
                issued_ns: i * 2,
                done_ns: i * 3,
                result: i as i64,
            })
            .collect();
        for m in &ms {
            w.push_measured(m).unwrap();
        }
        let spool = w.finish().unwrap();
        // Small buffers, so the two readers interleave their reads of the file.
        let mut a = spool.reader_with_buffer(64).unwrap();
        let mut b = spool.reader_with_buffer(96).unwrap();
        let mut probe = [0u8; 32];
        for m in &ms {
            assert_eq!(a.next_measured().unwrap().as_ref(), Some(m));
            // A positioned read in between, as the live records make.
            crate::positioned::read_exact_at(spool.file(), &mut probe, 0).unwrap();
            assert_eq!(b.next_measured().unwrap().as_ref(), Some(m));
        }
        assert_eq!(a.next_measured().unwrap(), None);
        assert_eq!(b.next_measured().unwrap(), None);
    }
}
