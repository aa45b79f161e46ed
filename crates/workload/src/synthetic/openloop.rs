//! Open-loop load for capacity sweeps. Ops arrive on a schedule fixed before the run,
//! whatever the server does, so a slow server makes ops wait (and the wait is seen)
//! instead of slowing the arrivals down:
//! - **rate**: an offered op rate spread over a number of connections, each an
//!   independent arrival process (uniform or Poisson) of its share of the rate;
//! - **users**: N copies of a workload, each on its own file set and in its own
//!   streams, each following the trace's own timing from its own start offset.
//!
//! Both make an ordinary trace whose op times are the schedule; it is replayed with
//! `--pace original`, which issues each op when due and keeps its scheduled time, so
//! the op records hold both the response time (from the scheduled start) and the
//! service time (from the actual issue).

use naslab_trace::{FileDecl, FileKind, Op, OpFlags, OpKind, Prepare, Trace};
use rand::RngExt;
use rand::SeedableRng;

use crate::sample::Rng8;

/// How the ops of one connection are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    /// Evenly, one every 1/rate; the connections' schedules interleaved.
    Uniform,
    /// As a Poisson process: independent exponential gaps of mean 1/rate.
    Poisson,
}

impl std::str::FromStr for Arrivals {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "uniform" => Ok(Arrivals::Uniform),
            "poisson" => Ok(Arrivals::Poisson),
            _ => Err(format!("unknown arrivals '{s}'; use uniform or poisson")),
        }
    }
}

impl std::fmt::Display for Arrivals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Arrivals::Uniform => "uniform",
            Arrivals::Poisson => "poisson",
        })
    }
}

/// The op mix a rate point offers: reads and writes of one size at random aligned
/// offsets in one prepared file that every connection opens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mix {
    /// Bytes per read or write.
    pub block: u64,
    /// Percent of the ops that are reads (the rest are writes).
    pub read_pct: u32,
    /// The file's size.
    pub file_bytes: u64,
}

/// One rate load point.
#[derive(Debug, Clone, PartialEq)]
pub struct RateLoad {
    /// The workload's name (it names the directory the point runs in).
    pub name: String,
    /// Offered ops per second, over all connections.
    pub ops_per_s: f64,
    /// Connections (streams), each offered `ops_per_s / connections`.
    pub connections: u32,
    /// How each connection's ops are spaced.
    pub arrivals: Arrivals,
    /// How long ops keep arriving, µs.
    pub duration_us: u64,
    /// What each op is.
    pub mix: Mix,
    /// Where the arrival times and offsets come from.
    pub seed: u64,
    /// Where a connection's first uniform arrival falls within its slot, a fraction from
    /// 0 to 1 (0.5: half a gap in). A job's clients each offer a share of the rate, client
    /// r of S at (r + 0.5) / S, so that together their arrivals fall where one client's
    /// would.
    pub phase: f64,
}

/// The name of the file a rate point works on.
pub const RATE_FILE: &str = "load.dat";

/// A rate point's trace: `RATE_FILE` prepared at the mix's size; each connection opens
/// it at time 0, issues its arrivals in `[0, duration)` and closes it at the end.
pub fn rate(load: &RateLoad) -> Trace {
    let mut trace = Trace::new(&load.name);
    trace.header.description = Some(format!(
        "{:.0} ops/s offered ({} arrivals over {} connections), {} B {}% reads over a {} B file",
        load.ops_per_s,
        load.arrivals,
        load.connections,
        load.mix.block,
        load.mix.read_pct,
        load.mix.file_bytes
    ));
    trace.header.generator = Some(format!(
        "naslab-workload sweep/rate ops_per_s={} connections={} arrivals={} seed={}",
        load.ops_per_s, load.connections, load.arrivals, load.seed
    ));
    let block = load.mix.block.max(1);
    let size = load.mix.file_bytes.max(block).next_multiple_of(block);
    trace.files.push(FileDecl {
        id: 0,
        path: RATE_FILE.into(),
        kind: FileKind::File,
        size,
        exists: true,
        prepare: Prepare::Copy,
    });
    let blocks = size / block;
    let per_conn = load.ops_per_s / f64::from(load.connections.max(1));
    let gap_ns = 1e9 / per_conn;
    let end_ns = load.duration_us as f64 * 1e3;
    let mut rng = Rng8::seed_from_u64(load.seed ^ 0x6f70_656e_6c6f_6f70);
    for c in 0..load.connections.max(1) {
        let open = Op {
            flags: OpFlags::READ | OpFlags::WRITE | OpFlags::RANDOM,
            ..Op::new(c, 0, OpKind::Open, 0)
        };
        trace.ops.push(open);
        // The connections' uniform schedules are interleaved, so the sum is uniform too;
        // the first comes `phase` of a slot after the open.
        let mut t_ns = match load.arrivals {
            Arrivals::Uniform => {
                gap_ns * (f64::from(c) + load.phase.clamp(0.0, 1.0))
                    / f64::from(load.connections.max(1))
            }
            Arrivals::Poisson => exponential(&mut rng, gap_ns),
        };
        while t_ns < end_ns {
            let kind = if rng.random_range(0..100) < load.mix.read_pct {
                OpKind::Read
            } else {
                OpKind::Write
            };
            let offset = rng.random_range(0..blocks) * block;
            trace.ops.push(Op {
                offset,
                len: block,
                ..Op::new(c, (t_ns / 1e3).round() as u64, kind, 0)
            });
            t_ns += load.arrivals.next_gap(&mut rng, gap_ns);
        }
        trace
            .ops
            .push(Op::new(c, load.duration_us, OpKind::Close, 0));
    }
    trace
}

impl Arrivals {
    /// The time to a stream's next arrival, ns, when they come `mean_ns` apart on average.
    fn next_gap(self, rng: &mut Rng8, mean_ns: f64) -> f64 {
        match self {
            Arrivals::Uniform => mean_ns,
            Arrivals::Poisson => exponential(rng, mean_ns),
        }
    }
}

/// An exponential draw of mean `mean`.
fn exponential(rng: &mut Rng8, mean: f64) -> f64 {
    let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
    -mean * u.ln()
}

/// A workload without timing (every op at one instant, as fileserver's and ingest's are)
/// given a schedule: each stream asks for its ops in order at `ops_per_s`, spaced as
/// `arrivals` (uniform: one every 1/rate, the first at 0; Poisson: exponential gaps of
/// mean 1/rate), from `seed`. What a user of a file server does when each connection
/// issues requests at a steady pace rather than as fast as the server answers.
pub fn paced(base: &Trace, ops_per_s: f64, arrivals: Arrivals, seed: u64) -> Trace {
    let mut trace = base.clone();
    trace.header.description = Some(format!(
        "{}, each stream asking for {ops_per_s} ops/s ({arrivals} arrivals)",
        base.header
            .description
            .as_deref()
            .unwrap_or(&base.header.workload)
    ));
    let gap_ns = 1e9 / ops_per_s;
    let mut next_ns: std::collections::HashMap<u32, f64> = std::collections::HashMap::new();
    let mut rng = Rng8::seed_from_u64(seed ^ 0x7061_6365_6400);
    for op in &mut trace.ops {
        let t = next_ns.entry(op.stream).or_insert(0.0);
        op.t_us = (*t / 1e3).round() as u64;
        *t += arrivals.next_gap(&mut rng, gap_ns);
    }
    trace
}

/// The directory user `u`'s copy of the file set lives in.
pub fn user_dir(u: u32) -> String {
    format!("user-{u:03}")
}

/// A users point's trace: `users` copies of `base`, user `u`'s files under
/// [`user_dir`]`(u)`, its streams numbered after the users before it, and its op times
/// moved by its start offset: a draw in `[0, stagger_us)`, user 0 at 0, so the users do
/// not move in lockstep. The offsets come from `seed`; the same seed gives the same ones.
pub fn users(base: &Trace, name: &str, users: u32, stagger_us: u64, seed: u64) -> Trace {
    users_of(base, name, 0..users, stagger_us, seed)
}

/// Users `range` of a users point ([`users`]): each keeps the directory and start offset
/// it has among all the point's users, so the slices a multi-client job's clients run
/// add up to the whole point; streams and files are numbered from 0 within the slice.
pub fn users_of(
    base: &Trace,
    name: &str,
    range: std::ops::Range<u32>,
    stagger_us: u64,
    seed: u64,
) -> Trace {
    let mut trace = Trace::new(name);
    let (first, users) = (range.start, range.len() as u32);
    trace.header.description = Some(format!(
        "{users} users of {}, each on its own file set, started within {} ms of each other",
        base.header.workload,
        stagger_us / 1000
    ));
    trace.header.generator = Some(if first == 0 {
        format!(
            "naslab-workload sweep/users base={} users={users} stagger_us={stagger_us} seed={seed}",
            base.header.workload
        )
    } else {
        format!(
            "naslab-workload sweep/users base={} users={users} first={first} stagger_us={stagger_us} seed={seed}",
            base.header.workload
        )
    });
    trace.header.queue_depth = base.header.queue_depth;
    let files = base.files.len() as u32;
    let streams = base.ops.iter().map(|o| o.stream + 1).max().unwrap_or(1);
    let mut rng = Rng8::seed_from_u64(seed ^ 0x7573_6572_7300);
    for g in 0..range.end {
        // Every user's offset is drawn, in order, so user g's is the same in any slice.
        let offset = if g == 0 || stagger_us == 0 {
            0
        } else {
            rng.random_range(0..stagger_us)
        };
        if g < first {
            continue;
        }
        let u = g - first;
        let dir = user_dir(g);
        for f in &base.files {
            trace.files.push(FileDecl {
                id: u * files + f.id,
                path: format!("{dir}/{}", f.path),
                ..f.clone()
            });
        }
        for op in &base.ops {
            trace.ops.push(Op {
                stream: u * streams + op.stream,
                t_us: op.t_us + offset,
                file: u * files + op.file,
                to: op.to.map(|t| u * files + t),
                ..*op
            });
        }
    }
    trace
}

/// One user who runs several workloads at once (an office worker copying files while
/// editing documents): each workload's files under a directory named for it, its
/// streams after the ones before, its own timing. A single workload is returned as is.
pub fn together(name: &str, parts: &[Trace]) -> Trace {
    if let [one] = parts {
        return one.clone();
    }
    let mut trace = Trace::new(name);
    trace.header.description = Some(format!(
        "{} at once",
        parts
            .iter()
            .map(|t| t.header.workload.as_str())
            .collect::<Vec<_>>()
            .join(" and ")
    ));
    trace.header.queue_depth = parts.iter().filter_map(|t| t.header.queue_depth).max();
    let (mut files, mut streams) = (0u32, 0u32);
    for part in parts {
        for f in &part.files {
            trace.files.push(FileDecl {
                id: files + f.id,
                path: format!("{}/{}", part.header.workload, f.path),
                ..f.clone()
            });
        }
        for op in &part.ops {
            trace.ops.push(Op {
                stream: streams + op.stream,
                file: files + op.file,
                to: op.to.map(|t| files + t),
                ..*op
            });
        }
        files += part.files.len() as u32;
        streams += part.ops.iter().map(|o| o.stream + 1).max().unwrap_or(0);
    }
    trace
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_untimed_workload_is_paced_per_stream_in_order() {
        let mut base = Trace::new("Untimed");
        for stream in 0..2 {
            for k in 0..5 {
                base.ops.push(Op {
                    offset: k,
                    ..Op::new(stream, 0, OpKind::Read, 0)
                });
            }
        }
        let t = paced(&base, 200.0, Arrivals::Uniform, 1);
        assert_eq!(t.ops.len(), 10);
        for stream in 0..2 {
            let times: Vec<(u64, u64)> = t
                .ops
                .iter()
                .filter(|o| o.stream == stream)
                .map(|o| (o.offset, o.t_us))
                .collect();
            // One every 5 ms, in the order the stream had them.
            assert_eq!(
                times,
                [(0, 0), (1, 5000), (2, 10000), (3, 15000), (4, 20000)]
            );
        }
        // Poisson: the same order, gaps of 1/rate on average (5 ms here, over 20,000 ops).
        let mut many = Trace::new("Many");
        many.ops = (0..20_000)
            .map(|_| Op::new(0, 0, OpKind::Read, 0))
            .collect();
        let p = paced(&many, 200.0, Arrivals::Poisson, 7);
        assert!(p.ops.windows(2).all(|w| w[0].t_us <= w[1].t_us));
        let mean_gap_us = p.ops.last().unwrap().t_us as f64 / 19_999.0;
        assert!(
            (mean_gap_us - 5000.0).abs() < 5000.0 * 0.03,
            "{mean_gap_us}"
        );
        assert_eq!(paced(&many, 200.0, Arrivals::Poisson, 7).ops, p.ops);
    }

    fn load(arrivals: Arrivals, ops_per_s: f64, connections: u32) -> RateLoad {
        RateLoad {
            name: "r".into(),
            ops_per_s,
            connections,
            arrivals,
            duration_us: 10_000_000,
            mix: Mix {
                block: 4096,
                read_pct: 70,
                file_bytes: 1 << 20,
            },
            seed: 7,
            phase: 0.5,
        }
    }

    #[test]
    fn clients_at_their_phases_interleave_into_one_uniform_schedule() {
        // 600 ops/s over 2 connections, and the same offered by 3 clients at 200 ops/s
        // each, at phases 1/6, 3/6 and 5/6: the same arrival instants.
        let whole = rate(&load(Arrivals::Uniform, 600.0, 2));
        let mut want: Vec<u64> = arrivals_of(&whole).iter().map(|o| o.t_us).collect();
        let mut got = Vec::new();
        for r in 0..3 {
            let part = rate(&RateLoad {
                phase: (f64::from(r) + 0.5) / 3.0,
                ..load(Arrivals::Uniform, 200.0, 2)
            });
            got.extend(arrivals_of(&part).iter().map(|o| o.t_us));
        }
        want.sort_unstable();
        got.sort_unstable();
        assert_eq!(got.len(), want.len());
        // Each instant within a microsecond (the trace's unit) of the single client's.
        for (g, w) in got.iter().zip(&want) {
            assert!(g.abs_diff(*w) <= 1, "{g} vs {w}");
        }
    }

    fn arrivals_of(t: &Trace) -> Vec<&Op> {
        t.ops
            .iter()
            .filter(|o| matches!(o.kind, OpKind::Read | OpKind::Write))
            .collect()
    }

    #[test]
    fn uniform_arrivals_offer_the_rate_exactly_and_evenly() {
        let t = rate(&load(Arrivals::Uniform, 1000.0, 4));
        let ops = arrivals_of(&t);
        assert_eq!(ops.len(), 10_000, "1000 ops/s for 10 s");
        let mut times: Vec<u64> = ops.iter().map(|o| o.t_us).collect();
        times.sort_unstable();
        // One op every 1000 µs over all connections, interleaved.
        for w in times.windows(2) {
            assert_eq!(w[1] - w[0], 1000, "{w:?}");
        }
        for c in 0..4 {
            assert_eq!(ops.iter().filter(|o| o.stream == c).count(), 2500);
        }
    }

    #[test]
    fn poisson_arrivals_have_the_rate_and_exponential_gaps() {
        let t = rate(&load(Arrivals::Poisson, 5000.0, 1));
        let times: Vec<f64> = arrivals_of(&t).iter().map(|o| o.t_us as f64).collect();
        let n = times.len() as f64;
        // 50,000 expected; a Poisson count's standard deviation is its root (224).
        assert!((n - 50_000.0).abs() < 5.0 * 224.0, "{n}");
        let gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        assert!((mean - 200.0).abs() < 5.0, "mean gap {mean} µs");
        // An exponential's coefficient of variation is 1 (uniform gaps would give 0).
        let cv = var.sqrt() / mean;
        assert!((cv - 1.0).abs() < 0.05, "cv {cv}");
        // Memoryless: about e^-1 of the gaps exceed the mean.
        let over = gaps.iter().filter(|&&g| g > 200.0).count() as f64 / gaps.len() as f64;
        assert!((over - (-1f64).exp()).abs() < 0.02, "{over}");
    }

    #[test]
    fn a_rate_trace_reads_and_writes_within_its_file_in_blocks() {
        let l = load(Arrivals::Poisson, 2000.0, 3);
        let t = rate(&l);
        assert_eq!(t.files.len(), 1);
        let ops = arrivals_of(&t);
        let reads = ops.iter().filter(|o| o.kind == OpKind::Read).count() as f64;
        assert!((reads / ops.len() as f64 - 0.7).abs() < 0.02);
        for o in ops {
            assert_eq!(o.offset % 4096, 0);
            assert!(o.offset + o.len <= t.files[0].size);
        }
        for c in 0..3 {
            let mine: Vec<&Op> = t.ops.iter().filter(|o| o.stream == c).collect();
            assert_eq!(mine.first().map(|o| o.kind), Some(OpKind::Open));
            assert_eq!(mine.last().map(|o| o.kind), Some(OpKind::Close));
            assert!(mine.windows(2).all(|w| w[0].t_us <= w[1].t_us));
        }
        // The same seed gives the same schedule.
        assert_eq!(rate(&l).ops, t.ops);
    }

    #[test]
    fn workloads_together_keep_their_files_apart_and_their_own_streams() {
        let mut a = Trace::new("A");
        a.files.push(FileDecl {
            id: 0,
            path: "x".into(),
            kind: FileKind::File,
            size: 1,
            exists: true,
            prepare: Prepare::Copy,
        });
        a.ops.push(Op::new(1, 7, OpKind::Open, 0));
        let mut b = a.clone();
        b.header.workload = "B".into();
        let t = together("AB", &[a.clone(), b]);
        assert_eq!(
            t.files
                .iter()
                .map(|f| (f.id, f.path.as_str()))
                .collect::<Vec<_>>(),
            [(0, "A/x"), (1, "B/x")]
        );
        assert_eq!(
            t.ops
                .iter()
                .map(|o| (o.stream, o.file, o.t_us))
                .collect::<Vec<_>>(),
            [(1, 0, 7), (3, 1, 7)]
        );
        assert_eq!(together("A", std::slice::from_ref(&a)).ops, a.ops);
    }

    #[test]
    fn users_get_their_own_files_streams_and_offsets() {
        let mut base = Trace::new("w");
        base.files.push(FileDecl {
            id: 0,
            path: "a/x".into(),
            kind: FileKind::File,
            size: 10,
            exists: true,
            prepare: Prepare::Copy,
        });
        base.files.push(FileDecl {
            id: 1,
            path: "a/y".into(),
            kind: FileKind::File,
            size: 0,
            exists: false,
            prepare: Prepare::Copy,
        });
        base.ops.push(Op::new(0, 5, OpKind::Open, 0));
        base.ops.push(Op {
            to: Some(1),
            ..Op::new(1, 9, OpKind::Rename, 0)
        });
        let t = users(&base, "w@3u", 3, 1_000_000, 1);
        assert_eq!(t.files.len(), 6);
        assert_eq!(t.ops.len(), 6);
        assert_eq!(t.files[4].path, "user-002/a/x");
        assert_eq!(t.files[5].id, 5);
        let streams: std::collections::BTreeSet<u32> = t.ops.iter().map(|o| o.stream).collect();
        assert_eq!(streams.len(), 6);
        let renames: Vec<&Op> = t.ops.iter().filter(|o| o.kind == OpKind::Rename).collect();
        for (u, r) in renames.iter().enumerate() {
            assert_eq!((r.file, r.to), (2 * u as u32, Some(2 * u as u32 + 1)));
        }
        // User 0 starts at once, the others within the stagger, each by its own offset.
        let starts: Vec<u64> = (0..3).map(|u| t.ops[2 * u].t_us - 5).collect();
        assert_eq!(starts[0], 0);
        assert!(starts[1..].iter().all(|&s| s < 1_000_000));
        assert_ne!(starts[1], starts[2]);
        assert_eq!(users(&base, "w@3u", 3, 1_000_000, 1).ops, t.ops);
    }

    #[test]
    fn slices_of_the_users_add_up_to_the_whole_point() {
        let mut base = Trace::new("w");
        base.files.push(FileDecl {
            id: 0,
            path: "f".into(),
            kind: FileKind::File,
            size: 10,
            exists: true,
            prepare: Prepare::Copy,
        });
        base.ops.push(Op::new(0, 5, OpKind::Open, 0));
        base.ops.push(Op::new(1, 8, OpKind::Read, 0));
        let whole = users(&base, "w@7u", 7, 1_000_000, 3);
        // 7 users over 3 clients: 3, 2, 2.
        let slices = [0..3, 3..5, 5..7].map(|r| users_of(&base, "w@7u", r, 1_000_000, 3));
        let mut paths = Vec::new();
        let mut times = Vec::new();
        for s in &slices {
            // Numbered from 0 within the slice.
            assert_eq!(s.files[0].id, 0);
            assert_eq!(s.ops[0].stream, 0);
            paths.extend(s.files.iter().map(|f| f.path.clone()));
            times.extend(s.ops.iter().map(|o| o.t_us));
        }
        assert_eq!(
            paths,
            whole
                .files
                .iter()
                .map(|f| f.path.clone())
                .collect::<Vec<_>>()
        );
        assert_eq!(times, whole.ops.iter().map(|o| o.t_us).collect::<Vec<_>>());
        assert_eq!(slices[1].files[0].path, "user-003/f");
    }
}
