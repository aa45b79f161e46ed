use std::sync::Arc;

use naslab_trace::OpKind;

use super::{Backend, BackendOptions, Caps, Handle, OpError, OpenHow, QueuedIo, Target};
use crate::plan::FileTable;

/// A target that does no I/O: every op succeeds at once and moves the bytes the trace
/// asks for. It measures naslab itself and keeps engine tests fast.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullTarget;

/// The null target's connection.
pub struct NullBackend {
    files: Arc<FileTable>,
    next: Handle,
    queue: NullQueue,
}

/// The null backend's queue: every queued op completes at the next reap.
#[derive(Default)]
struct NullQueue {
    queued: Vec<(u64, i64)>,
}

impl QueuedIo for NullQueue {
    unsafe fn queue_read(
        &mut self,
        _h: Handle,
        _offset: u64,
        _buf: *mut u8,
        len: usize,
        tag: u64,
    ) -> Result<(), OpError> {
        self.queued.push((tag, len as i64));
        Ok(())
    }
    unsafe fn queue_write(
        &mut self,
        _h: Handle,
        _offset: u64,
        _buf: *const u8,
        len: usize,
        tag: u64,
    ) -> Result<(), OpError> {
        self.queued.push((tag, len as i64));
        Ok(())
    }
    fn submit_and_reap(&mut self, _min: usize, done: &mut Vec<(u64, i64)>) -> Result<(), OpError> {
        done.append(&mut self.queued);
        Ok(())
    }
}

impl NullBackend {
    /// A backend over `files`.
    pub fn new(files: Arc<FileTable>) -> Self {
        NullBackend {
            files,
            next: 3,
            queue: NullQueue::default(),
        }
    }
}

const NULL_CAPS: Caps = Caps {
    ops: [true; OpKind::ALL.len()],
    direct_io: true,
    drop_cache: true,
    moves_data: false,
    max_queue_depth: trace_max_depth(),
};

const fn trace_max_depth() -> u32 {
    naslab_trace::MAX_QUEUE_DEPTH
}

impl Target for NullTarget {
    fn backend_name(&self) -> &'static str {
        "null"
    }

    fn caps(&self) -> Caps {
        NULL_CAPS
    }

    fn connect(
        &self,
        _workload_dir: &str,
        files: Arc<FileTable>,
        _options: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        Ok(Box::new(NullBackend::new(files)))
    }
}

impl Backend for NullBackend {
    fn caps(&self) -> Caps {
        NULL_CAPS
    }
    fn open(&mut self, _file: u32, _how: OpenHow) -> Result<Handle, OpError> {
        self.next += 1;
        Ok(self.next)
    }
    fn close(&mut self, _h: Handle) -> Result<(), OpError> {
        Ok(())
    }
    fn read(&mut self, _h: Handle, _offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        Ok(buf.len())
    }
    fn write(&mut self, _h: Handle, _offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        Ok(buf.len())
    }
    fn fsync(&mut self, _h: Handle) -> Result<(), OpError> {
        Ok(())
    }
    fn truncate(&mut self, _h: Handle, _len: u64) -> Result<(), OpError> {
        Ok(())
    }
    fn fallocate(&mut self, _h: Handle, _offset: u64, _len: u64) -> Result<(), OpError> {
        Ok(())
    }
    fn stat(&mut self, file: u32) -> Result<u64, OpError> {
        Ok(self
            .files
            .entries
            .get(file as usize)
            .map(|e| e.size)
            .unwrap_or(0))
    }
    fn mkdir(&mut self, _file: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn readdir(&mut self, _file: u32) -> Result<u64, OpError> {
        Ok(0)
    }
    fn unlink(&mut self, _file: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn rename(&mut self, _from: u32, _to: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn drop_cache(&mut self, _file: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn queued(&mut self, _depth: u32) -> Result<&mut dyn QueuedIo, OpError> {
        Ok(&mut self.queue)
    }
}
