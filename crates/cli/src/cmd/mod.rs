//! One module per subcommand.

mod clean;
mod describe;
mod list;
mod run;
mod sources;

use crate::args::{Cli, Command};

/// Runs the subcommand the user asked for.
pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Clean(a) => clean::clean(a),
        Command::List(a) => list::list(a),
        Command::Describe(a) => describe::describe_cmd(a),
        Command::ExportTrace(a) => describe::export(a),
    }
}
