use anyhow::Context;
use naslab_engine::Sandbox;

use crate::args::CleanArgs;

/// `naslab clean`: removes TARGET/naslab, and only if naslab made it.
pub fn clean(args: CleanArgs) -> anyhow::Result<()> {
    let root = args.target.join(naslab_engine::sandbox::ROOT_NAME);
    if std::fs::symlink_metadata(&root).is_err() {
        eprintln!("nothing to clean: '{}' does not exist", root.display());
        return Ok(());
    }
    let sandbox = Sandbox::open(&args.target)?;
    sandbox
        .remove_all()
        .with_context(|| format!("cannot clean '{}'", root.display()))?;
    eprintln!("removed '{}'", root.display());
    Ok(())
}
