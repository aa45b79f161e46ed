//! What can go wrong running the system's tools, each with what to do.

/// A tool that is missing or failed; every message says what the user can do about it.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// An external tool naslab needs is not installed.
    #[error("{tool} not found on PATH; install {package} (apt-get install {package})")]
    ToolMissing {
        tool: &'static str,
        package: &'static str,
    },
    /// An external command failed.
    #[error("'{command}' failed ({status}): {stderr}")]
    Command {
        command: String,
        status: String,
        stderr: String,
    },
}
