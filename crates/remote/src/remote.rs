//! naslab's safety rules on a share it reaches through a protocol client: the same
//! marked `naslab/` directory as the local sandbox keeps on a local target, checked,
//! made and emptied with the protocol's own requests.
//!
//! A share has no `flock` that every client honours, so the target is held with a lock
//! directory instead: `naslab/.naslab-lock/`, made with one MKDIR (which both SMB and
//! NFS refuse when the name exists, so only one client can make it) and holding an
//! empty file whose name says who holds it. It is removed when the target is dropped.
//! A lock left by a naslab that was killed on this same machine (same host, boot and
//! PID namespace, and its process gone) is taken over by renaming its holder's entry,
//! which only one of several clients trying at once can do.
//!
//! A share may refuse names that begin with a dot (Samba's `veto files = /.*/`). There
//! the marker and the lock are `naslab-owned` and `naslab-lock` instead: the marker
//! found in `naslab/` says which pair a directory uses, so later runs and `clean`
//! recognise it. A directory naslab made but could not mark is removed again.

use std::sync::Arc;
use std::time::Duration;

use crate::marker::{MARKER_NAME, ROOT_NAME};
use naslab_backend::FileTable;
use naslab_backend::OpError;

/// The directory whose existence holds a share's `naslab/` for one process.
pub const LOCK_NAME: &str = ".naslab-lock";
/// The marker on a share that refuses names beginning with a dot.
pub const PLAIN_MARKER_NAME: &str = "naslab-owned";
/// The lock on a share that refuses names beginning with a dot.
pub const PLAIN_LOCK_NAME: &str = "naslab-lock";
/// How the holder's entry in the lock directory begins.
const HOLDER_PREFIX: &str = "naslab pid ";

const MARKER_TEXT: &[u8] = b"This directory belongs to naslab, a file-system benchmark.\nnaslab creates, rewrites and deletes everything in it: keep no other files here.\n";

/// How deep naslab follows directories when it empties one; deeper trees are refused
/// rather than walked without end.
const MAX_DEPTH: usize = 64;

/// What a directory entry is, as far as the sandbox cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    /// A symbolic link, junction or other reparse point: removed itself, never followed.
    Link,
}

/// The path-based requests the sandbox needs from a protocol session. Paths are
/// relative to the share or export, `/`-separated, `""` for its root.
pub trait RemoteFs {
    /// What `path` is, or `None` when it does not exist.
    fn kind(&mut self, path: &str) -> Result<Option<EntryKind>, OpError>;
    /// Makes a directory.
    fn make_dir(&mut self, path: &str) -> Result<(), OpError>;
    /// Creates (or replaces) a small file holding `data`.
    fn put_file(&mut self, path: &str, data: &[u8]) -> Result<(), OpError>;
    /// A directory's entries, without `.` and `..`.
    fn list(&mut self, path: &str) -> Result<Vec<(String, EntryKind)>, OpError>;
    /// Removes a file or link.
    fn remove_file(&mut self, path: &str) -> Result<(), OpError>;
    /// Removes an empty directory.
    fn remove_dir(&mut self, path: &str) -> Result<(), OpError>;
    /// Renames `from` to `to` in the same directory; fails (`ENOENT`) when `from` is gone.
    fn rename(&mut self, from: &str, to: &str) -> Result<(), OpError>;
}

/// Why naslab will not (or cannot) work on a protocol target.
#[derive(Debug, thiserror::Error)]
pub enum RemoteSandboxError {
    #[error("'{0}' does not exist on the server; create it there, or give a directory that exists")]
    Missing(String),
    #[error("'{0}' is not a directory on the server; give a directory in the target URL")]
    NotDir(String),
    #[error(
        "'{0}' exists on the server but was not made by naslab (it has no {MARKER_NAME} or {PLAIN_MARKER_NAME} file); naslab will not write or delete there: move it away or choose another directory in the URL"
    )]
    NotOurs(String),
    #[error(
        "naslab cannot mark '{root}' as its own on the server: writing '{MARKER_NAME}' failed ({dotted}) and so did '{PLAIN_MARKER_NAME}' ({plain}); it removed the directory again. Check that the share is writable by this user and that it refuses neither name (Samba: veto files)"
    )]
    Unmarkable {
        root: String,
        dotted: OpError,
        plain: OpError,
    },
    #[error(
        "'{0}' is a symbolic link or reparse point; naslab will not follow it: remove it or choose another directory in the URL"
    )]
    Link(String),
    #[error(
        "'{root}' on the server is in use by {holder}; wait for it to finish (or stop it) and try again. If no naslab works there any more (one killed on another machine, or before this version, cannot let go), remove the directory '{lock}' on the server"
    )]
    InUse {
        root: String,
        holder: String,
        lock: String,
    },
    #[error(
        "'{0}' on the server was not held by the first client of this multi-client job within a minute, which --shared-files needs before the others join it; check that every client is given the same URL"
    )]
    NotHeld(String),
    #[error("workload name '{0}' is reserved or not a plain name; rename the workload")]
    BadName(String),
    #[error(
        "'{0}' is nested more than {MAX_DEPTH} directories deep; naslab stops there: empty it by hand"
    )]
    TooDeep(String),
    #[error("cannot {action} '{path}' on the server: {error}")]
    Request {
        action: &'static str,
        path: String,
        error: OpError,
    },
}

impl RemoteSandboxError {
    /// The errno that best stands for the failure, for callers that speak in [`OpError`].
    pub fn into_op_error(self) -> OpError {
        let errno = match &self {
            RemoteSandboxError::Request { error, .. } => error.errno,
            RemoteSandboxError::Missing(_) => crate::errno::ENOENT,
            RemoteSandboxError::NotDir(_) => crate::errno::ENOTDIR,
            _ => crate::errno::EPERM,
        };
        OpError {
            errno,
            detail: Some(self.to_string()),
        }
    }
}

fn join(a: &str, b: &str) -> String {
    if a.is_empty() {
        b.to_string()
    } else {
        format!("{a}/{b}")
    }
}

/// A single path component that is none of naslab's own names.
fn plain_name(name: &str) -> bool {
    !(name.is_empty()
        || name == MARKER_NAME
        || name == LOCK_NAME
        || name == PLAIN_MARKER_NAME
        || name == PLAIN_LOCK_NAME
        || name == "."
        || name == ".."
        || name.contains('/')
        || name.contains('\\'))
}

fn req<'a>(action: &'static str, path: &'a str) -> impl FnOnce(OpError) -> RemoteSandboxError + 'a {
    move |error| RemoteSandboxError::Request {
        action,
        path: path.to_string(),
        error,
    }
}

/// naslab's directory on a share: `<base>/naslab`, relative to the share's root.
#[derive(Debug, Clone)]
pub struct RemoteSandbox {
    root: String,
    /// Whether this process took the lock (and lets go of it), rather than joining the
    /// multi-client job's first client, which holds it.
    held: bool,
    /// Whether opening it made the marked directory (there was none before).
    made: bool,
    /// Whether its marker and lock are the names without a leading dot (the share
    /// refuses dot names).
    plain: bool,
}

/// Which marker `root` holds: `Some(false)` for [`MARKER_NAME`], `Some(true)` for
/// [`PLAIN_MARKER_NAME`], `None` for neither.
fn marker_in(fs: &mut dyn RemoteFs, root: &str) -> Result<Option<bool>, RemoteSandboxError> {
    for (name, plain) in [(MARKER_NAME, false), (PLAIN_MARKER_NAME, true)] {
        let marker = join(root, name);
        if fs.kind(&marker).map_err(req("look up", &marker))? == Some(EntryKind::File) {
            return Ok(Some(plain));
        }
    }
    Ok(None)
}

/// Marks `root`, just made: [`MARKER_NAME`], or [`PLAIN_MARKER_NAME`] when the share
/// refuses the dot name. Whether the plain names are used. When neither can be
/// written, `root` is removed again, so no unmarked directory is left behind.
fn mark(fs: &mut dyn RemoteFs, root: &str) -> Result<bool, RemoteSandboxError> {
    let marker = join(root, MARKER_NAME);
    let dotted = match fs.put_file(&marker, MARKER_TEXT) {
        Ok(()) => return Ok(false),
        Err(e) => e,
    };
    // A share that vetoes a name says it is not found (Samba), invalid or denied.
    let failed = if matches!(
        dotted.errno,
        crate::errno::ENOENT | crate::errno::EINVAL | crate::errno::EACCES
    ) {
        match fs.put_file(&join(root, PLAIN_MARKER_NAME), MARKER_TEXT) {
            Ok(()) => return Ok(true),
            Err(plain) => RemoteSandboxError::Unmarkable {
                root: root.to_string(),
                dotted,
                plain,
            },
        }
    } else {
        req("write", &marker)(dotted)
    };
    // Nothing but the directory was made: remove it, so that no later run finds an
    // unmarked directory it must refuse.
    if let Err(e) = fs.remove_dir(root) {
        eprintln!(
            "warning: naslab could not remove '{root}' on the server again ({e}); remove it by hand"
        );
    }
    Err(failed)
}

/// This process's entry in the lock directory: who holds the target, and since when
/// (UTC, in a form every share accepts in a file name), and which machine's process
/// table the pid belongs to, so a later run there can tell whether it is still alive.
fn holder_entry() -> String {
    let [y, mo, d, h, mi, s] = naslab_backend::utc::utc_fields();
    Holder::this_process().entry(&format!("{y:04}-{mo:02}-{d:02} {h:02}h{mi:02}m{s:02}s UTC"))
}

/// Who a lock entry names: `naslab pid N on HOST since TIME, boot B pid-ns P`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Holder {
    pid: u32,
    host: String,
    /// The start of the kernel's boot id, and the inode of the PID namespace: a pid means
    /// the same process only on the same boot and in the same namespace.
    boot: String,
    pid_ns: u64,
}

impl Holder {
    fn this_process() -> Holder {
        let host = naslab_backend::host::host_name().replace(['/', '\\', ':', ','], "_");
        Holder {
            pid: std::process::id(),
            host: if host.is_empty() {
                "an unnamed host".into()
            } else {
                host
            },
            boot: naslab_backend::host::boot_id().chars().take(8).collect(),
            pid_ns: pid_namespace(),
        }
    }

    fn entry(&self, since: &str) -> String {
        format!(
            "{HOLDER_PREFIX}{} on {} since {since}, boot {} pid-ns {}",
            self.pid, self.host, self.boot, self.pid_ns
        )
    }

    /// Reads an entry this version wrote; older or foreign entries give `None`.
    fn parse(entry: &str) -> Option<Holder> {
        let rest = entry.strip_prefix(HOLDER_PREFIX)?;
        let (pid, rest) = rest.split_once(" on ")?;
        let (host, rest) = rest.split_once(" since ")?;
        let (_, machine) = rest.rsplit_once(", boot ")?;
        let (boot, pid_ns) = machine.split_once(" pid-ns ")?;
        Some(Holder {
            pid: pid.parse().ok()?,
            host: host.to_string(),
            boot: boot.to_string(),
            pid_ns: pid_ns.parse().ok()?,
        })
    }

    /// Whether this holder is certainly gone: a process of this very machine (same host,
    /// boot and PID namespace) that no longer exists. Anything that cannot be told is
    /// taken as alive.
    fn is_gone(&self, here: &Holder) -> bool {
        if self.host != here.host
            || self.boot.is_empty()
            || self.boot != here.boot
            || self.pid_ns == 0
            || self.pid_ns != here.pid_ns
            || self.pid == here.pid
        {
            return false;
        }
        process_is_gone(self.pid)
    }
}

/// The inode of this process's PID namespace (0 where there is none to read).
fn pid_namespace() -> u64 {
    #[cfg(unix)]
    {
        std::fs::metadata("/proc/self/ns/pid")
            .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
            .unwrap_or(0)
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// Whether process `pid` of this machine certainly no longer exists.
#[cfg(unix)]
fn process_is_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 sends nothing; it only asks whether the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc != 0 && std::io::Error::last_os_error().raw_os_error() == Some(crate::errno::ESRCH)
}

/// Without a PID namespace to compare (see [`pid_namespace`]) a holder is never taken
/// for gone, so this is not reached; a lock is then only ever let go by its holder.
#[cfg(not(unix))]
fn process_is_gone(_pid: u32) -> bool {
    false
}

impl RemoteSandbox {
    /// Checks `<base>/naslab` and makes and marks it when it is absent. `base` is the
    /// directory the target URL names inside its share.
    pub fn open(fs: &mut dyn RemoteFs, base: &str) -> Result<RemoteSandbox, RemoteSandboxError> {
        RemoteSandbox::open_in(fs, base, None, false)
    }

    /// [`RemoteSandbox::open`] in `<base>/<client>` when `client` is given (a
    /// multi-client job's own directory, `client-<rank>`): made when missing, refused when
    /// it is a link or not a directory. With `join`, `<base>/naslab` is not taken but
    /// joined: the multi-client job's first client must have made and locked it
    /// (`--shared-files`), and nothing is made or locked.
    pub fn open_in(
        fs: &mut dyn RemoteFs,
        base: &str,
        client: Option<&str>,
        join_held: bool,
    ) -> Result<RemoteSandbox, RemoteSandboxError> {
        if !base.is_empty() {
            match fs.kind(base).map_err(req("look up", base))? {
                None => return Err(RemoteSandboxError::Missing(base.to_string())),
                Some(EntryKind::Dir) => {}
                Some(EntryKind::Link) => return Err(RemoteSandboxError::Link(base.to_string())),
                Some(EntryKind::File) => return Err(RemoteSandboxError::NotDir(base.to_string())),
            }
        }
        let dir = match client {
            None => base.to_string(),
            Some(name) => {
                if !plain_name(name) {
                    return Err(RemoteSandboxError::BadName(name.to_string()));
                }
                let dir = join(base, name);
                match fs.kind(&dir).map_err(req("look up", &dir))? {
                    None => match fs.make_dir(&dir) {
                        Ok(()) => {}
                        Err(e) if e.errno == crate::errno::EEXIST => {}
                        Err(e) => return Err(req("create", &dir)(e)),
                    },
                    Some(EntryKind::Dir) => {}
                    Some(EntryKind::Link) => return Err(RemoteSandboxError::Link(dir)),
                    Some(EntryKind::File) => return Err(RemoteSandboxError::NotDir(dir)),
                }
                dir
            }
        };
        let root = join(&dir, ROOT_NAME);
        if join_held {
            let Some(plain) = marker_in(fs, &root)? else {
                return Err(RemoteSandboxError::NotHeld(root));
            };
            let joined = RemoteSandbox {
                root,
                held: false,
                made: false,
                plain,
            };
            let lock = joined.lock_path();
            if fs.kind(&lock).map_err(req("look up", &lock))? != Some(EntryKind::Dir) {
                return Err(RemoteSandboxError::NotHeld(joined.root));
            }
            return Ok(joined);
        }
        let (made, plain) = match fs.kind(&root).map_err(req("look up", &root))? {
            None => {
                fs.make_dir(&root).map_err(req("create", &root))?;
                (true, mark(fs, &root)?)
            }
            Some(EntryKind::Dir) => match marker_in(fs, &root)? {
                Some(plain) => (false, plain),
                None => return Err(RemoteSandboxError::NotOurs(root)),
            },
            Some(EntryKind::Link) => return Err(RemoteSandboxError::Link(root)),
            Some(EntryKind::File) => return Err(RemoteSandboxError::NotOurs(root)),
        };
        let sandbox = RemoteSandbox {
            root,
            held: true,
            made,
            plain,
        };
        sandbox.lock(fs)?;
        Ok(sandbox)
    }

    /// Takes the lock directory, or says who holds it. A holder that was killed on this
    /// machine is replaced: its entry is renamed to this process's, so of several runs
    /// trying at once only one succeeds.
    fn lock(&self, fs: &mut dyn RemoteFs) -> Result<(), RemoteSandboxError> {
        let lock = self.lock_path();
        let mine = holder_entry();
        match fs.make_dir(&lock) {
            Ok(()) => {
                let entry = join(&lock, &mine);
                fs.put_file(&entry, b"").map_err(req("write", &entry))
            }
            Err(e) if e.errno == crate::errno::EEXIST => {
                // A holder that has made the directory but not yet its entry is named
                // as unknown.
                let holder_of = |fs: &mut dyn RemoteFs| {
                    fs.list(&lock).ok().and_then(|entries| {
                        entries
                            .into_iter()
                            .map(|(name, _)| name)
                            .find(|name| name.starts_with(HOLDER_PREFIX))
                    })
                };
                let mut holder = holder_of(fs);
                if let Some(old) = holder.clone() {
                    let here = Holder::this_process();
                    if Holder::parse(&old).is_some_and(|h| h.is_gone(&here)) {
                        if fs.rename(&join(&lock, &old), &join(&lock, &mine)).is_ok() {
                            eprintln!(
                                "note: '{}' was still held by {old}, which no longer runs on this machine; naslab took it over",
                                self.root
                            );
                            return Ok(());
                        }
                        // Another run took it over first: name that one.
                        holder = holder_of(fs);
                    }
                }
                Err(RemoteSandboxError::InUse {
                    root: self.root.clone(),
                    holder: holder
                        .unwrap_or_else(|| "another naslab (it has not said which)".into()),
                    lock,
                })
            }
            Err(e) => Err(req("create", &lock)(e)),
        }
    }

    /// Gives the target up: removes the lock directory this process made.
    pub fn release(&self, fs: &mut dyn RemoteFs) -> Result<(), RemoteSandboxError> {
        if !self.held {
            return Ok(());
        }
        remove_tree(fs, &self.lock_path(), 0)
    }

    /// `<base>/naslab`, relative to the share's root.
    pub fn root(&self) -> &str {
        &self.root
    }

    /// The lock directory's path, relative to the share's root.
    pub fn lock_path(&self) -> String {
        join(
            &self.root,
            if self.plain {
                PLAIN_LOCK_NAME
            } else {
                LOCK_NAME
            },
        )
    }

    /// The marker's path, relative to the share's root.
    pub fn marker_path(&self) -> String {
        join(
            &self.root,
            if self.plain {
                PLAIN_MARKER_NAME
            } else {
                MARKER_NAME
            },
        )
    }

    /// A workload's directory, emptied of whatever an earlier run left there.
    pub fn fresh_workload_dir(
        &self,
        fs: &mut dyn RemoteFs,
        name: &str,
    ) -> Result<String, RemoteSandboxError> {
        if !plain_name(name) {
            return Err(RemoteSandboxError::BadName(name.to_string()));
        }
        let marker = self.marker_path();
        if fs.kind(&marker).map_err(req("look up", &marker))? != Some(EntryKind::File) {
            return Err(RemoteSandboxError::NotOurs(self.root.clone()));
        }
        let dir = join(&self.root, name);
        match fs.kind(&dir).map_err(req("look up", &dir))? {
            None => {}
            Some(EntryKind::Dir) => remove_tree(fs, &dir, 0)?,
            Some(_) => fs.remove_file(&dir).map_err(req("remove", &dir))?,
        }
        fs.make_dir(&dir).map_err(req("create", &dir))?;
        Ok(dir)
    }

    /// Removes everything naslab made, the marked directory and the lock in it
    /// included: there is then nothing left to let go of. Whether the directory was there
    /// before this process opened it (if not, opening made it and this removed it again).
    pub fn remove_all(&mut self, fs: &mut dyn RemoteFs) -> Result<bool, RemoteSandboxError> {
        let marker = self.marker_path();
        if fs.kind(&marker).map_err(req("look up", &marker))? != Some(EntryKind::File) {
            return Err(RemoteSandboxError::NotOurs(self.root.clone()));
        }
        remove_tree(fs, &self.root, 0)?;
        self.held = false;
        Ok(!self.made)
    }
}

/// How long each request that lets a target go waits for the server: a server that
/// stopped answering holds the process up this long once, and then the session is
/// dead and sends nothing more.
pub const RELEASE_WAIT: Duration = Duration::from_secs(1);

/// Lets go of a target: removes `sandbox`'s lock through `fs`, whose requests should
/// wait at most [`RELEASE_WAIT`]. A failure is told on stderr with what the next run on
/// `target` may need.
pub fn release_target(sandbox: &RemoteSandbox, fs: &mut dyn RemoteFs, target: &str) {
    if let Err(e) = sandbox.release(fs) {
        let lock = sandbox.lock_path();
        eprintln!(
            "warning: naslab could not give up {target} ({e}); if the next run there is refused, remove '{lock}' on the server"
        );
    }
}

/// A protocol target's admin connection: the file calls the sandbox needs, and what a
/// [`RemoteShare`] asks of it besides.
pub trait AdminSession: RemoteFs {
    /// Forgets the directory handles it looked up (another connection may have removed
    /// or replaced those directories).
    fn forget_lookups(&mut self) {}
    /// Waits at most `wait` for each of its requests from now on.
    fn set_request_timeout(&mut self, wait: Duration);
}

/// naslab's directory on a protocol target and the connection that holds it: what every
/// protocol's `Target` shares. Dropped, it lets go of the directory (its lock), waiting
/// at most [`RELEASE_WAIT`] for each request.
pub struct RemoteShare<S: AdminSession> {
    /// The target's URL, for messages.
    shown: String,
    sandbox: RemoteSandbox,
    admin: std::sync::Mutex<S>,
}

impl<S: AdminSession> RemoteShare<S> {
    pub fn new(shown: String, sandbox: RemoteSandbox, admin: S) -> RemoteShare<S> {
        RemoteShare {
            shown,
            sandbox,
            admin: std::sync::Mutex::new(admin),
        }
    }

    /// naslab's directory on the share.
    pub fn sandbox(&self) -> &RemoteSandbox {
        &self.sandbox
    }

    /// The admin connection (for one call at a time from any stream).
    pub fn admin(&self) -> std::sync::MutexGuard<'_, S> {
        self.admin.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Empties (or makes) a workload's directory before an iteration.
    pub fn fresh_workload_dir(&self, name: &str) -> Result<(), OpError> {
        let mut admin = self.admin();
        admin.forget_lookups();
        self.sandbox
            .fresh_workload_dir(&mut *admin, name)
            .map(|_| ())
            .map_err(RemoteSandboxError::into_op_error)
    }

    /// Removes naslab's directory and everything in it (`naslab clean`); whether it was
    /// there before.
    pub fn remove_all(&mut self) -> Result<bool, OpError> {
        let admin = self.admin.get_mut().unwrap_or_else(|e| e.into_inner());
        admin.forget_lookups();
        self.sandbox
            .remove_all(admin)
            .map_err(RemoteSandboxError::into_op_error)
    }
}

impl<S: AdminSession> Drop for RemoteShare<S> {
    fn drop(&mut self) {
        let admin = self.admin.get_mut().unwrap_or_else(|e| e.into_inner());
        admin.set_request_timeout(RELEASE_WAIT);
        release_target(&self.sandbox, admin, &self.shown);
    }
}

/// `path`'s directory and last name (`""` for the directory of a name at the root).
pub fn split_path(path: &str) -> (&str, &str) {
    match path.rsplit_once('/') {
        Some((d, n)) => (d, n),
        None => ("", path),
    }
}

/// Where a queued write lands: at `offset`, or on an append handle (`append_at` its end)
/// at that end, which moves past the write as each write is queued, before any completes.
pub fn queued_write_at(append_at: &mut Option<u64>, offset: u64, len: usize) -> u64 {
    match append_at {
        Some(end) => {
            let at = *end;
            *end += len as u64;
            at
        }
        None => offset,
    }
}

/// The directory handles a protocol connection has looked up, by path relative to its
/// root, so each directory is looked up once.
#[derive(Debug)]
pub struct DirHandles<H>(std::collections::HashMap<String, H>);

impl<H> Default for DirHandles<H> {
    fn default() -> Self {
        DirHandles(std::collections::HashMap::new())
    }
}

impl<H: Clone> DirHandles<H> {
    /// The handle of `path`, when it was looked up.
    pub fn get(&self, path: &str) -> Option<H> {
        self.0.get(path).cloned()
    }

    pub fn insert(&mut self, path: &str, h: H) {
        self.0.insert(path.to_string(), h);
    }

    /// Forgets `path` and everything below it (removed or renamed).
    pub fn forget(&mut self, path: &str) {
        let prefix = format!("{path}/");
        self.0.retain(|k, _| k != path && !k.starts_with(&prefix));
    }

    /// Forgets every handle (another connection may have changed the directories).
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

/// A connection's open files by handle (1, 2, ...), a closed one's number given to the
/// next open.
#[derive(Debug)]
pub struct HandleTable<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
}

impl<T> Default for HandleTable<T> {
    fn default() -> Self {
        HandleTable {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> HandleTable<T> {
    /// Keeps `v` under a new handle.
    pub fn insert(&mut self, v: T) -> naslab_backend::Handle {
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = Some(v);
                i
            }
            None => {
                self.slots.push(Some(v));
                self.slots.len() - 1
            }
        };
        i as naslab_backend::Handle + 1
    }

    /// What `h` holds; EBADF when it holds nothing.
    pub fn get_mut(&mut self, h: naslab_backend::Handle) -> Result<&mut T, OpError> {
        (h as usize)
            .checked_sub(1)
            .and_then(|i| self.slots.get_mut(i))
            .and_then(Option::as_mut)
            .ok_or(OpError::errno(crate::errno::EBADF))
    }

    /// Takes what `h` holds, freeing the handle; EBADF when it holds nothing.
    pub fn take(&mut self, h: naslab_backend::Handle) -> Result<T, OpError> {
        let i = (h as usize).checked_sub(1);
        let v = i
            .and_then(|i| self.slots.get_mut(i))
            .and_then(Option::take)
            .ok_or(OpError::errno(crate::errno::EBADF))?;
        self.free.extend(i);
        Ok(v)
    }
}

/// Where a connection's files lie on the share: the workload's directory and the run's
/// file table, each file's path made when an op asks for it. A connection keeps nothing
/// per file: a table of every path for each connection grew as connections times files
/// (600 connections of 2,400 files held 1.4 M strings each phase).
#[derive(Debug)]
pub struct SharePaths {
    /// The workload's directory on the share, without a trailing slash.
    dir: String,
    files: Arc<FileTable>,
}

impl SharePaths {
    /// The paths of `files` under `dir` (the workload's directory on the share).
    pub fn new(dir: String, files: Arc<FileTable>) -> SharePaths {
        SharePaths { dir, files }
    }

    /// The path of entry `file` on the share; EINVAL for an index past the table.
    pub fn path(&self, file: u32) -> Result<String, OpError> {
        let entry = self
            .files
            .entries
            .get(file as usize)
            .ok_or(OpError::errno(crate::errno::EINVAL))?;
        Ok(join(&self.dir, &entry.path))
    }

    /// Whether entry `file` is a directory (false for an index past the table).
    pub fn is_dir(&self, file: u32) -> bool {
        self.files.is_dir(file)
    }
}

/// Removes `dir` and everything in it; links are removed, never followed.
fn remove_tree(fs: &mut dyn RemoteFs, dir: &str, depth: usize) -> Result<(), RemoteSandboxError> {
    if depth > MAX_DEPTH {
        return Err(RemoteSandboxError::TooDeep(dir.to_string()));
    }
    for (name, kind) in fs.list(dir).map_err(req("list", dir))? {
        let p = join(dir, &name);
        match kind {
            EntryKind::Dir => remove_tree(fs, &p, depth + 1)?,
            EntryKind::File | EntryKind::Link => fs.remove_file(&p).map_err(req("remove", &p))?,
        }
    }
    fs.remove_dir(dir).map_err(req("remove", dir))
}

#[cfg(test)]
mod tests {
    #[test]
    fn paths_split_at_their_last_slash_and_forgetting_a_directory_forgets_below_it() {
        assert_eq!(super::split_path("a/b/c"), ("a/b", "c"));
        assert_eq!(super::split_path("c"), ("", "c"));
        let mut d = super::DirHandles::default();
        for p in ["a", "a/b", "a/b/c", "ab", "x"] {
            d.insert(p, p.len());
        }
        d.forget("a/b");
        assert_eq!(
            (d.get("a"), d.get("a/b"), d.get("a/b/c")),
            (Some(1), None, None)
        );
        assert_eq!(d.get("ab"), Some(2), "a sibling sharing the prefix stays");
        d.clear();
        assert_eq!(d.get("x"), None);
    }

    #[test]
    fn handles_are_numbered_from_one_and_reused_once_closed() {
        let mut t = super::HandleTable::default();
        let (a, b) = (t.insert("a"), t.insert("b"));
        assert_eq!((a, b), (1, 2));
        assert_eq!(*t.get_mut(b).unwrap(), "b");
        assert_eq!(t.take(a).unwrap(), "a");
        assert_eq!(t.take(a).unwrap_err().errno, crate::errno::EBADF);
        assert_eq!(t.get_mut(0).unwrap_err().errno, crate::errno::EBADF);
        assert_eq!(t.get_mut(9).unwrap_err().errno, crate::errno::EBADF);
        assert_eq!(
            t.insert("c"),
            1,
            "the closed handle's number is given again"
        );
    }

    use super::*;

    #[test]
    fn a_queued_write_on_an_append_handle_lands_at_its_end_and_moves_it() {
        let mut end = Some(100);
        assert_eq!(queued_write_at(&mut end, 0, 10), 100);
        assert_eq!(queued_write_at(&mut end, 0, 5), 110);
        assert_eq!(end, Some(115));
        let mut none = None;
        assert_eq!(queued_write_at(&mut none, 42, 10), 42);
        assert_eq!(none, None);
    }
    use std::collections::BTreeMap;

    /// A share in memory.
    #[derive(Default)]
    struct MemFs(BTreeMap<String, EntryKind>);

    impl RemoteFs for MemFs {
        fn kind(&mut self, path: &str) -> Result<Option<EntryKind>, OpError> {
            Ok(self.0.get(path).copied())
        }
        fn make_dir(&mut self, path: &str) -> Result<(), OpError> {
            if self.0.contains_key(path) {
                return Err(OpError::errno(crate::errno::EEXIST));
            }
            self.0.insert(path.into(), EntryKind::Dir);
            Ok(())
        }
        fn put_file(&mut self, path: &str, _data: &[u8]) -> Result<(), OpError> {
            self.0.insert(path.into(), EntryKind::File);
            Ok(())
        }
        fn list(&mut self, path: &str) -> Result<Vec<(String, EntryKind)>, OpError> {
            let prefix = format!("{path}/");
            Ok(self
                .0
                .iter()
                .filter_map(|(k, v)| {
                    let rest = k.strip_prefix(&prefix)?;
                    (!rest.contains('/')).then(|| (rest.to_string(), *v))
                })
                .collect())
        }
        fn remove_file(&mut self, path: &str) -> Result<(), OpError> {
            self.0
                .remove(path)
                .map(|_| ())
                .ok_or(OpError::errno(crate::errno::ENOENT))
        }
        fn rename(&mut self, from: &str, to: &str) -> Result<(), OpError> {
            let kind = self
                .0
                .remove(from)
                .ok_or(OpError::errno(crate::errno::ENOENT))?;
            self.0.insert(to.into(), kind);
            Ok(())
        }
        fn remove_dir(&mut self, path: &str) -> Result<(), OpError> {
            if !self.list(path)?.is_empty() {
                return Err(OpError::errno(crate::errno::ENOTEMPTY));
            }
            self.0
                .remove(path)
                .map(|_| ())
                .ok_or(OpError::errno(crate::errno::ENOENT))
        }
    }

    /// A share that refuses some names as Samba's `veto files` does: they cannot be
    /// made and are never found.
    struct VetoFs {
        fs: MemFs,
        vetoed: fn(&str) -> bool,
    }

    impl VetoFs {
        fn check(&self, path: &str) -> Result<(), OpError> {
            if path.split('/').any(self.vetoed) {
                return Err(OpError::errno(crate::errno::ENOENT));
            }
            Ok(())
        }
    }

    impl RemoteFs for VetoFs {
        fn kind(&mut self, path: &str) -> Result<Option<EntryKind>, OpError> {
            match self.check(path) {
                Ok(()) => self.fs.kind(path),
                Err(_) => Ok(None),
            }
        }
        fn make_dir(&mut self, path: &str) -> Result<(), OpError> {
            self.check(path)?;
            self.fs.make_dir(path)
        }
        fn put_file(&mut self, path: &str, data: &[u8]) -> Result<(), OpError> {
            self.check(path)?;
            self.fs.put_file(path, data)
        }
        fn list(&mut self, path: &str) -> Result<Vec<(String, EntryKind)>, OpError> {
            self.fs.list(path)
        }
        fn remove_file(&mut self, path: &str) -> Result<(), OpError> {
            self.fs.remove_file(path)
        }
        fn remove_dir(&mut self, path: &str) -> Result<(), OpError> {
            self.fs.remove_dir(path)
        }
        fn rename(&mut self, from: &str, to: &str) -> Result<(), OpError> {
            self.check(to)?;
            self.fs.rename(from, to)
        }
    }

    #[test]
    fn a_share_that_vetoes_dot_names_gets_the_plain_marker_and_lock() {
        let mut fs = VetoFs {
            fs: MemFs::default(),
            vetoed: |n| n.starts_with('.'),
        };
        let sb = RemoteSandbox::open(&mut fs, "").unwrap();
        assert_eq!(sb.marker_path(), "naslab/naslab-owned");
        assert_eq!(sb.lock_path(), "naslab/naslab-lock");
        assert_eq!(fs.fs.0.get("naslab/naslab-owned"), Some(&EntryKind::File));
        assert_eq!(fs.fs.0.get("naslab/naslab-lock"), Some(&EntryKind::Dir));
        assert!(!fs.fs.0.keys().any(|k| k.contains("/.")), "{:?}", fs.fs.0);
        // Held: a second run is refused, naming the plain lock.
        let text = RemoteSandbox::open(&mut fs, "").unwrap_err().to_string();
        assert!(
            text.contains("remove the directory 'naslab/naslab-lock'"),
            "{text}"
        );
        let d = sb.fresh_workload_dir(&mut fs, "W").unwrap();
        assert_eq!(d, "naslab/W");
        for reserved in ["naslab-owned", "naslab-lock"] {
            assert!(sb.fresh_workload_dir(&mut fs, reserved).is_err());
        }
        sb.release(&mut fs).unwrap();
        assert_eq!(fs.fs.0.get("naslab/naslab-lock"), None);
        // A later run recognises the directory, and so does clean.
        let mut again = RemoteSandbox::open(&mut fs, "").unwrap();
        assert!(again.remove_all(&mut fs).unwrap(), "it was there before");
        assert!(fs.fs.0.is_empty(), "{:?}", fs.fs.0);
    }

    #[test]
    fn a_directory_that_cannot_be_marked_is_removed_again() {
        let mut fs = VetoFs {
            fs: MemFs::default(),
            vetoed: |n| n.contains("owned"),
        };
        fs.fs.0.insert("base".into(), EntryKind::Dir);
        let e = RemoteSandbox::open(&mut fs, "base").unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, RemoteSandboxError::Unmarkable { .. }), "{text}");
        assert!(
            text.contains(".naslab-owned")
                && text.contains("naslab-owned")
                && text.contains("veto files"),
            "{text}"
        );
        // Nothing left behind for a later run to refuse.
        assert_eq!(fs.fs.0.keys().collect::<Vec<_>>(), vec!["base"]);
    }

    #[test]
    fn makes_marks_and_empties_its_own_directory_only() {
        let mut fs = MemFs::default();
        fs.0.insert("base".into(), EntryKind::Dir);
        let sb = RemoteSandbox::open(&mut fs, "base").unwrap();
        assert_eq!(sb.root(), "base/naslab");
        assert_eq!(
            fs.0.get("base/naslab/.naslab-owned"),
            Some(&EntryKind::File)
        );
        let d = sb.fresh_workload_dir(&mut fs, "W").unwrap();
        fs.0.insert(format!("{d}/a"), EntryKind::Dir);
        fs.0.insert(format!("{d}/a/b"), EntryKind::File);
        fs.0.insert(format!("{d}/l"), EntryKind::Link);
        sb.fresh_workload_dir(&mut fs, "W").unwrap();
        assert_eq!(fs.list(&d).unwrap(), vec![]);
        // Opening again, once this one has let go, finds the marker.
        sb.release(&mut fs).unwrap();
        let mut again = RemoteSandbox::open(&mut fs, "base").unwrap();
        for bad in ["", "..", "a/b", ".naslab-owned", ".naslab-lock"] {
            assert!(sb.fresh_workload_dir(&mut fs, bad).is_err(), "{bad}");
        }
        assert!(again.remove_all(&mut fs).unwrap(), "it was there before");
        assert_eq!(fs.0.len(), 1, "{:?}", fs.0);
        // The lock went with the rest: nothing is left to let go of.
        again.release(&mut fs).unwrap();
        // A directory that opening made is said not to have been there.
        let mut fresh = RemoteSandbox::open(&mut fs, "base").unwrap();
        assert!(!fresh.remove_all(&mut fs).unwrap());
        assert_eq!(fs.0.len(), 1, "{:?}", fs.0);
    }

    #[test]
    fn a_second_open_is_refused_naming_the_holder_until_the_first_lets_go() {
        let mut fs = MemFs::default();
        let first = RemoteSandbox::open(&mut fs, "").unwrap();
        let held: Vec<_> = fs.list("naslab/.naslab-lock").unwrap();
        assert_eq!(held.len(), 1, "{held:?}");
        let pid = format!("naslab pid {} on ", std::process::id());
        assert!(held[0].0.starts_with(&pid), "{held:?}");
        let here = Holder::this_process();
        let tail = format!(" UTC, boot {} pid-ns {}", here.boot, here.pid_ns);
        assert!(
            held[0].0.ends_with(&tail) && !held[0].0.contains(':'),
            "{held:?}"
        );
        assert_eq!(Holder::parse(&held[0].0), Some(here));

        let e = RemoteSandbox::open(&mut fs, "").unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, RemoteSandboxError::InUse { .. }), "{text}");
        assert!(text.contains(&format!("in use by {}", held[0].0)), "{text}");
        assert!(
            text.contains("remove the directory 'naslab/.naslab-lock'"),
            "{text}"
        );

        // A lock directory whose holder has not yet written its entry.
        fs.remove_file(&format!("naslab/.naslab-lock/{}", held[0].0))
            .unwrap();
        let text = RemoteSandbox::open(&mut fs, "").unwrap_err().to_string();
        assert!(text.contains("in use by another naslab"), "{text}");

        first.release(&mut fs).unwrap();
        assert_eq!(fs.kind("naslab/.naslab-lock").unwrap(), None);
        let second = RemoteSandbox::open(&mut fs, "").unwrap();
        second.release(&mut fs).unwrap();
        assert_eq!(
            fs.kind("naslab/.naslab-owned").unwrap(),
            Some(EntryKind::File)
        );
    }

    #[test]
    fn a_clients_own_directory_is_made_and_never_followed() {
        let mut fs = MemFs::default();
        fs.0.insert("base".into(), EntryKind::Dir);
        let sb = RemoteSandbox::open_in(&mut fs, "base", Some("client-2"), false).unwrap();
        assert_eq!(sb.root(), "base/client-2/naslab");
        assert_eq!(fs.0.get("base/client-2"), Some(&EntryKind::Dir));
        sb.release(&mut fs).unwrap();
        // Found again as it was left.
        RemoteSandbox::open_in(&mut fs, "base", Some("client-2"), false).unwrap();
        fs.0.insert("base/client-3".into(), EntryKind::Link);
        assert!(matches!(
            RemoteSandbox::open_in(&mut fs, "base", Some("client-3"), false).unwrap_err(),
            RemoteSandboxError::Link(_)
        ));
        fs.0.insert("base/client-4".into(), EntryKind::File);
        assert!(matches!(
            RemoteSandbox::open_in(&mut fs, "base", Some("client-4"), false).unwrap_err(),
            RemoteSandboxError::NotDir(_)
        ));
        for bad in ["..", "a/b", ".naslab-lock"] {
            assert!(
                RemoteSandbox::open_in(&mut fs, "base", Some(bad), false).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_shared_file_set_is_joined_only_while_held_and_never_let_go_by_a_joiner() {
        let mut fs = MemFs::default();
        assert!(matches!(
            RemoteSandbox::open_in(&mut fs, "", None, true).unwrap_err(),
            RemoteSandboxError::NotHeld(_)
        ));
        assert_eq!(fs.kind("naslab").unwrap(), None, "joining made nothing");
        let holder = RemoteSandbox::open(&mut fs, "").unwrap();
        let joined = RemoteSandbox::open_in(&mut fs, "", None, true).unwrap();
        assert_eq!(joined.root(), holder.root());
        // A joiner letting go leaves the holder's lock where it is.
        joined.release(&mut fs).unwrap();
        assert_eq!(
            fs.kind("naslab/.naslab-lock").unwrap(),
            Some(EntryKind::Dir)
        );
        holder.release(&mut fs).unwrap();
        assert!(matches!(
            RemoteSandbox::open_in(&mut fs, "", None, true).unwrap_err(),
            RemoteSandboxError::NotHeld(_)
        ));
    }

    #[test]
    fn refuses_what_it_did_not_make() {
        let mut fs = MemFs::default();
        fs.0.insert("naslab".into(), EntryKind::Dir);
        let e = RemoteSandbox::open(&mut fs, "").unwrap_err();
        assert!(matches!(e, RemoteSandboxError::NotOurs(_)), "{e}");
        let mut fs = MemFs::default();
        fs.0.insert("naslab".into(), EntryKind::Link);
        assert!(matches!(
            RemoteSandbox::open(&mut fs, "").unwrap_err(),
            RemoteSandboxError::Link(_)
        ));
        let mut fs = MemFs::default();
        assert!(matches!(
            RemoteSandbox::open(&mut fs, "nowhere").unwrap_err(),
            RemoteSandboxError::Missing(_)
        ));
    }

    /// A lock directory held by `entry`, as a killed run would leave it (for the tests
    /// of holders gone, which need a PID namespace).
    #[cfg(unix)]
    fn left_behind(entry: &str) -> MemFs {
        let mut fs = MemFs::default();
        for (path, kind) in [
            ("naslab", EntryKind::Dir),
            ("naslab/.naslab-owned", EntryKind::File),
            ("naslab/.naslab-lock", EntryKind::Dir),
        ] {
            fs.0.insert(path.into(), kind);
        }
        fs.0.insert(format!("naslab/.naslab-lock/{entry}"), EntryKind::File);
        fs
    }

    // A holder is found gone only through a PID namespace, which Windows has not.
    #[cfg(unix)]
    #[test]
    fn a_lock_left_by_a_process_gone_from_this_machine_is_taken_over_and_no_other() {
        let here = Holder::this_process();
        assert!(!here.boot.is_empty() && here.pid_ns != 0, "{here:?}");
        // A pid that was this machine's and is free now.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let since = "2026-11-22 23h41m07s UTC";
        let gone = Holder {
            pid: dead,
            ..here.clone()
        }
        .entry(since);
        let mut fs = left_behind(&gone);
        let sb = RemoteSandbox::open(&mut fs, "").unwrap();
        let held: Vec<_> = fs.list("naslab/.naslab-lock").unwrap();
        assert_eq!(held.len(), 1, "{held:?}");
        assert_eq!(Holder::parse(&held[0].0), Some(here.clone()), "{held:?}");
        sb.release(&mut fs).unwrap();
        assert_eq!(fs.kind("naslab/.naslab-lock").unwrap(), None);

        // Alive (pid 1), another host, another boot or PID namespace, or an entry that
        // says no machine: refused, naming the holder.
        let others = [
            Holder {
                pid: 1,
                ..here.clone()
            }
            .entry(since),
            Holder {
                pid: dead,
                host: format!("{}-other", here.host),
                ..here.clone()
            }
            .entry(since),
            Holder {
                pid: dead,
                boot: "00000000".into(),
                ..here.clone()
            }
            .entry(since),
            Holder {
                pid: dead,
                pid_ns: here.pid_ns + 1,
                ..here.clone()
            }
            .entry(since),
            format!("naslab pid {dead} on {} since {since}", here.host),
        ];
        for entry in others {
            let mut fs = left_behind(&entry);
            let e = RemoteSandbox::open(&mut fs, "").unwrap_err();
            assert!(e.to_string().contains(&format!("in use by {entry}")), "{e}");
            let held: Vec<_> = fs.list("naslab/.naslab-lock").unwrap();
            assert_eq!(held, vec![(entry.clone(), EntryKind::File)]);
        }
    }

    // A holder is found gone only through a PID namespace, which Windows has not.
    #[cfg(unix)]
    #[test]
    fn of_two_runs_taking_over_one_lock_only_the_first_gets_it() {
        let here = Holder::this_process();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let gone = Holder {
            pid: dead,
            ..here.clone()
        }
        .entry("2026-11-22 23h41m07s UTC");
        let mut fs = left_behind(&gone);
        // Another run renamed the entry between this one's listing and its rename.
        struct Racing<'a>(&'a mut MemFs);
        impl RemoteFs for Racing<'_> {
            fn kind(&mut self, p: &str) -> Result<Option<EntryKind>, OpError> {
                self.0.kind(p)
            }
            fn make_dir(&mut self, p: &str) -> Result<(), OpError> {
                self.0.make_dir(p)
            }
            fn put_file(&mut self, p: &str, d: &[u8]) -> Result<(), OpError> {
                self.0.put_file(p, d)
            }
            fn list(&mut self, p: &str) -> Result<Vec<(String, EntryKind)>, OpError> {
                self.0.list(p)
            }
            fn remove_file(&mut self, p: &str) -> Result<(), OpError> {
                self.0.remove_file(p)
            }
            fn remove_dir(&mut self, p: &str) -> Result<(), OpError> {
                self.0.remove_dir(p)
            }
            fn rename(&mut self, from: &str, to: &str) -> Result<(), OpError> {
                self.0.rename(
                    from,
                    "naslab/.naslab-lock/naslab pid 7 on elsewhere since then",
                )?;
                self.0.rename(from, to)
            }
        }
        let e = RemoteSandbox::open(&mut Racing(&mut fs), "").unwrap_err();
        assert!(
            e.to_string()
                .contains("in use by naslab pid 7 on elsewhere"),
            "{e}"
        );
        let held: Vec<_> = fs.list("naslab/.naslab-lock").unwrap();
        assert_eq!(held.len(), 1, "{held:?}");
    }
}
