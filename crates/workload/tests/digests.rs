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
use naslab_workload::{catalog, derived, generate, suite, GenParams};
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
        "61f1f23a9ac08fe2dbf7100dbaf49eb2211339d99d5830c4ce127a34cb58b54d",
    ),
    (
        "HDVideo_2Play",
        "950273c7255cab47fbc6861fea33c285c055af97e9e4e886e05c7adf6be3ee25",
    ),
    (
        "HDVideo_4Play",
        "a5eb27d525c371dd0f03e612de3dcc1588419f39df6a1c83791b8ef6b6352f19",
    ),
    (
        "HDVideo_1Record",
        "fdac165a6dd9c83eb2b507ad96e0935e8dd2dd7b663a6b81a401b72e1b21c01f",
    ),
    (
        "HDVideo_1Play_1Record",
        "853f85e3b14fb79650e574fd4b931320134c7ba3197b370efab4ee016e0386f9",
    ),
    (
        "ContentCreation",
        "2e0c83397259dffc86d3bafbf59a9c06336aacfcc10b3f2cc77d64b1b4377b9b",
    ),
    (
        "OfficeProductivity",
        "b8952fe60ce5ba747e34266a62d3023d61d7c54c6c041c6af9a6cbb4efe4ceb8",
    ),
    (
        "FileCopyToNAS",
        "46e701a6a2f4a6b8cd11dcdb7cf18add13defa10a0352b912a542f81c89027a9",
    ),
    (
        "FileCopyFromNAS",
        "89f80b9c322cdb5fd6fce7c808bc0812fac38a44369f9e3077a87d0c91ef8abc",
    ),
    (
        "DirectoryCopyToNAS",
        "f913a9c7285c288d5cd23c62647805a445b6290f5c2788e3a3711dbc064b36c9",
    ),
    (
        "DirectoryCopyFromNAS",
        "cb55ad2e5245407a843a9cf1731a9d82c694627f2bc5168edfc71bce9399993f",
    ),
    (
        "PhotoAlbum",
        "1ce8415afd942efb24db8f1efdec56d48a686089532ccbc2095cb88952eca913",
    ),
    (
        "HDVideo_RecordThenPlay",
        "bf1b5ccbdb49992dae95cc50bdcd66e5b966772bc2e2a47e0863d731b0837a98",
    ),
    (
        "IOMeter_4K_RandRead_QD1",
        "57aafbe7f9285bf5460165e9c2bb75a8e3ef6436a160c8cc4cf912df1eea8ab1",
    ),
    (
        "IOMeter_4K_RandRead_QD32",
        "9baa3197065edd3befa92a58496354a9edbb5c3b8c28fefbf7a1ab7f0b0601dd",
    ),
    (
        "IOMeter_4K_RandWrite_QD1",
        "4c664bb055084f7352d3ecd16d927997884075897a217f8065cb2a34bfbd74af",
    ),
    (
        "IOMeter_4K_RandWrite_QD32",
        "4e85cb67edeb117c12a539656d2e776b0f03455ec2d4af05b6ffe103c248f12d",
    ),
    (
        "IOMeter_128K_SeqRead_QD1",
        "7fa63537d2b73d7995cd2f632f5d41205b5d6ef33e90c58a46c8b35ba46005ec",
    ),
    (
        "IOMeter_128K_SeqRead_QD32",
        "b124f6d8d321c3e35b139750264d0e3d4c9c3620390e16be181b3f11ab590eb3",
    ),
    (
        "IOMeter_128K_SeqWrite_QD1",
        "c0c86552083b93a65bf0410a683cb30a58a07bc5a0b462cc95288e619728812e",
    ),
    (
        "IOMeter_128K_SeqWrite_QD32",
        "f376ea2cde01c1dd70c5e4cb4273c9bd7958f21809222b0dea613b18a74344d9",
    ),
    (
        "iozone_write_256k_16k",
        "e60b7e9b9fb1f17d85fe08fcdd3922a1ab1be70f9e33c06177d147bb7f0e3393",
    ),
    (
        "iozone_rewrite_256k_16k",
        "25535a769e9f80f90a0f59279211a601f83f5a8085acaa633040a473eb32e39a",
    ),
    (
        "iozone_read_256k_16k",
        "b0af0aa02c992dbc559cb572cb4eb3042f868d40311fa3b9428dd3dc05c73ca4",
    ),
    (
        "iozone_reread_256k_16k",
        "2add2d7548ddf75d7b459a5b88090c0a1f10959f2759d69d29234bba01efdaa9",
    ),
    (
        "iozone_randread_256k_16k",
        "96de3c6f9bf2a73a6b4891f818f4c8284976ae72bf8016ae2cb5b508e29a36c5",
    ),
    (
        "iozone_randwrite_256k_16k",
        "929464cfd7cbd027a7a676b2e71b9cc6577c2822f2357bd4feababdee2315164",
    ),
    (
        "iozone_bkwdread_256k_16k",
        "8a5124807c2db3b529d1755461d4a474e3f5690efc245e4eda7568561b553646",
    ),
    (
        "iozone_recrewrite_256k_16k",
        "c82991a73a85d81d418968bdc2ef35f686fdec1597363559408a1d0f8b0bfb11",
    ),
    (
        "iozone_strideread_256k_16k",
        "1394f6093a752e405a612f3504e2b4c9c9010f3c2edbd1b99f5f0bf1bd25c948",
    ),
    (
        "iozone_mixed_256k_16k",
        "008ae48e6b642037e31bdf53c607b0b164ab62cf8201966bb6a29bcff32a54fd",
    ),
    (
        "iozone_throughput_mixed",
        "8ae02d7bbf52ce915e7e04386e37833e0d38631aa93a5621a1ed2571693b6dc1",
    ),
    (
        "Backup",
        "518294c65ee43210d06d2975e9abf18c5ee31c1ef2438d4b3782697ee9306e82",
    ),
    (
        "BigDir_Dirs",
        "b296624b30238ee28307cd836dff6622ca6da39e8ed464ab019c8952c3b7161c",
    ),
    (
        "BigDir_Files",
        "c78313c29ab68b7c3492712b0a70480033f8ece087dc69e844689b5ffbe39438",
    ),
    (
        "FileServer_write",
        "7d034013b88e867695436f509e68f9f9fb30f9163011169cfad6780bbe9576eb",
    ),
    (
        "FileServer_read",
        "952e359b982afbac16f503c7372c24ed324e6384dd4cd4b5fb049d8f3521c921",
    ),
    (
        "Ingest_10PerDir",
        "1e01396b03c5284192cdb67febbe1ef4de7c51be55e27b9e1d200154b0a627d5",
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
