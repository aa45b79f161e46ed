//! `naslab report RUN_DIR`: rebuilds a run's report from run.json and its op records.

use std::path::Path;

use anyhow::Context;
use naslab_report::{
    REPORT_FILE, ReportError, ReportOptions, check_page, load_run, report_html_with_notes,
};
use naslab_results::export::{Csv, Exporter, Json, Markdown, Table};

use crate::args::{ReportArgs, ReportFormat};
use crate::out_file::{self, Writing};

/// Writes `bytes` to `path` (under the output-file rule, see [`crate::out_file`]), or
/// to standard output when there is no path.
pub fn emit(path: Option<&Path>, bytes: &[u8], writing: Writing) -> anyhow::Result<()> {
    match path {
        Some(p) => {
            out_file::write(p, bytes, writing)?;
            eprintln!("wrote {}", p.display());
            Ok(())
        }
        None => crate::stdout::print_bytes(bytes),
    }
}

/// Writes the HTML page `bytes` to `path` (under the output-file rule) and checks what
/// was written: every packed part of it must decode (see `naslab_report::check_page`);
/// a broken page is an error, and stays at `path` for a bug report.
pub fn emit_page(path: &Path, bytes: &[u8], writing: Writing) -> anyhow::Result<()> {
    out_file::write(path, bytes, writing)?;
    let written =
        std::fs::read(path).with_context(|| format!("cannot read back '{}'", path.display()))?;
    check_page(&written).map_err(|why| ReportError::BrokenPage {
        path: path.to_path_buf(),
        why,
    })?;
    eprintln!("wrote {}", path.display());
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
        Some(exporter) => emit(
            args.output.as_deref(),
            &exporter.export(&run.result),
            Writing::Other,
        ),
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
            emit_page(&path, &html, Writing::ReportPage(&args.run_dir))?;
            // What the page says about missing or partial records, said here too.
            for n in &notes {
                eprintln!("warning: {n}");
            }
            Ok(())
        }
    }
}
