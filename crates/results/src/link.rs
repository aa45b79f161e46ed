//! The network path a run crossed: the link the lab emulated between naslab and the
//! server (its profile, settings and emulator), and the round trip naslab measured
//! itself over that path before the run.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::duration_text;

/// The path between naslab and a URL target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct LinkSettings {
    /// The link a lab emulated (`naslab lab up --link`); absent for a real server or a
    /// lab without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub emulated: Option<EmulatedLink>,
    /// The round trip naslab measured itself before the run; absent when the probe
    /// failed (the run's warnings say why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<RttProbe>,
}

/// A link emulated between client and server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct EmulatedLink {
    /// The profile it came from (`lan`, `wifi`, ...), or `custom` for explicit settings.
    pub profile: String,
    /// The round-trip delay added, ns: half each way (the odd millisecond on the way
    /// to the server).
    pub rtt_ns: u64,
    /// How far the delay toward the client varies either way, ns (uniformly).
    pub jitter_ns: u64,
    /// The rate each direction is held to, bit/s (0: not limited).
    pub rate_bit_s: u64,
    /// The emulator (`toxiproxy`), its version as it reports it, and where it delays:
    /// `stream` (each chunk of data read from a connection) or `packet`.
    pub emulator: String,
    pub emulator_version: String,
    pub delay_level: String,
}

/// Round trips timed over the run's own path to the server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RttProbe {
    /// What was timed: `SMB2 ECHO` or `NFS NULL` (one request and its reply each).
    pub method: String,
    pub samples: u32,
    /// The median, fastest and slowest round trip, ns.
    pub median_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
}

/// A rate in words: `100 Mbit/s`, `1 Gbit/s`, `unlimited`.
pub fn rate_text(bit_s: u64) -> String {
    match bit_s {
        0 => "unlimited".into(),
        b if b % 1_000_000_000 == 0 => format!("{} Gbit/s", b / 1_000_000_000),
        b if b % 1_000_000 == 0 => format!("{} Mbit/s", b / 1_000_000),
        b if b % 1_000 == 0 => format!("{} kbit/s", b / 1_000),
        b => format!("{b} bit/s"),
    }
}

impl EmulatedLink {
    /// One line: `wifi: rtt 3.00 ms ± 1.00 ms, 100 Mbit/s (toxiproxy v2.12.0, stream-level delay)`.
    pub fn summary(&self) -> String {
        format!(
            "{} ({} {}, {}-level delay)",
            self.settings_text(),
            self.emulator,
            self.emulator_version,
            self.delay_level
        )
    }

    /// The link without its emulator: `wifi: rtt 3.00 ms ± 1.00 ms, 100 Mbit/s`.
    pub fn settings_text(&self) -> String {
        let jitter = if self.jitter_ns > 0 {
            format!(" ± {}", duration_text(self.jitter_ns))
        } else {
            String::new()
        };
        format!(
            "{}: rtt {}{jitter}, {}",
            self.profile,
            duration_text(self.rtt_ns),
            rate_text(self.rate_bit_s)
        )
    }
}

impl LinkSettings {
    /// The link in a few words, for one client among others: its settings, or
    /// `not emulated`.
    pub fn short_text(&self) -> String {
        self.emulated
            .as_ref()
            .map_or_else(|| "not emulated".into(), EmulatedLink::settings_text)
    }

    /// The probed round trip's median, or `not measured`.
    pub fn probed_text(&self) -> String {
        self.probe
            .as_ref()
            .map_or_else(|| "not measured".into(), |p| duration_text(p.median_ns))
    }
}

impl RttProbe {
    /// Builds the summary of `samples` round trips (ns); `None` when there are none.
    pub fn from_samples(method: &str, samples: &[u64]) -> Option<RttProbe> {
        let mut s = samples.to_vec();
        s.sort_unstable();
        let n = s.len();
        if n == 0 {
            return None;
        }
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2
        };
        Some(RttProbe {
            method: method.to_string(),
            samples: n as u32,
            median_ns: median,
            min_ns: s[0],
            max_ns: s[n - 1],
        })
    }

    /// One line: `10.21 ms (median of 21 SMB2 ECHO, 10.05 ms - 10.90 ms)`.
    pub fn summary(&self) -> String {
        format!(
            "{} (median of {} {}, {} - {})",
            duration_text(self.median_ns),
            self.samples,
            self.method,
            duration_text(self.min_ns),
            duration_text(self.max_ns)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_summarises_its_samples_and_a_link_reads_as_set() {
        let p = RttProbe::from_samples("NFS NULL", &[3, 1, 2, 10]).unwrap();
        assert_eq!((p.samples, p.median_ns, p.min_ns, p.max_ns), (4, 2, 1, 10));
        let p = RttProbe::from_samples("NFS NULL", &[30, 10, 20]).unwrap();
        assert_eq!(p.median_ns, 20);
        assert!(RttProbe::from_samples("x", &[]).is_none());
        let l = EmulatedLink {
            profile: "wifi".into(),
            rtt_ns: 3_000_000,
            jitter_ns: 1_000_000,
            rate_bit_s: 100_000_000,
            emulator: "toxiproxy".into(),
            emulator_version: "v2.12.0".into(),
            delay_level: "stream".into(),
        };
        assert_eq!(
            l.summary(),
            "wifi: rtt 3.00 ms ± 1.00 ms, 100 Mbit/s (toxiproxy v2.12.0, stream-level delay)"
        );
        assert_eq!(rate_text(0), "unlimited");
        assert_eq!(rate_text(10_000_000_000), "10 Gbit/s");
        assert_eq!(rate_text(1_500_000), "1500 kbit/s");
    }
}
