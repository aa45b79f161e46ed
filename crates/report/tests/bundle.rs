//! The committed UI bundle (assets/report.js, report.css) must be what the UI sources
//! build to: its recorded fingerprint (assets/report.stamp, written by `npm run build`)
//! must match the sources, which needs no node; and, where the UI's npm packages are
//! installed, bundling the sources afresh must give the same bytes and the same stamp.
//! Cargo never rebuilds the bundle: `npm run build` in crates/report/ui does.
//! NASLAB_REQUIRE_UI=1 (set by scripts/test.sh) or NASLAB_REQUIRE_ROOT=1 (set by CI)
//! makes a missing `npm ci` a failure.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

/// The fingerprint of the report UI's sources, as `ui/fingerprint.mjs` computes it when
/// `npm run build` writes the bundle and its `report.stamp`. Content, not modification
/// times, decides: a fresh clone has arbitrary times.
mod ui_stamp {
    use std::path::Path;

    /// The files, relative to `ui/`, whose content decides the bundle besides `src/`.
    const INPUTS: [&str; 5] = [
        "package.json",
        "package-lock.json",
        "build.mjs",
        "fingerprint.mjs",
        "tsconfig.json",
    ];

    /// Every source as a path relative to `ui/` with `/` separators, in byte order.
    fn sources(ui: &Path) -> std::io::Result<Vec<String>> {
        let mut files: Vec<String> = INPUTS.iter().map(|f| f.to_string()).collect();
        let mut dirs = vec!["src".to_string()];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(ui.join(&dir))? {
                let e = e?;
                let rel = format!("{dir}/{}", e.file_name().to_string_lossy());
                if e.path().is_dir() {
                    dirs.push(rel);
                } else {
                    files.push(rel);
                }
            }
        }
        files.sort();
        Ok(files)
    }

    /// FNV-1a over each source's relative path and content (carriage returns dropped, so a
    /// CRLF checkout gives the same value), each followed by a zero byte; 16 hex digits.
    pub fn ui_fingerprint(ui: &Path) -> std::io::Result<String> {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut feed = |bytes: &[u8]| {
            for &b in bytes {
                h ^= b as u64;
                h = h.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for rel in sources(ui)? {
            feed(rel.as_bytes());
            feed(&[0]);
            let text = std::fs::read(ui.join(&rel))?;
            let text: Vec<u8> = text.into_iter().filter(|&b| b != b'\r').collect();
            feed(&text);
            feed(&[0]);
        }
        Ok(format!("{h:016x}"))
    }
}

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
        "the UI sources changed since the bundle was built: run `npm ci && npm run build` in crates/report/ui and commit the three files under crates/report/assets"
    );
}

#[test]
fn the_committed_bundle_is_what_the_sources_build_to() {
    let ui = root().join("ui");
    if !ui.join("node_modules").join("esbuild").is_dir() {
        let why =
            "crates/report/ui/node_modules is missing (run `npm ci` there to check the bundle)";
        assert!(
            std::env::var("NASLAB_REQUIRE_UI").as_deref() != Ok("1"),
            "{why}; NASLAB_REQUIRE_UI=1 makes that a failure"
        );
        // A note, or under NASLAB_REQUIRE_ROOT=1 a failure.
        naslab_test_support::cannot_run(why);
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
    for file in ["report.js", "report.css", "report.stamp"] {
        let fresh = std::fs::read(out.path().join(file)).unwrap();
        let committed = std::fs::read(root().join("assets").join(file)).unwrap();
        assert!(
            fresh == committed,
            "crates/report/assets/{file} is not what the UI sources build to; run `npm run build` in crates/report/ui"
        );
    }
}
