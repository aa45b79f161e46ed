//! ContentCreation: a video editor making a movie from photos, clips and music. The project and
//! title templates are loaded, the sources imported (header probes, thumbnails, audio
//! waveforms), preview segments rendered to temporary files while the project is saved now and
//! then, and finally the movie rendered into one large output file written in bits and pieces
//! at scattered offsets, some well beyond its current end.

use naslab_trace::{OpFlags, Trace};
use rand::RngExt;

use crate::builder::{Builder, FileRef};
use crate::catalog::WorkloadInfo;
use crate::params::GenParams;
use crate::sample::{Rng8, between, log_uniform, offset_in, pick};

/// The session's average rate, bytes read and written over its length (Table 1: 0.054 MB/s).
const RATE: f64 = 0.054e6;
const PHOTOS: usize = 40;
const CLIPS: usize = 14;
const TRACKS: usize = 5;
const TITLES: usize = 10;
const EFFECTS: [&str; 9] = [
    "Fade", "Dissolve", "Wipe", "Iris", "Slide", "Zoom", "Blur", "Sepia", "Ripple",
];
/// Clips that get a thumbnail strip in the cache (the others' strips are already there).
const STRIPS: usize = 8;
const RENDERS: usize = 4;

/// Header probe sizes of sources: mostly small fields, often a whole header block of about
/// 1.3 KB (the published median read is 1300 bytes), sometimes more.
const PROBES: [((u64, u64), u32); 3] =
    [((24, 1_200), 72), ((1_200, 1_400), 20), ((1_400, 5_000), 8)];
/// Sizes of the editor's medium writes (project saves, caches, output pieces).
const PIECES: [(u64, u32); 6] = [
    (4096, 18),
    (8192, 16),
    (12288, 22),
    (16384, 14),
    (32768, 12),
    (65536, 18),
];
/// Sizes of the output file's small patches (paper, figure 3: 1 KB and 512-byte writes).
const PATCHES: [(u64, u32); 2] = [(512, 45), (1024, 55)];
const CHUNK: u64 = 64 * 1024;

/// Preview renders: segments and 64 KB writes per segment (scale 1).
const RENDER_SEGMENTS: u64 = 275;
const RENDER_WRITES: (u64, u64) = (3, 9);
/// Chance that a preview segment first probes its source.
const EDIT_PROBE: f64 = 0.15;
/// Project autosaves during editing.
const AUTOSAVES: u64 = 14;
/// Output render: bursts, and in each burst, source reads and writes.
const OUTPUT_BURSTS: u64 = 330;
const BURST_WRITES: (u64, u64) = (4, 14);
/// Chance that an output write continues where the previous one ended (11 % sequential).
const OUTPUT_CONTINUE: f64 = 0.09;
/// Chance that an output write is a small patch rather than a piece.
const OUTPUT_PATCH: f64 = 0.62;

fn probe_len(rng: &mut Rng8) -> u64 {
    let (lo, hi) = pick(rng, &PROBES);
    log_uniform(rng, lo, hi)
}

/// Reads a few small headers of a source, at its start and sometimes near its end.
fn probe_source(b: &mut Builder, rng: &mut Rng8, f: FileRef, probes: u64) {
    for i in 0..probes {
        let len = probe_len(rng).min(f.size);
        let offset = if i == 0 {
            0
        } else if rng.random_bool(0.3) {
            f.size - len
        } else {
            offset_in(rng, f.size.min(256 * 1024), len, 2)
        };
        b.read(f.id, offset, len);
        b.wait(between(rng, 500, 4_000));
    }
}

/// Writes `total` bytes to `file` from `start` in medium pieces; returns the end.
fn write_pieces(b: &mut Builder, rng: &mut Rng8, file: u32, start: u64, total: u64) -> u64 {
    let mut off = start;
    let end = start + total;
    while off < end {
        let len = pick(rng, &PIECES).min(end - off);
        b.write(file, off, len);
        b.wait(between(rng, 200, 2_000));
        off += len;
    }
    end
}

/// Loading the project: the project file and the title and effect templates.
fn load(b: &mut Builder, rng: &mut Rng8, project: FileRef, templates: &[FileRef]) {
    b.open(project.id, OpFlags::READ);
    b.read(project.id, 0, 512.min(project.size));
    let mut off = 512.min(project.size);
    while off < project.size {
        let len = pick(rng, &[(4096, 2), (8192, 2), (16384, 3)]).min(project.size - off);
        b.read(project.id, off, len);
        b.wait(between(rng, 100, 1_000));
        off += len;
    }
    b.close(project.id);
    for &t in templates {
        b.open(t.id, OpFlags::READ);
        let n = between(rng, 1, 2);
        probe_source(b, rng, t, n);
        b.close(t.id);
    }
    b.think(between(rng, 10_000_000, 30_000_000));
}

/// Importing the sources: header probes and a preview read of each, a waveform of each track,
/// a thumbnail strip of the first clips.
fn import(
    b: &mut Builder,
    rng: &mut Rng8,
    photos: &[FileRef],
    clips: &[FileRef],
    tracks: &[(FileRef, u32)],
    strips: &[u32],
) {
    let scale = b.scale();
    for &p in photos {
        b.open(p.id, OpFlags::READ);
        let n = between(rng, 2, 4);
        probe_source(b, rng, p, n);
        if rng.random_bool(0.5) {
            let len = 4096.min(p.size);
            b.read(p.id, offset_in(rng, p.size, len, 512), len);
        }
        b.close(p.id);
        b.think(between(rng, 50_000, 400_000));
    }
    for (i, &c) in clips.iter().enumerate() {
        b.open(c.id, OpFlags::READ);
        let n = between(rng, 3, 6);
        probe_source(b, rng, c, n);
        let start = 2 * CHUNK.min(c.size / 4);
        let end = (start + scale.bytes(2 * CHUNK)).min(c.size);
        b.read_range(c.id, start, end, CHUNK, 30e6);
        if let Some(&strip) = strips.get(i) {
            b.create(strip);
            let total = scale.bytes(between(rng, 60_000, 180_000));
            write_pieces(b, rng, strip, 0, total);
            b.close(strip);
        }
        b.close(c.id);
        b.think(between(rng, 200_000, 1_500_000));
    }
    for &(t, peak) in tracks {
        b.open(t.id, OpFlags::READ);
        let n = between(rng, 2, 4);
        probe_source(b, rng, t, n);
        b.create(peak);
        let mut src = 0;
        let mut dst = 0;
        for _ in 0..scale.count(6) {
            let len = CHUNK.min(t.size - src.min(t.size));
            if len > 0 {
                b.read(t.id, src, len);
                src += len;
            }
            let total = scale.bytes(between(rng, 20_000, 60_000));
            dst = write_pieces(b, rng, peak, dst, total);
        }
        b.close(peak);
        b.close(t.id);
        b.think(between(rng, 300_000, 2_000_000));
    }
}

/// Saves the project: rewritten in place in medium pieces (the first save copies it to a backup).
fn save(b: &mut Builder, rng: &mut Rng8, project: FileRef, backup: Option<u32>) {
    if let Some(bak) = backup {
        b.open(project.id, OpFlags::READ);
        b.create(bak);
        let mut off = 0;
        while off < project.size {
            let len = (16 * 1024).min(project.size - off);
            b.read(project.id, off, len);
            b.write(bak, off, len);
            b.wait(between(rng, 200, 800));
            off += len;
        }
        b.close(bak);
        b.close(project.id);
    }
    b.open(project.id, OpFlags::READ | OpFlags::WRITE);
    write_pieces(b, rng, project.id, 0, project.size);
    b.close(project.id);
}

/// Editing: preview segments rendered to temporary files from stills and clips, autosaves.
fn edit(
    b: &mut Builder,
    rng: &mut Rng8,
    project: FileRef,
    backup: u32,
    renders: &[u32],
    photos: &[FileRef],
    clips: &[FileRef],
) {
    let scale = b.scale();
    let segments = scale.count(RENDER_SEGMENTS).max(renders.len() as u64);
    let per_render = segments.div_ceil(renders.len() as u64);
    let saves_every = (segments / scale.count(AUTOSAVES)).max(1);
    let mut offsets = vec![0u64; renders.len()];
    let mut saved = false;
    for seg in 0..segments {
        let i = ((seg / per_render) as usize).min(renders.len() - 1);
        let file = renders[i];
        if seg % per_render == 0 {
            b.create(file);
        }
        let source = if rng.random_bool(0.6) {
            photos[rng.random_range(0..photos.len())]
        } else {
            clips[rng.random_range(0..clips.len())]
        };
        if rng.random_bool(EDIT_PROBE) {
            b.open(source.id, OpFlags::READ);
            probe_source(b, rng, source, 1);
            b.close(source.id);
        }
        for _ in 0..between(rng, RENDER_WRITES.0, RENDER_WRITES.1) {
            b.write(file, offsets[i], CHUNK);
            b.wait(between(rng, 1_000, 8_000));
            offsets[i] += CHUNK;
        }
        if seg % per_render == per_render - 1 || seg == segments - 1 {
            b.close(file);
        }
        if seg % saves_every == saves_every - 1 {
            save(b, rng, project, (!saved).then_some(backup));
            saved = true;
            b.think(between(rng, 5_000_000, 40_000_000));
        }
    }
}

/// The final render into the output file: bursts of source reads and scattered output writes.
fn render(
    b: &mut Builder,
    rng: &mut Rng8,
    output: u32,
    clips: &[FileRef],
    tracks: &[(FileRef, u32)],
) {
    let scale = b.scale();
    let mut sources: Vec<FileRef> = clips.to_vec();
    sources.extend(tracks.iter().map(|t| t.0));
    for s in &sources {
        b.open(s.id, OpFlags::READ);
    }
    let mut cursor = vec![0u64; sources.len()];
    b.create(output);
    let mut eof = 0u64;
    for burst in 0..scale.count(OUTPUT_BURSTS) {
        let k = rng.random_range(0..sources.len());
        let s = sources[k];
        if burst % 4 == 0 {
            // Every fourth burst pulls the next stretch of a source.
            let len =
                (between(rng, CHUNK, 2 * CHUNK) / 4096 * 4096).min(s.size - cursor[k].min(s.size));
            if len > 0 {
                b.read(s.id, cursor[k], len);
                cursor[k] += len;
            }
        } else if rng.random_bool(0.4) {
            let len = probe_len(rng).min(s.size);
            b.read(s.id, offset_in(rng, s.size, len, 2), len);
        }
        let mut last_end: Option<u64> = None;
        for _ in 0..between(rng, BURST_WRITES.0, BURST_WRITES.1) {
            let len = if rng.random_bool(OUTPUT_PATCH) {
                pick(rng, &PATCHES)
            } else {
                pick(rng, &PIECES)
            };
            let offset = match last_end {
                Some(end) if rng.random_bool(OUTPUT_CONTINUE) => end,
                _ => {
                    let roll: f64 = rng.random();
                    if roll < 0.6 && eof > len {
                        offset_in(rng, eof, len, 512)
                    } else if roll < 0.9 {
                        eof + scale.bytes(log_uniform(rng, 4096, 1 << 20)) / 4096 * 4096
                    } else {
                        eof
                    }
                }
            };
            b.write(output, offset, len);
            b.wait(between(rng, 200, 3_000));
            last_end = Some(offset + len);
            eof = eof.max(offset + len);
        }
        b.think(between(rng, 1_000_000, 9_000_000));
    }
    b.fsync(output);
    b.close(output);
    for s in &sources {
        b.close(s.id);
    }
}

/// ContentCreation.
pub(crate) fn generate(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    let mut b = Builder::new(
        info.name,
        "a video editor making a movie from photos, clips and music; one large output written at scattered offsets",
        params,
    );
    let project = b.file("Project/Holiday.vep", 280_000);
    let photos: Vec<FileRef> = (0..PHOTOS)
        .map(|i| {
            b.file(
                format!("Sources/Photos/DSC_{:04}.jpg", 1187 + 3 * i),
                between(rng, 1_500_000, 3_500_000),
            )
        })
        .collect();
    let clips: Vec<FileRef> = (0..CLIPS)
        .map(|i| {
            b.file(
                format!("Sources/Video/clip{:02}.avi", i + 1),
                between(rng, 12_000_000, 45_000_000),
            )
        })
        .collect();
    let track_files: Vec<FileRef> = (0..TRACKS)
        .map(|i| {
            b.file(
                format!("Sources/Music/track{:02}.wma", i + 1),
                between(rng, 3_000_000, 6_000_000),
            )
        })
        .collect();
    let mut templates: Vec<FileRef> = (0..TITLES)
        .map(|i| {
            b.file(
                format!("Templates/Titles/title{:02}.xml", i + 1),
                between(rng, 2_000, 20_000),
            )
        })
        .collect();
    for name in EFFECTS {
        let f = b.file(
            format!("Templates/Effects/{name}.fx"),
            between(rng, 5_000, 60_000),
        );
        templates.push(f);
    }
    let output = b.new_file("Output/Holiday.wmv");
    let tracks: Vec<(FileRef, u32)> = track_files
        .iter()
        .enumerate()
        .map(|(i, &t)| (t, b.new_file(format!("Cache/track{:02}.pek", i + 1))))
        .collect();
    let strips: Vec<u32> = (0..STRIPS)
        .map(|i| b.new_file(format!("Cache/clip{:02}.thm", i + 1)))
        .collect();
    let backup = b.new_file("Project/Holiday.vep.bak");
    let renders: Vec<u32> = (0..RENDERS)
        .map(|i| b.new_file(format!("Temp/render{:04}.tmp", i + 1)))
        .collect();

    load(&mut b, rng, project, &templates);
    import(&mut b, rng, &photos, &clips, &tracks, &strips);
    edit(&mut b, rng, project, backup, &renders, &photos, &clips);
    render(&mut b, rng, output, &clips, &tracks);
    // Table 1's rate over the whole session; the idle periods take up what the busy ones
    // leave.
    b.idle_to_rate(RATE);
    b.finish()
}
