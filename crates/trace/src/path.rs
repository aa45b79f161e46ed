/// The longest path a trace may give, in bytes: Linux's `PATH_MAX` (4096) less its
/// terminating NUL. Every parent directory of a path becomes an entry of the file set,
/// so this also bounds what one line can cost: a path of `n` bytes has at most `n / 2`
/// parents, each shorter than it.
pub const MAX_PATH_BYTES: usize = 4095;

/// Checks that a path from a trace stays inside the workload's directory and can be
/// opened: relative, `/`-separated, no empty, `.` or `..` component, no NUL, at most
/// [`MAX_PATH_BYTES`] long. Returns what is wrong.
pub fn check_rel_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("the path is empty".into());
    }
    // First, before the path is quoted or split: a longer one cannot be opened anyway,
    // and every parent directory of a deep path is an entry of the file set.
    if path.len() > MAX_PATH_BYTES {
        return Err(format!(
            "a path of {} bytes (starting '{}...') is longer than the {MAX_PATH_BYTES} bytes naslab accepts (the kernel's PATH_MAX); shorten it",
            path.len(),
            path.char_indices()
                .nth(40)
                .map_or(path, |(i, _)| &path[..i])
        ));
    }
    if path.starts_with('/') {
        return Err(format!(
            "path '{path}' is absolute; trace paths are relative to the workload directory"
        ));
    }
    if path.contains('\0') || path.contains('\\') {
        return Err(format!(
            "path '{path}' contains a NUL or a backslash; use '/' between components"
        ));
    }
    for part in path.split('/') {
        match part {
            "" => return Err(format!("path '{path}' has an empty component")),
            "." | ".." => {
                return Err(format!(
                    "path '{path}' has a '{part}' component; trace paths may not leave their directory"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{MAX_PATH_BYTES, check_rel_path};

    #[test]
    fn accepts_plain_relative_paths() {
        assert!(check_rel_path("a/b/c.doc").is_ok());
        assert!(check_rel_path("video.dvr-ms").is_ok());
    }

    #[test]
    fn refuses_a_path_longer_than_path_max_and_names_its_length() {
        let longest = "a/".repeat(MAX_PATH_BYTES / 2) + "b";
        assert_eq!(longest.len(), MAX_PATH_BYTES);
        assert!(check_rel_path(&longest).is_ok());
        let deep = "a/".repeat(500_000) + "b";
        let err = check_rel_path(&deep).unwrap_err();
        assert!(err.contains("a path of 1000001 bytes"), "{err}");
        assert!(err.len() < 300, "the message quotes the whole path: {err}");
        // Cut at a character boundary.
        assert!(check_rel_path(&"é".repeat(3000)).is_err());
    }

    #[test]
    fn rejects_paths_that_could_leave_the_directory() {
        for bad in ["", "/etc/passwd", "a/../../b", "./a", "a//b", "a/", "a\\b"] {
            assert!(check_rel_path(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
