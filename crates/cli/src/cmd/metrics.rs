//! A sweep's figures as OpenMetrics (Prometheus) text, served over HTTP while it runs
//! (`naslab sweep --metrics 127.0.0.1:9464`), so a lab's Prometheus and Grafana can
//! watch a long sweep: the point running and its load, and each finished point's
//! offered and achieved rate, throughput, op counts, errors and response and service
//! time quantiles per op type, the same figures run.json gets.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use naslab_results::sweep::{LoadPoint, PointOps};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

type Labels = Vec<(String, String)>;
type FloatGauge = Gauge<f64, AtomicU64>;

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

    /// A point has finished with these figures.
    pub fn point_done(&self, p: &LoadPoint) {
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
        m.point_done(&p);
        let t = m.text();
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
