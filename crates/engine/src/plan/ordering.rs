//! Ordering between streams: the happens-before edges a trace's recorded order implies
//! on shared resources, found while it compiles, so a replay keeps a name made in one
//! stream from being used in another before it exists.
//!
//! Each op is placed on the trace's time line: its `t_us` when the trace is timed (its
//! ops' times are not all equal), else its line, as a trace without timing has no order
//! but that of its lines. Ops of two streams at the same place are concurrent and get
//! no edge. The resources are the file set's entries:
//!
//! - a **name** (an entry's path): made, renamed or removed by one stream (create, mkdir,
//!   unlink, rename, the new name of a link or symlink) before another stream uses it (open, stat, readdir, any of these on
//!   something inside it, at any depth) gives an edge from the change to the use; a change after
//!   other streams' uses waits for the last use of each. Only the last change and, per
//!   stream, the last use since it are kept, so there is one edge per hand-over of a
//!   name, not one per pair of ops;
//! - a file's **data made durable**: an fsync before another stream's read of the file;
//! - a stream's **sequence** (timed traces only): a stream whose first op comes after
//!   the last op of another stream that touched an entry it touches (a name, or the
//!   directory a name is in) waits for that op, so a program that reads what an earlier
//!   one wrote sees all of it, not only its name. Streams that share no entry are never
//!   chained: there is nothing one could do to the other (users of a sweep, each on its
//!   own file set, stay independent however they were staggered). In a trace without
//!   timing, streams that follow each other in the file say nothing about time
//!   (generators write streams one after another), so none is added.
//!
//! Edges implied by others are dropped (a transitive reduction kept by vector clocks:
//! what each stream is known to follow, snapshot where an edge changes it).

use std::collections::{HashMap, HashSet};

use naslab_trace::{Op, OpKind};

use super::FileEntry;

/// Why a stream waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// A name made, renamed or removed, or used before such a change.
    Name,
    /// An fsync before a read of the same file.
    Sync,
    /// A stream that starts after another one ended.
    Sequence,
}

/// One wait before an op: until the phase's stream `source` has completed `count` ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Wait {
    /// The waiting op's position in its stream (0-based).
    pub at: u64,
    /// The source stream's index among the phase's streams ([`super::Plan::streams`] or
    /// [`super::Plan::warmup`]).
    pub source: u32,
    /// How many of the source stream's ops must have completed.
    pub count: u64,
    pub kind: EdgeKind,
}

/// A stream's part in the ordering: the waits before its ops, and which of its ops
/// others wait for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamOrder {
    /// In the order of `at`.
    pub waits: Vec<Wait>,
    /// Positions of ops other streams wait for, ascending, each once.
    pub sources: Vec<u64>,
}

/// How many edges a phase has, by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EdgeCounts {
    pub name: u64,
    pub sync: u64,
    pub sequence: u64,
}

impl EdgeCounts {
    /// Every edge.
    pub fn total(&self) -> u64 {
        self.name + self.sync + self.sequence
    }
}

/// Which phase of a stream an op belongs to.
const MEASURED: usize = 0;
const WARMUP: usize = 1;

/// What an op does to a resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Makes, renames or removes the name.
    Change,
    /// Needs the name as it is.
    Use,
    /// Makes the file's data durable.
    Sync,
    /// Reads the file's data.
    Read,
    /// The stream's first op in the phase.
    Start,
}

#[derive(Debug, Clone, Copy)]
struct Event {
    t_us: u64,
    line: u64,
    seq: u64,
    stream: u32,
    res: u32,
    role: Role,
}

/// One stream's ops in one phase so far.
#[derive(Debug, Clone, Copy, Default)]
struct PhaseCount {
    ops: u64,
    last_t_us: u64,
    last_line: u64,
    /// The file of the last read noted and the fsyncs of it seen then.
    last_read: Option<(u32, u32)>,
}

/// Collects what each op does to shared resources while a trace compiles.
#[derive(Default)]
pub(super) struct Collector {
    events: [Vec<Event>; 2],
    /// Per stream (in the order of first ops), per phase.
    counts: Vec<[PhaseCount; 2]>,
    /// The parent directory's index of each entry (`u32::MAX` at the top).
    parents: Vec<u32>,
    /// Entries some rename names (as its old or new name): a use of anything below one,
    /// however deep, is also a use of it, since renaming it moves all of that.
    renamed: Vec<bool>,
    /// Fsyncs seen so far (in file order) of each entry.
    fsyncs: Vec<u32>,
    t_min: u64,
    t_max: u64,
}

impl Collector {
    /// Called once, when the file set is complete.
    pub(super) fn start(&mut self, entries: &[FileEntry]) {
        let index: HashMap<&str, u32> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.path.as_str(), i as u32))
            .collect();
        self.parents = entries
            .iter()
            .map(|e| {
                e.path
                    .rfind('/')
                    .and_then(|cut| index.get(&e.path[..cut]).copied())
                    .unwrap_or(u32::MAX)
            })
            .collect();
        self.fsyncs = vec![0; entries.len()];
        self.renamed = vec![false; entries.len()];
        self.t_min = u64::MAX;
    }

    /// Notes `op` of the stream at `pos` (its place in the order of first ops), naming
    /// entries `file` and `to`, at trace line `line`.
    #[inline]
    pub(super) fn note(&mut self, pos: usize, op: &Op, file: u32, to: u32, line: u64) {
        if pos == self.counts.len() {
            self.counts.push([PhaseCount::default(); 2]);
        }
        let phase = if op.warmup { WARMUP } else { MEASURED };
        let count = &mut self.counts[pos][phase];
        let seq = count.ops;
        count.ops += 1;
        count.last_t_us = op.t_us;
        count.last_line = line;
        self.t_min = self.t_min.min(op.t_us);
        self.t_max = self.t_max.max(op.t_us);
        let event = |res: u32, role: Role| Event {
            t_us: op.t_us,
            line,
            seq,
            stream: pos as u32,
            res,
            role,
        };
        let events = &mut self.events[phase];
        if seq == 0 {
            events.push(event(u32::MAX, Role::Start));
        }
        let parent = |i: u32| self.parents.get(i as usize).copied().unwrap_or(u32::MAX);
        let mut name = |res: u32, role: Role| {
            events.push(event(res, role));
            let p = parent(res);
            if p != u32::MAX {
                events.push(event(p, Role::Use));
            }
        };
        match op.kind {
            OpKind::Create | OpKind::Mkdir | OpKind::Unlink => name(file, Role::Change),
            OpKind::Rename => {
                name(file, Role::Change);
                name(to, Role::Change);
                for i in [file, to] {
                    if let Some(r) = self.renamed.get_mut(i as usize) {
                        *r = true;
                    }
                }
            }
            // A hard link needs its file and makes a name; a symbolic link only makes its
            // name (its target need not exist).
            OpKind::Link => {
                name(file, Role::Use);
                name(to, Role::Change);
            }
            OpKind::Symlink => name(to, Role::Change),
            OpKind::Open | OpKind::Stat | OpKind::Readdir | OpKind::Statfs | OpKind::Utime => {
                name(file, Role::Use)
            }
            OpKind::Fsync => {
                if let Some(n) = self.fsyncs.get_mut(file as usize) {
                    *n += 1;
                }
                events.push(event(file, Role::Sync));
            }
            OpKind::Read => {
                // Only a read that an fsync seen before it may concern, and of a run of
                // reads of one file with no fsync of it between them only the first.
                let synced = self.fsyncs.get(file as usize).copied().unwrap_or(0);
                if synced > 0 && count.last_read != Some((file, synced)) {
                    count.last_read = Some((file, synced));
                    events.push(event(file, Role::Read));
                }
            }
            // A byte-range lock is a resource handed over between streams: a lock or
            // unlock waits for what other streams did to the file before it.
            OpKind::Lock | OpKind::Unlock => name(file, Role::Change),
            OpKind::Close | OpKind::Write | OpKind::Truncate | OpKind::Fallocate => {}
        }
    }

    /// The edges of each phase: for each stream of the phase (those with ops in it, in
    /// the order of first ops), its waits and sources, and the counts by kind.
    pub(super) fn finish(self) -> [(Vec<StreamOrder>, EdgeCounts); 2] {
        let timed = self.t_max > self.t_min && self.t_min != u64::MAX;
        let [measured, warmup] = self.events;
        let counts = self.counts;
        let tree = Tree {
            parents: &self.parents,
            renamed: &self.renamed,
        };
        [
            derive(measured, &counts, MEASURED, timed, &tree),
            derive(warmup, &counts, WARMUP, timed, &tree),
        ]
    }
}

/// The file set's directories, as the edges see them.
struct Tree<'a> {
    parents: &'a [u32],
    renamed: &'a [bool],
}

impl Tree<'_> {
    fn parent(&self, i: u32) -> u32 {
        self.parents.get(i as usize).copied().unwrap_or(u32::MAX)
    }

    /// The renamed directories above `res`'s parent (whose use is an event of its own),
    /// nearest first.
    fn renamed_above_parent(&self, res: u32) -> impl Iterator<Item = u32> + '_ {
        let grandparent = self.parent(self.parent(res));
        std::iter::successors(Some(grandparent), |&d| Some(self.parent(d)))
            .take_while(|&d| d != u32::MAX)
            .filter(|&d| self.renamed.get(d as usize).copied().unwrap_or(false))
    }
}

/// An op's place: its stream (index among the phase's streams), position and time.
#[derive(Debug, Clone, Copy)]
struct At {
    stream: u32,
    seq: u64,
    place: u64,
}

impl At {
    /// Whether this op comes before `me` in another stream (not at the same place).
    fn precedes(&self, me: &At) -> bool {
        self.stream != me.stream && self.place < me.place
    }
}

#[derive(Default)]
struct Resource {
    last_change: Option<At>,
    /// Per stream, its last use since the last change.
    uses: Vec<At>,
    last_sync: Option<At>,
}

/// What each stream is known to follow: for each other stream, how many of its ops.
struct Clocks {
    now: Vec<HashMap<u32, u64>>,
    /// Per stream, the clock after each of its waits: (position, clock).
    history: Vec<Vec<(u64, HashMap<u32, u64>)>>,
    waits: Vec<Vec<Wait>>,
    counts: EdgeCounts,
}

impl Clocks {
    fn new(n: usize) -> Clocks {
        Clocks {
            now: vec![HashMap::new(); n],
            history: vec![Vec::new(); n],
            waits: vec![Vec::new(); n],
            counts: EdgeCounts::default(),
        }
    }

    /// Adds the edge `from` → op `at` of stream `to` unless the order is already implied.
    fn edge(&mut self, from: At, to: u32, at: u64, kind: EdgeKind) {
        let known = self.now[to as usize]
            .get(&from.stream)
            .copied()
            .unwrap_or(0);
        if known > from.seq {
            return;
        }
        // What the source op itself followed.
        let hist = &self.history[from.stream as usize];
        let upto = hist.partition_point(|(pos, _)| *pos <= from.seq);
        let inherited = upto.checked_sub(1).map(|i| hist[i].1.clone());
        let clock = &mut self.now[to as usize];
        clock.insert(from.stream, from.seq + 1);
        for (s, n) in inherited.into_iter().flatten() {
            if s != to {
                let e = clock.entry(s).or_insert(0);
                *e = (*e).max(n);
            }
        }
        self.history[to as usize].push((at, clock.clone()));
        self.waits[to as usize].push(Wait {
            at,
            source: from.stream,
            count: from.seq + 1,
            kind,
        });
        match kind {
            EdgeKind::Name => self.counts.name += 1,
            EdgeKind::Sync => self.counts.sync += 1,
            EdgeKind::Sequence => self.counts.sequence += 1,
        }
    }
}

/// Op `me` uses name `res`: it follows the name's last change in another stream, and is
/// its stream's last use of it since.
fn use_name(resources: &mut HashMap<u32, Resource>, clocks: &mut Clocks, res: u32, me: At) {
    let r = resources.entry(res).or_default();
    if let Some(c) = r.last_change.filter(|c| c.precedes(&me)) {
        clocks.edge(c, me.stream, me.seq, EdgeKind::Name);
    }
    match r.uses.iter_mut().find(|u| u.stream == me.stream) {
        Some(u) => *u = me,
        None => r.uses.push(me),
    }
}

fn derive(
    mut events: Vec<Event>,
    counts: &[[PhaseCount; 2]],
    phase: usize,
    timed: bool,
    tree: &Tree<'_>,
) -> (Vec<StreamOrder>, EdgeCounts) {
    // The phase's streams, and each one's index among them.
    let mut index = vec![u32::MAX; counts.len()];
    let mut n = 0u32;
    for (pos, c) in counts.iter().enumerate() {
        if c[phase].ops > 0 {
            index[pos] = n;
            n += 1;
        }
    }
    let mut orders = vec![StreamOrder::default(); n as usize];
    if n < 2 {
        return (orders, EdgeCounts::default());
    }
    let place = |t_us: u64, line: u64| if timed { t_us } else { line };
    // Stable: ops at one time keep their file order.
    events.sort_by_key(|e| place(e.t_us, e.line));
    // Each stream's last op, latest first, for the sequence edges.
    let mut ends: Vec<At> = counts
        .iter()
        .enumerate()
        .filter(|(pos, _)| index[*pos] != u32::MAX)
        .map(|(pos, c)| At {
            stream: index[pos],
            seq: c[phase].ops - 1,
            place: place(c[phase].last_t_us, c[phase].last_line),
        })
        .collect();
    ends.sort_by_key(|e| std::cmp::Reverse(e.place));
    // The entries each stream touches, for the sequence edges.
    let mut touched: Vec<HashSet<u32>> = vec![HashSet::new(); n as usize];
    if timed {
        for e in events.iter().filter(|e| e.res != u32::MAX) {
            touched[index[e.stream as usize] as usize].insert(e.res);
        }
    }
    let shares = |a: u32, b: u32| {
        let (a, b) = (&touched[a as usize], &touched[b as usize]);
        let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
        small.iter().any(|r| large.contains(r))
    };
    let mut resources: HashMap<u32, Resource> = HashMap::new();
    let mut clocks = Clocks::new(n as usize);
    for e in &events {
        let me = At {
            stream: index[e.stream as usize],
            seq: e.seq,
            place: place(e.t_us, e.line),
        };
        let before = |a: &At| a.precedes(&me);
        if matches!(e.role, Role::Use | Role::Change) {
            for dir in tree.renamed_above_parent(e.res) {
                use_name(&mut resources, &mut clocks, dir, me);
            }
        }
        match e.role {
            Role::Start => {
                if timed {
                    for end in ends
                        .iter()
                        .filter(|a| before(a) && shares(a.stream, me.stream))
                    {
                        clocks.edge(*end, me.stream, me.seq, EdgeKind::Sequence);
                    }
                }
            }
            Role::Use => use_name(&mut resources, &mut clocks, e.res, me),
            Role::Change => {
                let r = resources.entry(e.res).or_default();
                if let Some(c) = r.last_change.filter(before) {
                    clocks.edge(c, me.stream, me.seq, EdgeKind::Name);
                }
                for u in r.uses.iter().filter(|u| before(u)) {
                    clocks.edge(*u, me.stream, me.seq, EdgeKind::Name);
                }
                // A use at the same place in another stream stays concurrent with it.
                r.uses
                    .retain(|u| u.stream != me.stream && u.place >= me.place);
                r.last_change = Some(me);
            }
            Role::Sync => {
                resources.entry(e.res).or_default().last_sync = Some(me);
            }
            Role::Read => {
                let r = resources.entry(e.res).or_default();
                if let Some(s) = r.last_sync.filter(before) {
                    clocks.edge(s, me.stream, me.seq, EdgeKind::Sync);
                }
            }
        }
    }
    for (to, waits) in clocks.waits.into_iter().enumerate() {
        for w in &waits {
            orders[w.source as usize].sources.push(w.count - 1);
        }
        let mut waits = waits;
        waits.sort_by_key(|w| w.at);
        orders[to].waits = waits;
    }
    for o in &mut orders {
        o.sources.sort_unstable();
        o.sources.dedup();
    }
    (orders, clocks.counts)
}
