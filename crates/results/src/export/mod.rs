//! Exporters: each turns the one result model into one format.

mod csv;
mod csv_field;
mod json;
mod markdown;
mod naspt_csv;
mod table;

pub use csv::{CSV_COLUMNS, Csv};
pub use csv_field::csv_field;
pub use json::Json;
pub use markdown::Markdown;
pub use naspt_csv::NasptCsv;
pub use table::{Table, verify_line};

use crate::RunResult;

#[cfg(test)]
mod tests {
    use super::Us;

    #[test]
    fn microseconds_round_half_up_on_the_exact_count() {
        let shown: Vec<String> = [0, 49, 50, 7_249, 7_250, 7_251, 15_523_877, 999_950]
            .iter()
            .map(|&ns| Us(ns).to_string())
            .collect();
        assert_eq!(
            shown,
            [
                "0.0", "0.0", "0.1", "7.2", "7.3", "7.3", "15523.9", "1000.0"
            ]
        );
        assert_eq!(format!("[{:>7}]", Us(7_250)), "[    7.3]");
    }
}

/// Turns a run's results into the bytes of one output format.
pub trait Exporter {
    /// The file name the format is written under in a run directory.
    fn file_name(&self) -> &'static str;
    /// The run's results in this format.
    fn export(&self, run: &RunResult) -> Vec<u8>;
}

/// Microseconds with one decimal, from a nanosecond count: every export (and the HTML
/// report's formatter) rounds the same way, half up on the exact count, so 7,250 ns is
/// 7.3 everywhere. Honours width and alignment (`{:>10}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Us(pub u64);

impl std::fmt::Display for Us {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tenths = self.0 / 100 + u64::from(self.0 % 100 >= 50);
        f.pad(&format!("{}.{}", tenths / 10, tenths % 10))
    }
}

pub(crate) fn us(ns: u64) -> Us {
    Us(ns)
}
