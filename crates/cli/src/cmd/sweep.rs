//! `naslab sweep`: a capacity sweep. Load points run one after another in one run (each
//! point one workload of it, with its own records and report), at loads given as a list
//! or stepped up until a stop rule fires; each point's load is open-loop (its ops arrive
//! on a schedule fixed before it runs, `--pace original`), and its figures are computed
//! from its op records as soon as it ends, so the next point can be chosen and the
//! terminal shows the curve as it grows. See docs/capacity.md.

use std::sync::Arc;

use crate::multi::{Coordinator, PointPart};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use naslab_engine::{Pacing, Plan, PlanSource, compile, records_from_trace};
use naslab_results::sweep::{Cap, LoadPoint, LoadUnit, PointBuilder, PointClients, Sweep};
use naslab_results::{CacheMode, RunResult};
use naslab_trace::{Record, Trace, open_trace};
use naslab_workload::GenParams;
use naslab_workload::synthetic::fileserver::FileServer;
use naslab_workload::synthetic::ingest::Ingest;
use naslab_workload::synthetic::openloop::{self, Arrivals, Mix, RateLoad};
use serde::{Deserialize, Serialize};

use super::metrics::SweepMetrics;
use super::run::{RunSource, View, context, execute_from};
use super::sources::{Source, build, gen_params, resolve, trace_dir};
use crate::args::SweepArgs;

/// The most points an open-ended sweep (`--start`/`--step` without `--until`) runs
/// when no stop rule fires first.
pub const MAX_POINTS: usize = 64;

/// What each point runs.
enum Load {
    /// `users` copies of a workload.
    Users {
        base: Trace,
        stagger_us: u64,
        seed: u64,
    },
    /// An offered rate of the mix.
    Rate {
        mix: Mix,
        connections: u32,
        arrivals: Arrivals,
        duration_us: u64,
        seed: u64,
    },
}

/// The loads the points take, in order.
enum Loads {
    List(std::vec::IntoIter<f64>),
    Stepped {
        next: f64,
        step: Step,
        until: Option<f64>,
        made: usize,
    },
}

/// How a stepped sweep goes from one load to the next.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Add(f64),
    Times(f64),
}

impl Loads {
    fn next(&mut self) -> Option<f64> {
        match self {
            Loads::List(l) => l.next(),
            Loads::Stepped {
                next,
                step,
                until,
                made,
            } => {
                if until.is_some_and(|u| *next > u * (1.0 + 1e-9)) || *made >= MAX_POINTS {
                    return None;
                }
                let load = *next;
                *next = match *step {
                    Step::Add(d) => load + d,
                    Step::Times(f) => load * f,
                };
                *made += 1;
                Some(load)
            }
        }
    }
}

/// Makes each point's plan after the last point's figures, and keeps the sweep.
struct SweepSource {
    load: Load,
    loads: Loads,
    unit: LoadUnit,
    run_dir: PathBuf,
    keep_going: bool,
    sweep: Sweep,
    /// The point running or just run: its plan, load, schedule end and streams per user.
    current: Option<Current>,
    /// Where the figures are served while the sweep runs (`--metrics`; rank 0's alone
    /// in a job).
    metrics: Option<SweepMetrics>,
    /// Who decides between points: the run itself, or a job's rank 0 from every
    /// client's part of the point.
    coord: Arc<dyn Coordinator>,
    /// This client's rank and the job's clients (0 and 1 for a lone run).
    rank: u32,
    clients: u32,
}

struct Current {
    plan: Plan,
    load: f64,
    window_end_ns: Option<u64>,
    streams_per_user: Option<u32>,
    /// Whether the point's figures were made (and the verdict on it given).
    concluded: bool,
}

/// What a client gives rank 0 of the point that ended: its ops folded into a builder,
/// or why it has none.
#[derive(Serialize, Deserialize)]
enum PointMessage {
    Figures(Box<PointBuilder>),
    Missing(String),
}

/// Rank 0's verdict on a point, which every client follows: why the sweep stops after
/// it, if it does.
#[derive(Serialize, Deserialize)]
struct Verdict {
    stop: Option<String>,
}

/// The users of `users` that client `rank` of `clients` runs: as even a share as can
/// be, the remainder one each to the lowest ranks.
pub fn users_share(users: u32, rank: u32, clients: u32) -> std::ops::Range<u32> {
    let clients = clients.max(1);
    let (each, extra) = (users / clients, users % clients);
    let first = rank * each + rank.min(extra);
    first..first + each + u32::from(rank < extra)
}

impl SweepSource {
    /// The trace of the point at `load`.
    fn trace(&self, load: f64) -> Trace {
        match &self.load {
            Load::Users {
                base,
                stagger_us,
                seed,
            } => {
                let n = load as u32;
                let name = format!("{}@{n}users", base.header.workload);
                let share = users_share(n, self.rank, self.clients);
                openloop::users_of(base, &name, share, *stagger_us, *seed)
            }
            Load::Rate {
                mix,
                connections,
                arrivals,
                duration_us,
                seed,
            } => openloop::rate(&RateLoad {
                // The point's name is the whole job's; each client offers its share.
                name: format!("rate@{}", load_text(load)),
                ops_per_s: load / f64::from(self.clients),
                connections: *connections,
                arrivals: *arrivals,
                duration_us: *duration_us,
                mix: *mix,
                // Each client's Poisson arrivals are its own draws; its uniform ones fall
                // between the other clients'.
                seed: seed.wrapping_add(u64::from(self.rank)),
                phase: (f64::from(self.rank) + 0.5) / f64::from(self.clients),
            }),
        }
    }

    /// This client's part of the point that just ran: its ops from its records.
    fn own_part(&self, run: &RunResult, name: &str) -> PointMessage {
        let Some(cur) = &self.current else {
            return PointMessage::Missing(format!("{name} did not run"));
        };
        let Some(w) = run.workloads.iter().find(|w| w.name == name) else {
            return PointMessage::Missing(format!("{name} did not run"));
        };
        let Some(it) = w.iterations.last() else {
            return PointMessage::Missing(format!("{name} did not run"));
        };
        let Some(records) = &it.records else {
            return PointMessage::Missing(format!("{name} kept no op records"));
        };
        let mut builder = PointBuilder::new(self.sweep.warmup_ns, cur.streams_per_user);
        match builder.read_records(&self.run_dir.join(records)) {
            Ok(()) => PointMessage::Figures(Box::new(builder)),
            Err(e) => PointMessage::Missing(format!("cannot read {name}'s op records: {e}")),
        }
    }

    /// Folds the point that just ran into the sweep, once, from every client's part of
    /// it (a lone run's own); prints its line. Returns why the sweep must stop after it,
    /// if it must: decided once, by rank 0 in a job, and followed by every client.
    fn conclude_point(&mut self, run: &RunResult) -> Option<String> {
        let cur = self.current.as_mut()?;
        if std::mem::replace(&mut cur.concluded, true) {
            return None;
        }
        let name = cur.plan.header.workload.clone();
        let aborted = run
            .workloads
            .iter()
            .find(|w| w.name == name)
            .and_then(|w| w.iterations.last())
            .and_then(|it| it.aborted.clone());
        let mine = serde_json::to_vec(&self.own_part(run, &name))
            .unwrap_or_else(|e| format!("{e}").into_bytes());
        let coord = self.coord.clone();
        let verdict = coord.between_points(mine, &mut |parts| {
            let verdict = Verdict {
                stop: self.decide(&name, parts, aborted.as_deref()),
            };
            serde_json::to_vec(&verdict).unwrap_or_default()
        });
        match serde_json::from_slice::<Verdict>(&verdict) {
            Ok(v) => v.stop,
            Err(e) => Some(format!("the verdict on {name} could not be read: {e}")),
        }
    }

    /// On rank 0 (or a lone run): the point of every client's part merged (histograms
    /// merged, never averaged), judged, printed and kept; why the sweep stops after it.
    fn decide(
        &mut self,
        name: &str,
        parts: Vec<PointPart>,
        aborted: Option<&str>,
    ) -> Option<String> {
        let job = self.coord.is_job();
        let (cur_load, window_end_ns) = match &self.current {
            Some(c) => (c.load, c.window_end_ns),
            None => return Some(format!("{name} did not run")),
        };
        let mut merged: Option<PointBuilder> = None;
        let mut ops = Vec::new();
        let mut lates = Vec::new();
        let mut uncertainty_ns = 0;
        for p in parts {
            let who = |why: String| {
                if job {
                    format!("client {}: {why}", p.rank)
                } else {
                    why
                }
            };
            match serde_json::from_slice::<PointMessage>(&p.part) {
                Ok(PointMessage::Figures(b)) => {
                    ops.push(b.ops());
                    match &mut merged {
                        Some(m) => m.merge(*b),
                        None => merged = Some(*b),
                    }
                }
                Ok(PointMessage::Missing(why)) => return Some(who(why)),
                Err(e) => return Some(who(format!("its figures of {name} cannot be read: {e}"))),
            }
            lates.extend(p.start_late_ns);
            uncertainty_ns = uncertainty_ns.max(p.clock_uncertainty_ns);
        }
        let builder = merged?;
        let buckets = self.metrics.as_ref().map(|_| builder.buckets());
        let mut point = builder.finish(name.to_string(), cur_load, window_end_ns);
        self.sweep.judge(&mut point);
        if job {
            let lo = lates.iter().copied().min().unwrap_or(0);
            let hi = lates.iter().copied().max().unwrap_or(0);
            point.clients = Some(PointClients {
                ops,
                start_skew_ns: hi - lo,
                clock_uncertainty_ns: uncertainty_ns,
            });
        }
        if let Some(m) = &self.metrics {
            m.point_done(&point, buckets.as_deref().unwrap_or_default());
        }
        eprintln!("{}", point_line(&point, self.unit, self.sweep.cap.as_ref()));
        let why = stop_reason(&point, self.sweep.cap.as_ref(), aborted);
        self.sweep.points.push(point);
        why
    }
}

impl PlanSource for SweepSource {
    fn next_plan(&mut self, run: &RunResult) -> Option<Result<&Plan, String>> {
        if let Some(why) = self.conclude_point(run)
            && !self.keep_going
        {
            self.sweep.stopped = Some(why);
            return None;
        }
        let load = self.loads.next()?;
        if let Some(m) = &self.metrics {
            m.point_started(self.sweep.points.len() + 1, load);
        }
        let trace = self.trace(load);
        let streams_per_user = match &self.load {
            Load::Users { base, .. } => {
                Some(base.ops.iter().map(|o| o.stream + 1).max().unwrap_or(1))
            }
            Load::Rate { .. } => None,
        };
        let window_end_ns = match &self.load {
            Load::Rate { duration_us, .. } => Some(duration_us * 1000),
            Load::Users { .. } => None,
        };
        let label = trace
            .header
            .generator
            .clone()
            .unwrap_or_else(|| trace.header.workload.clone());
        // The last point's plan (and its spools) goes before the next is made.
        self.current = None;
        let plan = match compile(Path::new(&label), records_from_trace(&trace), &self.run_dir) {
            Ok(p) => p,
            Err(e) => {
                // The other clients are on their way to the point's start: they stop there.
                self.coord.failed_before_point();
                return Some(Err(format!("{e}")));
            }
        };
        let cur = self.current.insert(Current {
            plan,
            load,
            window_end_ns,
            streams_per_user,
            concluded: false,
        });
        Some(Ok(&cur.plan))
    }
}

impl RunSource for SweepSource {
    fn complete(&mut self, run: &mut RunResult) {
        // A run stopped by a signal or a failure ends without asking for the next plan:
        // its last point is folded in here, as far as it ran. Not in a job: a client
        // that failed may have left the job before this, so there is no one to merge
        // the point with; the cut point stays off the curve (its workload, merged from
        // every client's records, is in the results).
        if !self.coord.is_job()
            && let Some(why) = self.conclude_point(run)
        {
            self.sweep.stopped.get_or_insert(why);
        }
        if let Some(why) = &run.aborted {
            self.sweep.stopped.get_or_insert(why.clone());
        }
        self.sweep.finish_curve();
        run.sweep = Some(self.sweep.clone());
    }
}

/// Why a sweep stops after `point`: errors, the cap not met, or saturation.
fn stop_reason(point: &LoadPoint, cap: Option<&Cap>, aborted: Option<&str>) -> Option<String> {
    let name = &point.workload;
    if let Some(why) = aborted {
        return Some(format!("{name} stopped early: {why}"));
    }
    if point.all.errors > 0 {
        return Some(format!("{name}: {} ops failed", point.all.errors));
    }
    if let Some(c) = cap
        && !c.met_by(point)
    {
        let v = c.value_ns(point).unwrap_or(0);
        return Some(format!("{name}: {} is {} over the cap {c}", c.op, ms(v)));
    }
    if point.saturated {
        return Some(format!(
            "{name}: achieved {:.0} ops/s of {:.0} offered (saturated)",
            point.achieved_ops_s, point.offered_ops_s
        ));
    }
    None
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

/// A load as a name and a table print it: whole numbers without a fraction.
fn load_text(load: f64) -> String {
    if load.fract() == 0.0 {
        format!("{load:.0}")
    } else {
        format!("{load}")
    }
}

/// The terminal's line for one point, printed as it ends.
fn point_line(p: &LoadPoint, unit: LoadUnit, cap: Option<&Cap>) -> String {
    let verdict = match (p.met_cap, p.saturated, p.all.errors) {
        (_, _, e) if e > 0 => format!("{e} errors"),
        (Some(false), _, _) => format!("over {}", cap.map(|c| c.to_string()).unwrap_or_default()),
        (_, true, _) => "saturated".to_string(),
        (Some(true), _, _) => "within cap".to_string(),
        _ => String::new(),
    };
    format!(
        "sweep {:>10} {:<5} offered {:>10.1} ops/s achieved {:>10.1} ops/s  response p50 {:>9} p99 {:>9}  service p99 {:>9}  {verdict}",
        load_text(p.load),
        unit.label(),
        p.offered_ops_s,
        p.achieved_ops_s,
        ms(p.all.response.p50_ns),
        ms(p.all.response.p99_ns),
        ms(p.all.service.p99_ns),
    )
}

/// The sweep's table (sweep.txt): one line per point, then the curve's figures.
pub fn sweep_table(run: &RunResult) -> String {
    use std::fmt::Write;
    let Some(s) = &run.sweep else {
        return String::new();
    };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "capacity sweep ({}{}; warm-up {} discarded per point; response from the scheduled start, service from the issue)",
        s.unit.label(),
        s.arrivals
            .as_ref()
            .map(|a| format!(", {a} arrivals"))
            .unwrap_or_default(),
        ms(s.warmup_ns)
    );
    let _ = writeln!(
        o,
        "{:>10} {:>12} {:>12} {:>9} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8}  status",
        s.unit.label(),
        "offered/s",
        "achieved/s",
        "MB/s",
        "resp avg ms",
        "resp p50 ms",
        "resp p99 ms",
        "serv p50 ms",
        "serv p99 ms",
        "errors"
    );
    for p in &s.points {
        let status = match (p.met_cap, p.saturated) {
            (Some(false), _) => "over cap",
            (_, true) => "saturated",
            (Some(true), _) => "within cap",
            _ => "",
        };
        let f = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
        let _ = writeln!(
            o,
            "{:>10} {:>12.1} {:>12.1} {:>9.2} {:>12} {:>12} {:>12} {:>12} {:>12} {:>8}  {status}",
            load_text(p.load),
            p.offered_ops_s,
            p.achieved_ops_s,
            p.throughput_mb_s,
            f(p.all.response.avg_ns),
            f(p.all.response.p50_ns),
            f(p.all.response.p99_ns),
            f(p.all.service.p50_ns),
            f(p.all.service.p99_ns),
            p.all.errors
        );
    }
    if let Some(c) = &s.cap {
        let _ = writeln!(o, "cap: {c}");
    }
    match s.knee {
        Some(k) => {
            let _ = writeln!(o, "knee: {} {}", load_text(k), s.unit.label());
        }
        None => {
            let _ = writeln!(o, "knee: none (the first point already failed)");
        }
    }
    let _ = writeln!(
        o,
        "peak achieved: {:.1} ops/s; overall response time: {}",
        s.peak_achieved_ops_s,
        ms(s.overall_response_ns)
    );
    if let Some(why) = &s.stopped {
        let _ = writeln!(o, "stopped: {why}");
    }
    o
}

/// Reads a trace file whole into memory (a users sweep copies it per user).
fn load_trace(path: &Path) -> anyhow::Result<Trace> {
    let mut trace = Trace::new("");
    for r in open_trace(path)? {
        match r? {
            Record::Header(h) => trace.header = h,
            Record::File(f) => trace.files.push(f),
            Record::Op(op, _) => trace.ops.push(op),
        }
    }
    Ok(trace)
}

/// Parses `read=70,block=4k,file=64m` (each key optional).
fn parse_mix(text: &str) -> anyhow::Result<Mix> {
    let mut mix = Mix {
        block: 4096,
        read_pct: 100,
        file_bytes: 64 << 20,
    };
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').with_context(|| {
            format!("--mix '{part}': write KEY=VALUE, e.g. read=70,block=4k,file=64m")
        })?;
        match k {
            "read" => {
                mix.read_pct = v
                    .parse()
                    .ok()
                    .filter(|p| *p <= 100)
                    .with_context(|| format!("--mix read={v}: give a percentage, 0 to 100"))?
            }
            "block" => {
                mix.block =
                    crate::values::size(v).map_err(|e| anyhow::anyhow!("--mix block={v}: {e}"))?
            }
            "file" => {
                mix.file_bytes =
                    crate::values::size(v).map_err(|e| anyhow::anyhow!("--mix file={v}: {e}"))?
            }
            _ => bail!("--mix: unknown key '{k}'; use read, block and file"),
        }
    }
    if mix.block == 0 || mix.file_bytes < mix.block {
        bail!("--mix: the block must be at least 1 byte and the file at least one block");
    }
    Ok(mix)
}

/// Parses `--step`: `N` adds N, `xF` multiplies by F.
fn parse_step(text: &str) -> anyhow::Result<Step> {
    let bad = || format!("--step '{text}': give an amount to add (e.g. 2) or a factor (e.g. x2)");
    let step = match text.strip_prefix('x') {
        Some(f) => Step::Times(
            f.parse()
                .ok()
                .filter(|f: &f64| *f > 1.0)
                .with_context(bad)?,
        ),
        None => Step::Add(
            text.parse()
                .ok()
                .filter(|d: &f64| *d > 0.0)
                .with_context(bad)?,
        ),
    };
    Ok(step)
}

/// The loads the arguments name, checked for the unit.
fn loads(args: &SweepArgs, unit: LoadUnit, clients: u32) -> anyhow::Result<Loads> {
    let list: Vec<f64> = match unit {
        LoadUnit::Users => args.users.iter().map(|&u| f64::from(u)).collect(),
        LoadUnit::OpsPerS => args.rate.clone(),
    };
    let stepped = args.start.is_some() || args.step.is_some() || args.until.is_some();
    if !list.is_empty() && stepped {
        bail!("give the loads as a list or as --start/--step/--until, not both");
    }
    let check = |l: f64| -> anyhow::Result<()> {
        if unit == LoadUnit::Users && l.is_finite() && l >= 1.0 && l < f64::from(clients) {
            bail!(
                "a point of {l} users cannot be shared by the job's {clients} clients: each runs at least one user; start the sweep at {clients} users or more, or run fewer clients"
            );
        }
        if !(l.is_finite() && l > 0.0) || (unit == LoadUnit::Users && l.fract() != 0.0) {
            bail!(
                "a load of {l} {} is not possible; loads are positive{}",
                unit.label(),
                if unit == LoadUnit::Users {
                    " whole numbers"
                } else {
                    ""
                }
            );
        }
        Ok(())
    };
    if !list.is_empty() {
        let mut seen = BTreeSet::new();
        for &l in &list {
            check(l)?;
            if !seen.insert(l.to_bits()) {
                bail!(
                    "the load {} is given twice; each point runs once",
                    load_text(l)
                );
            }
        }
        return Ok(Loads::List(list.into_iter()));
    }
    let (Some(start), Some(step)) = (args.start, &args.step) else {
        bail!(
            "give the loads: --{} A,B,C, or --start S --step D|xF [--until U]",
            if unit == LoadUnit::Users {
                "users"
            } else {
                "rate"
            }
        );
    };
    check(start)?;
    let step = parse_step(step)?;
    if unit == LoadUnit::Users && matches!(step, Step::Add(d) if d.fract() != 0.0) {
        bail!("--step: users are added in whole numbers");
    }
    Ok(Loads::Stepped {
        next: start,
        step,
        until: args.until,
        made: 0,
    })
}

/// Applies `--preset`: fills in the loads (and the workloads or per-user rate) the flags
/// left out, and returns the trace each user runs when the preset makes its own.
fn preset(args: &mut SweepArgs, params: &GenParams) -> Option<Trace> {
    let no_loads = args.users.is_empty() && args.start.is_none();
    // Files per user at --scale 1, scaled, at least one.
    let scaled = |n: f64| ((n * params.scale).round() as u64).max(1);
    match args.preset.as_deref()? {
        "office" => {
            // Seed 003: an office of up to 30 workstations on one NAS.
            if args.workload.is_empty() {
                args.workload = vec!["OfficeProductivity".into(), "FileCopyToNAS".into()];
            }
            if no_loads {
                args.users = vec![1, 2, 4, 8, 16, 30];
            }
            None
        }
        "fileserver" => {
            // Seed 000: a file server measured at about 590 CIFS connections, each
            // writing then reading its own files of 4 KB to 2 MB in 4 KB records.
            if no_loads {
                args.users = vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 590];
            }
            args.user_rate.get_or_insert(100.0);
            args.workload.is_empty().then(|| {
                FileServer {
                    connections: 1,
                    first_connection: 0,
                    files_per_connection: scaled(10.0) as u32,
                    record: 4096,
                }
                .session()
            })
        }
        "ingest" => {
            // Seed 001: files of BLOCKSPERFILE blocks ingested into directories of
            // FILESPERDIR, here by more and more writers at once.
            if no_loads {
                args.users = vec![1, 2, 4, 8, 16, 32];
            }
            args.user_rate.get_or_insert(100.0);
            args.workload.is_empty().then(|| {
                Ingest {
                    block_size: 64 << 10,
                    blocks_per_file: 16,
                    total_files: scaled(100.0),
                    files_per_dir: 100,
                }
                .generate()
            })
        }
        _ => None,
    }
}

/// `naslab sweep`.
pub fn sweep(args: SweepArgs, coord: &Arc<dyn Coordinator>) -> anyhow::Result<()> {
    let (rank, clients) = coord.rank_and_size().unwrap_or((0, 1));
    if args.opts.batch != 1 {
        bail!("--batch: a sweep runs each load point once");
    }
    if args.opts.shared_files {
        bail!(
            "--shared-files: a sweep's clients each run their own share of every point on their own file sets; leave it out"
        );
    }
    if args.opts.no_records {
        bail!(
            "a sweep computes each point's response and service times from its op records; leave out --no-records"
        );
    }
    if args.opts.time_limit.is_some() {
        bail!(
            "--time-limit would cut a point's schedule short; set the point's length with --point-time"
        );
    }
    let mut args = args;
    let params = gen_params(&args.generate)?;
    let preset = preset(&mut args, &params);
    if let Some(r) = args.user_rate
        && !(r.is_finite() && r > 0.0)
    {
        bail!("--user-rate is ops per second per stream, above 0");
    }
    let users_of = !args.workload.is_empty() || preset.is_some();
    let unit = match (users_of, args.rate.is_empty()) {
        (true, true) => LoadUnit::Users,
        (true, false) => {
            bail!("--workload makes a users sweep and --rate a rate sweep; give one")
        }
        (false, _) if !args.users.is_empty() => {
            bail!("--users needs --workload NAME: the workload each user runs")
        }
        (false, _) if args.user_rate.is_some() => {
            bail!("--user-rate paces each user of a users sweep; a rate sweep's rate is --rate")
        }
        (false, _) => LoadUnit::OpsPerS,
    };
    let warmup_ns = args.warmup.as_ref().map(|d| d.ns).unwrap_or(match unit {
        LoadUnit::Users => 0,
        LoadUnit::OpsPerS => 1_000_000_000,
    });
    let load = match unit {
        LoadUnit::Users => {
            let dir = trace_dir(&args.trace_dir);
            let mut parts = Vec::new();
            match preset.clone() {
                Some(trace) => {
                    args.workload = vec![trace.header.workload.clone()];
                    parts.push(trace);
                }
                None => {
                    for name in &args.workload {
                        parts.push(match resolve(name, dir.as_deref())? {
                            Source::Builtin(b) => build(b, &params)?,
                            Source::File(p) => load_trace(&p)?,
                        });
                    }
                }
            }
            if let Some(rate) = args.user_rate {
                parts = parts
                    .iter()
                    .map(|t| openloop::paced(t, rate, args.arrivals, params.seed))
                    .collect();
            } else if parts
                .iter()
                .all(|t| t.ops.iter().all(|o| o.t_us == t.ops[0].t_us))
            {
                bail!(
                    "{} has no timing (every op at one instant): a users sweep follows each user's own timing; give each user a pace with --user-rate OPS, sweep it by --rate, or give a trace with timestamps",
                    args.workload.join(",")
                );
            }
            let base = openloop::together(&args.workload.join("+"), &parts);
            Load::Users {
                base,
                stagger_us: args.stagger.ns / 1000,
                seed: params.seed,
            }
        }
        LoadUnit::OpsPerS => {
            if args.connections == 0 {
                bail!("--connections must be at least 1");
            }
            Load::Rate {
                mix: parse_mix(args.mix.as_deref().unwrap_or(""))?,
                connections: args.connections,
                arrivals: args.arrivals,
                duration_us: (warmup_ns + args.point_time.ns) / 1000,
                seed: params.seed,
            }
        }
    };
    let loads = loads(&args, unit, clients)?;
    let cap = args
        .cap
        .as_deref()
        .map(|c| Cap::parse(c, naslab_engine::pacing::parse_duration_ns))
        .transpose()
        .map_err(|e| anyhow::anyhow!("--cap: {e}"))?;
    if !(0.0..100.0).contains(&args.saturation) {
        bail!("--saturation is a percentage below 100");
    }
    let mut opts = args.opts.clone();
    // Open loop: every op at its scheduled time, its lateness kept.
    opts.pace = Pacing::Original;
    let mut extra = BTreeMap::new();
    extra.insert(
        "sweep".to_string(),
        match &load {
            Load::Users { base, .. } => format!("users of {}", base.header.workload),
            Load::Rate {
                connections,
                arrivals,
                ..
            } => {
                format!("rate over {connections} connections, {arrivals} arrivals")
            }
        },
    );
    // One endpoint for the job, rank 0's, which holds the merged points.
    let metrics = match rank {
        0 => args.metrics.map(super::metrics::serve).transpose()?,
        _ => None,
    };
    let ctx = context(&opts, coord, CacheMode::Drop, extra)?;
    let mut source = SweepSource {
        unit,
        run_dir: ctx.run_dir.clone(),
        keep_going: args.keep_going,
        sweep: Sweep {
            unit,
            arrivals: match &load {
                Load::Rate { arrivals, .. } => Some(arrivals.to_string()),
                Load::Users { .. } => None,
            },
            warmup_ns,
            saturation_margin: args.saturation / 100.0,
            cap,
            points: Vec::new(),
            knee: None,
            peak_achieved_ops_s: 0.0,
            overall_response_ns: 0,
            stopped: None,
        },
        load,
        loads,
        current: None,
        metrics,
        coord: coord.clone(),
        rank,
        clients,
    };
    let view = View {
        file_name: "sweep.txt",
        render: Box::new(|run, _| Ok(sweep_table(run))),
    };
    execute_from(ctx, &mut source, Some(view)).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stepped_loads_add_or_multiply_and_stop_at_until() {
        let mut l = Loads::Stepped {
            next: 1.0,
            step: Step::Times(2.0),
            until: Some(16.0),
            made: 0,
        };
        let got: Vec<f64> = std::iter::from_fn(|| l.next()).collect();
        assert_eq!(got, [1.0, 2.0, 4.0, 8.0, 16.0]);
        let mut l = Loads::Stepped {
            next: 100.0,
            step: Step::Add(50.0),
            until: None,
            made: 0,
        };
        assert_eq!(std::iter::from_fn(|| l.next()).count(), MAX_POINTS);
    }

    #[test]
    fn users_are_shared_as_evenly_as_can_be_the_remainder_to_the_lowest_ranks() {
        let shares = |n: u32, clients: u32| -> Vec<std::ops::Range<u32>> {
            (0..clients).map(|r| users_share(n, r, clients)).collect()
        };
        assert_eq!(shares(7, 3), [0..3, 3..5, 5..7]);
        assert_eq!(shares(6, 3), [0..2, 2..4, 4..6]);
        assert_eq!(shares(3, 3), [0..1, 1..2, 2..3]);
        assert_eq!(users_share(5, 0, 1), 0..5);
        // Every user once, in order, for any split.
        for n in 1..40 {
            for c in 1..=n.min(9) {
                let all: Vec<u32> = shares(n, c).into_iter().flatten().collect();
                assert_eq!(all, (0..n).collect::<Vec<_>>(), "{n} over {c}");
                let sizes: Vec<usize> = shares(n, c).iter().map(|r| r.len()).collect();
                assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
            }
        }
    }

    #[test]
    fn mixes_and_steps_parse_and_refuse_nonsense() {
        let m = parse_mix("read=70,block=8k").unwrap();
        assert_eq!((m.read_pct, m.block, m.file_bytes), (70, 8192, 64 << 20));
        for bad in ["read=101", "block=0", "size=4k", "read", "block=8k,file=4k"] {
            assert!(parse_mix(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_step("x2").unwrap(), Step::Times(2.0));
        assert_eq!(parse_step("250").unwrap(), Step::Add(250.0));
        for bad in ["x1", "x", "-3", "0", "two"] {
            assert!(parse_step(bad).is_err(), "{bad}");
        }
    }
}
