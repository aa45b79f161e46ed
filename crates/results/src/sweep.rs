//! A capacity sweep's figures: each load point's offered and achieved load, its
//! response times (from each op's scheduled start) and service times (from its actual
//! issue) per op type, and over the curve the knee, the peak and an overall response
//! time. Computed from the op records, which hold both instants of every op, so that
//! nothing is averaged twice: every percentile comes from a histogram of all the ops it
//! speaks of. See `docs/capacity.md`.

use std::collections::BTreeMap;
use std::path::Path;

use naslab_trace::{OpKind, Record, TraceError, open_trace};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{LatencyHistogram, LatencySummary};

/// What a sweep's load is counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum LoadUnit {
    /// Concurrent users, each a copy of a workload on its own file set.
    Users,
    /// Offered ops per second.
    OpsPerS,
}

impl LoadUnit {
    /// The unit as the tables print it.
    pub fn label(self) -> &'static str {
        match self {
            LoadUnit::Users => "users",
            LoadUnit::OpsPerS => "ops/s",
        }
    }
}

/// A response-time limit a point must meet: `op:pNN<=LIMIT`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
pub struct Cap {
    /// The op type it applies to, or `all`.
    pub op: String,
    /// The percentile, 0 to 100 (`avg` is written as -1).
    pub percentile: f64,
    pub limit_ns: u64,
}

impl Cap {
    /// Parses `read:p99<=50ms`, `all:p90<=10ms` or `open:avg<=5ms`.
    pub fn parse(
        text: &str,
        parse_duration_ns: fn(&str) -> Result<u64, String>,
    ) -> Result<Cap, String> {
        let usage = "write the cap as OP:pNN<=DURATION, e.g. read:p99<=50ms or all:avg<=10ms";
        let (op, rest) = text
            .split_once(':')
            .ok_or_else(|| format!("'{text}': {usage}"))?;
        let (stat, limit) = rest
            .split_once("<=")
            .ok_or_else(|| format!("'{text}': {usage}"))?;
        let percentile = if stat == "avg" {
            -1.0
        } else {
            let p: f64 = stat
                .strip_prefix('p')
                .and_then(|p| p.parse().ok())
                .ok_or_else(|| format!("'{stat}' is not a percentile; {usage}"))?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!("percentile {p} is out of range; use p1 to p100"));
            }
            p
        };
        let op = op.to_ascii_lowercase();
        if op != "all" && !OpKind::ALL.iter().any(|k| k.name() == op) {
            return Err(format!(
                "'{op}' is not an op type; use all or one of: {}",
                OpKind::ALL.map(|k| k.name()).join(", ")
            ));
        }
        Ok(Cap {
            op,
            percentile,
            limit_ns: parse_duration_ns(limit)?,
        })
    }

    /// The figure of `point` the cap looks at, when the point has ops of its type.
    pub fn value_ns(&self, point: &LoadPoint) -> Option<u64> {
        let stats = if self.op == "all" {
            Some(&point.all)
        } else {
            point.ops.get(&self.op)
        }?;
        (stats.count > 0).then(|| stats.response_quantile(self.percentile))
    }

    /// Whether `point` meets the cap (a point without ops of its type does).
    pub fn met_by(&self, point: &LoadPoint) -> bool {
        self.value_ns(point).is_none_or(|v| v <= self.limit_ns)
    }
}

impl std::fmt::Display for Cap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stat = if self.percentile < 0.0 {
            "avg".to_string()
        } else {
            format!("p{}", self.percentile)
        };
        write!(f, "{}:{stat}<={}", self.op, duration_text(self.limit_ns))
    }
}

/// Response and service times of one op type (or all ops) at one load point.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct PointOps {
    /// Ops of this type scheduled in the point's measured window.
    pub count: u64,
    pub errors: u64,
    /// From the op's scheduled start to its completion: what the user waited.
    pub response: LatencySummary,
    /// From the op's actual issue to its completion: what the server took.
    pub service: LatencySummary,
    /// The response-time quantiles at every whole percentile 1..=100 (for caps at any
    /// percentile and for drawing bands), ns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_percentiles_ns: Vec<u64>,
}

impl PointOps {
    /// The response time at percentile `p` (0 < p <= 100), or the mean when `p` < 0.
    pub fn response_quantile(&self, p: f64) -> u64 {
        if p < 0.0 {
            return self.response.avg_ns;
        }
        match p {
            50.0 => self.response.p50_ns,
            90.0 => self.response.p90_ns,
            99.0 => self.response.p99_ns,
            99.9 => self.response.p999_ns,
            100.0 => self.response.max_ns,
            _ => {
                let i = (p.ceil() as usize).clamp(1, 100) - 1;
                self.response_percentiles_ns
                    .get(i)
                    .copied()
                    .unwrap_or(self.response.max_ns)
            }
        }
    }
}

/// How the users of a point fared, each by its mean response time.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct UserSpread {
    pub users: u32,
    pub min_avg_response_ns: u64,
    pub median_avg_response_ns: u64,
    pub max_avg_response_ns: u64,
}

/// One load point.
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct LoadPoint {
    /// The run's workload that ran this point (its figures, records and report).
    pub workload: String,
    /// The load asked for, in the sweep's unit.
    pub load: f64,
    /// Ops scheduled in the measured window, per second of it.
    pub offered_ops_s: f64,
    /// Ops completed per second from the window's start to the last completion (or to
    /// the schedule's end, if later), whenever they were scheduled: below the offered
    /// rate when the target could not keep up.
    pub achieved_ops_s: f64,
    /// Bytes read and written by those ops per second, as `achieved_ops_s`.
    pub throughput_mb_s: f64,
    /// The measured window: ops scheduled from the warm-up's end on, ns.
    pub window_start_ns: u64,
    pub window_ns: u64,
    /// Ops scheduled during the warm-up, run but not counted.
    pub warmup_ops: u64,
    /// Every op of the window.
    pub all: PointOps,
    /// By op type (its name).
    pub ops: BTreeMap<String, PointOps>,
    /// How late ops were issued after their scheduled start (the queue in the client).
    pub lag: LatencySummary,
    /// For users points: how each user fared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub users: Option<UserSpread>,
    /// Whether the point met the sweep's cap, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met_cap: Option<bool>,
    /// The figure the cap was held to (its percentile of its op type's response time,
    /// ns); absent without a cap, or when the point had no op of that type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap_ns: Option<u64>,
    /// Whether achieved fell short of offered by more than the saturation margin.
    pub saturated: bool,
    /// For a multi-client job's point: how its clients shared it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<PointClients>,
}

/// How a multi-client job's clients shared one load point (its figures above are the
/// merge of theirs).
#[derive(Debug, Clone, Default, Serialize, Deserialize, TS)]
pub struct PointClients {
    /// Each client's ops of the measured window, by rank.
    pub ops: Vec<u64>,
    /// The spread of the clients' starts of the point on the common time base: the
    /// latest client's wake past the agreed start moment minus the earliest's, ns.
    pub start_skew_ns: u64,
    /// The worst uncertainty of a client's clock against rank 0's at that start, ns
    /// (the skew is known within it).
    pub clock_uncertainty_ns: u64,
}

/// A whole sweep: its points and the curve's figures.
#[derive(Debug, Clone, Serialize, Deserialize, TS)]
pub struct Sweep {
    pub unit: LoadUnit,
    /// `uniform` or `poisson` for rate points; absent for users.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<String>,
    /// Each point's warm-up, discarded, ns.
    pub warmup_ns: u64,
    /// A point is saturated when achieved < offered x (1 - this).
    pub saturation_margin: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<Cap>,
    pub points: Vec<LoadPoint>,
    /// The highest load up to which every point met the cap and was not saturated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub knee: Option<f64>,
    /// The highest achieved ops/s of any point.
    pub peak_achieved_ops_s: f64,
    /// The area under mean response time against achieved ops/s, divided by the peak
    /// achieved ops/s (see [`overall_response_ns`]).
    pub overall_response_ns: u64,
    /// Why the sweep ended before its last point, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
}

impl Sweep {
    /// Sets a finished point's verdicts: the figure the cap looks at and whether it met
    /// the cap, and whether it saturated.
    pub fn judge(&self, p: &mut LoadPoint) {
        p.cap_ns = self.cap.as_ref().and_then(|c| c.value_ns(p));
        p.met_cap = self.cap.as_ref().map(|c| c.met_by(p));
        p.saturated = saturated(p, self.saturation_margin);
    }

    /// Fills in the curve's figures (knee, peak, overall response time) and each point's
    /// cap verdict and saturation from its points.
    pub fn finish_curve(&mut self) {
        let mut points = std::mem::take(&mut self.points);
        for p in &mut points {
            self.judge(p);
        }
        self.points = points;
        self.knee = knee(&self.points);
        self.peak_achieved_ops_s = self
            .points
            .iter()
            .map(|p| p.achieved_ops_s)
            .fold(0.0, f64::max);
        self.overall_response_ns = overall_response_ns(&self.points);
    }
}

/// Whether a point's achieved rate fell short of its offered rate by more than `margin`.
pub fn saturated(p: &LoadPoint, margin: f64) -> bool {
    p.achieved_ops_s < p.offered_ops_s * (1.0 - margin)
}

/// The highest load up to which every point (in the order run) met the cap, was not
/// saturated and had no errors; `None` when the first point already failed.
pub fn knee(points: &[LoadPoint]) -> Option<f64> {
    let mut knee = None;
    for p in points {
        if p.met_cap == Some(false) || p.saturated || p.all.errors > 0 {
            break;
        }
        knee = Some(p.load);
    }
    knee
}

/// The overall response time of a curve: the area under mean response time plotted
/// against achieved ops/s, divided by the peak achieved ops/s. The points are taken in
/// the order of their achieved rate; the curve is flat from 0 to the first point (at its
/// response time) and straight between points (trapezoids). A flat curve therefore gives
/// its one response time, and a curve that climbs near the peak weighs that climb by how
/// much load it spans.
pub fn overall_response_ns(points: &[LoadPoint]) -> u64 {
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.all.count > 0)
        .map(|p| (p.achieved_ops_s, p.all.response.avg_ns as f64))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let Some(&(x0, y0)) = pts.first() else {
        return 0;
    };
    let peak = pts.iter().map(|p| p.0).fold(0.0, f64::max);
    if peak <= 0.0 {
        return y0 as u64;
    }
    let mut area = x0 * y0;
    for w in pts.windows(2) {
        area += (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0;
    }
    (area / peak).round() as u64
}

/// Folds a point's op records into its figures. Several clients' builders of one point
/// merge into the point of all their ops (sent between processes as JSON).
#[derive(Serialize, Deserialize)]
pub struct PointBuilder {
    warmup_ns: u64,
    /// Streams per user, for users points.
    streams_per_user: Option<u32>,
    response: BTreeMap<OpKind, LatencyHistogram>,
    service: BTreeMap<OpKind, LatencyHistogram>,
    errors: BTreeMap<OpKind, u64>,
    all_response: LatencyHistogram,
    all_service: LatencyHistogram,
    lag: LatencyHistogram,
    per_user: BTreeMap<u32, (u128, u64)>,
    warmup_ops: u64,
    first_sched_ns: u64,
    last_sched_ns: u64,
    last_done_ns: u64,
    /// Ops (of any schedule) completed from the window's start on, and their bytes.
    completed: u64,
    bytes: u64,
}

/// The upper bounds of the latency buckets a sweep's metrics expose, ns: 1, 2 and 5 x
/// 10^k from 10 us to 100 s (and +Inf after them).
pub const LATENCY_BUCKETS_NS: [u64; 22] = {
    let mut b = [0u64; 22];
    let mut i = 0;
    let mut decade = 10_000u64;
    while i < 22 {
        b[i] = decade * [1, 2, 5][i % 3];
        if i % 3 == 2 {
            decade *= 10;
        }
        i += 1;
    }
    b
};

/// One op type's response or service times in a point, counted into
/// [`LATENCY_BUCKETS_NS`].
#[derive(Debug, Clone, PartialEq)]
pub struct PointBuckets {
    /// The op type, or `all`.
    pub op: String,
    /// `response` or `service`.
    pub latency: &'static str,
    pub count: u64,
    pub sum_ns: u128,
    /// Ops at most each bound of [`LATENCY_BUCKETS_NS`] (cumulative).
    pub at_most: Vec<u64>,
}

impl PointBuilder {
    /// The point's response and service times per op type (and for all ops), counted
    /// into [`LATENCY_BUCKETS_NS`], for a metrics histogram.
    pub fn buckets(&self) -> Vec<PointBuckets> {
        let one = |op: &str, latency: &'static str, h: &LatencyHistogram| PointBuckets {
            op: op.to_string(),
            latency,
            count: h.count(),
            sum_ns: h.sum_ns(),
            at_most: LATENCY_BUCKETS_NS
                .iter()
                .map(|&b| h.count_at_most(b))
                .collect(),
        };
        let mut out = vec![
            one("all", "response", &self.all_response),
            one("all", "service", &self.all_service),
        ];
        for (k, r) in &self.response {
            out.push(one(k.name(), "response", r));
            if let Some(s) = self.service.get(k) {
                out.push(one(k.name(), "service", s));
            }
        }
        out
    }

    /// A builder that discards ops scheduled before `warmup_ns`; for users points,
    /// `streams_per_user` maps a stream to its user.
    pub fn new(warmup_ns: u64, streams_per_user: Option<u32>) -> PointBuilder {
        PointBuilder {
            warmup_ns,
            streams_per_user,
            response: BTreeMap::new(),
            service: BTreeMap::new(),
            errors: BTreeMap::new(),
            all_response: LatencyHistogram::new(),
            all_service: LatencyHistogram::new(),
            lag: LatencyHistogram::new(),
            per_user: BTreeMap::new(),
            warmup_ops: 0,
            first_sched_ns: u64::MAX,
            last_sched_ns: 0,
            last_done_ns: 0,
            completed: 0,
            bytes: 0,
        }
    }

    /// Adds one op of the point: its kind, stream, and its scheduled, issue and
    /// completion instants (ns into the phase) and result.
    pub fn op(
        &mut self,
        kind: OpKind,
        stream: u32,
        sched_ns: u64,
        issued_ns: u64,
        done_ns: u64,
        result: i64,
    ) {
        // What the target completed from the window's start on counts toward the
        // achieved rate, whenever it was scheduled: a backlog left by the warm-up is
        // work done in the window.
        if done_ns >= self.warmup_ns {
            self.completed += 1;
            if result > 0 && matches!(kind, OpKind::Read | OpKind::Write) {
                self.bytes += result as u64;
            }
            self.last_done_ns = self.last_done_ns.max(done_ns);
        }
        if sched_ns < self.warmup_ns {
            self.warmup_ops += 1;
            return;
        }
        let response = done_ns.saturating_sub(sched_ns);
        let service = done_ns.saturating_sub(issued_ns);
        self.response.entry(kind).or_default().record(response);
        self.service.entry(kind).or_default().record(service);
        self.all_response.record(response);
        self.all_service.record(service);
        self.lag.record(issued_ns.saturating_sub(sched_ns));
        if result < 0 {
            *self.errors.entry(kind).or_default() += 1;
        }
        if let Some(spu) = self.streams_per_user {
            let u = self.per_user.entry(stream / spu.max(1)).or_default();
            u.0 += u128::from(response);
            u.1 += 1;
        }
        self.first_sched_ns = self.first_sched_ns.min(sched_ns);
        self.last_sched_ns = self.last_sched_ns.max(sched_ns);
    }

    /// The ops of the measured window given so far.
    pub fn ops(&self) -> u64 {
        self.all_response.count()
    }

    /// Adds every op `other` holds, as if they had been given to this builder: the
    /// histograms merged bucket by bucket, the counts added, the window's ends widened.
    /// `other`'s users are numbered after this one's (each client's users are its own).
    pub fn merge(&mut self, other: PointBuilder) {
        for (k, h) in &other.response {
            self.response.entry(*k).or_default().merge(h);
        }
        for (k, h) in &other.service {
            self.service.entry(*k).or_default().merge(h);
        }
        for (k, n) in other.errors {
            *self.errors.entry(k).or_default() += n;
        }
        self.all_response.merge(&other.all_response);
        self.all_service.merge(&other.all_service);
        self.lag.merge(&other.lag);
        let first = self.per_user.keys().next_back().map_or(0, |u| u + 1);
        for (i, (_, u)) in other.per_user.into_iter().enumerate() {
            self.per_user.insert(first + i as u32, u);
        }
        self.warmup_ops += other.warmup_ops;
        self.first_sched_ns = self.first_sched_ns.min(other.first_sched_ns);
        self.last_sched_ns = self.last_sched_ns.max(other.last_sched_ns);
        self.last_done_ns = self.last_done_ns.max(other.last_done_ns);
        self.completed += other.completed;
        self.bytes += other.bytes;
    }

    /// Reads a point's op records file and adds every op in it.
    pub fn read_records(&mut self, records: &Path) -> Result<(), TraceError> {
        for r in open_trace(records)? {
            if let Record::Op(op, Some(m)) = r? {
                self.op(
                    op.kind,
                    op.stream,
                    m.sched_ns,
                    m.issued_ns,
                    m.done_ns,
                    m.result,
                );
            }
        }
        Ok(())
    }

    /// The point's figures. `window_end_ns` is when the schedule ends (the last arrival
    /// the load could make): the offered rate is counted over the window up to it.
    pub fn finish(self, workload: String, load: f64, window_end_ns: Option<u64>) -> LoadPoint {
        let count = self.all_response.count();
        let start = self.warmup_ns;
        let sched_end = window_end_ns.unwrap_or(self.last_sched_ns).max(start + 1);
        let window_ns = sched_end - start;
        let rate = |n: u64, span: u64| {
            if span == 0 {
                0.0
            } else {
                n as f64 * 1e9 / span as f64
            }
        };
        // Ops complete no sooner than their schedule allows: achieved is measured up to
        // the later of the schedule's end and the last completion.
        let busy_ns = self.last_done_ns.max(sched_end).saturating_sub(start);
        let ops_of = |r: &LatencyHistogram, s: &LatencyHistogram, errors: u64| PointOps {
            count: r.count(),
            errors,
            response: r.summary(),
            service: s.summary(),
            response_percentiles_ns: percentiles(r),
        };
        let mut ops = BTreeMap::new();
        for (k, r) in &self.response {
            let errors = self.errors.get(k).copied().unwrap_or(0);
            ops.insert(k.name().to_string(), ops_of(r, &self.service[k], errors));
        }
        let users = (!self.per_user.is_empty()).then(|| {
            let mut avgs: Vec<u64> = self
                .per_user
                .values()
                .map(|&(sum, n)| (sum / u128::from(n.max(1))) as u64)
                .collect();
            avgs.sort_unstable();
            UserSpread {
                users: avgs.len() as u32,
                min_avg_response_ns: avgs[0],
                median_avg_response_ns: avgs[avgs.len() / 2],
                max_avg_response_ns: avgs[avgs.len() - 1],
            }
        });
        LoadPoint {
            workload,
            load,
            offered_ops_s: rate(count, window_ns),
            achieved_ops_s: rate(self.completed, busy_ns),
            throughput_mb_s: self.bytes as f64 / 1e6 / (busy_ns.max(1) as f64 / 1e9),
            window_start_ns: start,
            window_ns,
            warmup_ops: self.warmup_ops,
            all: ops_of(
                &self.all_response,
                &self.all_service,
                self.errors.values().sum(),
            ),
            ops,
            lag: self.lag.summary(),
            users,
            met_cap: None,
            cap_ns: None,
            saturated: false,
            clients: None,
        }
    }
}

/// A duration as the command line writes it: `50ms`, `250us`, `75ns`.
pub fn duration_text(ns: u64) -> String {
    if ns >= 1_000_000 && ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns >= 1000 && ns.is_multiple_of(1000) {
        format!("{}us", ns / 1000)
    } else {
        format!("{ns}ns")
    }
}

/// The quantiles at 1 %, 2 %, ... 100 % of a histogram (empty when it is).
fn percentiles(h: &LatencyHistogram) -> Vec<u64> {
    if h.count() == 0 {
        return Vec::new();
    }
    (1..=100)
        .map(|p| h.quantile(f64::from(p) / 100.0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_builders_sent_as_json_and_merged_make_the_point_of_all_their_ops() {
        // Three clients, 2 streams per user, 2 users each; one builder given every op.
        let mut all = PointBuilder::new(1_000_000, Some(2));
        let mut parts: Vec<PointBuilder> = (0..3)
            .map(|_| PointBuilder::new(1_000_000, Some(2)))
            .collect();
        for (c, part) in parts.iter_mut().enumerate() {
            for i in 0..400u64 {
                let stream = (i % 4) as u32;
                let sched = i * 25_000 + c as u64 * 3_000;
                let issued = sched + 500 + i % 7 * 100;
                let done = issued + 40_000 + (i * 7_919 + c as u64 * 1_000) % 900_000;
                let kind = if i % 3 == 0 {
                    OpKind::Write
                } else {
                    OpKind::Read
                };
                let result = if i % 97 == 0 { -5 } else { 4096 };
                part.op(kind, stream, sched, issued, done, result);
                // The one builder sees each client's users as users of their own.
                all.op(kind, stream + 4 * c as u32, sched, issued, done, result);
            }
        }
        let mut merged: Option<PointBuilder> = None;
        for part in parts {
            let sent: PointBuilder =
                serde_json::from_slice(&serde_json::to_vec(&part).unwrap()).unwrap();
            match &mut merged {
                Some(m) => m.merge(sent),
                None => merged = Some(sent),
            }
        }
        let got = merged.unwrap().finish("p".into(), 6.0, Some(11_000_000));
        let want = all.finish("p".into(), 6.0, Some(11_000_000));
        assert_eq!(
            serde_json::to_value(&got).unwrap(),
            serde_json::to_value(&want).unwrap()
        );
        assert_eq!(got.all.count + got.warmup_ops, 1_200);
        assert_eq!(got.users.as_ref().map(|u| u.users), Some(6));
        assert!(got.all.errors > 0);
    }

    fn point(load: f64, achieved: f64, avg_ms: u64) -> LoadPoint {
        let mut p = LoadPoint {
            load,
            offered_ops_s: load,
            achieved_ops_s: achieved,
            ..LoadPoint::default()
        };
        p.all.count = 100;
        p.all.response.avg_ns = avg_ms * 1_000_000;
        p.all.response.p99_ns = 2 * avg_ms * 1_000_000;
        p
    }

    #[test]
    fn a_flat_curve_has_its_response_time_as_the_overall_one() {
        let pts = [
            point(100.0, 100.0, 3),
            point(200.0, 200.0, 3),
            point(400.0, 400.0, 3),
        ];
        assert_eq!(overall_response_ns(&pts), 3_000_000);
    }

    #[test]
    fn the_overall_response_time_is_the_area_over_the_peak_computed_by_hand() {
        // 0..100 at 1 ms (flat), 100..200 trapezoid (1+3)/2, 200..250 trapezoid (3+11)/2.
        let pts = [
            point(100.0, 100.0, 1),
            point(300.0, 250.0, 11),
            point(200.0, 200.0, 3),
        ];
        let area: f64 = 100.0 * 1.0 + 100.0 * 2.0 + 50.0 * 7.0;
        let want = (area / 250.0 * 1e6).round() as u64;
        assert_eq!(overall_response_ns(&pts), want);
    }

    #[test]
    fn the_knee_is_the_last_load_before_the_first_point_that_fails() {
        let mut s = Sweep {
            unit: LoadUnit::OpsPerS,
            arrivals: None,
            warmup_ns: 0,
            saturation_margin: 0.1,
            cap: Some(Cap {
                op: "all".into(),
                percentile: 99.0,
                limit_ns: 10_000_000,
            }),
            points: vec![
                point(100.0, 100.0, 1),
                point(200.0, 195.0, 2),
                point(400.0, 390.0, 6), // p99 12 ms: over the cap
                point(800.0, 500.0, 3), // saturated (and past a failed point anyway)
            ],
            knee: None,
            peak_achieved_ops_s: 0.0,
            overall_response_ns: 0,
            stopped: None,
        };
        s.finish_curve();
        assert_eq!(s.knee, Some(200.0));
        assert_eq!(
            s.points.iter().map(|p| p.met_cap).collect::<Vec<_>>(),
            [Some(true), Some(true), Some(false), Some(true)]
        );
        assert_eq!(
            s.points.iter().map(|p| p.saturated).collect::<Vec<_>>(),
            [false, false, false, true]
        );
        assert_eq!(s.peak_achieved_ops_s, 500.0);
        s.cap = None;
        s.finish_curve();
        assert_eq!(s.knee, Some(400.0), "without a cap only saturation ends it");
    }

    #[test]
    fn each_point_keeps_the_figure_its_cap_was_held_to() {
        // A p99.9 cap on reads: the points' p99.9, never their p99; a point without
        // reads meets it and has no figure.
        let mut s = Sweep {
            unit: LoadUnit::OpsPerS,
            arrivals: None,
            warmup_ns: 0,
            saturation_margin: 0.1,
            cap: Some(Cap {
                op: "read".into(),
                percentile: 99.9,
                limit_ns: 10_000_000,
            }),
            points: vec![point(100.0, 100.0, 1), point(200.0, 200.0, 1)],
            knee: None,
            peak_achieved_ops_s: 0.0,
            overall_response_ns: 0,
            stopped: None,
        };
        let mut reads = s.points[0].all.clone();
        reads.response.p99_ns = 4_000_000;
        reads.response.p999_ns = 12_000_000;
        s.points[0].ops.insert("read".into(), reads);
        s.finish_curve();
        assert_eq!(
            s.points
                .iter()
                .map(|p| (p.cap_ns, p.met_cap))
                .collect::<Vec<_>>(),
            [(Some(12_000_000), Some(false)), (None, Some(true))]
        );
        s.cap = None;
        s.finish_curve();
        assert!(s.points.iter().all(|p| p.cap_ns.is_none()));
    }

    #[test]
    fn caps_parse_and_refuse_what_they_cannot_mean() {
        let d = |t: &str| -> Result<u64, String> {
            t.strip_suffix("ms")
                .and_then(|n| n.parse::<u64>().ok())
                .map(|n| n * 1_000_000)
                .ok_or_else(|| format!("bad {t}"))
        };
        let c = Cap::parse("read:p99<=50ms", d).unwrap();
        assert_eq!(
            (c.op.as_str(), c.percentile, c.limit_ns),
            ("read", 99.0, 50_000_000)
        );
        assert_eq!(Cap::parse("all:avg<=5ms", d).unwrap().percentile, -1.0);
        for bad in [
            "read",
            "read:p99",
            "bogus:p99<=1ms",
            "read:p0<=1ms",
            "read:q9<=1ms",
            "read:p99<=1",
        ] {
            assert!(Cap::parse(bad, d).is_err(), "{bad}");
        }
    }

    #[test]
    fn response_counts_from_the_schedule_and_service_from_the_issue() {
        // One server, 1 ms per op, arrivals every 0.5 ms: op n waits n x 0.5 ms.
        let mut b = PointBuilder::new(0, None);
        let mut free = 0u64;
        for n in 0..10u64 {
            let sched = n * 500_000;
            let issued = sched.max(free);
            let done = issued + 1_000_000;
            free = done;
            b.op(OpKind::Read, 0, sched, issued, done, 4096);
        }
        let p = b.finish("w".into(), 2000.0, Some(5_000_000));
        assert_eq!(p.all.count, 10);
        assert_eq!(p.all.service.min_ns, 1_000_000);
        assert_eq!(p.all.service.max_ns, 1_000_000);
        assert_eq!(p.all.response.min_ns, 1_000_000);
        assert_eq!(p.all.response.max_ns, 1_000_000 + 9 * 500_000);
        assert_eq!(p.lag.max_ns, 9 * 500_000);
        assert_eq!(p.offered_ops_s, 2000.0);
        // The last op completes at 10 ms: 10 ops over 10 ms.
        assert!(
            (p.achieved_ops_s - 1000.0).abs() < 1e-6,
            "{}",
            p.achieved_ops_s
        );
        assert!((p.throughput_mb_s - 4.096).abs() < 1e-9);
    }

    #[test]
    fn warm_up_ops_are_run_but_not_counted_and_users_are_told_apart() {
        let mut b = PointBuilder::new(1_000_000, Some(2));
        b.op(OpKind::Open, 0, 0, 0, 10, 0);
        b.op(OpKind::Read, 0, 1_000_000, 1_000_000, 1_000_100, 1);
        b.op(OpKind::Read, 1, 1_000_000, 1_000_000, 1_000_300, -2);
        b.op(OpKind::Read, 2, 1_000_000, 1_000_000, 1_000_900, 1);
        let p = b.finish("w".into(), 2.0, Some(2_000_000));
        assert_eq!((p.warmup_ops, p.all.count, p.all.errors), (1, 3, 1));
        assert_eq!(p.ops["read"].errors, 1);
        let u = p.users.unwrap();
        // User 0 (streams 0, 1): mean 200 ns; user 1 (stream 2): 900 ns.
        assert_eq!(
            (u.users, u.min_avg_response_ns, u.max_avg_response_ns),
            (2, 200, 900)
        );
    }
}
