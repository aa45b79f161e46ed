//! Shared by the lab's tests: a lab in a temporary directory, a small workload that
//! uses every op, and running it through the engine.

#![allow(dead_code)]

pub mod wire;

use std::path::Path;
use std::sync::atomic::Ordering;

use naslab_engine::{
    IterationSpec, Progress, ReplayOptions, Target, compile, records_from_trace, run_iteration,
};
use naslab_lab::lab::LabGuard;
use naslab_lab::{FsKind, LabOptions, LabState, ServerKind};
use naslab_results::{CacheMode, IterationResult};
use naslab_targets::url::{ClientOptions, SmbEncrypt};
use naslab_targets::{NfsTarget, SmbTarget};
use naslab_trace::{FileDecl, FileKind, Op, OpFlags, OpKind, Trace};

/// Skips the test (with a note saying why) unless it runs as root with the servers
/// installed; under NASLAB_REQUIRE_ROOT=1 (CI) it fails instead.
#[macro_export]
macro_rules! needs_root_and_servers {
    ($server:expr) => {
        if !naslab_test_support::root_or_skip("the lab (loop devices, mounts and servers)") {
            return;
        }
        let tool = match $server {
            naslab_lab::ServerKind::Samba => "smbd",
            naslab_lab::ServerKind::Nfs => "ganesha.nfsd",
        };
        if naslab_test_support::tool_or_skip(tool).is_none() {
            return;
        }
    };
}

/// Fails (under NASLAB_REQUIRE_ROOT=1) or skips the test unless Toxiproxy's server,
/// the lab's link emulator, is installed.
#[macro_export]
macro_rules! needs_emulator {
    () => {
        if let Err(e) = naslab_lab::toxiproxy::find() {
            naslab_test_support::cannot_run(&e.to_string());
            return;
        }
    };
}

/// A lab under `base` behind the emulated `link`, taken down when the guard drops.
pub fn lab_with_link(base: &Path, fs: FsKind, server: ServerKind, link: &str) -> LabGuard {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o711)).unwrap();
    LabGuard::up(&LabOptions {
        name: "t".into(),
        base: base.to_path_buf(),
        fs,
        server,
        size_bytes: 512 << 20,
        opts: vec![],
        link: naslab_lab::link::parse(link).expect("a link"),
        client_links: Vec::new(),
    })
    .expect("lab up")
}

/// A lab under `base`, taken down when the guard drops. `base` is opened for others
/// to pass through, as the lab's servers work as an unprivileged account.
pub fn lab(base: &Path, fs: FsKind, server: ServerKind, opts: &[&str]) -> LabGuard {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(base, std::fs::Permissions::from_mode(0o711)).unwrap();
    LabGuard::up(&LabOptions {
        name: "t".into(),
        base: base.to_path_buf(),
        fs,
        server,
        size_bytes: 512 << 20,
        opts: opts.iter().map(|s| s.to_string()).collect(),
        link: None,
        client_links: Vec::new(),
    })
    .expect("lab up")
}

/// A lab in a temporary directory of its own. The lab is taken down before the
/// directory is removed (fields drop in the order they are declared).
pub struct TempLab {
    guard: LabGuard,
    base: tempfile::TempDir,
}

impl TempLab {
    /// A lab of `server` on `fs`, with the server options `opts`.
    pub fn up(fs: FsKind, server: ServerKind, opts: &[&str]) -> TempLab {
        let base = tempfile::tempdir().unwrap();
        let guard = lab(base.path(), fs, server, opts);
        TempLab { guard, base }
    }

    /// What the lab serves: its URL, account and share directory.
    pub fn state(&self) -> &LabState {
        &self.guard.lab().state
    }

    /// The lab's own directory (its servers' configuration).
    pub fn dir(&self) -> &Path {
        &self.guard.lab().dir
    }

    /// The temporary directory the lab is in, for the test's own files too.
    pub fn base(&self) -> &Path {
        self.base.path()
    }
}

/// naslab's SMB client signed in to the lab's share as the lab's user.
pub fn smb(st: &LabState) -> SmbTarget {
    SmbTarget::connect(st.url.parse().unwrap(), st.password.clone()).expect("smb connects")
}

/// naslab's SMB client signed in as the lab's user, with `--smb-encrypt` as given; the
/// refusal's text when the session cannot be had.
pub fn smb_encrypting(st: &LabState, encrypt: SmbEncrypt) -> Result<SmbTarget, String> {
    smb_with(
        st,
        ClientOptions {
            smb_encrypt: encrypt,
            ..ClientOptions::default()
        },
    )
}

/// naslab's SMB client signed in as the lab's user with the client options given; the
/// refusal's text when the session cannot be had.
pub fn smb_with(st: &LabState, opts: ClientOptions) -> Result<SmbTarget, String> {
    SmbTarget::connect_with(st.url.parse().unwrap(), st.password.clone(), opts)
        .map_err(|e| e.to_string())
}

/// A connection of `target` with one file open for reading and writing,
/// `<workload>/data.bin`, made empty by the test in a fresh workload directory.
/// A connection to `target` whose file set is the one file `data.bin` (index 0) of
/// `workload`'s directory.
pub fn connect_to_data_bin(target: &dyn Target, workload: &str) -> Box<dyn naslab_engine::Backend> {
    let files = std::sync::Arc::new(naslab_engine::FileTable {
        entries: vec![naslab_engine::plan::FileEntry {
            id: Some(0),
            path: "data.bin".into(),
            kind: FileKind::File,
            size: 0,
            exists: false,
            prepare: naslab_trace::Prepare::Copy,
        }],
    });
    target
        .connect(workload, files, naslab_engine::BackendOptions::default())
        .unwrap()
}

pub fn one_open_file(
    target: &dyn Target,
    workload: &str,
) -> (
    Box<dyn naslab_engine::Backend>,
    naslab_engine::backend::Handle,
) {
    target.fresh_workload_dir(workload).unwrap();
    let mut b = connect_to_data_bin(target, workload);
    let how = naslab_engine::OpenHow {
        read: true,
        write: true,
        create: true,
        truncate: true,
        ..naslab_engine::OpenHow::default()
    };
    let h = b.open(0, how).unwrap();
    (b, h)
}

/// naslab's NFS client on the lab's export (`url` as the lab gives it).
pub fn nfs(url: &str) -> NfsTarget {
    NfsTarget::connect(url.parse().unwrap()).expect("nfs mounts")
}

/// Bytes one small write is.
pub const CHUNK: u64 = 64 << 10;
/// Writes the workload makes to `new/data.bin`.
pub const WRITES: u64 = 40;
/// Size of the prepared file it reads.
pub const PREPARED: u64 = 3 << 20;

fn op(kind: OpKind, file: u32) -> Op {
    Op::new(0, 0, kind, file)
}

/// A workload using every op the protocols offer (fallocate only when `fallocate`):
/// read a prepared file, write a new one in order, sync, stat, list, rename, remove.
pub fn small_trace(name: &str, fallocate: bool) -> Trace {
    let mut t = Trace::new(name);
    let file = |id, path: &str, kind, size, exists| FileDecl {
        kind,
        ..FileDecl::file(id, path, size, exists)
    };
    t.files
        .push(file(1, "in/video.bin", FileKind::File, PREPARED, true));
    t.files.push(file(2, "new", FileKind::Dir, 0, false));
    t.files
        .push(file(3, "new/data.bin", FileKind::File, 0, false));
    t.files
        .push(file(4, "new/final.bin", FileKind::File, 0, false));
    t.files
        .push(file(5, "new/tmp.bin", FileKind::File, 0, false));
    t.files.push(file(6, "in", FileKind::Dir, 0, true));
    let mut o = op(OpKind::Open, 1);
    o.flags = OpFlags::READ;
    t.ops.push(o);
    for i in 0..(PREPARED / (256 << 10)) {
        let mut r = op(OpKind::Read, 1);
        r.offset = i * (256 << 10);
        r.len = 256 << 10;
        t.ops.push(r);
    }
    t.ops.push(op(OpKind::Close, 1));
    t.ops.push(op(OpKind::Mkdir, 2));
    let mut c = op(OpKind::Create, 3);
    c.flags = OpFlags::WRITE;
    t.ops.push(c);
    for i in 0..WRITES {
        let mut w = op(OpKind::Write, 3);
        w.offset = i * CHUNK;
        w.len = CHUNK;
        t.ops.push(w);
    }
    if fallocate {
        let mut f = op(OpKind::Fallocate, 3);
        f.offset = 0;
        f.len = WRITES * CHUNK;
        t.ops.push(f);
    }
    t.ops.push(op(OpKind::Fsync, 3));
    t.ops.push(op(OpKind::Close, 3));
    t.ops.push(op(OpKind::Stat, 3));
    t.ops.push(op(OpKind::Readdir, 6));
    let mut rn = op(OpKind::Rename, 3);
    rn.to = Some(4);
    t.ops.push(rn);
    let mut c = op(OpKind::Create, 5);
    c.flags = OpFlags::WRITE;
    t.ops.push(c);
    let mut w = op(OpKind::Write, 5);
    w.len = 1000;
    t.ops.push(w);
    let mut tr = op(OpKind::Truncate, 5);
    tr.len = 10;
    t.ops.push(tr);
    t.ops.push(op(OpKind::Close, 5));
    t.ops.push(op(OpKind::Unlink, 5));
    t
}

/// Runs `trace` once against `target` (spools in `spool`).
pub fn run(trace: &Trace, target: &dyn Target, spool: &Path) -> IterationResult {
    let plan =
        compile(Path::new("test.jsonl"), records_from_trace(trace), spool).expect("compiles");
    let progress = Progress::default();
    let spec = IterationSpec {
        plan: &plan,
        target,
        cache: CacheMode::Drop,
        replay: ReplayOptions::default(),
        spool_dir: spool,
        records_path: None,
        progress: &progress,
        drop_all_caches: false,
        record_sink: None,
    };
    let r = run_iteration(&spec, 1).expect("runs");
    assert_eq!(progress.prepared_bytes.load(Ordering::Relaxed), PREPARED);
    r
}

/// Checks what the run measured against what the trace asked for.
pub fn check_counts(r: &IterationResult, trace: &Trace) {
    assert_eq!(r.errors, 0, "{:?}", r.op_stats);
    assert!(r.aborted.is_none(), "{:?}", r.aborted);
    for k in OpKind::ALL {
        let want = trace
            .ops
            .iter()
            .filter(|o| o.kind == k && !o.warmup)
            .count() as u64;
        let got = r.op(k.name()).map(|s| s.count).unwrap_or(0);
        assert_eq!(got, want, "{k} ops");
    }
    assert_eq!(r.bytes_read, PREPARED);
    assert_eq!(r.bytes_written, WRITES * CHUNK + 1000);
}

/// Checks the server's own file system holds what the workload left.
pub fn check_server_files(share_dir: &Path, workload: &str) {
    let dir = naslab_lab::layout::workload_dir(share_dir, workload);
    let meta = |p: &str| std::fs::metadata(dir.join(p));
    assert_eq!(
        meta("in/video.bin").unwrap().len(),
        PREPARED,
        "prepared by the backend"
    );
    assert_eq!(
        meta("new/final.bin").unwrap().len(),
        WRITES * CHUNK,
        "renamed, all bytes"
    );
    assert!(meta("new/data.bin").is_err(), "renamed away");
    assert!(meta("new/tmp.bin").is_err(), "unlinked");
    assert!(
        share_dir.join("naslab/.naslab-owned").is_file(),
        "marked as naslab's"
    );
}
