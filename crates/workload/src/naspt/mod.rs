//! The twelve NASPT workloads, one module per family, and the workloads built from them.

pub(crate) mod content;
pub(crate) mod copy;
pub(crate) mod dircopy;
pub(crate) mod office;
pub(crate) mod photo;
pub(crate) mod record_play;
mod tree;
pub(crate) mod video;
