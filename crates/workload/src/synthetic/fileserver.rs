//! The multi-connection file-server test of the NSS delayed-allocation study (seed 000):
//! each connection writes its own files of 4 KB to 2 MB in 4 KB records, then the same
//! connections read them back.

use naslab_trace::{FileKind, Trace};

use super::Multi;

/// The file sizes the study cycled through.
pub const SIZES: [u64; 10] = [
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
    2 << 20,
];

/// The file server's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileServer {
    /// Connections (streams), each with its own files.
    pub connections: u32,
    /// The number of the first of them: 0, or past the connections the other clients of
    /// a multi-client job open, so each connection has the files (names and sizes) it
    /// has in the whole job's trace.
    pub first_connection: u32,
    /// Files each connection writes and reads (the study used 1000).
    pub files_per_connection: u32,
    /// Bytes per write and read (the study used 4 KB).
    pub record: u64,
}

impl Default for FileServer {
    fn default() -> Self {
        FileServer {
            connections: 590,
            first_connection: 0,
            files_per_connection: 10,
            record: 4096,
        }
    }
}

impl FileServer {
    /// The size of file `f` of this trace's connection `c` (its stream): the sizes in
    /// turn, shifted per connection by its number in the whole job.
    pub fn size_of(&self, c: u32, f: u32) -> u64 {
        SIZES[((self.first_connection + c + f) as usize) % SIZES.len()]
    }

    /// Bytes each phase moves.
    pub fn bytes(&self) -> u64 {
        (0..self.connections)
            .flat_map(|c| (0..self.files_per_connection).map(move |f| (c, f)))
            .map(|(c, f)| self.size_of(c, f))
            .sum()
    }

    fn declare_files(&self, m: &mut Multi) -> Vec<Vec<u32>> {
        (0..self.connections)
            .map(|c| {
                (0..self.files_per_connection)
                    .map(|f| {
                        m.declare(
                            format!("conn{:03}/file{f:04}.dat", self.first_connection + c),
                            FileKind::File,
                            0,
                            false,
                        )
                    })
                    .collect()
            })
            .collect()
    }

    fn header(&self, phase: &str) -> (String, String) {
        (
            format!(
                "{} connections each {phase} {} files of 4 KB to 2 MB in {} B records",
                self.connections, self.files_per_connection, self.record
            ),
            format!(
                "naslab-workload fileserver connections={} files={} record={}",
                self.connections, self.files_per_connection, self.record
            ),
        )
    }

    /// The write phase: every connection creates and writes its files.
    pub fn write_phase(&self) -> Trace {
        let (d, g) = self.header("writes");
        let mut m = Multi::new("FileServer_Write", d, g);
        let files = self.declare_files(&mut m);
        for (c, fs) in files.iter().enumerate() {
            for (f, &id) in fs.iter().enumerate() {
                let size = self.size_of(c as u32, f as u32);
                m.write_new(c as u32, id, size, self.record, false);
            }
        }
        m.finish()
    }

    /// One user's session on the file server: every connection writes its files, then
    /// reads them back, all measured (for a users sweep, where each user is one or more
    /// connections paced at a steady rate).
    pub fn session(&self) -> Trace {
        let (d, g) = self.header("writes then reads back");
        let mut m = Multi::new("FileServer", d, g);
        let files = self.declare_files(&mut m);
        for (c, fs) in files.iter().enumerate() {
            for (f, &id) in fs.iter().enumerate() {
                let size = self.size_of(c as u32, f as u32);
                m.write_new(c as u32, id, size, self.record, false);
            }
            for (f, &id) in fs.iter().enumerate() {
                let size = self.size_of(c as u32, f as u32);
                m.read_all(c as u32, id, size, self.record, false);
            }
        }
        m.finish()
    }

    /// The read phase: the files are written by the same connections in a warm-up, then
    /// read back, measured.
    pub fn read_phase(&self) -> Trace {
        let (d, g) = self.header("reads back");
        let mut m = Multi::new("FileServer_Read", d, g);
        let files = self.declare_files(&mut m);
        for (c, fs) in files.iter().enumerate() {
            for (f, &id) in fs.iter().enumerate() {
                let size = self.size_of(c as u32, f as u32);
                m.write_new(c as u32, id, size, self.record, true);
            }
        }
        for (c, fs) in files.iter().enumerate() {
            for (f, &id) in fs.iter().enumerate() {
                let size = self.size_of(c as u32, f as u32);
                m.read_all(c as u32, id, size, self.record, false);
            }
        }
        m.finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Each connection's ops as (file path, kind, offset, length), in order.
    fn per_connection(t: &Trace, first: u32) -> BTreeMap<u32, Vec<(String, String, u64, u64)>> {
        let paths: BTreeMap<u32, &str> = t.files.iter().map(|f| (f.id, f.path.as_str())).collect();
        let mut out: BTreeMap<u32, Vec<_>> = BTreeMap::new();
        for op in &t.ops {
            out.entry(first + op.stream).or_default().push((
                paths[&op.file].to_string(),
                op.kind.name().to_string(),
                op.offset,
                op.len,
            ));
        }
        out
    }

    #[test]
    fn shares_of_the_connections_make_the_whole_trace() {
        let whole = FileServer {
            connections: 7,
            first_connection: 0,
            files_per_connection: 3,
            record: 4096,
        };
        for phase in [FileServer::write_phase, FileServer::read_phase] {
            let expected = per_connection(&phase(&whole), 0);
            let mut joined = BTreeMap::new();
            let mut bytes = 0;
            for (first, connections) in [(0, 3), (3, 2), (5, 2)] {
                let part = FileServer {
                    connections,
                    first_connection: first,
                    ..whole
                };
                bytes += part.bytes();
                joined.extend(per_connection(&phase(&part), first));
            }
            assert_eq!(joined, expected);
            assert_eq!(bytes, whole.bytes());
        }
    }
}
