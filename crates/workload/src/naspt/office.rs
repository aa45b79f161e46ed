//! OfficeProductivity: a scripted working day with an office suite. Documents, spreadsheets and
//! presentations are opened (header probes, then the body read in order), edited (the
//! application's temporary file takes a stream of mostly 1 KB writes, read back now and
//! then), saved in place, and their shortcut in the recent-files list rewritten; databases take
//! random 4 KB page reads and writes; the few very large files are read and written whole in
//! 64 KB pieces.

use naslab_trace::{OpFlags, Trace};
use rand::RngExt;

use crate::builder::{Builder, FileRef};
use crate::catalog::WorkloadInfo;
use crate::params::{GenParams, Scale};
use crate::sample::{Rng8, between, log_uniform, lognormal, offset_in, pick, shuffle};

/// The few large files: path and size at scale 1 ("files ... to over 200 MB", section 4.1),
/// and how many times the script works on each.
const BIG: [(&str, u64, u64); 8] = [
    ("Databases/Inventory.mdb", 236_000_000, 3),
    ("Databases/Contacts.mdb", 38_000_000, 2),
    ("Presentations/QuarterlyReview.ppt", 64_000_000, 2),
    ("Presentations/ProductLaunch.ppt", 31_000_000, 2),
    ("Spreadsheets/SalesHistory.xls", 48_000_000, 3),
    ("Spreadsheets/Budget2008.xls", 22_000_000, 2),
    ("Documents/AnnualReport.doc", 18_000_000, 2),
    ("Documents/EmployeeHandbook.doc", 12_000_000, 2),
];
/// Ordinary documents by folder and extension.
const DOCS: [(&str, &str, usize); 4] = [
    ("Documents", "doc", 220),
    ("Spreadsheets", "xls", 170),
    ("Presentations", "ppt", 60),
    ("Databases", "mdb", 20),
];
const TEMPLATES: [(&str, u64); 3] = [
    ("Templates/Normal.dot", 42_000),
    ("Templates/Book.xlt", 18_000),
    ("Templates/Blank.pot", 26_000),
];
/// Shortcuts in the recent-files list that exist, and ones made for new documents.
const LINKS: usize = 60;
const NEW_DOCS: usize = 10;
/// The applications' temporary files, created during the test and reused in turn.
const TEMPS: usize = 45;
/// Sessions beyond the first visit of every document (scaled).
const REVISITS: u64 = 900;

/// Access sizes: a fixed size, or a range drawn log-uniformly.
#[derive(Clone, Copy)]
enum Size {
    Fixed(u64),
    Range(u64, u64),
}

/// Body reads of ordinary documents: "many 1 KB and 4 KB reads".
const BODY_READ: [(Size, u32); 4] = [
    (Size::Fixed(1024), 40),
    (Size::Range(1025, 4095), 46),
    (Size::Fixed(4096), 12),
    (Size::Range(4097, 16384), 2),
];
/// Body writes when saving ordinary documents.
const BODY_WRITE: [(Size, u32); 4] = [
    (Size::Fixed(1024), 19),
    (Size::Range(1025, 4095), 43),
    (Size::Fixed(4096), 34),
    (Size::Range(512, 1023), 4),
];
/// Writes to the temporary file while editing: "mostly 1 KB writes".
const EDIT_WRITE: [(Size, u32); 3] = [
    (Size::Fixed(1024), 62),
    (Size::Range(1025, 4096), 30),
    (Size::Range(100, 1023), 8),
];
/// Chance that an edit is followed by a read (of the temporary file or the document).
const EDIT_READ_PROB: f64 = 0.26;
/// Edits per session (scaled).
const EDITS: (u64, u64) = (8, 45);
/// Chance that an ordinary session saves the document.
const SAVE_PROB: f64 = 0.7;
const PAGE: u64 = 4096;
const BULK: u64 = 64 * 1024;

fn draw(rng: &mut Rng8, sizes: &[(Size, u32)]) -> u64 {
    match pick(rng, sizes) {
        Size::Fixed(n) => n,
        Size::Range(lo, hi) => log_uniform(rng, lo, hi),
    }
}

/// What kind of work a document gets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Doc,
    Database,
}

struct Document {
    file: FileRef,
    kind: Kind,
    big: bool,
    /// Its current size (new documents start at 0 and exist once created).
    size: u64,
    exists: bool,
    /// Its shortcut in the recent-files list, and whether that exists yet.
    link: Option<(FileRef, bool)>,
}

struct Temp {
    id: u32,
    size: u64,
    exists: bool,
}

struct Office {
    docs: Vec<Document>,
    /// The recent-files shortcuts that exist before the test.
    links: Vec<FileRef>,
    /// Files read when the applications start: templates and a stray temporary file.
    startup: Vec<FileRef>,
    temps: Vec<Temp>,
    next_temp: usize,
    scale: Scale,
}

fn doc_name(rng: &mut Rng8, i: usize) -> String {
    const A: [&str; 16] = [
        "Budget",
        "Sales",
        "Project",
        "Meeting",
        "Customer",
        "Vendor",
        "Marketing",
        "Payroll",
        "Travel",
        "Training",
        "Product",
        "Quarterly",
        "Status",
        "Inventory",
        "Staff",
        "Policy",
    ];
    const B: [&str; 12] = [
        "Report", "Notes", "Plan", "Summary", "Forecast", "Review", "Letter", "Proposal",
        "Schedule", "List", "Memo", "Analysis",
    ];
    format!(
        "{}{}_{:03}",
        A[rng.random_range(0..A.len())],
        B[rng.random_range(0..B.len())],
        i
    )
}

fn declare(b: &mut Builder, rng: &mut Rng8) -> Office {
    let scale = b.scale();
    let mut docs = Vec::new();
    for (path, size, _) in BIG {
        let file = b.file(path, size);
        let kind = if path.ends_with(".mdb") {
            Kind::Database
        } else {
            Kind::Doc
        };
        docs.push(Document {
            file,
            kind,
            big: true,
            size: file.size,
            exists: true,
            link: None,
        });
    }
    let mut n = 0;
    for (folder, ext, count) in DOCS {
        for _ in 0..count {
            let (median, sigma, max) = if ext == "mdb" {
                (600e3, 0.8, 8e6)
            } else {
                (45e3, 1.1, 4e6)
            };
            let size = lognormal(rng, median, sigma).clamp(2e3, max) as u64;
            let file = b.file(format!("{folder}/{}.{ext}", doc_name(rng, n)), size);
            let kind = if ext == "mdb" {
                Kind::Database
            } else {
                Kind::Doc
            };
            docs.push(Document {
                file,
                kind,
                big: false,
                size: file.size,
                exists: true,
                link: None,
            });
            n += 1;
        }
    }
    let mut links = Vec::new();
    for doc in docs.iter_mut().skip(BIG.len()).take(LINKS) {
        let stem = doc.file_stem(b);
        let link = b.file(format!("Recent/{stem}.lnk"), between(rng, 400, 1_500));
        doc.link = Some((link, true));
        links.push(link);
    }
    let mut startup: Vec<FileRef> = TEMPLATES.iter().map(|&(p, s)| b.file(p, s)).collect();
    startup.push(b.file("Temp/~DF1C7E.tmp", 12));
    for i in 0..NEW_DOCS {
        let (folder, stem, ext) = if i % 2 == 0 {
            ("Documents", "Minutes", "doc")
        } else {
            ("Spreadsheets", "Expenses", "xls")
        };
        let name = format!("{stem}_2008_{:02}", i / 2 + 1);
        let id = b.new_file(format!("{folder}/{name}.{ext}"));
        let link = b.new_file(format!("Recent/{name}.lnk"));
        docs.push(Document {
            file: FileRef { id, size: 0 },
            kind: Kind::Doc,
            big: false,
            size: 0,
            exists: false,
            link: Some((
                FileRef {
                    id: link,
                    size: scale.bytes(between(rng, 400, 1_500)),
                },
                false,
            )),
        });
    }
    let temps = (0..TEMPS)
        .map(|i| Temp {
            id: b.new_file(format!("Temp/~WRL{:04}.tmp", i + 1)),
            size: 0,
            exists: false,
        })
        .collect();
    Office {
        docs,
        links,
        startup,
        temps,
        next_temp: 0,
        scale,
    }
}

impl Document {
    /// The document's file name without folder and extension (for its shortcut's name).
    fn file_stem(&self, b: &Builder) -> String {
        let path = b.path_of(self.file.id);
        let name = path.rsplit('/').next().unwrap_or(path);
        name.rsplit_once('.').map_or(name, |(s, _)| s).to_string()
    }
}

/// Reads `[start, end)` in order with sizes drawn from `sizes`.
fn read_body(
    b: &mut Builder,
    rng: &mut Rng8,
    id: u32,
    start: u64,
    end: u64,
    sizes: &[(Size, u32)],
) {
    let mut off = start;
    while off < end {
        let len = draw(rng, sizes).min(end - off);
        b.read(id, off, len);
        b.wait(between(rng, 80, 600));
        off += len;
    }
}

/// Writes `[0, end)` in order with sizes drawn from `sizes`.
fn write_body(b: &mut Builder, rng: &mut Rng8, id: u32, end: u64, sizes: &[(Size, u32)]) {
    let mut off = 0;
    while off < end {
        let len = draw(rng, sizes).min(end - off);
        b.write(id, off, len);
        b.wait(between(rng, 80, 600));
        off += len;
    }
}

/// Header probes: the first sector, then scattered sectors and a few tiny reads.
fn probe(b: &mut Builder, rng: &mut Rng8, id: u32, size: u64) {
    b.read(id, 0, 512.min(size));
    for _ in 0..between(rng, 1, 4) {
        let len = if rng.random_bool(0.3) {
            log_uniform(rng, 12, 300)
        } else {
            512
        }
        .min(size);
        b.read(id, offset_in(rng, size, len, 512), len);
        b.wait(between(rng, 80, 400));
    }
}

impl Office {
    /// The recent-files list: a shortcut or two read whole.
    fn read_recent(&self, b: &mut Builder, rng: &mut Rng8) {
        for _ in 0..between(rng, 1, 2) {
            let link = self.links[rng.random_range(0..self.links.len())];
            b.open(link.id, OpFlags::READ);
            b.read(link.id, 0, link.size);
            b.close(link.id);
            b.wait(between(rng, 200, 2_000));
        }
    }

    /// Editing: a stream of writes to a temporary file, with reads mixed in.
    fn edit(&mut self, b: &mut Builder, rng: &mut Rng8, doc: usize) {
        let t = self.next_temp % self.temps.len();
        self.next_temp += 1;
        let temp = &mut self.temps[t];
        if temp.exists {
            b.open(temp.id, OpFlags::READ | OpFlags::WRITE);
        } else {
            b.create(temp.id);
            temp.exists = true;
        }
        let (doc_id, doc_size) = (self.docs[doc].file.id, self.docs[doc].size);
        let mut off = 0;
        for _ in 0..self.scale.count(between(rng, EDITS.0, EDITS.1)) {
            let len = draw(rng, &EDIT_WRITE);
            b.write(temp.id, off, len);
            off += len;
            temp.size = temp.size.max(off);
            b.think(between(rng, 10_000, 80_000));
            if rng.random_bool(EDIT_READ_PROB) {
                if rng.random_bool(0.6) {
                    let len = 1024.min(temp.size);
                    b.read(temp.id, offset_in(rng, temp.size, len, 512), len);
                } else if doc_size > 0 {
                    let len = draw(rng, &BODY_READ).min(doc_size);
                    b.read(doc_id, offset_in(rng, doc_size, len, 512), len);
                }
                b.wait(between(rng, 100, 1_000));
            }
        }
        b.close(temp.id);
    }

    /// Rewrites (or first writes) the document's shortcut.
    fn touch_link(&mut self, b: &mut Builder, doc: usize) {
        if let Some((link, exists)) = self.docs[doc].link.as_mut() {
            if *exists {
                b.open(link.id, OpFlags::READ | OpFlags::WRITE);
            } else {
                b.create(link.id);
                *exists = true;
            }
            b.write(link.id, 0, link.size);
            b.close(link.id);
        }
    }

    /// A session on a document: open, probe, read, edit, maybe save, update its shortcut.
    fn doc_session(&mut self, b: &mut Builder, rng: &mut Rng8, i: usize) {
        self.read_recent(b, rng);
        let d = &self.docs[i];
        let (id, size, big) = (d.file.id, d.size, d.big);
        if !d.exists {
            // A new document: written from scratch, then its shortcut made.
            b.create(id);
            let size = self.scale.bytes(between(rng, 20_000, 300_000));
            self.edit(b, rng, i);
            write_body(b, rng, id, size, &BODY_WRITE);
            b.close(id);
            let d = &mut self.docs[i];
            d.size = size;
            d.exists = true;
            self.touch_link(b, i);
            return;
        }
        b.open(id, OpFlags::READ | OpFlags::WRITE);
        probe(b, rng, id, size);
        let start = 512.min(size);
        if big {
            b.read_range(id, start, size, BULK, 40e6);
        } else {
            read_body(b, rng, id, start, size, &BODY_READ);
        }
        self.edit(b, rng, i);
        if big {
            b.write_range(id, 0, size, BULK, 40e6);
        } else if rng.random_bool(SAVE_PROB) {
            write_body(b, rng, id, size, &BODY_WRITE);
        }
        b.close(id);
        self.touch_link(b, i);
    }

    /// A session on a database: random page reads, short scans and page writes; a large
    /// database is also compacted (read whole and rewritten whole).
    fn db_session(&mut self, b: &mut Builder, rng: &mut Rng8, i: usize) {
        self.read_recent(b, rng);
        let d = &self.docs[i];
        let (id, size, big) = (d.file.id, d.size, d.big);
        b.open(id, OpFlags::READ | OpFlags::WRITE);
        b.read(id, 0, PAGE.min(size));
        let pages = if big {
            between(rng, 300, 700)
        } else {
            between(rng, 20, 80)
        };
        for _ in 0..self.scale.count(pages) {
            let off = offset_in(rng, size, PAGE, PAGE);
            let len = PAGE.min(size - off);
            let run = if rng.random_bool(0.5) {
                between(rng, 1, 8)
            } else {
                1
            };
            let end = (off + run * PAGE).min(size);
            read_body(b, rng, id, off, end, &[(Size::Fixed(PAGE), 1)]);
            if rng.random_bool(0.35) {
                b.write(id, off, len);
            }
            b.wait(between(rng, 500, 20_000));
        }
        if big {
            b.read_range(id, 0, size, BULK, 40e6);
            b.write_range(id, 0, size, BULK, 40e6);
        }
        b.close(id);
        self.touch_link(b, i);
    }
}

/// OfficeProductivity.
pub(crate) fn generate(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    let mut b = Builder::new(
        info.name,
        "a scripted working day with an office suite: documents, spreadsheets, presentations and databases opened, edited and saved",
        params,
    );
    let mut office = declare(&mut b, rng);
    // The schedule: every document once, popular ones again, the large ones several times.
    let ordinary: Vec<usize> = (BIG.len()..office.docs.len() - NEW_DOCS).collect();
    let mut plan: Vec<usize> = ordinary.clone();
    for _ in 0..office.scale.count(REVISITS) {
        // Popularity falls off with rank: a few documents take most revisits.
        let rank = (ordinary.len() as f64 * rng.random::<f64>().powi(3)) as usize;
        plan.push(ordinary[rank.min(ordinary.len() - 1)]);
    }
    for (i, &(_, _, visits)) in BIG.iter().enumerate() {
        for _ in 0..visits {
            plan.push(i);
        }
    }
    shuffle(rng, &mut plan);
    // New documents are made through the day and some are opened again later.
    let first_new = office.docs.len() - NEW_DOCS;
    for k in 0..NEW_DOCS {
        let at = (k + 1) * plan.len() / (NEW_DOCS + 2);
        plan.insert(at, first_new + k);
        plan.push(first_new + k);
    }
    // Starting the applications reads their templates and a stray temporary file.
    for link in office.startup.iter().copied() {
        b.open(link.id, OpFlags::READ);
        read_body(
            &mut b,
            rng,
            link.id,
            0,
            link.size,
            &[(Size::Fixed(4096), 1)],
        );
        b.close(link.id);
    }
    for i in plan {
        match office.docs[i].kind {
            Kind::Doc => office.doc_session(&mut b, rng, i),
            Kind::Database => office.db_session(&mut b, rng, i),
        }
        b.think(between(rng, 300_000, 2_500_000));
    }
    b.finish()
}
