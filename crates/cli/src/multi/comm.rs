//! The MPI side of a multi-client run: who this client is, the start of every measured
//! phase at one moment on all clients, the votes that stop every client when one fails,
//! and sending each client's results to rank 0.

use std::sync::Mutex;

use mpi::Tag;
use mpi::collective::SystemOperation;
use mpi::request::{Request, Scope, StaticScope};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use naslab_engine::clock::monotonic_ns;

/// Ping-pong rounds per client when measuring its clock offset; the round with the
/// shortest round trip gives the offset.
const PING_ROUNDS: usize = 32;
/// How far after rank 0 sends the start time every client starts: enough for the
/// broadcast to reach them all.
const START_LEAD_NS: u64 = 100_000_000;
/// The longest pause between two looks at a collective a client waits in
/// ([`wait_idle`]).
const IDLE_POLL: std::time::Duration = std::time::Duration::from_millis(1);
/// The tag of every message but the failure notices.
const DATA_TAG: Tag = 0;
/// What a failure notice carries (its tag and source say all).
static NOTICE: u8 = 1;
/// The tag of the notice a client that failed before the start gate sends every other
/// client at once, so they stop preparing (below every other tag but the target word's).
const EARLY_TAG: Tag = 31_000;
/// The tag of a sweep's messages between points (each client's part of the point that
/// ended, and rank 0's verdict): apart from every other tag.
const SWEEP_TAG: Tag = 31_500;
/// The tag of the first client's word on the shared target (`--shared-files`): above
/// every failure notice's tag.
const TARGET_TAG: Tag = 32_000;

/// This process's place in the job, and what the current iteration has done so far.
pub struct Client {
    pub rank: u32,
    pub size: u32,
    pub host: String,
    /// Whether this client voted at the start gate during the current iteration.
    gate_voted: bool,
    /// With `--shared-files`: the clients vote at the shared file set's barrier too.
    pub shared: bool,
    /// Whether this client voted at that barrier during the current iteration.
    set_voted: bool,
    /// Measured phases started so far.
    phases: u32,
    /// While the current iteration's measured phase has started: the tag of its failure
    /// notices (each phase has its own, so no notice is taken for another phase's).
    notice_tag: Option<Tag>,
    /// On rank 0: every client's (offset, uncertainty) from the last start; elsewhere
    /// this client's own at index `rank`.
    pub clocks: Vec<(i64, u64)>,
    /// How late this client woke for the last start, past the agreed moment.
    pub start_late_ns: u64,
    /// Whether this client failed on its own (not stopped because another did).
    pub caused: bool,
    /// Whether it has sent its results (the job's last step).
    pub finished: bool,
    /// On client 0 with `--shared-files`: whether it has told the others if it holds
    /// the shared target.
    pub target_word_sent: bool,
    /// This client's own directory for spools and its records until they are sent.
    pub private_dir: Option<std::path::PathBuf>,
}

/// This process as one client of a job: its state, behind a lock (the engine asks the
/// gate from the thread that runs the iteration, the binary from the main thread; both
/// are the one thread MPI is used from).
pub struct Job {
    client: Mutex<Client>,
}

/// Keeps MPI initialised; dropping it finalises MPI.
pub struct Guard(#[allow(dead_code)] mpi::environment::Universe);

/// Whether this process was started by an MPI launcher (mpirun, mpiexec, srun with PMI).
fn launched() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Initialises MPI when started by an MPI launcher: this process's place in the job and
/// what keeps MPI initialised; `None` otherwise (a normal run).
pub fn init() -> Option<(Job, Guard)> {
    if !launched() {
        return None;
    }
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)?;
    let world = universe.world();
    let host = mpi::environment::processor_name().unwrap_or_else(|_| "unknown".into());
    let client = Mutex::new(Client {
        rank: world.rank() as u32,
        size: world.size() as u32,
        host,
        gate_voted: false,
        shared: false,
        set_voted: false,
        phases: 0,
        notice_tag: None,
        clocks: vec![(0, 0); world.size() as usize],
        start_late_ns: 0,
        caused: false,
        finished: false,
        target_word_sent: false,
        private_dir: None,
    });
    // A client that panics would leave the others waiting in a collective for ever: end
    // the whole job instead.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        SimpleCommunicator::world().abort(70);
    }));
    Some((Job { client }, Guard(universe)))
}

fn world() -> SimpleCommunicator {
    SimpleCommunicator::world()
}

impl Job {
    /// Runs `f` on this client's state.
    pub fn with<T>(&self, f: impl FnOnce(&mut Client) -> T) -> T {
        f(&mut self.client.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Every client says whether it failed; returns the lowest failed rank, if any.
    fn vote(&self, failed: bool) -> Option<u32> {
        let (rank, size) = self.with(|c| (c.rank, c.size));
        let mine: u32 = if failed { rank } else { size };
        let mut lowest: u32 = size;
        let world = world();
        mpi::request::scope(|scope| {
            wait_idle(world.immediate_all_reduce_into(
                scope,
                &mine,
                &mut lowest,
                SystemOperation::min(),
            ));
        });
        (lowest < size).then_some(lowest)
    }

    /// The start gate of every measured phase: all clients meet here once their streams are
    /// connected. Returns the CLOCK_MONOTONIC instant (on this client's clock) at which the
    /// phase starts, the same moment on every client within the clock-offset uncertainty.
    pub fn start_gate(&self) -> Result<u64, String> {
        self.with(|c| c.gate_voted = true);
        if let Some(bad) = self.vote(false) {
            return Err(format!(
                "not started: client {bad} could not start its measured phase"
            ));
        }
        let (rank, size) = self.with(|c| (c.rank, c.size));
        let world = world();
        let clocks = measure_clocks(&world, rank, size);
        // Rank 0 picks the start on its clock; each client turns it into its own.
        let mut plan: Vec<i64> = vec![0; 1 + 2 * size as usize];
        if rank == 0 {
            plan[0] = (monotonic_ns() + START_LEAD_NS) as i64;
            for (i, (off, unc)) in clocks.iter().enumerate() {
                plan[1 + 2 * i] = *off;
                plan[2 + 2 * i] = *unc as i64;
            }
        }
        world.process_at_rank(0).broadcast_into(&mut plan[..]);
        let offset = plan[1 + 2 * rank as usize];
        let local_start = (plan[0] + offset).max(0) as u64;
        sleep_until(local_start);
        let late = monotonic_ns().saturating_sub(local_start);
        self.with(|c| {
            c.phases += 1;
            c.notice_tag = Some(1 + (c.phases % 30_000) as Tag);
            c.start_late_ns = late;
            c.clocks = (0..size as usize)
                .map(|i| (plan[1 + 2 * i], plan[2 + 2 * i] as u64))
                .collect();
        });
        Ok(local_start)
    }

    /// Whether another client has sent a failure notice during the current measured phase
    /// (asked while it runs; the notice is taken after the phase, in `end_of_iteration`).
    pub fn peer_failed(&self) -> bool {
        let Some(tag) = self.with(|c| c.notice_tag) else {
            return false;
        };
        SimpleCommunicator::world()
            .any_process()
            .immediate_probe_with_tag(tag)
            .is_some()
    }

    /// After each iteration (run or failed) every client reports whether it failed; returns
    /// the lowest failed rank, if any. A client whose measured phase failed first sends a
    /// failure notice to every other client, which stops their phases (`peer_failed`); the
    /// notices are then taken, one from each failed client. A client that never reached the
    /// shared file set's barrier or the start gate casts those votes first, so the others
    /// are not left waiting there.
    pub fn end_of_iteration(&self, failed: bool) -> Option<u32> {
        let (set_owed, voted, tag) = self.with(|c| {
            (
                c.shared && !std::mem::replace(&mut c.set_voted, false),
                std::mem::replace(&mut c.gate_voted, false),
                c.notice_tag.take(),
            )
        });
        let (rank, size) = self.with(|c| (c.rank, c.size));
        let world = SimpleCommunicator::world();
        // A client that failed before the start gate tells every other at once (they may
        // be preparing their file sets: see `failed_before_start`), before it votes.
        let early = failed && !voted;
        // A notice of `tag` to every other client; the sends are waited for at the end.
        let to_others = |tag: Tag| -> Vec<_> {
            (0..size)
                .filter(|&r| r != rank)
                .map(|r| {
                    world.process_at_rank(r as i32).immediate_send_with_tag(
                        StaticScope,
                        &NOTICE,
                        tag,
                    )
                })
                .collect()
        };
        let early_sent = if early {
            to_others(EARLY_TAG)
        } else {
            Vec::new()
        };
        if set_owed {
            self.vote(true);
        }
        if !voted {
            self.vote(true);
        }
        // Every client started this phase or none did (the gate is one vote), so every
        // client knows whether notices are due.
        let sent = match tag {
            Some(tag) if failed => to_others(tag),
            _ => Vec::new(),
        };
        // 0: went well; 1: failed; 2: failed before the start gate (and sent the notices
        // of that to every other client).
        let mine: u8 = match (failed, early) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 2,
        };
        let mut flags = vec![0u8; size as usize];
        mpi::request::scope(|scope| {
            wait_idle(world.immediate_all_gather_into(scope, &mine, &mut flags[..]));
        });
        let failed_ranks: Vec<u32> = (0..size).filter(|&r| flags[r as usize] != 0).collect();
        if let Some(tag) = tag {
            for &r in failed_ranks.iter().filter(|&&r| r != rank) {
                let _ = world.process_at_rank(r as i32).receive_with_tag::<u8>(tag);
            }
        }
        for r in (0..size).filter(|&r| r != rank && flags[r as usize] == 2) {
            let _ = world
                .process_at_rank(r as i32)
                .receive_with_tag::<u8>(EARLY_TAG);
        }
        for request in sent.into_iter().chain(early_sent) {
            request.wait();
        }
        failed_ranks.first().copied()
    }

    /// Whether another client has failed before the start gate of the current iteration
    /// (asked while this one prepares, which then stops: the phase would not start);
    /// the notice is taken after the iteration, in `end_of_iteration`.
    pub fn failed_before_start(&self) -> Option<String> {
        let status = SimpleCommunicator::world()
            .any_process()
            .immediate_probe_with_tag(EARLY_TAG)?;
        Some(format!(
            "client {} failed before the start",
            status.source_rank()
        ))
    }

    /// The shared file set's barrier (`--shared-files`), a vote like the start gate's:
    /// client 0 says whether its preparation went well, every client whether it got this
    /// far; `Err` when any client failed (client 0's own error when it was client 0's). A
    /// client that fails before it votes casts its vote in `end_of_iteration`.
    pub fn shared_set_ready(&self, mine: Result<(), String>) -> Result<(), String> {
        self.with(|c| c.set_voted = true);
        match (self.vote(mine.is_err()), mine) {
            (_, Err(why)) => Err(why),
            (Some(bad), Ok(())) => Err(format!(
                "not started: client {bad} could not get the shared file set ready"
            )),
            (None, Ok(())) => Ok(()),
        }
    }

    /// On a client other than rank 0: sends rank 0 how many records files follow, its
    /// report, then each file in bounded chunks ([`super::transfer`]); a file it cannot
    /// read goes as its error.
    pub fn send_results(&self, report: &[u8], files: &[std::path::PathBuf]) {
        let world = SimpleCommunicator::world();
        let root = world.process_at_rank(0);
        root.send(&(files.len() as u64));
        root.send(report);
        for f in files {
            super::transfer::send_file(f, &mut |frame| root.send(frame));
        }
    }

    /// On rank 0: how many records files client `from` sends, and its report.
    pub fn receive_report(&self, from: u32) -> (u64, Vec<u8>) {
        let world = SimpleCommunicator::world();
        let peer = world.process_at_rank(from as i32);
        let (n, _) = peer.receive_with_tag::<u64>(DATA_TAG);
        let (report, _) = peer.receive_vec_with_tag::<u8>(DATA_TAG);
        (n, report)
    }

    /// On rank 0: client `from`'s next records file, written to `out` as it comes; `Err`
    /// says why it is not there (the client's own read error, most often).
    pub fn receive_file(&self, from: u32, out: &std::path::Path) -> Result<(), String> {
        let world = SimpleCommunicator::world();
        let peer = world.process_at_rank(from as i32);
        super::transfer::receive_file(&mut || peer.receive_vec_with_tag::<u8>(DATA_TAG).0, out)
    }

    /// Between a sweep's points: every client sends rank 0 how late it woke for the
    /// point's start and its part of the point (`mine`); on rank 0, returns every
    /// client's (lateness, part) in rank order, its own first; `None` elsewhere. Every
    /// client calls it at the same point (after the same vote), so no message waits.
    pub fn gather_point(&self, mine: Vec<u8>) -> Option<Vec<(u64, Vec<u8>)>> {
        let (rank, size, late) = self.with(|c| (c.rank, c.size, c.start_late_ns));
        let world = world();
        if rank != 0 {
            let root = world.process_at_rank(0);
            root.send_with_tag(&late, SWEEP_TAG);
            root.send_with_tag(&mine[..], SWEEP_TAG);
            return None;
        }
        let mut parts = vec![(late, mine)];
        for r in 1..size {
            let peer = world.process_at_rank(r as i32);
            let (late, _) = peer.receive_with_tag::<u64>(SWEEP_TAG);
            let (part, _) = peer.receive_vec_with_tag::<u8>(SWEEP_TAG);
            parts.push((late, part));
        }
        Some(parts)
    }

    /// After [`Job::gather_point`]: rank 0 sends its `verdict` to every client; each
    /// returns the verdict (rank 0 its own).
    pub fn share_verdict(&self, verdict: Option<Vec<u8>>) -> Vec<u8> {
        let (rank, size) = self.with(|c| (c.rank, c.size));
        let world = world();
        match verdict {
            Some(v) if rank == 0 => {
                for r in 1..size {
                    world
                        .process_at_rank(r as i32)
                        .send_with_tag(&v[..], SWEEP_TAG);
                }
                v
            }
            _ => {
                world
                    .process_at_rank(0)
                    .receive_vec_with_tag::<u8>(SWEEP_TAG)
                    .0
            }
        }
    }

    /// On client 0 with `--shared-files`: tells every other client, once, whether it holds
    /// the shared target (`taken`), so they join it at once or give up at once (never wait
    /// for a holder that will not come). Small messages: the sends do not wait for the
    /// others to receive.
    pub fn send_target_word(&self, taken: bool) {
        let due = self.with(|c| {
            let due = c.shared && c.rank == 0 && !c.target_word_sent;
            c.target_word_sent = true;
            due.then_some(c.size)
        });
        let Some(size) = due else {
            return;
        };
        let world = world();
        for r in 1..size {
            world
                .process_at_rank(r as i32)
                .send_with_tag(&u8::from(taken), TARGET_TAG);
        }
    }

    /// On the other clients with `--shared-files`: waits for client 0's word; whether it
    /// holds the shared target.
    pub fn receive_target_word(&self) -> bool {
        let (word, _) = SimpleCommunicator::world()
            .process_at_rank(0)
            .receive_with_tag::<u8>(TARGET_TAG);
        word != 0
    }
}

/// Sleeps until `deadline` on CLOCK_MONOTONIC. Sleeping, not spinning: several clients
/// on one host would otherwise take each other's CPU just when they should start.
/// Waits for `request` without spinning. MPI's own wait polls at full speed until the
/// slowest client arrives, which on a host shared with clients still in their measured
/// phase takes a CPU from them (a job whose clients finish far apart spent a core's
/// worth of system time waiting); this looks every 50 µs at first, then at most every
/// [`IDLE_POLL`], and sleeps in between. Only the votes before and after a phase wait
/// here, where a millisecond more is nothing measured.
fn wait_idle<'a, D: ?Sized, S: Scope<'a>>(mut request: Request<'a, D, S>) {
    let mut pause = std::time::Duration::from_micros(50);
    loop {
        match request.test() {
            Ok(_) => return,
            Err(r) => request = r,
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(IDLE_POLL);
    }
}

fn sleep_until(deadline: u64) {
    naslab_engine::clock::tighten_timer_slack();
    let ts = libc::timespec {
        tv_sec: (deadline / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline % 1_000_000_000) as libc::c_long,
    };
    // Retried when a signal interrupts it.
    while monotonic_ns() < deadline {
        // SAFETY: an absolute sleep on CLOCK_MONOTONIC reading only `ts`.
        unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            );
        }
    }
}

/// Measures every client's clock offset to rank 0 by ping-pong: rank 0 notes when it
/// sent and when the reply (the client's clock reading) came back; the reading was taken
/// somewhere in between, so the offset is the reading minus the midpoint, within half the
/// round trip. The shortest of several round trips is kept.
fn measure_clocks(world: &SimpleCommunicator, rank: u32, size: u32) -> Vec<(i64, u64)> {
    let mut out = vec![(0i64, 0u64); size as usize];
    if rank == 0 {
        for (r, slot) in out.iter_mut().enumerate().skip(1) {
            let peer = world.process_at_rank(r as i32);
            let mut best = (0i64, u64::MAX);
            for _ in 0..PING_ROUNDS {
                let t0 = monotonic_ns();
                peer.send(&0u64);
                let (reading, _) = peer.receive_with_tag::<u64>(DATA_TAG);
                let t1 = monotonic_ns();
                let rtt = t1 - t0;
                if rtt < best.1 {
                    let mid = (t0 as i128 + t1 as i128) / 2;
                    best = ((reading as i128 - mid) as i64, rtt);
                }
            }
            *slot = (best.0, best.1.div_ceil(2));
        }
    } else {
        let root = world.process_at_rank(0);
        for _ in 0..PING_ROUNDS {
            let _ = root.receive_with_tag::<u64>(DATA_TAG);
            root.send(&monotonic_ns());
        }
    }
    out
}
