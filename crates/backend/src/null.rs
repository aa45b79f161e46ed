use std::sync::Arc;

use naslab_trace::OpKind;

use crate::{
    Backend, BackendOptions, Caps, FileTable, Handle, IoBuf, IoMemory, LockHow, OpError, OpenHow,
    QueuedIo, Target,
};

/// A target that does no I/O: every op succeeds at once and moves the bytes the trace
/// asks for. It measures naslab itself and keeps engine tests fast.
#[derive(Debug, Default, Clone, Copy)]
pub struct NullTarget;

/// A null target whose every op takes a fixed service time (a server of known speed):
/// queueing is then known exactly, which is what tests of pacing and open-loop load
/// compare against. `--backend null --null-service-time DURATION`.
#[derive(Debug, Clone, Copy)]
pub struct TimedNullTarget {
    /// How long each op takes, ns.
    pub service_ns: u64,
    /// A stall: the op of each connection with this index (0 for its first) takes this
    /// much longer, ns (what a server's hiccup does to the ops queued behind it).
    pub stall: Option<(u64, u64)>,
}

/// The null target's connection.
pub struct NullBackend {
    files: Arc<FileTable>,
    next: Handle,
    queue: NullQueue,
    /// Each op's fixed service time (0 for none).
    service: std::time::Duration,
    /// The op index that stalls, and for how long more.
    stall: Option<(u64, std::time::Duration)>,
    /// Ops served so far.
    served: u64,
}

/// The null backend's queue: every queued op completes at the next reap, its whole
/// length done. It checks each op's bytes against the memory it was lent, as a queue
/// that moves data would find them.
#[derive(Default)]
struct NullQueue {
    memory: IoMemory,
    queued: Vec<(u64, i64)>,
}

impl NullQueue {
    fn queue(&mut self, buf: IoBuf, tag: u64) -> Result<(), OpError> {
        self.memory.locate(buf)?;
        self.queued.push((tag, buf.len as i64));
        Ok(())
    }
}

impl QueuedIo for NullQueue {
    fn queue_read(
        &mut self,
        _h: Handle,
        _offset: u64,
        buf: IoBuf,
        tag: u64,
    ) -> Result<(), OpError> {
        self.queue(buf, tag)
    }
    fn queue_write(
        &mut self,
        _h: Handle,
        _offset: u64,
        buf: IoBuf,
        tag: u64,
    ) -> Result<(), OpError> {
        self.queue(buf, tag)
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
            service: std::time::Duration::ZERO,
            stall: None,
            served: 0,
        }
    }

    /// Takes the service time: sleeps until shortly before it ends, then spins, so it is
    /// held to within the clock's reading even on a busy machine's coarse sleeps.
    #[inline]
    fn serve(&mut self) {
        let mut took = self.service;
        if let Some((at, extra)) = self.stall {
            if self.served == at {
                took += extra;
            }
            self.served += 1;
        }
        if took.is_zero() {
            return;
        }
        let end = std::time::Instant::now() + took;
        let spin = std::time::Duration::from_micros(200);
        if took > spin {
            std::thread::sleep(took - spin);
        }
        while std::time::Instant::now() < end {
            std::hint::spin_loop();
        }
    }
}

/// What the null target can do: every op, moving no bytes.
pub const NULL_CAPS: Caps = Caps {
    ops: [true; OpKind::ALL.len()],
    direct_io: true,
    drop_cache: Some(naslab_results::CacheDrop::Nothing),
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

impl Target for TimedNullTarget {
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
        let mut b = NullBackend::new(files);
        b.service = std::time::Duration::from_nanos(self.service_ns);
        b.stall = self
            .stall
            .map(|(at, ns)| (at, std::time::Duration::from_nanos(ns)));
        Ok(Box::new(b))
    }
}

impl Backend for NullBackend {
    fn caps(&self) -> Caps {
        NULL_CAPS
    }
    fn open(&mut self, _file: u32, _how: OpenHow) -> Result<Handle, OpError> {
        self.serve();
        self.next += 1;
        Ok(self.next)
    }
    fn close(&mut self, _h: Handle) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn read(&mut self, _h: Handle, _offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        self.serve();
        Ok(buf.len())
    }
    fn write(&mut self, _h: Handle, _offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        self.serve();
        Ok(buf.len())
    }
    fn fsync(&mut self, _h: Handle) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn truncate(&mut self, _h: Handle, _len: u64) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn fallocate(&mut self, _h: Handle, _offset: u64, _len: u64) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn stat(&mut self, file: u32) -> Result<u64, OpError> {
        self.serve();
        Ok(self
            .files
            .entries
            .get(file as usize)
            .map(|e| e.size)
            .unwrap_or(0))
    }
    fn mkdir(&mut self, _file: u32) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn readdir(&mut self, _file: u32) -> Result<u64, OpError> {
        self.serve();
        Ok(0)
    }
    fn unlink(&mut self, _file: u32) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn rename(&mut self, _from: u32, _to: u32) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn link(&mut self, _file: u32, _to: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn symlink(&mut self, _target: u32, _link: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn statfs(&mut self, _file: u32) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn utime(&mut self, _file: u32) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn lock(&mut self, _h: Handle, _offset: u64, _len: u64, _how: LockHow) -> Result<(), OpError> {
        self.serve();
        Ok(())
    }
    fn drop_cache(&mut self, _file: u32) -> Result<(), OpError> {
        Ok(())
    }
    fn queued(&mut self, _depth: u32, memory: &IoMemory) -> Result<&mut dyn QueuedIo, OpError> {
        crate::lend_once(&mut self.queue.memory, memory);
        Ok(&mut self.queue)
    }
}
