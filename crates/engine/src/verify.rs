//! `--verify`: keeps what every file of the workload should hold (which write made each
//! byte of each block), checks every read against it, reads everything back at the end,
//! and names each mismatch: a lost write, a stale read, a misplaced write, a torn write,
//! or corruption.
//!
//! Files are tracked per block: a block not written since preparation holds the
//! prepared generation, and a block written in pieces keeps one segment per piece.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use naslab_results::{Mismatch, MismatchKind, VerifySummary};
use naslab_trace::FileKind;

use crate::backend::{Backend, OpError, OpenHow};
use crate::data::{self, BLOCK, DataSpec, HEADER_LEN, PREPARED_GEN};
use crate::plan::Plan;

/// How many mismatches are kept with their details (all are counted).
pub const DETAILS_KEPT: usize = 100;
/// The piece size a block is compared in to tell a torn block from a foreign one.
const SECTOR: usize = 512;
/// Read-back chunk size.
const READ_BACK_CHUNK: usize = 1 << 20;

/// Where the bytes of one piece of a block came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    /// Never written, or cut off by a truncate: zeros.
    Zero,
    /// Written by write `gen`, keyed to `file` (the file it was written to, which a
    /// rename does not change).
    Data { file: u32, generation: u64 },
    /// A write that failed may or may not have landed: not checked.
    Unknown,
}

#[derive(Debug, Clone, Copy)]
struct Seg {
    start: u16,
    end: u16,
    src: Src,
}

/// One block's pieces (sorted, covering the block) and what its start held before the
/// last write over it.
#[derive(Debug, Clone)]
struct BlockState {
    segs: Vec<Seg>,
    prev: Option<Src>,
}

impl BlockState {
    fn whole(src: Src) -> BlockState {
        BlockState {
            segs: vec![Seg {
                start: 0,
                end: BLOCK as u16,
                src,
            }],
            prev: None,
        }
    }

    fn set(&mut self, start: usize, end: usize, src: Src) {
        let (s, e) = (start as u16, end as u16);
        let mut out = Vec::with_capacity(self.segs.len() + 2);
        for seg in &self.segs {
            if seg.end <= s || seg.start >= e {
                out.push(*seg);
                continue;
            }
            if seg.start < s {
                out.push(Seg { end: s, ..*seg });
            }
            if seg.end > e {
                out.push(Seg { start: e, ..*seg });
            }
        }
        out.push(Seg {
            start: s,
            end: e,
            src,
        });
        out.sort_by_key(|g| g.start);
        out.dedup_by(|b, a| {
            if a.src == b.src && a.end == b.start {
                a.end = b.end;
                true
            } else {
                false
            }
        });
        self.segs = out;
    }

    fn src_at(&self, at: usize) -> Src {
        self.segs
            .iter()
            .find(|g| (g.start as usize) <= at && at < g.end as usize)
            .map_or(Src::Zero, |g| g.src)
    }
}

/// What one file should hold.
#[derive(Debug, Default)]
struct FileShadow {
    exists: bool,
    size: u64,
    /// The prepared content's owner and length (blocks below it not in `blocks` hold it).
    base_file: u32,
    base_len: u64,
    blocks: HashMap<u64, BlockState>,
}

impl FileShadow {
    /// Block `b`'s state: the one kept for it, or what preparation left there.
    fn state(&self, b: u64) -> Cow<'_, BlockState> {
        if let Some(s) = self.blocks.get(&b) {
            return Cow::Borrowed(s);
        }
        let at = b * BLOCK as u64;
        if at >= self.base_len {
            return Cow::Owned(BlockState::whole(Src::Zero));
        }
        let mut s = BlockState::whole(Src::Zero);
        let n = (self.base_len - at).min(BLOCK as u64) as usize;
        s.set(
            0,
            n,
            Src::Data {
                file: self.base_file,
                generation: PREPARED_GEN,
            },
        );
        Cow::Owned(s)
    }

    fn state_mut(&mut self, b: u64) -> &mut BlockState {
        if !self.blocks.contains_key(&b) {
            let s = self.state(b).into_owned();
            self.blocks.insert(b, s);
        }
        self.blocks.get_mut(&b).expect("inserted above")
    }

    fn reset(&mut self) {
        *self = FileShadow {
            exists: true,
            ..FileShadow::default()
        };
    }

    fn write(&mut self, offset: u64, len: u64, src: Src) {
        let end = offset + len;
        let mut at = offset;
        while at < end {
            let b = at / BLOCK as u64;
            let within = (at % BLOCK as u64) as usize;
            let n = (BLOCK - within).min((end - at) as usize);
            let st = self.state_mut(b);
            st.prev = Some(st.src_at(0));
            st.set(within, within + n, src);
            at += n as u64;
        }
        self.size = self.size.max(end);
    }

    fn truncate(&mut self, len: u64) {
        if len < self.size {
            let keep = len.div_ceil(BLOCK as u64);
            self.blocks.retain(|&b, _| b < keep);
            let within = (len % BLOCK as u64) as usize;
            if within != 0 {
                self.state_mut(len / BLOCK as u64)
                    .set(within, BLOCK, Src::Zero);
            }
            self.base_len = self.base_len.min(len);
        }
        self.size = len;
    }
}

/// The verdict on a block whose bytes differ from what they should be.
struct Verdict {
    kind: MismatchKind,
    found: String,
}

/// What a run's workload files should hold, and every mismatch found.
pub struct Verifier {
    spec: DataSpec,
    files: Vec<Mutex<FileShadow>>,
    paths: Vec<String>,
    reads_checked: AtomicU64,
    bytes_checked: AtomicU64,
    read_back_bytes: AtomicU64,
    counts: [AtomicU64; MismatchKind::ALL.len()],
    details: Mutex<Vec<Mismatch>>,
}

impl Verifier {
    /// Tracks every file of `plan`; nothing exists until preparation says so.
    pub fn new(plan: &Plan, spec: DataSpec) -> Verifier {
        let entries = &plan.files.entries;
        Verifier {
            spec,
            files: entries
                .iter()
                .map(|_| Mutex::new(FileShadow::default()))
                .collect(),
            paths: entries.iter().map(|e| e.path.clone()).collect(),
            reads_checked: AtomicU64::new(0),
            bytes_checked: AtomicU64::new(0),
            read_back_bytes: AtomicU64::new(0),
            counts: Default::default(),
            details: Mutex::new(Vec::new()),
        }
    }

    /// The data every write must carry.
    pub fn spec(&self) -> &DataSpec {
        &self.spec
    }

    fn file(&self, file: u32) -> std::sync::MutexGuard<'_, FileShadow> {
        self.files[file as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Preparation wrote `len` bytes of generation 0 into `file`.
    pub fn prepared(&self, file: u32, len: u64) {
        let mut f = self.file(file);
        f.reset();
        f.base_file = file;
        f.base_len = len;
        f.size = len;
    }

    /// An open that creates or truncates the file succeeded.
    pub fn created(&self, file: u32) {
        self.file(file).reset();
    }

    /// The file's size as it should be (where an appending write lands).
    pub fn size(&self, file: u32) -> u64 {
        self.file(file).size
    }

    /// A write of `len` bytes of generation `gen` at `offset` succeeded (`ok`), or failed
    /// and may have landed in part.
    pub fn wrote(&self, file: u32, offset: u64, len: u64, generation: u64, ok: bool) {
        let src = if ok {
            Src::Data { file, generation }
        } else {
            Src::Unknown
        };
        let mut f = self.file(file);
        f.exists = true;
        f.write(offset, len, src);
    }

    pub fn truncated(&self, file: u32, len: u64) {
        self.file(file).truncate(len);
    }

    /// Space was allocated: the file grows, with zeros, if it ends before `end`.
    pub fn allocated(&self, file: u32, end: u64) {
        let mut f = self.file(file);
        if end > f.size {
            f.size = end;
        }
    }

    pub fn unlinked(&self, file: u32) {
        *self.file(file) = FileShadow::default();
    }

    pub fn renamed(&self, from: u32, to: u32) {
        let moved = std::mem::take(&mut *self.file(from));
        *self.file(to) = moved;
    }

    /// What block `b` of `file` should hold, whole, into `out`; `scratch` is one block.
    fn expected<'f>(
        &self,
        f: &'f FileShadow,
        b: u64,
        out: &mut [u8],
        scratch: &mut [u8],
    ) -> Cow<'f, BlockState> {
        let st = f.state(b);
        for seg in &st.segs {
            let (s, e) = (seg.start as usize, seg.end as usize);
            match seg.src {
                Src::Zero | Src::Unknown => out[s..e].fill(0),
                Src::Data { file, generation } => {
                    if s == 0 && e == BLOCK {
                        data::block(&self.spec, file, b, generation, out);
                    } else {
                        data::block(&self.spec, file, b, generation, scratch);
                        out[s..e].copy_from_slice(&scratch[s..e]);
                    }
                }
            }
        }
        st
    }

    /// Checks bytes read from `file` at `offset`; returns the mismatches found (each
    /// also counted). `work` is two blocks of room. `during` says when the read was made.
    pub fn check(
        &self,
        file: u32,
        offset: u64,
        found: &[u8],
        during: &'static str,
        work: &mut [u8],
    ) -> Vec<Mismatch> {
        let f = self.file(file);
        let mut bad = Vec::new();
        // Bytes past the end the file should have are not judged here: a concurrent
        // writer may have made them.
        let n = (found.len() as u64).min(f.size.saturating_sub(offset)) as usize;
        self.reads_checked.fetch_add(1, Ordering::Relaxed);
        self.bytes_checked.fetch_add(n as u64, Ordering::Relaxed);
        let (exp, scratch) = work.split_at_mut(BLOCK);
        let mut done = 0usize;
        while done < n {
            let at = offset + done as u64;
            let b = at / BLOCK as u64;
            let s = (at % BLOCK as u64) as usize;
            let len = (BLOCK - s).min(n - done);
            let got = &found[done..done + len];
            let st = self.expected(&f, b, exp, scratch);
            let e = s + len;
            let unknown = st
                .segs
                .iter()
                .any(|g| g.src == Src::Unknown && (g.start as usize) < e && s < g.end as usize);
            if !unknown && got != &exp[s..e] {
                let verdict = self.classify(file, &st, b, s, got, exp, scratch);
                bad.push(Mismatch {
                    file: self.paths[file as usize].clone(),
                    offset: at,
                    len: len as u64,
                    kind: verdict.kind,
                    expected: self.describe_expected(&st, b, s),
                    found: verdict.found,
                    during: during.to_string(),
                });
            }
            done += len;
        }
        drop(f);
        bad
    }

    /// Books mismatches (after any re-read has settled their kind).
    pub fn record(&self, found: Vec<Mismatch>) {
        if found.is_empty() {
            return;
        }
        let mut d = self.details.lock().unwrap_or_else(|e| e.into_inner());
        for m in found {
            self.counts[m.kind.index()].fetch_add(1, Ordering::Relaxed);
            if d.len() < DETAILS_KEPT {
                d.push(m);
            }
        }
    }

    fn describe_expected(&self, st: &BlockState, b: u64, s: usize) -> String {
        match st.src_at(s) {
            Src::Zero => format!("zeros (block {b}, never written or cut by a truncate)"),
            Src::Unknown => "bytes of a failed write".to_string(),
            Src::Data { file, generation } => self.describe_block(file, b, generation),
        }
    }

    fn describe_block(&self, file: u32, b: u64, generation: u64) -> String {
        let name = self.paths.get(file as usize).map_or("?", String::as_str);
        let g = if generation == PREPARED_GEN {
            "prepared".to_string()
        } else {
            format!("generation {generation:#x}")
        };
        format!("block {b} (offset {}) of '{name}', {g}", b * BLOCK as u64)
    }

    /// Names what a mismatched block holds instead. `got` is the block's bytes from
    /// `s`; `exp` the whole expected block.
    #[allow(clippy::too_many_arguments)]
    fn classify(
        &self,
        file: u32,
        st: &BlockState,
        b: u64,
        s: usize,
        got: &[u8],
        exp: &[u8],
        scratch: &mut [u8],
    ) -> Verdict {
        let e = s + got.len();
        let expect_src = st.src_at(s);
        if s == 0
            && got.len() >= HEADER_LEN
            && let Some(h) = data::read_header(got).filter(|h| h.head_ok)
        {
            let hd = h.header;
            let name = self.describe_block(hd.file, hd.block, hd.generation);
            if hd.seed != self.spec.seed {
                return Verdict {
                    kind: MismatchKind::MisplacedWrite,
                    found: format!("{name} of another run (seed {:#x})", hd.seed),
                };
            }
            // Its own block: of the file the expected bytes were written to, or (where
            // zeros are expected) of the file read.
            let owner = match expect_src {
                Src::Data { file, .. } => file,
                _ => file,
            };
            if hd.file != owner || hd.block != b {
                return Verdict {
                    kind: MismatchKind::MisplacedWrite,
                    found: name,
                };
            }
            data::block(&self.spec, hd.file, hd.block, hd.generation, scratch);
            let whole_old = scratch[s..e] == *got;
            let same_gen =
                matches!(expect_src, Src::Data { generation, .. } if generation == hd.generation);
            if !same_gen && whole_old {
                return Verdict {
                    kind: MismatchKind::LostWrite,
                    found: format!("{name} (an older version)"),
                };
            }
            return Verdict {
                kind: MismatchKind::TornWrite,
                found: format!(
                    "a header of {name} over bytes that do not match it{}",
                    if h.body_ok {
                        ""
                    } else {
                        " (its checksum fails)"
                    }
                ),
            };
        }
        // No usable header: compare piece by piece.
        let pieces = (s..e).step_by(SECTOR).filter(|&p| {
            let q = (p + SECTOR).min(e);
            exp[p..q].iter().any(|&x| x != 0) && got[p - s..q - s] == exp[p..q]
        });
        let matching = pieces.count();
        if matching > 0 {
            return Verdict {
                kind: MismatchKind::TornWrite,
                found: format!("{matching} of its 512-byte pieces as expected, the rest not"),
            };
        }
        match st.prev {
            Some(Src::Data { file, generation }) => {
                data::block(&self.spec, file, b, generation, scratch);
                if scratch[s..e] == *got {
                    return Verdict {
                        kind: MismatchKind::LostWrite,
                        found: format!(
                            "{} (an older version)",
                            self.describe_block(file, b, generation)
                        ),
                    };
                }
            }
            Some(Src::Zero) if got.iter().all(|&x| x == 0) => {
                return Verdict {
                    kind: MismatchKind::LostWrite,
                    found: "zeros, as before the write".to_string(),
                };
            }
            _ => {}
        }
        let first = got
            .iter()
            .zip(&exp[s..e])
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        Verdict {
            kind: MismatchKind::Corrupt,
            found: format!(
                "unrecognised bytes{} (first difference at byte {})",
                if got.iter().all(|&x| x == 0) {
                    ", all zero"
                } else {
                    ""
                },
                s + first
            ),
        }
    }

    /// Reads every file that should exist back through `backend` (after dropping its
    /// cached pages) and checks it all; a file shorter or longer than it should be is a
    /// mismatch too.
    pub fn read_back(&self, plan: &Plan, backend: &mut dyn Backend) -> Result<(), OpError> {
        let mut buf = crate::buffer::AlignedBuf::zeroed(READ_BACK_CHUNK);
        let mut work = vec![0u8; 2 * BLOCK];
        for (i, e) in plan.files.entries.iter().enumerate() {
            let i = i as u32;
            let (exists, size) = {
                let f = self.file(i);
                (f.exists, f.size)
            };
            if e.kind != FileKind::File || !exists {
                continue;
            }
            let _ = backend.drop_cache(i);
            let actual = match backend.stat(i) {
                Ok(n) => n,
                Err(err) if err.errno == crate::errno::ENOENT => {
                    self.record(vec![Mismatch {
                        file: e.path.clone(),
                        offset: 0,
                        len: size,
                        kind: MismatchKind::LostWrite,
                        expected: format!("a file of {size} bytes"),
                        found: "no such file".to_string(),
                        during: "read-back".to_string(),
                    }]);
                    continue;
                }
                Err(err) => return Err(err),
            };
            if actual != size {
                self.record(vec![Mismatch {
                    file: e.path.clone(),
                    offset: actual.min(size),
                    len: actual.abs_diff(size),
                    kind: if actual < size {
                        MismatchKind::LostWrite
                    } else {
                        MismatchKind::MisplacedWrite
                    },
                    expected: format!("a file of {size} bytes"),
                    found: format!("{actual} bytes"),
                    during: "read-back".to_string(),
                }]);
            }
            let how = OpenHow {
                read: true,
                ..OpenHow::default()
            };
            let h = backend.open(i, how)?;
            let mut at = 0u64;
            while at < size {
                let want = (size - at).min(READ_BACK_CHUNK as u64) as usize;
                let got = backend.read(h, at, &mut buf.as_mut_slice()[..want])?;
                if got == 0 {
                    break;
                }
                let bad = self.check(i, at, &buf.as_slice()[..got], "read-back", &mut work);
                self.record(bad);
                self.read_back_bytes
                    .fetch_add(got as u64, Ordering::Relaxed);
                at += got as u64;
            }
            backend.close(h)?;
        }
        Ok(())
    }

    /// Everything counted so far.
    pub fn summary(&self) -> VerifySummary {
        let c = |k: MismatchKind| self.counts[k.index()].load(Ordering::Relaxed);
        VerifySummary {
            reads_checked: self.reads_checked.load(Ordering::Relaxed),
            bytes_checked: self.bytes_checked.load(Ordering::Relaxed),
            read_back_bytes: self.read_back_bytes.load(Ordering::Relaxed),
            lost_writes: c(MismatchKind::LostWrite),
            stale_reads: c(MismatchKind::StaleRead),
            misplaced_writes: c(MismatchKind::MisplacedWrite),
            torn_writes: c(MismatchKind::TornWrite),
            corrupt: c(MismatchKind::Corrupt),
            mismatches: self
                .details
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_replace_and_merge() {
        let mut s = BlockState::whole(Src::Zero);
        let d = Src::Data {
            file: 1,
            generation: 2,
        };
        s.set(100, 200, d);
        assert_eq!(s.segs.len(), 3);
        assert_eq!(s.src_at(150), d);
        s.set(0, 100, d);
        assert_eq!(s.segs.len(), 2);
        s.set(0, BLOCK, Src::Zero);
        assert_eq!(s.segs.len(), 1);
    }
}
