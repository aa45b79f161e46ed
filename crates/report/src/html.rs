//! Assembling the self-contained HTML pages: the page's data as JSON, the columns as
//! compressed base64 blobs, and the committed UI bundle (TypeScript and uPlot, built by
//! esbuild) inline, so the file works offline and asks the network for nothing.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use naslab_results::RunResult;
use naslab_trace::OpKind;
use serde::Serialize;
use ts_rs::TS;

use crate::LoadedRun;
use crate::compare::Comparison;
use crate::data::{
    IterationData, IterationSource, LatencyHistView, LoadOptions, SizeHistView, StreamedIteration,
    load_iteration, run_report_load,
};
use crate::encode::{inline_code, script_json};
use crate::series::{TimeSeries, round_bin_ns};

/// The UI bundle (minified JavaScript), built from `ui/src` by esbuild; see docs/report.md.
const BUNDLE_JS: &str = include_str!("../assets/report.js");
/// The UI's styles, uPlot's included.
const BUNDLE_CSS: &str = include_str!("../assets/report.css");

/// What the HTML report keeps for display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportOptions {
    /// Rows of the transaction list per iteration; later ops are left out of the list
    /// (not the charts) with a note.
    pub max_rows: usize,
    /// Points of the access map per iteration.
    pub access_points: usize,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            max_rows: 2_000_000,
            access_points: 300_000,
        }
    }
}

#[derive(Serialize, TS)]
pub(crate) struct IterationPage {
    iteration: u32,
    records: Option<String>,
    #[serde(flatten)]
    data: IterationData,
}

#[derive(Serialize, TS)]
pub(crate) struct WorkloadPage {
    name: String,
    /// The iteration whose throughput is the workload's figure.
    median: Option<u32>,
    iterations: Vec<IterationPage>,
}

#[derive(Serialize, TS)]
pub(crate) struct ReportPage<'a> {
    #[ts(type = "\"report\"")]
    kind: &'static str,
    title: String,
    generated_by: String,
    run_dir: String,
    kinds: Vec<&'static str>,
    run: &'a RunResult,
    /// The run's warnings worded as the terminal and the text exports word them.
    warnings: Vec<String>,
    /// The settings that shaped the measurement, worded as `compare` words them.
    settings: Vec<naslab_results::Setting>,
    workloads: Vec<WorkloadPage>,
}

/// Runs `jobs` on up to `threads` threads and returns the results in order.
fn parallel_map<T: Send, R: Send>(jobs: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(jobs.len().max(1));
    if threads <= 1 {
        return jobs.into_iter().map(f).collect();
    }
    let queue = std::sync::Mutex::new(jobs.into_iter().enumerate().collect::<Vec<_>>());
    let done = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let job = queue.lock().ok().and_then(|mut q| q.pop());
                    let Some((i, job)) = job else { break };
                    let r = f(job);
                    if let Ok(mut d) = done.lock() {
                        d.push((i, r));
                    }
                }
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_default();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The HTML report of one run: overview, then per workload and iteration the charts,
/// access map, statistics and transaction list, read from the run's op records.
pub fn report_html(run: &LoadedRun, opts: &ReportOptions) -> Vec<u8> {
    report_html_with_notes(run, opts).0
}

/// Like [`report_html`], also returning the page's notes about missing or partial
/// records, each as "WORKLOAD, iteration N: note", for the terminal.
pub fn report_html_with_notes(run: &LoadedRun, opts: &ReportOptions) -> (Vec<u8>, Vec<String>) {
    report_html_streamed(run, opts, HashMap::new())
}

/// Like [`report_html_with_notes`], with the views of some iterations already made while
/// their records were written (`streamed`, by records file name): only the others are
/// read from their records. A multi-client run's iterations are always read, as their
/// clients' views come from the merged records.
pub fn report_html_streamed(
    run: &LoadedRun,
    opts: &ReportOptions,
    streamed: HashMap<String, StreamedIteration>,
) -> (Vec<u8>, Vec<String>) {
    let result = &run.result;
    // A multi-client run's clients each get their own views, to pick on the page.
    let clients = result
        .multi_client
        .as_ref()
        .map_or(0, |m| m.clients.len() as u32);
    let mut jobs = Vec::new();
    for (w, wl) in result.workloads.iter().enumerate() {
        for (i, it) in wl.iterations.iter().enumerate() {
            jobs.push((w, i, it));
        }
    }
    let streamed = Mutex::new(streamed);
    let loaded = parallel_map(jobs, |(w, i, it)| {
        let prefix = format!("w{w}-i{i}");
        let made = it
            .records
            .as_ref()
            .filter(|_| clients == 0)
            .and_then(|name| streamed.lock().ok()?.remove(name))
            .filter(|made| made.opts == *opts);
        let (data, blobs) = match made {
            Some(made) => made.placed(&prefix),
            None => {
                let path = run.records_path(it.records.as_deref());
                let src = IterationSource {
                    records: path.as_deref(),
                    records_name: it.records.as_deref(),
                    clock_start_ns: it.clock_start_ns,
                    wall_ns: it.wall_ns,
                    blob_prefix: prefix,
                };
                load_iteration(&src, run_report_load(opts, clients))
            }
        };
        (it.iteration, it.records.clone(), data, blobs)
    });
    let mut blobs = Vec::new();
    let mut page_notes = Vec::new();
    let mut loaded = loaded.into_iter();
    let workloads = result
        .workloads
        .iter()
        .map(|wl| WorkloadPage {
            name: wl.name.clone(),
            median: wl.median_iteration().map(|m| m.iteration),
            iterations: (&mut loaded)
                .take(wl.iterations.len())
                .map(|(iteration, records, data, b)| {
                    blobs.extend(b);
                    for n in &data.notes {
                        page_notes.push(format!("{}, iteration {iteration}: {n}", wl.name));
                    }
                    IterationPage {
                        iteration,
                        records,
                        data,
                    }
                })
                .collect(),
        })
        .collect();
    let page = ReportPage {
        kind: "report",
        title: match &run.result.device.name {
            Some(device) => format!("naslab report: {device}, {}", run.short_name()),
            None => format!("naslab report: {}", run.short_name()),
        },
        generated_by: format!("naslab {}", env!("CARGO_PKG_VERSION")),
        run_dir: run.dir.display().to_string(),
        kinds: OpKind::ALL.iter().map(|k| k.name()).collect(),
        run: result,
        warnings: result.warnings.iter().map(ToString::to_string).collect(),
        settings: result.settings(),
        workloads,
    };
    let mut o = assemble(&page.title, &script_json(&page), &blobs);
    let section = verify_section(result);
    if !section.is_empty() {
        // Outside the app's element, so it shows whatever the script draws.
        let marker = b"<div id=\"app\">";
        if let Some(at) = o.windows(marker.len()).position(|w| w == marker) {
            o.splice(at..at, section.into_bytes());
        }
    }
    (o, page_notes)
}

/// With `--verify`: a short section of what was checked and every mismatch kept.
fn verify_section(run: &naslab_results::RunResult) -> String {
    let mut rows = String::new();
    let mut bad = String::new();
    for wl in &run.workloads {
        for it in &wl.iterations {
            let Some(v) = &it.verify else { continue };
            rows.push_str(&format!(
                "<li>{} #{}: {}</li>\n",
                escape_text(&wl.name),
                it.iteration,
                escape_text(&naslab_results::export::verify_line(v))
            ));
            for m in &v.mismatches {
                bad.push_str(&format!(
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                    escape_text(&wl.name),
                    escape_text(m.kind.label()),
                    escape_text(&m.file),
                    m.offset,
                    escape_text(&m.during),
                    escape_text(&m.expected),
                    escape_text(&m.found)
                ));
            }
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut o = format!(
        "<section id=\"verify\" style=\"margin:1em\"><h2>Data verification</h2>\n<ul>\n{rows}</ul>\n"
    );
    if !bad.is_empty() {
        o.push_str("<table><tr><th>workload</th><th>kind</th><th>file</th><th>offset</th><th>during</th><th>expected</th><th>found</th></tr>\n");
        o.push_str(&bad);
        o.push_str("</table>\n");
    }
    o.push_str("</section>\n");
    o
}

#[derive(Serialize, TS)]
pub(crate) struct CompareRunData {
    iteration: u32,
    /// The measured phase's length: the run's own time axis.
    wall_ns: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
    series: Option<TimeSeries>,
    latency: Option<LatencyHistView>,
    sizes: Option<SizeHistView>,
}

#[derive(Serialize, TS)]
pub(crate) struct CompareWorkload {
    name: String,
    /// Per run: its own bin width (a round width giving at most DEFAULT_BINS bins).
    bin_ns: Vec<Option<u64>>,
    /// Per run (in the comparison's order): its median iteration's charts, if it has the workload.
    runs: Vec<Option<CompareRunData>>,
}

#[derive(Serialize, TS)]
pub(crate) struct ComparePage<'a> {
    #[ts(type = "\"compare\"")]
    kind: &'static str,
    title: String,
    generated_by: String,
    kinds: Vec<&'static str>,
    comparison: &'a Comparison,
    workloads: Vec<CompareWorkload>,
}

/// The comparison page: Table 2, then per workload each run's throughput over time,
/// latency and transfer-size histograms overlaid (median iterations).
pub fn compare_html(runs: &[LoadedRun], comparison: &Comparison) -> Vec<u8> {
    let mut jobs = Vec::new();
    let mut bins = Vec::new();
    for (w, row) in comparison.workloads.iter().enumerate() {
        let medians: Vec<_> = runs
            .iter()
            .map(|r| {
                r.result
                    .workloads
                    .iter()
                    .find(|x| x.name == row.name)
                    .and_then(|x| x.median_iteration())
            })
            .collect();
        // Each run on its own time grid (its measured phase in DEFAULT_BINS bins): runs
        // of 138 ms and 18.6 s are drawn over the same width, each against its own time.
        let own = |m: &naslab_results::IterationResult| round_bin_ns(m.wall_ns);
        bins.push(medians.iter().map(|m| m.map(own)).collect::<Vec<_>>());
        for (r, m) in medians.into_iter().enumerate() {
            if let Some(m) = m {
                jobs.push((w, r, m, own(m)));
            }
        }
    }
    let loaded = parallel_map(jobs, |(w, r, it, bin_ns)| {
        let run = &runs[r];
        let path = run.records_path(it.records.as_deref());
        let src = IterationSource {
            records: path.as_deref(),
            records_name: it.records.as_deref(),
            clock_start_ns: it.clock_start_ns,
            wall_ns: it.wall_ns,
            blob_prefix: format!("c{w}-r{r}"),
        };
        let load = LoadOptions {
            max_rows: 0,
            access_points: 0,
            bin_ns: Some(bin_ns),
            latency_percentiles: false,
            clients: 0,
        };
        let (data, _) = load_iteration(&src, load);
        (
            w,
            r,
            CompareRunData {
                iteration: it.iteration,
                wall_ns: it.wall_ns,
                notes: data.notes,
                series: data.series,
                latency: data.latency,
                sizes: data.sizes,
            },
        )
    });
    let mut workloads: Vec<CompareWorkload> = comparison
        .workloads
        .iter()
        .zip(bins)
        .map(|(row, bin_ns)| CompareWorkload {
            name: row.name.clone(),
            bin_ns,
            runs: runs.iter().map(|_| None).collect(),
        })
        .collect();
    for (w, r, d) in loaded {
        workloads[w].runs[r] = Some(d);
    }
    let page = ComparePage {
        kind: "compare",
        title: format!("naslab comparison of {} runs", runs.len()),
        generated_by: format!("naslab {}", env!("CARGO_PKG_VERSION")),
        kinds: OpKind::ALL.iter().map(|k| k.name()).collect(),
        comparison,
        workloads,
    };
    assemble(&page.title, &script_json(&page), &[])
}

fn escape_text(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The page around the data: styles, the data elements and the bundle, all inline.
fn assemble(title: &str, json: &str, blobs: &[(String, String)]) -> Vec<u8> {
    let size = BUNDLE_JS.len()
        + BUNDLE_CSS.len()
        + json.len()
        + blobs.iter().map(|(_, b)| b.len() + 100).sum::<usize>()
        + 2048;
    let mut o = String::with_capacity(size);
    o.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // The report must work offline and must not phone home: forbid every fetch.
    o.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n");
    o.push_str("<title>");
    o.push_str(&escape_text(title));
    o.push_str("</title>\n<style>\n");
    o.push_str(&inline_code(BUNDLE_CSS));
    o.push_str("\n</style>\n</head>\n<body>\n<div id=\"app\"><p class=\"loading\">Loading the report…</p><noscript>This report needs JavaScript (it runs offline, inside this file).</noscript></div>\n");
    o.push_str("<script type=\"application/json\" id=\"naslab-data\">");
    o.push_str(json);
    o.push_str("</script>\n");
    for (id, text) in blobs {
        o.push_str("<script type=\"application/octet-stream\" id=\"");
        o.push_str(&escape_text(id));
        o.push_str("\">");
        o.push_str(text);
        o.push_str("</script>\n");
    }
    o.push_str("<script>\n");
    o.push_str(&inline_code(BUNDLE_JS));
    o.push_str("\n</script>\n</body>\n</html>\n");
    o.into_bytes()
}

/// Writes `bytes` to `path` through a temporary file beside it, so a reader never sees
/// half a report.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), crate::ReportError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let io = |what, path: &Path| {
        let path = path.to_path_buf();
        move |source| crate::ReportError::Io { what, path, source }
    };
    std::fs::write(&tmp, bytes).map_err(io("write", &tmp))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        crate::ReportError::Io {
            what: "write",
            path: path.to_path_buf(),
            source: e,
        }
    })
}
