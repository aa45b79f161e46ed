//! What can go wrong standing up or taking down a lab, each with what to do.

use std::path::PathBuf;

/// Why a lab could not be made, used or taken down.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error(
        "the lab needs root (it makes loop devices, mounts file systems and runs servers); run naslab as root"
    )]
    NotRoot,
    #[error(
        "'{tool}' was not found; install Debian's {package} package (apt-get install {package})"
    )]
    ToolMissing {
        tool: &'static str,
        package: &'static str,
    },
    #[error("{command} failed ({status}): {stderr}")]
    Command {
        command: String,
        status: String,
        stderr: String,
    },
    #[error(
        "a lab named '{name}' is already up (state in '{dir}'); take it down with `naslab lab down --name {name}` or choose another --name"
    )]
    AlreadyUp { name: String, dir: PathBuf },
    #[error("no lab named '{name}' is up (no '{dir}/state.json')")]
    NotUp { name: String, dir: PathBuf },
    #[error("lab name '{0}' must be a plain name: letters, digits, '-' and '_'")]
    BadName(String),
    #[error("server option '{0}' must look like 'name = value' on one line")]
    BadOption(String),
    #[error("{what} '{value}' is not valid: {why}")]
    Invalid {
        what: &'static str,
        value: String,
        why: String,
    },
    #[error(
        "{server} did not start listening on 127.0.0.1:{port} within {secs} s; its log is '{log}'"
    )]
    NotListening {
        server: &'static str,
        port: u16,
        secs: u64,
        log: PathBuf,
    },
    #[error(
        "{server} did not log '{line}' within {secs} s of starting; {status}; its whole log is '{log}'"
    )]
    NotReady {
        server: &'static str,
        line: &'static str,
        secs: u64,
        status: String,
        log: PathBuf,
    },
    #[error("{server} (pid {pid}) exited while starting; {status}; its whole log is '{log}'")]
    Exited {
        server: &'static str,
        pid: u32,
        status: String,
        log: PathBuf,
    },
    #[error("cannot read the lab state '{path}': {why}; if the lab is gone, remove that file")]
    State { path: PathBuf, why: String },
    #[error("cannot {action} '{path}': {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the link emulator is missing: {0}; install Toxiproxy's server with: GOBIN=/usr/local/lib/naslab/bin go install -ldflags '-X github.com/Shopify/toxiproxy/v2.Version=v2.12.0' github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0 && mv /usr/local/lib/naslab/bin/server /usr/local/lib/naslab/bin/toxiproxy-server (scripts/test.sh does this), or set NASLAB_TOXIPROXY to its path"
    )]
    EmulatorMissing(String),
    #[error(
        "the link emulator (Toxiproxy) refused: {0}; its log is toxiproxy.out in the lab directory"
    )]
    Emulator(String),
    #[error("taking the lab down left work undone: {0}")]
    Leftovers(String),
}

impl LabError {
    /// An I/O failure on `path`.
    pub fn io<'a>(
        action: &'static str,
        path: &'a std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> LabError + 'a {
        move |source| LabError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

impl From<naslab_host::HostError> for LabError {
    fn from(e: naslab_host::HostError) -> Self {
        match e {
            naslab_host::HostError::ToolMissing { tool, package } => {
                LabError::ToolMissing { tool, package }
            }
            naslab_host::HostError::Command {
                command,
                status,
                stderr,
            } => LabError::Command {
                command,
                status,
                stderr,
            },
        }
    }
}

impl From<naslab_layout::LayoutError> for LabError {
    fn from(e: naslab_layout::LayoutError) -> Self {
        match e {
            naslab_layout::LayoutError::Host(h) => h.into(),
            other => LabError::Command {
                command: "file layout".into(),
                status: "failed".into(),
                stderr: other.to_string(),
            },
        }
    }
}
