//! A file's extents on Windows: `FSCTL_GET_RETRIEVAL_POINTERS`, the counterpart of
//! Linux's FIEMAP, whose runs of clusters (virtual cluster numbers in the file mapped to
//! logical cluster numbers on the volume) become the same [`Extent`]s, in bytes.
//!
//! The mapping is a pure function ([`extents_from_runs`]), built and tested on every
//! system; the call itself is Windows only ([`extents`]).

use crate::extent::{
    EXTENT_DATA_INLINE, EXTENT_LAST, EXTENT_NOT_ALIGNED, EXTENT_UNWRITTEN, Extent,
};

/// The logical cluster number NTFS gives a run with no clusters on the volume: a hole
/// of a sparse file, or the part of a compression unit its compressed data left free.
pub const NO_CLUSTERS: i64 = -1;

/// One run of `FSCTL_GET_RETRIEVAL_POINTERS`: the clusters of the file up to (not
/// including) `next_vcn`, from the end of the run before (or the buffer's starting VCN),
/// lie on the volume from cluster `lcn` on ([`NO_CLUSTERS`]: nowhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub next_vcn: i64,
    pub lcn: i64,
}

/// Why a file's runs could not be turned into extents.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunsError {
    #[error("the cluster size is 0")]
    NoClusterSize,
    #[error("run {index} ends at cluster {next_vcn}, not after where it starts ({start})")]
    Backwards {
        index: usize,
        start: i64,
        next_vcn: i64,
    },
    #[error("run {index} lies at cluster {lcn}, which is not on a volume")]
    BadLcn { index: usize, lcn: i64 },
    #[error("run {index} reaches past the largest offset a file can have")]
    TooFar { index: usize },
}

/// The extents of a file of `size` bytes whose runs, starting at virtual cluster
/// `start_vcn`, are `runs`, with clusters of `cluster` bytes; in file order, as FIEMAP
/// gives them:
///
/// - a run with clusters is one extent: its offset in the file and on the volume, and
///   its length, in bytes (whole clusters, as FIEMAP's are whole blocks);
/// - a run with none (a hole, [`NO_CLUSTERS`]) is left out, as FIEMAP leaves holes out;
/// - clusters wholly past the end of the file (allocated ahead of it, by a
///   preallocation or `SetFileInformationByHandle(FileAllocationInfo)`) are an extent of
///   their own flagged `EXTENT_UNWRITTEN`, as ext4 reports space allocated past the end;
/// - a file with data but no runs at all keeps its data in its MFT record (a resident
///   file): one extent flagged `EXTENT_DATA_INLINE`, as ext4 reports inline data;
/// - the last extent is flagged `EXTENT_LAST`.
pub fn extents_from_runs(
    start_vcn: i64,
    runs: &[Run],
    cluster: u64,
    size: u64,
) -> Result<Vec<Extent>, RunsError> {
    if cluster == 0 {
        return Err(RunsError::NoClusterSize);
    }
    // The clusters the file's bytes fill; those from here on are allocated past its end.
    let data_clusters = size.div_ceil(cluster);
    let mut out = Vec::with_capacity(runs.len() + 1);
    let mut vcn = start_vcn;
    for (index, r) in runs.iter().enumerate() {
        if r.next_vcn <= vcn || vcn < 0 {
            return Err(RunsError::Backwards {
                index,
                start: vcn,
                next_vcn: r.next_vcn,
            });
        }
        let (from, to) = (vcn as u64, r.next_vcn as u64);
        vcn = r.next_vcn;
        if r.lcn == NO_CLUSTERS {
            continue;
        }
        if r.lcn < 0 {
            return Err(RunsError::BadLcn { index, lcn: r.lcn });
        }
        let lcn = r.lcn as u64;
        let bytes = |clusters: u64| {
            clusters
                .checked_mul(cluster)
                .ok_or(RunsError::TooFar { index })
        };
        // The part holding the file's bytes, then the part past its end.
        let split = to.min(data_clusters.max(from));
        if split > from {
            out.push(Extent {
                logical: bytes(from)?,
                physical: bytes(lcn)?,
                length: bytes(split - from)?,
                flags: 0,
            });
        }
        if to > split {
            out.push(Extent {
                logical: bytes(split)?,
                physical: bytes(lcn + (split - from))?,
                length: bytes(to - split)?,
                flags: EXTENT_UNWRITTEN,
            });
        }
    }
    if runs.is_empty() && size > 0 {
        out.push(Extent {
            logical: 0,
            physical: 0,
            length: size,
            flags: EXTENT_DATA_INLINE | EXTENT_NOT_ALIGNED,
        });
    }
    if let Some(last) = out.last_mut() {
        last.flags |= EXTENT_LAST;
    }
    Ok(out)
}

#[cfg(windows)]
pub use call::{RetrievalError, cluster_bytes, extents};

#[cfg(windows)]
mod call {
    use std::fs::File;
    use std::io;
    use std::os::windows::io::AsRawHandle;

    use windows_sys::Wdk::Storage::FileSystem::{
        FileFsSizeInformation, NtQueryVolumeInformationFile,
    };
    use windows_sys::Win32::Foundation::{
        ERROR_HANDLE_EOF, ERROR_INVALID_FUNCTION, ERROR_INVALID_PARAMETER, ERROR_MORE_DATA,
        ERROR_NOT_SUPPORTED, HANDLE, RtlNtStatusToDosError,
    };
    use windows_sys::Win32::System::IO::{DeviceIoControl, IO_STATUS_BLOCK};
    use windows_sys::Win32::System::Ioctl::{
        FSCTL_GET_RETRIEVAL_POINTERS, RETRIEVAL_POINTERS_BUFFER, RETRIEVAL_POINTERS_BUFFER_0,
        STARTING_VCN_INPUT_BUFFER,
    };

    use super::{Run, RunsError, extents_from_runs};
    use crate::extent::Extent;

    /// Runs asked for per call.
    const BATCH: usize = 512;

    /// Why a file's extents could not be read.
    #[derive(Debug)]
    pub enum RetrievalError {
        /// The file system does not answer `FSCTL_GET_RETRIEVAL_POINTERS`, or answers
        /// with no map (Wine's answer).
        Unsupported(io::Error),
        /// The runs made no sense.
        Runs(RunsError),
        /// Any other failure.
        Io(io::Error),
    }

    /// `FILE_FS_SIZE_INFORMATION`.
    #[repr(C)]
    #[derive(Default)]
    struct FsSize {
        total_units: i64,
        available_units: i64,
        sectors_per_unit: u32,
        bytes_per_sector: u32,
    }

    /// The volume's cluster (allocation unit) size, from the file's own handle.
    pub fn cluster_bytes(file: &File) -> io::Result<u64> {
        let mut v = FsSize::default();
        let mut iosb = IO_STATUS_BLOCK::default();
        // SAFETY: v is the structure the class fills, its size passed; the handle is open.
        let status = unsafe {
            NtQueryVolumeInformationFile(
                file.as_raw_handle() as HANDLE,
                &mut iosb,
                (&mut v as *mut FsSize).cast(),
                std::mem::size_of::<FsSize>() as u32,
                FileFsSizeInformation,
            )
        };
        if status < 0 {
            // SAFETY: a pure mapping of one code to another.
            let code = unsafe { RtlNtStatusToDosError(status) };
            return Err(io::Error::from_raw_os_error(code as i32));
        }
        Ok(u64::from(v.sectors_per_unit) * u64::from(v.bytes_per_sector))
    }

    /// `RETRIEVAL_POINTERS_BUFFER` with room for [`BATCH`] runs.
    #[repr(C)]
    struct Reply {
        head: RETRIEVAL_POINTERS_BUFFER,
        more: [RETRIEVAL_POINTERS_BUFFER_0; BATCH - 1],
    }

    /// Every extent of `file` (opened for reading), in file order, in bytes.
    pub fn extents(file: &File) -> Result<Vec<Extent>, RetrievalError> {
        let size = file.metadata().map_err(RetrievalError::Io)?.len();
        let mut reply: Box<Reply> = Box::new(Reply {
            head: RETRIEVAL_POINTERS_BUFFER::default(),
            more: [RETRIEVAL_POINTERS_BUFFER_0::default(); BATCH - 1],
        });
        let mut runs = Vec::new();
        let mut first_vcn = None;
        let mut vcn = 0i64;
        loop {
            let ask = STARTING_VCN_INPUT_BUFFER { StartingVcn: vcn };
            let mut got = 0u32;
            // SAFETY: both buffers are ours with their sizes passed; no OVERLAPPED, so
            // the call completes before it returns.
            let ok = unsafe {
                DeviceIoControl(
                    file.as_raw_handle() as HANDLE,
                    FSCTL_GET_RETRIEVAL_POINTERS,
                    (&ask as *const STARTING_VCN_INPUT_BUFFER).cast(),
                    std::mem::size_of::<STARTING_VCN_INPUT_BUFFER>() as u32,
                    (&mut *reply as *mut Reply).cast(),
                    std::mem::size_of::<Reply>() as u32,
                    &mut got,
                    std::ptr::null_mut(),
                )
            };
            let more = if ok != 0 {
                false
            } else {
                let e = io::Error::last_os_error();
                match e.raw_os_error().map(|c| c as u32) {
                    Some(ERROR_MORE_DATA) => true,
                    // No clusters at all (empty, or resident in its MFT record).
                    Some(ERROR_HANDLE_EOF) => break,
                    Some(
                        ERROR_INVALID_FUNCTION | ERROR_NOT_SUPPORTED | ERROR_INVALID_PARAMETER,
                    ) => return Err(RetrievalError::Unsupported(e)),
                    _ => return Err(RetrievalError::Io(e)),
                }
            };
            let head = std::mem::offset_of!(RETRIEVAL_POINTERS_BUFFER, Extents);
            let fit = (got as usize).saturating_sub(head)
                / std::mem::size_of::<RETRIEVAL_POINTERS_BUFFER_0>();
            let n = (reply.head.ExtentCount as usize).min(fit).min(BATCH);
            if first_vcn.is_none() {
                first_vcn = Some(reply.head.StartingVcn);
            }
            // SAFETY: head.Extents and more are laid out back to back (repr(C), same
            // element type), and n is within both.
            let returned = unsafe { std::slice::from_raw_parts(reply.head.Extents.as_ptr(), n) };
            runs.extend(returned.iter().map(|r| Run {
                next_vcn: r.NextVcn,
                lcn: r.Lcn,
            }));
            match returned.last() {
                Some(last) if more && last.NextVcn > vcn => vcn = last.NextVcn,
                _ => break,
            }
        }
        let cluster = cluster_bytes(file).map_err(RetrievalError::Io)?;
        match extents_from_runs(first_vcn.unwrap_or(0), &runs, cluster, size) {
            Ok(e) => Ok(e),
            // A first run that ends where it starts, or before, maps nothing: the answer
            // of a file system that only pretends to implement the request (Wine 8
            // answers every file with one run, from cluster 1 to cluster 0).
            Err(RunsError::Backwards { index: 0, .. }) => Err(RetrievalError::Unsupported(
                io::Error::other("the file system's answer maps no cluster"),
            )),
            Err(e) => Err(RetrievalError::Runs(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K4: u64 = 4096;
    const K64: u64 = 64 << 10;

    fn run(next_vcn: i64, lcn: i64) -> Run {
        Run { next_vcn, lcn }
    }

    fn ext(logical: u64, physical: u64, length: u64, flags: u32) -> Extent {
        Extent {
            logical,
            physical,
            length,
            flags,
        }
    }

    #[test]
    fn runs_become_extents_in_bytes() {
        // 10 clusters at 100, then 6 at 500: 16 clusters of a 16-cluster file.
        let got = extents_from_runs(0, &[run(10, 100), run(16, 500)], K4, 16 * K4).unwrap();
        assert_eq!(
            got,
            [
                ext(0, 100 * K4, 10 * K4, 0),
                ext(10 * K4, 500 * K4, 6 * K4, EXTENT_LAST),
            ]
        );
    }

    #[test]
    fn clusters_of_64_kib_scale_every_offset() {
        let got = extents_from_runs(0, &[run(3, 7), run(5, 20)], K64, 5 * K64).unwrap();
        assert_eq!(
            got,
            [
                ext(0, 7 * K64, 3 * K64, 0),
                ext(3 * K64, 20 * K64, 2 * K64, EXTENT_LAST),
            ]
        );
    }

    #[test]
    fn holes_are_left_out_as_fiemap_leaves_them() {
        // A sparse file: clusters 0-3 at 1000, 4-99 a hole, 100-103 at 2000.
        let runs = [run(4, 1000), run(100, NO_CLUSTERS), run(104, 2000)];
        let got = extents_from_runs(0, &runs, K4, 104 * K4).unwrap();
        assert_eq!(
            got,
            [
                ext(0, 1000 * K4, 4 * K4, 0),
                ext(100 * K4, 2000 * K4, 4 * K4, EXTENT_LAST),
            ]
        );
    }

    #[test]
    fn a_compressed_units_free_clusters_are_a_hole() {
        // A 16-cluster compression unit whose data took 5 clusters, the 11 others free.
        let runs = [run(5, 300), run(16, NO_CLUSTERS), run(21, 400), run(32, -1)];
        let got = extents_from_runs(0, &runs, K4, 32 * K4).unwrap();
        assert_eq!(
            got,
            [
                ext(0, 300 * K4, 5 * K4, 0),
                ext(16 * K4, 400 * K4, 5 * K4, EXTENT_LAST),
            ]
        );
    }

    #[test]
    fn the_last_run_ends_at_the_file_size_in_whole_clusters() {
        // 10,000 bytes fill 3 clusters of 4 KiB, the last one in part; a 64 KiB cluster
        // holds them all.
        let got = extents_from_runs(0, &[run(3, 42)], K4, 10_000).unwrap();
        assert_eq!(got, [ext(0, 42 * K4, 3 * K4, EXTENT_LAST)]);
        let got = extents_from_runs(0, &[run(1, 9)], K64, 10_000).unwrap();
        assert_eq!(got, [ext(0, 9 * K64, K64, EXTENT_LAST)]);
    }

    #[test]
    fn clusters_past_the_end_of_the_file_are_unwritten() {
        // 2 clusters of data and 6 more allocated past the end (preallocated), one run.
        let got = extents_from_runs(0, &[run(8, 50)], K4, 2 * K4).unwrap();
        assert_eq!(
            got,
            [
                ext(0, 50 * K4, 2 * K4, 0),
                ext(2 * K4, 52 * K4, 6 * K4, EXTENT_UNWRITTEN | EXTENT_LAST),
            ]
        );
        // A run wholly past the end is unwritten as a whole.
        let got = extents_from_runs(0, &[run(2, 50), run(4, 90)], K4, 2 * K4).unwrap();
        assert_eq!(
            got,
            [
                ext(0, 50 * K4, 2 * K4, 0),
                ext(2 * K4, 90 * K4, 2 * K4, EXTENT_UNWRITTEN | EXTENT_LAST),
            ]
        );
    }

    #[test]
    fn a_resident_file_is_one_inline_extent_and_an_empty_one_none() {
        let got = extents_from_runs(0, &[], K4, 700).unwrap();
        assert_eq!(
            got,
            [ext(
                0,
                0,
                700,
                EXTENT_DATA_INLINE | EXTENT_NOT_ALIGNED | EXTENT_LAST
            )]
        );
        assert!(!got[0].location_known());
        assert_eq!(extents_from_runs(0, &[], K4, 0).unwrap(), []);
    }

    #[test]
    fn a_later_starting_vcn_starts_the_first_run_there() {
        let got = extents_from_runs(8, &[run(10, 77)], K4, 10 * K4).unwrap();
        assert_eq!(got, [ext(8 * K4, 77 * K4, 2 * K4, EXTENT_LAST)]);
    }

    #[test]
    fn runs_that_make_no_sense_are_refused() {
        assert_eq!(
            extents_from_runs(0, &[run(4, 1)], 0, 10),
            Err(RunsError::NoClusterSize)
        );
        assert!(matches!(
            extents_from_runs(0, &[run(4, 1), run(4, 9)], K4, 10),
            Err(RunsError::Backwards { index: 1, .. })
        ));
        assert!(matches!(
            extents_from_runs(0, &[run(4, -7)], K4, 10),
            Err(RunsError::BadLcn { index: 0, lcn: -7 })
        ));
        assert!(matches!(
            extents_from_runs(0, &[run(i64::MAX, 1)], K64, 10),
            Err(RunsError::TooFar { index: 0 })
        ));
    }

    #[test]
    fn extents_from_runs_count_as_filefrag_counts() {
        // Two runs back to back on the volume are one extent to filefrag's count.
        let got =
            extents_from_runs(0, &[run(4, 100), run(8, 104), run(9, 10)], K4, 9 * K4).unwrap();
        assert_eq!(crate::extent::count_like_filefrag(&got), 2);
    }
}
