//! The NFS ingest test (seed 001, `perf.pl BLOCKSIZE BLOCKSPERFILE TOTALFILES FILESPERDIR
//! ITERATIONS`): TOTALFILES new files of BLOCKSPERFILE blocks, FILESPERDIR to a directory.
//! Iterations are naslab's batch mode.

use naslab_trace::{FileKind, OpFlags, OpKind, Trace};

use super::Multi;

/// The ingest's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ingest {
    /// Bytes per write (BLOCKSIZE).
    pub block_size: u64,
    /// Writes per file (BLOCKSPERFILE).
    pub blocks_per_file: u64,
    /// Files in all (TOTALFILES).
    pub total_files: u64,
    /// Files per directory (FILESPERDIR).
    pub files_per_dir: u64,
}

impl Ingest {
    /// The workload's name, which carries the files per directory.
    pub fn name(&self) -> String {
        format!("Ingest_{}PerDir", self.files_per_dir)
    }

    /// Bytes written.
    pub fn bytes(&self) -> u64 {
        self.block_size * self.blocks_per_file * self.total_files
    }

    /// The trace: directories are made as they fill (mkdir), each file created and
    /// written in blocks, then closed.
    pub fn generate(&self) -> Trace {
        let mut m = Multi::new(
            &self.name(),
            format!(
                "{} files of {} x {} B, {} per directory",
                self.total_files, self.blocks_per_file, self.block_size, self.files_per_dir
            ),
            format!(
                "naslab-workload ingest {} {} {} {}",
                self.block_size, self.blocks_per_file, self.total_files, self.files_per_dir
            ),
        );
        let per_dir = self.files_per_dir.max(1);
        let mut dir = 0;
        for i in 0..self.total_files {
            if i % per_dir == 0 {
                dir = m.declare(format!("d{:05}", i / per_dir), FileKind::Dir, 0, false);
                m.op(0, i, OpKind::Mkdir, dir, 0, 0, OpFlags::default(), false);
            }
            let dir_path = m.trace.files[dir as usize].path.clone();
            let f = m.declare(
                format!("{dir_path}/mkfile{i:07}.dat"),
                FileKind::File,
                0,
                false,
            );
            m.op(0, i, OpKind::Create, f, 0, 0, OpFlags::WRITE, false);
            for b in 0..self.blocks_per_file {
                m.op(
                    0,
                    i,
                    OpKind::Write,
                    f,
                    b * self.block_size,
                    self.block_size,
                    OpFlags::default(),
                    false,
                );
            }
            m.op(0, i, OpKind::Close, f, 0, 0, OpFlags::default(), false);
        }
        m.finish()
    }
}
