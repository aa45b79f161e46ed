use naslab_trace::Trace;

use crate::naspt::{content, copy, dircopy, office, photo, record_play, video};
use crate::params::GenParams;
use crate::sample::Rng8;

/// A generator: builds the workload `info` names at `params`, drawing from `rng` (seeded for
/// that workload).
pub(crate) type Generator = fn(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace;

/// One workload a generator can build.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadInfo {
    /// The workload's name, as the original toolkit spelled it.
    pub name: &'static str,
    /// The suite it belongs to.
    pub suite: &'static str,
    /// One line saying what it models.
    pub summary: &'static str,
    /// What builds it.
    pub(crate) build: Generator,
}

/// The suite holding the twelve NAS Performance Toolkit workloads.
pub const NASPT: &str = "naspt";
/// Every suite `--suite` takes.
pub const SUITES: [&str; 2] = [NASPT, crate::synthetic::iometer::SUITE];

const CATALOG: [WorkloadInfo; 12] = [
    WorkloadInfo {
        name: "HDVideo_1Play",
        suite: NASPT,
        summary: "one 720p HD video played back: 1.3 GB of sequential 256 KB reads",
        build: video::one_play,
    },
    WorkloadInfo {
        name: "HDVideo_2Play",
        suite: NASPT,
        summary: "two HD videos played at once, merged into one sequence: 1.4 GB read",
        build: video::two_play,
    },
    WorkloadInfo {
        name: "HDVideo_4Play",
        suite: NASPT,
        summary: "four HD videos played at once, merged into one sequence: 1.3 GB read",
        build: video::four_play,
    },
    WorkloadInfo {
        name: "HDVideo_1Record",
        suite: NASPT,
        summary: "one HD broadcast recorded to a new file: 1.6 GB of sequential 256 KB writes",
        build: video::record,
    },
    WorkloadInfo {
        name: "HDVideo_1Play_1Record",
        suite: NASPT,
        summary: "one HD video played while another is recorded, merged: about 1 GB in all",
        build: video::play_record,
    },
    WorkloadInfo {
        name: "ContentCreation",
        suite: NASPT,
        summary: "video editing from photos, clips and music: small writes, one big file written at scattered offsets",
        build: content::generate,
    },
    WorkloadInfo {
        name: "OfficeProductivity",
        suite: NASPT,
        summary: "a day of office documents, spreadsheets and databases: 2.8 GB, half read, half written",
        build: office::generate,
    },
    WorkloadInfo {
        name: "FileCopyToNAS",
        suite: NASPT,
        summary: "one 1.4 GB file copied to the NAS in sequential 64 KB writes",
        build: copy::to_nas,
    },
    WorkloadInfo {
        name: "FileCopyFromNAS",
        suite: NASPT,
        summary: "one 1.4 GB file copied from the NAS in sequential 64 KB reads",
        build: copy::from_nas,
    },
    WorkloadInfo {
        name: "DirectoryCopyToNAS",
        suite: NASPT,
        summary: "an office-suite installation tree (2833 files, 247 MB) copied to the NAS",
        build: dircopy::to_nas,
    },
    WorkloadInfo {
        name: "DirectoryCopyFromNAS",
        suite: NASPT,
        summary: "an office-suite installation tree (2833 files, 247 MB) copied from the NAS",
        build: dircopy::from_nas,
    },
    WorkloadInfo {
        name: "PhotoAlbum",
        suite: NASPT,
        summary: "browsing 165 raw photos: metadata, thumbnails, then full views, 0.81 GB read",
        build: photo::generate,
    },
];

/// The `suite` of a workload built from the NASPT ones. No suite of that name runs
/// ([`suite`] does not know it): such workloads run by name, in `naslab lab matrix`.
pub const DERIVED: &str = "derived";

/// Workloads assembled from the suite's own, to answer one of the paper's questions directly.
const DERIVED_CATALOG: [WorkloadInfo; 1] = [WorkloadInfo {
    name: record_play::NAME,
    suite: DERIVED,
    summary: "HDVideo_1Record's recording as the warm-up, then HDVideo_1Play's reads played from that recording",
    build: record_play::build,
}];

/// The twelve workloads, in the order the original toolkit listed them.
pub fn catalog() -> &'static [WorkloadInfo] {
    &CATALOG
}

/// The workloads built from the twelve (HDVideo_RecordThenPlay), which `lab matrix` runs
/// by name.
pub fn derived() -> &'static [WorkloadInfo] {
    &DERIVED_CATALOG
}

/// The workload names of a suite (`"naspt"`), or `None` for an unknown suite.
pub fn suite(name: &str) -> Option<Vec<&'static str>> {
    if name.eq_ignore_ascii_case(NASPT) {
        Some(CATALOG.iter().map(|w| w.name).collect())
    } else if name.eq_ignore_ascii_case(crate::synthetic::iometer::SUITE) {
        Some(
            crate::synthetic::iometer::TESTS
                .iter()
                .map(|t| t.name)
                .collect(),
        )
    } else {
        None
    }
}

/// The entry, of the twelve or the derived ones, whose name matches `name`, ignoring ASCII case.
pub fn lookup(name: &str) -> Option<&'static WorkloadInfo> {
    CATALOG
        .iter()
        .chain(&DERIVED_CATALOG)
        .find(|w| w.name.eq_ignore_ascii_case(name))
}

impl WorkloadInfo {
    /// Builds this workload at `params` (already validated), from a random source of its own.
    pub(crate) fn generate(&self, params: &GenParams) -> Trace {
        let mut rng = rng_for(self.name, params.seed);
        (self.build)(self, params, &mut rng)
    }
}

/// A random source for one workload: the seed plus a constant derived from the workload's name,
/// so that the workloads of one seed do not share their random choices.
fn rng_for(name: &str, seed: u64) -> Rng8 {
    // FNV-1a of the name.
    let salt = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    <Rng8 as rand::SeedableRng>::seed_from_u64(seed.wrapping_add(salt))
}
