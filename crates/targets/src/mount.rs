//! Which mount holds a local target, for the results' description of it.

use std::path::Path;

use naslab_host::Mounts;

/// The file-system type and source of the mount that holds `path`, from
/// /proc/self/mountinfo (the longest mount point that is a prefix of the path); empty
/// when either cannot be read.
pub fn mount_of(path: &Path) -> (String, String) {
    let Ok(abs) = std::fs::canonicalize(path) else {
        return (String::new(), String::new());
    };
    Mounts::read()
        .holding(&abs)
        .map(|m| (m.fs_type.clone(), m.source.clone()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_root_file_system() {
        let (fs, _) = mount_of(Path::new("/"));
        assert!(!fs.is_empty());
        let (proc_fs, _) = mount_of(Path::new("/proc/self"));
        assert_eq!(proc_fs, "proc");
    }
}
