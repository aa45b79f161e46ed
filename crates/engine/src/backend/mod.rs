//! The backends, each behind the seam in `naslab-backend`: the local ones in
//! `naslab-local`, the remote ones in `naslab-remote` (re-exported here at the paths the
//! rest of the workspace names), and how a `--target` opens one of them.

mod open;
pub mod registry;

/// `--target` URLs (naslab-remote's), and whether a target is one.
pub mod url {
    pub use super::registry::is_remote;
    pub use naslab_remote::url::*;
}

#[cfg(target_os = "linux")]
pub use naslab_backend::LocalRoot;
pub use naslab_backend::{
    errno_name, lock_length, Backend, BackendOptions, Caps, ClientProfile, DurableCounts, Handle,
    LockHow, NullBackend, NullTarget, OpError, OpenHow, ProfiledTarget, QueuedIo, Recovery, Target,
    TimedNullTarget, HINT_LEAD_BYTES, HINT_STRIDE_BYTES, HINT_WRITE_OP, STREAM_STACK_BYTES,
};
#[cfg(target_os = "linux")]
pub use naslab_local::UringQueue;
#[cfg(target_os = "linux")]
pub use naslab_local::{PosixBackend, PosixTarget};
#[cfg(windows)]
pub use naslab_local::{WindowsBackend, WindowsTarget};
pub use naslab_remote::{probe, remote};
#[cfg(all(feature = "nfs", unix))]
pub use naslab_remote::{Nfs4Backend, Nfs4Error, Nfs4Target};
#[cfg(feature = "nfs")]
pub use naslab_remote::{NfsBackend, NfsError, NfsTarget};
#[cfg(feature = "smb")]
pub use naslab_remote::{SmbBackend, SmbError, SmbTarget};
pub use open::{open, OpenError, OpenedTarget, Password, TargetRequest};
