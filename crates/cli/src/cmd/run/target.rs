//! Opening the run's target from `--target`, `--backend` and the protocol flags, and
//! keeping the results out of naslab's directory on it.

use std::path::{Component, Path, PathBuf};

use anyhow::bail;

use naslab_results::{NullSettings, NullStall};
use naslab_targets::url::ClientOptions;
use naslab_targets::{OpenedTarget, TargetRequest};

use crate::args::{BackendName, RunOpts};
use crate::multi::Coordinator;

/// The opened target, and the null backend's settings as the results record them.
pub(super) struct Opened {
    pub opened: OpenedTarget,
    pub null_settings: Option<NullSettings>,
}

/// Opens the target the options name (a multi-client run's client in its own
/// directory); the protocol client's settings come back in the opened target.
pub(super) fn open_target(opts: &RunOpts, coord: &dyn Coordinator) -> anyhow::Result<Opened> {
    // With --shared-files every client works in <target>/naslab, which client 0 takes
    // and the others join.
    let client_dir = coord.client_dir().filter(|_| !opts.shared_files);
    let null = opts.backend == BackendName::Null;
    let null_service_ns = match &opts.null_service_time {
        Some(_) if !null => bail!("--null-service-time is for --backend null only"),
        Some(d) => d.ns,
        None => 0,
    };
    let null_stall = match &opts.null_stall {
        Some(_) if !null => bail!("--null-stall is for --backend null only"),
        Some((d, n)) => Some((*n, d.ns)),
        None => None,
    };
    let null_settings = null.then(|| NullSettings {
        service_time_ns: null_service_ns,
        stall: null_stall.map(|(op, extra_ns)| NullStall { op, extra_ns }),
    });
    let request = TargetRequest {
        target: opts.target.as_deref(),
        null,
        null_service_ns,
        null_stall,
        client_dir: client_dir.as_deref(),
        join: opts.shared_files && coord.rank_and_size().is_some_and(|(r, _)| r != 0),
        client: ClientOptions {
            io_timeout: opts.io_timeout.as_std(),
            smb_encrypt: opts.smb_encrypt,
            smb_in_flight: opts.smb_in_flight,
            retrans_timeout: opts.retrans_timeout.as_ref().map(|d| d.as_std()),
        },
        profile: opts.client_profile.unwrap_or_default(),
    };
    if request.join {
        coord.await_shared_target()?;
    }
    let password = |url: &naslab_targets::url::RemoteUrl| match &opts.lab_password {
        Some(p) => Ok(p.clone()),
        None => crate::cmd::protocol::smb_password(url),
    };
    let opened = naslab_targets::open(&request, &password)?;
    if opts.shared_files {
        coord.shared_target_taken();
    }
    #[cfg(target_os = "linux")]
    if let Some(root) = opened.target.local_root() {
        refuse_out_inside(&opts.out, root.root())?;
    }
    #[cfg(not(target_os = "linux"))]
    if let Some(root) = opened.target.local_dir() {
        refuse_out_inside(&opts.out, &root)?;
    }
    Ok(Opened {
        opened,
        null_settings,
    })
}

/// Where `path` leads once the directories it names are made: resolved one component
/// at a time as the kernel will, so a link is followed where it exists and a `..` climbs
/// from where the components before it led (from a directory yet to be made too).
fn resolved(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut cur = PathBuf::from("/");
    for comp in abs.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            // `cur` never holds a link, so its parent is the kernel's `..`.
            Component::ParentDir => {
                cur.pop();
            }
            Component::Normal(name) => {
                cur.push(name);
                if let Ok(real) = cur.canonicalize() {
                    cur = real;
                }
            }
        }
    }
    cur
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
