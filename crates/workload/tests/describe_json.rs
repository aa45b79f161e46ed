//! The description serializes to JSON for the CLI and reads as text for people.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use naslab_workload::describe::describe;
use naslab_workload::{GenParams, generate};

#[test]
fn description_serializes_with_its_figures() {
    let t = generate(
        "ContentCreation",
        &GenParams {
            seed: 1,
            scale: 0.05,
        },
    )
    .expect("generates");
    let d = describe(&t);
    let v = serde_json::to_value(&d).expect("serializes");
    assert_eq!(v["workload"], "ContentCreation");
    assert_eq!(v["files_declared"], 98);
    assert!(v["sequential_pct"].as_f64().is_some());
    assert_eq!(v["read_sizes"].as_array().map(Vec::len), Some(13));
    assert_eq!(v["read_sizes"][0]["label"], "<=512");
    assert!(v["read_sizes"][12]["max_bytes"].is_null());
    assert!(
        v["op_counts"]
            .as_array()
            .is_some_and(|a| a.iter().any(|c| c["op"] == "create"))
    );
    let text = d.to_string();
    for key in [
        "workload",
        "files",
        "ops",
        "reads",
        "writes",
        "sequential",
        "sizes",
        "busiest files",
    ] {
        assert!(text.contains(key), "{key} missing from:\n{text}");
    }
}
