//! Side-by-side comparison of runs, as the NASPT paper's Table 2: each run's throughput
//! per workload normalised to a baseline run, averaged by the geometric mean of the
//! ratios, with the raw MB/s beside. One model, rendered as a terminal table, Markdown,
//! CSV, JSON or (in `html`) a page with the charts overlaid.

use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use crate::{load_run, LoadedRun, ReportError};

/// Which mean the averages are, in words the outputs print.
pub const MEAN_NAME: &str = "geometric mean of the per-workload ratios to the baseline";

/// One run as the comparison names it.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    /// A column letter: A, B, C ...
    pub letter: String,
    /// Its label and time stamp (`run/20260101T000000Z`), or its path when those repeat.
    pub name: String,
    /// The run directory.
    pub dir: String,
    /// When it started.
    pub started_at: String,
    /// What it measured: target path, backend, file system and source.
    pub target: String,
    /// Cache mode and pacing.
    pub options: String,
}

/// One workload's row: each run's MB/s and ratio to the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct WorkloadRow {
    /// The workload.
    pub name: String,
    /// Each run's throughput (its median iteration), when the run has the workload.
    pub mb_s: Vec<Option<f64>>,
    /// Each run's throughput over the baseline's, when both have it and the baseline's is above zero.
    pub ratio: Vec<Option<f64>>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    /// The runs, in the order given (the baseline among them).
    pub runs: Vec<RunInfo>,
    /// The baseline's index in `runs`.
    pub baseline: usize,
    /// What the averages are.
    pub mean: &'static str,
    /// One row per workload, in order of first appearance.
    pub workloads: Vec<WorkloadRow>,
    /// Each run's geometric mean of its positive ratios.
    pub mean_ratio: Vec<Option<f64>>,
    /// How many workloads each run's mean covers.
    pub mean_over: Vec<usize>,
}

fn letter(i: usize) -> String {
    let mut s = String::new();
    let mut n = i + 1;
    while n > 0 {
        let r = (n - 1) % 26;
        s.insert(0, (b'A' + r as u8) as char);
        n = (n - 1) / 26;
    }
    s
}

/// Picks the baseline among `runs`: by its directory as given, its full path, its
/// `label/stamp` name, its time stamp or its label (the first run with it). A run
/// directory that is not among them is loaded and put first. `None` means the first run.
pub fn resolve_baseline(
    runs: &mut Vec<LoadedRun>,
    spec: Option<&str>,
) -> Result<usize, ReportError> {
    if runs.is_empty() {
        return Err(ReportError::NoRuns);
    }
    let Some(spec) = spec else {
        return Ok(0);
    };
    let want = Path::new(spec);
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let want_canon = canon(want);
    let matches: Vec<usize> = (0..runs.len())
        .filter(|&i| {
            let r = &runs[i];
            r.dir == want
                || (want_canon.is_some() && canon(&r.dir) == want_canon)
                || r.short_name() == spec
                || r.dir.file_name().is_some_and(|n| n == spec)
                || r.dir
                    .parent()
                    .and_then(Path::file_name)
                    .is_some_and(|n| n == spec)
        })
        .collect();
    match matches.as_slice() {
        [i] => Ok(*i),
        [i, ..] => Ok(*i),
        [] if want.join("run.json").is_file() => {
            runs.insert(0, load_run(want)?);
            Ok(0)
        }
        [] => Err(ReportError::NoSuchBaseline(spec.to_string())),
    }
}

/// Builds the comparison of `runs` against `runs[baseline]`.
pub fn compare(runs: &[LoadedRun], baseline: usize) -> Comparison {
    let baseline = baseline.min(runs.len().saturating_sub(1));
    let short: Vec<String> = runs.iter().map(LoadedRun::short_name).collect();
    let infos = runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let t = &r.result.target;
            let mut target = format!("{} ({}", t.path, t.backend);
            for extra in [&t.fs_type, &t.source] {
                if !extra.is_empty() {
                    let _ = write!(target, ", {extra}");
                }
            }
            target.push(')');
            let cache = serde_json::to_value(r.result.options.cache)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            let unique = short.iter().filter(|s| **s == short[i]).count() == 1;
            RunInfo {
                letter: letter(i),
                name: if unique {
                    short[i].clone()
                } else {
                    r.dir.display().to_string()
                },
                dir: r.dir.display().to_string(),
                started_at: r.result.started_at.clone(),
                target,
                options: format!("cache {cache}, pace {}", r.result.options.pacing),
            }
        })
        .collect();
    let mut names: Vec<String> = Vec::new();
    for r in runs {
        for w in &r.result.workloads {
            if !names.contains(&w.name) {
                names.push(w.name.clone());
            }
        }
    }
    let mb_s_of = |r: &LoadedRun, name: &str| {
        r.result
            .workloads
            .iter()
            .find(|w| w.name == name && !w.iterations.is_empty())
            .map(|w| w.throughput_mb_s)
    };
    let workloads: Vec<WorkloadRow> = names
        .iter()
        .map(|name| {
            let mb_s: Vec<Option<f64>> = runs.iter().map(|r| mb_s_of(r, name)).collect();
            let base = mb_s.get(baseline).copied().flatten().filter(|b| *b > 0.0);
            let ratio = mb_s
                .iter()
                .map(|v| Some((*v)? / base?))
                .collect::<Vec<Option<f64>>>();
            WorkloadRow {
                name: name.clone(),
                mb_s,
                ratio,
            }
        })
        .collect();
    let mut mean_ratio = Vec::new();
    let mut mean_over = Vec::new();
    for i in 0..runs.len() {
        // A ratio of zero (a run that moved nothing) has no logarithm: it is left out
        // of the mean, and the count beside the mean says how many workloads it covers.
        let logs: Vec<f64> = workloads
            .iter()
            .filter_map(|w| w.ratio[i])
            .filter(|r| *r > 0.0 && r.is_finite())
            .map(f64::ln)
            .collect();
        mean_over.push(logs.len());
        mean_ratio
            .push((!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp()));
    }
    Comparison {
        runs: infos,
        baseline,
        mean: MEAN_NAME,
        workloads,
        mean_ratio,
        mean_over,
    }
}

fn ratio_text(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{r:.2}"))
}

fn mb_text(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

impl Comparison {
    fn baseline_letter(&self) -> &str {
        self.runs
            .get(self.baseline)
            .map_or("-", |r| r.letter.as_str())
    }

    fn legend(&self, out: &mut String, bullet: &str) {
        for (i, r) in self.runs.iter().enumerate() {
            let base = if i == self.baseline {
                " (baseline)"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "{bullet}{}: {}{base}, {}, started {}, {}",
                r.letter, r.name, r.target, r.started_at, r.options
            );
        }
    }

    /// The terminal table: ratio and MB/s per run, one row per workload, then the mean.
    pub fn table(&self) -> String {
        let mut o = String::new();
        self.legend(&mut o, "  ");
        let base = self.baseline_letter();
        let _ = writeln!(
            o,
            "\nthroughput relative to {base} (MB/s in brackets); average: {}\n",
            self.mean
        );
        let width = self
            .workloads
            .iter()
            .map(|w| w.name.chars().count())
            .chain(["geometric mean".len()])
            .max()
            .unwrap_or(8);
        let _ = write!(o, "{:<width$}", "workload");
        for r in &self.runs {
            let _ = write!(o, "  {:>18}", r.letter);
        }
        o.push('\n');
        for w in &self.workloads {
            let _ = write!(o, "{:<width$}", w.name);
            for (ratio, mb) in w.ratio.iter().zip(&w.mb_s) {
                let _ = write!(o, "  {:>6} ({:>9})", ratio_text(*ratio), mb_text(*mb));
            }
            o.push('\n');
        }
        let _ = write!(o, "{:<width$}", "geometric mean");
        for (m, n) in self.mean_ratio.iter().zip(&self.mean_over) {
            let _ = write!(o, "  {:>6} {:>11}", ratio_text(*m), format!("({n} wl)"));
        }
        o.push('\n');
        o
    }

    /// Markdown: the legend as a list, then the table.
    pub fn markdown(&self) -> String {
        let mut o = String::from("## Comparison\n\n");
        self.legend(&mut o, "- ");
        let _ = writeln!(
            o,
            "\nThroughput relative to run {}, with MB/s beside; the average is the {}.\n",
            self.baseline_letter(),
            self.mean
        );
        o.push_str("| workload |");
        for r in &self.runs {
            let _ = write!(o, " {} ratio | {} MB/s |", r.letter, r.letter);
        }
        o.push_str("\n|---|");
        for _ in &self.runs {
            o.push_str("---:|---:|");
        }
        o.push('\n');
        for w in &self.workloads {
            let _ = write!(o, "| {} |", md_escape(&w.name));
            for (ratio, mb) in w.ratio.iter().zip(&w.mb_s) {
                let _ = write!(o, " {} | {} |", ratio_text(*ratio), mb_text(*mb));
            }
            o.push('\n');
        }
        o.push_str("| *geometric mean* |");
        for (m, n) in self.mean_ratio.iter().zip(&self.mean_over) {
            let s = if *n == 1 { "" } else { "s" };
            let _ = write!(o, " *{}* | ({n} workload{s}) |", ratio_text(*m));
        }
        o.push('\n');
        o
    }

    /// CSV: one row per workload, a ratio and an MB/s column per run, the mean last.
    pub fn csv(&self) -> String {
        let mut o = String::from("workload");
        for r in &self.runs {
            let _ = write!(
                o,
                ",{},{}",
                csv_field(&format!("{} ratio", r.name)),
                csv_field(&format!("{} MB/s", r.name))
            );
        }
        o.push('\n');
        for w in &self.workloads {
            o.push_str(&csv_field(&w.name));
            for (ratio, mb) in w.ratio.iter().zip(&w.mb_s) {
                let _ = write!(
                    o,
                    ",{},{}",
                    ratio.map_or(String::new(), |r| format!("{r:.4}")),
                    mb.map_or(String::new(), |v| format!("{v:.3}"))
                );
            }
            o.push('\n');
        }
        o.push_str("geometric mean");
        for m in &self.mean_ratio {
            let _ = write!(o, ",{},", m.map_or(String::new(), |r| format!("{r:.4}")));
        }
        o.push('\n');
        o
    }

    /// JSON: the model itself.
    pub fn json(&self) -> String {
        // Only strings, numbers and vectors: serialising cannot fail.
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// A CSV field, quoted when it holds a comma, quote or line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_go_on_past_z() {
        assert_eq!(letter(0), "A");
        assert_eq!(letter(25), "Z");
        assert_eq!(letter(26), "AA");
    }
}
