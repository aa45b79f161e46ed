//! The link the lab puts between client and server: named profiles and explicit
//! settings (`rtt=10ms,jitter=1ms,rate=100mbit`), checked against what the emulator
//! (Toxiproxy, see [`crate::toxiproxy`]) can do, and what a lab with a link records.

use serde::{Deserialize, Serialize};

use naslab_results::EmulatedLink;

use crate::error::LabError;

/// A link to emulate, as asked for (the lab's state keeps its record, an
/// [`EmulatedLink`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSpec {
    /// The profile's name, or `custom`.
    pub profile: &'static str,
    /// The round trip added, in whole milliseconds.
    pub rtt_ms: u64,
    /// How far the delay toward the client varies either way, whole milliseconds.
    pub jitter_ms: u64,
    /// Each direction's rate, bit/s (0: not limited).
    pub rate_bit_s: u64,
}

/// The named profiles: (name, rtt ms, jitter ms, rate bit/s, what it stands for).
pub const PROFILES: &[(&str, u64, u64, u64, &str)] = &[
    (
        "lan",
        0,
        0,
        1_000_000_000,
        "1 GbE switch (0.1-0.3 ms: below Toxiproxy's 1 ms step, so no delay is added)",
    ),
    ("10gbe", 0, 0, 10_000_000_000, "10 GbE (no delay added)"),
    (
        "wifi",
        3,
        1,
        100_000_000,
        "Wi-Fi: 3 ms, jitter 1 ms, 100 Mbit/s",
    ),
    (
        "vpn",
        20,
        2,
        50_000_000,
        "VPN: 20 ms, jitter 2 ms, 50 Mbit/s",
    ),
    (
        "wan",
        50,
        5,
        20_000_000,
        "WAN: 50 ms, jitter 5 ms, 20 Mbit/s",
    ),
];

impl LinkSpec {
    /// Delay toward the server and toward the client, ms: half the round trip each,
    /// the odd millisecond toward the server.
    pub fn split_ms(&self) -> (u64, u64) {
        let down = self.rtt_ms / 2;
        (self.rtt_ms - down, down)
    }

    /// Toxiproxy's bandwidth toxic counts in kB/s (1000 bytes).
    pub fn rate_kb_s(&self) -> u64 {
        self.rate_bit_s / 8000
    }

    /// The record of this link on `emulator` at `version`.
    pub fn record(&self, emulator: &str, version: &str) -> EmulatedLink {
        EmulatedLink {
            profile: self.profile.to_string(),
            rtt_ns: self.rtt_ms * 1_000_000,
            jitter_ns: self.jitter_ms * 1_000_000,
            rate_bit_s: self.rate_bit_s,
            emulator: emulator.to_string(),
            emulator_version: version.to_string(),
            delay_level: "stream".into(),
        }
    }
}

fn bad(value: &str, why: impl Into<String>) -> LabError {
    LabError::Invalid {
        what: "link",
        value: value.to_string(),
        why: why.into(),
    }
}

/// A delay, `10ms`, `1s` or `0`, in whole milliseconds (Toxiproxy's step).
fn millis(whole: &str, v: &str) -> Result<u64, LabError> {
    let v = v.trim().to_ascii_lowercase();
    let (num, scale_us) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1_000.0)
    } else if let Some(n) = v.strip_suffix("us") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1_000_000.0)
    } else if v == "0" {
        ("0", 1.0)
    } else {
        return Err(bad(whole, format!("'{v}' needs a unit: e.g. 10ms")));
    };
    let x: f64 = num
        .trim()
        .parse()
        .map_err(|_| bad(whole, format!("'{v}' is not a number of ms")))?;
    let us = x * scale_us;
    if !us.is_finite() || us < 0.0 {
        return Err(bad(whole, format!("'{v}' must be 0 or more")));
    }
    if (us / 1000.0).fract() != 0.0 {
        return Err(bad(
            whole,
            format!("'{v}': Toxiproxy delays in whole milliseconds (give 0ms, 1ms, 2ms, ...)"),
        ));
    }
    Ok((us / 1000.0) as u64)
}

/// A rate, `100mbit`, `1gbit`, `512kbit`, in bit/s.
fn rate(whole: &str, v: &str) -> Result<u64, LabError> {
    let v = v.trim().to_ascii_lowercase();
    let v = v.strip_suffix("/s").unwrap_or(&v).to_string();
    let (num, scale) = if let Some(n) = v.strip_suffix("gbit") {
        (n, 1e9)
    } else if let Some(n) = v.strip_suffix("mbit") {
        (n, 1e6)
    } else if let Some(n) = v.strip_suffix("kbit") {
        (n, 1e3)
    } else if let Some(n) = v.strip_suffix("bit") {
        (n, 1.0)
    } else {
        return Err(bad(
            whole,
            format!("rate '{v}' needs a unit: kbit, mbit or gbit (bits per second), e.g. 100mbit"),
        ));
    };
    let x: f64 = num
        .trim()
        .parse()
        .map_err(|_| bad(whole, format!("rate '{v}' is not a number")))?;
    let bits = x * scale;
    if !bits.is_finite() || bits <= 0.0 || bits.fract() != 0.0 {
        return Err(bad(
            whole,
            format!("rate '{v}' must be a positive whole number of bit/s"),
        ));
    }
    let bits = bits as u64;
    if !bits.is_multiple_of(8000) {
        return Err(bad(
            whole,
            format!("rate '{v}': Toxiproxy limits in whole kB/s, so give a multiple of 8 kbit"),
        ));
    }
    Ok(bits)
}

/// Reads `--link`: a profile (`lan`, `10gbe`, `wifi`, `vpn`, `wan`), explicit settings
/// (`rtt=10ms,jitter=1ms,rate=100mbit`), or a profile with settings changed
/// (`wifi,rate=50mbit`). `none` is no link (the server's own port).
pub fn parse(text: &str) -> Result<Option<LinkSpec>, LabError> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("none") {
        return Ok(None);
    }
    let mut spec = LinkSpec {
        profile: "custom",
        rtt_ms: 0,
        jitter_ms: 0,
        rate_bit_s: 0,
    };
    for (i, part) in text.split(',').map(str::trim).enumerate() {
        let Some((key, value)) = part.split_once('=') else {
            let Some(p) = PROFILES
                .iter()
                .find(|p| p.0.eq_ignore_ascii_case(part))
                .filter(|_| i == 0)
            else {
                return Err(bad(
                    text,
                    format!(
                        "'{part}' is neither a profile ({}, none; first) nor name=value (rtt=, jitter=, rate=)",
                        PROFILES.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            spec = LinkSpec {
                profile: p.0,
                rtt_ms: p.1,
                jitter_ms: p.2,
                rate_bit_s: p.3,
            };
            continue;
        };
        match key.trim().to_ascii_lowercase().as_str() {
            "rtt" => spec.rtt_ms = millis(text, value)?,
            "jitter" => spec.jitter_ms = millis(text, value)?,
            "rate" => spec.rate_bit_s = rate(text, value)?,
            "loss" => {
                return Err(bad(
                    text,
                    "Toxiproxy relays a TCP stream and cannot drop packets, so loss= cannot be emulated here",
                ));
            }
            other => {
                return Err(bad(
                    text,
                    format!("unknown setting '{other}': rtt=, jitter= or rate="),
                ));
            }
        }
    }
    if spec.profile != "custom" && text.contains('=') {
        // A profile with a setting changed is no longer that profile as documented.
        spec.profile = "custom";
    }
    let (_, down) = spec.split_ms();
    if spec.jitter_ms > down {
        return Err(bad(
            text,
            format!(
                "jitter {} ms is more than the {down} ms delay toward the client it varies; give at most rtt/2",
                spec.jitter_ms
            ),
        ));
    }
    Ok(Some(spec))
}

/// One proxied server port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkProxy {
    /// What it carries (`smb`, `nfs`, `mount`).
    pub name: String,
    /// The port clients connect to on 127.0.0.1, and the server's port behind it.
    pub listen_port: u16,
    pub upstream_port: u16,
}

/// A lab's link, as its state records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabLink {
    pub link: EmulatedLink,
    /// Toxiproxy's HTTP API on 127.0.0.1.
    pub api_port: u16,
    pub proxies: Vec<LinkProxy>,
    /// The server's own URL, not through the link.
    pub direct_url: String,
}

/// One client's own path to a lab's server (`lab up --client-links`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientPath {
    /// The URL the client is to use: through its link, or the server's own.
    pub url: String,
    /// Its link; `None`: the server's own port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<LabLink>,
}

/// Reads `--client-links`: one link per client in rank order, separated by `;`, each
/// as `--link` takes it (`none` for the server's own port), and `LINK*N` for N clients
/// in a row: `lan*3;vpn` is three clients on the LAN and one over a VPN.
pub fn parse_per_client(text: &str) -> Result<Vec<Option<LinkSpec>>, LabError> {
    let mut out = Vec::new();
    for part in text.split(';').map(str::trim) {
        if part.is_empty() {
            return Err(bad(
                text,
                "an empty entry: give one link per client, separated by ';' (e.g. lan*3;vpn)",
            ));
        }
        let (link, count) = match part.rsplit_once('*') {
            Some((link, n)) => {
                let n: usize = n.trim().parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    bad(
                        text,
                        format!("'{part}': after '*' comes how many clients, e.g. lan*3"),
                    )
                })?;
                (link, n)
            }
            None => (part, 1),
        };
        let spec = parse(link)?;
        out.extend(std::iter::repeat_n(spec, count));
    }
    if out.len() > MAX_CLIENT_LINKS {
        return Err(bad(
            text,
            format!(
                "{} clients: at most {MAX_CLIENT_LINKS} paths of their own on one lab",
                out.len()
            ),
        ));
    }
    Ok(out)
}

/// The most clients one lab makes paths for (each is a proxy, or two for NFS).
pub const MAX_CLIENT_LINKS: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_and_settings_parse_and_what_toxiproxy_cannot_do_is_refused() {
        let s = parse("rtt=10ms,jitter=1ms,rate=100mbit").unwrap().unwrap();
        assert_eq!(
            (s.profile, s.rtt_ms, s.jitter_ms, s.rate_bit_s),
            ("custom", 10, 1, 100_000_000)
        );
        assert_eq!(s.split_ms(), (5, 5));
        assert_eq!(s.rate_kb_s(), 12_500);
        let w = parse("wifi").unwrap().unwrap();
        assert_eq!((w.profile, w.rtt_ms, w.jitter_ms), ("wifi", 3, 1));
        assert_eq!(w.split_ms(), (2, 1));
        let c = parse("vpn,rate=10mbit").unwrap().unwrap();
        assert_eq!(
            (c.profile, c.rtt_ms, c.rate_bit_s),
            ("custom", 20, 10_000_000)
        );
        assert_eq!(parse("lan").unwrap().unwrap().rate_bit_s, 1_000_000_000);
        assert_eq!(parse("rtt=1s").unwrap().unwrap().rtt_ms, 1000);
        assert_eq!(parse("rtt=0").unwrap().unwrap().rtt_ms, 0);
        assert!(parse("none").unwrap().is_none());
        for bad in [
            "rtt=0.5ms",
            "rtt=10",
            "rate=100",
            "rate=1001bit",
            "loss=1%",
            "rtt=2ms,jitter=2ms",
            "fast",
            "rtt=1ms,wifi",
            "mtu=1500",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let e = parse("loss=1%").unwrap_err().to_string();
        assert!(e.contains("cannot drop packets"), "{e}");
    }

    #[test]
    fn a_link_per_client_repeats_and_refuses_what_is_not_one() {
        let l = parse_per_client("lan*3; vpn").unwrap();
        assert_eq!(l.len(), 4);
        assert!(l[..3].iter().all(|s| s.unwrap().profile == "lan"));
        assert_eq!(l[3].unwrap().rtt_ms, 20);
        let l = parse_per_client("none;rtt=5ms,rate=10mbit*2").unwrap();
        assert_eq!(l.len(), 3);
        assert!(l[0].is_none());
        assert_eq!(
            (l[2].unwrap().rtt_ms, l[2].unwrap().rate_bit_s),
            (5, 10_000_000)
        );
        for bad in ["lan;;vpn", "lan*0", "lan*x", "fast*2", "", "lan*300"] {
            assert!(parse_per_client(bad).is_err(), "{bad}");
        }
    }
}
