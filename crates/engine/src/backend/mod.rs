//! The backends: one module per target kind, each behind the seam in `naslab-backend`
//! (re-exported here at the paths the rest of the workspace names).

mod open;
#[cfg(target_os = "linux")]
mod own_links;
#[cfg(target_os = "linux")]
mod posix;
pub mod registry;
#[cfg(target_os = "linux")]
mod uring;
#[cfg(windows)]
mod windows;

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
pub use naslab_remote::{probe, remote};
#[cfg(all(feature = "nfs", unix))]
pub use naslab_remote::{Nfs4Backend, Nfs4Error, Nfs4Target};
#[cfg(feature = "nfs")]
pub use naslab_remote::{NfsBackend, NfsError, NfsTarget};
#[cfg(feature = "smb")]
pub use naslab_remote::{SmbBackend, SmbError, SmbTarget};
pub use open::{open, OpenError, OpenedTarget, Password, TargetRequest};
#[cfg(target_os = "linux")]
pub use posix::{PosixBackend, PosixTarget};
#[cfg(target_os = "linux")]
pub use uring::UringQueue;
#[cfg(windows)]
pub use windows::{WindowsBackend, WindowsTarget};
