//! Getting real workloads into naslab: capturing a program's file I/O (through eBPF or
//! strace)
//! and importing traces other tools made (strace logs, dbench loadfiles, fio iologs,
//! Process Monitor CSV exports). Every importer reads its input as a stream and writes
//! a naslab trace through one [`Builder`].

pub mod builder;
#[cfg(target_os = "linux")]
pub mod capture;
pub mod dbench;
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
mod ebpf;
mod error;
pub mod fio;
mod lines;
mod path_tree;
pub mod procmon;
pub mod strace;
pub mod tree;

pub use builder::{Builder, Summary};
#[cfg(target_os = "linux")]
pub use capture::{
    CaptureOptions, Captured, DEFAULT_COLLECTOR_SOCKET, Via, capture, serve_collector,
};
pub use error::ImportError;

use std::io::BufRead;
use std::path::Path;

/// The formats `naslab import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Strace,
    Dbench,
    FioIolog,
    Procmon,
}

impl Format {
    /// The format's name on the command line (`naslab import NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Strace => "strace",
            Format::Dbench => "dbench",
            Format::FioIolog => "fio-iolog",
            Format::Procmon => "procmon",
        }
    }

    /// The program that writes this format's files, for messages.
    fn writer(self) -> &'static str {
        match self {
            Format::Strace => "strace (strace -f -ttt -T -yy -s 4096 -o LOG ...)",
            Format::Dbench => "the loadfile's maker",
            Format::FioIolog => "fio (write_iolog=)",
            Format::Procmon => "Process Monitor (File > Save > CSV)",
        }
    }

    /// What to try when every line of the input was left out.
    fn hint_when_nothing_kept(self) -> &'static str {
        match self {
            Format::Strace | Format::FioIolog => "; check --root: only files under it are kept",
            Format::Procmon => "; check --process and --windows-root",
            Format::Dbench => "",
        }
    }
}

/// Options the importers share or need.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    pub workload: String,
    /// strace: the directory whose files are kept (paths become relative to it).
    /// fio: the directory absolute file names are taken relative to.
    pub root: Option<std::path::PathBuf>,
    /// dbench: how many clients (streams) replay the loadfile.
    pub clients: u32,
    /// procmon: keep only this process's events (by name, case-insensitive).
    pub process: Option<String>,
    /// procmon: the Windows directory that becomes the workload directory.
    pub windows_root: Option<String>,
}

/// Imports `input` (in `format`) into a trace at `output`.
pub fn import(
    format: Format,
    input: &Path,
    output: &Path,
    opts: &ImportOptions,
) -> Result<Summary, ImportError> {
    let file = std::fs::File::open(input).map_err(|e| ImportError::Read {
        path: input.to_path_buf(),
        source: e,
    })?;
    let empty = file.metadata().is_ok_and(|m| m.is_file() && m.len() == 0);
    if empty {
        return Err(ImportError::Usage(format!(
            "'{}' is empty: there is nothing to import; check that {} wrote to this file and that it had finished",
            input.display(),
            format.writer()
        )));
    }
    let reader: Box<dyn BufRead> = Box::new(std::io::BufReader::with_capacity(1 << 20, file));
    let generator = format!("naslab import {} {}", format.name(), input.display());
    let mut b = Builder::new(&opts.workload, &generator)?;
    match format {
        Format::Strace => {
            let root = match &opts.root {
                Some(r) => std::path::absolute(r).unwrap_or_else(|_| r.clone()),
                None => std::env::current_dir().map_err(|e| ImportError::Read {
                    path: ".".into(),
                    source: e,
                })?,
            };
            strace::StraceImporter::new(&root).read_log(input, reader, &mut b)?;
        }
        Format::Dbench => dbench::read(input, reader, opts.clients.max(1), &mut b)?,
        Format::FioIolog => fio::read(input, reader, opts.root.as_deref(), &mut b)?,
        Format::Procmon => procmon::read(input, reader, opts, &mut b)?,
    }
    // Checked before the output is created, so that a file already there is kept.
    let summary = b.summary();
    if summary.total_ops() == 0 {
        let left_out: Vec<String> = summary
            .skipped
            .iter()
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
        return Err(ImportError::Usage(format!(
            "'{}' holds no file operations naslab can replay, so no trace was written{}",
            input.display(),
            if left_out.is_empty() {
                String::new()
            } else {
                format!(
                    " (left out: {}){}",
                    left_out.join(", "),
                    format.hint_when_nothing_kept()
                )
            }
        )));
    }
    b.finish(output)
}
