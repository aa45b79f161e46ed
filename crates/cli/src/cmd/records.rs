//! `naslab records`: a trace or a run's op records written again, losslessly, in JSON
//! Lines (standard output, or a file) or, for a file named `.nbt[.zst]`, in the binary
//! encoding.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use naslab_trace::{
    Numbered, ReadAhead, Record, TraceError, TraceReader, TraceWriter, create_trace, open_trace,
};

use crate::args::RecordsArgs;

pub fn records_cmd(args: RecordsArgs) -> anyhow::Result<()> {
    let reader = open_trace(&args.input)?;
    let Some(out) = &args.output else {
        let stdout = std::io::stdout();
        let mut w = TraceWriter::new("(standard output)".into(), stdout.lock());
        return match copy(reader, &mut w).and_then(|_| w.finish().map(drop)) {
            // A reader that stops early (`| head`) ends the output, and is no error.
            Err(TraceError::Write { cause, .. }) => Err(crate::stdout::failed(cause)),
            other => Ok(other?),
        };
    };
    if same_file(&args.input, out) {
        anyhow::bail!(
            "'{}' is the file being read; write to another file",
            out.display()
        );
    }
    crate::out_file::check(out, crate::out_file::Writing::Other)?;
    let mut w = create_trace(out)?;
    let n = copy(reader, &mut w)?;
    w.close()
        .with_context(|| format!("cannot finish '{}'", out.display()))?;
    eprintln!("wrote {} ({n} records)", out.display());
    Ok(())
}

/// Copies every record, the client of a multi-client run's ops included; returns how many.
/// The records are read ahead of the writer (a JSON Lines input parsed on several CPUs).
fn copy<R: std::io::BufRead + Send + 'static, W: Write>(
    reader: TraceReader<R>,
    w: &mut TraceWriter<W>,
) -> Result<u64, TraceError> {
    let mut n = 0;
    for item in ReadAhead::start(reader) {
        let Numbered { record, client, .. } = item?;
        match (&record, client) {
            (Record::Header(h), _) => w.header(h)?,
            (Record::File(f), _) => w.file(f)?,
            (Record::Op(op, Some(m)), Some(client)) => w.client_op(op, m, client)?,
            (Record::Op(op, m), _) => w.op(op, m.as_ref())?,
        }
        n += 1;
    }
    Ok(n)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}
