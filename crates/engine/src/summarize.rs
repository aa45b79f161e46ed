//! Turns what the streams measured into an iteration's results, merging histograms.

use naslab_results::{
    FailedOp, FailoverSummary, IterationResult, LatencyHistogram, OpStats, OrderingSummary,
    PrepareResult, StreamResult, WriteDataAhead,
};
use naslab_trace::OpKind;

use crate::backend::errno_name;
use crate::plan::EdgeCounts;
use crate::replay::ReplayOutcome;

/// The results of one iteration.
pub fn summarize(
    iteration: u32,
    prepare: PrepareResult,
    outcome: &ReplayOutcome,
) -> IterationResult {
    let mut r = IterationResult {
        iteration,
        prepare,
        wall_ns: outcome.wall_ns,
        clock_start_ns: outcome.start_ns,
        realtime: outcome.realtime.clone(),
        ..IterationResult::default()
    };
    let mut lag = LatencyHistogram::new();
    for k in OpKind::ALL {
        let i = k.index();
        let mut h = LatencyHistogram::new();
        let mut failed = LatencyHistogram::new();
        let mut stats = OpStats::default();
        for s in &outcome.streams {
            if s.counts[i] == 0 {
                continue;
            }
            if let Some(l) = &s.latency[i] {
                l.merge_into(&mut h);
            }
            if let Some(l) = &s.failed_latency[i] {
                l.merge_into(&mut failed);
            }
            stats.count += s.counts[i];
            stats.errors += s.errors[i];
            stats.expected_failures += s.expected_failures[i];
            stats.missing_failures += s.missing_failures[i];
            match k {
                OpKind::Read => stats.bytes += s.bytes_read,
                OpKind::Write => stats.bytes += s.bytes_written,
                _ => {}
            }
            for (&(kind, errno), &n) in &s.errnos {
                if kind == i {
                    *stats.errors_by_errno.entry(errno_name(errno)).or_insert(0) += n;
                }
            }
        }
        if stats.count > 0 {
            stats.latency = h.summary();
            stats.failed_latency = (failed.count() > 0).then(|| failed.summary());
            r.op_stats.insert(k.name().to_string(), stats);
        }
    }
    for s in &outcome.streams {
        if let Some(l) = &s.lag {
            l.merge_into(&mut lag);
        }
        r.bytes_read += s.bytes_read;
        r.bytes_written += s.bytes_written;
        r.ops += s.ops;
        r.errors += s.errors.iter().sum::<u64>();
        r.expected_failures += s.expected_failures.iter().sum::<u64>();
        r.streams.push(StreamResult {
            stream: s.stream,
            ops: s.ops,
            bytes: s.bytes_read + s.bytes_written,
            done_ns: s.done_ns.saturating_sub(outcome.start_ns),
        });
    }
    r.pacing_lag = lag.summary();
    r.first_done_ns = outcome
        .streams
        .iter()
        .map(|s| s.done_ns.saturating_sub(outcome.start_ns))
        .min()
        .unwrap_or(0);
    r.last_done_ns = outcome.wall_ns;
    r.throughput_mb_s = if r.wall_ns > 0 {
        (r.bytes_read + r.bytes_written) as f64 / (r.wall_ns as f64 / 1e9) / 1e6
    } else {
        0.0
    };
    r.aborted = outcome.fatal().map(|f| f.to_string());
    r.time_limited = outcome.streams.iter().any(|s| s.time_limited);
    r
}

/// The SMB durable handles the streams' opens asked for, were granted, claimed back
/// and lost; `None` when none was asked for and none lost.
pub fn durable_handles(outcome: &ReplayOutcome) -> Option<naslab_results::DurableHandles> {
    let mut d = naslab_results::DurableHandles::default();
    for s in &outcome.streams {
        let c = s.failover.seen.durable;
        d.add(&naslab_results::DurableHandles {
            asked: c.asked,
            granted: c.granted,
            reclaimed: c.reclaimed,
            lost: c.lost,
        });
    }
    (d.asked > 0 || d.lost > 0).then_some(d)
}

/// What the iteration's ops waited through when the path to the server broke; `None`
/// when no stream's connection broke.
pub fn failover(
    outcome: &ReplayOutcome,
    files: &crate::plan::FileTable,
) -> Option<FailoverSummary> {
    let streams = &outcome.streams;
    let reconnects: u64 = streams.iter().map(|s| s.failover.seen.reconnects).sum();
    if reconnects == 0 && streams.iter().all(|s| s.failover.stalled_ops == 0) {
        return None;
    }
    let mut f = FailoverSummary {
        reconnects,
        retries: streams.iter().map(|s| s.failover.seen.retries).sum(),
        unconfirmed_writes: streams
            .iter()
            .map(|s| s.failover.seen.unconfirmed_writes)
            .sum(),
        ..FailoverSummary::default()
    };
    let first = streams
        .iter()
        .filter_map(|s| s.failover.first_stall_ns)
        .min();
    for s in streams {
        let sf = &s.failover;
        f.stalled_ops += sf.stalled_ops;
        f.stall_total_ns += sf.stall_total_ns;
        if sf.longest_stall_ns > f.longest_stall_ns {
            f.longest_stall_ns = sf.longest_stall_ns;
            f.longest_stall_op = sf
                .longest_stall_kind
                .map(|k| k.name().to_string())
                .unwrap_or_default();
        }
        f.failed_ops += sf.failed_ops;
        for (kind, file, e) in &sf.failed {
            f.failed.push(FailedOp {
                op: kind.name().to_string(),
                path: files.path(*file).to_string(),
                error: e.to_string(),
            });
        }
    }
    if let Some(first) = first {
        f.first_stall_ns = first.saturating_sub(outcome.start_ns);
        // The first op of any stream to succeed from the first stall on.
        let back = streams.iter().filter_map(|s| s.failover.back_ns).min();
        f.gap_ns = back.map(|b| b.saturating_sub(first));
    }
    Some(f)
}

/// The order kept between the streams of a replay with `edges`, and their waits.
pub fn ordering(edges: &EdgeCounts, outcome: &ReplayOutcome, enforced: bool) -> OrderingSummary {
    let mut o = OrderingSummary {
        enforced,
        edges: edges.total(),
        name_edges: edges.name,
        sync_edges: edges.sync,
        sequence_edges: edges.sequence,
        ..OrderingSummary::default()
    };
    for s in &outcome.streams {
        let w = &s.order_waits;
        o.waits += w.waits;
        o.wait_total_ns += w.total_ns;
        o.wait_longest_ns = o.wait_longest_ns.max(w.longest_ns);
    }
    o
}

/// How the streams' writes got their data, when it was made ahead (see `replay::ahead`).
pub fn write_data_ahead(outcome: &ReplayOutcome) -> Option<WriteDataAhead> {
    outcome
        .streams
        .iter()
        .filter_map(|s| s.ahead)
        .map(|a| WriteDataAhead {
            ready: a.found_ready,
            made_by_stream: a.filled_by_stream,
        })
        .reduce(|mut a, b| {
            a.add(&b);
            a
        })
}
