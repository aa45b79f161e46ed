//! The eBPF collector: programs on the kernel's raw tracepoints for system calls
//! (`sys_enter`, `sys_exit`) and processes (`sched_process_fork`, `sched_process_exit`)
//! record the calls of the command's
//! process tree into a ring buffer, which naslab drains as the command runs. The
//! program (bpf/capture.bpf.c, built into the committed bpf/capture.bpf.o by
//! scripts/build-bpf.sh) is loaded by aya, a loader written in Rust, so building naslab
//! needs no clang or libbpf. The records become the calls the strace importer reads
//! (see [`render`]), so both collectors share one mapping from calls to ops.

mod btf;
mod calls;
mod event;
mod render;
pub mod service;
mod text;

use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, ExitStatus};

use aya::maps::{Array, HashMap as BpfHashMap, MapData, PerCpuArray, RingBuf};
use aya::programs::RawTracePoint;
use aya::programs::raw_trace_point::RawTracePointLink;
use aya::{Ebpf, EbpfLoader};

use crate::ImportError;
use crate::strace::line::Parsed;
use calls::{Spec, Sys, Thread};
use event::Event;
use render::Renderer;

/// The kernel side, built from bpf/capture.bpf.c.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../bpf/capture.bpf.o");

const BTF: &str = "/sys/kernel/btf/vmlinux";

/// The eBPF program loaded and attached, ready to follow a command.
pub struct Collector {
    /// The loaded object: `None` when the maps are borrowed from `naslab collector`.
    _ebpf: Option<Ebpf>,
    /// The programs' attachments; dropping one detaches its program. None when the
    /// maps are borrowed: the collector keeps the programs attached.
    links: Vec<RawTracePointLink>,
    /// The connection to `naslab collector` the maps are borrowed through, held while
    /// the capture runs: its end gives them back.
    service: Option<UnixStream>,
    /// Copies of the descriptors of the maps `tracked`, `events` and `lost`, which the
    /// kept-loaded collector lends (empty when borrowed).
    shared: Vec<std::os::fd::OwnedFd>,
    tracked: BpfHashMap<MapData, u32, Thread>,
    ring: RingBuf<MapData>,
    lost: PerCpuArray<MapData, u64>,
    calls: Vec<Sys>,
}

impl Collector {
    /// Loads and attaches the program; the error says why it cannot be used here (not
    /// root, no tracepoints, the kernel refused the program).
    pub fn load() -> Result<Collector, String> {
        if !cfg!(target_arch = "x86_64") {
            return Err("the eBPF collector knows the system calls of x86_64 only".into());
        }
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err("eBPF tracing needs root".into());
        }
        let btf = btf::KernelBtf::open(BTF)
            .map_err(|e| format!("the kernel's type information ({BTF}) cannot be read: {e}"))?;
        let pid_at = btf::member_offset(btf.bytes(), "task_struct", "pid")?;
        drop(btf);
        // The program reads no kernel structure through BTF, so it needs no relocation
        // against the kernel's BTF (whose parsing would cost every capture; the vendored
        // aya reads it only when asked or needed, vendor/README.md).
        let mut ebpf = EbpfLoader::new()
            .btf(None)
            .load(OBJECT)
            .map_err(|e| format!("the kernel refused the eBPF program: {e:#}"))?;
        let calls = calls::table();
        let mut links = Vec::new();
        {
            let mut config: Array<_, u32> = Array::try_from(map(&mut ebpf, "config")?)
                .map_err(|e| format!("eBPF map config: {e}"))?;
            config
                .set(0, pid_at, 0)
                .map_err(|e| format!("eBPF map config: {e}"))?;
            let mut specs: Array<_, Spec> = Array::try_from(map(&mut ebpf, "specs")?)
                .map_err(|e| format!("eBPF map specs: {e}"))?;
            for s in &calls {
                specs
                    .set(s.nr as u32, s.spec, 0)
                    .map_err(|e| format!("eBPF map specs ({}): {e}", s.name))?;
            }
        }
        for (prog, name) in [
            ("sys_enter", "sys_enter"),
            ("sys_exit", "sys_exit"),
            ("process_fork", "sched_process_fork"),
            ("process_exit", "sched_process_exit"),
        ] {
            let p: &mut RawTracePoint = ebpf
                .program_mut(prog)
                .ok_or_else(|| format!("the eBPF object has no program {prog}"))?
                .try_into()
                .map_err(|e| format!("eBPF program {prog}: {e}"))?;
            p.load()
                .map_err(|e| format!("the kernel refused eBPF program {prog}: {e:#}"))?;
            let id = p
                .attach(name)
                .map_err(|e| format!("cannot attach to the raw tracepoint {name}: {e:#}"))?;
            links.push(
                p.take_link(id)
                    .map_err(|e| format!("eBPF program {prog}: {e}"))?,
            );
        }
        let take = |ebpf: &mut Ebpf, name: &str| {
            ebpf.take_map(name)
                .ok_or_else(|| format!("the eBPF object has no map {name}"))
        };
        let (tracked, ring, lost) = (
            take(&mut ebpf, "tracked")?,
            take(&mut ebpf, "events")?,
            take(&mut ebpf, "lost")?,
        );
        let shared = [&tracked, &ring, &lost]
            .into_iter()
            .map(|m| match m {
                aya::maps::Map::HashMap(d)
                | aya::maps::Map::RingBuf(d)
                | aya::maps::Map::PerCpuArray(d) => d
                    .fd()
                    .as_fd()
                    .try_clone_to_owned()
                    .map_err(|e| format!("cannot keep the eBPF maps: {e}")),
                _ => Err("an eBPF map of an unexpected type".to_string()),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let tracked =
            BpfHashMap::try_from(tracked).map_err(|e| format!("eBPF map tracked: {e}"))?;
        let ring = RingBuf::try_from(ring).map_err(|e| format!("eBPF map events: {e}"))?;
        let lost = PerCpuArray::try_from(lost).map_err(|e| format!("eBPF map lost: {e}"))?;
        Ok(Collector {
            _ebpf: Some(ebpf),
            links,
            service: None,
            shared,
            tracked,
            ring,
            lost,
            calls,
        })
    }

    /// Borrows the maps of the collector listening on `socket` (`naslab collector`),
    /// whose programs stay attached: nothing to load. `Ok(None)` when none listens there.
    pub fn borrow(socket: &Path) -> Result<Option<Collector>, String> {
        let calls = calls::table();
        let Some(b) = service::borrow(socket, &calls)? else {
            return Ok(None);
        };
        let (tracked, ring, lost) = b.maps;
        Ok(Some(Collector {
            _ebpf: None,
            links: Vec::new(),
            service: Some(b.conn),
            shared: Vec::new(),
            tracked,
            ring,
            lost,
            calls,
        }))
    }

    /// Runs the command and hands every call and thread's end of its process tree to
    /// `feed`, in the order they happened, until the command and everything it started
    /// have ended. Returns how the command ended, how many records the ring buffer
    /// could not take, and the programs' detachment, under way.
    pub fn run(
        mut self,
        command: &[OsString],
        mut feed: impl FnMut(Parsed) -> Result<(), ImportError>,
    ) -> Result<(ExitStatus, u64, Detaching), ImportError> {
        let cwd = std::env::current_dir()
            .map_err(|e| ImportError::Usage(format!("the current directory: {e}")))?;
        let fds = (0..3)
            .map(|n| {
                let path = std::fs::read_link(format!("/proc/self/fd/{n}"))
                    .ok()
                    .map(|p| p.to_string_lossy().into_owned())
                    .filter(|p| p.starts_with('/'));
                (n, path)
            })
            .collect();
        let mut renderer = Renderer::new(&self.calls, cwd.to_string_lossy().into_owned(), fds);
        // The thread that starts the command is followed only for its children: the
        // command is followed from its first call.
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() } as u32;
        self.tracked
            .insert(me, Thread::starter(), 0)
            .map_err(|e| ImportError::Usage(format!("eBPF map tracked: {e}")))?;
        let spawned = Command::new(&command[0]).args(&command[1..]).spawn();
        let _ = self.tracked.remove(&me);
        let mut child = spawned.map_err(|e| {
            ImportError::Usage(format!(
                "cannot start {}: {e}",
                command[0].to_string_lossy()
            ))
        })?;
        // The command's end wakes the loop below as its records do: the record of its
        // exit is written before the kernel makes it waitable, so after that record a
        // poll of the ring alone would sleep out its timeout.
        let (pid, flags) = (child.id() as libc::c_long, 0 as libc::c_long);
        // SAFETY: pidfd_open takes a pid and flags (passed as the full registers the call
        // reads) and returns a new descriptor or -1.
        let pidfd = match unsafe { libc::syscall(libc::SYS_pidfd_open, pid, flags) } {
            fd if fd >= 0 => {
                // SAFETY: the descriptor was just made and is owned by nothing else.
                Some(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
            }
            _ => None,
        };
        let mut out = Vec::new();
        let mut status = None;
        loop {
            let mut fault = None;
            while let Some(item) = self.ring.next() {
                let Some(ev) = Event::parse(&item) else {
                    continue;
                };
                renderer.record(&ev, &mut out);
                drop(item);
                for p in out.drain(..) {
                    if fault.is_none()
                        && let Err(e) = feed(p)
                    {
                        fault = Some(e);
                    }
                }
            }
            if let Some(e) = fault {
                let _ = child.kill();
                let _ = child.wait();
                return Err(e);
            }
            if status.is_none() {
                status = child
                    .try_wait()
                    .map_err(|e| ImportError::Usage(format!("waiting for the command: {e}")))?;
            }
            if status.is_some() && (!renderer.any_live() || self.lost_count() > 0) {
                // With records lost, a thread's end may be among them.
                break;
            }
            let watch = |fd: i32| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let mut pfds = [watch(self.ring.as_raw_fd()), watch(-1), watch(-1)];
            if let (None, Some(p)) = (status, &pidfd) {
                pfds[1] = watch(p.as_raw_fd());
            }
            if let Some(s) = &self.service {
                pfds[2] = watch(s.as_raw_fd());
            }
            // SAFETY: pfds is an array of three valid pollfds (a negative fd is ignored)
            // for the call's duration.
            unsafe { libc::poll(pfds.as_mut_ptr(), 3, 5) };
            // The collector says nothing while a capture runs: anything from it is its
            // end, after which the programs are detached and calls go unrecorded.
            if pfds[2].revents != 0 {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ImportError::Usage(
                    "the collector stopped during the capture, so the trace would miss calls; capture again".into(),
                ));
            }
        }
        let detaching = Detaching::start(std::mem::take(&mut self.links));
        let lost = self.lost_count();
        let status =
            status.ok_or_else(|| ImportError::Usage("the command's end was not seen".into()))?;
        Ok((status, lost, detaching))
    }

    fn lost_count(&self) -> u64 {
        self.lost.get(&0, 0).map(|v| v.iter().sum()).unwrap_or(0)
    }
}

/// The programs being detached, by a thread of their own, while the trace is written.
pub struct Detaching(Vec<std::thread::JoinHandle<()>>);

impl Detaching {
    fn start(links: Vec<RawTracePointLink>) -> Detaching {
        Detaching(
            links
                .into_iter()
                .map(|l| std::thread::spawn(move || drop(l)))
                .collect(),
        )
    }

    /// Waits until every program is detached.
    pub fn wait(self) {
        for t in self.0 {
            let _ = t.join();
        }
    }
}

fn map<'a>(ebpf: &'a mut Ebpf, name: &str) -> Result<&'a mut aya::maps::Map, String> {
    ebpf.map_mut(name)
        .ok_or_else(|| format!("the eBPF object has no map {name}"))
}
