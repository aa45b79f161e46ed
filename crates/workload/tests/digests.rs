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
        "21554ebd9b80c4c40f13251fb6561e9d04602fc2624e88f1d7e01d3bcd03bef0",
    ),
    (
        "HDVideo_2Play",
        "b1272c6f3d49494867c1c552608d442a150b0754d39bad7b6e7fc27a527c9d9a",
    ),
    (
        "HDVideo_4Play",
        "837a8a742c0728a2ca35813e45a1c7ed1c671e0499ee0f573d35a82e5d9f2e69",
    ),
    (
        "HDVideo_1Record",
        "0898dcc6f541ba12693917c7ad7bc4258cbde041a7af7b21d729ebc86bcecf57",
    ),
    (
        "HDVideo_1Play_1Record",
        "d63a37109fcfcd24e50e844579b9e8a117f3fc1138a70d89b3d29bd06321fdd4",
    ),
    (
        "ContentCreation",
        "8965ab34446d1711b19c6bf27453b50f1808030ed76dd8a25ff337be316b6652",
    ),
    (
        "OfficeProductivity",
        "6bb049a86be2fce0563308e7ec3844bc9ec506fb56a33a171b05f7365271ef1e",
    ),
    (
        "FileCopyToNAS",
        "7e725e9684b9a55b1722b299d1fbe5f80d8c74faa9a480d31d6f08e4a15269c0",
    ),
    (
        "FileCopyFromNAS",
        "3cdb012a06f9220f2d1402d31ae7e097c81dd26e43203aaab1c51e670414aaef",
    ),
    (
        "DirectoryCopyToNAS",
        "5afbb229d2b13d2bdae2a58b1c3ad1bb31076daadb226b3d5f6e314e84fc9c7d",
    ),
    (
        "DirectoryCopyFromNAS",
        "a2779c9105b9d3f2e5ea012aae3f5810e89fbb4356a2fbf342545d815320dd49",
    ),
    (
        "PhotoAlbum",
        "61092bcb2cfd5216f518d70a58a793f91fa81d6e02f39fa13297ff7fab079493",
    ),
    (
        "HDVideo_RecordThenPlay",
        "0354b59e61e4082fe8f52fb54ceebc0f602ab667a8707fd3ac85bf8c87a9858a",
    ),
    (
        "IOMeter_4K_RandRead_QD1",
        "460ed82f027814d3663062bc22fa252353fc4527b460e9fddbfc8a48aa2944ee",
    ),
    (
        "IOMeter_4K_RandRead_QD32",
        "c741e6dd8719d781fee487a8fc508ccab87d78e2d67d2daefcbd3e37ef7d3e77",
    ),
    (
        "IOMeter_4K_RandWrite_QD1",
        "4960a7157fb853eef0b4b84d109edaeee0125d41171ace537ad900f3ef8067c5",
    ),
    (
        "IOMeter_4K_RandWrite_QD32",
        "d3a9f2d3ad06891d856408729d1ea1910f72b9ade8b709548184734e1f29a72b",
    ),
    (
        "IOMeter_128K_SeqRead_QD1",
        "9791be28d139aa59b2323a97bb49545d15e848cb8ef42e436018b78d46d02080",
    ),
    (
        "IOMeter_128K_SeqRead_QD32",
        "c5745b74860e4e0be01a29c71e3446bcfc5f5433f164778666bca42da00b9aa6",
    ),
    (
        "IOMeter_128K_SeqWrite_QD1",
        "fa75ec6fdd7e69b00145a0acfa40093f2677b418da8983cee7269e9b724bfa30",
    ),
    (
        "IOMeter_128K_SeqWrite_QD32",
        "ebd1408d018db12f23864fb87adfe7c03225fa077fc8c6e64d34dc8e8acba224",
    ),
    (
        "iozone_write_256k_16k",
        "bce80b682efc6c408def263500364c3c09c4a0f6710d39a99b73cf585f157297",
    ),
    (
        "iozone_rewrite_256k_16k",
        "c42e982a8b8474df6c56295333a380b72aced46dbe352d4584cb8b7e0c0ea81c",
    ),
    (
        "iozone_read_256k_16k",
        "cae899327c6a2cb2f293464c0d3938ae876ce4354919293942e2b4f18881bb7e",
    ),
    (
        "iozone_reread_256k_16k",
        "67042ceab8640ef9ccd7d71562de3b0a5bb63f56ee523458b6a15b77fc742b45",
    ),
    (
        "iozone_randread_256k_16k",
        "a25601bebb12d0d9bfe5c7f50c6febc71208af6bd58f934fd727b3eacc95fce0",
    ),
    (
        "iozone_randwrite_256k_16k",
        "da69eea27be67ae39bf4264a0f4656de7a403776f6b38b0e3863c5c3029b7c34",
    ),
    (
        "iozone_bkwdread_256k_16k",
        "194c83eda9ee4a2439ab63df02ce37254d2026ea0532a98e791e199d1d1fa544",
    ),
    (
        "iozone_recrewrite_256k_16k",
        "8136be14073c4870061e967b37e1717dcf5a5988713cbc6a08c3d4fea406c3de",
    ),
    (
        "iozone_strideread_256k_16k",
        "35d58ed8debd798377ce3b8201c701470ec6e7a97dde3cfdfaed156aa3602351",
    ),
    (
        "iozone_mixed_256k_16k",
        "967c8580c8c782baf349f33a6e7785bac4afdcc931aa5f46a70666fc5d808bda",
    ),
    (
        "iozone_throughput_mixed",
        "0c54bde563f1f788a441a36b45e8ff07302b895fda274d908f9a279eda7f2ab7",
    ),
    (
        "Backup",
        "c927cb6b04478a1f27ced98a7daeddf4702d47c86354c83661ceee609ca14c88",
    ),
    (
        "BigDir_Dirs",
        "e925d898768779136c5e352e0138f119fe1602c1cee462ba397d5b4844751e4f",
    ),
    (
        "BigDir_Files",
        "9df8c78cc8636398981039c4e44768a6d9a415ee5963514556cf7aa84551a79e",
    ),
    (
        "FileServer_write",
        "6383eeaf0f8bf7ee5edc76aa141e922d29c77be67fc8ba376ca0a5fc33486cfd",
    ),
    (
        "FileServer_read",
        "393a83edab17c5b780b4fcd771ebd71af0e3b983b28255a3bb744d6881597b8e",
    ),
    (
        "Ingest_10PerDir",
        "15b94f754d66e6ec81f6549c3379d588ca61b349cad1387b7c4c5d2d9c3bfd08",
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
