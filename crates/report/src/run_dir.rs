//! Finding and reading a run directory: run.json and where its op records are.

use std::path::{Path, PathBuf};

use naslab_results::{RunResult, SCHEMA_VERSION};

use crate::ReportError;

/// A run directory's results, read from its run.json.
#[derive(Debug, Clone)]
pub struct LoadedRun {
    /// The run directory.
    pub dir: PathBuf,
    /// What run.json holds.
    pub result: RunResult,
}

impl LoadedRun {
    /// The op records file of one iteration, when the run kept them.
    pub fn records_path(&self, records: Option<&str>) -> Option<PathBuf> {
        let name = records?;
        // run.json names a file in the run directory; never follow a name out of it.
        let plain = Path::new(name)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        plain.then(|| self.dir.join(name))
    }

    /// A short name for the run: its label and time stamp directories (`run/20260101T000000Z`).
    pub fn short_name(&self) -> String {
        let parts: Vec<String> = self
            .dir
            .components()
            .rev()
            .take(2)
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        match parts.as_slice() {
            [stamp, label] => format!("{label}/{stamp}"),
            [stamp] => stamp.clone(),
            _ => self.dir.display().to_string(),
        }
    }
}

/// Reads `dir/run.json`, with errors that say what the directory is instead.
pub fn load_run(dir: &Path) -> Result<LoadedRun, ReportError> {
    if !dir.exists() {
        return Err(ReportError::NoDir(dir.to_path_buf()));
    }
    let path = dir.join("run.json");
    let bytes = match read_limited(&path, MAX_RUN_JSON_BYTES) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReportError::NoRunJson {
                dir: dir.to_path_buf(),
                hint: run_dirs_hint(dir),
            });
        }
        Err(_) if dir.is_file() => {
            return Err(ReportError::NoRunJson {
                dir: dir.to_path_buf(),
                hint: " (it is a file; give the directory that holds run.json)".into(),
            });
        }
        Err(e) if e.kind() == std::io::ErrorKind::FileTooLarge => {
            return Err(ReportError::BadRunJson {
                path,
                why: format!(
                    "it is larger than {} MiB, far more than naslab writes; is it a run.json?",
                    MAX_RUN_JSON_BYTES >> 20
                ),
            });
        }
        Err(source) => {
            return Err(ReportError::Io {
                what: "read",
                path,
                source,
            });
        }
    };
    let result = parse_run_json(&path, &bytes)?;
    Ok(LoadedRun {
        dir: dir.to_path_buf(),
        result,
    })
}

/// The largest run.json read: naslab's own are well under a few MiB (the op records
/// live in files of their own), so anything bigger is not one of them.
pub const MAX_RUN_JSON_BYTES: u64 = 64 << 20;

/// Reads at most `limit` bytes of `path`; a longer file is a `FileTooLarge` error.
fn read_limited(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::ErrorKind::FileTooLarge.into());
    }
    Ok(bytes)
}

/// Parses run.json's bytes (`path` names it in errors), checking its schema version
/// first, so a newer layout is reported as such and not as garbage.
pub fn parse_run_json(path: &Path, bytes: &[u8]) -> Result<RunResult, ReportError> {
    #[derive(serde::Deserialize)]
    struct Version {
        schema_version: Option<u32>,
    }
    let version: Version = serde_json::from_slice(bytes).map_err(|e| ReportError::BadRunJson {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    match version.schema_version {
        Some(v) if v > SCHEMA_VERSION => {
            return Err(ReportError::NewerSchema {
                path: path.to_path_buf(),
                found: v,
                known: SCHEMA_VERSION,
            });
        }
        None => {
            return Err(ReportError::BadRunJson {
                path: path.to_path_buf(),
                why: "it has no schema_version".into(),
            });
        }
        Some(_) => {}
    }
    serde_json::from_slice(bytes).map_err(|e| ReportError::BadRunJson {
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}

/// Names run directories below `dir` (one or two levels down), for a user who gave
/// `OUT` or `OUT/LABEL` instead of `OUT/LABEL/TIMESTAMP`.
fn run_dirs_hint(dir: &Path) -> String {
    let mut found = Vec::new();
    let mut level = vec![dir.to_path_buf()];
    for _ in 0..2 {
        let mut next = Vec::new();
        for d in &level {
            let Ok(entries) = std::fs::read_dir(d) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if p.join("run.json").is_file() {
                    found.push(p);
                } else if p.is_dir() {
                    next.push(p);
                }
            }
        }
        if !found.is_empty() {
            break;
        }
        level = next;
    }
    found.sort();
    match found.len() {
        0 => "; run `naslab run ... --out DIR` first and give the directory it prints".into(),
        n => {
            let shown: Vec<String> = found
                .iter()
                .rev()
                .take(3)
                .map(|p| format!("'{}'", p.display()))
                .collect();
            format!(
                "; it holds {n} run director{} below it, for example {}",
                if n == 1 { "y" } else { "ies" },
                shown.join(", ")
            )
        }
    }
}
