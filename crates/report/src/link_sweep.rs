//! Runs made behind different emulated links, read as a sweep: per workload and
//! configuration (the runs that differ in nothing but their link), one point per link
//! with its round trip, the throughput and the mean response time, so a comparison can
//! show how a workload slows as the round trip grows; and the capacity sweeps among
//! them (`naslab sweep` behind each link), by their knee and peak against the link.

use std::collections::BTreeMap;
use std::fmt::Write;

use naslab_results::RunResult;
use serde::Serialize;
use ts_rs::TS;

/// The settings that name the path to the server, left out of what makes a
/// configuration: the link itself, and the ports the server is reached at (every lab,
/// and every link of one lab, has its own).
const PATH_SETTINGS: &[&str] = &["link", "link rtt measured", "nfs port", "nfs mount port"];

/// One run's point on a workload's line.
#[derive(Debug, Clone, Serialize, TS)]
pub struct LinkPoint {
    /// The run's index in the comparison.
    pub run: usize,
    /// The link's profile (`lan`, `custom`, ...), or `none` for the server's own port.
    pub link: String,
    /// The round trip the link added, ns (0: no emulated link).
    pub rtt_ns: u64,
    /// The rate the link held each direction to, bit/s (0: not limited).
    pub rate_bit_s: u64,
    /// The round trip naslab measured before the run, ns, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_probed_ns: Option<u64>,
    /// The workload's throughput (its median iteration).
    pub mb_s: f64,
    /// The median iteration's mean response time of the workload's ops, ns.
    pub mean_op_ns: u64,
    /// The median iteration's ops and measured phase.
    pub ops: u64,
    pub wall_ns: u64,
}

/// One configuration's points for one workload, by round trip.
#[derive(Debug, Clone, Serialize, TS)]
pub struct LinkLine {
    pub workload: String,
    /// The configuration: its target kind and the letters of its runs (`smb: A, C, E`).
    pub configuration: String,
    pub points: Vec<LinkPoint>,
    /// Whether every point ran the same number of ops, as they must to compare.
    pub same_ops: bool,
}

/// One capacity sweep's curve behind one link: where it bent and how far it went.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CapacityPoint {
    /// The run's index in the comparison, and its letter.
    pub run: usize,
    pub column: String,
    pub link: String,
    pub rtt_ns: u64,
    pub rate_bit_s: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_probed_ns: Option<u64>,
    /// The sweep's unit of load (`users`, `ops/s`) and its points.
    pub unit: String,
    pub points: usize,
    /// The highest load every point up to met the cap and kept up; absent: none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub knee: Option<f64>,
    pub peak_achieved_ops_s: f64,
    pub overall_response_ns: u64,
}

/// One configuration's capacity sweeps, by round trip.
#[derive(Debug, Clone, Serialize, TS)]
pub struct CapacityLine {
    pub configuration: String,
    pub points: Vec<CapacityPoint>,
}

/// The link sweep of a comparison.
#[derive(Debug, Clone, Serialize, TS)]
pub struct LinkSweep {
    pub lines: Vec<LinkLine>,
    /// The capacity sweeps (`naslab sweep` runs) among the runs, per configuration:
    /// each one's knee and peak against its link. Empty when no run is a sweep.
    pub capacity: Vec<CapacityLine>,
}

/// The sweep in `runs` (`columns` their letters), when at least two of them crossed
/// links that differ; `None` otherwise.
pub fn link_sweep(
    runs: &[&RunResult],
    columns: &[String],
    settings: &[BTreeMap<String, String>],
) -> Option<LinkSweep> {
    let linked: Vec<usize> = (0..runs.len())
        .filter(|&i| runs[i].options.link.is_some())
        .collect();
    let link_of = |i: usize| settings[i].get("link").cloned().unwrap_or_default();
    if linked.len() < 2 || linked.iter().all(|&i| link_of(i) == link_of(linked[0])) {
        return None;
    }
    // Runs alike in every setting but the link make one configuration.
    let mut configs: Vec<(BTreeMap<String, String>, Vec<usize>)> = Vec::new();
    for &i in &linked {
        let mut key = settings[i].clone();
        key.retain(|k, _| !PATH_SETTINGS.contains(&k.as_str()));
        match configs.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(i),
            None => configs.push((key, vec![i])),
        }
    }
    let mut workloads: Vec<&str> = Vec::new();
    for &i in &linked {
        for w in &runs[i].workloads {
            if !workloads.contains(&w.name.as_str()) {
                workloads.push(&w.name);
            }
        }
    }
    let mut capacity = Vec::new();
    for (key, members) in &configs {
        let mut points: Vec<CapacityPoint> = members
            .iter()
            .filter_map(|&i| capacity_point(runs[i], i, &columns[i]))
            .collect();
        if points.is_empty() {
            continue;
        }
        points.sort_by_key(|p| (p.rtt_ns, std::cmp::Reverse(p.rate_bit_s), p.run));
        capacity.push(CapacityLine {
            configuration: configuration(key, members, columns),
            points,
        });
    }
    let mut lines = Vec::new();
    for workload in workloads {
        for (key, members) in &configs {
            let mut points: Vec<LinkPoint> = members
                .iter()
                .filter_map(|&i| point(runs[i], i, workload))
                .collect();
            if points.is_empty() {
                continue;
            }
            points.sort_by_key(|p| (p.rtt_ns, std::cmp::Reverse(p.rate_bit_s), p.run));
            lines.push(LinkLine {
                workload: workload.to_string(),
                configuration: configuration(key, members, columns),
                same_ops: points.iter().all(|p| p.ops == points[0].ops),
                points,
            });
        }
    }
    Some(LinkSweep { lines, capacity })
}

/// A configuration's name: its target kind and its runs' letters (`smb: A, C, E`).
fn configuration(key: &BTreeMap<String, String>, members: &[usize], columns: &[String]) -> String {
    let kind = key.get("target kind").cloned().unwrap_or_default();
    let cols: Vec<&str> = members.iter().map(|&i| columns[i].as_str()).collect();
    format!("{kind}: {}", cols.join(", "))
}

/// The link `run` crossed: its profile (`none` for the server's own port), the round
/// trip and rate it added, and the round trip probed before the run.
fn link_of(run: &RunResult) -> Option<(String, u64, u64, Option<u64>)> {
    let link = run.options.link.as_ref()?;
    let emulated = link.emulated.as_ref();
    Some((
        emulated.map_or_else(|| "none".into(), |e| e.profile.clone()),
        emulated.map_or(0, |e| e.rtt_ns),
        emulated.map_or(0, |e| e.rate_bit_s),
        link.probe.as_ref().map(|p| p.median_ns),
    ))
}

/// Run `i`'s capacity sweep behind its link, when it is a sweep.
fn capacity_point(run: &RunResult, i: usize, column: &str) -> Option<CapacityPoint> {
    let s = run.sweep.as_ref()?;
    let (link, rtt_ns, rate_bit_s, rtt_probed_ns) = link_of(run)?;
    Some(CapacityPoint {
        run: i,
        column: column.to_string(),
        link,
        rtt_ns,
        rate_bit_s,
        rtt_probed_ns,
        unit: s.unit.label().to_string(),
        points: s.points.len(),
        knee: s.knee,
        peak_achieved_ops_s: s.peak_achieved_ops_s,
        overall_response_ns: s.overall_response_ns,
    })
}

/// Run `i`'s point for `workload`, when it ran it.
fn point(run: &RunResult, i: usize, workload: &str) -> Option<LinkPoint> {
    let w = run.workloads.iter().find(|w| w.name == workload)?;
    let it = w.median_iteration()?;
    let (link, rtt_ns, rate_bit_s, rtt_probed_ns) = link_of(run)?;
    Some(LinkPoint {
        run: i,
        link,
        rtt_ns,
        rate_bit_s,
        rtt_probed_ns,
        mb_s: w.throughput_mb_s,
        mean_op_ns: it.mean_op_ns(),
        ops: it.ops,
        wall_ns: it.wall_ns,
    })
}

/// A probed round trip as the tables print it: `1.262 ms`, or `-` when none was.
pub fn probed_text(ns: Option<u64>) -> String {
    ns.map_or_else(|| "-".into(), |r| format!("{:.3} ms", r as f64 / 1e6))
}

impl LinkSweep {
    /// The sweep as the terminal prints it: a row per point, a line per configuration
    /// saying whether its points ran the same ops.
    pub fn table(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "{:<24} {:<20} {:>10} {:>11} {:>11} {:>10} {:>8} {:>11} {:>9}",
            "workload",
            "configuration",
            "link",
            "rtt set",
            "rtt probed",
            "MB/s",
            "ops",
            "mean op ms",
            "phase s"
        );
        for l in &self.lines {
            for p in &l.points {
                let set = if p.rtt_ns == 0 && p.link == "none" {
                    "none".to_string()
                } else {
                    format!("{:.3} ms", p.rtt_ns as f64 / 1e6)
                };
                let probed = probed_text(p.rtt_probed_ns);
                let _ = writeln!(
                    o,
                    "{:<24} {:<20} {:>10} {set:>11} {probed:>11} {:>10.2} {:>8} {:>11.3} {:>9.2}",
                    l.workload,
                    l.configuration,
                    p.link,
                    p.mb_s,
                    p.ops,
                    p.mean_op_ns as f64 / 1e6,
                    p.wall_ns as f64 / 1e9
                );
            }
            if !l.same_ops {
                let _ = writeln!(
                    o,
                    "{:<24} {}: its points ran different numbers of ops and do not compare",
                    l.workload, l.configuration
                );
            }
        }
        if !self.capacity.is_empty() {
            let _ = writeln!(
                o,
                "\ncapacity by link (each capacity sweep's knee and peak, by the round trip its link added)\n{:<20} {:>4} {:>10} {:>11} {:>11} {:>7} {:>14} {:>14} {:>14}",
                "configuration",
                "run",
                "link",
                "rtt set",
                "rtt probed",
                "points",
                "knee",
                "peak ops/s",
                "overall resp"
            );
            for l in &self.capacity {
                for p in &l.points {
                    let knee = p.knee.map_or_else(
                        || "none".to_string(),
                        |k| {
                            if k.fract() == 0.0 {
                                format!("{k:.0} {}", p.unit)
                            } else {
                                format!("{k:.1} {}", p.unit)
                            }
                        },
                    );
                    let probed = probed_text(p.rtt_probed_ns);
                    let _ = writeln!(
                        o,
                        "{:<20} {:>4} {:>10} {:>11} {probed:>11} {:>7} {knee:>14} {:>14.1} {:>11.3} ms",
                        l.configuration,
                        p.column,
                        p.link,
                        format!("{:.3} ms", p.rtt_ns as f64 / 1e6),
                        p.points,
                        p.peak_achieved_ops_s,
                        p.overall_response_ns as f64 / 1e6
                    );
                }
            }
        }
        o
    }
}
