//! run.json's bytes, read as `naslab report` and `compare` read them: a result or an
//! error, never a panic.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = naslab_report::parse_run_json(Path::new("run.json"), data);
});
