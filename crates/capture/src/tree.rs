//! The tree under the root as it stands before the command runs: the file set a
//! capture declares, so that `prepare` rebuilds it.

use std::path::{Path, PathBuf};

use naslab_trace::FileKind;

/// What a listing found: entries, and how many it left out.
#[derive(Debug, Default)]
pub struct Listing {
    /// `(path relative to the root, kind, size)`, parents before children.
    pub entries: Vec<(String, FileKind, u64)>,
    /// Symbolic links, sockets, devices and the like: no trace entry can hold them.
    pub left_out: u64,
}

/// Lists everything under `root` without following symbolic links, leaving out the
/// paths in `except` (the trace being written, say).
pub fn list(root: &Path, except: &[PathBuf]) -> std::io::Result<Listing> {
    let mut listing = Listing::default();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let mut names: Vec<_> = std::fs::read_dir(&dir)?.collect::<Result<_, _>>()?;
        names.sort_by_key(|e| e.file_name());
        for e in names {
            let path = e.path();
            if except.iter().any(|x| x == &path) {
                continue;
            }
            let Some(name) = e.file_name().to_str().map(String::from) else {
                listing.left_out += 1;
                continue;
            };
            let child = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            // The entry's own type, from the directory where the file system gives it
            // (no call); a file's size from a stat relative to the open directory (no
            // walk of the path from the root).
            let kind = e.file_type()?;
            if kind.is_dir() {
                listing.entries.push((child.clone(), FileKind::Dir, 0));
                stack.push((path, child));
            } else if kind.is_file() {
                listing
                    .entries
                    .push((child, FileKind::File, e.metadata()?.len()));
            } else {
                listing.left_out += 1;
            }
        }
    }
    listing.entries.sort_by(|a, b| {
        a.0.matches('/')
            .count()
            .cmp(&b.0.matches('/').count())
            .then(a.0.cmp(&b.0))
    });
    Ok(listing)
}
