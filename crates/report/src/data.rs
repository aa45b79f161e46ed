//! Reading one iteration's op records in a single streaming pass into what the report
//! shows: the transaction list's columns (up to a cap), time series, latency and size
//! histograms, per-file statistics and the decimated access map.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use naslab_trace::{FileKind, OpKind, ReadAhead, Record, open_trace};
use serde::Serialize;
use ts_rs::TS;

use crate::decimate::{Access, AccessMap};
use crate::encode::{BlobBuilder, BlobColumn, BlobLayout, ColumnType};
use crate::hist::{
    Bucketed, CHART_PER_DECADE, LatencyBuckets, LatencyStats, SizeBuckets, StatsSummary,
};
use crate::series::{PERCENTILE_OPS_MAX, TimeSeries};

/// How much of an iteration to keep for display.
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
    /// Rows kept for the transaction list (0: no list).
    pub max_rows: usize,
    /// Points kept for the access map (0: no map).
    pub access_points: usize,
    /// Width of a time-series bin, ns (`None`: about a thousand bins over the phase).
    pub bin_ns: Option<u64>,
    /// Whether to work out each period's exact latency percentiles (which keeps every
    /// op's latency, up to [`PERCENTILE_OPS_MAX`] ops, until the pass ends).
    pub latency_percentiles: bool,
    /// A multi-client run's number of clients: each client also gets its own time
    /// series, histograms and per-file statistics, from its ops alone (0: none).
    pub clients: u32,
}

/// One entry of the file set, as the page lists it.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FileView {
    /// Path under the workload directory.
    pub path: String,
    /// Size preparation gave it.
    pub size: u64,
    /// Whether it is a directory.
    pub dir: bool,
}

/// What one file saw during the measured phase.
#[derive(Debug, Clone, Default)]
struct FileAcc {
    ops: u64,
    reads: u64,
    writes: u64,
    bytes_read: u64,
    bytes_written: u64,
    errors: u64,
    latency: LatencyStats,
}

/// One file's row in the per-file statistics.
#[derive(Debug, Clone, Serialize, TS)]
pub struct FileStatView {
    /// Index into the iteration's file table.
    pub file: u32,
    /// Ops on it (any kind).
    pub ops: u64,
    /// Reads of it.
    pub reads: u64,
    /// Writes to it.
    pub writes: u64,
    /// Bytes its reads returned.
    pub bytes_read: u64,
    /// Bytes its writes moved.
    pub bytes_written: u64,
    /// Ops on it that failed.
    pub errors: u64,
    /// Latency of all its ops.
    pub latency: StatsSummary,
}

/// Latency counts per logarithmic bucket, by op type and for all ops.
#[derive(Debug, Clone, Serialize, TS)]
pub struct LatencyHistView {
    /// Buckets per power of ten.
    pub per_decade: u32,
    /// The first bucket shown: its lower edge is 10^(first / per_decade) ns.
    pub first: usize,
    /// Counts per bucket from `first` on; `all` holds every op.
    pub by_op: Vec<(String, Vec<u64>)>,
}

/// Transfer sizes per power-of-two bucket, for reads and writes.
#[derive(Debug, Clone, Serialize, TS)]
pub struct SizeHistView {
    /// The first bucket shown: bucket b holds sizes in [2^(b-1), 2^b), bucket 0 holds 0.
    pub first: usize,
    /// Counts per bucket from `first` on.
    pub by_op: Vec<(String, Vec<u64>)>,
}

/// The access map's points and how many accesses they stand for.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AccessView {
    /// Reads and writes in the records.
    pub seen: u64,
    /// Points in the sample.
    pub shown: usize,
    /// The sample holds about one in every `stride` reads and writes (chosen by a hash of
    /// their position in the records, so no periodic pattern hides from it).
    pub stride: u64,
    /// Where the sample's columns are (t_ns, offset, len, row, file, kind); absent when
    /// the transaction list's rows hold every op, which the page then draws from.
    pub blob: Option<BlobLayout>,
}

/// The transaction list's columns.
#[derive(Debug, Clone, Serialize, TS)]
pub struct RowsView {
    /// Ops in the records.
    pub total: u64,
    /// Rows in the list (the first `shown` ops in issue order).
    pub shown: usize,
    /// Where the columns are (start_ns, latency_ns, offset, len, result, file, stream, kind).
    pub blob: BlobLayout,
}

/// Everything the page shows for one iteration, built from its records.
#[derive(Debug, Clone, Default, Serialize, TS)]
pub struct IterationData {
    /// Ops read from the records.
    pub ops: u64,
    /// Why some of the views are missing or partial, for the reader.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The file table ops refer to by index.
    pub files: Vec<FileView>,
    /// Throughput and latency over time.
    pub series: Option<TimeSeries>,
    /// Latency histogram.
    pub latency: Option<LatencyHistView>,
    /// Transfer-size histogram.
    pub sizes: Option<SizeHistView>,
    /// Per-file statistics, busiest first.
    pub file_stats: Vec<FileStatView>,
    /// The access map.
    pub access: Option<AccessView>,
    /// The transaction list.
    pub rows: Option<RowsView>,
    /// A multi-client run's clients, each with the views of its own ops (no access map
    /// or transaction list; its `files` is empty, as the indices are this one's).
    pub clients: Vec<ClientData>,
}

/// One client's share of a multi-client iteration.
#[derive(Debug, Clone, Serialize, TS)]
pub struct ClientData {
    /// The MPI rank (the `client` field of its op records).
    pub rank: u32,
    pub data: IterationData,
}

/// The transaction list's columns, in the blob's order (the page finds them by name):
/// `start_ns` (as differences), `latency_ns`, `offset`, `len`, `result`, `file`, `stream`, `kind`.
const ROW_COLUMNS: [BlobColumn; 8] = [
    ("start_ns", ColumnType::F64, true),
    ("latency_ns", ColumnType::F64, false),
    ("offset", ColumnType::F64, false),
    ("len", ColumnType::F64, false),
    ("result", ColumnType::F64, false),
    ("file", ColumnType::U32, false),
    ("stream", ColumnType::U32, false),
    ("kind", ColumnType::U8, false),
];

/// The access map's columns, when it has a blob of its own (the points kept, issue
/// order): `t_ns` and `row` as differences.
const MAP_COLUMNS: [BlobColumn; 6] = [
    ("t_ns", ColumnType::F64, true),
    ("offset", ColumnType::F64, false),
    ("len", ColumnType::F64, false),
    ("row", ColumnType::F64, true),
    ("file", ColumnType::U32, false),
    ("kind", ColumnType::U8, false),
];

/// Where an iteration's records are and what run.json says about its timing.
pub struct IterationSource<'a> {
    /// The op records file, when the run kept one.
    pub records: Option<&'a Path>,
    /// The records name run.json gives (which [`Self::records`] is only when it names a
    /// file in the run directory).
    pub records_name: Option<&'a str>,
    /// run.json's `clock_start_ns`: record times minus this are times into the phase.
    pub clock_start_ns: u64,
    /// run.json's `wall_ns`: the measured phase's length.
    pub wall_ns: u64,
    /// Prefix for the ids of the page elements holding this iteration's columns.
    pub blob_prefix: String,
}

/// What a file that is not a regular file is, in words.
fn file_kind(m: &std::fs::Metadata) -> &'static str {
    let t = m.file_type();
    if t.is_dir() {
        "a directory"
    } else {
        special_kind(&t).unwrap_or("not a regular file")
    }
}

/// A FIFO, device or socket, in words.
#[cfg(unix)]
fn special_kind(t: &std::fs::FileType) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_char_device() || t.is_block_device() {
        Some("a device")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        None
    }
}

/// Windows has no FIFOs, devices or sockets among the entries of a directory.
#[cfg(not(unix))]
fn special_kind(_t: &std::fs::FileType) -> Option<&'static str> {
    None
}

/// Everything gathered in the pass over the records.
struct Pass {
    opts: LoadOptions,
    files: Vec<FileView>,
    index_of: HashMap<u32, u32>,
    /// The file id and index an op last named.
    last_file: Option<(u32, u32)>,
    per_file: Vec<FileAcc>,
    series: TimeSeries,
    latency_all: LatencyBuckets,
    /// Per op kind, the ops that succeeded.
    latency: Vec<LatencyBuckets>,
    /// Per op kind, the ops that failed, drawn apart from the others.
    failed_latency: Vec<LatencyBuckets>,
    sizes: [SizeBuckets; 2],
    access: AccessMap,
    /// The transaction list, deflated as it fills (none when it holds no rows).
    rows: Option<BlobBuilder>,
    ops: u64,
    /// Record times minus this are times into the phase; when not given, the first op's
    /// issue time (the phase's start, as the op records are in issue order).
    clock_start_ns: Option<u64>,
}

impl Pass {
    /// A pass over a phase whose ops' times are taken from `clock_start_ns` (else from the
    /// first op); its length is given to [`Pass::finish`], so that the pass can run while
    /// the phase does.
    fn new(clock_start_ns: Option<u64>, opts: LoadOptions) -> Self {
        let mut series = TimeSeries::growing(opts.bin_ns);
        if opts.latency_percentiles {
            series = series.keep_latencies(PERCENTILE_OPS_MAX);
        }
        Pass {
            opts,
            files: Vec::new(),
            index_of: HashMap::new(),
            last_file: None,
            per_file: Vec::new(),
            series,
            latency_all: LatencyBuckets::default(),
            latency: vec![LatencyBuckets::default(); OpKind::ALL.len()],
            failed_latency: vec![LatencyBuckets::default(); OpKind::ALL.len()],
            sizes: Default::default(),
            access: AccessMap::new(opts.access_points),
            rows: (opts.max_rows > 0).then(|| BlobBuilder::new(&ROW_COLUMNS)),
            ops: 0,
            clock_start_ns,
        }
    }

    fn file(&mut self, id: u32, path: String, size: u64, dir: bool) {
        let index = self.files.len() as u32;
        self.index_of.insert(id, index);
        self.files.push(FileView { path, size, dir });
        self.per_file.push(FileAcc::default());
    }

    fn op(&mut self, op: &naslab_trace::Op, m: &naslab_trace::Measured) {
        let clock_start_ns = *self.clock_start_ns.get_or_insert(m.issued_ns);
        self.ops += 1;
        let start = m.issued_ns.saturating_sub(clock_start_ns);
        let done = m.done_ns.saturating_sub(clock_start_ns);
        let latency = m.done_ns.saturating_sub(m.issued_ns);
        let bucketed = Bucketed::new(latency);
        // The reader checks that every op names a declared file.
        let file = match self.last_file {
            Some((id, index)) if id == op.file => index,
            _ => {
                let index = self.index_of.get(&op.file).copied().unwrap_or(0);
                self.last_file = Some((op.file, index));
                index
            }
        };
        let moved = m.result.max(0) as u64;
        let (read, written) = match op.kind {
            OpKind::Read => (moved, 0),
            OpKind::Write => (0, moved),
            _ => (0, 0),
        };
        self.series.add(done, latency, read, written);
        self.latency_all.record(bucketed);
        if m.result < 0 {
            self.failed_latency[op.kind.index()].record(bucketed);
        } else {
            self.latency[op.kind.index()].record(bucketed);
        }
        if let Some(acc) = self.per_file.get_mut(file as usize) {
            acc.ops += 1;
            acc.errors += (m.result < 0) as u64;
            acc.latency.record(bucketed);
            match op.kind {
                OpKind::Read => {
                    acc.reads += 1;
                    acc.bytes_read += read;
                }
                OpKind::Write => {
                    acc.writes += 1;
                    acc.bytes_written += written;
                }
                _ => {}
            }
        }
        if matches!(op.kind, OpKind::Read | OpKind::Write) {
            self.sizes[(op.kind == OpKind::Write) as usize].record(op.len);
            if self.opts.access_points > 0 {
                self.access.add(Access {
                    t_ns: start,
                    offset: op.offset,
                    len: op.len,
                    file,
                    kind: op.kind.index() as u8,
                    row: self.ops - 1,
                });
            }
        }
        if let Some(r) = self.rows.as_mut().filter(|r| r.rows() < self.opts.max_rows) {
            r.f64(0, start as f64);
            r.f64(1, latency as f64);
            r.f64(2, op.offset as f64);
            r.f64(3, op.len as f64);
            r.f64(4, m.result as f64);
            r.u32(5, file);
            r.u32(6, op.stream);
            r.u8(7, op.kind.index() as u8);
            r.end_row();
        }
    }

    /// The views of a phase that lasted `wall_ns`, and their blobs.
    fn finish(
        mut self,
        prefix: &str,
        mut notes: Vec<String>,
        wall_ns: u64,
    ) -> (IterationData, Vec<(String, String)>) {
        self.series.close(wall_ns);
        let mut blobs = Vec::new();
        let mut data = IterationData {
            ops: self.ops,
            files: self.files,
            ..IterationData::default()
        };
        if self.ops == 0 {
            // Only when the records were read: a note already says why they were not.
            if notes.is_empty() {
                notes.push("the op records hold no ops".into());
            }
            data.notes = notes;
            return (data, blobs);
        }
        if self.series.percentiles_bucketed() {
            notes.push(format!(
                "latency over time: the percentiles per period are exact for up to {PERCENTILE_OPS_MAX} ops; this iteration has {}, so they are taken from logarithmic buckets, within 1.2 %",
                self.ops
            ));
        }
        // The per-period percentiles (a selection over every op's latency for each period
        // length) are worked out on a thread of their own while the blobs are packed.
        let series = Arc::new(Mutex::new(self.series));
        let theirs = Arc::clone(&series);
        let percentiles = std::thread::Builder::new()
            .name("report-percentiles".into())
            .spawn(move || theirs.lock().unwrap_or_else(|e| e.into_inner()).finish());
        if let Some((first, last)) = self.latency_all.range() {
            let mut by_op = vec![("all".to_string(), self.latency_all.slice(first, last))];
            for kind in OpKind::ALL {
                let h = &self.latency[kind.index()];
                if h.range().is_some() {
                    by_op.push((kind.name().to_string(), h.slice(first, last)));
                }
                let h = &self.failed_latency[kind.index()];
                if h.range().is_some() {
                    by_op.push((format!("{} failed", kind.name()), h.slice(first, last)));
                }
            }
            data.latency = Some(LatencyHistView {
                per_decade: CHART_PER_DECADE,
                first,
                by_op,
            });
        }
        let ranges: Vec<(usize, usize)> = self.sizes.iter().filter_map(|s| s.range()).collect();
        if let (Some(first), Some(last)) = (
            ranges.iter().map(|r| r.0).min(),
            ranges.iter().map(|r| r.1).max(),
        ) {
            let by_op = ["read", "write"]
                .iter()
                .zip(&self.sizes)
                .filter(|(_, s)| s.range().is_some())
                .map(|(name, s)| (name.to_string(), s.slice(first, last)))
                .collect();
            data.sizes = Some(SizeHistView { first, by_op });
        }
        let mut stats: Vec<FileStatView> = self
            .per_file
            .iter()
            .enumerate()
            .filter(|(_, a)| a.ops > 0)
            .map(|(i, a)| FileStatView {
                file: i as u32,
                ops: a.ops,
                reads: a.reads,
                writes: a.writes,
                bytes_read: a.bytes_read,
                bytes_written: a.bytes_written,
                errors: a.errors,
                latency: a.latency.summary(),
            })
            .collect();
        stats.sort_by(|a, b| {
            (b.bytes_read + b.bytes_written, b.ops, a.file).cmp(&(
                a.bytes_read + a.bytes_written,
                a.ops,
                b.file,
            ))
        });
        data.file_stats = stats;
        if self.opts.access_points > 0 && self.access.seen > 0 {
            let seen = self.access.seen;
            let stride = self.access.stride();
            let points = self.access.into_points();
            // The rows hold every op: the page draws the map from them, every op there.
            let rows_complete = self
                .rows
                .as_ref()
                .is_some_and(|r| r.rows() as u64 == self.ops);
            let blob = if rows_complete {
                None
            } else {
                let mut b = BlobBuilder::new(&MAP_COLUMNS);
                for a in &points {
                    b.f64(0, a.t_ns as f64);
                    b.f64(1, a.offset as f64);
                    b.f64(2, a.len as f64);
                    b.f64(3, a.row as f64);
                    b.u32(4, a.file);
                    b.u8(5, a.kind);
                    b.end_row();
                }
                let (layout, text) = b.finish(format!("{prefix}-map"));
                blobs.push((layout.id.clone(), text));
                Some(layout)
            };
            data.access = Some(AccessView {
                seen,
                shown: if rows_complete {
                    seen as usize
                } else {
                    points.len()
                },
                stride: if rows_complete { 1 } else { stride },
                blob,
            });
        }
        if let Some(r) = self.rows {
            let shown = r.rows();
            let (layout, text) = r.finish(format!("{prefix}-rows"));
            if (shown as u64) < self.ops {
                notes.push(format!(
                    "the transaction list holds the first {shown} of {} ops (the cap); every op is in the records file and in the charts",
                    self.ops
                ));
            }
            blobs.push((layout.id.clone(), text));
            data.rows = Some(RowsView {
                total: self.ops,
                shown,
                blob: layout,
            });
        }
        if let Ok(h) = percentiles {
            h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        }
        let mut series = Arc::try_unwrap(series)
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .unwrap_or_else(|_| unreachable!("the percentiles' thread has ended"));
        // Done already unless no thread could be had: then it is done here.
        series.finish();
        data.series = Some(series);
        data.notes = notes;
        (data, blobs)
    }
}

/// The report's pass over one iteration's ops, fed record by record as `naslab run`
/// writes the op records, so that the report needs not read them back. What it makes is
/// what the report makes from the records file with the same options (tests compare
/// the two pages byte for byte); a multi-client run's report still reads the merged
/// records.
pub struct IterationPass {
    pass: Pass,
    opts: crate::ReportOptions,
}

/// The element-id prefix a streamed iteration's blobs carry until the page gives them
/// their place (`w{workload}-i{iteration}`).
const STREAMED_PREFIX: &str = "streamed";

impl IterationPass {
    /// A pass for the report of an iteration, keeping what `opts` asks for. It may be
    /// fed while the iteration's measured phase runs: its first op's issue is taken as
    /// the phase's start, and the phase's length is given to [`IterationPass::finish`].
    pub fn new(opts: crate::ReportOptions) -> IterationPass {
        IterationPass {
            pass: Pass::new(None, run_report_load(&opts, 0)),
            opts,
        }
    }

    /// A file record, in the order the records file holds them.
    pub fn file(&mut self, f: &naslab_trace::FileDecl) {
        self.pass
            .file(f.id, f.path.clone(), f.size, f.kind == FileKind::Dir);
    }

    /// An op record and its measurement, in the records file's order.
    pub fn op(&mut self, op: &naslab_trace::Op, m: &naslab_trace::Measured) {
        self.pass.op(op, m);
    }

    /// Builds the views and their blobs (the costly part: percentiles, compression) of
    /// a measured phase that began at `clock_start_ns` and lasted `wall_ns`, as the
    /// iteration's results say.
    pub fn finish(self, clock_start_ns: u64, wall_ns: u64) -> StreamedIteration {
        // The records come in issue order, so the first is the phase's first issue.
        debug_assert!(
            self.pass
                .clock_start_ns
                .is_none_or(|first| first == clock_start_ns)
        );
        let (data, blobs) = self.pass.finish(STREAMED_PREFIX, Vec::new(), wall_ns);
        StreamedIteration {
            data,
            blobs,
            opts: self.opts,
        }
    }
}

/// An iteration's views made by an [`IterationPass`], waiting for the page.
pub struct StreamedIteration {
    data: IterationData,
    blobs: Vec<(String, String)>,
    /// What the pass kept: a page that keeps other amounts reads the records instead.
    pub(crate) opts: crate::ReportOptions,
}

impl StreamedIteration {
    /// The views and blobs with the element ids the page gives the iteration.
    pub(crate) fn placed(self, prefix: &str) -> (IterationData, Vec<(String, String)>) {
        let place = |id: &mut String| {
            if let Some(rest) = id.strip_prefix(STREAMED_PREFIX) {
                *id = format!("{prefix}{rest}");
            }
        };
        let mut data = self.data;
        let mut blobs = self.blobs;
        if let Some(b) = data.access.as_mut().and_then(|a| a.blob.as_mut()) {
            place(&mut b.id);
        }
        if let Some(r) = data.rows.as_mut() {
            place(&mut r.blob.id);
        }
        for (id, _) in &mut blobs {
            place(id);
        }
        (data, blobs)
    }
}

/// The load options of a run's report (`clients`: a multi-client run's count, else 0).
pub(crate) fn run_report_load(opts: &crate::ReportOptions, clients: u32) -> LoadOptions {
    LoadOptions {
        max_rows: opts.max_rows,
        access_points: opts.access_points,
        bin_ns: None,
        latency_percentiles: true,
        clients,
    }
}

/// Reads one iteration's op records. Never fails: what cannot be read becomes a note
/// on the page, and whatever was read before a bad line is still shown. Returns the
/// data and the base64 blobs (element id, text) it refers to.
pub fn load_iteration(
    src: &IterationSource,
    opts: LoadOptions,
) -> (IterationData, Vec<(String, String)>) {
    let mut pass = Pass::new(Some(src.clock_start_ns), opts);
    let mut clients: Vec<Pass> = (0..opts.clients)
        .map(|_| {
            let own = LoadOptions {
                max_rows: 0,
                access_points: 0,
                clients: 0,
                ..opts
            };
            Pass::new(Some(src.clock_start_ns), own)
        })
        .collect();
    let mut notes = Vec::new();
    let Some(path) = src.records else {
        notes.push(match src.records_name {
            Some(name) => format!(
                "run.json names op records '{}', which is not a file name in the run directory; naslab reads op records only from there, so only this iteration's summary is shown",
                naslab_trace::printable(name)
            ),
            None => "no op records were kept for this iteration (--no-records), so only its summary is shown".into(),
        });
        return pass.finish(&src.blob_prefix, notes, src.wall_ns);
    };
    // Op records are a regular file: a FIFO or a device put in their place would block
    // the report or feed it without end.
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            notes.push(format!(
                "the op records '{}' are not a regular file ({}), so only this iteration's summary is shown",
                path.display(),
                file_kind(&m)
            ));
            return pass.finish(&src.blob_prefix, notes, src.wall_ns);
        }
        _ => {}
    }
    let reader = match open_trace(path) {
        Ok(r) => r,
        Err(e) => {
            notes.push(format!("cannot read the op records: {e}"));
            return pass.finish(&src.blob_prefix, notes, src.wall_ns);
        }
    };
    let mut unmeasured = 0u64;
    let mut line = 0;
    // Decompressing and decoding run on a thread of their own, ahead of this pass.
    for r in ReadAhead::start(reader) {
        let n = match r {
            Ok(n) => n,
            Err(e) => {
                notes.push(format!(
                    "the op records stop being readable at line {}: {e}; the views show the ops before it",
                    e.line().unwrap_or(line + 1)
                ));
                break;
            }
        };
        line = n.line;
        match n.record {
            Record::Header(_) => {}
            Record::File(f) => {
                let dir = f.kind == FileKind::Dir;
                for c in &mut clients {
                    c.file(f.id, f.path.clone(), f.size, dir);
                }
                pass.file(f.id, f.path, f.size, dir)
            }
            Record::Op(op, Some(m)) => {
                let client = n.client.and_then(|c| clients.get_mut(c as usize));
                if let Some(c) = client {
                    c.op(&op, &m);
                }
                pass.op(&op, &m)
            }
            Record::Op(_, None) => unmeasured += 1,
        }
    }
    if unmeasured > 0 {
        notes.push(format!(
            "{unmeasured} ops in the records have no measurements and are left out"
        ));
    }
    let (mut data, blobs) = pass.finish(&src.blob_prefix, notes, src.wall_ns);
    data.clients = clients
        .into_iter()
        .enumerate()
        .map(|(rank, c)| {
            let (mut own, _) = c.finish(
                &format!("{}-c{rank}", src.blob_prefix),
                Vec::new(),
                src.wall_ns,
            );
            own.files = Vec::new();
            ClientData {
                rank: rank as u32,
                data: own,
            }
        })
        .collect();
    (data, blobs)
}
