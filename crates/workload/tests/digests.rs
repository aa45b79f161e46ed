//! Generation is deterministic (docs/workloads.md): the same name, seed and scale give the
//! same trace, byte for byte. Each workload's JSON Lines bytes, at a small scale and a fixed
//! seed, are pinned here by their SHA-256, so any change to what a generator produces (a new
//! random draw, a changed constant, a new version of the random-number crates) shows up as a
//! failing test and is made on purpose, with the digests updated in the same change.
//!
//! When a change is meant, the failure message prints the whole table with the new digests.

use naslab_trace::Trace;
use naslab_workload::synthetic::backup::Backup;
use naslab_workload::synthetic::bigdir::{BigDir, Entries};
use naslab_workload::synthetic::fileserver::FileServer;
use naslab_workload::synthetic::ingest::Ingest;
use naslab_workload::synthetic::iozone::{self, Test};
use naslab_workload::{catalog, generate, suite, GenParams};
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
        "9bca8bcb2a0392e744744fc12fbb97bbc1937d49b7156b6e4f3d165ce95bb49c",
    ),
    (
        "HDVideo_2Play",
        "eb52e6ff46ec533fba01d77c4a4308a1d026eabb0646dc8c7ca53da3c0f6e70a",
    ),
    (
        "HDVideo_4Play",
        "3d94b569e53095456f7f1ee6735631b3cff88eec24109e4fb762667dec5cbd53",
    ),
    (
        "HDVideo_1Record",
        "c1d00de1f2240485e820ad4213fec9f915e9c81a19ffdce264c57454ec9712a4",
    ),
    (
        "HDVideo_1Play_1Record",
        "c4a9c2a89bfd50433c661115298958e4522f67ab434f8611b09a7fb446300618",
    ),
    (
        "ContentCreation",
        "a4f50f9cb357fe836990bc75e0a2aa861629ffe89e75b8e07360e299d59e7333",
    ),
    (
        "OfficeProductivity",
        "d420e28b969870391bcf80c6459f8abb59ffa3f8c42e6de9d4c5508e7406cbf7",
    ),
    (
        "FileCopyToNAS",
        "3bd078ac2bbd25853caebbb7490c498e6ee46111d6efd051552f91cc3e34f8f3",
    ),
    (
        "FileCopyFromNAS",
        "66f0aae82f661178acb0de6de785d3c566a84003576fb6413a14a81df1cec8e1",
    ),
    (
        "DirectoryCopyToNAS",
        "72530f70d4226f0e9d48c3a31ffd61e221dd381c270267a25d55137390532aaf",
    ),
    (
        "DirectoryCopyFromNAS",
        "cc62beab04eb1ddd14a98599e6813bd63893055c448a60d1961d38595d7df8fa",
    ),
    (
        "PhotoAlbum",
        "1c2b8ac2652c5b8f0b628c69a59987ad428bbe69fd82fd94b651c812e0f6505f",
    ),
    (
        "IOMeter_4K_RandRead_QD1",
        "2aa94181a75e7cd85361ff5b911f2961c43d9795e6f0d8a0735af3963d773509",
    ),
    (
        "IOMeter_4K_RandRead_QD32",
        "73205e1fcfa97327af3b461b2b4041d0a07c797f11a7e3dd132135446128335b",
    ),
    (
        "IOMeter_4K_RandWrite_QD1",
        "f8f443b9b70cec7823be8891e076031bc0220e8fda78c6649ff5ca9fbd2b8f15",
    ),
    (
        "IOMeter_4K_RandWrite_QD32",
        "d44b23cd6e61871192dc5f7f665add068aa1d3c2f9a01196174e3f98b4257861",
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
        "2830c335f5fc72b0afd87ccd7a80c66bfdf5fe499d668871847974e4bb7d10f2",
    ),
    (
        "iozone_randwrite_256k_16k",
        "d7cbc4af0ddde7e09e470b09594cc6c318fe55d778811c166118bad4836d8819",
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
        "cf958f3045c1d82967fa3ebb5b150ad4e1a18cc6670bd89128d7cb34d3839b21",
    ),
    (
        "iozone_throughput_mixed",
        "7d71664d7af023d16bc92a1a039ecf23946cb6e643544d5ac7c32ff6e453b86b",
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
    for w in catalog() {
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
