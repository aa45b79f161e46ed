//! Every backend naslab has, and how a run's `--target` opens one: the registry that
//! `naslab backends` prints, and the opener that picks the backend for a directory, an
//! `smb://` or `nfs://` URL, or no target at all. Adding a backend is a crate of its own
//! behind `naslab-backend` plus its line here (docs/architecture.md).

#[cfg(target_os = "linux")]
mod mount;
mod open;
pub mod registry;

/// `--target` URLs, and whether a target is one.
pub mod url {
    pub use crate::registry::is_remote;
    pub use naslab_remote::url::*;
}

#[cfg(target_os = "linux")]
pub use naslab_local::{PosixBackend, PosixTarget, Sandbox, UringQueue};
#[cfg(windows)]
pub use naslab_local::{WindowsBackend, WindowsTarget};
#[cfg(all(feature = "nfs", unix))]
pub use naslab_remote::{Nfs4Backend, Nfs4Error, Nfs4Target};
#[cfg(feature = "nfs")]
pub use naslab_remote::{NfsBackend, NfsError, NfsTarget};
#[cfg(feature = "smb")]
pub use naslab_remote::{SmbBackend, SmbError, SmbTarget};
pub use naslab_remote::{probe, remote};
pub use open::{OpenError, OpenedTarget, Password, TargetRequest, open};
