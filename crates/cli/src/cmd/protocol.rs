//! Protocol targets (`smb://...`, `nfs://...`): naslab's own clients, the credentials
//! they sign in with, and the client profile wrapped around any target.

use std::io::{BufRead, IsTerminal};

use anyhow::{bail, Context};
use naslab_engine::backend::url::{ClientOptions, Protocol, RemoteUrl};
use naslab_engine::backend::{ClientProfile, ProfiledTarget};
use naslab_engine::Target;
use naslab_results::TargetInfo;

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

/// Connects to a protocol target named by `url` and describes it for the results;
/// for SMB also the dialect and encryption the server agreed on.
pub fn remote_target(
    url: &str,
    opts: ClientOptions,
) -> anyhow::Result<(Box<dyn Target>, TargetInfo, Option<String>)> {
    let url: RemoteUrl = url.parse()?;
    let info = TargetInfo {
        path: url.to_string(),
        backend: url.protocol.name().into(),
        fs_type: url.protocol.name().into(),
        // The URL itself (never a password: URLs cannot carry one), so the run can be
        // repeated with `naslab run --target SOURCE`.
        source: url.to_string(),
    };
    let (target, security): (Box<dyn Target>, Option<String>) = match url.protocol {
        Protocol::Smb => smb(url, opts)?,
        Protocol::Nfs => (nfs(url, opts)?, None),
    };
    Ok((target, info, security))
}

#[cfg(feature = "smb")]
fn smb(url: RemoteUrl, opts: ClientOptions) -> anyhow::Result<(Box<dyn Target>, Option<String>)> {
    let password = smb_password(&url)?;
    let shown = url.to_string();
    let t = naslab_engine::backend::SmbTarget::connect_with(url, password, opts)
        .with_context(|| format!("cannot use {shown}"))?;
    let security = t.security().to_string();
    Ok((Box::new(t), Some(security)))
}

#[cfg(not(feature = "smb"))]
fn smb(_url: RemoteUrl, _opts: ClientOptions) -> anyhow::Result<(Box<dyn Target>, Option<String>)> {
    bail!("this naslab was built without the smb backend; rebuild with `--features smb`")
}

#[cfg(feature = "nfs")]
fn nfs(url: RemoteUrl, opts: ClientOptions) -> anyhow::Result<Box<dyn Target>> {
    let shown = url.to_string();
    let t = naslab_engine::backend::NfsTarget::connect_with(url, opts)
        .with_context(|| format!("cannot use {shown}"))?;
    Ok(Box::new(t))
}

#[cfg(not(feature = "nfs"))]
fn nfs(_url: RemoteUrl, _opts: ClientOptions) -> anyhow::Result<Box<dyn Target>> {
    bail!("this naslab was built without the nfs backend; rebuild with `--features nfs`")
}

/// The password for an SMB URL: from [`PASSWORD_VAR`], else asked for on the terminal
/// when the URL names a user and standard input is one, else none (a guest session).
#[cfg_attr(not(feature = "smb"), allow(dead_code))]
fn smb_password(url: &RemoteUrl) -> anyhow::Result<String> {
    if let Ok(p) = std::env::var(PASSWORD_VAR) {
        return Ok(p);
    }
    let Some(user) = &url.user else {
        return Ok(String::new());
    };
    if !std::io::stdin().is_terminal() {
        bail!("{url} names user '{user}' but {PASSWORD_VAR} is not set and standard input is not a terminal to ask on; set {PASSWORD_VAR}");
    }
    prompt_hidden(&format!("SMB password for {user}@{}: ", url.host))
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

/// Wraps `target` in the client profile named on the command line (`None`: plain).
pub fn with_profile(
    target: Box<dyn Target>,
    profile: Option<&str>,
) -> anyhow::Result<Box<dyn Target>> {
    let profile: ClientProfile = match profile {
        None => return Ok(target),
        Some(p) => p.parse().map_err(anyhow::Error::msg)?,
    };
    if profile == ClientProfile::Windows && target.backend_name() == "nfs" {
        bail!("--client-profile windows models the Windows SMB redirector; use it with smb:// targets or local directories, not nfs://");
    }
    if profile == ClientProfile::Plain {
        return Ok(target);
    }
    Ok(Box::new(ProfiledTarget::new(target, profile)))
}
