//! dbench loadfiles (NetBench operations, as dbench reads them): one line per SMB call,
//! optionally led by a time stamp in seconds, ending with the status the call must give.
//!
//! ```text
//! 0.012 NTCreateX "\clients\client1\~dmtmp\WORD\CHAP10.DOC" 0x40 0x1 1001 NT_STATUS_OK
//! 0.013 ReadX 1001 0 4096 4096 NT_STATUS_OK
//! 0.014 Close 1001 NT_STATUS_OK
//! ```
//!
//! Every client replays the same loadfile in its own directory (`client1` in paths
//! becomes `clientN`), each as a stream of its own.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

use naslab_trace::{Expected, FileKind, OpKind};

use crate::ImportError;
use crate::builder::{Builder, Creation, OpenReq, Presence, normalize};
use crate::error::LineErr;

/// NTCreateX's create options bit for a directory (FILE_DIRECTORY_FILE).
const DIRECTORY_FILE: u64 = 0x1;

/// SET_FILE_INFORMATION's information classes (MS-FSCC 2.4).
const FILE_BASIC_INFORMATION: u64 = 1004;
const FILE_RENAME_INFORMATION: u64 = 1010;
const FILE_DISPOSITION_INFORMATION: u64 = 1013;
const FILE_ALLOCATION_INFORMATION: u64 = 1019;
const FILE_END_OF_FILE_INFORMATION: u64 = 1020;

/// The characters that make a FIND_FIRST name a pattern (`*`, `?` and DOS's `<`, `>`, `"`).
const WILDCARDS: &[char] = &['*', '?', '<', '>', '"'];

/// The POSIX error an NT status stands for, for the statuses a loadfile's failing calls
/// end with.
fn expected_of(status: &str) -> Option<Expected> {
    Some(match status {
        "NT_STATUS_OBJECT_NAME_NOT_FOUND"
        | "NT_STATUS_OBJECT_PATH_NOT_FOUND"
        | "NT_STATUS_NO_SUCH_FILE" => Expected::NotFound,
        "NT_STATUS_OBJECT_NAME_COLLISION" => Expected::Exists,
        "NT_STATUS_NOT_A_DIRECTORY" => Expected::NotDir,
        "NT_STATUS_DIRECTORY_NOT_EMPTY" => Expected::NotEmpty,
        "NT_STATUS_ACCESS_DENIED" => Expected::Denied,
        "NT_STATUS_LOCK_NOT_GRANTED" | "NT_STATUS_FILE_LOCK_CONFLICT" => Expected::WouldBlock,
        _ => return None,
    })
}

/// Reads a loadfile and replays it as `clients` streams.
pub fn read(
    path: &Path,
    input: impl BufRead,
    clients: u32,
    b: &mut Builder,
) -> Result<(), ImportError> {
    let err = LineErr {
        path: path.to_path_buf(),
    };
    let mut handles: Vec<HashMap<u64, (u32, bool)>> = vec![HashMap::new(); clients as usize];
    // Handles whose file goes when they are closed (delete-on-close), per client.
    let mut doomed: Vec<HashSet<u64>> = vec![HashSet::new(); clients as usize];
    let mut lines = crate::lines::Lines::new(path, input);
    let mut timed = false;
    while let Some((n, buf)) = lines.next_text("")? {
        let line = buf.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = tokens(line).map_err(|m| err.at(n, m))?;
        let mut t_us = 0;
        if words.first().is_some_and(|w| w.contains('.')) {
            let ts: f64 = words[0].parse().map_err(|_| {
                err.at(
                    n,
                    format!(
                        "'{}' is neither a command nor a time stamp in seconds",
                        words[0]
                    ),
                )
            })?;
            if !(ts.is_finite() && ts >= 0.0) {
                return Err(err.at(n, format!("time stamp {ts} is out of range")));
            }
            t_us = (ts * 1e6).round() as u64;
            timed = true;
            words.remove(0);
        }
        let Some(status) = words.last().cloned() else {
            continue;
        };
        if !status.starts_with("NT_STATUS_") {
            return Err(err.at(
                n,
                format!("the line does not end with the status the call must give (NT_STATUS_OK, ...): '{line}'"),
            ));
        }
        // A status alone (after its time stamp) names no call.
        if words.len() < 2 {
            return Err(err.at(
                n,
                format!("the line has a status but no command before it: '{line}'"),
            ));
        }
        let cmd = words[0].clone();
        let args = &words[1..words.len() - 1];
        for c in 0..clients {
            let mut ctx = Ctx {
                b,
                handles: &mut handles[c as usize],
                doomed: &mut doomed[c as usize],
                client: c + 1,
                key: c as u64,
                t_us,
                err: &err,
                line: n,
            };
            if status == "NT_STATUS_OK" {
                ctx.command(&cmd, args)?;
            } else {
                ctx.failing(&cmd, args, &status)?;
            }
        }
    }
    if !timed {
        b.warn(
            "the loadfile has no time stamps: --pace original replays it as fast as possible"
                .into(),
        );
    }
    Ok(())
}

/// Splits a line at spaces, keeping quoted paths whole (without their quotes).
fn tokens(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut word = String::new();
        if c == '"' {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some(ch) => word.push(ch),
                    None => return Err("a quoted path is never closed".into()),
                }
            }
        } else {
            while let Some(&ch) = chars.peek() {
                if ch.is_whitespace() {
                    break;
                }
                word.push(ch);
                chars.next();
            }
        }
        out.push(word);
    }
    Ok(out)
}

struct Ctx<'a> {
    b: &'a mut Builder,
    handles: &'a mut HashMap<u64, (u32, bool)>,
    doomed: &'a mut HashSet<u64>,
    client: u32,
    key: u64,
    t_us: u64,
    err: &'a LineErr,
    line: u64,
}

impl Ctx<'_> {
    fn arg<'s>(
        &self,
        args: &'s [String],
        i: usize,
        cmd: &str,
        what: &str,
    ) -> Result<&'s str, ImportError> {
        args.get(i).map(|s| s.as_str()).ok_or_else(|| {
            self.err.at(
                self.line,
                format!("{cmd} needs its {what} (argument {})", i + 1),
            )
        })
    }

    fn num(&self, args: &[String], i: usize, cmd: &str, what: &str) -> Result<u64, ImportError> {
        let s = self.arg(args, i, cmd, what)?;
        let v = match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16),
            None => s.parse(),
        };
        v.map_err(|_| {
            self.err
                .at(self.line, format!("{cmd}: {what} '{s}' is not a number"))
        })
    }

    /// A loadfile path as this client's path under the workload directory.
    fn path(&self, windows: &str) -> Option<String> {
        let own = format!("client{}", self.client);
        normalize(
            windows
                .split(['\\', '/'])
                .map(|c| if c == "client1" { own.as_str() } else { c }),
        )
        .filter(|p| !p.is_empty())
    }

    fn handle(&self, args: &[String], cmd: &str) -> Result<Option<(u32, bool)>, ImportError> {
        let fnum = self.num(args, 0, cmd, "file handle number")?;
        Ok(self.handles.get(&fnum).copied())
    }

    fn command(&mut self, cmd: &str, args: &[String]) -> Result<(), ImportError> {
        let (key, t) = (self.key, self.t_us);
        match cmd {
            "NTCreateX" => self.create(args),
            "Close" => {
                let fnum = self.num(args, 0, cmd, "file handle number")?;
                let doomed = self.doomed.remove(&fnum);
                match self.handles.remove(&fnum) {
                    Some((id, false)) => {
                        self.b.close(key, t, id)?;
                        if doomed {
                            self.b
                                .adjust("unlinks of files closed with delete-on-close set");
                            self.b.unlink(key, t, id)?;
                        }
                        Ok(())
                    }
                    Some((id, true)) => {
                        self.b.skip(
                            "Close of a directory handle (its NTCreateX became a stat or mkdir)",
                        );
                        if doomed {
                            self.b
                                .adjust("unlinks of files closed with delete-on-close set");
                            self.b.unlink(key, t, id)?;
                        }
                        Ok(())
                    }
                    None => self.unknown_handle(cmd),
                }
            }
            "ReadX" | "WriteX" => {
                let offset = self.num(args, 1, cmd, "offset")?;
                let size = self.num(args, 2, cmd, "size")?;
                let ret = self.num(args, 3, cmd, "returned size")?;
                let Some((id, dir)) = self.handle(args, cmd)? else {
                    return self.unknown_handle(cmd);
                };
                if dir {
                    self.b.skip(&format!("{cmd} on a directory handle"));
                    return Ok(());
                }
                if cmd == "ReadX" {
                    self.b.read(key, t, id, offset, size, Some(ret))
                } else {
                    self.b.write(key, t, id, offset, size)
                }
            }
            "Flush" => match self.handle(args, cmd)? {
                Some((id, false)) => self.b.fsync(key, t, id),
                Some((_, true)) => {
                    self.b.skip("Flush of a directory handle");
                    Ok(())
                }
                None => self.unknown_handle(cmd),
            },
            "QUERY_FILE_INFORMATION" => match self.handle(args, cmd)? {
                Some((id, _)) => self.b.stat(key, t, id),
                None => self.unknown_handle(cmd),
            },
            "Rename" => {
                let from = self.arg(args, 0, cmd, "old path")?.to_string();
                let to = self.arg(args, 1, cmd, "new path")?.to_string();
                let (Some(from), Some(to)) = (self.path(&from), self.path(&to)) else {
                    self.b.skip("Rename of the workload directory itself");
                    return Ok(());
                };
                let kind = self.b.kind_of(&from).unwrap_or(FileKind::File);
                let Some(f) = self.b.file(&from, kind, Presence::Existing) else {
                    return Ok(());
                };
                let Some(to) = self.b.file(&to, kind, Presence::New) else {
                    return Ok(());
                };
                self.b.rename(key, t, f, to)
            }
            "Unlink" | "Rmdir" | "Mkdir" | "QUERY_PATH_INFORMATION" | "Deltree" => {
                let p = self.arg(args, 0, cmd, "path")?.to_string();
                let Some(rel) = self.path(&p) else {
                    self.b
                        .skip(&format!("{cmd} of the workload directory itself"));
                    return Ok(());
                };
                self.by_path(cmd, &rel)
            }
            "FIND_FIRST" => {
                let p = self.arg(args, 0, cmd, "pattern")?.to_string();
                let dir = self
                    .path(&p)
                    .and_then(|p| p.rsplit_once('/').map(|(d, _)| d.to_string()));
                let Some(dir) = dir else {
                    self.b.skip("FIND_FIRST in the workload directory itself");
                    return Ok(());
                };
                let Some(id) = self.b.file(&dir, FileKind::Dir, Presence::Existing) else {
                    return Ok(());
                };
                self.b.readdir(key, t, id)
            }
            "LockX" | "UnlockX" => {
                let offset = self.num(args, 1, cmd, "offset")?;
                let len = self.num(args, 2, cmd, "length")?;
                match self.handle(args, cmd)? {
                    // dbench takes every lock exclusive.
                    Some((id, false)) => {
                        self.b
                            .lock(key, t, id, (offset, len), false, cmd == "UnlockX")
                    }
                    Some((_, true)) => {
                        self.b.skip(&format!("{cmd} on a directory handle"));
                        Ok(())
                    }
                    None => self.unknown_handle(cmd),
                }
            }
            "QUERY_FS_INFORMATION" => {
                // dbench asks about its client's own directory.
                let dir = self.path("\\clients\\client1");
                match dir.and_then(|d| self.b.known(&d)) {
                    Some(id) if self.b.exists_now(id) => self.b.statfs(key, t, id),
                    _ => {
                        self.b.skip("QUERY_FS_INFORMATION while the client's directory (clients/clientN) does not exist");
                        Ok(())
                    }
                }
            }
            "SET_FILE_INFORMATION" => {
                let class = self.num(args, 1, cmd, "information class")?;
                let Some((id, _)) = self.handle(args, cmd)? else {
                    return self.unknown_handle(cmd);
                };
                match class {
                    FILE_BASIC_INFORMATION => self.b.utime(key, t, id),
                    FILE_DISPOSITION_INFORMATION => {
                        let fnum = self.num(args, 0, cmd, "file handle number")?;
                        self.doomed.insert(fnum);
                        Ok(())
                    }
                    FILE_ALLOCATION_INFORMATION | FILE_END_OF_FILE_INFORMATION => {
                        self.b.skip(
                            "SET_FILE_INFORMATION of a file's size (the loadfile gives no size)",
                        );
                        Ok(())
                    }
                    FILE_RENAME_INFORMATION => {
                        self.b
                            .skip("SET_FILE_INFORMATION renames (the loadfile gives no new name)");
                        Ok(())
                    }
                    other => {
                        self.b.skip(&format!(
                            "SET_FILE_INFORMATION of information class {other}"
                        ));
                        Ok(())
                    }
                }
            }
            other => {
                self.b
                    .skip(&format!("{other} (not a NetBench command naslab knows)"));
                Ok(())
            }
        }
    }

    /// A line whose status says the call must fail: replayed as the call expected to
    /// fail that way where a POSIX call does, counted and named where not.
    fn failing(&mut self, cmd: &str, args: &[String], status: &str) -> Result<(), ImportError> {
        let Some(expect) = expected_of(status) else {
            self.b.skip(&format!(
                "{cmd} lines that must fail with {status} (no POSIX error stands for it)"
            ));
            return Ok(());
        };
        if !matches!(
            cmd,
            "NTCreateX" | "QUERY_PATH_INFORMATION" | "FIND_FIRST" | "Unlink"
        ) {
            self.b
                .skip(&format!("{cmd} lines that must fail ({status})"));
            return Ok(());
        }
        let (key, t) = (self.key, self.t_us);
        let p = self.arg(args, 0, cmd, "path")?.to_string();
        let Some(rel) = self.path(&p) else {
            self.b
                .skip(&format!("{cmd} of the workload directory itself"));
            return Ok(());
        };
        let (kind, entry) = match cmd {
            "NTCreateX" => {
                let options = self.num(args, 1, cmd, "create options")?;
                let disposition = self.num(args, 2, cmd, "create disposition")?;
                let dir = options & DIRECTORY_FILE != 0;
                if expect == Expected::Exists && disposition == 2 && !dir {
                    // FILE_CREATE of a name taken: the exclusive create it is.
                    (OpKind::Create, FileKind::File)
                } else if expect != Expected::NotFound && disposition != 1 {
                    self.b
                        .skip(&format!("NTCreateX lines that must fail with {status} (a create that fails so has no op)"));
                    return Ok(());
                } else if dir {
                    (OpKind::Stat, FileKind::Dir)
                } else {
                    (OpKind::Open, FileKind::File)
                }
            }
            "FIND_FIRST" => {
                let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel.as_str()));
                if name.contains(WILDCARDS) {
                    // A listing that matches nothing: a POSIX listing cannot fail so.
                    if dir.is_empty() {
                        self.b.skip("FIND_FIRST in the workload directory itself");
                        return Ok(());
                    }
                    let dir = dir.to_string();
                    let Some(id) = self.b.file(&dir, FileKind::Dir, Presence::Existing) else {
                        return Ok(());
                    };
                    self.b.adjust("FIND_FIRST patterns that match nothing, replayed as the listing they are (one that cannot fail)");
                    return self.b.readdir(key, t, id);
                }
                (OpKind::Stat, self.b.kind_of(&rel).unwrap_or(FileKind::File))
            }
            "Unlink" => (
                OpKind::Unlink,
                self.b.kind_of(&rel).unwrap_or(FileKind::File),
            ),
            _ => (OpKind::Stat, self.b.kind_of(&rel).unwrap_or(FileKind::File)),
        };
        self.b.failing(key, t, kind, &rel, entry, expect)
    }

    fn unknown_handle(&mut self, cmd: &str) -> Result<(), ImportError> {
        self.b
            .skip(&format!("{cmd} on a handle no successful NTCreateX opened"));
        Ok(())
    }

    fn by_path(&mut self, cmd: &str, rel: &str) -> Result<(), ImportError> {
        let (key, t) = (self.key, self.t_us);
        match cmd {
            "Unlink" => {
                let kind = self.b.kind_of(rel).unwrap_or(FileKind::File);
                if let Some(id) = self.b.file(rel, kind, Presence::Existing) {
                    self.b.unlink(key, t, id)?;
                }
            }
            "Rmdir" => {
                if let Some(id) = self.b.file(rel, FileKind::Dir, Presence::Existing) {
                    self.b.unlink(key, t, id)?;
                }
            }
            "Mkdir" => {
                if let Some(id) = self.b.file(rel, FileKind::Dir, Presence::New) {
                    if !self.b.exists_now(id) {
                        self.b.mkdir(key, t, id)?;
                    } else {
                        self.b.skip("Mkdir of a directory that exists");
                    }
                }
            }
            "QUERY_PATH_INFORMATION" => {
                let kind = self.b.kind_of(rel).unwrap_or(FileKind::File);
                if let Some(id) = self.b.file(rel, kind, Presence::Existing) {
                    self.b.stat(key, t, id)?;
                }
            }
            _ => {
                // Deltree: every entry known to exist below, deepest first, then the
                // directory itself.
                let below = self.b.existing_below(rel);
                let own = self.b.known(rel).filter(|&id| self.b.exists_now(id));
                if below.is_empty() && own.is_none() {
                    self.b
                        .skip("Deltree of a tree the loadfile never made (nothing to remove)");
                    return Ok(());
                }
                for id in below.into_iter().chain(own) {
                    self.b.adjust("unlinks a Deltree expanded into");
                    self.b.unlink(key, t, id)?;
                }
            }
        }
        Ok(())
    }

    fn create(&mut self, args: &[String]) -> Result<(), ImportError> {
        let cmd = "NTCreateX";
        let p = self.arg(args, 0, cmd, "path")?.to_string();
        let options = self.num(args, 1, cmd, "create options")?;
        let disposition = self.num(args, 2, cmd, "create disposition")?;
        let fnum = self.num(args, 3, cmd, "file handle number")?;
        if disposition > 5 {
            return Err(self.err.at(
                self.line,
                format!("NTCreateX: create disposition {disposition} is not 0 to 5"),
            ));
        }
        let (key, t) = (self.key, self.t_us);
        let Some(rel) = self.path(&p) else {
            self.b.skip("NTCreateX of the workload directory itself");
            return Ok(());
        };
        // 0 supersede, 1 open, 2 create, 3 open-if, 4 overwrite, 5 overwrite-if.
        let creates = matches!(disposition, 0 | 2 | 3 | 5);
        let first = if matches!(disposition, 1 | 4) {
            Presence::Existing
        } else {
            Presence::New
        };
        if options & DIRECTORY_FILE != 0 {
            let Some(id) = self.b.file(&rel, FileKind::Dir, first) else {
                return Ok(());
            };
            if creates && !self.b.exists_now(id) {
                self.b.mkdir(key, t, id)?;
            } else {
                self.b
                    .adjust("directory opens (NTCreateX of a directory) recorded as stat");
                self.b.stat(key, t, id)?;
            }
            self.handles.insert(fnum, (id, true));
            return Ok(());
        }
        let Some(id) = self.b.file(&rel, FileKind::File, first) else {
            return Ok(());
        };
        let req = OpenReq {
            read: true,
            write: true,
            create: if disposition == 2 {
                Creation::Exclusive
            } else if creates {
                Creation::IfAbsent
            } else {
                Creation::Never
            },
            truncate: matches!(disposition, 0 | 4 | 5),
            ..OpenReq::default()
        };
        self.b.open(key, t, id, req)?;
        self.handles.insert(fnum, (id, false));
        Ok(())
    }
}
