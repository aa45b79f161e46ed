//! `naslab frag PATH...`: how files lie on disk, per file and per directory tree.

use std::fmt::Write;
use std::path::Path;

use anyhow::bail;
use naslab_engine::Plan;
#[cfg(target_os = "linux")]
use naslab_engine::backend::LocalRoot;
#[cfg(target_os = "linux")]
use naslab_host::Mounts;
use naslab_layout::{FileLayout, LayoutError, Totals, TreeLayout};
#[cfg(target_os = "linux")]
use naslab_layout::{analyze_file_in, analyze_tree_in, walk_dir};
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
    /// Paths given that could not be mapped, and why.
    failed: &'a [naslab_layout::Skipped],
}

/// `naslab frag`. A path that cannot be mapped (missing, or on a file system that
/// reports no extents through FIEMAP or, on Windows, FSCTL_GET_RETRIEVAL_POINTERS) is
/// reported after the others, which are still done; the command then fails.
pub fn frag(args: FragArgs) -> anyhow::Result<()> {
    if args.paths.is_empty() {
        bail!("give at least one file or directory");
    }
    // One read of the mount table for every path.
    #[cfg(target_os = "linux")]
    let mounts = Mounts::read();
    #[cfg(target_os = "linux")]
    let (tree_of, file_of) = (
        |p: &Path| analyze_tree_in(p, args.top, !args.no_sync, &mounts),
        |p: &Path| analyze_file_in(p, !args.no_sync, &mounts),
    );
    // On Windows: retrieval pointers, no mount table.
    #[cfg(windows)]
    let (tree_of, file_of) = (
        |p: &Path| naslab_layout::analyze_tree(p, args.top, !args.no_sync),
        |p: &Path| naslab_layout::analyze_file(p, !args.no_sync),
    );
    let mut files = Vec::new();
    let mut trees = Vec::new();
    let mut failed = Vec::new();
    for path in &args.paths {
        let done = match std::fs::metadata(path) {
            Err(e) => Err(format!("cannot examine it: {e}")),
            Ok(meta) if meta.is_dir() => tree_of(path)
                .map(|t| trees.push(t))
                .map_err(|e| e.to_string()),
            Ok(_) => file_of(path)
                .map(|f| files.push(f))
                .map_err(|e| e.to_string()),
        };
        if let Err(reason) = done {
            failed.push(naslab_layout::Skipped {
                path: path.clone(),
                reason,
            });
        }
    }
    if args.json {
        let report = Report {
            files: files.iter().map(FileJson::new).collect(),
            trees: trees.iter().map(tree_json).collect(),
            failed: &failed,
        };
        crate::stdout::print_bytes(
            format!("{}\n", serde_json::to_string_pretty(&report)?).as_bytes(),
        )?;
    } else {
        crate::stdout::print(&text(&files, &trees))?;
    }
    if !failed.is_empty() {
        for f in &failed {
            eprintln!("naslab frag: '{}': {}", f.path.display(), f.reason);
        }
        bail!(
            "{} of {} paths could not be mapped (listed above); the others are reported",
            failed.len(),
            args.paths.len()
        );
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
        block_pairs: t.block_pairs,
        following_blocks: t.following_blocks,
    }
}

/// The layout of a workload's directory in the sandbox after an iteration: the files
/// preparation made (by the plan's file set) and everything else the workload left. The
/// directory and everything in it are opened beneath the sandbox, never through a
/// symbolic link. `None` when the file system does not report extents or the directory
/// cannot be read.
#[cfg(target_os = "linux")]
pub fn iteration_layout(sandbox: &dyn LocalRoot, plan: &Plan) -> Option<IterationLayout> {
    let name = plan.header.workload.as_str();
    let fd = sandbox.open_workload_dir(name).ok()?;
    let dir = sandbox.root().join(name);
    split_layout(plan, &dir, |on_file| walk_dir(fd, &dir, true, on_file))
}

/// [`iteration_layout`] on Windows: the target walks the workload's directory through
/// its own checked opens, relative to the directory's handle, entering no reparse point
/// (nor the directory itself when it is one).
#[cfg(windows)]
pub fn iteration_layout_in(
    target: &dyn naslab_engine::Target,
    plan: &Plan,
) -> Option<IterationLayout> {
    let name = plan.header.workload.as_str();
    let dir = target.local_dir()?.join(name);
    split_layout(plan, &dir, |on_file| {
        target
            .walk_layout(name, on_file)
            .unwrap_or_else(|| Err(LayoutError::NotFileOrDir(dir.clone())))
    })
}

/// The layouts `walk` gives of the files under `dir`, added up apart for the files
/// preparation made and the others; `None` when the file system does not report
/// extents or the directory cannot be read.
fn split_layout(
    plan: &Plan,
    dir: &Path,
    walk: impl FnOnce(
        &mut dyn FnMut(&Path, Result<FileLayout, LayoutError>),
    ) -> Result<Vec<naslab_layout::Skipped>, LayoutError>,
) -> Option<IterationLayout> {
    let prepared: std::collections::HashSet<&Path> = plan
        .files
        .entries
        .iter()
        .filter(|e| e.exists && e.kind == FileKind::File)
        .map(|e| Path::new(e.path.as_str()))
        .collect();
    let (mut pre, mut written) = (Totals::default(), Totals::default());
    let mut unsupported = false;
    let walked = walk(&mut |path, r| match r {
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

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;
    use naslab_targets::Sandbox;
    use std::os::unix::fs::symlink;

    /// A plan for workload `W` with one prepared 8 KiB file, `a`.
    fn plan(spool: &Path) -> Plan {
        let trace = spool.join("t.jsonl");
        std::fs::write(
            &trace,
            concat!(
                r#"{"type":"header","format":"naslab-trace","version":1,"workload":"W"}"#,
                "\n",
                r#"{"type":"file","id":1,"path":"a","size":8192,"exists":true}"#,
                "\n",
                r#"{"type":"op","op":"stat","stream":0,"t_us":0,"file":1}"#,
                "\n",
            ),
        )
        .unwrap();
        let reader = naslab_trace::open_trace(&trace).unwrap();
        naslab_engine::compile(&trace, naslab_engine::records_from_reader(reader), spool).unwrap()
    }

    #[test]
    fn the_layout_after_a_run_follows_no_symbolic_link() {
        let base = tempfile::tempdir().unwrap();
        let target = base.path().join("target");
        let outside = base.path().join("outside");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::create_dir_all(outside.join("deep")).unwrap();
        std::fs::write(outside.join("big"), vec![7u8; 65536]).unwrap();
        std::fs::write(outside.join("deep/big"), vec![7u8; 65536]).unwrap();
        let plan = plan(base.path());
        let sb = Sandbox::open(&target).unwrap();
        let w = sb.fresh_workload_dir("W").unwrap();
        std::fs::write(w.join("a"), vec![1u8; 8192]).unwrap();
        std::fs::create_dir(w.join("d")).unwrap();
        std::fs::write(w.join("d/new"), vec![2u8; 4096]).unwrap();
        symlink(&outside, w.join("sub")).unwrap();
        symlink(outside.join("big"), w.join("link")).unwrap();
        symlink(&outside, w.join("d/sub")).unwrap();
        let Some(l) = iteration_layout(&sb, &plan) else {
            naslab_test_support::cannot_run(
                "the temporary directory's file system does not report extents (FIEMAP)",
            );
            return;
        };
        // Only the two real files count; what the links point to is never opened.
        assert_eq!((l.prepared.files, l.prepared.bytes), (1, 8192), "{l:?}");
        assert_eq!((l.written.files, l.written.bytes), (1, 4096), "{l:?}");

        // The workload's directory itself swapped for a link: nothing is read.
        sb.remove_workload_dir("W").unwrap();
        symlink(&outside, w).unwrap();
        assert_eq!(iteration_layout(&sb, &plan), None);
    }
}
