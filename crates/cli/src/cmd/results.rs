//! `naslab results`: the runs under a results directory, found by their run.json, listed
//! and filtered by device, date, workload and label.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use naslab_results::RunResult;
use serde::Serialize;

use crate::args::ResultsArgs;

/// How deep under DIR run.json files are looked for (OUT/LABEL/TIMESTAMP is 2 deep).
const MAX_DEPTH: usize = 6;

/// One run found, as listed.
#[derive(Debug, Serialize)]
struct Found {
    run_dir: PathBuf,
    started_at: String,
    label: String,
    device: naslab_results::Device,
    naslab_version: String,
    target: String,
    workloads: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aborted: Option<String>,
}

/// Lists the runs.
pub fn results(args: ResultsArgs) -> anyhow::Result<()> {
    let (since, until) = (args.since, args.until);
    if !args.dir.is_dir() {
        bail!(
            "no results directory '{}'; give the --out directory runs were written to",
            args.dir.display()
        );
    }
    let mut files = Vec::new();
    find_run_json(&args.dir, 0, &mut files)?;
    let mut runs = Vec::new();
    for file in files {
        let run_dir = file.parent().unwrap_or(Path::new(".")).to_path_buf();
        let run: RunResult = match naslab_report::load_run(&run_dir) {
            Ok(loaded) => loaded.result,
            Err(e) => {
                eprintln!("warning: skipping a run: {e}");
                continue;
            }
        };
        // Runs from before labels were recorded: the LABEL of OUT/LABEL/TIMESTAMP.
        let label = run.label.clone().unwrap_or_else(|| {
            run_dir
                .parent()
                .and_then(Path::file_name)
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        });
        runs.push(Found {
            run_dir,
            started_at: run.started_at.clone(),
            label,
            device: run.device.clone(),
            naslab_version: run.naslab_version.clone(),
            target: run.target.path.clone(),
            workloads: run.workloads.iter().map(|w| w.name.clone()).collect(),
            aborted: run.aborted.clone(),
        });
    }
    runs.retain(|r| {
        let device_ok = args.device.as_ref().is_none_or(|want| {
            r.device
                .name
                .as_ref()
                .is_some_and(|d| d.to_lowercase().contains(&want.to_lowercase()))
        });
        let since_ok = since
            .as_ref()
            .is_none_or(|s| r.started_at.as_str() >= s.as_str());
        let until_ok = until.as_ref().is_none_or(|u| {
            let at = &r.started_at[..u.len().min(r.started_at.len())];
            at <= u.as_str()
        });
        let workload_ok = args
            .workload
            .as_ref()
            .is_none_or(|w| r.workloads.iter().any(|n| n.eq_ignore_ascii_case(w)));
        let label_ok = args.label.as_ref().is_none_or(|l| &r.label == l);
        device_ok && since_ok && until_ok && workload_ok && label_ok
    });
    runs.sort_by(|a, b| (&a.started_at, &a.run_dir).cmp(&(&b.started_at, &b.run_dir)));
    if args.json {
        crate::stdout::print_bytes(
            format!("{}\n", serde_json::to_string_pretty(&runs)?).as_bytes(),
        )?;
    } else {
        crate::stdout::print(&table(&runs))?;
        if runs.is_empty() {
            eprintln!(
                "(no runs under '{}' match; `naslab results {}` lists them all)",
                args.dir.display(),
                args.dir.display()
            );
        }
    }
    Ok(())
}

/// Collects every run.json under `dir`, at most [`MAX_DEPTH`] directories down.
fn find_run_json(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot list '{}'", dir.display()))?;
    let mut subdirs = Vec::new();
    for e in entries {
        let e = e.with_context(|| format!("cannot list '{}'", dir.display()))?;
        let path = e.path();
        let kind = e.file_type()?;
        if kind.is_dir() {
            subdirs.push(path);
        } else if kind.is_file() && e.file_name() == "run.json" {
            out.push(path);
        }
    }
    if depth < MAX_DEPTH {
        for d in subdirs {
            find_run_json(&d, depth + 1, out)?;
        }
    }
    Ok(())
}

/// The listing as a terminal table.
fn table(runs: &[Found]) -> String {
    let rows: Vec<[String; 6]> = runs
        .iter()
        .map(|r| {
            let device = match (&r.device.name, &r.device.firmware) {
                (Some(n), Some(f)) => format!("{n} ({f})"),
                (Some(n), None) => n.clone(),
                (None, Some(f)) => format!("- ({f})"),
                (None, None) => "-".into(),
            };
            let mut workloads = match r.workloads.len() {
                0 => "-".to_string(),
                1 => r.workloads[0].clone(),
                n => format!("{n}: {}", r.workloads.join(", ")),
            };
            if workloads.chars().count() > 48 {
                workloads = workloads.chars().take(47).collect::<String>() + "…";
            }
            if r.aborted.is_some() {
                workloads.push_str(" (stopped early)");
            }
            [
                r.started_at
                    .replace('T', " ")
                    .trim_end_matches('Z')
                    .to_string(),
                device,
                r.label.clone(),
                workloads,
                r.target.clone(),
                r.run_dir.display().to_string(),
            ]
            .map(|cell| naslab_trace::printable(&cell).into_owned())
        })
        .collect();
    let head = [
        "started (UTC)",
        "device",
        "label",
        "workloads",
        "target",
        "run directory",
    ];
    let mut widths = head.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i + 1 == cells.len() {
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.extend(std::iter::repeat_n(' ', w - cell.chars().count() + 2));
            }
        }
        s.push('\n');
        s
    };
    let mut out = line(&head.map(str::to_string));
    for row in &rows {
        out.push_str(&line(row));
    }
    out
}
