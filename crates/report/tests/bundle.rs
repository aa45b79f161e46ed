//! The committed UI bundle (assets/report.js, report.css) must be what the UI sources
//! build to: its recorded fingerprint must match the sources, and, where the UI's npm
//! packages are installed, bundling the sources afresh must give the same bytes.
//! NASLAB_REQUIRE_UI=1 (set by scripts/test.sh) or NASLAB_REQUIRE_ROOT=1 (set by CI)
//! makes a missing `npm ci` a failure.

use std::path::Path;
use std::process::Command;

#[path = "../src/ui_stamp.rs"]
#[allow(dead_code)]
mod ui_stamp;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_recorded_fingerprint_matches_the_ui_sources() {
    let ui = root().join("ui");
    let now = ui_stamp::ui_fingerprint(&ui).unwrap();
    let recorded = std::fs::read_to_string(root().join("assets/report.stamp")).unwrap();
    assert_eq!(
        recorded.trim(),
        now,
        "the UI sources changed since the bundle was built: run `npm ci && npm run build` in crates/report/ui (or `cargo build`, which does it when npm is there), then write the new fingerprint {now} to crates/report/assets/report.stamp"
    );
}

#[test]
fn the_committed_bundle_is_what_the_sources_build_to() {
    let ui = root().join("ui");
    if !ui.join("node_modules").join("esbuild").is_dir() {
        let required = |var: &str| std::env::var(var).as_deref() == Ok("1");
        assert!(
            !required("NASLAB_REQUIRE_UI") && !required("NASLAB_REQUIRE_ROOT"),
            "crates/report/ui/node_modules is missing: run `npm ci` there"
        );
        eprintln!("skipped: crates/report/ui/node_modules is missing (run `npm ci` there to check the bundle)");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let built = Command::new("node")
        .arg("build.mjs")
        .arg(out.path())
        .current_dir(&ui)
        .output()
        .expect("node runs");
    assert!(
        built.status.success(),
        "bundling failed: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    for file in ["report.js", "report.css"] {
        let fresh = std::fs::read(out.path().join(file)).unwrap();
        let committed = std::fs::read(root().join("assets").join(file)).unwrap();
        assert!(
            fresh == committed,
            "crates/report/assets/{file} is not what the UI sources build to; run `npm run build` in crates/report/ui"
        );
    }
}
