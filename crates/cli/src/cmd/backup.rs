use std::collections::BTreeMap;

use std::sync::Arc;

use crate::multi::Coordinator;

use anyhow::bail;
use naslab_results::CacheMode;
use naslab_results::views::backup::backup_table;
use naslab_workload::synthetic::backup::Backup;

use super::run::{View, compile_traces, context, execute_with};
use crate::args::BackupArgs;

/// `naslab backup`: files written by many connections at once, then backed up.
pub fn backup(args: BackupArgs, coord: &Arc<dyn Coordinator>) -> anyhow::Result<()> {
    let spec = Backup {
        writers: args.writers,
        files_per_writer: args.files,
        file_size: args.size,
        write_record: args.record,
        read_block: args.block,
    };
    if spec.writers == 0
        || spec.files_per_writer == 0
        || spec.file_size == 0
        || spec.write_record == 0
        || spec.read_block == 0
    {
        bail!("--writers, --files, --size, --record and --block must be at least 1");
    }
    let mut extra = BTreeMap::new();
    extra.insert(
        "backup".to_string(),
        format!(
            "{} writers x {} files of {} B",
            spec.writers, spec.files_per_writer, spec.file_size
        ),
    );
    let ctx = context(&args.opts, coord, CacheMode::Drop, extra)?;
    let workloads = compile_traces(&ctx, vec![spec.generate()])?;
    let view = View {
        file_name: "backup.txt",
        render: Box::new(|run, _| Ok(backup_table(run))),
    };
    execute_with(ctx, workloads, Some(view))
}
