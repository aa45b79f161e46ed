//! Preparation: builds the file set the trace expects before the measured phase.
//! Files the workload creates are left absent. Nothing here is measured.

use std::sync::atomic::{AtomicU64, Ordering};

use naslab_results::PrepareResult;
use naslab_trace::{FileKind, Prepare};

use crate::backend::{Backend, OpError, OpenHow};
use crate::buffer::AlignedBuf;
use crate::clock::monotonic_ns;
use crate::data::{self, BLOCK, DataSpec, PREPARED_GEN};
use crate::plan::Plan;
use crate::verify::Verifier;

/// Copies write in chunks of this size, after setting the size.
const COPY_CHUNK: usize = 1 << 20;
/// Streams append in chunks of this size, the size unknown up front.
const STREAM_CHUNK: usize = 64 << 10;

/// Why preparation failed.
#[derive(Debug, thiserror::Error)]
#[error("preparing '{path}' failed at {stage}: {error}{hint}{left}")]
pub struct PrepareError {
    pub path: String,
    pub stage: &'static str,
    pub error: OpError,
    pub hint: &'static str,
    /// What became of the files prepared before the failure (empty: not said).
    pub left: String,
}

impl PrepareError {
    /// Notes what became of the files prepared before the failure: removed again, or
    /// (`removed` false) left on `target` (as the user gave it, when known).
    pub fn note_left(&mut self, removed: bool, target: Option<&std::path::Path>) {
        self.left = match (removed, target) {
            (true, _) => "; the files it had prepared were removed".into(),
            (false, Some(t)) => format!(
                "; the files it had prepared are still there: `naslab clean --target {}` removes them",
                t.display()
            ),
            (false, None) => "; the files it had prepared are still on the target: `naslab clean` with the same --target removes them".into(),
        };
    }
}

fn fail(path: &str, stage: &'static str, error: OpError) -> PrepareError {
    let hint = match error.errno {
        crate::errno::ENOSPC | crate::errno::EDQUOT => {
            "; the target is full: free space there or run a smaller --scale"
        }
        crate::errno::EROFS => "; the target is read-only: remount it read-write",
        crate::errno::EACCES | crate::errno::EPERM => {
            "; naslab may not write there: check the target's permissions"
        }
        _ => "",
    };
    PrepareError {
        path: path.to_string(),
        stage,
        error,
        hint,
        left: String::new(),
    }
}

/// Builds every entry that exists before the measured phase, parents first, with
/// random data. `bytes_done` counts prepared bytes for a progress display.
pub fn prepare(
    plan: &Plan,
    backend: &mut dyn Backend,
    bytes_done: &AtomicU64,
) -> Result<PrepareResult, PrepareError> {
    prepare_with(
        plan,
        backend,
        bytes_done,
        &DataSpec::default(),
        None,
        &|| false,
    )
}

/// Like [`prepare`], writing `spec`'s data (the prepared generation of each block),
/// booking each file in `verifier`, and stopping (failing with `EINTR`) once `stop`
/// says so (asked before each file and each chunk written).
pub fn prepare_with(
    plan: &Plan,
    backend: &mut dyn Backend,
    bytes_done: &AtomicU64,
    spec: &DataSpec,
    verifier: Option<&Verifier>,
    stop: &dyn Fn() -> bool,
) -> Result<PrepareResult, PrepareError> {
    let cancelled = stop;
    let start = monotonic_ns();
    let entries = &plan.files.entries;
    let mut order: Vec<u32> = (0..entries.len() as u32)
        .filter(|&i| entries[i as usize].exists)
        .collect();
    // Parents before children: a parent's path has fewer components.
    order.sort_by_key(|&i| {
        let e = &entries[i as usize];
        (e.path.matches('/').count(), e.kind == FileKind::File, i)
    });
    let mut chunk = AlignedBuf::zeroed(COPY_CHUNK);
    let mut scratch = vec![0u8; BLOCK];
    let mut result = PrepareResult::default();
    for i in order {
        let e = &entries[i as usize];
        if cancelled() {
            return Err(fail(
                &e.path,
                "stopped",
                OpError::errno(crate::errno::EINTR),
            ));
        }
        if e.kind == FileKind::Dir {
            backend
                .mkdir(i)
                .map_err(|err| fail(&e.path, "mkdir", err))?;
            result.dirs += 1;
            continue;
        }
        let how = OpenHow {
            write: true,
            create: true,
            truncate: true,
            ..OpenHow::default()
        };
        let h = backend
            .open(i, how)
            .map_err(|err| fail(&e.path, "create", err))?;
        let step = match e.prepare {
            Prepare::Copy => {
                backend
                    .truncate(h, e.size)
                    .map_err(|err| fail(&e.path, "set size", err))?;
                COPY_CHUNK
            }
            Prepare::Stream => STREAM_CHUNK,
        };
        let mut offset = 0u64;
        while offset < e.size {
            if cancelled() {
                let _ = backend.close(h);
                return Err(fail(
                    &e.path,
                    "stopped",
                    OpError::errno(crate::errno::EINTR),
                ));
            }
            let n = (e.size - offset).min(step as u64) as usize;
            let buf = &mut chunk.as_mut_slice()[..n];
            // The chunk started zeroed; zero data never puts anything else in it.
            if !spec.only_zeros() {
                data::fill(spec, i, offset, PREPARED_GEN, buf, &mut scratch);
            }
            let written = backend
                .write(h, offset, buf)
                .map_err(|err| fail(&e.path, "write", err))?;
            if written == 0 {
                return Err(fail(&e.path, "write", OpError::errno(crate::errno::ENOSPC)));
            }
            offset += written as u64;
            bytes_done.fetch_add(written as u64, Ordering::Relaxed);
        }
        backend
            .close(h)
            .map_err(|err| fail(&e.path, "close", err))?;
        if let Some(v) = verifier {
            v.prepared(i, e.size);
        }
        result.files += 1;
        result.bytes += e.size;
    }
    result.wall_ns = monotonic_ns() - start;
    Ok(result)
}

/// Writes every prepared file back to stable storage (an fsync, or the protocol's
/// flush or commit), keeping whatever is cached: the measured phase then never pays
/// for writing back what the preparation wrote, on the client or on the server.
pub fn write_back(plan: &Plan, backend: &mut dyn Backend) -> Result<(), PrepareError> {
    let how = OpenHow {
        write: true,
        ..OpenHow::default()
    };
    for (i, e) in plan.files.entries.iter().enumerate() {
        if e.exists && e.kind == FileKind::File {
            let h = backend
                .open(i as u32, how)
                .map_err(|err| fail(&e.path, "opening to write back", err))?;
            let synced = backend.fsync(h);
            let closed = backend.close(h);
            synced.map_err(|err| fail(&e.path, "writing back", err))?;
            closed.map_err(|err| fail(&e.path, "close", err))?;
        }
    }
    Ok(())
}

/// Writes back and drops the client's cached pages of every prepared file.
pub fn drop_caches(plan: &Plan, backend: &mut dyn Backend) -> Result<(), PrepareError> {
    for (i, e) in plan.files.entries.iter().enumerate() {
        if e.exists && e.kind == FileKind::File {
            backend
                .drop_cache(i as u32)
                .map_err(|err| fail(&e.path, "dropping cached pages", err))?;
        }
    }
    Ok(())
}
