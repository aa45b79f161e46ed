//! The one fact the kernel side needs from the kernel's own type information (BTF, in
//! /sys/kernel/btf/vmlinux): where `struct task_struct` holds `pid`. Read with a
//! minimal walk of the BTF type section rather than a full parse, which would cost
//! every capture tens of ms.

use std::os::fd::AsRawFd;

const MAGIC: u16 = 0xeb9f;

/// The kernel's BTF file, mapped where the kernel allows it (Linux 6.16 and later, for
/// a private read-only mapping), else read whole. sysfs gives the file 4 KiB per `read`,
/// so reading its 5 MB takes some 1,300 calls; mapped, only the pages walked are touched.
pub enum KernelBtf {
    Mapped { at: *mut libc::c_void, len: usize },
    Read(Vec<u8>),
}

impl KernelBtf {
    pub fn open(path: &str) -> std::io::Result<KernelBtf> {
        let file = std::fs::File::open(path)?;
        let len = file.metadata()?.len() as usize;
        if len > 0 {
            // SAFETY: a new private read-only mapping of an open file's whole length; the
            // pointer is checked before use and unmapped once, in Drop.
            let at = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE,
                    file.as_raw_fd(),
                    0,
                )
            };
            if at != libc::MAP_FAILED {
                return Ok(KernelBtf::Mapped { at, len });
            }
        }
        std::fs::read(path).map(KernelBtf::Read)
    }

    pub fn bytes(&self) -> &[u8] {
        match self {
            // SAFETY: the mapping is `len` readable bytes and lives as long as `self`.
            KernelBtf::Mapped { at, len } => unsafe {
                std::slice::from_raw_parts(at.cast::<u8>(), *len)
            },
            KernelBtf::Read(v) => v,
        }
    }
}

impl Drop for KernelBtf {
    fn drop(&mut self) {
        if let KernelBtf::Mapped { at, len } = *self {
            // SAFETY: the mapping made in `open`, unmapped only here.
            unsafe { libc::munmap(at, len) };
        }
    }
}
const KIND_STRUCT: u32 = 4;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let w = b.get(at..at + 4)?;
    Some(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

fn name_at(strings: &[u8], off: u32) -> &[u8] {
    let s = strings.get(off as usize..).unwrap_or(&[]);
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    &s[..end]
}

/// The byte offset of `member` in the struct `name`, from raw BTF (little-endian, as
/// on x86_64).
pub fn member_offset(btf: &[u8], name: &str, member: &str) -> Result<u32, String> {
    let magic = u16::from_le_bytes([*btf.first().unwrap_or(&0), *btf.get(1).unwrap_or(&0)]);
    if magic != MAGIC {
        return Err("the kernel's BTF has an unknown format".into());
    }
    let bad = || "the kernel's BTF is cut short".to_string();
    let hdr_len = u32_at(btf, 4).ok_or_else(bad)? as usize;
    let type_off = u32_at(btf, 8).ok_or_else(bad)? as usize;
    let type_len = u32_at(btf, 12).ok_or_else(bad)? as usize;
    let str_off = u32_at(btf, 16).ok_or_else(bad)? as usize;
    let str_len = u32_at(btf, 20).ok_or_else(bad)? as usize;
    let types = btf
        .get(hdr_len + type_off..hdr_len + type_off + type_len)
        .ok_or_else(bad)?;
    let strings = btf
        .get(hdr_len + str_off..hdr_len + str_off + str_len)
        .ok_or_else(bad)?;
    let mut at = 0;
    while at + 12 <= types.len() {
        let name_off = u32_at(types, at).ok_or_else(bad)?;
        let info = u32_at(types, at + 4).ok_or_else(bad)?;
        let kind = (info >> 24) & 0x1f;
        let vlen = (info & 0xffff) as usize;
        let kind_flag = info >> 31 == 1;
        at += 12;
        // What follows each kind's common part.
        let extra = match kind {
            1 | 14 | 17 => 4,             // INT, VAR, DECL_TAG
            3 => 12,                      // ARRAY
            4 | 5 | 15 | 19 => vlen * 12, // STRUCT, UNION, DATASEC, ENUM64
            6 | 13 => vlen * 8,           // ENUM, FUNC_PROTO
            _ => 0,
        };
        if kind == KIND_STRUCT && name_at(strings, name_off) == name.as_bytes() {
            for m in 0..vlen {
                let base = at + m * 12;
                let m_name = u32_at(types, base).ok_or_else(bad)?;
                let m_off = u32_at(types, base + 8).ok_or_else(bad)?;
                if name_at(strings, m_name) == member.as_bytes() {
                    let bits = if kind_flag { m_off & 0xff_ffff } else { m_off };
                    return Ok(bits / 8);
                }
            }
            return Err(format!("the kernel's struct {name} has no {member}"));
        }
        at += extra;
    }
    Err(format!("the kernel's BTF has no struct {name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_member_of_a_struct_in_hand_made_btf() {
        // Strings: "", "int", "task_struct", "state", "pid".
        let strings = b"\0int\0task_struct\0state\0pid\0".to_vec();
        let mut types = Vec::new();
        let word = |v: &mut Vec<u8>, x: u32| v.extend_from_slice(&x.to_le_bytes());
        // [1] INT "int", 4 bytes.
        word(&mut types, 1);
        word(&mut types, 1 << 24);
        word(&mut types, 4);
        word(&mut types, 32);
        // [2] STRUCT "task_struct", 2 members: state at bit 0, pid at bit 9536.
        word(&mut types, 5);
        word(&mut types, (4 << 24) | 2);
        word(&mut types, 2000);
        for (name, bits) in [(17u32, 0u32), (23, 9536)] {
            word(&mut types, name);
            word(&mut types, 1);
            word(&mut types, bits);
        }
        let mut btf = Vec::new();
        btf.extend_from_slice(&MAGIC.to_le_bytes());
        btf.extend_from_slice(&[1, 0]);
        word(&mut btf, 24);
        word(&mut btf, 0);
        word(&mut btf, types.len() as u32);
        word(&mut btf, types.len() as u32);
        word(&mut btf, strings.len() as u32);
        btf.extend_from_slice(&types);
        btf.extend_from_slice(&strings);
        assert_eq!(member_offset(&btf, "task_struct", "pid"), Ok(1192));
        assert!(member_offset(&btf, "task_struct", "tgid").is_err());
        assert!(member_offset(&btf, "mm_struct", "pid").is_err());
        assert!(member_offset(b"nonsense", "task_struct", "pid").is_err());
    }

    #[test]
    fn finds_task_struct_pid_in_this_kernels_btf() {
        let Ok(btf) = std::fs::read("/sys/kernel/btf/vmlinux") else {
            return;
        };
        let off = member_offset(&btf, "task_struct", "pid").unwrap();
        assert!(off > 0 && off < 16384, "{off}");
    }
}
