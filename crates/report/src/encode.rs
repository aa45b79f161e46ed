//! Packing the report's data into the HTML page compactly: numeric columns as
//! little-endian typed arrays, byte-shuffled and zlib-compressed, then base64; and JSON
//! made safe to sit inside a `<script>` element.

use flate2::Compression;
use serde::Serialize;
use ts_rs::TS;

/// The element type of one packed column, as the browser's typed arrays name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    /// Float64Array.
    F64,
    /// Uint32Array.
    U32,
    /// Uint8Array.
    U8,
}

impl ColumnType {
    fn width(self) -> usize {
        match self {
            ColumnType::F64 => 8,
            ColumnType::U32 => 4,
            ColumnType::U8 => 1,
        }
    }
}

/// Where one column sits in a blob and how to unpack it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ColumnLayout {
    /// The column's name (`start_ns`, `file`, ...).
    pub name: &'static str,
    /// Its element type.
    #[serde(rename = "type")]
    pub ty: ColumnType,
    /// Byte offset of the column in the decompressed blob.
    pub offset: usize,
    /// Whether each value is stored as the difference from the one before (undo with a running sum).
    pub delta: bool,
}

/// A set of equally long columns packed into one compressed, base64 blob.
#[derive(Debug, Clone, Serialize, TS)]
pub struct BlobLayout {
    /// The blob's element id in the page.
    pub id: String,
    /// Rows in every column.
    pub rows: usize,
    /// Decompressed size in bytes.
    pub bytes: usize,
    /// The columns, in order.
    pub columns: Vec<ColumnLayout>,
}

/// Collects columns for one blob. Columns must be added widest type first, so every
/// column starts at an offset its typed array can view without copying.
pub struct BlobBuilder {
    id: String,
    rows: usize,
    /// The blob's bytes not yet handed to [`Self::deflate`]: under [`PIECE`].
    raw: Vec<u8>,
    /// How many bytes the blob holds so far.
    bytes: usize,
    /// zlib's checksum of the bytes handed over.
    adler: simd_adler32::Adler32,
    deflate: PieceDeflater,
    columns: Vec<ColumnLayout>,
    /// The column being shuffled, kept for the next one.
    planes: Vec<u8>,
}

/// Rows whose words are made at once before their bytes go to their planes.
const SHUFFLE_ROWS: usize = 256;

impl BlobBuilder {
    /// An empty blob of `rows` rows, to be placed in the page under element id `id`.
    pub fn new(id: impl Into<String>, rows: usize) -> Self {
        BlobBuilder {
            id: id.into(),
            rows,
            raw: Vec::new(),
            bytes: 0,
            adler: simd_adler32::Adler32::new(),
            deflate: PieceDeflater::new(),
            columns: Vec::new(),
            planes: Vec::new(),
        }
    }

    /// Appends a column of `W`-byte little-endian words, byte-shuffled: all first bytes,
    /// then all second bytes, and so on, which puts the mostly zero high bytes together
    /// for deflate to squeeze to almost nothing.
    fn push<const W: usize>(
        &mut self,
        name: &'static str,
        ty: ColumnType,
        delta: bool,
        words: impl Iterator<Item = [u8; W]>,
    ) {
        debug_assert_eq!(ty.width(), W);
        let offset = self.bytes;
        let rows = self.rows;
        // The shuffled column, made in one pass over the words: a few rows' words at a
        // time, each of their bytes then copied to its plane, W planes written in order.
        let mut planes = std::mem::take(&mut self.planes);
        planes.clear();
        planes.resize(rows * W, 0);
        let mut words = words.take(rows);
        let mut chunk = [[0u8; W]; SHUFFLE_ROWS];
        let mut row = 0;
        loop {
            let mut n = 0;
            for (slot, w) in chunk.iter_mut().zip(words.by_ref()) {
                *slot = w;
                n += 1;
            }
            if n == 0 {
                break;
            }
            for (b, plane) in planes.chunks_exact_mut(rows).enumerate() {
                for (dst, w) in plane[row..row + n].iter_mut().zip(&chunk[..n]) {
                    *dst = w[b];
                }
            }
            row += n;
        }
        debug_assert_eq!(row, rows, "a column of {rows} rows");
        // Each whole piece is handed to a thread to deflate as soon as it is full.
        let mut rest = &planes[..];
        while !rest.is_empty() {
            let take = (PIECE - self.raw.len()).min(rest.len());
            self.raw.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.raw.len() == PIECE {
                let piece = std::mem::replace(&mut self.raw, Vec::with_capacity(PIECE));
                self.adler.write(&piece);
                self.deflate.piece(piece);
            }
        }
        self.planes = planes;
        self.bytes += rows * W;
        self.columns.push(ColumnLayout {
            name,
            ty,
            offset,
            delta,
        });
    }

    /// Adds a Float64Array column; `delta` stores differences (for values that mostly grow).
    pub fn f64(&mut self, name: &'static str, values: &[f64], delta: bool) {
        let previous = std::iter::once(0.0).chain(values.iter().copied());
        let words = values
            .iter()
            .zip(previous)
            .map(move |(&v, prev)| if delta { v - prev } else { v }.to_le_bytes());
        self.push(name, ColumnType::F64, delta, words);
    }

    /// Adds a Uint32Array column.
    pub fn u32(&mut self, name: &'static str, values: &[u32]) {
        self.push(
            name,
            ColumnType::U32,
            false,
            values.iter().map(|v| v.to_le_bytes()),
        );
    }

    /// Adds a Uint8Array column.
    pub fn u8(&mut self, name: &'static str, values: &[u8]) {
        self.push(name, ColumnType::U8, false, values.iter().map(|&v| [v]));
    }

    /// Compresses the blob: its layout for the page's JSON, and its base64 text. The
    /// result is zlib, the format the browser's DecompressionStream("deflate") reads.
    pub fn finish(mut self) -> (BlobLayout, String) {
        self.adler.write(&self.raw);
        let compressed = self.deflate.finish(&self.raw, self.adler.finish());
        (
            BlobLayout {
                id: self.id,
                rows: self.rows,
                bytes: self.bytes,
                columns: self.columns,
            },
            base64(&compressed),
        )
    }
}

/// The raw blob is deflated in pieces of this many bytes, each on a thread of its own
/// while the next columns are packed. The pieces are fixed by their place in the blob,
/// so the page is the same bytes however many cores did the work.
const PIECE: usize = 4 << 20;

/// Deflates a blob's pieces in order on threads of their own, as many at once as
/// there are cores, each ended by a sync flush so that they join into one stream.
struct PieceDeflater {
    done: Vec<Vec<u8>>,
    running: std::collections::VecDeque<std::thread::JoinHandle<Vec<u8>>>,
    /// How many pieces are deflated at once: the cores (asked once, on the first
    /// piece; the answer reads the cgroup's files).
    cores: Option<usize>,
}

impl PieceDeflater {
    fn new() -> PieceDeflater {
        PieceDeflater {
            done: Vec::new(),
            running: std::collections::VecDeque::new(),
            cores: None,
        }
    }

    /// Deflates `piece`, a whole [`PIECE`] that more bytes follow.
    fn piece(&mut self, piece: Vec<u8>) {
        let cores = *self
            .cores
            .get_or_insert_with(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if self.running.len() >= cores {
            self.join_oldest();
        }
        let piece = std::sync::Arc::new(piece);
        let theirs = std::sync::Arc::clone(&piece);
        let spawned = std::thread::Builder::new()
            .name("report-deflate".into())
            .spawn(move || deflate_raw(&theirs, false));
        match spawned {
            Ok(h) => self.running.push_back(h),
            Err(_) => {
                // No thread to be had: deflate it here, after those before it.
                while !self.running.is_empty() {
                    self.join_oldest();
                }
                self.done.push(deflate_raw(&piece, false));
            }
        }
    }

    fn join_oldest(&mut self) {
        if let Some(h) = self.running.pop_front() {
            let out = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            self.done.push(out);
        }
    }

    /// The zlib stream: the header, every piece in order, `last` (the bytes after the
    /// last whole piece) ending the stream, and the checksum.
    fn finish(mut self, last: &[u8], adler: u32) -> Vec<u8> {
        let tail = deflate_raw(last, true);
        while !self.running.is_empty() {
            self.join_oldest();
        }
        let len = 2 + self.done.iter().map(Vec::len).sum::<usize>() + tail.len() + 4;
        let mut out = Vec::with_capacity(len);
        // zlib's header for deflate with a 32 KiB window at its fastest level, as
        // flate2 writes it at level 1.
        out.extend_from_slice(&[0x78, 0x01]);
        for piece in &self.done {
            out.extend_from_slice(piece);
        }
        out.extend_from_slice(&tail);
        out.extend_from_slice(&adler.to_be_bytes());
        out
    }
}

/// Raw deflate of `input` at level 1, ended by a sync flush (more follows) or, when
/// `last`, by the stream's final block.
fn deflate_raw(input: &[u8], last: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() / 3 + 64);
    let flush = if last {
        flate2::FlushCompress::Finish
    } else {
        flate2::FlushCompress::Sync
    };
    deflate_into(&mut fast_deflate(), input, &mut out, flush);
    out
}

/// A raw deflate stream at level 1: deflate's fast path is several times faster than
/// the default on shuffled columns, at a page a little larger; it matters at millions of
/// rows.
fn fast_deflate() -> flate2::Compress {
    flate2::Compress::new(Compression::new(1), false)
}

/// Feeds all of `input` to `c`, appending what it gives to `out`: with `None`, what it
/// has ready; with `Sync`, everything so far, ending on a byte boundary; with `Finish`,
/// everything, ending the stream.
fn deflate_into(
    c: &mut flate2::Compress,
    input: &[u8],
    out: &mut Vec<u8>,
    flush: flate2::FlushCompress,
) {
    use flate2::{FlushCompress, Status};
    let start = c.total_in();
    loop {
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity().max(4096));
        }
        let fed = (c.total_in() - start) as usize;
        let status = c
            .compress_vec(&input[fed..], out, flush)
            .expect("deflating into a Vec with room to spare");
        let all_in = (c.total_in() - start) as usize == input.len();
        match (status, flush) {
            (Status::StreamEnd, _) => return,
            (_, FlushCompress::None) if all_in => return,
            // A sync flush is complete once a call with all the input leaves room.
            (_, FlushCompress::Sync) if all_in && out.len() < out.capacity() => return,
            _ => {}
        }
    }
}

/// zlib's checksum of two byte strings one after the other, from the checksum of each
/// and the second's length.
fn adler32_combine(first: u32, second: u32, second_len: u64) -> u32 {
    const BASE: u64 = 65_521;
    let rem = second_len % BASE;
    let (a1, b1) = ((first & 0xffff) as u64, (first >> 16) as u64);
    let (a2, b2) = ((second & 0xffff) as u64, (second >> 16) as u64);
    let a = (a1 + a2 + BASE - 1) % BASE;
    let b = (rem * a1 % BASE + b1 + b2 + BASE - rem) % BASE;
    (a | (b << 16)) as u32
}

/// One byte plane of a [`RowsBlob`] column, deflated as it grows.
struct Plane {
    pending: Vec<u8>,
    deflate: flate2::Compress,
    out: Vec<u8>,
    adler: simd_adler32::Adler32,
    len: u64,
}

/// A plane's bytes deflated at a time.
const PLANE_CHUNK: usize = 64 << 10;

impl Plane {
    fn new() -> Plane {
        Plane {
            pending: Vec::with_capacity(PLANE_CHUNK),
            deflate: fast_deflate(),
            out: Vec::new(),
            adler: simd_adler32::Adler32::new(),
            len: 0,
        }
    }

    #[inline]
    fn push(&mut self, byte: u8) {
        self.pending.push(byte);
        if self.pending.len() == PLANE_CHUNK {
            self.deflate_pending(flate2::FlushCompress::None);
        }
    }

    fn deflate_pending(&mut self, flush: flate2::FlushCompress) {
        self.adler.write(&self.pending);
        self.len += self.pending.len() as u64;
        deflate_into(&mut self.deflate, &self.pending, &mut self.out, flush);
        self.pending.clear();
    }
}

/// A blob of equally long columns whose rows come one at a time, as the report's pass
/// meets the ops: each byte plane of each column is deflated as it grows, so only the
/// compressed planes are held, and nothing is left to pack when the last row has come.
/// It decompresses to what [`BlobBuilder`] packs from the same columns (the planes of
/// each column in turn, delta columns as differences); the compressed bytes differ, as
/// each plane is a deflate stream of its own, the streams joined in order.
pub struct RowsBlob {
    columns: Vec<(&'static str, ColumnType, bool)>,
    /// Each column's first plane in `planes`.
    first_plane: Vec<usize>,
    planes: Vec<Plane>,
    /// A delta column's last value.
    last: Vec<f64>,
    rows: usize,
}

impl RowsBlob {
    /// An empty blob of these columns (name, type, delta), widest type first.
    pub fn new(columns: &[(&'static str, ColumnType, bool)]) -> RowsBlob {
        let mut first_plane = Vec::with_capacity(columns.len());
        let mut planes = Vec::new();
        for &(_, ty, _) in columns {
            first_plane.push(planes.len());
            planes.extend((0..ty.width()).map(|_| Plane::new()));
        }
        RowsBlob {
            columns: columns.to_vec(),
            first_plane,
            planes,
            last: vec![0.0; columns.len()],
            rows: 0,
        }
    }

    #[inline]
    fn word<const W: usize>(&mut self, column: usize, word: [u8; W]) {
        let first = self.first_plane[column];
        for (plane, byte) in self.planes[first..first + W].iter_mut().zip(word) {
            plane.push(byte);
        }
    }

    /// The row's value of Float64Array column `column`.
    #[inline]
    pub fn f64(&mut self, column: usize, v: f64) {
        let stored = if self.columns[column].2 {
            let d = v - self.last[column];
            self.last[column] = v;
            d
        } else {
            v
        };
        self.word(column, stored.to_le_bytes());
    }

    /// The row's value of Uint32Array column `column`.
    #[inline]
    pub fn u32(&mut self, column: usize, v: u32) {
        self.word(column, v.to_le_bytes());
    }

    /// The row's value of Uint8Array column `column`.
    #[inline]
    pub fn u8(&mut self, column: usize, v: u8) {
        self.word(column, [v]);
    }

    /// Ends a row, every column's value given.
    #[inline]
    pub fn end_row(&mut self) {
        self.rows += 1;
    }

    /// Rows so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The blob's layout for the page's JSON, under element id `id`, and its base64
    /// text: one zlib stream.
    pub fn finish(mut self, id: impl Into<String>) -> (BlobLayout, String) {
        let last = self.planes.len().saturating_sub(1);
        let mut compressed = vec![0x78, 0x01];
        let mut adler = 1u32;
        for (i, plane) in self.planes.iter_mut().enumerate() {
            let flush = if i == last {
                flate2::FlushCompress::Finish
            } else {
                flate2::FlushCompress::Sync
            };
            plane.deflate_pending(flush);
            compressed.extend_from_slice(&plane.out);
            adler = adler32_combine(adler, plane.adler.finish(), plane.len);
        }
        if self.planes.is_empty() {
            compressed.extend_from_slice(&deflate_raw(&[], true));
        }
        compressed.extend_from_slice(&adler.to_be_bytes());
        let mut offset = 0;
        let columns = self
            .columns
            .iter()
            .map(|&(name, ty, delta)| {
                let c = ColumnLayout {
                    name,
                    ty,
                    offset,
                    delta,
                };
                offset += self.rows * ty.width();
                c
            })
            .collect();
        (
            BlobLayout {
                id: id.into(),
                rows: self.rows,
                bytes: offset,
                columns,
            },
            base64(&compressed),
        )
    }
}

/// Standard base64 with padding.
pub fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(data.len().div_ceil(3) * 4);
    let mut chunks = data.chunks_exact(3);
    for c in &mut chunks {
        let n = (c[0] as u32) << 16 | (c[1] as u32) << 8 | c[2] as u32;
        out.extend_from_slice(&[
            ALPHABET[(n >> 18) as usize & 63],
            ALPHABET[(n >> 12) as usize & 63],
            ALPHABET[(n >> 6) as usize & 63],
            ALPHABET[n as usize & 63],
        ]);
    }
    match *chunks.remainder() {
        [a] => {
            let n = (a as u32) << 16;
            out.extend_from_slice(&[
                ALPHABET[(n >> 18) as usize & 63],
                ALPHABET[(n >> 12) as usize & 63],
                b'=',
                b'=',
            ]);
        }
        [a, b] => {
            let n = (a as u32) << 16 | (b as u32) << 8;
            out.extend_from_slice(&[
                ALPHABET[(n >> 18) as usize & 63],
                ALPHABET[(n >> 12) as usize & 63],
                ALPHABET[(n >> 6) as usize & 63],
                b'=',
            ]);
        }
        _ => {}
    }
    // Every byte pushed comes from the ASCII alphabet.
    String::from_utf8(out).unwrap_or_default()
}

/// JSON that can sit inside `<script type="application/json">`: every `<` is escaped
/// (so no file name can close the element early), as are the line separators JavaScript
/// once treated as line ends.
pub fn script_json<T: Serialize>(value: &T) -> String {
    // The report's model holds only strings, numbers, maps and vectors: it always serialises.
    let text = serde_json::to_string(value).unwrap_or_else(|_| "null".into());
    text.replace('<', "\\u003c")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// Text that can sit inside an inline `<script>` or `<style>` element: a closing tag
/// sequence inside it is broken up.
pub fn inline_code(code: &str) -> String {
    code.replace("</script", "<\\/script")
        .replace("</style", "<\\/style")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn base64_matches_the_rfc_examples() {
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), enc);
        }
    }

    fn unbase64(text: &str) -> Vec<u8> {
        let val = |c: u8| match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            _ => 63,
        };
        let mut out = Vec::new();
        for chunk in text.as_bytes().chunks(4) {
            let pad = chunk.iter().filter(|&&c| c == b'=').count();
            let mut n = 0u32;
            for &c in chunk {
                n = n << 6 | if c == b'=' { 0 } else { val(c) as u32 };
            }
            let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
            out.extend_from_slice(&bytes[..3 - pad]);
        }
        out
    }

    #[test]
    fn a_blob_unpacks_to_its_columns() {
        let mut b = BlobBuilder::new("b0", 3);
        b.f64("t", &[10.0, 15.0, 40.0], true);
        b.u32("file", &[1, 2, 70_000]);
        b.u8("kind", &[3, 4, 5]);
        let (layout, text) = b.finish();
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(&unbase64(&text)[..])
            .read_to_end(&mut raw)
            .unwrap();
        assert_eq!(raw.len(), layout.bytes);
        let col = |name: &str| layout.columns.iter().find(|c| c.name == name).unwrap();
        let unshuffle = |offset: usize, w: usize, i: usize| -> Vec<u8> {
            (0..w).map(|b| raw[offset + b * 3 + i]).collect()
        };
        let t: Vec<f64> = (0..3)
            .map(|i| f64::from_le_bytes(unshuffle(col("t").offset, 8, i).try_into().unwrap()))
            .scan(0.0, |acc, d| {
                *acc += d;
                Some(*acc)
            })
            .collect();
        assert_eq!(t, [10.0, 15.0, 40.0]);
        let f: Vec<u32> = (0..3)
            .map(|i| u32::from_le_bytes(unshuffle(col("file").offset, 4, i).try_into().unwrap()))
            .collect();
        assert_eq!(f, [1, 2, 70_000]);
        assert_eq!(&raw[col("kind").offset..], &[3, 4, 5]);
    }

    /// What a blob's bytes are, packed in one pass with no pieces: each column's byte
    /// planes in turn.
    fn shuffled(columns: &[(Vec<[u8; 8]>, usize)]) -> Vec<u8> {
        let mut raw = Vec::new();
        for (words, width) in columns {
            for b in 0..*width {
                raw.extend(words.iter().map(|w| w[b]));
            }
        }
        raw
    }

    #[test]
    fn a_blob_of_many_pieces_is_one_zlib_stream_of_its_bytes() {
        // Three pieces and part of a fourth, the columns' planes crossing their bounds.
        let rows = 2 * PIECE / 8 + 12_345;
        let a: Vec<u32> = (0..rows as u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let t: Vec<f64> = (0..rows).map(|i| (i * i % 1_000_003) as f64).collect();
        let mut b = BlobBuilder::new("big", rows);
        b.f64("t", &t, false);
        b.u32("a", &a);
        let (layout, text) = b.finish();
        let z = unbase64(&text);
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(&z[..])
            .read_to_end(&mut raw)
            .unwrap();
        let widen = |w: &[u8]| {
            let mut x = [0u8; 8];
            x[..w.len()].copy_from_slice(w);
            x
        };
        let expected = shuffled(&[
            (t.iter().map(|v| v.to_le_bytes()).collect(), 8),
            (a.iter().map(|v| widen(&v.to_le_bytes())).collect(), 4),
        ]);
        assert_eq!(layout.bytes, expected.len());
        assert!(expected.len() > 3 * PIECE);
        assert!(raw == expected, "the blob's bytes differ");
        // The checksum was checked by the decoder; the stream ends where the text does.
        assert_eq!(
            &z[z.len() - 4..],
            &simd_adler32::adler32(&&expected[..]).to_be_bytes()
        );
    }

    #[test]
    fn a_blob_of_one_piece_is_what_zlib_makes_of_it() {
        use std::io::Write;
        let v: Vec<f64> = (0..10_000).map(|i| (i % 97) as f64).collect();
        let mut b = BlobBuilder::new("small", v.len());
        b.f64("v", &v, true);
        let (_, text) = b.finish();
        let mut raw = Vec::new();
        let mut prev = 0.0;
        let deltas: Vec<[u8; 8]> = v
            .iter()
            .map(|&x| {
                let d = (x - prev).to_le_bytes();
                prev = x;
                d
            })
            .collect();
        raw.extend(shuffled(&[(deltas, 8)]));
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), Compression::new(1));
        z.write_all(&raw).unwrap();
        assert_eq!(unbase64(&text), z.finish().unwrap());
    }

    #[test]
    fn checksums_combine_as_over_the_joined_bytes() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        for cut in [0, 1, 5_552, 65_521, 65_522, 131_042, 299_999, 300_000] {
            let (a, b) = data.split_at(cut);
            assert_eq!(
                adler32_combine(
                    simd_adler32::adler32(&a),
                    simd_adler32::adler32(&b),
                    b.len() as u64
                ),
                simd_adler32::adler32(&&data[..]),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn rows_given_one_at_a_time_unpack_to_what_the_whole_columns_pack() {
        let columns = [
            ("t", ColumnType::F64, true),
            ("v", ColumnType::F64, false),
            ("f", ColumnType::U32, false),
            ("k", ColumnType::U8, false),
        ];
        // Around the chunk a plane is deflated in, and across several.
        for rows in [
            0,
            1,
            7,
            PLANE_CHUNK - 1,
            PLANE_CHUNK,
            PLANE_CHUNK + 1,
            200_003,
        ] {
            let t: Vec<f64> = (0..rows).map(|i| (i * 1_000 + i % 7) as f64).collect();
            let v: Vec<f64> = (0..rows).map(|i| ((i * i) % 10_007) as f64 - 5.5).collect();
            let f: Vec<u32> = (0..rows as u32)
                .map(|i| i.wrapping_mul(2_654_435_761))
                .collect();
            let k: Vec<u8> = (0..rows).map(|i| (i % 13) as u8).collect();
            let mut streamed = RowsBlob::new(&columns);
            for i in 0..rows {
                streamed.f64(0, t[i]);
                streamed.f64(1, v[i]);
                streamed.u32(2, f[i]);
                streamed.u8(3, k[i]);
                streamed.end_row();
            }
            let (layout, text) = streamed.finish("s");
            let mut whole = BlobBuilder::new("s", rows);
            whole.f64("t", &t, true);
            whole.f64("v", &v, false);
            whole.u32("f", &f);
            whole.u8("k", &k);
            let (want_layout, want_text) = whole.finish();
            assert_eq!(
                serde_json::to_value(&layout).unwrap(),
                serde_json::to_value(&want_layout).unwrap(),
                "{rows} rows"
            );
            let inflate = |text: &str| {
                let mut raw = Vec::new();
                flate2::read::ZlibDecoder::new(&unbase64(text)[..])
                    .read_to_end(&mut raw)
                    .unwrap();
                raw
            };
            // The decoder checks the stream's checksum too.
            let raw = inflate(&text);
            assert_eq!(raw.len(), layout.bytes);
            assert!(raw == inflate(&want_text), "{rows} rows: the bytes differ");
        }
    }

    #[test]
    fn embedded_text_cannot_close_its_element() {
        let j = script_json(&vec!["</script><b>"]);
        assert!(!j.contains('<'), "{j}");
        assert_eq!(inline_code("a</script>b"), "a<\\/script>b");
    }
}
