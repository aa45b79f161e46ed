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

/// A raw deflate stream at level 1: deflate's fast path is several times faster than
/// the default on shuffled columns, at a page a little larger; it matters at millions of
/// rows.
fn fast_deflate() -> flate2::Compress {
    flate2::Compress::new(Compression::new(1), false)
}

/// Feeds all of `input` to `c`, appending what it gives to `out`: with `None`, what it
/// has ready; with `Sync`, everything so far, ending on a byte boundary; with `Finish`,
/// everything, ending the stream.
///
/// A call that fills `out` may leave compressed bytes inside `c`, and the next call,
/// whatever its flush, only hands those over: it compresses nothing more and, with
/// `Sync`, does not flush. So a call is trusted to have done its work only if it left
/// room in `out` and the call before it did too (nothing was held back when it began).
/// Every call here returns with room left, so the next one begins with nothing held.
fn deflate_into(
    c: &mut flate2::Compress,
    input: &[u8],
    out: &mut Vec<u8>,
    flush: flate2::FlushCompress,
) {
    use flate2::{FlushCompress, Status};
    let start = c.total_in();
    // Whether bytes may be held inside `c`: only after a call that filled `out`.
    let mut held = false;
    loop {
        if out.capacity() - out.len() < 64 {
            out.reserve(out.capacity().max(4096));
        }
        let fed = (c.total_in() - start) as usize;
        let status = c
            .compress_vec(&input[fed..], out, flush)
            .expect("deflating into a Vec with room to spare");
        let began_clear = !held;
        held = out.len() == out.capacity();
        let all_in = (c.total_in() - start) as usize == input.len();
        match (status, flush) {
            (Status::StreamEnd, _) => return,
            (_, FlushCompress::None) if all_in && !held => return,
            // A sync flush is complete once a call that began with nothing held takes
            // the last of the input and leaves room.
            (_, FlushCompress::Sync) if all_in && !held && began_clear => {
                // A sync flush ends with an empty stored block's lengths.
                debug_assert!(out.ends_with(&[0, 0, 0xff, 0xff]), "a sync flush's end");
                return;
            }
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

/// A [`BlobBuilder`] column: its name, its type, and whether each value is stored as the
/// difference from the one before.
pub type BlobColumn = (&'static str, ColumnType, bool);

/// One byte plane of a [`BlobBuilder`] column, deflated as it grows. Its buffer and
/// deflate state are made when it first needs them, so a small blob costs little.
struct Plane {
    pending: Vec<u8>,
    deflate: Option<flate2::Compress>,
    out: Vec<u8>,
    adler: simd_adler32::Adler32,
}

/// A plane's bytes deflated at a time.
const PLANE_CHUNK: usize = 64 << 10;

impl Plane {
    fn new() -> Plane {
        Plane {
            pending: Vec::new(),
            deflate: None,
            out: Vec::new(),
            adler: simd_adler32::Adler32::new(),
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
        let deflate = self.deflate.get_or_insert_with(fast_deflate);
        deflate_into(deflate, &self.pending, &mut self.out, flush);
        self.pending.clear();
    }
}

/// A blob of equally long columns, packed as the page reads them: each column's
/// little-endian words byte-shuffled (all first bytes, then all second bytes, and so on,
/// which puts the mostly zero high bytes together for deflate to squeeze to almost
/// nothing), the columns one after another in the order given. Rows come one at a time, as the
/// report's pass meets the ops: each byte plane is deflated as it grows, so only the
/// compressed planes are held and nothing is left to pack after the last row. The blob
/// is one zlib stream, the format the browser's DecompressionStream("deflate") reads:
/// each plane a raw deflate stream of its own, ended on a byte boundary, the streams
/// joined in order and their checksums combined.
pub struct BlobBuilder {
    columns: Vec<BlobColumn>,
    /// Each column's first plane in `planes`.
    first_plane: Vec<usize>,
    planes: Vec<Plane>,
    /// A delta column's last value.
    last: Vec<f64>,
    rows: usize,
}

impl BlobBuilder {
    /// An empty blob of these columns.
    pub fn new(columns: &[BlobColumn]) -> BlobBuilder {
        let mut first_plane = Vec::with_capacity(columns.len());
        let mut planes = Vec::new();
        for &(_, ty, _) in columns {
            first_plane.push(planes.len());
            planes.extend((0..ty.width()).map(|_| Plane::new()));
        }
        BlobBuilder {
            columns: columns.to_vec(),
            first_plane,
            planes,
            last: vec![0.0; columns.len()],
            rows: 0,
        }
    }

    #[inline]
    fn word<const W: usize>(&mut self, column: usize, word: [u8; W]) {
        debug_assert_eq!(
            self.columns[column].1.width(),
            W,
            "a value of the column's type"
        );
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
            // Every plane holds one byte a row.
            adler = adler32_combine(adler, plane.adler.finish(), self.rows as u64);
        }
        if self.planes.is_empty() {
            deflate_into(
                &mut fast_deflate(),
                &[],
                &mut compressed,
                flate2::FlushCompress::Finish,
            );
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

    fn inflate(text: &str) -> Vec<u8> {
        let mut raw = Vec::new();
        // The decoder checks the stream's checksum too.
        flate2::read::ZlibDecoder::new(&unbase64(text)[..])
            .read_to_end(&mut raw)
            .unwrap();
        raw
    }

    #[test]
    fn a_blob_unpacks_to_its_columns() {
        let mut b = BlobBuilder::new(&[
            ("t", ColumnType::F64, true),
            ("file", ColumnType::U32, false),
            ("kind", ColumnType::U8, false),
        ]);
        for (t, file, kind) in [(10.0, 1, 3), (15.0, 2, 4), (40.0, 70_000, 5)] {
            b.f64(0, t);
            b.u32(1, file);
            b.u8(2, kind);
            b.end_row();
        }
        let (layout, text) = b.finish("b0");
        assert_eq!((layout.id.as_str(), layout.rows), ("b0", 3));
        let raw = inflate(&text);
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

    /// What a blob's bytes are, packed plainly: each column's byte planes in turn.
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
    fn a_blob_of_many_rows_is_one_zlib_stream_of_its_shuffled_columns() {
        let widen = |w: &[u8]| {
            let mut x = [0u8; 8];
            x[..w.len()].copy_from_slice(w);
            x
        };
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
            let mut b = BlobBuilder::new(&[
                ("t", ColumnType::F64, true),
                ("v", ColumnType::F64, false),
                ("f", ColumnType::U32, false),
                ("k", ColumnType::U8, false),
            ]);
            for i in 0..rows {
                b.f64(0, t[i]);
                b.f64(1, v[i]);
                b.u32(2, f[i]);
                b.u8(3, k[i]);
                b.end_row();
            }
            let (layout, text) = b.finish("s");
            let deltas = t
                .iter()
                .scan(0.0, |prev, &x| {
                    let d = x - *prev;
                    *prev = x;
                    Some(d.to_le_bytes())
                })
                .collect();
            let expected = shuffled(&[
                (deltas, 8),
                (v.iter().map(|x| x.to_le_bytes()).collect(), 8),
                (f.iter().map(|x| widen(&x.to_le_bytes())).collect(), 4),
                (k.iter().map(|&x| widen(&[x])).collect(), 1),
            ]);
            let columns: Vec<_> = layout
                .columns
                .iter()
                .map(|c| (c.name, c.ty, c.offset, c.delta))
                .collect();
            assert_eq!(
                columns,
                [
                    ("t", ColumnType::F64, 0, true),
                    ("v", ColumnType::F64, 8 * rows, false),
                    ("f", ColumnType::U32, 16 * rows, false),
                    ("k", ColumnType::U8, 20 * rows, false),
                ],
                "{rows} rows"
            );
            assert_eq!((layout.rows, layout.bytes), (rows, expected.len()));
            assert!(inflate(&text) == expected, "{rows} rows: the bytes differ");
            let z = unbase64(&text);
            assert_eq!(
                &z[z.len() - 4..],
                &simd_adler32::adler32(&&expected[..]).to_be_bytes(),
                "{rows} rows: the stream ends with the blob's checksum"
            );
        }
    }

    /// A plane's stream as the packer makes it, with `out` starting at `room` bytes of
    /// capacity: `data` fed in chunks, then a sync flush; then a second stream of `data`
    /// finished. The two joined must inflate (raw) to `data` twice, whatever the room:
    /// when a chunk's last block does not fit, the compressor holds the rest back, and the
    /// sync flush must still happen after it.
    fn joined_streams(data: &[u8], room: usize) -> Result<Vec<u8>, String> {
        use flate2::FlushCompress;
        let mut out = Vec::with_capacity(room);
        let mut c = fast_deflate();
        for chunk in data.chunks(PLANE_CHUNK) {
            deflate_into(&mut c, chunk, &mut out, FlushCompress::None);
        }
        deflate_into(&mut c, &[], &mut out, FlushCompress::Sync);
        deflate_into(&mut fast_deflate(), data, &mut out, FlushCompress::Finish);
        let mut raw = Vec::new();
        flate2::read::DeflateDecoder::new(&out[..])
            .read_to_end(&mut raw)
            .map_err(|e| format!("{e} after {} bytes", raw.len()))?;
        Ok(raw)
    }

    #[test]
    fn a_sync_flush_after_a_full_buffer_still_ends_the_stream_on_a_byte_boundary() {
        let mut rng = Rng(7);
        // Incompressible bytes, then bytes of a few values: blocks of every size.
        for (k, data) in [
            (0..3 * PLANE_CHUNK / 2)
                .map(|_| rng.next() as u8)
                .collect::<Vec<u8>>(),
            (0..PLANE_CHUNK).map(|_| (rng.next() % 5) as u8).collect(),
        ]
        .into_iter()
        .enumerate()
        {
            let twice = [&data[..], &data[..]].concat();
            for room in (64..120_000).step_by(1_013) {
                let raw = joined_streams(&data, room);
                assert!(
                    raw == Ok(twice.clone()),
                    "data {k}, room {room}: {:?}",
                    raw.map(|r| r.len())
                );
            }
        }
    }

    /// A small deterministic generator (xorshift64*), so a failing case can be replayed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    /// Packs many random sets of columns (types, delta or not, lengths around and across
    /// the chunk a plane is deflated in, values from constant to incompressible) and
    /// inflates each blob with flate2's decoder, which checks the stream's structure and
    /// checksum independently of the packer: every blob must come back as its shuffled
    /// columns, to the byte. The same bytes also go through one plane's stream with its
    /// buffer starting at a random room, as the packer meets it part-way through a blob.
    #[test]
    fn random_column_sets_inflate_to_their_columns() {
        let types = [ColumnType::F64, ColumnType::U32, ColumnType::U8];
        let names = ["a", "b", "c", "d", "e", "f"];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut packed = 0usize;
        for case in 0..40 {
            let rows = match case % 4 {
                0 => rng.below(300) as usize,
                1 => PLANE_CHUNK * (1 + rng.below(4) as usize) + rng.below(3) as usize - 1,
                _ => rng.below(5 * PLANE_CHUNK as u64) as usize,
            };
            let columns: Vec<BlobColumn> = (0..1 + rng.below(5) as usize)
                .map(|c| {
                    let ty = types[rng.below(3) as usize];
                    (names[c], ty, ty == ColumnType::F64 && rng.below(2) == 0)
                })
                .collect();
            // Per column, how random its values are: the bits of each value kept.
            let bits: Vec<u64> = columns
                .iter()
                .map(|_| [0, 3, 12, 40, 64][rng.below(5) as usize])
                .collect();
            let mut b = BlobBuilder::new(&columns);
            let mut values: Vec<Vec<[u8; 8]>> = vec![Vec::with_capacity(rows); columns.len()];
            let mut last = vec![0.0f64; columns.len()];
            for _ in 0..rows {
                for (c, &(_, ty, delta)) in columns.iter().enumerate() {
                    let mask = if bits[c] == 64 {
                        u64::MAX
                    } else {
                        (1u64 << bits[c]) - 1
                    };
                    let r = rng.next() & mask;
                    let word = match ty {
                        ColumnType::F64 => {
                            let v = if bits[c] == 64 {
                                f64::from_bits(r)
                            } else {
                                r as f64
                            };
                            b.f64(c, v);
                            let stored = if delta {
                                let d = v - last[c];
                                last[c] = v;
                                d
                            } else {
                                v
                            };
                            stored.to_le_bytes()
                        }
                        ColumnType::U32 => {
                            b.u32(c, r as u32);
                            let mut w = [0u8; 8];
                            w[..4].copy_from_slice(&(r as u32).to_le_bytes());
                            w
                        }
                        ColumnType::U8 => {
                            b.u8(c, r as u8);
                            [r as u8, 0, 0, 0, 0, 0, 0, 0]
                        }
                    };
                    values[c].push(word);
                }
                b.end_row();
            }
            let (layout, text) = b.finish("p");
            let expected = shuffled(
                &values
                    .into_iter()
                    .zip(&columns)
                    .map(|(v, &(_, ty, _))| (v, ty.width()))
                    .collect::<Vec<_>>(),
            );
            assert_eq!(layout.bytes, expected.len(), "case {case}: stated length");
            let mut raw = Vec::new();
            let inflated =
                flate2::read::ZlibDecoder::new(&unbase64(&text)[..]).read_to_end(&mut raw);
            assert!(
                inflated.is_ok(),
                "case {case} ({rows} rows, columns {columns:?}, bits {bits:?}): {inflated:?} after {} of {} bytes",
                raw.len(),
                expected.len()
            );
            assert!(raw == expected, "case {case}: the inflated bytes differ");
            // The same bytes through one plane's stream, its buffer starting at a random room.
            let some = &expected[..expected.len().min(3 * PLANE_CHUNK)];
            let room = 64 + rng.below(150_000) as usize;
            let joined = joined_streams(some, room);
            assert!(
                joined == Ok([some, some].concat()),
                "case {case}, room {room}: {:?}",
                joined.map(|r| r.len())
            );
            packed += expected.len();
        }
        assert!(packed > 10 * PLANE_CHUNK, "the cases cross many chunks");
    }

    #[test]
    fn embedded_text_cannot_close_its_element() {
        let j = script_json(&vec!["</script><b>"]);
        assert!(!j.contains('<'), "{j}");
        assert_eq!(inline_code("a</script>b"), "a<\\/script>b");
    }
}
