//! Writing a run directory's files, rewritten after every workload so a run that stops
//! half-way still leaves usable results.

use std::path::Path;

use anyhow::Context;
use naslab_results::RunResult;
use naslab_results::export::{Exporter, Json, NasptCsv, Table};

/// Writes run.json, naspt.csv and results.txt into `dir`.
pub fn write_exports(dir: &Path, run: &RunResult) -> anyhow::Result<()> {
    let exporters: [&dyn Exporter; 3] = [&Json, &NasptCsv, &Table];
    for e in exporters {
        let path = dir.join(e.file_name());
        let tmp = dir.join(format!(".{}.tmp", e.file_name()));
        if let Err(err) = std::fs::write(&tmp, e.export(run)) {
            // A half-written copy would only take space the full file system lacks.
            let _ = std::fs::remove_file(&tmp);
            return Err(err).with_context(|| format!("cannot write '{}'", path.display()));
        }
        std::fs::rename(&tmp, &path)
            .with_context(|| format!("cannot write '{}'", path.display()))?;
    }
    Ok(())
}
