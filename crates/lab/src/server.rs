//! The file servers a lab runs: Samba's smbd, or nfs-ganesha (with rpcbind, which it
//! must register with). Each is configured to listen on 127.0.0.1 only, on free
//! ports, with all its state and logs in the lab directory.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::account::{Account, LAB_USER, new_password};
use crate::error::LabError;
use crate::process::{Proc, free_port, spawn, tool};

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
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "samba" | "smb" => Ok(ServerKind::Samba),
            "nfs" | "ganesha" | "nfs-ganesha" => Ok(ServerKind::Nfs),
            _ => Err(format!(
                "unknown server '{s}'; the choices are samba and nfs"
            )),
        }
    }
}

/// The prefix that puts a `--opt` setting in the server's global section (Samba's
/// `[global]`, ganesha's `NFS_CORE_PARAM`) instead of the share or export.
pub const GLOBAL_PREFIX: &str = "global:";

/// Splits a `--opt` value into whether it is global and its `name = value` text.
pub fn split_option(opt: &str) -> (bool, &str) {
    let t = opt.trim();
    match t.strip_prefix(GLOBAL_PREFIX) {
        Some(rest) => (true, rest.trim()),
        None => (false, t),
    }
}

/// The setting's name, lower case, without spaces (`Pseudo`, `smb encrypt`...).
fn option_name(opt: &str) -> String {
    let (_, o) = split_option(opt);
    o.split('=')
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Checks a `--opt` value: one `name = value` line (optionally `global: name = value`),
/// nothing that could open a section or block of its own.
pub fn check_option(opt: &str) -> Result<(), LabError> {
    let (_, body) = split_option(opt);
    let ok = body.contains('=')
        && !body.trim_start().starts_with('=')
        && !opt.contains('\n')
        && !opt.contains('\r')
        && !opt.contains('[')
        && !opt.contains('{')
        && !opt.contains('}');
    if ok {
        Ok(())
    } else {
        Err(LabError::BadOption(opt.to_string()))
    }
}

/// smb.conf for a lab: a share of `share_dir` for the lab account alone, signed in
/// with its password (no guest access); `opts` added to the share, or to `[global]`
/// when they start with `global:`.
pub fn samba_config(dir: &Path, share_dir: &Path, port: u16, opts: &[String]) -> String {
    let d = dir.display();
    let mut global = String::new();
    let mut share = String::new();
    for o in opts {
        let (is_global, body) = split_option(o);
        let to = if is_global { &mut global } else { &mut share };
        to.push_str("  ");
        to.push_str(body);
        to.push('\n');
    }
    format!(
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
  passdb backend = tdbsam:{d}/samba/private/passdb.tdb
  map to guest = Never
  restrict anonymous = 2
  load printers = no
  printing = bsd
  printcap name = /dev/null
  disable spoolss = yes
{global}
[{SHARE}]
  path = {}
  read only = no
  guest ok = no
  valid users = {LAB_USER}
  create mask = 0664
  directory mask = 0775
{share}",
        share_dir.display()
    )
}

/// The export path a ganesha lab serves: `/naslab`, or what a `Pseudo = ...` option
/// names (a NAS-like `/volume1/shares/naslab`, say).
pub fn export_path(opts: &[String]) -> String {
    opts.iter()
        .filter(|o| option_name(o) == "pseudo")
        .filter_map(|o| split_option(o).1.split_once('='))
        .map(|(_, v)| v.trim().trim_end_matches(';').trim().to_string())
        .next_back()
        .unwrap_or_else(|| format!("/{SHARE}"))
}

/// ganesha.conf for a lab: `share_dir` exported read-write over NFSv3 and 4.0 to 4.2 (as /naslab
/// unless a `Pseudo` option says otherwise), every user squashed to the lab account
/// `anon`; `opts` added to the export, or to `NFS_CORE_PARAM` when they start with
/// `global:`.
pub fn ganesha_config(
    share_dir: &Path,
    nfs_port: u16,
    mnt_port: u16,
    opts: &[String],
    anon: Account,
) -> String {
    let mut export_opts = String::new();
    let mut core_opts = String::new();
    let mut overridden = Vec::new();
    let mut global_names = Vec::new();
    for o in opts {
        let (is_global, body) = split_option(o);
        let body = body.trim_end_matches(';');
        let to = if is_global {
            global_names.push(option_name(o));
            &mut core_opts
        } else {
            overridden.push(option_name(o));
            &mut export_opts
        };
        to.push_str(&format!("  {body};\n"));
    }
    // naslab's defaults, unless an option sets the same thing.
    let mut defaults = String::new();
    for (name, line) in [
        ("pseudo", format!("Pseudo = /{SHARE};")),
        ("accesstype", "Access_Type = RW;".into()),
        ("squash", "Squash = All_Squash;".into()),
        ("anonymousuid", format!("Anonymous_Uid = {};", anon.uid)),
        ("anonymousgid", format!("Anonymous_Gid = {};", anon.gid)),
        ("privilegedport", "PrivilegedPort = false;".into()),
        ("protocols", "Protocols = 3, 4;".into()),
    ] {
        if !overridden.iter().any(|o| o == name) {
            defaults.push_str(&format!("  {line}\n"));
        }
    }
    // The versions served: 3 and 4.0 to 4.2, unless a global option says otherwise.
    // Without PNFS_MDS = false, ganesha's VFS back end tells NFSv4.1 clients that it
    // hands out pNFS layouts and then refuses every LAYOUTGET; the client library
    // asks again before each READ and WRITE (a second round trip per op: PhotoAlbum's
    // reads took 639 µs instead of 151).
    let core_protocols = if global_names.iter().any(|n| n == "protocols") {
        String::new()
    } else {
        "  Protocols = 3, 4;\n".to_string()
    };
    format!(
        "# Written by naslab lab up; the lab's own nfs-ganesha, on 127.0.0.1 only.
NFS_CORE_PARAM {{
{core_protocols}  NFS_Port = {nfs_port};
  MNT_Port = {mnt_port};
  Bind_addr = 127.0.0.1;
  Enable_NLM = false;
  Enable_RQUOTA = false;
  Enable_UDP = false;
  Mount_Path_Pseudo = true;
{core_opts}}}
NFSV4 {{ Graceless = true; Minor_Versions = 0, 1, 2; PNFS_MDS = false; PNFS_DS = false; }}
EXPORT {{
  Export_Id = 1;
  Path = {};
{defaults}  Transports = TCP;
  SecType = sys;
{export_opts}  FSAL {{ Name = VFS; }}
}}
LOG {{ Default_Log_Level = EVENT; }}
",
        share_dir.display()
    )
}

/// The URL of an NFS lab's export spoken to in NFS version `version` ("4.1", "4.2"):
/// its v3 `url` without the MOUNT port, which version 4 does not use.
pub fn nfs4_url(url: &str, version: &str) -> String {
    let base = url.split_once('?').map_or(url, |(b, _)| b);
    format!("{base}?vers={version}")
}

/// A started server: its processes, ports and URL.
pub struct Started {
    pub processes: Vec<Proc>,
    pub ports: Vec<u16>,
    pub url: String,
    /// The account clients sign in as (Samba), and its password.
    pub user: String,
    pub password: String,
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
    let password = new_password()?;
    add_samba_user(&conf, &password)?;
    let p = spawn_smbd(dir, &smbd)?;
    record(&p)?;
    p.wait_listening(port, START_TIMEOUT)?;
    Ok(Started {
        processes: vec![p],
        ports: vec![port],
        url: format!("smb://{LAB_USER}@127.0.0.1:{port}/{SHARE}"),
        user: LAB_USER.into(),
        password,
    })
}

/// smbd in the foreground on the lab's smb.conf.
fn spawn_smbd(dir: &Path, smbd: &Path) -> Result<Proc, LabError> {
    let conf = dir.join("smb.conf");
    spawn(
        "smbd",
        smbd,
        &[
            "--foreground".as_ref(),
            "--no-process-group".as_ref(),
            "--configfile".as_ref(),
            conf.as_os_str(),
        ],
        &dir.join("smbd.out"),
    )
}

/// ganesha.nfsd in the foreground on the lab's ganesha.conf, its log in ganesha.out.
fn spawn_ganesha(dir: &Path, ganesha: &Path) -> Result<Proc, LabError> {
    let conf = dir.join("ganesha.conf");
    // ganesha's own log goes to the same file as its output: one place to look.
    let log = dir.join("ganesha.out");
    let pidfile = dir.join("ganesha.pid");
    spawn(
        "ganesha.nfsd",
        ganesha,
        &[
            "-F".as_ref(),
            "-L".as_ref(),
            log.as_os_str(),
            "-f".as_ref(),
            conf.as_os_str(),
            "-p".as_ref(),
            pidfile.as_os_str(),
        ],
        &log,
    )
}

/// Starts the lab's server again after `old` (its process) was stopped: the same
/// configuration, ports, share and accounts, so clients find it where it was. Returns
/// the new process once it serves; the caller records it in place of `old`.
pub fn start_again(
    dir: &Path,
    kind: ServerKind,
    ports: &[u16],
    old: &Proc,
) -> Result<Proc, LabError> {
    let from = std::fs::metadata(&old.log).map(|m| m.len()).unwrap_or(0);
    match kind {
        ServerKind::Samba => {
            let p = spawn_smbd(dir, &tool("smbd", "samba")?)?;
            for &port in ports {
                p.wait_listening(port, START_TIMEOUT)?;
            }
            Ok(p)
        }
        ServerKind::Nfs => {
            let starting = crate::portmap::acquire(dir, START_TIMEOUT)?;
            let p = spawn_ganesha(dir, &tool("ganesha.nfsd", "nfs-ganesha")?)?;
            for &port in ports {
                p.wait_listening(port, START_TIMEOUT)?;
            }
            p.wait_logged_after("NFS SERVER INITIALIZED", from, START_TIMEOUT)?;
            drop(starting);
            Ok(p)
        }
    }
}

/// Adds the lab account to the lab's own Samba password database (in its private
/// directory) with `password`.
fn add_samba_user(conf: &Path, password: &str) -> Result<(), LabError> {
    let pdbedit = tool("pdbedit", "samba")?;
    let mut child = std::process::Command::new(&pdbedit)
        .arg("--configfile")
        .arg(conf)
        .args(["-a", "-t", "-u", LAB_USER])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(LabError::io("run", &pdbedit))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write;
        stdin
            .write_all(format!("{password}\n{password}\n").as_bytes())
            .map_err(LabError::io("write to", &pdbedit))?;
    }
    let out = child
        .wait_with_output()
        .map_err(LabError::io("run", &pdbedit))?;
    if !out.status.success() {
        return Err(LabError::Command {
            command: format!("pdbedit -a -u {LAB_USER}"),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(())
}

/// Starts nfs-ganesha, with the shared rpcbind it registers with (`portmap`).
pub fn start_nfs(
    dir: &Path,
    share_dir: &Path,
    opts: &[String],
    anon: Account,
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
    // The one rpcbind ganesha registers with, shared with every other NFS lab; held
    // until this ganesha has registered, so no other lab's ganesha registers meanwhile.
    let starting = crate::portmap::acquire(dir, START_TIMEOUT)?;
    let mut processes = Vec::new();
    let nfs_port = free_port()?;
    let mut mnt_port = free_port()?;
    while mnt_port == nfs_port {
        mnt_port = free_port()?;
    }
    let conf = dir.join("ganesha.conf");
    std::fs::write(
        &conf,
        ganesha_config(share_dir, nfs_port, mnt_port, opts, anon),
    )
    .map_err(LabError::io("write", &conf))?;
    let p = spawn_ganesha(dir, &ganesha)?;
    record(&p)?;
    p.wait_listening(nfs_port, START_TIMEOUT)?;
    // With NFSv3 left out (`Protocols = 4`), no MOUNT service listens.
    let serves_v3 = opts
        .iter()
        .filter(|o| option_name(o) == "protocols")
        .all(|o| {
            split_option(o)
                .1
                .split('=')
                .nth(1)
                .is_some_and(|v| v.contains('3'))
        });
    if serves_v3 {
        p.wait_listening(mnt_port, START_TIMEOUT)?;
    }
    // Logged once every program is registered with rpcbind and its service started.
    p.wait_logged("NFS SERVER INITIALIZED", START_TIMEOUT)?;
    drop(starting);
    processes.push(p);
    Ok(Started {
        processes,
        ports: vec![nfs_port, mnt_port],
        url: if serves_v3 {
            format!(
                "nfs://127.0.0.1:{nfs_port}{}?mountport={mnt_port}",
                export_path(opts)
            )
        } else {
            format!("nfs://127.0.0.1:{nfs_port}{}?vers=4.1", export_path(opts))
        },
        user: String::new(),
        password: String::new(),
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
        assert!(c.contains("valid users = naslab-lab") && c.contains("guest ok = no"));
        assert!(!c.contains("force user") && !c.contains("guest only"));
        let anon = Account { uid: 999, gid: 998 };
        let g = ganesha_config(Path::new("/lab/mnt/share"), 1, 2, &[], anon);
        assert!(g.contains("Bind_addr = 127.0.0.1;") && g.contains("NFS_Port = 1;"));
        assert!(g.contains("Path = /lab/mnt/share;"));
        assert!(g.contains("Squash = All_Squash;") && g.contains("Anonymous_Uid = 999;"));
        assert!(!g.contains("No_Root_Squash"));
        assert_eq!(export_path(&[]), "/naslab");
    }

    #[test]
    fn global_options_and_a_deeper_export_go_where_they_belong() {
        let opts = vec![
            "global: server signing = mandatory".to_string(),
            "smb encrypt = required".to_string(),
        ];
        let c = samba_config(Path::new("/lab"), Path::new("/s"), 1, &opts);
        let (global, share) = c.split_once("[naslab]").unwrap();
        assert!(global.contains("  server signing = mandatory\n"), "{c}");
        assert!(share.contains("  smb encrypt = required\n"), "{c}");
        let opts = vec![
            "Pseudo = /volume1/shares/naslab".to_string(),
            "Squash = Root_Squash".to_string(),
        ];
        let anon = Account { uid: 5, gid: 6 };
        let g = ganesha_config(Path::new("/s"), 1, 2, &opts, anon);
        assert_eq!(g.matches("  Pseudo =").count(), 1, "{g}");
        assert_eq!(g.matches("Squash =").count(), 1, "{g}");
        assert!(g.contains("Pseudo = /volume1/shares/naslab;"));
        assert_eq!(export_path(&opts), "/volume1/shares/naslab");
    }

    #[test]
    fn ganesha_serves_nfs_3_and_4_unless_told_otherwise() {
        let anon = Account { uid: 5, gid: 6 };
        let g = ganesha_config(Path::new("/s"), 1, 2, &[], anon);
        assert_eq!(g.matches("Protocols = 3, 4;").count(), 2, "{g}");
        assert!(g.contains("Minor_Versions = 0, 1, 2;"), "{g}");
        assert!(g.contains("PNFS_MDS = false;"), "{g}");
        let only4 = ["global: Protocols = 4".to_string(), "Protocols = 4".into()];
        let g = ganesha_config(Path::new("/s"), 1, 2, &only4, anon);
        assert_eq!(g.matches("Protocols =").count(), 2, "{g}");
        assert!(!g.contains("Protocols = 3"), "{g}");
        assert_eq!(
            nfs4_url("nfs://127.0.0.1:2049/naslab?mountport=20048", "4.1"),
            "nfs://127.0.0.1:2049/naslab?vers=4.1"
        );
    }

    #[test]
    fn options_are_one_setting_each() {
        check_option("strict allocate = yes").unwrap();
        check_option("global: server max protocol = SMB2_10").unwrap();
        for bad in [
            "strict allocate",
            "a = b\n[x]",
            "x = }",
            "= y",
            "global: = y",
        ] {
            assert!(check_option(bad).is_err(), "{bad}");
        }
        assert_eq!("smb".parse::<ServerKind>().unwrap(), ServerKind::Samba);
        assert!("ftp".parse::<ServerKind>().is_err());
    }
}
