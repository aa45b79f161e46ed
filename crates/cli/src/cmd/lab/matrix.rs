//! `naslab lab matrix`: the same workloads against each configuration in turn (a lab
//! up, the run, the server-side layout of what the workloads left, the lab down), then
//! one comparison of throughput and extents.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, bail};
use naslab_engine::backend::HINT_WRITE_OP;
use naslab_engine::run::extra_op_count;
use naslab_lab::lab::LabGuard;
use naslab_lab::{FsKind, LabOptions, LinkSpec, ServerKind};
use naslab_results::CacheMode;
use naslab_trace::Trace;
use serde::Serialize;

use crate::args::LabMatrixArgs;
use crate::cmd::run::{compile_traces, context, execute_returning};
use crate::cmd::sources::{Source, build, gen_params, resolve_suite};
use crate::multi::{Coordinator, Solo};
use crate::timestamp::compact_now;

/// One configuration: a file system, a server and a set of its settings.
#[derive(Debug, Clone, Serialize)]
struct Config {
    label: String,
    fs: FsKind,
    server: ServerKind,
    opts_name: String,
    opts: Vec<String>,
    /// The link clients reach the server through (`--links`), as given, and parsed.
    link_name: Option<String>,
    #[serde(skip)]
    link: Option<LinkSpec>,
    /// The NFS version its client speaks (NFS servers only).
    #[serde(skip_serializing_if = "Option::is_none")]
    nfs_version: Option<String>,
}

impl Config {
    /// The server as the tables name it: `nfs4.1` when NFS is spoken in version 4.
    fn server_text(&self) -> String {
        match self.nfs_version.as_deref() {
            Some(v) if v != "3" => format!("{}{v}", self.server),
            _ => self.server.to_string(),
        }
    }
}

/// What one workload showed on one configuration.
#[derive(Debug, Clone, Serialize, Default)]
struct Cell {
    /// The median over iterations, and the slowest and fastest.
    throughput_mb_s: Option<f64>,
    throughput_min_mb_s: f64,
    throughput_max_mb_s: f64,
    /// Preallocation hint writes the client profile sent (all phases).
    hint_writes: u64,
    files: u64,
    bytes: u64,
    extents: u64,
    ideal_extents: u64,
    /// The largest file: its name, size and extents.
    largest: Option<(String, u64, u64)>,
    /// The median iteration's ops, measured phase (ns) and mean response time over
    /// its workload ops (ns), for the link table.
    ops: u64,
    wall_ns: u64,
    mean_op_ns: u64,
    /// The round trip naslab measured before the run (the probe's median), ns.
    rtt_measured_ns: Option<u64>,
    error: Option<String>,
}

/// The comparison, as written to comparison.json.
#[derive(Debug, Serialize)]
struct Comparison {
    configs: Vec<Config>,
    workloads: Vec<String>,
    /// cells[config][workload]
    cells: Vec<Vec<Cell>>,
    runs: Vec<Option<PathBuf>>,
}

fn parse_opt_sets(specs: &[String]) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    if specs.is_empty() {
        return Ok(vec![("defaults".into(), vec![])]);
    }
    let mut out = Vec::new();
    for s in specs {
        let Some((name, settings)) = s.split_once('=') else {
            bail!(
                "--opts '{s}' must be NAME='setting = value; ...' (e.g. sa_yes='strict allocate = yes')"
            );
        };
        let name = name.trim();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            bail!("--opts '{s}': the set's name '{name}' must be letters, digits, '-' or '_'");
        }
        let settings: Vec<String> = settings
            .split(';')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect();
        for x in &settings {
            naslab_lab::server::check_option(x)?;
        }
        out.push((name.to_string(), settings));
    }
    Ok(out)
}

/// `--links`: `;`-separated when any link is given as settings (which hold commas),
/// else `,`-separated profiles. `[None]` without it.
fn parse_links(spec: Option<&str>) -> anyhow::Result<Vec<(Option<String>, Option<LinkSpec>)>> {
    let Some(spec) = spec else {
        return Ok(vec![(None, None)]);
    };
    let parts: Vec<&str> = if spec.contains(';') || spec.contains('=') {
        spec.split(';').collect()
    } else {
        spec.split(',').collect()
    };
    let mut out = Vec::new();
    for p in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        out.push((Some(p.to_string()), naslab_lab::link::parse(p)?));
    }
    if out.is_empty() {
        bail!(
            "--links '{spec}' names no link: give profiles (lan,wifi,vpn) or settings (rtt=10ms;rtt=20ms)"
        );
    }
    Ok(out)
}

fn traces(a: &LabMatrixArgs) -> anyhow::Result<Vec<Trace>> {
    let params = gen_params(&a.generate)?;
    let mut names: Vec<String> = Vec::new();
    if let Some(s) = &a.suite {
        for src in resolve_suite(s)? {
            if let Source::Builtin(n) = src {
                names.push(n.to_string());
            }
        }
    }
    names.extend(a.workload.iter().cloned());
    if names.is_empty() {
        bail!(
            "nothing to run: give --suite naspt or --workload NAME (e.g. HDVideo_RecordThenPlay)"
        );
    }
    names.iter().map(|n| build(n, &params)).collect()
}

/// Runs `naslab lab matrix`.
pub fn matrix(a: LabMatrixArgs) -> anyhow::Result<()> {
    if a.opts_run.target.is_some() {
        bail!("lab matrix makes its own targets; leave out --target");
    }
    let sets = parse_opt_sets(&a.opts)?;
    let links = parse_links(a.links.as_deref())?;
    let size = a.size;
    let traces = traces(&a)?;
    let workloads: Vec<String> = traces.iter().map(|t| t.header.workload.clone()).collect();
    let mut configs = Vec::new();
    for &fs in &a.fs {
        for &server in &a.server {
            let versions: Vec<Option<String>> = if server == ServerKind::Nfs {
                a.nfs_versions.iter().cloned().map(Some).collect()
            } else {
                vec![None]
            };
            for (name, opts) in &sets {
                for version in &versions {
                    for (link_name, link) in &links {
                        let suffix = link_name
                            .as_ref()
                            .map(|l| format!("-{}", label_part(l)))
                            .unwrap_or_default();
                        let mut c = Config {
                            label: String::new(),
                            fs,
                            server,
                            opts_name: name.clone(),
                            opts: opts.clone(),
                            link_name: link_name.clone(),
                            link: *link,
                            nfs_version: version.clone(),
                        };
                        c.label = format!("{fs}-{}-{name}{suffix}", c.server_text());
                        configs.push(c);
                    }
                }
            }
        }
    }
    let out = a.opts_run.out.join("matrix").join(compact_now());
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create '{}'", out.display()))?;
    let mut cells = Vec::new();
    let mut runs = Vec::new();
    for (i, c) in configs.iter().enumerate() {
        eprintln!(
            "== configuration {}/{}: {} on {} ({}){} ==",
            i + 1,
            configs.len(),
            c.server_text(),
            c.fs,
            if c.opts.is_empty() {
                "defaults".to_string()
            } else {
                c.opts.join("; ")
            },
            c.link_name
                .as_ref()
                .map(|l| format!(", link {l}"))
                .unwrap_or_default()
        );
        let (row, run) = run_config(&a, c, size, &out, traces.clone(), &workloads);
        cells.push(row);
        runs.push(run);
    }
    let cmp = Comparison {
        configs,
        workloads,
        cells,
        runs,
    };
    let mut text = render(&cmp);
    if cmp.configs.iter().any(|c| c.link_name.is_some()) {
        text.push_str(&render_links(&cmp));
    }
    // Saved before it is printed: a reader that went away loses nothing.
    std::fs::write(out.join("comparison.txt"), &text)?;
    std::fs::write(
        out.join("comparison.json"),
        serde_json::to_string_pretty(&cmp)? + "\n",
    )?;
    eprintln!("comparison: {}", out.display());
    crate::stdout::print(&format!("\n{text}"))
}

/// Up, run, layout, down for one configuration; failures are kept in its cells.
fn run_config(
    a: &LabMatrixArgs,
    c: &Config,
    size: u64,
    out: &Path,
    traces: Vec<Trace>,
    workloads: &[String],
) -> (Vec<Cell>, Option<PathBuf>) {
    let fail = |e: String| {
        let cell = Cell {
            error: Some(e),
            ..Cell::default()
        };
        (vec![cell; workloads.len()], None)
    };
    let opts = LabOptions {
        name: "matrix".into(),
        base: a.opts_run.lab_dir.clone(),
        fs: c.fs,
        server: c.server,
        size_bytes: size,
        opts: c.opts.clone(),
        link: c.link,
        client_links: Vec::new(),
    };
    let guard = match LabGuard::up(&opts) {
        Ok(g) => g,
        Err(e) => return fail(format!("lab up failed: {e}")),
    };
    let lab = guard.lab().clone();
    let mut run_opts = a.opts_run.clone();
    run_opts.target = Some(PathBuf::from(match c.nfs_version.as_deref() {
        Some(v) if v != "3" => naslab_lab::server::nfs4_url(&lab.state.url, v),
        _ => lab.state.url.clone(),
    }));
    run_opts.lab_link = lab.state.link.as_ref().map(|l| l.link.clone());
    // The lab's generated password, for the run's SMB client to sign in with.
    run_opts.lab_password = Some(lab.state.password.clone()).filter(|p| !p.is_empty());
    run_opts.out = out.to_path_buf();
    run_opts.label = c.label.clone();
    run_opts.drop_all_caches = !a.keep_server_cache;
    let mut extra = BTreeMap::new();
    extra.insert(
        "lab".to_string(),
        format!("{} on {}", c.server_text(), c.fs),
    );
    extra.insert("scale".to_string(), a.generate.scale.to_string());
    extra.insert("seed".to_string(), a.generate.seed.to_string());
    if !c.opts.is_empty() {
        extra.insert("server_options".to_string(), c.opts.join("; "));
    }
    // The matrix runs each configuration from this one process, never as a job.
    let solo: Arc<dyn Coordinator> = Arc::new(Solo);
    let ctx = match context(&run_opts, &solo, CacheMode::Drop, extra) {
        Ok(x) => x,
        Err(e) => return fail(format!("{e:#}")),
    };
    let run_dir = ctx.run_dir.clone();
    let (run, outcome) = match compile_traces(&ctx, traces) {
        Ok(w) => execute_returning(ctx, w, None),
        Err(e) => (None, Err(e)),
    };
    let mut row = Vec::new();
    for w in workloads {
        let mut cell = Cell::default();
        if let Some(r) = run
            .as_ref()
            .and_then(|r| r.workloads.iter().find(|x| &x.name == w))
        {
            cell.throughput_mb_s = Some(r.throughput_mb_s);
            cell.throughput_min_mb_s = r.throughput_min_mb_s;
            cell.throughput_max_mb_s = r.throughput_max_mb_s;
            if let Some(it) = r.median_iteration() {
                cell.hint_writes = extra_op_count(it, HINT_WRITE_OP);
                cell.ops = it.ops;
                cell.wall_ns = it.wall_ns;
                cell.mean_op_ns = it.mean_op_ns();
            }
        }
        cell.rtt_measured_ns = run
            .as_ref()
            .and_then(|r| r.options.link.as_ref())
            .and_then(|l| l.probe.as_ref())
            .map(|p| p.median_ns);
        match naslab_lab::layout::workload_layout(&lab.state.share_dir, w, 1) {
            Ok(t) => {
                cell.files = t.totals.files;
                cell.bytes = t.totals.size_bytes;
                cell.extents = t.totals.extents;
                cell.ideal_extents = t.totals.ideal_extents;
                cell.largest = t.largest.map(|f| {
                    let name = f.path.strip_prefix(&t.root).unwrap_or(&f.path);
                    (name.display().to_string(), f.size_bytes, f.extents)
                });
            }
            Err(e) => cell.error = Some(format!("layout: {e}")),
        }
        if cell.throughput_mb_s.is_none() && cell.error.is_none() {
            cell.error = Some("not run".into());
        }
        row.push(cell);
    }
    if let Err(e) = &outcome {
        eprintln!("warning: {} did not complete: {e:#}", c.label);
    }
    if let Err(e) = guard.down() {
        eprintln!("warning: {e}");
    }
    (row, Some(run_dir))
}

/// The link sweep: per workload, each configuration's point behind each link, with
/// the link's set and measured round trip, the throughput, the ops, the mean response
/// time and the measured phase; and whether every point of a configuration ran the
/// same number of ops.
fn render_links(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\nlinks:\n{:<24} {:<36} {:>9} {:>11} {:>10} {:>8} {:>11} {:>10}",
        "workload",
        "configuration",
        "rtt set",
        "rtt probed",
        "MB/s",
        "ops",
        "mean op ms",
        "phase s"
    );
    for (wi, w) in c.workloads.iter().enumerate() {
        // Points of one configuration (file system, server, options) behind each link.
        let mut groups: BTreeMap<(String, String, String), Vec<u64>> = BTreeMap::new();
        for (ci, cfg) in c.configs.iter().enumerate() {
            let Some(cell) = c.cells.get(ci).and_then(|r| r.get(wi)) else {
                continue;
            };
            if cell.throughput_mb_s.is_none() {
                continue;
            }
            groups
                .entry((cfg.fs.to_string(), cfg.server_text(), cfg.opts_name.clone()))
                .or_default()
                .push(cell.ops);
            let set = match (&cfg.link_name, &cfg.link) {
                (None, _) | (Some(_), None) => "none".to_string(),
                (Some(_), Some(l)) => format!("{} ms", l.rtt_ms),
            };
            let probed = naslab_report::probed_text(cell.rtt_measured_ns);
            let _ = writeln!(
                s,
                "{w:<24} {:<36} {set:>9} {probed:>11} {:>10.2} {:>8} {:>11.3} {:>10.2}",
                cfg.label,
                cell.throughput_mb_s.unwrap_or(0.0),
                cell.ops,
                cell.mean_op_ns as f64 / 1e6,
                cell.wall_ns as f64 / 1e9
            );
        }
        for ((fs, server, opts), ops) in groups {
            let same = ops.windows(2).all(|p| p[0] == p[1]);
            let _ = writeln!(
                s,
                "{w:<24} {server} on {fs} ({opts}): {}",
                if same {
                    format!("{} ops at every link", ops.first().copied().unwrap_or(0))
                } else {
                    format!("op counts differ between links: {ops:?}")
                }
            );
        }
    }
    let _ = writeln!(
        s,
        "\nrtt set: the link's emulated round trip (none: the server's own port); rtt probed: the median of the round trips naslab timed before the run (SMB2 ECHO or NFS NULL), the proxy's own hop included; mean op ms: the mean issue-to-completion time of the workload's ops in the median iteration; phase s: that iteration's measured phase."
    );
    s
}

/// A link as a label may hold it: `rtt=10ms,rate=1gbit` becomes `rtt10ms_rate1gbit`.
fn label_part(link: &str) -> String {
    link.chars()
        .filter_map(|c| match c {
            c if c.is_ascii_alphanumeric() || c == '-' => Some(c),
            ',' => Some('_'),
            _ => None,
        })
        .collect()
}

fn render(c: &Comparison) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "configurations:");
    for cfg in &c.configs {
        let _ = writeln!(
            s,
            "  {:<28} {} on {}, {}{}",
            cfg.label,
            cfg.server_text(),
            cfg.fs,
            if cfg.opts.is_empty() {
                "server defaults".to_string()
            } else {
                cfg.opts.join("; ")
            },
            cfg.link_name
                .as_ref()
                .map(|l| format!(", link {l}"))
                .unwrap_or_default()
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<24} {:<28} {:>20} {:>8} {:>6} {:>8} {:>6}  largest file: MB, extents",
        "workload", "configuration", "MB/s", "hints", "files", "extents", "ideal"
    );
    for (wi, w) in c.workloads.iter().enumerate() {
        for (ci, cfg) in c.configs.iter().enumerate() {
            let Some(cell) = c.cells.get(ci).and_then(|r| r.get(wi)) else {
                continue;
            };
            if let Some(e) = &cell.error
                && cell.throughput_mb_s.is_none()
            {
                let _ = writeln!(s, "{w:<24} {:<28} failed: {e}", cfg.label);
                continue;
            }
            let largest = cell
                .largest
                .as_ref()
                .map(|(n, b, x)| format!("{n}: {:.1} MB, {x}", *b as f64 / 1e6))
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(
                s,
                "{w:<24} {:<28} {:>20} {:>8} {:>6} {:>8} {:>6}  {largest}",
                cfg.label,
                cell.throughput_mb_s
                    .map(|t| if cell.throughput_max_mb_s > cell.throughput_min_mb_s {
                        format!(
                            "{t:.1} ({:.0}-{:.0})",
                            cell.throughput_min_mb_s, cell.throughput_max_mb_s
                        )
                    } else {
                        format!("{t:.1}")
                    })
                    .unwrap_or_else(|| "-".into()),
                cell.hint_writes,
                cell.files,
                cell.extents,
                cell.ideal_extents,
            );
        }
    }
    let _ = writeln!(
        s,
        "\nMB/s: the workload's measured throughput (its own bytes only); with --batch, the median and (min-max) of the iterations. hints: preallocation hint writes the client profile added, all phases. files, extents, ideal: what the workload left in its directory on the server's file system, counted with FIEMAP as filefrag counts them; ideal is the fewest extents that file system allows."
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_sets_parse_and_bad_ones_are_named() {
        let s = parse_opt_sets(&[
            "sa_no=strict allocate = no".into(),
            "two=a = 1; b = 2".into(),
        ])
        .unwrap();
        assert_eq!(
            s[0],
            (
                "sa_no".to_string(),
                vec!["strict allocate = no".to_string()]
            )
        );
        assert_eq!(s[1].1.len(), 2);
        assert!(parse_opt_sets(&["no-equals".into()]).is_err());
        assert!(parse_opt_sets(&["x y=a = b".into()]).is_err());
        assert!(parse_opt_sets(&["n=a".into()]).is_err());
        assert_eq!(parse_opt_sets(&[]).unwrap()[0].0, "defaults");
    }

    #[test]
    fn links_split_by_commas_or_by_semicolons_when_settings_hold_commas() {
        let l = parse_links(Some("none,lan,wifi")).unwrap();
        assert_eq!(l.len(), 3);
        assert!(l[0].1.is_none());
        assert_eq!(l[2].1.unwrap().rtt_ms, 3);
        let l = parse_links(Some("rtt=1ms,rate=1gbit;vpn")).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].1.unwrap().rate_bit_s, 1_000_000_000);
        assert_eq!(l[1].1.unwrap().rtt_ms, 20);
        assert_eq!(parse_links(None).unwrap(), vec![(None, None)]);
        assert!(parse_links(Some("lan,loss=1%")).is_err());
        assert_eq!(label_part("rtt=1ms,rate=1gbit"), "rtt1ms_rate1gbit");
    }
}
