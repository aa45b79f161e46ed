//! The backends: one module per target kind, each behind the seam in `naslab-backend`
//! (re-exported here at the paths the rest of the workspace names).

#[cfg(any(feature = "smb", feature = "nfs"))]
mod heap;
#[cfg(any(feature = "smb", feature = "nfs"))]
mod idle_driver;
#[cfg(feature = "nfs")]
mod nfs;
#[cfg(all(feature = "nfs", unix))]
mod nfs4;
mod open;
#[cfg(target_os = "linux")]
mod own_links;
#[cfg(target_os = "linux")]
mod posix;
pub mod probe;
pub mod registry;
pub mod remote;
#[cfg(feature = "smb")]
mod smb;
#[cfg(target_os = "linux")]
mod uring;
pub mod url;
#[cfg(any(feature = "smb", feature = "nfs"))]
mod waiter;
#[cfg(windows)]
mod windows;

#[cfg(target_os = "linux")]
pub use naslab_backend::LocalRoot;
pub use naslab_backend::{
    errno_name, lock_length, Backend, BackendOptions, Caps, ClientProfile, DurableCounts, Handle,
    LockHow, NullBackend, NullTarget, OpError, OpenHow, ProfiledTarget, QueuedIo, Recovery, Target,
    TimedNullTarget, HINT_LEAD_BYTES, HINT_STRIDE_BYTES, HINT_WRITE_OP, STREAM_STACK_BYTES,
};
#[cfg(feature = "nfs")]
pub use nfs::{NfsBackend, NfsError, NfsTarget};
#[cfg(all(feature = "nfs", unix))]
pub use nfs4::{Nfs4Backend, Nfs4Error, Nfs4Target};
pub use open::{open, OpenError, OpenedTarget, Password, TargetRequest};
#[cfg(target_os = "linux")]
pub use posix::{PosixBackend, PosixTarget};
#[cfg(feature = "smb")]
pub use smb::{SmbBackend, SmbError, SmbTarget};
#[cfg(target_os = "linux")]
pub use uring::UringQueue;
#[cfg(windows)]
pub use windows::{WindowsBackend, WindowsTarget};
