use std::path::PathBuf;

use naslab_trace::TraceError;

/// Why an import or a capture failed; input errors name the file and the line.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A line the importer cannot make sense of.
    #[error("{path}:{line}: {message}")]
    Line {
        path: PathBuf,
        line: u64,
        message: String,
    },
    /// The input could not be read.
    #[error("cannot read '{path}': {source}; check the path and its permissions")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The trace could not be written, or its temporary op spool could not be used.
    #[error("cannot write the trace: {0}")]
    Write(String),
    /// Something about the request itself (options, the command to capture).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Trace(#[from] TraceError),
}

impl ImportError {
    /// The line an input error is about.
    pub fn line(&self) -> Option<u64> {
        match self {
            ImportError::Line { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// Builds line errors for one input file.
#[derive(Debug, Clone)]
pub struct LineErr {
    pub path: PathBuf,
}

impl LineErr {
    pub fn at(&self, line: u64, message: impl Into<String>) -> ImportError {
        ImportError::Line {
            path: self.path.clone(),
            line,
            message: message.into(),
        }
    }
}
