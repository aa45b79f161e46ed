//! `naslab report RUN_DIR`: rebuilds a run's report from run.json and its op records.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use naslab_report::{load_run, report_html_with_notes, write_atomic, ReportOptions, REPORT_FILE};
use naslab_results::export::{Csv, Exporter, Json, Markdown, Table};

use crate::args::{ReportArgs, ReportFormat};

/// Writes `bytes` to `path`, or to standard output when there is no path.
pub fn emit(path: Option<&Path>, bytes: &[u8]) -> anyhow::Result<()> {
    match path {
        Some(p) => {
            write_atomic(p, bytes)?;
            eprintln!("wrote {}", p.display());
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)
                .and_then(|_| out.flush())
                .context("cannot write to standard output")?;
        }
    }
    Ok(())
}

/// `naslab report`.
pub fn report(args: ReportArgs) -> anyhow::Result<()> {
    let run = load_run(&args.run_dir)?;
    let text: Option<&dyn Exporter> = match args.format {
        ReportFormat::Html => None,
        ReportFormat::Json => Some(&Json),
        ReportFormat::Csv => Some(&Csv),
        ReportFormat::Md => Some(&Markdown),
        ReportFormat::Table => Some(&Table),
    };
    match text {
        Some(exporter) => emit(args.output.as_deref(), &exporter.export(&run.result)),
        None => {
            if args.max_rows == 0 {
                eprintln!("note: --max-rows 0 leaves the transaction list out");
            }
            let opts = ReportOptions {
                max_rows: args.max_rows,
                ..ReportOptions::default()
            };
            let path = args
                .output
                .unwrap_or_else(|| args.run_dir.join(REPORT_FILE));
            let (html, notes) = report_html_with_notes(&run, &opts);
            emit(Some(&path), &html)?;
            // What the page says about missing or partial records, said here too.
            for n in &notes {
                eprintln!("warning: {n}");
            }
            Ok(())
        }
    }
}
