//! Runs made behind different emulated links, read as a sweep: per workload and
//! configuration (the runs that differ in nothing but their link), one point per link
//! with its round trip, the throughput and the mean response time, so a comparison can
//! show how a workload slows as the round trip grows.

use std::collections::BTreeMap;
use std::fmt::Write;

use naslab_results::RunResult;
use serde::Serialize;
use ts_rs::TS;

/// The settings that name the link itself, left out of what makes a configuration.
const LINK_SETTINGS: &[&str] = &["link", "link rtt measured"];

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

/// The link sweep of a comparison.
#[derive(Debug, Clone, Serialize, TS)]
pub struct LinkSweep {
    pub lines: Vec<LinkLine>,
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
        key.retain(|k, _| !LINK_SETTINGS.contains(&k.as_str()));
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
            let kind = key.get("target kind").cloned().unwrap_or_default();
            let cols: Vec<&str> = members.iter().map(|&i| columns[i].as_str()).collect();
            lines.push(LinkLine {
                workload: workload.to_string(),
                configuration: format!("{kind}: {}", cols.join(", ")),
                same_ops: points.iter().all(|p| p.ops == points[0].ops),
                points,
            });
        }
    }
    Some(LinkSweep { lines })
}

/// Run `i`'s point for `workload`, when it ran it.
fn point(run: &RunResult, i: usize, workload: &str) -> Option<LinkPoint> {
    let w = run.workloads.iter().find(|w| w.name == workload)?;
    let it = w.median_iteration()?;
    let link = run.options.link.as_ref()?;
    let emulated = link.emulated.as_ref();
    Some(LinkPoint {
        run: i,
        link: emulated.map_or_else(|| "none".into(), |e| e.profile.clone()),
        rtt_ns: emulated.map_or(0, |e| e.rtt_ns),
        rate_bit_s: emulated.map_or(0, |e| e.rate_bit_s),
        rtt_probed_ns: link.probe.as_ref().map(|p| p.median_ns),
        mb_s: w.throughput_mb_s,
        mean_op_ns: it.mean_op_ns(),
        ops: it.ops,
        wall_ns: it.wall_ns,
    })
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
                let probed = p
                    .rtt_probed_ns
                    .map_or_else(|| "-".into(), |r| format!("{:.3} ms", r as f64 / 1e6));
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
        o
    }
}
