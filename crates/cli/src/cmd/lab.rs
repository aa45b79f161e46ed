//! `naslab lab`: a test NAS on this machine. `up`, `status` and `down` here; the
//! comparison of configurations in `matrix`.

mod matrix;

use std::fmt::Write;

use anyhow::Context;
use naslab_lab::LabOptions;

use crate::args::{LabArgs, LabCommand, LabDownArgs, LabFaultArgs, LabUpArgs, LabWhere};

/// Runs a `naslab lab` subcommand.
pub fn lab(args: LabArgs) -> anyhow::Result<()> {
    match args.command {
        LabCommand::Up(a) => up(a),
        LabCommand::Status(a) => status(a),
        LabCommand::Down(a) => down(a),
        LabCommand::Matrix(a) => matrix::matrix(*a),
        LabCommand::Fault(a) => fault(a),
    }
}

fn up(a: LabUpArgs) -> anyhow::Result<()> {
    let opts = LabOptions {
        name: a.name,
        base: a.at.lab_dir,
        fs: a.fs,
        server: a.server,
        size_bytes: a.size,
        opts: a.opts,
        link: match &a.link {
            Some(l) => naslab_lab::link::parse(l)?,
            None => None,
        },
        client_links: match &a.client_links {
            Some(l) => naslab_lab::link::parse_per_client(l)?,
            None => Vec::new(),
        },
    };
    let lab = naslab_lab::up(&opts).context("lab up failed")?;
    let s = &lab.state;
    eprintln!(
        "lab '{}': {} on {} served by {} (pids {}); logs and state in {}",
        s.name,
        s.fs,
        s.loop_device
            .as_ref()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|| "a directory".into()),
        s.server,
        s.processes
            .iter()
            .map(|p| format!("{} {}", p.name, p.pid))
            .collect::<Vec<_>>()
            .join(", "),
        lab.dir.display()
    );
    if let Some(l) = &s.link {
        eprintln!(
            "link: {} through Toxiproxy pid {} (API on 127.0.0.1:{}); the server's own URL is {}",
            l.link.summary(),
            s.processes
                .iter()
                .find(|p| p.name == naslab_lab::toxiproxy::SERVER)
                .map_or(0, |p| p.pid),
            l.api_port,
            l.direct_url
        );
    }
    for (rank, c) in s.client_links.iter().enumerate() {
        eprintln!("client {rank}: {} ({})", c.url, client_link_text(c));
    }
    if !s.client_links.is_empty() {
        eprintln!(
            "run it as: mpirun -n {} naslab run {} ...",
            s.client_links.len(),
            s.client_links
                .iter()
                .map(|c| format!("--client-target {}", c.url))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
    if !s.password.is_empty() {
        eprintln!(
            "SMB user '{}', password {} (kept in {}); give it as {}",
            s.user,
            s.password,
            naslab_lab::state::state_path(&lab.dir).display(),
            crate::cmd::protocol::PASSWORD_VAR
        );
    }
    if s.server == naslab_lab::ServerKind::Nfs && s.url.contains("mountport=") {
        eprintln!(
            "NFSv4.1 (or 4.2: vers=4.2) at {}",
            naslab_lab::server::nfs4_url(&s.url, "4.1")
        );
    }
    eprintln!("take it down with: naslab lab down --name {}", s.name);
    crate::stdout::print(&format!("{}\n", s.url))
}

/// A client's own path in words: its link, or the server's own port.
fn client_link_text(c: &naslab_lab::ClientPath) -> String {
    c.link
        .as_ref()
        .map_or_else(|| "the server's own port".into(), |l| l.link.summary())
}

fn status(a: LabWhere) -> anyhow::Result<()> {
    let labs = naslab_lab::status(&a.lab_dir)?;
    if labs.is_empty() {
        return crate::stdout::print(&format!("no lab is up under {}\n", a.lab_dir.display()));
    }
    let mut o = String::new();
    for l in labs {
        let s = &l.state;
        let _ = writeln!(
            o,
            "{}  {}",
            s.name,
            if s.url.is_empty() {
                "(not ready)"
            } else {
                &s.url
            }
        );
        let _ = writeln!(
            o,
            "  file system  {} {}",
            s.fs,
            if l.mounted { "mounted" } else { "not mounted" }
        );
        if let Some(d) = &s.loop_device {
            let _ = writeln!(o, "  device       {}", d.display());
        }
        let _ = writeln!(o, "  share        {}", s.share_dir.display());
        let _ = writeln!(
            o,
            "  server       {}{}",
            s.server,
            if s.opts.is_empty() {
                String::new()
            } else {
                format!(" ({})", s.opts.join("; "))
            }
        );
        if let Some(k) = &s.link {
            let _ = writeln!(o, "  link         {}", k.link.summary());
            let _ = writeln!(o, "  direct URL   {}", k.direct_url);
        }
        for (rank, c) in s.client_links.iter().enumerate() {
            let _ = writeln!(o, "  client {rank:<5} {} ({})", c.url, client_link_text(c));
        }
        for (name, pid, alive) in &l.running {
            let _ = writeln!(
                o,
                "  process      {name} pid {pid} {}",
                if *alive { "running" } else { "gone" }
            );
        }
        let _ = writeln!(o, "  directory    {}", l.dir.display());
    }
    crate::stdout::print(&o)
}

fn down(a: LabDownArgs) -> anyhow::Result<()> {
    let s = naslab_lab::down(&a.at.lab_dir, &a.name)?;
    eprintln!(
        "lab '{}' is down: stopped {}{}; logs kept in {}",
        s.name,
        s.processes
            .iter()
            .map(|p| format!("{} (pid {})", p.name, p.pid))
            .collect::<Vec<_>>()
            .join(", "),
        s.mount
            .as_ref()
            .map(|m| format!(", unmounted {}", m.display()))
            .unwrap_or_default(),
        a.at.lab_dir.join(&s.name).display()
    );
    Ok(())
}

fn fault(a: LabFaultArgs) -> anyhow::Result<()> {
    use naslab_lab::fault::{self, Fault};
    let f = if let Some(d) = &a.cut {
        Fault::Cut(d.as_std())
    } else if let Some(d) = &a.black_hole {
        Fault::BlackHole(d.as_std())
    } else if a.reset {
        Fault::Reset
    } else {
        Fault::RestartServer
    };
    let r = fault::inject(&a.at.lab_dir, &a.name, f)
        .with_context(|| format!("the fault on lab '{}' failed", a.name))?;
    let mut o = String::new();
    for s in &r.steps {
        let _ = writeln!(o, "{}  {}", fault::utc_text(s.at_unix_ns), s.what);
    }
    let _ = writeln!(
        o,
        "the path to lab '{}' was broken for {:.3} s",
        a.name,
        r.broken_ns as f64 / 1e9
    );
    crate::stdout::print(&o)
}
