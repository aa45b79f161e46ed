//! The page's TypeScript types are generated from the Rust model: the checked-in
//! ui/src/model.gen.ts must be what the model generates now, so a field added, renamed or
//! retyped in Rust fails here (and then the UI's type check shows every use to fix).
//! NASLAB_UPDATE_SNAPSHOTS=1 rewrites the file.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::Path;

#[test]
fn the_checked_in_typescript_types_are_what_the_model_generates() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(naslab_report::TS_TYPES_FILE);
    let now = naslab_report::typescript_declarations();
    if std::env::var_os("NASLAB_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &now).unwrap();
    }
    let kept = std::fs::read_to_string(&path).unwrap_or_default();
    if kept != now {
        let line = kept
            .lines()
            .zip(now.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| kept.lines().count().min(now.lines().count()));
        panic!(
            "{} differs from what the Rust model generates (first at line {}); regenerate it with \
             NASLAB_UPDATE_SNAPSHOTS=1 cargo test -p naslab-report --test ts_types, then run \
             `npm run check` in crates/report/ui",
            path.display(),
            line + 1
        );
    }
    // Large integers are numbers (JSON.parse never gives a BigInt), and every type the
    // declarations use is declared.
    assert!(!now.contains("bigint"), "{now}");
    for name in [
        "RunResult",
        "ReportPage",
        "ComparePage",
        "TimeSeries",
        "Warning",
    ] {
        assert!(
            now.contains(&format!("export type {name} ")),
            "{name} missing"
        );
    }
}
