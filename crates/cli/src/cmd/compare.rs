//! `naslab compare RUN_DIR...`: each workload's throughput relative to a baseline run.

use std::path::PathBuf;

use naslab_report::{compare_html, load_run, resolve_baseline};

use super::report::{emit, emit_page};
use crate::args::{CompareArgs, CompareFormat};
use crate::out_file::{COMPARE_FILE, Writing};

/// `naslab compare`.
pub fn compare(args: CompareArgs) -> anyhow::Result<()> {
    let mut runs = args
        .runs
        .iter()
        .map(|dir| load_run(dir))
        .collect::<Result<Vec<_>, _>>()?;
    let baseline = resolve_baseline(&mut runs, args.baseline.as_deref())?;
    let comparison = naslab_report::compare(&runs, baseline);
    // The table and Markdown say these themselves; the other formats get them here.
    if !matches!(args.format, CompareFormat::Table | CompareFormat::Md) {
        for line in comparison.warnings() {
            eprintln!("{line}");
        }
    }
    let bytes = match args.format {
        // Text for people: names from traces shown with their control characters escaped.
        CompareFormat::Table => naslab_trace::printable_lines(&comparison.table())
            .into_owned()
            .into_bytes(),
        CompareFormat::Md => comparison.markdown().into_bytes(),
        CompareFormat::Csv => comparison.csv().into_bytes(),
        CompareFormat::Json => comparison.json().into_bytes(),
        CompareFormat::Html => {
            let html = compare_html(&runs, &comparison);
            // A page is no use on a terminal: without -o it goes to a file.
            let path = args
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(COMPARE_FILE));
            return emit_page(&path, &html, Writing::ComparePage(&args.runs));
        }
    };
    emit(args.output.as_deref(), &bytes, Writing::Other)
}
