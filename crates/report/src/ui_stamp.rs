//! The fingerprint of the report UI's sources, shared by build.rs (which re-bundles when
//! it changes) and the bundle test (which fails when the committed bundle is stale).
//! Content, not modification times, decides: a fresh clone has arbitrary times.

use std::path::{Path, PathBuf};

/// The files, relative to `ui/`, whose content decides the bundle besides `src/`.
const INPUTS: [&str; 4] = [
    "package.json",
    "package-lock.json",
    "build.mjs",
    "tsconfig.json",
];

fn sources(ui: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = INPUTS.iter().map(|f| ui.join(f)).collect();
    let mut dirs = vec![ui.join("src")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir)? {
            let p = e?.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// FNV-1a over each source's path (relative to `ui/`) and content, as 16 hex digits.
/// Line endings are normalised so a checkout with CRLF gives the same fingerprint.
pub fn ui_fingerprint(ui: &Path) -> std::io::Result<String> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for f in sources(ui)? {
        let rel = f
            .strip_prefix(ui)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        feed(rel.as_bytes());
        feed(&[0]);
        let text = std::fs::read(&f)?;
        let text: Vec<u8> = text.into_iter().filter(|&b| b != b'\r').collect();
        feed(&text);
        feed(&[0]);
    }
    Ok(format!("{h:016x}"))
}

/// The names of the files whose change makes build.rs run again.
pub fn ui_watch_list(ui: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = INPUTS.iter().map(|f| ui.join(f)).collect();
    v.push(ui.join("src"));
    v
}
