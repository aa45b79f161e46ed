//! A sweep's figures as OpenMetrics (Prometheus) text, served over HTTP while it runs
//! (`naslab sweep --metrics 127.0.0.1:9464`), so a lab's Prometheus and Grafana can
//! watch a long sweep: the point running and its load, and each finished point's
//! offered and achieved rate, throughput, op counts, errors and response and service
//! time quantiles per op type, the same figures run.json gets, and its response and
//! service times per op type as histograms (buckets of 1, 2 and 5 x 10^k s).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use naslab_results::sweep::{LATENCY_BUCKETS_NS, LoadPoint, PointBuckets, PointOps};
use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

/// A histogram whose buckets were counted elsewhere (from a point's op records), set
/// whole when the point ends: sum and count in seconds and ops, and each bucket's own
/// ops (not cumulative) by its upper bound in seconds, +Inf last.
#[derive(Debug, Clone, Default)]
struct CountedHistogram(Arc<Mutex<Counted>>);

/// Sum (s), count and each bucket's own ops by its upper bound (s).
type Counted = (f64, u64, Vec<(f64, u64)>);

impl CountedHistogram {
    fn set(&self, b: &PointBuckets) {
        let mut buckets = Vec::with_capacity(b.at_most.len() + 1);
        let mut below = 0;
        for (&bound, &at_most) in LATENCY_BUCKETS_NS.iter().zip(&b.at_most) {
            buckets.push((bound as f64 / 1e9, at_most.saturating_sub(below)));
            below = below.max(at_most);
        }
        buckets.push((f64::INFINITY, b.count.saturating_sub(below)));
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *g = (b.sum_ns as f64 / 1e9, b.count, buckets);
    }
}

impl TypedMetric for CountedHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for CountedHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        encoder.encode_histogram::<NoLabelSet>(g.0, g.1, &g.2, None)
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

/// The metrics a sweep updates, and the registry the server encodes.
#[derive(Clone)]
pub struct SweepMetrics {
    registry: Arc<Registry>,
    point: Gauge,
    load: FloatGauge,
    points_done: Gauge,
    rate: Family<Labels, FloatGauge>,
    ops: Family<Labels, Gauge>,
    errors: Family<Labels, Gauge>,
    latency: Family<Labels, FloatGauge>,
    histogram: Family<Labels, CountedHistogram>,
}

impl SweepMetrics {
    fn new() -> SweepMetrics {
        let mut r = Registry::with_prefix("naslab_sweep");
        let m = SweepMetrics {
            registry: Arc::new(Registry::default()),
            point: Gauge::default(),
            load: FloatGauge::default(),
            points_done: Gauge::default(),
            rate: Family::default(),
            ops: Family::default(),
            errors: Family::default(),
            latency: Family::default(),
            histogram: Family::default(),
        };
        r.register(
            "point",
            "The load point running (1 for the first; 0 before it)",
            m.point.clone(),
        );
        r.register(
            "load",
            "The running point's load, in the sweep's unit",
            m.load.clone(),
        );
        r.register("points_done", "Load points finished", m.points_done.clone());
        r.register(
            "rate",
            "A finished point's offered and achieved ops per second and bytes per second (kind)",
            m.rate.clone(),
        );
        r.register(
            "ops",
            "A finished point's ops in its measured window, by op type (op=all for every op)",
            m.ops.clone(),
        );
        r.register(
            "errors",
            "A finished point's failed ops, by op type",
            m.errors.clone(),
        );
        r.register(
            "latency_seconds",
            "A finished point's response time (from the scheduled start) or service time (from the issue), by op type and quantile (avg for the mean)",
            m.latency.clone(),
        );
        r.register(
            "op_latency_seconds",
            "A finished point's response or service times (latency) by op type, as a histogram",
            m.histogram.clone(),
        );
        SweepMetrics {
            registry: Arc::new(r),
            ..m
        }
    }

    /// Point `index` (from 1) at `load` has started.
    pub fn point_started(&self, index: usize, load: f64) {
        self.point.set(index as i64);
        self.load.set(load);
    }

    /// A point has finished with these figures and latency histograms.
    pub fn point_done(&self, p: &LoadPoint, buckets: &[PointBuckets]) {
        for b in buckets {
            let labels = vec![
                ("point".to_string(), p.workload.clone()),
                ("op".to_string(), b.op.clone()),
                ("latency".to_string(), b.latency.to_string()),
            ];
            self.histogram.get_or_create(&labels).set(b);
        }
        self.points_done.inc();
        let point = || ("point".to_string(), p.workload.clone());
        for (kind, v) in [
            ("offered_ops", p.offered_ops_s),
            ("achieved_ops", p.achieved_ops_s),
            ("bytes", p.throughput_mb_s * 1e6),
        ] {
            self.rate
                .get_or_create(&vec![point(), ("kind".into(), kind.into())])
                .set(v);
        }
        let by_op =
            std::iter::once(("all", &p.all)).chain(p.ops.iter().map(|(k, v)| (k.as_str(), v)));
        for (op, stats) in by_op {
            let labels = vec![point(), ("op".to_string(), op.to_string())];
            self.ops.get_or_create(&labels).set(stats.count as i64);
            self.errors.get_or_create(&labels).set(stats.errors as i64);
            self.latencies(&labels, stats);
        }
    }

    fn latencies(&self, labels: &Labels, stats: &PointOps) {
        for (which, s) in [("response", &stats.response), ("service", &stats.service)] {
            for (q, ns) in [
                ("avg", s.avg_ns),
                ("0.5", s.p50_ns),
                ("0.9", s.p90_ns),
                ("0.99", s.p99_ns),
                ("0.999", s.p999_ns),
                ("1", s.max_ns),
            ] {
                let mut l = labels.clone();
                l.push(("latency".into(), which.into()));
                l.push(("quantile".into(), q.into()));
                self.latency.get_or_create(&l).set(ns as f64 / 1e9);
            }
        }
    }

    /// The OpenMetrics text of everything so far.
    pub fn text(&self) -> String {
        let mut o = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut o, &self.registry);
        o
    }
}

/// Starts serving the sweep's metrics at `addr` (port 0 picks a free one) on a thread
/// of its own, for as long as naslab runs; prints where.
pub fn serve(addr: SocketAddr) -> anyhow::Result<SweepMetrics> {
    let listener = TcpListener::bind(addr).with_context(|| {
        format!("--metrics {addr}: cannot listen there; give a free address and port, e.g. 127.0.0.1:9464")
    })?;
    let bound = listener.local_addr()?;
    let metrics = SweepMetrics::new();
    let served = metrics.clone();
    std::thread::Builder::new()
        .name("metrics".into())
        .spawn(move || {
            for conn in listener.incoming().flatten() {
                // One client's trouble (a slow or broken scraper) ends its connection only.
                let _ = answer(conn, &served);
            }
        })
        .context("cannot start the metrics thread")?;
    eprintln!("metrics: http://{bound}/metrics");
    Ok(metrics)
}

/// Answers one HTTP request: the metrics for GET /metrics, 404 otherwise.
fn answer(mut conn: TcpStream, metrics: &SweepMetrics) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    conn.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut req = Vec::new();
    let mut buf = [0u8; 1024];
    // Up to the end of the headers, at most 16 KiB.
    while !req.windows(4).any(|w| w == b"\r\n\r\n") && req.len() < 16 << 10 {
        let n = conn.read(&mut buf)?;
        if n == 0 {
            break;
        }
        req.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&req);
    let path = line.split_whitespace().nth(1).unwrap_or("");
    let (status, kind, body) = if line.starts_with("GET ") && (path == "/metrics" || path == "/") {
        (
            "200 OK",
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            metrics.text(),
        )
    } else {
        (
            "404 Not Found",
            "text/plain; charset=utf-8",
            "GET /metrics\n".to_string(),
        )
    };
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finished_point_is_exposed_with_its_figures() {
        let m = SweepMetrics::new();
        m.point_started(2, 4000.0);
        let mut p = LoadPoint {
            workload: "rate@4000".into(),
            achieved_ops_s: 3990.5,
            ..LoadPoint::default()
        };
        p.all.count = 39_905;
        p.all.response.p99_ns = 12_500_000;
        p.ops.insert("read".into(), p.all.clone());
        // 3 ops of 15 µs, 120 µs and 3 ms: one in (10, 20] µs, one in (100, 200] µs, one
        // in (2, 5] ms; the sum is exact.
        let mut at_most = vec![0u64; LATENCY_BUCKETS_NS.len()];
        for (i, &b) in LATENCY_BUCKETS_NS.iter().enumerate() {
            at_most[i] = [15_000u64, 120_000, 3_000_000]
                .iter()
                .filter(|&&v| v <= b)
                .count() as u64;
        }
        let hist = PointBuckets {
            op: "read".into(),
            latency: "response",
            count: 3,
            sum_ns: 3_135_000,
            at_most,
        };
        m.point_done(&p, &[hist]);
        let t = m.text();
        // Every bucket, cumulative, by its bound in seconds.
        let served: Vec<(f64, u64)> = t
            .lines()
            .filter_map(|l| l.strip_prefix("naslab_sweep_op_latency_seconds_bucket{le=\""))
            .filter_map(|l| {
                let (le, rest) = l.split_once('"')?;
                let le = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().ok()?
                };
                Some((le, rest.rsplit_once(' ')?.1.parse().ok()?))
            })
            .collect();
        let mut want: Vec<(f64, u64)> = LATENCY_BUCKETS_NS
            .iter()
            .map(|&b| {
                let n = [15_000u64, 120_000, 3_000_000]
                    .iter()
                    .filter(|&&v| v <= b)
                    .count();
                (b as f64 / 1e9, n as u64)
            })
            .collect();
        want.push((f64::INFINITY, 3));
        assert_eq!(served, want, "{t}");
        assert_eq!(want[0], (1e-5, 0));
        assert_eq!(want[1], (2e-5, 1));
        assert_eq!(want[8], (0.005, 3));
        assert!(
            t.contains(r#"naslab_sweep_op_latency_seconds_sum{point="rate@4000",op="read",latency="response"} 0.003135"#),
            "{t}"
        );
        assert!(
            t.contains(r#"naslab_sweep_op_latency_seconds_count{point="rate@4000",op="read",latency="response"} 3"#),
            "{t}"
        );
        assert!(
            t.contains("# TYPE naslab_sweep_op_latency_seconds histogram"),
            "{t}"
        );
        assert!(t.contains("naslab_sweep_point 2"), "{t}");
        assert!(t.contains("naslab_sweep_load 4000.0"), "{t}");
        assert!(
            t.contains(r#"naslab_sweep_ops{point="rate@4000",op="read"} 39905"#),
            "{t}"
        );
        assert!(
            t.contains(r#"naslab_sweep_latency_seconds{point="rate@4000",op="all",latency="response",quantile="0.99"} 0.0125"#),
            "{t}"
        );
        assert!(
            t.contains(r#"naslab_sweep_rate{point="rate@4000",kind="achieved_ops"} 3990.5"#),
            "{t}"
        );
        assert!(t.ends_with("# EOF\n"), "{t}");
    }
}
