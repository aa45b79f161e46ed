//! The backup test of the NSS delayed-allocation study (seed 000): many connections
//! create their files at once (which is what fragments them), then one reader backs
//! the whole tree up, reading every file sequentially in large blocks.

use naslab_trace::{FileKind, Trace};

use super::Multi;

/// The backup's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backup {
    /// Connections creating files at once before the backup (the study used 590).
    pub writers: u32,
    /// Files each writer creates (the study: 50).
    pub files_per_writer: u32,
    /// Each file's size (the study: 1 MB).
    pub file_size: u64,
    /// The writers' record size.
    pub write_record: u64,
    /// The backup's read size.
    pub read_block: u64,
}

impl Default for Backup {
    fn default() -> Self {
        Backup {
            writers: 590,
            files_per_writer: 5,
            file_size: 1 << 20,
            write_record: 4096,
            read_block: 1 << 20,
        }
    }
}

impl Backup {
    /// Files backed up.
    pub fn files(&self) -> u64 {
        self.writers as u64 * self.files_per_writer as u64
    }

    /// The trace: the writers' files are written in a warm-up, every writer a stream of
    /// its own running at once (so their allocations interleave as they did for the
    /// study's connections), then one more stream reads every file, measured.
    pub fn generate(&self) -> Trace {
        let mut m = Multi::new(
            "Backup",
            format!(
                "{} files of {} B written by {} connections at once, then read back in {} B blocks by one reader",
                self.files(),
                self.file_size,
                self.writers,
                self.read_block
            ),
            format!(
                "naslab-workload backup writers={} files={} size={} record={} block={}",
                self.writers,
                self.files_per_writer,
                self.file_size,
                self.write_record,
                self.read_block
            ),
        );
        let mut all = Vec::new();
        for w in 0..self.writers {
            for f in 0..self.files_per_writer {
                let id = m.declare(
                    format!("user{w:03}/doc{f:03}.dat"),
                    FileKind::File,
                    0,
                    false,
                );
                m.write_new(w, id, self.file_size, self.write_record, true);
                all.push(id);
            }
        }
        // The reader is a stream of its own, after the writers.
        let reader = self.writers;
        for id in all {
            m.read_all(reader, id, self.file_size, self.read_block, false);
        }
        m.finish()
    }
}
