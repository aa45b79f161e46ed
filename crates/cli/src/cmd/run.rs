use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use naslab_engine::backend::url::ClientOptions;
use naslab_engine::backend::TargetRequest;
use naslab_engine::environment::environment;
use naslab_engine::{
    compile, records_from_reader, records_from_trace, run_iteration, DataMode, DataSpec,
    IterationSpec, Pacing, Plan, Progress, ReplayOptions, Target,
};
use naslab_results::export::{Exporter, Json, Table};
use naslab_results::{
    CacheMode, Device, RunOptions, RunResult, TargetInfo, Warning, WorkloadResult, SCHEMA_VERSION,
};
use naslab_trace::{open_trace, Trace};

use naslab_workload::GenParams;

use super::sources::{
    build, builtin_suite, gen_params, pick_from_suite, resolve, trace_dir, Source,
};
use crate::args::{BackendName, CacheArg, RunArgs, RunOpts};
use crate::output::write_exports;
use crate::progress::Display;
use crate::timestamp::{compact_now, rfc3339_now};

/// A workload ready to run: its compiled plan and where it came from.
pub struct Workload {
    pub plan: Plan,
}

/// What a run needs besides its workloads.
pub struct RunContext {
    pub target: Box<dyn Target>,
    pub target_info: TargetInfo,
    pub run_dir: PathBuf,
    pub options: RunOptions,
    pub replay: ReplayOptions,
    pub cache: CacheMode,
    pub drop_all_caches: bool,
    pub json: bool,
    /// The results and label directories this run made, to remove again if nothing ran.
    pub made_dirs: Vec<PathBuf>,
    /// `--label`.
    pub label: String,
    /// The device and notes given on the command line.
    pub device: Device,
}

impl RunContext {
    /// Removes the run directory, and the directories made for it, when they are still
    /// empty: a run that never started leaves nothing behind.
    pub fn discard(&self) {
        let _ = std::fs::remove_dir(&self.run_dir);
        for d in self.made_dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// `naslab run TRACE...`.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let dir = trace_dir(&args.trace_dir);
    let mut sources: Vec<Source> = args.traces.iter().cloned().map(Source::File).collect();
    match &args.suite {
        // --workload with --suite picks from the suite.
        Some(s) => sources.extend(pick_from_suite(s, &args.workload)?),
        None => {
            for name in &args.workload {
                sources.push(resolve(name, dir.as_deref())?);
            }
        }
    }
    if sources.is_empty() {
        bail!("nothing to run: give trace files, --suite naspt|iometer or --workload NAME (see `naslab list`)");
    }
    let params = gen_params(&args.generate)?;
    let mut extra = BTreeMap::new();
    if sources.iter().any(|s| matches!(s, Source::Builtin(_))) {
        extra.insert("scale".to_string(), params.scale.to_string());
        extra.insert("seed".to_string(), params.seed.to_string());
    }
    if let Some(s) = &args.suite {
        extra.insert("suite".to_string(), s.clone());
    }
    let ctx = context(&args.opts, CacheMode::Drop, extra)?;
    match compile_all(&sources, &params, &ctx.run_dir) {
        Ok(workloads) => execute(ctx, workloads),
        Err(e) => {
            // Nothing ran: leave no empty run directory behind.
            ctx.discard();
            Err(e)
        }
    }
}

/// Compiles in-memory traces (a workload command's) into workloads; on failure removes
/// the still empty run directory.
pub fn compile_traces(ctx: &RunContext, traces: Vec<Trace>) -> anyhow::Result<Vec<Workload>> {
    let mut out = Vec::new();
    for trace in traces {
        let label = trace
            .header
            .generator
            .clone()
            .unwrap_or_else(|| trace.header.workload.clone());
        match compile(Path::new(&label), records_from_trace(&trace), &ctx.run_dir) {
            Ok(plan) => out.push(Workload { plan }),
            Err(e) => {
                ctx.discard();
                return Err(e.into());
            }
        }
    }
    Ok(out)
}

/// Compiles every workload before anything runs, so a bad one fails the run at once.
fn compile_all(
    sources: &[Source],
    params: &GenParams,
    spool: &Path,
) -> anyhow::Result<Vec<Workload>> {
    let mut out = Vec::new();
    for source in sources {
        let plan = match source {
            Source::File(path) => {
                let reader = open_trace(path)?;
                compile(path, records_from_reader(reader), spool)?
            }
            Source::Builtin(name) => {
                let trace = build(name, params)?;
                let suite = builtin_suite(name);
                let label = format!(
                    "{name} ({suite}, seed {}, scale {})",
                    params.seed, params.scale
                );
                compile(Path::new(&label), records_from_trace(&trace), spool)?
            }
        };
        out.push(Workload { plan });
    }
    Ok(out)
}

/// Refuses two workloads of the same name: each runs in its own directory.
fn check_unique(workloads: &[Workload]) -> anyhow::Result<()> {
    let mut names = std::collections::HashSet::new();
    for w in workloads {
        if !names.insert(w.plan.header.workload.clone()) {
            bail!(
                "two workloads are named '{}'; each workload runs in its own directory, so give them different names (a workload given twice, or a trace whose header names a built-in one)",
                w.plan.header.workload
            );
        }
    }
    Ok(())
}

/// Checks the options and the target and makes the run directory. `default_cache` is
/// the command's cache mode when `--cache` is not given.
pub fn context(
    opts: &RunOpts,
    default_cache: CacheMode,
    mut extra: BTreeMap<String, String>,
) -> anyhow::Result<RunContext> {
    let cache = if opts.direct {
        CacheMode::Direct
    } else {
        match opts.cache {
            Some(CacheArg::Drop) => CacheMode::Drop,
            Some(CacheArg::Keep) => CacheMode::Keep,
            Some(CacheArg::Direct) => CacheMode::Direct,
            None => default_cache,
        }
    };
    let pacing = opts.pace;
    if opts.batch == 0 {
        bail!("--batch must be at least 1");
    }
    let time_limit_ns = opts.time_limit.as_ref().map(|t| {
        extra.insert("time_limit".to_string(), t.to_string());
        t.ns
    });
    if opts.drop_all_caches {
        if cache != CacheMode::Drop {
            bail!("--drop-all-caches goes with --cache drop, not with --cache keep or direct");
        }
        if !naslab_layout::process::is_root() {
            bail!("--drop-all-caches needs root (it writes /proc/sys/vm/drop_caches); run as root or leave it out");
        }
        extra.insert("drop_all_caches".to_string(), "true".to_string());
    }
    if opts.label.is_empty() || opts.label.contains('/') || opts.label.starts_with('.') {
        bail!(
            "--label '{}' must be a plain name (no '/', not starting with '.')",
            opts.label
        );
    }
    let client_dir = crate::multi::client_dir();
    let request = TargetRequest {
        target: opts.target.as_deref(),
        null: opts.backend == BackendName::Null,
        client_dir: client_dir.as_deref(),
        client: ClientOptions {
            io_timeout: opts.io_timeout.as_std(),
            smb_encrypt: opts.smb_encrypt,
        },
        profile: opts.client_profile.unwrap_or_default(),
    };
    let opened = naslab_engine::backend::open(&request, &super::protocol::smb_password)?;
    if opened.protocol.is_some() {
        extra.insert("io_timeout".to_string(), opts.io_timeout.to_string());
    }
    if let Some(s) = opened.session {
        extra.insert("smb_encrypt".to_string(), opts.smb_encrypt.to_string());
        extra.insert("smb_session".to_string(), s);
    }
    if let Some(root) = opened.target.local_root() {
        refuse_out_inside(&opts.out, root.root())?;
    }
    if let Some(p) = opts.client_profile {
        extra.insert("client_profile".to_string(), p.name().to_string());
    }
    let data = data_spec(opts)?;
    let device = super::device::device(&opts.device)?;
    let label_dir = opts.out.join(&opts.label);
    let multi_dir = crate::multi::run_dir(opts)?;
    let made_dirs: Vec<PathBuf> = if multi_dir.is_some() {
        Vec::new()
    } else {
        [opts.out.clone(), label_dir.clone()]
            .into_iter()
            .filter(|d| !d.exists())
            .collect()
    };
    let run_dir = match multi_dir {
        Some(private) => private,
        None => make_run_dir(&label_dir)?,
    };
    let options = RunOptions {
        pacing: pacing.to_string(),
        cache,
        records: !opts.no_records,
        iterations: opts.batch,
        data: data.mode.to_string(),
        verify: data.verify,
        extra,
    };
    Ok(RunContext {
        target: opened.target,
        target_info: opened.info,
        run_dir,
        options,
        replay: ReplayOptions {
            pacing,
            stop_on_error: opts.stop_on_error,
            time_limit_ns,
            cancel: Some(&crate::interrupt::STOP),
            data,
            realtime: opts.realtime,
            start_gate: crate::multi::start_gate(),
            ..ReplayOptions::default()
        },
        cache,
        drop_all_caches: opts.drop_all_caches,
        json: opts.json,
        made_dirs,
        label: opts.label.clone(),
        device,
    })
}

/// `path` with symbolic links resolved as far as it exists (the rest appended as given).
fn resolved(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return abs,
        }
    }
}

/// Refuses a results directory inside naslab's directory on the target, which the next
/// run would empty.
fn refuse_out_inside(out: &Path, sandbox_root: &Path) -> anyhow::Result<()> {
    if resolved(out).starts_with(resolved(sandbox_root)) {
        bail!(
            "--out '{}' is inside '{}', which naslab empties on every run; keep results outside it (e.g. --out results)",
            out.display(),
            sandbox_root.display()
        );
    }
    Ok(())
}

/// With `--verify`: the mismatches found, as the run's failure.
fn verify_failure(run: &RunResult) -> Option<String> {
    let mut total = naslab_results::VerifySummary::default();
    for it in run.workloads.iter().flat_map(|w| &w.iterations) {
        if let Some(v) = &it.verify {
            total.add_counts(v);
        }
    }
    if total.total() == 0 {
        return None;
    }
    let kinds: Vec<String> = total
        .by_kind()
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(k, n)| format!("{n} {}", k.label()))
        .collect();
    Some(format!(
        "--verify found {} blocks that did not hold what was written ({}); run.json lists them with what was expected and found",
        total.total(),
        kinds.join(", ")
    ))
}

/// `--data` and `--verify`, with a seed of this run's own so its blocks are unlike any
/// other run's.
fn data_spec(opts: &RunOpts) -> anyhow::Result<DataSpec> {
    let mode = opts.data;
    if opts.verify && matches!(mode, DataMode::Zero | DataMode::Dedupe(_)) {
        bail!("--verify writes a header into every block, so blocks are neither zero nor duplicates: use it with --data random or compress:PCT");
    }
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    seed ^= (std::process::id() as u64).rotate_left(40);
    Ok(DataSpec {
        mode,
        seed,
        verify: opts.verify,
    })
}

pub(crate) fn make_run_dir(base: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(base)
        .with_context(|| format!("cannot create the results directory '{}'", base.display()))?;
    let stamp = compact_now();
    for n in 1..1000 {
        let name = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = base.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create '{}'", dir.display())),
        }
    }
    bail!(
        "cannot find a free run directory name under '{}'",
        base.display()
    )
}

/// Makes a view's text from the run's results and its directory.
pub type Render = dyn Fn(&RunResult, &Path) -> anyhow::Result<String>;

/// A workload family's own table (iozone's matrices, the file server's response times,
/// ...), made from the run's results and its directory (where the op records are).
pub struct View {
    /// The file it is written to in the run directory.
    pub file_name: &'static str,
    pub render: Box<Render>,
}

/// Runs every workload's iterations, writing the exports after each, and prints the table.
pub fn execute(ctx: RunContext, workloads: Vec<Workload>) -> anyhow::Result<()> {
    execute_with(ctx, workloads, None)
}

/// Like [`execute`], then prints `view` (also when the run stopped early) and writes it
/// into the run directory.
pub fn execute_with(
    ctx: RunContext,
    workloads: Vec<Workload>,
    view: Option<View>,
) -> anyhow::Result<()> {
    if let Err(e) = check_unique(&workloads) {
        // Nothing ran: leave no empty run directory behind.
        ctx.discard();
        return Err(e);
    }
    let env = environment();
    let mut run = RunResult {
        schema_version: SCHEMA_VERSION,
        naslab_version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: rfc3339_now(),
        environment: env.clone(),
        target: ctx.target_info.clone(),
        options: ctx.options.clone(),
        workloads: Vec::new(),
        warnings: Vec::new(),
        aborted: None,
        label: Some(ctx.label.clone()),
        device: ctx.device.clone(),
        multi_client: None,
    };
    let iterations = ctx.options.iterations.max(1);
    let mut failure = None;
    crate::interrupt::install();
    let stopped = || crate::interrupt::stopped_by().map(|sig| format!("stopped by {sig}"));
    'workloads: for w in &workloads {
        if let Some(why) = stopped() {
            failure = Some(why);
            break;
        }
        let plan = &w.plan;
        let name = plan.header.workload.clone();
        if ctx.cache == CacheMode::Keep
            && ctx.target.caps().moves_data
            && plan.direct_opens == 0
            && plan.prepared_bytes() + plan.planned_write_bytes < env.memory_bytes
        {
            run.warnings.push(Warning::FitsInClientCache {
                workload: name.clone(),
                data_bytes: plan.prepared_bytes() + plan.planned_write_bytes,
                memory_bytes: env.memory_bytes,
            });
        }
        if let Some((in_flight, max_read)) = plan.reads_in_flight_bound() {
            run.warnings.push(Warning::ReadsInFlightBound {
                workload: name.clone(),
                in_flight,
                queue_depth: plan.queue_depth(),
                max_read,
            });
        }
        if ctx.cache == CacheMode::Direct && plan.unaligned_ops > 0 {
            run.warnings.push(Warning::UnalignedDirect {
                workload: name.clone(),
                ops: plan.unaligned_ops,
            });
        }
        let mut results = Vec::new();
        for i in 1..=iterations {
            let records_path = ctx.options.records.then(|| {
                let file = if iterations > 1 {
                    format!("{name}.{i}.ops.jsonl.zst")
                } else {
                    format!("{name}.ops.jsonl.zst")
                };
                ctx.run_dir.join(file)
            });
            let progress = Arc::new(Progress::default());
            let display =
                Display::start(&name, progress.clone(), plan.prepared_bytes(), plan.ops());
            let spec = IterationSpec {
                plan,
                target: ctx.target.as_ref(),
                cache: ctx.cache,
                replay: ctx.replay,
                spool_dir: &ctx.run_dir,
                records_path,
                progress: &progress,
                drop_all_caches: ctx.drop_all_caches,
            };
            let outcome = crate::multi::after_iteration(run_iteration(&spec, i));
            drop(display);
            match outcome {
                Ok(mut r) => {
                    if let Some(why) = stopped() {
                        r.aborted.get_or_insert(why);
                    }
                    // Not measured: one FIEMAP per file, after the measured phase.
                    if let Some(sb) = ctx.target.local_root() {
                        r.layout = super::frag::iteration_layout(sb, plan);
                    }
                    let aborted = r.aborted.clone();
                    results.push(r);
                    if let Some(why) = aborted {
                        failure = Some(match stopped() {
                            Some(signal) => signal,
                            None => format!("{name} stopped early: {}:{why}", plan.source),
                        });
                        run.workloads.push(WorkloadResult::from_iterations(
                            name.clone(),
                            plan.source.clone(),
                            std::mem::take(&mut results),
                        ));
                        break 'workloads;
                    }
                }
                Err(e) => {
                    failure = Some(stopped().unwrap_or_else(|| format!("{name}: {e}")));
                    if !results.is_empty() {
                        run.workloads.push(WorkloadResult::from_iterations(
                            name.clone(),
                            plan.source.clone(),
                            std::mem::take(&mut results),
                        ));
                    }
                    break 'workloads;
                }
            }
        }
        if let Some(median) = results.iter().map(|r| r.pacing_lag.p99_ns).max() {
            if ctx.replay.pacing == Pacing::Original && median > 1_000_000 {
                run.warnings.push(Warning::PacingLag {
                    workload: name.clone(),
                    p99_ns: median,
                });
            }
        }
        run.workloads.push(WorkloadResult::from_iterations(
            name,
            plan.source.clone(),
            results,
        ));
        write_exports(&ctx.run_dir, &run)?;
    }
    if crate::multi::active() {
        // Rank 0 writes the job's one result from every client's.
        return crate::multi::finish(run, failure, &ctx.run_dir, ctx.json);
    }
    if run.workloads.is_empty() && stopped().is_none() {
        if let Some(why) = failure {
            // Nothing was measured: leave no empty run directory behind (the plans'
            // spools in it go first).
            drop(workloads);
            ctx.discard();
            bail!("{why}");
        }
    }
    run.aborted = failure.clone();
    let failure = failure.or_else(|| verify_failure(&run));
    write_exports(&ctx.run_dir, &run)?;
    // The HTML report is a view of what is already saved: if it cannot be written the
    // run still succeeded, and `naslab report` can make it later.
    if let Err(e) = naslab_report::write_run_report(&ctx.run_dir, &run) {
        eprintln!(
            "warning: report.html was not written ({e}); run `naslab report {}` to try again",
            ctx.run_dir.display()
        );
    }
    let shown: &dyn Exporter = if ctx.json { &Json } else { &Table };
    print!("{}", String::from_utf8_lossy(&shown.export(&run)));
    if let Some(v) = view {
        let text = (v.render)(&run, &ctx.run_dir)?;
        std::fs::write(ctx.run_dir.join(v.file_name), &text).with_context(|| {
            format!("cannot write '{}'", ctx.run_dir.join(v.file_name).display())
        })?;
        if ctx.json {
            eprint!("{text}");
        } else {
            print!("\n{text}");
        }
    }
    eprintln!("results: {}", ctx.run_dir.display());
    match failure {
        Some(why) => bail!(
            "{why}\nthe results measured so far are in '{}'",
            ctx.run_dir.display()
        ),
        None => Ok(()),
    }
}
