use anyhow::Context;
use naslab_targets::TargetRequest;
use naslab_targets::url::is_remote;

use crate::args::CleanArgs;

/// `naslab clean`: removes TARGET/naslab, and only if naslab made it: on a directory, or
/// over SMB or NFS on a share (the run's lock in it is taken first, so a share in use by
/// another run is refused).
pub fn clean(args: CleanArgs) -> anyhow::Result<()> {
    let target = args.target.display().to_string();
    let remote = is_remote(&target);
    let name = naslab_engine::marker::ROOT_NAME;
    // What is removed, as the user would name it: a path, or the directory on a share
    // (whose URL may end in a query).
    let root = if remote {
        format!("{name}/ on {target}")
    } else {
        format!("'{}/{name}'", target.trim_end_matches('/'))
    };
    // A directory is looked at first, so that a target with nothing of naslab's (a
    // read-only one too) is not written to; a share can only be looked at by opening it.
    if !remote && std::fs::symlink_metadata(args.target.join(name)).is_err() {
        eprintln!("nothing to clean: {root} does not exist");
        return Ok(());
    }
    let request = TargetRequest::plain(Some(&args.target));
    let opened = naslab_targets::open(&request, &crate::cmd::protocol::smb_password)
        .with_context(|| format!("cannot clean {root}"))?;
    let was_there = opened
        .target
        .remove_all()
        .map_err(|e| anyhow::anyhow!("cannot clean {root}: {e}"))?;
    if was_there {
        eprintln!("removed {root}");
    } else {
        eprintln!("nothing to clean: {root} does not exist");
    }
    Ok(())
}
