//! An iozone-style matrix: each test over file sizes by record sizes, and iozone's
//! throughput mode (N streams, each on its own file). Every cell is a workload of its
//! own; tests that iozone runs on a file it has just written (rewrite, re-read) get that
//! file from a warm-up.

use naslab_trace::{FileKind, OpFlags, OpKind, Trace};
use rand::RngExt;
use rand::SeedableRng;

use super::Multi;
use crate::sample::Rng8;

/// One of iozone's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Test {
    /// Writes a new file in order.
    Write,
    /// Writes again a file just written.
    Rewrite,
    /// Reads a file in order.
    Read,
    /// Reads again a file just read.
    Reread,
    /// Reads records at random offsets.
    RandomRead,
    /// Writes records at random offsets.
    RandomWrite,
    /// Reads from the end to the start.
    BackwardRead,
    /// Writes the same record over and over.
    RecordRewrite,
    /// Reads every 17th record, wrapping around.
    StrideRead,
    /// Reads and writes at random, half each.
    Mixed,
}

impl Test {
    /// Every test, in iozone's order.
    pub const ALL: [Test; 10] = [
        Test::Write,
        Test::Rewrite,
        Test::Read,
        Test::Reread,
        Test::RandomRead,
        Test::RandomWrite,
        Test::BackwardRead,
        Test::RecordRewrite,
        Test::StrideRead,
        Test::Mixed,
    ];

    /// The name used on the command line and in workload names.
    pub fn name(self) -> &'static str {
        match self {
            Test::Write => "write",
            Test::Rewrite => "rewrite",
            Test::Read => "read",
            Test::Reread => "reread",
            Test::RandomRead => "randread",
            Test::RandomWrite => "randwrite",
            Test::BackwardRead => "bkwdread",
            Test::RecordRewrite => "recrewrite",
            Test::StrideRead => "strideread",
            Test::Mixed => "mixed",
        }
    }

    /// iozone's own title for the test's report.
    pub fn title(self) -> &'static str {
        match self {
            Test::Write => "Writer report",
            Test::Rewrite => "Re-writer report",
            Test::Read => "Reader report",
            Test::Reread => "Re-Reader report",
            Test::RandomRead => "Random read report",
            Test::RandomWrite => "Random write report",
            Test::BackwardRead => "Backward read report",
            Test::RecordRewrite => "Record rewrite report",
            Test::StrideRead => "Stride read report",
            Test::Mixed => "Mixed workload report",
        }
    }

    /// Parses a test's name.
    pub fn parse(name: &str) -> Option<Test> {
        Test::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether the file exists before the test (prepared), or is written by it.
    fn file_exists(self) -> bool {
        !matches!(self, Test::Write | Test::Rewrite)
    }
}

/// iozone's default stride, in records.
pub const STRIDE_RECORDS: u64 = 17;

/// The workload name of one cell.
pub fn cell_name(test: Test, file_size: u64, record: u64) -> String {
    format!(
        "iozone_{}_{}k_{}k",
        test.name(),
        file_size >> 10,
        record >> 10
    )
}

/// Adds one stream's ops of `test` on `file` to `m`.
fn ops(m: &mut Multi, stream: u32, test: Test, file: u32, size: u64, record: u64, rng: &mut Rng8) {
    let n = (size / record).max(1);
    let plain = OpFlags::default();
    match test {
        Test::Write => {
            m.write_new(stream, file, size, record, false);
            return;
        }
        Test::Rewrite => {
            m.write_new(stream, file, size, record, true);
            m.op(stream, 0, OpKind::Open, file, 0, 0, OpFlags::WRITE, false);
        }
        Test::Reread => {
            m.read_all(stream, file, size, record, true);
            m.op(stream, 0, OpKind::Open, file, 0, 0, OpFlags::READ, false);
        }
        Test::RandomWrite | Test::RecordRewrite | Test::Mixed => {
            m.op(
                stream,
                0,
                OpKind::Open,
                file,
                0,
                0,
                OpFlags::READ | OpFlags::WRITE,
                false,
            );
        }
        _ => m.op(stream, 0, OpKind::Open, file, 0, 0, OpFlags::READ, false),
    }
    for i in 0..n {
        let (kind, block) = match test {
            Test::Rewrite => (OpKind::Write, i),
            Test::Read | Test::Reread => (OpKind::Read, i),
            Test::RandomRead => (OpKind::Read, rng.random_range(0..n)),
            Test::RandomWrite => (OpKind::Write, rng.random_range(0..n)),
            Test::BackwardRead => (OpKind::Read, n - 1 - i),
            Test::RecordRewrite => (OpKind::Write, 0),
            Test::StrideRead => (OpKind::Read, (i * STRIDE_RECORDS) % n),
            Test::Mixed => {
                let kind = if rng.random_bool(0.5) {
                    OpKind::Read
                } else {
                    OpKind::Write
                };
                (kind, rng.random_range(0..n))
            }
            Test::Write => unreachable!("write returned above"),
        };
        m.op(
            stream,
            0,
            kind,
            file,
            block * record,
            record.min(size),
            plain,
            false,
        );
    }
    m.op(stream, 0, OpKind::Close, file, 0, 0, plain, false);
}

/// One cell of the matrix: `test` on one file of `file_size` in `record`-sized transfers.
pub fn cell(test: Test, file_size: u64, record: u64, seed: u64) -> Trace {
    throughput(
        test,
        1,
        file_size,
        record,
        seed,
        cell_name(test, file_size, record),
    )
}

/// iozone's throughput mode: `streams` streams each running `test` on its own file.
pub fn throughput(
    test: Test,
    streams: u32,
    file_size: u64,
    record: u64,
    seed: u64,
    name: String,
) -> Trace {
    let mut m = Multi::new(
        &name,
        format!(
            "iozone-style {} test: {streams} x {} KiB file in {} KiB records",
            test.name(),
            file_size >> 10,
            record >> 10
        ),
        format!(
            "naslab-workload iozone test={} streams={streams} size={file_size} record={record} seed={seed}",
            test.name()
        ),
    );
    let mut rng = Rng8::seed_from_u64(seed ^ 0x696f_7a6f_6e65);
    for s in 0..streams {
        let file = m.declare(
            format!("iozone.tmp.{s}"),
            FileKind::File,
            if test.file_exists() { file_size } else { 0 },
            test.file_exists(),
        );
        ops(&mut m, s, test, file, file_size, record, &mut rng);
    }
    m.finish()
}

/// The record sizes of a matrix row: powers of two from `min` to `max`, no larger than the file.
pub fn records_for(file_size: u64, min: u64, max: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut r = min.max(1).next_power_of_two();
    while r <= max && r <= file_size {
        out.push(r);
        r *= 2;
    }
    out
}

/// The file sizes of a matrix: powers of two from `min` to `max`.
pub fn sizes_between(min: u64, max: u64) -> Vec<u64> {
    records_for(max, min, max)
}
