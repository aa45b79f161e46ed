//! Process Monitor CSV exports (File > Save > CSV): a header row naming the columns,
//! then one event per row. The columns used are Time of Day, Process Name, PID (or TID
//! when exported), Operation, Path, Result and Detail; Detail holds an event's
//! parameters as `Key: Value` pairs (`Offset: 0, Length: 4,096`).

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use naslab_trace::FileKind;

use crate::builder::{Builder, Creation, OpenReq, Presence, normalize};
use crate::error::LineErr;
use crate::{ImportError, ImportOptions};

const OUTSIDE: &str = "file events outside the Windows root";

struct Columns {
    time: usize,
    process: Option<usize>,
    pid: Option<usize>,
    tid: Option<usize>,
    operation: usize,
    path: usize,
    result: usize,
    detail: usize,
}

impl Columns {
    fn from_header(names: &[String]) -> Result<Columns, String> {
        let find = |want: &[&str]| {
            names
                .iter()
                .position(|n| want.iter().any(|w| n.trim().eq_ignore_ascii_case(w)))
        };
        let need = |want: &[&str]| {
            find(want).ok_or_else(|| {
                format!(
                    "the header has no '{}' column; export from Process Monitor with File > Save > CSV and keep the default columns (Time of Day, Process Name, PID, Operation, Path, Result, Detail)",
                    want[0]
                )
            })
        };
        Ok(Columns {
            time: need(&["Time of Day", "Date & Time"])?,
            process: find(&["Process Name"]),
            pid: find(&["PID"]),
            tid: find(&["TID"]),
            operation: need(&["Operation"])?,
            path: need(&["Path"])?,
            result: need(&["Result"])?,
            detail: need(&["Detail"])?,
        })
    }
}

/// Reads a CSV export into `b`.
pub fn read(
    path: &Path,
    input: impl BufRead,
    opts: &ImportOptions,
    b: &mut Builder,
) -> Result<(), ImportError> {
    let err = LineErr {
        path: path.to_path_buf(),
    };
    let root = opts
        .windows_root
        .as_deref()
        .map(|r| r.trim_end_matches('\\').to_ascii_lowercase());
    let mut lines = crate::lines::Lines::new(path, input);
    let mut cols: Option<Columns> = None;
    let mut meta_opens: HashMap<(u64, u32), u32> = HashMap::new();
    // Directories each stream is listing: a listing is a run of QueryDirectory calls,
    // one readdir, until the directory is opened again or closed.
    let mut listing: std::collections::HashSet<(u64, u32)> = std::collections::HashSet::new();
    // Windows paths are case-insensitive: each path takes the spelling it was first seen
    // with, so `Sub Folder` and `SUB FOLDER` are one entry.
    let mut spelling = Spelling::default();
    let mut day_us = 0u64;
    let mut last_us = 0u64;
    const NOT_UTF8: &str = "; export the CSV again (Process Monitor writes UTF-8)";
    while let Some((n, buf)) = lines.next_text(NOT_UTF8)? {
        let line = buf
            .trim_end_matches(['\r', '\n'])
            .trim_start_matches('\u{feff}');
        if line.trim().is_empty() {
            continue;
        }
        let fields = csv_fields(line).map_err(|m| err.at(n, m))?;
        let Some(c) = &cols else {
            cols = Some(Columns::from_header(&fields).map_err(|m| err.at(n, m))?);
            continue;
        };
        let get = |i: usize| fields.get(i).map(|s| s.as_str()).unwrap_or("");
        if fields.len()
            <= [c.time, c.operation, c.path, c.result, c.detail]
                .into_iter()
                .max()
                .unwrap_or(0)
        {
            return Err(err.at(
                n,
                format!(
                    "the row has {} fields, fewer than the header's columns",
                    fields.len()
                ),
            ));
        }
        if let (Some(want), Some(pi)) = (&opts.process, c.process)
            && !get(pi).eq_ignore_ascii_case(want)
        {
            b.skip("events of other processes");
            continue;
        }
        let op = get(c.operation).to_string();
        let tod = time_of_day(get(c.time)).ok_or_else(|| {
            err.at(
                n,
                format!(
                    "'{}' is not a time of day (like 10:23:45.1234567 AM)",
                    get(c.time)
                ),
            )
        })?;
        // Past midnight the clock starts again: carry the day over.
        if tod + day_us + 12 * 3_600_000_000 < last_us {
            day_us += 24 * 3_600_000_000;
        }
        let t = tod + day_us;
        last_us = t;
        let key: u64 = match c.tid.or(c.pid) {
            Some(i) => get(i)
                .trim()
                .parse()
                .map_err(|_| err.at(n, format!("'{}' is not a process or thread id", get(i))))?,
            None => 0,
        };
        let known = matches!(
            op.as_str(),
            "CreateFile"
                | "ReadFile"
                | "WriteFile"
                | "CloseFile"
                | "SetEndOfFileInformationFile"
                | "SetRenameInformationFile"
                | "SetDispositionInformationFile"
                | "QueryDirectory"
        );
        if !known {
            b.skip(&format!("{op} events (not imported)"));
            continue;
        }
        if get(c.result) != "SUCCESS" {
            b.skip(&format!("{op} events that did not succeed"));
            continue;
        }
        let Some(rel) = map_path(get(c.path), root.as_deref()) else {
            b.skip(OUTSIDE);
            continue;
        };
        let rel = spelling.first_seen(&rel);
        if rel.is_empty() {
            b.skip("events on the Windows root itself");
            continue;
        }
        let detail = details(get(c.detail));
        let d = |k: &str| detail.get(k).map(|s| s.as_str()).unwrap_or("");
        let num = |k: &str| -> Result<u64, ImportError> {
            let v = d(k);
            v.replace(',', "").trim().parse().map_err(|_| {
                err.at(
                    n,
                    format!("{op}: Detail has no number for '{k}' (got '{v}')"),
                )
            })
        };
        match op.as_str() {
            "CreateFile" => {
                let access = d("Desired Access");
                let is_dir = is_directory_open(d("Options"));
                let result = d("OpenResult");
                let created = result == "Created";
                let presence = if created {
                    Presence::New
                } else {
                    Presence::Existing
                };
                let kind = if is_dir {
                    FileKind::Dir
                } else {
                    FileKind::File
                };
                let Some(id) = b.file(&rel, kind, presence) else {
                    continue;
                };
                let reads = ["Generic Read", "Read Data", "All Access"]
                    .iter()
                    .any(|a| access.contains(a));
                let writes = [
                    "Generic Write",
                    "Write Data",
                    "Append Data",
                    "All Access",
                    "Read/Write",
                ]
                .iter()
                .any(|a| access.contains(a));
                if is_dir {
                    listing.remove(&(key, id));
                    if created {
                        b.mkdir(key, t, id)?;
                    } else {
                        b.adjust("directory opens recorded as stat");
                        b.stat(key, t, id)?;
                    }
                    *meta_opens.entry((key, id)).or_default() += 1;
                } else if !reads && !writes && !created {
                    // An open for attributes or for delete only: no data moves.
                    b.adjust("opens without data access recorded as stat");
                    b.stat(key, t, id)?;
                    *meta_opens.entry((key, id)).or_default() += 1;
                } else {
                    let disposition = d("Disposition");
                    let req = OpenReq {
                        read: reads || !writes,
                        write: writes || created,
                        create: if created && disposition == "Create" {
                            Creation::Exclusive
                        } else if created {
                            Creation::IfAbsent
                        } else {
                            Creation::Never
                        },
                        truncate: matches!(result, "Overwritten" | "Superseded")
                            || (matches!(disposition, "Overwrite" | "OverwriteIf" | "Supersede")
                                && !created),
                        ..OpenReq::default()
                    };
                    b.open(key, t, id, req)?;
                }
            }
            "CloseFile" => {
                let Some(id) = b.known(&rel) else {
                    b.skip("CloseFile of a file never opened in the export");
                    continue;
                };
                listing.remove(&(key, id));
                match meta_opens.get_mut(&(key, id)) {
                    Some(m) if *m > 0 => *m -= 1,
                    _ => b.close(key, t, id)?,
                }
            }
            "ReadFile" | "WriteFile" => {
                let Some(id) = b.file(&rel, FileKind::File, Presence::Existing) else {
                    continue;
                };
                let offset = num("Offset")?;
                let len = num("Length")?;
                if op == "ReadFile" {
                    b.read(key, t, id, offset, len, Some(len))?;
                } else {
                    b.write(key, t, id, offset, len)?;
                }
            }
            "QueryDirectory" => {
                let Some(id) = b.file(&rel, FileKind::Dir, Presence::Existing) else {
                    continue;
                };
                if listing.insert((key, id)) {
                    b.readdir(key, t, id)?;
                } else {
                    b.skip("QueryDirectory events continuing a listing");
                }
            }
            "SetEndOfFileInformationFile" => {
                let Some(id) = b.file(&rel, FileKind::File, Presence::Existing) else {
                    continue;
                };
                b.truncate(key, t, id, num("EndOfFile")?)?;
            }
            "SetRenameInformationFile" => {
                let target = d("FileName");
                let Some(to) = map_path(target, root.as_deref()).filter(|p| !p.is_empty()) else {
                    b.skip("renames out of the Windows root");
                    continue;
                };
                let to = spelling.first_seen(&to);
                let kind = b.kind_of(&rel).unwrap_or(FileKind::File);
                let Some(from) = b.file(&rel, kind, Presence::Existing) else {
                    continue;
                };
                let Some(to) = b.file(&to, kind, Presence::New) else {
                    continue;
                };
                b.rename(key, t, from, to)?;
            }
            _ => {
                if !d("Delete").eq_ignore_ascii_case("True") {
                    b.skip("SetDispositionInformationFile that cancels a delete");
                    continue;
                }
                let kind = b.kind_of(&rel).unwrap_or(FileKind::File);
                let Some(id) = b.file(&rel, kind, Presence::Existing) else {
                    continue;
                };
                b.unlink(key, t, id)?;
            }
        }
    }
    if cols.is_none() {
        return Err(err.at(
            1,
            "the file is empty; export a CSV from Process Monitor (File > Save > CSV)",
        ));
    }
    Ok(())
}

/// Whether a CreateFile's Options name a directory: Process Monitor writes the
/// NtCreateFile option `Directory File` in some versions and `Directory` in others
/// (`Options: Directory, Synchronous IO Non-Alert`); `Non-Directory File` is a file.
fn is_directory_open(options: &str) -> bool {
    options
        .split(',')
        .any(|o| matches!(o.trim(), "Directory File" | "Directory"))
}

/// The spelling each path (and each of its parents) was first seen with, by its
/// case-folded form: Windows file names are case-insensitive, a trace's are not.
#[derive(Default)]
struct Spelling {
    first: HashMap<String, String>,
}

impl Spelling {
    /// `rel` (`/`-separated) with every leading part spelled as first seen.
    fn first_seen(&mut self, rel: &str) -> String {
        let mut folded = String::new();
        let mut spelled = String::new();
        for part in rel.split('/') {
            if !folded.is_empty() {
                folded.push('/');
            }
            folded.push_str(&part.to_lowercase());
            let parent = std::mem::take(&mut spelled);
            spelled = self
                .first
                .entry(folded.clone())
                .or_insert_with(|| {
                    if parent.is_empty() {
                        part.to_string()
                    } else {
                        format!("{parent}/{part}")
                    }
                })
                .clone();
        }
        spelled
    }
}

/// A Windows path as a path relative to the root (`None` when outside it). Without a
/// root, the drive (`C:`) is dropped and the rest kept.
fn map_path(windows: &str, root: Option<&str>) -> Option<String> {
    let lower = windows.to_ascii_lowercase();
    let rest = match root {
        Some(r) => {
            if !lower.starts_with(r) {
                return None;
            }
            let rest = &windows[r.len()..];
            if !(rest.is_empty() || rest.starts_with('\\')) {
                return None;
            }
            rest
        }
        None => {
            let b = windows.as_bytes();
            if b.len() >= 2 && b[1] == b':' {
                &windows[2..]
            } else {
                windows
            }
        }
    };
    normalize(rest.split('\\'))
}

/// `Key: Value, Key: Value, ...`, where a value may itself hold `, ` (ShareMode: Read, Write).
fn details(text: &str) -> HashMap<String, String> {
    let mut out: HashMap<String, String> = HashMap::new();
    let mut last: Option<String> = None;
    for part in text.split(", ") {
        match part.split_once(": ") {
            Some((k, v)) => {
                out.insert(k.trim().to_string(), v.trim().to_string());
                last = Some(k.trim().to_string());
            }
            None => {
                if let Some(k) = &last
                    && let Some(v) = out.get_mut(k)
                {
                    v.push_str(", ");
                    v.push_str(part.trim());
                }
            }
        }
    }
    out
}

/// `10:23:45.1234567 AM` (or 24-hour, or led by a date) → µs since midnight.
fn time_of_day(text: &str) -> Option<u64> {
    let mut words: Vec<&str> = text.split_whitespace().collect();
    let pm = match words.last().map(|w| w.to_ascii_uppercase()) {
        Some(w) if w == "AM" => {
            words.pop();
            Some(false)
        }
        Some(w) if w == "PM" => {
            words.pop();
            Some(true)
        }
        _ => None,
    };
    let clock = words.last()?;
    let mut parts = clock.split(':');
    let h: u64 = parts.next()?.parse().ok()?;
    let m: u64 = parts.next()?.parse().ok()?;
    let s_text = parts.next()?;
    let (s, frac) = s_text.split_once('.').unwrap_or((s_text, "0"));
    let s: u64 = s.parse().ok()?;
    if !frac.bytes().all(|b| b.is_ascii_digit()) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let mut us: u64 = frac.get(..frac.len().min(6))?.parse().unwrap_or(0);
    for _ in frac.len().min(6)..6 {
        us *= 10;
    }
    let h = match pm {
        Some(true) if h < 12 => h + 12,
        Some(false) if h == 12 => 0,
        _ => h,
    };
    Some(((h * 60 + m) * 60 + s) * 1_000_000 + us)
}

/// The fields of one CSV row: comma-separated, quoted with `"`, `""` inside quotes.
fn csv_fields(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut in_quotes = false;
    while let Some(c) = chars.next() {
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    field.push('"');
                    chars.next();
                } else {
                    in_quotes = false;
                }
            } else {
                field.push(c);
            }
        } else if c == '"' && field.is_empty() && !quoted {
            in_quotes = true;
            quoted = true;
        } else if c == ',' {
            out.push(std::mem::take(&mut field));
            quoted = false;
        } else {
            field.push(c);
        }
    }
    if in_quotes {
        return Err("a quoted field is not closed on its line".into());
    }
    out.push(field);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rows_times_details_and_paths() {
        let f = csv_fields(r#""10:00:00.5 AM","a.exe","12","ReadFile","C:\d\x,y.txt","SUCCESS","Offset: 1,024, Length: 4,096""#).unwrap();
        assert_eq!(f.len(), 7);
        assert_eq!(f[4], r"C:\d\x,y.txt");
        let d = details(&f[6]);
        assert_eq!(d["Offset"], "1,024");
        assert_eq!(d["Length"], "4,096");
        let d = details(
            "Desired Access: Generic Read/Write, ShareMode: Read, Write, OpenResult: Created",
        );
        assert_eq!(d["ShareMode"], "Read, Write");
        assert_eq!(time_of_day("12:00:01.25 AM"), Some(1_250_000));
        assert_eq!(
            time_of_day("1:02:03.0000001 PM"),
            Some(((13 * 60 + 2) * 60 + 3) * 1_000_000)
        );
        assert_eq!(
            map_path(r"C:\Work\Docs\a.doc", Some(r"c:\work")).as_deref(),
            Some("Docs/a.doc")
        );
        assert_eq!(map_path(r"C:\Workshop\a.doc", Some(r"c:\work")), None);
        assert_eq!(map_path(r"D:\a\b", None).as_deref(), Some("a/b"));
    }

    #[test]
    fn directory_opens_are_told_by_either_spelling_of_the_option() {
        let d = details(
            "Desired Access: Read Data/List Directory, Disposition: Open, Options: Directory, Synchronous IO Non-Alert, Attributes: n/a, OpenResult: Opened",
        );
        assert!(is_directory_open(&d["Options"]));
        let d = details(
            "Desired Access: Read Data/List Directory, Options: Directory File, Attributes: n/a",
        );
        assert!(is_directory_open(&d["Options"]));
        let d = details(
            "Desired Access: Generic Read, Options: Synchronous IO Non-Alert, Non-Directory File, OpenResult: Opened",
        );
        assert!(!is_directory_open(&d["Options"]));
    }

    #[test]
    fn paths_differing_only_in_case_are_one_path_spelled_as_first_seen() {
        let mut s = Spelling::default();
        assert_eq!(s.first_seen("Sub Folder"), "Sub Folder");
        assert_eq!(s.first_seen("SUB FOLDER/a.TXT"), "Sub Folder/a.TXT");
        assert_eq!(s.first_seen("sub folder/A.txt"), "Sub Folder/a.TXT");
        assert_eq!(s.first_seen("Other/x"), "Other/x");
    }
}
