//! Prints the description of every workload (run with `--ignored --nocapture`).

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use naslab_workload::{GenParams, catalog, describe::describe, generate};

#[test]
#[ignore]
fn print_descriptions() {
    let scale: f64 = std::env::var("NASLAB_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1.0);
    let only = std::env::var("NASLAB_ONLY").unwrap_or_default();
    for w in catalog() {
        if !only.is_empty() && !w.name.contains(&only) {
            continue;
        }
        let seed: u64 = std::env::var("NASLAB_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        let t = generate(w.name, &GenParams { seed, scale }).expect("generates");
        println!("{}", describe(&t));
    }
}
