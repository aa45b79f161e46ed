//! HDVideo_RecordThenPlay: the recording of HDVideo_1Record as a warm-up, then the
//! playback of HDVideo_1Play reading that very recording as the measured phase. It
//! answers the paper's question (section 7) directly: how fast does a video play that
//! a client wrote to this server the way it writes?

use naslab_trace::{FileDecl, FileKind, Op, OpKind, Prepare, Trace};

use crate::catalog::{WorkloadInfo, lookup};
use crate::params::GenParams;
use crate::sample::Rng8;

/// The workload's name.
pub(crate) const NAME: &str = "HDVideo_RecordThenPlay";

/// The published workload `name`, generated at `params` exactly as on its own.
fn published(name: &str, params: &GenParams) -> Trace {
    lookup(name)
        .unwrap_or_else(|| panic!("{name} is not in the catalog"))
        .generate(params)
}

/// Builds the trace from the two published workloads at `params` (each with its own random
/// source, so its part is the very trace it generates alone).
pub(crate) fn build(_info: &WorkloadInfo, params: &GenParams, _rng: &mut Rng8) -> Trace {
    let record = published("HDVideo_1Record", params);
    let play = published("HDVideo_1Play", params);
    let rec_file = record
        .files
        .iter()
        .find(|f| f.kind == FileKind::File && !f.exists)
        .expect("HDVideo_1Record creates its recording");
    let recorded_bytes = record
        .ops
        .iter()
        .filter(|o| o.kind == OpKind::Write)
        .map(|o| o.offset + o.len)
        .max()
        .unwrap_or(0);
    let video = play
        .files
        .iter()
        .find(|f| f.kind == FileKind::File && f.exists)
        .expect("HDVideo_1Play reads its video");
    let mut t = Trace::new(NAME);
    t.header.description = Some(format!(
        "warm-up: HDVideo_1Record writes {}; measured: HDVideo_1Play's reads, played from that recording",
        rec_file.path
    ));
    t.header.generator = Some(format!(
        "naslab-workload derived/{NAME}: HDVideo_1Record then HDVideo_1Play (seed {}, scale {})",
        params.seed, params.scale
    ));
    t.files.push(FileDecl {
        id: rec_file.id,
        path: rec_file.path.clone(),
        kind: FileKind::File,
        size: 0,
        exists: false,
        prepare: Prepare::Stream,
    });
    let warm_end_us = record.ops.iter().map(|o| o.t_us).max().unwrap_or(0);
    for op in &record.ops {
        let mut o = *op;
        o.warmup = true;
        o.stream = 0;
        t.ops.push(o);
    }
    // The player reads the recording wherever it read its own video; reads past the
    // recording's end (when the video is longer) are dropped.
    for op in &play.ops {
        if op.file != video.id {
            continue;
        }
        let mut o: Op = *op;
        o.file = rec_file.id;
        o.stream = 0;
        o.warmup = false;
        o.t_us += warm_end_us;
        if o.kind == OpKind::Read {
            if o.offset >= recorded_bytes {
                continue;
            }
            o.len = o.len.min(recorded_bytes - o.offset);
        }
        t.ops.push(o);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_in_the_warm_up_and_plays_the_recording() {
        let params = GenParams {
            seed: 1,
            scale: 0.001,
        };
        let t = crate::generate(NAME, &params).unwrap();
        assert_eq!(t.files.len(), 1);
        let warm = t.ops.iter().filter(|o| o.warmup).count();
        let measured: Vec<_> = t.ops.iter().filter(|o| !o.warmup).collect();
        assert!(warm > 3 && measured.len() > 3);
        assert!(t.ops.iter().take(warm).all(|o| o.warmup), "warm-up first");
        assert!(measured.iter().all(|o| o.kind != OpKind::Write));
        assert_eq!(measured[0].kind, OpKind::Open);
    }

    #[test]
    fn its_warm_up_is_the_published_recording_as_generated_alone() {
        let params = GenParams {
            seed: 3,
            scale: 0.002,
        };
        let t = crate::generate(NAME, &params).unwrap();
        let record = crate::generate("HDVideo_1Record", &params).unwrap();
        let warm: Vec<Op> = t.ops.iter().filter(|o| o.warmup).copied().collect();
        let alone: Vec<Op> = record
            .ops
            .iter()
            .map(|o| Op {
                warmup: true,
                stream: 0,
                ..*o
            })
            .collect();
        assert_eq!(warm, alone);
        // Every measured read lies inside what the warm-up wrote.
        let written = alone
            .iter()
            .filter(|o| o.kind == OpKind::Write)
            .map(|o| o.offset + o.len)
            .max()
            .unwrap();
        assert!(
            t.ops
                .iter()
                .filter(|o| !o.warmup && o.kind == OpKind::Read)
                .all(|o| o.offset + o.len <= written && o.len > 0)
        );
    }
}
