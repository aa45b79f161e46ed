//! Each protocol backend against a real server the lab starts: a small workload's op
//! counts and bytes, checked against what the server's file system then holds; the
//! sandbox rules over the protocol; a lost connection; and `down` after a crash.
//! Needs root (loop devices, mounts, servers): skipped with a note otherwise.

#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::Duration;

use common::*;
use naslab_engine::backend::{ClientProfile, HINT_STRIDE_BYTES, ProfiledTarget};
use naslab_engine::{BackendOptions, OpenHow, Target};
use naslab_lab::{FsKind, ServerKind};
use naslab_targets::url::{ClientOptions, RemoteUrl};
use naslab_targets::{Nfs4Target, NfsTarget, SmbTarget};

#[test]
fn smb_backend_runs_every_op_and_the_server_holds_the_bytes() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Ext4, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    let target = smb(&st);
    let trace = small_trace("SmbSmall", true);
    let r = run(&trace, &target, base.path());
    check_counts(&r, &trace);
    check_server_files(&st.share_dir, "SmbSmall");
    drop(target);
    let procs = st.processes.clone();
    guard.down().unwrap();
    assert!(procs.iter().all(|p| !p.alive()), "smbd stopped");
    assert!(
        naslab_lab::fs::mount_options(st.mount.as_ref().unwrap()).is_none(),
        "unmounted"
    );
}

/// One op of 5 MiB + 12,345 bytes written at an odd offset and read back past the
/// file's end, through `target`: the server's file (read without a flush or COMMIT) and
/// the bytes read must be what was written, each piece in its place.
fn large_op_round_trip(target: &dyn Target, share_dir: &std::path::Path, round: usize, what: &str) {
    // Not a whole number of pieces, of credits or of pages, at an odd offset: every
    // piece's place in the file and in the op's buffer shows.
    let len = (5 << 20) + 12_345;
    let at = 7u64;
    let (mut b, h) = one_open_file(target, "Pieces");
    let data: Vec<u8> = (0..len)
        .map(|i| (i * 131 + i / 4096 + round) as u8)
        .collect();
    assert_eq!(b.write(h, at, &data).unwrap(), len, "{what}");
    let on_server = std::fs::read(share_dir.join("naslab/Pieces/data.bin")).expect("the file");
    assert_eq!(on_server.len(), at as usize + len, "{what}");
    assert!(
        on_server[at as usize..] == data[..],
        "{what}: the server's bytes differ from those written"
    );
    // A read past the end gives what the file has, each piece in its place.
    let mut buf = vec![0u8; len + (3 << 20)];
    assert_eq!(b.read(h, at, &mut buf).unwrap(), len, "{what}");
    assert!(
        buf[..len] == data[..],
        "{what}: the bytes read differ from those written"
    );
    assert!(buf[len..].iter().all(|&x| x == 0), "{what}");
    assert_eq!(b.read(h, at + len as u64, &mut buf).unwrap(), 0, "{what}");
    b.close(h).unwrap();
}

#[test]
fn a_large_smb_op_sent_in_pieces_moves_every_byte_in_its_place() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    for (round, in_flight) in [1usize, 3, 8, 16].into_iter().enumerate() {
        let target = smb_with(
            &st,
            ClientOptions {
                smb_in_flight: in_flight,
                ..ClientOptions::default()
            },
        )
        .expect("smb connects");
        large_op_round_trip(
            &target,
            &st.share_dir,
            round,
            &format!("in flight {in_flight}"),
        );
    }
}

/// Over NFS an op of more than 1 MiB goes as several READs or WRITEs in turn
/// (`MAX_XFER`; nfs-ganesha offers far more).
#[test]
fn a_large_nfs_op_sent_in_requests_of_one_mib_moves_every_byte_in_its_place() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let target = nfs(&st.url);
    large_op_round_trip(&target, &st.share_dir, 0, "nfs");
}

#[test]
fn nfs_backend_runs_every_op_and_the_server_holds_the_bytes() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Ext4, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let target = nfs(&st.url);
    assert!(!target.caps().can(naslab_trace::OpKind::Fallocate));
    let trace = small_trace("NfsSmall", false);
    let r = run(&trace, &target, base.path());
    check_counts(&r, &trace);
    check_server_files(&st.share_dir, "NfsSmall");
    // A second iteration starts from an emptied directory.
    let r = run(&trace, &target, base.path());
    check_counts(&r, &trace);
    drop(target);
    let procs = st.processes.clone();
    guard.down().unwrap();
    assert!(procs.iter().all(|p| !p.alive()), "ganesha stopped");
}

/// The file's modification time on the server set back to 2000, then `utime` through
/// the backend: the server's file then has a time within a minute of now.
fn utime_reaches_the_server(b: &mut dyn naslab_engine::Backend, on_server: &std::path::Path) {
    let y2000 = std::time::UNIX_EPOCH + Duration::from_secs(946_684_800);
    std::fs::File::options()
        .write(true)
        .open(on_server)
        .unwrap()
        .set_modified(y2000)
        .unwrap();
    b.utime(0).unwrap();
    let mtime = std::fs::metadata(on_server).unwrap().modified().unwrap();
    let off = match std::time::SystemTime::now().duration_since(mtime) {
        Ok(d) => d,
        Err(e) => e.duration(),
    };
    assert!(off < Duration::from_secs(60), "{mtime:?} is not now");
}

/// Byte-range locks over SMB as the server keeps them between two connections: a range
/// one holds is refused to the other at once (EAGAIN), a disjoint one is granted, an
/// unlock hands it over, an unlock of nothing held is refused (ENOLCK), and a range of
/// length 0 reaches to the end of the file. The volume query and the time setting reach
/// the server too.
#[test]
fn smb_locks_times_and_volume_queries_act_on_the_server() {
    use naslab_engine::backend::LockHow::{Exclusive, Shared, Unlock};
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    let target = smb(&st);
    let (mut a, ha) = one_open_file(&target, "Locks");
    let mut b = connect_to_data_bin(&target, "Locks");
    let hb = b
        .open(
            0,
            OpenHow {
                read: true,
                write: true,
                ..OpenHow::default()
            },
        )
        .unwrap();
    let errno = |r: Result<(), naslab_engine::OpError>| r.err().map(|e| e.errno);
    assert_eq!(errno(a.lock(ha, 0, 100, Exclusive)), None);
    assert_eq!(errno(b.lock(hb, 50, 10, Exclusive)), Some(libc::EAGAIN));
    assert_eq!(errno(b.lock(hb, 50, 10, Shared)), Some(libc::EAGAIN));
    assert_eq!(errno(b.lock(hb, 100, 50, Exclusive)), None);
    assert_eq!(errno(a.lock(ha, 0, 100, Unlock)), None);
    assert_eq!(errno(b.lock(hb, 50, 10, Exclusive)), None);
    assert_eq!(errno(a.lock(ha, 0, 100, Unlock)), Some(libc::ENOLCK));
    // Shared ranges overlap; an exclusive one inside a shared range to the end is refused.
    assert_eq!(errno(a.lock(ha, 1000, 0, Shared)), None);
    assert_eq!(errno(b.lock(hb, 2000, 10, Shared)), None);
    assert_eq!(
        errno(b.lock(hb, 1 << 40, 10, Exclusive)),
        Some(libc::EAGAIN)
    );
    // Closing a handle lets its locks go.
    a.close(ha).unwrap();
    assert_eq!(errno(b.lock(hb, 1 << 40, 10, Exclusive)), None);
    utime_reaches_the_server(&mut *b, &st.share_dir.join("naslab/Locks/data.bin"));
    b.statfs(0).unwrap();
    b.close(hb).unwrap();
}

#[test]
fn nfs_times_and_volume_queries_act_on_the_server_and_locks_are_refused_before_the_run() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let target = nfs(&st.url);
    let (mut a, h) = one_open_file(&target, "Times");
    utime_reaches_the_server(&mut *a, &st.share_dir.join("naslab/Times/data.bin"));
    a.statfs(0).unwrap();
    a.close(h).unwrap();
    let mut trace = small_trace("NfsLock", false);
    let mut lock = naslab_trace::Op::new(0, 0, naslab_trace::OpKind::Lock, 1);
    lock.len = 10;
    trace.ops.insert(1, lock);
    let e = refusal(&trace, &target, base.path());
    assert!(
        e.contains("nfs backend cannot do 'lock'") && e.contains("NLM"),
        "{e}"
    );
}

/// Two NFS labs share the one rpcbind: the first to go leaves it to the other, whose
/// export keeps answering; once both are down, no lab is counted as using it, and the
/// rpcbind naslab started is stopped unless another lab (of a test running beside this
/// one) still uses it.
#[test]
fn nfs_labs_share_one_rpcbind_and_the_last_to_go_stops_it() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let dirs = [base.path().join("one"), base.path().join("two")];
    for d in &dirs {
        std::fs::create_dir(d).unwrap();
    }
    let first = lab(&dirs[0], FsKind::Dir, ServerKind::Nfs, &[]);
    let second = lab(&dirs[1], FsKind::Dir, ServerKind::Nfs, &[]);
    let (rpcbind, users) = naslab_lab::portmap::registered().unwrap();
    let Some(rpcbind) = rpcbind else {
        // The labs use an rpcbind naslab did not start (the system's), which is never
        // stopped: nothing of the sharing to check.
        naslab_test_support::cannot_run(
            "an rpcbind naslab did not start answers on port 111; stop it to test the labs' own",
        );
        return;
    };
    let lab_dirs = [first.lab().dir.clone(), second.lab().dir.clone()];
    assert!(rpcbind.alive());
    for d in &lab_dirs {
        assert!(users.contains(d), "{d:?} not among {users:?}");
    }
    let url = second.lab().state.url.clone();
    first.down().unwrap();
    let (after_first, users) = naslab_lab::portmap::registered().unwrap();
    assert_eq!(after_first.map(|p| p.pid), Some(rpcbind.pid));
    assert!(rpcbind.alive(), "rpcbind stopped under a lab using it");
    assert!(!users.contains(&lab_dirs[0]));
    // The second lab's ganesha is still registered: a new client mounts its export.
    drop(nfs(&url));
    second.down().unwrap();
    let (after_both, users) = naslab_lab::portmap::registered().unwrap();
    assert!(lab_dirs.iter().all(|d| !users.contains(d)), "{users:?}");
    if users.is_empty() {
        assert!(
            after_both.is_none() && !rpcbind.alive(),
            "the last lab left rpcbind running"
        );
    } else {
        assert!(rpcbind.alive(), "rpcbind stopped while {users:?} use it");
    }
}

/// Why `target` refuses `trace` before the run (a trace it can run fails the test).
fn refusal(trace: &naslab_trace::Trace, target: &dyn Target, spool: &std::path::Path) -> String {
    let plan = naslab_engine::compile(
        std::path::Path::new("t.jsonl"),
        naslab_engine::records_from_trace(trace),
        spool,
    )
    .unwrap();
    naslab_engine::run::check_caps(&plan, target)
        .unwrap_err()
        .to_string()
}

#[test]
fn an_op_the_backend_lacks_fails_before_the_run_naming_backend_and_op() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let target = nfs(&guard.lab().state.url);
    let e = refusal(&small_trace("NfsFallocate", true), &target, base.path());
    assert!(e.contains("nfs backend cannot do 'fallocate'"), "{e}");
}

#[test]
fn the_windows_profile_hints_ahead_and_keeps_the_workloads_figures_honest() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Ext4, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    let target = ProfiledTarget::new(Box::new(smb(&st)), ClientProfile::Windows);
    let trace = small_trace("SmbHints", false);
    let r = run(&trace, &target, base.path());
    check_counts(&r, &trace);
    let hints = r.op("hint_write").map(|s| s.count).unwrap_or(0);
    // data.bin grows by 40 appends of 64 KiB: hints reach 15 MiB past its end, one
    // every 128 KiB; tmp.bin gets its own before its one write.
    let data_end = WRITES * CHUNK;
    let lead = naslab_engine::backend::HINT_LEAD_BYTES;
    let want = (data_end + lead) / HINT_STRIDE_BYTES + lead / HINT_STRIDE_BYTES;
    assert_eq!(hints, want, "{:?}", r.op_stats);
    assert!(r.op("hint_set_eof").is_some_and(|s| s.count >= 1));
    assert_eq!(
        r.op("write").unwrap().count,
        WRITES + 1,
        "hints are not workload writes"
    );
    // The client set the end of file back: the server holds exactly the data.
    check_server_files(&st.share_dir, "SmbHints");
}

/// Two clients on one share: the second is refused, naming the first, until the first
/// lets go; the lock is a directory on the server's disk while held, and gone after.
fn a_share_in_use_is_refused(server: ServerKind) {
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, server, &[]);
    let st = guard.lab().state.clone();
    let connect = || -> Result<Box<dyn Target>, String> {
        let url: RemoteUrl = st.url.parse().unwrap();
        match server {
            ServerKind::Samba => SmbTarget::connect(url, st.password.clone())
                .map(|t| Box::new(t) as Box<dyn Target>)
                .map_err(|e| e.to_string()),
            ServerKind::Nfs => NfsTarget::connect(url)
                .map(|t| Box::new(t) as Box<dyn Target>)
                .map_err(|e| e.to_string()),
        }
    };
    let lock = st.share_dir.join("naslab/.naslab-lock");
    let first = connect().unwrap();
    let held: Vec<String> = std::fs::read_dir(&lock)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let holder = format!("naslab pid {} on ", std::process::id());
    assert!(held.len() == 1 && held[0].starts_with(&holder), "{held:?}");
    let Err(e) = connect() else {
        panic!("a second client was let in while the first held the share");
    };
    assert!(e.contains(&format!("is in use by {}", held[0])), "{e}");
    assert!(e.contains("since 20") && e.contains(" UTC"), "{e}");
    drop(first);
    assert!(!lock.exists(), "the lock is removed when the first lets go");
    let second = connect().unwrap();
    drop(second);
    assert!(!lock.exists());
    assert!(st.share_dir.join("naslab/.naslab-owned").is_file());
}

#[test]
fn a_second_smb_client_on_a_share_in_use_is_refused_naming_the_first() {
    needs_root_and_servers!(ServerKind::Samba);
    a_share_in_use_is_refused(ServerKind::Samba);
}

#[test]
fn a_second_nfs_client_on_an_export_in_use_is_refused_naming_the_first() {
    needs_root_and_servers!(ServerKind::Nfs);
    a_share_in_use_is_refused(ServerKind::Nfs);
}

#[test]
fn a_naslab_directory_without_the_marker_is_refused_over_the_protocol() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    std::fs::create_dir(st.share_dir.join("naslab")).unwrap();
    std::fs::write(st.share_dir.join("naslab/precious.txt"), b"keep").unwrap();
    let url: RemoteUrl = st.url.parse().unwrap();
    let e = SmbTarget::connect(url, st.password.clone())
        .unwrap_err()
        .to_string();
    assert!(e.contains("was not made by naslab"), "{e}");
    assert!(st.share_dir.join("naslab/precious.txt").is_file());
    let missing: RemoteUrl = format!("{}/no/such/dir", st.url).parse().unwrap();
    let e = SmbTarget::connect(missing, st.password.clone())
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not exist"), "{e}");
}

#[test]
fn a_lost_connection_is_fatal_and_says_so() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    let target = smb(&st);
    let trace = small_trace("SmbLost", false);
    let plan = naslab_engine::compile(
        std::path::Path::new("t.jsonl"),
        naslab_engine::records_from_trace(&trace),
        base.path(),
    )
    .unwrap();
    target.fresh_workload_dir("SmbLost").unwrap();
    let mut b = target
        .connect("SmbLost", plan.files.clone(), BackendOptions::default())
        .unwrap();
    let how = OpenHow {
        write: true,
        create: true,
        truncate: true,
        ..OpenHow::default()
    };
    let h = b.open(1, how).unwrap();
    for p in &st.processes {
        p.stop(Duration::from_secs(10)).unwrap();
    }
    let e = b.write(h, 0, &[7u8; 4096]).unwrap_err();
    assert!(e.is_fatal(), "{e}");
    assert_eq!(e.errno, libc::ENOTCONN, "{e}");
}

#[test]
fn down_after_a_crash_undoes_the_lab_from_its_state_file() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    // `up` without a guard: as if naslab died right after it.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let lab = naslab_lab::up(&naslab_lab::LabOptions {
        name: "crashed".into(),
        base: base.path().to_path_buf(),
        fs: FsKind::Ext4NoDelalloc,
        server: ServerKind::Samba,
        size_bytes: 256 << 20,
        opts: vec!["strict allocate = yes".into()],
        link: None,
        client_links: Vec::new(),
    })
    .unwrap();
    assert!(
        std::fs::read_to_string(lab.dir.join("smb.conf"))
            .unwrap()
            .contains("strict allocate = yes")
    );
    let again = naslab_lab::up(&naslab_lab::LabOptions {
        name: "crashed".into(),
        base: base.path().to_path_buf(),
        fs: FsKind::Dir,
        server: ServerKind::Samba,
        size_bytes: 0,
        opts: vec![],
        link: None,
        client_links: Vec::new(),
    });
    assert!(again.unwrap_err().to_string().contains("already up"));
    let st = naslab_lab::down(base.path(), "crashed").unwrap();
    assert!(st.processes.iter().all(|p| !p.alive()));
    assert!(naslab_lab::fs::mount_options(st.mount.as_ref().unwrap()).is_none());
    let (dev, image) = (st.loop_device.unwrap(), st.image.unwrap());
    assert!(!naslab_lab::fs::backs(&dev, &image), "loop device detached");
    assert!(
        lab.dir.join("smbd.log").exists() || lab.dir.join("smbd.out").exists(),
        "logs kept"
    );
    assert!(
        naslab_lab::down(base.path(), "crashed").is_err(),
        "nothing left to take down"
    );
}

#[test]
fn an_nfs_export_of_three_components_is_found_in_the_servers_export_list() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(
        base.path(),
        FsKind::Ext4,
        ServerKind::Nfs,
        &["Pseudo = /volume1/shares/naslab", "Squash = Root_Squash"],
    );
    let st = guard.lab().state.clone();
    assert!(st.url.contains("/volume1/shares/naslab?"), "{}", st.url);
    // A directory inside the export, written naturally after it.
    let sub = st.share_dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&st.share_dir).unwrap());
    std::os::unix::fs::chown(&sub, Some(uid), None).unwrap();
    let deep = st.url.replace("/naslab?", "/naslab/sub?");
    let target = nfs(&deep);
    assert_eq!(target.url().share, "/volume1/shares/naslab");
    assert_eq!(target.url().path, "sub");
    assert_eq!(target.url().to_string(), deep, "recorded as given");
    let trace = small_trace("Deep", false);
    let r = run(&trace, &target, base.path());
    check_counts(&r, &trace);
    check_server_files(&sub, "Deep");
    drop(target);
    // A path no export holds: the error lists what the server exports.
    let wrong = st
        .url
        .replace("/volume1/shares/naslab?", "/volume2/naslab?");
    let e = NfsTarget::connect(wrong.parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no export") && e.contains("/volume1/shares/naslab"),
        "{e}"
    );
}

/// The refusal's text when naslab's NFS client connects to a ganesha export with the
/// options `opts`; refused, it must have left nothing on the server.
fn nfs_refusal(opts: &[&str]) -> String {
    let lab = TempLab::up(FsKind::Dir, ServerKind::Nfs, opts);
    let st = lab.state();
    let e = NfsTarget::connect(st.url.parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(!st.share_dir.join("naslab").exists(), "{e}");
    e
}

#[test]
fn a_read_only_export_says_so() {
    needs_root_and_servers!(ServerKind::Nfs);
    let e = nfs_refusal(&["Access_Type = RO"]);
    assert!(
        e.contains("Read-only") || e.contains("read-only") || e.contains("ROFS"),
        "{e}"
    );
}

/// Root writing into an export that squashes root, to an anonymous user who may not
/// write there: the refusal says that squashing is why, and what to do.
#[test]
fn root_refused_by_a_root_squashing_export_is_told_of_the_squash() {
    needs_root_and_servers!(ServerKind::Nfs);
    let e = nfs_refusal(&[
        "Squash = Root_Squash",
        "Anonymous_Uid = 65534",
        "Anonymous_Gid = 65534",
    ]);
    assert!(
        e.contains("NFS3ERR_ACCES") && e.contains("squashes root") && e.contains("no_root_squash"),
        "{e}"
    );
}

/// NFSv4.1 through ganesha's pseudo-file system: an export three components deep and a
/// directory inside it, reached by looking each component up from the pseudo-root; a
/// small trace's ops and bytes on the server's disk; then root refused by an export that
/// squashes it, told why.
#[test]
fn nfs_4_1_finds_a_deep_export_and_names_root_squash() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(
        base.path(),
        FsKind::Dir,
        ServerKind::Nfs,
        &["Pseudo = /volume1/shares/naslab"],
    );
    let st = guard.lab().state.clone();
    let sub = st.share_dir.join("sub");
    std::fs::create_dir(&sub).unwrap();
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(&st.share_dir).unwrap());
    std::os::unix::fs::chown(&sub, Some(uid), None).unwrap();
    let url = naslab_lab::server::nfs4_url(&st.url, "4.1").replace("/naslab?", "/naslab/sub?");
    let target = Nfs4Target::connect(url.parse().unwrap()).expect("NFSv4.1 mounts");
    assert_eq!(target.settings().minor_version, Some(1));
    let trace = small_trace("Deep4", false);
    let r = run(&trace, &target, base.path());
    check_counts(&r, &trace);
    check_server_files(&sub, "Deep4");
    drop(target);
    drop(guard);
    let lab = TempLab::up(
        FsKind::Dir,
        ServerKind::Nfs,
        &[
            "Squash = Root_Squash",
            "Anonymous_Uid = 65534",
            "Anonymous_Gid = 65534",
        ],
    );
    let st = lab.state();
    let url = naslab_lab::server::nfs4_url(&st.url, "4.1");
    let e = Nfs4Target::connect(url.parse().unwrap())
        .unwrap_err()
        .to_string();
    assert!(!st.share_dir.join("naslab").exists(), "{e}");
    assert!(
        e.contains("squashes root") && e.contains("no_root_squash"),
        "{e}"
    );
}

/// An exclusive create through `target`: it makes the file (seen on the server at
/// `on_server`), and a second one on the taken name fails with EEXIST, leaving the
/// file's bytes as they were.
fn exclusive_create_is_kept_by_the_server(target: &dyn Target, on_server: &std::path::Path) {
    target.fresh_workload_dir("Excl").unwrap();
    let mut b = connect_to_data_bin(target, "Excl");
    let how = OpenHow {
        write: true,
        create: true,
        exclusive: true,
        ..OpenHow::default()
    };
    let h = b.open(0, how).unwrap();
    assert_eq!(b.write(h, 0, b"first").unwrap(), 5);
    b.close(h).unwrap();
    assert_eq!(std::fs::read(on_server).unwrap(), b"first");
    let e = b.open(0, how).unwrap_err();
    assert_eq!(e.errno, libc::EEXIST, "{e:?}");
    assert_eq!(std::fs::read(on_server).unwrap(), b"first");
    // Without `exclusive` the same create opens what is there (and empties it).
    let plain = OpenHow {
        exclusive: false,
        truncate: true,
        ..how
    };
    let h = b.open(0, plain).unwrap();
    b.close(h).unwrap();
    assert_eq!(std::fs::read(on_server).unwrap(), b"");
}

#[test]
fn an_exclusive_create_fails_on_a_taken_name_over_smb_nfs3_and_nfs4_1() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    let file = st.share_dir.join("naslab/Excl/data.bin");
    exclusive_create_is_kept_by_the_server(&smb(&st), &file);
    drop(guard);
    needs_root_and_servers!(ServerKind::Nfs);
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let file = st.share_dir.join("naslab/Excl/data.bin");
    exclusive_create_is_kept_by_the_server(&nfs(&st.url), &file);
    let url = naslab_lab::server::nfs4_url(&st.url, "4.1");
    let v4 = Nfs4Target::connect(url.parse().unwrap()).expect("NFSv4.1 mounts");
    exclusive_create_is_kept_by_the_server(&v4, &file);
}
