use std::collections::BTreeMap;

use anyhow::bail;
use naslab_results::views::fileserver::fileserver_table;
use naslab_results::CacheMode;
use naslab_workload::synthetic::fileserver::FileServer;

use super::run::{compile_traces, context, execute_with, View};
use crate::args::{FileServerArgs, FileServerPhase};

/// `naslab fileserver`: many connections writing then reading their own files.
pub fn fileserver(args: FileServerArgs) -> anyhow::Result<()> {
    let record = args.record;
    if args.connections == 0 || args.files == 0 || record == 0 {
        bail!("--connections, --files and --record must be at least 1");
    }
    let spec = FileServer {
        connections: args.connections,
        files_per_connection: args.files,
        record,
    };
    let mut traces = Vec::new();
    if args.phase != FileServerPhase::Read {
        traces.push(spec.write_phase());
    }
    if args.phase != FileServerPhase::Write {
        traces.push(spec.read_phase());
    }
    let mut extra = BTreeMap::new();
    extra.insert(
        "fileserver".to_string(),
        format!(
            "{} connections x {} files, {} B records",
            args.connections, args.files, record
        ),
    );
    let ctx = context(&args.opts, CacheMode::Drop, extra)?;
    let workloads = compile_traces(&ctx, traces)?;
    let view = View {
        file_name: "fileserver.txt",
        render: Box::new(|run, _| Ok(fileserver_table(run))),
    };
    execute_with(ctx, workloads, Some(view))
}
