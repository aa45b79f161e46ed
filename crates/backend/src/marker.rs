//! The names that mark a directory as naslab's on any target, and how the other
//! clients of a multi-client job wait for the first to hold it.

/// The name of naslab's directory under a target.
pub const ROOT_NAME: &str = "naslab";
/// The file that marks the directory as naslab's.
pub const MARKER_NAME: &str = ".naslab-owned";

/// How long a multi-client job's other clients wait for its first client to hold the
/// shared file set's directory (`--shared-files`) before they give up.
pub const JOIN_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Runs `join` until it stops failing with "not held yet" (`not_held`), for at most
/// [`JOIN_WAIT`]: the first client may still be opening the target.
pub fn wait_for_holder<T, E>(
    mut join: impl FnMut() -> Result<T, E>,
    not_held: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let deadline = std::time::Instant::now() + JOIN_WAIT;
    loop {
        match join() {
            Err(e) if not_held(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            other => return other,
        }
    }
}
