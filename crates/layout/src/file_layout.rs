//! A file's layout from its extents (on every system: the extents come from FIEMAP on
//! Linux, from retrieval pointers on Windows), and layouts added up over a tree.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::LayoutError;
use crate::extent::{
    EXTENT_DELALLOC, EXTENT_ENCODED, EXTENT_UNWRITTEN, Extent, count_like_filefrag,
};

/// The longest extents a file can have: what ideal extents are counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtentLimit {
    /// For plain data.
    pub bytes: u64,
    /// For compressed (encoded) data, where it differs.
    pub encoded_bytes: Option<u64>,
}

/// One file's layout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileLayout {
    pub path: PathBuf,
    /// The mounted file system's type (ext4, xfs, btrfs, ...).
    pub fs: String,
    pub size_bytes: u64,
    /// Bytes the file's extents cover (holes excluded; unwritten space included).
    pub mapped_bytes: u64,
    /// The block size offsets are counted in.
    pub block_bytes: u64,
    /// Extents as filefrag counts them (physically contiguous FIEMAP records join).
    pub extents: u64,
    /// FIEMAP records as the file system returned them.
    pub fiemap_records: u64,
    /// The fewest extents the file system could give this much data, from its longest
    /// extent; absent where naslab knows no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ideal_extents: Option<u64>,
    /// The longest extent used for `ideal_extents`, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_extent_bytes: Option<u64>,
    /// FIEMAP records flagged unwritten (allocated, never written: preallocation).
    pub unwritten_extents: u64,
    /// FIEMAP records flagged delalloc (no blocks yet); zero after a synced read.
    pub delalloc_extents: u64,
    /// Blocks with a known location.
    pub blocks: u64,
    /// Of those, blocks that sit right after the file's previous block on disk.
    pub following_blocks: u64,
    /// Runs of physically adjacent blocks: unlike `extents`, a hole always ends a run,
    /// even where the disk skips exactly as many blocks (filefrag's first FIEMAP code
    /// counted this way).
    pub physical_runs: u64,
}

impl FileLayout {
    /// Builds a layout from a file's extents.
    pub fn from_extents(
        path: PathBuf,
        fs: String,
        size_bytes: u64,
        block_bytes: u64,
        limit: Option<ExtentLimit>,
        extents: &[Extent],
    ) -> FileLayout {
        let bs = block_bytes.max(1);
        let (mut mapped, mut encoded) = (0u64, 0u64);
        let (mut unwritten, mut delalloc) = (0u64, 0u64);
        let (mut blocks, mut following) = (0u64, 0u64);
        let mut prev_end: Option<u64> = None;
        for e in extents {
            mapped += e.length;
            if e.has(EXTENT_ENCODED) {
                encoded += e.length;
            }
            if e.has(EXTENT_UNWRITTEN) {
                unwritten += 1;
            }
            if e.has(EXTENT_DELALLOC) {
                delalloc += 1;
            }
            if !e.location_known() || e.length == 0 {
                prev_end = None;
                continue;
            }
            let n = e.length.div_ceil(bs);
            blocks += n;
            following += n - 1;
            if prev_end == Some(e.physical) {
                following += 1;
            }
            prev_end = Some(e.physical.wrapping_add(e.length));
        }
        let ideal = limit.map(|l| ideal_extents(mapped, encoded, l));
        FileLayout {
            path,
            fs,
            size_bytes,
            mapped_bytes: mapped,
            block_bytes: bs,
            extents: count_like_filefrag(extents),
            fiemap_records: extents.len() as u64,
            ideal_extents: ideal,
            max_extent_bytes: limit.map(|l| l.bytes),
            unwritten_extents: unwritten,
            delalloc_extents: delalloc,
            blocks,
            following_blocks: following,
            physical_runs: blocks - following,
        }
    }

    /// Extents over ideal extents: 1.0 is as contiguous as the file system allows.
    /// Below 1.0 where maximal extents lie back to back, which filefrag counts as one.
    pub fn ratio(&self) -> Option<f64> {
        ratio(self.extents, self.ideal_extents?)
    }

    /// The share of blocks that sit right after their predecessor on disk (1.0: one run).
    pub fn score(&self) -> Option<f64> {
        score(self.following_blocks, self.blocks)
    }
}

pub(crate) fn ideal_extents(mapped: u64, encoded: u64, limit: ExtentLimit) -> u64 {
    let plain = mapped - encoded.min(mapped);
    let enc_limit = limit.encoded_bytes.unwrap_or(limit.bytes).max(1);
    let n = plain.div_ceil(limit.bytes.max(1)) + encoded.div_ceil(enc_limit);
    if mapped > 0 { n.max(1) } else { 0 }
}

fn ratio(extents: u64, ideal: u64) -> Option<f64> {
    (ideal > 0).then(|| extents as f64 / ideal as f64)
}

fn score(following: u64, blocks: u64) -> Option<f64> {
    (blocks >= 2).then(|| following as f64 / (blocks - 1) as f64)
}

/// Layouts added up over many files.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub files: u64,
    pub size_bytes: u64,
    pub extents: u64,
    /// Summed over the files with a known limit.
    pub ideal_extents: u64,
    /// Files without a known limit (not in `ideal_extents`).
    pub files_without_ideal: u64,
    pub unwritten_extents: u64,
    pub delalloc_extents: u64,
    pub blocks: u64,
    pub following_blocks: u64,
    /// Block pairs the score is over: each file's blocks less one.
    pub block_pairs: u64,
}

impl Totals {
    /// Adds one file.
    pub fn add(&mut self, f: &FileLayout) {
        self.files += 1;
        self.size_bytes += f.size_bytes;
        self.extents += f.extents;
        match f.ideal_extents {
            Some(i) => self.ideal_extents += i,
            None => self.files_without_ideal += 1,
        }
        self.unwritten_extents += f.unwritten_extents;
        self.delalloc_extents += f.delalloc_extents;
        self.blocks += f.blocks;
        self.following_blocks += f.following_blocks;
        self.block_pairs += f.blocks.saturating_sub(1);
    }

    /// Total extents over total ideal extents.
    pub fn ratio(&self) -> Option<f64> {
        ratio(self.extents, self.ideal_extents)
    }

    /// Following blocks over block pairs, across every file.
    pub fn score(&self) -> Option<f64> {
        (self.block_pairs > 0).then(|| self.following_blocks as f64 / self.block_pairs as f64)
    }
}

/// A file or directory that could not be read during a walk, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

/// A directory tree's layout: totals and the worst files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeLayout {
    pub root: PathBuf,
    pub totals: Totals,
    /// The files with the most extents beyond their ideal, worst first.
    pub worst: Vec<FileLayout>,
    /// The file with the most bytes (of equal sizes, the first by path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest: Option<FileLayout>,
    /// What could not be read.
    pub skipped: Vec<Skipped>,
}

/// How far a file is from its ideal, for ranking the worst.
fn excess(f: &FileLayout) -> (u64, u64) {
    (
        f.extents.saturating_sub(f.ideal_extents.unwrap_or(1)),
        f.extents,
    )
}

/// The totals and `top` worst files of the files `walk` passes on.
pub(crate) fn tree(
    root: &Path,
    top: usize,
    walk: impl FnOnce(
        &mut dyn FnMut(&Path, Result<FileLayout, LayoutError>),
    ) -> Result<Vec<Skipped>, LayoutError>,
) -> Result<TreeLayout, LayoutError> {
    let mut totals = Totals::default();
    let mut worst: Vec<FileLayout> = Vec::new();
    let mut largest: Option<FileLayout> = None;
    let mut errors: Vec<Skipped> = Vec::new();
    let keep = |worst: &mut Vec<FileLayout>| {
        worst.sort_by(|a, b| excess(b).cmp(&excess(a)).then_with(|| a.path.cmp(&b.path)));
        worst.truncate(top);
    };
    let mut skipped = walk(&mut |path, r| match r {
        Ok(f) => {
            totals.add(&f);
            let larger = largest.as_ref().is_none_or(|l| {
                (f.size_bytes, std::cmp::Reverse(&f.path))
                    > (l.size_bytes, std::cmp::Reverse(&l.path))
            });
            if larger {
                largest = Some(f.clone());
            }
            worst.push(f);
            if worst.len() > top.saturating_mul(4) + 64 {
                keep(&mut worst);
            }
        }
        Err(e) => errors.push(Skipped {
            path: path.to_path_buf(),
            reason: e.to_string(),
        }),
    })?;
    keep(&mut worst);
    skipped.extend(errors);
    Ok(TreeLayout {
        root: root.to_path_buf(),
        totals,
        worst,
        largest,
        skipped,
    })
}
