//! The lab gives no local user more than the lab account: an unprivileged user who
//! claims to be root over NFS (AUTH_SYS lets any client claim any uid) and writes a
//! set-user-ID file gets a file owned by the lab account, on a file system mounted
//! nosuid and nodev; Samba lets in the lab account with its password and nobody else.
//! Needs root (loop devices, mounts, servers, switching users): skipped with a note
//! otherwise.

#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::time::Duration;

use common::*;
use naslab_lab::{FsKind, ServerKind};
use naslab_targets::SmbTarget;
use nfs3_client::Nfs3ConnectionBuilder;
use nfs3_client::io::{AsyncRead, AsyncWrite};
use nfs3_client::net::Connector;
use nfs3_client::nfs3_types::nfs3::{
    CREATE3args, LOOKUP3args, Nfs3Option, Nfs3Result, SETATTR3args, WRITE3args, createhow3,
    diropargs3, filename3, sattr3, stable_how,
};
use nfs3_client::nfs3_types::rpc::{auth_unix, opaque_auth};
use nfs3_client::nfs3_types::xdr_codec::Opaque;

/// The unprivileged user the helper runs as.
const NOBODY: u32 = 65534;
const HELPER_VAR: &str = "NASLAB_TEST_SETUID_HELPER_URL";

/// Drives a future whose I/O blocks.
fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::yield_now();
    }
}

struct Io(TcpStream);
impl AsyncRead for Io {
    async fn async_read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}
impl AsyncWrite for Io {
    async fn async_write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf)
    }
}
struct Plain;
impl Connector for Plain {
    type Connection = Io;
    async fn connect(&self, addr: SocketAddr) -> std::io::Result<Io> {
        let s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
        s.set_read_timeout(Some(Duration::from_secs(30)))?;
        Ok(Io(s))
    }
    async fn connect_with_port(&self, _a: SocketAddr, _p: u16) -> std::io::Result<Io> {
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// Run by the test below as user nobody: a naslab workload over NFS with naslab's
/// client, then, claiming uid 0, a file created set-user-ID root.
#[test]
#[ignore = "run by nfs_clients_cannot_make_setuid_root_files as an unprivileged user"]
fn setuid_helper() {
    let url = std::env::var(HELPER_VAR).expect("run by the setuid test");
    // SAFETY: getuid has no preconditions.
    assert_eq!(unsafe { libc::getuid() }, NOBODY, "runs unprivileged");
    // naslab's own client, as this unprivileged user.
    let target = nfs(&url);
    let spool = tempfile::tempdir().unwrap();
    let trace = small_trace("Unprivileged", false);
    let r = run(&trace, &target, spool.path());
    check_counts(&r, &trace);
    drop(target);
    // What any local user can send: AUTH_SYS claiming root.
    let u: naslab_targets::url::RemoteUrl = url.parse().unwrap();
    let cred = opaque_auth::auth_unix(&auth_unix {
        stamp: 1,
        machinename: Opaque::owned(b"evil".to_vec()),
        uid: 0,
        gid: 0,
        gids: vec![0],
    });
    let conn = block_on(
        Nfs3ConnectionBuilder::new(Plain, u.host.clone(), &u.share)
            .connect_from_privileged_port(false)
            .credential(cred)
            .nfs3_port(u.port.unwrap())
            .mount_port(u.mount_port.unwrap())
            .mount(),
    )
    .expect("mount claiming root");
    let root = conn.root_nfs_fh3();
    let mut c = conn.into_nfs3_client();
    let dir = match block_on(c.lookup(&LOOKUP3args {
        what: diropargs3 {
            dir: root,
            name: filename3(Opaque::borrowed(b"naslab")),
        },
    }))
    .unwrap()
    {
        Nfs3Result::Ok(ok) => ok.object,
        Nfs3Result::Err((s, _)) => panic!("lookup naslab: {s}"),
    };
    let attrs = sattr3 {
        mode: Nfs3Option::Some(0o4755),
        uid: Nfs3Option::Some(0),
        gid: Nfs3Option::Some(0),
        ..sattr3::default()
    };
    let fh = match block_on(c.create(&CREATE3args {
        where_: diropargs3 {
            dir,
            name: filename3(Opaque::borrowed(b"suid-root")),
        },
        how: createhow3::UNCHECKED(attrs.clone()),
    }))
    .unwrap()
    {
        Nfs3Result::Ok(ok) => match ok.obj {
            Nfs3Option::Some(fh) => fh,
            Nfs3Option::None => panic!("no handle"),
        },
        Nfs3Result::Err((s, _)) => panic!("create: {s}"),
    };
    let data = b"#!/bin/sh\nid\n";
    let w = block_on(c.write(&WRITE3args {
        file: fh.clone(),
        offset: 0,
        count: data.len() as u32,
        stable: stable_how::FILE_SYNC,
        data: Opaque::borrowed(data),
    }))
    .unwrap();
    assert!(matches!(w, Nfs3Result::Ok(_)), "write");
    // Ask again after the write (which clears set-user-ID on many servers); the
    // server may refuse the owner change, which is the point.
    let _ = block_on(c.setattr(&SETATTR3args {
        object: fh,
        new_attributes: attrs,
        guard: Nfs3Option::None,
    }));
}

#[test]
fn nfs_clients_cannot_make_setuid_root_files() {
    needs_root_and_servers!(ServerKind::Nfs);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Ext4, ServerKind::Nfs, &[]);
    let st = guard.lab().state.clone();
    let mount = st.mount.as_ref().unwrap();
    let opts = naslab_lab::fs::mount_options(mount).unwrap();
    assert!(
        opts.split(',').any(|o| o == "nosuid") && opts.split(',').any(|o| o == "nodev"),
        "{opts}"
    );
    // The test binary itself, as user nobody.
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(&exe)
        .args(["--exact", "setuid_helper", "--ignored", "--nocapture"])
        .env(HELPER_VAR, &st.url)
        .env("TMPDIR", "/tmp")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && text.contains("1 passed"), "{text}");
    let lab_uid = std::fs::metadata(&st.share_dir).unwrap().uid();
    assert_ne!(lab_uid, 0, "the share belongs to the lab account");
    let f = st.share_dir.join("naslab/suid-root");
    let meta = std::fs::metadata(&f).expect("the helper made it");
    assert_eq!(meta.uid(), lab_uid, "squashed to the lab account, not root");
    assert_ne!(meta.gid(), 0);
    assert!(
        meta.uid() != 0 || meta.permissions().mode() & 0o4000 == 0,
        "set-user-ID root"
    );
    // Everything naslab's client wrote as nobody is the lab account's too.
    let dir = naslab_lab::layout::workload_dir(&st.share_dir, "Unprivileged");
    check_server_files(&st.share_dir, "Unprivileged");
    for e in walk(&dir) {
        assert_eq!(
            std::fs::symlink_metadata(&e).unwrap().uid(),
            lab_uid,
            "{}",
            e.display()
        );
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            out.extend(walk(&e.path()));
        } else {
            out.push(e.path());
        }
    }
    out
}

#[test]
fn samba_lets_in_the_lab_account_with_its_password_only() {
    needs_root_and_servers!(ServerKind::Samba);
    let base = tempfile::tempdir().unwrap();
    let guard = lab(base.path(), FsKind::Dir, ServerKind::Samba, &[]);
    let st = guard.lab().state.clone();
    assert!(
        st.url.starts_with("smb://naslab-lab@127.0.0.1:"),
        "{}",
        st.url
    );
    assert_eq!(st.password.len(), 24);
    let state_text = std::fs::read_to_string(guard.lab().dir.join("state.json")).unwrap();
    assert!(state_text.contains(&st.password), "kept in the lab's state");
    let conf = std::fs::read_to_string(guard.lab().dir.join("smb.conf")).unwrap();
    assert!(!conf.contains(&st.password) && !conf.contains("force user"));
    // A guest is refused, and so is a wrong password, saying which.
    let guest: naslab_targets::url::RemoteUrl = st.url.replace("naslab-lab@", "").parse().unwrap();
    assert!(
        SmbTarget::connect(guest, String::new()).is_err(),
        "guest refused"
    );
    let e = SmbTarget::connect(st.url.parse().unwrap(), "wrong".into())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("user 'naslab-lab'") && e.contains("wrong user name or password"),
        "{e}"
    );
    let target = smb(&st);
    let spool = tempfile::tempdir().unwrap();
    let trace = small_trace("SmbUser", false);
    check_counts(&run(&trace, &target, spool.path()), &trace);
    check_server_files(&st.share_dir, "SmbUser");
    let lab_uid = std::fs::metadata(&st.share_dir).unwrap().uid();
    assert_ne!(lab_uid, 0);
    for e in walk(&naslab_lab::layout::workload_dir(&st.share_dir, "SmbUser")) {
        assert_eq!(
            std::fs::metadata(&e).unwrap().uid(),
            lab_uid,
            "{}",
            e.display()
        );
    }
}
