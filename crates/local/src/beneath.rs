//! Path operations confined to a directory: every path is resolved beneath a directory
//! descriptor and no symbolic link is followed on the way, so a directory swapped for a
//! link while naslab runs cannot lead it outside.
//!
//! On Linux 5.6 and later this is `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`.
//! Where the kernel lacks it (`ENOSYS`), or when `NASLAB_NO_OPENAT2=1` is set, each
//! component is opened in turn with `O_NOFOLLOW`. Either way a link met on the way fails
//! with `ELOOP`, and a `..` that would climb out or a mount point met on the way (with
//! the component walk: another file system; with openat2, a bind mount too) fail with
//! `EXDEV`.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU8, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, StatxAttributes, StatxFlags};

/// Set to `1` to resolve paths component by component even where `openat2` exists.
pub const NO_OPENAT2_ENV: &str = "NASLAB_NO_OPENAT2";

/// 0: not decided yet, 1: openat2, 2: the component walk.
static MODE: AtomicU8 = AtomicU8::new(0);

fn use_openat2() -> bool {
    match MODE.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let forced = std::env::var_os(NO_OPENAT2_ENV).is_some_and(|v| v == "1");
            MODE.store(if forced { 2 } else { 1 }, Ordering::Relaxed);
            !forced
        }
    }
}

/// Which resolution is in use: `"openat2"` or `"component walk"`.
pub fn resolver() -> &'static str {
    if use_openat2() {
        "openat2"
    } else {
        "component walk"
    }
}

/// Forces the component walk (`true`) or goes back to `openat2` where the kernel has it.
pub fn force_component_walk(on: bool) {
    MODE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Opens `path` (relative, without a leading `/`) beneath `dirfd` with `flags`, following
/// no symbolic link, the last component included.
pub fn open_beneath(
    dirfd: BorrowedFd<'_>,
    path: &CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
) -> io::Result<OwnedFd> {
    let flags = flags | libc::O_CLOEXEC;
    let oflags = OFlags::from_bits_retain(flags as u32);
    if use_openat2() {
        let how_mode = if flags & libc::O_CREAT != 0 || flags & libc::O_TMPFILE == libc::O_TMPFILE {
            Mode::from_bits_retain(mode)
        } else {
            Mode::empty()
        };
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_XDEV;
        match rustix::fs::openat2(dirfd, path, oflags, how_mode, resolve) {
            Ok(fd) => return Ok(fd),
            Err(e) if e.raw_os_error() != crate::errno::ENOSYS => return Err(e.into()),
            Err(_) => MODE.store(2, Ordering::Relaxed),
        }
    }
    let (parent, last) = walk_parent(dirfd, path.to_bytes())?;
    let pfd = parent.as_ref().map_or(dirfd, |p| p.as_fd());
    let name = cname(last)?;
    rustix::fs::openat(
        pfd,
        &name,
        oflags | OFlags::NOFOLLOW,
        Mode::from_bits_retain(mode),
    )
    .map_err(io::Error::from)
}

fn cname(bytes: &[u8]) -> io::Result<std::ffi::CString> {
    std::ffi::CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(crate::errno::EINVAL))
}

/// Splits `path` into its directory part and last component.
fn split_last(path: &[u8]) -> (&[u8], &[u8]) {
    let trimmed = path.strip_suffix(b"/").unwrap_or(path);
    match trimmed.iter().rposition(|&b| b == b'/') {
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        None => (&[][..], trimmed),
    }
}

fn check_last(last: &[u8]) -> io::Result<()> {
    match last {
        b"" | b"." => Err(io::Error::from_raw_os_error(crate::errno::EINVAL)),
        b".." => Err(io::Error::from_raw_os_error(crate::errno::EXDEV)),
        _ => Ok(()),
    }
}

/// Opens the directory that holds `path`'s last component (`None`: `dirfd` itself) and
/// returns it with that component.
fn walk_parent<'p>(
    dirfd: BorrowedFd<'_>,
    path: &'p [u8],
) -> io::Result<(Option<OwnedFd>, &'p [u8])> {
    if path.first() == Some(&b'/') {
        return Err(io::Error::from_raw_os_error(crate::errno::EXDEV));
    }
    let (dir, last) = split_last(path);
    check_last(last)?;
    if dir.iter().all(|&b| b == b'/' || b == b'.') && !dir.windows(2).any(|w| w == b"..") {
        return Ok((None, last));
    }
    if use_openat2() {
        let c = cname(dir)?;
        let fd = open_beneath(dirfd, &c, libc::O_PATH | libc::O_DIRECTORY, 0)?;
        return Ok((Some(fd), last));
    }
    let mut cur: Option<OwnedFd> = None;
    let top = rustix::fs::fstat(dirfd)?;
    for comp in dir.split(|&b| b == b'/') {
        match comp {
            b"" | b"." => continue,
            b".." => return Err(io::Error::from_raw_os_error(crate::errno::EXDEV)),
            _ => {}
        }
        let c = cname(comp)?;
        let at = cur.as_ref().map_or(dirfd, |f| f.as_fd());
        // O_PATH with O_NOFOLLOW opens a link itself, which the check below then refuses.
        let fd = rustix::fs::openat(
            at,
            &c,
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let refused = match rustix::fs::fstat(&fd).map(|st| (st.st_mode & libc::S_IFMT, st)) {
            // Another file system mounted there: never crossed, as with openat2.
            Ok((libc::S_IFDIR, st)) if st.st_dev != top.st_dev => {
                Some(io::Error::from_raw_os_error(crate::errno::EXDEV))
            }
            Ok((libc::S_IFDIR, _)) => None,
            Ok((libc::S_IFLNK, _)) => Some(io::Error::from_raw_os_error(crate::errno::ELOOP)),
            Ok(_) => Some(io::Error::from_raw_os_error(crate::errno::ENOTDIR)),
            Err(e) => Some(e.into()),
        };
        if let Some(e) = refused {
            drop(fd);
            return Err(e);
        }
        cur = Some(fd);
    }
    Ok((cur, last))
}

/// Runs `f` with the directory holding `path`'s last component and that component.
fn at_parent<T>(
    dirfd: BorrowedFd<'_>,
    path: &CStr,
    f: impl FnOnce(BorrowedFd<'_>, &CStr) -> io::Result<T>,
) -> io::Result<T> {
    let (parent, last) = walk_parent(dirfd, path.to_bytes())?;
    let pfd = parent.as_ref().map_or(dirfd, |p| p.as_fd());
    if last.len() == path.to_bytes().len() {
        return f(pfd, path);
    }
    let name = cname(last)?;
    f(pfd, &name)
}

/// Makes directory `path` beneath `dirfd`.
pub fn mkdir_beneath(dirfd: BorrowedFd<'_>, path: &CStr, mode: libc::mode_t) -> io::Result<()> {
    at_parent(dirfd, path, |p, name| {
        rustix::fs::mkdirat(p, name, Mode::from_bits_retain(mode)).map_err(io::Error::from)
    })
}

/// Removes `path` beneath `dirfd` (`AT_REMOVEDIR` in `flags` for a directory); a link
/// at the end is removed itself.
pub fn unlink_beneath(dirfd: BorrowedFd<'_>, path: &CStr, flags: libc::c_int) -> io::Result<()> {
    at_parent(dirfd, path, |p, name| {
        rustix::fs::unlinkat(p, name, AtFlags::from_bits_retain(flags as u32))
            .map_err(io::Error::from)
    })
}

/// Renames `from` to `to`, both beneath `dirfd`.
pub fn rename_beneath(dirfd: BorrowedFd<'_>, from: &CStr, to: &CStr) -> io::Result<()> {
    at_parent(dirfd, from, |pa, a| {
        at_parent(dirfd, to, |pb, b| {
            rustix::fs::renameat(pa, a, pb, b).map_err(io::Error::from)
        })
    })
}

/// Makes `to` a second name (a hard link) of `from`, both beneath `dirfd`; a symbolic
/// link at the end of `from` is linked itself, never followed.
pub fn link_beneath(dirfd: BorrowedFd<'_>, from: &CStr, to: &CStr) -> io::Result<()> {
    at_parent(dirfd, from, |pa, a| {
        at_parent(dirfd, to, |pb, b| {
            rustix::fs::linkat(pa, a, pb, b, AtFlags::empty()).map_err(io::Error::from)
        })
    })
}

/// Makes `link` beneath `dirfd` a symbolic link holding `target`, as text: nothing is
/// resolved (and naslab never follows the link afterwards).
pub fn symlink_beneath(dirfd: BorrowedFd<'_>, target: &CStr, link: &CStr) -> io::Result<()> {
    at_parent(dirfd, link, |p, name| {
        rustix::fs::symlinkat(target, p, name).map_err(io::Error::from)
    })
}

/// Sets the access and modification times of `path` beneath `dirfd` to now (of a link
/// at the end, not of what it names).
pub fn utime_beneath(dirfd: BorrowedFd<'_>, path: &CStr) -> io::Result<()> {
    // Both times UTIME_NOW: the kernel takes it as no times given (set both to now, with
    // write access to the file enough), as utimensat(2) says.
    let now = rustix::fs::Timespec {
        tv_sec: 0,
        tv_nsec: rustix::fs::UTIME_NOW,
    };
    let times = rustix::fs::Timestamps {
        last_access: now,
        last_modification: now,
    };
    at_parent(dirfd, path, |p, name| {
        rustix::fs::utimensat(p, name, &times, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)
    })
}

/// What naslab checks of `path` beneath `dirfd` (of a link at the end, not of what it
/// names).
pub fn entry_stat_beneath(dirfd: BorrowedFd<'_>, path: &CStr) -> io::Result<EntryStat> {
    at_parent(dirfd, path, entry_stat)
}

/// The status of `path` beneath `dirfd` (of a link at the end, not of what it names).
pub fn stat_beneath(dirfd: BorrowedFd<'_>, path: &CStr) -> io::Result<rustix::fs::Stat> {
    at_parent(dirfd, path, |p, name| {
        rustix::fs::statat(p, name, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)
    })
}

/// The names in the directory `fd` (without `.` and `..`).
pub fn list_dir(fd: BorrowedFd<'_>) -> io::Result<Vec<std::ffi::CString>> {
    // A duplicate is read, which shares `fd`'s offset; not a directory's: refused first,
    // as fdopendir refused it.
    let dup = rustix::io::fcntl_dupfd_cloexec(fd, 0)?;
    if rustix::fs::fstat(&dup)?.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Err(io::Error::from_raw_os_error(crate::errno::ENOTDIR));
    }
    let mut dir = rustix::fs::Dir::new(dup)?;
    // From the first entry, whatever the offset.
    dir.rewind();
    let mut names = Vec::new();
    for ent in dir {
        let ent = match ent {
            Ok(ent) => ent,
            // The directory removed meanwhile: what it held is gone with it.
            Err(e) if e.raw_os_error() == crate::errno::ENOENT => break,
            // Any other failed read is the caller's to hear of: a list cut short would
            // pass for the whole directory.
            Err(e) => return Err(e.into()),
        };
        let name = ent.file_name();
        if name.to_bytes() != b"." && name.to_bytes() != b".." {
            names.push(name.to_owned());
        }
    }
    Ok(names)
}

/// What naslab checks of an entry: its kind, identity, links and mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryStat {
    /// `S_IFREG`, `S_IFDIR`, `S_IFLNK`...
    pub kind: libc::mode_t,
    pub dev: u64,
    pub ino: u64,
    pub nlink: u64,
    /// The mount it is on, where the kernel says (Linux 5.8 and later).
    pub mnt_id: Option<u64>,
    /// Whether a file system (a bind mount too) is mounted on it.
    pub mount_root: bool,
}

impl EntryStat {
    /// Whether `self`, an entry in directory `dir`, is on another file system or
    /// mount than `dir`: a mount point.
    pub fn crosses_from(&self, dir: &EntryStat) -> bool {
        self.dev != dir.dev
            || self.mount_root
            || matches!((self.mnt_id, dir.mnt_id), (Some(a), Some(b)) if a != b)
    }
}

/// The status of `name` in `dirfd` (of `dirfd` itself when `name` is empty), never
/// following a link.
pub fn entry_stat(dirfd: BorrowedFd<'_>, name: &CStr) -> io::Result<EntryStat> {
    let mut flags = AtFlags::SYMLINK_NOFOLLOW | AtFlags::STATX_SYNC_AS_STAT;
    if name.is_empty() {
        flags |= AtFlags::EMPTY_PATH;
    }
    let mask = StatxFlags::TYPE | StatxFlags::INO | StatxFlags::NLINK | StatxFlags::MNT_ID;
    let sx = match rustix::fs::statx(dirfd, name, flags, mask) {
        Ok(sx) => sx,
        Err(e) if e.raw_os_error() != crate::errno::ENOSYS => return Err(e.into()),
        Err(_) => {
            let st = rustix::fs::statat(dirfd, name, flags & !AtFlags::STATX_SYNC_AS_STAT)?;
            return Ok(EntryStat {
                kind: st.st_mode & libc::S_IFMT,
                dev: st.st_dev,
                ino: st.st_ino,
                nlink: st.st_nlink,
                mnt_id: None,
                mount_root: false,
            });
        }
    };
    let root = StatxAttributes::MOUNT_ROOT;
    Ok(EntryStat {
        kind: libc::mode_t::from(sx.stx_mode) & libc::S_IFMT,
        dev: libc::makedev(sx.stx_dev_major, sx.stx_dev_minor),
        ino: sx.stx_ino,
        nlink: u64::from(sx.stx_nlink),
        mnt_id: (sx.stx_mask & StatxFlags::MNT_ID.bits() != 0).then_some(sx.stx_mnt_id),
        mount_root: sx.stx_attributes_mask.contains(root) && sx.stx_attributes.contains(root),
    })
}

/// Refuses to go on below a mount point.
fn mount_point(path: &[u8]) -> io::Error {
    io::Error::other(format!(
        "'{}' is a mount point (another file system, or a bind mount, is there); naslab never removes anything across a file-system boundary: unmount it, then run again",
        String::from_utf8_lossy(path)
    ))
}

/// A directory being emptied: its name in the one above, who it is, and the names in
/// it still to remove.
struct Level {
    name: std::ffi::CString,
    stat: EntryStat,
    pending: Vec<std::ffi::CString>,
}

/// Opens `name` in `dirfd` as a directory, refusing a link, and checks it is `expected`.
fn open_dir_checked(
    dirfd: BorrowedFd<'_>,
    name: &CStr,
    expected: &EntryStat,
) -> io::Result<OwnedFd> {
    // O_NOFOLLOW refuses a link put there since.
    let fd = rustix::fs::openat(
        dirfd,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let got = entry_stat(fd.as_fd(), c"")?;
    if (got.dev, got.ino) != (expected.dev, expected.ino) {
        return Err(io::Error::other(format!(
            "'{}' was replaced while naslab removed it; run again once nothing else changes it",
            name.to_string_lossy()
        )));
    }
    Ok(fd)
}

/// Removes `name` in the directory `parent` with everything under it, never following
/// a symbolic link (a link is removed itself) and never going below a mount point
/// (refused, naming it). However deep the tree, at most three descriptors are open at
/// once: the walk holds the directory it empties, and climbs back with `..`, checked
/// to be the directory it came from.
pub fn remove_tree(parent: BorrowedFd<'_>, name: &CStr) -> io::Result<()> {
    let st = match entry_stat(parent, name) {
        Ok(st) => st,
        Err(e) if e.raw_os_error() == Some(crate::errno::ENOENT) => return Ok(()),
        Err(e) => return Err(e),
    };
    if st.kind != libc::S_IFDIR {
        return rustix::fs::unlinkat(parent, name, AtFlags::empty()).map_err(io::Error::from);
    }
    if st.crosses_from(&entry_stat(parent, c"")?) {
        return Err(mount_point(name.to_bytes()));
    }
    let mut cur = open_dir_checked(parent, name, &st)?;
    let mut levels = vec![Level {
        name: name.to_owned(),
        stat: st,
        pending: list_dir(cur.as_fd())?,
    }];
    while let Some(top) = levels.last_mut() {
        if let Some(child) = top.pending.pop() {
            let cst = match entry_stat(cur.as_fd(), &child) {
                Ok(s) => s,
                Err(e) if e.raw_os_error() == Some(crate::errno::ENOENT) => continue,
                Err(e) => return Err(e),
            };
            if cst.kind != libc::S_IFDIR {
                rustix::fs::unlinkat(&cur, &child, AtFlags::empty())?;
                continue;
            }
            if cst.crosses_from(&top.stat) {
                let mut path = Vec::new();
                for l in &levels {
                    path.extend_from_slice(l.name.to_bytes());
                    path.push(b'/');
                }
                path.extend_from_slice(child.to_bytes());
                return Err(mount_point(&path));
            }
            cur = open_dir_checked(cur.as_fd(), &child, &cst)?;
            let pending = list_dir(cur.as_fd())?;
            levels.push(Level {
                name: child,
                stat: cst,
                pending,
            });
            continue;
        }
        let done = levels.pop().map(|l| l.name).unwrap_or_default();
        let Some(up) = levels.last() else {
            drop(cur);
            return rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR).map_err(io::Error::from);
        };
        cur = open_dir_checked(cur.as_fd(), c"..", &up.stat)?;
        rustix::fs::unlinkat(&cur, &done, AtFlags::REMOVEDIR)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn c(s: &str) -> std::ffi::CString {
        std::ffi::CString::new(s).unwrap()
    }

    fn errno(r: io::Result<impl Sized>) -> i32 {
        r.err().and_then(|e| e.raw_os_error()).unwrap_or(0)
    }

    /// A directory removed while open lists as empty (its end); a read the kernel
    /// refuses is an error, not a short list: a descriptor opened with `O_PATH` passes
    /// the directory check (fstat) and fails the read (EBADF).
    #[test]
    fn a_listing_ends_at_a_removed_directory_and_fails_on_a_refused_read() {
        let top = tempfile::tempdir().unwrap();
        let gone = top.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let held = std::fs::File::open(&gone).unwrap();
        std::fs::remove_dir(&gone).unwrap();
        assert_eq!(
            list_dir(held.as_fd()).unwrap(),
            Vec::<std::ffi::CString>::new()
        );

        std::fs::write(top.path().join("a"), b"").unwrap();
        let full = std::fs::File::open(top.path()).unwrap();
        assert_eq!(list_dir(full.as_fd()).unwrap(), vec![c("a")]);
        let path_only = rustix::fs::open(
            top.path(),
            rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        assert_eq!(errno(list_dir(path_only.as_fd())), crate::errno::EBADF);
    }

    /// Both resolvers refuse a link anywhere on the path and a climb out, and leave the
    /// directory the link names untouched.
    #[test]
    fn no_link_is_followed_and_nothing_escapes_with_either_resolver() {
        for walk in [false, true] {
            force_component_walk(walk);
            let inside = tempfile::tempdir().unwrap();
            let outside = tempfile::tempdir().unwrap();
            std::fs::write(outside.path().join("victim"), b"keep").unwrap();
            std::fs::create_dir(inside.path().join("real")).unwrap();
            symlink(outside.path(), inside.path().join("sub")).unwrap();
            symlink(outside.path().join("victim"), inside.path().join("file")).unwrap();
            let dir = std::fs::File::open(inside.path()).unwrap();
            let d = dir.as_fd();
            let rw = libc::O_RDWR | libc::O_CREAT;
            assert_eq!(
                errno(open_beneath(d, &c("sub/victim"), libc::O_RDONLY, 0)),
                crate::errno::ELOOP,
                "{}",
                resolver()
            );
            assert_eq!(
                errno(open_beneath(d, &c("sub/new"), rw, 0o644)),
                crate::errno::ELOOP
            );
            assert_eq!(
                errno(open_beneath(d, &c("file"), libc::O_RDONLY, 0)),
                crate::errno::ELOOP
            );
            assert_eq!(
                errno(open_beneath(d, &c("real/../../x"), rw, 0o644)),
                crate::errno::EXDEV
            );
            assert_eq!(
                errno(unlink_beneath(d, &c("sub/victim"), 0)),
                crate::errno::ELOOP
            );
            assert_eq!(
                errno(mkdir_beneath(d, &c("sub/d"), 0o755)),
                crate::errno::ELOOP
            );
            assert_eq!(
                errno(stat_beneath(d, &c("sub/victim"))),
                crate::errno::ELOOP
            );
            assert_eq!(
                errno(rename_beneath(d, &c("sub/victim"), &c("real/v"))),
                crate::errno::ELOOP
            );
            assert_eq!(
                errno(rename_beneath(d, &c("real"), &c("sub/r"))),
                crate::errno::ELOOP
            );
            // Real paths work, nested ones included.
            let f = open_beneath(d, &c("real/a"), rw, 0o644).unwrap();
            drop(f);
            mkdir_beneath(d, &c("real/b"), 0o755).unwrap();
            rename_beneath(d, &c("real/a"), &c("real/b/a")).unwrap();
            assert_eq!(stat_beneath(d, &c("real/b/a")).unwrap().st_size, 0);
            unlink_beneath(d, &c("real/b/a"), 0).unwrap();
            // A link inside the tree is removed, not followed.
            symlink(outside.path(), inside.path().join("real/b/out")).unwrap();
            remove_tree(d, &c("real")).unwrap();
            remove_tree(d, &c("sub")).unwrap();
            assert!(!inside.path().join("real").exists());
            assert_eq!(
                std::fs::read(outside.path().join("victim")).unwrap(),
                b"keep"
            );
            assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
        }
        force_component_walk(false);
    }
}
