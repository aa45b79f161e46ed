//! Toxiproxy, the lab's link emulator: its server started in the foreground of a
//! process of its own (stopped by PID like the lab's other servers), driven over its
//! HTTP API on 127.0.0.1 with one proxy per server port and the toxics that make the
//! link: `latency` each way (half the round trip; the jitter on the way back) and
//! `bandwidth` each way.
//!
//! Toxiproxy relays TCP streams: it delays each chunk of data it reads from a
//! connection, not each packet, and drops nothing.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::LabError;
use crate::link::{LabLink, LinkProxy, LinkSpec};
use crate::process::{Proc, free_port, spawn};

/// Where `scripts/test.sh` installs the server (`go install` with GOBIN here).
pub const INSTALL_DIR: &str = "/usr/local/lib/naslab/bin";
/// The server's name, on PATH or in [`INSTALL_DIR`]; `NASLAB_TOXIPROXY` names another.
pub const SERVER: &str = "toxiproxy-server";
/// The version naslab is tested with.
pub const VERSION: &str = "v2.12.0";

const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Finds `toxiproxy-server`: `NASLAB_TOXIPROXY`, then PATH, then [`INSTALL_DIR`].
pub fn find() -> Result<PathBuf, LabError> {
    if let Some(p) = std::env::var_os("NASLAB_TOXIPROXY") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(LabError::EmulatorMissing(format!(
                "NASLAB_TOXIPROXY names '{}', which is not a file",
                p.display()
            )))
        };
    }
    naslab_host::process::find_tool(SERVER)
        .or_else(|| Some(Path::new(INSTALL_DIR).join(SERVER)).filter(|p| p.is_file()))
        .ok_or_else(|| {
            LabError::EmulatorMissing(format!(
                "'{SERVER}' is neither on PATH nor in {INSTALL_DIR}"
            ))
        })
}

/// One HTTP/1.1 request to the API; the reply's status and JSON body.
fn request(port: u16, method: &str, path: &str, body: Option<&Value>) -> Result<Value, LabError> {
    let fail = |why: String| LabError::Emulator(format!("{method} {path}: {why}"));
    let addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
    let mut s = TcpStream::connect_timeout(&addr.into(), Duration::from_secs(5))
        .map_err(|e| fail(format!("cannot connect to 127.0.0.1:{port}: {e}")))?;
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes())
        .and_then(|_| s.write_all(body.as_bytes()))
        .map_err(|e| fail(e.to_string()))?;
    let mut reply = Vec::new();
    s.read_to_end(&mut reply).map_err(|e| fail(e.to_string()))?;
    let text = String::from_utf8_lossy(&reply);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| fail("the reply has no header end".into()))?;
    let status: u16 = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| {
            fail(format!(
                "no status in '{}'",
                head.lines().next().unwrap_or("")
            ))
        })?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase()
            .starts_with("transfer-encoding: chunked")
    });
    let body = if chunked {
        dechunk(rest)
    } else {
        rest.to_string()
    };
    if !(200..300).contains(&status) {
        return Err(fail(format!("status {status}: {}", body.trim())));
    }
    if body.trim().is_empty() {
        // A DELETE's answer (204 No Content).
        return Ok(Value::Null);
    }
    serde_json::from_str(&body).map_err(|e| fail(format!("reply is not JSON ({e}): {body}")))
}

/// The body of a chunked reply.
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

/// The toxics that make `spec`, each with its stream (upstream: toward the server).
fn toxics(spec: &LinkSpec) -> Vec<Value> {
    let (up, down) = spec.split_ms();
    let mut t = Vec::new();
    if up > 0 {
        t.push(
            json!({"name": "delay_up", "type": "latency", "stream": "upstream",
                      "attributes": {"latency": up, "jitter": 0}}),
        );
    }
    if down > 0 || spec.jitter_ms > 0 {
        t.push(
            json!({"name": "delay_down", "type": "latency", "stream": "downstream",
                      "attributes": {"latency": down, "jitter": spec.jitter_ms}}),
        );
    }
    if spec.rate_bit_s > 0 {
        for (name, stream) in [("rate_up", "upstream"), ("rate_down", "downstream")] {
            t.push(json!({"name": name, "type": "bandwidth", "stream": stream,
                          "attributes": {"rate": spec.rate_kb_s()}}));
        }
    }
    t
}

/// A Toxiproxy server the lab started: its API's port and the version it reports.
#[derive(Debug, Clone)]
pub struct Emulator {
    pub api_port: u16,
    pub version: String,
}

/// Starts Toxiproxy for the lab in `dir`, listening for its API on a free port of
/// 127.0.0.1. `record` is given the process as soon as it runs.
pub fn start(
    dir: &Path,
    record: &mut dyn FnMut(&Proc) -> Result<(), LabError>,
) -> Result<Emulator, LabError> {
    let server = find()?;
    let api_port = free_port()?;
    let port_text = api_port.to_string();
    let p = spawn(
        SERVER,
        &server,
        &[
            "-host".as_ref(),
            "127.0.0.1".as_ref(),
            "-port".as_ref(),
            port_text.as_ref(),
        ],
        &dir.join("toxiproxy.out"),
    )?;
    record(&p)?;
    p.wait_listening(api_port, START_TIMEOUT)?;
    let version = request(api_port, "GET", "/version", None)?
        .get("version")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    Ok(Emulator { api_port, version })
}

/// Makes one proxy per `(name, server port)` on `emulator`, each carrying `spec`'s
/// toxics, named `prefix` + name (so several links, one per client, share one server).
pub fn add_link(
    emulator: &Emulator,
    spec: &LinkSpec,
    ports: &[(&str, u16)],
    prefix: &str,
    direct_url: &str,
) -> Result<LabLink, LabError> {
    let api_port = emulator.api_port;
    let mut proxies = Vec::new();
    for &(carries, upstream_port) in ports {
        let name = format!("{prefix}{carries}");
        let made = request(
            api_port,
            "POST",
            "/proxies",
            Some(&json!({"name": name, "listen": "127.0.0.1:0",
                         "upstream": format!("127.0.0.1:{upstream_port}"), "enabled": true})),
        )?;
        let listen_port = made
            .get("listen")
            .and_then(Value::as_str)
            .and_then(|l| l.rsplit_once(':'))
            .and_then(|(_, p)| p.parse::<u16>().ok())
            .ok_or_else(|| {
                LabError::Emulator(format!("proxy '{name}' was made without a port: {made}"))
            })?;
        for t in toxics(spec) {
            request(
                api_port,
                "POST",
                &format!("/proxies/{name}/toxics"),
                Some(&t),
            )?;
        }
        proxies.push(LinkProxy {
            name,
            listen_port,
            upstream_port,
        });
    }
    Ok(LabLink {
        link: spec.record("toxiproxy", &emulator.version),
        api_port,
        proxies,
        direct_url: direct_url.to_string(),
    })
}

/// Enables or disables proxy `name`. Disabled, it closes every connection it relays
/// and stops listening, so new connections are refused; enabled again, it listens on
/// the same port.
pub fn set_enabled(api_port: u16, name: &str, enabled: bool) -> Result<(), LabError> {
    request(
        api_port,
        "POST",
        &format!("/proxies/{name}"),
        Some(&json!({ "enabled": enabled })),
    )
    .map(|_| ())
}

/// The names of the toxics that black-hole a proxy, one each way.
const BLACK_HOLE: [(&str, &str); 2] = [
    ("black_hole_up", "upstream"),
    ("black_hole_down", "downstream"),
];

/// How long a black-holed proxy holds what it is sent: an hour, longer than any fault;
/// the toxics are removed before it runs out.
const BLACK_HOLE_MS: u64 = 3_600_000;

/// Black-holes proxy `name`: a latency toxic each way holds everything it is sent,
/// keeping its connections (and new ones) open. Toxiproxy's latency toxic passes on
/// what it holds when it is removed ([`mend_black_hole`]), so nothing is lost: as a
/// path that drops packets for a while, and TCP sends them again once it is back.
pub fn black_hole(api_port: u16, name: &str) -> Result<(), LabError> {
    for (i, (toxic, stream)) in BLACK_HOLE.iter().enumerate() {
        let added = request(
            api_port,
            "POST",
            &format!("/proxies/{name}/toxics"),
            Some(&json!({"name": toxic, "type": "latency", "stream": stream,
                "toxicity": 1.0, "attributes": {"latency": BLACK_HOLE_MS, "jitter": 0}})),
        );
        if let Err(e) = added {
            for (done, _) in &BLACK_HOLE[..i] {
                let _ = remove_toxic(api_port, name, done);
            }
            return Err(e);
        }
    }
    Ok(())
}

/// Removes the black hole of proxy `name`: what it held goes on at once.
pub fn mend_black_hole(api_port: u16, name: &str) -> Result<(), LabError> {
    let mut failed = None;
    for (toxic, _) in BLACK_HOLE {
        if let Err(e) = remove_toxic(api_port, name, toxic) {
            failed.get_or_insert(e);
        }
    }
    failed.map_or(Ok(()), Err)
}

fn remove_toxic(api_port: u16, name: &str, toxic: &str) -> Result<(), LabError> {
    request(
        api_port,
        "DELETE",
        &format!("/proxies/{name}/toxics/{toxic}"),
        None,
    )
    .map(|_| ())
}

/// The toxics Toxiproxy holds on proxy `name` now, as its API lists them.
pub fn toxics_now(api_port: u16, name: &str) -> Result<Value, LabError> {
    request(api_port, "GET", &format!("/proxies/{name}/toxics"), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_becomes_delay_each_way_and_rate_each_way() {
        let spec = crate::link::parse("rtt=5ms,jitter=2ms,rate=100mbit")
            .unwrap()
            .unwrap();
        let t = toxics(&spec);
        assert_eq!(t.len(), 4);
        assert_eq!(t[0]["attributes"]["latency"], 3);
        assert_eq!(t[0]["stream"], "upstream");
        assert_eq!(t[1]["attributes"]["latency"], 2);
        assert_eq!(t[1]["attributes"]["jitter"], 2);
        assert_eq!(t[2]["attributes"]["rate"], 12_500);
        let none = crate::link::parse("rtt=0").unwrap().unwrap();
        assert!(toxics(&none).is_empty());
        assert_eq!(dechunk("5\r\nhello\r\n3\r\n{}!\r\n0\r\n\r\n"), "hello{}!");
    }
}
