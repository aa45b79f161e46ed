//! The paths a trace being built declares, as a tree of their components: a path that
//! would put an entry inside a file, or make a file of a path with entries below it, is
//! told apart before it is declared, since `naslab run` refuses such a trace. Each
//! component is kept once, so time and memory grow with the paths' total length, not
//! with the square of their depth.

use std::collections::HashMap;

use naslab_trace::FileKind;

/// One component: the entries below it, and its kind if it is declared itself.
#[derive(Debug, Default)]
struct Node {
    children: HashMap<Box<str>, u32>,
    kind: Option<FileKind>,
}

/// The declared paths (`/`-separated, relative, as the trace holds them).
#[derive(Debug)]
pub struct PathTree {
    /// Node 0 is the workload directory itself.
    nodes: Vec<Node>,
}

impl Default for PathTree {
    fn default() -> Self {
        PathTree {
            nodes: vec![Node::default()],
        }
    }
}

impl PathTree {
    /// Whether `path` may be declared as `kind`: none of its parents is declared as a
    /// file, and a file has nothing declared below it. (A path declared already fits
    /// as the kind it has.)
    pub fn fits(&self, path: &str, kind: FileKind) -> bool {
        let mut node = 0u32;
        for part in path.split('/') {
            if self.nodes[node as usize].kind == Some(FileKind::File) {
                return false;
            }
            match self.nodes[node as usize].children.get(part) {
                Some(&child) => node = child,
                // Nothing below is declared: only the parents checked so far matter.
                None => return true,
            }
        }
        let n = &self.nodes[node as usize];
        match n.kind {
            Some(declared) => declared == kind,
            None => kind == FileKind::Dir || n.children.is_empty(),
        }
    }

    /// Changes the kind of the declared `path` to `kind` when nothing declared below it
    /// forbids that; whether it did.
    pub fn rekind(&mut self, path: &str, kind: FileKind) -> bool {
        let mut node = 0u32;
        for part in path.split('/') {
            match self.nodes[node as usize].children.get(part) {
                Some(&child) => node = child,
                None => return false,
            }
        }
        let n = &mut self.nodes[node as usize];
        if kind == FileKind::File && !n.children.is_empty() {
            return false;
        }
        n.kind = Some(kind);
        true
    }

    /// Declares `path` as `kind` (which the caller checked [`PathTree::fits`]).
    pub fn insert(&mut self, path: &str, kind: FileKind) {
        let mut node = 0u32;
        for part in path.split('/') {
            let next = self.nodes.len() as u32;
            let child = *self.nodes[node as usize]
                .children
                .entry(part.into())
                .or_insert(next);
            if child == next {
                self.nodes.push(Node::default());
            }
            node = child;
        }
        self.nodes[node as usize].kind = Some(kind);
    }
}

#[cfg(test)]
mod tests {
    use super::PathTree;
    use naslab_trace::FileKind::{Dir, File};

    #[test]
    fn no_entry_goes_inside_a_file_and_no_file_above_an_entry() {
        let mut t = PathTree::default();
        assert!(t.fits("x", File));
        t.insert("x", File);
        assert!(!t.fits("x/y", File), "inside a file");
        assert!(!t.fits("x/y/z", Dir), "deeper inside a file");
        assert!(!t.fits("x", Dir), "the other kind");
        assert!(t.fits("x", File));
        assert!(t.fits("xy", Dir), "a name that only starts alike");
        t.insert("d/e/f", File);
        assert!(!t.fits("d/e", File), "a file above an entry");
        assert!(!t.fits("d", File));
        assert!(t.fits("d/e", Dir), "a parent, as a directory");
        t.insert("d/e", Dir);
        assert!(t.fits("d/e/g", File));
        assert!(!t.fits("d/e/f/h", File));
        assert!(!t.rekind("d/e", File), "a directory with an entry below");
        assert!(t.rekind("d/e/f", Dir));
        assert!(t.fits("d/e/f/h", File));
        assert!(!t.rekind("nowhere", Dir));
    }

    #[test]
    fn a_deep_path_keeps_each_component_once() {
        let mut t = PathTree::default();
        let deep = vec!["a"; 2000].join("/");
        t.insert(&deep, File);
        assert_eq!(t.nodes.len(), 2001);
        let beside = format!("{}/b", vec!["a"; 1999].join("/"));
        assert!(t.fits(&beside, File));
        t.insert(&beside, File);
        assert_eq!(t.nodes.len(), 2002);
        assert!(!t.fits(&format!("{deep}/c"), File));
    }
}
