//! The run's file set as backends see it: entries named by their dense index.

use naslab_trace::{FileKind, Prepare};

/// One entry of the run's file set, by dense index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// The id the trace gave it; `None` for a parent directory preparation adds.
    pub id: Option<u32>,
    pub path: String,
    pub kind: FileKind,
    pub size: u64,
    pub exists: bool,
    pub prepare: Prepare,
}

/// The run's file set; backends and ops name entries by index into it.
#[derive(Debug, Clone, Default)]
pub struct FileTable {
    pub entries: Vec<FileEntry>,
}

impl FileTable {
    /// The entry's path relative to the workload directory.
    pub fn path(&self, index: u32) -> &str {
        self.entries
            .get(index as usize)
            .map(|e| e.path.as_str())
            .unwrap_or("")
    }

    /// Whether the entry is a directory (false for an index past the table).
    pub fn is_dir(&self, index: u32) -> bool {
        self.entries
            .get(index as usize)
            .is_some_and(|e| e.kind == FileKind::Dir)
    }
}
