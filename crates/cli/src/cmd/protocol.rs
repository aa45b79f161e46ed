//! Protocol targets (`smb://...`, `nfs://...`): the options of naslab's own clients and
//! the credentials they sign in with.

use std::io::{BufRead, IsTerminal};

use anyhow::{bail, Context};
use naslab_engine::backend::url::{ClientOptions, RemoteUrl};

/// The environment variable an SMB password is read from.
pub const PASSWORD_VAR: &str = "NASLAB_SMB_PASSWORD";

/// The protocol clients' options from `--io-timeout` and `--smb-encrypt`.
pub fn client_options(io_timeout: &str, smb_encrypt: &str) -> anyhow::Result<ClientOptions> {
    let ns = naslab_engine::pacing::parse_duration_ns(io_timeout)
        .map_err(|e| anyhow::anyhow!("--io-timeout: {e}"))?;
    if ns < 1_000_000 {
        bail!("--io-timeout must be at least 1ms");
    }
    Ok(ClientOptions {
        io_timeout: std::time::Duration::from_nanos(ns),
        smb_encrypt: smb_encrypt.parse().map_err(anyhow::Error::msg)?,
    })
}

/// The password for an SMB URL: from [`PASSWORD_VAR`], else asked for on the terminal
/// when the URL names a user and standard input is one, else none (a guest session).
pub fn smb_password(url: &RemoteUrl) -> Result<String, String> {
    if let Ok(p) = std::env::var(PASSWORD_VAR) {
        return Ok(p);
    }
    let Some(user) = &url.user else {
        return Ok(String::new());
    };
    if !std::io::stdin().is_terminal() {
        return Err(format!("{url} names user '{user}' but {PASSWORD_VAR} is not set and standard input is not a terminal to ask on; set {PASSWORD_VAR}"));
    }
    prompt_hidden(&format!("SMB password for {user}@{}: ", url.host)).map_err(|e| format!("{e:#}"))
}

/// Reads a line from the terminal with echo off.
fn prompt_hidden(prompt: &str) -> anyhow::Result<String> {
    eprint!("{prompt}");
    let fd = libc::STDIN_FILENO;
    // SAFETY: an all-zero termios is a valid value for tcgetattr to overwrite.
    let mut old: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is standard input, which is a terminal (checked by the caller).
    let have = unsafe { libc::tcgetattr(fd, &mut old) } == 0;
    if have {
        let mut quiet = old;
        quiet.c_lflag &= !libc::ECHO;
        // SAFETY: quiet is a valid termios derived from the terminal's own.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &quiet) };
    }
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    if have {
        // SAFETY: restores the settings read above.
        unsafe { libc::tcsetattr(fd, libc::TCSANOW, &old) };
    }
    eprintln!();
    read.context("cannot read the password from the terminal")?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}
