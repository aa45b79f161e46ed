//! Packing the report's data into the HTML page compactly: numeric columns as
//! little-endian typed arrays, byte-shuffled and zlib-compressed, then base64; and JSON
//! made safe to sit inside a `<script>` element.

use std::io::Write;

use flate2::write::ZlibEncoder;
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
    raw: Vec<u8>,
    columns: Vec<ColumnLayout>,
}

impl BlobBuilder {
    /// An empty blob of `rows` rows, to be placed in the page under element id `id`.
    pub fn new(id: impl Into<String>, rows: usize) -> Self {
        BlobBuilder {
            id: id.into(),
            rows,
            raw: Vec::new(),
            columns: Vec::new(),
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
        words: impl Iterator<Item = [u8; W]> + Clone,
    ) {
        debug_assert_eq!(ty.width(), W);
        let offset = self.raw.len();
        self.raw.reserve(self.rows * W);
        // One sequential pass per byte plane, rather than W scattered writes per word.
        for b in 0..W {
            self.raw.extend(words.clone().map(|w| w[b]));
        }
        debug_assert_eq!(self.raw.len() - offset, self.rows * W);
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

    /// Compresses the blob: its layout for the page's JSON, and its base64 text.
    pub fn finish(self) -> (BlobLayout, String) {
        let bytes = self.raw.len();
        let compressed = zlib(&self.raw);
        (
            BlobLayout {
                id: self.id,
                rows: self.rows,
                bytes,
                columns: self.columns,
            },
            base64(&compressed),
        )
    }
}

/// zlib-compresses `raw` (the format the browser's DecompressionStream("deflate") reads).
fn zlib(raw: &[u8]) -> Vec<u8> {
    // Level 1 (deflate's fast path) is several times faster than the default on
    // shuffled columns, at a page a little larger: it matters at millions of rows.
    let mut z = ZlibEncoder::new(Vec::with_capacity(raw.len() / 3), Compression::new(1));
    // Writing into a Vec cannot fail.
    let _ = z.write_all(raw);
    z.finish().unwrap_or_default()
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

    #[test]
    fn embedded_text_cannot_close_its_element() {
        let j = script_json(&vec!["</script><b>"]);
        assert!(!j.contains('<'), "{j}");
        assert_eq!(inline_code("a</script>b"), "a<\\/script>b");
    }
}
