//! naslab's remote targets: its own SMB 2/3 and NFS clients (no kernel mount), each
//! behind a cargo feature, and what they share: the generic remote target and the
//! marked directory kept through a protocol's requests (`remote`), `--target` URLs
//! (`url`), the waiter that drives a connection's requests, and the round-trip probe.

// The errno numbers and marker names every backend uses, by the paths the modules name.
use naslab_backend::{errno, marker};

#[cfg(any(feature = "smb", feature = "nfs"))]
mod heap;
#[cfg(any(feature = "smb", feature = "nfs"))]
mod idle_driver;
#[cfg(feature = "nfs")]
mod nfs;
#[cfg(all(feature = "nfs", unix))]
mod nfs4;
pub mod probe;
pub mod remote;
#[cfg(feature = "smb")]
mod smb;
pub mod url;
#[cfg(any(feature = "smb", feature = "nfs"))]
mod waiter;

#[cfg(feature = "nfs")]
pub use nfs::{NFS_CAPS, NfsBackend, NfsError, NfsTarget};
#[cfg(all(feature = "nfs", unix))]
pub use nfs4::{Nfs4Backend, Nfs4Error, Nfs4Target};
#[cfg(feature = "smb")]
pub use smb::{SMB_CAPS, SmbBackend, SmbError, SmbTarget};
