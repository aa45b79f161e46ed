//! What bytes naslab writes: every 4 KiB block's content is a pure function of the run's
//! seed, the file, the block's offset and the write that made it (its generation), so
//! each block written is unique unless a mode asks for compressible or duplicate data,
//! and any block can be generated again to check what a read returned.
//!
//! The generator runs in counter mode (word `i` of a block is a mix of the block's key
//! and `i`), so any part of any block can be made without making what comes before it.

use std::fmt;
use std::str::FromStr;

/// The unit content is keyed by: every 4 KiB block of a file has its own.
pub const BLOCK: usize = 4096;
/// With `--verify`, the bytes at the start of each block that describe it.
pub const HEADER_LEN: usize = 48;
/// The size of the pieces `compress:PCT` splits a block into, each part random and part
/// zero (fio's default `buffer_compress_chunk`).
pub const COMPRESS_CHUNK: usize = 512;
/// Marks a self-describing block ("naslabV1" little-endian).
const MAGIC: u64 = u64::from_le_bytes(*b"naslabV1");
/// The generation of the blocks preparation writes.
pub const PREPARED_GEN: u64 = 0;

/// The content of written blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DataMode {
    /// Every block unique and incompressible.
    #[default]
    Random,
    /// Every byte zero.
    Zero,
    /// Each 512-byte piece of a block is PCT % zeros after random bytes, so the data
    /// compresses by about PCT % (fio's `buffer_compress_percentage`).
    Compress(u8),
    /// PCT % of blocks are one and the same block; the rest are unique and random
    /// (fio's `dedupe_percentage`).
    Dedupe(u8),
}

impl FromStr for DataMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let pct = |v: &str, what: &str| -> Result<u8, String> {
            let p: u8 = v.trim_end_matches('%').parse().map_err(|_| {
                format!("'{s}': {what} needs a percentage from 0 to 100, e.g. {what}:50")
            })?;
            if p > 100 {
                return Err(format!("'{s}': the percentage must be from 0 to 100"));
            }
            Ok(p)
        };
        match s.split_once(':') {
            None if s == "random" => Ok(DataMode::Random),
            None if s == "zero" => Ok(DataMode::Zero),
            Some(("compress", v)) => pct(v, "compress").map(DataMode::Compress),
            Some(("dedupe", v)) => pct(v, "dedupe").map(DataMode::Dedupe),
            _ => Err(format!(
                "unknown data mode '{s}': use random, zero, compress:PCT or dedupe:PCT"
            )),
        }
    }
}

impl fmt::Display for DataMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataMode::Random => write!(f, "random"),
            DataMode::Zero => write!(f, "zero"),
            DataMode::Compress(p) => write!(f, "compress:{p}"),
            DataMode::Dedupe(p) => write!(f, "dedupe:{p}"),
        }
    }
}

/// What a run writes: the mode, the seed that makes its blocks its own, and whether
/// blocks carry a header for `--verify`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataSpec {
    pub mode: DataMode,
    pub seed: u64,
    pub verify: bool,
}

impl DataSpec {
    /// Whether every byte written is zero (zero data without `--verify` headers): a
    /// buffer that started zeroed and only ever held such data needs no filling.
    pub fn only_zeros(&self) -> bool {
        self.mode == DataMode::Zero && !self.verify
    }
}

/// The mixing step of the generator (wyhash's multiply-fold).
#[inline(always)]
fn mum(a: u64, b: u64) -> u64 {
    let t = (a as u128).wrapping_mul(b as u128);
    (t >> 64) as u64 ^ t as u64
}

const P0: u64 = 0xa076_1d64_78bd_642f;
const P1: u64 = 0xe703_7ed1_a0b4_28db;
const P2: u64 = 0x8ebc_6af0_9c88_c6e3;

/// Word `i` of the stream keyed by `key`.
#[inline(always)]
fn word(key: u64, i: u64) -> u64 {
    let s = key.wrapping_add(i.wrapping_mul(P0));
    mum(s, s ^ P1)
}

/// The key of one block's random bytes.
#[inline]
pub fn block_key(seed: u64, file: u32, block: u64, generation: u64) -> u64 {
    let k = mum(seed ^ P0, (file as u64) ^ P1);
    let k = mum(k ^ block, P2 ^ generation.rotate_left(17));
    mum(k ^ generation, P0)
}

/// Fills `out` (at most one block) with words `first..` of the stream of `key`; `out`
/// starts at byte `first * 8` of the block.
#[inline]
fn fill_words(out: &mut [u8], key: u64, first: u64) {
    let mut chunks = out.chunks_exact_mut(8);
    let mut i = first;
    for c in &mut chunks {
        c.copy_from_slice(&word(key, i).to_le_bytes());
        i += 1;
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        let w = word(key, i).to_le_bytes();
        let n = rest.len();
        rest.copy_from_slice(&w[..n]);
    }
}

/// Whether block `block` of `file` is one of the duplicates under `dedupe:pct`: exactly
/// `pct` of every 100 consecutive blocks are, at a phase that differs between files.
#[inline]
pub fn is_dedupe_block(seed: u64, file: u32, block: u64, pct: u8) -> bool {
    let i = block.wrapping_add(mum(seed ^ P2, file as u64 ^ P0) % 100);
    let p = pct as u64;
    (i.wrapping_add(1)).wrapping_mul(p) / 100 != i.wrapping_mul(p) / 100
}

/// One block's whole content into `out` (exactly [`BLOCK`] bytes).
pub fn block(spec: &DataSpec, file: u32, block: u64, generation: u64, out: &mut [u8]) {
    debug_assert_eq!(out.len(), BLOCK);
    let key = block_key(spec.seed, file, block, generation);
    match spec.mode {
        DataMode::Random => fill_words(out, key, 0),
        DataMode::Zero => out.fill(0),
        DataMode::Compress(pct) => {
            let random = COMPRESS_CHUNK * (100 - pct as usize) / 100;
            for (c, chunk) in out.chunks_mut(COMPRESS_CHUNK).enumerate() {
                let first = (c * COMPRESS_CHUNK / 8) as u64;
                let r = random.min(chunk.len());
                fill_words(&mut chunk[..r], key, first);
                chunk[r..].fill(0);
            }
        }
        DataMode::Dedupe(pct) => {
            if is_dedupe_block(spec.seed, file, block, pct) {
                // Every duplicate is the same block, keyed by the seed alone.
                fill_words(out, block_key(spec.seed, u32::MAX, u64::MAX, u64::MAX), 0);
            } else {
                fill_words(out, key, 0);
            }
        }
    }
    if spec.verify {
        write_header(
            out,
            &Header {
                seed: spec.seed,
                file,
                block,
                generation,
            },
        );
    }
}

/// Fills `buf` with what a write of `buf.len()` bytes at `offset` of `file` holds in
/// generation `gen`. `scratch` is one block of room for partly covered blocks.
pub fn fill(
    spec: &DataSpec,
    file: u32,
    offset: u64,
    generation: u64,
    buf: &mut [u8],
    scratch: &mut [u8],
) {
    if spec.only_zeros() {
        buf.fill(0);
        return;
    }
    let mut done = 0usize;
    while done < buf.len() {
        let at = offset + done as u64;
        let b = at / BLOCK as u64;
        let within = (at % BLOCK as u64) as usize;
        let n = (BLOCK - within).min(buf.len() - done);
        if n == BLOCK {
            block(spec, file, b, generation, &mut buf[done..done + BLOCK]);
        } else {
            block(spec, file, b, generation, &mut scratch[..BLOCK]);
            buf[done..done + n].copy_from_slice(&scratch[within..within + n]);
        }
        done += n;
    }
}

/// What a self-describing block says about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub seed: u64,
    pub file: u32,
    pub block: u64,
    pub generation: u64,
}

/// A block's header as read: what it says and which of its checks pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadHeader {
    pub header: Header,
    /// The magic and the header's own checksum match.
    pub head_ok: bool,
    /// The checksum of the rest of the block matches.
    pub body_ok: bool,
}

/// A checksum of bytes, in four independent lanes of eight bytes (any tail zero-padded).
fn checksum(bytes: &[u8], salt: u64) -> u32 {
    let mut lanes = [salt ^ P1, P2, P0, salt];
    let mut quads = bytes.chunks_exact(32);
    for q in &mut quads {
        for (j, lane) in lanes.iter_mut().enumerate() {
            let w = u64::from_le_bytes(q[j * 8..j * 8 + 8].try_into().expect("8 bytes"));
            *lane = lane.rotate_left(5) ^ w.wrapping_mul(P2 | 1);
        }
    }
    let mut tail = [0u8; 32];
    tail[..quads.remainder().len()].copy_from_slice(quads.remainder());
    for (j, lane) in lanes.iter_mut().enumerate() {
        let w = u64::from_le_bytes(tail[j * 8..j * 8 + 8].try_into().expect("8 bytes"));
        *lane = lane.rotate_left(5) ^ w.wrapping_mul(P2 | 1);
    }
    let m = mum(
        lanes[0] ^ lanes[2],
        lanes[1] ^ lanes[3] ^ bytes.len() as u64,
    );
    (m ^ (m >> 32)) as u32
}

/// Writes `h` and the checksums over the first [`HEADER_LEN`] bytes of a whole block.
fn write_header(out: &mut [u8], h: &Header) {
    out[0..8].copy_from_slice(&MAGIC.to_le_bytes());
    out[8..16].copy_from_slice(&h.seed.to_le_bytes());
    out[16..20].copy_from_slice(&h.file.to_le_bytes());
    out[20..24].copy_from_slice(&0u32.to_le_bytes());
    out[24..32].copy_from_slice(&h.block.to_le_bytes());
    out[32..40].copy_from_slice(&h.generation.to_le_bytes());
    let body = checksum(&out[HEADER_LEN..], 1);
    out[44..48].copy_from_slice(&body.to_le_bytes());
    let head = checksum(&out[0..40], 2) ^ body.rotate_left(7);
    out[40..44].copy_from_slice(&head.to_le_bytes());
}

/// Reads the header at the start of `blk` (a whole block, or at least its header: the
/// body's checksum is then reported as not matching). `None` without the magic.
pub fn read_header(blk: &[u8]) -> Option<ReadHeader> {
    if blk.len() < HEADER_LEN || u64::from_le_bytes(blk[0..8].try_into().ok()?) != MAGIC {
        return None;
    }
    let u64_at = |i: usize| u64::from_le_bytes(blk[i..i + 8].try_into().expect("8 bytes"));
    let u32_at = |i: usize| u32::from_le_bytes(blk[i..i + 4].try_into().expect("4 bytes"));
    let header = Header {
        seed: u64_at(8),
        file: u32_at(16),
        block: u64_at(24),
        generation: u64_at(32),
    };
    let body_sum = u32_at(44);
    let head_ok = checksum(&blk[0..40], 2) ^ body_sum.rotate_left(7) == u32_at(40);
    let body_ok = blk.len() == BLOCK && checksum(&blk[HEADER_LEN..], 1) == body_sum;
    Some(ReadHeader {
        header,
        head_ok,
        body_ok,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(mode: DataMode, verify: bool) -> DataSpec {
        DataSpec {
            mode,
            seed: 42,
            verify,
        }
    }

    #[test]
    fn modes_parse_and_print_back() {
        for s in ["random", "zero", "compress:50", "dedupe:25", "compress:0"] {
            assert_eq!(s.parse::<DataMode>().unwrap().to_string(), s);
        }
        assert!("compress:101".parse::<DataMode>().is_err());
        assert!("dedupe".parse::<DataMode>().is_err());
        assert!("ones".parse::<DataMode>().is_err());
    }

    #[test]
    fn a_partial_fill_is_the_same_bytes_as_the_whole_blocks() {
        for verify in [false, true] {
            let s = spec(DataMode::Compress(30), verify);
            let mut whole = vec![0u8; 3 * BLOCK];
            let mut scratch = vec![0u8; BLOCK];
            fill(&s, 7, 0, 9, &mut whole, &mut scratch);
            let mut part = vec![0u8; 5000];
            fill(&s, 7, 1234, 9, &mut part, &mut scratch);
            assert_eq!(&part[..], &whole[1234..6234]);
        }
    }

    #[test]
    fn blocks_differ_by_file_offset_and_generation() {
        let s = spec(DataMode::Random, false);
        let mk = |f, b, g| {
            let mut v = vec![0u8; BLOCK];
            block(&s, f, b, g, &mut v);
            v
        };
        let a = mk(1, 0, 0);
        assert_ne!(a, mk(2, 0, 0));
        assert_ne!(a, mk(1, 1, 0));
        assert_ne!(a, mk(1, 0, 1));
        assert_eq!(a, mk(1, 0, 0));
    }

    #[test]
    fn headers_describe_their_block_and_notice_damage() {
        let s = spec(DataMode::Random, true);
        let mut v = vec![0u8; BLOCK];
        block(&s, 3, 17, 5, &mut v);
        let h = read_header(&v).unwrap();
        assert!(h.head_ok && h.body_ok);
        assert_eq!(
            h.header,
            Header {
                seed: 42,
                file: 3,
                block: 17,
                generation: 5
            }
        );
        v[3000] ^= 1;
        let h = read_header(&v).unwrap();
        assert!(h.head_ok && !h.body_ok);
        v[20] ^= 1;
        assert!(!read_header(&v).unwrap().head_ok);
        assert!(read_header(&[0u8; BLOCK]).is_none());
    }

    #[test]
    fn dedupe_selects_exactly_its_share_of_blocks() {
        for pct in [0u8, 1, 30, 50, 100] {
            let n = (0..1000).filter(|&b| is_dedupe_block(9, 4, b, pct)).count();
            assert_eq!(n, pct as usize * 10, "dedupe:{pct}");
        }
    }
}
