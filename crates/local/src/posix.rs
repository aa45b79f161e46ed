use std::collections::HashMap;
use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, IntoRawFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

use naslab_trace::OpKind;
use rustix::fs::Advice;

use crate::beneath::{
    EntryStat, entry_stat, entry_stat_beneath, link_beneath, mkdir_beneath, open_beneath,
    rename_beneath, stat_beneath, symlink_beneath, unlink_beneath, utime_beneath,
};
use crate::own_links::OwnLinks;
use crate::sandbox::{Sandbox, SandboxError};
use crate::uring::UringQueue;
use naslab_backend::FileTable;
use naslab_backend::{
    Backend, BackendOptions, Caps, Handle, IoBuf, IoMemory, LockHow, OpError, OpenHow, QueuedIo,
    Target,
};

/// A local directory or a mounted share, through the kernel's file API. Every path is
/// resolved beneath the workload directory's descriptor, never from `/`, and no symbolic
/// link is followed (see [`crate::beneath`]).
#[derive(Debug, Clone)]
pub struct PosixTarget {
    /// The directory naslab owns (`<target>/naslab`), where every workload runs.
    sandbox: Sandbox,
    /// The hard links this run made, which its streams accept (shared by every stream).
    own_links: OwnLinks,
}

impl PosixTarget {
    /// A target whose workloads live in `sandbox`.
    pub fn new(sandbox: Sandbox) -> Self {
        PosixTarget {
            sandbox,
            own_links: OwnLinks::default(),
        }
    }

    /// naslab's directory under the target (`<target>/naslab`).
    pub fn root(&self) -> &Path {
        self.sandbox.root()
    }
}

/// What the posix backend can do.
pub const POSIX_CAPS: Caps = Caps {
    ops: [true; OpKind::ALL.len()],
    direct_io: true,
    drop_cache: Some(naslab_results::CacheDrop::PageCache),
    moves_data: true,
    max_queue_depth: naslab_trace::MAX_QUEUE_DEPTH,
};

/// Data ops under direct I/O must be aligned to this.
const DIRECT_ALIGN: u64 = 512;

impl Target for PosixTarget {
    fn fresh_workload_dir(&self, workload_dir: &str) -> Result<(), OpError> {
        self.own_links.forget_all();
        self.sandbox
            .fresh_workload_dir(workload_dir)
            .map(|_| ())
            .map_err(sandbox_err)
    }

    fn remove_all(self: Box<Self>) -> Result<bool, OpError> {
        self.sandbox.remove_all().map_err(sandbox_err)
    }

    fn check_direct(&self, workload_dir: &str) -> Result<(), OpError> {
        let dir = self
            .sandbox
            .open_workload_dir(workload_dir)
            .map_err(io_err)?;
        let probe = c".naslab-direct-probe";
        let fd = open_beneath(
            dir.as_fd(),
            probe,
            libc::O_RDWR | libc::O_CREAT | libc::O_DIRECT,
            0o644,
        );
        // The probe file is ours and removed at once.
        let _ = unlink_beneath(dir.as_fd(), probe, 0);
        fd.map(|_| ()).map_err(io_err)
    }

    fn backend_name(&self) -> &'static str {
        "posix"
    }

    fn local_root(&self) -> Option<&dyn naslab_backend::LocalRoot> {
        Some(&self.sandbox)
    }

    fn caps(&self) -> Caps {
        POSIX_CAPS
    }

    fn connect(
        &self,
        workload_dir: &str,
        files: Arc<FileTable>,
        options: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        let dir = self
            .sandbox
            .open_workload_dir(workload_dir)
            .map_err(io_err)?;
        let dir_stat = entry_stat(dir.as_fd(), c"").map_err(io_err)?;
        Ok(Box::new(PosixBackend {
            dir,
            dir_stat,
            own_links: self.own_links.clone(),
            files,
            direct: options.direct,
            path_a: Vec::with_capacity(256),
            path_b: Vec::with_capacity(256),
            direct_files: HashMap::new(),
            unaligned: 0,
            ring: None,
        }))
    }
}

/// One stream's connection to a posix target.
pub struct PosixBackend {
    /// The workload directory, every path's start.
    dir: OwnedFd,
    /// Who the workload directory is: what is opened in it must be on the same mount.
    dir_stat: EntryStat,
    /// The hard links made in this run, by any stream: files that may have more names.
    own_links: OwnLinks,
    files: Arc<FileTable>,
    direct: bool,
    path_a: Vec<u8>,
    path_b: Vec<u8>,
    /// Under direct I/O: each direct descriptor's file and, once an unaligned op needed
    /// one, a buffered descriptor of the same file.
    direct_files: HashMap<libc::c_int, (u32, libc::c_int)>,
    unaligned: u64,
    /// The io_uring queue, made when a trace asks for a queue depth above 1.
    ring: Option<UringQueue>,
}

fn fill_path<'a>(buf: &'a mut Vec<u8>, files: &FileTable, file: u32) -> Result<&'a CStr, OpError> {
    buf.clear();
    buf.extend_from_slice(files.path(file).as_bytes());
    buf.push(0);
    CStr::from_bytes_with_nul(buf).map_err(|_| OpError::errno(crate::errno::EINVAL))
}

/// Fills `buf` with the text of a symbolic link at `link` naming `target` (both
/// `/`-separated paths relative to the workload directory): `target` from the link's
/// directory, NUL-terminated. It is written in place, as [`fill_path`] writes a path, so
/// a symlink op allocates nothing once `buf` is as long as its longest text.
fn fill_relative_target<'a>(
    buf: &'a mut Vec<u8>,
    link: &str,
    target: &str,
) -> Result<&'a CStr, OpError> {
    let link_dir = link.rsplit_once('/').map_or("", |(dir, _)| dir);
    let dir_depth = if link_dir.is_empty() {
        0
    } else {
        link_dir.split('/').count()
    };
    // The directories the two share, never the target's own name.
    let common = link_dir
        .split('/')
        .take(dir_depth)
        .zip(target.split('/'))
        .take_while(|(a, b)| a == b)
        .count()
        .min(target.split('/').count() - 1);
    let rest = target.splitn(common + 1, '/').last().unwrap_or(target);
    buf.clear();
    for _ in common..dir_depth {
        buf.extend_from_slice(b"../");
    }
    buf.extend_from_slice(rest.as_bytes());
    buf.push(0);
    CStr::from_bytes_with_nul(buf).map_err(|_| OpError::errno(crate::errno::EINVAL))
}

/// A failure of the marked directory's own upkeep, in the sandbox's words.
fn sandbox_err(e: SandboxError) -> OpError {
    OpError {
        errno: match &e {
            SandboxError::Io { source, .. } | SandboxError::ReadOnly { source, .. } => {
                source.raw_os_error().unwrap_or(crate::errno::EIO)
            }
            _ => crate::errno::EPERM,
        },
        detail: Some(e.to_string()),
    }
}

fn io_err(e: std::io::Error) -> OpError {
    OpError::errno(e.raw_os_error().unwrap_or(crate::errno::EIO))
}

/// Opens `path` beneath `dirfd` (the workload directory, `dir`), which must then be
/// what naslab expects there: a regular file (a directory with `O_DIRECTORY` in
/// `flags`) on the workload directory's own mount, a file with no other name (a hard
/// link would share it with a file outside) than those this run gave it (`own`).
/// `O_TRUNC` is applied only once that is checked, so nothing that fails the check is
/// changed.
fn open_raw(
    dirfd: BorrowedFd<'_>,
    dir: &EntryStat,
    own: &OwnLinks,
    path: &CStr,
    flags: libc::c_int,
) -> Result<OwnedFd, OpError> {
    let fd = open_beneath(dirfd, path, flags & !libc::O_TRUNC, 0o644).map_err(io_err)?;
    let want_dir = flags & libc::O_DIRECTORY != 0;
    let st = entry_stat(fd.as_fd(), c"").map_err(io_err)?;
    let shown = path.to_string_lossy();
    let refused = |errno, why: String| OpError {
        errno,
        detail: Some(format!(
            "'{shown}' {why}; naslab does not write or read through it and stops (was it put there during the run?)"
        )),
    };
    let want = if want_dir {
        libc::S_IFDIR
    } else {
        libc::S_IFREG
    };
    if st.kind != want {
        let what = match st.kind {
            libc::S_IFDIR => "a directory",
            libc::S_IFCHR => "a character device",
            libc::S_IFBLK => "a block device",
            libc::S_IFIFO => "a FIFO",
            libc::S_IFSOCK => "a socket",
            _ => "not a regular file",
        };
        let errno = if st.kind == libc::S_IFDIR {
            crate::errno::EISDIR
        } else {
            crate::errno::ENXIO
        };
        return Err(refused(
            errno,
            format!(
                "is {what}, where the workload has a {}",
                if want_dir { "directory" } else { "file" }
            ),
        ));
    }
    if st.crosses_from(dir) {
        return Err(refused(
            crate::errno::EXDEV,
            "is on another file system or mount than the workload directory".into(),
        ));
    }
    // 0: removed by another stream since it was opened.
    if !want_dir && !own.allows(&st) {
        return Err(refused(
            crate::errno::EMLINK,
            format!(
                "has {} names (hard links), so it is also a file outside the workload",
                st.nlink
            ),
        ));
    }
    if flags & libc::O_TRUNC != 0 {
        // Only the file checked above is changed.
        rustix::fs::ftruncate(&fd, 0).map_err(os_err)?;
    }
    Ok(fd)
}

fn os_err(e: rustix::io::Errno) -> OpError {
    OpError::errno(e.raw_os_error())
}

fn check(ret: libc::c_int) -> Result<(), OpError> {
    if ret < 0 {
        Err(OpError::last_os())
    } else {
        Ok(())
    }
}

impl PosixBackend {
    fn open_flags(&self, how: OpenHow) -> libc::c_int {
        let mut flags = libc::O_CLOEXEC;
        flags |= match (how.read, how.write) {
            (_, false) => libc::O_RDONLY,
            (false, true) => libc::O_WRONLY,
            (true, true) => libc::O_RDWR,
        };
        if how.create {
            flags |= libc::O_CREAT;
            if how.exclusive {
                flags |= libc::O_EXCL;
            }
        }
        if how.truncate {
            flags |= libc::O_TRUNC;
        }
        if how.append {
            flags |= libc::O_APPEND;
        }
        if how.sync {
            flags |= libc::O_DSYNC;
        }
        flags
    }

    /// The descriptor a data op of this shape should use.
    fn data_fd(&mut self, h: Handle, offset: u64, len: usize) -> Result<libc::c_int, OpError> {
        let fd = h as libc::c_int;
        if self.direct_files.is_empty()
            || (offset.is_multiple_of(DIRECT_ALIGN) && (len as u64).is_multiple_of(DIRECT_ALIGN))
        {
            return Ok(fd);
        }
        let Some(&(file, buffered)) = self.direct_files.get(&fd) else {
            return Ok(fd);
        };
        self.unaligned += 1;
        if buffered >= 0 {
            return Ok(buffered);
        }
        let p = fill_path(&mut self.path_a, &self.files, file)?;
        let bfd = open_raw(
            self.dir.as_fd(),
            &self.dir_stat,
            &self.own_links,
            p,
            libc::O_RDWR,
        )?
        .into_raw_fd();
        self.direct_files.insert(fd, (file, bfd));
        Ok(bfd)
    }
}

impl Drop for PosixBackend {
    fn drop(&mut self) {
        for (&fd, &(_, buffered)) in &self.direct_files {
            // SAFETY: these descriptors were opened by this backend and are closed once.
            unsafe {
                libc::close(fd);
                if buffered >= 0 {
                    libc::close(buffered);
                }
            }
        }
    }
}

impl Backend for PosixBackend {
    fn caps(&self) -> Caps {
        POSIX_CAPS
    }

    fn open(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError> {
        let mut flags = self.open_flags(how);
        let direct = self.direct || how.direct;
        if direct {
            flags |= libc::O_DIRECT;
        }
        let p = fill_path(&mut self.path_a, &self.files, file)?;
        let fd = open_raw(self.dir.as_fd(), &self.dir_stat, &self.own_links, p, flags)?;
        if how.random {
            // No readahead on this descriptor, as an application asking for random access
            // gets; failing, it is closed.
            rustix::fs::fadvise(&fd, 0, None, Advice::Random).map_err(os_err)?;
        }
        let fd = fd.into_raw_fd();
        if direct {
            self.direct_files.insert(fd, (file, -1));
        }
        Ok(fd as Handle)
    }

    fn close(&mut self, h: Handle) -> Result<(), OpError> {
        if let Some((_, buffered)) = self.direct_files.remove(&(h as libc::c_int))
            && buffered >= 0
        {
            // SAFETY: opened by data_fd, closed once here.
            unsafe { libc::close(buffered) };
        }
        // SAFETY: h is a descriptor this backend opened.
        check(unsafe { libc::close(h as libc::c_int) })
    }

    #[inline]
    fn read(&mut self, h: Handle, offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        let fd = self.data_fd(h, offset, buf.len())?;
        // SAFETY: buf is valid for buf.len() bytes of writing.
        let n = unsafe {
            libc::pread(
                fd,
                buf.as_mut_ptr() as *mut libc::c_void,
                buf.len(),
                offset as libc::off_t,
            )
        };
        if n < 0 {
            return Err(OpError::last_os());
        }
        Ok(n as usize)
    }

    #[inline]
    fn write(&mut self, h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        let fd = self.data_fd(h, offset, buf.len())?;
        // SAFETY: buf is valid for buf.len() bytes of reading.
        let n = unsafe {
            libc::pwrite(
                fd,
                buf.as_ptr() as *const libc::c_void,
                buf.len(),
                offset as libc::off_t,
            )
        };
        if n < 0 {
            return Err(OpError::last_os());
        }
        Ok(n as usize)
    }

    fn fsync(&mut self, h: Handle) -> Result<(), OpError> {
        // SAFETY: plain syscall on a descriptor this backend opened.
        check(unsafe { libc::fsync(h as libc::c_int) })
    }

    fn truncate(&mut self, h: Handle, len: u64) -> Result<(), OpError> {
        // SAFETY: plain syscall on a descriptor this backend opened.
        check(unsafe { libc::ftruncate(h as libc::c_int, len as libc::off_t) })
    }

    fn fallocate(&mut self, h: Handle, offset: u64, len: u64) -> Result<(), OpError> {
        // SAFETY: plain syscall on a descriptor this backend opened.
        check(unsafe {
            libc::fallocate(
                h as libc::c_int,
                0,
                offset as libc::off_t,
                len as libc::off_t,
            )
        })
    }

    fn stat(&mut self, file: u32) -> Result<u64, OpError> {
        let p = fill_path(&mut self.path_a, &self.files, file)?;
        let st = stat_beneath(self.dir.as_fd(), p).map_err(io_err)?;
        Ok(st.st_size as u64)
    }

    fn mkdir(&mut self, file: u32) -> Result<(), OpError> {
        let p = fill_path(&mut self.path_a, &self.files, file)?;
        mkdir_beneath(self.dir.as_fd(), p, 0o755).map_err(io_err)
    }

    fn readdir(&mut self, file: u32) -> Result<u64, OpError> {
        let p = fill_path(&mut self.path_a, &self.files, file)?;
        let fd = open_raw(
            self.dir.as_fd(),
            &self.dir_stat,
            &self.own_links,
            p,
            libc::O_RDONLY | libc::O_DIRECTORY,
        )?
        .into_raw_fd();
        // SAFETY: fd is an open directory; fdopendir takes it over (closedir closes it).
        let dir = unsafe { libc::fdopendir(fd) };
        if dir.is_null() {
            let e = OpError::last_os();
            // SAFETY: fdopendir failed, so fd is still ours to close.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let mut entries = 0u64;
        loop {
            // SAFETY: dir is a valid DIR stream until closedir below.
            let ent = unsafe { libc::readdir(dir) };
            if ent.is_null() {
                break;
            }
            // SAFETY: readdir returned a valid dirent whose d_name is NUL-terminated.
            let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) }.to_bytes();
            if name != b"." && name != b".." {
                entries += 1;
            }
        }
        // SAFETY: dir came from fdopendir and is closed once.
        unsafe { libc::closedir(dir) };
        Ok(entries)
    }

    fn unlink(&mut self, file: u32) -> Result<(), OpError> {
        let is_dir = self.files.is_dir(file);
        let p = fill_path(&mut self.path_a, &self.files, file)?;
        let flags = if is_dir { libc::AT_REMOVEDIR } else { 0 };
        unlink_beneath(self.dir.as_fd(), p, flags).map_err(io_err)
    }

    fn rename(&mut self, from: u32, to: u32) -> Result<(), OpError> {
        let a = fill_path(&mut self.path_a, &self.files, from)?;
        let b = fill_path(&mut self.path_b, &self.files, to)?;
        rename_beneath(self.dir.as_fd(), a, b).map_err(io_err)
    }

    fn link(&mut self, file: u32, to: u32) -> Result<(), OpError> {
        let a = fill_path(&mut self.path_a, &self.files, file)?;
        let b = fill_path(&mut self.path_b, &self.files, to)?;
        // The file is remembered as linked by naslab only if it was one naslab may open
        // before, and the new name is still that file after: a file swapped in from
        // outside at either name is not, and stays refused.
        let before = entry_stat_beneath(self.dir.as_fd(), a).map_err(io_err)?;
        link_beneath(self.dir.as_fd(), a, b).map_err(io_err)?;
        if before.kind == libc::S_IFREG
            && self.own_links.allows(&before)
            && let Ok(after) = entry_stat_beneath(self.dir.as_fd(), b)
            && (after.dev, after.ino) == (before.dev, before.ino)
            && !after.crosses_from(&self.dir_stat)
        {
            self.own_links.record(&after);
        }
        Ok(())
    }

    fn symlink(&mut self, target: u32, link: u32) -> Result<(), OpError> {
        // The link names its target relative to its own directory, so it stays inside
        // the workload directory wherever that is (and naslab itself never follows it).
        let text = fill_relative_target(
            &mut self.path_b,
            self.files.path(link),
            self.files.path(target),
        )?;
        let l = fill_path(&mut self.path_a, &self.files, link)?;
        symlink_beneath(self.dir.as_fd(), text, l).map_err(io_err)
    }

    fn statfs(&mut self, file: u32) -> Result<(), OpError> {
        // Every entry sits on the workload directory's file system (an open refuses one
        // on another device), so the directory answers for all of them without a lookup
        // that could follow a planted link.
        fill_path(&mut self.path_a, &self.files, file)?;
        rustix::fs::fstatfs(&self.dir).map(|_| ()).map_err(os_err)
    }

    fn utime(&mut self, file: u32) -> Result<(), OpError> {
        let p = fill_path(&mut self.path_a, &self.files, file)?;
        utime_beneath(self.dir.as_fd(), p).map_err(io_err)
    }

    fn lock(&mut self, h: Handle, offset: u64, len: u64, how: LockHow) -> Result<(), OpError> {
        let start = libc::off_t::try_from(offset).map_err(|_| OpError::errno(libc::EINVAL))?;
        let len = libc::off_t::try_from(len).map_err(|_| OpError::errno(libc::EINVAL))?;
        // SAFETY: an all-zero flock is valid; the fields that matter are set below.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = match how {
            LockHow::Shared => libc::F_RDLCK,
            LockHow::Exclusive => libc::F_WRLCK,
            LockHow::Unlock => libc::F_UNLCK,
        } as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = start;
        fl.l_len = len;
        // Locks of the open file description: streams are threads of one process, and
        // only these conflict between two descriptors of one process, as two clients'
        // locks do. F_OFD_SETLK never waits: a range held elsewhere fails with EAGAIN.
        // SAFETY: h is a descriptor this backend opened; fl is a valid flock.
        check(unsafe { libc::fcntl(h as libc::c_int, libc::F_OFD_SETLK, &fl) })
    }

    fn drop_cache(&mut self, file: u32) -> Result<(), OpError> {
        let p = fill_path(&mut self.path_a, &self.files, file)?;
        let fd = open_raw(
            self.dir.as_fd(),
            &self.dir_stat,
            &self.own_links,
            p,
            libc::O_RDONLY,
        )?;
        // fsync writes dirty pages back so DONTNEED can drop them all; fd is closed after.
        rustix::fs::fsync(&fd)
            .and_then(|_| rustix::fs::fadvise(&fd, 0, None, Advice::DontNeed))
            .map_err(os_err)
    }

    fn unaligned_direct_ops(&self) -> u64 {
        self.unaligned
    }

    fn queued(&mut self, depth: u32, memory: &IoMemory) -> Result<&mut dyn QueuedIo, OpError> {
        if self.ring.is_none() {
            self.ring = Some(UringQueue::new(depth, memory)?);
        }
        Ok(self)
    }
}

impl PosixBackend {
    fn ring(&mut self) -> Result<&mut UringQueue, OpError> {
        self.ring
            .as_mut()
            .ok_or(OpError::errno(crate::errno::EINVAL))
    }
}

impl QueuedIo for PosixBackend {
    fn queue_read(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let fd = self.data_fd(h, offset, buf.len)?;
        self.ring()?.queue_read(fd as Handle, offset, buf, tag)
    }

    fn queue_write(&mut self, h: Handle, offset: u64, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        let fd = self.data_fd(h, offset, buf.len)?;
        self.ring()?.queue_write(fd as Handle, offset, buf, tag)
    }

    fn submit_and_reap(&mut self, min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        self.ring()?.submit_and_reap(min, done)
    }
}

#[cfg(test)]
mod tests {
    use super::fill_relative_target;

    fn relative_target(link: &str, target: &str) -> String {
        let mut buf = Vec::new();
        let text = fill_relative_target(&mut buf, link, target).unwrap();
        text.to_str().unwrap().to_string()
    }

    #[test]
    fn a_symlinks_text_names_its_target_from_the_links_directory() {
        assert_eq!(relative_target("b", "a"), "a");
        assert_eq!(relative_target("d/b", "a"), "../a");
        assert_eq!(relative_target("d/e/b", "d/a"), "../a");
        assert_eq!(relative_target("d/b", "d"), "../d");
        assert_eq!(relative_target("d/b", "d/x/y"), "x/y");
        assert_eq!(relative_target("a/b/c", "x/y"), "../../x/y");
        assert_eq!(relative_target("d/e/b", "d/e"), "../e");
        assert_eq!(relative_target("d/e/b", "d/e/f/g"), "f/g");
    }

    #[test]
    fn a_symlinks_text_is_written_in_the_buffer_it_is_given() {
        // The replay's path buffer: a symlink op fills it again, with no allocation.
        let mut buf = Vec::with_capacity(256);
        let at = buf.as_ptr();
        for (link, target) in [("a/b/c", "x/y"), ("d/b", "d"), ("b", "a")] {
            fill_relative_target(&mut buf, link, target).unwrap();
            assert_eq!((buf.as_ptr(), buf.capacity()), (at, 256));
        }
    }
}

#[cfg(test)]
mod backend_tests {
    use super::*;
    use naslab_backend::FileEntry;
    use naslab_trace::{FileKind, Prepare};

    /// The calls made on what naslab opens itself: a truncating open changes the file
    /// only once it is checked, and a random-access open, a cache drop and statfs (from
    /// the workload directory) succeed.
    #[test]
    fn truncate_random_access_cache_drop_and_statfs_act_on_what_naslab_opened() {
        let t = tempfile::tempdir().unwrap();
        let target = PosixTarget::new(Sandbox::open(t.path()).unwrap());
        target.fresh_workload_dir("w").unwrap();
        let wd = target.root().join("w");
        std::fs::write(wd.join("f"), b"0123456789").unwrap();
        std::fs::write(wd.join("g"), b"kept").unwrap();
        let entry = |path: &str| FileEntry {
            id: None,
            path: path.into(),
            kind: FileKind::File,
            size: 0,
            exists: true,
            prepare: Prepare::Copy,
        };
        let files = Arc::new(FileTable {
            entries: vec![entry("f"), entry("g"), entry("link")],
        });
        let mut b = target
            .connect("w", files, BackendOptions::default())
            .unwrap();
        let random = OpenHow {
            read: true,
            random: true,
            ..OpenHow::default()
        };
        let h = b.open(0, random).unwrap();
        let mut buf = [0u8; 4];
        assert_eq!(b.read(h, 2, &mut buf).unwrap(), 4);
        assert_eq!(&buf, b"2345");
        b.close(h).unwrap();
        b.drop_cache(0).unwrap();
        b.statfs(0).unwrap();
        // A link where a file was: refused before O_TRUNC could reach what it names.
        std::os::unix::fs::symlink(wd.join("g"), wd.join("link")).unwrap();
        let trunc = OpenHow {
            write: true,
            truncate: true,
            ..OpenHow::default()
        };
        assert_eq!(b.open(2, trunc).unwrap_err().errno, crate::errno::ELOOP);
        assert_eq!(std::fs::read(wd.join("g")).unwrap(), b"kept");
        let h = b.open(0, trunc).unwrap();
        b.close(h).unwrap();
        assert_eq!(std::fs::metadata(wd.join("f")).unwrap().len(), 0);
    }
}
