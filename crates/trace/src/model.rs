use serde::{Deserialize, Serialize};

/// The first line of every trace: what format it is and what workload it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`crate::FORMAT_NAME`].
    pub format: String,
    /// The format version; this build reads [`crate::FORMAT_VERSION`] only.
    pub version: u32,
    /// The workload's name; it names the directory the workload runs in.
    pub workload: String,
    /// What the workload is, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What made the trace (a generator and its parameters, a capture tool, a replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// How many reads and writes each stream may have in flight at once (1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
}

impl Header {
    /// A header of the current format version for `workload`.
    pub fn new(workload: impl Into<String>) -> Self {
        Header {
            format: crate::FORMAT_NAME.to_string(),
            version: crate::FORMAT_VERSION,
            workload: workload.into(),
            description: None,
            generator: None,
            queue_depth: None,
        }
    }
}

/// Whether a declared entry is a regular file or a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    #[default]
    File,
    Dir,
}

/// How preparation builds a file that exists before the measured phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Prepare {
    /// Copied: the size is known up front (set first), then the data is written in order.
    #[default]
    Copy,
    /// Streamed: appended chunk by chunk with the final size unknown to the server.
    Stream,
}

/// One entry of the file set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDecl {
    /// The number ops use to refer to this entry; unique within the trace.
    pub id: u32,
    /// Relative path under the workload directory, `/`-separated.
    pub path: String,
    /// File or directory.
    #[serde(default, skip_serializing_if = "is_default")]
    pub kind: FileKind,
    /// Size in bytes that preparation gives the file (ignored for directories).
    #[serde(default, skip_serializing_if = "is_default")]
    pub size: u64,
    /// Whether the entry exists before the measured phase; `false` means the workload creates it.
    pub exists: bool,
    /// How preparation creates the file when it exists.
    #[serde(default, skip_serializing_if = "is_default")]
    pub prepare: Prepare,
}

impl FileDecl {
    /// A regular file of `size` bytes, prepared by copying when it `exists`.
    pub fn file(id: u32, path: impl Into<String>, size: u64, exists: bool) -> FileDecl {
        FileDecl {
            id,
            path: path.into(),
            kind: FileKind::File,
            size,
            exists,
            prepare: Prepare::Copy,
        }
    }

    /// A directory.
    pub fn dir(id: u32, path: impl Into<String>, exists: bool) -> FileDecl {
        FileDecl {
            kind: FileKind::Dir,
            ..FileDecl::file(id, path, 0, exists)
        }
    }
}

/// The operations a trace can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    Open,
    Create,
    Close,
    Read,
    Write,
    Fsync,
    Truncate,
    Fallocate,
    Stat,
    Mkdir,
    Readdir,
    Unlink,
    Rename,
    /// A hard link: `to` becomes a second name of the file.
    Link,
    /// A symbolic link: `to` becomes a link naming `file` by its relative path.
    Symlink,
    /// A query of the file system holding the entry (its size and free space).
    Statfs,
    /// Setting the entry's access and modification times (to the time of the op).
    Utime,
    /// Taking a byte-range lock on an open file: `offset`, `len` (0: to the end of the
    /// file), shared when `flags` holds `read`, exclusive otherwise. It never waits: a
    /// range held by another stream fails the op.
    Lock,
    /// Releasing a byte-range lock taken by `lock` (`offset`, `len`).
    Unlock,
}

impl OpKind {
    /// Every op kind, in a stable order (the order of the table in the docs).
    pub const ALL: [OpKind; 19] = [
        OpKind::Open,
        OpKind::Create,
        OpKind::Close,
        OpKind::Read,
        OpKind::Write,
        OpKind::Fsync,
        OpKind::Truncate,
        OpKind::Fallocate,
        OpKind::Stat,
        OpKind::Mkdir,
        OpKind::Readdir,
        OpKind::Unlink,
        OpKind::Rename,
        OpKind::Link,
        OpKind::Symlink,
        OpKind::Statfs,
        OpKind::Utime,
        OpKind::Lock,
        OpKind::Unlock,
    ];

    /// The name used in trace files and results.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Open => "open",
            OpKind::Create => "create",
            OpKind::Close => "close",
            OpKind::Read => "read",
            OpKind::Write => "write",
            OpKind::Fsync => "fsync",
            OpKind::Truncate => "truncate",
            OpKind::Fallocate => "fallocate",
            OpKind::Stat => "stat",
            OpKind::Mkdir => "mkdir",
            OpKind::Readdir => "readdir",
            OpKind::Unlink => "unlink",
            OpKind::Rename => "rename",
            OpKind::Link => "link",
            OpKind::Symlink => "symlink",
            OpKind::Statfs => "statfs",
            OpKind::Utime => "utime",
            OpKind::Lock => "lock",
            OpKind::Unlock => "unlock",
        }
    }

    /// Its position in [`OpKind::ALL`], for dense per-kind tables.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the op names a second entry, `to` (and cannot go without it).
    pub fn needs_to(self) -> bool {
        matches!(self, OpKind::Rename | OpKind::Link | OpKind::Symlink)
    }

    /// Whether the op works on an open handle (and so needs a prior open or create).
    pub fn needs_handle(self) -> bool {
        matches!(
            self,
            OpKind::Close
                | OpKind::Read
                | OpKind::Write
                | OpKind::Fsync
                | OpKind::Truncate
                | OpKind::Fallocate
                | OpKind::Lock
                | OpKind::Unlock
        )
    }
}

impl std::fmt::Display for OpKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Open flags of an `open` or `create`, as a set of bits written `read|write|trunc` in traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct OpFlags(pub u8);

impl OpFlags {
    pub const READ: OpFlags = OpFlags(1);
    pub const WRITE: OpFlags = OpFlags(2);
    pub const TRUNC: OpFlags = OpFlags(4);
    pub const APPEND: OpFlags = OpFlags(8);
    /// Write-through: every write reaches stable storage before it completes.
    pub const SYNC: OpFlags = OpFlags(16);
    /// Bypass the client cache (O_DIRECT, FILE_FLAG_NO_BUFFERING).
    pub const DIRECT: OpFlags = OpFlags(32);
    /// Random access: no readahead (POSIX_FADV_RANDOM, FILE_FLAG_RANDOM_ACCESS).
    pub const RANDOM: OpFlags = OpFlags(64);
    /// On a `create`: make the file only if no entry has its name, else fail with
    /// `EEXIST` (O_CREAT|O_EXCL, SMB FILE_CREATE, NFS GUARDED, CREATE_NEW). Version 3.
    pub const EXCL: OpFlags = OpFlags(128);
    /// Every known flag.
    pub const ALL: OpFlags = OpFlags(255);

    const NAMES: [(&'static str, OpFlags); 8] = [
        ("read", OpFlags::READ),
        ("write", OpFlags::WRITE),
        ("trunc", OpFlags::TRUNC),
        ("append", OpFlags::APPEND),
        ("sync", OpFlags::SYNC),
        ("direct", OpFlags::DIRECT),
        ("random", OpFlags::RANDOM),
        ("excl", OpFlags::EXCL),
    ];

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: OpFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no bit is set.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Parses `read|write|...`; an unknown name is an error naming it.
    pub fn parse(text: &str) -> Result<OpFlags, String> {
        let mut bits = 0u8;
        for part in text.split('|').filter(|p| !p.is_empty()) {
            match Self::NAMES.iter().find(|(n, _)| *n == part) {
                Some((_, f)) => bits |= f.0,
                None => {
                    return Err(format!(
                        "unknown flag '{part}' (known: read, write, trunc, append, sync, direct, random, excl)"
                    ));
                }
            }
        }
        Ok(OpFlags(bits))
    }
}

impl std::ops::BitOr for OpFlags {
    type Output = OpFlags;
    fn bitor(self, rhs: OpFlags) -> OpFlags {
        OpFlags(self.0 | rhs.0)
    }
}

impl std::fmt::Display for OpFlags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        for (name, flag) in Self::NAMES {
            if self.contains(flag) {
                if !first {
                    f.write_str("|")?;
                }
                f.write_str(name)?;
                first = false;
            }
        }
        Ok(())
    }
}

impl Serialize for OpFlags {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for OpFlags {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<'de, str>::deserialize(d)?;
        OpFlags::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The error an op is expected to end with: the traced call failed this way, so the
/// replay makes the same call and counts that failure as expected, not as an error (and
/// a success as an error). Written by its POSIX name in traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Expected {
    /// No such file or directory.
    #[serde(rename = "ENOENT")]
    NotFound,
    /// The entry exists already.
    #[serde(rename = "EEXIST")]
    Exists,
    /// A component of the path is not a directory.
    #[serde(rename = "ENOTDIR")]
    NotDir,
    /// The directory is not empty.
    #[serde(rename = "ENOTEMPTY")]
    NotEmpty,
    /// Access denied.
    #[serde(rename = "EACCES")]
    Denied,
    /// The range is locked by another (a lock that would wait).
    #[serde(rename = "EAGAIN")]
    WouldBlock,
}

impl Expected {
    /// Every expected error, in the order of its code ([`Expected::code`] is its
    /// position plus one).
    pub const ALL: [Expected; 6] = [
        Expected::NotFound,
        Expected::Exists,
        Expected::NotDir,
        Expected::NotEmpty,
        Expected::Denied,
        Expected::WouldBlock,
    ];

    /// Its POSIX name, as traces and results write it.
    pub fn name(self) -> &'static str {
        match self {
            Expected::NotFound => "ENOENT",
            Expected::Exists => "EEXIST",
            Expected::NotDir => "ENOTDIR",
            Expected::NotEmpty => "ENOTEMPTY",
            Expected::Denied => "EACCES",
            Expected::WouldBlock => "EAGAIN",
        }
    }

    /// The one-byte code binary traces and spools carry (never 0, which means none).
    pub fn code(self) -> u8 {
        self as u8 + 1
    }

    /// The expected error of a code, `None` for 0 or an unknown code.
    pub fn from_code(code: u8) -> Option<Expected> {
        Self::ALL.get((code as usize).checked_sub(1)?).copied()
    }

    /// The expected error named `name` (`ENOENT`, ...).
    pub fn named(name: &[u8]) -> Option<Expected> {
        Self::ALL.into_iter().find(|e| e.name().as_bytes() == name)
    }
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One operation of one stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// The stream (a user, a thread, a connection) that issues the op.
    pub stream: u32,
    /// When the traced application issued it, in µs from the trace's start.
    pub t_us: u64,
    pub kind: OpKind,
    /// The entry the op works on.
    pub file: u32,
    /// Byte offset (read, write, fallocate).
    pub offset: u64,
    /// Byte count (read, write, fallocate) or the new size (truncate).
    pub len: u64,
    /// Open flags (open, create).
    pub flags: OpFlags,
    /// The new name's entry (rename).
    pub to: Option<u32>,
    /// A warm-up op: run before the measured phase, as a phase of its own, and not measured.
    pub warmup: bool,
    /// The error the op must end with, when the traced call failed.
    pub expect: Option<Expected>,
}

impl Op {
    /// An op with no offset, length, flags or target.
    pub fn new(stream: u32, t_us: u64, kind: OpKind, file: u32) -> Op {
        Op {
            stream,
            t_us,
            kind,
            file,
            offset: 0,
            len: 0,
            flags: OpFlags::default(),
            to: None,
            warmup: false,
            expect: None,
        }
    }
}

/// What a replay measured for one op; present in result files, absent in input traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Measured {
    /// When pacing wanted the op issued, ns since the measured phase began.
    pub sched_ns: u64,
    /// When it was issued.
    pub issued_ns: u64,
    /// When it completed.
    pub done_ns: u64,
    /// Bytes moved (read, write), entries (readdir), size (stat), 0 for other successes,
    /// or the negated errno of a failure.
    pub result: i64,
}

/// One line of a trace, after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    Header(Header),
    File(FileDecl),
    Op(Op, Option<Measured>),
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}
