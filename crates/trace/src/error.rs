use std::path::PathBuf;

/// Why a trace could not be read or written; every variant names the file and, where
/// there is one, the line, and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("cannot read trace '{path}': {cause}; check the path and its permissions")]
    Io {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// The file could not be created or written.
    #[error("cannot write trace '{path}': {cause}{}", write_hint(cause))]
    Write {
        path: PathBuf,
        cause: std::io::Error,
    },
    /// The zstd stream is damaged: what follows line `after` cannot be decompressed.
    #[error(
        "{path}: the zstd stream is damaged after line {after} ({cause}); the file is truncated or corrupt: copy or export it again"
    )]
    Corrupt {
        path: PathBuf,
        after: u64,
        cause: std::io::Error,
    },
    /// A line is not what the format allows.
    #[error("{path}:{line}: {message}")]
    Invalid {
        path: PathBuf,
        line: u64,
        message: String,
    },
    /// The trace announces a format or version this build does not read.
    #[error("{path}:{line}: {message}")]
    Unsupported {
        path: PathBuf,
        line: u64,
        message: String,
    },
}

fn write_hint(cause: &std::io::Error) -> &'static str {
    match cause.kind() {
        std::io::ErrorKind::IsADirectory => {
            "; it is a directory: give a file name, such as DIR/trace.jsonl.zst"
        }
        std::io::ErrorKind::NotFound => "; create its directory first",
        std::io::ErrorKind::PermissionDenied => "; you may not write there: choose another place",
        std::io::ErrorKind::StorageFull => "; the disk is full: free space or choose another place",
        _ => "",
    }
}

impl TraceError {
    /// The line the error is about, when there is one.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Io { .. } | TraceError::Write { .. } => None,
            TraceError::Corrupt { after, .. } => Some(after + 1),
            TraceError::Invalid { line, .. } | TraceError::Unsupported { line, .. } => Some(*line),
        }
    }
}
