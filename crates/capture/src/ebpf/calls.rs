//! The system calls the eBPF collector records, by this architecture's numbers, and what
//! the kernel side copies for each: which arguments are paths, which pointed-to bytes
//! (a stat buffer, an iovec array, a lock) to keep, which 64-bit values to read as the
//! call begins (an offset the call moves, clone3's and openat2's flags).

use std::mem::size_of;

/// How the kernel side treats one call (the layout of `struct spec` in capture.bpf.c).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Spec {
    pub flags: u8,
    pub strings: [i8; 2],
    pub blob_arg: i8,
    pub blob_count_arg: i8,
    pad: u8,
    pub blob_item: u16,
    pub words: [i8; 2],
    pad2: [u8; 6],
}

// SAFETY: Spec is repr(C), made only of integers, with its padding spelled out as fields.
unsafe impl aya::Pod for Spec {}

impl Spec {
    /// The bytes the kernel side reads, in `struct spec`'s order.
    pub fn bytes(&self) -> [u8; 16] {
        let [b0, b1] = self.blob_item.to_ne_bytes();
        let mut out = [0u8; 16];
        out[..10].copy_from_slice(&[
            self.flags,
            self.strings[0] as u8,
            self.strings[1] as u8,
            self.blob_arg as u8,
            self.blob_count_arg as u8,
            self.pad,
            b0,
            b1,
            self.words[0] as u8,
            self.words[1] as u8,
        ]);
        out
    }
}

/// A thread the kernel side follows (the layout of `struct thread` in capture.bpf.c):
/// how, and the recorded call it is in, which only the kernel side writes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Thread {
    /// 1: its calls are recorded; 2: only its children's are (the thread that starts
    /// the command).
    how: u32,
    in_call: u32,
    /// The call's start: time, number, six arguments, two words.
    call: [u64; 10],
}

impl Thread {
    /// The thread that starts the command: followed for its children only.
    pub fn starter() -> Thread {
        Thread {
            how: 2,
            ..Thread::default()
        }
    }
}

// SAFETY: Thread is repr(C), made only of integers, with no padding (4 + 4 + 80 bytes).
unsafe impl aya::Pod for Thread {}

const TRACED: u8 = 1;
const STR_AT_ENTER: u8 = 2;

/// One recorded call: its name (as strace spells it) and number.
#[derive(Debug, Clone, Copy)]
pub struct Sys {
    pub name: &'static str,
    pub nr: i64,
    pub spec: Spec,
}

fn spec(strings: [i8; 2]) -> Spec {
    Spec {
        flags: TRACED,
        strings,
        blob_arg: -1,
        blob_count_arg: -1,
        words: [-1, -1],
        ..Spec::default()
    }
}

fn with_blob(mut s: Spec, arg: i8, item: usize, count_arg: i8) -> Spec {
    s.blob_arg = arg;
    s.blob_item = item as u16;
    s.blob_count_arg = count_arg;
    s
}

fn with_words(mut s: Spec, words: [i8; 2]) -> Spec {
    s.words = words;
    s
}

const NONE: [i8; 2] = [-1, -1];

/// Every call the eBPF collector records: the calls capture asks strace for, and
/// `close_range`, which only keeps naslab's table of descriptors right.
#[cfg(target_arch = "x86_64")]
pub fn table() -> Vec<Sys> {
    use libc::*;
    let stat = size_of::<libc::stat>();
    let statx = size_of::<libc::statx>();
    let iovec = size_of::<libc::iovec>();
    let flock = size_of::<libc::flock>();
    let s = |name: &'static str, nr: i64, spec: Spec| Sys { name, nr, spec };
    let mut exec = spec([0, -1]);
    exec.flags |= STR_AT_ENTER;
    let mut execat = spec([1, -1]);
    execat.flags |= STR_AT_ENTER;
    vec![
        s("open", SYS_open, spec([0, -1])),
        s("openat", SYS_openat, spec([1, -1])),
        s("openat2", SYS_openat2, with_words(spec([1, -1]), [2, -1])),
        s("creat", SYS_creat, spec([0, -1])),
        s("close", SYS_close, spec(NONE)),
        s("close_range", SYS_close_range, spec(NONE)),
        s("read", SYS_read, spec(NONE)),
        s("write", SYS_write, spec(NONE)),
        s("pread64", SYS_pread64, spec(NONE)),
        s("pwrite64", SYS_pwrite64, spec(NONE)),
        s("readv", SYS_readv, with_blob(spec(NONE), 1, iovec, 2)),
        s("writev", SYS_writev, with_blob(spec(NONE), 1, iovec, 2)),
        s("preadv", SYS_preadv, with_blob(spec(NONE), 1, iovec, 2)),
        s("pwritev", SYS_pwritev, with_blob(spec(NONE), 1, iovec, 2)),
        s("preadv2", SYS_preadv2, with_blob(spec(NONE), 1, iovec, 2)),
        s("pwritev2", SYS_pwritev2, with_blob(spec(NONE), 1, iovec, 2)),
        s("sendfile", SYS_sendfile, with_words(spec(NONE), [2, -1])),
        s(
            "copy_file_range",
            SYS_copy_file_range,
            with_words(spec(NONE), [1, 3]),
        ),
        s("splice", SYS_splice, with_words(spec(NONE), [1, 3])),
        s("lseek", SYS_lseek, spec(NONE)),
        s("fsync", SYS_fsync, spec(NONE)),
        s("fdatasync", SYS_fdatasync, spec(NONE)),
        s("truncate", SYS_truncate, spec([0, -1])),
        s("ftruncate", SYS_ftruncate, spec(NONE)),
        s("fallocate", SYS_fallocate, spec(NONE)),
        s("mkdir", SYS_mkdir, spec([0, -1])),
        s("mkdirat", SYS_mkdirat, spec([1, -1])),
        s("unlink", SYS_unlink, spec([0, -1])),
        s("unlinkat", SYS_unlinkat, spec([1, -1])),
        s("rmdir", SYS_rmdir, spec([0, -1])),
        s("rename", SYS_rename, spec([0, 1])),
        s("renameat", SYS_renameat, spec([1, 3])),
        s("renameat2", SYS_renameat2, spec([1, 3])),
        s("link", SYS_link, spec([0, 1])),
        s("linkat", SYS_linkat, spec([1, 3])),
        s("symlink", SYS_symlink, spec([0, 1])),
        s("symlinkat", SYS_symlinkat, spec([0, 2])),
        s("stat", SYS_stat, with_blob(spec([0, -1]), 1, stat, -1)),
        s("lstat", SYS_lstat, with_blob(spec([0, -1]), 1, stat, -1)),
        s("fstat", SYS_fstat, with_blob(spec(NONE), 1, stat, -1)),
        s(
            "newfstatat",
            SYS_newfstatat,
            with_blob(spec([1, -1]), 2, stat, -1),
        ),
        s("statx", SYS_statx, with_blob(spec([1, -1]), 4, statx, -1)),
        s("getdents", SYS_getdents, spec(NONE)),
        s("getdents64", SYS_getdents64, spec(NONE)),
        s("mmap", SYS_mmap, spec(NONE)),
        s("execve", SYS_execve, exec),
        s("execveat", SYS_execveat, execat),
        s("clone", SYS_clone, spec(NONE)),
        s("clone3", SYS_clone3, with_words(spec(NONE), [0, -1])),
        s("fork", SYS_fork, spec(NONE)),
        s("vfork", SYS_vfork, spec(NONE)),
        s("dup", SYS_dup, spec(NONE)),
        s("dup2", SYS_dup2, spec(NONE)),
        s("dup3", SYS_dup3, spec(NONE)),
        s("fcntl", SYS_fcntl, with_blob(spec(NONE), 2, flock, -1)),
        s("chdir", SYS_chdir, spec([0, -1])),
        s("fchdir", SYS_fchdir, spec(NONE)),
        s("statfs", SYS_statfs, spec([0, -1])),
        s("fstatfs", SYS_fstatfs, spec(NONE)),
        s("utimensat", SYS_utimensat, spec([1, -1])),
        s("utimes", SYS_utimes, spec([0, -1])),
        s("utime", SYS_utime, spec([0, -1])),
        s("futimesat", SYS_futimesat, spec([1, -1])),
        s("flock", SYS_flock, spec(NONE)),
    ]
}

/// The name of an errno value, as strace prints it.
pub fn errno_name(e: i64) -> String {
    let name = match e as i32 {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::ESRCH => "ESRCH",
        libc::EINTR => "EINTR",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::E2BIG => "E2BIG",
        libc::ENOEXEC => "ENOEXEC",
        libc::EBADF => "EBADF",
        libc::ECHILD => "ECHILD",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::EEXIST => "EEXIST",
        libc::EXDEV => "EXDEV",
        libc::ENODEV => "ENODEV",
        libc::ENOTDIR => "ENOTDIR",
        libc::EISDIR => "EISDIR",
        libc::EINVAL => "EINVAL",
        libc::ENFILE => "ENFILE",
        libc::EMFILE => "EMFILE",
        libc::ENOTTY => "ENOTTY",
        libc::ETXTBSY => "ETXTBSY",
        libc::EFBIG => "EFBIG",
        libc::ENOSPC => "ENOSPC",
        libc::ESPIPE => "ESPIPE",
        libc::EROFS => "EROFS",
        libc::EMLINK => "EMLINK",
        libc::EPIPE => "EPIPE",
        libc::ERANGE => "ERANGE",
        libc::EDEADLK => "EDEADLK",
        libc::ENAMETOOLONG => "ENAMETOOLONG",
        libc::ENOLCK => "ENOLCK",
        libc::ENOSYS => "ENOSYS",
        libc::ENOTEMPTY => "ENOTEMPTY",
        libc::ELOOP => "ELOOP",
        libc::ENODATA => "ENODATA",
        libc::EOVERFLOW => "EOVERFLOW",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EDQUOT => "EDQUOT",
        // The kernel's own values, which strace names too.
        512 => "ERESTARTSYS",
        513 => "ERESTARTNOINTR",
        514 => "ERESTARTNOHAND",
        516 => "ERESTART_RESTARTBLOCK",
        _ => return format!("E{e}"),
    };
    name.to_string()
}
