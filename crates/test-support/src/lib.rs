//! What a test that needs root or an installed tool does when it cannot run: it says
//! it was skipped, unless `NASLAB_REQUIRE_ROOT=1` (set by CI) asks for everything to
//! run, in which case it fails and says what is missing. A dev-dependency of every
//! crate whose tests need root, a tool or a server: the policy is written once.

use std::path::PathBuf;

use naslab_host::process::{find_tool, is_root};

/// The variable that turns a skipped test into a failed one.
pub const REQUIRE_VAR: &str = "NASLAB_REQUIRE_ROOT";

/// Whether `NASLAB_REQUIRE_ROOT=1` is set.
pub fn required() -> bool {
    std::env::var(REQUIRE_VAR).as_deref() == Ok("1")
}

/// A test cannot run because of `why`: a note under a plain `cargo test`, a panic (so the
/// test fails) under `NASLAB_REQUIRE_ROOT=1`.
pub fn cannot_run(why: &str) {
    match verdict(required(), why) {
        Ok(note) => eprintln!("{note}"),
        Err(failure) => panic!("{failure}"),
    }
}

/// The note for a skipped test, or the failure when running is `required`.
fn verdict(required: bool, why: &str) -> Result<String, String> {
    if required {
        Err(format!(
            "this test cannot run: {why}; {REQUIRE_VAR}=1 makes that a failure (run as root, with scripts/test.sh's tools installed)"
        ))
    } else {
        Ok(format!("skipped: {why}"))
    }
}

/// Whether the test runs as root; if not, says so through [`cannot_run`].
pub fn root_or_skip(needs: &str) -> bool {
    if is_root() {
        return true;
    }
    cannot_run(&format!("{needs} needs root (CI runs the tests as root)"));
    false
}

/// The tool's path; if it is missing, says so through [`cannot_run`].
pub fn tool_or_skip(tool: &str) -> Option<PathBuf> {
    let found = find_tool(tool);
    if found.is_none() {
        cannot_run(&format!(
            "{tool} is not installed (scripts/test.sh installs it as root)"
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_that_cannot_run_fails_only_when_required() {
        assert_eq!(
            verdict(false, "x is missing"),
            Ok("skipped: x is missing".into())
        );
        let failure = verdict(true, "x is missing").unwrap_err();
        assert!(failure.contains("cannot run: x is missing"), "{failure}");
        assert!(failure.contains("NASLAB_REQUIRE_ROOT=1"), "{failure}");
    }
}
