//! Opening the target a run names: each backend's opener (the registry's `open`, which
//! picks the backend for a directory, an `smb://` or `nfs://` URL, or no target at all),
//! and the client profile asked for around it.

use std::path::Path;

use naslab_results::{ProtocolSettings, TargetInfo};

use super::url::{ClientOptions, RemoteUrl, Scheme, UrlError};
#[cfg(target_os = "linux")]
use crate::mount::mount_of;
use crate::registry;
use naslab_backend::{ClientProfile, NullTarget, ProfiledTarget, Target, TimedNullTarget};
#[cfg(target_os = "linux")]
use naslab_local::sandbox::{Sandbox, SandboxError};

/// Where a run goes, as the command line names it.
#[derive(Debug, Clone, Copy)]
pub struct TargetRequest<'a> {
    /// A directory (a mounted share or a local disk), or an `smb://` or `nfs://` URL.
    pub target: Option<&'a Path>,
    /// No I/O at all (the null backend): measures naslab itself. `target`, if given, is
    /// only recorded.
    pub null: bool,
    /// With `null`: each op's fixed service time, ns (0: none), and a stall (the op index
    /// of each connection that takes longer, and how much longer, ns).
    pub null_service_ns: u64,
    pub null_stall: Option<(u64, u64)>,
    /// A multi-client job's own directory (`client-<rank>`) inside the target: naslab's
    /// directory is made in it, on a local target or a share.
    pub client_dir: Option<&'a str>,
    /// Join the multi-client job's first client in `<target>/naslab` (which it holds)
    /// instead of taking a directory of one's own: `--shared-files` on the other clients.
    pub join: bool,
    /// How the protocol clients behave.
    pub client: ClientOptions,
    /// What the client sends besides the workload's own requests.
    pub profile: ClientProfile,
}

impl<'a> TargetRequest<'a> {
    /// `target` as it is: naslab's directory right in it, the protocol clients'
    /// defaults, no client profile.
    pub fn plain(target: Option<&'a Path>) -> TargetRequest<'a> {
        TargetRequest {
            target,
            null: false,
            null_service_ns: 0,
            null_stall: None,
            client_dir: None,
            join: false,
            client: ClientOptions::default(),
            profile: ClientProfile::Plain,
        }
    }
}

/// An opened target and what the results say about it.
pub struct OpenedTarget {
    pub target: Box<dyn Target>,
    pub info: TargetInfo,
    /// The URL's scheme (the protocol spoken), for a URL target; `None` for a directory
    /// or no target.
    pub scheme: Option<&'static Scheme>,
    /// A URL target's protocol client: its options and what the server agreed to.
    pub settings: Option<ProtocolSettings>,
}

/// Why a target could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("--target DIR is needed: the directory (a mounted share or a local disk) to run in")]
    NoTarget,
    #[error(transparent)]
    Url(#[from] UrlError),
    #[cfg(target_os = "linux")]
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// A local directory on a system whose directories are kept as a share's are.
    #[error(transparent)]
    Marked(#[from] super::remote::RemoteSandboxError),
    /// The password could not be had (the caller's own words).
    #[error("{0}")]
    Password(String),
    #[error("this naslab was built without the {name} backend: {missing}")]
    NotBuilt {
        name: &'static str,
        missing: &'static str,
    },
    #[error("cannot use {url}")]
    Connect {
        url: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error(
        "--client-profile windows models the Windows SMB redirector; use it with smb:// targets or local directories, not nfs://"
    )]
    ProfileNotForNfs,
    #[error(
        "--retrans-timeout is for NFSv3 and SMB: naslab's NFSv4.1 client keeps its session's requests on one connection and does not send them again; leave it out, or use vers=3"
    )]
    RetransNotForNfs4,
    #[cfg_attr(unix, allow(dead_code))]
    #[error(
        "naslab's NFSv4.1 and 4.2 client is in its Linux build only; on this system use vers=3, or run naslab from a Linux client"
    )]
    Nfs4NotHere,
}

/// Gives the password for an SMB URL, or says why there is none.
pub type Password<'a> = &'a dyn Fn(&RemoteUrl) -> Result<String, String>;

/// Opens the target `req` names, with the backend the registry picks for it
/// ([`registry::for_request`]). `password` is asked for an SMB URL's password only when
/// one is needed.
pub fn open(req: &TargetRequest<'_>, password: Password<'_>) -> Result<OpenedTarget, OpenError> {
    open_with(registry::for_request(req), req, password)
}

/// Opens `req`'s target with `backend`, which says how to get it if this build lacks it.
fn open_with(
    backend: &registry::Descriptor,
    req: &TargetRequest<'_>,
    password: Password<'_>,
) -> Result<OpenedTarget, OpenError> {
    let open = backend.open.ok_or(OpenError::NotBuilt {
        name: backend.name,
        missing: backend.missing,
    })?;
    let opened = open(req, password)?;
    let mut opened = with_profile(opened, req.profile);
    opened.info.cache_drop = opened.target.caps().drop_cache;
    Ok(opened)
}

/// The null backend: no I/O; `--target`, if given, is only recorded.
pub(crate) fn null(req: &TargetRequest<'_>, _: Password<'_>) -> Result<OpenedTarget, OpenError> {
    let (service_ns, stall) = (req.null_service_ns, req.null_stall);
    let timed: Box<dyn Target> = if service_ns > 0 || stall.is_some() {
        Box::new(TimedNullTarget { service_ns, stall })
    } else {
        Box::new(NullTarget)
    };
    Ok(OpenedTarget {
        target: timed,
        info: TargetInfo {
            path: req
                .target
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            backend: NullTarget.backend_name().into(),
            ..TargetInfo::default()
        },
        scheme: None,
        settings: None,
    })
}

/// The directory a local backend runs in.
#[cfg(any(target_os = "linux", windows))]
fn directory<'a>(req: &TargetRequest<'a>) -> Result<&'a Path, OpenError> {
    req.target.ok_or(OpenError::NoTarget)
}

/// A directory on Windows: local, a mapped drive or a UNC path, through the OS client.
#[cfg(windows)]
pub(crate) fn windows(req: &TargetRequest<'_>, _: Password<'_>) -> Result<OpenedTarget, OpenError> {
    let dir = directory(req)?;
    let target = super::WindowsTarget::open(dir, req.client_dir, req.join)?;
    Ok(OpenedTarget {
        info: TargetInfo {
            path: dir.display().to_string(),
            backend: target.backend_name().into(),
            ..TargetInfo::default()
        },
        target: Box::new(target),
        scheme: None,
        settings: None,
    })
}

/// A Linux directory (local, or a mounted share) in its sandbox.
#[cfg(target_os = "linux")]
pub(crate) fn posix(req: &TargetRequest<'_>, _: Password<'_>) -> Result<OpenedTarget, OpenError> {
    let dir = directory(req)?;
    let sandbox = match (req.client_dir, req.join) {
        (_, true) => naslab_backend::marker::wait_for_holder(
            || Sandbox::join(dir),
            |e| matches!(e, naslab_local::sandbox::SandboxError::NotHeld(_)),
        )?,
        (Some(client), false) => Sandbox::open_client(dir, client)?,
        (None, false) => Sandbox::open(dir)?,
    };
    let target = super::PosixTarget::new(sandbox);
    let (fs_type, source) = mount_of(dir);
    Ok(OpenedTarget {
        info: TargetInfo {
            path: dir.display().to_string(),
            backend: target.backend_name().into(),
            fs_type,
            source,
            ..TargetInfo::default()
        },
        target: Box::new(target),
        scheme: None,
        settings: None,
    })
}

/// The URL a protocol backend was chosen for.
#[cfg(any(feature = "smb", feature = "nfs"))]
fn url_of(req: &TargetRequest<'_>) -> Result<RemoteUrl, OpenError> {
    let text = req
        .target
        .and_then(|p| p.to_str())
        .ok_or(OpenError::NoTarget)?;
    Ok(text.parse()?)
}

/// An `smb://` URL, through naslab's own SMB client.
#[cfg(feature = "smb")]
pub(crate) fn smb(
    req: &TargetRequest<'_>,
    password: Password<'_>,
) -> Result<OpenedTarget, OpenError> {
    remote_target(url_of(req)?, |url| {
        let password = password(&url).map_err(OpenError::Password)?;
        let shown = url.to_string();
        let t = super::SmbTarget::connect_in(url, password, req.client, req.client_dir, req.join)
            .map_err(|e| OpenError::Connect {
            url: shown,
            source: Box::new(e),
        })?;
        let settings = ProtocolSettings::Smb(t.settings().clone());
        Ok((Box::new(t), settings))
    })
}

/// An `nfs://` URL, through naslab's own NFSv3 or NFSv4.1 client.
#[cfg(feature = "nfs")]
pub(crate) fn nfs(req: &TargetRequest<'_>, _: Password<'_>) -> Result<OpenedTarget, OpenError> {
    let url = url_of(req)?;
    if req.profile == ClientProfile::Windows {
        return Err(OpenError::ProfileNotForNfs);
    }
    remote_target(url, |url| {
        if url.nfs_version != super::url::NfsVersion::V3 {
            if req.client.retrans_timeout.is_some() {
                return Err(OpenError::RetransNotForNfs4);
            }
            return nfs4(url, req);
        }
        let shown = url.to_string();
        let t = super::NfsTarget::connect_in(url, req.client, req.client_dir, req.join).map_err(
            |e| OpenError::Connect {
                url: shown,
                source: Box::new(e),
            },
        )?;
        let settings = ProtocolSettings::Nfs(t.settings());
        Ok((Box::new(t), settings))
    })
}

/// A URL target's opened target and what its client and the server agreed to, with
/// what the results say about it.
#[cfg(any(feature = "smb", feature = "nfs"))]
fn remote_target(
    url: RemoteUrl,
    connect: impl FnOnce(RemoteUrl) -> Result<Connected, OpenError>,
) -> Result<OpenedTarget, OpenError> {
    let scheme = url.scheme;
    let info = TargetInfo {
        path: url.to_string(),
        backend: scheme.name.into(),
        fs_type: scheme.name.into(),
        // The URL itself (never a password: URLs cannot carry one), so the run can be
        // repeated with `naslab run --target SOURCE`.
        source: url.to_string(),
        ..TargetInfo::default()
    };
    let (target, settings) = connect(url)?;
    Ok(OpenedTarget {
        target,
        info,
        scheme: Some(scheme),
        settings: Some(settings),
    })
}

#[cfg(any(feature = "smb", feature = "nfs"))]
type Connected = (Box<dyn Target>, ProtocolSettings);

#[cfg(all(feature = "nfs", unix))]
fn nfs4(url: RemoteUrl, req: &TargetRequest<'_>) -> Result<Connected, OpenError> {
    let shown = url.to_string();
    let t =
        super::Nfs4Target::connect_in(url, req.client, req.client_dir, req.join).map_err(|e| {
            OpenError::Connect {
                url: shown,
                source: Box::new(e),
            }
        })?;
    let settings = ProtocolSettings::Nfs(t.settings());
    Ok((Box::new(t), settings))
}

#[cfg(all(feature = "nfs", not(unix)))]
fn nfs4(_url: RemoteUrl, _req: &TargetRequest<'_>) -> Result<Connected, OpenError> {
    Err(OpenError::Nfs4NotHere)
}

/// Wraps the opened target in `profile` (plain: unchanged).
fn with_profile(mut opened: OpenedTarget, profile: ClientProfile) -> OpenedTarget {
    if profile != ClientProfile::Plain {
        opened.target = Box::new(ProfiledTarget::new(opened.target, profile));
    }
    opened
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_password(_: &RemoteUrl) -> Result<String, String> {
        Err("no password here".into())
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_directory_opens_the_posix_backend_with_its_sandbox() {
        let dir = tempfile::tempdir().unwrap();
        let o = open(&TargetRequest::plain(Some(dir.path())), &no_password).unwrap();
        assert_eq!(o.info.backend, "posix");
        assert!(o.target.caps().moves_data);
        let root = o.target.local_root().expect("a local target has a root");
        assert_eq!(
            root.root(),
            dir.path().join(naslab_local::sandbox::ROOT_NAME)
        );
        assert!(o.scheme.is_none());
    }

    #[test]
    fn null_needs_no_target_and_moves_no_data() {
        let mut req = TargetRequest::plain(None);
        req.null = true;
        let o = open(&req, &no_password).unwrap();
        assert_eq!(o.info.backend, "null");
        assert!(!o.target.caps().moves_data);
        #[cfg(target_os = "linux")]
        assert!(o.target.local_root().is_none());
    }

    #[test]
    fn a_directory_is_needed_without_null() {
        let e = open(&TargetRequest::plain(None), &no_password)
            .err()
            .unwrap();
        assert!(matches!(e, OpenError::NoTarget), "{e}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_profile_wraps_and_keeps_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let mut req = TargetRequest::plain(Some(dir.path()));
        req.profile = ClientProfile::Windows;
        let o = open(&req, &no_password).unwrap();
        assert_eq!(o.target.caps().max_queue_depth, 1, "windows: one at a time");
        assert!(o.target.local_root().is_some());
    }

    #[cfg(feature = "nfs")]
    #[test]
    fn the_windows_profile_is_refused_for_nfs_before_connecting() {
        let url = Path::new("nfs://127.0.0.1:1/export");
        let mut req = TargetRequest::plain(Some(url));
        req.profile = ClientProfile::Windows;
        let e = open(&req, &no_password).err().unwrap();
        assert!(matches!(e, OpenError::ProfileNotForNfs), "{e}");
    }

    #[cfg(feature = "smb")]
    #[test]
    fn a_bad_url_is_named() {
        let e = open(
            &TargetRequest::plain(Some(Path::new("smb://"))),
            &no_password,
        )
        .err()
        .unwrap();
        assert!(matches!(e, OpenError::Url(_)), "{e}");
    }

    #[test]
    fn a_backend_this_build_lacks_says_how_to_get_it() {
        let lacking = registry::BACKENDS
            .iter()
            .find(|d| d.caps.is_none())
            .expect("no build has every backend: Windows and Linux exclude each other");
        let dir = std::env::temp_dir();
        let e = open_with(lacking, &TargetRequest::plain(Some(&dir)), &no_password)
            .err()
            .unwrap();
        let OpenError::NotBuilt { name, missing } = &e else {
            panic!("{e}");
        };
        assert_eq!((*name, *missing), (lacking.name, lacking.missing));
        assert!(e.to_string().contains(lacking.missing), "{e}");
    }
}
