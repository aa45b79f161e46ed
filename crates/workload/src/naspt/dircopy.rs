//! Directory copies: the office-suite tree copied to the NAS (directories made, files created
//! and written) or from it (files read), each file in 64 KB transfers, one file at a time.

use naslab_trace::{OpFlags, Trace};
use rand::RngExt;

use super::tree::{self, CHUNK};
use crate::builder::Builder;
use crate::catalog::WorkloadInfo;
use crate::params::GenParams;
use crate::sample::Rng8;

/// The copies' average rates, bytes over the whole copy with its per-file pauses (Table 1:
/// 15 MB/s to the NAS, 13 MB/s from it).
const TO_RATE: f64 = 15e6;
const FROM_RATE: f64 = 13e6;

/// Per-file time the copier spends outside transfers (looking up, opening, closing), µs.
fn file_gap(rng: &mut Rng8) -> u64 {
    rng.random_range(300..2_500)
}

/// DirectoryCopyToNAS: every directory made, every file created and written in order.
pub(crate) fn to_nas(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    let mut b = Builder::new(
        info.name,
        "an office-suite installation tree (2833 files) copied to the NAS: directories made, files created and written in 64 KB pieces",
        params,
    );
    let tree = tree::build(params.seed);
    let scale = b.scale();
    let dirs: Vec<u32> = tree.dirs.iter().map(|d| b.new_dir(d.clone())).collect();
    let files: Vec<Vec<(u32, u64)>> = tree
        .files
        .iter()
        .map(|list| {
            list.iter()
                .map(|f| (b.new_file(f.path.clone()), scale.bytes(f.size)))
                .collect()
        })
        .collect();
    for (dir, list) in dirs.iter().zip(&files) {
        b.mkdir(*dir);
        b.wait(file_gap(rng));
        for &(id, size) in list {
            b.create(id);
            b.wait(file_gap(rng) / 2);
            b.write_range(id, 0, size, CHUNK, TO_RATE);
            b.close(id);
            b.wait(file_gap(rng));
        }
    }
    b.time_to_rate(TO_RATE);
    b.finish()
}

/// DirectoryCopyFromNAS: every file of the prepared tree opened and read in order.
pub(crate) fn from_nas(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    let mut b = Builder::new(
        info.name,
        "an office-suite installation tree (2833 files) copied from the NAS: every file read in 64 KB pieces",
        params,
    );
    let tree = tree::build(params.seed);
    let files: Vec<_> = tree
        .files
        .iter()
        .flatten()
        .map(|f| b.file(f.path.clone(), f.size))
        .collect();
    for f in files {
        b.open(f.id, OpFlags::READ);
        b.wait(file_gap(rng) / 2);
        b.read_range(f.id, 0, f.size, CHUNK, FROM_RATE);
        b.close(f.id);
        b.wait(file_gap(rng));
    }
    b.time_to_rate(FROM_RATE);
    b.finish()
}
