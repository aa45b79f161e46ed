//! The network path of a URL target, for run.json: the round trip naslab measures
//! itself before the run, and the link a lab emulates in front of the server (given by
//! `lab matrix`, or found in the state of the lab under `--lab-dir` whose URL the
//! target is).

use std::path::Path;

use naslab_results::{EmulatedLink, LinkSettings};
use naslab_targets::probe;
use naslab_targets::url::{RemoteUrl, is_remote};

use crate::args::RunOpts;

/// The path to the target, or `None` when the target is no URL.
pub(super) fn link(opts: &RunOpts) -> Option<LinkSettings> {
    let target = opts.target.as_ref()?.to_str()?;
    if !is_remote(target) {
        return None;
    }
    let url: RemoteUrl = target.parse().ok()?;
    let emulated = opts
        .lab_link
        .clone()
        .or_else(|| lab_link(&opts.lab_dir, target));
    let probe = match measured(&url, opts) {
        Ok(p) => {
            eprintln!("round trip to {}: {}", url.address(), p.summary());
            Some(p)
        }
        Err(e) => {
            eprintln!("warning: {e}; run.json records no measured round trip");
            None
        }
    };
    if let Some(e) = &emulated {
        eprintln!("emulated link: {}", e.summary());
    }
    Some(LinkSettings { emulated, probe })
}

/// Tries the probe to `PROBE_TRIES` times, each on a new connection: a server or relay
/// busy with other clients' set-up can drop one connection, which says nothing about
/// the path. Every failure but the last is said as a note.
fn measured(
    url: &RemoteUrl,
    opts: &RunOpts,
) -> Result<naslab_results::RttProbe, probe::ProbeError> {
    let mut tries = 1;
    loop {
        match probe::rtt(url, probe::SAMPLES, opts.io_timeout.as_std()) {
            Err(e) if tries < PROBE_TRIES => {
                eprintln!("note: {e}; trying again ({} of {PROBE_TRIES})", tries + 1);
                tries += 1;
            }
            done => return done,
        }
    }
}

/// How many times the round trip is tried before the run goes on without it.
const PROBE_TRIES: u32 = 3;

/// Labs are Linux's: on other systems none is up.
#[cfg(not(target_os = "linux"))]
fn lab_link(_base: &Path, _target: &str) -> Option<EmulatedLink> {
    None
}

/// The link of the lab under `base` whose URL is `target`, or whose client's own URL
/// it is (`lab up --client-links`), if one is up.
#[cfg(target_os = "linux")]
fn lab_link(base: &Path, target: &str) -> Option<EmulatedLink> {
    naslab_lab::status(base).ok()?.into_iter().find_map(|l| {
        if l.state.url == target {
            return l.state.link.map(|k| k.link);
        }
        l.state
            .client_links
            .into_iter()
            .find(|c| c.url == target)
            .and_then(|c| c.link)
            .map(|k| k.link)
    })
}
