//! The report's packed data, end to end: a page made from real records must come out
//! whole, every blob inflating to the length its layout states, and a page that does
//! not must be refused loudly.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use naslab_report::{
    PageCheck, ReportError, ReportOptions, check_page, load_run, report_html, write_page,
};

/// A run directory kept beside the checkout whose transaction-list blob once came out
/// corrupted (a sync flush that never happened between two byte planes): 1,000,006 ops
/// of "read A, read A, write B" on the null backend.
fn deflate_repro() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = root.join("../shared/repro/report-deflate");
    assert!(
        dir.join("run.json").is_file(),
        "'{}' is missing: the reproducer run directory must sit beside the checkout (shared/repro/report-deflate)",
        dir.display()
    );
    dir
}

#[test]
fn the_reproducer_run_makes_a_page_whose_every_blob_inflates() {
    let run = load_run(&deflate_repro()).unwrap();
    let page = report_html(&run, &ReportOptions::default());
    let checked = check_page(&page).unwrap_or_else(|e| panic!("{e}"));
    // One blob, the transaction list, holding every op: 1,000,006 rows of 49 bytes
    // (start, latency, offset, length and result as f64, file and stream as u32, op as u8).
    assert_eq!(
        checked,
        PageCheck {
            blobs: 1,
            bytes: 1_000_006 * 49
        }
    );
}

#[test]
fn a_broken_page_is_written_but_refused_with_what_to_do() {
    let run = load_run(&deflate_repro()).unwrap();
    let opts = ReportOptions {
        max_rows: 20_000,
        ..ReportOptions::default()
    };
    let mut page = String::from_utf8(report_html(&run, &opts)).unwrap();
    // One character of a blob's base64 changed, well inside its deflate stream.
    let open = "<script type=\"application/octet-stream\" id=\"";
    let at = page.find(open).expect("a blob") + open.len();
    let body = at + page[at..].find("\">").unwrap() + 2;
    let end = body + page[body..].find("</script>").unwrap();
    let mid = body + (end - body) / 2;
    let c = page.as_bytes()[mid];
    page.replace_range(mid..mid + 1, if c == b'A' { "B" } else { "A" });
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("report.html");
    let err = write_page(&path, page.as_bytes()).unwrap_err();
    assert!(matches!(err, ReportError::BrokenPage { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("is broken: blob w0-i0"), "{text}");
    assert!(text.contains("please report it"), "{text}");
    assert!(path.is_file(), "the page stays for a bug report");
}
