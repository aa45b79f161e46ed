//! run.json files of an older schema version still load, report and compare, with the
//! settings they recorded (and none they did not), and the settings typed since then are
//! compared field by field. The fixture is a run directory written by naslab before the
//! settings were typed (schema version 1).

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{single_run, write_run_json};
use naslab_report::{compare, load_run, write_run_report};
use naslab_results::{ProtocolSettings, SmbSettings};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/schema-1/v1/20261127T024902Z")
}

/// A copy of the fixture's run directory, to write a report into.
fn copy_fixture(into: &Path) -> PathBuf {
    let dir = into.join("v1").join("20261127T024902Z");
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(fixture()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    dir
}

fn setting(c: &naslab_report::Comparison, name: &str) -> Option<Vec<String>> {
    c.differences
        .iter()
        .find(|d| d.setting == name)
        .map(|d| d.values.clone())
}

#[test]
fn a_run_json_of_schema_1_loads_reports_and_compares_with_what_it_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_fixture(tmp.path());
    let old = load_run(&dir).expect("a schema 1 run.json loads");
    assert_eq!(old.result.schema_version, 1);
    assert_eq!(old.result.workloads[0].iterations.len(), 2);
    assert_eq!(old.result.options.extra["time_limit"], "10s");
    assert!(!old.result.options.realtime && old.result.options.protocol.is_none());

    // The report is made from it, its settings panel holding what the file recorded.
    let page = write_run_report(&dir, &old.result).expect("its report is written");
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains(r#"{"name":"time limit","value":"10s"}"#));
    assert!(html.contains(r#"{"name":"client profile","value":"windows"}"#));
    assert!(
        !html.contains(r#"{"name":"realtime""#),
        "not recorded in version 1"
    );

    // Compared with a run of this version made the same way: the settings both name
    // alike do not differ; those version 1 did not record are '-' there.
    let mut new = single_run();
    new.options.client_profile = Some("windows".into());
    new.options.drop_all_caches = true;
    new.options.realtime = true;
    let new_dir = tmp.path().join("v2").join("20261128T000000Z");
    write_run_json(&new_dir, &new);
    let runs = vec![old, load_run(&new_dir).unwrap()];
    let c = compare(&runs, 0);
    assert_eq!(setting(&c, "client profile"), None);
    assert_eq!(setting(&c, "drop all caches"), None);
    assert_eq!(
        setting(&c, "realtime"),
        Some(vec!["-".to_string(), "true".to_string()])
    );
}

#[test]
fn compare_warns_when_the_emulated_link_differs_but_not_for_the_probed_round_trip() {
    use naslab_results::{EmulatedLink, LinkSettings, RttProbe};
    let tmp = tempfile::tempdir().unwrap();
    let run = |rtt_ms: u64, probed_ns: u64| {
        let mut r = single_run();
        r.options.link = Some(LinkSettings {
            emulated: Some(EmulatedLink {
                profile: "custom".into(),
                rtt_ns: rtt_ms * 1_000_000,
                jitter_ns: 0,
                rate_bit_s: 0,
                emulator: "toxiproxy".into(),
                emulator_version: "v2.12.0".into(),
                delay_level: "stream".into(),
            }),
            probe: RttProbe::from_samples("SMB2 ECHO", &[probed_ns]),
        });
        r
    };
    let mut runs = Vec::new();
    for (name, r) in [
        ("a", run(10, 10_900_000)),
        ("b", run(10, 11_200_000)),
        ("c", run(20, 20_900_000)),
    ] {
        let d = tmp.path().join(name).join("20260101T000000Z");
        write_run_json(&d, &r);
        runs.push(load_run(&d).unwrap());
    }
    let same_link = compare(&runs[..2], 0);
    assert!(
        same_link.differences.is_empty(),
        "{:?}",
        same_link.differences
    );
    let c = compare(&runs, 0);
    let differ: Vec<&str> = c.differences.iter().map(|d| d.setting.as_str()).collect();
    assert_eq!(differ, ["link"]);
    assert!(setting(&c, "link").unwrap()[2].starts_with("custom: rtt 20.00 ms"));
}

#[test]
fn compare_warns_when_the_protocol_settings_differ() {
    let tmp = tempfile::tempdir().unwrap();
    let smb = |dialect: &str, encrypted: bool, in_flight: u32| {
        let mut r = single_run();
        r.options.protocol = Some(ProtocolSettings::Smb(SmbSettings {
            io_timeout_ns: 30_000_000_000,
            encrypt_asked: "desired".into(),
            in_flight,
            dialects_offered: vec!["SMB 3.0".into(), "SMB 3.1.1".into()],
            dialect: dialect.into(),
            encrypted,
            cipher: encrypted.then(|| "AES-128-GCM".into()),
            signed: !encrypted,
            signing_algorithm: (!encrypted).then(|| "AES-GMAC".into()),
            server_requires_signing: false,
            max_read_bytes: 8 << 20,
            max_write_bytes: 8 << 20,
            retrans_timeout_ns: None,
        }));
        r
    };
    let mut runs = Vec::new();
    for (name, run) in [
        ("a", smb("SMB 3.1.1", true, 8)),
        ("b", smb("SMB 3.1.1", false, 8)),
        ("c", smb("SMB 3.0", true, 1)),
    ] {
        let d = tmp.path().join(name).join("20260101T000000Z");
        write_run_json(&d, &run);
        runs.push(load_run(&d).unwrap());
    }
    let c = compare(&runs, 0);
    let differ: Vec<&str> = c.differences.iter().map(|d| d.setting.as_str()).collect();
    assert_eq!(
        differ,
        [
            "smb dialect",
            "smb encryption",
            "smb in flight",
            "smb signing"
        ]
    );
    assert_eq!(
        setting(&c, "smb encryption").unwrap(),
        ["AES-128-GCM", "off", "AES-128-GCM"]
    );
    let warnings = c.warnings().join("\n");
    assert!(warnings.contains("smb dialect"), "{warnings}");
    // The same settings: no warning.
    let same = vec![runs[0].clone(), runs[0].clone()];
    assert!(compare(&same, 0).differences.is_empty());
}
