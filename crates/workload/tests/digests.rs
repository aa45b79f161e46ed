//! Generation is deterministic (docs/workloads.md): the same name, seed and scale give the
//! same trace, byte for byte. Each workload's JSON Lines bytes, at a small scale and a fixed
//! seed, are pinned here by their SHA-256, so any change to what a generator produces (a new
//! random draw, a changed constant, a new version of the random-number crates) shows up as a
//! failing test and is made on purpose, with the digests updated in the same change.
//!
//! When a change is meant, the failure message prints the whole table with the new digests.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use naslab_trace::Trace;
use naslab_workload::synthetic::backup::Backup;
use naslab_workload::synthetic::bigdir::{BigDir, Entries};
use naslab_workload::synthetic::fileserver::FileServer;
use naslab_workload::synthetic::ingest::Ingest;
use naslab_workload::synthetic::iozone::{self, Test};
use naslab_workload::{GenParams, catalog, derived, generate, suite};
use sha2::{Digest, Sha256};

/// The seed and scale every generated workload is pinned at.
const PARAMS: GenParams = GenParams {
    seed: 7,
    scale: 0.05,
};

/// The SHA-256 of each workload's trace bytes: the catalog's (at [`PARAMS`]), then the
/// other synthetic generators at fixed small shapes.
const PINNED: &[(&str, &str)] = &[
    (
        "HDVideo_1Play",
        "0e744a59067ed07dfb941168c40994fb5d7240940830ed8f1c9c4c338fad5371",
    ),
    (
        "HDVideo_2Play",
        "30810ec745294d37c9a48ef382a407d5947f40236d4a4f2dda30b20eeaa20d15",
    ),
    (
        "HDVideo_4Play",
        "86342e883933181df030843fa29f9688e66e264e9294cf0e6aa8b4080cbf0533",
    ),
    (
        "HDVideo_1Record",
        "a8258874360a9903673f97183f90319c680dacd47de51d53c8f3b1b014f05cfc",
    ),
    (
        "HDVideo_1Play_1Record",
        "38e7303f10b0d8684a979f0d527b46dafb673b7c2cf1170d97ee7ea5a552daab",
    ),
    (
        "ContentCreation",
        "e1db42af97113cc0f06691c5004b70b219d833dac5646e1d9a76a1049c043f8c",
    ),
    (
        "OfficeProductivity",
        "ea0bd2af2b55d23ff4fbcdf91d470236ac4c887ed1cc28a29f46b82393b20090",
    ),
    (
        "FileCopyToNAS",
        "fa502c282dabfd2650d438feb5fcfab0844c607747ed2974d126e3f9c76e4aa4",
    ),
    (
        "FileCopyFromNAS",
        "270105f659996f8b0c72233f92d2d5bf104fec6920dae96c93b27d64cc631274",
    ),
    (
        "DirectoryCopyToNAS",
        "cface9967db39a705e78c2e99224cf43ccc31e5fc64e1db501ab56b8cf5f2f1f",
    ),
    (
        "DirectoryCopyFromNAS",
        "6b84e9226631fe5aa9ccd849b0dc5d3c66c56fd538a58a57f99114a0f205385a",
    ),
    (
        "PhotoAlbum",
        "a4f9711209cc6a6cdff44a329df5907b0e3819a65dd21b839dbba44b50b6caac",
    ),
    (
        "HDVideo_RecordThenPlay",
        "d8fba541251922efc8db9cd32e7422e695135526e08686b3988b2c4976bee081",
    ),
    (
        "IOMeter_4K_RandRead_QD1",
        "15dd3fbfb5692c90c252049be62d26937b64ba197ae6ce603a602c7e5ddd6865",
    ),
    (
        "IOMeter_4K_RandRead_QD32",
        "ca715b4b645466102082aca154ea91dfb05c0f730b8c72fd683f989e39152e7d",
    ),
    (
        "IOMeter_4K_RandWrite_QD1",
        "0f8c05f27f1aa405caa9aa8021edf15954315cea9281e0980d9dfaea163d7edd",
    ),
    (
        "IOMeter_4K_RandWrite_QD32",
        "c840846e09bf9fcc46e45f5971ef82c79bd39669ce12248ac1e3b6cd279d4cc5",
    ),
    (
        "IOMeter_128K_SeqRead_QD1",
        "e17b742ff8d3bdc27894a38acb20ed7b3a3c45e7449399a074b95422fe242229",
    ),
    (
        "IOMeter_128K_SeqRead_QD32",
        "e977245a7a5bdf3ed0c9094f7f37883033893a90b9e3ecdbc9449e2095fd2b67",
    ),
    (
        "IOMeter_128K_SeqWrite_QD1",
        "bbce032f6a4d159b11716231048884f28c6e5b31974d516aa3cb29cc21bdf2f6",
    ),
    (
        "IOMeter_128K_SeqWrite_QD32",
        "e5de7d0639853d2cca7ae63e5b72213d6f696cd899ac6cb6294fcd86a5df1cb7",
    ),
    (
        "iozone_write_256k_16k",
        "0428ccbe96a57908ed83817f9bbf94a61f58ae1e57fe87b3934df7132c5b5d3c",
    ),
    (
        "iozone_rewrite_256k_16k",
        "5cb3abfbdb2c3be33b1d3afc111bc7630d4b355cbeda5fc22515d9bc043101a4",
    ),
    (
        "iozone_read_256k_16k",
        "03dd1bdf20e144da3cfd0b1df6dafdb66c52d9dd24bfbb79c78ce43a79f71e67",
    ),
    (
        "iozone_reread_256k_16k",
        "85aec6d5e4e44d099c3bf046fc465a4d53d31c7f315189e2488744f5273c2b74",
    ),
    (
        "iozone_randread_256k_16k",
        "91ae9b834ce659f34172136d8a10f808c340014c285f093ef2d8c88b91fb16da",
    ),
    (
        "iozone_randwrite_256k_16k",
        "921e45d39ccd9d1ff26620ac8fa8419d10916d90e779d7708d267b4f0c0f3a62",
    ),
    (
        "iozone_bkwdread_256k_16k",
        "0fe3b8c7e0fe3f41aae1d4866b35f72a63f5e4f103499bab3deb28e3894117e7",
    ),
    (
        "iozone_recrewrite_256k_16k",
        "afe8701065d646cd8cea30bf3a4215ad0d75c05a451e8a24590e695e5ed4e152",
    ),
    (
        "iozone_strideread_256k_16k",
        "a2a72c7d78c9a919be2c87a13e29e5fcadb8788cfed509fb064d6f46c2360f2c",
    ),
    (
        "iozone_mixed_256k_16k",
        "e596453ebb97fad4346ea02b24bc8f4ec2b258ea809766efeb0860521c9e88dd",
    ),
    (
        "iozone_throughput_mixed",
        "1ca4fe17cc732fcb383017f74908e4f250b1f96083853fc5a0e7c1ec7162910a",
    ),
    (
        "Backup",
        "3b0fa68d35a7658b4e03a5390a39b21451968ffe936033537d6d5c5e8980290a",
    ),
    (
        "BigDir_Dirs",
        "a7ed394b44f49a973394ea62a6836d9e96047c1e79e111eea9aaceedd1c359ac",
    ),
    (
        "BigDir_Files",
        "ebc26f9b98bd04b3dd2d6a301c93c15ac37704feaea391d09523bfadf06aa4e9",
    ),
    (
        "FileServer_write",
        "aaf8a82535a40f716bbabebab153b6275e40cbc9dc80cc9e931148209d6cb30c",
    ),
    (
        "FileServer_read",
        "3575005d145af61c17a3cffaf0b306da02164683be8a154c0b6957b7642de25f",
    ),
    (
        "Ingest_10PerDir",
        "20deba6b2e6ece37221b16b27695b8f2f959af05756e4ad590144f249ffb950e",
    ),
];

/// Every workload the crate generates, by name, with its trace.
fn every_trace() -> Vec<(String, Trace)> {
    let mut out = Vec::new();
    let names = catalog()
        .iter()
        .chain(derived())
        .map(|w| w.name)
        .chain(suite("iometer").expect("iometer suite"));
    for name in names {
        let trace = generate(name, &PARAMS).expect("generates");
        out.push((name.to_string(), trace));
    }
    for test in Test::ALL {
        let trace = iozone::cell(test, 256 << 10, 16 << 10, PARAMS.seed);
        out.push((iozone::cell_name(test, 256 << 10, 16 << 10), trace));
    }
    let throughput = iozone::throughput(
        Test::Mixed,
        3,
        128 << 10,
        8 << 10,
        PARAMS.seed,
        "iozone_throughput_mixed".into(),
    );
    out.push(("iozone_throughput_mixed".into(), throughput));
    let backup = Backup {
        writers: 4,
        files_per_writer: 3,
        file_size: 40 << 10,
        write_record: 4096,
        read_block: 16 << 10,
    };
    out.push(("Backup".into(), backup.generate()));
    for kind in [Entries::Dirs, Entries::Files] {
        let big = BigDir {
            entries: 50,
            every: 10,
            kind,
        };
        out.push((big.name().into(), big.generate()));
    }
    let server = FileServer {
        connections: 3,
        first_connection: 0,
        files_per_connection: 4,
        record: 4096,
    };
    out.push(("FileServer_write".into(), server.write_phase()));
    out.push(("FileServer_read".into(), server.read_phase()));
    let ingest = Ingest {
        block_size: 8192,
        blocks_per_file: 3,
        total_files: 25,
        files_per_dir: 10,
    };
    out.push((ingest.name(), ingest.generate()));
    out
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn every_workload_generates_its_pinned_bytes() {
    let traces = every_trace();
    let got: Vec<(String, String)> = traces
        .iter()
        .map(|(name, trace)| (name.clone(), sha256_hex(&trace.to_bytes())))
        .collect();

    let table: String = got
        .iter()
        .map(|(name, digest)| format!("    (\"{name}\", \"{digest}\"),\n"))
        .collect();
    let mut wrong = Vec::new();
    for (name, digest) in &got {
        match PINNED.iter().find(|(n, _)| n == name) {
            Some((_, want)) if want == digest => {}
            Some((_, want)) => wrong.push(format!("{name}: pinned {want}, generated {digest}")),
            None => wrong.push(format!("{name}: not pinned")),
        }
    }
    for (name, _) in PINNED {
        if !got.iter().any(|(n, _)| n == name) {
            wrong.push(format!("{name}: pinned but no longer generated"));
        }
    }
    assert!(
        wrong.is_empty(),
        "trace bytes changed:\n  {}\nIf the change is meant, the table is now:\n{table}",
        wrong.join("\n  ")
    );
}

#[test]
fn every_catalog_workload_is_pinned() {
    // The table above must not silently miss a workload added to the catalog later.
    for w in catalog().iter().chain(derived()) {
        assert!(
            PINNED.iter().any(|(n, _)| *n == w.name),
            "{} has no pinned digest",
            w.name
        );
    }
}

#[test]
fn generating_twice_gives_the_same_bytes_and_seeds_differ() {
    for (name, trace) in every_trace().into_iter().take(catalog().len()) {
        let again = generate(&name, &PARAMS).expect("generates");
        assert_eq!(
            trace.to_bytes(),
            again.to_bytes(),
            "{name} is not repeatable"
        );
        let other = generate(
            &name,
            &GenParams {
                seed: PARAMS.seed + 1,
                ..PARAMS
            },
        )
        .expect("generates");
        // Timestamps and generator line carry the seed; every catalog workload draws
        // something at random, so another seed must give other bytes.
        assert_ne!(
            trace.to_bytes(),
            other.to_bytes(),
            "{name} ignores its seed"
        );
    }
}
