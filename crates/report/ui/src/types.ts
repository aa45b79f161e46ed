// The shapes of the JSON the naslab binary embeds in a report: generated from the Rust
// types that serialise it (model.gen.ts, see crates/report/src/ts_types.rs), under the
// names the page's code uses.
import type * as M from './model.gen';

export type {
  AccessView, BlobLayout, ColumnLayout, Comparison, IterationPage, IterationResult, LatencySummary, OpStats,
  PeriodPercentiles, ReportPage, ComparePage, RunInfo, RunResult, Spread, StatsSummary, TimeSeries, Warning,
  WorkloadPage, WorkloadResult, FileView, IterationLayout, LayoutSummary, Sweep, LoadPoint, Setting,
  LinkSweep, LinkLine, LinkPoint,
} from './model.gen';

export type LatencyHist = M.LatencyHistView;
export type SizeHist = M.SizeHistView;
export type FileStat = M.FileStatView;
export type CompareRun = M.CompareRunData;
export type Page = M.ReportPage | M.ComparePage;
