//! Targets named by URL: `smb://[user@]host[:port]/share[/path]` and
//! `nfs://host[:port]/export[/path][?mountport=N][?vers=4.1]`. Parsed here whatever backends were
//! built, so a URL is checked (and a missing backend named) before anything connects.

use std::fmt;
use std::str::FromStr;

use crate::probe;

/// What naslab knows of one URL scheme: how its URLs are written and how its server is
/// probed. The parser finds a URL's scheme in [`SCHEMES`] by the text before `://`,
/// and what differs between protocols is read from these fields: a new protocol is a
/// new `Scheme` there (and its line in the targets' registry), not a case in a match.
pub struct Scheme {
    /// The text before `://`, which is also the backend's name (the registry's
    /// `Choice::Url` line).
    pub name: &'static str,
    /// The server's usual port.
    pub default_port: u16,
    /// How a URL of the scheme is written, for error messages.
    pub example: &'static str,
    /// What the first part of the path names, for error messages: `share`, `export`.
    pub root_word: &'static str,
    /// How the path divides into [`RemoteUrl::share`] and [`RemoteUrl::path`].
    pub root: RootShape,
    /// Takes one `?key=value` of the query into the URL: `Ok(false)` when the scheme
    /// has no such key, an error when the value is not one the key takes.
    pub query: QueryKey,
    /// The query keys it takes, as an error about an unknown one lists them.
    pub query_keys: &'static str,
    /// The request the round-trip probe times, and the reply it expects.
    pub probe: probe::Exchange,
}

/// One `key=value` of a URL's query taken into the URL being parsed (`url`, its text,
/// for errors); `Ok(false)` when the scheme has no such key.
pub type QueryKey =
    fn(into: &mut RemoteUrl, url: &str, key: &str, value: &str) -> Result<bool, UrlError>;

/// How a URL's path names the share or export it works in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootShape {
    /// The first component is the share (one name); the rest is the directory in it.
    FirstComponent,
    /// The whole path, with its leading `/`, stands as the export: where an export ends
    /// only the server knows, so the client splits it against the server's export list
    /// when it connects.
    WholePath,
}

impl RootShape {
    /// The share and the path inside it, from the path's (non-empty) components.
    fn split(self, parts: &[String]) -> (String, String) {
        match self {
            RootShape::FirstComponent => (parts[0].clone(), parts[1..].join("/")),
            RootShape::WholePath => (format!("/{}", parts.join("/")), String::new()),
        }
    }
}

/// SMB 2 and 3 (Samba, Windows, most NAS devices).
pub static SMB: Scheme = Scheme {
    name: "smb",
    default_port: 445,
    example: "smb://[user@]host[:port]/share[/path]",
    root_word: "share",
    root: RootShape::FirstComponent,
    query: no_query,
    query_keys: "no query",
    probe: probe::SMB_ECHO,
};

/// NFS: version 3, or 4.1 and 4.2 (`?vers=`).
pub static NFS: Scheme = Scheme {
    name: "nfs",
    default_port: 2049,
    example: "nfs://host[:port]/export[/path][?mountport=N]",
    root_word: "export",
    root: RootShape::WholePath,
    query: nfs_query,
    query_keys: "only ?mountport=N and ?vers=3|4.1|4.2",
    probe: probe::NFS_NULL,
};

/// Every URL scheme naslab parses, whatever backends were built.
pub static SCHEMES: [&Scheme; 2] = [&SMB, &NFS];

impl Scheme {
    /// The scheme named `name` (the text before `://`).
    pub fn by_name(name: &str) -> Option<&'static Scheme> {
        SCHEMES.iter().copied().find(|s| s.name == name)
    }
}

impl PartialEq for Scheme {
    fn eq(&self, other: &Scheme) -> bool {
        self.name == other.name
    }
}

impl Eq for Scheme {}

impl fmt::Debug for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// The schemes as a URL starts with them: `smb:// or nfs://`.
fn known_schemes() -> String {
    let names: Vec<String> = SCHEMES.iter().map(|s| format!("{}://", s.name)).collect();
    names.join(" or ")
}

/// A scheme whose URLs take no query.
fn no_query(_: &mut RemoteUrl, _: &str, _: &str, _: &str) -> Result<bool, UrlError> {
    Ok(false)
}

/// `nfs://`'s query: `?mountport=N`, and the version as mount(8) (`vers`, `nfsvers`) or
/// libnfs (`version`) spells it.
fn nfs_query(into: &mut RemoteUrl, url: &str, key: &str, value: &str) -> Result<bool, UrlError> {
    match key {
        "mountport" => into.mount_port = Some(parse_port(url, value)?),
        "vers" | "version" | "nfsvers" => into.nfs_version = NfsVersion::parse(url, value)?,
        _ => return Ok(false),
    }
    Ok(true)
}

/// The NFS version an `nfs://` URL asks for: `?vers=` as mount(8) spells it, or
/// `?version=` as libnfs does; version 3 when the URL says nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NfsVersion {
    #[default]
    V3,
    /// NFSv4.1: sessions, a pseudo-root, compounds, open state.
    V4_1,
    /// NFSv4.2: 4.1's operations over minor version 2.
    V4_2,
}

impl NfsVersion {
    /// The version as the URL and the results write it: `3`, `4.1`, `4.2`.
    pub fn name(self) -> &'static str {
        match self {
            NfsVersion::V3 => "3",
            NfsVersion::V4_1 => "4.1",
            NfsVersion::V4_2 => "4.2",
        }
    }

    /// The major and minor version numbers.
    pub fn numbers(self) -> (u32, Option<u32>) {
        match self {
            NfsVersion::V3 => (3, None),
            NfsVersion::V4_1 => (4, Some(1)),
            NfsVersion::V4_2 => (4, Some(2)),
        }
    }

    fn parse(url: &str, v: &str) -> Result<NfsVersion, UrlError> {
        match v {
            "3" => Ok(NfsVersion::V3),
            "4.1" => Ok(NfsVersion::V4_1),
            "4.2" => Ok(NfsVersion::V4_2),
            _ => Err(UrlError::NfsVersion {
                url: url.to_string(),
                version: v.to_string(),
            }),
        }
    }
}

/// A parsed protocol target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    /// The scheme the URL starts with, and with it the protocol it speaks.
    pub scheme: &'static Scheme,
    /// The account to sign in as (SMB only); `None` for a guest session.
    pub user: Option<String>,
    pub host: String,
    /// The server's port, when the URL gives one.
    pub port: Option<u16>,
    /// The SMB share, or the NFS export's path (with its leading `/`). As parsed, an
    /// NFS URL's whole path stands here; the client splits it into the export and
    /// [`RemoteUrl::path`] against the server's export list.
    pub share: String,
    /// The directory inside the share or export to work in, `/`-separated, without a
    /// leading or trailing `/`; empty for the share's root.
    pub path: String,
    /// NFS only: the MOUNT service's port (`?mountport=N`); without it the portmapper
    /// on port 111 is asked. NFSv3's alone: version 4 has no MOUNT protocol.
    pub mount_port: Option<u16>,
    /// NFS only: the version to speak (`?vers=`).
    pub nfs_version: NfsVersion,
}

/// Why a target URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("'{0}' is not a URL naslab knows: it speaks {known}", known = known_schemes())]
    Scheme(String),
    #[error(
        "'{url}' has a password in it; naslab never takes one there (it would end up in shell history and results): set NASLAB_SMB_PASSWORD instead"
    )]
    Password { url: String },
    #[error("'{url}' names no host; write it as {example}")]
    NoHost { url: String, example: &'static str },
    #[error("'{url}': port '{port}' is not a number from 1 to 65535")]
    Port { url: String, port: String },
    #[error("'{url}' names no {what}; write it as {example}")]
    NoShare {
        url: String,
        what: &'static str,
        example: &'static str,
    },
    #[error(
        "'{url}': the path may not contain '.', '..' or empty components, nor a backslash or an encoded '/' (%2F)"
    )]
    Path { url: String },
    #[error("'{url}': unknown query '{query}'; {name}:// URLs take {keys}", name = scheme.name, keys = scheme.query_keys)]
    Query {
        url: String,
        query: String,
        scheme: &'static Scheme,
    },
    #[error(
        "'{url}': NFS version '{version}' is not offered; write vers=3, vers=4.1 or vers=4.2 (NFSv4.0, and a bare 4, are not offered: 4.1 is what current clients and NAS products speak)"
    )]
    NfsVersion { url: String, version: String },
    #[error(
        "'{url}': ?mountport is NFSv3's (version 4 has no MOUNT protocol); leave it out of a vers=4.x URL, whose port is the NFS server's own"
    )]
    MountPortV4 { url: String },
    #[error("'{url}': '{what}' is not valid percent-encoding")]
    Escape { url: String, what: String },
}

/// When naslab's SMB client encrypts (SMB 3.0 and later, AES-128/256-GCM/CCM).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SmbEncrypt {
    /// Offer encryption; the session is encrypted when the server desires or requires
    /// it (as Windows and smbclient do by default).
    #[default]
    Desired,
    /// Offer it, encrypt even when the server only allows it, and refuse to work
    /// unencrypted.
    Required,
    /// Do not offer it: a server that requires encryption then refuses the session.
    Off,
}

impl SmbEncrypt {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            SmbEncrypt::Desired => "desired",
            SmbEncrypt::Required => "required",
            SmbEncrypt::Off => "off",
        }
    }
}

impl fmt::Display for SmbEncrypt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SmbEncrypt {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        [SmbEncrypt::Required, SmbEncrypt::Desired, SmbEncrypt::Off]
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| {
                format!("unknown encryption mode '{s}'; the choices are required, desired and off")
            })
    }
}

/// How naslab's protocol clients behave, whatever the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientOptions {
    /// How long a request waits for its reply before the server counts as gone (the
    /// run then stops, naming the op, file and trace line).
    pub io_timeout: std::time::Duration,
    pub smb_encrypt: SmbEncrypt,
    /// SMB: how many READs or WRITEs one op keeps in flight at most
    /// (1..=[`MAX_SMB_IN_FLIGHT`]); a read of more than 2 MiB, or a write of more than
    /// 512 KiB, is split into that many requests sent at once, none under 512 KiB.
    pub smb_in_flight: usize,
    /// NFSv3: how long a request waits for its reply before the connection is taken
    /// for broken (a black-holed path), made again and the request sent again, within
    /// the I/O timeout (`--retrans-timeout`). `None`: a request waits the I/O timeout.
    pub retrans_timeout: Option<std::time::Duration>,
}

/// The default `--smb-in-flight`.
pub const DEFAULT_SMB_IN_FLIGHT: usize = 8;
/// The largest `--smb-in-flight`.
pub const MAX_SMB_IN_FLIGHT: usize = 16;

/// The default `--io-timeout`.
pub const DEFAULT_IO_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            io_timeout: DEFAULT_IO_TIMEOUT,
            smb_encrypt: SmbEncrypt::Desired,
            smb_in_flight: DEFAULT_SMB_IN_FLIGHT,
            retrans_timeout: None,
        }
    }
}

/// "no reply from HOST:PORT within N s": what a request that timed out says.
pub fn no_reply(addr: &str, timeout: std::time::Duration) -> String {
    let secs = timeout.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("no reply from {addr} within {secs:.0} s")
    } else {
        format!("no reply from {addr} within {secs:.1} s")
    }
}

fn decode(url: &str, s: &str) -> Result<String, UrlError> {
    let bad = || UrlError::Escape {
        url: url.to_string(),
        what: s.to_string(),
    };
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3).ok_or_else(bad)?;
            let hex = std::str::from_utf8(hex).map_err(|_| bad())?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

fn parse_port(url: &str, p: &str) -> Result<u16, UrlError> {
    match p.parse::<u16>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(UrlError::Port {
            url: url.to_string(),
            port: p.to_string(),
        }),
    }
}

impl FromStr for RemoteUrl {
    type Err = UrlError;

    fn from_str(url: &str) -> Result<Self, UrlError> {
        let (scheme, rest) = url
            .split_once("://")
            .and_then(|(name, rest)| Some((Scheme::by_name(name)?, rest)))
            .ok_or_else(|| UrlError::Scheme(url.to_string()))?;
        let example = scheme.example;
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        let (user, hostport) = match authority.rsplit_once('@') {
            Some((u, h)) => {
                if u.contains(':') {
                    return Err(UrlError::Password { url: redact(url) });
                }
                (Some(decode(url, u)?), h)
            }
            None => (None, authority),
        };
        let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
            // An IPv6 literal: [::1]:445
            let (h, after) = inner.split_once(']').ok_or_else(|| UrlError::NoHost {
                url: url.to_string(),
                example,
            })?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(parse_port(url, p)?),
                None => None,
            };
            (h.to_string(), port)
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h.to_string(), Some(parse_port(url, p)?)),
                None => (hostport.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(UrlError::NoHost {
                url: url.to_string(),
                example,
            });
        }
        let mut parts = Vec::new();
        for c in path.split('/').filter(|c| !c.is_empty()) {
            let c = decode(url, c)?;
            // A '/' decoded from %2F would make components the check above never saw
            // ("a%2F..%2Fb" is "a/../b").
            if c == "." || c == ".." || c.contains(['/', '\\', '\0']) {
                return Err(UrlError::Path {
                    url: url.to_string(),
                });
            }
            parts.push(c);
        }
        // The share and path are set once the query is taken: a bad query is named
        // before a missing share.
        let mut parsed = RemoteUrl {
            scheme,
            user,
            host,
            port,
            share: String::new(),
            path: String::new(),
            mount_port: None,
            nfs_version: NfsVersion::V3,
        };
        if let Some(q) = query.filter(|q| !q.is_empty()) {
            for kv in q.split('&') {
                let taken = match kv.split_once('=') {
                    Some((key, value)) => (scheme.query)(&mut parsed, url, key, value)?,
                    None => false,
                };
                if !taken {
                    return Err(UrlError::Query {
                        url: url.to_string(),
                        query: kv.to_string(),
                        scheme,
                    });
                }
            }
        }
        if parsed.mount_port.is_some() && parsed.nfs_version != NfsVersion::V3 {
            return Err(UrlError::MountPortV4 {
                url: url.to_string(),
            });
        }
        if parts.is_empty() {
            return Err(UrlError::NoShare {
                url: url.to_string(),
                what: scheme.root_word,
                example,
            });
        }
        (parsed.share, parsed.path) = scheme.root.split(&parts);
        Ok(parsed)
    }
}

/// The URL with anything after `user:` in its authority replaced, for error messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => match url[s + 3..at].split_once(':') {
            Some((user, _)) => format!("{}{user}:***{}", &url[..s + 3], &url[at..]),
            None => url.to_string(),
        },
        _ => url.to_string(),
    }
}

impl RemoteUrl {
    /// `host:port` to connect to, with the scheme's usual port when none was given.
    pub fn address(&self) -> String {
        let port = self.port.unwrap_or(self.scheme.default_port);
        if self.host.contains(':') {
            format!("[{}]:{port}", self.host)
        } else {
            format!("{}:{port}", self.host)
        }
    }
}

impl fmt::Display for RemoteUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://", self.scheme.name)?;
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        write!(f, "/{}", self.share.trim_start_matches('/'))?;
        if !self.path.is_empty() {
            write!(f, "/{}", self.path)?;
        }
        if let Some(m) = self.mount_port {
            write!(f, "?mountport={m}")?;
        }
        if self.nfs_version != NfsVersion::V3 {
            write!(f, "?vers={}", self.nfs_version.name())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_encoded_slash_cannot_smuggle_components_into_the_path() {
        for url in [
            "smb://h/share/a%2F..%2Fb",
            "smb://h/share/a%2F%2Fb",
            "nfs://h/export/x%2f..",
            "smb://h/sh%2Fare/x",
        ] {
            assert!(
                matches!(url.parse::<RemoteUrl>(), Err(UrlError::Path { .. })),
                "{url} was accepted"
            );
        }
        let ok: RemoteUrl = "smb://h/share/a%20b/c".parse().unwrap();
        assert_eq!(ok.path, "a b/c");
    }

    use super::*;

    #[test]
    fn smb_urls_parse_with_user_port_and_path() {
        let u: RemoteUrl = "smb://bob@127.0.0.1:4450/media/a/b".parse().unwrap();
        assert_eq!(u.scheme, &SMB);
        assert_eq!(u.user.as_deref(), Some("bob"));
        assert_eq!(u.address(), "127.0.0.1:4450");
        assert_eq!((u.share.as_str(), u.path.as_str()), ("media", "a/b"));
        assert_eq!(u.to_string(), "smb://bob@127.0.0.1:4450/media/a/b");
        let g: RemoteUrl = "smb://nas/share".parse().unwrap();
        assert_eq!((g.user.clone(), g.address()), (None, "nas:445".to_string()));
    }

    #[test]
    fn nfs_urls_take_the_export_and_a_mount_port() {
        let u: RemoteUrl = "nfs://127.0.0.1:20490/naslab-lab?mountport=20491"
            .parse()
            .unwrap();
        assert_eq!(u.share, "/naslab-lab");
        assert_eq!(u.mount_port, Some(20491));
        assert_eq!(
            u.to_string(),
            "nfs://127.0.0.1:20490/naslab-lab?mountport=20491"
        );
        let deep: RemoteUrl = "nfs://nas/volume1/share/sub".parse().unwrap();
        assert_eq!(
            (deep.share.as_str(), deep.path.as_str()),
            ("/volume1/share/sub", "")
        );
        assert_eq!(deep.to_string(), "nfs://nas/volume1/share/sub");
        let split = RemoteUrl {
            share: "/volume1/share".into(),
            path: "sub".into(),
            ..deep.clone()
        };
        assert_eq!(
            split.to_string(),
            deep.to_string(),
            "the same URL either way"
        );
    }

    #[test]
    fn nfs_urls_choose_their_version_as_mount_and_libnfs_spell_it() {
        for (url, v) in [
            ("nfs://nas/export", NfsVersion::V3),
            ("nfs://nas/export?vers=3", NfsVersion::V3),
            ("nfs://nas/export?vers=4.1", NfsVersion::V4_1),
            ("nfs://nas/export?version=4.2", NfsVersion::V4_2),
            ("nfs://nas/export?nfsvers=4.1", NfsVersion::V4_1),
        ] {
            assert_eq!(url.parse::<RemoteUrl>().unwrap().nfs_version, v, "{url}");
        }
        let u: RemoteUrl = "nfs://127.0.0.1:2049/naslab?vers=4.1".parse().unwrap();
        assert_eq!(u.to_string(), "nfs://127.0.0.1:2049/naslab?vers=4.1");
        assert_eq!(u.to_string().parse::<RemoteUrl>().unwrap(), u);
        for (bad, says) in [
            ("nfs://nas/export?vers=4", "not offered"),
            ("nfs://nas/export?vers=4.0", "not offered"),
            ("nfs://nas/export?vers=2", "vers=4.1"),
            (
                "nfs://nas/export?vers=4.1&mountport=20048",
                "no MOUNT protocol",
            ),
            (
                "smb://nas/share?vers=4.1",
                "unknown query 'vers=4.1'; smb:// URLs take no query",
            ),
            (
                "nfs://nas/export?port=1",
                "unknown query 'port=1'; nfs:// URLs take only ?mountport=N and ?vers=3|4.1|4.2",
            ),
            (
                "ftp://nas/x",
                "is not a URL naslab knows: it speaks smb:// or nfs://",
            ),
        ] {
            let e = bad.parse::<RemoteUrl>().unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn bad_urls_say_what_to_write() {
        let e = "smb://bob:secret@nas/share"
            .parse::<RemoteUrl>()
            .unwrap_err();
        assert!(!e.to_string().contains("secret"), "{e}");
        assert!(e.to_string().contains("NASLAB_SMB_PASSWORD"), "{e}");
        for bad in [
            "smb://nas",
            "smb:///share",
            "smb://nas:0/share",
            "smb://nas:99999/share",
            "smb://nas/share/../x",
            "nfs://nas/x?foo=1",
            "smb://nas/share?mountport=1",
            "smb://nas/%zz",
            "ftp://nas/x",
        ] {
            assert!(bad.parse::<RemoteUrl>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_url_finds_its_scheme_by_the_name_before_the_colon_slashes() {
        for s in SCHEMES {
            assert_eq!(Scheme::by_name(s.name), Some(s));
            assert!(
                s.example.starts_with(&format!("{}://", s.name)),
                "{}",
                s.example
            );
            let u: RemoteUrl = format!("{}://h/x", s.name).parse().unwrap();
            assert_eq!(u.scheme, s);
            assert_eq!(format!("{:?}", u.scheme), s.name);
        }
        assert_ne!(&SMB, &NFS);
        for bad in [
            "SMB://h/s",
            "smbx://h/s",
            "://h/s",
            "x?smb://h/s",
            "smb:/h/s",
        ] {
            assert!(
                matches!(bad.parse::<RemoteUrl>(), Err(UrlError::Scheme(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn ipv6_hosts_and_escapes() {
        let u: RemoteUrl = "smb://[::1]:445/my%20share".parse().unwrap();
        assert_eq!((u.host.as_str(), u.share.as_str()), ("::1", "my share"));
        assert_eq!(u.address(), "[::1]:445");
    }
}
