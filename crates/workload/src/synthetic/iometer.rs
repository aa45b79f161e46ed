//! The IOMeter-style set the NASPT paper compares against (its Table 2): 4 KiB random
//! read and write, 128 KiB sequential read and write, each at 1 and 32 outstanding.

use naslab_trace::{FileKind, OpFlags, OpKind, Trace};
use rand::RngExt;
use rand::SeedableRng;

use super::Multi;
use crate::params::{GenParams, Scale};
use crate::sample::Rng8;

/// One test of the set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IometerTest {
    /// The workload's name.
    pub name: &'static str,
    /// Bytes per transfer.
    pub block: u64,
    /// Random offsets, or one sequential pass.
    pub random: bool,
    /// Writes, or reads.
    pub write: bool,
    /// Transfers in flight.
    pub depth: u32,
}

const fn t(name: &'static str, block: u64, random: bool, write: bool, depth: u32) -> IometerTest {
    IometerTest {
        name,
        block,
        random,
        write,
        depth,
    }
}

/// The suite's name.
pub const SUITE: &str = "iometer";

/// The eight tests, in Table 2's order.
pub const TESTS: [IometerTest; 8] = [
    t("IOMeter_4K_RandRead_QD1", 4096, true, false, 1),
    t("IOMeter_4K_RandRead_QD32", 4096, true, false, 32),
    t("IOMeter_4K_RandWrite_QD1", 4096, true, true, 1),
    t("IOMeter_4K_RandWrite_QD32", 4096, true, true, 32),
    t("IOMeter_128K_SeqRead_QD1", 128 << 10, false, false, 1),
    t("IOMeter_128K_SeqRead_QD32", 128 << 10, false, false, 32),
    t("IOMeter_128K_SeqWrite_QD1", 128 << 10, false, true, 1),
    t("IOMeter_128K_SeqWrite_QD32", 128 << 10, false, true, 32),
];

/// The test file's size at scale 1.
pub const FILE_BYTES: u64 = 1 << 30;

/// Looks a test up by name (case ignored).
pub fn lookup(name: &str) -> Option<&'static IometerTest> {
    TESTS.iter().find(|t| t.name.eq_ignore_ascii_case(name))
}

/// A test's trace: one prepared test file (1 GiB at scale 1) opened for direct I/O (and,
/// for the random tests, random access), one pass worth of transfers over it (file size /
/// block size), `depth` in flight.
pub fn generate(test: &IometerTest, params: &GenParams) -> Trace {
    let size = Scale(params.scale)
        .bytes(FILE_BYTES)
        .max(test.block)
        .next_multiple_of(test.block);
    let mut m = Multi::new(
        test.name,
        format!(
            "{} KiB {} {}s at {} outstanding over a {} MiB test file",
            test.block >> 10,
            if test.random { "random" } else { "sequential" },
            if test.write { "write" } else { "read" },
            test.depth,
            size >> 20
        ),
        format!(
            "naslab-workload iometer/{} seed={} scale={}",
            test.name, params.seed, params.scale
        ),
    );
    m.trace.header.queue_depth = (test.depth > 1).then_some(test.depth);
    let file = m.declare("iobw.tst".into(), FileKind::File, size, true);
    // As IOMeter opens its test file: unbuffered, and without readahead for random access.
    let mut flags = OpFlags::READ | OpFlags::DIRECT;
    if test.write {
        flags = flags | OpFlags::WRITE;
    }
    if test.random {
        flags = flags | OpFlags::RANDOM;
    }
    m.op(0, 0, OpKind::Open, file, 0, 0, flags, false);
    let blocks = size / test.block;
    let mut rng = Rng8::seed_from_u64(params.seed ^ 0x0069_6f6d_6574_6572);
    let kind = if test.write {
        OpKind::Write
    } else {
        OpKind::Read
    };
    for i in 0..blocks {
        let block = if test.random {
            rng.random_range(0..blocks)
        } else {
            i
        };
        m.op(
            0,
            i,
            kind,
            file,
            block * test.block,
            test.block,
            OpFlags::default(),
            false,
        );
    }
    m.op(
        0,
        blocks,
        OpKind::Close,
        file,
        0,
        0,
        OpFlags::default(),
        false,
    );
    m.finish()
}
