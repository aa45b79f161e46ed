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
pub use link::{EmulatedLink, LinkSettings, RttProbe, rate_text};
pub use model::{
    CacheDrop, CacheMode, Environment, IterationResult, OpStats, OrderingSummary, PrepareResult,
    RunOptions, RunResult, SCHEMA_VERSION, StreamResult, TargetInfo, Warning, WorkloadResult,
    WriteDataAhead,
};
pub use model::{ClientResult, IterationLayout, LayoutSummary, MultiClient, StartSkew};
pub use model::{Device, duration_text};
pub use settings::{
    NfsSettings, NullSettings, NullStall, ProtocolSettings, RealtimeGranted, Setting, SmbSettings,
};
pub use verify::{Mismatch, MismatchKind, VerifySummary};
