//! naslab's local targets: a directory or a mounted share through the system's own file
//! API (posix with io_uring on Linux, Win32 on Windows), kept inside naslab's marked
//! directory (the sandbox) and resolved beneath it, never through a link.

// The errno numbers and marker names every backend uses, by the paths the modules name.
use naslab_backend::{errno, marker};

#[cfg(target_os = "linux")]
pub mod beneath;
#[cfg(target_os = "linux")]
mod own_links;
#[cfg(target_os = "linux")]
mod posix;
#[cfg(target_os = "linux")]
pub mod sandbox;
#[cfg(target_os = "linux")]
mod uring;
#[cfg(windows)]
mod windows;

#[cfg(target_os = "linux")]
pub use posix::{POSIX_CAPS, PosixBackend, PosixTarget};
#[cfg(target_os = "linux")]
pub use sandbox::Sandbox;
#[cfg(target_os = "linux")]
pub use uring::UringQueue;
#[cfg(windows)]
pub use windows::{WINDOWS_CAPS, WindowsBackend, WindowsTarget};
