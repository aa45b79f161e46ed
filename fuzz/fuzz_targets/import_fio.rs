//! A fio iolog (version 2 or 3), imported as `naslab import fio-iolog` does;
//! `common/import.rs` says what is checked.

#![no_main]

#[path = "common/import.rs"]
mod import;

use libfuzzer_sys::fuzz_target;
use naslab_capture::Format;

fuzz_target!(|data: &[u8]| import::check(Format::FioIolog, data));
