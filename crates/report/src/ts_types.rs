//! The TypeScript declarations of the JSON the report embeds, generated from the Rust
//! types that serialise it (with ts-rs), so the page's code is checked against the model
//! as it is rather than against copied types. `ui/src/model.gen.ts` holds the output;
//! `tests/ts_types.rs` fails when it differs from what the model generates now.

use ts_rs::{Config, TS};

use crate::compare::{Comparison, RunInfo, SettingDiff, Spread, WorkloadRow};
use crate::data::{
    AccessView, ClientData, FileStatView, FileView, IterationData, LatencyHistView, RowsView,
    SizeHistView,
};
use crate::encode::{BlobLayout, ColumnLayout, ColumnType};
use crate::hist::StatsSummary;
use crate::html::{
    ComparePage, CompareRunData, CompareWorkload, IterationPage, ReportPage, WorkloadPage,
};
use crate::link_sweep::{CapacityLine, CapacityPoint, LinkLine, LinkPoint, LinkSweep};
use crate::series::{PeriodPercentiles, TimeSeries};

/// Where the generated declarations are kept, relative to the crate.
pub const TS_TYPES_FILE: &str = "ui/src/model.gen.ts";

/// One declaration: its name, its text and the names it refers to.
struct Decl {
    name: String,
    text: String,
    needs: Vec<String>,
}

fn decl<T: TS + ?Sized + 'static>(cfg: &Config) -> Decl {
    Decl {
        name: T::ident(cfg),
        text: format!("export {}", T::decl(cfg)),
        needs: T::dependencies(cfg)
            .into_iter()
            .map(|d| d.ts_name)
            .collect(),
    }
}

/// Every type the page reads, run.json's model (naslab-results) and the report's own.
fn declarations() -> Vec<Decl> {
    use naslab_results as r;
    // The page reads the JSON with JSON.parse, which gives numbers, never BigInts.
    let cfg = Config::new().with_large_int("number");
    let c = &cfg;
    vec![
        decl::<r::RunResult>(c),
        decl::<r::Device>(c),
        decl::<r::MultiClient>(c),
        decl::<r::ClientResult>(c),
        decl::<r::StartSkew>(c),
        decl::<r::Environment>(c),
        decl::<r::TargetInfo>(c),
        decl::<r::CacheMode>(c),
        decl::<r::CacheDrop>(c),
        decl::<r::RunOptions>(c),
        decl::<r::NullSettings>(c),
        decl::<r::NullStall>(c),
        decl::<r::ProtocolSettings>(c),
        decl::<r::SmbSettings>(c),
        decl::<r::NfsSettings>(c),
        decl::<r::LinkSettings>(c),
        decl::<r::EmulatedLink>(c),
        decl::<r::RttProbe>(c),
        decl::<r::RealtimeGranted>(c),
        decl::<r::Setting>(c),
        decl::<r::WorkloadResult>(c),
        decl::<r::PrepareResult>(c),
        decl::<r::IterationResult>(c),
        decl::<r::IterationLayout>(c),
        decl::<r::LayoutSummary>(c),
        decl::<r::OrderingSummary>(c),
        decl::<r::WriteDataAhead>(c),
        decl::<r::FailoverSummary>(c),
        decl::<r::FailedOp>(c),
        decl::<r::DurableHandles>(c),
        decl::<r::OpStats>(c),
        decl::<r::StreamResult>(c),
        decl::<r::Warning>(c),
        decl::<r::LatencySummary>(c),
        decl::<r::VerifySummary>(c),
        decl::<r::Mismatch>(c),
        decl::<r::MismatchKind>(c),
        decl::<r::sweep::Sweep>(c),
        decl::<r::sweep::LoadUnit>(c),
        decl::<r::sweep::Cap>(c),
        decl::<r::sweep::LoadPoint>(c),
        decl::<r::sweep::PointOps>(c),
        decl::<r::sweep::UserSpread>(c),
        decl::<r::sweep::PointClients>(c),
        decl::<ReportPage>(c),
        decl::<WorkloadPage>(c),
        decl::<IterationPage>(c),
        decl::<IterationData>(c),
        decl::<ClientData>(c),
        decl::<FileView>(c),
        decl::<FileStatView>(c),
        decl::<StatsSummary>(c),
        decl::<TimeSeries>(c),
        decl::<PeriodPercentiles>(c),
        decl::<LatencyHistView>(c),
        decl::<SizeHistView>(c),
        decl::<AccessView>(c),
        decl::<RowsView>(c),
        decl::<BlobLayout>(c),
        decl::<ColumnLayout>(c),
        decl::<ColumnType>(c),
        decl::<ComparePage>(c),
        decl::<CompareWorkload>(c),
        decl::<CompareRunData>(c),
        decl::<Comparison>(c),
        decl::<RunInfo>(c),
        decl::<Spread>(c),
        decl::<WorkloadRow>(c),
        decl::<SettingDiff>(c),
        decl::<LinkSweep>(c),
        decl::<LinkLine>(c),
        decl::<LinkPoint>(c),
        decl::<CapacityLine>(c),
        decl::<CapacityPoint>(c),
    ]
}

/// The whole generated file: a header saying where it comes from, then one exported
/// declaration per type. Panics when a type refers to one that is not declared (the list
/// above must then name it).
pub fn typescript_declarations() -> String {
    let decls = declarations();
    let names: Vec<&str> = decls.iter().map(|d| d.name.as_str()).collect();
    for d in &decls {
        for n in &d.needs {
            assert!(
                names.contains(&n.as_str()),
                "{} refers to {n}, which crates/report/src/ts_types.rs does not declare",
                d.name
            );
        }
    }
    let mut o = String::from(
        "// Generated from the Rust types that serialise the report's data (crates/report/src/ts_types.rs,\n\
         // with ts-rs); do not edit. Regenerate: NASLAB_UPDATE_SNAPSHOTS=1 cargo test -p naslab-report --test ts_types\n",
    );
    for d in decls {
        o.push('\n');
        o.push_str(&d.text);
        o.push('\n');
    }
    o
}
