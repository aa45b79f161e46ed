//! What naslab asks of the machine it runs on, apart from what it measures: the system's
//! tools (found also in the sbin directories, run to completion), whether it runs as
//! root, loop devices and mounts that undo themselves when dropped, and the mount table.
//! The file layout analysis, the lab and the tests' skip policy all use it.

pub mod error;
#[cfg(target_os = "linux")]
pub mod loopdev;
#[cfg(target_os = "linux")]
pub mod mounts;
pub mod process;

pub use error::HostError;
#[cfg(target_os = "linux")]
pub use mounts::{Mount, Mounts};
