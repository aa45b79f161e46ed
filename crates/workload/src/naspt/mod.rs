//! The twelve NASPT workloads, one module per family.

mod content;
mod copy;
mod dircopy;
mod office;
mod photo;
mod tree;
mod video;

use naslab_trace::Trace;
use rand::SeedableRng;

use crate::catalog::WorkloadInfo;
use crate::params::GenParams;
use crate::sample::Rng8;

/// A random source for one workload: the seed plus a constant derived from the workload's name,
/// so that the workloads of one seed do not share their random choices.
fn rng_for(name: &str, seed: u64) -> Rng8 {
    // FNV-1a of the name.
    let salt = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    Rng8::seed_from_u64(seed.wrapping_add(salt))
}

/// Builds the workload described by `info` (its name is known and `params` validated).
pub(crate) fn generate(info: &WorkloadInfo, params: &GenParams) -> Trace {
    let mut rng = rng_for(info.name, params.seed);
    let rng = &mut rng;
    match info.name {
        "HDVideo_1Play" => video::play(info, params, rng, video::ONE_PLAY),
        "HDVideo_2Play" => video::play(info, params, rng, video::TWO_PLAY),
        "HDVideo_4Play" => video::play(info, params, rng, video::FOUR_PLAY),
        "HDVideo_1Record" => video::record(info, params, rng),
        "HDVideo_1Play_1Record" => video::play_record(info, params, rng),
        "ContentCreation" => content::generate(info, params, rng),
        "OfficeProductivity" => office::generate(info, params, rng),
        "FileCopyToNAS" => copy::to_nas(info, params, rng),
        "FileCopyFromNAS" => copy::from_nas(info, params, rng),
        "DirectoryCopyToNAS" => dircopy::to_nas(info, params, rng),
        "DirectoryCopyFromNAS" => dircopy::from_nas(info, params, rng),
        "PhotoAlbum" => photo::generate(info, params, rng),
        other => unreachable!("catalog entry {other} has no generator"),
    }
}
