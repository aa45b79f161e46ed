//! The hard links a posix target made itself during a run.
//!
//! A file with more than one name may also be a file outside the workload directory,
//! so the posix target refuses to open one, unless naslab gave it its other names
//! itself (a trace's `link` op). This remembers those files, shared by every stream
//! of the run, with how many names naslab gave each: a file is accepted while its
//! link count is no more than that, so a name added from outside is still refused.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::beneath::EntryStat;

/// The files (device, inode) naslab linked in this run, with the names it gave each.
#[derive(Debug, Clone, Default)]
pub struct OwnLinks {
    made: Arc<Mutex<HashMap<(u64, u64), u64>>>,
}

impl OwnLinks {
    /// Whether a file whose status is `st` may be opened: it has one name, or no more
    /// names than the one it was created with and those naslab gave it.
    pub fn allows(&self, st: &EntryStat) -> bool {
        if st.nlink <= 1 {
            return true;
        }
        self.made()
            .get(&(st.dev, st.ino))
            .is_some_and(|&n| st.nlink <= n.saturating_add(1))
    }

    /// Forgets every file: the workload directory was emptied, so their inode numbers
    /// may now be another file's.
    pub fn forget_all(&self) {
        self.made().clear();
    }

    /// Notes that naslab gave the file whose status is `st` one more name.
    pub fn record(&self, st: &EntryStat) {
        *self.made().entry((st.dev, st.ino)).or_insert(0) += 1;
    }

    /// The files and their names, whatever a stream that panicked holding them left
    /// (each change is a single insert or clear, so they are whole).
    fn made(&self) -> MutexGuard<'_, HashMap<(u64, u64), u64>> {
        self.made
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::OwnLinks;
    use crate::beneath::EntryStat;

    fn file(ino: u64, nlink: u64) -> EntryStat {
        EntryStat {
            kind: libc::S_IFREG,
            dev: 7,
            ino,
            nlink,
            mnt_id: None,
            mount_root: false,
        }
    }

    #[test]
    fn only_the_names_naslab_gave_a_file_are_accepted() {
        let own = OwnLinks::default();
        assert!(own.allows(&file(1, 1)));
        assert!(
            !own.allows(&file(1, 2)),
            "a linked file naslab did not link"
        );
        own.record(&file(1, 2));
        assert!(own.allows(&file(1, 2)));
        assert!(!own.allows(&file(1, 3)), "a third name given from outside");
        assert!(!own.allows(&file(2, 2)), "another file");
        // A clone is the same run's memory (each stream holds one).
        let other_stream = own.clone();
        other_stream.record(&file(1, 3));
        assert!(own.allows(&file(1, 3)));
        // An emptied workload directory: its inode numbers are free for any file.
        own.forget_all();
        assert!(!own.allows(&file(1, 2)));
        assert!(own.allows(&file(1, 1)));
    }
}
