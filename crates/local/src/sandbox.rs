//! The one directory naslab writes in: `<target>/naslab/`, marked as its own. Nothing
//! outside it is ever created, changed or deleted, and it refuses a `naslab/` it did
//! not make.
//!
//! The directory is held open and everything in it is reached through that descriptor
//! with [`crate::beneath`], so no symbolic link (put there before or during a run) is
//! ever followed. While a [`Sandbox`] is open its marker file is locked (`flock`), so a
//! second naslab on the same target is refused until the first is done.

use std::ffi::{CStr, CString};
use std::io::{ErrorKind, Read, Seek, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags};

use crate::beneath;

pub use crate::marker::{JOIN_WAIT, MARKER_NAME, ROOT_NAME, wait_for_holder};
pub(crate) use naslab_backend::utc::utc_fields;
const MARKER_TEXT: &str = "This directory belongs to naslab, a file-system benchmark.\nnaslab creates, rewrites and deletes everything in it: keep no other files here.\n";
/// The marker's line naming the process that holds the target.
const HOLDER_PREFIX: &str = "in use by naslab pid ";

/// Why the target cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("target '{0}' does not exist; create it, or mount the share there, then run again")]
    Missing(PathBuf),
    #[error("target '{0}' is not a directory; give the directory to run in with --target")]
    NotDir(PathBuf),
    #[error(
        "target '{path}' is read-only ({source}); remount it read-write or choose another --target"
    )]
    ReadOnly {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "target '{path}' may not be written by this user ({source}); give a directory you may write in, or fix its permissions"
    )]
    Denied {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "'{0}' exists but was not made by naslab (it has no {MARKER_NAME} file); naslab will not write or delete there: move it away or choose another --target"
    )]
    NotOurs(PathBuf),
    #[error(
        "'{0}' is not a regular file of its own (it is a symbolic link, a hard link to another file, or another kind of entry), so the directory is not trusted as naslab's; naslab will not write or delete there: remove it yourself after checking what it points to"
    )]
    BadMarker(PathBuf),
    #[error(
        "'{0}' is a symbolic link; naslab will not follow it: remove it or choose another --target"
    )]
    Symlink(PathBuf),
    #[error(
        "{target} is in use by naslab pid {pid} since {since}; wait for it to finish (or stop it) and try again"
    )]
    InUse {
        target: PathBuf,
        pid: String,
        since: String,
    },
    #[error(
        "'{0}' was not held by the first client of this multi-client job within a minute, which --shared-files needs before the others join it; check that every client sees the same --target, and that the share's locks reach every host (an NFS mount with nolock or local_lock keeps them on one: give the nfs:// or smb:// URL instead)"
    )]
    NotHeld(PathBuf),
    #[error("target '{target}' is inside '{root}', naslab's own directory on a target (it holds a {MARKER_NAME} file), which a run there empties; give the directory that holds it ('{}') or another one as --target", root.parent().unwrap_or(root).display())]
    InsideOurs { target: PathBuf, root: PathBuf },
    #[error("workload name '{0}' is reserved; rename the workload")]
    ReservedName(String),
    #[error("cannot {action} '{path}': {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> SandboxError + 'a {
    move |source| match source.raw_os_error() {
        Some(crate::errno::EROFS) => SandboxError::ReadOnly {
            path: path.to_path_buf(),
            source,
        },
        Some(crate::errno::EACCES) | Some(crate::errno::EPERM) => SandboxError::Denied {
            path: path.to_path_buf(),
            source,
        },
        _ => SandboxError::Io {
            action,
            path: path.to_path_buf(),
            source,
        },
    }
}

fn cpath(s: &str) -> CString {
    CString::new(s).unwrap_or_default()
}

fn openat_raw(
    dir: BorrowedFd<'_>,
    name: &CStr,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> std::io::Result<OwnedFd> {
    let flags = OFlags::from_bits_retain((flags | libc::O_CLOEXEC) as u32);
    rustix::fs::openat(dir, name, flags, Mode::from_bits_retain(mode)).map_err(Into::into)
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
fn utc_now() -> String {
    let [y, mo, d, h, mi, s] = utc_fields();
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
}

/// The open, locked directory; dropped (closing both descriptors and so releasing the
/// lock) when the last [`Sandbox`] clone goes.
#[derive(Debug)]
struct Held {
    /// The target, in which `naslab` is removed again by name.
    target: OwnedFd,
    dir: OwnedFd,
    marker: std::fs::File,
}

/// Tries to take the marker's lock without waiting. Taking, a refusal is tried again for
/// 200 ms: the other clients of a `--shared-files` job check whether the lock is held
/// by taking it for a moment, and such a moment must not pass for another run's hold.
/// Fails with why the last try did not take it.
fn try_lock(marker: &std::fs::File, hold: Hold) -> std::io::Result<()> {
    let attempts = if hold == Hold::Take { 10 } else { 1 };
    let mut attempt = 1;
    loop {
        let Err(e) = rustix::fs::flock(marker, FlockOperation::NonBlockingLockExclusive) else {
            return Ok(());
        };
        let busy = e.raw_os_error() == crate::errno::EWOULDBLOCK;
        if !busy || attempt == attempts {
            return Err(e.into());
        }
        attempt += 1;
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Whether opening naslab's directory takes it for this process (locked until the
/// sandbox is dropped) or joins the process of the same multi-client job that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hold {
    Take,
    Join,
}

/// naslab's own directory under a target, held open and locked.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: PathBuf,
    held: Arc<Held>,
    /// Whether opening it made the directory (there was none before).
    made: bool,
}

impl Sandbox {
    /// Opens (creating and marking it if needed) `<target>/naslab`, and locks it for
    /// this process until the sandbox (every clone of it) is dropped.
    pub fn open(target: &Path) -> Result<Sandbox, SandboxError> {
        Sandbox::open_in(open_target(target)?, target, Hold::Take)
    }

    /// Opens `<target>/naslab` that another process of this multi-client job (its first
    /// client) has opened and holds, without taking it: the clients share one file set
    /// (`--shared-files`). Refused when nobody holds it.
    pub fn join(target: &Path) -> Result<Sandbox, SandboxError> {
        Sandbox::open_in(open_target(target)?, target, Hold::Join)
    }

    /// Opens `<target>/<client>/naslab` like [`Sandbox::open`], making the directory
    /// `client` (one name) in the target first if needed. `client` is opened without
    /// following a symbolic link: each client of a multi-client job has its own.
    pub fn open_client(target: &Path, client: &str) -> Result<Sandbox, SandboxError> {
        check_name(client)?;
        let tfd = open_target(target)?;
        let path = target.join(client);
        let name = cpath(client);
        if let Err(e) = rustix::fs::mkdirat(&tfd, &name, Mode::from_bits_retain(0o755)) {
            let e = std::io::Error::from(e);
            if e.kind() != ErrorKind::AlreadyExists {
                return Err(io("create", &path)(e));
            }
        }
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        let cfd =
            openat_raw(tfd.as_fd(), &name, flags, 0).map_err(|e| {
                match beneath::stat_beneath(tfd.as_fd(), &name) {
                    Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {
                        SandboxError::Symlink(path.clone())
                    }
                    _ => io("open", &path)(e),
                }
            })?;
        Sandbox::open_in(cfd, &path, Hold::Take)
    }

    /// Opens (creating and marking it if needed) `naslab` in the directory `tfd` is open
    /// on, which `target` names.
    fn open_in(tfd: OwnedFd, target: &Path, hold: Hold) -> Result<Sandbox, SandboxError> {
        let root = target.join(ROOT_NAME);
        let marker_path = root.join(MARKER_NAME);
        let name = cpath(ROOT_NAME);
        let marker_name = cpath(MARKER_NAME);
        let dir_flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        let (dir, created) = match openat_raw(tfd.as_fd(), &name, dir_flags, 0) {
            Ok(d) => (d, false),
            Err(e) if e.kind() == ErrorKind::NotFound && hold == Hold::Join => {
                return Err(SandboxError::NotHeld(root));
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                rustix::fs::mkdirat(&tfd, &name, Mode::from_bits_retain(0o755))
                    .map_err(|e| io("create", &root)(e.into()))?;
                let d = openat_raw(tfd.as_fd(), &name, dir_flags, 0).map_err(io("open", &root))?;
                (d, true)
            }
            Err(e) => {
                let st = beneath::stat_beneath(tfd.as_fd(), &name);
                return Err(match st {
                    Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {
                        SandboxError::Symlink(root)
                    }
                    Ok(st) if st.st_mode & libc::S_IFMT != libc::S_IFDIR => {
                        SandboxError::NotOurs(root)
                    }
                    _ => io("open", &root)(e),
                });
            }
        };
        let marker_flags = libc::O_RDWR | libc::O_NOFOLLOW | libc::O_NONBLOCK;
        let marker = if created {
            openat_raw(
                dir.as_fd(),
                &marker_name,
                marker_flags | libc::O_CREAT | libc::O_EXCL,
                0o644,
            )
            .map_err(io("write", &marker_path))?
        } else {
            // Looked at read-only first: a device node or a hard link put in its place
            // is refused before anything could write to it.
            let look = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY;
            match openat_raw(dir.as_fd(), &marker_name, look, 0)
                .and_then(|m| reopen_marker(&dir, &marker_name, &m, marker_flags))
            {
                Ok(Some(m)) => m,
                Ok(None) => return Err(SandboxError::BadMarker(marker_path)),
                // The first client may have made the directory and not yet its marker.
                Err(e) if e.kind() == ErrorKind::NotFound && hold == Hold::Join => {
                    return Err(SandboxError::NotHeld(root));
                }
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    return Err(SandboxError::NotOurs(root));
                }
                Err(e) if e.raw_os_error() == Some(crate::errno::ELOOP) => {
                    return Err(SandboxError::BadMarker(marker_path));
                }
                Err(e) => return Err(io("open", &marker_path)(e)),
            }
        };
        let mut marker = std::fs::File::from(marker);
        let meta = marker.metadata().map_err(io("read", &marker_path))?;
        // A hard link would make the marker someone else's file, which naslab rewrites.
        if !meta.is_file() || std::os::unix::fs::MetadataExt::nlink(&meta) != 1 {
            return Err(SandboxError::BadMarker(marker_path));
        }
        let locked = try_lock(&marker, hold);
        if hold == Hold::Join {
            // Joined, not taken: the lock must be the first client's, not free.
            match locked {
                Ok(()) => {
                    let _ = rustix::fs::flock(&marker, FlockOperation::Unlock);
                    return Err(SandboxError::NotHeld(root));
                }
                Err(e) if e.raw_os_error() != Some(crate::errno::EWOULDBLOCK) => {
                    return Err(io("lock", &marker_path)(e));
                }
                Err(_) => {}
            }
            return Ok(Sandbox {
                root,
                made: created,
                held: Arc::new(Held {
                    target: tfd,
                    dir,
                    marker,
                }),
            });
        }
        if let Err(e) = locked {
            if e.raw_os_error() != Some(crate::errno::EWOULDBLOCK) {
                return Err(io("lock", &marker_path)(e));
            }
            let mut text = String::new();
            let _ = marker.read_to_string(&mut text);
            let (pid, since) = text
                .lines()
                .find_map(|l| l.strip_prefix(HOLDER_PREFIX))
                .and_then(|rest| rest.split_once(" since "))
                .map(|(p, s)| (p.to_string(), s.to_string()))
                .unwrap_or_else(|| ("(unknown)".into(), "(unknown)".into()));
            return Err(SandboxError::InUse {
                target: target.to_path_buf(),
                pid,
                since,
            });
        }
        let text = format!(
            "{MARKER_TEXT}{HOLDER_PREFIX}{} since {}\n",
            std::process::id(),
            utc_now()
        );
        marker
            .set_len(0)
            .and_then(|_| marker.rewind())
            .and_then(|_| marker.write_all(text.as_bytes()))
            .map_err(io("write", &marker_path))?;
        Ok(Sandbox {
            made: created,
            root,
            held: Arc::new(Held {
                target: tfd,
                dir,
                marker,
            }),
        })
    }

    /// `<target>/naslab`.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The descriptor of `<target>/naslab`, open as long as the sandbox is.
    pub fn dir_fd(&self) -> BorrowedFd<'_> {
        self.held.dir.as_fd()
    }

    /// Opens a workload's directory for I/O beneath it (no link followed).
    pub fn open_workload_dir(&self, name: &str) -> std::io::Result<OwnedFd> {
        check_name(name).map_err(|_| std::io::Error::from_raw_os_error(crate::errno::EINVAL))?;
        beneath::open_beneath(
            self.dir_fd(),
            &cpath(name),
            libc::O_RDONLY | libc::O_DIRECTORY,
            0,
        )
    }

    /// A workload's directory, emptied: whatever an earlier run left there is removed.
    pub fn fresh_workload_dir(&self, name: &str) -> Result<PathBuf, SandboxError> {
        check_name(name)?;
        let dir = self.root.join(name);
        self.remove_inside(name)?;
        rustix::fs::mkdirat(self.dir_fd(), cpath(name), Mode::from_bits_retain(0o755))
            .map_err(|e| io("create", &dir)(e.into()))?;
        Ok(dir)
    }

    /// Removes a workload's directory if it is there.
    pub fn remove_workload_dir(&self, name: &str) -> Result<(), SandboxError> {
        check_name(name)?;
        self.remove_inside(name)
    }

    /// Removes everything naslab made under the target, the marked directory included.
    /// Whether the directory was there before this sandbox opened it (if not, opening
    /// made it and this removed it again), as the remote sandbox says too.
    pub fn remove_all(self) -> Result<bool, SandboxError> {
        self.check_marker()?;
        let names = beneath::list_dir(self.dir_fd()).map_err(io("list", &self.root))?;
        for name in names {
            if name.to_bytes() != MARKER_NAME.as_bytes() {
                let path = self.root.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
                beneath::remove_tree(self.dir_fd(), &name).map_err(io("remove", &path))?;
            }
        }
        let marker = self.root.join(MARKER_NAME);
        self.check_marker()?;
        rustix::fs::unlinkat(self.dir_fd(), cpath(MARKER_NAME), AtFlags::empty())
            .map_err(|e| io("remove", &marker)(e.into()))?;
        // The directory is removed by name from the target it was opened in, only if
        // still empty.
        rustix::fs::unlinkat(&self.held.target, cpath(ROOT_NAME), AtFlags::REMOVEDIR)
            .map_err(|e| io("remove", &self.root)(e.into()))?;
        Ok(!self.made)
    }

    /// The marker must still be the regular file this sandbox locked.
    fn check_marker(&self) -> Result<(), SandboxError> {
        let path = self.root.join(MARKER_NAME);
        let st = beneath::stat_beneath(self.dir_fd(), &cpath(MARKER_NAME))
            .map_err(|_| SandboxError::NotOurs(self.root.clone()))?;
        let locked = self.held.marker.metadata().map_err(io("read", &path))?;
        use std::os::unix::fs::MetadataExt;
        if st.st_mode & libc::S_IFMT != libc::S_IFREG
            || st.st_ino != locked.ino()
            || st.st_dev != locked.dev()
        {
            return Err(SandboxError::BadMarker(path));
        }
        Ok(())
    }

    /// Deletes `name`, a direct child of the marked root, with everything under it (a
    /// symbolic link is removed itself, never followed).
    fn remove_inside(&self, name: &str) -> Result<(), SandboxError> {
        self.check_marker()?;
        let path = self.root.join(name);
        beneath::remove_tree(self.dir_fd(), &cpath(name)).map_err(io("remove", &path))
    }
}

/// Opens the marker read-write once `look` (the marker opened read-only) is seen to be a
/// regular file of its own on `dir`'s mount, and checks the new descriptor names the same
/// file. `None`: it is not.
fn reopen_marker(
    dir: &OwnedFd,
    name: &CStr,
    look: &OwnedFd,
    flags: libc::c_int,
) -> std::io::Result<Option<OwnedFd>> {
    let seen = beneath::entry_stat(look.as_fd(), c"")?;
    let on = beneath::entry_stat(dir.as_fd(), c"")?;
    if seen.kind != libc::S_IFREG || seen.nlink != 1 || seen.crosses_from(&on) {
        return Ok(None);
    }
    let m = openat_raw(dir.as_fd(), name, flags | libc::O_NOCTTY, 0)?;
    let again = beneath::entry_stat(m.as_fd(), c"")?;
    Ok(((again.dev, again.ino) == (seen.dev, seen.ino)).then_some(m))
}

impl naslab_backend::LocalRoot for Sandbox {
    fn root(&self) -> &Path {
        Sandbox::root(self)
    }

    fn open_workload_dir(&self, name: &str) -> std::io::Result<OwnedFd> {
        Sandbox::open_workload_dir(self, name)
    }
}

/// Opens the target directory; it is the user's choice, links and all.
fn open_target(target: &Path) -> Result<OwnedFd, SandboxError> {
    let ctarget = CString::new(target.as_os_str().as_bytes())
        .map_err(|_| SandboxError::Missing(target.to_path_buf()))?;
    // The system call glibc's open makes: openat from the working directory.
    let tfd = rustix::fs::openat(
        rustix::fs::CWD,
        &ctarget,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| {
        let e = std::io::Error::from(e);
        match e.raw_os_error() {
            Some(crate::errno::ENOENT) => SandboxError::Missing(target.to_path_buf()),
            Some(crate::errno::ENOTDIR) => SandboxError::NotDir(target.to_path_buf()),
            _ => io("read", target)(e),
        }
    })?;
    refuse_inside_ours(target)?;
    Ok(tfd)
}

/// Refuses a target that is naslab's directory on another target, or inside one: a
/// run there would work in (and empty) what another run holds.
fn refuse_inside_ours(target: &Path) -> Result<(), SandboxError> {
    let Ok(real) = target.canonicalize() else {
        return Ok(());
    };
    for dir in real.ancestors() {
        let marker = dir.join(MARKER_NAME);
        if std::fs::symlink_metadata(&marker).is_ok() {
            return Err(SandboxError::InsideOurs {
                target: target.to_path_buf(),
                root: dir.to_path_buf(),
            });
        }
    }
    Ok(())
}

fn check_name(name: &str) -> Result<(), SandboxError> {
    if name == MARKER_NAME
        || name.contains('/')
        || name.contains('\0')
        || naslab_trace::check_rel_path(name).is_err()
    {
        return Err(SandboxError::ReservedName(name.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod error_tests {
    use super::*;

    #[test]
    fn permission_denied_is_not_called_read_only() {
        let p = Path::new("/t");
        let denied =
            io("create", p)(std::io::Error::from_raw_os_error(crate::errno::EACCES)).to_string();
        assert!(
            denied.starts_with("target '/t' may not be written by this user"),
            "{denied}"
        );
        assert!(!denied.contains("read-only"), "{denied}");
        let rofs =
            io("create", p)(std::io::Error::from_raw_os_error(crate::errno::EROFS)).to_string();
        assert!(rofs.starts_with("target '/t' is read-only"), "{rofs}");
    }
}

#[cfg(test)]
mod hold_tests {
    use super::*;

    /// A held sandbox refuses a second run (naming the process that holds it) and lets a
    /// client of the same job join; once it is let go, joining is refused and taking works.
    #[test]
    fn a_held_sandbox_is_joined_not_taken_and_a_free_one_taken_not_joined() {
        let t = tempfile::tempdir().unwrap();
        let held = Sandbox::open(t.path()).unwrap();
        match Sandbox::open(t.path()) {
            Err(SandboxError::InUse { pid, .. }) => {
                assert_eq!(pid, std::process::id().to_string())
            }
            other => panic!("{other:?}"),
        }
        let joined = Sandbox::join(t.path()).unwrap();
        assert_eq!(joined.root(), held.root());
        drop(joined);
        drop(held);
        match Sandbox::join(t.path()) {
            Err(SandboxError::NotHeld(root)) => assert_eq!(root, t.path().join(ROOT_NAME)),
            other => panic!("{other:?}"),
        }
        let again = Sandbox::open(t.path()).unwrap();
        assert!(again.remove_all().unwrap(), "it was there before");
        assert!(!t.path().join(ROOT_NAME).exists());
    }

    /// A client's directory is made once and reused, never followed when it is a link.
    #[test]
    fn a_clients_directory_is_made_or_reused_and_a_link_there_refused() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let first = Sandbox::open_client(t.path(), "client-0").unwrap();
        assert_eq!(first.root(), t.path().join("client-0").join(ROOT_NAME));
        first.fresh_workload_dir("w").unwrap();
        drop(first);
        let second = Sandbox::open_client(t.path(), "client-0").unwrap();
        assert!(t.path().join("client-0/naslab/w").is_dir());
        assert!(second.remove_all().unwrap(), "it was there before");
        assert!(!t.path().join("client-0/naslab").exists());
        std::os::unix::fs::symlink(outside.path(), t.path().join("client-1")).unwrap();
        match Sandbox::open_client(t.path(), "client-1") {
            Err(SandboxError::Symlink(p)) => assert_eq!(p, t.path().join("client-1")),
            other => panic!("{other:?}"),
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
