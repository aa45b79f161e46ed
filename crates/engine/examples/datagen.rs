//! Times the data generator: how many GB/s one core makes of each data mode, whole 4 KiB
//! blocks into a 1 MiB buffer (as preparation and large writes fill them).
//!
//! usage: cargo run --release -p naslab-engine --example datagen [MiB per mode]

use std::time::Instant;

use naslab_engine::data::{BLOCK, DataMode, DataSpec, fill};

fn main() {
    let mib: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(4096);
    let mut buf = vec![0u8; 1 << 20];
    let mut scratch = vec![0u8; BLOCK];
    let modes = [
        ("random", DataMode::Random, false),
        ("random --verify", DataMode::Random, true),
        ("compress:50", DataMode::Compress(50), false),
        ("dedupe:50", DataMode::Dedupe(50), false),
    ];
    for (name, mode, verify) in modes {
        let spec = DataSpec {
            mode,
            seed: 0x1234_5678,
            verify,
        };
        let start = Instant::now();
        let mut sink = 0u8;
        for i in 0..mib {
            fill(&spec, 1, i << 20, i + 1, &mut buf, &mut scratch);
            sink ^= buf[(i as usize * 7919) % buf.len()];
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{name:<16} {:>7.2} GB/s  ({mib} MiB in {secs:.3} s, check byte {sink})",
            (mib << 20) as f64 / secs / 1e9
        );
    }
    // For scale: copying memory, the least any filled buffer costs.
    let src = vec![1u8; 1 << 20];
    let start = Instant::now();
    for _ in 0..mib {
        buf.copy_from_slice(std::hint::black_box(&src));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{:<16} {:>7.2} GB/s",
        "memcpy",
        (mib << 20) as f64 / secs / 1e9
    );
}
