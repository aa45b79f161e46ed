/// One workload a generator can build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadInfo {
    /// The workload's name, as the original toolkit spelled it.
    pub name: &'static str,
    /// The suite it belongs to.
    pub suite: &'static str,
    /// One line saying what it models.
    pub summary: &'static str,
}

/// The suite holding the twelve NAS Performance Toolkit workloads.
pub const NASPT: &str = "naspt";

const CATALOG: [WorkloadInfo; 12] = [
    WorkloadInfo {
        name: "HDVideo_1Play",
        suite: NASPT,
        summary: "one 720p HD video played back: 1.3 GB of sequential 256 KB reads",
    },
    WorkloadInfo {
        name: "HDVideo_2Play",
        suite: NASPT,
        summary: "two HD videos played at once, merged into one sequence: 1.4 GB read",
    },
    WorkloadInfo {
        name: "HDVideo_4Play",
        suite: NASPT,
        summary: "four HD videos played at once, merged into one sequence: 1.3 GB read",
    },
    WorkloadInfo {
        name: "HDVideo_1Record",
        suite: NASPT,
        summary: "one HD broadcast recorded to a new file: 1.6 GB of sequential 256 KB writes",
    },
    WorkloadInfo {
        name: "HDVideo_1Play_1Record",
        suite: NASPT,
        summary: "one HD video played while another is recorded, merged: about 1 GB in all",
    },
    WorkloadInfo {
        name: "ContentCreation",
        suite: NASPT,
        summary: "video editing from photos, clips and music: small writes, one big file written at scattered offsets",
    },
    WorkloadInfo {
        name: "OfficeProductivity",
        suite: NASPT,
        summary: "a day of office documents, spreadsheets and databases: 2.8 GB, half read, half written",
    },
    WorkloadInfo {
        name: "FileCopyToNAS",
        suite: NASPT,
        summary: "one 1.4 GB file copied to the NAS in sequential 64 KB writes",
    },
    WorkloadInfo {
        name: "FileCopyFromNAS",
        suite: NASPT,
        summary: "one 1.4 GB file copied from the NAS in sequential 64 KB reads",
    },
    WorkloadInfo {
        name: "DirectoryCopyToNAS",
        suite: NASPT,
        summary: "an office-suite installation tree (2833 files, 247 MB) copied to the NAS",
    },
    WorkloadInfo {
        name: "DirectoryCopyFromNAS",
        suite: NASPT,
        summary: "an office-suite installation tree (2833 files, 247 MB) copied from the NAS",
    },
    WorkloadInfo {
        name: "PhotoAlbum",
        suite: NASPT,
        summary: "browsing 165 raw photos: metadata, thumbnails, then full views, 0.81 GB read",
    },
];

/// The twelve workloads, in the order the original toolkit listed them.
pub fn catalog() -> &'static [WorkloadInfo] {
    &CATALOG
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

/// The catalog entry whose name matches `name`, ignoring ASCII case.
pub fn lookup(name: &str) -> Option<&'static WorkloadInfo> {
    CATALOG.iter().find(|w| w.name.eq_ignore_ascii_case(name))
}
