//! Statistics of a trace, computed from its records alone: what the file set holds, how many
//! bytes move, how sequential the accesses are and how large they are.
//!
//! "Sequential" follows the NASPT paper: a read or write is sequential when it works on the
//! same file as the previous read or write of the whole trace (in trace order) and starts where
//! that access ended.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;

use naslab_trace::{FileKind, OpKind, Record, Trace, printable};
use serde::Serialize;

/// Upper bounds of the access-size buckets, in bytes; one more bucket holds larger accesses.
pub const BUCKET_LIMITS: [u64; 12] = [
    512,
    1 << 10,
    2 << 10,
    4 << 10,
    8 << 10,
    16 << 10,
    32 << 10,
    64 << 10,
    128 << 10,
    256 << 10,
    512 << 10,
    1 << 20,
];

/// How many of the busiest files a description lists.
pub const BUSIEST_FILES: usize = 10;

/// What a trace does, in numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Description {
    /// The workload named in the header.
    pub workload: String,
    /// The header's description, if any.
    pub description: Option<String>,
    /// The header's generator, if any.
    pub generator: Option<String>,
    /// Regular files declared.
    pub files_declared: u64,
    /// Directories declared.
    pub dirs_declared: u64,
    /// Declared files that exist before the test (preparation builds them).
    pub files_prepared: u64,
    /// Declared files the workload creates.
    pub files_created: u64,
    /// Bytes preparation writes (the sizes of the files that exist).
    pub prepared_bytes: u64,
    /// Distinct entries any op refers to.
    pub files_touched: u64,
    /// Distinct streams.
    pub streams: u64,
    /// All ops.
    pub ops: u64,
    /// Op counts by kind, in the trace format's order, kinds that occur only.
    pub op_counts: Vec<OpCount>,
    /// Read ops.
    pub reads: u64,
    /// Write ops.
    pub writes: u64,
    /// Bytes the reads ask for.
    pub bytes_read: u64,
    /// Bytes the writes carry.
    pub bytes_written: u64,
    /// Writes as a share of reads plus writes, in percent.
    pub write_pct: f64,
    /// Sequential reads and writes as a share of all reads and writes, in percent.
    pub sequential_pct: f64,
    /// Median read size in bytes (mean of the two middle ones for an even count).
    pub median_read: Option<f64>,
    /// Median write size in bytes.
    pub median_write: Option<f64>,
    /// Mean read size in bytes.
    pub mean_read: Option<f64>,
    /// Mean write size in bytes.
    pub mean_write: Option<f64>,
    /// Read counts by size bucket.
    pub read_sizes: Vec<SizeBucket>,
    /// Write counts by size bucket.
    pub write_sizes: Vec<SizeBucket>,
    /// The largest op time stamp, in µs.
    pub duration_us: u64,
    /// The files with the most reads and writes, busiest first.
    pub busiest_files: Vec<FileSummary>,
}

/// How many ops of one kind a trace holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OpCount {
    /// The op kind's name.
    pub op: &'static str,
    /// How many.
    pub count: u64,
}

/// How many accesses fall in one size bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SizeBucket {
    /// The bucket's label, such as `<=4K` or `>1M` (K = 1024 bytes).
    pub label: String,
    /// The bucket's largest size in bytes; `None` for the last, open-ended bucket.
    pub max_bytes: Option<u64>,
    /// Accesses in the bucket.
    pub count: u64,
}

/// The accesses to one file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileSummary {
    /// The entry's id.
    pub id: u32,
    /// Its path (empty if the trace does not declare it).
    pub path: String,
    /// Read ops.
    pub reads: u64,
    /// Write ops.
    pub writes: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Its sequential accesses (trace-wide definition) as a share of its accesses, in percent.
    pub sequential_pct: f64,
}

#[derive(Default)]
struct FileAcc {
    reads: u64,
    writes: u64,
    bytes_read: u64,
    bytes_written: u64,
    sequential: u64,
}

/// Accumulates records one at a time; memory grows with files and distinct sizes, not ops.
#[derive(Default)]
struct Acc {
    workload: String,
    description: Option<String>,
    generator: Option<String>,
    files_declared: u64,
    dirs_declared: u64,
    files_prepared: u64,
    files_created: u64,
    prepared_bytes: u64,
    paths: HashMap<u32, String>,
    touched: HashSet<u32>,
    streams: BTreeSet<u32>,
    op_counts: [u64; OpKind::ALL.len()],
    per_file: HashMap<u32, FileAcc>,
    previous: Option<(u32, u64)>,
    sequential: u64,
    read_sizes: BTreeMap<u64, u64>,
    write_sizes: BTreeMap<u64, u64>,
    duration_us: u64,
}

impl Acc {
    fn add(&mut self, record: Record) {
        match record {
            Record::Header(h) => {
                self.workload = h.workload;
                self.description = h.description;
                self.generator = h.generator;
            }
            Record::File(f) => {
                if f.kind == FileKind::Dir {
                    self.dirs_declared += 1;
                } else {
                    self.files_declared += 1;
                    if f.exists {
                        self.files_prepared += 1;
                        self.prepared_bytes += f.size;
                    } else {
                        self.files_created += 1;
                    }
                }
                self.paths.insert(f.id, f.path);
            }
            Record::Op(op, _) => {
                self.op_counts[op.kind.index()] += 1;
                self.touched.insert(op.file);
                self.streams.insert(op.stream);
                self.duration_us = self.duration_us.max(op.t_us);
                let is_read = match op.kind {
                    OpKind::Read => true,
                    OpKind::Write => false,
                    _ => return,
                };
                let seq = self.previous == Some((op.file, op.offset));
                self.previous = Some((op.file, op.offset.saturating_add(op.len)));
                let file = self.per_file.entry(op.file).or_default();
                if seq {
                    self.sequential += 1;
                    file.sequential += 1;
                }
                let sizes = if is_read {
                    file.reads += 1;
                    file.bytes_read += op.len;
                    &mut self.read_sizes
                } else {
                    file.writes += 1;
                    file.bytes_written += op.len;
                    &mut self.write_sizes
                };
                *sizes.entry(op.len).or_default() += 1;
            }
        }
    }

    fn finish(self) -> Description {
        let (reads, bytes_read) = totals(&self.read_sizes);
        let (writes, bytes_written) = totals(&self.write_sizes);
        let accesses = reads + writes;
        let op_counts = OpKind::ALL
            .iter()
            .filter(|k| self.op_counts[k.index()] > 0)
            .map(|k| OpCount {
                op: k.name(),
                count: self.op_counts[k.index()],
            })
            .collect();
        let mut busiest: Vec<(u32, FileAcc)> = self.per_file.into_iter().collect();
        busiest.sort_by(|a, b| {
            (b.1.reads + b.1.writes)
                .cmp(&(a.1.reads + a.1.writes))
                .then(a.0.cmp(&b.0))
        });
        let busiest_files = busiest
            .into_iter()
            .take(BUSIEST_FILES)
            .map(|(id, f)| FileSummary {
                id,
                path: self.paths.get(&id).cloned().unwrap_or_default(),
                reads: f.reads,
                writes: f.writes,
                bytes_read: f.bytes_read,
                bytes_written: f.bytes_written,
                sequential_pct: pct(f.sequential, f.reads + f.writes),
            })
            .collect();
        Description {
            workload: self.workload,
            description: self.description,
            generator: self.generator,
            files_declared: self.files_declared,
            dirs_declared: self.dirs_declared,
            files_prepared: self.files_prepared,
            files_created: self.files_created,
            prepared_bytes: self.prepared_bytes,
            files_touched: self.touched.len() as u64,
            streams: self.streams.len() as u64,
            ops: self.op_counts.iter().sum(),
            op_counts,
            reads,
            writes,
            bytes_read,
            bytes_written,
            write_pct: pct(writes, accesses),
            sequential_pct: pct(self.sequential, accesses),
            median_read: median(&self.read_sizes, reads),
            median_write: median(&self.write_sizes, writes),
            mean_read: (reads > 0).then(|| bytes_read as f64 / reads as f64),
            mean_write: (writes > 0).then(|| bytes_written as f64 / writes as f64),
            read_sizes: buckets(&self.read_sizes),
            write_sizes: buckets(&self.write_sizes),
            duration_us: self.duration_us,
            busiest_files,
        }
    }
}

fn totals(sizes: &BTreeMap<u64, u64>) -> (u64, u64) {
    sizes.iter().fold((0, 0), |(n, b), (&size, &count)| {
        (n + count, b + size * count)
    })
}

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// The size at 0-based rank `rank` of the sorted sizes.
fn nth(sizes: &BTreeMap<u64, u64>, rank: u64) -> u64 {
    let mut seen = 0;
    for (&size, &count) in sizes {
        seen += count;
        if rank < seen {
            return size;
        }
    }
    0
}

fn median(sizes: &BTreeMap<u64, u64>, n: u64) -> Option<f64> {
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(nth(sizes, n / 2) as f64),
        _ => Some((nth(sizes, n / 2 - 1) + nth(sizes, n / 2)) as f64 / 2.0),
    }
}

fn bucket_label(limit: u64) -> String {
    if limit >= 1 << 20 {
        format!("{}M", limit >> 20)
    } else if limit >= 1 << 10 {
        format!("{}K", limit >> 10)
    } else {
        limit.to_string()
    }
}

fn buckets(sizes: &BTreeMap<u64, u64>) -> Vec<SizeBucket> {
    let mut out: Vec<SizeBucket> = BUCKET_LIMITS
        .iter()
        .map(|&l| SizeBucket {
            label: format!("<={}", bucket_label(l)),
            max_bytes: Some(l),
            count: 0,
        })
        .collect();
    let last = BUCKET_LIMITS[BUCKET_LIMITS.len() - 1];
    out.push(SizeBucket {
        label: format!(">{}", bucket_label(last)),
        max_bytes: None,
        count: 0,
    });
    for (&size, &count) in sizes {
        let i = BUCKET_LIMITS
            .iter()
            .position(|&l| size <= l)
            .unwrap_or(BUCKET_LIMITS.len());
        out[i].count += count;
    }
    out
}

/// Describes records handed over one at a time, for a caller that also passes them on
/// elsewhere (`naslab describe` compiles them as `naslab run` would, in the same pass).
#[derive(Default)]
pub struct Describer(Acc);

impl Describer {
    /// Adds the next record.
    pub fn add(&mut self, record: Record) {
        self.0.add(record);
    }

    /// The description of the records added.
    pub fn finish(self) -> Description {
        self.0.finish()
    }
}

/// Describes a trace from its records, read one at a time (for traces too big to load).
pub fn describe_records(records: impl Iterator<Item = Record>) -> Description {
    let mut acc = Acc::default();
    for r in records {
        acc.add(r);
    }
    acc.finish()
}

/// Describes a trace from fallible records (such as a `TraceReader`'s); stops at the first error.
pub fn try_describe_records<E>(
    records: impl Iterator<Item = Result<Record, E>>,
) -> Result<Description, E> {
    let mut acc = Acc::default();
    for r in records {
        acc.add(r?);
    }
    Ok(acc.finish())
}

/// Describes a trace held in memory.
pub fn describe(trace: &Trace) -> Description {
    describe_records(trace.records().filter_map(Result::ok))
}

/// Bytes in decimal units (1 kB = 1000 bytes, written as the report and every export
/// write it), for people.
pub fn human_bytes(bytes: f64) -> String {
    if bytes < 1e3 {
        format!("{bytes:.0} B")
    } else if bytes < 1e6 {
        format!("{:.1} kB", bytes / 1e3)
    } else if bytes < 1e9 {
        format!("{:.1} MB", bytes / 1e6)
    } else {
        format!("{:.2} GB", bytes / 1e9)
    }
}

fn size_line(f: &mut fmt::Formatter<'_>, name: &str, buckets: &[SizeBucket]) -> fmt::Result {
    write!(f, "  {name:<8}")?;
    for b in buckets {
        write!(f, "{:>7}", b.count)?;
    }
    writeln!(f)
}

fn opt_bytes(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |b| format!("{b:.0} B"))
}

impl fmt::Display for Description {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "workload    {}", printable(&self.workload))?;
        if let Some(d) = &self.description {
            writeln!(f, "about       {}", printable(d))?;
        }
        if let Some(g) = &self.generator {
            writeln!(f, "generator   {}", printable(g))?;
        }
        writeln!(
            f,
            "files       {} declared ({} prepared, {}; {} created), {} directories, {} entries touched",
            self.files_declared,
            self.files_prepared,
            human_bytes(self.prepared_bytes as f64),
            self.files_created,
            self.dirs_declared,
            self.files_touched
        )?;
        writeln!(
            f,
            "ops         {} on {} stream(s) over {:.1} s of trace time",
            self.ops,
            self.streams,
            self.duration_us as f64 / 1e6
        )?;
        let kinds: Vec<String> = self
            .op_counts
            .iter()
            .map(|c| format!("{} {}", c.op, c.count))
            .collect();
        writeln!(f, "  by kind   {}", kinds.join(", "))?;
        writeln!(
            f,
            "reads       {} ({:.1}%), {} ({} bytes), median {}, mean {}",
            self.reads,
            100.0 - self.write_pct,
            human_bytes(self.bytes_read as f64),
            self.bytes_read,
            opt_bytes(self.median_read),
            opt_bytes(self.mean_read)
        )?;
        writeln!(
            f,
            "writes      {} ({:.1}%), {} ({} bytes), median {}, mean {}",
            self.writes,
            self.write_pct,
            human_bytes(self.bytes_written as f64),
            self.bytes_written,
            opt_bytes(self.median_write),
            opt_bytes(self.mean_write)
        )?;
        writeln!(
            f,
            "sequential  {:.1}% of reads and writes",
            self.sequential_pct
        )?;
        write!(f, "sizes     ")?;
        for b in &self.read_sizes {
            write!(f, "{:>7}", b.label)?;
        }
        writeln!(f)?;
        size_line(f, "reads", &self.read_sizes)?;
        size_line(f, "writes", &self.write_sizes)?;
        if !self.busiest_files.is_empty() {
            writeln!(f, "busiest files (reads + writes):")?;
        }
        for b in &self.busiest_files {
            writeln!(
                f,
                "  {}: {} reads ({}), {} writes ({}), {:.1}% sequential",
                printable(&b.path),
                b.reads,
                human_bytes(b.bytes_read as f64),
                b.writes,
                human_bytes(b.bytes_written as f64),
                b.sequential_pct
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use naslab_trace::{FileDecl, Op, OpFlags, Prepare};

    #[test]
    fn sizes_are_in_the_decimal_units_every_other_view_writes() {
        assert_eq!(human_bytes(999.0), "999 B");
        assert_eq!(human_bytes(4096.0), "4.1 kB");
        assert_eq!(human_bytes(2.5e6), "2.5 MB");
        assert_eq!(human_bytes(1.5e9), "1.50 GB");
    }

    fn access(kind: OpKind, file: u32, offset: u64, len: u64) -> Op {
        let mut op = Op::new(0, 0, kind, file);
        op.offset = offset;
        op.len = len;
        op
    }

    fn small_trace() -> Trace {
        let mut t = Trace::new("t");
        for (id, path, exists) in [(0, "a", true), (1, "b", false)] {
            t.files.push(FileDecl {
                id,
                path: path.into(),
                kind: FileKind::File,
                size: if exists { 10_000 } else { 0 },
                exists,
                prepare: Prepare::Copy,
            });
        }
        let mut open = Op::new(0, 0, OpKind::Open, 0);
        open.flags = OpFlags::READ;
        t.ops.push(open);
        t.ops.push(Op::new(0, 0, OpKind::Create, 1));
        t.ops.push(access(OpKind::Read, 0, 0, 100)); // first: not sequential
        t.ops.push(access(OpKind::Read, 0, 100, 100)); // sequential
        t.ops.push(access(OpKind::Write, 1, 200, 4096)); // other file
        t.ops.push(access(OpKind::Read, 0, 200, 2000)); // previous access was file 1
        t.ops.push(access(OpKind::Write, 1, 4296, 2_000_000)); // previous was file 0
        t.ops.push(access(OpKind::Write, 1, 2_004_296, 512)); // sequential
        t.ops.push(Op::new(0, 0, OpKind::Close, 0));
        t.ops.push(Op::new(0, 9, OpKind::Close, 1));
        t
    }

    #[test]
    fn counts_bytes_and_sequential_accesses() {
        let d = describe(&small_trace());
        assert_eq!(
            (d.files_declared, d.files_prepared, d.files_created),
            (2, 1, 1)
        );
        assert_eq!(d.prepared_bytes, 10_000);
        assert_eq!((d.reads, d.writes), (3, 3));
        assert_eq!(d.bytes_read, 2200);
        assert_eq!(d.bytes_written, 4096 + 2_000_000 + 512);
        assert!((d.sequential_pct - 200.0 / 6.0).abs() < 1e-9);
        assert_eq!(d.median_read, Some(100.0));
        assert_eq!(d.median_write, Some(4096.0));
        assert_eq!(d.ops, 10);
        assert_eq!(d.duration_us, 9);
        assert_eq!(d.files_touched, 2);
        let close = d
            .op_counts
            .iter()
            .find(|c| c.op == "close")
            .map(|c| c.count);
        assert_eq!(close, Some(2));
    }

    #[test]
    fn buckets_sizes_by_powers_of_two() {
        let d = describe(&small_trace());
        let count =
            |b: &[SizeBucket], label: &str| b.iter().find(|x| x.label == label).map(|x| x.count);
        assert_eq!(count(&d.read_sizes, "<=512"), Some(2));
        assert_eq!(count(&d.read_sizes, "<=2K"), Some(1));
        assert_eq!(count(&d.write_sizes, "<=512"), Some(1));
        assert_eq!(count(&d.write_sizes, "<=4K"), Some(1));
        assert_eq!(count(&d.write_sizes, ">1M"), Some(1));
        assert_eq!(d.read_sizes.len(), 13);
    }

    #[test]
    fn even_counts_take_the_mean_of_the_middle_pair() {
        let mut sizes = BTreeMap::new();
        sizes.insert(1536, 1);
        sizes.insert(2048, 1);
        assert_eq!(median(&sizes, 2), Some(1792.0));
        assert_eq!(median(&BTreeMap::new(), 0), None);
    }

    #[test]
    fn per_file_figures_and_text() {
        let d = describe(&small_trace());
        let b = d
            .busiest_files
            .iter()
            .find(|f| f.path == "b")
            .expect("b listed");
        assert_eq!(b.writes, 3);
        let text = d.to_string();
        assert!(text.contains("sequential  33.3%"), "{text}");
        assert!(text.contains("busiest files"));
    }

    #[test]
    fn empty_trace_has_no_medians() {
        let d = describe(&Trace::new("empty"));
        assert_eq!(d.median_read, None);
        assert_eq!(d.sequential_pct, 0.0);
        assert!(d.to_string().contains("median -"));
    }
}
