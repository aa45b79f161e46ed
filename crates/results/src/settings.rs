//! The settings that shaped a measurement besides the workload itself, typed: how the
//! client ran the phase (`--realtime` and what the kernel granted, where the op records
//! were written), the null backend's service times and the protocol client's options and
//! what the server agreed to. Each is named and worded once here ([`RunOptions::settings`]),
//! for `compare`'s differences and the report's settings panel.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::{RunOptions, RunResult, duration_text};

/// The null backend's simulated server (`--null-service-time`, `--null-stall`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct NullSettings {
    /// Each op's fixed service time, ns (0: none).
    pub service_time_ns: u64,
    /// A stall: the op of each connection that takes longer, and by how much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<NullStall>,
}

/// One op of each connection of the null backend that takes longer (`--null-stall D@N`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct NullStall {
    /// The op's index on its connection, from 0.
    pub op: u64,
    /// How much longer it takes, ns.
    pub extra_ns: u64,
}

/// The protocol a URL target was spoken to with, its client's options and what the
/// server agreed to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "protocol", rename_all = "lowercase")]
pub enum ProtocolSettings {
    Smb(SmbSettings),
    Nfs(NfsSettings),
}

/// An `smb://` target's session: what naslab asked for and what the server agreed to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct SmbSettings {
    /// `--io-timeout`: how long a request waits for its reply, ns.
    pub io_timeout_ns: u64,
    /// `--smb-encrypt`: `required`, `desired` or `off`.
    pub encrypt_asked: String,
    /// `--smb-in-flight`: the most READs or WRITEs one op keeps in flight.
    pub in_flight: u32,
    /// The dialects the client offered, e.g. `SMB 2.0.2` ... `SMB 3.1.1`.
    pub dialects_offered: Vec<String>,
    /// The dialect the server chose, e.g. `SMB 3.1.1`.
    pub dialect: String,
    /// Whether the session's messages are encrypted.
    pub encrypted: bool,
    /// The cipher they are encrypted with, e.g. `AES-128-GCM`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
    /// Whether the session's messages are signed (encrypted ones carry no signature).
    pub signed: bool,
    /// The signing algorithm, e.g. `AES-128-GMAC`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signing_algorithm: Option<String>,
    /// Whether the server requires signing.
    pub server_requires_signing: bool,
    /// The largest READ and WRITE the server takes, bytes.
    pub max_read_bytes: u64,
    pub max_write_bytes: u64,
    /// `--retrans-timeout`: how long a request waits for its reply before its
    /// connection is taken for broken and the request sent again on a new one, ns;
    /// absent when not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrans_timeout_ns: Option<u64>,
}

/// An `nfs://` target's client: the version, credentials and timeouts naslab used and
/// the transfer sizes the server announced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct NfsSettings {
    /// The NFS version spoken: 3 or 4.
    pub version: u32,
    /// Version 4's minor version (1 or 2), as the server accepted it in the session's
    /// compounds; absent for version 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minor_version: Option<u32>,
    /// `--io-timeout`: how long a request waits for its reply, ns.
    pub io_timeout_ns: u64,
    /// `--retrans-timeout` (NFSv3): how long a request waits for its reply before it is
    /// sent again on a new connection, ns; absent when not set (and for NFSv4.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retrans_timeout_ns: Option<u64>,
    /// The RPC credential flavour (`AUTH_UNIX`) and the ids it carries.
    pub auth: String,
    pub uid: u32,
    pub gid: u32,
    /// The NFS server's port, and the MOUNT service's when the URL gave one (else the
    /// portmapper was asked).
    pub port: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_port: Option<u16>,
    /// The largest READ and WRITE the server takes (FSINFO's rtmax and wtmax), bytes.
    pub max_read_bytes: u64,
    pub max_write_bytes: u64,
    /// Version 4.1 and later: the slots of the session's fore channel the server granted
    /// (CREATE_SESSION's `ca_maxrequests`), the most requests it holds at once on a
    /// connection. A trace's `queue_depth` above it keeps no more than this many reads
    /// and writes in flight per stream: the rest wait for a slot. Absent for version 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_slots: Option<u32>,
}

/// What the kernel granted a measured phase run with `--realtime`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct RealtimeGranted {
    /// Whether the process's memory was locked (mlockall).
    pub memory_locked: bool,
    /// The phase's stream threads, and how many of them ran under SCHED_FIFO, at nice
    /// -20 (streams too busy to sleep ask for that instead), and pinned to a CPU.
    pub streams: u32,
    pub fifo_streams: u32,
    pub nice_streams: u32,
    pub pinned_streams: u32,
    /// Why the kernel refused what it refused, each reason once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
}

impl RealtimeGranted {
    /// Adds another client's grant (a multi-client job's phase): streams add, memory
    /// counts as locked only when it was on every client, and each refusal is kept once.
    pub fn add(&mut self, other: &RealtimeGranted) {
        self.memory_locked &= other.memory_locked;
        self.streams += other.streams;
        self.fifo_streams += other.fifo_streams;
        self.nice_streams += other.nice_streams;
        self.pinned_streams += other.pinned_streams;
        for why in &other.refused {
            if !self.refused.contains(why) {
                self.refused.push(why.clone());
            }
        }
    }

    /// One line for tables: `2/2 streams under SCHED_FIFO, 0 niced, 2 pinned, memory locked`.
    pub fn summary(&self) -> String {
        format!(
            "{}/{} streams under SCHED_FIFO, {} niced, {} pinned, memory {}",
            self.fifo_streams,
            self.streams,
            self.nice_streams,
            self.pinned_streams,
            if self.memory_locked {
                "locked"
            } else {
                "not locked"
            }
        )
    }
}

/// One setting as people read it: its name and its value in words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct Setting {
    pub name: String,
    pub value: String,
}

/// `--retrans-timeout` in words: its duration, or `none` (a request waits the I/O
/// timeout).
fn retrans_text(ns: Option<u64>) -> String {
    ns.map_or_else(|| "none".into(), duration_text)
}

/// A switch's value: `true` or `false`, as files of schema version 1 wrote the switches
/// they kept in `extra`, so that runs of both versions compare by the same words.
fn on(b: bool) -> String {
    b.to_string()
}

impl RunResult {
    /// The settings beyond pacing, cache, iterations and records that shaped the
    /// measurement, named and worded for people (`compare` lists those that differ, the
    /// report shows them all); see [`RunOptions::settings`]. A file of schema version 1
    /// did not record `--realtime`, `--no-ordering` (unless in `extra`) nor where the
    /// records were written: those are left out
    /// (unknown), never given a default it may not have had.
    pub fn settings(&self) -> Vec<Setting> {
        let known = |name: &str| {
            self.schema_version >= 2 || !matches!(name, "realtime" | "records written" | "ordering")
        };
        let mut settings: Vec<Setting> = self
            .options
            .settings()
            .into_iter()
            .filter(|s| known(&s.name))
            .collect();
        // How caches were dropped differs between backends (Linux's page cache, Windows'
        // cache manager, a protocol client with no cache); unknown in older files.
        if let (crate::CacheMode::Drop, Some(how)) = (self.options.cache, self.target.cache_drop) {
            settings.insert(
                0,
                Setting {
                    name: "cache dropped by".into(),
                    value: how.text().into(),
                },
            );
        }
        // A job whose clients crossed different links has no common one: each client's.
        let clients = self
            .multi_client
            .as_ref()
            .map_or(&[][..], |m| &m.clients[..]);
        if self.options.link.is_none() && clients.iter().any(|c| c.link.is_some()) {
            let each = |what: &dyn Fn(&crate::LinkSettings) -> String| {
                clients
                    .iter()
                    .map(|c| {
                        let text = c.link.as_ref().map_or_else(|| "none".into(), what);
                        format!("client {}: {text}", c.rank)
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            settings.push(Setting {
                name: "link".into(),
                value: format!("per client: {}", each(&|l| l.short_text())),
            });
            settings.push(Setting {
                name: "link rtt measured".into(),
                value: format!("per client: {}", each(&|l| l.probed_text())),
            });
        }
        settings
    }
}

impl RunOptions {
    /// The settings beyond pacing, cache, iterations and records that shaped the
    /// measurement, named and worded for people. Settings a run left at their default are
    /// named too, so two runs made with and without one differ by it. The workload's
    /// parameters (`extra`) come last, under their own names (in files of schema version
    /// 1, also the settings that are typed now, under the same names).
    pub fn settings(&self) -> Vec<Setting> {
        let mut s: Vec<(&str, String)> = vec![
            ("data", self.data.clone()),
            ("verify", on(self.verify)),
            (
                "records written",
                if !self.records {
                    "-".into()
                } else if self.records_after_phase {
                    "after the phase".into()
                } else {
                    "beside the phase".into()
                },
            ),
            (
                "time limit",
                self.time_limit_ns
                    .map_or_else(|| "none".into(), duration_text),
            ),
            ("drop all caches", on(self.drop_all_caches)),
            ("shared files", on(self.shared_files)),
            ("realtime", on(self.realtime)),
            (
                "ordering",
                if self.no_ordering { "off" } else { "on" }.to_string(),
            ),
            (
                "client profile",
                self.client_profile
                    .clone()
                    .unwrap_or_else(|| "plain".into()),
            ),
        ];
        if let Some(n) = &self.null_backend {
            s.push(("null service time", duration_text(n.service_time_ns)));
            s.push((
                "null stall",
                n.stall.as_ref().map_or_else(
                    || "none".into(),
                    |st| format!("{} at op {}", duration_text(st.extra_ns), st.op),
                ),
            ));
        }
        match &self.protocol {
            Some(ProtocolSettings::Smb(p)) => {
                s.push(("io timeout", duration_text(p.io_timeout_ns)));
                s.push(("retransmit timeout", retrans_text(p.retrans_timeout_ns)));
                s.push(("smb encryption asked", p.encrypt_asked.clone()));
                s.push(("smb in flight", p.in_flight.to_string()));
                s.push(("smb dialects offered", p.dialects_offered.join(", ")));
                s.push(("smb dialect", p.dialect.clone()));
                s.push((
                    "smb encryption",
                    match (&p.cipher, p.encrypted) {
                        (Some(c), true) => c.clone(),
                        (None, true) => "on".into(),
                        (_, false) => "off".into(),
                    },
                ));
                s.push((
                    "smb signing",
                    match (&p.signing_algorithm, p.signed) {
                        (Some(a), true) => a.clone(),
                        (None, true) => "on".into(),
                        (_, false) => "off".into(),
                    },
                ));
                s.push(("smb server requires signing", on(p.server_requires_signing)));
                s.push(("smb max read", format!("{} B", p.max_read_bytes)));
                s.push(("smb max write", format!("{} B", p.max_write_bytes)));
            }
            Some(ProtocolSettings::Nfs(p)) => {
                s.push(("io timeout", duration_text(p.io_timeout_ns)));
                s.push(("retransmit timeout", retrans_text(p.retrans_timeout_ns)));
                s.push((
                    "nfs version",
                    match p.minor_version {
                        Some(m) => format!("{}.{m}", p.version),
                        None => p.version.to_string(),
                    },
                ));
                s.push((
                    "nfs credential",
                    format!("{} uid {} gid {}", p.auth, p.uid, p.gid),
                ));
                s.push(("nfs port", p.port.to_string()));
                if p.version == 3 {
                    s.push((
                        "nfs mount port",
                        p.mount_port
                            .map_or_else(|| "from the portmapper".into(), |m| m.to_string()),
                    ));
                }
                s.push(("nfs max read", format!("{} B", p.max_read_bytes)));
                s.push(("nfs max write", format!("{} B", p.max_write_bytes)));
            }
            None => {}
        }
        if let Some(l) = &self.link {
            s.push((
                "link",
                l.emulated
                    .as_ref()
                    .map_or_else(|| "not emulated".into(), |e| e.summary()),
            ));
            s.push((
                "link rtt measured",
                l.probe
                    .as_ref()
                    .map_or_else(|| "not measured".into(), |p| p.summary()),
            ));
        }
        let mut out: Vec<Setting> = s
            .into_iter()
            .map(|(name, value)| Setting {
                name: name.to_string(),
                value,
            })
            .collect();
        for (k, v) in &self.extra {
            let name = k.replace('_', " ");
            // A file of version 1 kept some of the typed settings here, under their names.
            match out.iter_mut().find(|s| s.name == name) {
                Some(s) => s.value = v.clone(),
                None => out.push(Setting {
                    name,
                    value: v.clone(),
                }),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_typed_setting_is_named_with_its_value() {
        let o = RunOptions {
            records: true,
            records_after_phase: true,
            time_limit_ns: Some(1_500_000_000),
            realtime: true,
            protocol: Some(ProtocolSettings::Smb(SmbSettings {
                io_timeout_ns: 30_000_000_000,
                encrypt_asked: "desired".into(),
                in_flight: 8,
                dialects_offered: vec!["SMB 3.0".into(), "SMB 3.1.1".into()],
                dialect: "SMB 3.1.1".into(),
                encrypted: true,
                cipher: Some("AES-128-GCM".into()),
                signed: false,
                signing_algorithm: None,
                server_requires_signing: true,
                max_read_bytes: 8 << 20,
                max_write_bytes: 8 << 20,
                retrans_timeout_ns: None,
            })),
            extra: [("scale".to_string(), "0.5".to_string())].into(),
            ..RunOptions::default()
        };
        let s: std::collections::BTreeMap<String, String> = o
            .settings()
            .into_iter()
            .map(|s| (s.name, s.value))
            .collect();
        assert_eq!(s["records written"], "after the phase");
        assert_eq!(s["time limit"], "1.50 s");
        assert_eq!(s["realtime"], "true");
        assert_eq!(s["io timeout"], "30.00 s");
        assert_eq!(s["retransmit timeout"], "none");
        assert_eq!(s["smb dialect"], "SMB 3.1.1");
        assert_eq!(s["smb dialects offered"], "SMB 3.0, SMB 3.1.1");
        assert_eq!(s["smb encryption"], "AES-128-GCM");
        assert_eq!(s["smb signing"], "off");
        assert_eq!(s["smb server requires signing"], "true");
        assert_eq!(s["smb max read"], "8388608 B");
        assert_eq!(s["scale"], "0.5");
        assert!(!s.contains_key("nfs version"));
    }

    #[test]
    fn a_file_of_schema_1_names_no_setting_it_did_not_record() {
        let mut run: RunResult = serde_json::from_value(serde_json::json!({
            "schema_version": 1,
            "naslab_version": "0.1.0",
            "started_at": "2026-01-01T00:00:00Z",
            "environment": {"host": "h", "kernel": "k", "os": "o", "cpu": "c", "cpus": 1, "memory_bytes": 1},
            "target": {"path": "t", "backend": "posix", "fs_type": "", "source": ""},
            "options": {"pacing": "afap", "cache": "drop", "records": true, "iterations": 1,
                        "extra": {"time_limit": "10s", "smb_session": "SMB 3.1.1, not encrypted"}},
            "workloads": []
        }))
        .unwrap();
        let names = |run: &RunResult| -> Vec<String> {
            run.settings().into_iter().map(|s| s.name).collect()
        };
        let v1 = names(&run);
        assert!(!v1.contains(&"realtime".to_string()), "{v1:?}");
        assert!(!v1.contains(&"records written".to_string()), "{v1:?}");
        assert!(v1.contains(&"smb session".to_string()), "{v1:?}");
        let time_limits: Vec<String> = run
            .settings()
            .into_iter()
            .filter(|s| s.name == "time limit")
            .map(|s| s.value)
            .collect();
        assert_eq!(
            time_limits,
            ["10s"],
            "named once, with the value the file kept"
        );
        // The same options in a file of version 2 say what was (not) asked for.
        run.schema_version = 2;
        let v2 = names(&run);
        assert!(v2.contains(&"realtime".to_string()), "{v2:?}");
        assert!(v2.contains(&"records written".to_string()), "{v2:?}");
    }

    #[test]
    fn how_caches_were_dropped_is_a_setting_only_when_they_were_and_it_is_known() {
        let run = |cache: &str, drop: Option<&str>| -> Vec<Setting> {
            let mut target =
                serde_json::json!({"path": "t", "backend": "posix", "fs_type": "", "source": ""});
            if let Some(d) = drop {
                target["cache_drop"] = d.into();
            }
            let r: RunResult = serde_json::from_value(serde_json::json!({
                "schema_version": 2,
                "naslab_version": "0.1.0",
                "started_at": "2026-01-01T00:00:00Z",
                "environment": {"host": "h", "kernel": "k", "os": "o", "cpu": "c", "cpus": 1, "memory_bytes": 1},
                "target": target,
                "options": {"pacing": "afap", "cache": cache, "records": true, "iterations": 1},
                "workloads": []
            }))
            .unwrap();
            r.settings()
                .into_iter()
                .filter(|s| s.name == "cache dropped by")
                .collect()
        };
        let linux = run("drop", Some("page_cache"));
        let windows = run("drop", Some("unbuffered_open"));
        assert_eq!(linux.len(), 1);
        assert!(linux[0].value.contains("POSIX_FADV_DONTNEED"), "{linux:?}");
        assert!(windows[0].value.contains("standby list"), "{windows:?}");
        // compare names the difference between the two.
        assert_ne!(linux[0].value, windows[0].value);
        assert!(run("direct", Some("page_cache")).is_empty());
        assert!(run("drop", None).is_empty(), "older files did not say");
    }

    #[test]
    fn grants_add_streams_lock_memory_only_when_all_did_and_keep_each_refusal_once() {
        let grant = |locked, streams, fifo, nice, refused: &[&str]| RealtimeGranted {
            memory_locked: locked,
            streams,
            fifo_streams: fifo,
            nice_streams: nice,
            pinned_streams: streams,
            refused: refused.iter().map(|r| r.to_string()).collect(),
        };
        let mut a = grant(true, 2, 2, 0, &[]);
        a.add(&grant(
            false,
            3,
            0,
            1,
            &["mlockall: ENOMEM", "SCHED_FIFO: EPERM"],
        ));
        a.add(&grant(true, 1, 0, 0, &["SCHED_FIFO: EPERM"]));
        assert_eq!(
            a,
            RealtimeGranted {
                memory_locked: false,
                streams: 6,
                fifo_streams: 2,
                nice_streams: 1,
                pinned_streams: 6,
                refused: vec!["mlockall: ENOMEM".into(), "SCHED_FIFO: EPERM".into()],
            }
        );
    }
}
