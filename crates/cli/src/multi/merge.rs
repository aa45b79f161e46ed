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

use anyhow::{Context, bail};
use naslab_engine::verify::DETAILS_KEPT;
use naslab_results::{
    ClientResult, IterationLayout, IterationResult, LatencyHistogram, LatencySummary, Mismatch,
    MultiClient, OpStats, PrepareResult, RunResult, StartSkew, StreamResult, VerifySummary,
    Warning, WorkloadResult,
};

/// The start skew worth a warning: this share of the measured phase (1 %).
const SKEW_WARN_SHARE: f64 = 0.01;
use naslab_trace::{FileDecl, Measured, Op, Record, TraceReader, create_trace, open_trace};
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

/// What the clients other than the one [`failure_of`] names said, grouped by reason
/// (`\nclients 1, 2: not started: ...`), for a job that measured nothing; empty when they
/// said nothing else.
pub fn others_failures(clients: &[Gathered]) -> String {
    let named = clients
        .iter()
        .find(|c| c.report.caused && c.report.failure.is_some())
        .or_else(|| clients.iter().find(|c| c.report.failure.is_some()))
        .map(|c| c.report.rank);
    let mut by_reason: Vec<(&str, Vec<u32>)> = Vec::new();
    for c in clients.iter().filter(|c| Some(c.report.rank) != named) {
        let Some(why) = c.report.failure.as_deref() else {
            continue;
        };
        match by_reason.iter_mut().find(|(w, _)| *w == why) {
            Some((_, ranks)) => ranks.push(c.report.rank),
            None => by_reason.push((why, vec![c.report.rank])),
        }
    }
    let mut out = String::new();
    for (why, ranks) in by_reason {
        let list: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
        let who = if ranks.len() == 1 {
            "client"
        } else {
            "clients"
        };
        out.push_str(&format!("\n{who} {}: {why}", list.join(", ")));
    }
    out
}

/// Builds the job's one result from every client's results and op records (in rank
/// order), writing the merged op records into `run_dir`. The first client that ran
/// supplies what all clients share (options, target, environment); `shared`: the
/// clients shared one file set.
pub fn merge(clients: &[Gathered], run_dir: &Path, shared: bool) -> anyhow::Result<RunResult> {
    let Some(template) = clients.iter().find_map(|c| c.report.run.as_ref()) else {
        bail!("no client sent results");
    };
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
    let mut skews = Vec::new();
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
        let mut below_warned = false;
        for i in 0..iterations {
            let parts: Vec<(&Gathered, &IterationResult)> = per_client
                .iter()
                .filter_map(|(c, w)| w.iterations.get(i).map(|it| (*c, it)))
                .collect();
            let it = merge_iteration(&parts, run_dir, shared)?;
            let (skew, below) = start_skew(&name, &it, &parts);
            skews.push(skew);
            // One such warning per workload: its first iteration that fell below.
            if !below_warned {
                below_warned = below.is_some();
                run.warnings.extend(below);
            }
            merged.push(it);
        }
        run.workloads
            .push(WorkloadResult::from_iterations(name, source, merged));
    }
    run.warnings.extend(skew_warnings(&skews));
    let mut multi = MultiClient {
        start_skew: skews,
        ..MultiClient::default()
    };
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
            target: c
                .report
                .run
                .as_ref()
                .map(|r| r.target.source.clone())
                .unwrap_or_default(),
            link: c.report.run.as_ref().and_then(|r| r.options.link.clone()),
        });
    }
    // Clients that crossed different links (`--client-target`, a lab's `--client-links`)
    // have no common path: each keeps its own.
    let emulated: Vec<_> = multi
        .clients
        .iter()
        .filter(|c| c.aborted.is_none() || !c.workloads.is_empty())
        .map(|c| c.link.as_ref().and_then(|l| l.emulated.as_ref()))
        .collect();
    if emulated.windows(2).any(|w| w[0] != w[1]) {
        run.options.link = None;
    }
    run.multi_client = Some(multi);
    Ok(run)
}

/// How far apart the clients began iteration `it` of `workload` (the spread of their
/// first issues on the common time base, `parts` being each client's own iteration),
/// and whether the aggregate fell below every client's own throughput.
fn start_skew(
    workload: &str,
    it: &IterationResult,
    parts: &[(&Gathered, &IterationResult)],
) -> (StartSkew, Option<Warning>) {
    let starts = parts.iter().map(|(_, p)| p.clock_start_ns);
    let skew_ns = match (starts.clone().min(), starts.max()) {
        (Some(lo), Some(hi)) => hi - lo,
        _ => 0,
    };
    let slowest = parts
        .iter()
        .map(|(_, p)| p.throughput_mb_s)
        .fold(f64::INFINITY, f64::min);
    let below = parts.len() > 1 && it.throughput_mb_s > 0.0 && it.throughput_mb_s < slowest;
    let skew = StartSkew {
        workload: workload.to_string(),
        iteration: it.iteration,
        skew_ns,
        wall_ns: it.wall_ns,
        aggregate_below_clients: below,
    };
    let warning = below.then(|| Warning::AggregateBelowClients {
        workload: workload.to_string(),
        aggregate_bytes_s: (it.throughput_mb_s * 1e6).round() as u64,
        slowest_client_bytes_s: (slowest * 1e6).round() as u64,
        skew_ns,
    });
    (skew, warning)
}

/// One warning per workload whose clients started far apart against its phase (the
/// worst iteration's), and one per workload whose aggregate fell below every client's.
fn skew_warnings(skews: &[StartSkew]) -> Vec<Warning> {
    let mut out = Vec::new();
    let mut workloads: Vec<&str> = skews.iter().map(|s| s.workload.as_str()).collect();
    workloads.dedup();
    for w in workloads {
        let of = || skews.iter().filter(move |s| s.workload == w);
        let worst = of().max_by(|a, b| {
            let share = |s: &StartSkew| s.skew_ns as f64 / s.wall_ns.max(1) as f64;
            share(a).total_cmp(&share(b))
        });
        if let Some(s) = worst.filter(|s| s.skew_ns as f64 > SKEW_WARN_SHARE * s.wall_ns as f64) {
            out.push(Warning::StartSkew {
                workload: w.to_string(),
                skew_ns: s.skew_ns,
                wall_ns: s.wall_ns,
            });
        }
    }
    out
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
    let mut aborted_by_own = false;
    for (c, it) in parts {
        r.bytes_read += it.bytes_read;
        r.bytes_written += it.bytes_written;
        r.ops += it.ops;
        r.ops_planned += it.ops_planned;
        r.errors += it.errors;
        r.expected_failures += it.expected_failures;
        r.time_limited |= it.time_limited;
        if let Some(o) = &it.ordering {
            // Each client keeps its own streams' order; no edge joins two clients.
            match &mut r.ordering {
                Some(m) => m.add(o),
                None => r.ordering = Some(*o),
            }
        }
        if let Some(w) = &it.write_data_ahead {
            match &mut r.write_data_ahead {
                Some(m) => m.add(w),
                None => r.write_data_ahead = Some(*w),
            }
        }
        if let Some(f) = &it.failover {
            match &mut r.failover {
                Some(m) => m.add(f),
                None => r.failover = Some(f.clone()),
            }
        }
        if let Some(d) = &it.durable_handles {
            match &mut r.durable_handles {
                Some(m) => m.add(d),
                None => r.durable_handles = Some(*d),
            }
        }
        if let Some(g) = &it.realtime {
            match &mut r.realtime {
                Some(m) => m.add(g),
                None => r.realtime = Some(g.clone()),
            }
        }
        if let Some(v) = &it.verify {
            // Every client checked its own files: counts add, and the first mismatches of
            // each are kept (as many as one client keeps), their files under its directory
            // as the merged records name them.
            let m = r.verify.get_or_insert_with(VerifySummary::default);
            m.add_counts(v);
            let room = DETAILS_KEPT.saturating_sub(m.mismatches.len());
            m.mismatches
                .extend(v.mismatches.iter().take(room).map(|x| Mismatch {
                    file: format!("client-{}/{}", c.report.rank, x.file),
                    ..x.clone()
                }));
        }
        r.prepare.files += it.prepare.files;
        r.prepare.dirs += it.prepare.dirs;
        r.prepare.bytes += it.prepare.bytes;
        r.prepare.wall_ns = r.prepare.wall_ns.max(it.prepare.wall_ns);
        // The iteration stopped early for the client whose failure it was; the others'
        // "stopped because client N failed" only follows from it.
        let own = c.report.caused && it.aborted.is_some();
        if (r.aborted.is_none() || (own && !aborted_by_own))
            && let Some(why) = &it.aborted
        {
            r.aborted = Some(format!(
                "client {} on {}: {why}",
                c.report.rank, c.report.host
            ));
            aborted_by_own = own;
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
        // A failure the trace expected is no error, and a success it did not expect is
        // one: the records' failures are the errors less those, plus the expected ones.
        let failures =
            (stats.errors + stats.expected_failures).saturating_sub(stats.missing_failures);
        if ok + failed != stats.count || failed != failures {
            bail!(
                "the clients' op records hold {} {op} ops ({failed} failed) but their results count {} ({failures} failed); the records are incomplete",
                ok + failed,
                stats.count,
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

#[cfg(test)]
mod tests {
    use super::*;
    use naslab_trace::OpKind;

    fn client(rank: u32) -> Gathered {
        Gathered {
            report: ClientReport {
                rank,
                host: "h".into(),
                run: None,
                failure: None,
                caused: false,
                start_late_ns: 0,
                records: Vec::new(),
            },
            records: HashMap::new(),
            clock: (0, 0),
        }
    }

    fn part(start: u64, wall: u64, mb_s: f64) -> IterationResult {
        IterationResult {
            iteration: 1,
            clock_start_ns: start,
            wall_ns: wall,
            throughput_mb_s: mb_s,
            ..IterationResult::default()
        }
    }

    /// One op of a client's records: (stream, kind, file, bytes, issued, latency, result).
    type OpLine = (u32, OpKind, u32, u64, u64, u64, i64);

    /// A client's results and op records for one iteration of workload "W", as a client
    /// sends them: its files `f0`, `f1`, its ops, its phase's start on the common clock
    /// and its length. Its per-op-type figures are made from the ops (they are what it
    /// measured, and what the merge checks its records against).
    fn sent(dir: &Path, rank: u32, clock_start_ns: u64, wall_ns: u64, ops: &[OpLine]) -> Gathered {
        let records = dir.join(format!("w-{rank}.ops.nbt.zst"));
        let mut w = create_trace(&records).unwrap();
        w.header(&naslab_trace::Header::new("W")).unwrap();
        w.file(&FileDecl::file(0, "W/f0", 1 << 20, true)).unwrap();
        w.file(&FileDecl::file(1, "W/f1", 0, false)).unwrap();
        let mut it = IterationResult {
            iteration: 1,
            clock_start_ns,
            wall_ns,
            last_done_ns: wall_ns,
            records: Some("w-1.ops.nbt.zst".into()),
            ..IterationResult::default()
        };
        let mut ok: BTreeMap<String, LatencyHistogram> = BTreeMap::new();
        let mut failed: BTreeMap<String, LatencyHistogram> = BTreeMap::new();
        let mut streams: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
        for &(stream, kind, file, bytes, issued, latency, result) in ops {
            let mut op = Op::new(stream, 0, kind, file);
            op.len = bytes;
            let m = Measured {
                sched_ns: issued,
                issued_ns: issued,
                done_ns: issued + latency,
                result,
            };
            w.op(&op, Some(&m)).unwrap();
            let name = kind.name().to_string();
            let stats = it.op_stats.entry(name.clone()).or_default();
            stats.count += 1;
            it.ops += 1;
            let s = streams.entry(stream).or_default();
            s.0 += 1;
            if result < 0 {
                stats.errors += 1;
                *stats.errors_by_errno.entry("ENOSPC".into()).or_default() += 1;
                it.errors += 1;
                failed.entry(name).or_default().record(latency);
            } else {
                stats.bytes += bytes;
                s.1 += bytes;
                match kind {
                    OpKind::Read => it.bytes_read += bytes,
                    _ => it.bytes_written += bytes,
                }
                ok.entry(name).or_default().record(latency);
            }
        }
        w.close().unwrap();
        for (name, h) in &ok {
            it.op_stats.get_mut(name).unwrap().latency = h.summary();
        }
        for (name, h) in &failed {
            it.op_stats.get_mut(name).unwrap().failed_latency = Some(h.summary());
        }
        it.streams = streams
            .into_iter()
            .map(|(stream, (ops, bytes))| StreamResult {
                stream,
                ops,
                bytes,
                done_ns: wall_ns,
            })
            .collect();
        it.throughput_mb_s =
            (it.bytes_read + it.bytes_written) as f64 / (wall_ns as f64 / 1e9) / 1e6;
        let run = RunResult {
            schema_version: naslab_results::SCHEMA_VERSION,
            naslab_version: "test".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            environment: Default::default(),
            target: Default::default(),
            options: Default::default(),
            workloads: vec![WorkloadResult::from_iterations(
                "W".into(),
                "generated".into(),
                vec![it],
            )],
            warnings: Vec::new(),
            aborted: None,
            label: Some("default".into()),
            device: Default::default(),
            multi_client: None,
            sweep: None,
        };
        Gathered {
            report: ClientReport {
                rank,
                host: format!("host{rank}"),
                run: Some(run),
                failure: None,
                caused: false,
                start_late_ns: 0,
                records: vec!["w-1.ops.nbt.zst".into()],
            },
            records: HashMap::from([("w-1.ops.nbt.zst".to_string(), records)]),
            clock: (0, 0),
        }
    }

    #[test]
    fn two_clients_merge_into_the_totals_their_ops_add_up_to() {
        let tmp = tempfile::tempdir().unwrap();
        let (spool, out) = (tmp.path().join("spool"), tmp.path().join("out"));
        std::fs::create_dir_all(&spool).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        use OpKind::{Read, Write};
        // Client 0: phase from 1 ms to 5 ms on the common clock; three reads of 4 KiB
        // (100, 200, 300 ns) and one write that failed (ENOSPC, 50 ns).
        let a = sent(
            &spool,
            0,
            1_000_000,
            4_000_000,
            &[
                (0, Read, 0, 4096, 10, 100, 4096),
                (0, Read, 0, 4096, 1_000, 200, 4096),
                (0, Write, 1, 4096, 2_000, 50, -28),
                (0, Read, 0, 4096, 3_000, 300, 4096),
            ],
        );
        // Client 1: from 2 ms to 7 ms, two streams; two reads of 8 KiB (400, 800 ns)
        // and a write of 4 KiB (1,000 ns).
        let b = sent(
            &spool,
            1,
            2_000_000,
            5_000_000,
            &[
                (0, Read, 0, 8192, 5, 400, 8192),
                (1, Write, 1, 4096, 500, 1_000, 4096),
                (0, Read, 0, 8192, 2_500, 800, 8192),
            ],
        );
        let job = merge(&[a, b], &out, false).unwrap();
        assert!(job.aborted.is_none());
        let it = &job.workloads[0].iterations[0];
        // From client 0's start (1 ms) to client 1's end (7 ms).
        assert_eq!((it.clock_start_ns, it.wall_ns), (1_000_000, 6_000_000));
        assert_eq!(it.ops, 7);
        assert_eq!(it.errors, 1);
        assert_eq!(it.bytes_read, 3 * 4096 + 2 * 8192);
        assert_eq!(it.bytes_written, 4096);
        // 32,768 bytes over 6 ms.
        assert!((it.throughput_mb_s - 32_768.0 / 0.006 / 1e6).abs() < 1e-9);
        // Reads: 100, 200, 300, 400, 800 ns together.
        let read = &it.op_stats["read"];
        assert_eq!((read.count, read.bytes, read.errors), (5, 28_672, 0));
        let l = read.latency;
        assert_eq!((l.count, l.min_ns, l.max_ns), (5, 100, 800));
        assert_eq!(l.avg_ns, (100 + 200 + 300 + 400 + 800) / 5);
        assert_eq!((l.p50_ns, l.p90_ns, l.p99_ns), (300, 800, 800));
        // Writes: one succeeded (1,000 ns), one failed (50 ns), kept apart.
        let write = &it.op_stats["write"];
        assert_eq!((write.count, write.bytes, write.errors), (2, 4096, 1));
        assert_eq!(write.errors_by_errno["ENOSPC"], 1);
        assert_eq!(
            (
                write.latency.count,
                write.latency.min_ns,
                write.latency.max_ns
            ),
            (1, 1_000, 1_000)
        );
        let f = write.failed_latency.unwrap();
        assert_eq!((f.count, f.min_ns, f.max_ns), (1, 50, 50));
        // Streams are moved apart: client 1's 0 and 1 become 1 and 2.
        let streams: Vec<(u32, u64, u64)> = it
            .streams
            .iter()
            .map(|s| (s.stream, s.ops, s.done_ns))
            .collect();
        assert_eq!(
            streams,
            vec![(0, 4, 4_000_000), (1, 2, 6_000_000), (2, 1, 6_000_000)]
        );
        // Each client's own figures are kept beside the aggregate.
        let multi = job.multi_client.as_ref().unwrap();
        let own: Vec<(u32, u64)> = multi
            .clients
            .iter()
            .map(|c| (c.rank, c.workloads[0].iterations[0].ops))
            .collect();
        assert_eq!(own, vec![(0, 4), (1, 3)]);
        assert_eq!(multi.start_skew[0].skew_ns, 1_000_000);
        // The merged records: every op once, in issue order, each naming its client,
        // files and streams moved apart.
        let mut reader = open_trace(&out.join("w-1.ops.nbt.zst")).unwrap();
        let mut files = Vec::new();
        let mut ops = Vec::new();
        while let Some(r) = reader.next_record().unwrap() {
            match r {
                Record::Header(h) => assert_eq!(h.workload, "W"),
                Record::File(f) => files.push((f.id, f.path)),
                Record::Op(op, Some(m)) => {
                    ops.push((reader.client().unwrap(), op.stream, op.file, m.issued_ns))
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            files,
            vec![
                (0, "client-0/W/f0".to_string()),
                (1, "client-0/W/f1".to_string()),
                (2, "client-1/W/f0".to_string()),
                (3, "client-1/W/f1".to_string()),
            ]
        );
        assert_eq!(
            ops,
            vec![
                (1, 1, 2, 5),
                (0, 0, 0, 10),
                (1, 2, 3, 500),
                (0, 0, 0, 1_000),
                (0, 0, 1, 2_000),
                (1, 1, 2, 2_500),
                (0, 0, 0, 3_000),
            ]
        );
    }

    #[test]
    fn the_clients_ordering_adds_up_and_a_client_without_edges_adds_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let (spool, out) = (tmp.path().join("spool"), tmp.path().join("out"));
        std::fs::create_dir_all(&spool).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let ops: [OpLine; 1] = [(0, OpKind::Read, 0, 4096, 10, 100, 4096)];
        let mut clients = [0, 1, 2].map(|rank| sent(&spool, rank, 0, 1_000, &ops));
        // Client 1 has one stream: no ordering of its own.
        for (c, ordering) in clients.iter_mut().zip([
            Some((5, 3, 1, 1, 2, 300, 200)),
            None,
            Some((2, 0, 0, 2, 1, 400, 400)),
        ]) {
            let run = c.report.run.as_mut().unwrap();
            run.workloads[0].iterations[0].ordering =
                ordering.map(|(edges, name, sync, sequence, waits, total, longest)| {
                    naslab_results::OrderingSummary {
                        enforced: true,
                        edges,
                        name_edges: name,
                        sync_edges: sync,
                        sequence_edges: sequence,
                        waits,
                        wait_total_ns: total,
                        wait_longest_ns: longest,
                    }
                });
        }
        let job = merge(&clients, &out, false).unwrap();
        assert_eq!(
            job.workloads[0].iterations[0].ordering,
            Some(naslab_results::OrderingSummary {
                enforced: true,
                edges: 7,
                name_edges: 3,
                sync_edges: 1,
                sequence_edges: 3,
                waits: 3,
                wait_total_ns: 700,
                wait_longest_ns: 400,
            })
        );
    }

    #[test]
    fn what_the_kernel_granted_each_client_under_realtime_adds_up() {
        let tmp = tempfile::tempdir().unwrap();
        let (spool, out) = (tmp.path().join("spool"), tmp.path().join("out"));
        std::fs::create_dir_all(&spool).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let ops: [OpLine; 1] = [(0, OpKind::Read, 0, 4096, 10, 100, 4096)];
        let mut clients = [0, 1].map(|rank| sent(&spool, rank, 0, 1_000, &ops));
        // Client 0 got everything for its 2 streams; client 1, without the privileges,
        // had its memory and its 3 streams refused.
        for (c, (locked, streams, fifo, refused)) in clients
            .iter_mut()
            .zip([(true, 2, 2, None), (false, 3, 0, Some("SCHED_FIFO: EPERM"))])
        {
            let run = c.report.run.as_mut().unwrap();
            run.workloads[0].iterations[0].realtime = Some(naslab_results::RealtimeGranted {
                memory_locked: locked,
                streams,
                fifo_streams: fifo,
                nice_streams: 0,
                pinned_streams: streams,
                refused: refused.into_iter().map(String::from).collect(),
            });
        }
        let job = merge(&clients, &out, false).unwrap();
        assert_eq!(
            job.workloads[0].iterations[0].realtime,
            Some(naslab_results::RealtimeGranted {
                memory_locked: false,
                streams: 5,
                fifo_streams: 2,
                nice_streams: 0,
                pinned_streams: 5,
                refused: vec!["SCHED_FIFO: EPERM".into()],
            })
        );
    }

    #[test]
    fn the_clients_verification_adds_up_and_keeps_each_clients_mismatches_by_its_files() {
        let tmp = tempfile::tempdir().unwrap();
        let (spool, out) = (tmp.path().join("spool"), tmp.path().join("out"));
        std::fs::create_dir_all(&spool).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let ops: [OpLine; 1] = [(0, OpKind::Read, 0, 4096, 10, 100, 4096)];
        let mut clients = [0, 1, 2].map(|rank| sent(&spool, rank, 0, 1_000, &ops));
        let mismatch = |offset| Mismatch {
            file: "W/f0".into(),
            offset,
            len: 4096,
            kind: naslab_results::MismatchKind::LostWrite,
            expected: "gen 2".into(),
            found: "gen 1".into(),
            during: "read-back".into(),
        };
        // Client 0 found nothing wrong; client 1 lost one write; client 2 found more
        // mismatches than are kept with their details.
        for (c, lost) in clients.iter_mut().zip([0u64, 1, DETAILS_KEPT as u64 + 5]) {
            let run = c.report.run.as_mut().unwrap();
            run.workloads[0].iterations[0].verify = Some(VerifySummary {
                reads_checked: 10,
                bytes_checked: 40_960,
                read_back_bytes: 1 << 20,
                lost_writes: lost,
                mismatches: (0..lost.min(DETAILS_KEPT as u64))
                    .map(|i| mismatch(i * 4096))
                    .collect(),
                ..VerifySummary::default()
            });
        }
        let job = merge(&clients, &out, false).unwrap();
        let v = job.workloads[0].iterations[0].verify.as_ref().unwrap();
        assert_eq!(
            (v.reads_checked, v.bytes_checked, v.read_back_bytes),
            (30, 3 * 40_960, 3 << 20)
        );
        assert_eq!(v.lost_writes, DETAILS_KEPT as u64 + 6);
        assert_eq!(v.total(), DETAILS_KEPT as u64 + 6);
        assert_eq!(v.mismatches.len(), DETAILS_KEPT);
        assert_eq!(v.mismatches[0].file, "client-1/W/f0");
        assert_eq!(v.mismatches[1].file, "client-2/W/f0");
        assert_eq!(v.mismatches[1].offset, 0);
    }

    #[test]
    fn a_client_that_failed_on_its_own_is_named_first() {
        let tmp = tempfile::tempdir().unwrap();
        let spool = tmp.path();
        let ops: [OpLine; 1] = [(0, OpKind::Read, 0, 4096, 10, 100, 4096)];
        let mut a = sent(spool, 0, 0, 1_000, &ops);
        let mut b = sent(spool, 1, 0, 1_000, &ops);
        let mut c = sent(spool, 2, 0, 1_000, &ops);
        for (g, why, caused) in [
            (&mut a, "stopped because client 2 failed", false),
            (&mut b, "stopped because client 2 failed", false),
            (&mut c, "write 'W/f0': ENOSPC", true),
        ] {
            g.report.failure = Some(why.to_string());
            g.report.caused = caused;
            if let Some(run) = &mut g.report.run {
                run.workloads[0].iterations[0].aborted = Some(why.to_string());
            }
        }
        let clients = [a, b, c];
        assert_eq!(
            failure_of(&clients).as_deref(),
            Some("client 2 on host2: write 'W/f0': ENOSPC")
        );
        assert_eq!(
            others_failures(&clients),
            "\nclients 0, 1: stopped because client 2 failed"
        );
        let out = tmp.path().join("out");
        std::fs::create_dir_all(&out).unwrap();
        let job = merge(&clients, &out, false).unwrap();
        assert_eq!(
            job.aborted.as_deref(),
            Some("client 2 on host2: write 'W/f0': ENOSPC")
        );
        assert_eq!(
            job.workloads[0].iterations[0].aborted.as_deref(),
            Some("client 2 on host2: write 'W/f0': ENOSPC")
        );
    }

    #[test]
    fn records_that_do_not_hold_what_a_client_counted_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let (spool, out) = (tmp.path().join("spool"), tmp.path().join("out"));
        std::fs::create_dir_all(&spool).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        let ops: [OpLine; 2] = [
            (0, OpKind::Read, 0, 4096, 10, 100, 4096),
            (0, OpKind::Read, 0, 4096, 20, 200, 4096),
        ];
        let a = sent(&spool, 0, 0, 1_000, &ops);
        let mut b = sent(&spool, 1, 0, 1_000, &ops);
        // Client 1 says it did three reads; its records hold two.
        if let Some(run) = &mut b.report.run {
            run.workloads[0].iterations[0]
                .op_stats
                .get_mut("read")
                .unwrap()
                .count = 3;
        }
        let e = merge(&[a, b], &out, false).unwrap_err();
        assert!(
            format!("{e:#}").contains("the records are incomplete"),
            "{e:#}"
        );
    }

    #[test]
    fn a_start_skew_large_against_a_short_phase_is_measured_flagged_and_warned() {
        // Two clients of 0.2 ms phases, the second started 1.87 ms late: the aggregate
        // (their bytes over 2.07 ms) falls below both clients' own figures.
        let (a, b) = (client(0), client(1));
        let (pa, pb) = (part(0, 200_000, 570.9), part(1_870_000, 200_000, 789.0));
        let parts = [(&a, &pa), (&b, &pb)];
        let merged = IterationResult {
            iteration: 1,
            wall_ns: 2_070_000,
            throughput_mb_s: 128.5,
            ..IterationResult::default()
        };
        let (skew, warning) = start_skew("iozone", &merged, &parts);
        assert_eq!(skew.skew_ns, 1_870_000);
        assert_eq!(skew.wall_ns, 2_070_000);
        assert!(skew.aggregate_below_clients);
        assert!(matches!(
            warning,
            Some(Warning::AggregateBelowClients {
                aggregate_bytes_s: 128_500_000,
                slowest_client_bytes_s: 570_900_000,
                ..
            })
        ));
        assert!(matches!(
            skew_warnings(&[skew])[..],
            [Warning::StartSkew {
                skew_ns: 1_870_000,
                ..
            }]
        ));
        // A skew of 0.5 % of a long phase, with an aggregate above each client's: no flag,
        // no warning.
        let (pa, pb) = (
            part(0, 1_000_000_000, 100.0),
            part(5_000_000, 1_000_000_000, 100.0),
        );
        let parts = [(&a, &pa), (&b, &pb)];
        let merged = IterationResult {
            iteration: 1,
            wall_ns: 1_005_000_000,
            throughput_mb_s: 199.0,
            ..IterationResult::default()
        };
        let (skew, warning) = start_skew("long", &merged, &parts);
        assert_eq!(skew.skew_ns, 5_000_000);
        assert!(!skew.aggregate_below_clients && warning.is_none());
        assert!(skew_warnings(&[skew]).is_empty());
    }
}
