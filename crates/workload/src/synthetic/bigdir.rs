//! The big-directory test of the administrator's diary (seed 003): make N entries in one
//! directory, listing it every K entries, to see how create and enumeration times grow.

use naslab_trace::{FileKind, OpFlags, OpKind, Trace};

use super::Multi;

/// What the directory fills with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entries {
    /// Subdirectories (mkdir), as the diary's tool made.
    Dirs,
    /// Empty files (create and close).
    Files,
}

/// The test's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BigDir {
    /// How many entries to make.
    pub entries: u32,
    /// List the directory after every this many entries (the tool's stepping factor).
    pub every: u32,
    /// Subdirectories or files.
    pub kind: Entries,
}

impl BigDir {
    /// The workload's name.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Entries::Dirs => "BigDir_Dirs",
            Entries::Files => "BigDir_Files",
        }
    }

    /// The trace: `big/` exists; entries are made in order, a readdir of `big/` after
    /// every `every` of them (and after the last).
    pub fn generate(&self) -> Trace {
        let what = match self.kind {
            Entries::Dirs => "subdirectories",
            Entries::Files => "empty files",
        };
        let mut m = Multi::new(
            self.name(),
            format!(
                "{} {what} made in one directory, listed every {} entries",
                self.entries, self.every
            ),
            format!(
                "naslab-workload bigdir entries={} every={} kind={what}",
                self.entries, self.every
            ),
        );
        let big = m.declare("big".into(), FileKind::Dir, 0, true);
        let every = self.every.max(1);
        for i in 0..self.entries {
            let t = i as u64;
            match self.kind {
                Entries::Dirs => {
                    let d = m.declare(format!("big/d{i:06}"), FileKind::Dir, 0, false);
                    m.op(0, t, OpKind::Mkdir, d, 0, 0, OpFlags::default(), false);
                }
                Entries::Files => {
                    let f = m.declare(format!("big/f{i:06}"), FileKind::File, 0, false);
                    m.op(0, t, OpKind::Create, f, 0, 0, OpFlags::WRITE, false);
                    m.op(0, t, OpKind::Close, f, 0, 0, OpFlags::default(), false);
                }
            }
            if (i + 1) % every == 0 || i + 1 == self.entries {
                m.op(0, t, OpKind::Readdir, big, 0, 0, OpFlags::default(), false);
            }
        }
        m.finish()
    }
}
