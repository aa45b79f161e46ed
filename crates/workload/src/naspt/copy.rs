//! File copies: one large backup file copied to or from the NAS in 64 KB transfers.

use naslab_trace::{OpFlags, Trace};
use rand::RngExt;

use crate::builder::Builder;
use crate::catalog::WorkloadInfo;
use crate::params::GenParams;
use crate::sample::Rng8;

/// The file's size: 1.4 GB (NASPT paper, section 4.1; Table 1 says 4.3 GB).
const FILE_BYTES: u64 = 1_400_000_000;
/// The copy's transfer size.
const CHUNK: u64 = 64 * 1024;
/// The copies' average rates, bytes over the whole copy with its pauses (Table 1: 55 MB/s
/// to the NAS, 51 MB/s from it).
const TO_RATE: f64 = 55e6;
const FROM_RATE: f64 = 51e6;
/// Chance that the copier pauses briefly after a transfer (the other disk, the cache).
const STALL_PROB: f64 = 0.01;
const PATH: &str = "Backup.bkf";

enum Direction {
    Read,
    Write,
}

/// Transfers `[0, size)` in order, paced at `rate` with occasional short stalls (the
/// whole copy is then timed to its average rate).
fn transfer(b: &mut Builder, rng: &mut Rng8, file: u32, size: u64, rate: f64, dir: &Direction) {
    let mut off = 0;
    while off < size {
        let len = CHUNK.min(size - off);
        match dir {
            Direction::Read => b.read(file, off, len),
            Direction::Write => b.write(file, off, len),
        }
        b.wait_bytes(len, rate);
        if rng.random_bool(STALL_PROB) {
            b.wait(rng.random_range(2_000..30_000));
        }
        off += len;
    }
}

/// FileCopyToNAS: the file is created and written in order.
pub(crate) fn to_nas(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    let mut b = Builder::new(
        info.name,
        "a 1.4 GB backup file copied to the NAS: a new file written in sequential 64 KB writes",
        params,
    );
    let file = b.new_file(PATH);
    let size = b.scale().bytes(FILE_BYTES);
    b.create(file);
    b.wait(1_000);
    transfer(&mut b, rng, file, size, TO_RATE, &Direction::Write);
    b.close(file);
    b.time_to_rate(TO_RATE);
    b.finish()
}

/// FileCopyFromNAS: the file exists and is read in order.
pub(crate) fn from_nas(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    let mut b = Builder::new(
        info.name,
        "a 1.4 GB backup file copied from the NAS in sequential 64 KB reads",
        params,
    );
    let file = b.file(PATH, FILE_BYTES);
    b.open(file.id, OpFlags::READ);
    b.wait(1_000);
    transfer(&mut b, rng, file.id, file.size, FROM_RATE, &Direction::Read);
    b.close(file.id);
    b.time_to_rate(FROM_RATE);
    b.finish()
}
