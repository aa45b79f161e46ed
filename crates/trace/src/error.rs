use std::path::PathBuf;

/// Why a trace could not be read or written; every variant names the file and, where
/// there is one, the line, and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read.
    #[error("cannot read trace '{path}': {source}; check the path and its permissions")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
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

impl TraceError {
    /// The line the error is about, when there is one.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Io { .. } => None,
            TraceError::Invalid { line, .. } | TraceError::Unsupported { line, .. } => Some(*line),
        }
    }
}
