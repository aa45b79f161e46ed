use std::collections::BTreeMap;

use std::sync::Arc;

use crate::multi::Coordinator;

use anyhow::bail;
use naslab_results::CacheMode;
use naslab_results::views::ingest::{IngestRow, ingest_table};
use naslab_workload::synthetic::ingest::Ingest;

use super::run::{View, compile_traces, context, execute_with};
use crate::args::IngestArgs;

/// `naslab ingest BLOCKSIZE BLOCKSPERFILE TOTALFILES FILESPERDIR`: the ingest and its table.
pub fn ingest(mut args: IngestArgs, coord: &Arc<dyn Coordinator>) -> anyhow::Result<()> {
    if args.block_size == 0 || args.blocks_per_file == 0 || args.total_files == 0 {
        bail!("BLOCKSIZE, BLOCKSPERFILE and TOTALFILES must be at least 1");
    }
    let per_dir: Vec<u64> = if args.sweep.is_empty() {
        args.files_per_dir.into_iter().collect()
    } else {
        args.sweep.clone()
    };
    if per_dir.contains(&0) {
        bail!("FILESPERDIR must be at least 1");
    }
    if args.iterations == 0 {
        bail!("--iterations must be at least 1");
    }
    if args.opts.batch == 1 {
        args.opts.batch = args.iterations;
    }
    let specs: Vec<Ingest> = per_dir
        .iter()
        .map(|&files_per_dir| Ingest {
            block_size: args.block_size,
            blocks_per_file: args.blocks_per_file,
            total_files: args.total_files,
            files_per_dir,
        })
        .collect();
    let mut extra = BTreeMap::new();
    extra.insert(
        "ingest".to_string(),
        format!(
            "{} {} {}",
            args.block_size, args.blocks_per_file, args.total_files
        ),
    );
    let ctx = context(&args.opts, coord, CacheMode::Drop, extra)?;
    let workloads = compile_traces(&ctx, specs.iter().map(Ingest::generate).collect())?;
    let rows: Vec<IngestRow> = specs
        .iter()
        .map(|s| IngestRow {
            workload: s.name(),
            block_size: s.block_size,
            block_count: s.blocks_per_file * s.total_files,
            files_per_dir: s.files_per_dir,
        })
        .collect();
    let view = View {
        file_name: "ingest.txt",
        render: Box::new(move |run, _| Ok(ingest_table(run, &rows))),
    };
    execute_with(ctx, workloads, Some(view))
}
