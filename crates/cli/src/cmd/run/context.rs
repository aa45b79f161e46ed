//! The options every workload command shares, checked and turned into a
//! [`RunContext`]: cache mode, pacing, time limit, data, the opened target and the
//! run directory.

use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::bail;
use naslab_engine::{DataMode, DataSpec, ReplayOptions};
use naslab_results::{CacheMode, RunOptions};

use super::RunContext;
use super::run_dir::make_dirs;
use super::target::open_target;
use crate::args::{CacheArg, RunOpts};
use crate::multi::Coordinator;

/// The options with this client's own target in `--target`, when the job gave each
/// client one (`--client-target`, once per client in rank order).
fn own_target<'a>(
    opts: &'a RunOpts,
    coord: &dyn Coordinator,
) -> anyhow::Result<std::borrow::Cow<'a, RunOpts>> {
    if opts.client_targets.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(opts));
    }
    if opts.target.is_some() {
        bail!("give --target (every client's) or --client-target (one per client), not both");
    }
    let Some((rank, size)) = coord.rank_and_size() else {
        bail!(
            "--client-target gives each client of a multi-client job its own target; start naslab (built with --features mpi) under mpirun, or give --target"
        );
    };
    if opts.client_targets.len() != size as usize {
        bail!(
            "{} --client-target for a job of {size} clients: give one per client, in rank order",
            opts.client_targets.len()
        );
    }
    let mut own = opts.clone();
    own.target = Some(opts.client_targets[rank as usize].clone());
    own.client_targets.clear();
    Ok(std::borrow::Cow::Owned(own))
}

/// Checks the options and the target and makes the run directory. `default_cache` is
/// the command's cache mode when `--cache` is not given; `coord` decides what differs in
/// a multi-client job.
pub fn context(
    opts: &RunOpts,
    coord: &Arc<dyn Coordinator>,
    default_cache: CacheMode,
    extra: BTreeMap<String, String>,
) -> anyhow::Result<RunContext> {
    let opts = &own_target(opts, coord.as_ref())?;
    let cache = cache_mode(opts, default_cache);
    let pacing = opts.pace;
    if opts.batch == 0 {
        bail!("--batch must be at least 1");
    }
    let time_limit_ns = opts.time_limit.as_ref().map(|t| t.ns);
    #[cfg(not(target_os = "linux"))]
    {
        if opts.drop_all_caches {
            bail!(
                "--drop-all-caches is not available on Windows: it writes Linux's /proc/sys/vm/drop_caches; use --cache drop (each prepared file written back and reopened unbuffered) or --cache direct"
            );
        }
        if opts.realtime {
            bail!(
                "--realtime is not available on Windows: it pins stream threads and asks for SCHED_FIFO through Linux's scheduler; leave it out"
            );
        }
    }
    if opts.drop_all_caches {
        if cache != CacheMode::Drop {
            bail!("--drop-all-caches goes with --cache drop, not with --cache keep or direct");
        }
        if !naslab_host::process::is_root() {
            bail!(
                "--drop-all-caches needs root (it writes /proc/sys/vm/drop_caches); run as root or leave it out"
            );
        }
    }
    if opts.label.is_empty() || opts.label.contains('/') || opts.label.starts_with('.') {
        bail!(
            "--label '{}' must be a plain name (no '/', not starting with '.')",
            opts.label
        );
    }
    let data = data_spec(opts)?;
    if opts.shared_files {
        if !coord.is_job() {
            bail!(
                "--shared-files shares one file set among the clients of a multi-client job; start naslab (built with --features mpi) under mpirun, or leave it out"
            );
        }
        if data.verify {
            bail!(
                "--verify cannot check a file set that other clients write too; leave out --verify or --shared-files"
            );
        }
    }
    let opened = open_target(opts, coord.as_ref())?;
    let link = super::link::link(opts);
    let device = crate::cmd::device::device(&opts.device)?;
    // A signal while the directories are made waits until they are noted for removal.
    let (run_dir, made_dirs) = crate::interrupt::held_back(|| {
        let (run_dir, made_dirs) = make_dirs(opts, coord.as_ref())?;
        crate::interrupt::remove_on_exit(&run_dir, &made_dirs);
        anyhow::Ok((run_dir, made_dirs))
    })?;
    let options = RunOptions {
        pacing: pacing.to_string(),
        cache,
        records: !opts.no_records,
        iterations: opts.batch,
        data: data.mode.to_string(),
        verify: data.verify,
        records_after_phase: opts.records_after_phase,
        time_limit_ns,
        drop_all_caches: opts.drop_all_caches,
        shared_files: opts.shared_files,
        realtime: opts.realtime,
        no_ordering: opts.no_ordering,
        client_profile: opts.client_profile.map(|p| p.name().to_string()),
        null_backend: opened.null_settings.clone(),
        protocol: opened.opened.settings.clone(),
        link,
        extra,
    };
    let opened = opened.opened;
    Ok(RunContext {
        target: opened.target,
        target_info: opened.info,
        run_dir,
        options,
        replay: ReplayOptions {
            pacing,
            stop_on_error: opts.stop_on_error,
            unordered: opts.no_ordering,
            time_limit_ns,
            cancel: Some(&crate::interrupt::STOP),
            data,
            realtime: opts.realtime,
            records_after_phase: opts.records_after_phase,
            start_gate: coord.start_gate(opts.shared_files),
            ..ReplayOptions::default()
        },
        cache,
        drop_all_caches: opts.drop_all_caches,
        json: opts.json,
        made_dirs,
        label: opts.label.clone(),
        device,
        tolerate_errors: opts.tolerate_errors,
        results_base: opts.out.join(&opts.label),
        coord: coord.clone(),
    })
}

/// `--cache` (or `--direct`), else the command's own default.
fn cache_mode(opts: &RunOpts, default_cache: CacheMode) -> CacheMode {
    if opts.direct {
        return CacheMode::Direct;
    }
    match opts.cache {
        Some(CacheArg::Drop) => CacheMode::Drop,
        Some(CacheArg::Keep) => CacheMode::Keep,
        Some(CacheArg::Direct) => CacheMode::Direct,
        None => default_cache,
    }
}

/// `--data` and `--verify`, with a seed of this run's own so its blocks are unlike any
/// other run's.
fn data_spec(opts: &RunOpts) -> anyhow::Result<DataSpec> {
    let mode = opts.data;
    if opts.verify && matches!(mode, DataMode::Zero | DataMode::Dedupe(_)) {
        bail!(
            "--verify writes a header into every block, so blocks are neither zero nor duplicates: use it with --data random or compress:PCT"
        );
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
