use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, Context};
use naslab_engine::environment::{environment, mount_of};
use naslab_engine::{
    compile, records_from_reader, records_from_trace, run_iteration, IterationSpec, NullTarget,
    Pacing, Plan, PosixTarget, Progress, ReplayOptions, Sandbox, Target,
};
use naslab_results::export::{Exporter, Json, Table};
use naslab_results::{
    CacheMode, RunOptions, RunResult, TargetInfo, Warning, WorkloadResult, SCHEMA_VERSION,
};
use naslab_trace::open_trace;

use naslab_workload::GenParams;

use super::sources::{build, gen_params, resolve, resolve_suite, trace_dir, Source};
use crate::args::{BackendName, CacheArg, RunArgs};
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
    pub sandbox: Option<Sandbox>,
    pub target_info: TargetInfo,
    pub run_dir: PathBuf,
    pub options: RunOptions,
    pub replay: ReplayOptions,
    pub cache: CacheMode,
    pub drop_all_caches: bool,
    pub json: bool,
}

/// `naslab run TRACE...`.
pub fn run(args: RunArgs) -> anyhow::Result<()> {
    let cache = if args.direct {
        CacheMode::Direct
    } else {
        match args.cache {
            CacheArg::Drop => CacheMode::Drop,
            CacheArg::Keep => CacheMode::Keep,
            CacheArg::Direct => CacheMode::Direct,
        }
    };
    let pacing: Pacing = args.pace.parse().map_err(anyhow::Error::msg)?;
    if args.batch == 0 {
        bail!("--batch must be at least 1");
    }
    let dir = trace_dir(&args.trace_dir);
    let mut sources: Vec<Source> = args.traces.iter().cloned().map(Source::File).collect();
    if let Some(s) = &args.suite {
        sources.extend(resolve_suite(s)?);
    }
    for name in &args.workload {
        sources.push(resolve(name, dir.as_deref())?);
    }
    if sources.is_empty() {
        bail!("nothing to run: give trace files, --suite naspt or --workload NAME (see `naslab list`)");
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
    if args.drop_all_caches {
        if cache != CacheMode::Drop {
            bail!("--drop-all-caches goes with --cache drop (the default), not with --cache keep or direct");
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            bail!("--drop-all-caches needs root (it writes /proc/sys/vm/drop_caches); run as root or leave it out");
        }
        extra.insert("drop_all_caches".to_string(), "true".to_string());
    }
    let ctx = context(&args, pacing, cache, args.batch, extra)?;
    let compiled = compile_all(&sources, &params, &ctx.run_dir);
    match compiled {
        Ok(workloads) => execute(ctx, workloads),
        Err(e) => {
            // Nothing ran: leave no empty run directory behind.
            let _ = std::fs::remove_dir(&ctx.run_dir);
            Err(e)
        }
    }
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
                let label = format!(
                    "{name} (naspt, seed {}, scale {})",
                    params.seed, params.scale
                );
                compile(Path::new(&label), records_from_trace(&trace), spool)?
            }
        };
        out.push(Workload { plan });
    }
    Ok(out)
}

/// Checks the target and makes the run directory.
pub fn context(
    args: &RunArgs,
    pacing: Pacing,
    cache: CacheMode,
    iterations: u32,
    extra: BTreeMap<String, String>,
) -> anyhow::Result<RunContext> {
    if args.label.is_empty() || args.label.contains('/') || args.label.starts_with('.') {
        bail!(
            "--label '{}' must be a plain name (no '/', not starting with '.')",
            args.label
        );
    }
    let (target, sandbox, target_info): (Box<dyn Target>, Option<Sandbox>, TargetInfo) =
        match args.backend {
            BackendName::Posix => {
                let dir = args.target.as_ref().context(
                "--target DIR is needed: the directory (a mounted share or a local disk) to run in",
            )?;
                let sandbox = Sandbox::open(dir)?;
                let (fs_type, source) = mount_of(dir);
                let info = TargetInfo {
                    path: dir.display().to_string(),
                    backend: "posix".into(),
                    fs_type,
                    source,
                };
                (
                    Box::new(PosixTarget::new(sandbox.root())),
                    Some(sandbox),
                    info,
                )
            }
            BackendName::Null => {
                let info = TargetInfo {
                    path: args
                        .target
                        .as_ref()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    backend: "null".into(),
                    ..TargetInfo::default()
                };
                (Box::new(NullTarget), None, info)
            }
        };
    let run_dir = make_run_dir(&args.out.join(&args.label))?;
    let options = RunOptions {
        pacing: pacing.to_string(),
        cache,
        records: !args.no_records,
        iterations,
        extra,
    };
    Ok(RunContext {
        target,
        sandbox,
        target_info,
        run_dir,
        options,
        replay: ReplayOptions {
            pacing,
            stop_on_error: args.stop_on_error,
            ..ReplayOptions::default()
        },
        cache,
        drop_all_caches: args.drop_all_caches,
        json: args.json,
    })
}

fn make_run_dir(base: &Path) -> anyhow::Result<PathBuf> {
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

/// Runs every workload's iterations, writing the exports after each, and prints the table.
pub fn execute(ctx: RunContext, workloads: Vec<Workload>) -> anyhow::Result<()> {
    let mut names = std::collections::HashSet::new();
    for w in &workloads {
        if !names.insert(w.plan.header.workload.clone()) {
            bail!(
                "two traces name the same workload '{}'; each workload runs in its own directory, so give them different names",
                w.plan.header.workload
            );
        }
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
    };
    let iterations = ctx.options.iterations.max(1);
    let mut failure = None;
    'workloads: for w in &workloads {
        let plan = &w.plan;
        let name = plan.header.workload.clone();
        if ctx.cache == CacheMode::Keep
            && ctx.target_info.backend != "null"
            && plan.prepared_bytes() + plan.planned_write_bytes < env.memory_bytes
        {
            run.warnings.push(Warning::FitsInClientCache {
                workload: name.clone(),
                data_bytes: plan.prepared_bytes() + plan.planned_write_bytes,
                memory_bytes: env.memory_bytes,
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
                sandbox: ctx.sandbox.as_ref(),
                cache: ctx.cache,
                replay: ctx.replay,
                spool_dir: &ctx.run_dir,
                records_path,
                progress: &progress,
                drop_all_caches: ctx.drop_all_caches,
            };
            let outcome = run_iteration(&spec, i);
            drop(display);
            match outcome {
                Ok(r) => {
                    let aborted = r.aborted.clone();
                    results.push(r);
                    if let Some(why) = aborted {
                        failure = Some(format!("{name} stopped early: {}:{why}", plan.source));
                        run.workloads.push(WorkloadResult::from_iterations(
                            name.clone(),
                            plan.source.clone(),
                            std::mem::take(&mut results),
                        ));
                        break 'workloads;
                    }
                }
                Err(e) => {
                    failure = Some(format!("{name}: {e}"));
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
    run.aborted = failure.clone();
    write_exports(&ctx.run_dir, &run)?;
    let shown: &dyn Exporter = if ctx.json { &Json } else { &Table };
    print!("{}", String::from_utf8_lossy(&shown.export(&run)));
    eprintln!("results: {}", ctx.run_dir.display());
    match failure {
        Some(why) => bail!(
            "{why}\nthe results measured so far are in '{}'",
            ctx.run_dir.display()
        ),
        None => Ok(()),
    }
}
