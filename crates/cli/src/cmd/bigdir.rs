use std::collections::BTreeMap;

use std::sync::Arc;

use crate::multi::Coordinator;

use anyhow::{Context, bail};
use naslab_results::CacheMode;
use naslab_results::views::bigdir::{bigdir_rows, bigdir_table};
use naslab_workload::synthetic::bigdir::{BigDir, Entries};

use super::run::{View, compile_traces, context, execute_with};
use crate::args::BigDirArgs;

/// `naslab bigdir N [K]`: the big-directory test and its table.
pub fn bigdir(args: BigDirArgs, coord: &Arc<dyn Coordinator>) -> anyhow::Result<()> {
    if args.entries == 0 || args.every == 0 {
        bail!("give at least one entry and a step of at least 1 (e.g. naslab bigdir 3000 500)");
    }
    let kind = if args.files {
        Entries::Files
    } else {
        Entries::Dirs
    };
    let spec = BigDir {
        entries: args.entries,
        every: args.every,
        kind,
    };
    let mut extra = BTreeMap::new();
    extra.insert(
        "bigdir".to_string(),
        format!("{} every {}", args.entries, args.every),
    );
    let ctx = context(&args.opts, coord, CacheMode::Drop, extra)?;
    if !ctx.options.records {
        bail!("the big-directory table is made from the op records; leave out --no-records");
    }
    let workloads = compile_traces(&ctx, vec![spec.generate()])?;
    let name = spec.name();
    let dirs = kind == Entries::Dirs;
    let view = View {
        file_name: "bigdir.txt",
        render: Box::new(move |run, dir| {
            let Some(records) = run
                .workloads
                .iter()
                .find(|w| w.name == name)
                .and_then(|w| w.median_iteration())
                .and_then(|it| it.records.clone())
            else {
                return Ok(String::new());
            };
            let rows = bigdir_rows(&dir.join(&records))
                .with_context(|| format!("cannot read the op records '{records}'"))?;
            Ok(bigdir_table(&rows, dirs))
        }),
    };
    execute_with(ctx, workloads, Some(view))
}
