//! PhotoAlbum: a photo organizer browsing a folder of raw photos. Each photo that comes into
//! view is probed for metadata in two regions of the file, with its embedded thumbnail read in
//! 568-byte pieces in between; photos the user opens are read whole in multi-KB pieces of
//! varying length, with more metadata probes mixed in. Midway the browse starts over as new
//! pictures come into view. All reads.

use naslab_trace::{OpFlags, Trace};
use rand::RngExt;

use crate::builder::{Builder, FileRef};
use crate::catalog::WorkloadInfo;
use crate::params::GenParams;
use crate::sample::{Rng8, between, log_uniform, offset_in};

/// Raw photos (NASPT paper: 169 files, 165 of them photos).
const PHOTOS: usize = 165;
/// Photos opened and read whole; section 2.1 says 110 pictures were browsed.
const VIEWED_PER_HALF: usize = 55;
/// The first grid shows this many photos; the second pass starts over at `RESCAN_FROM`.
const FIRST_GRID: usize = 85;
const RESCAN_FROM: usize = 60;
/// Raw photo sizes at scale 1 (an 8-megapixel camera's raw files).
const PHOTO_MIN: u64 = 6_000_000;
const PHOTO_MAX: u64 = 8_600_000;
/// The thumbnail piece size (paper, section 2.1).
const THUMB_PIECE: u64 = 568;
/// Metadata probe sizes (paper: 2 to 700 bytes).
const META_MIN: u64 = 2;
const META_MAX: u64 = 700;
/// Full-view read sizes: "multi-KB sequential reads of varying length".
const VIEW_MIN: u64 = 2 * 1024;
const VIEW_MAX: u64 = 64 * 1024;
/// Chance that a metadata probe interrupts a full view after a piece.
const VIEW_PROBE_PROB: f64 = 0.075;

/// One photo's layout at the chosen scale.
struct Photo {
    file: FileRef,
    /// First metadata region: `[0, meta_a)`.
    meta_a: u64,
    /// Second metadata region: `[meta_b, meta_b + meta_b_len)`.
    meta_b: u64,
    meta_b_len: u64,
    /// The embedded thumbnail: `[thumb, thumb + thumb_len)`.
    thumb: u64,
    thumb_len: u64,
}

fn layout(b: &mut Builder, rng: &mut Rng8, path: String) -> Photo {
    let scale = b.scale();
    let file = b.file(path, between(rng, PHOTO_MIN, PHOTO_MAX));
    let size = file.size;
    let meta_a = scale.bytes(between(rng, 40_000, 64_000)).min(size);
    let thumb = (meta_a + scale.bytes(between(rng, 1_000, 30_000))).min(size.saturating_sub(1));
    let thumb_len = scale.bytes(between(rng, 9_000, 22_000)).min(size - thumb);
    let meta_b = (size as f64 * rng.random_range(0.12..0.2)) as u64;
    let meta_b_len = scale.bytes(48_000).min(size - meta_b);
    Photo {
        file,
        meta_a,
        meta_b,
        meta_b_len,
        thumb,
        thumb_len,
    }
}

/// A small metadata read in one of the two regions.
fn probe(b: &mut Builder, rng: &mut Rng8, p: &Photo) {
    let len = log_uniform(rng, META_MIN, META_MAX);
    let (start, span) = if rng.random_bool(0.6) {
        (0, p.meta_a)
    } else {
        (p.meta_b, p.meta_b_len)
    };
    let len = len.min(span.max(1)).min(p.file.size);
    let offset = (start + offset_in(rng, span, len, 2)).min(p.file.size - len);
    b.read(p.file.id, offset, len);
    b.wait(between(rng, 200, 3_000));
}

/// The photo comes into view: metadata probes around runs of 568-byte thumbnail reads.
fn scan(b: &mut Builder, rng: &mut Rng8, p: &Photo) {
    let id = p.file.id;
    b.open(id, OpFlags::READ);
    b.read(id, 0, 8.min(p.file.size));
    for _ in 0..between(rng, 2, 5) {
        probe(b, rng, p);
    }
    let end = p.thumb + p.thumb_len;
    let mut off = p.thumb;
    while off < end {
        for _ in 0..between(rng, 3, 9) {
            if off >= end {
                break;
            }
            let len = THUMB_PIECE.min(end - off);
            b.read(id, off, len);
            b.wait(between(rng, 100, 600));
            off += len;
        }
        for _ in 0..between(rng, 1, 2) {
            probe(b, rng, p);
        }
    }
    b.close(id);
    b.wait(between(rng, 2_000, 20_000));
}

/// The user opens the photo: it is read whole in pieces of varying size, probes mixed in.
fn view(b: &mut Builder, rng: &mut Rng8, p: &Photo) {
    let id = p.file.id;
    b.open(id, OpFlags::READ);
    for _ in 0..between(rng, 1, 3) {
        probe(b, rng, p);
    }
    let mut off = 0;
    while off < p.file.size {
        let len = log_uniform(rng, VIEW_MIN, VIEW_MAX).min(p.file.size - off);
        b.read(id, off, len);
        b.wait(between(rng, 300, 1_500));
        off += len;
        if rng.random_bool(VIEW_PROBE_PROB) {
            probe(b, rng, p);
        }
    }
    b.close(id);
    b.think(between(rng, 3_000_000, 8_000_000));
}

/// The organizer's own files, read when it starts.
fn startup(b: &mut Builder, rng: &mut Rng8) {
    let settings = b.file("Album/Settings.xml", 6_200);
    let catalog = b.file("Album/Catalog.db", 2_400_000);
    let previews = b.file("Album/Previews.dat", 9_500_000);
    let thumbs = b.file("Pictures/Thumbs.db", 310_000);
    b.open(settings.id, OpFlags::READ);
    b.read_range(settings.id, 0, settings.size, 4096, 20e6);
    b.close(settings.id);
    b.open(catalog.id, OpFlags::READ);
    b.read(catalog.id, 0, 4096.min(catalog.size));
    for _ in 0..b.scale().count(60) {
        let off = offset_in(rng, catalog.size, 4096, 4096);
        let end = (off + 4096 * between(rng, 1, 4)).min(catalog.size);
        b.read_range(catalog.id, off, end, 4096, 20e6);
    }
    b.close(catalog.id);
    for f in [previews, thumbs] {
        b.open(f.id, OpFlags::READ);
        b.read_range(
            f.id,
            0,
            f.size.min(b.scale().bytes(1_500_000)),
            64 * 1024,
            20e6,
        );
        b.close(f.id);
    }
}

/// PhotoAlbum.
pub(crate) fn generate(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    let mut b = Builder::new(
        info.name,
        "a photo organizer browsing 165 raw photos: metadata and thumbnail probes, then full views, all reads",
        params,
    );
    let mut photos = Vec::with_capacity(PHOTOS);
    for i in 0..PHOTOS {
        let (folder, number) = if i < 96 {
            ("2007_07_Coast", 4120 + i)
        } else {
            ("2007_08_Mountains", 210 + i)
        };
        let path = format!("Pictures/{folder}/IMG_{number:04}.CR2");
        photos.push(layout(&mut b, rng, path));
    }
    startup(&mut b, rng);
    let halves = [
        (0, FIRST_GRID, 0, FIRST_GRID),
        (RESCAN_FROM, PHOTOS, FIRST_GRID, PHOTOS),
    ];
    for (scan_from, scan_to, view_from, view_to) in halves {
        for p in &photos[scan_from..scan_to] {
            scan(&mut b, rng, p);
        }
        let candidates: Vec<usize> = (view_from..view_to).collect();
        let mut chosen: Vec<usize> =
            rand::seq::index::sample(rng, candidates.len(), VIEWED_PER_HALF)
                .into_iter()
                .map(|i| candidates[i])
                .collect();
        chosen.sort_unstable();
        for i in chosen {
            view(&mut b, rng, &photos[i]);
        }
    }
    b.finish()
}
