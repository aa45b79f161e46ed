//! The allocation lab's write patterns: how Samba turns a Windows client's writes into
//! file-system calls (seed 002's testbench), and the client's own preallocation hints
//! (the NASPT paper, section 7). Each is timed through its final fsync, then its file's
//! extents are counted.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::analyze::{FileLayout, analyze_file};
use crate::error::LayoutError;

/// One way of writing a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Pattern {
    /// Samba with `strict allocate = no`: a 1-byte write at the end of each block, leaving
    /// the rest of the block a hole.
    #[serde(rename = "skip")]
    Skip,
    /// Samba with `strict allocate = yes`: the block's first bytes written as zeros, then
    /// its last byte.
    #[serde(rename = "clear")]
    Clear,
    /// `posix_fallocate` of all but the block's last byte, then a 1-byte write of it.
    #[serde(rename = "fallocate")]
    Fallocate,
    /// `posix_fallocate` of the whole block, nothing written.
    #[serde(rename = "fallocate+1")]
    FallocatePlus1,
    /// The seed's client program: one write per block, appended in order.
    #[serde(rename = "unbuffered")]
    Unbuffered,
    /// A Windows client's preallocation hints (1-byte writes far beyond the data) while
    /// the data arrives in 64 KiB writes; Samba writes both as they come (sparse).
    #[serde(rename = "hints")]
    Hints,
    /// The same, with the NASPT paper's Samba fix: a write that starts at most 2 MiB beyond
    /// the end of file first fills the gap with zeros; farther ones stay sparse.
    #[serde(rename = "hints-fix")]
    HintsFix,
}

impl Pattern {
    /// Every pattern, in the order tables show them.
    pub const ALL: [Pattern; 7] = [
        Pattern::Skip,
        Pattern::Clear,
        Pattern::Fallocate,
        Pattern::FallocatePlus1,
        Pattern::Unbuffered,
        Pattern::Hints,
        Pattern::HintsFix,
    ];

    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Pattern::Skip => "skip",
            Pattern::Clear => "clear",
            Pattern::Fallocate => "fallocate",
            Pattern::FallocatePlus1 => "fallocate+1",
            Pattern::Unbuffered => "unbuffered",
            Pattern::Hints => "hints",
            Pattern::HintsFix => "hints-fix",
        }
    }

    /// One line on what the pattern does.
    pub fn summary(self) -> &'static str {
        match self {
            Pattern::Skip => "1-byte write at each block's end (Samba strict allocate = no)",
            Pattern::Clear => "zeros, then each block's last byte (strict allocate = yes)",
            Pattern::Fallocate => "posix_fallocate(block - 1), then the last byte",
            Pattern::FallocatePlus1 => "posix_fallocate(block), nothing written",
            Pattern::Unbuffered => "one write per block, appended in order, no user-space buffer",
            Pattern::Hints => "Windows 1-byte hints ahead of 64 KiB data writes, sparse",
            Pattern::HintsFix => "the same with zero fill up to 2 MiB past end of file",
        }
    }
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Pattern {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Pattern::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Pattern::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown pattern '{s}'; the patterns are {}",
                    names.join(", ")
                )
            })
    }
}

/// The sizes the patterns write with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PatternOptions {
    /// The file's final size (rounded down to whole blocks for the block patterns).
    pub size_bytes: u64,
    /// The testbench's block: each step of skip, clear, fallocate, fallocate+1 and
    /// unbuffered covers one.
    pub block_bytes: u64,
    /// The client's data writes in the hint patterns.
    pub data_write_bytes: u64,
    /// Distance between two preallocation hints.
    pub hint_stride_bytes: u64,
    /// How far beyond the data the hints run.
    pub hint_lead_bytes: u64,
    /// The fix's limit: the farthest beyond end of file a write is zero-filled to.
    pub fill_limit_bytes: u64,
}

/// The seed's client program writes 9123-byte blocks, 10,000 of them (seed 002).
pub const SEED_BLOCK_BYTES: u64 = 9123;
/// 10,000 blocks of 9123 bytes: the seed's client program's file.
pub const SEED_SIZE_BYTES: u64 = 10_000 * SEED_BLOCK_BYTES;

impl Default for PatternOptions {
    fn default() -> Self {
        PatternOptions {
            size_bytes: SEED_SIZE_BYTES,
            block_bytes: SEED_BLOCK_BYTES,
            data_write_bytes: 64 << 10,
            hint_stride_bytes: 128 << 10,
            hint_lead_bytes: 15 << 20,
            fill_limit_bytes: 0x20_0000,
        }
    }
}

impl PatternOptions {
    /// Checks the options can work, naming the flag at fault.
    pub fn validate(&self) -> Result<(), LayoutError> {
        let bad = |flag, message: String| Err(LayoutError::InvalidOption { flag, message });
        if self.block_bytes < 2 || self.block_bytes > 1 << 30 {
            return bad(
                "--blksize",
                format!("{} bytes: give 2 bytes to 1 GiB", self.block_bytes),
            );
        }
        if self.size_bytes < self.block_bytes {
            return bad(
                "--size",
                format!(
                    "{} bytes is less than one block of {} bytes",
                    self.size_bytes, self.block_bytes
                ),
            );
        }
        if self.size_bytes > 1 << 42 {
            return bad("--size", format!("{} bytes is over 4 TiB", self.size_bytes));
        }
        if self.data_write_bytes == 0 || self.data_write_bytes > 64 << 20 {
            return bad("--data-write", "give 1 byte to 64 MiB".into());
        }
        if self.hint_lead_bytes > 1 << 40 {
            return bad("--hint-lead", "give at most 1 TiB".into());
        }
        if self.hint_stride_bytes == 0 {
            return bad("--hint-stride", "must be at least 1 byte".into());
        }
        Ok(())
    }

    /// Whole blocks the block patterns write.
    pub fn blocks(&self) -> u64 {
        self.size_bytes / self.block_bytes.max(1)
    }
}

/// One pattern's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternRun {
    pub pattern: Pattern,
    /// From creating the file to the end of its fsync.
    pub seconds: f64,
    /// System calls that wrote or allocated (pwrite, write, posix_fallocate).
    pub calls: u64,
    /// Bytes passed to write calls (zero fills included).
    pub bytes_written: u64,
    pub layout: FileLayout,
}

/// Writes one pattern into a new file in `dir`, times it through fsync, reads its layout,
/// and removes the file. `cancel` is polled between steps.
pub fn run_pattern(
    dir: &Path,
    pattern: Pattern,
    opts: &PatternOptions,
    cancel: &AtomicBool,
) -> Result<PatternRun, LayoutError> {
    opts.validate()?;
    let path = dir.join(format!(
        "naslab-alloc-{}.dat",
        pattern.name().replace('+', "plus")
    ));
    let guard = RemoveOnDrop(path.clone());
    let started = Instant::now();
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(LayoutError::io("create", &path))?;
    let mut w = Writer {
        file: &file,
        path: &path,
        cancel,
        calls: 0,
        bytes: 0,
        eof: 0,
    };
    match pattern {
        Pattern::Skip => w.blocks(opts, |w, pos, bs| w.pwrite_byte(pos + bs - 1))?,
        Pattern::Clear => {
            let zeros = vec![0u8; (opts.block_bytes - 1) as usize];
            w.blocks(opts, |w, pos, bs| {
                w.pwrite(&zeros, pos)?;
                w.pwrite_byte(pos + bs - 1)
            })?
        }
        Pattern::Fallocate => w.blocks(opts, |w, pos, bs| {
            w.fallocate(pos, bs - 1)?;
            w.pwrite_byte(pos + bs - 1)
        })?,
        Pattern::FallocatePlus1 => w.blocks(opts, |w, pos, bs| w.fallocate(pos, bs))?,
        Pattern::Unbuffered => {
            let data = payload(opts.block_bytes as usize);
            w.blocks(opts, |w, pos, _| w.pwrite(&data, pos))?
        }
        Pattern::Hints => w.hints(opts, None)?,
        Pattern::HintsFix => w.hints(opts, Some(opts.fill_limit_bytes))?,
    }
    file.sync_all().map_err(w.err("fsync"))?;
    let seconds = started.elapsed().as_secs_f64();
    let (calls, bytes) = (w.calls, w.bytes);
    drop(file);
    let layout = analyze_file(&path, true)?;
    drop(guard);
    Ok(PatternRun {
        pattern,
        seconds,
        calls,
        bytes_written: bytes,
        layout,
    })
}

/// Non-zero bytes, so no file system can store the data as a hole.
fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8 + 1).collect()
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

struct Writer<'a> {
    file: &'a File,
    path: &'a Path,
    cancel: &'a AtomicBool,
    calls: u64,
    bytes: u64,
    /// The end of file as the writes have left it.
    eof: u64,
}

impl Writer<'_> {
    fn err(&self, what: &'static str) -> impl Fn(io::Error) -> LayoutError + '_ {
        move |e| {
            if e.raw_os_error() == Some(libc::ENOSPC) {
                LayoutError::NoSpace {
                    path: self.path.to_path_buf(),
                }
            } else {
                LayoutError::Io {
                    what,
                    path: self.path.to_path_buf(),
                    source: e,
                }
            }
        }
    }

    fn check_cancel(&self, step: u64) -> Result<(), LayoutError> {
        if step & 255 == 0 && self.cancel.load(Ordering::Relaxed) {
            return Err(LayoutError::Interrupted);
        }
        Ok(())
    }

    fn pwrite(&mut self, buf: &[u8], pos: u64) -> Result<(), LayoutError> {
        self.file
            .write_all_at(buf, pos)
            .map_err(self.err("write"))?;
        self.calls += 1;
        self.bytes += buf.len() as u64;
        self.eof = self.eof.max(pos + buf.len() as u64);
        Ok(())
    }

    fn pwrite_byte(&mut self, pos: u64) -> Result<(), LayoutError> {
        self.pwrite(&[0u8], pos)
    }

    fn fallocate(&mut self, pos: u64, len: u64) -> Result<(), LayoutError> {
        // SAFETY: a valid descriptor and in-range offsets; posix_fallocate returns an errno.
        let rc = unsafe { libc::posix_fallocate(self.file.as_raw_fd(), pos as i64, len as i64) };
        if rc != 0 {
            return Err(self.err("fallocate")(io::Error::from_raw_os_error(rc)));
        }
        self.calls += 1;
        self.eof = self.eof.max(pos + len);
        Ok(())
    }

    /// Runs `step(pos, block)` for each whole block of the file.
    fn blocks(
        &mut self,
        opts: &PatternOptions,
        mut step: impl FnMut(&mut Self, u64, u64) -> Result<(), LayoutError>,
    ) -> Result<(), LayoutError> {
        let bs = opts.block_bytes;
        for i in 0..opts.blocks() {
            self.check_cancel(i)?;
            step(self, i * bs, bs)?;
        }
        Ok(())
    }

    /// A write as Samba makes it: with a fill limit, a write that starts beyond end of
    /// file by no more than the limit first fills the gap with zeros (the paper's
    /// `vfs_fill_sparse` with `ALLOCATION_LIMIT`).
    fn samba_write(
        &mut self,
        buf: &[u8],
        pos: u64,
        fill_limit: Option<u64>,
        zeros: &[u8],
    ) -> Result<(), LayoutError> {
        if let Some(limit) = fill_limit
            && pos > self.eof
            && pos - self.eof <= limit
        {
            let mut at = self.eof;
            while at < pos {
                let n = (pos - at).min(zeros.len() as u64) as usize;
                self.pwrite(&zeros[..n], at)?;
                at += n as u64;
            }
        }
        self.pwrite(buf, pos)
    }

    /// The client's data in `data_write_bytes` writes, each preceded by the hints that
    /// keep 1-byte writes `hint_lead_bytes` ahead of it; the file is cut back to its size
    /// at the end, as the client sets the end of file when it closes.
    fn hints(&mut self, opts: &PatternOptions, fill_limit: Option<u64>) -> Result<(), LayoutError> {
        let data = payload(opts.data_write_bytes as usize);
        let zeros = vec![0u8; 1 << 20];
        let mut data_pos = 0u64;
        let mut hint_end = opts.hint_stride_bytes;
        let mut step = 0u64;
        while data_pos < opts.size_bytes {
            self.check_cancel(step)?;
            step += 1;
            while hint_end <= data_pos + opts.hint_lead_bytes {
                self.samba_write(&[0u8], hint_end - 1, fill_limit, &zeros)?;
                hint_end += opts.hint_stride_bytes;
            }
            let n = opts.data_write_bytes.min(opts.size_bytes - data_pos) as usize;
            self.samba_write(&data[..n], data_pos, fill_limit, &zeros)?;
            data_pos += n as u64;
        }
        self.file
            .set_len(opts.size_bytes)
            .map_err(self.err("truncate"))?;
        self.calls += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_names_round_trip_and_unknown_ones_list_the_choices() {
        for p in Pattern::ALL {
            assert_eq!(p.name().parse::<Pattern>(), Ok(p));
        }
        let e = "zero".parse::<Pattern>().unwrap_err();
        assert!(e.contains("fallocate+1"), "{e}");
    }

    #[test]
    fn options_that_cannot_work_name_their_flag() {
        let mut o = PatternOptions {
            size_bytes: 10,
            ..PatternOptions::default()
        };
        assert!(o.validate().unwrap_err().to_string().starts_with("--size"));
        o.size_bytes = 1 << 20;
        o.block_bytes = 1;
        assert!(
            o.validate()
                .unwrap_err()
                .to_string()
                .starts_with("--blksize")
        );
    }

    #[test]
    fn defaults_are_the_seeds_client_program() {
        let o = PatternOptions::default();
        assert_eq!(o.blocks(), 10_000);
        assert_eq!(o.size_bytes, 91_230_000);
        assert_eq!(o.fill_limit_bytes, 2 << 20);
    }
}
