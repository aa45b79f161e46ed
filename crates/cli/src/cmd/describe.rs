use anyhow::Context;
use naslab_engine::{compile, records_from_reader};
use naslab_trace::{create_trace, open_trace};
use naslab_workload::describe::{Describer, describe};

use super::sources::{Source, build, gen_params, resolve, trace_dir};
use crate::args::{DescribeArgs, ExportArgs};

/// `naslab describe`: a workload's characteristics, computed from its trace.
pub fn describe_cmd(args: DescribeArgs) -> anyhow::Result<()> {
    let dir = trace_dir(&args.trace_dir);
    let d = match resolve(&args.workload, dir.as_deref())? {
        Source::Builtin(name) => describe(&build(name, &gen_params(&args.generate)?)?),
        Source::File(path) => {
            // One pass, streamed: every record is described and compiled as `naslab run`
            // compiles it, so describe accepts exactly the traces run accepts.
            let mut describer = Describer::default();
            let records = records_from_reader(open_trace(&path)?).inspect(|r| {
                if let Ok((record, _)) = r {
                    describer.add(record.clone());
                }
            });
            compile(&path, records, &std::env::temp_dir())?;
            describer.finish()
        }
    };
    if args.json {
        crate::stdout::print_bytes(format!("{}\n", serde_json::to_string_pretty(&d)?).as_bytes())?;
    } else {
        crate::stdout::print(&d.to_string())?;
    }
    Ok(())
}

/// `naslab export-trace`: writes a built-in workload's trace.
pub fn export(args: ExportArgs) -> anyhow::Result<()> {
    let trace = build(&args.workload, &gen_params(&args.generate)?)?;
    crate::out_file::check(&args.output, crate::out_file::Writing::Other)?;
    let mut w = create_trace(&args.output)?;
    trace.write_to(&mut w)?;
    w.close()
        .with_context(|| format!("cannot finish '{}'", args.output.display()))?;
    eprintln!(
        "wrote {} ({} files, {} ops)",
        args.output.display(),
        trace.files.len(),
        trace.ops.len()
    );
    Ok(())
}
