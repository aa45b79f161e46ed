//! Open-loop load checked against queueing theory, exactly: the replay runs on a
//! scripted clock against a server whose every op takes a fixed service time on that
//! clock, so a run is a discrete-event simulation of one queue (time moves only by the
//! server's work and the schedule's waits) and the figures the sweep computes from the
//! measurements can be held against the M/D/1 formulas, with no machine noise.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use naslab_engine::backend::BackendOptions;
use naslab_engine::plan::{FileTable, compile, records_from_trace};
use naslab_engine::{
    Backend, Caps, Handle, OpError, OpenHow, Pacing, Progress, ReplayOptions, ScriptedClock,
    Target, replay,
};
use naslab_results::sweep::{LoadPoint, PointBuilder};
use naslab_trace::{Measured, OpKind, Trace};
use naslab_workload::synthetic::openloop::{Arrivals, Mix, RateLoad, rate};

/// A server of fixed service time on a scripted clock; op `stall_at` takes
/// `stall_ns` more.
#[derive(Clone)]
struct Server {
    clock: ScriptedClock,
    service_ns: u64,
    stall_at: Option<(u64, u64)>,
}

struct Conn {
    s: Server,
    served: u64,
}

impl Conn {
    fn serve(&mut self) {
        let mut ns = self.s.service_ns;
        if let Some((at, extra)) = self.s.stall_at
            && self.served == at
        {
            ns += extra;
        }
        self.served += 1;
        self.s.clock.advance(ns);
    }
}

const CAPS: Caps = Caps {
    ops: [true; OpKind::ALL.len()],
    direct_io: false,
    drop_cache: None,
    moves_data: false,
    max_queue_depth: 1,
};

impl Target for Server {
    fn backend_name(&self) -> &'static str {
        "queue"
    }
    fn caps(&self) -> Caps {
        CAPS
    }
    fn connect(
        &self,
        _d: &str,
        _f: Arc<FileTable>,
        _o: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        Ok(Box::new(Conn {
            s: self.clone(),
            served: 0,
        }))
    }
}

impl Backend for Conn {
    fn caps(&self) -> Caps {
        CAPS
    }
    fn open(&mut self, file: u32, _how: OpenHow) -> Result<Handle, OpError> {
        self.serve();
        Ok(u64::from(file) + 10)
    }
    fn close(&mut self, _h: Handle) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn read(&mut self, _h: Handle, _o: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        self.serve();
        Ok(buf.len())
    }
    fn write(&mut self, _h: Handle, _o: u64, buf: &[u8]) -> Result<usize, OpError> {
        self.serve();
        Ok(buf.len())
    }
    fn fsync(&mut self, _h: Handle) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn truncate(&mut self, _h: Handle, _l: u64) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn fallocate(&mut self, _h: Handle, _o: u64, _l: u64) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn stat(&mut self, _f: u32) -> Result<u64, OpError> {
        self.serve();
        Ok(0)
    }
    fn mkdir(&mut self, _f: u32) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn readdir(&mut self, _f: u32) -> Result<u64, OpError> {
        self.serve();
        Ok(0)
    }
    fn unlink(&mut self, _f: u32) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn rename(&mut self, _a: u32, _b: u32) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
}

/// One connection's offered load: `ops_per_s` for `secs` seconds.
fn load(ops_per_s: f64, arrivals: Arrivals, secs: u64) -> Trace {
    rate(&RateLoad {
        name: "q".into(),
        ops_per_s,
        connections: 1,
        arrivals,
        duration_us: secs * 1_000_000,
        mix: Mix {
            block: 4096,
            read_pct: 100,
            file_bytes: 1 << 20,
        },
        seed: 11,
        phase: 0.5,
    })
}

/// Replays `trace` at its schedule against `server`: each op's kind and measurement.
fn run(trace: &Trace, server: Server) -> Vec<(OpKind, Measured)> {
    let spool = tempfile::tempdir().unwrap();
    let plan = compile(Path::new("q"), records_from_trace(trace), spool.path()).unwrap();
    let clock = server.clock.clone();
    let options = ReplayOptions {
        pacing: Pacing::Original,
        records: true,
        ..ReplayOptions::default()
    };
    let out = replay(
        &plan,
        &server,
        "q",
        options,
        spool.path(),
        &Progress::default(),
        move || clock,
    )
    .expect("the replay runs");
    let mut r = out.streams[0].measured.as_ref().unwrap().reader().unwrap();
    let mut ms = Vec::new();
    while let Some(m) = r.next_measured().unwrap() {
        ms.push(m);
    }
    assert_eq!(ms.len(), trace.ops.len());
    trace.ops.iter().map(|o| o.kind).zip(ms).collect()
}

/// The point the sweep makes of the measurements, reads only, after `warmup_ns`.
fn point(ms: &[(OpKind, Measured)], warmup_ns: u64, end_ns: u64) -> LoadPoint {
    let mut b = PointBuilder::new(warmup_ns, None);
    for (k, m) in ms.iter().filter(|(k, _)| *k == OpKind::Read) {
        b.op(*k, 0, m.sched_ns, m.issued_ns, m.done_ns, m.result);
    }
    b.finish("q".into(), 0.0, Some(end_ns))
}

fn server(service_ns: u64) -> Server {
    Server {
        clock: ScriptedClock::new(),
        service_ns,
        stall_at: None,
    }
}

#[test]
fn each_op_is_issued_when_due_or_when_the_server_frees_up() {
    let ms = run(&load(1500.0, Arrivals::Poisson, 5), server(500_000));
    for w in ms.windows(2) {
        let (prev, m) = (&w[0].1, &w[1].1);
        assert_eq!(
            m.issued_ns,
            m.sched_ns.max(prev.done_ns),
            "Lindley's recursion"
        );
        assert_eq!(m.done_ns - m.issued_ns, 500_000);
    }
}

#[test]
fn poisson_arrivals_wait_as_the_m_d_1_queue_says() {
    // M/D/1: service D = 500 µs (μ = 2000/s), Poisson arrivals at λ; the mean wait in the
    // queue is Wq = ρ / (2 μ (1 - ρ)) with ρ = λ/μ, and the mean response Wq + D.
    for (lambda, tolerance) in [(600.0, 0.05), (1000.0, 0.06), (1600.0, 0.12)] {
        let ms = run(&load(lambda, Arrivals::Poisson, 120), server(500_000));
        let p = point(&ms, 5_000_000_000, 120_000_000_000);
        let mu = 2000.0;
        let rho = lambda / mu;
        let wq = rho / (2.0 * mu * (1.0 - rho));
        let waited = p.lag.avg_ns as f64 / 1e9;
        eprintln!(
            "M/D/1 ρ {rho}: mean wait {:.1} µs measured, {:.1} µs in theory ({} ops)",
            waited * 1e6,
            wq * 1e6,
            p.all.count
        );
        assert!(
            (waited - wq).abs() <= tolerance * wq,
            "ρ {rho}: mean wait {:.1} µs, M/D/1 says {:.1} µs",
            waited * 1e6,
            wq * 1e6
        );
        let response = p.all.response.avg_ns as f64 / 1e9;
        assert!((response - (wq + 0.0005)).abs() <= tolerance * wq + 1e-6);
        // Service times are the server's own, however long the queue.
        assert_eq!(
            (p.all.service.min_ns, p.all.service.max_ns),
            (500_000, 500_000)
        );
        assert!(!p.saturated || lambda > mu);
    }
}

#[test]
fn uniform_arrivals_below_saturation_never_wait() {
    let ms = run(&load(1900.0, Arrivals::Uniform, 10), server(500_000));
    // After the open's 500 µs, which the first reads queue behind: each later op gains
    // 26 µs on it (526 µs apart, 500 µs each), so the queue is gone within 10 ops.
    let p = point(&ms, 10_000_000, 10_000_000_000);
    assert_eq!(p.lag.max_ns, 0, "no op waited");
    assert_eq!(p.all.response.max_ns, 500_000);
}

#[test]
fn above_saturation_the_achieved_rate_is_the_service_rate() {
    let ms = run(&load(4000.0, Arrivals::Poisson, 10), server(500_000));
    let p = point(&ms, 1_000_000_000, 10_000_000_000);
    assert!(
        (p.offered_ops_s - 4000.0).abs() < 4000.0 * 0.03,
        "{}",
        p.offered_ops_s
    );
    assert!(
        (p.achieved_ops_s - 2000.0).abs() < 2000.0 * 0.01,
        "{}",
        p.achieved_ops_s
    );
    assert!(naslab_results::sweep::saturated(&p, 0.1));
    // The queue grows for as long as the load lasts: the last op waits about the
    // backlog of 9 s at 2000 ops/s too many.
    assert!(
        p.all.response.max_ns > 8_000_000_000,
        "{}",
        p.all.response.max_ns
    );
}

#[test]
fn a_stall_is_in_the_response_of_every_op_behind_it_and_one_service_time() {
    // 1000 ops/s evenly to a server of 100 µs whose 3000th op takes 1 s more.
    let mut s = server(100_000);
    s.stall_at = Some((3000, 1_000_000_000));
    let ms = run(&load(1000.0, Arrivals::Uniform, 8), s);
    let stalled: Vec<&Measured> = ms
        .iter()
        .map(|(_, m)| m)
        .filter(|m| m.done_ns - m.issued_ns > 1_000_000_000)
        .collect();
    assert_eq!(stalled.len(), 1);
    let st = stalled[0];
    let behind: Vec<&Measured> = ms
        .iter()
        .map(|(_, m)| m)
        .filter(|m| m.sched_ns > st.sched_ns && m.sched_ns < st.done_ns)
        .collect();
    // 1000 ops/s for the 1.0001 s the server was away.
    assert_eq!(behind.len(), 1000, "{st:?}");
    for m in &behind {
        assert!(m.done_ns - m.sched_ns >= st.done_ns - m.sched_ns);
        assert_eq!(m.done_ns - m.issued_ns, 100_000);
    }
    let p = point(&ms, 0, 8_000_000_000);
    // A closed loop would have seen one slow op in 8000. Open, the 1000 ops behind the
    // stall wait, and so do those that arrive while their backlog drains: 1000 ops of
    // 100 µs, served at 10,000/s against 1000/s arriving, take 1000 x 0.1 ms / (1 - 0.1)
    // = 111 ms, in which 111 more arrive.
    let slow = ms
        .iter()
        .filter(|(k, m)| *k == OpKind::Read && m.done_ns - m.sched_ns > 1_000_000)
        .count();
    assert!((1108..=1113).contains(&slow), "{slow}");
    assert!(
        p.all.response.p99_ns > 800_000_000,
        "{}",
        p.all.response.p99_ns
    );
    // (Within the histogram's precision of 0.1 %.)
    assert!(
        p.all.service.p99_ns.abs_diff(100_000) <= 100,
        "{}",
        p.all.service.p99_ns
    );
}
