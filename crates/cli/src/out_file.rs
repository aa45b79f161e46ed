//! The rule for every file a command writes at a path the user gave (`report -o`,
//! `compare -o`, `records -o`, `export-trace -o`, `import -o`, `capture -o`,
//! `man --dir`): only a new file or an existing regular file with one name is written,
//! never a link, device, FIFO or directory ([`naslab_trace::create_output`]); and a run
//! directory's files are the measurement, so none is written over, other than the HTML
//! page `report` or `compare` makes for that very run.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use naslab_report::REPORT_FILE;

/// The page `compare` writes.
pub const COMPARE_FILE: &str = "compare.html";

/// What a command writes, for the run directory rule.
#[derive(Clone, Copy)]
pub enum Writing<'a> {
    /// `report`'s HTML page of this run.
    ReportPage(&'a Path),
    /// `compare`'s HTML page of these runs.
    ComparePage(&'a [PathBuf]),
    /// Anything else: text exports, traces, man pages.
    Other,
}

/// Refuses `path` when writing there would change a run's results (see the module).
pub fn check(path: &Path, writing: Writing) -> anyhow::Result<()> {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        bail!(
            "'{}' names no file: give a file name, such as report.html",
            path.display()
        );
    };
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // A directory that does not exist holds no run; creating the file will say so.
    let Ok(dir) = parent.canonicalize() else {
        return Ok(());
    };
    if !dir.join("run.json").is_file() {
        return Ok(());
    }
    let same = |run: &Path| run.canonicalize().is_ok_and(|r| r == dir);
    let own_page = match writing {
        Writing::ReportPage(run) => name == REPORT_FILE && same(run),
        Writing::ComparePage(runs) => name == COMPARE_FILE && runs.iter().any(|r| same(r)),
        Writing::Other => false,
    };
    if own_page {
        return Ok(());
    }
    if name == REPORT_FILE || name == COMPARE_FILE {
        bail!(
            "'{}' is the {name} page of the run in '{}', which only `naslab {} {}` writes (as HTML); give -o another name",
            path.display(),
            dir.display(),
            if name == REPORT_FILE {
                "report"
            } else {
                "compare"
            },
            dir.display()
        );
    }
    if std::fs::symlink_metadata(path).is_ok() {
        bail!(
            "'{}' is part of the results of the run in '{}'; naslab will not write over it: give -o a new file name",
            path.display(),
            dir.display()
        );
    }
    Ok(())
}

/// Writes `bytes` into `path` under the rule: checked, then created or emptied and
/// written.
pub fn write(path: &Path, bytes: &[u8], writing: Writing) -> anyhow::Result<()> {
    check(path, writing)?;
    let what = || format!("cannot write '{}'", path.display());
    let mut file = naslab_trace::create_output(path).with_context(what)?;
    file.write_all(bytes)
        .and_then(|()| file.flush())
        .with_context(|| format!("{}; what it holds is incomplete", what()))
}
