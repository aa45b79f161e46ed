//! The layout of what a run left in a workload's directory, walked through the same
//! checked opens as the run's own ops: every entry opened relative to the directory's
//! handle, a reparse point (or under Wine an entry that is really elsewhere) neither
//! entered nor mapped, so nothing outside naslab's directory is opened.

use std::path::Path;

use naslab_layout::{FileLayout, LayoutError, Skipped};

use super::handle::{Names, OpenSpec, Root};
use naslab_backend::OpError;
use naslab_remote::remote::EntryKind;

/// An op's error as the layout's.
fn failed<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(OpError) -> LayoutError + 'a {
    move |e| LayoutError::Io {
        what,
        path: path.to_path_buf(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Calls `on_file` with every regular file below `root` (the workload's directory,
/// shown as `shown`) and its layout or error, each written back first with `sync`.
/// Returns the directories below it that could not be listed.
pub fn walk(
    root: &Root,
    shown: &Path,
    sync: bool,
    on_file: &mut dyn FnMut(&Path, Result<FileLayout, LayoutError>),
) -> Result<Vec<Skipped>, LayoutError> {
    let mut skipped = Vec::new();
    let mut names = Names::default();
    // Directories to list, `/`-separated below the root ("" for the root itself).
    let mut dirs = vec![String::new()];
    while let Some(rel) = dirs.pop() {
        let listed = if rel.is_empty() {
            root.names_here()
        } else {
            names.of(&rel).and_then(|n| root.names_in(n))
        };
        let mut entries = match listed {
            Ok(e) => e,
            Err(e) if rel.is_empty() => return Err(failed("list", shown)(e)),
            Err(e) => {
                skipped.push(Skipped {
                    path: shown.join(&rel),
                    reason: format!("cannot list it: {e}"),
                });
                continue;
            }
        };
        entries.sort();
        for entry in entries {
            let child = if rel.is_empty() {
                entry
            } else {
                format!("{rel}/{entry}")
            };
            let path = shown.join(&child);
            let Ok(name) = names.of(&child) else { continue };
            // A link is neither entered nor mapped; an entry gone since the listing
            // or one that cannot be examined is left out, as on Linux.
            match root.kind(name) {
                Ok(Some(EntryKind::Dir)) => dirs.push(child),
                Ok(Some(EntryKind::File)) => {
                    let r = layout_of(root, name, &path, sync);
                    on_file(&path, r);
                }
                Ok(Some(EntryKind::Link) | None) | Err(_) => {}
            }
        }
    }
    Ok(skipped)
}

/// One file's layout, opened (and with `sync` written back first) through `root`'s
/// checked opens.
fn layout_of(
    root: &Root,
    name: &[u16],
    path: &Path,
    sync: bool,
) -> Result<FileLayout, LayoutError> {
    if sync {
        // FlushFileBuffers needs a handle that may write; a file that cannot be opened
        // so is mapped as it is.
        let write = OpenSpec {
            write: true,
            ..OpenSpec::default()
        };
        if let Ok(w) = root.open(name, &write) {
            let _ = w.sync_all();
        }
    }
    let read = OpenSpec {
        read: true,
        ..OpenSpec::default()
    };
    let f = root.open(name, &read).map_err(failed("open", path))?;
    naslab_layout::layout_of_open(&f, path)
}
