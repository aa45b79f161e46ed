//! A client's op records files on their way to rank 0: read and sent in bounded chunks
//! (rank 0 writes each as it comes, so neither side holds a whole file in memory), and a
//! file the client cannot read arrives as its error, never as an empty file.
//!
//! Each message is a frame: a kind byte, then the data chunk or the error's text. One
//! file is any number of [`DATA`] frames, then one [`END`] or one [`FAILED`] frame.

use std::io::{Read, Write};
use std::path::Path;

/// The most bytes of a file one frame carries.
pub const CHUNK: usize = 1 << 20;

/// A frame with a chunk of the file.
const DATA: u8 = 0;
/// The file's end: every chunk was sent.
const END: u8 = 1;
/// The client could not read the file: the frame holds why (UTF-8).
const FAILED: u8 = 2;

/// Reads `path` and sends it as frames through `send`. A read error is sent too (as the
/// file's last frame), so the receiver learns it.
pub fn send_file(path: &Path, send: &mut dyn FnMut(&[u8])) {
    let mut frame = vec![0u8; CHUNK + 1];
    let failed = |send: &mut dyn FnMut(&[u8]), e: std::io::Error| {
        let mut f = vec![FAILED];
        f.extend_from_slice(format!("cannot read '{}': {e}", path.display()).as_bytes());
        send(&f);
    };
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return failed(send, e),
    };
    loop {
        let mut filled = 0;
        while filled < CHUNK {
            match file.read(&mut frame[1 + filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return failed(send, e),
            }
        }
        if filled == 0 {
            send(&[END]);
            return;
        }
        frame[0] = DATA;
        send(&frame[..1 + filled]);
    }
}

/// Receives one file's frames from `receive` into `out`: `Err` with the client's own
/// error when it could not read the file, or with why `out` could not be written (the
/// frames are taken to the end either way, so the next file's start where they should).
pub fn receive_file(receive: &mut dyn FnMut() -> Vec<u8>, out: &Path) -> Result<(), String> {
    let mut file = std::fs::File::create(out)
        .map_err(|e| format!("cannot create '{}' on rank 0: {e}", out.display()));
    let mut written = Ok(());
    loop {
        let frame = receive();
        match frame.split_first() {
            Some((&DATA, chunk)) => {
                if let (Ok(f), Ok(())) = (&mut file, &written) {
                    written = f
                        .write_all(chunk)
                        .map_err(|e| format!("cannot write '{}' on rank 0: {e}", out.display()));
                }
            }
            Some((&END, _)) => return file.map(|_| ()).and(written),
            Some((&FAILED, why)) => return Err(String::from_utf8_lossy(why).into_owned()),
            _ => return Err("sent a message that is not part of a records file".to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    /// Sends `path` and receives it into `out` through an in-memory queue; gives back
    /// the outcome and the largest frame.
    fn through_queue(path: &Path, out: &Path) -> (Result<(), String>, usize) {
        let mut queue: VecDeque<Vec<u8>> = VecDeque::new();
        send_file(path, &mut |f| queue.push_back(f.to_vec()));
        let largest = queue.iter().map(|f| f.len()).max().unwrap_or(0);
        let got = receive_file(&mut || queue.pop_front().unwrap_or_default(), out);
        assert!(queue.is_empty(), "every frame of the file was taken");
        (got, largest)
    }

    #[test]
    fn a_file_of_several_chunks_arrives_whole_in_bounded_frames() {
        let tmp = tempfile::tempdir().unwrap();
        let (src, dst) = (tmp.path().join("a"), tmp.path().join("b"));
        // Two and a half chunks of bytes that differ from chunk to chunk.
        let bytes: Vec<u8> = (0..CHUNK * 5 / 2).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&src, &bytes).unwrap();
        let (got, largest) = through_queue(&src, &dst);
        assert_eq!(got, Ok(()));
        assert_eq!(std::fs::read(&dst).unwrap(), bytes);
        assert_eq!(largest, CHUNK + 1, "no frame holds more than one chunk");
        // An empty file is an empty file.
        std::fs::write(&src, b"").unwrap();
        assert_eq!(through_queue(&src, &dst).0, Ok(()));
        assert_eq!(std::fs::read(&dst).unwrap(), b"");
    }

    #[test]
    fn a_file_the_client_cannot_read_arrives_as_its_error() {
        let tmp = tempfile::tempdir().unwrap();
        let dst = tmp.path().join("b");
        // Missing: the open fails.
        let missing = tmp.path().join("gone.ops.nbt.zst");
        let (got, _) = through_queue(&missing, &dst);
        let why = got.unwrap_err();
        assert!(why.contains("gone.ops.nbt.zst"), "{why}");
        assert!(why.contains("No such file or directory"), "{why}");
        // A directory opens, and its read fails (EISDIR).
        let dir = tmp.path().join("d");
        std::fs::create_dir(&dir).unwrap();
        let why = through_queue(&dir, &dst).0.unwrap_err();
        assert!(why.contains("Is a directory"), "{why}");
    }
}
