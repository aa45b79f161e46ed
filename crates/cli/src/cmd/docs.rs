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
    print_all(&script).context("cannot write the completion script to standard output")
}

/// Writes `bytes` to standard output; a reader that stops early (`head`) is no error.
fn print_all(bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    }
}

/// Prints naslab.1, or writes every command's page into `--dir`.
pub fn man(args: ManArgs) -> anyhow::Result<()> {
    let cmd = Cli::command();
    match args.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .with_context(|| format!("cannot create '{}'", dir.display()))?;
            clap_mangen::generate_to(cmd, &dir)
                .with_context(|| format!("cannot write the man pages into '{}'", dir.display()))?;
            eprintln!("man pages written to {}", dir.display());
        }
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            print_all(&page).context("cannot write the man page to standard output")?;
        }
    }
    Ok(())
}
