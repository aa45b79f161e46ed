//! The file servers a lab runs: Samba's smbd, or nfs-ganesha (with rpcbind, which it
//! must register with). Each is configured to listen on 127.0.0.1 only, on free
//! ports, with all its state and logs in the lab directory.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::LabError;
use crate::process::{free_port, listening, spawn, tool, Proc};

/// The share or export name every lab serves.
pub const SHARE: &str = "naslab";
/// How long a server gets to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Which server a lab runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// Samba's smbd (SMB 2 and 3).
    Samba,
    /// nfs-ganesha with its VFS back end (NFSv3).
    Nfs,
}

impl ServerKind {
    /// The name used on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Samba => "samba",
            ServerKind::Nfs => "nfs",
        }
    }
}

impl std::fmt::Display for ServerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ServerKind {
    type Err = LabError;
    fn from_str(s: &str) -> Result<Self, LabError> {
        match s {
            "samba" | "smb" => Ok(ServerKind::Samba),
            "nfs" | "ganesha" | "nfs-ganesha" => Ok(ServerKind::Nfs),
            _ => Err(LabError::Invalid {
                what: "--server",
                value: s.to_string(),
                why: "the choices are samba and nfs".into(),
            }),
        }
    }
}

/// Checks a `--opt` value: one `name = value` line, nothing that could open a section
/// or block of its own.
pub fn check_option(opt: &str) -> Result<(), LabError> {
    let ok = opt.contains('=')
        && !opt.contains('\n')
        && !opt.contains('\r')
        && !opt.contains('[')
        && !opt.contains('{')
        && !opt.contains('}')
        && !opt.trim_start().starts_with('=');
    if ok {
        Ok(())
    } else {
        Err(LabError::BadOption(opt.to_string()))
    }
}

/// smb.conf for a lab: a guest-writable share of `share_dir`, `opts` added to it.
pub fn samba_config(dir: &Path, share_dir: &Path, port: u16, opts: &[String]) -> String {
    let d = dir.display();
    let mut s = format!(
        "# Written by naslab lab up; the lab's own Samba, on 127.0.0.1:{port} only.
[global]
  netbios name = NASLAB-LAB
  server role = standalone server
  interfaces = 127.0.0.1
  bind interfaces only = yes
  smb ports = {port}
  disable netbios = yes
  server min protocol = SMB2_02
  pid directory = {d}/samba/run
  lock directory = {d}/samba/lock
  state directory = {d}/samba/state
  cache directory = {d}/samba/cache
  private dir = {d}/samba/private
  ncalrpc dir = {d}/samba/run/ncalrpc
  log file = {d}/smbd.log
  max log size = 10000
  map to guest = Bad User
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes

[{SHARE}]
  path = {}
  read only = no
  guest ok = yes
  guest only = yes
  force user = root
",
        share_dir.display()
    );
    for o in opts {
        s.push_str("  ");
        s.push_str(o.trim());
        s.push('\n');
    }
    s
}

/// ganesha.conf for a lab: `share_dir` exported read-write over NFSv3 as /naslab.
pub fn ganesha_config(share_dir: &Path, nfs_port: u16, mnt_port: u16, opts: &[String]) -> String {
    let mut export_opts = String::new();
    for o in opts {
        let o = o.trim().trim_end_matches(';');
        export_opts.push_str(&format!("  {o};\n"));
    }
    format!(
        "# Written by naslab lab up; the lab's own nfs-ganesha, on 127.0.0.1 only.
NFS_CORE_PARAM {{
  Protocols = 3;
  NFS_Port = {nfs_port};
  MNT_Port = {mnt_port};
  Bind_addr = 127.0.0.1;
  Enable_NLM = false;
  Enable_RQUOTA = false;
  Enable_UDP = false;
  Mount_Path_Pseudo = true;
}}
NFSV4 {{ Graceless = true; }}
EXPORT {{
  Export_Id = 1;
  Path = {};
  Pseudo = /{SHARE};
  Access_Type = RW;
  Squash = No_Root_Squash;
  Protocols = 3;
  Transports = TCP;
  SecType = sys;
  PrivilegedPort = false;
{export_opts}  FSAL {{ Name = VFS; }}
}}
LOG {{ Default_Log_Level = EVENT; }}
",
        share_dir.display()
    )
}

/// A started server: its processes, ports and URL.
pub struct Started {
    pub processes: Vec<Proc>,
    pub ports: Vec<u16>,
    pub url: String,
}

/// Starts smbd for the lab in `dir`. `record` is called with each process as soon as
/// it runs, so the caller's state knows it even if a later step fails.
pub fn start_samba(
    dir: &Path,
    share_dir: &Path,
    opts: &[String],
    record: &mut dyn FnMut(&Proc) -> Result<(), LabError>,
) -> Result<Started, LabError> {
    let smbd = tool("smbd", "samba")?;
    for sub in ["run", "lock", "state", "cache", "private"] {
        let p = dir.join("samba").join(sub);
        std::fs::create_dir_all(&p).map_err(LabError::io("create", &p))?;
    }
    let port = free_port()?;
    let conf = dir.join("smb.conf");
    std::fs::write(&conf, samba_config(dir, share_dir, port, opts))
        .map_err(LabError::io("write", &conf))?;
    let p = spawn(
        "smbd",
        &smbd,
        &[
            "--foreground".as_ref(),
            "--no-process-group".as_ref(),
            "--configfile".as_ref(),
            conf.as_os_str(),
        ],
        &dir.join("smbd.out"),
    )?;
    record(&p)?;
    p.wait_listening(port, START_TIMEOUT)?;
    Ok(Started {
        processes: vec![p],
        ports: vec![port],
        url: format!("smb://127.0.0.1:{port}/{SHARE}"),
    })
}

/// The portmapper's port, which NFSv3 servers register with.
const RPCBIND_PORT: u16 = 111;

/// Starts rpcbind (unless one already answers on port 111) and nfs-ganesha.
pub fn start_nfs(
    dir: &Path,
    share_dir: &Path,
    opts: &[String],
    record: &mut dyn FnMut(&Proc) -> Result<(), LabError>,
) -> Result<Started, LabError> {
    let ganesha = tool("ganesha.nfsd", "nfs-ganesha")?;
    // The VFS back end is a plug-in of its own package.
    let fsal = [
        "/usr/lib/x86_64-linux-gnu/ganesha/libfsalvfs.so",
        "/usr/lib/aarch64-linux-gnu/ganesha/libfsalvfs.so",
        "/usr/lib/ganesha/libfsalvfs.so",
        "/usr/lib64/ganesha/libfsalvfs.so",
    ];
    if !fsal.iter().any(|p| Path::new(p).exists()) {
        return Err(LabError::ToolMissing {
            tool: "libfsalvfs.so",
            package: "nfs-ganesha-vfs",
        });
    }
    let mut processes = Vec::new();
    if !listening(RPCBIND_PORT) {
        let rpcbind = tool("rpcbind", "rpcbind")?;
        // -f: stay in the foreground, so naslab owns it and stops it by PID.
        let p = spawn(
            "rpcbind",
            &rpcbind,
            &["-f".as_ref()],
            &dir.join("rpcbind.out"),
        )?;
        record(&p)?;
        p.wait_listening(RPCBIND_PORT, START_TIMEOUT)?;
        processes.push(p);
    }
    let nfs_port = free_port()?;
    let mut mnt_port = free_port()?;
    while mnt_port == nfs_port {
        mnt_port = free_port()?;
    }
    let conf = dir.join("ganesha.conf");
    std::fs::write(&conf, ganesha_config(share_dir, nfs_port, mnt_port, opts))
        .map_err(LabError::io("write", &conf))?;
    let log = dir.join("ganesha.log");
    let pidfile = dir.join("ganesha.pid");
    let p = spawn(
        "ganesha.nfsd",
        &ganesha,
        &[
            "-F".as_ref(),
            "-L".as_ref(),
            log.as_os_str(),
            "-f".as_ref(),
            conf.as_os_str(),
            "-p".as_ref(),
            pidfile.as_os_str(),
        ],
        &dir.join("ganesha.out"),
    )?;
    record(&p)?;
    p.wait_listening(nfs_port, START_TIMEOUT)?;
    p.wait_listening(mnt_port, START_TIMEOUT)?;
    processes.push(p);
    Ok(Started {
        processes,
        ports: vec![nfs_port, mnt_port],
        url: format!("nfs://127.0.0.1:{nfs_port}/{SHARE}?mountport={mnt_port}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_listen_on_loopback_and_carry_the_options() {
        let c = samba_config(
            Path::new("/lab"),
            Path::new("/lab/mnt/share"),
            4450,
            &["strict allocate = yes".into()],
        );
        assert!(c.contains("smb ports = 4450") && c.contains("interfaces = 127.0.0.1"));
        assert!(c.contains("bind interfaces only = yes"));
        assert!(c.trim_end().ends_with("strict allocate = yes"), "{c}");
        let g = ganesha_config(Path::new("/lab/mnt/share"), 1, 2, &[]);
        assert!(g.contains("Bind_addr = 127.0.0.1;") && g.contains("NFS_Port = 1;"));
        assert!(g.contains("Path = /lab/mnt/share;"));
    }

    #[test]
    fn options_are_one_setting_each() {
        check_option("strict allocate = yes").unwrap();
        for bad in ["strict allocate", "a = b\n[x]", "x = }", "= y"] {
            assert!(check_option(bad).is_err(), "{bad}");
        }
        assert_eq!("smb".parse::<ServerKind>().unwrap(), ServerKind::Samba);
        assert!("ftp".parse::<ServerKind>().is_err());
    }
}
