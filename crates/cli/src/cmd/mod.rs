//! One module per subcommand.

mod clean;
mod run;

use crate::args::{Cli, Command};

/// Runs the subcommand the user asked for.
pub fn dispatch(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Run(a) => run::run(a),
        Command::Clean(a) => clean::clean(a),
    }
}
