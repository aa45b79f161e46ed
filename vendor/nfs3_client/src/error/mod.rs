//! Error types

mod connect;
mod mount;
mod portmap;
mod rpc;

pub use connect::ConnectError;
pub use mount::MountError;
pub use portmap::PortmapError;
pub use rpc::RpcError;
