//! Checking a written page before anyone opens it: every packed blob the page's data
//! names must be in the page, decode from base64, inflate as one zlib stream (its
//! checksum included) and come out exactly as long as the data says. A page that fails
//! is a bug in naslab, and it is said at once rather than left for a reader to find as
//! a view that cannot be shown.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use crate::ReportError;

/// The opening of a packed blob's element, up to its id.
const BLOB_OPEN: &str = "<script type=\"application/octet-stream\" id=\"";
/// The opening of the page's JSON data element.
const DATA_OPEN: &str = "<script type=\"application/json\" id=\"naslab-data\">";

/// What a check found in a sound page: how many blobs, and their inflated bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCheck {
    /// Blobs checked.
    pub blobs: usize,
    /// Their bytes once inflated, all together.
    pub bytes: usize,
}

/// Every blob layout (`id`, `bytes`) named anywhere in the page's data.
fn stated_blobs(value: &serde_json::Value, out: &mut HashMap<String, u64>) {
    match value {
        serde_json::Value::Object(map) => {
            let id = map.get("id").and_then(|v| v.as_str());
            let bytes = map.get("bytes").and_then(|v| v.as_u64());
            if let (Some(id), Some(bytes), true, true) = (
                id,
                bytes,
                map.contains_key("rows"),
                map.contains_key("columns"),
            ) {
                out.insert(id.to_string(), bytes);
            }
            for v in map.values() {
                stated_blobs(v, out);
            }
        }
        serde_json::Value::Array(items) => {
            for v in items {
                stated_blobs(v, out);
            }
        }
        _ => {}
    }
}

fn unbase64(text: &[u8]) -> Result<Vec<u8>, String> {
    let val = |c: u8| -> Result<u32, String> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("'{}' is not a base64 character", c.escape_ascii())),
        } as u32)
    };
    if !text.len().is_multiple_of(4) {
        return Err(format!(
            "{} base64 characters, not a multiple of 4",
            text.len()
        ));
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let chunks = text.len() / 4;
    for (k, chunk) in text.chunks_exact(4).enumerate() {
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && k + 1 != chunks) {
            return Err("padding inside the base64 text".into());
        }
        let mut n = 0u32;
        for &c in &chunk[..4 - pad] {
            n = n << 6 | val(c)?;
        }
        n <<= 6 * pad as u32;
        out.extend_from_slice(&[(n >> 16) as u8, (n >> 8) as u8, n as u8][..3 - pad]);
    }
    Ok(out)
}

/// Checks the page `page`: see the module's notes. The error says which blob is broken
/// and how.
pub fn check_page(page: &[u8]) -> Result<PageCheck, String> {
    let text = std::str::from_utf8(page).map_err(|e| format!("the page is not UTF-8: {e}"))?;
    let data_at = text.find(DATA_OPEN).ok_or("the page has no data element")? + DATA_OPEN.len();
    let data_end = text[data_at..]
        .find("</script>")
        .ok_or("the page's data element is not closed")?
        + data_at;
    let data: serde_json::Value = serde_json::from_str(&text[data_at..data_end])
        .map_err(|e| format!("the page's data is not JSON: {e}"))?;
    let mut stated = HashMap::new();
    stated_blobs(&data, &mut stated);
    let mut found = 0;
    let mut bytes = 0;
    let mut rest = text;
    while let Some(at) = rest.find(BLOB_OPEN) {
        rest = &rest[at + BLOB_OPEN.len()..];
        let id_end = rest.find("\">").ok_or("a blob element is not closed")?;
        let id = &rest[..id_end];
        rest = &rest[id_end + 2..];
        let end = rest
            .find("</script>")
            .ok_or_else(|| format!("blob {id} is not closed"))?;
        let body = &rest[..end];
        rest = &rest[end..];
        let want = stated
            .remove(id)
            .ok_or_else(|| format!("blob {id} is in the page but its data names no such blob"))?;
        let z = unbase64(body.trim().as_bytes()).map_err(|e| format!("blob {id}: {e}"))?;
        let mut raw = Vec::with_capacity(want as usize);
        // The decoder checks the zlib stream's checksum at its end.
        flate2::read::ZlibDecoder::new(&z[..])
            .read_to_end(&mut raw)
            .map_err(|e| {
                format!(
                    "blob {id} does not inflate ({e}) after {} of its {want} bytes",
                    raw.len()
                )
            })?;
        if raw.len() as u64 != want {
            return Err(format!(
                "blob {id} inflates to {} bytes, but the page's data says {want}",
                raw.len()
            ));
        }
        found += 1;
        bytes += raw.len();
    }
    if let Some(id) = stated.keys().min() {
        return Err(format!(
            "the page's data names blob {id}, which is not in the page"
        ));
    }
    Ok(PageCheck {
        blobs: found,
        bytes,
    })
}

/// Writes the page `page` to `path` (through a temporary file, see
/// [`crate::write_atomic`]), then reads it back and checks it (see [`check_page`]). A page
/// that fails the check stays at `path`, for a bug report, and the error says so.
pub fn write_page(path: &Path, page: &[u8]) -> Result<PageCheck, ReportError> {
    crate::write_atomic(path, page)?;
    let written = std::fs::read(path).map_err(|source| ReportError::Io {
        what: "read back",
        path: path.to_path_buf(),
        source,
    })?;
    check_page(&written).map_err(|why| ReportError::BrokenPage {
        path: path.to_path_buf(),
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{BlobBuilder, ColumnType, base64};

    fn page(json: &str, blobs: &[(&str, String)]) -> Vec<u8> {
        let mut o = format!("<html><body>{DATA_OPEN}{json}</script>\n");
        for (id, text) in blobs {
            o.push_str(&format!("{BLOB_OPEN}{id}\">{text}</script>\n"));
        }
        o.push_str("</body></html>\n");
        o.into_bytes()
    }

    fn blob(id: &str, rows: u32) -> (String, String) {
        let mut b =
            BlobBuilder::new(&[("t", ColumnType::F64, true), ("f", ColumnType::U32, false)]);
        for i in 0..rows {
            b.f64(0, i as f64 * 3.5);
            b.u32(1, i % 7);
            b.end_row();
        }
        let (layout, text) = b.finish(id);
        (serde_json::to_string(&layout).unwrap(), text)
    }

    #[test]
    fn a_sound_page_passes_with_its_blobs_counted() {
        let (a, ta) = blob("w0-a", 1000);
        let (b, tb) = blob("w0-b", 0);
        let p = page(
            &format!("{{\"x\":[{a},{{\"y\":{b}}}]}}"),
            &[("w0-a", ta), ("w0-b", tb)],
        );
        assert_eq!(
            check_page(&p),
            Ok(PageCheck {
                blobs: 2,
                bytes: 12_000
            })
        );
    }

    #[test]
    fn a_broken_or_missing_blob_is_named() {
        let (a, ta) = blob("w0-a", 5000);
        let json = format!("{{\"a\":{a}}}");
        // A byte changed in the middle of the deflate stream.
        let mut z = unbase64(ta.as_bytes()).unwrap();
        let mid = z.len() / 2;
        z[mid] ^= 0x5a;
        let err = check_page(&page(&json, &[("w0-a", base64(&z))])).unwrap_err();
        assert!(err.starts_with("blob w0-a does not inflate"), "{err}");
        // The right stream under a layout stating another length.
        let wrong = json.replace("\"bytes\":60000", "\"bytes\":60001");
        assert_ne!(wrong, json);
        let err = check_page(&page(&wrong, &[("w0-a", ta.clone())])).unwrap_err();
        assert_eq!(
            err,
            "blob w0-a inflates to 60000 bytes, but the page's data says 60001"
        );
        // Named in the data, absent from the page.
        let err = check_page(&page(&json, &[])).unwrap_err();
        assert_eq!(
            err,
            "the page's data names blob w0-a, which is not in the page"
        );
        // Not base64.
        let err = check_page(&page(&json, &[("w0-a", format!("{}*", &ta[1..]))])).unwrap_err();
        assert!(err.contains("not a base64 character"), "{err}");
    }

    #[test]
    fn base64_decodes_what_the_encoder_wrote() {
        for n in 0..40u8 {
            let data: Vec<u8> = (0..n).map(|i| i.wrapping_mul(37)).collect();
            assert_eq!(unbase64(base64(&data).as_bytes()).unwrap(), data);
        }
    }
}
