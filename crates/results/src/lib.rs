//! naslab's result model: what a run measured, in one serde model that every exporter
//! (terminal table, JSON, the original toolkit's CSV) reads. See `docs/results.md`.

mod failover;
mod histogram;
mod link;
mod model;
mod settings;
mod verify;

pub mod export;
pub mod sweep;
pub mod views;

pub use failover::{DurableHandles, FailedOp, FailoverSummary};
pub use histogram::{LatencyHistogram, LatencySummary, StreamLatency};
pub use link::{rate_text, EmulatedLink, LinkSettings, RttProbe};
pub use model::{duration_text, Device};
pub use model::{
    CacheDrop, CacheMode, Environment, IterationResult, OpStats, OrderingSummary, PrepareResult,
    RunOptions, RunResult, StreamResult, TargetInfo, Warning, WorkloadResult, WriteDataAhead,
    SCHEMA_VERSION,
};
pub use model::{ClientResult, IterationLayout, LayoutSummary, MultiClient, StartSkew};
pub use settings::{
    NfsSettings, NullSettings, NullStall, ProtocolSettings, RealtimeGranted, Setting, SmbSettings,
};
pub use verify::{Mismatch, MismatchKind, VerifySummary};
