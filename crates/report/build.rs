//! Keeps the embedded UI bundle (assets/report.js and report.css) in step with its
//! TypeScript sources (ui/). The bundle is committed, so a plain `cargo build` needs
//! neither node nor npm. When the sources' fingerprint differs from the one recorded
//! beside the bundle (assets/report.stamp), this re-bundles with npm if it can, and
//! otherwise warns and builds with the committed bundle. See docs/report.md.

use std::path::Path;
use std::process::Command;

#[path = "src/ui_stamp.rs"]
mod ui_stamp;

fn warn(msg: &str) {
    println!("cargo:warning={msg}");
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let ui = root.join("ui");
    let stamp_path = root.join("assets").join("report.stamp");
    println!("cargo:rerun-if-changed={}", stamp_path.display());
    println!("cargo:rerun-if-env-changed=NASLAB_SKIP_UI_BUILD");
    if !ui.join("src").is_dir() {
        // A packaged crate has only the bundle: nothing to rebuild from.
        return;
    }
    for p in ui_stamp::ui_watch_list(&ui) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
    let fingerprint = match ui_stamp::ui_fingerprint(&ui) {
        Ok(f) => f,
        Err(e) => {
            warn(&format!(
                "cannot read the report UI sources ({e}); using the committed bundle"
            ));
            return;
        }
    };
    let recorded = std::fs::read_to_string(&stamp_path).unwrap_or_default();
    if recorded.trim() == fingerprint {
        return;
    }
    if std::env::var_os("NASLAB_SKIP_UI_BUILD").is_some() {
        warn("the report UI sources changed since assets/report.js was built; NASLAB_SKIP_UI_BUILD is set, so the committed bundle is used as is");
        return;
    }
    if !ui.join("node_modules").join("esbuild").is_dir() {
        warn("the report UI sources changed since assets/report.js was built, but crates/report/ui/node_modules is missing; run `npm ci` in crates/report/ui to rebuild it (the committed bundle is used as is)");
        return;
    }
    let built = Command::new("npm")
        .args(["run", "--silent", "build"])
        .current_dir(&ui)
        .output();
    match built {
        Ok(out) if out.status.success() => {
            if let Err(e) = std::fs::write(&stamp_path, format!("{fingerprint}\n")) {
                warn(&format!("rebuilt the report UI bundle but cannot record its fingerprint: {e}"));
            }
        }
        Ok(out) => warn(&format!(
            "rebuilding the report UI bundle failed, so the committed one is used: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => warn(&format!(
            "the report UI sources changed but npm cannot be run ({e}); install node and npm, or run `npm ci && npm run build` in crates/report/ui (the committed bundle is used as is)"
        )),
    }
}
