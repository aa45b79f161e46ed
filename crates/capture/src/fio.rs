//! fio iologs, versions 2 and 3 (`write_iolog=`): a header line, then one action per
//! line on a file (`add`, `open`, `close`, `read`, `write`, `sync`, `datasync`, `trim`,
//! and in version 2 `wait`). Version 3 leads each line with a time stamp in µs since the
//! run began (as fio 3.33 writes them). One log is one job: one stream.

use std::io::BufRead;
use std::path::Path;

use naslab_trace::FileKind;

use crate::ImportError;
use crate::builder::{Builder, OpenReq, Presence, normalize};
use crate::error::LineErr;

/// Reads an iolog; absolute file names under `root` become relative to it, others lose
/// their leading `/`.
pub fn read(
    path: &Path,
    input: impl BufRead,
    root: Option<&Path>,
    b: &mut Builder,
) -> Result<(), ImportError> {
    let err = LineErr {
        path: path.to_path_buf(),
    };
    let mut lines = crate::lines::Lines::new(path, input);
    let mut version = 0;
    let mut clock_us = 0u64;
    let root = root.map(|r| r.to_string_lossy().trim_end_matches('/').to_string());
    while let Some((n, buf)) = lines.next_text("")? {
        let line = buf.trim();
        if version == 0 {
            version = match line {
                "fio version 2 iolog" => 2,
                "fio version 3 iolog" => 3,
                _ => {
                    return Err(err.at(
                        n,
                        "not a fio iolog this naslab reads: the first line must be 'fio version 2 iolog' or 'fio version 3 iolog' (version 1 logs are no longer written by fio)",
                    ))
                }
            };
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if version == 3 {
            let ts = words.remove(0);
            clock_us = ts.parse().map_err(|_| {
                err.at(
                    n,
                    format!("'{ts}' is not a time stamp; version 3 lines start with one"),
                )
            })?;
        }
        let (name, action) = match words.as_slice() {
            [name, action, ..] => (*name, *action),
            _ => {
                return Err(err.at(
                    n,
                    format!("'{line}' is not 'FILENAME ACTION [OFFSET LENGTH]'"),
                ));
            }
        };
        let num = |i: usize, what: &str| -> Result<u64, ImportError> {
            let w = words
                .get(i)
                .ok_or_else(|| err.at(n, format!("{action} needs its {what}")))?;
            w.parse()
                .map_err(|_| err.at(n, format!("{action}: {what} '{w}' is not a number")))
        };
        if action == "wait" {
            if version == 3 {
                return Err(err.at(
                    n,
                    "'wait' is not allowed in version 3 logs (time stamps replace it)",
                ));
            }
            clock_us += num(2, "wait in µs")?;
            continue;
        }
        let rel = relative(name, root.as_deref());
        let Some(rel) = rel else {
            b.skip("actions on a file name naslab cannot place under the workload directory");
            continue;
        };
        let Some(id) = b.file(&rel, FileKind::File, Presence::Existing) else {
            continue;
        };
        let (key, t) = (0, clock_us);
        match action {
            "add" => {}
            "open" => {
                let req = OpenReq {
                    read: true,
                    write: true,
                    ..OpenReq::default()
                };
                b.open(key, t, id, req)?;
            }
            "close" => b.close(key, t, id)?,
            "read" | "write" => {
                let offset = num(2, "offset")?;
                let len = num(3, "length")?;
                // fio lays its files out before the I/O starts.
                b.note_extent_before(id, offset.saturating_add(len));
                if action == "read" {
                    b.read(key, t, id, offset, len, None)?;
                } else {
                    b.write(key, t, id, offset, len)?;
                }
            }
            "sync" | "datasync" => b.fsync(key, t, id)?,
            "trim" => b.skip("trim (the trace format has no such op)"),
            other => {
                return Err(err.at(
                    n,
                    format!("unknown action '{other}' (known: add, open, close, read, write, sync, datasync, trim, wait)"),
                ))
            }
        }
    }
    if version == 0 {
        return Err(err.at(1, "the file is empty; an iolog starts with 'fio version 2 iolog' or 'fio version 3 iolog'"));
    }
    if version == 2 {
        b.warn("a version 2 iolog has no time stamps (only its waits): --pace original replays the waits".into());
    }
    Ok(())
}

fn relative(name: &str, root: Option<&str>) -> Option<String> {
    let rest = match root {
        Some(r) => name
            .strip_prefix(r)
            .filter(|s| s.starts_with('/'))
            .unwrap_or(name),
        None => name,
    };
    normalize(rest.split('/')).filter(|p| !p.is_empty())
}
