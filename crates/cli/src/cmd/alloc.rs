//! `naslab alloc`: the allocation lab. Times seed 002's Samba write patterns and the
//! Windows client's preallocation hints, and counts the extents each leaves, in one
//! directory or (as root) on a matrix of freshly made file systems.

use std::fmt::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use naslab_host::process::is_root;
use naslab_layout::{
    FsKind, MatrixOptions, MatrixResult, Pattern, PatternOptions, PatternRun, run_matrix,
    run_pattern,
};
use serde::Serialize;

use crate::args::AllocArgs;

/// Set by Ctrl-C or SIGTERM; the lab stops at its next step and cleans up.
static CANCEL: AtomicBool = AtomicBool::new(false);

fn install_handler() {
    // A second installation (tests calling twice) fails harmlessly: the flag is shared.
    let _ = ctrlc::set_handler(|| {
        if CANCEL.swap(true, Ordering::Relaxed) {
            eprintln!("\ninterrupted again; still cleaning up");
        } else {
            eprintln!("\ninterrupted: finishing the current step, then cleaning up");
        }
    });
}

#[derive(Serialize)]
struct DirReport<'a> {
    dir: PathBuf,
    options: PatternOptions,
    runs: &'a [PatternRun],
}

/// `naslab alloc`.
pub fn alloc(args: AllocArgs) -> anyhow::Result<()> {
    let mut opts = PatternOptions {
        size_bytes: args.size,
        block_bytes: args.blksize,
        ..PatternOptions::default()
    };
    if let Some(lead) = args.hint_lead {
        opts.hint_lead_bytes = lead;
    }
    opts.validate()?;
    let patterns: Vec<Pattern> = if args.pattern.is_empty() {
        Pattern::ALL.to_vec()
    } else {
        args.pattern.clone()
    };
    let cases: Vec<FsKind> = if args.fs.is_empty() {
        FsKind::MADE.to_vec()
    } else {
        args.fs.clone()
    };
    let image_bytes = args.image_size;
    install_handler();
    if args.matrix {
        if is_root() {
            let m = MatrixOptions {
                cases,
                patterns,
                pattern: opts,
                image_bytes,
                work_dir: args.dir.clone(),
            };
            let result = run_matrix(&m, &CANCEL, |step| eprintln!("  {step}"))?;
            if args.json {
                crate::stdout::print_bytes(
                    format!("{}\n", serde_json::to_string_pretty(&result)?).as_bytes(),
                )?;
            } else {
                crate::stdout::print(&matrix_table(&result))?;
            }
            return Ok(());
        }
        eprintln!(
            "note: --matrix needs root (it attaches loop devices and mounts file systems); running the patterns in {} only",
            args.dir
                .as_deref()
                .unwrap_or(std::path::Path::new("."))
                .display()
        );
    }
    let base = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let scratch = tempfile::Builder::new()
        .prefix("naslab-alloc-")
        .tempdir_in(&base)
        .with_context(|| {
            format!(
                "cannot make a scratch directory in '{}'; give a writable --dir",
                base.display()
            )
        })?;
    let mut runs = Vec::new();
    for p in patterns {
        eprintln!("  {p}");
        runs.push(run_pattern(scratch.path(), p, &opts, &CANCEL)?);
    }
    if args.json {
        let report = DirReport {
            dir: base.clone(),
            options: opts,
            runs: &runs,
        };
        crate::stdout::print_bytes(
            format!("{}\n", serde_json::to_string_pretty(&report)?).as_bytes(),
        )?;
    } else {
        crate::stdout::print(&dir_table(&base, &opts, &runs))?;
    }
    Ok(())
}

fn dir_table(dir: &std::path::Path, opts: &PatternOptions, runs: &[PatternRun]) -> String {
    let mut o = String::new();
    let fs = runs.first().map(|r| r.layout.fs.as_str()).unwrap_or("?");
    let _ = writeln!(
        o,
        "allocation patterns in {} ({fs}): {} bytes per file, {}-byte blocks, timed through fsync",
        dir.display(),
        opts.size_bytes,
        opts.block_bytes
    );
    let _ = writeln!(
        o,
        "{:<12} {:>9} {:>9} {:>7} {:>10} {:>8} {:>13}  what",
        "pattern", "seconds", "extents", "ideal", "unwritten", "runs", "bytes written"
    );
    for r in runs {
        let _ = writeln!(
            o,
            "{:<12} {:>9.3} {:>9} {:>7} {:>10} {:>8} {:>13}  {}",
            r.pattern.name(),
            r.seconds,
            r.layout.extents,
            r.layout
                .ideal_extents
                .map(|i| i.to_string())
                .unwrap_or_else(|| "-".into()),
            r.layout.unwritten_extents,
            r.layout.physical_runs,
            r.bytes_written,
            r.pattern.summary()
        );
    }
    o
}

/// Seed 002's table shape: a row per pattern, per file system its seconds and extents.
fn matrix_table(m: &MatrixResult) -> String {
    let mut o = String::new();
    let cases: Vec<FsKind> = m.cases.iter().map(|c| c.fs).collect();
    let patterns: Vec<Pattern> = Pattern::ALL
        .into_iter()
        .filter(|p| m.cells.iter().any(|c| c.pattern == *p))
        .collect();
    let _ = writeln!(
        o,
        "allocation patterns: {} bytes per file, {}-byte blocks, each on a fresh file system in a {} MiB loop image; seconds through fsync, extents as filefrag counts them",
        m.options.size_bytes,
        m.options.block_bytes,
        m.image_bytes >> 20
    );
    let _ = write!(o, "{:<12}", "pattern");
    for c in &cases {
        let _ = write!(o, " {:>20}", c.name());
    }
    o.push('\n');
    let _ = write!(o, "{:<12}", "");
    for _ in &cases {
        let _ = write!(o, " {:>9} {:>10}", "s", "extents");
    }
    o.push('\n');
    for p in &patterns {
        let _ = write!(o, "{:<12}", p.name());
        for c in &cases {
            match m.cell(*c, *p) {
                Some(cell) => match &cell.run {
                    Some(r) => {
                        let _ = write!(o, " {:>9.2} {:>10}", r.seconds, r.layout.extents);
                    }
                    None => {
                        let _ = write!(o, " {:>20}", "failed");
                    }
                },
                None => {
                    let _ = write!(o, " {:>20}", "-");
                }
            }
        }
        o.push('\n');
    }
    // The same files counted by physical runs: a hole always ends a run here, so sparse
    // files whose gaps mirror their holes on disk (which filefrag does not count) show.
    let _ = writeln!(
        o,
        "\nphysical runs (a hole always ends a run, as filefrag's first FIEMAP code counted):"
    );
    for p in &patterns {
        let _ = write!(o, "{:<12}", p.name());
        for c in &cases {
            let shown = m
                .cell(*c, *p)
                .and_then(|cell| cell.run.as_ref())
                .map(|r| r.layout.physical_runs.to_string())
                .unwrap_or_else(|| "-".into());
            let _ = write!(o, " {:>20}", shown);
        }
        o.push('\n');
    }
    for c in &m.cases {
        match &c.error {
            Some(e) => {
                let _ = writeln!(o, "{}: not run: {e}", c.fs);
            }
            None => {
                let _ = writeln!(
                    o,
                    "{}: {}; mounted {}{}",
                    c.fs,
                    c.mkfs,
                    c.mount_options.as_deref().unwrap_or("?"),
                    match c.delalloc {
                        Some(true) => " (delayed allocation)",
                        Some(false) => " (no delayed allocation)",
                        None => "",
                    }
                );
            }
        }
    }
    for cell in &m.cells {
        if let Some(e) = &cell.error {
            let _ = writeln!(o, "{} on {}: {e}", cell.pattern, cell.fs);
        }
    }
    o
}
