//! A trace file's bytes (plain or zstd), read and compiled as `naslab run` does. Any
//! input must give a plan or an error, never a panic, and a plan's ops must name only
//! entries of its file table, within the per-op size limit.

#![no_main]

use std::io::Cursor;
use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use naslab_engine::plan::{compile, records_from_reader, MAX_OP_BYTES};
use naslab_trace::{read_trace, OpKind};

fn spool_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary directory"))
        .path()
}

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz.jsonl");
    let Ok(reader) = read_trace(path, Cursor::new(data.to_vec())) else {
        return;
    };
    let Ok(plan) = compile(path, records_from_reader(reader), spool_dir()) else {
        return;
    };
    let files = plan.files.entries.len() as u32;
    let mut counted = 0;
    for stream in plan.streams.iter().chain(&plan.warmup) {
        let mut ops = stream.ops.reader().expect("a spool reader");
        while let Some(op) = ops.next_op().expect("a spooled op") {
            counted += 1;
            assert!(op.file < files, "op names entry {} of {files}", op.file);
            assert!(op.to == u32::MAX || op.to < files);
            assert!(!op.kind.needs_to() || op.to != u32::MAX);
            if matches!(op.kind, OpKind::Read | OpKind::Write | OpKind::Fallocate) {
                assert!(op.len <= MAX_OP_BYTES);
            }
            assert!(op.slot < stream.slots);
        }
    }
    let planned: u64 = plan.op_counts.iter().chain(&plan.warmup_counts).sum();
    assert_eq!(counted, planned);
});
