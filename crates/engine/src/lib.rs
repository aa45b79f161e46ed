//! naslab's engine: compiles a trace into a plan, prepares the file set, replays the
//! streams against a backend with exact timing, and keeps every measurement.

pub mod beside;
pub mod buffer;
pub mod clock;
pub mod data;
pub mod environment;
pub mod pacing;
pub mod plan;
pub mod positioned;
pub mod prepare;
pub mod realtime;
pub mod records;
pub mod replay;
pub mod run;
pub mod session;
pub mod spool;
pub mod spool_io;
pub mod summarize;
pub mod verify;

pub use clock::{Clock, MonotonicClock, ScriptedClock};
pub use data::{DataMode, DataSpec};
pub use naslab_backend as backend;
pub use naslab_backend::{
    Backend, BackendOptions, Caps, Handle, LockHow, NullTarget, OpError, OpenHow, Target,
    TimedNullTarget,
};
pub use naslab_backend::{errno, marker};
pub use pacing::Pacing;
pub use plan::{FileTable, Plan, PlanError, compile, records_from_reader, records_from_trace};
pub use records::RecordSink;
pub use replay::{
    Following, Phase, Progress, ReplayOptions, ReplayOutcome, SharedSet, StartGate, replay,
    replay_with,
};
pub use run::{IterationSpec, RunError, SinkMaker, run_iteration};
pub use session::{PlanSource, RunHooks, RunOutcome, Session, SessionError};
pub use verify::Verifier;
