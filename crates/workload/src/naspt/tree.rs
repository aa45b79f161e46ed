//! The directory tree of an office-suite installation (program files, help, templates, themes,
//! clip art, media): 2833 files, 247 MB at scale 1, used by both directory copies.

use std::collections::BTreeSet;

use rand::{RngExt, SeedableRng};

use crate::sample::{Rng8, lognormal, pick};

/// Files in the tree (NASPT paper, Table 1 and section 4.1).
pub(crate) const FILES: usize = 2833;
/// Bytes in the tree at scale 1 (section 4.1).
pub(crate) const BYTES: u64 = 247_000_000;
/// The copy's transfer size.
pub(crate) const CHUNK: u64 = 64 * 1024;
/// Transfers a copy of the tree takes: 247 MB at an average of 41.4 KB (section 4.1).
const TARGET_TRANSFERS: f64 = BYTES as f64 / 41_400.0;

const ROOT: &str = "OfficeSuite";

/// How the files of a directory are named.
#[derive(Clone, Copy)]
enum Names {
    /// Clip-art style codes: a prefix, five digits and an underscore.
    Code(&'static str),
    /// Made-up program-file names.
    Program,
    /// Two words, as template and stationery names are.
    Words,
    /// The fixed set of files every theme holds.
    Theme,
}

/// Extensions a directory's files take, with weights.
type Exts = &'static [(&'static str, u32)];

struct DirSpec {
    path: &'static str,
    files: usize,
    names: Names,
    exts: Exts,
}

const fn d(path: &'static str, files: usize, names: Names, exts: Exts) -> DirSpec {
    DirSpec {
        path,
        files,
        names,
        exts,
    }
}

/// The tree's directories below the root; "Clipart/Pub60Cor" takes whatever count is left.
const DIRS: &[DirSpec] = &[
    d(
        "",
        6,
        Names::Program,
        &[("ini", 2), ("txt", 2), ("msi", 1), ("inf", 1)],
    ),
    d(
        "Setup",
        22,
        Names::Program,
        &[("cab", 6), ("msi", 2), ("mst", 2), ("ini", 2)],
    ),
    d(
        "Office11",
        190,
        Names::Program,
        &[
            ("dll", 12),
            ("exe", 2),
            ("olb", 1),
            ("xll", 1),
            ("ppa", 1),
            ("xml", 2),
        ],
    ),
    d(
        "Office11/1033",
        140,
        Names::Program,
        &[
            ("dll", 8),
            ("chm", 6),
            ("xml", 4),
            ("htm", 2),
            ("hlp", 1),
            ("cnt", 1),
        ],
    ),
    d(
        "Office11/Addins",
        30,
        Names::Program,
        &[("xla", 3), ("dll", 2), ("ppa", 1)],
    ),
    d("Office11/Library", 6, Names::Program, &[("xla", 1)]),
    d(
        "Office11/Library/Analysis",
        14,
        Names::Program,
        &[("xla", 2), ("xll", 1), ("dll", 1)],
    ),
    d(
        "Office11/Library/Solver",
        4,
        Names::Program,
        &[("xla", 1), ("dll", 1)],
    ),
    d(
        "Office11/Samples",
        14,
        Names::Words,
        &[("mdb", 2), ("xls", 3), ("doc", 2), ("ppt", 1)],
    ),
    d(
        "Office11/Bitmaps/Dbwiz",
        95,
        Names::Code("DB"),
        &[("gif", 3), ("jpg", 2), ("bmp", 1)],
    ),
    d(
        "Office11/Bitmaps/Styles",
        48,
        Names::Code("ST"),
        &[("gif", 2), ("jpg", 1)],
    ),
    d(
        "Office11/Headers",
        36,
        Names::Words,
        &[("htm", 2), ("gif", 1)],
    ),
    d("Office11/Forms/1033", 28, Names::Words, &[("oft", 1)]),
    d(
        "Office11/Queries",
        9,
        Names::Words,
        &[("dqy", 2), ("iqy", 1)],
    ),
    d(
        "Office11/Stationery/1033",
        64,
        Names::Words,
        &[("htm", 1), ("gif", 2), ("jpg", 1)],
    ),
    d(
        "Office11/Proof",
        18,
        Names::Program,
        &[("lex", 2), ("dll", 1)],
    ),
    d(
        "Templates/1033",
        60,
        Names::Words,
        &[("dot", 3), ("xlt", 2), ("pot", 1), ("mdz", 1)],
    ),
    d("Templates/1033/Letters", 34, Names::Words, &[("dot", 1)]),
    d("Templates/1033/Memos", 18, Names::Words, &[("dot", 1)]),
    d("Templates/1033/Reports", 22, Names::Words, &[("dot", 1)]),
    d(
        "Templates/1033/Publications",
        26,
        Names::Words,
        &[("dot", 1)],
    ),
    d(
        "Templates/1033/Presentations",
        42,
        Names::Words,
        &[("pot", 1)],
    ),
    d(
        "Templates/PresentationDesigns",
        66,
        Names::Words,
        &[("pot", 1)],
    ),
    d("Media/Autoshap", 60, Names::Code("AS"), &[("wmf", 1)]),
    d("Media/Lines", 44, Names::Code("LN"), &[("gif", 1)]),
    d("Media/Bullets", 72, Names::Code("BL"), &[("gif", 1)]),
    d("Media/Sounds", 38, Names::Words, &[("wav", 1)]),
    d(
        "Media/CagCat10",
        520,
        Names::Code("J0"),
        &[("wmf", 4), ("gif", 2), ("jpg", 2), ("mpf", 1)],
    ),
    d("Clipart/Photos", 120, Names::Code("PH"), &[("jpg", 1)]),
    d(
        "Clipart/Pub60Cor",
        0,
        Names::Code("BD"),
        &[("wmf", 5), ("gif", 2), ("jpg", 1)],
    ),
    d("Fonts", 36, Names::Program, &[("ttf", 1)]),
];

/// The themes, each a directory of [`THEME_FILES`].
const THEMES: &[&str] = &[
    "Artsy",
    "Blends",
    "Blueprint",
    "BoldStripes",
    "Capsules",
    "Cascade",
    "CitrusPunch",
    "Compass",
    "Edge",
    "Expedition",
    "Glacier",
    "Global",
    "Ice",
    "Industrial",
    "Journal",
    "Layers",
    "LooseGesture",
    "Nature",
    "Network",
    "Papyrus",
    "Pixel",
    "Poetic",
    "Profile",
    "Radial",
    "RicePaper",
    "Ripple",
    "Romanesque",
    "Sandstone",
    "Slate",
    "Spring",
    "StraightEdge",
    "Strategic",
    "SumiPainting",
    "Topo",
    "Travel",
    "Willow",
    "Zero",
    "Canvas",
    "Checkers",
    "Echo",
];
const THEME_FILES: &[&str] = &[
    "theme.inf",
    "theme.css",
    "bullet1.gif",
    "bullet2.gif",
    "bullet3.gif",
    "rule.gif",
    "back.jpg",
];

const WORDS_A: &[&str] = &[
    "Elegant",
    "Contemporary",
    "Professional",
    "Classic",
    "Simple",
    "Modern",
    "Formal",
    "Casual",
    "Bold",
    "Urban",
    "Garden",
    "Ocean",
    "Harvest",
    "Summit",
    "Crystal",
    "Studio",
    "Business",
    "Family",
    "Holiday",
    "Company",
    "Project",
    "Quarterly",
    "Annual",
    "Personal",
];
const WORDS_B: &[&str] = &[
    "Letter",
    "Fax",
    "Memo",
    "Report",
    "Resume",
    "Brochure",
    "Newsletter",
    "Invoice",
    "Agenda",
    "Calendar",
    "Budget",
    "Expenses",
    "Timesheet",
    "Proposal",
    "Manual",
    "Directory",
    "Card",
    "Flyer",
    "Catalog",
    "Design",
    "Review",
    "Plan",
    "Order",
    "Minutes",
];
const SYLLABLES: &[&str] = &[
    "ka", "re", "mo", "ti", "lu", "sen", "val", "dor", "pix", "tra", "nel", "cor", "fi", "gra",
    "pho", "xen", "bri", "om", "sta", "ver",
];

/// Typical size (median bytes, log spread) of each extension before the tree is calibrated.
fn typical_size(ext: &str) -> (f64, f64) {
    match ext {
        "cab" => (6e6, 0.8),
        "msi" => (1.5e6, 0.6),
        "exe" => (700e3, 1.0),
        "lex" => (900e3, 0.6),
        "dll" => (220e3, 1.2),
        "olb" | "chm" => (250e3, 0.9),
        "xla" | "hlp" => (120e3, 1.0),
        "pot" | "mdb" => (150e3, 0.9),
        "ttf" | "xll" | "mdz" => (70e3, 0.9),
        "ppa" | "xls" | "doc" | "ppt" | "bmp" => (45e3, 0.9),
        "dot" | "xlt" | "wav" | "oft" => (30e3, 0.9),
        "jpg" => (18e3, 1.0),
        "wmf" => (9e3, 1.1),
        "xml" | "cnt" | "mst" => (6e3, 1.0),
        "htm" => (4e3, 0.8),
        "gif" | "mpf" => (2.5e3, 1.0),
        "css" | "txt" | "inf" | "ini" => (1.5e3, 0.8),
        _ => (400.0, 0.7), // dqy, iqy and the like
    }
}

/// One file of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TreeFile {
    /// Path from the workload directory.
    pub path: String,
    /// Size at scale 1.
    pub size: u64,
}

/// The installation tree: directories parents first, each with its files.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    /// Every directory (the root included), a parent always before its children.
    pub dirs: Vec<String>,
    /// The files of each directory, by the index of `dirs`.
    pub files: Vec<Vec<TreeFile>>,
}

fn program_name(rng: &mut Rng8) -> String {
    let n = rng.random_range(2..=3);
    let mut s: String = (0..n)
        .map(|_| SYLLABLES[rng.random_range(0..SYLLABLES.len())])
        .collect();
    if rng.random_bool(0.3) {
        s.push_str(if rng.random_bool(0.5) { "32" } else { "intl" });
    }
    s
}

fn stem(rng: &mut Rng8, names: Names, i: usize) -> String {
    match names {
        Names::Code(prefix) => format!("{prefix}{:05}_", rng.random_range(0..100_000)),
        Names::Program => program_name(rng),
        Names::Words => format!(
            "{}{}",
            WORDS_A[rng.random_range(0..WORDS_A.len())],
            WORDS_B[rng.random_range(0..WORDS_B.len())]
        ),
        Names::Theme => THEME_FILES[i % THEME_FILES.len()].to_string(),
    }
}

fn dir_path(sub: &str) -> String {
    if sub.is_empty() {
        ROOT.to_string()
    } else {
        format!("{ROOT}/{sub}")
    }
}

/// Names and raw sizes of every file, in directory order.
fn raw_tree(rng: &mut Rng8) -> Vec<(String, Vec<(String, f64)>)> {
    let fixed: usize =
        DIRS.iter().map(|d| d.files).sum::<usize>() + THEMES.len() * THEME_FILES.len();
    let mut out = Vec::new();
    let mut specs: Vec<(String, usize, Names, Exts)> = DIRS
        .iter()
        .map(|d| {
            let count = if d.files == 0 { FILES - fixed } else { d.files };
            (dir_path(d.path), count, d.names, d.exts)
        })
        .collect();
    for theme in THEMES {
        specs.push((
            dir_path(&format!("Themes/{theme}")),
            THEME_FILES.len(),
            Names::Theme,
            &[],
        ));
    }
    for (path, count, names, exts) in specs {
        let mut taken = BTreeSet::new();
        let mut files = Vec::with_capacity(count);
        for i in 0..count {
            let name = if let Names::Theme = names {
                stem(rng, names, i)
            } else {
                let ext = pick(rng, exts);
                let base = stem(rng, names, i);
                let mut name = format!("{base}.{ext}");
                let mut n = 2;
                while taken.contains(&name) {
                    name = format!("{base}{n}.{ext}");
                    n += 1;
                }
                name
            };
            taken.insert(name.clone());
            let ext = name.rsplit('.').next().unwrap_or("");
            let (median, sigma) = typical_size(ext);
            let size = lognormal(rng, median, sigma).clamp(40.0, 40e6);
            files.push((format!("{path}/{name}"), size));
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        out.push((path, files));
    }
    out
}

/// Sizes `raw^gamma`, rescaled so they sum to [`BYTES`].
fn calibrated(raw: &[f64], gamma: f64) -> Vec<u64> {
    let powered: Vec<f64> = raw.iter().map(|s| s.powf(gamma)).collect();
    let total: f64 = powered.iter().sum();
    powered
        .iter()
        .map(|s| ((s * BYTES as f64 / total).round() as u64).max(1))
        .collect()
}

fn transfers(sizes: &[u64]) -> u64 {
    sizes.iter().map(|s| s.div_ceil(CHUNK).max(1)).sum()
}

/// Builds the tree for `seed` (the same tree for both copy directions). Sizes are spread so a
/// 64 KB copy of the tree takes the published number of transfers (average 41.4 KB).
pub(crate) fn build(seed: u64) -> Tree {
    let mut rng = Rng8::seed_from_u64(seed ^ 0x0ff1_ce5e_7000_0001);
    let raw = raw_tree(&mut rng);
    let flat: Vec<f64> = raw
        .iter()
        .flat_map(|(_, f)| f.iter().map(|x| x.1))
        .collect();
    let gamma = (50..=150)
        .map(|g| g as f64 / 100.0)
        .min_by(|a, b| {
            let da = (transfers(&calibrated(&flat, *a)) as f64 - TARGET_TRANSFERS).abs();
            let db = (transfers(&calibrated(&flat, *b)) as f64 - TARGET_TRANSFERS).abs();
            da.total_cmp(&db)
        })
        .unwrap_or(1.0);
    let mut sizes = calibrated(&flat, gamma).into_iter();
    let mut dirs: BTreeSet<String> = BTreeSet::new();
    for (path, _) in &raw {
        let mut p = path.as_str();
        dirs.insert(p.to_string());
        while let Some((parent, _)) = p.rsplit_once('/') {
            dirs.insert(parent.to_string());
            p = parent;
        }
    }
    let dirs: Vec<String> = dirs.into_iter().collect();
    let mut files = vec![Vec::new(); dirs.len()];
    for (path, list) in raw {
        let i = dirs.binary_search(&path).unwrap_or(0);
        for (file, _) in list {
            files[i].push(TreeFile {
                path: file,
                size: sizes.next().unwrap_or(1),
            });
        }
    }
    Tree { dirs, files }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_has_the_published_shape() {
        let t = build(1);
        let sizes: Vec<u64> = t.files.iter().flatten().map(|f| f.size).collect();
        assert_eq!(sizes.len(), FILES);
        let total: u64 = sizes.iter().sum();
        assert!((total as f64 - BYTES as f64).abs() < 1e5, "{total}");
        let n = transfers(&sizes) as f64;
        assert!((n / TARGET_TRANSFERS - 1.0).abs() < 0.03, "{n}");
        let paths: BTreeSet<&str> = t.files.iter().flatten().map(|f| f.path.as_str()).collect();
        assert_eq!(paths.len(), FILES, "paths are unique");
        for (i, d) in t.dirs.iter().enumerate() {
            if let Some((parent, _)) = d.rsplit_once('/') {
                assert!(
                    t.dirs[..i].iter().any(|p| p == parent),
                    "{d} before its parent"
                );
            }
        }
    }
}
