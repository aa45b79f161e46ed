//! Protocol targets (`smb://...`, `nfs://...`): the credentials naslab's own clients
//! sign in with.

use std::io::{BufRead, IsTerminal};

use anyhow::Context;
use naslab_targets::url::RemoteUrl;

/// The environment variable an SMB password is read from.
pub const PASSWORD_VAR: &str = "NASLAB_SMB_PASSWORD";

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
        return Err(format!(
            "{url} names user '{user}' but {PASSWORD_VAR} is not set and standard input is not a terminal to ask on; set {PASSWORD_VAR}"
        ));
    }
    prompt_hidden(&format!("SMB password for {user}@{}: ", url.host)).map_err(|e| format!("{e:#}"))
}

/// Reads a line from the console with echo off.
#[cfg(windows)]
fn prompt_hidden(prompt: &str) -> anyhow::Result<String> {
    use windows_sys::Win32::System::Console::{
        ENABLE_ECHO_INPUT, GetConsoleMode, GetStdHandle, STD_INPUT_HANDLE, SetConsoleMode,
    };
    eprint!("{prompt}");
    // SAFETY: GetStdHandle has no preconditions.
    let input = unsafe { GetStdHandle(STD_INPUT_HANDLE) };
    let mut old = 0u32;
    // SAFETY: input is this process's standard input (a console: checked by the caller).
    let have = unsafe { GetConsoleMode(input, &mut old) } != 0;
    if have {
        // SAFETY: as above; only the echo bit changes.
        unsafe { SetConsoleMode(input, old & !ENABLE_ECHO_INPUT) };
    }
    let mut line = String::new();
    let read = std::io::stdin().lock().read_line(&mut line);
    if have {
        // SAFETY: restores the mode read above.
        unsafe { SetConsoleMode(input, old) };
    }
    eprintln!();
    read.context("cannot read the password from the console")?;
    Ok(line.trim_end_matches(['\n', '\r']).to_string())
}

/// Reads a line from the terminal with echo off.
#[cfg(unix)]
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
