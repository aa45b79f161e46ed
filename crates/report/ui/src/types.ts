// The shapes of the JSON the naslab binary embeds in a report (crates/report/src/html.rs).

export interface LatencySummary {
  count: number; avg_ns: number; stddev_ns: number; min_ns: number;
  p50_ns: number; p90_ns: number; p99_ns: number; p999_ns: number; max_ns: number;
}

export interface OpStats {
  count: number; bytes: number; errors: number;
  errors_by_errno?: Record<string, number>;
  latency: LatencySummary;
}

export interface IterationResult {
  iteration: number;
  prepare: { files: number; dirs: number; bytes: number; wall_ns: number };
  wall_ns: number; clock_start_ns: number;
  bytes_read: number; bytes_written: number; throughput_mb_s: number;
  ops: number; errors: number;
  op_stats: Record<string, OpStats>;
  pacing_lag: LatencySummary;
  first_done_ns: number; last_done_ns: number;
  streams: { stream: number; ops: number; bytes: number; done_ns: number }[];
  records?: string; aborted?: string;
}

export interface WorkloadResult {
  name: string; source: string; iterations: IterationResult[];
  throughput_mb_s: number; throughput_min_mb_s: number; throughput_max_mb_s: number;
}

export type Warning = { kind: string; workload?: string; [k: string]: unknown };

export interface RunResult {
  schema_version: number; naslab_version: string; started_at: string;
  environment: { host: string; kernel: string; os: string; cpu: string; cpus: number; memory_bytes: number };
  target: { path: string; backend: string; fs_type: string; source: string };
  options: { pacing: string; cache: string; records: boolean; iterations: number; extra: Record<string, string> };
  workloads: WorkloadResult[];
  warnings: Warning[];
  aborted?: string;
  label?: string;
  device?: { name?: string; firmware?: string; notes?: string; tags?: Record<string, string> };
}

export interface ColumnLayout { name: string; type: 'f64' | 'u32' | 'u8'; offset: number; delta: boolean }
export interface BlobLayout { id: string; rows: number; bytes: number; columns: ColumnLayout[] }

export interface PeriodPercentiles { bins: number; p50_ns: (number | null)[]; p99_ns: (number | null)[] }

export interface TimeSeries {
  bin_ns: number; read_bytes: number[]; write_bytes: number[]; ops: number[];
  latency_max_ns: number[]; latency_sum_ns: number[];
  periods: number[]; latency_percentiles?: PeriodPercentiles[];
}

export interface LatencyHist { per_decade: number; first: number; by_op: [string, number[]][] }
export interface SizeHist { first: number; by_op: [string, number[]][] }

export interface StatsSummary {
  count: number; mean_ns: number; stddev_ns: number; min_ns: number;
  p50_ns: number; p90_ns: number; p99_ns: number; max_ns: number;
}

export interface FileStat {
  file: number; ops: number; reads: number; writes: number;
  bytes_read: number; bytes_written: number; errors: number; latency: StatsSummary;
}

export interface FileView { path: string; size: number; dir: boolean }

export interface IterationPage {
  iteration: number; records: string | null; ops: number; notes?: string[];
  files: FileView[];
  series: TimeSeries | null; latency: LatencyHist | null; sizes: SizeHist | null;
  file_stats: FileStat[];
  access: { seen: number; shown: number; stride: number; blob: BlobLayout | null } | null;
  rows: { total: number; shown: number; blob: BlobLayout } | null;
}

export interface WorkloadPage { name: string; median: number | null; iterations: IterationPage[] }

export interface ReportPage {
  kind: 'report'; title: string; generated_by: string; run_dir: string; kinds: string[];
  run: RunResult; workloads: WorkloadPage[];
}

export interface RunInfo { letter: string; column: string; name: string; device?: string; dir: string; started_at: string; target: string; options: string }

export interface Spread { ratio: number; plus_minus: number; beyond_spread: boolean; iterations: [number, number] }

export interface Comparison {
  runs: RunInfo[]; baseline: number; mean: string;
  workloads: { name: string; mb_s: (number | null)[]; mb_s_range: ([number, number] | null)[]; ratio: (number | null)[]; spread: (Spread | null)[]; in_mean: boolean }[];
  mean_ratio: (number | null)[]; mean_workloads: string[];
  differences: { setting: string; values: string[] }[];
}

export interface CompareRun {
  iteration: number; wall_ns: number; notes?: string[];
  series: TimeSeries | null; latency: LatencyHist | null; sizes: SizeHist | null;
}

export interface ComparePage {
  kind: 'compare'; title: string; generated_by: string; kinds: string[];
  comparison: Comparison;
  workloads: { name: string; bin_ns: (number | null)[]; runs: (CompareRun | null)[] }[];
}

export type Page = ReportPage | ComparePage;
