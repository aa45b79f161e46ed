//! Standard output as every command prints to it: a reader that went away (`| head`,
//! `| true`) ends the command quietly, as `cat` does, and any other failure (a full
//! device, `>/dev/full`) is an error that says what happened, never a panic.

use std::io::Write;

/// The reader of standard output has gone: nothing is wrong, and nothing more is said.
#[derive(Debug)]
pub struct Closed;

impl std::fmt::Display for Closed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("standard output was closed by its reader")
    }
}

impl std::error::Error for Closed {}

/// Writes `text`, meant to be read by people, to standard output and flushes it; a
/// control character in it (from a trace's names, a file's path) is shown as an escape
/// ([`naslab_trace::printable_lines`]).
pub fn print(text: &str) -> anyhow::Result<()> {
    print_bytes(naslab_trace::printable_lines(text).as_bytes())
}

/// A run's results as a run prints them: the table, or JSON under `--json`.
pub fn print_export(run: &naslab_results::RunResult, json: bool) -> anyhow::Result<()> {
    use naslab_results::export::{Exporter, Json, Table};
    if json {
        print_bytes(&Json.export(run))
    } else {
        print(&String::from_utf8_lossy(&Table.export(run)))
    }
}

/// Writes `bytes` (a format read by programs: JSON, CSV, a trace, a man page) to standard
/// output as they are, and flushes it.
pub fn print_bytes(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(failed)
}

/// A failed write to standard output as the error the user sees: [`Closed`] for a
/// reader that went away, otherwise the cause and what to do.
pub fn failed(e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return anyhow::Error::new(Closed);
    }
    anyhow::anyhow!(
        "cannot write to standard output ({e}); free space where it goes or send it elsewhere"
    )
}

/// Whether `e` (or one of its causes) is a reader that went away.
pub fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<Closed>())
}
