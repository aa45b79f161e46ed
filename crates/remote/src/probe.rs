//! The round trip to a URL target, measured by naslab itself before a run: one TCP
//! connection over the run's own path, a protocol request that the server answers at
//! once and that needs no sign-in, timed `samples` times.
//!
//! - SMB: a NEGOTIATE (not timed), then SMB2 ECHO requests (MS-SMB2 2.2.28), which a
//!   server answers before any session exists.
//! - NFS: ONC RPC calls of the NULL procedure of the version the URL asks for (NFSv3's,
//!   RFC 1813 3.3.0, or NFSv4's, RFC 8881 16.1), with AUTH_NONE.
//!
//! A TCP connect would not do: an emulator that relays the stream (Toxiproxy) accepts
//! the connection itself, before any delay applies.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use naslab_results::RttProbe;

use crate::url::RemoteUrl;

/// Round trips the probe times by default.
pub const SAMPLES: u32 = 21;

/// Why the round trip could not be measured.
#[derive(Debug, thiserror::Error)]
#[error("cannot measure the round trip to {addr} ({method}): {why}")]
pub struct ProbeError {
    pub addr: String,
    pub method: &'static str,
    pub why: String,
}

/// The requests a probe sends to one URL scheme's server and the replies it expects
/// (the scheme's [`Scheme::probe`](crate::url::Scheme::probe)); [`rtt`] connects and
/// times them, whatever the protocol.
#[derive(Clone, Copy)]
pub struct Exchange {
    /// What the probe times, as errors and the results name it.
    pub method: &'static str,
    /// A request sent once before the timed ones, its reply read but neither timed nor
    /// checked; `None` when the first request can be timed.
    pub opening: Option<fn() -> Vec<u8>>,
    /// The timed request of sample `i` (from 0), framed for the wire.
    pub request: fn(url: &RemoteUrl, i: u32) -> Vec<u8>,
    /// Whether `reply` (without its 4-byte frame) answers sample `i`'s request.
    pub check: fn(reply: &[u8], i: u32) -> Result<(), String>,
}

/// SMB: a NEGOTIATE, then ECHO requests.
pub(crate) const SMB_ECHO: Exchange = Exchange {
    method: "SMB2 ECHO",
    opening: Some(smb_negotiate),
    request: |_, i| smb_echo(u64::from(i) + 1),
    check: |reply, _| check_smb_echo(reply),
};

/// NFS: RPC calls of the NULL procedure of the URL's NFS version.
pub(crate) const NFS_NULL: Exchange = Exchange {
    method: "NFS NULL",
    opening: None,
    request: |url, i| nfs_null(nfs_xid(i), url.nfs_version.numbers().0),
    check: |reply, i| check_rpc_reply(reply, nfs_xid(i)),
};

/// The RPC transaction id of sample `i`.
fn nfs_xid(i: u32) -> u32 {
    0x6e61_0000 + i
}

/// Times `samples` round trips to `url`'s server; `timeout` bounds each.
pub fn rtt(url: &RemoteUrl, samples: u32, timeout: Duration) -> Result<RttProbe, ProbeError> {
    let addr = url.address();
    let probe = &url.scheme.probe;
    let method = probe.method;
    let fail = |why: String| ProbeError {
        addr: addr.clone(),
        method,
        why,
    };
    let sock = addr
        .to_socket_addrs()
        .map_err(|e| fail(e.to_string()))?
        .next()
        .ok_or_else(|| fail("the name resolves to no address".into()))?;
    let mut s = TcpStream::connect_timeout(&sock, timeout).map_err(|e| fail(e.to_string()))?;
    s.set_nodelay(true).map_err(|e| fail(e.to_string()))?;
    s.set_read_timeout(Some(timeout))
        .map_err(|e| fail(e.to_string()))?;
    if let Some(opening) = probe.opening {
        exchange(&mut s, &opening()).map_err(&fail)?;
    }
    let mut times = Vec::with_capacity(samples as usize);
    for i in 0..samples {
        let req = (probe.request)(url, i);
        let t = Instant::now();
        let reply = exchange(&mut s, &req).map_err(&fail)?;
        times.push(t.elapsed().as_nanos() as u64);
        (probe.check)(&reply, i).map_err(&fail)?;
    }
    RttProbe::from_samples(method, &times).ok_or_else(|| fail("no round trip was timed".into()))
}

/// Sends one framed request and reads one framed reply. Both SMB's direct TCP transport
/// and ONC RPC's record marking put the length in the low bits of a 4-byte big-endian
/// word (RPC's top bit marks the last fragment; a NULL reply is one fragment).
fn exchange(s: &mut TcpStream, req: &[u8]) -> Result<Vec<u8>, String> {
    s.write_all(req).map_err(|e| format!("sending: {e}"))?;
    let mut head = [0u8; 4];
    s.read_exact(&mut head)
        .map_err(|e| format!("reading the reply: {e}"))?;
    let len = (u32::from_be_bytes(head) & 0x00ff_ffff) as usize;
    let mut body = vec![0u8; len];
    s.read_exact(&mut body)
        .map_err(|e| format!("reading the reply: {e}"))?;
    Ok(body)
}

/// An SMB2 header for `command`, message `id`, no session.
fn smb_header(command: u16, id: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(64);
    h.extend_from_slice(b"\xfeSMB");
    h.extend_from_slice(&64u16.to_le_bytes()); // StructureSize
    h.extend_from_slice(&0u16.to_le_bytes()); // CreditCharge (0 counts as 1)
    h.extend_from_slice(&0u32.to_le_bytes()); // Status
    h.extend_from_slice(&command.to_le_bytes());
    h.extend_from_slice(&1u16.to_le_bytes()); // CreditRequest
    h.extend_from_slice(&0u32.to_le_bytes()); // Flags
    h.extend_from_slice(&0u32.to_le_bytes()); // NextCommand
    h.extend_from_slice(&id.to_le_bytes()); // MessageId
    h.extend_from_slice(&0u32.to_le_bytes()); // Reserved
    h.extend_from_slice(&0u32.to_le_bytes()); // TreeId
    h.extend_from_slice(&0u64.to_le_bytes()); // SessionId
    h.extend_from_slice(&[0u8; 16]); // Signature
    h
}

/// The direct TCP transport's frame around an SMB2 message.
fn framed(msg: Vec<u8>) -> Vec<u8> {
    let mut out = (msg.len() as u32).to_be_bytes().to_vec();
    out.extend(msg);
    out
}

/// A NEGOTIATE offering SMB 2.0.2 to 3.1.1 (with the pre-authentication integrity
/// context 3.1.1 requires).
fn smb_negotiate() -> Vec<u8> {
    const DIALECTS: [u16; 5] = [0x0202, 0x0210, 0x0300, 0x0302, 0x0311];
    let mut m = smb_header(0x0000, 0);
    m.extend_from_slice(&36u16.to_le_bytes()); // StructureSize
    m.extend_from_slice(&(DIALECTS.len() as u16).to_le_bytes());
    m.extend_from_slice(&1u16.to_le_bytes()); // SecurityMode: signing enabled
    m.extend_from_slice(&0u16.to_le_bytes()); // Reserved
    m.extend_from_slice(&0u32.to_le_bytes()); // Capabilities
    m.extend_from_slice(b"naslab-rtt-probe"); // ClientGuid
    let context_at = m.len() + 8 + 2 * DIALECTS.len();
    let context_at = context_at.div_ceil(8) * 8;
    m.extend_from_slice(&(context_at as u32).to_le_bytes()); // NegotiateContextOffset
    m.extend_from_slice(&1u16.to_le_bytes()); // NegotiateContextCount
    m.extend_from_slice(&0u16.to_le_bytes()); // Reserved2
    for d in DIALECTS {
        m.extend_from_slice(&d.to_le_bytes());
    }
    m.resize(context_at, 0);
    // SMB2_PREAUTH_INTEGRITY_CAPABILITIES: SHA-512, a 32-byte salt.
    let data_len: u16 = 2 + 2 + 2 + 32;
    m.extend_from_slice(&1u16.to_le_bytes());
    m.extend_from_slice(&data_len.to_le_bytes());
    m.extend_from_slice(&0u32.to_le_bytes());
    m.extend_from_slice(&1u16.to_le_bytes()); // HashAlgorithmCount
    m.extend_from_slice(&32u16.to_le_bytes()); // SaltLength
    m.extend_from_slice(&1u16.to_le_bytes()); // SHA-512
    m.extend_from_slice(&[0x5a; 32]);
    framed(m)
}

fn smb_echo(id: u64) -> Vec<u8> {
    let mut m = smb_header(0x000d, id);
    m.extend_from_slice(&4u16.to_le_bytes()); // StructureSize
    m.extend_from_slice(&0u16.to_le_bytes()); // Reserved
    framed(m)
}

fn check_smb_echo(reply: &[u8]) -> Result<(), String> {
    if reply.len() < 64 || &reply[..4] != b"\xfeSMB" {
        return Err("the reply to ECHO is not an SMB2 message".into());
    }
    let status = u32::from_le_bytes([reply[8], reply[9], reply[10], reply[11]]);
    let command = u16::from_le_bytes([reply[12], reply[13]]);
    if command != 0x000d || status != 0 {
        return Err(format!(
            "ECHO was answered with command {command:#06x}, status {status:#010x}"
        ));
    }
    Ok(())
}

/// An RPC call of the NULL procedure of NFS version `version`, one record fragment.
fn nfs_null(xid: u32, version: u32) -> Vec<u8> {
    // xid, CALL, RPC version 2, program NFS (100003), the version, procedure NULL,
    // credential AUTH_NONE (flavour 0, no body), verifier AUTH_NONE.
    let words: [u32; 10] = [xid, 0, 2, 100_003, version, 0, 0, 0, 0, 0];
    let mut out = (0x8000_0000u32 | (words.len() as u32 * 4))
        .to_be_bytes()
        .to_vec();
    for w in words {
        out.extend_from_slice(&w.to_be_bytes());
    }
    out
}

fn check_rpc_reply(reply: &[u8], xid: u32) -> Result<(), String> {
    let word = |i: usize| -> Option<u32> {
        reply
            .get(i * 4..i * 4 + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    // xid, REPLY (1), MSG_ACCEPTED (0), verifier flavour and length, its body, then
    // accept_stat SUCCESS (0).
    let (Some(x), Some(kind), Some(stat), Some(vlen)) = (word(0), word(1), word(2), word(4)) else {
        return Err("the reply to NULL is too short".into());
    };
    if x != xid || kind != 1 {
        return Err(format!("the reply to NULL has xid {x:#x}, type {kind}"));
    }
    if stat != 0 {
        return Err(format!("NULL was denied (reply status {stat})"));
    }
    let accept = word(5 + (vlen as usize).div_ceil(4));
    if accept != Some(0) {
        return Err(format!("NULL was not accepted: {accept:?}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server on loopback that answers each framed request: an SMB2 message with
    /// itself (an ECHO so answered passes), an RPC call with an accepted NULL reply.
    /// Gives the port and, once the client has gone, how many requests came.
    fn answering_server() -> (u16, std::thread::JoinHandle<usize>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut requests = 0;
            loop {
                let mut head = [0u8; 4];
                if s.read_exact(&mut head).is_err() {
                    return requests;
                }
                let mut body = vec![0u8; (u32::from_be_bytes(head) & 0x00ff_ffff) as usize];
                s.read_exact(&mut body).unwrap();
                requests += 1;
                let reply = if body.starts_with(b"\xfeSMB") {
                    [&head[..], &body].concat()
                } else {
                    let words = [
                        u32::from_be_bytes([body[0], body[1], body[2], body[3]]),
                        1,
                        0,
                        0,
                        0,
                        0,
                    ];
                    let mut r = (0x8000_0000u32 | 24).to_be_bytes().to_vec();
                    r.extend(words.iter().flat_map(|w| w.to_be_bytes()));
                    r
                };
                s.write_all(&reply).unwrap();
            }
        });
        (port, server)
    }

    #[test]
    fn each_scheme_is_timed_by_the_same_loop_with_its_own_exchange() {
        for (url, method, requests) in [
            ("smb://127.0.0.1:{port}/share", "SMB2 ECHO", 5 + 1),
            ("nfs://127.0.0.1:{port}/export", "NFS NULL", 5),
            ("nfs://127.0.0.1:{port}/export?vers=4.1", "NFS NULL", 5),
        ] {
            let (port, server) = answering_server();
            let url: RemoteUrl = url.replace("{port}", &port.to_string()).parse().unwrap();
            let probe = rtt(&url, 5, Duration::from_secs(10)).unwrap();
            assert_eq!((probe.method.as_str(), probe.samples), (method, 5), "{url}");
            assert_eq!(
                server.join().unwrap(),
                requests,
                "{url}: the opening is sent once"
            );
        }
    }

    #[test]
    fn requests_are_framed_as_the_protocols_say() {
        let n = smb_negotiate();
        let len = u32::from_be_bytes([n[0], n[1], n[2], n[3]]) as usize;
        assert_eq!(len, n.len() - 4);
        let msg = &n[4..];
        let offset = u32::from_le_bytes([msg[64 + 28], msg[65 + 28], msg[66 + 28], msg[67 + 28]]);
        assert_eq!(offset % 8, 0);
        assert_eq!(
            u16::from_le_bytes([msg[offset as usize], msg[offset as usize + 1]]),
            1
        );
        let e = smb_echo(3);
        assert_eq!(e.len(), 4 + 64 + 4);
        assert_eq!(u16::from_le_bytes([e[4 + 12], e[4 + 13]]), 0x000d);
        let mut reply = e[4..].to_vec();
        assert!(check_smb_echo(&reply).is_ok());
        reply[8] = 0x22; // a failure status
        assert!(check_smb_echo(&reply).is_err());
        let c = nfs_null(7, 3);
        assert_eq!(c.len(), 44);
        assert_eq!(&c[..4], &[0x80, 0, 0, 40]);
        let ok: Vec<u8> = [7u32, 1, 0, 0, 0, 0]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect();
        assert!(check_rpc_reply(&ok, 7).is_ok());
        assert!(check_rpc_reply(&ok, 8).is_err());
        let denied: Vec<u8> = [7u32, 1, 1, 0, 0, 0]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect();
        assert!(check_rpc_reply(&denied, 7).is_err());
    }
}
