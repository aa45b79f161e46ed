//! What the system calls in an strace log mean for the file set under a root: each
//! thread becomes a stream, each call on a file under the root an op.

pub mod line;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;
use std::rc::Rc;

use naslab_trace::{Expected, FileKind, OpKind};

use crate::ImportError;
use crate::builder::{Builder, Creation, OpenReq, Presence, normalize};
use crate::error::LineErr;
use line::{Call, Joiner, Parsed, Ret, bracketed_int, fd_arg, field, parse_int, string_arg};

/// The system calls capture asks strace for (`-e trace=`); `?` lets strace skip those
/// this machine's kernel does not have.
pub const TRACED_CALLS: &[&str] = &[
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "read",
    "write",
    "pread64",
    "pwrite64",
    "readv",
    "writev",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "sendfile",
    "copy_file_range",
    "lseek",
    "fsync",
    "fdatasync",
    "truncate",
    "ftruncate",
    "fallocate",
    "mkdir",
    "mkdirat",
    "unlink",
    "unlinkat",
    "rmdir",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    "symlink",
    "symlinkat",
    "stat",
    "lstat",
    "fstat",
    "newfstatat",
    "statx",
    "getdents",
    "getdents64",
    "mmap",
    "execve",
    "execveat",
    "clone",
    "clone3",
    "fork",
    "vfork",
    "dup",
    "dup2",
    "dup3",
    "fcntl",
    "chdir",
    "fchdir",
    "statfs",
    "fstatfs",
    "utimensat",
    "utimes",
    "utime",
    "futimesat",
    "flock",
    "splice",
];

/// Why an op on a path is left out.
const OUTSIDE: &str = "ops on files outside the root";
const EXECUTABLE: &str = "ops on executables run under the root";
const LIBRARY: &str = "ops on shared libraries (by name, or mapped executable)";
const ROOT_ITSELF: &str = "ops on the root directory itself";
const FAILED: &str = "failed calls";
const UNDECODED: &str =
    "calls on descriptors strace did not decode to a path (make the log with -yy)";
const MMAP: &str = "mmap of a file under the root (its I/O is invisible to a tracer)";

/// One open file description: what a descriptor points at and where it stands.
#[derive(Debug, Default)]
struct Desc {
    pos: u64,
    append: bool,
    dir: bool,
    listed: bool,
}

type FdTable = HashMap<i64, Rc<RefCell<Desc>>>;

/// Where a path stands relative to the root.
enum Place {
    Under(String),
    Skip(&'static str),
}

impl Place {
    /// The path relative to the root, or `None` with why it is left out counted (an
    /// empty reason is one already counted, or none to give).
    fn under(self, b: &mut Builder) -> Option<String> {
        match self {
            Place::Under(rel) => Some(rel),
            Place::Skip(why) => {
                if !why.is_empty() {
                    b.skip(why);
                }
                None
            }
        }
    }
}

/// Reads strace output and feeds a [`Builder`].
pub struct StraceImporter {
    root: String,
    /// Each thread's descriptor table (threads share one).
    tables: HashMap<u32, Rc<RefCell<FdTable>>>,
    /// Threads that ended while another thread still shared their table.
    exited: HashSet<u32>,
    cwd: HashMap<u32, String>,
    executables: HashSet<String>,
    libraries: HashSet<String>,
    mapped: HashSet<String>,
    /// The first time stamp: the trace's time zero.
    t0: Option<u64>,
    joiner: Joiner,
    /// The cwd of threads first seen without one.
    default_cwd: String,
}

impl StraceImporter {
    /// Ops under `root` (an absolute path without symlinks) are kept.
    pub fn new(root: &Path) -> StraceImporter {
        let root = root.to_string_lossy().trim_end_matches('/').to_string();
        StraceImporter {
            default_cwd: root.clone(),
            root,
            tables: HashMap::new(),
            exited: HashSet::new(),
            cwd: HashMap::new(),
            executables: HashSet::new(),
            libraries: HashSet::new(),
            mapped: HashSet::new(),
            t0: None,
            joiner: Joiner::default(),
        }
    }

    /// Reads a whole log from `input` (named `path` in errors) into `b`.
    pub fn read_log(
        &mut self,
        path: &Path,
        input: impl BufRead,
        b: &mut Builder,
    ) -> Result<(), ImportError> {
        let err = LineErr {
            path: path.to_path_buf(),
        };
        let mut lines = crate::lines::Lines::new(path, input);
        while let Some((n, buf)) = lines.next_bytes()? {
            let text = String::from_utf8_lossy(buf);
            self.line(&text, b).map_err(|m| match m {
                LineFault::Text(m) => err.at(n, m),
                LineFault::Import(e) => e,
            })?;
        }
        self.finish(b);
        Ok(())
    }

    /// Feeds one log line.
    pub fn line(&mut self, text: &str, b: &mut Builder) -> Result<(), LineFault> {
        let p = self.joiner.line(text).map_err(LineFault::Text)?;
        self.parsed(p, b).map_err(LineFault::Import)
    }

    /// Feeds one call or thread's end, however it was collected (from strace's output,
    /// or from the eBPF collector's records).
    pub fn parsed(&mut self, p: Parsed, b: &mut Builder) -> Result<(), ImportError> {
        match p {
            Parsed::Call(c) => self.call(c, b),
            Parsed::Exit { tid, t_us } => self.exit(tid, t_us, b),
            Parsed::Pending | Parsed::Other => Ok(()),
        }
    }

    /// Adds the warnings that need the whole log.
    pub fn finish(&mut self, b: &mut Builder) {
        if b.skipped_count(UNDECODED) > 0 {
            b.warn("the log does not name descriptors' files: make it with strace -f -ttt -T -yy (see docs/capture.md)".into());
        }
        if !self.mapped.is_empty() {
            let mut files: Vec<&String> = self.mapped.iter().collect();
            files.sort();
            let shown: Vec<&str> = files.iter().take(5).map(|s| s.as_str()).collect();
            b.warn(format!(
                "{} file{} under the root {} memory-mapped ({}{}); I/O through a mapping is not seen and is missing from the trace",
                files.len(),
                if files.len() == 1 { " was" } else { "s were" },
                if files.len() == 1 { "was" } else { "were" },
                shown.join(", "),
                if files.len() > 5 { ", ..." } else { "" }
            ));
        }
    }

    fn place(&self, abs: &str) -> Place {
        let Some(rest) = abs.strip_prefix(&self.root) else {
            return Place::Skip(OUTSIDE);
        };
        if rest.is_empty() {
            return Place::Skip(ROOT_ITSELF);
        }
        let Some(rel) = rest.strip_prefix('/') else {
            return Place::Skip(OUTSIDE);
        };
        let Some(rel) = normalize(rel.split('/')) else {
            return Place::Skip(OUTSIDE);
        };
        if rel.is_empty() {
            return Place::Skip(ROOT_ITSELF);
        }
        if self.executables.contains(&rel) {
            return Place::Skip(EXECUTABLE);
        }
        let name = rel.rsplit('/').next().unwrap_or("");
        if self.libraries.contains(&rel) || name.ends_with(".so") || name.contains(".so.") {
            return Place::Skip(LIBRARY);
        }
        Place::Under(rel)
    }

    fn table(&mut self, tid: u32) -> Rc<RefCell<FdTable>> {
        self.tables
            .entry(tid)
            .or_insert_with(|| Rc::new(RefCell::new(HashMap::new())))
            .clone()
    }

    fn desc(&mut self, tid: u32, fd: i64) -> Rc<RefCell<Desc>> {
        let t = self.table(tid);
        let mut t = t.borrow_mut();
        t.entry(fd)
            .or_insert_with(|| Rc::new(RefCell::new(Desc::default())))
            .clone()
    }

    fn cwd_of(&self, tid: u32) -> String {
        self.cwd
            .get(&tid)
            .cloned()
            .unwrap_or_else(|| self.default_cwd.clone())
    }

    /// An absolute path from a directory descriptor argument (or the cwd) and a path.
    fn resolve(&self, tid: u32, dirfd: Option<&str>, path: &str) -> Option<String> {
        if path.starts_with('/') {
            return Some(lexical(path));
        }
        let base = match dirfd.and_then(fd_arg) {
            Some((_, Some(p))) => p,
            Some((-100, None)) | None => self.cwd_of(tid),
            Some(_) => return None,
        };
        if path.is_empty() {
            return Some(lexical(&base));
        }
        Some(lexical(&format!("{base}/{path}")))
    }

    fn note_cwd(&mut self, c: &Call) {
        if let Some(a) = c.args.first()
            && a.starts_with("AT_FDCWD<")
            && let Some((_, Some(p))) = fd_arg(a)
        {
            self.cwd.insert(c.tid, p);
        }
    }

    /// A descriptor argument's place, from the path strace decoded for it.
    fn fd_place(&self, arg: Option<&String>) -> Option<(i64, Place)> {
        let arg = arg?;
        let (fd, path) = fd_arg(arg)?;
        if fd >= 0 && !arg.contains('<') {
            return Some((fd, Place::Skip(UNDECODED)));
        }
        let place = match path {
            Some(p) => self.place(&p),
            None => return Some((fd, Place::Skip(""))),
        };
        Some((fd, place))
    }

    fn rel_t(&mut self, t: u64) -> u64 {
        let t0 = *self.t0.get_or_insert(t);
        t.saturating_sub(t0)
    }

    fn call(&mut self, c: Call, b: &mut Builder) -> Result<(), ImportError> {
        let t = self.rel_t(c.t_us);
        self.note_cwd(&c);
        let name = c.name.as_str();
        match name {
            "clone" | "clone3" | "fork" | "vfork" => {
                if let Some(child) = c.ret.ok().filter(|&v| v > 0) {
                    let flags = c.args.iter().find(|a| a.contains("CLONE_")).cloned();
                    let shares = flags.is_some_and(|f| f.contains("CLONE_FILES"));
                    self.spawn(c.tid, child as u32, shares);
                }
                return Ok(());
            }
            "execve" | "execveat" => {
                let p = if name == "execve" {
                    c.args
                        .first()
                        .and_then(|a| string_arg(a))
                        .and_then(|p| self.resolve(c.tid, None, &p))
                } else {
                    let p = c.args.get(1).and_then(|a| string_arg(a));
                    p.and_then(|p| self.resolve(c.tid, c.args.first().map(|s| s.as_str()), &p))
                };
                if let Some(Place::Under(rel)) = p.map(|p| self.place(&p)) {
                    self.executables.insert(rel);
                }
                return Ok(());
            }
            "chdir" => {
                if c.ret.ok().is_some()
                    && let Some(p) = c.args.first().and_then(|a| string_arg(a))
                    && let Some(abs) = self.resolve(c.tid, None, &p)
                {
                    self.cwd.insert(c.tid, abs);
                }
                return Ok(());
            }
            "fchdir" => {
                if let Some((_, Some(p))) = c.args.first().and_then(|a| fd_arg(a))
                    && c.ret.ok().is_some()
                {
                    self.cwd.insert(c.tid, p);
                }
                return Ok(());
            }
            _ => {}
        }
        if matches!(c.ret, Ret::Unknown) {
            return Ok(());
        }
        match name {
            "open" | "creat" | "openat" | "openat2" => self.open(&c, t, b),
            "close" => self.close(&c, t, b),
            "fcntl" if c.args.get(1).is_some_and(|a| a.contains("SETLK")) => {
                self.fcntl_lock(&c, t, b)
            }
            "dup" | "dup2" | "dup3" | "fcntl" => self.dup(&c, t, b),
            "flock" => self.flock(&c, t, b),
            "statfs" | "fstatfs" | "utimensat" | "utimes" | "utime" | "futimesat" => {
                self.attr(&c, t, b)
            }
            "read" | "write" | "pread64" | "pwrite64" | "readv" | "writev" | "preadv"
            | "pwritev" | "preadv2" | "pwritev2" => self.data(&c, t, b),
            "sendfile" | "copy_file_range" | "splice" => self.copy(&c, t, b),
            "lseek" => {
                if let (Some(pos), Some((fd, _))) =
                    (c.ret.ok(), c.args.first().and_then(|a| fd_arg(a)))
                {
                    self.desc(c.tid, fd).borrow_mut().pos = pos as u64;
                }
                Ok(())
            }
            "fsync" | "fdatasync" | "ftruncate" | "fallocate" => self.handle_op(&c, t, b),
            "truncate" => self.path_truncate(&c, t, b),
            "mkdir" | "mkdirat" | "unlink" | "unlinkat" | "rmdir" => self.namespace(&c, t, b),
            "rename" | "renameat" | "renameat2" => self.rename(&c, t, b),
            "link" | "linkat" => self.link(&c, t, b),
            "symlink" | "symlinkat" => self.symlink(&c, t, b),
            "stat" | "lstat" | "fstat" | "newfstatat" | "statx" => self.stat(&c, t, b),
            "getdents" | "getdents64" => self.getdents(&c, t, b),
            "mmap" => {
                if let Some((_, Place::Under(rel))) = self.fd_place(c.args.get(4))
                    && c.ret.ok().is_some()
                {
                    b.skip(MMAP);
                    if c.args.get(2).is_some_and(|p| p.contains("PROT_EXEC")) {
                        self.libraries.insert(rel);
                    } else {
                        self.mapped.insert(rel);
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A thread ended. When no thread left shares its descriptor table, every file the
    /// table's threads still had open closes then, as the kernel closes them (releasing
    /// their locks): the trace says so, so a program that runs next waits for it.
    fn exit(&mut self, tid: u32, t_us: u64, b: &mut Builder) -> Result<(), ImportError> {
        let t = self.rel_t(t_us);
        let Some(table) = self.tables.get(&tid).cloned() else {
            return b.close_all(tid as u64, t);
        };
        let sharing: Vec<u32> = self
            .tables
            .iter()
            .filter(|(_, other)| Rc::ptr_eq(other, &table))
            .map(|(&member, _)| member)
            .collect();
        if sharing
            .iter()
            .any(|m| *m != tid && !self.exited.contains(m))
        {
            self.exited.insert(tid);
            return Ok(());
        }
        let mut sharing = sharing;
        sharing.sort_unstable();
        for member in sharing {
            self.exited.remove(&member);
            self.tables.remove(&member);
            b.close_all(member as u64, t)?;
        }
        Ok(())
    }

    fn spawn(&mut self, parent: u32, child: u32, shares: bool) {
        let ptable = self.table(parent);
        if let Some(cwd) = self.cwd.get(&parent).cloned() {
            self.cwd.entry(child).or_insert(cwd);
        }
        if shares {
            // The child's own entries (seen before the parent's clone returned) join in.
            if let Some(ct) = self.tables.get(&child).cloned() {
                for (fd, d) in ct.borrow().iter() {
                    ptable.borrow_mut().entry(*fd).or_insert_with(|| d.clone());
                }
            }
            self.tables.insert(child, ptable);
        } else {
            let ct = self.table(child);
            for (fd, d) in ptable.borrow().iter() {
                // A forked child shares its parent's open file descriptions.
                ct.borrow_mut().entry(*fd).or_insert_with(|| d.clone());
            }
        }
    }

    /// Skips the call if it failed; `true` when it did.
    fn failed(&self, c: &Call, b: &mut Builder, under: bool) -> bool {
        if let Ret::Error(e) = &c.ret {
            if under {
                b.skip(&format!("{FAILED} ({} {e})", c.name));
            }
            return true;
        }
        false
    }

    /// A failed lookup by path kept as the op expected to fail as it did: an open
    /// without `O_CREAT` (of a directory: a stat) or a stat that found nothing (or met a
    /// file where a directory should be), an exclusive create that found the name taken,
    /// an unlink or rmdir of nothing, an rmdir of a directory still holding something.
    /// A program's failed lookups are requests the server answers too. Any other
    /// failure is skipped and counted. `true` when the call failed.
    fn failed_as_expected(
        &self,
        c: &Call,
        t: u64,
        b: &mut Builder,
        kind: OpKind,
        rel: &str,
        entry: FileKind,
    ) -> Result<bool, ImportError> {
        let Ret::Error(e) = &c.ret else {
            return Ok(false);
        };
        let expect = match (kind, Expected::named(e.as_bytes())) {
            (OpKind::Open, Some(x @ Expected::NotFound)) => x,
            (OpKind::Create, Some(x @ Expected::Exists)) => x,
            (OpKind::Stat, Some(x @ (Expected::NotFound | Expected::NotDir))) => x,
            (OpKind::Unlink, Some(x @ Expected::NotFound)) => x,
            (OpKind::Unlink, Some(x @ Expected::NotEmpty)) if entry == FileKind::Dir => x,
            _ => {
                b.skip(&format!("{FAILED} ({} {e})", c.name));
                return Ok(true);
            }
        };
        b.failing(c.tid as u64, t, kind, rel, entry, expect)?;
        Ok(true)
    }

    fn open(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let (dirfd, path_arg, flags_arg) = match c.name.as_str() {
            "open" => (None, c.args.first(), c.args.get(1).cloned()),
            "creat" => (
                None,
                c.args.first(),
                Some("O_WRONLY|O_CREAT|O_TRUNC".to_string()),
            ),
            "openat" => (c.args.first(), c.args.get(1), c.args.get(2).cloned()),
            _ => (
                c.args.first(),
                c.args.get(1),
                c.args
                    .get(2)
                    .and_then(|a| field(a, "flags").map(String::from)),
            ),
        };
        let flags = flags_arg.unwrap_or_default();
        let asked = path_arg
            .and_then(|a| string_arg(a))
            .and_then(|p| self.resolve(c.tid, dirfd.map(|s| s.as_str()), &p));
        let (fd, abs) = match &c.ret {
            Ret::Value(fd, Some(p)) => (*fd, Some(p.clone())),
            Ret::Value(fd, None) => (*fd, asked.clone()),
            _ => (-1, asked.clone()),
        };
        let place = match &abs {
            Some(p) => self.place(p),
            None => Place::Skip(""),
        };
        let rel = match place {
            Place::Under(rel) => rel,
            Place::Skip(why) => {
                if !why.is_empty() {
                    b.skip(why);
                }
                if fd >= 0 {
                    let d = Desc {
                        dir: flags.contains("O_DIRECTORY"),
                        ..Desc::default()
                    };
                    self.table(c.tid)
                        .borrow_mut()
                        .insert(fd, Rc::new(RefCell::new(d)));
                }
                return Ok(());
            }
        };
        let exclusive = flags.contains("O_CREAT") && flags.contains("O_EXCL");
        let lookup = if exclusive {
            // An exclusive create that found the name taken: a lock file's probe.
            Some((OpKind::Create, FileKind::File))
        } else if flags.contains("O_CREAT") || flags.contains("O_PATH") {
            None
        } else if flags.contains("O_DIRECTORY") {
            // A directory opened to be listed is looked up, as a stat does.
            Some((OpKind::Stat, FileKind::Dir))
        } else {
            Some((OpKind::Open, FileKind::File))
        };
        if let Some((kind, entry)) = lookup
            && self.failed_as_expected(c, t, b, kind, &rel, entry)?
        {
            return Ok(());
        }
        if self.failed(c, b, true) {
            return Ok(());
        }
        if flags.contains("O_PATH") {
            b.skip("O_PATH opens (no I/O through them)");
            return Ok(());
        }
        let is_dir = flags.contains("O_DIRECTORY") || b.kind_of(&rel) == Some(FileKind::Dir);
        let desc = Desc {
            dir: is_dir,
            append: flags.contains("O_APPEND"),
            ..Desc::default()
        };
        self.table(c.tid)
            .borrow_mut()
            .insert(fd, Rc::new(RefCell::new(desc)));
        if is_dir {
            // A directory's handle only serves listings, recorded as readdir ops.
            b.file(&rel, FileKind::Dir, Presence::Existing);
            return Ok(());
        }
        let creates = flags.contains("O_CREAT");
        let first = if creates && (flags.contains("O_EXCL") || flags.contains("O_TRUNC")) {
            Presence::New
        } else if creates {
            // Without a listing from before the run, a file opened with O_CREAT is
            // taken as made by the workload.
            Presence::New
        } else {
            Presence::Existing
        };
        let Some(id) = b.file(&rel, FileKind::File, first) else {
            return Ok(());
        };
        let write = flags.contains("O_WRONLY") || flags.contains("O_RDWR");
        let req = OpenReq {
            read: !flags.contains("O_WRONLY"),
            write,
            create: if exclusive {
                Creation::Exclusive
            } else if creates {
                Creation::IfAbsent
            } else {
                Creation::Never
            },
            truncate: flags.contains("O_TRUNC"),
            append: flags.contains("O_APPEND"),
            sync: flags.contains("O_SYNC") || flags.contains("O_DSYNC"),
            direct: flags.contains("O_DIRECT"),
        };
        b.open(c.tid as u64, t, id, req)
    }

    fn close(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let Some((fd, place)) = self.fd_place(c.args.first()) else {
            return Ok(());
        };
        let desc = self.table(c.tid).borrow_mut().remove(&fd);
        if let Place::Under(rel) = place {
            let is_dir = desc.is_some_and(|d| d.borrow().dir);
            if !is_dir
                && let Some(id) = b.known(&rel)
                && b.kind_of(&rel) == Some(FileKind::File)
            {
                b.close(c.tid as u64, t, id)?;
            }
        }
        Ok(())
    }

    fn dup(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        if c.name == "fcntl" && !c.args.get(1).is_some_and(|a| a.starts_with("F_DUPFD")) {
            return Ok(());
        }
        let Some(new) = c.ret.ok() else {
            return Ok(());
        };
        let Some((old, place)) = self.fd_place(c.args.first()) else {
            return Ok(());
        };
        if c.name == "dup2" || c.name == "dup3" {
            // The target descriptor, if open, is closed first.
            if let Some((target, tplace)) = self.fd_place(c.args.get(1))
                && target != old
                && let Place::Under(rel) = tplace
                && let Some(id) = b.known(&rel)
                && b.kind_of(&rel) == Some(FileKind::File)
            {
                b.close(c.tid as u64, t, id)?;
            }
        }
        let d = self.desc(c.tid, old);
        self.table(c.tid).borrow_mut().insert(new, d);
        if let Place::Under(rel) = place
            && let Some(id) = b.known(&rel)
        {
            b.retain(c.tid as u64, id);
        }
        Ok(())
    }

    /// The file id of a descriptor argument under the root, counting what is left out.
    fn fd_file(&mut self, arg: Option<&String>, b: &mut Builder, c: &Call) -> Option<(i64, u32)> {
        let (fd, place) = self.fd_place(arg)?;
        let rel = place.under(b)?;
        if self.failed(c, b, true) || self.desc(c.tid, fd).borrow().dir {
            return None;
        }
        let id = b.file(&rel, FileKind::File, Presence::Existing)?;
        Some((fd, id))
    }

    fn data(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let Some((fd, id)) = self.fd_file(c.args.first(), b, c) else {
            return Ok(());
        };
        let got = c.ret.ok().unwrap_or(0).max(0) as u64;
        let name = c.name.as_str();
        let vectored = name.contains('v');
        let len = if vectored {
            iov_total(c.args.get(1).map(|s| s.as_str()).unwrap_or(""))
        } else {
            c.args.get(2).and_then(|a| parse_int(a)).unwrap_or(0).max(0) as u64
        };
        let explicit = match name {
            "pread64" | "pwrite64" | "preadv" | "pwritev" => {
                c.args.get(3).and_then(|a| parse_int(a))
            }
            "preadv2" | "pwritev2" => c.args.get(3).and_then(|a| parse_int(a)).filter(|&o| o >= 0),
            _ => None,
        };
        let desc = self.desc(c.tid, fd);
        let writes = name.contains("write");
        let offset = match explicit {
            Some(o) => o as u64,
            None if writes && desc.borrow().append => b.size_now(id),
            None => desc.borrow().pos,
        };
        if explicit.is_none() {
            desc.borrow_mut().pos = offset + got;
        }
        if writes {
            b.write(c.tid as u64, t, id, offset, len)
        } else {
            b.read(c.tid as u64, t, id, offset, len, Some(got))
        }
    }

    fn copy(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let (out_arg, in_arg, in_off, out_off) = if c.name == "sendfile" {
            (c.args.first(), c.args.get(1), c.args.get(2), None)
        } else {
            (c.args.get(2), c.args.first(), c.args.get(1), c.args.get(3))
        };
        let got = match c.ret.ok() {
            Some(n) if n > 0 => n as u64,
            Some(_) => {
                let under = [in_arg, out_arg]
                    .iter()
                    .any(|a| matches!(self.fd_place(*a), Some((_, Place::Under(_)))));
                if under {
                    b.skip("copies that moved nothing (end of file)");
                }
                return Ok(());
            }
            None => {
                if let Some((_, Place::Under(_))) = self.fd_place(in_arg) {
                    self.failed(c, b, true);
                }
                return Ok(());
            }
        };
        if let Some((fd, id)) = self.fd_file(in_arg, b, c) {
            let off = match in_off.and_then(|a| bracketed_int(a)) {
                Some(o) => o as u64,
                None => {
                    let d = self.desc(c.tid, fd);
                    let pos = d.borrow().pos;
                    d.borrow_mut().pos = pos + got;
                    pos
                }
            };
            b.read(c.tid as u64, t, id, off, got, Some(got))?;
        }
        if let Some((fd, id)) = self.fd_file(out_arg, b, c) {
            let off = match out_off.and_then(|a| bracketed_int(a)) {
                Some(o) => o as u64,
                None => {
                    let d = self.desc(c.tid, fd);
                    let pos = if d.borrow().append {
                        b.size_now(id)
                    } else {
                        d.borrow().pos
                    };
                    d.borrow_mut().pos = pos + got;
                    pos
                }
            };
            b.write(c.tid as u64, t, id, off, got)?;
        }
        Ok(())
    }

    fn handle_op(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let Some((_, id)) = self.fd_file(c.args.first(), b, c) else {
            return Ok(());
        };
        let int = |i: usize| c.args.get(i).and_then(|a| parse_int(a)).unwrap_or(0).max(0) as u64;
        let key = c.tid as u64;
        match c.name.as_str() {
            "ftruncate" => b.truncate(key, t, id, int(1)),
            "fallocate" => b.fallocate(key, t, id, int(2), int(3)),
            _ => b.fsync(key, t, id),
        }
    }

    fn path_truncate(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let Some(abs) = c
            .args
            .first()
            .and_then(|a| string_arg(a))
            .and_then(|p| self.resolve(c.tid, None, &p))
        else {
            return Ok(());
        };
        let rel = match self.place(&abs) {
            Place::Under(rel) => rel,
            Place::Skip(why) => {
                b.skip(why);
                return Ok(());
            }
        };
        if self.failed(c, b, true) {
            return Ok(());
        }
        let Some(id) = b.file(&rel, FileKind::File, Presence::Existing) else {
            return Ok(());
        };
        let len = c.args.get(1).and_then(|a| parse_int(a)).unwrap_or(0).max(0) as u64;
        b.adjust("truncate by path, recorded as open, truncate, close");
        let key = c.tid as u64;
        let req = OpenReq {
            write: true,
            ..OpenReq::default()
        };
        b.open(key, t, id, req)?;
        b.truncate(key, t, id, len)?;
        b.close(key, t, id)
    }

    /// The place of a path argument at `path_index`, relative to the directory
    /// descriptor at `dir_index` when there is one.
    fn path_at(&self, c: &Call, dir_index: Option<usize>, path_index: usize) -> Option<Place> {
        let p = string_arg(c.args.get(path_index)?)?;
        let dirfd = dir_index.and_then(|i| c.args.get(i)).map(|s| s.as_str());
        let abs = self.resolve(c.tid, dirfd, &p)?;
        Some(self.place(&abs))
    }

    fn namespace(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let (place, dir) = match c.name.as_str() {
            "mkdir" => (self.path_at(c, None, 0), true),
            "mkdirat" => (self.path_at(c, Some(0), 1), true),
            "rmdir" => (self.path_at(c, None, 0), true),
            "unlink" => (self.path_at(c, None, 0), false),
            _ => (
                self.path_at(c, Some(0), 1),
                c.args.get(2).is_some_and(|f| f.contains("AT_REMOVEDIR")),
            ),
        };
        let Some(rel) = place.and_then(|p| p.under(b)) else {
            return Ok(());
        };
        let kind = if dir { FileKind::Dir } else { FileKind::File };
        if !c.name.starts_with("mkdir")
            && self.failed_as_expected(c, t, b, OpKind::Unlink, &rel, kind)?
        {
            return Ok(());
        }
        if self.failed(c, b, true) {
            return Ok(());
        }
        let key = c.tid as u64;
        if c.name.starts_with("mkdir") {
            let Some(id) = b.file(&rel, kind, Presence::New) else {
                return Ok(());
            };
            b.mkdir(key, t, id)
        } else {
            let Some(id) = b.file(&rel, kind, Presence::Existing) else {
                return Ok(());
            };
            b.unlink(key, t, id)
        }
    }

    /// The two paths of a call that takes an old and a new name: `(OLD, NEW)` for `plain`,
    /// `(OLDDIR, OLD, NEWDIR, NEW, ...)` for its `*at` forms; both under the root, or
    /// `None` with the skip counted (`across`: what a pair crossing the root's edge is).
    fn two_paths(
        &self,
        c: &Call,
        plain: &str,
        across: &'static str,
        b: &mut Builder,
    ) -> Option<(String, String)> {
        let (from, to) = if c.name == plain {
            (self.path_at(c, None, 0), self.path_at(c, None, 1))
        } else {
            (self.path_at(c, Some(0), 1), self.path_at(c, Some(2), 3))
        };
        match (from, to) {
            (Some(Place::Under(f)), Some(Place::Under(t))) => Some((f, t)),
            (Some(Place::Skip(why)), _) | (_, Some(Place::Skip(why))) => {
                b.skip(if why == OUTSIDE { across } else { why });
                None
            }
            _ => None,
        }
    }

    fn rename(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let Some((from, to)) = self.two_paths(c, "rename", "renames into or out of the root", b)
        else {
            return Ok(());
        };
        if self.failed(c, b, true) {
            return Ok(());
        }
        let kind = b.kind_of(&from).unwrap_or(FileKind::File);
        let Some(f) = b.file(&from, kind, Presence::Existing) else {
            return Ok(());
        };
        let Some(to) = b.file(&to, kind, Presence::New) else {
            return Ok(());
        };
        b.rename(c.tid as u64, t, f, to)
    }

    /// `link(OLD, NEW)`, `linkat(OLDDIR, OLD, NEWDIR, NEW, FLAGS)`: a hard link.
    fn link(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let Some((from, to)) = self.two_paths(c, "link", "hard links into or out of the root", b)
        else {
            return Ok(());
        };
        if self.failed(c, b, true) {
            return Ok(());
        }
        if b.kind_of(&from) == Some(FileKind::Dir) {
            b.skip("hard links of a directory");
            return Ok(());
        }
        let Some(f) = b.file(&from, FileKind::File, Presence::Existing) else {
            return Ok(());
        };
        let Some(to) = b.file(&to, FileKind::File, Presence::New) else {
            return Ok(());
        };
        b.link(c.tid as u64, t, f, to)
    }

    /// `symlink(TARGET, LINK)`, `symlinkat(TARGET, DIR, LINK)`: a symbolic link, whose
    /// target (its text) is taken from the link's own directory.
    fn symlink(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let link = if c.name == "symlink" {
            self.path_at(c, None, 1)
        } else {
            self.path_at(c, Some(1), 2)
        };
        let Some(link) = link.and_then(|p| p.under(b)) else {
            return Ok(());
        };
        let Some(text) = c.args.first().and_then(|a| string_arg(a)) else {
            return Ok(());
        };
        let link_dir = match link.rfind('/') {
            Some(cut) => format!("{}/{}", self.root, &link[..cut]),
            None => self.root.clone(),
        };
        let target = if text.starts_with('/') {
            lexical(&text)
        } else {
            lexical(&format!("{link_dir}/{text}"))
        };
        let target = match self.place(&target) {
            Place::Under(rel) => rel,
            Place::Skip(_) => {
                b.skip("symbolic links to paths outside the root");
                return Ok(());
            }
        };
        if self.failed(c, b, true) {
            return Ok(());
        }
        let kind = b.kind_of(&target).unwrap_or(FileKind::File);
        let Some(target) = b.file(&target, kind, Presence::Existing) else {
            return Ok(());
        };
        let Some(link) = b.file(&link, kind, Presence::New) else {
            return Ok(());
        };
        b.symlink(c.tid as u64, t, target, link)
    }

    /// A file system query or a setting of times, by path or by descriptor.
    fn attr(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let place = match c.name.as_str() {
            "fstatfs" => self.fd_place(c.args.first()).map(|(_, p)| p),
            "statfs" | "utimes" | "utime" => self.path_at(c, None, 0),
            // A NULL path (futimens) names the descriptor itself.
            _ if c.args.get(1).is_some_and(|a| a == "NULL") => {
                self.fd_place(c.args.first()).map(|(_, p)| p)
            }
            _ => self.stat_at(c),
        };
        let Some(rel) = place.and_then(|p| p.under(b)) else {
            return Ok(());
        };
        if self.failed(c, b, true) {
            return Ok(());
        }
        let kind = b.kind_of(&rel).unwrap_or(FileKind::File);
        let Some(id) = b.file(&rel, kind, Presence::Existing) else {
            return Ok(());
        };
        if c.name.contains("statfs") {
            b.statfs(c.tid as u64, t, id)
        } else {
            b.utime(c.tid as u64, t, id)
        }
    }

    /// A byte-range lock set through fcntl (`F_SETLK`, `F_SETLKW`, `F_OFD_SETLK`, ...).
    fn fcntl_lock(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let Some((fd, id)) = self.fd_file(c.args.first(), b, c) else {
            return Ok(());
        };
        let lock = c.args.get(2).map(|s| s.as_str()).unwrap_or("");
        let num = |name: &str| field(lock, name).and_then(parse_int).unwrap_or(0);
        let start = match field(lock, "l_whence") {
            Some("SEEK_CUR") => self.desc(c.tid, fd).borrow().pos as i64 + num("l_start"),
            Some("SEEK_SET") | None => num("l_start"),
            Some(_) => {
                b.skip("fcntl locks placed from the end of the file");
                return Ok(());
            }
        };
        // A negative length reaches back from the start.
        let (start, len) = match num("l_len") {
            l if l < 0 => (start + l, -l),
            l => (start, l),
        };
        let kind = field(lock, "l_type").unwrap_or("");
        b.lock(
            c.tid as u64,
            t,
            id,
            (start.max(0) as u64, len as u64),
            kind == "F_RDLCK",
            kind == "F_UNLCK",
        )
    }

    /// A whole-file lock (flock): a lock of the whole range.
    fn flock(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let Some((_, id)) = self.fd_file(c.args.first(), b, c) else {
            return Ok(());
        };
        let how = c.args.get(1).map(|s| s.as_str()).unwrap_or("");
        b.lock(
            c.tid as u64,
            t,
            id,
            (0, 0),
            how.contains("LOCK_SH"),
            how.contains("LOCK_UN"),
        )
    }

    fn stat(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let (place, buf) = match c.name.as_str() {
            "fstat" => (self.fd_place(c.args.first()).map(|(_, p)| p), c.args.get(1)),
            "stat" | "lstat" => (self.path_at(c, None, 0), c.args.get(1)),
            "statx" => (self.stat_at(c), c.args.get(4)),
            _ => (self.stat_at(c), c.args.get(2)),
        };
        let Some(rel) = place.and_then(|p| p.under(b)) else {
            return Ok(());
        };
        if c.name != "fstat"
            && self.failed_as_expected(c, t, b, OpKind::Stat, &rel, FileKind::File)?
        {
            return Ok(());
        }
        if self.failed(c, b, true) {
            return Ok(());
        }
        // A stat of a directory descriptor is part of listing it (opendir does one).
        let by_fd = c.name == "fstat"
            || c.args
                .get(1)
                .and_then(|a| string_arg(a))
                .is_some_and(|p| p.is_empty());
        if by_fd && let Some((fd, _)) = c.args.first().and_then(|a| fd_arg(a)) {
            let is_dir = self
                .tables
                .get(&c.tid)
                .and_then(|t| t.borrow().get(&fd).map(|d| d.borrow().dir))
                .unwrap_or(false);
            if is_dir {
                b.skip("stats of an open directory descriptor (part of listing it)");
                return Ok(());
            }
        }
        let buf = buf.map(|s| s.as_str()).unwrap_or("");
        let mode = field(buf, "st_mode").or_else(|| field(buf, "stx_mode"));
        let kind = match (mode, b.kind_of(&rel)) {
            (_, Some(k)) => k,
            (Some(m), None) if m.contains("S_IFDIR") => FileKind::Dir,
            _ => FileKind::File,
        };
        let Some(id) = b.file(&rel, kind, Presence::Existing) else {
            return Ok(());
        };
        if let Some(size) = field(buf, "st_size")
            .or_else(|| field(buf, "stx_size"))
            .and_then(parse_int)
        {
            b.note_size(id, size.max(0) as u64);
        }
        b.stat(c.tid as u64, t, id)
    }

    /// The place an `*at` stat call names: the path, or the descriptor itself with
    /// `AT_EMPTY_PATH` and an empty path.
    fn stat_at(&self, c: &Call) -> Option<Place> {
        let p = string_arg(c.args.get(1)?)?;
        if p.is_empty() {
            return self.fd_place(c.args.first()).map(|(_, p)| p);
        }
        self.path_at(c, Some(0), 1)
    }

    fn getdents(&mut self, c: &Call, t: u64, b: &mut Builder) -> Result<(), ImportError> {
        let Some((fd, place)) = self.fd_place(c.args.first()) else {
            return Ok(());
        };
        let Some(rel) = place.under(b) else {
            return Ok(());
        };
        if self.failed(c, b, true) {
            return Ok(());
        }
        let d = self.desc(c.tid, fd);
        if d.borrow().listed {
            return Ok(());
        }
        d.borrow_mut().listed = true;
        d.borrow_mut().dir = true;
        let Some(id) = b.file(&rel, FileKind::Dir, Presence::Existing) else {
            return Ok(());
        };
        b.readdir(c.tid as u64, t, id)
    }
}

/// A line the parser could not read, or an import error it led to.
#[derive(Debug)]
pub enum LineFault {
    Text(String),
    Import(ImportError),
}

/// The total of `iov_len=` fields in an iovec array argument.
fn iov_total(arg: &str) -> u64 {
    let mut total = 0u64;
    let mut rest = arg;
    while let Some(i) = rest.find("iov_len=") {
        rest = &rest[i + 8..];
        let end = rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(rest.len());
        total += parse_int(&rest[..end]).unwrap_or(0).max(0) as u64;
    }
    total
}

/// `/a/./b/../c` → `/a/c` (without following symlinks).
pub(crate) fn lexical(path: &str) -> String {
    format!("/{}", normalize(path.split('/')).unwrap_or_default())
}
