//! What `--verify` found: reads checked and every mismatch between what was written and
//! what came back, by kind.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What kind of damage a mismatched block shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum MismatchKind {
    /// The block holds an older version of itself: a write never reached the target.
    LostWrite,
    /// A read returned an older version, but reading again returned the right one: the
    /// data reached the target and a cache served an old copy.
    StaleRead,
    /// The block holds a valid block of another file or offset (or of another run).
    MisplacedWrite,
    /// The block is partly right: its header matches and its body does not, or some of
    /// its pieces are from the expected write and some are not.
    TornWrite,
    /// Nothing in the block is recognisable.
    Corrupt,
}

impl MismatchKind {
    pub const ALL: [MismatchKind; 5] = [
        MismatchKind::LostWrite,
        MismatchKind::StaleRead,
        MismatchKind::MisplacedWrite,
        MismatchKind::TornWrite,
        MismatchKind::Corrupt,
    ];

    /// Its position in [`MismatchKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// How it reads in tables.
    pub fn label(self) -> &'static str {
        match self {
            MismatchKind::LostWrite => "lost write",
            MismatchKind::StaleRead => "stale read",
            MismatchKind::MisplacedWrite => "misplaced write",
            MismatchKind::TornWrite => "torn write",
            MismatchKind::Corrupt => "corrupt",
        }
    }
}

/// One block (or the part of it a read covered) that did not hold what was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Mismatch {
    /// The file, relative to the workload's directory.
    pub file: String,
    pub offset: u64,
    pub len: u64,
    pub kind: MismatchKind,
    pub expected: String,
    pub found: String,
    /// `read` (a workload read), `warmup` or `read-back` (the check after the workload).
    pub during: String,
}

/// An iteration's verification.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct VerifySummary {
    /// Workload and read-back reads whose bytes were compared.
    pub reads_checked: u64,
    pub bytes_checked: u64,
    /// Bytes read back after the workload.
    pub read_back_bytes: u64,
    pub lost_writes: u64,
    pub stale_reads: u64,
    pub misplaced_writes: u64,
    pub torn_writes: u64,
    pub corrupt: u64,
    /// The first mismatches, with what was expected and what was found.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<Mismatch>,
}

impl VerifySummary {
    /// Mismatched blocks of every kind.
    pub fn total(&self) -> u64 {
        self.lost_writes
            + self.stale_reads
            + self.misplaced_writes
            + self.torn_writes
            + self.corrupt
    }

    /// Adds `other`'s counts (checked and mismatched) to these; the mismatches kept
    /// for display are left as they are.
    pub fn add_counts(&mut self, other: &VerifySummary) {
        self.reads_checked += other.reads_checked;
        self.bytes_checked += other.bytes_checked;
        self.read_back_bytes += other.read_back_bytes;
        self.lost_writes += other.lost_writes;
        self.stale_reads += other.stale_reads;
        self.misplaced_writes += other.misplaced_writes;
        self.torn_writes += other.torn_writes;
        self.corrupt += other.corrupt;
    }

    /// The counts by kind, in [`MismatchKind::ALL`] order.
    pub fn by_kind(&self) -> [(MismatchKind, u64); 5] {
        [
            (MismatchKind::LostWrite, self.lost_writes),
            (MismatchKind::StaleRead, self.stale_reads),
            (MismatchKind::MisplacedWrite, self.misplaced_writes),
            (MismatchKind::TornWrite, self.torn_writes),
            (MismatchKind::Corrupt, self.corrupt),
        ]
    }
}
