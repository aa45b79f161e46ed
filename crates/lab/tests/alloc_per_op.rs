//! No allocation per op in either protocol client's data path: once a connection has
//! warmed up, READs and WRITEs reuse its buffers. Counted with a global allocator that
//! counts the calls made on the thread doing the ops (each connection's runtime, and so
//! its receiver and writer tasks, runs on that thread): N ops and 10·N ops must make
//! the same number of calls (counted again, a few rounds at most, while buffers are
//! still growing to how many replies land at once), for SMB on a signed and on an
//! encrypted session and for NFS, with ops of 64 KiB and of 8 MiB.
//! Needs root and the servers: skipped with a note otherwise, and failing instead under
//! NASLAB_REQUIRE_ROOT=1 (CI).

#![cfg(target_os = "linux")]
// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::*;
use naslab_engine::{Backend, Target};
use naslab_lab::{FsKind, ServerKind};
use naslab_targets::url::SmbEncrypt;

/// Counts calls to the allocator (alloc, alloc_zeroed, realloc) made on a thread
/// while it counts.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static CALLS: Cell<u64> = const { Cell::new(0) };
}

fn note_call() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = CALLS.try_with(|c| c.set(c.get() + 1));
    }
}

// SAFETY: every call is passed to the system allocator unchanged; counting a call
// allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_call();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_call();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_call();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The allocator calls `f` makes on this thread.
fn calls_during(f: impl FnOnce()) -> u64 {
    CALLS.with(|c| c.set(0));
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    CALLS.with(Cell::get)
}

const SMALL: usize = 64 << 10;
const LARGE: usize = 8 << 20;

/// Warms a connection up, then counts the allocator calls of `n` and of `10 * n`
/// READs and WRITEs of each size, and checks they are the same.
fn check(target: &dyn Target, what: &str) {
    let (mut b, h) = one_open_file(target, "alloc");
    let data = vec![0x5au8; LARGE];
    let mut buf = vec![0u8; LARGE];
    let write = |b: &mut Box<dyn Backend>, len: usize| {
        assert_eq!(b.write(h, 0, &data[..len]).unwrap(), len, "{what}: write");
    };
    // The largest ops first, so that every buffer has grown to their size: the writes,
    // then the reads, each many in a row (an SMB op of 8 MiB is 8 requests at once, so
    // the client holds up to 9 buffers; each must have held a large reply once, and
    // how many are out at a time depends on when the replies land: with 16 of each, CI
    // once saw a new buffer, 2 allocator calls, in the 20 reads counted after them).
    // Then enough small ones for every queue to have come round a few times.
    for (len, times) in [(LARGE, 64), (SMALL, 64)] {
        for _ in 0..times {
            write(&mut b, len);
        }
        for _ in 0..times {
            assert_eq!(b.read(h, 0, &mut buf[..len]).unwrap(), len, "{what}: read");
        }
    }
    assert!(buf[..LARGE].iter().all(|&x| x == 0x5a), "{what}: data read");
    // How many buffers a connection holds at once depends on when the replies land, so
    // a count can still see one buffer grow, or one more made, the first time more of
    // them are out at once than in every earlier op. That can happen only a bounded
    // number of times (the client keeps 16 of each at most, and a buffer grows to the
    // largest reply once), while an allocation per op shows in every count, at least 18
    // calls more for the tenfold count than for the first. So each size and direction
    // is counted again, up to ROUNDS times, until the tenfold count is no higher.
    const ROUNDS: usize = 4;
    let mut failures = Vec::new();
    for (len, n) in [(SMALL, 16), (LARGE, 2)] {
        for op in ["reads", "writes"] {
            let count = |b: &mut Box<dyn Backend>, buf: &mut [u8], times: usize| {
                calls_during(|| {
                    for _ in 0..times {
                        let got = if op == "reads" {
                            b.read(h, 0, &mut buf[..len])
                        } else {
                            b.write(h, 0, &data[..len])
                        };
                        assert_eq!(got.as_ref().ok(), Some(&len), "{what}: {op}: {got:?}");
                    }
                })
            };
            let mut rounds = Vec::new();
            for _ in 0..ROUNDS {
                let once = count(&mut b, &mut buf, n);
                let tenfold = count(&mut b, &mut buf, 10 * n);
                eprintln!(
                    "{what}: {n} {op} of {len} bytes: {once} allocator calls; {} {op}: {tenfold}",
                    10 * n
                );
                rounds.push((once, tenfold));
                if tenfold <= once {
                    break;
                }
            }
            if rounds.iter().all(|&(once, tenfold)| tenfold > once) {
                failures.push(format!(
                    "{op} of {len} bytes, ({n} ops, {} ops) allocator calls in each of {ROUNDS} rounds: {rounds:?}",
                    10 * n
                ));
            }
        }
    }
    b.close(h).unwrap();
    assert!(
        failures.is_empty(),
        "{what}: allocations per op: {failures:#?}"
    );
}

#[test]
fn smb_reads_and_writes_allocate_nothing_once_warm() {
    needs_root_and_servers!(ServerKind::Samba);
    let lab = TempLab::up(FsKind::Dir, ServerKind::Samba, &[]);
    let target = smb(lab.state());
    assert!(
        target.security().ends_with("not encrypted"),
        "{}",
        target.security()
    );
    check(&target, "SMB, signed");
}

#[test]
fn encrypted_smb_reads_and_writes_allocate_nothing_once_warm() {
    needs_root_and_servers!(ServerKind::Samba);
    let lab = TempLab::up(
        FsKind::Dir,
        ServerKind::Samba,
        &["global: server smb encrypt = required"],
    );
    let target = smb_encrypting(lab.state(), SmbEncrypt::Required).expect("smb connects");
    assert!(
        target.security().contains(", encrypted"),
        "{}",
        target.security()
    );
    check(&target, "SMB, encrypted");
}

#[test]
fn nfs_reads_and_writes_allocate_nothing_once_warm() {
    needs_root_and_servers!(ServerKind::Nfs);
    let lab = TempLab::up(FsKind::Dir, ServerKind::Nfs, &[]);
    let target = nfs(&lab.state().url);
    check(&target, "NFS");
}
