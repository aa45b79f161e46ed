//! The collector kept loaded between captures (`naslab collector`): the eBPF programs
//! stay attached in one long-lived process, and each `naslab capture` borrows its maps
//! through a Unix socket instead of loading its own. A capture then skips what a
//! loaded-anew collector pays every time: the object and its 8 MiB ring made, four
//! programs verified, and the first probe on a system-call tracepoint, which waits for
//! an RCU grace period when another capture left it moments before.
//!
//! The exchange, one capture at a time: the capture connects and sends
//! `naslab-capture <build>` on a line; the collector checks that the peer runs as root
//! (the maps let their holder follow and read the calls of any process) and that its
//! build is the collector's own (both sides must read the records alike), and answers
//! `ok` with the descriptors of the maps `tracked`, `events` and `lost` attached, or
//! `refused: <why>`. The capture keeps the connection open while it runs; when it
//! closes (the capture ended, or died), the collector stops following whatever that
//! capture followed, empties the ring, zeroes the count of lost records, and takes the
//! next capture. A capture that finds the connection closed under it (the collector
//! stopped) fails rather than miss calls.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::time::{Duration, Instant};

use aya::maps::{HashMap as BpfHashMap, MapData, PerCpuArray, PerCpuValues, RingBuf};

use super::calls::{Sys, Thread};
use super::{Collector, OBJECT};

/// The maps a capture borrows, in the order their descriptors travel.
const SHARED_MAPS: [&str; 3] = ["tracked", "events", "lost"];

/// What identifies the kernel side and the call table a build reads records with: the
/// object's bytes and every recorded call's number and spec. Two builds that agree on
/// it read each other's records alike.
pub fn build_id(calls: &[Sys]) -> String {
    // FNV-1a, 64 bits: an identity check between two builds, not a defence.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(OBJECT);
    for s in calls {
        eat(&s.nr.to_le_bytes());
        eat(s.name.as_bytes());
        eat(&s.spec.bytes());
    }
    format!("{h:016x}")
}

/// Runs the collector: listens on `socket` and serves captures one at a time until the
/// process is stopped. `ready` is called once the socket takes connections; `served`
/// after each capture, with its client's pid and how long it held the collector.
pub fn serve(
    collector: Collector,
    socket: &Path,
    ready: impl FnOnce(),
    mut served: impl FnMut(i32, Duration),
) -> Result<(), String> {
    let listener = listen(socket)?;
    let id = build_id(&collector.calls);
    let mut shared = Shared::of(&collector)?;
    ready();
    for conn in listener.incoming() {
        let mut conn = match conn {
            Ok(c) => c,
            Err(e) => return Err(format!("the collector's socket {}: {e}", socket.display())),
        };
        let started = Instant::now();
        let pid = match greet(&mut conn, &id, &shared) {
            Ok(pid) => pid,
            Err(why) => {
                let _ = writeln!(conn, "refused: {why}");
                continue;
            }
        };
        // The capture holds the connection while it runs: its end (or the capture's
        // death) closes it.
        let mut sink = [0u8; 64];
        while matches!(conn.read(&mut sink), Ok(n) if n > 0) {}
        shared.reset()?;
        served(pid, started.elapsed());
    }
    Ok(())
}

/// Binds the socket, readable and writable by root alone; a socket left by a collector
/// that is gone is replaced, a live one is not.
fn listen(socket: &Path) -> Result<UnixListener, String> {
    if let Some(dir) = socket.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot make {} for the socket: {e}", dir.display()))?;
    }
    if let Ok(meta) = std::fs::symlink_metadata(socket) {
        use std::os::unix::fs::FileTypeExt;
        if !meta.file_type().is_socket() {
            return Err(format!(
                "{} exists and is no socket: give another --socket",
                socket.display()
            ));
        }
        if UnixStream::connect(socket).is_ok() {
            return Err(format!(
                "a collector is already listening on {}: stop it first, or give another --socket",
                socket.display()
            ));
        }
        std::fs::remove_file(socket)
            .map_err(|e| format!("cannot remove the stale socket {}: {e}", socket.display()))?;
    }
    // Made with no permission for group and others from the start (umask), not
    // narrowed after the bind.
    // SAFETY: umask only swaps the process's file mode mask.
    let old = unsafe { libc::umask(0o177) };
    let bound = UnixListener::bind(socket);
    // SAFETY: as above.
    unsafe { libc::umask(old) };
    bound.map_err(|e| format!("cannot listen on {}: {e}", socket.display()))
}

/// Reads the capture's greeting and answers it: the maps' descriptors, or why not.
/// Returns the capture's pid.
fn greet(conn: &mut UnixStream, id: &str, shared: &Shared) -> Result<i32, String> {
    let cred = peer(conn).map_err(|e| format!("cannot tell who connected: {e}"))?;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    if cred.uid != 0 && cred.uid != me {
        return Err(format!(
            "captures through the collector need root (this one runs as uid {})",
            cred.uid
        ));
    }
    conn.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let mut line = String::new();
    BufReader::new(&mut *conn)
        .take(256)
        .read_line(&mut line)
        .map_err(|e| format!("no greeting: {e}"))?;
    conn.set_read_timeout(None).map_err(|e| e.to_string())?;
    let theirs = line
        .trim_end()
        .strip_prefix("naslab-capture ")
        .ok_or("not a naslab capture")?;
    if theirs != id {
        return Err(format!(
            "the collector runs another naslab build (kernel side and call table {id}, the capture's {theirs}); restart the collector with the naslab that captures"
        ));
    }
    send_fds(conn, b"ok\n", &shared.fds())
        .map_err(|e| format!("cannot hand over the maps: {e}"))?;
    Ok(cred.pid)
}

/// The collector's own handles on the shared maps, to undo what a capture left.
struct Shared {
    fds: [OwnedFd; 3],
}

impl Shared {
    fn of(c: &Collector) -> Result<Shared, String> {
        Ok(Shared {
            fds: three_copies(&c.shared)?,
        })
    }

    fn fds(&self) -> [BorrowedFd<'_>; 3] {
        [
            self.fds[0].as_fd(),
            self.fds[1].as_fd(),
            self.fds[2].as_fd(),
        ]
    }

    /// Leaves the maps as a fresh collector has them: no thread followed, the ring
    /// empty, no record counted lost. Handles of its own each time: a ring handle keeps
    /// its own idea of where reading stopped, and the capture read past it.
    fn reset(&mut self) -> Result<(), String> {
        let (mut tracked, mut ring, mut lost) = open_maps(three_copies(&self.fds)?)?;
        let keys: Vec<u32> = tracked.keys().filter_map(Result::ok).collect();
        for k in keys {
            let _ = tracked.remove(&k);
        }
        while let Some(item) = ring.next() {
            drop(item);
        }
        let cpus = aya::util::nr_cpus().map_err(|(_, e)| format!("the CPUs: {e}"))?;
        let zeros =
            PerCpuValues::try_from(vec![0u64; cpus]).map_err(|e| format!("eBPF map lost: {e}"))?;
        lost.set(0, zeros, 0)
            .map_err(|e| format!("eBPF map lost: {e}"))
    }
}

/// Copies of the three shared maps' descriptors.
fn three_copies(fds: &[OwnedFd]) -> Result<[OwnedFd; 3], String> {
    let copies = fds
        .iter()
        .map(|f| f.try_clone())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("cannot copy the collector's map descriptors: {e}"))?;
    <[OwnedFd; 3]>::try_from(copies)
        .map_err(|_| "the collector was not loaded here: it has no maps to lend".to_string())
}

type Maps = (
    BpfHashMap<MapData, u32, Thread>,
    RingBuf<MapData>,
    PerCpuArray<MapData, u64>,
);

/// The three shared maps, from their descriptors.
fn open_maps(fds: [OwnedFd; 3]) -> Result<Maps, String> {
    let [tracked, ring, lost] = fds;
    let map = |fd: OwnedFd, i: usize| {
        MapData::from_fd(fd)
            .and_then(aya::maps::Map::from_map_data)
            .map_err(|e| format!("eBPF map {}: {e}", SHARED_MAPS[i]))
    };
    Ok((
        BpfHashMap::try_from(map(tracked, 0)?).map_err(|e| format!("eBPF map tracked: {e}"))?,
        RingBuf::try_from(map(ring, 1)?).map_err(|e| format!("eBPF map events: {e}"))?,
        PerCpuArray::try_from(map(lost, 2)?).map_err(|e| format!("eBPF map lost: {e}"))?,
    ))
}

/// A capture's hold on a running collector: the maps it lent, and the connection whose
/// end gives them back.
pub struct Borrowed {
    pub maps: Maps,
    pub conn: UnixStream,
}

/// Asks the collector on `socket` for its maps. `Ok(None)`: no collector listens there.
/// Waits while another capture holds it, saying so after a second.
pub fn borrow(socket: &Path, calls: &[Sys]) -> Result<Option<Borrowed>, String> {
    let mut conn = match UnixStream::connect(socket) {
        Ok(c) => c,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Ok(None);
        }
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(format!(
                "only root may use the collector at {}: capture as root, or without --collector",
                socket.display()
            ));
        }
        Err(e) => return Err(format!("the collector's socket {}: {e}", socket.display())),
    };
    writeln!(conn, "naslab-capture {}", build_id(calls))
        .map_err(|e| format!("the collector at {}: {e}", socket.display()))?;
    let mut said = false;
    let (reply, fds) = loop {
        match recv_fds(&conn, Duration::from_secs(1)) {
            Ok(Some(got)) => break got,
            Ok(None) if !said => {
                eprintln!(
                    "waiting for the collector at {}: another capture is using it",
                    socket.display()
                );
                said = true;
            }
            Ok(None) => {}
            Err(e) => return Err(format!("the collector at {}: {e}", socket.display())),
        }
    };
    let reply = String::from_utf8_lossy(&reply);
    let reply = reply.trim_end();
    if let Some(why) = reply.strip_prefix("refused: ") {
        return Err(format!(
            "the collector at {} refused: {why}",
            socket.display()
        ));
    }
    if reply != "ok" {
        return Err(format!(
            "the collector at {} answered {reply:?}",
            socket.display()
        ));
    }
    let fds = <[OwnedFd; 3]>::try_from(fds).map_err(|got| {
        format!(
            "the collector at {} sent {} descriptors, not 3",
            socket.display(),
            got.len()
        )
    })?;
    Ok(Some(Borrowed {
        maps: open_maps(fds)?,
        conn,
    }))
}

/// The credentials of the process at the other end.
fn peer(conn: &UnixStream) -> std::io::Result<libc::ucred> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: cred and len are valid for writes of the sizes given, for the call.
    let rc = unsafe {
        libc::getsockopt(
            conn.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred)
}

/// A message header over one buffer and a control buffer (for descriptors), both of
/// which must outlive its use.
fn message(iov: &mut libc::iovec, control: &mut [u64]) -> libc::msghdr {
    // SAFETY: an all-zero msghdr is valid (no name, no buffers); the fields are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(control) as _;
    msg
}

/// Sends `bytes` with the descriptors attached (SCM_RIGHTS).
fn send_fds(conn: &UnixStream, bytes: &[u8], fds: &[BorrowedFd<'_>]) -> std::io::Result<()> {
    let raw: Vec<RawFd> = fds.iter().map(|f| f.as_raw_fd()).collect();
    let payload = std::mem::size_of_val(raw.as_slice());
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(payload as u32) } as usize;
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: bytes.as_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    let msg = message(&mut iov, &mut control);
    // SAFETY: the control buffer holds `space` bytes, room for one header and the
    // descriptors, so the first header and its data lie within it; iov points at bytes
    // that outlive the call, which only reads them.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(payload as u32) as _;
        std::ptr::copy_nonoverlapping(raw.as_ptr(), libc::CMSG_DATA(cmsg).cast(), raw.len());
        if libc::sendmsg(conn.as_raw_fd(), &msg, libc::MSG_NOSIGNAL) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives a message and the descriptors attached to it, waiting up to `wait`:
/// `Ok(None)` when nothing came in that time.
fn recv_fds(conn: &UnixStream, wait: Duration) -> std::io::Result<Option<(Vec<u8>, Vec<OwnedFd>)>> {
    let mut pfd = libc::pollfd {
        fd: conn.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: pfd is one valid pollfd for the call.
    let ready = unsafe { libc::poll(&mut pfd, 1, wait.as_millis() as i32) };
    if ready < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if ready == 0 {
        return Ok(None);
    }
    let mut bytes = vec![0u8; 512];
    // Room for more descriptors than expected, so that none is cut off unseen.
    let room = 8 * std::mem::size_of::<RawFd>();
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(room as u32) } as usize;
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec {
        iov_base: bytes.as_mut_ptr().cast(),
        iov_len: bytes.len(),
    };
    let mut msg = message(&mut iov, &mut control);
    // SAFETY: msg's buffers are valid for writes of the sizes it gives, for the call;
    // MSG_CMSG_CLOEXEC makes the received descriptors close-on-exec, so the command
    // started next does not inherit them.
    let n = unsafe { libc::recvmsg(conn.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    if n == 0 {
        return Err(std::io::Error::other("it closed the connection"));
    }
    bytes.truncate(n as usize);
    let mut fds = Vec::new();
    // SAFETY: the headers walked are those recvmsg wrote into the control buffer, whose
    // length msg now gives; each SCM_RIGHTS header's data holds the descriptors it
    // counts, each new and owned by nothing else in this process.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(cmsg);
                let len = (*cmsg).cmsg_len as usize - (data as usize - cmsg as usize);
                for i in 0..len / std::mem::size_of::<RawFd>() {
                    let fd = std::ptr::read_unaligned(data.cast::<RawFd>().add(i));
                    fds.push(OwnedFd::from_raw_fd(fd));
                }
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    if msg.msg_flags & libc::MSG_CTRUNC != 0 {
        return Err(std::io::Error::other("more descriptors than expected"));
    }
    Ok(Some((bytes, fds)))
}
