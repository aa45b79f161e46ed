//! Standing a lab up and taking it down: image, loop device, mount, server, in that
//! order, each step recorded before the next; `down` undoes them in reverse.

use std::path::{Path, PathBuf};
use std::time::Duration;

use std::os::unix::fs::PermissionsExt;

use crate::account;
use crate::error::LabError;
use crate::fs::{self, FsKind};
use crate::server::{self, ServerKind};
use crate::state::{LabState, lab_dir};

/// What `up` makes.
#[derive(Debug, Clone)]
pub struct LabOptions {
    /// Names the lab and its directory under `base`.
    pub name: String,
    pub base: PathBuf,
    pub fs: FsKind,
    pub server: ServerKind,
    /// The image's size (ignored for `dir`).
    pub size_bytes: u64,
    /// Server settings, `name = value`, added to the share (Samba) or export (ganesha).
    pub opts: Vec<String>,
    /// The link to emulate between clients and the server (none: the server's own port).
    pub link: Option<crate::link::LinkSpec>,
    /// A path of its own for each client of a multi-client job, in rank order (`None`:
    /// that client reaches the server's own port); empty: no such paths.
    pub client_links: Vec<Option<crate::link::LinkSpec>>,
}

/// A lab that is up.
#[derive(Debug, Clone)]
pub struct Lab {
    /// Its directory (state, configuration, logs).
    pub dir: PathBuf,
    pub state: LabState,
}

/// How a lab looks now.
#[derive(Debug, Clone)]
pub struct LabStatus {
    pub dir: PathBuf,
    pub state: LabState,
    /// Each process and whether it still runs.
    pub running: Vec<(String, u32, bool)>,
    /// Whether its file system is still mounted.
    pub mounted: bool,
}

/// Stands a lab up. On any failure, whatever was made is taken down again.
pub fn up(opts: &LabOptions) -> Result<Lab, LabError> {
    if !naslab_host::process::is_root() {
        return Err(LabError::NotRoot);
    }
    for o in &opts.opts {
        server::check_option(o)?;
    }
    let dir = lab_dir(&opts.base, &opts.name)?;
    // A state file means a lab is up, or a crashed one left work for `down`: either
    // way, never stack a second lab on it.
    if LabState::load(&dir)?.is_some() {
        return Err(LabError::AlreadyUp {
            name: opts.name.clone(),
            dir,
        });
    }
    std::fs::create_dir_all(&dir).map_err(LabError::io("create", &dir))?;
    // Others may pass through (the servers work as the lab account) but not list it.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o711))
        .map_err(LabError::io("chmod", &dir))?;
    account::check_reachable(&dir.join("share"))?;
    let mut state = LabState {
        name: opts.name.clone(),
        fs: opts.fs,
        server: opts.server,
        opts: opts.opts.iter().map(|o| o.trim().to_string()).collect(),
        image: None,
        image_bytes: 0,
        mkfs: String::new(),
        loop_device: None,
        mount: None,
        mount_options: String::new(),
        share_dir: PathBuf::new(),
        processes: Vec::new(),
        url: String::new(),
        ports: Vec::new(),
        user: String::new(),
        password: String::new(),
        link: None,
        client_links: Vec::new(),
    };
    state.save(&dir)?;
    match build(&dir, opts, &mut state) {
        Ok(()) => Ok(Lab { dir, state }),
        Err(e) => {
            if let Err(undo) = take_down(&dir, &state) {
                return Err(LabError::Leftovers(format!(
                    "{e}; and undoing the lab failed too: {undo}"
                )));
            }
            Err(e)
        }
    }
}

fn build(dir: &Path, opts: &LabOptions, state: &mut LabState) -> Result<(), LabError> {
    let share_dir = if opts.fs == FsKind::Dir {
        dir.join("share")
    } else {
        let image = dir.join("image.img");
        state.image = Some(image.clone());
        state.image_bytes = opts.size_bytes;
        state.save(dir)?;
        state.mkfs = fs::make_image(opts.fs, &image, opts.size_bytes)?;
        state.loop_device = Some(fs::attach(&image)?);
        state.save(dir)?;
        let mnt = dir.join("mnt");
        std::fs::create_dir_all(&mnt).map_err(LabError::io("create", &mnt))?;
        let dev = state.loop_device.clone().unwrap_or_default();
        state.mount_options = fs::mount(opts.fs, &dev, &mnt)?;
        state.mount = Some(mnt.clone());
        state.save(dir)?;
        mnt.join("share")
    };
    std::fs::create_dir_all(&share_dir).map_err(LabError::io("create", &share_dir))?;
    let anon = account::ensure()?;
    account::own(&share_dir, anon)?;
    state.share_dir = share_dir.clone();
    state.save(dir)?;
    let mut record = |p: &crate::process::Proc| {
        state.processes.push(p.clone());
        state.save(dir)
    };
    let started = match opts.server {
        ServerKind::Samba => server::start_samba(dir, &share_dir, &opts.opts, &mut record)?,
        ServerKind::Nfs => server::start_nfs(dir, &share_dir, &opts.opts, anon, &mut record)?,
    };
    state.ports = started.ports;
    state.user = started.user;
    state.password = started.password;
    state.url = started.url;
    state.save(dir)?;
    if opts.link.is_none() && opts.client_links.iter().all(Option::is_none) {
        state.client_links = opts
            .client_links
            .iter()
            .map(|_| crate::link::ClientPath {
                url: state.url.clone(),
                link: None,
            })
            .collect();
        return state.save(dir);
    }
    let names: &[&str] = match opts.server {
        ServerKind::Samba => &["smb"],
        ServerKind::Nfs => &["nfs", "mount"],
    };
    let ports: Vec<(&str, u16)> = names.iter().copied().zip(state.ports.clone()).collect();
    let direct_url = state.url.clone();
    let emulator = {
        let mut record = |p: &crate::process::Proc| {
            state.processes.push(p.clone());
            state.save(dir)
        };
        crate::toxiproxy::start(dir, &mut record)?
    };
    if let Some(spec) = &opts.link {
        let link = crate::toxiproxy::add_link(&emulator, spec, &ports, "", &direct_url)?;
        state.url = through(&direct_url, &link);
        state.link = Some(link);
        state.save(dir)?;
    }
    // One set of proxies per client, each with its own link, on the one emulator.
    for (rank, spec) in opts.client_links.iter().enumerate() {
        let path = match spec {
            Some(spec) => {
                let prefix = format!("client{rank}-");
                let link =
                    crate::toxiproxy::add_link(&emulator, spec, &ports, &prefix, &direct_url)?;
                crate::link::ClientPath {
                    url: through(&direct_url, &link),
                    link: Some(link),
                }
            }
            None => crate::link::ClientPath {
                url: direct_url.clone(),
                link: None,
            },
        };
        state.client_links.push(path);
        state.save(dir)?;
    }
    Ok(())
}

/// The server's URL with each proxied port replaced by the proxy's (the server port
/// follows the host, the MOUNT port is `mountport=`).
pub fn through(url: &str, link: &crate::link::LabLink) -> String {
    let mut out = url.to_string();
    for p in &link.proxies {
        // A client's own proxies are named `client<rank>-mount` and so on.
        let carries = p.name.rsplit('-').next().unwrap_or(&p.name);
        let (from, to) = if carries == "mount" {
            (
                format!("mountport={}", p.upstream_port),
                format!("mountport={}", p.listen_port),
            )
        } else {
            (
                format!("127.0.0.1:{}/", p.upstream_port),
                format!("127.0.0.1:{}/", p.listen_port),
            )
        };
        out = out.replacen(&from, &to, 1);
    }
    out
}

/// Undoes what `state` records, in reverse: processes, mount, loop device, image.
fn take_down(dir: &Path, state: &LabState) -> Result<(), LabError> {
    let mut problems = Vec::new();
    // Servers first, then the shared rpcbind ganesha registered with (stopped if this
    // was the last lab using it).
    for p in state.processes.iter().rev() {
        if let Err(e) = p.stop(Duration::from_secs(10)) {
            problems.push(e.to_string());
        }
    }
    if state.server == ServerKind::Nfs
        && let Err(e) = crate::portmap::release(dir)
    {
        problems.push(e.to_string());
    }
    if let Some(m) = &state.mount
        && let Err(e) = fs::unmount(m)
    {
        problems.push(format!("{e} (unmount it with: umount {})", m.display()));
    }
    if let (Some(dev), Some(image)) = (&state.loop_device, &state.image)
        && let Err(e) = fs::detach(dev, image)
    {
        problems.push(format!(
            "{e} (detach it with: losetup -d {})",
            dev.display()
        ));
    }
    if !problems.is_empty() {
        return Err(LabError::Leftovers(problems.join("; ")));
    }
    if let Some(image) = &state.image {
        let _ = std::fs::remove_file(image);
    }
    if let Some(m) = &state.mount {
        let _ = std::fs::remove_dir(m);
    }
    let state_file = crate::state::state_path(dir);
    std::fs::remove_file(&state_file).map_err(LabError::io("remove", &state_file))
}

/// Takes the lab named `name` down: stops exactly the processes it started (by PID),
/// unmounts and detaches what it mounted, and removes its image. Logs stay.
pub fn down(base: &Path, name: &str) -> Result<LabState, LabError> {
    let dir = lab_dir(base, name)?;
    let state = LabState::load(&dir)?.ok_or_else(|| LabError::NotUp {
        name: name.to_string(),
        dir: dir.clone(),
    })?;
    take_down(&dir, &state)?;
    Ok(state)
}

/// Every lab under `base` with a state file.
pub fn status(base: &Path) -> Result<Vec<LabStatus>, LabError> {
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(base) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(LabError::io("list", base)(e)),
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        if let Some(state) = LabState::load(&dir)? {
            let running = state
                .processes
                .iter()
                .map(|p| (p.name.clone(), p.pid, p.alive()))
                .collect();
            let mounted = state
                .mount
                .as_ref()
                .is_some_and(|m| fs::mount_options(m).is_some());
            out.push(LabStatus {
                dir,
                state,
                running,
                mounted,
            });
        }
    }
    Ok(out)
}

/// A lab that takes itself down when dropped: for tests and `lab matrix`, so every
/// server stops and every mount goes, also when something fails or panics.
pub struct LabGuard {
    lab: Lab,
    done: bool,
}

impl LabGuard {
    /// Stands a lab up, to be taken down when the guard goes.
    pub fn up(opts: &LabOptions) -> Result<LabGuard, LabError> {
        Ok(LabGuard {
            lab: up(opts)?,
            done: false,
        })
    }

    /// The lab.
    pub fn lab(&self) -> &Lab {
        &self.lab
    }

    /// Takes the lab down now, reporting any failure.
    pub fn down(mut self) -> Result<(), LabError> {
        self.done = true;
        take_down(&self.lab.dir, &self.lab.state)
    }
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        if !self.done
            && let Err(e) = take_down(&self.lab.dir, &self.lab.state)
        {
            eprintln!(
                "warning: the lab '{}' was not fully taken down: {e}",
                self.lab.state.name
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::{LabLink, LinkProxy};

    #[test]
    fn the_url_leads_through_the_proxies() {
        let proxy = |name: &str, listen_port, upstream_port| LinkProxy {
            name: name.into(),
            listen_port,
            upstream_port,
        };
        let link = LabLink {
            link: Default::default(),
            api_port: 1,
            proxies: vec![proxy("nfs", 4001, 2049), proxy("mount", 4002, 2050)],
            direct_url: String::new(),
        };
        assert_eq!(
            through("nfs://127.0.0.1:2049/naslab?mountport=2050", &link),
            "nfs://127.0.0.1:4001/naslab?mountport=4002"
        );
        let link = LabLink {
            proxies: vec![proxy("smb", 5000, 445)],
            ..link
        };
        assert_eq!(
            through("smb://naslab-lab@127.0.0.1:445/naslab", &link),
            "smb://naslab-lab@127.0.0.1:5000/naslab"
        );
    }
}
