//! An strace log (`strace -f -ttt -T -yy`), imported as `naslab import strace` does;
//! `common/import.rs` says what is checked.

#![no_main]

#[path = "common/import.rs"]
mod import;

use libfuzzer_sys::fuzz_target;
use naslab_capture::Format;

fuzz_target!(|data: &[u8]| import::check(Format::Strace, data));
