//! The workload directory held open, every entry of it opened relative to its handle
//! and checked, and the data and metadata requests on an open handle.

use std::fs::{File, OpenOptions};
use std::os::windows::fs::{FileExt, OpenOptionsExt};
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use windows_sys::Wdk::Storage::FileSystem::{
    FILE_CREATE, FILE_DELETE_ON_CLOSE, FILE_DIRECTORY_FILE, FILE_NO_INTERMEDIATE_BUFFERING,
    FILE_NON_DIRECTORY_FILE, FILE_OPEN, FILE_OPEN_IF, FILE_OPEN_REPARSE_POINT, FILE_RANDOM_ACCESS,
    FILE_WRITE_THROUGH,
};
use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_LOCK_VIOLATION, FILETIME, NTSTATUS, STATUS_NO_SUCH_FILE,
    STATUS_OBJECT_NAME_COLLISION, STATUS_OBJECT_NAME_NOT_FOUND, STATUS_REPARSE_POINT_ENCOUNTERED,
};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, DELETE, FILE_ALLOCATION_INFO, FILE_ATTRIBUTE_DIRECTORY,
    FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT,
    FILE_GENERIC_READ, FILE_GENERIC_WRITE, FILE_LIST_DIRECTORY, FILE_NAME_NORMALIZED,
    FILE_READ_ATTRIBUTES, FILE_TRAVERSE, FILE_WRITE_ATTRIBUTES, FileAllocationInfo,
    GetFileInformationByHandle, GetFinalPathNameByHandleW, LOCKFILE_EXCLUSIVE_LOCK,
    LOCKFILE_FAIL_IMMEDIATELY, LockFileEx, SetFileInformationByHandle, SetFileTime, UnlockFileEx,
    VOLUME_NAME_DOS,
};
use windows_sys::Win32::System::IO::OVERLAPPED;
use windows_sys::Win32::System::SystemInformation::GetSystemTimeAsFileTime;

use super::fs::io_err;
use super::nt::{self, Create};
use crate::errno;
use naslab_backend::{LockHow, OpError, lock_length};
use naslab_remote::remote::EntryKind;

/// The offset that makes a write land at the end of the file (both halves of the
/// OVERLAPPED offset all ones), as every write through an `O_APPEND` descriptor does.
pub const APPEND: u64 = u64::MAX;

/// How an entry is opened.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenSpec {
    pub read: bool,
    pub write: bool,
    pub create: bool,
    /// With `create`: made new or not at all (`FILE_CREATE`, `CREATE_NEW`).
    pub exclusive: bool,
    /// Emptied once the open handle has been checked.
    pub truncate: bool,
    /// Every write goes through to the disk or server (`FILE_WRITE_THROUGH`).
    pub sync: bool,
    /// No cache at all (`FILE_NO_INTERMEDIATE_BUFFERING | FILE_WRITE_THROUGH`, what
    /// `FILE_FLAG_NO_BUFFERING | FILE_FLAG_WRITE_THROUGH` ask of `CreateFileW`).
    pub direct: bool,
    /// No read-ahead (`FILE_RANDOM_ACCESS`).
    pub random: bool,
    /// A directory is wanted (`FILE_DIRECTORY_FILE`; else `FILE_NON_DIRECTORY_FILE`).
    pub dir: bool,
    /// The handle's reads and writes may be in flight together, completing on an I/O
    /// completion port (`CreateFileW`'s `FILE_FLAG_OVERLAPPED`; see [`Create`]).
    pub overlapped: bool,
}

impl OpenSpec {
    /// The `NtCreateFile` request: access, disposition and create options.
    pub fn create(&self) -> Create {
        let mut access = FILE_READ_ATTRIBUTES;
        if self.read {
            access |= FILE_GENERIC_READ;
        }
        if self.write {
            access |= FILE_GENERIC_WRITE;
        }
        if self.dir {
            access |= FILE_LIST_DIRECTORY | FILE_TRAVERSE;
        }
        Create {
            access,
            disposition: match (self.create && self.write, self.exclusive) {
                (true, true) => FILE_CREATE,
                (true, false) => FILE_OPEN_IF,
                (false, _) => FILE_OPEN,
            },
            options: self.options(),
            overlapped: self.overlapped,
        }
    }

    /// The create options: the entry itself, never what a reparse point names.
    pub fn options(&self) -> u32 {
        let mut options = FILE_OPEN_REPARSE_POINT;
        if self.direct {
            options |= FILE_NO_INTERMEDIATE_BUFFERING | FILE_WRITE_THROUGH;
        }
        if self.sync {
            options |= FILE_WRITE_THROUGH;
        }
        if self.random {
            options |= FILE_RANDOM_ACCESS;
        }
        options |= if self.dir {
            FILE_DIRECTORY_FILE
        } else {
            FILE_NON_DIRECTORY_FILE
        };
        options
    }
}

/// An open file of a stream.
#[derive(Debug)]
pub struct Opened {
    pub file: File,
    /// Under direct I/O, a buffered handle of the same file for unaligned ops.
    pub buffered: Option<File>,
    pub direct: bool,
    /// Every write lands at the end of the file.
    pub append: bool,
    /// The file table's entry it is, to open it again.
    pub entry: u32,
    pub spec: OpenSpec,
}

/// A `/`-separated relative path as the relative NT name opens take (`\`-separated),
/// built in a buffer kept from one op to the next.
#[derive(Debug, Default)]
pub struct Names {
    buf: Vec<u16>,
}

impl Names {
    /// `rel` as an NT name; `.` and `..` (which the trace reader never lets through)
    /// are refused.
    pub fn of(&mut self, rel: &str) -> Result<&[u16], OpError> {
        self.buf.clear();
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            if part == "." || part == ".." {
                return Err(OpError {
                    errno: errno::EINVAL,
                    detail: Some(format!("'{rel}' climbs out of its directory")),
                });
            }
            if !self.buf.is_empty() {
                self.buf.push(u16::from(b'\\'));
            }
            self.buf.extend(part.encode_utf16());
        }
        Ok(&self.buf)
    }
}

fn info(f: &File) -> Result<BY_HANDLE_FILE_INFORMATION, OpError> {
    // SAFETY: all-zero is a valid BY_HANDLE_FILE_INFORMATION (plain integers).
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: the handle is the open file's own, and info is ours to fill.
    if unsafe { GetFileInformationByHandle(f.as_raw_handle(), &mut info) } == 0 {
        return Err(io_err(std::io::Error::last_os_error()));
    }
    Ok(info)
}

/// Reads the final path of `f` (see [`final_path`]) into `buf` and returns its length
/// in UTF-16 units; a length above `buf`'s says the path did not fit.
fn final_path_into(f: &File, buf: &mut [u16]) -> Result<usize, OpError> {
    // SAFETY: buf is ours and its length is passed; the handle is open.
    let n = unsafe {
        GetFinalPathNameByHandleW(
            f.as_raw_handle(),
            buf.as_mut_ptr(),
            buf.len() as u32,
            FILE_NAME_NORMALIZED | VOLUME_NAME_DOS,
        )
    } as usize;
    if n == 0 {
        return Err(io_err(std::io::Error::last_os_error()));
    }
    // A path that did not fit is given as the length it needs, with its NUL.
    Ok(if n < buf.len() {
        n
    } else {
        n.max(buf.len() + 1)
    })
}

/// The path Windows reports for what `f` is (`\\?\C:\...` or `\\?\UNC\...`), reparse
/// points on the way resolved: where the handle really is.
pub fn final_path(f: &File) -> Result<String, OpError> {
    let mut buf = vec![0u16; 512];
    loop {
        let n = final_path_into(f, &mut buf)?;
        if n <= buf.len() {
            return Ok(String::from_utf16_lossy(&buf[..n]));
        }
        buf.resize(n, 0);
    }
}

fn refused(name: &str, errno: i32, why: &str) -> OpError {
    OpError {
        errno,
        detail: Some(format!(
            "'{name}' {why}; naslab does not write or read through it and stops (was it put there during the run?)"
        )),
    }
}

const REPARSE: &str = "is a reparse point (a symbolic link, junction or mount point)";

/// Whether two names are the same to Windows (which compares them ignoring case).
fn same_name(a: &str, b: &str) -> bool {
    a == b
        || a.chars()
            .flat_map(char::to_uppercase)
            .eq(b.chars().flat_map(char::to_uppercase))
}

/// Checks what `f` (opened at `name`) is: no reparse point, a directory exactly when
/// one is wanted, and a file with no other name (a hard link would share it with a file
/// outside).
fn check(f: &File, name: &[u16], spec: &OpenSpec) -> Result<BY_HANDLE_FILE_INFORMATION, OpError> {
    let i = info(f)?;
    let shown = || String::from_utf16_lossy(name);
    if i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(refused(&shown(), errno::ELOOP, REPARSE));
    }
    let is_dir = i.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0;
    if is_dir != spec.dir {
        return Err(if is_dir {
            refused(
                &shown(),
                errno::EISDIR,
                "is a directory, where the workload has a file",
            )
        } else {
            refused(
                &shown(),
                errno::ENOTDIR,
                "is a file, where the workload has a directory",
            )
        });
    }
    if !is_dir && i.nNumberOfLinks > 1 {
        return Err(refused(
            &shown(),
            errno::EMLINK,
            &format!(
                "has {} names (hard links), so it is also a file outside the workload",
                i.nNumberOfLinks
            ),
        ));
    }
    Ok(i)
}

/// A directory the workload's entries are opened relative to (the workload directory,
/// or one on the way to an entry).
fn open_dir_by_path(path: &Path) -> Result<File, OpError> {
    let f = OpenOptions::new()
        .access_mode(FILE_LIST_DIRECTORY | FILE_TRAVERSE | FILE_READ_ATTRIBUTES)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS | FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
        .map_err(io_err)?;
    let shown = path.display().to_string();
    let i = info(&f)?;
    if i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(refused(&shown, errno::ELOOP, REPARSE));
    }
    if i.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY == 0 {
        return Err(refused(&shown, errno::ENOTDIR, "is not a directory"));
    }
    Ok(f)
}

/// The workload directory, held open for the stream: every entry of the workload is
/// opened relative to its handle (`NtCreateFile` with `RootDirectory`), never through a
/// reparse point.
///
/// On Windows one `NtCreateFile` names the whole relative path with `OBJ_DONT_REPARSE`
/// (Windows refuses any reparse point met on the way) and `FILE_OPEN_REPARSE_POINT`
/// (the entry itself is opened, and refused when it is a reparse point); what was
/// opened must also really be at its name (its final path). Under Wine,
/// which follows Unix symbolic links below the Windows API and ignores both, the path
/// is walked one directory at a time instead, each directory opened relative to the one
/// before and refused unless it really is where its name says (its final path), before
/// anything is made in it; a file is created only where no name is (`FILE_CREATE`), so
/// a link at its name is never followed.
#[derive(Debug)]
pub struct Root {
    dir: File,
    /// Where the directory really is (`\\?\C:\...`, UTF-16): every entry opened must
    /// be found under it, at its name.
    real: Vec<u16>,
    /// Walk the path a directory at a time (under Wine).
    walk: bool,
}

impl Root {
    /// Opens the directory at `path` (the target directory, the one the user named),
    /// refused when it is a reparse point or not a directory.
    pub fn at_path(path: &Path) -> Result<Root, OpError> {
        let dir = open_dir_by_path(path)?;
        Ok(Root {
            real: final_path(&dir)?.encode_utf16().collect(),
            dir,
            walk: nt::under_wine(),
        })
    }

    /// Opens the directory `rel` (`/`-separated) below this one, checked like every
    /// entry, as a directory of its own.
    pub fn below(&self, rel: &str) -> Result<Root, OpError> {
        let mut names = Names::default();
        let spec = OpenSpec {
            dir: true,
            ..OpenSpec::default()
        };
        let dir = self.open(names.of(rel)?, &spec)?;
        Ok(Root {
            real: final_path(&dir)?.encode_utf16().collect(),
            dir,
            walk: self.walk,
        })
    }

    /// The same directory, its entries opened by walking the path a directory at a
    /// time or by one open each.
    #[cfg(test)]
    pub fn walking(self, walk: bool) -> Root {
        Root { walk, ..self }
    }

    /// The error an `NtCreateFile` of `name` failed with.
    fn failed(name: &[u16], status: NTSTATUS) -> OpError {
        let e = nt::errno_of_status(status);
        match e {
            errno::ELOOP => refused(&String::from_utf16_lossy(name), e, REPARSE),
            errno::EISDIR => refused(
                &String::from_utf16_lossy(name),
                e,
                "is a directory, where the workload has a file",
            ),
            _ => OpError::errno(e),
        }
    }

    /// Refuses `f` unless it really is `<workload>\<name>` (else a link on the way, or
    /// at its name, was followed: under Wine, which follows Unix symbolic links below
    /// the Windows API, or on a Windows that would not honour `OBJ_DONT_REPARSE`).
    fn check_real(&self, f: &File, name: &[u16]) -> Result<(), OpError> {
        match self.real_path_if_elsewhere(f, name)? {
            None => Ok(()),
            Some(real) => Err(refused(
                &String::from_utf16_lossy(name),
                errno::ELOOP,
                &format!("is a link to '{real}'"),
            )),
        }
    }

    /// Where `f` really is when that is not `<this directory>\<name>`.
    fn real_path_if_elsewhere(&self, f: &File, name: &[u16]) -> Result<Option<String>, OpError> {
        // Most final paths fit this; a longer one is read into a buffer of its size.
        let mut buf = [0u16; 1024];
        let n = final_path_into(f, &mut buf)?;
        let exact = n <= buf.len() && {
            let real = &buf[..n];
            let (dir, rest) = real.split_at(self.real.len().min(n));
            dir == self.real && rest.first() == Some(&u16::from(b'\\')) && &rest[1..] == name
        };
        if exact {
            return Ok(None);
        }
        // Not the same to the letter: the same names in another case pass, as Windows
        // compares them.
        let real = final_path(f)?;
        let wanted = format!(
            "{}\\{}",
            String::from_utf16_lossy(&self.real),
            String::from_utf16_lossy(name)
        );
        Ok((!same_name(&real, &wanted)).then_some(real))
    }

    /// The directory `name`'s last component is to be opened in, and that component:
    /// the workload directory and the whole name on Windows; under Wine, the last
    /// directory on the way, walked to and checked one directory at a time.
    fn locate<'n>(&self, name: &'n [u16]) -> Result<(Option<File>, &'n [u16]), OpError> {
        let sep = u16::from(b'\\');
        if !self.walk {
            return Ok((None, name));
        }
        let Some(last) = name.iter().rposition(|&c| c == sep) else {
            return Ok((None, name));
        };
        let mut at: Option<File> = None;
        let mut start = 0;
        while start < last {
            let end = start
                + name[start..]
                    .iter()
                    .position(|&c| c == sep)
                    .unwrap_or(last - start);
            let dir = nt::create_at(
                at.as_ref().unwrap_or(&self.dir),
                &name[start..end],
                Create {
                    access: FILE_TRAVERSE | FILE_READ_ATTRIBUTES,
                    disposition: FILE_OPEN,
                    options: FILE_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT,
                    overlapped: false,
                },
            )
            .map_err(|s| Root::failed(&name[..end], s))?;
            let i = info(&dir)?;
            if i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
                return Err(refused(
                    &String::from_utf16_lossy(&name[..end]),
                    errno::ELOOP,
                    REPARSE,
                ));
            }
            self.check_real(&dir, &name[..end])?;
            at = Some(dir);
            start = end + 1;
        }
        Ok((at, &name[last + 1..]))
    }

    /// Opens (or creates) `name` as `how` says, relative to the workload directory,
    /// through no reparse point; under Wine checked to be where its name says.
    pub fn at(&self, name: &[u16], how: Create) -> Result<File, OpError> {
        let f = self.entry(name, how)?.map_err(|s| Root::failed(name, s))?;
        self.check_real(&f, name)?;
        Ok(f)
    }

    /// Opens (or creates) `name` as `how` says, through directories checked on the way,
    /// what was opened not checked yet; the inner error is the open's own status.
    fn entry(&self, name: &[u16], how: Create) -> Result<Result<File, NTSTATUS>, OpError> {
        let (parent, leaf) = self.locate(name)?;
        let dir = parent.as_ref().unwrap_or(&self.dir);
        Ok(if self.walk && how.disposition == FILE_OPEN_IF {
            open_or_create(dir, leaf, how)
        } else {
            nt::create_at(dir, leaf, how)
        })
    }

    /// What `name` is, or `None` when nothing of that name can be opened: a link (a
    /// reparse point, or under Wine an entry that is really elsewhere), a directory or
    /// a file. A directory on the way that is a link is an error.
    pub fn kind(&self, name: &[u16]) -> Result<Option<EntryKind>, OpError> {
        let how = Create {
            access: FILE_READ_ATTRIBUTES,
            disposition: FILE_OPEN,
            options: FILE_OPEN_REPARSE_POINT,
            overlapped: false,
        };
        let f = match self.entry(name, how)? {
            Ok(f) => f,
            Err(STATUS_OBJECT_NAME_NOT_FOUND | STATUS_NO_SUCH_FILE) => return Ok(None),
            Err(s) => return Err(Root::failed(name, s)),
        };
        let a = info(&f)?.dwFileAttributes;
        Ok(Some(
            if a & FILE_ATTRIBUTE_REPARSE_POINT != 0
                || self.real_path_if_elsewhere(&f, name)?.is_some()
            {
                EntryKind::Link
            } else if a & FILE_ATTRIBUTE_DIRECTORY != 0 {
                EntryKind::Dir
            } else {
                EntryKind::File
            },
        ))
    }

    /// The names in this directory itself, `.` and `..` left out.
    pub fn names_here(&self) -> Result<Vec<String>, OpError> {
        let mut names = Vec::new();
        nt::list(&self.dir, &mut Vec::new(), |n| {
            names.push(String::from_utf16_lossy(n))
        })?;
        Ok(names)
    }

    /// The names in the directory `name`, `.` and `..` left out.
    pub fn names_in(&self, name: &[u16]) -> Result<Vec<String>, OpError> {
        let spec = OpenSpec {
            dir: true,
            ..OpenSpec::default()
        };
        let d = self.open(name, &spec)?;
        let mut names = Vec::new();
        nt::list(&d, &mut Vec::new(), |n| {
            names.push(String::from_utf16_lossy(n))
        })?;
        Ok(names)
    }

    /// Removes the entry `name` itself: a file, an empty directory (`dir`), or a
    /// reparse point (opened itself, so what it names stays). Under Wine, where a link
    /// cannot be opened itself (and removing what was opened would remove its target),
    /// a link is refused, to be removed by hand.
    pub fn remove_itself(&self, name: &[u16], dir: bool) -> Result<(), OpError> {
        let f = self
            .entry(
                name,
                Create {
                    access: DELETE | FILE_READ_ATTRIBUTES,
                    disposition: FILE_OPEN,
                    options: FILE_OPEN_REPARSE_POINT | if dir { FILE_DIRECTORY_FILE } else { 0 },
                    overlapped: false,
                },
            )?
            .map_err(|s| Root::failed(name, s))?;
        if let Some(real) = self.real_path_if_elsewhere(&f, name)? {
            return Err(refused(
                &String::from_utf16_lossy(name),
                errno::ELOOP,
                &format!(
                    "is a link to '{real}', which naslab cannot remove here without removing what it names: remove the link by hand"
                ),
            ));
        }
        nt::delete(&f)
    }

    /// Opens `name` as `spec` says and checks it (see [`check`]); a truncating open
    /// empties the file only once it passed, so nothing that fails is changed.
    pub fn open(&self, name: &[u16], spec: &OpenSpec) -> Result<File, OpError> {
        let f = self.at(name, spec.create())?;
        check(&f, name, spec)?;
        if spec.truncate && spec.write {
            f.set_len(0).map_err(io_err)?;
        }
        Ok(f)
    }

    /// The entry `name` (a file or a directory) opened with `access` on its attributes
    /// only, refused when it is a reparse point, and what it is.
    fn for_attributes(
        &self,
        name: &[u16],
        access: u32,
    ) -> Result<(File, BY_HANDLE_FILE_INFORMATION), OpError> {
        let f = self.at(
            name,
            Create {
                access: FILE_READ_ATTRIBUTES | access,
                disposition: FILE_OPEN,
                options: FILE_OPEN_REPARSE_POINT,
                overlapped: false,
            },
        )?;
        let i = info(&f)?;
        if i.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return Err(refused(
                &String::from_utf16_lossy(name),
                errno::ELOOP,
                REPARSE,
            ));
        }
        Ok((f, i))
    }

    /// The size of the entry `name` (a file or a directory), opened for its attributes
    /// only.
    pub fn size_of(&self, name: &[u16]) -> Result<u64, OpError> {
        let (_, i) = self.for_attributes(name, 0)?;
        Ok((u64::from(i.nFileSizeHigh) << 32) | u64::from(i.nFileSizeLow))
    }

    /// Asks for the size and free space of the volume holding the entry `name`, as
    /// `GetDiskFreeSpaceExW` does (`FileFsFullSizeInformation`), on the entry's own
    /// handle, opened for its attributes and checked.
    pub fn volume_of(&self, name: &[u16]) -> Result<(), OpError> {
        let (f, _) = self.for_attributes(name, 0)?;
        nt::volume_full_size(&f).map(drop)
    }

    /// Sets the access and last write times of the entry `name` to now (`SetFileTime`
    /// on a handle opened for `FILE_WRITE_ATTRIBUTES` and checked; a file with another
    /// name is refused, as its times are those of a file outside too).
    pub fn touch(&self, name: &[u16]) -> Result<(), OpError> {
        let (f, i) = self.for_attributes(name, FILE_WRITE_ATTRIBUTES)?;
        if i.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY == 0 && i.nNumberOfLinks > 1 {
            return Err(refused(
                &String::from_utf16_lossy(name),
                errno::EMLINK,
                &format!(
                    "has {} names (hard links), so it is also a file outside the workload",
                    i.nNumberOfLinks
                ),
            ));
        }
        let mut now = FILETIME {
            dwLowDateTime: 0,
            dwHighDateTime: 0,
        };
        // SAFETY: now is ours to fill.
        unsafe { GetSystemTimeAsFileTime(&mut now) };
        // SAFETY: the handle is open with FILE_WRITE_ATTRIBUTES; a null creation time
        // leaves it as it is.
        if unsafe { SetFileTime(f.as_raw_handle(), std::ptr::null(), &now, &now) } == 0 {
            return Err(io_err(std::io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Makes the directory `name`.
    pub fn make_dir(&self, name: &[u16]) -> Result<(), OpError> {
        self.at(
            name,
            Create {
                access: FILE_READ_ATTRIBUTES,
                disposition: FILE_CREATE,
                options: FILE_DIRECTORY_FILE | FILE_OPEN_REPARSE_POINT,
                overlapped: false,
            },
        )
        .map(drop)
    }

    /// The number of entries in the directory `name`, listed through `buf`.
    pub fn count_entries(&self, name: &[u16], buf: &mut Vec<u64>) -> Result<u64, OpError> {
        let spec = OpenSpec {
            dir: true,
            ..OpenSpec::default()
        };
        let d = self.open(name, &spec)?;
        let mut entries = 0u64;
        nt::list(&d, buf, |_| entries += 1)?;
        Ok(entries)
    }

    /// Opens `name` to remove or rename it (`DELETE` access), refused when it is a
    /// reparse point. `dir`: only a directory (`Some(true)`), only a file
    /// (`Some(false)`), or either.
    fn for_delete(&self, name: &[u16], dir: Option<bool>) -> Result<File, OpError> {
        let kind = match dir {
            Some(true) => FILE_DIRECTORY_FILE,
            Some(false) => FILE_NON_DIRECTORY_FILE,
            None => 0,
        };
        let f = self.at(
            name,
            Create {
                access: DELETE | FILE_READ_ATTRIBUTES,
                disposition: FILE_OPEN,
                options: kind | FILE_OPEN_REPARSE_POINT,
                overlapped: false,
            },
        )?;
        if info(&f)?.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            return Err(refused(
                &String::from_utf16_lossy(name),
                errno::ELOOP,
                REPARSE,
            ));
        }
        Ok(f)
    }

    /// Removes the file or empty directory `name`.
    pub fn remove(&self, name: &[u16], is_dir: bool) -> Result<(), OpError> {
        nt::delete(&self.for_delete(name, Some(is_dir))?)
    }

    /// Renames `from` to `to`, replacing a file there: `from` opened, then renamed into
    /// `to`'s directory, opened and checked, by the last component's name.
    pub fn rename(&self, from: &[u16], to: &[u16]) -> Result<(), OpError> {
        let f = self.for_delete(from, None)?;
        let sep = u16::from(b'\\');
        match to.iter().rposition(|&c| c == sep) {
            None => nt::rename(&f, &self.dir, to),
            Some(last) => {
                let spec = OpenSpec {
                    dir: true,
                    ..OpenSpec::default()
                };
                let dir = self.open(&to[..last], &spec)?;
                nt::rename(&f, &dir, &to[last + 1..])
            }
        }
    }

    /// Writes the file's cached data back, then opens it once without buffering,
    /// which makes the cache manager write back and purge the pages it holds of the
    /// file (when no other handle keeps them cached or mapped).
    pub fn write_back_and_purge(&self, name: &[u16]) -> Result<(), OpError> {
        let w = OpenSpec {
            read: true,
            write: true,
            ..OpenSpec::default()
        };
        self.open(name, &w)?.sync_all().map_err(io_err)?;
        let unbuffered = OpenSpec {
            read: true,
            direct: true,
            ..OpenSpec::default()
        };
        self.open(name, &unbuffered).map(drop)
    }

    /// Whether unbuffered opens work here: a probe file made with
    /// `FILE_NO_INTERMEDIATE_BUFFERING` and gone when closed.
    pub fn probe_direct(&self) -> Result<(), OpError> {
        let name: Vec<u16> = ".naslab-direct-probe".encode_utf16().collect();
        nt::create_at(
            &self.dir,
            &name,
            Create {
                access: FILE_GENERIC_WRITE | DELETE,
                disposition: FILE_CREATE,
                options: FILE_NO_INTERMEDIATE_BUFFERING
                    | FILE_WRITE_THROUGH
                    | FILE_DELETE_ON_CLOSE
                    | FILE_NON_DIRECTORY_FILE
                    | FILE_OPEN_REPARSE_POINT,
                overlapped: false,
            },
        )
        .map(drop)
        .map_err(nt::status_err)
    }
}

/// Under Wine: opens `leaf` in `dir`, or creates it when no name is there
/// (`FILE_CREATE`, which Wine makes an exclusive create: a link at the name is not
/// followed to make its target). `FILE_OPEN_IF` would make the file a dangling link
/// names, wherever that is.
fn open_or_create(dir: &File, leaf: &[u16], how: Create) -> Result<File, NTSTATUS> {
    let open = Create {
        disposition: FILE_OPEN,
        ..how
    };
    let create = Create {
        disposition: FILE_CREATE,
        ..how
    };
    let missing = |s| s == STATUS_OBJECT_NAME_NOT_FOUND || s == STATUS_NO_SUCH_FILE;
    match nt::create_at(dir, leaf, open) {
        Err(s) if missing(s) => match nt::create_at(dir, leaf, create) {
            // Made by another stream in between (opened, then checked), or a link that
            // names nothing (Wine says "no such file" for it, and "collision" when
            // asked to make it): refused as the link it is.
            Err(STATUS_OBJECT_NAME_COLLISION) => match nt::create_at(dir, leaf, open) {
                Err(s) if missing(s) => Err(STATUS_REPARSE_POINT_ENCOUNTERED),
                r => r,
            },
            r => r,
        },
        r => r,
    }
}

/// Reads at `offset` (ReadFile with the offset in its OVERLAPPED); 0 at end of file.
#[inline]
pub fn read_at(f: &File, buf: &mut [u8], offset: u64) -> Result<usize, OpError> {
    f.seek_read(buf, offset).map_err(io_err)
}

/// Writes at `offset` (WriteFile with the offset in its OVERLAPPED; [`APPEND`]: at the
/// end of the file).
#[inline]
pub fn write_at(f: &File, buf: &[u8], offset: u64) -> Result<usize, OpError> {
    f.seek_write(buf, offset).map_err(io_err)
}

/// FlushFileBuffers. Windows flushes only through a handle that may write; fsync on a
/// read-only descriptor writes the file back on Linux, so a read-only handle's file is
/// flushed through a writable handle, opened by `reopen`, for the purpose.
pub fn flush(
    f: &File,
    spec: &OpenSpec,
    reopen: impl FnOnce(&OpenSpec) -> Result<File, OpError>,
) -> Result<(), OpError> {
    match f.sync_all() {
        Ok(()) => Ok(()),
        Err(e) if !spec.write && e.raw_os_error() == Some(ERROR_ACCESS_DENIED as i32) => {
            let w = OpenSpec {
                write: true,
                ..OpenSpec::default()
            };
            reopen(&w)?.sync_all().map_err(io_err)
        }
        Err(e) => Err(io_err(e)),
    }
}

/// Makes the file hold `end` bytes, allocated (as fallocate with no flags does: the
/// size grows to `end`, never shrinks). The allocation is asked for first; a file
/// system that does not take the request (Wine's does not) still gets the end of file,
/// which allocates on NTFS.
pub fn allocate(f: &File, end: u64) -> Result<(), OpError> {
    let len = f.metadata().map_err(io_err)?.len();
    if end <= len {
        return Ok(());
    }
    let alloc = FILE_ALLOCATION_INFO {
        AllocationSize: i64::try_from(end).map_err(|_| OpError::errno(errno::EFBIG))?,
    };
    // SAFETY: the struct is the one FileAllocationInfo takes, and its size is passed.
    // Its refusal is not a failure (see above).
    unsafe {
        SetFileInformationByHandle(
            f.as_raw_handle(),
            FileAllocationInfo,
            (&alloc as *const FILE_ALLOCATION_INFO).cast(),
            std::mem::size_of::<FILE_ALLOCATION_INFO>() as u32,
        )
    };
    f.set_len(end).map_err(io_err)
}

/// Takes a byte-range lock of the open file `f` (`LockFileEx` with
/// `LOCKFILE_FAIL_IMMEDIATELY`, plus `LOCKFILE_EXCLUSIVE_LOCK` unless shared) or
/// releases one (`UnlockFileEx`, the range as it was locked). A range another handle
/// holds fails at once with `EAGAIN` (`ERROR_LOCK_VIOLATION`); an unlock of a range
/// this handle does not hold with `ENOLCK`.
pub fn lock(f: &File, offset: u64, len: u64, how: LockHow) -> Result<(), OpError> {
    let len = lock_length(offset, len);
    // SAFETY: all-zero is a valid OVERLAPPED (no event); the offset is set below.
    let mut at: OVERLAPPED = unsafe { std::mem::zeroed() };
    at.Anonymous.Anonymous.Offset = offset as u32;
    at.Anonymous.Anonymous.OffsetHigh = (offset >> 32) as u32;
    let (low, high) = (len as u32, (len >> 32) as u32);
    let h = f.as_raw_handle();
    // SAFETY: the handle is open (for synchronous I/O, so the call completes before it
    // returns) and `at` outlives the call.
    let done = unsafe {
        match how {
            LockHow::Unlock => UnlockFileEx(h, 0, low, high, &mut at),
            LockHow::Shared => LockFileEx(h, LOCKFILE_FAIL_IMMEDIATELY, 0, low, high, &mut at),
            LockHow::Exclusive => LockFileEx(
                h,
                LOCKFILE_FAIL_IMMEDIATELY | LOCKFILE_EXCLUSIVE_LOCK,
                0,
                low,
                high,
                &mut at,
            ),
        }
    };
    if done != 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    // An unlock never waits on another's lock: whatever it fails with, no lock of this
    // handle matched the range (Wine says "lock violation" for it, Windows "not
    // locked").
    if how == LockHow::Unlock && e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32) {
        return Err(OpError::errno(errno::ENOLCK));
    }
    Err(io_err(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_to_the_end_of_the_file_reaches_every_byte_from_its_offset() {
        assert_eq!(lock_length(4096, 10), 10);
        assert_eq!(lock_length(0, 0), u64::MAX);
        assert_eq!(lock_length(4096, 0), u64::MAX - 4096);
    }

    #[test]
    fn names_compare_as_windows_compares_them() {
        assert!(same_name(
            r"\\?\C:\t\naslab\w\a.dat",
            r"\\?\C:\T\naslab\W\A.DAT"
        ));
        assert!(!same_name(
            r"\\?\C:\t\naslab\w\a.dat",
            r"\\?\C:\elsewhere\a.dat"
        ));
        assert!(!same_name(r"\\?\C:\t\naslab\w", r"\\?\C:\t\naslab\wx"));
    }

    #[test]
    fn a_relative_name_is_backslashed_and_never_climbs_out() {
        let mut names = Names::default();
        let want: Vec<u16> = r"d\e\a.dat".encode_utf16().collect();
        assert_eq!(names.of("d//e/a.dat").unwrap(), &want[..]);
        assert_eq!(names.of("d/../a.dat").unwrap_err().errno, errno::EINVAL);
    }

    #[test]
    fn direct_opens_unbuffered_and_write_through_and_never_follow() {
        let d = OpenSpec {
            direct: true,
            ..OpenSpec::default()
        };
        let o = d.options();
        assert_eq!(
            o & FILE_NO_INTERMEDIATE_BUFFERING,
            FILE_NO_INTERMEDIATE_BUFFERING
        );
        assert_eq!(o & FILE_WRITE_THROUGH, FILE_WRITE_THROUGH);
        assert_eq!(o & FILE_OPEN_REPARSE_POINT, FILE_OPEN_REPARSE_POINT);
        let plain = OpenSpec::default().options();
        assert_eq!(plain, FILE_OPEN_REPARSE_POINT | FILE_NON_DIRECTORY_FILE);
        let create = OpenSpec {
            write: true,
            create: true,
            ..OpenSpec::default()
        };
        assert_eq!(create.create().disposition, FILE_OPEN_IF);
    }
}
