//! Arguments as `strace -yy` prints them, made from the numbers and bytes the kernel
//! side copied: the text the strace importer reads.

/// A string as strace quotes it: `"` and `\` escaped, bytes that are not printable
/// ASCII as `\xNN`.
pub fn quote(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &c in s {
        match c {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push('"');
    out
}

/// A path inside `<...>`: strace -yy escapes `>` and non-printable bytes there.
pub fn escape_annotation(p: &str) -> String {
    if p.bytes()
        .all(|c| (0x20..=0x7e).contains(&c) && c != b'>' && c != b'<' && c != b'\\')
    {
        return p.to_string();
    }
    let mut out = String::new();
    for c in p.bytes() {
        if (0x20..=0x7e).contains(&c) && c != b'>' && c != b'<' && c != b'\\' {
            out.push(c as char);
        } else {
            out.push_str(&format!("\\x{c:02x}"));
        }
    }
    out
}

/// Open flags by name (those the importer reads).
pub fn open_flags(flags: u64) -> String {
    let f = flags as i32;
    let mut parts = vec![match f & libc::O_ACCMODE {
        libc::O_WRONLY => "O_WRONLY",
        libc::O_RDWR => "O_RDWR",
        _ => "O_RDONLY",
    }];
    for (bit, name) in [
        (libc::O_CREAT, "O_CREAT"),
        (libc::O_EXCL, "O_EXCL"),
        (libc::O_TRUNC, "O_TRUNC"),
        (libc::O_APPEND, "O_APPEND"),
        (libc::O_DIRECT, "O_DIRECT"),
        (libc::O_DIRECTORY, "O_DIRECTORY"),
        (libc::O_PATH, "O_PATH"),
        (libc::O_CLOEXEC, "O_CLOEXEC"),
    ] {
        if f & bit == bit {
            parts.push(name);
        }
    }
    // O_SYNC holds O_DSYNC's bit: name the stronger one.
    if f & libc::O_SYNC == libc::O_SYNC {
        parts.push("O_SYNC");
    } else if f & libc::O_DSYNC == libc::O_DSYNC {
        parts.push("O_DSYNC");
    }
    parts.join("|")
}

/// An offset passed by pointer (`[N]`), read as the call began; `NULL` for none.
pub fn offset_word(ptr: u64, value: u64) -> String {
    if ptr == 0 {
        "NULL".into()
    } else {
        format!("[{}]", value as i64)
    }
}

/// An iovec array (`[{iov_base=..., iov_len=N}, ...]`) from its copied bytes.
pub fn iovecs(blob: &[u8]) -> String {
    let parts: Vec<String> = blob
        .chunks_exact(16)
        .map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&c[8..16]);
            format!("{{iov_base=\"\"..., iov_len={}}}", u64::from_ne_bytes(w))
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

fn mode_text(mode: u32) -> String {
    let kind = match mode & libc::S_IFMT {
        libc::S_IFDIR => "S_IFDIR",
        libc::S_IFLNK => "S_IFLNK",
        libc::S_IFCHR => "S_IFCHR",
        libc::S_IFBLK => "S_IFBLK",
        libc::S_IFIFO => "S_IFIFO",
        libc::S_IFSOCK => "S_IFSOCK",
        _ => "S_IFREG",
    };
    format!("{kind}|{:04o}", mode & 0o7777)
}

/// A struct stat's mode and size, from its copied bytes (`0x0` when the call failed).
pub fn stat_buf(blob: &[u8], ok: bool) -> String {
    if !ok || blob.len() < std::mem::size_of::<libc::stat>() {
        return "0x0".into();
    }
    // SAFETY: the blob holds at least size_of::<stat>() bytes the kernel wrote as a
    // struct stat; read_unaligned copes with the ring's alignment.
    let st: libc::stat = unsafe { std::ptr::read_unaligned(blob.as_ptr().cast()) };
    format!(
        "{{st_mode={}, st_size={}, ...}}",
        mode_text(st.st_mode),
        st.st_size
    )
}

/// A struct statx's mode and size, from its copied bytes.
pub fn statx_buf(blob: &[u8], ok: bool) -> String {
    if !ok || blob.len() < std::mem::size_of::<libc::statx>() {
        return "0x0".into();
    }
    // SAFETY: as in stat_buf, for a struct statx.
    let st: libc::statx = unsafe { std::ptr::read_unaligned(blob.as_ptr().cast()) };
    format!(
        "{{stx_mode={}, stx_size={}, ...}}",
        mode_text(st.stx_mode as u32),
        st.stx_size
    )
}

/// A struct flock, from its copied bytes.
pub fn flock_buf(blob: &[u8]) -> String {
    if blob.len() < std::mem::size_of::<libc::flock>() {
        return "NULL".into();
    }
    // SAFETY: as in stat_buf, for a struct flock.
    let l: libc::flock = unsafe { std::ptr::read_unaligned(blob.as_ptr().cast()) };
    let kind = match l.l_type as i32 {
        libc::F_RDLCK => "F_RDLCK",
        libc::F_WRLCK => "F_WRLCK",
        _ => "F_UNLCK",
    };
    let whence = match l.l_whence as i32 {
        libc::SEEK_CUR => "SEEK_CUR",
        libc::SEEK_END => "SEEK_END",
        _ => "SEEK_SET",
    };
    format!(
        "{{l_type={kind}, l_whence={whence}, l_start={}, l_len={}}}",
        l.l_start, l.l_len
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_buffers_read_as_strace_prints_them() {
        assert_eq!(
            open_flags((libc::O_RDWR | libc::O_APPEND | libc::O_SYNC) as u64),
            "O_RDWR|O_APPEND|O_SYNC"
        );
        assert_eq!(open_flags(libc::O_DSYNC as u64), "O_RDONLY|O_DSYNC");
        assert_eq!(quote(b"a\"b\\\n"), "\"a\\\"b\\\\\\x0a\"");
        let mut iov = Vec::new();
        for len in [10u64, 20] {
            iov.extend_from_slice(&0u64.to_ne_bytes());
            iov.extend_from_slice(&len.to_ne_bytes());
        }
        assert_eq!(
            iovecs(&iov),
            "[{iov_base=\"\"..., iov_len=10}, {iov_base=\"\"..., iov_len=20}]"
        );
        assert_eq!(offset_word(0, 7), "NULL");
        assert_eq!(offset_word(0x1000, 7), "[7]");
        assert_eq!(escape_annotation("/a>b"), "/a\\x3eb");
    }
}
