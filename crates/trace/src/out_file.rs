//! The one way naslab opens a file it writes at a path it was given (`-o`, `--dir`,
//! `--keep-log`): a new regular file is made, an existing regular file with one name is
//! written into, and nothing else is ever written or replaced. A symbolic link, a
//! directory, a device node, a FIFO or a socket at the path is refused, and so is a
//! regular file with other names (hard links), which writing would change too.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
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
    let file = OpenOptions::new()
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
        })?;
    check(&file.metadata()?)?;
    file.set_len(0)?;
    Ok(file)
}

const KIND_LINK: &str = "a symbolic link";

/// Refuses anything but a regular file with one name.
fn check(m: &Metadata) -> io::Result<()> {
    let t = m.file_type();
    let kind = if t.is_symlink() {
        KIND_LINK
    } else if t.is_dir() {
        return Err(io::ErrorKind::IsADirectory.into());
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if m.nlink() > 1 {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "it is a file with {} names (hard links), which writing it would change too; remove it or give another name",
                m.nlink()
            ),
        ));
    } else {
        return Ok(());
    };
    Err(refused(kind))
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
