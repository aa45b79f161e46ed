//! A Process Monitor CSV export, imported as `naslab import procmon` does;
//! `common/import.rs` says what is checked.

#![no_main]

#[path = "common/import.rs"]
mod import;

use libfuzzer_sys::fuzz_target;
use naslab_capture::Format;

fuzz_target!(|data: &[u8]| import::check(Format::Procmon, data));
