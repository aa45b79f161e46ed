//! One result from many clients: the aggregate of each workload's iterations, every
//! client's own figures, and the clients' op records merged in time order.
//!
//! All clients' op times share one time base (each client's measured phase starts at the
//! same moment, its clock aligned to rank 0's), so the aggregate spans from the first
//! client's first issue to the last client's last completion. Latency statistics come
//! from HDR histograms built from every op's record and merged, never from averaging the
//! clients' percentiles.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use naslab_results::{
    ClientResult, IterationLayout, IterationResult, LatencyHistogram, LatencySummary, MultiClient,
    OpStats, PrepareResult, RunResult, StreamResult, WorkloadResult,
};
use naslab_trace::{create_trace, open_trace, FileDecl, Measured, Op, Record, TraceReader};
use serde::{Deserialize, Serialize};

/// What one client sends rank 0 at the end of a run (its op records follow as files).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClientReport {
    pub rank: u32,
    pub host: String,
    /// Its results as a single-client run would have them; `None` when it could not run.
    pub run: Option<RunResult>,
    /// Why it stopped early, when it did.
    pub failure: Option<String>,
    /// Whether the failure was its own (not a stop because another client failed).
    pub caused: bool,
    /// How late it woke for the last start, past the agreed moment.
    pub start_late_ns: u64,
    /// The op records files that follow, by name (relative to its run directory).
    pub records: Vec<String>,
}

/// A client's report and where rank 0 saved its op records files (by name).
pub struct Gathered {
    pub report: ClientReport,
    pub records: HashMap<String, PathBuf>,
    /// (offset, uncertainty) of its clock to rank 0's, from the last start.
    pub clock: (i64, u64),
}

/// The message naming the first client that failed on its own, with its host.
pub fn failure_of(clients: &[Gathered]) -> Option<String> {
    let first = clients
        .iter()
        .find(|c| c.report.caused && c.report.failure.is_some())
        .or_else(|| clients.iter().find(|c| c.report.failure.is_some()))?;
    Some(format!(
        "client {} on {}: {}",
        first.report.rank,
        first.report.host,
        first.report.failure.as_deref().unwrap_or_default()
    ))
}

/// Builds the job's one result from every client's, writing the merged op records into
/// `run_dir`. `template` supplies what all clients share (options, target, environment
/// of the first client that ran); `shared`: the clients shared one file set.
pub fn merge(
    template: &RunResult,
    clients: &[Gathered],
    run_dir: &Path,
    shared: bool,
) -> anyhow::Result<RunResult> {
    let mut run = template.clone();
    run.workloads.clear();
    run.aborted = failure_of(clients);
    // The workloads in the order the first client that ran them did.
    let mut names: Vec<(String, String)> = Vec::new();
    for c in clients {
        for w in c.report.run.iter().flat_map(|r| &r.workloads) {
            if !names.iter().any(|(n, _)| n == &w.name) {
                names.push((w.name.clone(), w.source.clone()));
            }
        }
    }
    for (name, source) in names {
        let per_client: Vec<(&Gathered, &WorkloadResult)> = clients
            .iter()
            .filter_map(|c| {
                let w = c
                    .report
                    .run
                    .as_ref()?
                    .workloads
                    .iter()
                    .find(|w| w.name == name)?;
                Some((c, w))
            })
            .collect();
        let iterations = per_client
            .iter()
            .map(|(_, w)| w.iterations.len())
            .max()
            .unwrap_or(0);
        let mut merged = Vec::new();
        for i in 0..iterations {
            let parts: Vec<(&Gathered, &IterationResult)> = per_client
                .iter()
                .filter_map(|(c, w)| w.iterations.get(i).map(|it| (*c, it)))
                .collect();
            merged.push(merge_iteration(&parts, run_dir, shared)?);
        }
        run.workloads
            .push(WorkloadResult::from_iterations(name, source, merged));
    }
    let mut multi = MultiClient::default();
    for c in clients {
        let mut workloads = c
            .report
            .run
            .as_ref()
            .map(|r| r.workloads.clone())
            .unwrap_or_default();
        // Their records are in the merged file (with a client field), not on their own.
        for w in &mut workloads {
            for it in &mut w.iterations {
                it.records = None;
            }
        }
        multi.clients.push(ClientResult {
            rank: c.report.rank,
            host: c.report.host.clone(),
            clock_offset_ns: c.clock.0,
            clock_uncertainty_ns: c.clock.1,
            start_late_ns: c.report.start_late_ns,
            workloads,
            aborted: c.report.failure.clone(),
        });
    }
    run.multi_client = Some(multi);
    Ok(run)
}

/// What one pass over the clients' records yields besides the merged file.
struct FromRecords {
    /// Per op type, every client's latencies of the ops that succeeded.
    latency: BTreeMap<String, LatencyHistogram>,
    /// Per op type, every client's latencies of the ops that failed.
    failed: BTreeMap<String, LatencyHistogram>,
    lag: LatencyHistogram,
}

fn merge_iteration(
    parts: &[(&Gathered, &IterationResult)],
    run_dir: &Path,
    shared: bool,
) -> anyhow::Result<IterationResult> {
    let first = parts[0].1;
    let start = parts
        .iter()
        .map(|(_, it)| it.clock_start_ns)
        .min()
        .unwrap_or(0);
    let end = parts
        .iter()
        .map(|(_, it)| it.clock_start_ns + it.wall_ns)
        .max()
        .unwrap_or(start);
    let mut r = IterationResult {
        iteration: first.iteration,
        clock_start_ns: start,
        wall_ns: end - start,
        last_done_ns: end - start,
        first_done_ns: parts
            .iter()
            .map(|(_, it)| it.clock_start_ns + it.first_done_ns)
            .min()
            .unwrap_or(start)
            - start,
        prepare: PrepareResult::default(),
        ..IterationResult::default()
    };
    let mut stream_base = 0u32;
    let mut bases = Vec::new();
    for (c, it) in parts {
        r.bytes_read += it.bytes_read;
        r.bytes_written += it.bytes_written;
        r.ops += it.ops;
        r.ops_planned += it.ops_planned;
        r.errors += it.errors;
        r.time_limited |= it.time_limited;
        r.prepare.files += it.prepare.files;
        r.prepare.dirs += it.prepare.dirs;
        r.prepare.bytes += it.prepare.bytes;
        r.prepare.wall_ns = r.prepare.wall_ns.max(it.prepare.wall_ns);
        if r.aborted.is_none() {
            r.aborted = it
                .aborted
                .as_ref()
                .map(|why| format!("client {} on {}: {why}", c.report.rank, c.report.host));
        }
        for s in &it.streams {
            r.streams.push(StreamResult {
                stream: stream_base + s.stream,
                ops: s.ops,
                bytes: s.bytes,
                done_ns: it.clock_start_ns + s.done_ns - start,
            });
        }
        bases.push(stream_base);
        stream_base += it.streams.iter().map(|s| s.stream + 1).max().unwrap_or(0);
    }
    r.throughput_mb_s = if r.wall_ns > 0 {
        (r.bytes_read + r.bytes_written) as f64 / (r.wall_ns as f64 / 1e9) / 1e6
    } else {
        0.0
    };
    let Some(name) = first.records.clone() else {
        bail!("a multi-client run needs every client's op records, and one client kept none");
    };
    let mut inputs = Vec::new();
    for ((c, it), base) in parts.iter().zip(&bases) {
        let path = it
            .records
            .as_ref()
            .and_then(|n| c.records.get(n))
            .with_context(|| format!("client {} sent no op records for '{name}'", c.report.rank))?;
        inputs.push((c.report.rank, path.clone(), *base, *it));
    }
    let from = merge_records(&inputs, &run_dir.join(&name), shared)?;
    r.records = Some(name);
    // Counts, bytes and errors add up; latency comes from the merged histograms, checked
    // against each client's own figures, the failed ops' apart from the others.
    let ops: std::collections::BTreeSet<&String> =
        from.latency.keys().chain(from.failed.keys()).collect();
    for op in ops {
        let mut stats = OpStats::default();
        for (_, it) in parts {
            if let Some(s) = it.op(op) {
                stats.add_counts(s);
            }
        }
        let ok = from.latency.get(op).map(|h| h.count()).unwrap_or(0);
        let failed = from.failed.get(op).map(|h| h.count()).unwrap_or(0);
        if ok + failed != stats.count || failed != stats.errors {
            bail!(
                "the clients' op records hold {} {op} ops ({failed} failed) but their results count {} ({} failed); the records are incomplete",
                ok + failed,
                stats.count,
                stats.errors
            );
        }
        stats.latency = from
            .latency
            .get(op)
            .map(|h| h.summary())
            .unwrap_or_default();
        stats.failed_latency = from.failed.get(op).map(|h| h.summary());
        r.op_stats.insert(op.clone(), stats);
    }
    r.layout = merged_layout(parts, shared);
    if parts.iter().any(|(_, it)| it.pacing_lag.count > 0) {
        r.pacing_lag = from.lag.summary();
    } else {
        r.pacing_lag = LatencySummary::default();
    }
    Ok(r)
}

/// The job's file layout after an iteration: with shared files, the one file set's (only
/// the preparer reads it); otherwise every client's file set added up, when every client
/// has one (a file system that reports extents).
fn merged_layout(parts: &[(&Gathered, &IterationResult)], shared: bool) -> Option<IterationLayout> {
    if shared {
        return parts.iter().find_map(|(_, it)| it.layout.clone());
    }
    let mut all: Option<IterationLayout> = None;
    for (_, it) in parts {
        let l = it.layout.as_ref()?;
        match &mut all {
            None => all = Some(l.clone()),
            Some(a) => {
                a.prepared.add(&l.prepared);
                a.written.add(&l.written);
            }
        }
    }
    all
}

struct Input {
    client: u32,
    reader: TraceReader<Box<dyn BufRead + Send>>,
    file_base: u32,
    stream_base: u32,
    head: Option<(Op, Measured)>,
    /// Per op type and whether the ops failed, this client's latencies.
    latency: BTreeMap<(String, bool), LatencyHistogram>,
}

impl Input {
    fn advance(&mut self) -> anyhow::Result<()> {
        self.head = match self.reader.next_record()? {
            None => None,
            Some(Record::Op(op, Some(m))) => Some((op, m)),
            Some(Record::Op(_, None)) => bail!(
                "'{}' line {}: an op record without its measurements",
                self.reader.path().display(),
                self.reader.line()
            ),
            Some(_) => bail!(
                "'{}' line {}: a file line after the ops",
                self.reader.path().display(),
                self.reader.line()
            ),
        };
        Ok(())
    }
}

/// Merges clients' op records into `out` in issue order, with a client field; every
/// client's file ids, streams and paths are moved apart (`client-<rank>/...`) so the
/// merged records are still one valid trace. With `shared` files (one file set for all
/// clients, the same trace replayed on it) only the streams are moved apart: the files
/// are declared once, as the first client's records declare them. Checks each client's
/// latencies from its records against its own results.
fn merge_records(
    inputs: &[(u32, PathBuf, u32, &IterationResult)],
    out: &Path,
    shared: bool,
) -> anyhow::Result<FromRecords> {
    let mut w = create_trace(out)?;
    let mut clients = Vec::new();
    let mut file_base = 0u32;
    for (i, (client, path, stream_base, _)) in inputs.iter().enumerate() {
        let mut reader = open_trace(path)?;
        let mut header = reader.read_header()?;
        if i == 0 {
            header.generator = Some(format!(
                "naslab {} merged op records of {} clients",
                env!("CARGO_PKG_VERSION"),
                inputs.len()
            ));
            w.header(&header)?;
        }
        let mut max_id = None::<u32>;
        let head = loop {
            match reader.next_record()? {
                Some(Record::File(f)) if shared => {
                    if i == 0 {
                        w.file(&f)?;
                    }
                }
                Some(Record::File(f)) => {
                    max_id = Some(max_id.map_or(f.id, |m| m.max(f.id)));
                    w.file(&FileDecl {
                        id: file_base + f.id,
                        path: format!("client-{client}/{}", f.path),
                        ..f
                    })?;
                }
                Some(Record::Op(op, Some(m))) => break Some((op, m)),
                Some(Record::Op(_, None)) => {
                    bail!(
                        "'{}': an op record without its measurements",
                        path.display()
                    )
                }
                Some(Record::Header(_)) => bail!("'{}': a second header", path.display()),
                None => break None,
            }
        };
        clients.push(Input {
            client: *client,
            reader,
            file_base,
            stream_base: *stream_base,
            head,
            latency: BTreeMap::new(),
        });
        file_base += max_id.map_or(0, |m| m + 1);
    }
    let mut lag = LatencyHistogram::new();
    let mut heap = BinaryHeap::new();
    for (i, c) in clients.iter().enumerate() {
        if let Some((_, m)) = &c.head {
            heap.push(Reverse((m.issued_ns, c.client, i)));
        }
    }
    while let Some(Reverse((_, _, i))) = heap.pop() {
        let c = &mut clients[i];
        let Some((op, m)) = c.head.take() else {
            continue;
        };
        c.latency
            .entry((op.kind.name().to_string(), m.result < 0))
            .or_default()
            .record(m.done_ns - m.issued_ns);
        lag.record(m.issued_ns.saturating_sub(m.sched_ns));
        let moved = Op {
            stream: c.stream_base + op.stream,
            file: c.file_base + op.file,
            to: op.to.map(|t| c.file_base + t),
            ..op
        };
        w.client_op(&moved, &m, c.client)?;
        c.advance()?;
        if let Some((_, m)) = &c.head {
            heap.push(Reverse((m.issued_ns, c.client, i)));
        }
    }
    w.close()?;
    let mut latency: BTreeMap<String, LatencyHistogram> = BTreeMap::new();
    let mut failed: BTreeMap<String, LatencyHistogram> = BTreeMap::new();
    for (c, (_, _, _, it)) in clients.iter().zip(inputs) {
        for ((op, fails), h) in &c.latency {
            let own = it.op(op).map(|s| {
                if *fails {
                    s.failed_latency.unwrap_or_default()
                } else {
                    s.latency
                }
            });
            if h.summary() != own.unwrap_or_default() {
                bail!(
                    "client {}'s op records do not match its {op} latency figures{}; its records are incomplete",
                    c.client,
                    if *fails { " of failed ops" } else { "" }
                );
            }
            let into = if *fails { &mut failed } else { &mut latency };
            into.entry(op.clone()).or_default().merge(h);
        }
    }
    Ok(FromRecords {
        latency,
        failed,
        lag,
    })
}
