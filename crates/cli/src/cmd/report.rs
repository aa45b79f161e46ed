//! `naslab report RUN_DIR`: rebuilds a run's report from run.json and its op records.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use naslab_report::{
    load_run, report_html_with_notes, write_atomic, write_page, ReportOptions, REPORT_FILE,
};
use naslab_results::export::{Csv, Exporter, Json, Markdown, Table};

use crate::args::{ReportArgs, ReportFormat};

/// Pages a report writes, the only files of a run directory it may replace.
const PAGES: [&str; 2] = [REPORT_FILE, "compare.html"];

/// Refuses to replace a file a run directory (one holding run.json) already has, other
/// than a report page: run.json, the tables and the op records are the measurement.
fn refuse_run_file(path: &Path) -> anyhow::Result<()> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let name = real.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let in_run_dir = real.parent().is_some_and(|d| d.join("run.json").is_file());
    if meta.is_dir() || (in_run_dir && !PAGES.contains(&name)) {
        anyhow::bail!(
            "'{}' is {}; naslab will not write over it: give -o a new file name (or {REPORT_FILE})",
            path.display(),
            if meta.is_dir() {
                "a directory"
            } else {
                "part of a run's results"
            }
        );
    }
    Ok(())
}

/// Writes `bytes` to `path`, or to standard output when there is no path.
pub fn emit(path: Option<&Path>, bytes: &[u8]) -> anyhow::Result<()> {
    match path {
        Some(p) => {
            refuse_run_file(p)?;
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

/// Writes the HTML page `bytes` to `path` and checks what was written: every packed part
/// of it must decode (see `naslab_report::check_page`); a broken page is an error.
pub fn emit_page(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    refuse_run_file(path)?;
    write_page(path, bytes)?;
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
            emit_page(&path, &html)?;
            // What the page says about missing or partial records, said here too.
            for n in &notes {
                eprintln!("warning: {n}");
            }
            Ok(())
        }
    }
}
