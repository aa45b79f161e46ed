//! The eBPF collector: a program on the kernel's syscall tracepoints
//! (`raw_syscalls:sys_enter`/`sys_exit`) and process tracepoints
//! (`sched:sched_process_fork`/`sched_process_exit`) records the calls of the command's
//! process tree into a ring buffer, which naslab drains as the command runs. The
//! program (bpf/capture.bpf.c, built into the committed bpf/capture.bpf.o by
//! scripts/build-bpf.sh) is loaded by aya, a loader written in Rust, so building naslab
//! needs no clang or libbpf. The records become the calls the strace importer reads
//! (see [`render`]), so both collectors share one mapping from calls to ops.

mod calls;
mod event;
mod render;

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, ExitStatus};

use aya::maps::{Array, HashMap as BpfHashMap, MapData, PerCpuArray, RingBuf};
use aya::programs::TracePoint;
use aya::Ebpf;

use crate::strace::line::Parsed;
use crate::ImportError;
use calls::{Spec, Sys};
use event::Event;
use render::Renderer;

/// The kernel side, built from bpf/capture.bpf.c.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../bpf/capture.bpf.o");

const TRACEFS: &str = "/sys/kernel/tracing";

/// The eBPF program loaded and attached, ready to follow a command.
pub struct Collector {
    // Dropping it detaches the programs.
    _ebpf: Ebpf,
    tracked: BpfHashMap<MapData, u32, u8>,
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
        let child_at = fork_child_offset()?;
        let mut ebpf = Ebpf::load(OBJECT)
            .map_err(|e| format!("the kernel refused the eBPF program: {e:#}"))?;
        let calls = calls::table();
        {
            let mut config: Array<_, u32> = Array::try_from(map(&mut ebpf, "config")?)
                .map_err(|e| format!("eBPF map config: {e}"))?;
            config
                .set(0, child_at, 0)
                .map_err(|e| format!("eBPF map config: {e}"))?;
            let mut specs: Array<_, Spec> = Array::try_from(map(&mut ebpf, "specs")?)
                .map_err(|e| format!("eBPF map specs: {e}"))?;
            for s in &calls {
                specs
                    .set(s.nr as u32, s.spec, 0)
                    .map_err(|e| format!("eBPF map specs ({}): {e}", s.name))?;
            }
        }
        for (prog, category, name) in [
            ("sys_enter", "raw_syscalls", "sys_enter"),
            ("sys_exit", "raw_syscalls", "sys_exit"),
            ("process_fork", "sched", "sched_process_fork"),
            ("process_exit", "sched", "sched_process_exit"),
        ] {
            let p: &mut TracePoint = ebpf
                .program_mut(prog)
                .ok_or_else(|| format!("the eBPF object has no program {prog}"))?
                .try_into()
                .map_err(|e| format!("eBPF program {prog}: {e}"))?;
            p.load()
                .map_err(|e| format!("the kernel refused eBPF program {prog}: {e:#}"))?;
            p.attach(category, name)
                .map_err(|e| format!("cannot attach to the tracepoint {category}:{name}: {e:#}"))?;
        }
        let take = |ebpf: &mut Ebpf, name: &str| {
            ebpf.take_map(name)
                .ok_or_else(|| format!("the eBPF object has no map {name}"))
        };
        let tracked = BpfHashMap::try_from(take(&mut ebpf, "tracked")?)
            .map_err(|e| format!("eBPF map tracked: {e}"))?;
        let ring = RingBuf::try_from(take(&mut ebpf, "events")?)
            .map_err(|e| format!("eBPF map events: {e}"))?;
        let lost = PerCpuArray::try_from(take(&mut ebpf, "lost")?)
            .map_err(|e| format!("eBPF map lost: {e}"))?;
        Ok(Collector {
            _ebpf: ebpf,
            tracked,
            ring,
            lost,
            calls,
        })
    }

    /// Runs the command and hands every call and thread's end of its process tree to
    /// `feed`, in the order they happened, until the command and everything it started
    /// have ended. Returns how the command ended and how many records the ring buffer
    /// could not take.
    pub fn run(
        mut self,
        command: &[OsString],
        mut feed: impl FnMut(Parsed) -> Result<(), ImportError>,
    ) -> Result<(ExitStatus, u64), ImportError> {
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
            .insert(me, 2, 0)
            .map_err(|e| ImportError::Usage(format!("eBPF map tracked: {e}")))?;
        let spawned = Command::new(&command[0]).args(&command[1..]).spawn();
        let _ = self.tracked.remove(&me);
        let mut child = spawned.map_err(|e| {
            ImportError::Usage(format!(
                "cannot start {}: {e}",
                command[0].to_string_lossy()
            ))
        })?;
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
                    if fault.is_none() {
                        if let Err(e) = feed(p) {
                            fault = Some(e);
                        }
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
            if status.is_some() && !renderer.any_live() {
                break;
            }
            let mut pfd = libc::pollfd {
                fd: self.ring.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: pfd is one valid pollfd for the call's duration.
            unsafe { libc::poll(&mut pfd, 1, 5) };
        }
        let lost = self.lost.get(&0, 0).map(|v| v.iter().sum()).unwrap_or(0);
        let status =
            status.ok_or_else(|| ImportError::Usage("the command's end was not seen".into()))?;
        Ok((status, lost))
    }
}

fn map<'a>(ebpf: &'a mut Ebpf, name: &str) -> Result<&'a mut aya::maps::Map, String> {
    ebpf.map_mut(name)
        .ok_or_else(|| format!("the eBPF object has no map {name}"))
}

/// Where sched_process_fork's record holds the child's pid (it moved between kernels),
/// from the tracepoint's format in tracefs, which is mounted first if it is not.
fn fork_child_offset() -> Result<u32, String> {
    let format = Path::new(TRACEFS).join("events/sched/sched_process_fork/format");
    if !format.exists() && !Path::new("/sys/kernel/debug/tracing/events").exists() {
        mount_tracefs()?;
    }
    let text = std::fs::read_to_string(&format)
        .or_else(|_| {
            std::fs::read_to_string(
                "/sys/kernel/debug/tracing/events/sched/sched_process_fork/format",
            )
        })
        .map_err(|e| format!("cannot read the tracepoint sched_process_fork's format: {e}"))?;
    text.lines()
        .find(|l| l.contains(" child_pid;"))
        .and_then(|l| l.split("offset:").nth(1))
        .and_then(|l| l.split(';').next())
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| "the tracepoint sched_process_fork has no child_pid".into())
}

fn mount_tracefs() -> Result<(), String> {
    let target = std::ffi::CString::new(TRACEFS).map_err(|e| e.to_string())?;
    // SAFETY: every argument is a valid NUL-terminated string or NULL.
    let rc = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc != 0 {
        return Err(format!(
            "tracefs is not mounted and mounting it on {TRACEFS} failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}
