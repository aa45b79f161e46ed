/// Checks that a path from a trace stays inside the workload's directory: relative,
/// `/`-separated, no empty, `.` or `..` component, no NUL. Returns what is wrong.
pub fn check_rel_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("the path is empty".into());
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
            ))
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_rel_path;

    #[test]
    fn accepts_plain_relative_paths() {
        assert!(check_rel_path("a/b/c.doc").is_ok());
        assert!(check_rel_path("video.dvr-ms").is_ok());
    }

    #[test]
    fn rejects_paths_that_could_leave_the_directory() {
        for bad in ["", "/etc/passwd", "a/../../b", "./a", "a//b", "a/", "a\\b"] {
            assert!(check_rel_path(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
