//! A protocol connection's paths: what one costs must not grow with the run's file set,
//! since every one of hundreds of connections keeps its own. The bytes are counted by
//! this test binary's allocator, on this thread only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use naslab_backend::{FileEntry, FileTable};
use naslab_remote::remote::SharePaths;
use naslab_trace::{FileKind, Prepare};

struct Counting;

thread_local! {
    static ALLOCATED: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: every call is passed on to the system allocator unchanged; the count is a
// thread-local cell, which allocates nothing.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + layout.size() as u64));
        // SAFETY: the caller's layout is passed on as given.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCATED.try_with(|a| a.set(a.get() + new_size as u64));
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocated() -> u64 {
    ALLOCATED.with(Cell::get)
}

fn table(files: usize) -> Arc<FileTable> {
    let entries = (0..files)
        .map(|i| FileEntry {
            id: Some(i as u32),
            path: if i == 0 {
                "c0".to_string()
            } else {
                format!("c{}/f{i}.dat", i % 600)
            },
            kind: if i == 0 {
                FileKind::Dir
            } else {
                FileKind::File
            },
            size: 4096,
            exists: false,
            prepare: Prepare::Copy,
        })
        .collect();
    Arc::new(FileTable { entries })
}

/// Bytes allocated while a connection's paths are made for `files`.
fn cost_of_connecting(files: &Arc<FileTable>) -> (u64, SharePaths) {
    let dir = "naslab/FileServer_Write".to_string();
    let files = Arc::clone(files);
    let before = allocated();
    let paths = SharePaths::new(dir, files);
    (allocated() - before, paths)
}

#[test]
fn a_connection_keeps_nothing_per_file() {
    let small = table(1);
    let large = table(100_000);
    let (one, _) = cost_of_connecting(&small);
    let (many, paths) = cost_of_connecting(&large);
    // A table of every path would be at least 100,000 strings' headers (2.4 MB).
    assert_eq!(
        many, one,
        "a connection to 100,000 files allocated {many} bytes, to one file {one}"
    );
    // The paths it gives are the ones a table would have held.
    assert_eq!(paths.path(0).unwrap(), "naslab/FileServer_Write/c0");
    assert_eq!(
        paths.path(99_999).unwrap(),
        "naslab/FileServer_Write/c399/f99999.dat"
    );
    assert!(paths.is_dir(0));
    assert!(!paths.is_dir(1));
    assert!(!paths.is_dir(100_000));
    let past = paths.path(100_000).unwrap_err();
    assert_eq!(past.errno, naslab_backend::errno::EINVAL);
}
