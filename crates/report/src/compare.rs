//! Side-by-side comparison of runs, as the NASPT paper's Table 2: each run's throughput
//! per workload normalised to a baseline run, averaged by the geometric mean of the
//! ratios, with the raw MB/s beside. One model, rendered as a terminal table, Markdown,
//! CSV, JSON or (in `html`) a page with the charts overlaid.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

pub use naslab_results::export::csv_field;
use naslab_results::sweep::Sweep;
use naslab_results::{RunResult, WorkloadResult, duration_text};

use serde::Serialize;
use ts_rs::TS;

use crate::link_sweep::{LinkSweep, link_sweep};
use crate::{LoadedRun, ReportError, load_run};

/// Which mean the averages are, in words the outputs print.
pub const MEAN_NAME: &str =
    "geometric mean of the per-workload ratios to the baseline, over the workloads every run has";

/// One run as the comparison names it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct RunInfo {
    /// A column letter: A, B, C ...
    pub letter: String,
    /// The column's heading: the device (`--device`) when the run names one, with the
    /// letter added when two runs name the same device; otherwise the letter.
    pub column: String,
    /// Its label and time stamp (`run/20260101T000000Z`), or its path when those repeat.
    pub name: String,
    /// The device measured, as given with `--device` (and `--firmware`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The run directory.
    pub dir: String,
    /// When it started.
    pub started_at: String,
    /// What it measured: target path, backend, file system and source.
    pub target: String,
    /// Cache mode and pacing.
    pub options: String,
}

/// A batch comparison of one run against the baseline on one workload, in hyperfine's
/// style: the ratio of medians with an uncertainty from both runs' min..max spreads.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Spread {
    /// This run's median over the baseline's (as in `ratio`).
    pub ratio: f64,
    /// The uncertainty of `ratio`: half of each run's min..max range relative to its
    /// median, added in quadrature, times the ratio.
    pub plus_minus: f64,
    /// Whether the two runs' min..max ranges do not overlap: the difference is larger
    /// than the spread of the iterations.
    pub beyond_spread: bool,
    /// Iterations behind this run's and the baseline's figures.
    pub iterations: [usize; 2],
}

/// One workload's row: each run's MB/s and ratio to the baseline.
#[derive(Debug, Clone, Serialize, TS)]
pub struct WorkloadRow {
    /// The workload.
    pub name: String,
    /// Each run's throughput (its median iteration), when the run has the workload.
    pub mb_s: Vec<Option<f64>>,
    /// Each run's min..max throughput over its iterations.
    pub mb_s_range: Vec<Option<[f64; 2]>>,
    /// Each run's throughput over the baseline's, when both have it and the baseline's is above zero.
    pub ratio: Vec<Option<f64>>,
    /// For runs with several iterations (and a baseline with several): the ratio with its spread.
    pub spread: Vec<Option<Spread>>,
    /// Whether the row is in the geometric mean (every run has it, with a ratio above zero).
    pub in_mean: bool,
}

/// A setting the runs do not share, with each run's value.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, TS)]
pub struct SettingDiff {
    /// What differs: `pacing`, `cache mode`, `scale`, `naslab version` ...
    pub setting: String,
    /// Each run's value, `-` where the run does not record it.
    pub values: Vec<String>,
}

/// The whole comparison.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Comparison {
    /// The runs, in the order given (the baseline among them).
    pub runs: Vec<RunInfo>,
    /// The baseline's index in `runs`.
    pub baseline: usize,
    /// What the averages are.
    pub mean: &'static str,
    /// One row per workload, in order of first appearance.
    pub workloads: Vec<WorkloadRow>,
    /// Each run's geometric mean of its ratios over `mean_workloads`.
    pub mean_ratio: Vec<Option<f64>>,
    /// The workloads every run has (with a ratio above zero): what the means cover.
    pub mean_workloads: Vec<String>,
    /// The settings that differ between runs, so their figures may not be comparable.
    pub differences: Vec<SettingDiff>,
    /// Each run's capacity sweep (`naslab sweep`), when it is one: its curve is compared
    /// by knee, peak achieved rate and overall response time, and drawn in the page.
    pub sweeps: Vec<Option<Sweep>>,
    /// Runs made behind different emulated links, as a sweep against the round trip;
    /// absent unless at least two runs crossed different links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub links: Option<LinkSweep>,
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
                || r.result.device.name.as_deref() == Some(spec)
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

/// How many clients made the run: a multi-client job's, or 1.
fn clients(r: &RunResult) -> usize {
    r.multi_client.as_ref().map_or(1, |m| m.clients.len())
}

/// The settings that shape a run's figures, by name, as text.
fn settings(run: &LoadedRun) -> BTreeMap<String, String> {
    let r = &run.result;
    let cache = serde_json::to_value(r.options.cache)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    let mut m = BTreeMap::new();
    m.insert("naslab version".to_string(), r.naslab_version.clone());
    m.insert("pacing".to_string(), r.options.pacing.clone());
    m.insert("cache mode".to_string(), cache);
    m.insert("iterations".to_string(), r.options.iterations.to_string());
    m.insert("target kind".to_string(), r.target.backend.clone());
    m.insert("file system".to_string(), r.target.fs_type.clone());
    m.insert("client host".to_string(), r.environment.host.clone());
    m.insert("client kernel".to_string(), r.environment.kernel.clone());
    m.insert("clients".to_string(), clients(r).to_string());
    m.insert("op records".to_string(), kept(r.options.records));
    for s in r.settings() {
        m.insert(s.name, s.value);
    }
    m
}

fn kept(b: bool) -> String {
    if b { "kept" } else { "not kept" }.to_string()
}

/// Settings that are measurements, different in every run: the round trip probed
/// before the run (the emulated link, which is set, is compared).
const MEASURED: &[&str] = &["link rtt measured"];

/// Every setting whose value is not the same in all runs.
fn differences(runs: &[LoadedRun]) -> Vec<SettingDiff> {
    let all: Vec<BTreeMap<String, String>> = runs.iter().map(settings).collect();
    let mut keys: Vec<&String> = all
        .iter()
        .flat_map(|m| m.keys())
        .filter(|k| !MEASURED.contains(&k.as_str()))
        .collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter_map(|k| {
            let values: Vec<String> = all
                .iter()
                .map(|m| {
                    m.get(k)
                        .filter(|v| !v.is_empty())
                        .cloned()
                        .unwrap_or("-".into())
                })
                .collect();
            (values.iter().any(|v| *v != values[0])).then(|| SettingDiff {
                setting: k.clone(),
                values,
            })
        })
        .collect()
}

/// The ratio `mine / base` with its spread, when both have more than one iteration.
fn spread(mine: &WorkloadResult, base: &WorkloadResult) -> Option<Spread> {
    let n = [mine.iterations.len(), base.iterations.len()];
    if n[0] < 2 || n[1] < 2 || mine.throughput_mb_s <= 0.0 || base.throughput_mb_s <= 0.0 {
        return None;
    }
    let half = |w: &WorkloadResult| (w.throughput_max_mb_s - w.throughput_min_mb_s) / 2.0;
    let ratio = mine.throughput_mb_s / base.throughput_mb_s;
    let rel = ((half(mine) / mine.throughput_mb_s).powi(2)
        + (half(base) / base.throughput_mb_s).powi(2))
    .sqrt();
    Some(Spread {
        ratio,
        plus_minus: ratio * rel,
        beyond_spread: mine.throughput_min_mb_s > base.throughput_max_mb_s
            || mine.throughput_max_mb_s < base.throughput_min_mb_s,
        iterations: n,
    })
}

/// Builds the comparison of `runs` against `runs[baseline]`.
pub fn compare(runs: &[LoadedRun], baseline: usize) -> Comparison {
    let baseline = baseline.min(runs.len().saturating_sub(1));
    let short: Vec<String> = runs.iter().map(LoadedRun::short_name).collect();
    let devices: Vec<Option<String>> = runs
        .iter()
        .map(|r| {
            let d = &r.result.device;
            d.name.as_ref().map(|n| match &d.firmware {
                Some(f) => format!("{n} {f}"),
                None => n.clone(),
            })
        })
        .collect();
    let infos: Vec<RunInfo> = runs
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
            let column = match &devices[i] {
                Some(d) if devices.iter().filter(|x| x.as_ref() == Some(d)).count() == 1 => {
                    d.clone()
                }
                Some(d) => format!("{d} ({})", letter(i)),
                None => letter(i),
            };
            RunInfo {
                letter: letter(i),
                column,
                name: if unique {
                    short[i].clone()
                } else {
                    r.dir.display().to_string()
                },
                device: devices[i].clone(),
                dir: r.dir.display().to_string(),
                started_at: r.result.started_at.clone(),
                target,
                options: match clients(&r.result) {
                    1 => format!("cache {cache}, pace {}", r.result.options.pacing),
                    n => format!(
                        "cache {cache}, pace {}, {n} clients",
                        r.result.options.pacing
                    ),
                },
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
    let find = |r: &'_ LoadedRun, name: &str| -> Option<WorkloadResult> {
        r.result
            .workloads
            .iter()
            .find(|w| w.name == name && !w.iterations.is_empty())
            .cloned()
    };
    let workloads: Vec<WorkloadRow> = names
        .iter()
        .map(|name| {
            let found: Vec<Option<WorkloadResult>> = runs.iter().map(|r| find(r, name)).collect();
            let mb_s: Vec<Option<f64>> = found
                .iter()
                .map(|w| w.as_ref().map(|w| w.throughput_mb_s))
                .collect();
            let base = mb_s.get(baseline).copied().flatten().filter(|b| *b > 0.0);
            let ratio = mb_s
                .iter()
                .map(|v| Some((*v)? / base?))
                .collect::<Vec<Option<f64>>>();
            let base_w = found.get(baseline).cloned().flatten();
            let spread = found
                .iter()
                .map(|w| spread(w.as_ref()?, base_w.as_ref()?))
                .collect();
            let in_mean = ratio
                .iter()
                .all(|r| r.is_some_and(|r| r > 0.0 && r.is_finite()));
            WorkloadRow {
                name: name.clone(),
                mb_s,
                mb_s_range: found
                    .iter()
                    .map(|w| {
                        w.as_ref()
                            .map(|w| [w.throughput_min_mb_s, w.throughput_max_mb_s])
                    })
                    .collect(),
                ratio,
                spread,
                in_mean,
            }
        })
        .collect();
    // Only the workloads every run has: a mean over different sets compares nothing.
    let mean_workloads: Vec<String> = workloads
        .iter()
        .filter(|w| w.in_mean)
        .map(|w| w.name.clone())
        .collect();
    let mean_ratio = (0..runs.len())
        .map(|i| {
            let logs: Vec<f64> = workloads
                .iter()
                .filter(|w| w.in_mean)
                .filter_map(|w| w.ratio[i])
                .map(f64::ln)
                .collect();
            (!logs.is_empty()).then(|| (logs.iter().sum::<f64>() / logs.len() as f64).exp())
        })
        .collect();
    let letters: Vec<String> = infos.iter().map(|r: &RunInfo| r.letter.clone()).collect();
    let results: Vec<&RunResult> = runs.iter().map(|r| &r.result).collect();
    let all_settings: Vec<BTreeMap<String, String>> = runs.iter().map(settings).collect();
    let links = link_sweep(&results, &letters, &all_settings);
    Comparison {
        links,
        runs: infos,
        baseline,
        mean: MEAN_NAME,
        workloads,
        mean_ratio,
        mean_workloads,
        differences: differences(runs),
        sweeps: runs.iter().map(|r| r.result.sweep.clone()).collect(),
    }
}

/// `x` to `digits` significant digits, without an exponent: 0.00391, 1.31, 41.5, 1230.
pub fn sig(x: f64, digits: i32) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let mut magnitude = x.abs().log10().floor() as i32;
    // Rounding can carry into the next power of ten (0.9996 is 1.00, not 1.000).
    let step = 10f64.powi(magnitude - digits + 1);
    if ((x / step).round() * step).abs() >= 10f64.powi(magnitude + 1) {
        magnitude += 1;
    }
    let decimals = digits - 1 - magnitude;
    if decimals >= 0 {
        format!("{x:.*}", decimals as usize)
    } else {
        let step = 10f64.powi(-decimals);
        format!("{:.0}", (x / step).round() * step)
    }
}

fn ratio_text(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| sig(r, 3))
}

fn mb_text(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| sig(v, 3))
}

impl Spread {
    /// "1.31 ± 0.04× faster", "2.10 ± 0.30× slower" (the inverse ratio).
    pub fn text(&self) -> String {
        let (r, pm, word) = if self.ratio >= 1.0 {
            (self.ratio, self.plus_minus, "faster")
        } else {
            // 1/r, its uncertainty scaled as d(1/r) = dr / r².
            (
                1.0 / self.ratio,
                self.plus_minus / (self.ratio * self.ratio),
                "slower",
            )
        };
        format!("{} ± {}× {word}", sig(r, 3), sig(pm, 2))
    }

    /// Whether the difference is larger than the iterations' spread, in words.
    pub fn verdict(&self) -> &'static str {
        if self.beyond_spread {
            "the ranges do not overlap: the difference is larger than the spread"
        } else {
            "the ranges overlap: the difference is within the spread"
        }
    }
}

impl Comparison {
    fn baseline_column(&self) -> &str {
        self.runs
            .get(self.baseline)
            .map_or("-", |r| r.column.as_str())
    }

    fn legend(&self, out: &mut String, bullet: &str) {
        for (i, r) in self.runs.iter().enumerate() {
            let base = if i == self.baseline {
                " (baseline)"
            } else {
                ""
            };
            let device = match &r.device {
                Some(d) if r.column != *d => format!("{d}, "),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "{bullet}{}: {device}{}{base}, {}, started {}, {}",
                r.column, r.name, r.target, r.started_at, r.options
            );
        }
    }

    /// The notes and warnings, one per line: what the mean covers and which settings
    /// differ (the table and Markdown show them; the CLI prints them for other formats).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let left_out: Vec<String> = self
            .workloads
            .iter()
            .filter(|w| !w.in_mean)
            .map(|w| {
                let names = |pick: &dyn Fn(Option<f64>) -> bool| -> Vec<&str> {
                    w.mb_s
                        .iter()
                        .zip(&self.runs)
                        .filter(|(v, _)| pick(**v))
                        .map(|(_, run)| run.column.as_str())
                        .collect()
                };
                let missing = names(&|v| v.is_none());
                let zero = names(&|v| v.is_some_and(|v| v <= 0.0));
                let mut why = Vec::new();
                if !missing.is_empty() {
                    why.push(format!("not in {}", missing.join(", ")));
                }
                if !zero.is_empty() {
                    why.push(format!("no throughput in {}", zero.join(", ")));
                }
                format!("{} ({})", w.name, why.join("; "))
            })
            .collect();
        out.push(match self.mean_workloads.len() {
            0 => "the runs share no workload: there is no geometric mean".to_string(),
            n => format!(
                "geometric mean over the {n} workload{} every run has: {}",
                if n == 1 { "" } else { "s" },
                self.mean_workloads.join(", ")
            ),
        });
        if !left_out.is_empty() {
            out.push(format!("not in the mean: {}", left_out.join("; ")));
        }
        for d in &self.differences {
            let values: Vec<String> = self
                .runs
                .iter()
                .zip(&d.values)
                .map(|(r, v)| format!("{} {v}", r.column))
                .collect();
            out.push(format!(
                "warning: the runs differ in {}: {}; their figures may not be comparable",
                d.setting,
                values.join(", ")
            ));
        }
        out
    }

    /// The batch lines: each run against the baseline per workload, with the spread.
    fn spread_lines(&self) -> Vec<String> {
        let base = self.baseline_column();
        let mut out = Vec::new();
        for w in &self.workloads {
            for (i, s) in w.spread.iter().enumerate() {
                if let (Some(s), false) = (s, i == self.baseline) {
                    out.push(format!(
                        "{}: {} is {} than {base} ({} and {} iterations; {})",
                        w.name,
                        self.runs[i].column,
                        s.text(),
                        s.iterations[0],
                        s.iterations[1],
                        s.verdict()
                    ));
                }
            }
        }
        out
    }

    /// The terminal table: ratio and MB/s per run, one row per workload, then the mean.
    pub fn table(&self) -> String {
        let mut o = String::new();
        self.legend(&mut o, "  ");
        let base = self.baseline_column();
        let _ = writeln!(
            o,
            "\nthroughput relative to {base} (MB/s in brackets, 3 significant digits)\n",
        );
        let width = self
            .workloads
            .iter()
            .map(|w| w.name.chars().count() + usize::from(!w.in_mean))
            .chain(["geometric mean".len()])
            .max()
            .unwrap_or(8);
        let col = self
            .runs
            .iter()
            .map(|r| r.column.chars().count())
            .max()
            .unwrap_or(1)
            .max(18);
        let _ = write!(o, "{:<width$}", "workload");
        for r in &self.runs {
            let _ = write!(o, "  {:>col$}", r.column);
        }
        o.push('\n');
        for w in &self.workloads {
            let name = if w.in_mean {
                w.name.clone()
            } else {
                format!("{}*", w.name)
            };
            let _ = write!(o, "{name:<width$}");
            for (ratio, mb) in w.ratio.iter().zip(&w.mb_s) {
                let cell = format!("{:>6} ({:>7})", ratio_text(*ratio), mb_text(*mb));
                let _ = write!(o, "  {cell:>col$}");
            }
            o.push('\n');
        }
        let mut mean_row = format!("{:<width$}", "geometric mean");
        for m in &self.mean_ratio {
            let _ = write!(
                mean_row,
                "  {:>col$}",
                format!("{:>6}{:10}", ratio_text(*m), "")
            );
        }
        o.push_str(mean_row.trim_end());
        o.push_str("\n\n");
        if self.workloads.iter().any(|w| !w.in_mean) {
            o.push_str("* not in the geometric mean\n");
        }
        for line in self.warnings() {
            let _ = writeln!(o, "{line}");
        }
        let spreads = self.spread_lines();
        if !spreads.is_empty() {
            o.push_str("\nbatch spread (hyperfine style: median ratio ± the iterations' min..max, halved, in quadrature)\n");
            for line in spreads {
                let _ = writeln!(o, "  {line}");
            }
        }
        let sweeps = self.sweep_lines();
        if !sweeps.is_empty() {
            o.push_str("\ncapacity sweeps (knee: the highest load every point up to met the cap and kept up)\n");
            for line in sweeps {
                let _ = writeln!(o, "  {line}");
            }
        }
        if let Some(l) = &self.links {
            o.push_str("\nlink sweep (the median iteration of each run, by the round trip its link added)\n");
            o.push_str(&l.table());
        }
        o
    }

    /// One line per run that is a sweep: its unit of load, points, knee, peak achieved
    /// rate, overall response time and why it stopped early; empty without sweeps.
    fn sweep_lines(&self) -> Vec<String> {
        self.sweeps
            .iter()
            .zip(&self.runs)
            .filter_map(|(s, r)| {
                let s = s.as_ref()?;
                let unit = s.unit.label();
                // Users and listed rates are whole numbers: 8 users, not 8.00.
                let load = |k: f64| {
                    if k.fract() == 0.0 {
                        format!("{k:.0}")
                    } else {
                        sig(k, 3)
                    }
                };
                let knee = s
                    .knee
                    .map_or("none".to_string(), |k| format!("{} {unit}", load(k)));
                let mut line = format!(
                    "{}: {} points by {unit}, knee {knee}, peak achieved {} ops/s, overall response time {}",
                    r.column,
                    s.points.len(),
                    sig(s.peak_achieved_ops_s, 3),
                    duration_text(s.overall_response_ns)
                );
                if let Some(why) = &s.stopped {
                    let _ = write!(line, " (stopped early: {why})");
                }
                Some(line)
            })
            .collect()
    }

    /// Markdown: the legend as a list, then the table.
    pub fn markdown(&self) -> String {
        let mut o = String::from("## Comparison\n\n");
        self.legend(&mut o, "- ");
        let _ = writeln!(
            o,
            "\nThroughput relative to {}, with MB/s beside (3 significant digits); the average is the {}.\n",
            md_escape(self.baseline_column()),
            self.mean
        );
        o.push_str("| workload |");
        for r in &self.runs {
            let c = md_escape(&r.column);
            let _ = write!(o, " {c} ratio | {c} MB/s |");
        }
        o.push_str("\n|---|");
        for _ in &self.runs {
            o.push_str("---:|---:|");
        }
        o.push('\n');
        for w in &self.workloads {
            let star = if w.in_mean { "" } else { " \\*" };
            let _ = write!(o, "| {}{star} |", md_escape(&w.name));
            for (ratio, mb) in w.ratio.iter().zip(&w.mb_s) {
                let _ = write!(o, " {} | {} |", ratio_text(*ratio), mb_text(*mb));
            }
            o.push('\n');
        }
        o.push_str("| *geometric mean* |");
        for m in &self.mean_ratio {
            let _ = write!(o, " *{}* | |", ratio_text(*m));
        }
        o.push_str("\n\n");
        if self.workloads.iter().any(|w| !w.in_mean) {
            o.push_str("\\* not in the geometric mean\n\n");
        }
        for line in self.warnings() {
            let _ = writeln!(o, "- {}", md_escape(&line));
        }
        let spreads = self.spread_lines();
        if !spreads.is_empty() {
            o.push_str("\nBatch spread (median ratio ± the iterations' min..max, halved, in quadrature):\n\n");
            for line in spreads {
                let _ = writeln!(o, "- {}", md_escape(&line));
            }
        }
        let sweeps = self.sweep_lines();
        if !sweeps.is_empty() {
            o.push_str("\nCapacity sweeps (knee: the highest load every point up to met the cap and kept up):\n\n");
            for line in sweeps {
                let _ = writeln!(o, "- {}", md_escape(&line));
            }
        }
        if let Some(l) = &self.links {
            o.push_str("\nLink sweep (the median iteration of each run, by the round trip its link added):\n\n```\n");
            o.push_str(&l.table());
            o.push_str("```\n");
        }
        o
    }

    /// CSV: one row per workload, a ratio and an MB/s column per run, the mean last.
    pub fn csv(&self) -> String {
        let mut o = String::from("workload,in_mean");
        for r in &self.runs {
            let _ = write!(
                o,
                ",{},{}",
                csv_field(&format!("{} ratio", r.column)),
                csv_field(&format!("{} MB/s", r.column))
            );
        }
        o.push('\n');
        for w in &self.workloads {
            o.push_str(&csv_field(&w.name));
            let _ = write!(o, ",{}", w.in_mean);
            for (ratio, mb) in w.ratio.iter().zip(&w.mb_s) {
                let _ = write!(
                    o,
                    ",{},{}",
                    ratio.map_or(String::new(), |r| sig(r, 6)),
                    mb.map_or(String::new(), |v| sig(v, 6))
                );
            }
            o.push('\n');
        }
        o.push_str("geometric mean,");
        for m in &self.mean_ratio {
            let _ = write!(o, ",{},", m.map_or(String::new(), |r| sig(r, 6)));
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

fn md_escape(text: &str) -> String {
    text.replace('|', "\\|")
}

#[cfg(test)]
mod tests {
    use super::*;
    use naslab_results::sweep::LoadUnit;

    fn run_info(letter: &str) -> RunInfo {
        RunInfo {
            letter: letter.into(),
            column: letter.into(),
            name: format!("run/{letter}"),
            device: None,
            dir: letter.into(),
            started_at: String::new(),
            target: String::new(),
            options: String::new(),
        }
    }

    #[test]
    fn a_sweep_is_compared_by_its_knee_peak_and_overall_response_time() {
        let sweep = Sweep {
            unit: LoadUnit::Users,
            arrivals: None,
            warmup_ns: 0,
            saturation_margin: 0.05,
            cap: None,
            points: Vec::new(),
            knee: Some(8.0),
            peak_achieved_ops_s: 1234.5,
            overall_response_ns: 2_500_000,
            stopped: Some("p99 of all over 50 ms at 16 users".into()),
        };
        let c = Comparison {
            runs: vec![run_info("A"), run_info("B")],
            baseline: 0,
            mean: MEAN_NAME,
            workloads: Vec::new(),
            mean_ratio: vec![None, None],
            mean_workloads: Vec::new(),
            differences: Vec::new(),
            sweeps: vec![None, Some(sweep)],
            links: None,
        };
        let line = "B: 0 points by users, knee 8 users, peak achieved 1230 ops/s, overall response time 2.50 ms (stopped early: p99 of all over 50 ms at 16 users)";
        assert_eq!(c.sweep_lines(), vec![line.to_string()]);
        assert!(c.table().contains("capacity sweeps"));
        assert!(c.table().contains(line), "{}", c.table());
        assert!(
            c.markdown().contains(&format!("- {line}")),
            "{}",
            c.markdown()
        );
        let none = Comparison {
            sweeps: vec![None, None],
            ..c
        };
        assert!(!none.table().contains("capacity sweeps"));
    }

    #[test]
    fn letters_go_on_past_z() {
        assert_eq!(letter(0), "A");
        assert_eq!(letter(25), "Z");
        assert_eq!(letter(26), "AA");
    }

    #[test]
    fn three_significant_digits_at_every_magnitude() {
        assert_eq!(sig(0.0039, 3), "0.00390");
        assert_eq!(sig(1.3149, 3), "1.31");
        assert_eq!(sig(41.5, 3), "41.5");
        assert_eq!(sig(166.0, 3), "166");
        assert_eq!(sig(1234.5, 3), "1230");
        assert_eq!(sig(0.0, 3), "0");
        assert_eq!(sig(0.9996, 3), "1.00");
        assert_eq!(sig(9.996, 3), "10.0");
        assert_eq!(sig(0.09996, 3), "0.100");
        assert_eq!(sig(0.9994, 3), "0.999");
    }
}
