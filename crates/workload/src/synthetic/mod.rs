//! Synthetic and multi-client workloads: the IOMeter-style set, an iozone-style matrix,
//! a big directory, an ingest, a multi-connection file server and a backup. Each builds
//! a trace from its parameters, deterministically from a seed.

pub mod backup;
pub mod bigdir;
pub mod fileserver;
pub mod ingest;
pub mod iometer;
pub mod iozone;
pub mod openloop;

use naslab_trace::{FileDecl, FileKind, Op, OpFlags, OpKind, Prepare, Trace};

/// Appends declarations and ops to a trace with any number of streams.
pub(crate) struct Multi {
    pub trace: Trace,
}

impl Multi {
    pub fn new(name: &str, description: String, generator: String) -> Multi {
        let mut trace = Trace::new(name);
        trace.header.description = Some(description);
        trace.header.generator = Some(generator);
        Multi { trace }
    }

    /// Declares an entry; returns its id.
    pub fn declare(&mut self, path: String, kind: FileKind, size: u64, exists: bool) -> u32 {
        let id = self.trace.files.len() as u32;
        self.trace.files.push(FileDecl {
            id,
            path,
            kind,
            size,
            exists,
            prepare: Prepare::Copy,
        });
        id
    }

    /// Appends an op.
    #[allow(clippy::too_many_arguments)]
    pub fn op(
        &mut self,
        stream: u32,
        t_us: u64,
        kind: OpKind,
        file: u32,
        offset: u64,
        len: u64,
        flags: OpFlags,
        warmup: bool,
    ) {
        self.trace.ops.push(Op {
            stream,
            t_us,
            kind,
            file,
            offset,
            len,
            flags,
            to: None,
            warmup,
            expect: None,
        });
    }

    /// Writes `size` bytes into a new file in `record`-sized writes: create, writes, close.
    pub fn write_new(&mut self, stream: u32, file: u32, size: u64, record: u64, warmup: bool) {
        let how = (OpKind::Create, OpFlags::WRITE, OpKind::Write);
        self.whole_file(stream, file, size, record, warmup, how);
    }

    /// Reads a whole file in `record`-sized reads: open, reads, close.
    pub fn read_all(&mut self, stream: u32, file: u32, size: u64, record: u64, warmup: bool) {
        let how = (OpKind::Open, OpFlags::READ, OpKind::Read);
        self.whole_file(stream, file, size, record, warmup, how);
    }

    /// Opens (or creates) a file, moves all of it in order in `record`-sized transfers, closes it.
    fn whole_file(
        &mut self,
        stream: u32,
        file: u32,
        size: u64,
        record: u64,
        warmup: bool,
        (open, flags, data): (OpKind, OpFlags, OpKind),
    ) {
        self.op(stream, 0, open, file, 0, 0, flags, warmup);
        let mut off = 0;
        while off < size {
            let n = record.min(size - off);
            self.op(stream, 0, data, file, off, n, OpFlags::default(), warmup);
            off += n;
        }
        self.op(
            stream,
            0,
            OpKind::Close,
            file,
            0,
            0,
            OpFlags::default(),
            warmup,
        );
    }

    pub fn finish(self) -> Trace {
        self.trace
    }
}

/// Parses sizes like `4k`, `64K`, `1m`, `2G`, `1T`, `512` (binary units: k = 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{text}' is not a size; write e.g. 4k, 64k, 1m, 2g, 1t"))?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "unknown unit in '{text}'; use k, m, g or t (powers of 1024)"
            ));
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{text}' is too large"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_parse_in_binary_units() {
        assert_eq!(super::parse_size("4k"), Ok(4096));
        assert_eq!(super::parse_size("16M"), Ok(16 << 20));
        assert_eq!(super::parse_size("512"), Ok(512));
        assert!(super::parse_size("4x").is_err());
        assert!(super::parse_size("k").is_err());
        assert_eq!(super::parse_size("1g"), Ok(1 << 30));
        assert!(super::parse_size("-1").is_err());
        assert!(super::parse_size("").is_err());
        assert!(super::parse_size("99999999999T").is_err());
    }
}
