//! The lab's unprivileged account: every client of a lab, whoever it claims to be,
//! works as this one user, which owns the share. Samba signs it in with a password
//! generated for each lab; nfs-ganesha squashes every user (root included) to it.

use std::ffi::CString;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::error::LabError;
use crate::process::{run, tool};

/// The account's name on this machine (made by `lab up` when missing, never removed:
/// other labs may use it).
pub const LAB_USER: &str = "naslab-lab";

/// The lab account's user and group ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    pub uid: u32,
    pub gid: u32,
}

fn lookup(name: &str) -> Option<Account> {
    let c = CString::new(name).ok()?;
    // SAFETY: getpwnam takes a NUL-terminated name; the record it returns is read at
    // once, before any other call could reuse its static storage.
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return None;
    }
    // SAFETY: pw is non-null and points to a passwd record.
    let (uid, gid) = unsafe { ((*pw).pw_uid, (*pw).pw_gid) };
    Some(Account { uid, gid })
}

/// The lab account, made as a system user without a home or login shell if it does
/// not exist yet.
pub fn ensure() -> Result<Account, LabError> {
    if let Some(a) = lookup(LAB_USER) {
        return Ok(a);
    }
    let useradd = tool("useradd", "passwd")?;
    let made = run(
        &useradd,
        &[
            "--system".as_ref(),
            "--user-group".as_ref(),
            "--no-create-home".as_ref(),
            "--home-dir".as_ref(),
            "/nonexistent".as_ref(),
            "--shell".as_ref(),
            "/usr/sbin/nologin".as_ref(),
            LAB_USER.as_ref(),
        ],
    );
    // Another lab may have made it in the meantime.
    match (made, lookup(LAB_USER)) {
        (_, Some(a)) => Ok(a),
        (Err(e), None) => Err(e),
        (Ok(_), None) => Err(LabError::Command {
            command: format!("useradd {LAB_USER}"),
            status: "succeeded".into(),
            stderr: "but the account is still unknown".into(),
        }),
    }
}

/// Gives `dir` to the lab account, readable and writable by it alone (and root).
pub fn own(dir: &Path, a: Account) -> Result<(), LabError> {
    std::os::unix::fs::chown(dir, Some(a.uid), Some(a.gid)).map_err(LabError::io("chown", dir))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o770))
        .map_err(LabError::io("chmod", dir))
}

/// Checks that the lab account can reach `dir`: every directory above it must let
/// others search it, since the servers work as that account.
pub fn check_reachable(dir: &Path) -> Result<(), LabError> {
    for anc in dir.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(anc) else {
            continue;
        };
        if meta.permissions().mode() & 0o001 == 0 {
            return Err(LabError::Invalid {
                what: "lab directory",
                value: dir.display().to_string(),
                why: format!(
                    "the lab's servers work as the unprivileged '{LAB_USER}' account, which cannot pass '{}' (mode {:o}); give others search permission (chmod o+x {}) or choose another --lab-dir",
                    anc.display(),
                    meta.permissions().mode() & 0o7777,
                    anc.display()
                ),
            });
        }
    }
    Ok(())
}

/// A new random password: 24 letters and digits from the kernel's generator.
pub fn new_password() -> Result<String, LabError> {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    let path = Path::new("/dev/urandom");
    let mut f = std::fs::File::open(path).map_err(LabError::io("open", path))?;
    let mut out = String::with_capacity(24);
    let mut byte = [0u8; 1];
    while out.len() < 24 {
        f.read_exact(&mut byte)
            .map_err(LabError::io("read", path))?;
        // Rejection keeps every character equally likely.
        let limit = 256 - 256 % ALPHABET.len();
        if (byte[0] as usize) < limit {
            out.push(ALPHABET[byte[0] as usize % ALPHABET.len()] as char);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_long_random_and_plain() {
        let a = new_password().unwrap();
        let b = new_password().unwrap();
        assert_eq!(a.len(), 24);
        assert_ne!(a, b);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric()), "{a}");
    }

    #[test]
    fn a_closed_parent_is_named() {
        let d = tempfile::tempdir().unwrap();
        let inner = d.path().join("lab");
        std::fs::create_dir(&inner).unwrap();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        let e = check_reachable(&inner.join("share"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("chmod o+x"), "{e}");
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        // Once opened, the directory made here is no longer named (the temporary
        // directory's own parents may be closed on odd machines, so another may be).
        if let Err(e) = check_reachable(&inner.join("share")) {
            let e = e.to_string();
            let named = format!("cannot pass '{}'", d.path().display());
            assert!(!e.contains(&named), "{e}");
        }
    }
}
