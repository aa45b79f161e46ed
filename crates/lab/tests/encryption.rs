//! naslab's SMB client against Samba set up as NAS products ship it: encryption
//! required (globally, then on the share alone) and desired, signing mandatory (SMB
//! 3.1.1 with HMAC-SHA256 the only algorithm too), each dialect from SMB 2.0.2 to 3.1.1
//! as the server's maximum, and a user with a password. Each configuration runs
//! FileCopyToNAS and PhotoAlbum at a small scale, checks the bytes on the server's own
//! file system, and reads from `smbstatus` what the server says the session really was
//! (dialect, encryption, signing). Then encryption the client requires of a server
//! that only allows it, the messages of refusals (share-level encryption, NTLM
//! blocked, guests, SMB 2.0.2 dropping a client that offers encryption), and a share
//! that vetoes dot files.
//! Needs root (servers): skipped with a note otherwise.

#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::sync::atomic::Ordering;

use common::*;
use naslab_engine::{
    IterationSpec, Progress, ReplayOptions, compile, records_from_trace, run_iteration,
};
use naslab_lab::{FsKind, ServerKind};
use naslab_results::CacheMode;
use naslab_targets::SmbTarget;
use naslab_targets::url::SmbEncrypt;
use naslab_trace::FileKind;
use naslab_workload::GenParams;

/// Runs `workload` (generated small) and checks its bytes against the server's disk.
fn run_workload(workload: &str, target: &SmbTarget, share_dir: &Path, spool: &Path) {
    let trace = naslab_workload::generate(
        workload,
        &GenParams {
            seed: 1,
            scale: 0.005,
        },
    )
    .unwrap();
    let plan = compile(Path::new("t.jsonl"), records_from_trace(&trace), spool).unwrap();
    let progress = Progress::default();
    let spec = IterationSpec {
        plan: &plan,
        target,
        cache: CacheMode::Drop,
        replay: ReplayOptions::default(),
        spool_dir: spool,
        records_path: None,
        progress: &progress,
        drop_all_caches: false,
        record_sink: None,
    };
    let r = run_iteration(&spec, 1).expect("runs");
    assert_eq!(r.errors, 0, "{workload}: {:?}", r.op_stats);
    assert!(r.aborted.is_none(), "{workload}: {:?}", r.aborted);
    let dir = naslab_lab::layout::workload_dir(share_dir, &trace.header.workload);
    let on_disk = sizes(&dir);
    let prepared: u64 = trace
        .files
        .iter()
        .filter(|f| f.exists && f.kind == FileKind::File)
        .map(|f| f.size)
        .sum();
    assert_eq!(
        progress.prepared_bytes.load(Ordering::Relaxed),
        prepared,
        "{workload}: prepared over SMB"
    );
    // Both workloads only add files or read them: the server's disk holds what was
    // prepared plus what was written, to the byte.
    assert_eq!(
        on_disk,
        prepared + r.bytes_written,
        "{workload}: bytes on the server"
    );
    if workload == "PhotoAlbum" {
        assert!(r.bytes_read > 0);
    } else {
        assert!(r.bytes_written > 0);
    }
}

fn sizes(dir: &Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let m = e.metadata().unwrap();
        n += if m.is_dir() {
            sizes(&e.path())
        } else {
            m.len()
        };
    }
    n
}

/// Samba on a plain directory with the options `opts`, in a directory of its own.
fn samba(opts: &[&str]) -> TempLab {
    TempLab::up(FsKind::Dir, ServerKind::Samba, opts)
}

/// The refusal's text when naslab's client, with `--smb-encrypt` as given, signs in to
/// a Samba with the options `opts`.
fn refusal(opts: &[&str], encrypt: SmbEncrypt) -> String {
    let lab = samba(opts);
    smb_encrypting(lab.state(), encrypt).expect_err("refused")
}

/// The dialect as naslab names it, from smbstatus's name for it.
fn samba_dialect(protocol: &str) -> &'static str {
    match protocol {
        "SMB2_02" => "SMB 2.0.2",
        "SMB2_10" => "SMB 2.1",
        "SMB3_00" => "SMB 3.0",
        "SMB3_02" => "SMB 3.0.2",
        "SMB3_11" => "SMB 3.1.1",
        other => panic!("smbstatus names an unknown protocol {other}"),
    }
}

/// What `smbstatus -b` says of the lab account's sessions: (protocol, encryption,
/// signing) of each.
fn sessions(lab_dir: &Path) -> Vec<(String, String, String)> {
    let out = std::process::Command::new("smbstatus")
        .arg("-s")
        .arg(lab_dir.join("smb.conf"))
        .arg("-b")
        .output()
        .expect("smbstatus runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.lines()
        .filter(|l| l.contains("naslab-lab"))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = f.len();
            (
                f[n - 3].to_string(),
                f[n - 2].to_string(),
                f[n - 1].to_string(),
            )
        })
        .collect()
}

/// What `smbstatus -S` says of the connections to the lab's share: (encryption,
/// signing) of each.
fn share_connections(lab_dir: &Path) -> Vec<(String, String)> {
    let out = std::process::Command::new("smbstatus")
        .arg("-s")
        .arg(lab_dir.join("smb.conf"))
        .arg("-S")
        .output()
        .expect("smbstatus runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.lines()
        .filter(|l| l.starts_with("naslab "))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = f.len();
            (f[n - 2].to_string(), f[n - 1].to_string())
        })
        .collect()
}

struct Case {
    label: &'static str,
    opts: &'static [&'static str],
    /// smbstatus's protocol column.
    protocol: &'static str,
    /// smbstatus's encryption column for the session ("-" for none; "partial(...)"
    /// when only some of its tree connects are encrypted, as with a share's own
    /// `smb encrypt`).
    encryption: &'static str,
    /// The cipher of the connection to the share ("-" for none).
    share_cipher: &'static str,
    /// Whether the signing column must name an algorithm (a signed session).
    signed: bool,
    /// The signing algorithm smbstatus must name, when the case is about it.
    algorithm: Option<&'static str>,
}

impl Case {
    /// What smbstatus prints as the share connection's cipher: Samba 4.17's names
    /// only the AES-128 ciphers there and prints "???" for the AES-256 ones (its
    /// session column names them all).
    fn share_column(&self) -> &'static str {
        if self.share_cipher.starts_with("AES-256") {
            "???"
        } else {
            self.share_cipher
        }
    }
}

const CASES: &[Case] = &[
    Case {
        label: "encrypt required (global)",
        opts: &["global: server smb encrypt = required"],
        protocol: "SMB3_11",
        encryption: "AES-128-GCM",
        share_cipher: "AES-128-GCM",
        signed: false,
        algorithm: None,
    },
    Case {
        label: "encrypt required (share)",
        opts: &["smb encrypt = required"],
        protocol: "SMB3_11",
        encryption: "partial(AES-128-GCM)",
        share_cipher: "AES-128-GCM",
        signed: false,
        algorithm: None,
    },
    Case {
        label: "encrypt desired",
        opts: &["global: server smb encrypt = desired"],
        protocol: "SMB3_11",
        encryption: "AES-128-GCM",
        share_cipher: "AES-128-GCM",
        signed: false,
        algorithm: None,
    },
    // AES-256: the encryption keys are 256 bits, the signing key stays at 128
    // (a 256-bit one made every signed message fail before).
    Case {
        label: "encrypt required, AES-256-GCM",
        opts: &[
            "global: server smb encrypt = required",
            "global: server smb3 encryption algorithms = AES-256-GCM",
        ],
        protocol: "SMB3_11",
        encryption: "AES-256-GCM",
        share_cipher: "AES-256-GCM",
        signed: false,
        algorithm: None,
    },
    Case {
        label: "encrypt required, AES-256-CCM",
        opts: &[
            "global: server smb encrypt = required",
            "global: server smb3 encryption algorithms = AES-256-CCM",
        ],
        protocol: "SMB3_11",
        encryption: "AES-256-CCM",
        share_cipher: "AES-256-CCM",
        signed: false,
        algorithm: None,
    },
    Case {
        label: "signing mandatory, AES-256-GCM the only cipher",
        opts: &[
            "global: server signing = mandatory",
            "global: server smb3 encryption algorithms = AES-256-GCM",
        ],
        protocol: "SMB3_11",
        encryption: "-",
        share_cipher: "-",
        signed: true,
        algorithm: None,
    },
    Case {
        label: "signing mandatory",
        opts: &["global: server signing = mandatory"],
        protocol: "SMB3_11",
        encryption: "-",
        share_cipher: "-",
        signed: true,
        algorithm: None,
    },
    // SMB 3.1.1 signed with HMAC-SHA256, the one algorithm the server allows: the
    // signing context names it, and every message is signed with it (GMAC or CMAC
    // failed the first signed reply, the SESSION_SETUP's).
    Case {
        label: "signing mandatory, SMB 3.1.1 with HMAC-SHA256 only",
        opts: &[
            "global: server signing = mandatory",
            "global: server smb3 signing algorithms = HMAC-SHA256",
        ],
        protocol: "SMB3_11",
        encryption: "-",
        share_cipher: "-",
        signed: true,
        algorithm: Some("HMAC-SHA256"),
    },
    Case {
        label: "max SMB2_02",
        // Samba 4.17 drops any client that offered encryption when it also
        // desires encryption but speaks no SMB 3 (smbclient gets
        // NT_STATUS_ENCRYPTION_FAILED there too), so the SMB 2 servers do not.
        opts: &["global: server max protocol = SMB2_02"],
        protocol: "SMB2_02",
        encryption: "-",
        share_cipher: "-",
        signed: true,
        algorithm: None,
    },
    Case {
        label: "max SMB2_10",
        // Samba 4.17 drops any client that offered encryption when it also
        // desires encryption but speaks no SMB 3 (smbclient gets
        // NT_STATUS_ENCRYPTION_FAILED there too), so the SMB 2 servers do not.
        opts: &["global: server max protocol = SMB2_10"],
        protocol: "SMB2_10",
        encryption: "-",
        share_cipher: "-",
        signed: true,
        algorithm: None,
    },
    Case {
        label: "max SMB3_00",
        opts: &[
            "global: server max protocol = SMB3_00",
            "global: server smb encrypt = desired",
        ],
        protocol: "SMB3_00",
        encryption: "AES-128-CCM",
        share_cipher: "AES-128-CCM",
        signed: false,
        algorithm: None,
    },
    Case {
        label: "max SMB3_02",
        opts: &[
            "global: server max protocol = SMB3_02",
            "global: server smb encrypt = desired",
        ],
        protocol: "SMB3_02",
        encryption: "AES-128-CCM",
        share_cipher: "AES-128-CCM",
        signed: false,
        algorithm: None,
    },
    Case {
        label: "max SMB3_11",
        opts: &[
            "global: server max protocol = SMB3_11",
            "global: server smb encrypt = desired",
        ],
        protocol: "SMB3_11",
        encryption: "AES-128-GCM",
        share_cipher: "AES-128-GCM",
        signed: false,
        algorithm: None,
    },
];

#[test]
fn samba_as_nas_products_ship_it() {
    needs_root_and_servers!(ServerKind::Samba);
    let mut failures = Vec::new();
    for case in CASES {
        let lab = samba(case.opts);
        let st = lab.state();
        let target = match smb_encrypting(st, SmbEncrypt::Desired) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{}: {e}", case.label));
                continue;
            }
        };
        let encrypted = case.share_cipher != "-";
        assert_eq!(
            target.security().contains(", encrypted"),
            encrypted,
            "{}: {}",
            case.label,
            target.security()
        );
        if encrypted {
            assert!(
                target.security().contains(case.share_cipher),
                "{}: {}",
                case.label,
                target.security()
            );
        }
        for w in ["FileCopyToNAS", "PhotoAlbum"] {
            run_workload(w, &target, &st.share_dir, lab.base());
        }
        // The server's word on the session naslab still holds open.
        let seen = sessions(lab.dir());
        assert!(
            !seen.is_empty(),
            "{}: smbstatus shows no session",
            case.label
        );
        for (proto, enc, sign) in &seen {
            assert_eq!(proto, case.protocol, "{}: {seen:?}", case.label);
            assert_eq!(enc, case.encryption, "{}: {seen:?}", case.label);
            if case.signed {
                assert!(sign != "-", "{}: {seen:?}", case.label);
            }
            if let Some(algorithm) = case.algorithm {
                assert_eq!(sign, algorithm, "{}: {seen:?}", case.label);
            }
            if case.label.starts_with("signing mandatory") {
                // Every request signed, not only some.
                assert!(!sign.starts_with("partial"), "{}: {seen:?}", case.label);
            }
            // What run.json records of the session is what the server says it was.
            let s = target.settings();
            let shown = format!("{}: {s:?} / {seen:?}", case.label);
            assert_eq!(s.dialect, samba_dialect(proto), "{shown}");
            assert_eq!(s.encrypted, encrypted, "{shown}");
            assert_eq!(
                s.cipher.as_deref(),
                encrypted.then_some(case.share_cipher),
                "{shown}"
            );
            if !s.encrypted {
                assert_eq!(s.signed, sign != "-", "{shown}");
            }
            if s.signed {
                let algorithm = sign.trim_start_matches("partial(").trim_end_matches(')');
                assert_eq!(s.signing_algorithm.as_deref(), Some(algorithm), "{shown}");
            }
        }
        let shares = share_connections(lab.dir());
        assert!(
            !shares.is_empty(),
            "{}: smbstatus shows no share",
            case.label
        );
        for (enc, _sign) in &shares {
            assert_eq!(enc, case.share_column(), "{}: {shares:?}", case.label);
        }
        eprintln!(
            "{}: {} (smbstatus: sessions {seen:?}, share {shares:?})",
            case.label,
            target.security()
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn encryption_refusals_say_what_happened_without_blaming_the_password() {
    needs_root_and_servers!(ServerKind::Samba);
    // Encryption required by a server that only speaks SMB 2.1: it cannot encrypt.
    let e = refusal(
        &[
            "global: server max protocol = SMB2_10",
            "global: server smb encrypt = required",
        ],
        SmbEncrypt::Desired,
    );
    assert!(e.contains("SMB 3") && !e.contains("password"), "{e}");
    // Encryption required, and the client told not to offer it.
    let e = refusal(&["global: server smb encrypt = required"], SmbEncrypt::Off);
    assert!(
        e.contains("--smb-encrypt off") && !e.contains("password"),
        "{e}"
    );
    // The client requires encryption; the server cannot encrypt.
    let lab = samba(&["global: server smb encrypt = off"]);
    let st = lab.state();
    let e = smb_encrypting(st, SmbEncrypt::Required).expect_err("refused");
    assert!(
        e.contains("did not encrypt") && e.contains("--smb-encrypt required"),
        "{e}"
    );
    // A wrong password is named as such.
    let e = SmbTarget::connect(st.url.parse().unwrap(), "not-it".into())
        .unwrap_err()
        .to_string();
    assert!(e.contains("wrong user name or password"), "{e}");
}

/// `--smb-encrypt required` against a server that allows encryption but does not ask
/// for it: naslab encrypts its requests from the TREE_CONNECT on, as smbclient
/// `--client-protection=encrypt` does, and the server answers encrypted. smbstatus
/// shows the session encrypted with the negotiated cipher ("partial" as for
/// smbclient: the SESSION_SETUP that makes the keys cannot be encrypted).
#[test]
fn encryption_required_by_the_client_is_had_from_a_server_that_only_allows_it() {
    needs_root_and_servers!(ServerKind::Samba);
    let lab = samba(&[]);
    let st = lab.state();
    // Without the requirement, the server leaves the session in the clear.
    let plain = smb_encrypting(st, SmbEncrypt::Desired).expect("signs in");
    assert!(
        plain.security().contains("not encrypted"),
        "{}",
        plain.security()
    );
    drop(plain);
    let target = smb_encrypting(st, SmbEncrypt::Required).expect("signs in encrypted");
    assert_eq!(target.security(), "SMB 3.1.1, encrypted (AES-128-GCM)");
    for w in ["FileCopyToNAS", "PhotoAlbum"] {
        run_workload(w, &target, &st.share_dir, lab.base());
    }
    let seen = sessions(lab.dir());
    assert!(!seen.is_empty(), "smbstatus shows no session");
    for (proto, enc, _sign) in &seen {
        assert_eq!(proto, "SMB3_11", "{seen:?}");
        assert_eq!(enc, "partial(AES-128-GCM)", "{seen:?}");
    }
    eprintln!("{} (smbstatus: sessions {seen:?})", target.security());
}

/// Refusals that once pointed the wrong way, each against a Samba set up that way.
#[test]
fn refusals_name_what_the_server_refused() {
    needs_root_and_servers!(ServerKind::Samba);
    // A share that requires encryption, and a client told not to encrypt.
    let e = refusal(&["smb encrypt = required"], SmbEncrypt::Off);
    assert!(
        e.contains("requires encryption")
            && e.contains("--smb-encrypt off")
            && e.contains("STATUS_ACCESS_DENIED")
            && !e.contains("check the share's name"),
        "{e}"
    );

    // A guest, let in by the server but not by the share (for one user only).
    let lab = samba(&[
        "global: map to guest = Bad User",
        "global: restrict anonymous = 0",
    ]);
    let st = lab.state();
    let guest_url = st.url.replace("naslab-lab@", "");
    assert_ne!(guest_url, st.url);
    let e = SmbTarget::connect(guest_url.parse().unwrap(), String::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("TreeConnect")
            && e.contains("the share admits no guests")
            && e.contains("smb://user@host/share")
            && !e.contains("check the share's name"),
        "{e}"
    );
    drop(lab);

    // NTLM blocked: the status is named, with what to do.
    let e = refusal(&["global: ntlm auth = disabled"], SmbEncrypt::Desired);
    assert!(
        e.contains("NT_STATUS_NTLM_BLOCKED") && e.contains("ntlm auth = ntlmv2-only"),
        "{e}"
    );

    // SMB 2.0.2 at most, encryption desired: Samba asks a client that offered to
    // encrypt for an encrypted share, and hangs up on its first write. naslab refuses
    // before writing, saying --smb-encrypt off signs in, and it does.
    let lab = samba(&[
        "global: server max protocol = SMB2_02",
        "global: server smb encrypt = desired",
    ]);
    let st = lab.state();
    let e = smb_encrypting(st, SmbEncrypt::Desired).expect_err("refused");
    assert!(
        e.contains("asks for encryption")
            && e.contains("SMB 2.0.2, not encrypted")
            && e.contains("--smb-encrypt off signs in"),
        "{e}"
    );
    assert!(
        !st.share_dir.join("naslab").exists(),
        "refused before anything was written"
    );
    let target = smb_encrypting(st, SmbEncrypt::Off).expect("signs in unencrypted");
    assert_eq!(target.security(), "SMB 2.0.2, not encrypted");
    run_workload("FileCopyToNAS", &target, &st.share_dir, lab.base());
}

/// A share that vetoes every name beginning with a dot: naslab marks and locks its
/// directory with the plain names, works there, is recognised by a later run and by
/// clean; where even those are vetoed it refuses, leaving nothing behind.
#[test]
fn a_share_that_vetoes_dot_files_is_worked_on_with_plain_names() {
    needs_root_and_servers!(ServerKind::Samba);
    let lab = samba(&["veto files = /.*/"]);
    let st = lab.state();
    let root = st.share_dir.join("naslab");
    let target = smb_encrypting(st, SmbEncrypt::Desired).expect("works on the share");
    assert!(root.join("naslab-owned").is_file());
    assert!(root.join("naslab-lock").is_dir(), "held");
    run_workload("FileCopyToNAS", &target, &st.share_dir, lab.base());
    let dotted: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(dotted.is_empty(), "{dotted:?}");
    drop(target);
    assert!(!root.join("naslab-lock").exists(), "let go");
    // A later run finds its directory; clean removes all of it.
    let again: Box<dyn naslab_engine::Target> =
        Box::new(smb_encrypting(st, SmbEncrypt::Desired).expect("recognised"));
    assert!(again.remove_all().expect("cleaned"), "it was there before");
    assert!(!root.exists());
    drop(lab);

    // Both marker names vetoed: refused before anything is left on the server.
    let lab = samba(&["veto files = /.*/naslab-owned/"]);
    let st = lab.state();
    let e = smb_encrypting(st, SmbEncrypt::Desired).expect_err("refused");
    assert!(
        e.contains("cannot mark")
            && e.contains("veto files")
            && e.contains("removed the directory again"),
        "{e}"
    );
    assert!(!st.share_dir.join("naslab").exists(), "nothing left behind");
}
