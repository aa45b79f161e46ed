//! naslab's test NAS: a file system in a loop image (or a plain directory), served on
//! 127.0.0.1 by Samba's smbd or by nfs-ganesha, started and stopped by naslab itself.
//!
//! A lab may put an emulated link (Toxiproxy) between its clients and the server
//! (`link`, `toxiproxy`): its URL then leads through the link.
//!
//! Servers work as one unprivileged account, which owns the share; the image is mounted
//! nosuid and nodev.
//!
//! Everything a lab starts is recorded, step by step, in `<lab dir>/state.json`, so
//! `down` undoes exactly that (processes by PID, the mount, the loop device) even after
//! the naslab that made it crashed. Nothing is ever stopped by name.

// The lab makes loop devices, mounts and Linux servers: it is built on Linux only.
#![cfg(target_os = "linux")]

pub mod account;
pub mod error;
pub mod fault;
pub mod fs;
pub mod lab;
pub mod layout;
pub mod link;
pub mod portmap;
pub mod process;
pub mod server;
pub mod state;
pub mod toxiproxy;

pub use error::LabError;
pub use fs::FsKind;
pub use lab::{Lab, LabGuard, LabOptions, LabStatus, down, status, up};
pub use link::{ClientPath, LabLink, LinkSpec};
pub use server::ServerKind;
pub use state::{DEFAULT_BASE, LabState};
