//! What every importer's fuzz target checks: any input gives a trace or an error, never
//! a panic, and a trace an importer writes reads back and compiles as `naslab run`
//! compiles it: an import that writes a trace `run` refuses is a crash.

use std::path::Path;
use std::sync::OnceLock;

use naslab_capture::{import, Format, ImportOptions};
use naslab_engine::plan::{compile, records_from_reader};
use naslab_trace::open_trace;

fn dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"))
        .path()
}

/// Imports `data` as `format` (with the options the seeds were made for) and checks
/// the trace it writes, if any.
pub fn check(format: Format, data: &[u8]) {
    let input = dir().join("input");
    let output = dir().join("imported.jsonl");
    std::fs::write(&input, data).expect("the input is written");
    let _ = std::fs::remove_file(&output);
    let opts = ImportOptions {
        workload: "Fuzz".into(),
        root: match format {
            Format::Strace => Some("/work/app".into()),
            _ => None,
        },
        clients: 2,
        process: None,
        windows_root: Some(r"C:\Users\me\Docs".into()),
    };
    if import(format, &input, &output, &opts).is_err() {
        return;
    }
    let reader = open_trace(&output).expect("the imported trace opens");
    if let Err(e) = compile(&output, records_from_reader(reader), dir()) {
        panic!("the imported trace does not compile: {e}");
    }
}
