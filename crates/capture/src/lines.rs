//! Reading an importer's input a line at a time, with the line count kept for errors
//! and each line bounded, so a file with no line breaks (or a device such as
//! /dev/zero) fails at once naming its line instead of filling memory.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use naslab_trace::BoundedLine;

use crate::error::ImportError;

/// The longest line an importer reads, break included (the trace format's own limit).
pub const MAX_LINE_BYTES: usize = naslab_trace::MAX_LINE_BYTES;

/// The lines of one input file.
pub struct Lines<R> {
    input: R,
    path: PathBuf,
    n: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    pub fn new(path: &Path, input: R) -> Self {
        Lines {
            input,
            path: path.to_path_buf(),
            n: 0,
            buf: Vec::new(),
        }
    }

    /// The next line's number and bytes, with its line break; `None` at the end.
    pub fn next_bytes(&mut self) -> Result<Option<(u64, &[u8])>, ImportError> {
        let got = naslab_trace::read_bounded_line(&mut self.input, &mut self.buf).map_err(|e| {
            ImportError::Read {
                path: self.path.clone(),
                source: e,
            }
        })?;
        match got {
            BoundedLine::End => Ok(None),
            BoundedLine::Line => {
                self.n += 1;
                Ok(Some((self.n, &self.buf)))
            }
            BoundedLine::TooLong => {
                self.n += 1;
                Err(ImportError::Line {
                    path: self.path.clone(),
                    line: self.n,
                    message: format!(
                        "the line is longer than {} MiB; is this the right file and format?",
                        MAX_LINE_BYTES >> 20
                    ),
                })
            }
        }
    }

    /// The next line's number and text, with its line break; `None` at the end. A line
    /// that is not UTF-8 is an error naming it, with `hint` after the reason.
    pub fn next_text(&mut self, hint: &str) -> Result<Option<(u64, &str)>, ImportError> {
        if self.next_bytes()?.is_none() {
            return Ok(None);
        }
        match std::str::from_utf8(&self.buf) {
            Ok(text) => Ok(Some((self.n, text))),
            Err(_) => Err(ImportError::Line {
                path: self.path.clone(),
                line: self.n,
                message: format!("the line is not UTF-8 text{hint}"),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_bounded_and_checked() {
        let mut l = Lines::new(Path::new("in"), &b"one\ntwo\n\xff\n"[..]);
        assert_eq!(l.next_text("").unwrap(), Some((1, "one\n")));
        assert_eq!(l.next_text("").unwrap(), Some((2, "two\n")));
        let e = l.next_text("; export it again").unwrap_err().to_string();
        assert_eq!(e, "in:3: the line is not UTF-8 text; export it again");
        assert!(l.next_text("").unwrap().is_none());

        let long = vec![b'x'; MAX_LINE_BYTES + 10];
        let mut l = Lines::new(Path::new("big"), &long[..]);
        let e = l.next_bytes().unwrap_err().to_string();
        assert!(e.starts_with("big:1: the line is longer than 1 MiB"), "{e}");

        // A last line without a break, at the limit, is still a line.
        let exact = vec![b'y'; MAX_LINE_BYTES];
        let mut l = Lines::new(Path::new("ok"), &exact[..]);
        assert_eq!(
            l.next_bytes().unwrap().map(|(n, b)| (n, b.len())),
            Some((1, MAX_LINE_BYTES))
        );
    }
}
