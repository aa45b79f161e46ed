use anyhow::Context;
use naslab_engine::backend::url::{is_remote, ClientOptions};
use naslab_engine::backend::TargetRequest;

use crate::args::CleanArgs;

/// `naslab clean`: removes TARGET/naslab, and only if naslab made it: on a directory, or
/// over SMB or NFS on a share (the run's lock in it is taken first, so a share in use by
/// another run is refused).
pub fn clean(args: CleanArgs) -> anyhow::Result<()> {
    let remote = args.target.to_str().is_some_and(is_remote);
    let root = format!(
        "{}/{}",
        args.target.display().to_string().trim_end_matches('/'),
        naslab_engine::sandbox::ROOT_NAME
    );
    if !remote && std::fs::symlink_metadata(&root).is_err() {
        eprintln!("nothing to clean: '{root}' does not exist");
        return Ok(());
    }
    let request = TargetRequest {
        target: Some(&args.target),
        null: false,
        client_dir: None,
        join: false,
        client: ClientOptions::default(),
        profile: Default::default(),
    };
    let opened = naslab_engine::backend::open(&request, &crate::cmd::protocol::smb_password)
        .with_context(|| format!("cannot clean '{root}'"))?;
    opened
        .target
        .remove_all()
        .map_err(|e| anyhow::anyhow!("cannot clean '{root}': {e}"))?;
    eprintln!("removed '{root}'");
    Ok(())
}
