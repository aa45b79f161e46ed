//! naslab's analyzer: turns a run directory (run.json and the op records) into an
//! offline HTML report, and several runs into a side-by-side comparison (the NASPT
//! paper's Table 2). See `docs/report.md`.

mod check;
mod compare;
mod data;
mod decimate;
mod encode;
mod error;
mod hist;
mod html;
mod link_sweep;
mod run_dir;
mod series;
mod ts_types;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use naslab_results::RunResult;

pub use check::{PageCheck, check_page, write_page};
pub use compare::{
    Comparison, MEAN_NAME, RunInfo, WorkloadRow, compare, csv_field, resolve_baseline,
};
pub use data::{IterationPass, StreamedIteration};
pub use error::ReportError;
pub use html::{
    ReportOptions, compare_html, report_html, report_html_streamed, report_html_with_notes,
    write_atomic,
};
pub use link_sweep::{LinkLine, LinkPoint, LinkSweep, probed_text};
pub use run_dir::{LoadedRun, MAX_RUN_JSON_BYTES, load_run, parse_run_json};
pub use series::round_bin_ns;
pub use ts_types::{TS_TYPES_FILE, typescript_declarations};

/// The report's file name in a run directory.
pub const REPORT_FILE: &str = "report.html";

/// Writes `report.html` into the run directory `dir` of the run `result` (what
/// `naslab run` calls when it finishes) and returns its path.
pub fn write_run_report(dir: &Path, result: &RunResult) -> Result<PathBuf, ReportError> {
    write_run_report_streamed(dir, result, HashMap::new())
}

/// Like [`write_run_report`], with the views of the iterations in `streamed` (by records
/// file name) already made while `naslab run` wrote their records: their records are
/// not read again.
pub fn write_run_report_streamed(
    dir: &Path,
    result: &RunResult,
    streamed: HashMap<String, StreamedIteration>,
) -> Result<PathBuf, ReportError> {
    let run = LoadedRun {
        dir: dir.to_path_buf(),
        result: result.clone(),
    };
    let path = dir.join(REPORT_FILE);
    let (page, _) = html::report_html_streamed(&run, &ReportOptions::default(), streamed);
    write_page(&path, &page)?;
    Ok(path)
}
