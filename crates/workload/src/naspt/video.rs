//! HD video: playback of one, two or four files, a recording, and a playback merged with a
//! recording. Multi-stream workloads are built like the paper's: each stream is generated with
//! its own timing, then all are merged by time into one ordered sequence on stream 0.

use naslab_trace::{Op, OpFlags, OpKind, Trace};
use rand::RngExt;

use crate::builder::Builder;
use crate::catalog::WorkloadInfo;
use crate::params::GenParams;
use crate::sample::Rng8;

/// The player's and recorder's request size.
const CHUNK: u64 = 256 * 1024;
/// The playback bit rate: 2.0 MB/s (NASPT paper, Table 1).
const PLAY_RATE: f64 = 2_000_000.0;
/// The recording: 1.6 GB over about fifteen minutes (section 4.1), so about 1.78 MB/s.
const RECORD_BYTES: u64 = 1_600_000_000;
const RECORD_RATE: f64 = RECORD_BYTES as f64 / 900.0;
/// How far a request's time strays from its nominal tick, either way (µs).
const JITTER_US: u64 = 3_000;
/// Chance that the player reads a block twice in a row (re-buffering); 1Play's 0.5 % non-sequential.
const REREAD_PROB: f64 = 0.0045;
/// The recorder rewrites its header block this often (writes), and once more at the end.
const HEADER_EVERY: u64 = 2048;

/// A playback workload: how many streams, how much they read in all, over how long.
#[derive(Debug, Clone, Copy)]
struct PlaySpec {
    streams: u32,
    total_bytes: u64,
    duration_s: f64,
    /// Chance that a request is late and goes out just before the next one (two in rapid
    /// succession); calibrated so the merged sequence has the published % sequential.
    double_prob: f64,
    description: &'static str,
}

/// One 1.3 GB video played through (section 4.1), about 10.8 minutes at 2.0 MB/s.
const ONE_PLAY: PlaySpec = PlaySpec {
    streams: 1,
    total_bytes: 1_300_000_000,
    duration_s: 1_300_000_000.0 / PLAY_RATE,
    double_prob: 0.05,
    description: "one 720p HD video (video.dvr-ms) played through in 256 KB reads",
};

/// Two videos for about six minutes, 1.4 GB in all (section 4.1), about 18 % sequential.
const TWO_PLAY: PlaySpec = PlaySpec {
    streams: 2,
    total_bytes: 1_400_000_000,
    duration_s: 360.0,
    double_prob: 0.11,
    description: "two HD videos played at once; the two read streams merged into one sequence",
};

/// Four videos for about 3 min 45 s, 1.3 GB in all (section 4.1), about 11 % sequential.
const FOUR_PLAY: PlaySpec = PlaySpec {
    streams: 4,
    total_bytes: 1_300_000_000,
    duration_s: 225.0,
    double_prob: 0.115,
    description: "four HD videos played at once; the four read streams merged into one sequence",
};

/// Play and record merged: four minutes twenty seconds (section 4.1).
const PLAY_RECORD_S: f64 = 260.0;
/// The record stream starts this much after the play stream (section 4.1).
const RECORD_OFFSET_US: u64 = 50_000;
const PLAY_RECORD_DOUBLE: f64 = 0.1;

fn video_name(i: u32) -> String {
    if i == 0 {
        "video.dvr-ms".to_string()
    } else {
        format!("video{}.dvr-ms", i + 1)
    }
}

/// Request times of one stream: a tick every `period_us` with jitter; some requests go out
/// late, just before the next one; never earlier than the previous request.
fn ticks(rng: &mut Rng8, n: u64, start_us: u64, period_us: f64, double_prob: f64) -> Vec<u64> {
    let nominal: Vec<u64> = (1..=n + 1)
        .map(|k| {
            let t = start_us as f64 + k as f64 * period_us;
            let j = rng.random_range(0..=2 * JITTER_US) as f64 - JITTER_US as f64;
            (t + j).max(start_us as f64 + 1.0) as u64
        })
        .collect();
    let mut out = Vec::with_capacity(n as usize);
    let mut last = start_us;
    for k in 0..n as usize {
        let mut t = nominal[k];
        if rng.random_bool(double_prob) {
            t = nominal[k + 1].saturating_sub(rng.random_range(300..1_500));
        }
        last = last.max(t);
        out.push(last);
    }
    out
}

/// Ops of one player reading `[0, size)` of `file`: the first block, the last block (the
/// index), then the rest in order; sometimes a block twice.
fn player(
    rng: &mut Rng8,
    file: u32,
    size: u64,
    rate: f64,
    start_us: u64,
    double_prob: f64,
) -> Vec<Op> {
    let mut blocks: Vec<(u64, u64)> = vec![(0, CHUNK.min(size))];
    if size > 2 * CHUNK {
        blocks.push((size - CHUNK, CHUNK));
    }
    let mut off = CHUNK.min(size);
    while off < size {
        let len = CHUNK.min(size - off);
        blocks.push((off, len));
        off += len;
    }
    let period = CHUNK as f64 * 1e6 / rate;
    let times = ticks(rng, blocks.len() as u64, start_us, period, double_prob);
    let mut ops = Vec::with_capacity(blocks.len() + 8);
    let mut open = Op::new(0, start_us, OpKind::Open, file);
    open.flags = OpFlags::READ;
    ops.push(open);
    let mut last = start_us;
    for (&(offset, len), &t) in blocks.iter().zip(&times) {
        last = last.max(t);
        let mut read = Op::new(0, last, OpKind::Read, file);
        read.offset = offset;
        read.len = len;
        ops.push(read);
        if rng.random_bool(REREAD_PROB) {
            last += 200;
            read.t_us = last;
            ops.push(read);
        }
    }
    let end = ops.last().map_or(start_us, |o| o.t_us) + period as u64 / 2;
    ops.push(Op::new(0, end, OpKind::Close, file));
    ops
}

/// Ops of one recorder writing `bytes` to the new file `file` in order, rewriting the header
/// block every [`HEADER_EVERY`] writes and at the end, then flushing.
fn recorder(rng: &mut Rng8, file: u32, bytes: u64, start_us: u64, double_prob: f64) -> Vec<Op> {
    let mut blocks: Vec<(u64, u64)> = Vec::new();
    let mut off = 0;
    let mut n = 0;
    while off < bytes {
        let len = CHUNK.min(bytes - off);
        blocks.push((off, len));
        off += len;
        n += 1;
        if n % HEADER_EVERY == 0 && off < bytes {
            blocks.push((0, CHUNK.min(off)));
        }
    }
    blocks.push((0, CHUNK.min(bytes)));
    let period = CHUNK as f64 * 1e6 / RECORD_RATE;
    let times = ticks(rng, blocks.len() as u64, start_us, period, double_prob);
    let mut ops = Vec::with_capacity(blocks.len() + 4);
    let mut create = Op::new(0, start_us, OpKind::Create, file);
    create.flags = OpFlags::READ | OpFlags::WRITE;
    ops.push(create);
    for (&(offset, len), &t) in blocks.iter().zip(&times) {
        let mut write = Op::new(0, t, OpKind::Write, file);
        write.offset = offset;
        write.len = len;
        ops.push(write);
    }
    let end = ops.last().map_or(start_us, |o| o.t_us) + 1_000;
    ops.push(Op::new(0, end, OpKind::Fsync, file));
    ops.push(Op::new(0, end + 5_000, OpKind::Close, file));
    ops
}

/// Merges per-stream ops by time (stable, so each stream keeps its order) onto the builder.
fn merge(b: &mut Builder, streams: Vec<Vec<Op>>) {
    let mut all: Vec<Op> = streams.into_iter().flatten().collect();
    all.sort_by_key(|op| op.t_us);
    for op in all {
        b.push(op);
    }
}

/// HDVideo_1Play.
pub(crate) fn one_play(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    play(info, params, rng, ONE_PLAY)
}

/// HDVideo_2Play.
pub(crate) fn two_play(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    play(info, params, rng, TWO_PLAY)
}

/// HDVideo_4Play.
pub(crate) fn four_play(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    play(info, params, rng, FOUR_PLAY)
}

/// HDVideo_1Play, HDVideo_2Play and HDVideo_4Play.
fn play(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8, spec: PlaySpec) -> Trace {
    let mut b = Builder::new(info.name, spec.description, params);
    let per_stream = spec.total_bytes / spec.streams as u64;
    let rate = per_stream as f64 / spec.duration_s;
    let period = CHUNK as f64 * 1e6 / rate;
    let files: Vec<_> = (0..spec.streams)
        .map(|i| b.media_file(video_name(i), per_stream))
        .collect();
    let streams = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let start = (i as f64 * period / spec.streams as f64) as u64;
            player(rng, f.id, f.size, rate, start, spec.double_prob)
        })
        .collect();
    merge(&mut b, streams);
    b.finish()
}

/// HDVideo_1Record: a new 1.6 GB file written in order.
pub(crate) fn record(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    let mut b = Builder::new(
        info.name,
        "about fifteen minutes of 720p HD broadcast recorded to a new file in 256 KB writes",
        params,
    );
    let file = b.new_file("recording.dvr-ms");
    let bytes = b.scale().bytes(RECORD_BYTES);
    let ops = recorder(rng, file, bytes, 0, ONE_PLAY.double_prob);
    merge(&mut b, vec![ops]);
    b.finish()
}

/// HDVideo_1Play_1Record: one playback and one recording, the recording 50 ms behind, merged.
pub(crate) fn play_record(info: &WorkloadInfo, params: &GenParams, rng: &mut Rng8) -> Trace {
    let mut b = Builder::new(
        info.name,
        "one HD video played while another is recorded; the two streams merged into one sequence",
        params,
    );
    let play_bytes = (PLAY_RATE * PLAY_RECORD_S) as u64;
    let record_bytes = b.scale().bytes((RECORD_RATE * PLAY_RECORD_S) as u64);
    let video = b.media_file(video_name(0), play_bytes);
    let rec = b.new_file("recording.dvr-ms");
    let play_ops = player(rng, video.id, video.size, PLAY_RATE, 0, PLAY_RECORD_DOUBLE);
    let rec_ops = recorder(rng, rec, record_bytes, RECORD_OFFSET_US, PLAY_RECORD_DOUBLE);
    merge(&mut b, vec![play_ops, rec_ops]);
    b.finish()
}
