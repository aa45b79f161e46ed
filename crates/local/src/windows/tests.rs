//! The Windows backend and its sandbox on a temporary directory (under Wine in CI).

use std::os::windows::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use naslab_trace::{FileKind, Prepare};

use super::*;
use naslab_backend::{FileEntry, LentBuf};
use naslab_remote::remote::RemoteSandboxError;

fn entry(path: &str, kind: FileKind) -> FileEntry {
    FileEntry {
        id: None,
        path: path.into(),
        kind,
        size: 0,
        exists: false,
        prepare: Prepare::default(),
    }
}

/// A directory `d` holding the files `d/a.dat` and `d/b.dat`.
fn files() -> Arc<FileTable> {
    Arc::new(FileTable {
        entries: vec![
            entry("d", FileKind::Dir),
            entry("d/a.dat", FileKind::File),
            entry("d/b.dat", FileKind::File),
        ],
    })
}

fn create() -> OpenHow {
    OpenHow {
        read: true,
        write: true,
        create: true,
        ..OpenHow::default()
    }
}

fn connected(target: &WindowsTarget) -> Box<dyn Backend> {
    target.fresh_workload_dir("w").unwrap();
    target
        .connect("w", files(), BackendOptions::default())
        .unwrap()
}

#[test]
fn makes_marks_and_holds_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let first = WindowsTarget::open(dir.path(), None, false).unwrap();
    assert!(dir.path().join("naslab").join(".naslab-owned").is_file());
    assert_eq!(first.local_dir(), Some(first.root()));
    let e = WindowsTarget::open(dir.path(), None, false).err().unwrap();
    assert!(matches!(e, RemoteSandboxError::InUse { .. }), "{e}");
    drop(first);
    WindowsTarget::open(dir.path(), None, false).unwrap();
}

#[test]
fn refuses_a_naslab_directory_it_did_not_make() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("naslab")).unwrap();
    std::fs::write(dir.path().join("naslab").join("keep.txt"), b"mine").unwrap();
    let e = WindowsTarget::open(dir.path(), None, false).err().unwrap();
    assert!(matches!(e, RemoteSandboxError::NotOurs(_)), "{e}");
    assert!(dir.path().join("naslab").join("keep.txt").is_file());
}

#[test]
fn a_missing_target_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let e = WindowsTarget::open(&dir.path().join("nope"), None, false)
        .err()
        .unwrap();
    assert!(matches!(e, RemoteSandboxError::Missing(_)), "{e}");
}

#[test]
fn every_op_does_what_it_says() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    every_op(&mut *b, dir.path());
}

/// The same ops through one relative open per entry (`OBJ_DONT_REPARSE` naming the
/// whole path), as on Windows, where the kernel refuses the reparse points on the way.
#[test]
fn every_op_does_what_it_says_through_one_open_per_entry() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    target.fresh_workload_dir("w").unwrap();
    let root = target.workload_root("w").unwrap().walking(false);
    let mut b = WindowsBackend::new(root, files(), false);
    every_op(&mut b, dir.path());
}

fn every_op(b: &mut dyn Backend, dir: &Path) {
    b.mkdir(0).unwrap();
    let exclusive = OpenHow {
        exclusive: true,
        ..create()
    };
    let h = b.open(1, exclusive).unwrap();
    assert_eq!(b.write(h, 0, &[7u8; 4096]).unwrap(), 4096);
    assert_eq!(b.write(h, 4096, b"tail").unwrap(), 4);
    let mut buf = vec![0u8; 8192];
    assert_eq!(
        b.read(h, 4000, &mut buf).unwrap(),
        100,
        "short at end of file"
    );
    assert_eq!(&buf[96..100], b"tail");
    b.fsync(h).unwrap();
    b.truncate(h, 100).unwrap();
    assert_eq!(b.stat(1).unwrap(), 100);
    b.fallocate(h, 0, 8192).unwrap();
    assert_eq!(b.stat(1).unwrap(), 8192, "fallocate grows the file");
    b.fallocate(h, 0, 10).unwrap();
    assert_eq!(b.stat(1).unwrap(), 8192, "and never shrinks it");
    b.close(h).unwrap();
    assert_eq!(b.close(h).unwrap_err().errno, crate::errno::EBADF);
    // The name is taken now: an exclusive create fails, and changes nothing.
    assert_eq!(
        b.open(1, exclusive).unwrap_err().errno,
        crate::errno::EEXIST
    );
    assert_eq!(b.stat(1).unwrap(), 8192);
    assert_eq!(b.readdir(0).unwrap(), 1);
    b.rename(1, 2).unwrap();
    assert_eq!(b.stat(1).unwrap_err().errno, crate::errno::ENOENT);
    assert_eq!(b.stat(2).unwrap(), 8192);
    b.drop_cache(2).unwrap();
    b.unlink(2).unwrap();
    assert_eq!(b.readdir(0).unwrap(), 0);
    b.unlink(0).unwrap();
    let on_disk = dir.join("naslab").join("w");
    assert_eq!(std::fs::read_dir(on_disk).unwrap().count(), 0);
}

#[test]
fn an_append_handle_writes_at_the_end_whatever_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    let h = b.open(1, create()).unwrap();
    b.write(h, 0, b"head").unwrap();
    b.close(h).unwrap();
    let append = OpenHow {
        append: true,
        ..create()
    };
    let h = b.open(1, append).unwrap();
    b.write(h, 0, b"more").unwrap();
    b.close(h).unwrap();
    let on_disk = dir.path().join("naslab").join("w").join("d").join("a.dat");
    assert_eq!(std::fs::read(on_disk).unwrap(), b"headmore");
}

#[test]
fn a_truncating_open_empties_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    let h = b.open(1, create()).unwrap();
    b.write(h, 0, b"0123456789").unwrap();
    b.close(h).unwrap();
    let h = b
        .open(
            1,
            OpenHow {
                truncate: true,
                ..create()
            },
        )
        .unwrap();
    b.close(h).unwrap();
    assert_eq!(b.stat(1).unwrap(), 0);
}

#[test]
fn a_file_with_a_second_name_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    let wd = dir.path().join("naslab").join("w").join("d");
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, b"keep me").unwrap();
    std::fs::hard_link(&outside, wd.join("a.dat")).unwrap();
    let how = OpenHow {
        truncate: true,
        ..create()
    };
    let e = b.open(1, how).unwrap_err();
    assert_eq!(e.errno, crate::errno::EMLINK, "{e}");
    assert!(e.is_fatal());
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep me");
    // Nor are its times set: they are the outside file's too.
    let e = b.utime(1).unwrap_err();
    assert_eq!(e.errno, crate::errno::EMLINK, "{e}");
}

#[test]
fn a_directory_where_the_workload_has_a_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    std::fs::create_dir(dir.path().join("naslab").join("w").join("d").join("a.dat")).unwrap();
    let e = b.open(1, create()).unwrap_err();
    assert_eq!(e.errno, crate::errno::EISDIR, "{e}");
}

#[test]
fn direct_io_counts_the_unaligned_ops_it_sends_through_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    target.fresh_workload_dir("w").unwrap();
    target.check_direct("w").unwrap();
    let opts = BackendOptions {
        direct: true,
        ..BackendOptions::default()
    };
    let mut b = target.connect("w", files(), opts).unwrap();
    b.mkdir(0).unwrap();
    let h = b.open(1, create()).unwrap();
    assert_eq!(b.write(h, 1, b"x").unwrap(), 1);
    let mut one = [0u8; 1];
    assert_eq!(b.read(h, 1, &mut one).unwrap(), 1);
    assert_eq!(&one, b"x");
    assert_eq!(b.unaligned_direct_ops(), 2);
    b.close(h).unwrap();
}

#[test]
fn win32_errors_are_counted_under_posix_names() {
    use windows_sys::Win32::Foundation as w;
    let cases = [
        (w::ERROR_FILE_NOT_FOUND, "ENOENT"),
        (w::ERROR_PATH_NOT_FOUND, "ENOENT"),
        (w::ERROR_ACCESS_DENIED, "EACCES"),
        (w::ERROR_ALREADY_EXISTS, "EEXIST"),
        (w::ERROR_DISK_FULL, "ENOSPC"),
        (w::ERROR_DIR_NOT_EMPTY, "ENOTEMPTY"),
        (w::ERROR_NETNAME_DELETED, "ENOTCONN"),
        (w::ERROR_CANT_ACCESS_FILE, "ELOOP"),
        (w::ERROR_LOCK_VIOLATION, "EAGAIN"),
        (w::ERROR_NOT_LOCKED, "ENOLCK"),
    ];
    for (code, name) in cases {
        assert_eq!(
            naslab_backend::errno_name(errno_of(code as i32)),
            name,
            "{code}"
        );
    }
}

/// Puts a link to `to` at `at`: under Wine a Unix symbolic link (Wine follows those
/// itself, below the Windows API), made by the Unix `ln`; on Windows a junction for a
/// directory, a symbolic link for a file (which needs the privilege, or developer
/// mode). Waits (bounded) until the link is there, as Wine starts a Unix program
/// without a process handle to wait on.
fn link(to: &Path, at: &Path, dir: bool) {
    if super::nt::under_wine() {
        unix(r#"ln -s "$1" "$2""#, &[&unix_name(to), &unix_name(at)], at);
    } else if dir {
        let status = std::process::Command::new("cmd")
            .args(["/C", "mklink", "/J"])
            .arg(at)
            .arg(to)
            .status()
            .unwrap();
        assert!(status.success(), "mklink /J failed");
    } else {
        std::os::windows::fs::symlink_file(to, at).unwrap();
    }
}

/// Runs `script` with `args` in the Unix shell from under Wine and waits (bounded)
/// until it is done: Wine starts a Unix program but reports no handle to wait on, so the
/// shell leaves a mark next to `near` when done, and that is waited for.
fn unix(script: &str, args: &[&str], near: &Path) {
    let mark = near.with_extension("done");
    let script = format!(r#"{script} && : > "$0""#);
    let _ = std::process::Command::new("/bin/sh")
        .args(["-c", &script, &unix_name(&mark)])
        .args(args)
        .status();
    for _ in 0..600 {
        if std::fs::remove_file(&mark).is_ok() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("'{script}' did not finish");
}

/// Removes the links the test put under `dir`, so the temporary directory can go (under
/// Wine only: removing it through a Unix symbolic link would not remove the link).
fn remove_links(dir: &Path) {
    if super::nt::under_wine() {
        unix(r#"find "$1" -type l -delete"#, &[&unix_name(dir)], dir);
    }
}

/// The Unix path Wine gives a Windows path (its `Z:` drive is `/`).
fn unix_name(p: &Path) -> String {
    let p = std::fs::canonicalize(p.parent().unwrap())
        .unwrap()
        .join(p.file_name().unwrap());
    let s = p.to_string_lossy().replace('\\', "/");
    let s = s.strip_prefix("//?/").unwrap_or(&s);
    let rest = s
        .strip_prefix("Z:")
        .or_else(|| s.strip_prefix("z:"))
        .unwrap_or_else(|| panic!("{s} is not on Wine's Z: drive"));
    rest.to_string()
}

/// A temporary directory links can be made in: under Wine on its Z: drive (the Unix
/// file system), where `ln` can put them.
fn linkable_tempdir() -> tempfile::TempDir {
    if super::nt::under_wine() {
        tempfile::tempdir_in("Z:\\tmp").unwrap()
    } else {
        tempfile::tempdir().unwrap()
    }
}

/// A directory of the workload swapped for a link to a directory outside it, after the
/// workload made it and before a create in it: nothing is made outside, and the run
/// stops.
#[test]
fn a_directory_swapped_for_a_link_mid_run_is_not_followed() {
    let tmp = linkable_tempdir();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let base = tmp.path().join("target");
    std::fs::create_dir(&base).unwrap();
    let target = WindowsTarget::open(&base, None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    let d = base.join("naslab").join("w").join("d");
    std::fs::remove_dir(&d).unwrap();
    link(&outside, &d, true);
    let e = b.open(1, create()).unwrap_err();
    let made: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(made.is_empty(), "made outside the workload: {made:?}");
    assert!(
        [crate::errno::ELOOP, crate::errno::EXDEV].contains(&e.errno),
        "{e}"
    );
    assert!(e.is_fatal());
    // A directory made in it, a stat and a listing do not go through it either.
    assert!(b.mkdir(0).is_err());
    assert_eq!(b.readdir(0).unwrap_err().errno, crate::errno::ELOOP);
    assert_eq!(b.stat(1).unwrap_err().errno, crate::errno::ELOOP);
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    remove_links(tmp.path());
}

/// A link put at a file's name: a create does not make the file it names (even one
/// that does not exist yet), an open does not empty it, and an unlink or a rename
/// leaves it and what it names alone.
#[test]
fn a_link_at_a_files_name_is_not_followed() {
    let tmp = linkable_tempdir();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let kept = outside.join("kept.txt");
    std::fs::write(&kept, b"keep me").unwrap();
    let base = tmp.path().join("target");
    std::fs::create_dir(&base).unwrap();
    let target = WindowsTarget::open(&base, None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    let d = base.join("naslab").join("w").join("d");
    // A link to a file not made yet: the create must not make it.
    link(&outside.join("new.txt"), &d.join("a.dat"), false);
    let e = b.open(1, create()).unwrap_err();
    assert_eq!(e.errno, crate::errno::ELOOP, "{e}");
    assert!(!outside.join("new.txt").exists(), "made through the link");
    // A link to a file that is there: not emptied, not removed, not renamed over.
    set_mtime_to_2000(&kept);
    link(&kept, &d.join("b.dat"), false);
    let truncating = OpenHow {
        truncate: true,
        ..create()
    };
    assert_eq!(
        b.open(2, truncating).unwrap_err().errno,
        crate::errno::ELOOP
    );
    assert_eq!(b.stat(2).unwrap_err().errno, crate::errno::ELOOP);
    assert_eq!(b.utime(2).unwrap_err().errno, crate::errno::ELOOP);
    assert_eq!(b.statfs(2).unwrap_err().errno, crate::errno::ELOOP);
    assert_eq!(b.unlink(2).unwrap_err().errno, crate::errno::ELOOP);
    assert_eq!(b.rename(2, 1).unwrap_err().errno, crate::errno::ELOOP);
    assert_eq!(std::fs::read(&kept).unwrap(), b"keep me");
    assert_eq!(
        std::fs::metadata(&kept).unwrap().modified().unwrap(),
        y2000(),
        "times set through the link"
    );
    let left: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["kept.txt"]);
    remove_links(tmp.path());
}

/// A file renamed into a directory swapped for a link: refused, the file stays.
#[test]
fn a_rename_into_a_directory_swapped_for_a_link_is_refused() {
    let tmp = linkable_tempdir();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let base = tmp.path().join("target");
    std::fs::create_dir(&base).unwrap();
    let target = WindowsTarget::open(&base, None, false).unwrap();
    // `a.dat` at the top, to be renamed to `d/b.dat`.
    let files = Arc::new(FileTable {
        entries: vec![
            entry("d", FileKind::Dir),
            entry("a.dat", FileKind::File),
            entry("d/b.dat", FileKind::File),
        ],
    });
    target.fresh_workload_dir("w").unwrap();
    let mut b = target
        .connect("w", files, BackendOptions::default())
        .unwrap();
    b.mkdir(0).unwrap();
    let h = b.open(1, create()).unwrap();
    b.close(h).unwrap();
    let d = base.join("naslab").join("w").join("d");
    std::fs::remove_dir(&d).unwrap();
    link(&outside, &d, true);
    let e = b.rename(1, 2).unwrap_err();
    assert_eq!(e.errno, crate::errno::ELOOP, "{e}");
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none());
    assert_eq!(b.stat(1).unwrap(), 0, "the file stays where it was");
    remove_links(tmp.path());
}

/// Links left in the workload directory: emptying it for the next iteration removes the
/// links on Windows, and refuses under Wine; never what they name.
#[test]
fn emptying_the_workload_directory_never_goes_through_a_link() {
    let tmp = linkable_tempdir();
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("kept.txt"), b"keep me").unwrap();
    let base = tmp.path().join("target");
    std::fs::create_dir(&base).unwrap();
    let target = WindowsTarget::open(&base, None, false).unwrap();
    target.fresh_workload_dir("w").unwrap();
    let w = base.join("naslab").join("w");
    link(&outside, &w.join("d"), true);
    link(&outside.join("kept.txt"), &w.join("a.dat"), false);
    let emptied = target.fresh_workload_dir("w");
    assert_eq!(std::fs::read(outside.join("kept.txt")).unwrap(), b"keep me");
    if super::nt::under_wine() {
        // Wine cannot remove a Unix symbolic link itself through the Windows API (it
        // would remove what the link names): the run is refused, naming the link.
        let e = emptied.unwrap_err();
        assert!(e.to_string().contains("remove the link by hand"), "{e}");
        remove_links(tmp.path());
    } else {
        emptied.unwrap();
        assert!(std::fs::read_dir(&w).unwrap().next().is_none());
    }
}

/// The layout after a run walks the workload's directory through checked opens: the
/// files in it and in its directories are each given once, by their path under
/// naslab's directory, and no link is entered or mapped, nor anything it names. The
/// workload's directory itself swapped for a link has no layout.
#[test]
fn the_layout_walk_follows_no_link() {
    let tmp = linkable_tempdir();
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(outside.join("deep")).unwrap();
    std::fs::write(outside.join("big"), vec![7u8; 65536]).unwrap();
    std::fs::write(outside.join("deep").join("big"), vec![7u8; 65536]).unwrap();
    let base = tmp.path().join("target");
    std::fs::create_dir(&base).unwrap();
    let target = WindowsTarget::open(&base, None, false).unwrap();
    target.fresh_workload_dir("w").unwrap();
    let w = base.join("naslab").join("w");
    std::fs::write(w.join("a"), vec![1u8; 8192]).unwrap();
    std::fs::create_dir(w.join("d")).unwrap();
    std::fs::write(w.join("d").join("new"), vec![2u8; 4096]).unwrap();
    link(&outside, &w.join("sub"), true);
    link(&outside.join("big"), &w.join("link"), false);
    link(&outside, &w.join("d").join("sub"), true);
    let mut seen = Vec::new();
    let skipped = target
        .walk_layout("w", &mut |path, r| {
            // Under Wine no file reports extents; on NTFS each maps its bytes.
            match r {
                Ok(f) => assert!(f.size_bytes == 8192 || f.size_bytes == 4096, "{f:?}"),
                Err(e) => assert!(
                    matches!(e, naslab_layout::LayoutError::Unsupported { .. }),
                    "{}: {e}",
                    path.display()
                ),
            }
            seen.push(path.strip_prefix(&w).unwrap().to_path_buf());
        })
        .expect("a directory target walks")
        .unwrap();
    assert!(skipped.is_empty(), "{skipped:?}");
    seen.sort();
    assert_eq!(
        seen,
        [Path::new("a").to_path_buf(), Path::new("d").join("new")]
    );

    // The workload's directory swapped for a link: nothing is walked.
    remove_links(tmp.path());
    std::fs::remove_dir_all(&w).unwrap();
    link(&outside, &w, true);
    let mut opened = 0;
    assert!(target.walk_layout("w", &mut |_, _| opened += 1).is_none());
    assert_eq!(opened, 0);
    remove_links(tmp.path());
}

/// The ops of trace format 2 are offered; only links are not.
#[test]
fn the_backend_offers_every_op_but_links() {
    let lacks: Vec<OpKind> = OpKind::ALL
        .into_iter()
        .filter(|k| !WINDOWS_CAPS.can(*k))
        .collect();
    assert_eq!(lacks, [OpKind::Link, OpKind::Symlink]);
}

/// Two handles of one file, as two streams (two clients) hold them: locks conflict
/// between them, never wait, and go with the handle.
#[test]
fn byte_range_locks_conflict_between_handles_and_never_wait() {
    use crate::errno::{EAGAIN, ENOLCK};
    use LockHow::{Exclusive, Shared, Unlock};
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    let one = b.open(1, create()).unwrap();
    assert_eq!(b.write(one, 0, &[1u8; 8192]).unwrap(), 8192);
    let two = b.open(1, create()).unwrap();
    let failed = |r: Result<(), OpError>| r.unwrap_err().errno;

    // An exclusive range: the other handle's overlapping locks fail at once, a
    // disjoint one is granted.
    b.lock(one, 0, 4096, Exclusive).unwrap();
    assert_eq!(failed(b.lock(two, 100, 10, Exclusive)), EAGAIN);
    assert_eq!(failed(b.lock(two, 4000, 200, Shared)), EAGAIN);
    b.lock(two, 4096, 4096, Exclusive).unwrap();
    // Unlocked, the range goes to the other handle.
    b.lock(one, 0, 4096, Unlock).unwrap();
    b.lock(two, 0, 4096, Exclusive).unwrap();
    // An unlock of a range this handle does not hold.
    assert_eq!(failed(b.lock(one, 0, 4096, Unlock)), ENOLCK);
    b.lock(two, 0, 4096, Unlock).unwrap();
    b.lock(two, 4096, 4096, Unlock).unwrap();

    // Shared ranges overlap; an exclusive one over them does not.
    b.lock(one, 0, 100, Shared).unwrap();
    b.lock(two, 50, 100, Shared).unwrap();
    assert_eq!(failed(b.lock(two, 0, 10, Exclusive)), EAGAIN);
    b.lock(one, 0, 100, Unlock).unwrap();
    b.lock(two, 50, 100, Unlock).unwrap();

    // Length 0: from the offset to the end of the file, however far it grows.
    b.lock(one, 8192, 0, Exclusive).unwrap();
    assert_eq!(failed(b.lock(two, 1 << 40, 1, Exclusive)), EAGAIN);
    assert_eq!(failed(b.lock(two, 8192, 1, Shared)), EAGAIN);
    b.lock(two, 0, 8192, Exclusive).unwrap();
    b.lock(two, 0, 8192, Unlock).unwrap();

    // Closing a handle lets go of its locks.
    b.close(one).unwrap();
    b.lock(two, 1 << 40, 1, Exclusive).unwrap();
    // Unlike POSIX locks, a handle's own ranges conflict too (and are not merged).
    assert_eq!(failed(b.lock(two, 8192, 0, Exclusive)), EAGAIN);
    b.lock(two, 1 << 40, 1, Unlock).unwrap();
    b.lock(two, 8192, 0, Exclusive).unwrap();
    b.close(two).unwrap();
    assert_eq!(failed(b.lock(two, 0, 1, Exclusive)), crate::errno::EBADF);
}

/// A read through another handle into a locked range: refused on Windows (its locks
/// are mandatory) and counted as the lock's own conflict is; Wine's locks are advisory,
/// as Linux's are, so the read goes through there.
#[test]
fn a_read_into_a_range_another_handle_locked_fails_with_eagain_on_windows() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    let one = b.open(1, create()).unwrap();
    b.write(one, 0, &[1u8; 8192]).unwrap();
    let two = b.open(1, create()).unwrap();
    b.lock(one, 0, 4096, LockHow::Exclusive).unwrap();
    let mut buf = [0u8; 16];
    let locked = b.read(two, 0, &mut buf);
    if super::nt::under_wine() {
        assert_eq!(locked.unwrap(), 16);
    } else {
        assert_eq!(locked.unwrap_err().errno, crate::errno::EAGAIN);
    }
    assert_eq!(b.read(two, 4096, &mut buf).unwrap(), 16);
}

/// 1 January 2000, 00:00 UTC.
fn y2000() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(946_684_800)
}

/// Sets a file's or directory's modification time to 1 January 2000.
fn set_mtime_to_2000(path: &Path) {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_FLAG_BACKUP_SEMANTICS, FILE_WRITE_ATTRIBUTES,
    };
    std::fs::OpenOptions::new()
        .access_mode(FILE_WRITE_ATTRIBUTES)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
        .unwrap()
        .set_modified(y2000())
        .unwrap();
    assert_eq!(
        std::fs::metadata(path).unwrap().modified().unwrap(),
        y2000(),
        "{}",
        path.display()
    );
}

/// Whether `path`'s modification time is within a minute of now.
fn modified_about_now(path: &Path) -> bool {
    let m = std::fs::metadata(path).unwrap().modified().unwrap();
    let now = std::time::SystemTime::now();
    let off = now.duration_since(m).unwrap_or_else(|e| e.duration());
    off < std::time::Duration::from_secs(60)
}

#[test]
fn utime_sets_a_file_and_a_directory_to_now() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    let h = b.open(1, create()).unwrap();
    b.close(h).unwrap();
    let d = dir.path().join("naslab").join("w").join("d");
    let file = d.join("a.dat");
    set_mtime_to_2000(&file);
    set_mtime_to_2000(&d);
    b.utime(1).unwrap();
    assert!(modified_about_now(&file));
    b.utime(0).unwrap();
    assert!(modified_about_now(&d));
    assert_eq!(b.utime(2).unwrap_err().errno, crate::errno::ENOENT);
}

#[test]
fn statfs_asks_the_volume_of_a_file_and_of_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    let h = b.open(1, create()).unwrap();
    b.close(h).unwrap();
    b.statfs(1).unwrap();
    b.statfs(0).unwrap();
    assert_eq!(b.statfs(2).unwrap_err().errno, crate::errno::ENOENT);
}

/// The volume's size the query gives is the one `GetDiskFreeSpaceExW` gives of the
/// same directory.
#[test]
fn the_volume_query_gives_the_size_windows_reports() {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_FLAG_BACKUP_SEMANTICS, FILE_READ_ATTRIBUTES, GetDiskFreeSpaceExW,
    };
    let dir = tempfile::tempdir().unwrap();
    let f = std::fs::OpenOptions::new()
        .access_mode(FILE_READ_ATTRIBUTES)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(dir.path())
        .unwrap();
    let v = super::nt::volume_full_size(&f).unwrap();
    assert!(v.total_units > 0 && v.sectors_per_unit > 0, "{v:?}");
    assert!(v.free_units <= v.total_units, "{v:?}");
    let mut path: Vec<u16> = dir.path().as_os_str().encode_wide().collect();
    path.push(0);
    let mut total = 0u64;
    // SAFETY: path is NUL-terminated; total is ours; the other counts are not asked.
    let ok = unsafe {
        GetDiskFreeSpaceExW(
            path.as_ptr(),
            std::ptr::null_mut(),
            &mut total,
            std::ptr::null_mut(),
        )
    };
    assert_ne!(ok, 0, "{}", std::io::Error::last_os_error());
    let unit = u64::from(v.sectors_per_unit) * u64::from(v.bytes_per_sector);
    assert_eq!(v.total_units as u64 * unit, total, "{v:?}");
}

/// A stream's backend with its completion port for `depth` ops, made before any file is
/// opened, as the replay asks for it.
fn queued(target: &WindowsTarget, depth: u32, memory: &IoMemory) -> WindowsBackend {
    target.fresh_workload_dir("w").unwrap();
    let root = target.workload_root("w").unwrap();
    let mut b = WindowsBackend::new(root, files(), false);
    assert!(b.queued(depth, memory).is_ok());
    b
}

/// `n` blocks lent to a queue, block `i` as region `i`.
fn lent_blocks(n: usize) -> (Vec<Arc<LentBuf>>, IoMemory) {
    let bufs: Vec<Arc<LentBuf>> = (0..n)
        .map(|_| Arc::new(LentBuf::try_zeroed(BLOCK).unwrap()))
        .collect();
    let regions = bufs
        .iter()
        .map(|b| Arc::clone(b) as Arc<dyn naslab_backend::IoRegion>)
        .collect();
    (bufs, IoMemory::new(regions))
}

/// The whole of lent block `region`.
fn block(region: usize) -> IoBuf {
    IoBuf {
        region,
        offset: 0,
        len: BLOCK,
    }
}

/// Reaps until `n` completions came back; the tags in the order they came, each with
/// its result.
fn reap_all(b: &mut WindowsBackend, n: usize) -> Vec<(u64, i64)> {
    let mut done = Vec::new();
    while done.len() < n {
        let before = done.len();
        b.submit_and_reap(1, &mut done).unwrap();
        assert!(done.len() > before, "a reap of at least 1 gave none");
    }
    done
}

/// 8 KiB blocks, block `i` all bytes `i + 1`.
const BLOCK: usize = 8192;

#[test]
fn queued_writes_are_all_in_flight_before_the_first_is_reaped() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let (bufs, memory) = lent_blocks(8);
    let mut b = queued(&target, 8, &memory);
    b.mkdir(0).unwrap();
    let h = b.open(1, create()).unwrap();
    for (i, buf) in bufs.iter().enumerate() {
        // SAFETY: nothing is queued yet.
        unsafe { buf.bytes_mut(0, BLOCK) }.fill(i as u8 + 1);
    }
    // Issued last block first, so the file's end is written before its start.
    for i in (0..8).rev() {
        b.queue_write(h, (i * BLOCK) as u64, block(i), i as u64)
            .unwrap();
    }
    let port = b.port.as_ref().unwrap();
    assert_eq!(
        port.in_flight(),
        8,
        "all 8 issued, none reaped, before the first reap"
    );
    let mut first = Vec::new();
    b.submit_and_reap(1, &mut first).unwrap();
    let reaped_first = first.len();
    assert!(reaped_first >= 1);
    first.extend(reap_all(&mut b, 8 - reaped_first));
    first.sort_unstable();
    let want: Vec<(u64, i64)> = (0..8).map(|i| (i, BLOCK as i64)).collect();
    assert_eq!(first, want, "each write completed once, whole");
    assert_eq!(b.port.as_ref().unwrap().in_flight(), 0);
    assert_eq!(b.port.as_ref().unwrap().most_in_flight(), 8);
    eprintln!(
        "8 writes in flight, {} still in progress when their call returned; the first reap took {reaped_first} completions",
        b.port.as_ref().unwrap().went_pending()
    );
    b.close(h).unwrap();
    let on_disk = dir.path().join("naslab").join("w").join("d").join("a.dat");
    let got = std::fs::read(on_disk).unwrap();
    assert_eq!(got.len(), 8 * BLOCK);
    for (i, block) in got.chunks(BLOCK).enumerate() {
        assert!(block.iter().all(|&x| x == i as u8 + 1), "block {i}");
    }
}

#[test]
fn queued_reads_come_back_with_their_own_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let (bufs, memory) = lent_blocks(10);
    let mut b = queued(&target, 8, &memory);
    b.mkdir(0).unwrap();
    let on_disk = dir.path().join("naslab").join("w").join("d").join("a.dat");
    let content: Vec<u8> = (0..8).flat_map(|i| vec![i as u8 + 1; BLOCK]).collect();
    std::fs::write(&on_disk, &content).unwrap();
    let h = b
        .open(
            1,
            OpenHow {
                read: true,
                ..OpenHow::default()
            },
        )
        .unwrap();
    let order = [5usize, 0, 7, 2, 6, 1, 4, 3];
    for (tag, &i) in order.iter().enumerate() {
        b.queue_read(h, (i * BLOCK) as u64, block(tag), tag as u64)
            .unwrap();
    }
    assert_eq!(b.port.as_ref().unwrap().in_flight(), 8);
    let mut done = reap_all(&mut b, 8);
    done.sort_unstable();
    let want: Vec<(u64, i64)> = (0..8).map(|t| (t, BLOCK as i64)).collect();
    assert_eq!(done, want);
    let got = |region: usize, len: usize| {
        // SAFETY: asked for only after every op that used the block was reaped.
        unsafe { bufs[region].bytes(0, len) }.to_vec()
    };
    for (tag, &i) in order.iter().enumerate() {
        assert!(
            got(tag, BLOCK).iter().all(|&x| x == i as u8 + 1),
            "read {tag} holds block {i}"
        );
    }
    // Past the end of the file: 0 bytes, as a read at the end of a file on Linux; a
    // short read at the end: the bytes there were. Then the slots serve other reads,
    // and no completion is taken for another op's.
    let (past, tail) = (8, 9);
    b.queue_read(h, (8 * BLOCK) as u64, block(past), 20)
        .unwrap();
    b.queue_read(h, (8 * BLOCK - 100) as u64, block(tail), 21)
        .unwrap();
    let mut done = reap_all(&mut b, 2);
    for tag in 0..8 {
        b.queue_read(h, 0, block(tag), 30 + tag as u64).unwrap();
    }
    done.extend(reap_all(&mut b, 8));
    done.sort_unstable();
    let mut want = vec![(20, 0), (21, 100)];
    want.extend((30..38).map(|t| (t, BLOCK as i64)));
    assert_eq!(done, want);
    assert_eq!(b.port.as_ref().unwrap().in_flight(), 0);
    assert!(got(tail, 100).iter().all(|&x| x == 8));
    assert!(got(past, BLOCK).iter().all(|&x| x == 0));
    assert!((0..8).all(|tag| got(tag, BLOCK).iter().all(|&x| x == 1)));
}

#[test]
fn a_queued_op_that_fails_at_once_comes_back_as_its_errno() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let (_bufs, memory) = lent_blocks(1);
    let mut b = queued(&target, 4, &memory);
    b.mkdir(0).unwrap();
    let h = b.open(1, create()).unwrap();
    b.write(h, 0, &[3u8; 4096]).unwrap();
    b.close(h).unwrap();
    let read_only = b
        .open(
            1,
            OpenHow {
                read: true,
                ..OpenHow::default()
            },
        )
        .unwrap();
    let four_k = IoBuf {
        region: 0,
        offset: 0,
        len: 4096,
    };
    b.queue_write(read_only, 0, four_k, 9).unwrap();
    let done = reap_all(&mut b, 1);
    assert_eq!(done, [(9, -i64::from(crate::errno::EACCES))]);
    assert_eq!(b.port.as_ref().unwrap().in_flight(), 0);
}

/// With a port, files are opened overlapped: every op that is not queued still does
/// what it says on them (the standard library waits for what the handle does).
#[test]
fn every_op_does_what_it_says_on_overlapped_handles() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = queued(&target, 8, &IoMemory::default());
    every_op(&mut b, dir.path());
}

#[test]
fn the_queue_is_refused_once_files_are_open() {
    let dir = tempfile::tempdir().unwrap();
    let target = WindowsTarget::open(dir.path(), None, false).unwrap();
    let mut b = connected(&target);
    b.mkdir(0).unwrap();
    b.open(1, create()).unwrap();
    assert_eq!(
        b.queued(8, &IoMemory::default()).err().unwrap().errno,
        crate::errno::EINVAL
    );
}

#[test]
fn the_backend_keeps_as_many_ops_in_flight_as_the_linux_one() {
    assert_eq!(WINDOWS_CAPS.max_queue_depth, 256);
}
