//! `naslab frag PATH...`: how files lie on disk, per file and per directory tree.

use std::fmt::Write;
use std::path::Path;

use anyhow::{bail, Context};
use naslab_engine::Plan;
use naslab_layout::{
    analyze_file, analyze_tree, walk, FileLayout, LayoutError, Totals, TreeLayout,
};
use naslab_results::{IterationLayout, LayoutSummary};
use naslab_trace::FileKind;
use serde::Serialize;

use crate::args::FragArgs;

/// A file's layout with its derived figures, as JSON shows it.
#[derive(Serialize)]
struct FileJson<'a> {
    #[serde(flatten)]
    layout: &'a FileLayout,
    ratio: Option<f64>,
    score: Option<f64>,
}

impl<'a> FileJson<'a> {
    fn new(layout: &'a FileLayout) -> Self {
        FileJson {
            layout,
            ratio: layout.ratio(),
            score: layout.score(),
        }
    }
}

#[derive(Serialize)]
struct TotalsJson<'a> {
    #[serde(flatten)]
    totals: &'a Totals,
    ratio: Option<f64>,
    score: Option<f64>,
}

#[derive(Serialize)]
struct TreeJson<'a> {
    root: &'a Path,
    totals: TotalsJson<'a>,
    worst: Vec<FileJson<'a>>,
    skipped: &'a [naslab_layout::Skipped],
}

#[derive(Serialize)]
struct Report<'a> {
    files: Vec<FileJson<'a>>,
    trees: Vec<TreeJson<'a>>,
}

/// `naslab frag`.
pub fn frag(args: FragArgs) -> anyhow::Result<()> {
    if args.paths.is_empty() {
        bail!("give at least one file or directory");
    }
    let mut files = Vec::new();
    let mut trees = Vec::new();
    for path in &args.paths {
        let meta = std::fs::metadata(path)
            .with_context(|| format!("cannot examine '{}'", path.display()))?;
        if meta.is_dir() {
            trees.push(analyze_tree(path, args.top, !args.no_sync)?);
        } else {
            files.push(analyze_file(path, !args.no_sync)?);
        }
    }
    if args.json {
        let report = Report {
            files: files.iter().map(FileJson::new).collect(),
            trees: trees.iter().map(tree_json).collect(),
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", text(&files, &trees));
    }
    Ok(())
}

fn tree_json(t: &TreeLayout) -> TreeJson<'_> {
    TreeJson {
        root: &t.root,
        totals: TotalsJson {
            totals: &t.totals,
            ratio: t.totals.ratio(),
            score: t.totals.score(),
        },
        worst: t.worst.iter().map(FileJson::new).collect(),
        skipped: &t.skipped,
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map(|x| format!("{x:.decimals$}"))
        .unwrap_or_else(|| "-".into())
}

const HEADER: &str = "size bytes   extents    ideal   ratio    score  unwritten  fs       file";

fn row(o: &mut String, f: &FileLayout, shown: &Path) {
    let _ = writeln!(
        o,
        "{:>14} {:>9} {:>8} {:>7} {:>8} {:>10}  {:<8} {}{}",
        f.size_bytes,
        f.extents,
        f.ideal_extents
            .map(|i| i.to_string())
            .unwrap_or_else(|| "-".into()),
        opt(f.ratio(), 2),
        opt(f.score(), 4),
        f.unwritten_extents,
        f.fs,
        shown.display(),
        if f.delalloc_extents > 0 {
            format!("  ({} delalloc)", f.delalloc_extents)
        } else {
            String::new()
        }
    );
}

/// The terminal report: a table of the files given, then each tree's totals and worst files.
fn text(files: &[FileLayout], trees: &[TreeLayout]) -> String {
    let mut o = String::new();
    if !files.is_empty() {
        let _ = writeln!(o, "    {HEADER}");
        for f in files {
            row(&mut o, f, &f.path);
        }
    }
    for t in trees {
        if !o.is_empty() {
            o.push('\n');
        }
        let s = &t.totals;
        let _ = writeln!(
            o,
            "{}: {} files, {} bytes, {} extents (ideal {}{}), ratio {}, layout score {}",
            t.root.display(),
            s.files,
            s.size_bytes,
            s.extents,
            s.ideal_extents,
            if s.files_without_ideal > 0 {
                format!(", {} files without a known limit", s.files_without_ideal)
            } else {
                String::new()
            },
            opt(s.ratio(), 2),
            opt(s.score(), 4),
        );
        if s.unwritten_extents > 0 || s.delalloc_extents > 0 {
            let _ = writeln!(
                o,
                "  {} unwritten and {} delalloc extent records",
                s.unwritten_extents, s.delalloc_extents
            );
        }
        if !t.worst.is_empty() {
            let _ = writeln!(o, "  worst files (most extents beyond ideal):");
            let _ = writeln!(o, "    {HEADER}");
            for f in &t.worst {
                let shown = f.path.strip_prefix(&t.root).unwrap_or(&f.path);
                row(&mut o, f, shown);
            }
        }
        if let Some(first) = t.skipped.first() {
            let _ = writeln!(
                o,
                "  skipped {} (first: {}: {})",
                t.skipped.len(),
                first.path.display(),
                first.reason
            );
        }
    }
    o
}

fn summary(t: &Totals) -> LayoutSummary {
    LayoutSummary {
        files: t.files,
        bytes: t.size_bytes,
        extents: t.extents,
        ideal_extents: t.ideal_extents,
        score: t.score(),
    }
}

/// The layout of a workload directory after an iteration: the files preparation made
/// (by the plan's file set) and everything else the workload left. `None` when the file
/// system does not report extents or the directory cannot be read.
pub fn iteration_layout(dir: &Path, plan: &Plan) -> Option<IterationLayout> {
    let prepared: std::collections::HashSet<&Path> = plan
        .files
        .entries
        .iter()
        .filter(|e| e.exists && e.kind == FileKind::File)
        .map(|e| Path::new(e.path.as_str()))
        .collect();
    let (mut pre, mut written) = (Totals::default(), Totals::default());
    let mut unsupported = false;
    let walked = walk(dir, true, |path, r| match r {
        Ok(f) => {
            let rel = path.strip_prefix(dir).unwrap_or(path);
            if prepared.contains(rel) {
                pre.add(&f);
            } else {
                written.add(&f);
            }
        }
        Err(LayoutError::Unsupported { .. }) => unsupported = true,
        // A file that cannot be opened is left out of the figures.
        Err(_) => {}
    });
    if walked.is_err() || unsupported {
        return None;
    }
    Some(IterationLayout {
        prepared: summary(&pre),
        written: summary(&written),
    })
}
