//! Turns the kernel side's records into the [`Call`]s the strace importer reads, as
//! `strace -f -ttt -T -yy` would have printed them: descriptors with their paths,
//! `AT_FDCWD` with the thread's working directory, flags by name, stat buffers' mode
//! and size. The kernel gives numbers and strings only, so the paths of descriptors
//! come from a table kept here, per descriptor table (threads share one), from the
//! calls that open, duplicate and close descriptors, and the working directory per
//! thread from chdir and fchdir.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use super::calls::{Sys, errno_name};
use super::event::{Event, Kind};
use super::text::{
    escape_annotation, flock_buf, iovecs, offset_word, open_flags, quote, stat_buf, statx_buf,
};
use crate::strace::lexical;
use crate::strace::line::{Call, Parsed, Ret};

/// What a descriptor points at.
#[derive(Debug, Clone, Default)]
struct Fd {
    /// The file's absolute path; `None` for what is no file (a pipe, a socket).
    path: Option<String>,
    cloexec: bool,
}

type Table = Rc<RefCell<HashMap<i32, Fd>>>;

/// The state that makes records into calls.
pub struct Renderer {
    names: HashMap<i64, &'static str>,
    tables: HashMap<u32, Table>,
    cwd: HashMap<u32, String>,
    /// The program an execve names, from the record sent as it began.
    exec_path: HashMap<u32, String>,
    /// The command's descriptors and working directory as it starts (naslab's own).
    start_fds: HashMap<i32, Fd>,
    start_cwd: String,
    /// Threads followed and not ended yet.
    live: HashMap<u32, ()>,
    /// Directories' real paths (symbolic links on the way followed), as found so far:
    /// the directories of a program's opened files repeat, and finding one costs a
    /// `readlink` per component. Forgotten whenever a directory may have moved.
    real_dirs: HashMap<String, String>,
}

const AT_FDCWD: i32 = -100;

impl Renderer {
    /// `calls`: the recorded calls; the command starts in `cwd` with the descriptors
    /// `fds` (number, path).
    pub fn new(calls: &[Sys], cwd: String, fds: Vec<(i32, Option<String>)>) -> Renderer {
        Renderer {
            names: calls.iter().map(|s| (s.nr, s.name)).collect(),
            tables: HashMap::new(),
            cwd: HashMap::new(),
            exec_path: HashMap::new(),
            start_fds: fds
                .into_iter()
                .map(|(n, path)| {
                    (
                        n,
                        Fd {
                            path,
                            cloexec: false,
                        },
                    )
                })
                .collect(),
            start_cwd: cwd,
            live: HashMap::new(),
            real_dirs: HashMap::new(),
        }
    }

    /// Whether threads of the command are still running.
    pub fn any_live(&self) -> bool {
        !self.live.is_empty()
    }

    fn table(&mut self, tid: u32) -> Table {
        self.tables
            .entry(tid)
            .or_insert_with(|| Rc::new(RefCell::new(HashMap::new())))
            .clone()
    }

    fn cwd_of(&self, tid: u32) -> String {
        self.cwd
            .get(&tid)
            .cloned()
            .unwrap_or_else(|| self.start_cwd.clone())
    }

    /// Records that `tid`'s descriptor `fd` now names `path` (a successful open or dup).
    fn bind(&mut self, tid: u32, fd: i64, path: Option<String>, cloexec: bool) {
        self.table(tid)
            .borrow_mut()
            .insert(fd as i32, Fd { path, cloexec });
    }

    fn fd_path(&self, tid: u32, fd: i32) -> Option<String> {
        self.tables
            .get(&tid)
            .and_then(|t| t.borrow().get(&fd).and_then(|f| f.path.clone()))
    }

    /// A descriptor argument as strace -yy prints it.
    fn fd(&self, tid: u32, v: u64) -> String {
        let fd = v as i32;
        if fd == AT_FDCWD {
            return format!("AT_FDCWD<{}>", self.cwd_of(tid));
        }
        if fd < 0 {
            return fd.to_string();
        }
        match self.fd_path(tid, fd) {
            Some(p) => format!("{fd}<{}>", escape_annotation(&p)),
            None => format!("{fd}<?>"),
        }
    }

    /// The absolute path a path argument names, from the directory descriptor (or the
    /// working directory).
    fn resolve(&self, tid: u32, dirfd: Option<u64>, path: &str) -> Option<String> {
        if path.starts_with('/') {
            return Some(lexical(path));
        }
        let base = match dirfd.map(|d| d as i32) {
            None | Some(AT_FDCWD) => self.cwd_of(tid),
            Some(fd) => self.fd_path(tid, fd)?,
        };
        if path.is_empty() {
            return Some(lexical(&base));
        }
        Some(lexical(&format!("{base}/{path}")))
    }

    /// Feeds one record; the calls it stands for go to `out`.
    pub fn record(&mut self, ev: &Event, out: &mut Vec<Parsed>) {
        let t_us = ev.t_ns / 1000;
        match ev.kind {
            Kind::Fork => self.fork(ev, t_us, out),
            Kind::Exit => {
                self.live.remove(&ev.tid);
                self.tables.remove(&ev.tid);
                self.cwd.remove(&ev.tid);
                self.exec_path.remove(&ev.tid);
                out.push(Parsed::Exit { tid: ev.tid, t_us });
            }
            Kind::Enter => {
                if let Some(p) = ev.strings[0] {
                    self.exec_path
                        .insert(ev.tid, String::from_utf8_lossy(p).into_owned());
                }
            }
            Kind::Call => {
                let Some(&name) = self.names.get(&ev.nr) else {
                    return;
                };
                if let Some(c) = self.call(name, ev, t_us) {
                    out.push(Parsed::Call(c));
                }
            }
        }
    }

    fn fork(&mut self, ev: &Event, t_us: u64, out: &mut Vec<Parsed>) {
        let child = ev.ret as u32;
        self.live.insert(child, ());
        if ev.args[1] == 2 {
            // The command itself, started by naslab.
            let t = Rc::new(RefCell::new(self.start_fds.clone()));
            self.tables.insert(child, t);
            self.cwd.insert(child, self.start_cwd.clone());
            return;
        }
        let parent = ev.tid;
        let flags = match self.names.get(&ev.nr).copied() {
            Some("clone") => ev.args[0],
            Some("clone3") => ev.words[0],
            _ => 0,
        };
        let shares = flags & libc::CLONE_FILES as u64 != 0;
        let ptable = self.table(parent);
        let table = if shares {
            ptable
        } else {
            Rc::new(RefCell::new(ptable.borrow().clone()))
        };
        self.tables.insert(child, table);
        let cwd = self.cwd_of(parent);
        self.cwd.insert(child, cwd);
        out.push(Parsed::Call(Call {
            tid: parent,
            t_us,
            name: "clone".into(),
            args: vec![if shares {
                "flags=CLONE_FILES".into()
            } else {
                "flags=0".into()
            }],
            ret: Ret::Value(child as i64, None),
        }));
    }

    /// A path string argument, quoted as strace quotes it (`NULL` for none).
    fn string(ev: &Event, i: usize, arg: usize) -> String {
        match ev.strings[i] {
            Some(s) => quote(s),
            None if ev.args[arg] == 0 => "NULL".into(),
            None => format!("{:#x}", ev.args[arg]),
        }
    }

    fn text(ev: &Event, i: usize) -> Option<String> {
        ev.strings[i].map(|s| String::from_utf8_lossy(s).into_owned())
    }

    fn call(&mut self, name: &'static str, ev: &Event, t_us: u64) -> Option<Call> {
        let tid = ev.tid;
        let a = ev.args;
        let ok = ev.ret >= 0 || ev.ret < -4095;
        let ret = if ok {
            Ret::Value(ev.ret, None)
        } else {
            Ret::Error(errno_name(-ev.ret))
        };
        let num = |i: usize| (a[i] as i64).to_string();
        let mut ret_path = None;
        let args: Vec<String> = match name {
            // Made from the fork record, which comes before the child's calls.
            "clone" | "clone3" | "fork" | "vfork" => return None,
            "execve" | "execveat" => {
                let path = self.exec_path.remove(&tid);
                if ok {
                    self.exec(tid);
                }
                let p = quote(path.unwrap_or_default().as_bytes());
                if name == "execve" {
                    vec![p]
                } else {
                    vec![self.fd(tid, a[0]), p]
                }
            }
            "open" | "creat" | "openat" | "openat2" => {
                let (dirfd, pi, flags) = match name {
                    "open" => (None, 0, a[1]),
                    "creat" => (
                        None,
                        0,
                        (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC) as u64,
                    ),
                    "openat" => (Some(a[0]), 1, a[2]),
                    _ => (Some(a[0]), 1, ev.words[0]),
                };
                let nofollow = flags & libc::O_NOFOLLOW as u64 != 0;
                let path = Self::text(ev, 0)
                    .and_then(|p| self.resolve(tid, dirfd, &p))
                    .map(|p| if ok { self.real(&p, nofollow) } else { p });
                let flags_text = open_flags(flags);
                let args = match name {
                    "open" => vec![Self::string(ev, 0, pi), flags_text, num(2)],
                    "creat" => vec![Self::string(ev, 0, pi), num(1)],
                    "openat" => vec![
                        self.fd(tid, a[0]),
                        Self::string(ev, 0, pi),
                        flags_text,
                        num(3),
                    ],
                    _ => vec![
                        self.fd(tid, a[0]),
                        Self::string(ev, 0, pi),
                        format!("{{flags={flags_text}, ...}}"),
                        num(3),
                    ],
                };
                if ok {
                    let cloexec = flags & libc::O_CLOEXEC as u64 != 0;
                    self.bind(tid, ev.ret, path.clone(), cloexec);
                    ret_path = path;
                }
                args
            }
            "close" => {
                let args = vec![self.fd(tid, a[0])];
                if ok {
                    self.table(tid).borrow_mut().remove(&(a[0] as i32));
                }
                args
            }
            "close_range" => {
                if ok {
                    let (first, last) = (a[0] as u32, a[1] as u32);
                    let t = self.table(tid);
                    let mut t = t.borrow_mut();
                    if a[2] & libc::CLOSE_RANGE_CLOEXEC as u64 != 0 {
                        for (n, f) in t.iter_mut() {
                            if (first..=last).contains(&(*n as u32)) {
                                f.cloexec = true;
                            }
                        }
                    } else {
                        t.retain(|n, _| !(first..=last).contains(&(*n as u32)));
                    }
                }
                return None;
            }
            "dup" | "dup2" | "dup3" => {
                let mut args = vec![self.fd(tid, a[0])];
                if name != "dup" {
                    args.push(self.fd(tid, a[1]));
                }
                if ok {
                    let old = self.fd_path(tid, a[0] as i32);
                    let cloexec = name == "dup3" && a[2] & libc::O_CLOEXEC as u64 != 0;
                    self.bind(tid, ev.ret, old.clone(), cloexec);
                    ret_path = old;
                }
                args
            }
            "fcntl" => self.fcntl(ev, &mut ret_path)?,
            "read" | "write" | "pread64" | "pwrite64" => {
                let mut v = vec![self.fd(tid, a[0]), "\"\"...".into(), num(2)];
                if name.starts_with('p') {
                    v.push(num(3));
                }
                v
            }
            "readv" | "writev" | "preadv" | "pwritev" | "preadv2" | "pwritev2" => {
                let mut v = vec![self.fd(tid, a[0]), iovecs(ev.blob), num(2)];
                if name.starts_with('p') {
                    v.push(num(3));
                }
                v
            }
            "sendfile" => vec![
                self.fd(tid, a[0]),
                self.fd(tid, a[1]),
                offset_word(a[2], ev.words[0]),
                num(3),
            ],
            "copy_file_range" | "splice" => vec![
                self.fd(tid, a[0]),
                offset_word(a[1], ev.words[0]),
                self.fd(tid, a[2]),
                offset_word(a[3], ev.words[1]),
                num(4),
            ],
            "lseek" => vec![self.fd(tid, a[0]), num(1), num(2)],
            "fsync" | "fdatasync" | "getdents" | "getdents64" | "fstatfs" | "fchdir" => {
                if name == "fchdir"
                    && ok
                    && let Some(p) = self.fd_path(tid, a[0] as i32)
                {
                    self.cwd.insert(tid, p);
                }
                vec![self.fd(tid, a[0])]
            }
            "ftruncate" => vec![self.fd(tid, a[0]), num(1)],
            "fallocate" => vec![self.fd(tid, a[0]), num(1), num(2), num(3)],
            "truncate" => vec![Self::string(ev, 0, 0), num(1)],
            "chdir" => {
                if ok && let Some(p) = Self::text(ev, 0).and_then(|p| self.resolve(tid, None, &p)) {
                    let p = self.real(&p, false);
                    self.cwd.insert(tid, p);
                }
                vec![Self::string(ev, 0, 0)]
            }
            "mkdir" | "rmdir" | "unlink" | "statfs" | "utimes" | "utime" => {
                if ok && name == "rmdir" {
                    self.real_dirs.clear();
                }
                vec![Self::string(ev, 0, 0), num(1)]
            }
            "mkdirat" => vec![self.fd(tid, a[0]), Self::string(ev, 0, 1), num(2)],
            "unlinkat" => {
                let dir = a[2] & libc::AT_REMOVEDIR as u64 != 0;
                if ok && dir {
                    self.real_dirs.clear();
                }
                vec![
                    self.fd(tid, a[0]),
                    Self::string(ev, 0, 1),
                    if dir {
                        "AT_REMOVEDIR".into()
                    } else {
                        "0".into()
                    },
                ]
            }
            "rename" | "link" => {
                let args = vec![Self::string(ev, 0, 0), Self::string(ev, 1, 1)];
                if ok && name == "rename" {
                    self.renamed(tid, None, 0, None, 1, ev);
                    self.real_dirs.clear();
                }
                args
            }
            "renameat" | "renameat2" | "linkat" => {
                let args = vec![
                    self.fd(tid, a[0]),
                    Self::string(ev, 0, 1),
                    self.fd(tid, a[2]),
                    Self::string(ev, 1, 3),
                    num(4),
                ];
                if ok && name.starts_with("rename") {
                    self.renamed(tid, Some(a[0]), 0, Some(a[2]), 1, ev);
                    self.real_dirs.clear();
                }
                args
            }
            "symlink" => vec![Self::string(ev, 0, 0), Self::string(ev, 1, 1)],
            "symlinkat" => vec![
                Self::string(ev, 0, 0),
                self.fd(tid, a[1]),
                Self::string(ev, 1, 2),
            ],
            "stat" | "lstat" => vec![Self::string(ev, 0, 0), stat_buf(ev.blob, ok)],
            "fstat" => vec![self.fd(tid, a[0]), stat_buf(ev.blob, ok)],
            "newfstatat" => vec![
                self.fd(tid, a[0]),
                Self::string(ev, 0, 1),
                stat_buf(ev.blob, ok),
                num(3),
            ],
            "statx" => vec![
                self.fd(tid, a[0]),
                Self::string(ev, 0, 1),
                num(2),
                num(3),
                statx_buf(ev.blob, ok),
            ],
            "utimensat" | "futimesat" => {
                vec![self.fd(tid, a[0]), Self::string(ev, 0, 1), num(2)]
            }
            "mmap" => vec![
                format!("{:#x}", a[0]),
                num(1),
                if a[2] & libc::PROT_EXEC as u64 != 0 {
                    "PROT_READ|PROT_EXEC".into()
                } else {
                    "PROT_READ".into()
                },
                num(3),
                self.fd(tid, a[4]),
                num(5),
            ],
            "flock" => {
                let op = a[1] as i32;
                let how = if op & libc::LOCK_UN != 0 {
                    "LOCK_UN"
                } else if op & libc::LOCK_SH != 0 {
                    "LOCK_SH"
                } else {
                    "LOCK_EX"
                };
                vec![self.fd(tid, a[0]), how.into()]
            }
            _ => return None,
        };
        let ret = match (ret, ret_path) {
            (Ret::Value(v, _), Some(p)) => Ret::Value(v, Some(p)),
            (r, _) => r,
        };
        Some(Call {
            tid,
            t_us,
            name: name.to_string(),
            args,
            ret,
        })
    }

    fn fcntl(&mut self, ev: &Event, ret_path: &mut Option<String>) -> Option<Vec<String>> {
        let tid = ev.tid;
        let a = ev.args;
        let ok = ev.ret >= 0;
        let cmd = a[1] as i32;
        let fd = self.fd(tid, a[0]);
        let (cmd_name, arg) = match cmd {
            libc::F_SETLK | libc::F_SETLKW | libc::F_OFD_SETLK | libc::F_OFD_SETLKW => {
                let name = match cmd {
                    libc::F_SETLK => "F_SETLK",
                    libc::F_SETLKW => "F_SETLKW",
                    libc::F_OFD_SETLK => "F_OFD_SETLK",
                    _ => "F_OFD_SETLKW",
                };
                (name, flock_buf(ev.blob))
            }
            libc::F_DUPFD | libc::F_DUPFD_CLOEXEC => {
                if ok {
                    let old = self.fd_path(tid, a[0] as i32);
                    self.bind(tid, ev.ret, old.clone(), cmd == libc::F_DUPFD_CLOEXEC);
                    *ret_path = old;
                }
                let name = if cmd == libc::F_DUPFD {
                    "F_DUPFD"
                } else {
                    "F_DUPFD_CLOEXEC"
                };
                (name, (a[2] as i64).to_string())
            }
            libc::F_SETFD => {
                if ok && let Some(f) = self.table(tid).borrow_mut().get_mut(&(a[0] as i32)) {
                    f.cloexec = a[2] & libc::FD_CLOEXEC as u64 != 0;
                }
                return None;
            }
            _ => return None,
        };
        Some(vec![fd, cmd_name.into(), arg])
    }

    /// A successful execve: the descriptors marked close-on-exec close, and the process
    /// has a table of its own from then on.
    fn exec(&mut self, tid: u32) {
        let t = self.table(tid);
        let kept: HashMap<i32, Fd> = t
            .borrow()
            .iter()
            .filter(|(_, f)| !f.cloexec)
            .map(|(n, f)| (*n, f.clone()))
            .collect();
        self.tables.insert(tid, Rc::new(RefCell::new(kept)));
    }

    /// A rename moves the paths of descriptors open on the entry or under it, as the
    /// kernel's names for them move.
    fn renamed(
        &mut self,
        tid: u32,
        from_dir: Option<u64>,
        from_i: usize,
        to_dir: Option<u64>,
        to_i: usize,
        ev: &Event,
    ) {
        let from = Self::text(ev, from_i).and_then(|p| self.resolve(tid, from_dir, &p));
        let to = Self::text(ev, to_i).and_then(|p| self.resolve(tid, to_dir, &p));
        let (Some(from), Some(to)) = (from, to) else {
            return;
        };
        let under = format!("{from}/");
        let mut seen: Vec<*const RefCell<HashMap<i32, Fd>>> = Vec::new();
        for t in self.tables.values() {
            if seen.contains(&Rc::as_ptr(t)) {
                continue;
            }
            seen.push(Rc::as_ptr(t));
            for f in t.borrow_mut().values_mut() {
                if let Some(p) = &f.path {
                    if *p == from {
                        f.path = Some(to.clone());
                    } else if let Some(rest) = p.strip_prefix(&under) {
                        f.path = Some(format!("{to}/{rest}"));
                    }
                }
            }
        }
    }
}

impl Renderer {
    /// The path the kernel knows an opened file by, as strace -yy shows it: symbolic
    /// links on the way followed (the last one too, unless the open said O_NOFOLLOW).
    /// When the file is gone already (the program is ahead of naslab), its directory is
    /// looked up; when that is gone too, the path stays as the program gave it. The
    /// directory's real path comes from [`Renderer::real_dirs`] when known; the last
    /// component is then one `lstat`, and followed only when it is a symbolic link.
    fn real(&mut self, path: &str, nofollow: bool) -> String {
        let canonical = |p: &str| {
            std::fs::canonicalize(p)
                .ok()
                .map(|p| p.to_string_lossy().into_owned())
        };
        let Some((dir, name)) = path.rsplit_once('/').filter(|(_, n)| !n.is_empty()) else {
            return canonical(path).unwrap_or_else(|| path.to_string());
        };
        let dir = if dir.is_empty() { "/" } else { dir };
        let real_dir = match self.real_dirs.get(dir) {
            Some(d) => d.clone(),
            None => match canonical(dir) {
                Some(d) => {
                    self.real_dirs.insert(dir.to_string(), d.clone());
                    d
                }
                None => return path.to_string(),
            },
        };
        let joined = format!("{}/{name}", real_dir.trim_end_matches('/'));
        if !nofollow {
            let link = std::fs::symlink_metadata(&joined).is_ok_and(|m| m.file_type().is_symlink());
            if link && let Some(p) = canonical(&joined) {
                return p;
            }
        }
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ebpf::calls::table;

    fn nr(name: &str) -> i64 {
        table()
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.nr)
            .unwrap_or(-1)
    }

    fn call<'a>(
        tid: u32,
        name: &str,
        args: &[u64],
        ret: i64,
        strings: [Option<&'a [u8]>; 2],
    ) -> Event<'a> {
        let mut a = [0u64; 6];
        a[..args.len()].copy_from_slice(args);
        Event {
            t_ns: 5_000,
            tid,
            kind: Kind::Call,
            nr: nr(name),
            ret,
            args: a,
            words: [0, 0],
            strings,
            blob: &[],
        }
    }

    fn lines(r: &mut Renderer, events: &[Event]) -> Vec<String> {
        let mut out = Vec::new();
        for e in events {
            r.record(e, &mut out);
        }
        out.into_iter()
            .map(|p| match p {
                Parsed::Call(c) => {
                    format!("{} {}({}) = {:?}", c.tid, c.name, c.args.join(", "), c.ret)
                }
                Parsed::Exit { tid, .. } => format!("{tid} exit"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn descriptors_carry_their_paths_through_open_dup_rename_and_close() {
        let mut r = Renderer::new(&table(), "/w".into(), vec![(1, Some("/w/out".into()))]);
        let fork = Event {
            kind: Kind::Fork,
            nr: -1,
            ret: 10,
            args: [0, 2, 0, 0, 0, 0],
            ..call(1, "close", &[], 0, [None, None])
        };
        let at_cwd = -100i64 as u64;
        let flags = (libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC) as u64;
        let got = lines(
            &mut r,
            &[
                fork,
                call(
                    10,
                    "openat",
                    &[at_cwd, 0, flags, 0o644],
                    3,
                    [Some(b"sub/../a"), None],
                ),
                call(10, "dup2", &[3, 7], 7, [None, None]),
                call(10, "write", &[7, 0, 5], 5, [None, None]),
                call(10, "rename", &[1, 2], 0, [Some(b"a"), Some(b"b")]),
                call(10, "close", &[3], 0, [None, None]),
                call(10, "write", &[1, 0, 2], 2, [None, None]),
                call(10, "newfstatat", &[at_cwd, 1], -2, [Some(b"gone"), None]),
            ],
        );
        assert_eq!(
            got,
            vec![
                "10 openat(AT_FDCWD</w>, \"sub/../a\", O_WRONLY|O_CREAT|O_CLOEXEC, 420) = Value(3, Some(\"/w/a\"))",
                "10 dup2(3</w/a>, 7<?>) = Value(7, Some(\"/w/a\"))",
                "10 write(7</w/a>, \"\"..., 5) = Value(5, None)",
                "10 rename(\"a\", \"b\") = Value(0, None)",
                "10 close(3</w/b>) = Value(0, None)",
                "10 write(1</w/out>, \"\"..., 2) = Value(2, None)",
                "10 newfstatat(AT_FDCWD</w>, \"gone\", 0x0, 0) = Error(\"ENOENT\")",
            ]
        );
    }

    #[test]
    fn a_thread_shares_its_descriptors_and_a_forked_child_copies_them() {
        let mut r = Renderer::new(&table(), "/w".into(), Vec::new());
        let fork = |tid: u32, child: i64, flags: u64| Event {
            kind: Kind::Fork,
            nr: nr("clone"),
            ret: child,
            args: [flags, 1, 0, 0, 0, 0],
            ..call(tid, "close", &[], 0, [None, None])
        };
        let got = lines(
            &mut r,
            &[
                fork(1, 2, libc::CLONE_FILES as u64 | libc::CLONE_VM as u64),
                fork(1, 3, libc::SIGCHLD as u64),
                call(2, "open", &[0, 0, 0], 4, [Some(b"/w/t"), None]),
                call(1, "read", &[4, 0, 9], 9, [None, None]),
                call(3, "read", &[4, 0, 9], -9, [None, None]),
                Event {
                    kind: Kind::Exit,
                    ..call(2, "close", &[], 0, [None, None])
                },
            ],
        );
        assert_eq!(
            got,
            vec![
                "1 clone(flags=CLONE_FILES) = Value(2, None)",
                "1 clone(flags=0) = Value(3, None)",
                "2 open(\"/w/t\", O_RDONLY, 0) = Value(4, Some(\"/w/t\"))",
                "1 read(4</w/t>, \"\"..., 9) = Value(9, None)",
                "3 read(4<?>, \"\"..., 9) = Error(\"EBADF\")",
                "2 exit",
            ]
        );
    }
}
