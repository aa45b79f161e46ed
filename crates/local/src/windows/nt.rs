//! The NT calls under the Win32 ones: opens relative to a directory handle
//! (`NtCreateFile` with `RootDirectory`), delete and rename on an open handle, directory
//! listings, and NTSTATUS codes as errnos.

use std::fs::File;
use std::os::windows::io::{AsRawHandle, FromRawHandle};

use windows_sys::Wdk::Foundation::OBJECT_ATTRIBUTES;
use windows_sys::Wdk::Storage::FileSystem::{
    FILE_DISPOSITION_DELETE, FILE_DISPOSITION_INFORMATION, FILE_DISPOSITION_INFORMATION_EX,
    FILE_DISPOSITION_POSIX_SEMANTICS, FILE_INFORMATION_CLASS, FILE_NAMES_INFORMATION,
    FILE_RENAME_INFORMATION, FILE_RENAME_POSIX_SEMANTICS, FILE_RENAME_REPLACE_IF_EXISTS,
    FILE_SYNCHRONOUS_IO_NONALERT, FileDispositionInformation, FileDispositionInformationEx,
    FileFsFullSizeInformation, FileNamesInformation, FileRenameInformation,
    FileRenameInformationEx, NtCreateFile, NtQueryDirectoryFile, NtQueryVolumeInformationFile,
    NtSetInformationFile,
};
use windows_sys::Win32::Foundation::{
    HANDLE, NTSTATUS, OBJ_CASE_INSENSITIVE, OBJ_DONT_REPARSE, RtlNtStatusToDosError,
    STATUS_FILE_IS_A_DIRECTORY, STATUS_INVALID_INFO_CLASS, STATUS_INVALID_PARAMETER,
    STATUS_NO_MORE_FILES, STATUS_NO_SUCH_FILE, STATUS_NOT_IMPLEMENTED, STATUS_NOT_SUPPORTED,
    STATUS_REPARSE_POINT_ENCOUNTERED, UNICODE_STRING,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_ATTRIBUTE_NORMAL, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, SYNCHRONIZE,
};
use windows_sys::Win32::System::IO::IO_STATUS_BLOCK;
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};

use super::fs::errno_of;
use crate::errno;
use naslab_backend::OpError;

/// Whether this process runs under Wine, whose file calls go to Linux's: Wine follows a
/// Unix symbolic link below the Windows API, whatever `FILE_OPEN_REPARSE_POINT` and
/// `OBJ_DONT_REPARSE` ask (Wine 8 ignores both), so the sandbox there walks the path
/// one directory at a time and checks where each really is.
pub fn under_wine() -> bool {
    static WINE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WINE.get_or_init(|| {
        let ntdll: Vec<u16> = "ntdll.dll\0".encode_utf16().collect();
        // SAFETY: both names are NUL-terminated; ntdll is loaded in every process.
        unsafe {
            let m = GetModuleHandleW(ntdll.as_ptr());
            !m.is_null() && GetProcAddress(m, c"wine_get_version".as_ptr().cast()).is_some()
        }
    })
}

/// The errno an NTSTATUS stands for, through the Win32 error Windows itself maps it to
/// (so it is counted as the same failure from `CreateFileW` would be).
pub fn errno_of_status(status: NTSTATUS) -> i32 {
    match status {
        // Win32 says "access denied" for both.
        STATUS_FILE_IS_A_DIRECTORY => errno::EISDIR,
        STATUS_REPARSE_POINT_ENCOUNTERED => errno::ELOOP,
        // SAFETY: a pure mapping of one code to another.
        s => errno_of(unsafe { RtlNtStatusToDosError(s) } as i32),
    }
}

/// An NTSTATUS as an [`OpError`].
pub fn status_err(status: NTSTATUS) -> OpError {
    OpError::errno(errno_of_status(status))
}

/// A UTF-16 name's length in bytes as a UNICODE_STRING holds it.
fn name_bytes(name: &[u16]) -> Result<u16, OpError> {
    u16::try_from(name.len() * 2).map_err(|_| OpError::errno(errno::ENAMETOOLONG))
}

/// What one `NtCreateFile` asks for.
#[derive(Debug, Clone, Copy)]
pub struct Create {
    /// The access rights wanted (`SYNCHRONIZE` is added).
    pub access: u32,
    /// `FILE_OPEN`, `FILE_CREATE`, `FILE_OPEN_IF`, ...
    pub disposition: u32,
    /// The create options (`FILE_SYNCHRONOUS_IO_NONALERT` is added unless
    /// `overlapped`: the handle does synchronous I/O, as one from `CreateFileW` without
    /// `FILE_FLAG_OVERLAPPED`).
    pub options: u32,
    /// An asynchronous handle, as `CreateFileW` makes with `FILE_FLAG_OVERLAPPED`: no
    /// `FILE_SYNCHRONOUS_IO_NONALERT`, so a read or write given an OVERLAPPED may still
    /// be in flight when the call returns.
    pub overlapped: bool,
}

/// Opens or creates `name` relative to the directory `root` (`RootDirectory`; `name` a
/// relative NT name, `\`-separated), case-insensitively as `CreateFileW` does, with
/// `OBJ_DONT_REPARSE`: Windows refuses a reparse point met while parsing the name
/// (`STATUS_REPARSE_POINT_ENCOUNTERED`). Returns the NTSTATUS on failure.
pub fn create_at(root: &File, name: &[u16], how: Create) -> Result<File, NTSTATUS> {
    let len = name_bytes(name).map_err(|_| STATUS_INVALID_PARAMETER)?;
    let uname = UNICODE_STRING {
        Length: len,
        MaximumLength: len,
        Buffer: name.as_ptr().cast_mut(),
    };
    let attributes = OBJECT_ATTRIBUTES {
        Length: std::mem::size_of::<OBJECT_ATTRIBUTES>() as u32,
        RootDirectory: root.as_raw_handle() as HANDLE,
        ObjectName: &uname,
        Attributes: OBJ_CASE_INSENSITIVE | OBJ_DONT_REPARSE,
        SecurityDescriptor: std::ptr::null(),
        SecurityQualityOfService: std::ptr::null(),
    };
    let mut io = IO_STATUS_BLOCK::default();
    let mut h: HANDLE = std::ptr::null_mut();
    // SAFETY: every pointer is to a live local (the name outlives the call); the
    // handle written is ours from here.
    let status = unsafe {
        NtCreateFile(
            &mut h,
            how.access | SYNCHRONIZE,
            &attributes,
            &mut io,
            std::ptr::null(),
            FILE_ATTRIBUTE_NORMAL,
            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
            how.disposition,
            if how.overlapped {
                how.options
            } else {
                how.options | FILE_SYNCHRONOUS_IO_NONALERT
            },
            std::ptr::null(),
            0,
        )
    };
    if status < 0 {
        return Err(status);
    }
    // SAFETY: the call succeeded, so h is an open handle nothing else owns.
    Ok(unsafe { File::from_raw_handle(h.cast()) })
}

fn set_info<T>(f: &File, class: FILE_INFORMATION_CLASS, info: &T, len: usize) -> NTSTATUS {
    let mut io = IO_STATUS_BLOCK::default();
    // SAFETY: info points to at least len bytes of the structure the class takes.
    unsafe {
        NtSetInformationFile(
            f.as_raw_handle() as HANDLE,
            &mut io,
            (info as *const T).cast(),
            len as u32,
            class,
        )
    }
}

/// Whether a status says the information class (or a flag of it) is not known here,
/// so the older class is to be used.
fn unknown_class(status: NTSTATUS) -> bool {
    matches!(
        status,
        STATUS_INVALID_INFO_CLASS
            | STATUS_INVALID_PARAMETER
            | STATUS_NOT_SUPPORTED
            | STATUS_NOT_IMPLEMENTED
    )
}

/// Deletes what `f` (opened with `DELETE` access) is: its name goes at once (POSIX
/// semantics, as `DeleteFileW` does where the file system offers them), else when the
/// last handle closes.
pub fn delete(f: &File) -> Result<(), OpError> {
    let ex = FILE_DISPOSITION_INFORMATION_EX {
        Flags: FILE_DISPOSITION_DELETE | FILE_DISPOSITION_POSIX_SEMANTICS,
    };
    let mut status = set_info(
        f,
        FileDispositionInformationEx,
        &ex,
        std::mem::size_of_val(&ex),
    );
    if unknown_class(status) {
        let plain = FILE_DISPOSITION_INFORMATION { DeleteFile: true };
        status = set_info(
            f,
            FileDispositionInformation,
            &plain,
            std::mem::size_of_val(&plain),
        );
    }
    if status < 0 {
        return Err(status_err(status));
    }
    Ok(())
}

/// Renames what `f` (opened with `DELETE` access) is to `name` in the directory `dir`,
/// replacing a file there (with POSIX semantics where the file system offers them, as
/// the standard library's rename does: an open file can be replaced).
pub fn rename(f: &File, dir: &File, name: &[u16]) -> Result<(), OpError> {
    let bytes = name_bytes(name)?;
    // FILE_RENAME_INFORMATION ends with the name; it is built in a buffer of u64s, so
    // aligned for the handle it holds.
    let head = std::mem::offset_of!(FILE_RENAME_INFORMATION, FileName);
    let len = head + usize::from(bytes);
    let mut buf = vec![0u64; len.div_ceil(8)];
    let info = buf.as_mut_ptr().cast::<FILE_RENAME_INFORMATION>();
    let attempt = |flags: Option<u32>| {
        // SAFETY: buf holds len bytes, aligned for the structure; the name is copied
        // into the space after its fixed part.
        unsafe {
            match flags {
                Some(flags) => (*info).Anonymous.Flags = flags,
                None => (*info).Anonymous.ReplaceIfExists = true,
            }
            (*info).RootDirectory = dir.as_raw_handle() as HANDLE;
            (*info).FileNameLength = u32::from(bytes);
            std::ptr::copy_nonoverlapping(
                name.as_ptr(),
                info.cast::<u8>().add(head).cast::<u16>(),
                name.len(),
            );
            let class = if flags.is_some() {
                FileRenameInformationEx
            } else {
                FileRenameInformation
            };
            set_info(f, class, &*info, len)
        }
    };
    let mut status = attempt(Some(
        FILE_RENAME_REPLACE_IF_EXISTS | FILE_RENAME_POSIX_SEMANTICS,
    ));
    if unknown_class(status) {
        status = attempt(None);
    }
    if status < 0 {
        return Err(status_err(status));
    }
    Ok(())
}

/// The size of a volume and its free space (`FILE_FS_FULL_SIZE_INFORMATION`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct VolumeSize {
    pub total_units: i64,
    pub caller_free_units: i64,
    pub free_units: i64,
    pub sectors_per_unit: u32,
    pub bytes_per_sector: u32,
}

/// The size and free space of the volume holding what `f` is
/// (`NtQueryVolumeInformationFile(FileFsFullSizeInformation)`, as `GetDiskFreeSpaceExW`
/// asks it of a volume's root).
pub fn volume_full_size(f: &File) -> Result<VolumeSize, OpError> {
    let mut v = VolumeSize::default();
    let mut io = IO_STATUS_BLOCK::default();
    // SAFETY: v is the structure the class fills, its size passed; the handle is open.
    let status = unsafe {
        NtQueryVolumeInformationFile(
            f.as_raw_handle() as HANDLE,
            &mut io,
            (&mut v as *mut VolumeSize).cast(),
            std::mem::size_of::<VolumeSize>() as u32,
            FileFsFullSizeInformation,
        )
    };
    if status < 0 {
        return Err(status_err(status));
    }
    if io.Information < std::mem::size_of::<VolumeSize>() || v.bytes_per_sector == 0 {
        return Err(OpError {
            errno: errno::EIO,
            detail: Some(format!(
                "the volume's size came back short ({} bytes, {} bytes per sector)",
                io.Information, v.bytes_per_sector
            )),
        });
    }
    Ok(v)
}

/// Lists the directory `dir` (opened with `FILE_LIST_DIRECTORY`) through `buf`
/// (`NtQueryDirectoryFile`, names only), giving `each` every name but `.` and `..`.
pub fn list(dir: &File, buf: &mut Vec<u64>, mut each: impl FnMut(&[u16])) -> Result<(), OpError> {
    if buf.is_empty() {
        buf.resize(8192, 0);
    }
    let mut restart = true;
    loop {
        let mut io = IO_STATUS_BLOCK::default();
        // SAFETY: buf is ours, aligned for the entries, its length in bytes passed.
        let status = unsafe {
            NtQueryDirectoryFile(
                dir.as_raw_handle() as HANDLE,
                std::ptr::null_mut(),
                None,
                std::ptr::null(),
                &mut io,
                buf.as_mut_ptr().cast(),
                (buf.len() * 8) as u32,
                FileNamesInformation,
                false,
                std::ptr::null(),
                restart,
            )
        };
        restart = false;
        if status == STATUS_NO_MORE_FILES || status == STATUS_NO_SUCH_FILE {
            return Ok(());
        }
        if status < 0 {
            return Err(status_err(status));
        }
        let filled = io.Information.min(buf.len() * 8);
        let base = buf.as_ptr().cast::<u8>();
        let head = std::mem::offset_of!(FILE_NAMES_INFORMATION, FileName);
        let mut at = 0usize;
        while at + head <= filled {
            // SAFETY: the entry starts inside the filled part of buf, at an offset the
            // file system aligned for it; its name's length is checked against buf.
            let (next, name) = unsafe {
                let e = base.add(at).cast::<FILE_NAMES_INFORMATION>();
                let n = (*e).FileNameLength as usize / 2;
                if at + head + n * 2 > filled {
                    break;
                }
                let name = std::slice::from_raw_parts(base.add(at + head).cast::<u16>(), n);
                ((*e).NextEntryOffset as usize, name)
            };
            let dot = u16::from(b'.');
            if name != [dot] && name != [dot, dot] {
                each(name);
            }
            if next == 0 {
                break;
            }
            at += next;
        }
    }
}
