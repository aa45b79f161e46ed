//! The one way naslab opens a file it writes at a path it was given (`-o`, `--dir`,
//! `--keep-log`): a new regular file is made, an existing regular file with one name is
//! written into, and nothing else is ever written or replaced. A symbolic link, a
//! directory, a device node, a FIFO or a socket at the path is refused, and so is a
//! regular file with other names (hard links), which writing would change too.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
#[cfg(unix)]
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
#[cfg(windows)]
use std::os::windows::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` for writing from its start, emptied, under the rule above. The type is
/// checked before the open (so a device or FIFO is never opened) and again on the open
/// descriptor (so a swap in between is caught).
pub fn create_output(path: &Path) -> io::Result<File> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => check(&m)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let file = open_no_follow(path)?;
    check(&file.metadata()?)?;
    check_one_name(&file)?;
    file.set_len(0)?;
    Ok(file)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        // Not following a link, not waiting for a FIFO's reader, never becoming the
        // controlling terminal.
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refused(KIND_LINK),
            Some(libc::ENXIO) => refused("a FIFO"),
            _ => e,
        })
}

/// On Windows a reparse point (symbolic link, junction, mount point) is opened itself,
/// never what it names, and then refused by [`check`].
#[cfg(windows)]
fn open_no_follow(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(windows_sys::Win32::Storage::FileSystem::FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
}

/// The number of names the open file has (its hard links).
#[cfg(unix)]
fn names_of(file: &File) -> io::Result<u64> {
    Ok(file.metadata()?.nlink())
}

#[cfg(windows)]
fn names_of(file: &File) -> io::Result<u64> {
    use std::os::windows::io::AsRawHandle;
    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
    };
    // SAFETY: all-zero is a valid BY_HANDLE_FILE_INFORMATION (plain integers).
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is the open file's own, and info is ours to fill.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(u64::from(info.nNumberOfLinks))
}

/// Refuses a file with other names (hard links), which writing would change too.
fn check_one_name(file: &File) -> io::Result<()> {
    let names = names_of(file)?;
    if names > 1 {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "it is a file with {names} names (hard links), which writing it would change too; remove it or give another name"
            ),
        ));
    }
    Ok(())
}

const KIND_LINK: &str = "a symbolic link";

/// Refuses anything but a regular file with one name.
fn check(m: &Metadata) -> io::Result<()> {
    let t = m.file_type();
    let kind = if t.is_symlink() {
        KIND_LINK
    } else if t.is_dir() {
        return Err(io::ErrorKind::IsADirectory.into());
    } else if let Some(special) = special_kind(&t) {
        special
    } else if !t.is_file() {
        "not a regular file"
    } else {
        return Ok(());
    };
    Err(refused(kind))
}

/// A device node, FIFO or socket, by name.
#[cfg(unix)]
fn special_kind(t: &std::fs::FileType) -> Option<&'static str> {
    if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// Windows has none of the kinds of entry Unix has beside files, directories and
/// links (a reparse point shows as a link).
#[cfg(windows)]
fn special_kind(_t: &std::fs::FileType) -> Option<&'static str> {
    None
}

fn refused(kind: &str) -> io::Error {
    let what = if kind == KIND_LINK {
        "naslab does not write through links: name the file itself".to_string()
    } else {
        "naslab writes only regular files, never over or through anything else: leave -o out and redirect standard output to send the output there".to_string()
    };
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("it is {kind}; {what}"),
    )
}
