//! `naslab completions` and `naslab man`: the command line described for shells and man.

use anyhow::Context;
use clap::CommandFactory;
use clap_complete::Shell;

use crate::args::{Cli, CompletionsArgs, ManArgs, ShellName};

/// Prints the completion script for the shell asked for.
pub fn completions(args: CompletionsArgs) -> anyhow::Result<()> {
    let shell = match args.shell {
        ShellName::Bash => Shell::Bash,
        ShellName::Zsh => Shell::Zsh,
        ShellName::Fish => Shell::Fish,
    };
    let mut cmd = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "naslab", &mut script);
    crate::stdout::print_bytes(&script)
}

/// Prints naslab.1, or writes every command's page into `--dir`.
pub fn man(args: ManArgs) -> anyhow::Result<()> {
    let cmd = Cli::command();
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create '{}'", dir.display()))?;
            let mut cmd = cmd.disable_help_subcommand(true);
            cmd.build();
            write_pages(&cmd, &dir)?;
            eprintln!("man pages written to {}", dir.display());
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            crate::stdout::print_bytes(&page)?;
        }
    }
    Ok(())
}

/// Writes the page of `cmd` and of each of its subcommands into `dir`, each under the
/// output-file rule (a link planted at a page's name is refused, not written through).
fn write_pages(cmd: &clap::Command, dir: &std::path::Path) -> anyhow::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        write_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(cmd.clone());
    let mut page = Vec::new();
    man.render(&mut page)?;
    crate::out_file::write(
        &dir.join(man.get_filename()),
        &page,
        crate::out_file::Writing::Other,
    )
}
