use std::fmt::Write;
use std::path::Path;

use naslab_trace::{OpKind, Record, TraceError, open_trace};

/// One row: after `entries` entries, the mean time to make each of the last batch, the
/// time to list the directory, and that time per entry listed.
#[derive(Debug, Clone, PartialEq)]
pub struct BigDirRow {
    pub entries: u64,
    pub create_op_ms: f64,
    pub enumeration_ms: f64,
    pub enumeration_op_ms: f64,
}

/// The rows of a big-directory run, from its op records: each readdir closes a batch of
/// mkdirs (or creates; a file's close is not counted) and its result is how many entries
/// it listed.
pub fn bigdir_rows(records: &Path) -> Result<Vec<BigDirRow>, TraceError> {
    let mut rows = Vec::new();
    let (mut sum_ns, mut n) = (0u64, 0u64);
    for r in open_trace(records)? {
        let Record::Op(op, Some(m)) = r? else {
            continue;
        };
        let took = m.done_ns.saturating_sub(m.issued_ns);
        match op.kind {
            OpKind::Mkdir | OpKind::Create => {
                sum_ns += took;
                n += 1;
            }
            OpKind::Readdir => {
                let entries = m.result.max(0) as u64;
                let enumeration_ms = took as f64 / 1e6;
                rows.push(BigDirRow {
                    entries,
                    create_op_ms: if n > 0 {
                        sum_ns as f64 / n as f64 / 1e6
                    } else {
                        0.0
                    },
                    enumeration_ms,
                    enumeration_op_ms: if entries > 0 {
                        enumeration_ms / entries as f64
                    } else {
                        0.0
                    },
                });
                (sum_ns, n) = (0, 0);
            }
            _ => {}
        }
    }
    Ok(rows)
}

/// The big-directory tool's output (seed 003): comma-separated, one line per listing.
pub fn bigdir_table(rows: &[BigDirRow], dirs: bool) -> String {
    let mut o = String::new();
    let op = if dirs {
        "MkDirOpTime(ms)"
    } else {
        "CreateOpTime(ms)"
    };
    let _ = writeln!(
        o,
        "Iterations, {op}, EnumerationTime(ms), EnumerationOpTime(ms)"
    );
    for r in rows {
        let _ = writeln!(
            o,
            "{}, {:.6}, {:.6}, {:.9}",
            r.entries, r.create_op_ms, r.enumeration_ms, r.enumeration_op_ms
        );
    }
    o
}
