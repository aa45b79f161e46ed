use std::path::PathBuf;

/// Why a report or comparison could not be made; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The run directory does not exist.
    #[error("'{}' does not exist; give a run directory made by `naslab run` (OUT/LABEL/TIMESTAMP)", .0.display())]
    NoDir(PathBuf),
    /// The directory has no run.json (perhaps it holds run directories one level down).
    #[error("'{}' has no run.json, so it is not a naslab run directory{hint}", dir.display())]
    NoRunJson {
        /// The directory given.
        dir: PathBuf,
        /// A suggestion: the run directories found below it, if any.
        hint: String,
    },
    /// run.json is there but unreadable or not naslab's.
    #[error("cannot read '{}': {why}; it should be the run.json `naslab run` wrote", path.display())]
    BadRunJson {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// run.json comes from a newer naslab with a layout this one does not know.
    #[error("'{}' has schema version {found}, but this naslab reads up to version {known}; use a newer naslab to report on it", path.display())]
    NewerSchema {
        /// The file.
        path: PathBuf,
        /// Its schema version.
        found: u32,
        /// The newest version this build reads.
        known: u32,
    },
    /// A comparison was asked for with a baseline that is not one of the runs.
    #[error(
        "the baseline '{0}' is none of the runs given; name one of them by its directory, its label or its time stamp, or leave --baseline out to use the first"
    )]
    NoSuchBaseline(String),
    /// A comparison needs at least one run.
    #[error("nothing to compare: give one or more run directories")]
    NoRuns,
    /// A page was written, but a part of it does not decode: a bug in naslab.
    #[error("'{}' was written, but it is broken: {why}; part of the page cannot be shown. This is a bug in naslab: please report it with this message and the run directory (run.json and the op records are intact; the figures in the terminal table, run.json and the CSV exports are not affected)", path.display())]
    BrokenPage {
        /// The page.
        path: PathBuf,
        /// What is broken.
        why: String,
    },
    /// Reading or writing a file failed.
    #[error("cannot {what} '{}': {source}", path.display())]
    Io {
        /// What was being done ("write", "read").
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
}
