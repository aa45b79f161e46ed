use std::collections::BTreeMap;

use std::sync::Arc;

use crate::multi::Coordinator;

use anyhow::bail;
use naslab_results::CacheMode;
use naslab_results::views::iozone::{IozoneCell, iozone_matrices, iozone_throughput};
use naslab_workload::synthetic::iozone::{cell, cell_name, records_for, sizes_between, throughput};

use super::run::{View, compile_traces, context, execute_with};
use crate::args::IozoneArgs;

/// The most cells a matrix may have (each is a workload with its own preparation).
const MAX_CELLS: usize = 5000;

/// `naslab iozone`: the matrix of file sizes by record sizes per test, or throughput mode.
pub fn iozone(args: IozoneArgs, coord: &Arc<dyn Coordinator>) -> anyhow::Result<()> {
    let tests = args.tests.clone();
    let mut extra = BTreeMap::new();
    let mut traces = Vec::new();
    let view = if let Some(streams) = args.throughput {
        let (file, record) = (args.size, args.record);
        if streams == 0 || file == 0 || record == 0 || record > file {
            bail!("throughput mode needs at least one stream and a --record no larger than --size");
        }
        extra.insert(
            "iozone".to_string(),
            format!("throughput {streams} x {file} B, {record} B records"),
        );
        let mut lines = Vec::new();
        for t in &tests {
            let name = format!("iozone_tp{streams}_{}", t.name());
            traces.push(throughput(
                *t,
                streams,
                file,
                record,
                args.seed,
                name.clone(),
            ));
            lines.push((t.title().trim_end_matches(" report"), name));
        }
        View {
            file_name: "iozone.txt",
            render: Box::new(move |run, _| Ok(iozone_throughput(run, &lines, streams))),
        }
    } else {
        let (min_f, max_f) = (args.min_file, args.max_file);
        let (min_r, max_r) = (args.min_record, args.max_record);
        if min_f == 0 || min_r == 0 || min_f > max_f || min_r > max_r {
            bail!(
                "give sizes with --min-file <= --max-file and --min-record <= --max-record, all above zero"
            );
        }
        extra.insert(
            "iozone".to_string(),
            format!("matrix {min_f}..{max_f} B by {min_r}..{max_r} B"),
        );
        let mut cells = Vec::new();
        for t in &tests {
            for f in sizes_between(min_f, max_f) {
                for r in records_for(f, min_r, max_r) {
                    traces.push(cell(*t, f, r, args.seed));
                    cells.push(IozoneCell {
                        title: t.title(),
                        file_kb: f >> 10,
                        record_kb: r >> 10,
                        workload: cell_name(*t, f, r),
                    });
                }
            }
        }
        if cells.len() > MAX_CELLS {
            bail!(
                "the matrix has {} cells, over {MAX_CELLS}; narrow the sizes or the tests",
                cells.len()
            );
        }
        View {
            file_name: "iozone.txt",
            render: Box::new(move |run, _| Ok(iozone_matrices(run, &cells))),
        }
    };
    let ctx = context(&args.opts, coord, CacheMode::Keep, extra)?;
    let workloads = compile_traces(&ctx, traces)?;
    execute_with(ctx, workloads, Some(view))
}
