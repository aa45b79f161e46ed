//! Exporters: each turns the one result model into one format.

mod csv;
mod json;
mod markdown;
mod naspt_csv;
mod table;

pub use csv::{Csv, CSV_COLUMNS};
pub use json::Json;
pub use markdown::Markdown;
pub use naspt_csv::NasptCsv;
pub use table::{verify_line, Table};

use crate::RunResult;

/// Turns a run's results into the bytes of one output format.
pub trait Exporter {
    /// The file name the format is written under in a run directory.
    fn file_name(&self) -> &'static str;
    /// The run's results in this format.
    fn export(&self, run: &RunResult) -> Vec<u8>;
}

pub(crate) fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}
