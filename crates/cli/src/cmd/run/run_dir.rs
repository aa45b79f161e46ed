//! The run directory, OUT/LABEL/TIMESTAMP (or a multi-client run's private one), and
//! the results and label directories made for it.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::args::RunOpts;
use crate::multi::Coordinator;
use crate::timestamp::compact_now;

/// Makes the run's directory; returns it and the directories made on the way there
/// (removed again if nothing runs).
pub(super) fn make_dirs(
    opts: &RunOpts,
    coord: &dyn Coordinator,
) -> anyhow::Result<(PathBuf, Vec<PathBuf>)> {
    let label_dir = opts.out.join(&opts.label);
    let multi_dir = coord.private_run_dir(opts)?;
    let made_dirs: Vec<PathBuf> = if multi_dir.is_some() {
        Vec::new()
    } else {
        [opts.out.clone(), label_dir.clone()]
            .into_iter()
            .filter(|d| !d.exists())
            .collect()
    };
    let run_dir = match multi_dir {
        Some(private) => private,
        None => make_run_dir(&label_dir)?,
    };
    Ok((run_dir, made_dirs))
}

/// Makes a new directory named for the current time under `base` (with `-2`, `-3` ...
/// when that name is taken).
pub(super) fn make_run_dir(base: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(base)
        .with_context(|| format!("cannot create the results directory '{}'", base.display()))?;
    let stamp = compact_now();
    for n in 1..1000 {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = base.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create '{}'", dir.display())),
        }
    }
    bail!(
        "cannot find a free run directory name under '{}'",
        base.display()
    )
}
