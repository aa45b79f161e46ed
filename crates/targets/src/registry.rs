//! Every backend naslab knows: its name, how a run chooses it, whether this build has
//! it, and what it can do. The URL schemes a target may start with come from here, and
//! `naslab backends` prints this table.

use naslab_trace::OpKind;

use naslab_backend::Caps;

use crate::open::{self, OpenError, OpenedTarget, Password, TargetRequest};

/// Opens a run's target with one backend.
pub type Opener = fn(&TargetRequest<'_>, Password<'_>) -> Result<OpenedTarget, OpenError>;

/// How a run chooses a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// `--target DIR`: a local directory or a mounted share, through the system's files.
    Directory,
    /// `--target SCHEME://...`: naslab's own client for the protocol.
    Url(&'static str),
    /// `--backend NAME`.
    Flag(&'static str),
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Choice::Directory => f.write_str("--target DIR"),
            Choice::Url(scheme) => write!(f, "--target {scheme}://..."),
            Choice::Flag(name) => write!(f, "--backend {name}"),
        }
    }
}

/// One backend as this build knows it.
#[derive(Debug, Clone, Copy)]
pub struct Descriptor {
    pub name: &'static str,
    pub choice: Choice,
    /// What it speaks to, in a few words.
    pub summary: &'static str,
    /// What it can do; `None` when this build does not have it.
    pub caps: Option<Caps>,
    /// For a backend this build lacks: how to get one that has it.
    pub missing: &'static str,
    /// How a run opens its target with it; `None` when this build does not have it.
    pub open: Option<Opener>,
}

impl Descriptor {
    /// The ops it cannot do (none when it is not built: nothing is known then).
    pub fn lacks(&self) -> Vec<OpKind> {
        match self.caps {
            Some(c) => OpKind::ALL.into_iter().filter(|k| !c.can(*k)).collect(),
            None => Vec::new(),
        }
    }
}

/// A backend in this build: what it can do and how it opens a target.
type Built = (Option<Caps>, Option<Opener>);

#[cfg(target_os = "linux")]
const POSIX: Built = (Some(naslab_local::POSIX_CAPS), Some(open::posix));
#[cfg(not(target_os = "linux"))]
const POSIX: Built = (None, None);
#[cfg(feature = "smb")]
const SMB: Built = (Some(naslab_remote::SMB_CAPS), Some(open::smb));
#[cfg(not(feature = "smb"))]
const SMB: Built = (None, None);
#[cfg(feature = "nfs")]
const NFS: Built = (Some(naslab_remote::NFS_CAPS), Some(open::nfs));
#[cfg(not(feature = "nfs"))]
const NFS: Built = (None, None);
#[cfg(windows)]
const WINDOWS: Built = (Some(naslab_local::WINDOWS_CAPS), Some(open::windows));
#[cfg(not(windows))]
const WINDOWS: Built = (None, None);

/// Every backend, in the order `naslab backends` lists them.
pub static BACKENDS: [Descriptor; 5] = [
    Descriptor {
        name: "posix",
        choice: Choice::Directory,
        summary: "a Linux directory or mounted share (io_uring for queue depths above 1)",
        caps: POSIX.0,
        missing: "Linux builds only",
        open: POSIX.1,
    },
    Descriptor {
        name: "windows",
        choice: Choice::Directory,
        summary: "a Windows directory, mapped drive or UNC path (Win32 file API; overlapped I/O on a completion port for queue depths above 1)",
        caps: WINDOWS.0,
        missing: "naslab.exe only (scripts/build-windows.sh)",
        open: WINDOWS.1,
    },
    Descriptor {
        name: "smb",
        choice: Choice::Url("smb"),
        summary: "an SMB 2/3 share through naslab's own client (no mount)",
        caps: SMB.0,
        missing: "rebuild with --features smb",
        open: SMB.1,
    },
    Descriptor {
        name: "nfs",
        choice: Choice::Url("nfs"),
        summary: "an NFSv3 or NFSv4.1 (?vers=4.1) export through naslab's own client (no mount)",
        caps: NFS.0,
        missing: "rebuild with --features nfs",
        open: NFS.1,
    },
    Descriptor {
        name: "null",
        choice: Choice::Flag("null"),
        summary: "no I/O at all: measures naslab itself, or a server of fixed service time",
        caps: Some(naslab_backend::NULL_CAPS),
        missing: "",
        open: Some(open::null),
    },
];

/// The backend a `--target` URL names by its scheme, built or not; `None` for a path.
pub fn by_url(target: &str) -> Option<&'static Descriptor> {
    let (scheme, _) = target.split_once("://")?;
    BACKENDS
        .iter()
        .find(|d| matches!(d.choice, Choice::Url(s) if s == scheme))
}

/// The backend that opens `req`'s target: the null backend when it is asked for, the one
/// a URL's scheme names, else this system's own for a directory.
pub fn for_request(req: &TargetRequest<'_>) -> &'static Descriptor {
    let url = req.target.and_then(|p| p.to_str()).and_then(by_url);
    match (req.null, url) {
        (true, _) => by_flag("null").unwrap_or(&BACKENDS[0]),
        (false, Some(d)) => d,
        (false, None) => BACKENDS
            .iter()
            .filter(|d| d.choice == Choice::Directory)
            .find(|d| d.caps.is_some())
            .unwrap_or(&BACKENDS[0]),
    }
}

/// Whether a `--target` value is a protocol URL rather than a local directory.
pub fn is_remote(target: &str) -> bool {
    by_url(target).is_some()
}

/// The backend `--backend NAME` names.
pub fn by_flag(name: &str) -> Option<&'static Descriptor> {
    BACKENDS.iter().find(|d| {
        matches!(d.choice, Choice::Flag(f) if f == name) || (d.name == name && d.caps.is_some())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_flags_find_their_backend_and_paths_none() {
        assert_eq!(by_url("smb://host/share").map(|d| d.name), Some("smb"));
        assert_eq!(by_url("nfs://host/export").map(|d| d.name), Some("nfs"));
        assert!(by_url("/mnt/nas").is_none());
        assert!(by_url("ftp://host/x").is_none());
        assert!(is_remote("nfs://h/x") && !is_remote("/mnt/nas"));
        assert_eq!(by_flag("null").map(|d| d.name), Some("null"));
        assert!(by_flag("nonesuch").is_none());
        let mut req = TargetRequest::plain(Some(std::path::Path::new("nfs://h/x")));
        assert_eq!(for_request(&req).name, "nfs");
        req.null = true;
        assert_eq!(for_request(&req).name, "null");
        let dir = TargetRequest::plain(Some(std::path::Path::new("/mnt/nas")));
        let local = if cfg!(windows) { "windows" } else { "posix" };
        assert_eq!(for_request(&dir).name, local);
        let names: Vec<_> = BACKENDS.iter().map(|d| d.name).collect();
        let mut unique = names.clone();
        unique.dedup();
        assert_eq!(names, unique);
    }

    #[test]
    fn every_url_scheme_has_its_line_and_every_url_line_its_scheme() {
        use crate::url::{SCHEMES, Scheme};
        for scheme in SCHEMES {
            let lines: Vec<_> = BACKENDS
                .iter()
                .filter(|d| d.choice == Choice::Url(scheme.name))
                .collect();
            assert_eq!(
                lines.len(),
                1,
                "{}:// has no registry line, or several",
                scheme.name
            );
            assert_eq!(
                lines[0].name, scheme.name,
                "the backend is named as its scheme"
            );
        }
        for d in &BACKENDS {
            if let Choice::Url(name) = d.choice {
                assert!(
                    Scheme::by_name(name).is_some(),
                    "{name}:// is in the registry but not in naslab_remote::url::SCHEMES"
                );
            }
        }
    }

    #[cfg(all(target_os = "linux", feature = "nfs", feature = "smb"))]
    #[test]
    fn each_descriptor_has_its_backends_own_capabilities() {
        let posix = by_flag("posix").unwrap();
        assert!(posix.lacks().is_empty());
        let nfs = by_url("nfs://h/e").unwrap();
        assert_eq!(
            nfs.lacks(),
            vec![
                OpKind::Fallocate,
                OpKind::Link,
                OpKind::Symlink,
                OpKind::Lock,
                OpKind::Unlock
            ]
        );
        assert_eq!(
            by_url("smb://h/s").unwrap().lacks(),
            vec![OpKind::Link, OpKind::Symlink]
        );
        assert!(by_flag("windows").is_none(), "not in a Linux build");
        assert!(BACKENDS[1].caps.is_none());
        for d in &BACKENDS {
            assert_eq!(d.open.is_some(), d.caps.is_some(), "{}", d.name);
        }
    }
}
