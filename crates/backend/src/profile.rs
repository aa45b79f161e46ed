//! Client profiles: what a real client sends besides the application's own requests.
//!
//! The `windows` profile adds the Windows SMB redirector's preallocation hints. When a
//! Windows client appends to a file whose final size it does not know, it sends 1-byte
//! writes far beyond the data: about 128 KiB apart and up to about 15 MB ahead of the
//! write pointer (the NAS Performance Toolkit paper, section 7; the Samba fragmentation
//! talk, seeds 004 and 002). NTFS takes them as "allocate up to here"; most Linux file
//! systems take them as sparse writes, and the data that later fills the holes lands
//! wherever the allocator puts it.
//!
//! The profile wraps any backend. Hint writes go through the same connection as the
//! data, inside the write op that triggered them (so that op's latency includes them),
//! but they are never counted as the workload's ops or bytes: each target keeps them per
//! workload and the engine reports them as extra protocol ops (`hint_write`, and
//! `hint_set_eof` for the end of file the client sets back at close).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use naslab_results::{LatencyHistogram, OpStats};

use crate::clock::monotonic_ns;
use crate::{
    Backend, BackendOptions, Caps, FileTable, Handle, IoMemory, LockHow, OpError, OpenHow,
    QueuedIo, Target,
};

/// Distance between two preallocation hints (seed 004: "each about 128kB apart").
pub const HINT_STRIDE_BYTES: u64 = 128 << 10;
/// How far beyond the data the hints run (seed 004: "up to 15 MB above current data
/// write pointer").
pub const HINT_LEAD_BYTES: u64 = 15 << 20;

/// The extra op a preallocation hint is reported as (`prepare_` or `warmup_` in front
/// for those phases).
pub const HINT_WRITE_OP: &str = "hint_write";

/// How the client behaves beyond the trace's own requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ClientProfile {
    /// Exactly the trace's requests.
    #[default]
    Plain,
    /// A Windows client: preallocation hints when appending to a file of unknown size.
    Windows,
}

impl ClientProfile {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            ClientProfile::Plain => "plain",
            ClientProfile::Windows => "windows",
        }
    }
}

impl std::str::FromStr for ClientProfile {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "plain" | "none" => Ok(ClientProfile::Plain),
            "windows" => Ok(ClientProfile::Windows),
            _ => Err(format!(
                "unknown client profile '{s}'; the choices are plain and windows"
            )),
        }
    }
}

/// Extra protocol ops one workload's connections issued.
#[derive(Default, Clone)]
struct Extra {
    hint_writes: u64,
    hint_errors: u64,
    hint_latency: LatencyHistogram,
    eof_fixes: u64,
    eof_errors: u64,
    eof_latency: LatencyHistogram,
}

impl Extra {
    fn merge(&mut self, o: &Extra) {
        self.hint_writes += o.hint_writes;
        self.hint_errors += o.hint_errors;
        self.hint_latency.merge(&o.hint_latency);
        self.eof_fixes += o.eof_fixes;
        self.eof_errors += o.eof_errors;
        self.eof_latency.merge(&o.eof_latency);
    }

    fn stats(&self) -> Vec<(String, OpStats)> {
        let mut out = Vec::new();
        if self.hint_writes > 0 {
            out.push((
                HINT_WRITE_OP.to_string(),
                OpStats {
                    count: self.hint_writes,
                    bytes: self.hint_writes - self.hint_errors,
                    errors: self.hint_errors,
                    latency: self.hint_latency.summary(),
                    ..OpStats::default()
                },
            ));
        }
        if self.eof_fixes > 0 {
            out.push((
                "hint_set_eof".to_string(),
                OpStats {
                    count: self.eof_fixes,
                    errors: self.eof_errors,
                    latency: self.eof_latency.summary(),
                    ..OpStats::default()
                },
            ));
        }
        out
    }
}

type ExtraByWorkload = Arc<Mutex<HashMap<String, Extra>>>;

/// A target whose connections behave as `profile` says; every other call goes to the
/// wrapped target unchanged.
pub struct ProfiledTarget {
    inner: Box<dyn Target>,
    profile: ClientProfile,
    extra: ExtraByWorkload,
}

impl ProfiledTarget {
    /// Wraps `inner`; every connection it makes, preparation's included, gets `profile`.
    pub fn new(inner: Box<dyn Target>, profile: ClientProfile) -> Self {
        ProfiledTarget {
            inner,
            profile,
            extra: Arc::default(),
        }
    }
}

impl Target for ProfiledTarget {
    fn backend_name(&self) -> &'static str {
        self.inner.backend_name()
    }

    fn caps(&self) -> Caps {
        let mut caps = self.inner.caps();
        if self.profile == ClientProfile::Windows {
            // Queued writes would bypass the hints; keep the request pattern honest.
            caps.max_queue_depth = 1;
        }
        caps
    }

    fn connect(
        &self,
        workload_dir: &str,
        files: Arc<FileTable>,
        mut options: BackendOptions,
    ) -> Result<Box<dyn Backend>, OpError> {
        options.client_profile = self.profile;
        let inner = self.inner.connect(workload_dir, files, options)?;
        if self.profile == ClientProfile::Plain {
            return Ok(inner);
        }
        Ok(Box::new(HintingBackend {
            inner,
            handles: HashMap::new(),
            extra: Extra::default(),
            sink: self.extra.clone(),
            workload: workload_dir.to_string(),
        }))
    }

    fn stream_stack_bytes(&self) -> usize {
        self.inner.stream_stack_bytes()
    }

    fn check_direct(&self, workload_dir: &str) -> Result<(), OpError> {
        self.inner.check_direct(workload_dir)
    }

    fn remove_all(self: Box<Self>) -> Result<bool, OpError> {
        self.inner.remove_all()
    }

    fn fresh_workload_dir(&self, name: &str) -> Result<(), OpError> {
        self.inner.fresh_workload_dir(name)
    }

    #[cfg(not(target_os = "linux"))]
    fn local_dir(&self) -> Option<std::path::PathBuf> {
        self.inner.local_dir()
    }

    #[cfg(windows)]
    fn walk_layout(
        &self,
        workload_dir: &str,
        on_file: &mut dyn FnMut(
            &std::path::Path,
            Result<naslab_layout::FileLayout, naslab_layout::LayoutError>,
        ),
    ) -> Option<Result<Vec<naslab_layout::Skipped>, naslab_layout::LayoutError>> {
        self.inner.walk_layout(workload_dir, on_file)
    }

    #[cfg(target_os = "linux")]
    fn local_root(&self) -> Option<&dyn crate::LocalRoot> {
        self.inner.local_root()
    }

    fn take_extra_ops(&self, workload_dir: &str) -> Vec<(String, OpStats)> {
        let mut ours = self
            .extra
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(workload_dir)
            .map(|e| e.stats())
            .unwrap_or_default();
        ours.extend(self.inner.take_extra_ops(workload_dir));
        ours
    }
}

/// What the profile knows of one open file.
#[derive(Debug, Clone, Copy)]
struct Appending {
    /// The end of the data written so far.
    data_end: u64,
    /// The next hint goes at `next_hint - 1`.
    next_hint: u64,
    /// The furthest byte a hint has written, plus one.
    hinted_end: u64,
    /// The application set the size (truncate or fallocate): a known size, no hints.
    size_known: bool,
}

/// A connection that adds the Windows redirector's preallocation hints.
struct HintingBackend {
    inner: Box<dyn Backend>,
    /// Files created or truncated through this connection: only those grow from an end
    /// the client knows.
    handles: HashMap<Handle, Appending>,
    extra: Extra,
    sink: ExtraByWorkload,
    workload: String,
}

impl Drop for HintingBackend {
    fn drop(&mut self) {
        let mut all = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        all.entry(std::mem::take(&mut self.workload))
            .or_default()
            .merge(&self.extra);
    }
}

impl HintingBackend {
    /// Sends the hints a write of `len` bytes at `offset` makes the redirector send first.
    fn hints_before(&mut self, h: Handle, offset: u64, len: u64) -> Result<(), OpError> {
        let Some(mut st) = self.handles.get(&h).copied() else {
            return Ok(());
        };
        let end = offset.saturating_add(len);
        if st.size_known || end <= st.data_end {
            return Ok(());
        }
        let horizon = end.saturating_add(HINT_LEAD_BYTES);
        while st.next_hint <= horizon {
            let at = st.next_hint - 1;
            st.next_hint += HINT_STRIDE_BYTES;
            if at < end {
                // Inside the data about to be written: nothing to hint.
                continue;
            }
            let t0 = monotonic_ns();
            let r = self.inner.write(h, at, &[0u8]);
            self.extra
                .hint_latency
                .record(monotonic_ns().saturating_sub(t0));
            self.extra.hint_writes += 1;
            match r {
                Ok(_) => st.hinted_end = st.hinted_end.max(at + 1),
                Err(e) => {
                    self.extra.hint_errors += 1;
                    if e.is_fatal() {
                        self.handles.insert(h, st);
                        return Err(e);
                    }
                }
            }
        }
        self.handles.insert(h, st);
        Ok(())
    }
}

impl Backend for HintingBackend {
    fn caps(&self) -> Caps {
        let mut caps = self.inner.caps();
        caps.max_queue_depth = 1;
        caps
    }

    fn open(&mut self, file: u32, how: OpenHow) -> Result<Handle, OpError> {
        let h = self.inner.open(file, how)?;
        if how.create || how.truncate {
            self.handles.insert(
                h,
                Appending {
                    data_end: 0,
                    next_hint: HINT_STRIDE_BYTES,
                    hinted_end: 0,
                    size_known: false,
                },
            );
        } else {
            self.handles.remove(&h);
        }
        Ok(h)
    }

    fn close(&mut self, h: Handle) -> Result<(), OpError> {
        if let Some(st) = self.handles.remove(&h)
            && !st.size_known
            && st.hinted_end > st.data_end
        {
            // The client sets the real end of file before it closes.
            let t0 = monotonic_ns();
            let r = self.inner.truncate(h, st.data_end);
            self.extra
                .eof_latency
                .record(monotonic_ns().saturating_sub(t0));
            self.extra.eof_fixes += 1;
            if let Err(e) = r {
                self.extra.eof_errors += 1;
                if e.is_fatal() {
                    let _ = self.inner.close(h);
                    return Err(e);
                }
            }
        }
        self.inner.close(h)
    }

    fn read(&mut self, h: Handle, offset: u64, buf: &mut [u8]) -> Result<usize, OpError> {
        self.inner.read(h, offset, buf)
    }

    fn write(&mut self, h: Handle, offset: u64, buf: &[u8]) -> Result<usize, OpError> {
        self.hints_before(h, offset, buf.len() as u64)?;
        let n = self.inner.write(h, offset, buf)?;
        if let Some(st) = self.handles.get_mut(&h) {
            st.data_end = st.data_end.max(offset + n as u64);
        }
        Ok(n)
    }

    fn fsync(&mut self, h: Handle) -> Result<(), OpError> {
        self.inner.fsync(h)
    }

    fn truncate(&mut self, h: Handle, len: u64) -> Result<(), OpError> {
        self.inner.truncate(h, len)?;
        if let Some(st) = self.handles.get_mut(&h) {
            st.size_known = true;
            st.data_end = len;
        }
        Ok(())
    }

    fn fallocate(&mut self, h: Handle, offset: u64, len: u64) -> Result<(), OpError> {
        self.inner.fallocate(h, offset, len)?;
        if let Some(st) = self.handles.get_mut(&h) {
            st.size_known = true;
        }
        Ok(())
    }

    fn stat(&mut self, file: u32) -> Result<u64, OpError> {
        self.inner.stat(file)
    }
    fn mkdir(&mut self, file: u32) -> Result<(), OpError> {
        self.inner.mkdir(file)
    }
    fn readdir(&mut self, file: u32) -> Result<u64, OpError> {
        self.inner.readdir(file)
    }
    fn unlink(&mut self, file: u32) -> Result<(), OpError> {
        self.inner.unlink(file)
    }
    fn rename(&mut self, from: u32, to: u32) -> Result<(), OpError> {
        self.inner.rename(from, to)
    }
    fn link(&mut self, file: u32, to: u32) -> Result<(), OpError> {
        self.inner.link(file, to)
    }
    fn symlink(&mut self, target: u32, link: u32) -> Result<(), OpError> {
        self.inner.symlink(target, link)
    }
    fn statfs(&mut self, file: u32) -> Result<(), OpError> {
        self.inner.statfs(file)
    }
    fn utime(&mut self, file: u32) -> Result<(), OpError> {
        self.inner.utime(file)
    }
    fn lock(&mut self, h: Handle, offset: u64, len: u64, how: LockHow) -> Result<(), OpError> {
        self.inner.lock(h, offset, len, how)
    }
    fn drop_cache(&mut self, file: u32) -> Result<(), OpError> {
        self.inner.drop_cache(file)
    }
    fn unaligned_direct_ops(&self) -> u64 {
        self.inner.unaligned_direct_ops()
    }
    fn recovery(&self) -> crate::Recovery {
        self.inner.recovery()
    }
    fn queued(&mut self, _depth: u32, _memory: &IoMemory) -> Result<&mut dyn QueuedIo, OpError> {
        Err(OpError {
            errno: crate::errno::EOPNOTSUPP,
            detail: Some("the windows client profile issues one request at a time".into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NullTarget;
    use naslab_trace::FileKind;

    /// A backend that records every write's offset and length.
    struct Recorder(Arc<Mutex<Vec<(u64, usize)>>>, Arc<Mutex<Vec<u64>>>);

    impl Backend for Recorder {
        fn caps(&self) -> Caps {
            NullTarget.caps()
        }
        fn open(&mut self, _file: u32, _how: OpenHow) -> Result<Handle, OpError> {
            Ok(7)
        }
        fn close(&mut self, _h: Handle) -> Result<(), OpError> {
            Ok(())
        }
        fn read(&mut self, _h: Handle, _o: u64, b: &mut [u8]) -> Result<usize, OpError> {
            Ok(b.len())
        }
        fn write(&mut self, _h: Handle, o: u64, b: &[u8]) -> Result<usize, OpError> {
            self.0.lock().unwrap().push((o, b.len()));
            Ok(b.len())
        }
        fn fsync(&mut self, _h: Handle) -> Result<(), OpError> {
            Ok(())
        }
        fn truncate(&mut self, _h: Handle, len: u64) -> Result<(), OpError> {
            self.1.lock().unwrap().push(len);
            Ok(())
        }
        fn fallocate(&mut self, _h: Handle, _o: u64, _l: u64) -> Result<(), OpError> {
            Ok(())
        }
        fn stat(&mut self, _f: u32) -> Result<u64, OpError> {
            Ok(0)
        }
        fn mkdir(&mut self, _f: u32) -> Result<(), OpError> {
            Ok(())
        }
        fn readdir(&mut self, _f: u32) -> Result<u64, OpError> {
            Ok(0)
        }
        fn unlink(&mut self, _f: u32) -> Result<(), OpError> {
            Ok(())
        }
        fn rename(&mut self, _a: u32, _b: u32) -> Result<(), OpError> {
            Ok(())
        }
    }

    struct RecTarget(Arc<Mutex<Vec<(u64, usize)>>>, Arc<Mutex<Vec<u64>>>);
    impl Target for RecTarget {
        fn backend_name(&self) -> &'static str {
            "rec"
        }
        fn caps(&self) -> Caps {
            NullTarget.caps()
        }
        fn connect(
            &self,
            _w: &str,
            _f: Arc<FileTable>,
            o: BackendOptions,
        ) -> Result<Box<dyn Backend>, OpError> {
            assert_eq!(o.client_profile, ClientProfile::Windows);
            Ok(Box::new(Recorder(self.0.clone(), self.1.clone())))
        }
    }

    fn table() -> Arc<FileTable> {
        Arc::new(FileTable {
            entries: vec![crate::FileEntry {
                id: Some(1),
                path: "f".into(),
                kind: FileKind::File,
                size: 0,
                exists: false,
                prepare: naslab_trace::Prepare::Stream,
            }],
        })
    }

    #[test]
    fn appends_are_preceded_by_hints_and_the_end_of_file_is_set_back() {
        let writes = Arc::new(Mutex::new(Vec::new()));
        let truncs = Arc::new(Mutex::new(Vec::new()));
        let t = ProfiledTarget::new(
            Box::new(RecTarget(writes.clone(), truncs.clone())),
            ClientProfile::Windows,
        );
        let mut b = t.connect("w", table(), BackendOptions::default()).unwrap();
        let how = OpenHow {
            write: true,
            create: true,
            truncate: true,
            ..OpenHow::default()
        };
        let h = b.open(0, how).unwrap();
        let data = vec![1u8; 256 << 10];
        let mut data_writes = 0;
        for i in 0..8u64 {
            assert_eq!(b.write(h, i * (256 << 10), &data).unwrap(), data.len());
            data_writes += 1;
        }
        // A rewrite of the header does not extend the file: no hints.
        b.write(h, 0, &data).unwrap();
        data_writes += 1;
        b.close(h).unwrap();
        drop(b);
        let w = writes.lock().unwrap();
        let hints: Vec<u64> = w.iter().filter(|(_, n)| *n == 1).map(|(o, _)| *o).collect();
        assert_eq!(w.len() - hints.len(), data_writes);
        let data_end = 8 * (256u64 << 10);
        // Every hint sits one byte before a 128 KiB boundary, beyond the data written
        // with it, at most 15 MiB past that write's end.
        assert!(hints.iter().all(|o| (o + 1) % HINT_STRIDE_BYTES == 0));
        assert_eq!(
            *hints.last().unwrap() + 1,
            data_end + HINT_LEAD_BYTES,
            "the hints reach 15 MiB beyond the last append"
        );
        assert_eq!(
            hints.len() as u64,
            (data_end + HINT_LEAD_BYTES) / HINT_STRIDE_BYTES - 2
        );
        assert_eq!(*truncs.lock().unwrap(), vec![data_end]);
        let extra = t.take_extra_ops("w");
        assert_eq!(extra[0].0, "hint_write");
        assert_eq!(extra[0].1.count, hints.len() as u64);
        assert_eq!(extra[1].0, "hint_set_eof");
        assert_eq!(extra[1].1.count, 1);
        assert!(t.take_extra_ops("w").is_empty(), "taken once");
    }

    #[test]
    fn a_known_size_means_no_hints() {
        let writes = Arc::new(Mutex::new(Vec::new()));
        let truncs = Arc::new(Mutex::new(Vec::new()));
        let t = ProfiledTarget::new(
            Box::new(RecTarget(writes.clone(), truncs.clone())),
            ClientProfile::Windows,
        );
        let mut b = t.connect("w", table(), BackendOptions::default()).unwrap();
        let how = OpenHow {
            write: true,
            create: true,
            truncate: true,
            ..OpenHow::default()
        };
        let h = b.open(0, how).unwrap();
        b.truncate(h, 4 << 20).unwrap();
        for i in 0..4u64 {
            b.write(h, i << 20, &vec![0u8; 1 << 20]).unwrap();
        }
        b.close(h).unwrap();
        assert_eq!(writes.lock().unwrap().len(), 4);
        assert_eq!(*truncs.lock().unwrap(), vec![4 << 20]);
        drop(b);
        assert!(t.take_extra_ops("w").is_empty());
        assert_eq!(t.caps().max_queue_depth, 1);
    }
}
