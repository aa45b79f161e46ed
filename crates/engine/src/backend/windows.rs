//! A local directory, a mapped drive (`Z:\bench`) or a UNC path (`\\nas\share\bench`)
//! on Windows, through the Win32 file API and so through the Windows SMB redirector
//! for a share: `CreateFileW`, `ReadFile`/`WriteFile` at an offset, `FlushFileBuffers`,
//! `SetFileInformationByHandle` (end of file, allocation) and directory
//! listings, several of them through the standard library's Windows calls.
//!
//! The sandbox keeps the rules of every target: naslab's marked `naslab/` directory,
//! made, checked, held and emptied by [`RemoteSandbox`] (the lock is its lock directory,
//! as on a share). No reparse point (symbolic link, junction, mount point) is followed:
//! every open names the entry itself (`FILE_FLAG_OPEN_REPARSE_POINT`) and is refused when
//! what was opened is a reparse point, and the final path of what was opened must lie in
//! the workload directory, so a junction put in place of a directory on the way is
//! refused too.

mod fs;
mod handle;

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use naslab_trace::OpKind;

use super::remote::{RemoteSandbox, RemoteSandboxError};
use super::{Backend, BackendOptions, Caps, Handle, OpError, OpenHow, Target};
use crate::plan::FileTable;
pub use fs::errno_of;
use fs::{io_err, LocalFs};
use handle::{OpenSpec, Opened};

/// What the Windows backend can do: no hard or symbolic links (creating a symbolic link
/// needs a privilege most users lack), and one op in flight per stream.
pub(super) const WINDOWS_CAPS: Caps = {
    let mut ops = [true; OpKind::ALL.len()];
    ops[OpKind::Link as usize] = false;
    ops[OpKind::Symlink as usize] = false;
    // Nor, yet, file system queries, time setting or byte-range locks (see
    // docs/trace-format.md).
    ops[OpKind::Statfs as usize] = false;
    ops[OpKind::Utime as usize] = false;
    ops[OpKind::Lock as usize] = false;
    ops[OpKind::Unlock as usize] = false;
    Caps {
        ops,
        direct_io: true,
        drop_cache: true,
        moves_data: true,
        max_queue_depth: 1,
    }
};

/// Unbuffered data ops must be aligned to this (the sector size of nearly every disk;
/// a larger one makes such ops fall back to a buffered handle).
const DIRECT_ALIGN: u64 = 512;

/// A directory on Windows, local or on a share reached through the OS client.
pub struct WindowsTarget {
    /// The target directory in its absolute, extended-length form.
    base: PathBuf,
    /// naslab's marked directory and the file system it is kept on.
    held: Mutex<(RemoteSandbox, LocalFs)>,
}

impl WindowsTarget {
    /// Opens `<dir>/naslab` (`<dir>/<client>/naslab` for a multi-client job's client),
    /// making and marking it when absent, and holds it for this process. With `join`,
    /// joins the directory another process of the same job holds instead.
    pub fn open(
        dir: &Path,
        client: Option<&str>,
        join: bool,
    ) -> Result<WindowsTarget, RemoteSandboxError> {
        let base = fs::absolute(dir).map_err(|e| RemoteSandboxError::Request {
            action: "find",
            path: dir.display().to_string(),
            error: io_err(e),
        })?;
        let mut fs = LocalFs::new(base.clone());
        match fs.kind_of_base() {
            Ok(super::remote::EntryKind::Dir) => {}
            Ok(super::remote::EntryKind::Link) => {
                return Err(RemoteSandboxError::Link(dir.display().to_string()))
            }
            Ok(super::remote::EntryKind::File) => {
                return Err(RemoteSandboxError::NotDir(dir.display().to_string()))
            }
            Err(e) if e.errno == crate::errno::ENOENT => {
                return Err(RemoteSandboxError::Missing(dir.display().to_string()))
            }
            Err(error) => {
                return Err(RemoteSandboxError::Request {
                    action: "open",
                    path: dir.display().to_string(),
                    error,
                })
            }
        }
        let sandbox = if join {
            crate::marker::wait_for_holder(
                || RemoteSandbox::open_in(&mut fs, "", client, true),
                |e| matches!(e, RemoteSandboxError::NotHeld(_)),
            )?
        } else {
            RemoteSandbox::open_in(&mut fs, "", client, false)?
        };
        Ok(WindowsTarget {
            base,
            held: Mutex::new((sandbox, fs)),
        })
    }

    /// naslab's directory (`<target>\naslab`), where every workload runs.
    pub fn root(&self) -> PathBuf {
        let held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        fs::join(&self.base, held.0.root())
    }

    fn workload_path(&self, workload_dir: &str) -> PathBuf {
        self.root().join(workload_dir)
    }
}

impl Drop for WindowsTarget {
    fn drop(&mut self) {
        let held = self.held.get_mut().unwrap_or_else(|e| e.into_inner());
        let (sandbox, fs) = (&held.0, &mut held.1);
        if let Err(e) = sandbox.release(fs) {
            eprintln!(
                "warning: naslab could not let go of '{}' ({e}); remove '{}' by hand before the next run there",
                sandbox.root(),
                sandbox.lock_path()
            );
        }
    }
}

fn sandbox_err(e: RemoteSandboxError) -> OpError {
    e.into_op_error()
}

impl Target for WindowsTarget {
    fn backend_name(&self) -> &'static str {
        "windows"
    }

    fn caps(&self) -> Caps {
        WINDOWS_CAPS
    }

    fn connect(
        &self,
        workload_dir: &str,
        files: Arc<FileTable>,
        options: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        let dir = self.workload_path(workload_dir);
        let dir_final = handle::final_path_of_dir(&dir)?;
        Ok(Box::new(WindowsBackend {
            dir,
            dir_final,
            files,
            direct: options.direct,
            open: HashMap::new(),
            next: 1,
            unaligned: 0,
        }))
    }

    fn check_direct(&self, workload_dir: &str) -> Result<(), OpError> {
        let probe = self
            .workload_path(workload_dir)
            .join(".naslab-direct-probe");
        let spec = OpenSpec {
            write: true,
            create: true,
            direct: true,
            ..OpenSpec::default()
        };
        let r = handle::open(&probe, &spec).map(drop);
        // The probe file is ours and removed at once.
        let _ = std::fs::remove_file(&probe);
        r
    }

    fn local_dir(&self) -> Option<PathBuf> {
        Some(self.root())
    }

    fn fresh_workload_dir(&self, workload_dir: &str) -> Result<(), OpError> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (sandbox, fs) = &mut *held;
        sandbox
            .fresh_workload_dir(fs, workload_dir)
            .map(|_| ())
            .map_err(sandbox_err)
    }

    fn remove_all(self: Box<Self>) -> Result<bool, OpError> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let (sandbox, fs) = &mut *held;
        sandbox.remove_all(fs).map_err(sandbox_err)
    }
}

/// One stream's connection to a Windows directory.
pub struct WindowsBackend {
    /// The workload directory (absolute, extended-length).
    dir: PathBuf,
    /// Its final path as Windows reports it for an open handle: what everything opened
    /// must lie under.
    dir_final: String,
    files: Arc<FileTable>,
    direct: bool,
    /// The open handles by the number the replay knows them by.
    open: HashMap<Handle, Opened>,
    next: Handle,
    unaligned: u64,
}

impl WindowsBackend {
    fn path(&self, file: u32) -> PathBuf {
        fs::join(&self.dir, self.files.path(file))
    }

    fn opened(&mut self, h: Handle) -> Result<&mut Opened, OpError> {
        self.open
            .get_mut(&h)
            .ok_or(OpError::errno(crate::errno::EBADF))
    }

    /// The handle a data op of this shape should use: an unbuffered one only when the
    /// op is aligned, else (opened once) a buffered one of the same file.
    fn data_file(&mut self, h: Handle, offset: u64, len: usize) -> Result<&File, OpError> {
        let aligned =
            offset.is_multiple_of(DIRECT_ALIGN) && (len as u64).is_multiple_of(DIRECT_ALIGN);
        let direct = self.opened(h)?.direct;
        if !direct || aligned {
            return Ok(&self.opened(h)?.file);
        }
        self.unaligned += 1;
        let dir_final = self.dir_final.clone();
        let o = self.opened(h)?;
        if o.buffered.is_none() {
            let spec = OpenSpec {
                read: o.spec.read,
                write: o.spec.write,
                ..OpenSpec::default()
            };
            let f = handle::open_checked(&o.path, &spec, &dir_final)?;
            o.buffered = Some(f);
        }
        o.buffered
            .as_ref()
            .ok_or(OpError::errno(crate::errno::EBADF))
    }
}

impl Backend for WindowsBackend {
    fn caps(&self) -> Caps {
        WINDOWS_CAPS
    }

    fn open(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError> {
        let path = self.path(file);
        let spec = OpenSpec {
            read: how.read || !how.write,
            write: how.write,
            create: how.create,
            truncate: how.truncate,
            sync: how.sync,
            direct: self.direct || how.direct,
            random: how.random,
            dir: false,
        };
        let f = handle::open_checked(&path, &spec, &self.dir_final)?;
        let h = self.next;
        self.next += 1;
        self.open.insert(
            h,
            Opened {
                file: f,
                buffered: None,
                direct: spec.direct,
                append: how.append,
                path,
                spec,
            },
        );
        Ok(h)
    }

    fn close(&mut self, h: Handle) -> Result<(), OpError> {
        // Closing the handle is dropping it (CloseHandle).
        self.open
            .remove(&h)
            .map(drop)
            .ok_or(OpError::errno(crate::errno::EBADF))
    }

    #[inline]
    fn read(&mut self, h: Handle, offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        let f = self.data_file(h, offset, buf.len())?;
        handle::read_at(f, buf, offset)
    }

    #[inline]
    fn write(&mut self, h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        let append = self.opened(h)?.append;
        let f = self.data_file(h, offset, buf.len())?;
        if append {
            // As O_APPEND: every write lands at the end of the file, whatever the offset.
            handle::write_at(f, buf, handle::APPEND)
        } else {
            handle::write_at(f, buf, offset)
        }
    }

    fn fsync(&mut self, h: Handle) -> Result<(), OpError> {
        let o = self.opened(h)?;
        handle::flush(&o.file, &o.path, &o.spec)
    }

    fn truncate(&mut self, h: Handle, len: u64) -> Result<(), OpError> {
        self.opened(h)?.file.set_len(len).map_err(io_err)
    }

    fn fallocate(&mut self, h: Handle, offset: u64, len: u64) -> Result<(), OpError> {
        handle::allocate(&self.opened(h)?.file, offset.saturating_add(len))
    }

    fn stat(&mut self, file: u32) -> Result<u64, OpError> {
        handle::size_of_entry(&self.path(file), &self.dir_final)
    }

    fn mkdir(&mut self, file: u32) -> Result<(), OpError> {
        let path = self.path(file);
        handle::check_parent(&path, &self.dir_final)?;
        std::fs::create_dir(&path).map_err(io_err)
    }

    fn readdir(&mut self, file: u32) -> Result<u64, OpError> {
        let path = self.path(file);
        // The directory itself is opened and checked first: the listing never goes
        // through a reparse point.
        let spec = OpenSpec {
            read: true,
            dir: true,
            ..OpenSpec::default()
        };
        let _dir = handle::open_checked(&path, &spec, &self.dir_final)?;
        let mut entries = 0u64;
        for e in std::fs::read_dir(&path).map_err(io_err)? {
            e.map_err(io_err)?;
            entries += 1;
        }
        Ok(entries)
    }

    fn unlink(&mut self, file: u32) -> Result<(), OpError> {
        let is_dir = self.files.is_dir(file);
        handle::remove(&self.path(file), is_dir, &self.dir_final)
    }

    fn rename(&mut self, from: u32, to: u32) -> Result<(), OpError> {
        let (a, b) = (self.path(from), self.path(to));
        handle::rename(&a, &b, &self.dir_final)
    }

    fn drop_cache(&mut self, file: u32) -> Result<(), OpError> {
        handle::write_back_and_purge(&self.path(file), &self.dir_final)
    }

    fn unaligned_direct_ops(&self) -> u64 {
        self.unaligned
    }
}

#[cfg(test)]
mod tests;
