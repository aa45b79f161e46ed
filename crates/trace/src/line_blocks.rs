//! A JSON Lines trace read on several CPUs. The input is cut into blocks of whole lines;
//! a few worker threads read each block's op lines, with every check that needs nothing
//! before the line; the reading thread takes the blocks back in order and makes, line by
//! line, the checks that do (the entries declared). Any other line (a file line, a line
//! with escapes, a line in error) goes through the reader's general path there, so the
//! records, their line numbers and the first error are exactly those of
//! [`TraceReader::next_record`] on its own.

use std::collections::VecDeque;
use std::io::{BufRead, ErrorKind};
use std::ops::Range;
use std::sync::mpsc::{Receiver, Sender, channel};

use crate::reader::{ParsedOp, parsed_op};
use crate::{MAX_LINE_BYTES, Numbered, TraceError, TraceReader};

/// Bytes asked of the input at once: no less than the reader's own buffer, so a read
/// goes straight into the block, and small enough that a block is still in the CPU's
/// cache when it is parsed.
const READ: usize = 128 << 10;

/// Blocks out at once per worker: one being parsed, one waiting.
const DEPTH: usize = 2;

/// A line of a block, as a worker left it.
enum Line {
    /// A plain op line, read.
    Op(ParsedOp),
    /// Any other line: its bytes in the block, for the general path.
    Text(Range<usize>),
    /// A line longer than [`MAX_LINE_BYTES`].
    TooLong,
}

/// Whole lines of the input, and what a worker made of them.
#[derive(Default)]
struct Block {
    bytes: Vec<u8>,
    len: usize,
    lines: Vec<Line>,
}

/// How reading a block ended.
enum Cut {
    /// The block ends at a line break; more may follow.
    Lines,
    /// The input ended (the block may hold a last line without a break).
    End,
    /// The line in progress is longer than [`MAX_LINE_BYTES`] with no break yet; the
    /// block holds only that line.
    TooLong,
    /// Reading failed; the block holds only an unfinished line.
    Failed(std::io::Error),
}

/// Reads the next block: `carry` (the unfinished line the last block left), then the
/// input up to the last line break of the first read that brings one.
fn read_block<R: BufRead>(input: &mut R, block: &mut Block, carry: &mut Vec<u8>) -> Cut {
    if block.bytes.len() < carry.len() {
        block.bytes.resize(carry.len(), 0);
    }
    block.bytes[..carry.len()].copy_from_slice(carry);
    block.len = carry.len();
    carry.clear();
    loop {
        let start = block.len;
        if block.bytes.len() < start + READ {
            block.bytes.resize(start + READ, 0);
        }
        let n = match input.read(&mut block.bytes[start..start + READ]) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Cut::Failed(e),
        };
        block.len = start + n;
        if n == 0 {
            return Cut::End;
        }
        if let Some(i) = memchr::memrchr(b'\n', &block.bytes[start..block.len]) {
            let end = start + i + 1;
            carry.extend_from_slice(&block.bytes[end..block.len]);
            block.len = end;
            return Cut::Lines;
        }
        // No break since the last block's: the block is one line in progress.
        if block.len > MAX_LINE_BYTES {
            return Cut::TooLong;
        }
    }
}

/// A worker's part: each line of the block read as a plain op line where it is one.
fn parse_block(block: &mut Block) {
    block.lines.clear();
    let bytes = &block.bytes[..block.len];
    let mut start = 0;
    while start < bytes.len() {
        let (body, end) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => (start + i, start + i + 1),
            None => (bytes.len(), bytes.len()),
        };
        block.lines.push(if end - start > MAX_LINE_BYTES {
            Line::TooLong
        } else if let Some(op) = parsed_op(&bytes[start..body]) {
            Line::Op(op)
        } else {
            Line::Text(start..end)
        });
        start = end;
    }
}

/// A worker thread: its blocks in, parsed blocks out, in the order given.
struct Worker {
    blocks: Sender<Block>,
    parsed: Receiver<Block>,
}

fn start_workers(count: usize) -> Vec<Worker> {
    let mut workers = Vec::with_capacity(count);
    for _ in 0..count {
        let (blocks, to_parse) = channel::<Block>();
        let (done, parsed) = channel::<Block>();
        let spawned = std::thread::Builder::new()
            .name("trace-parse".into())
            .spawn(move || {
                for mut block in to_parse {
                    parse_block(&mut block);
                    if done.send(block).is_err() {
                        return;
                    }
                }
            });
        if spawned.is_err() {
            break;
        }
        workers.push(Worker { blocks, parsed });
    }
    workers
}

/// Reads the rest of `reader`'s JSON Lines, its header read
/// ([`TraceReader::is_json_after_header`]), with `workers` threads parsing (fewer if no
/// more can be started), handing each record, then the first error if any, to `emit`
/// until it returns `false`. `false` when no worker could be started and nothing was
/// read: the caller reads on by itself.
pub(crate) fn read_rest<R: BufRead>(
    reader: &mut TraceReader<R>,
    workers: usize,
    mut emit: impl FnMut(Result<Numbered, TraceError>) -> bool,
) -> bool {
    let pool = start_workers(workers);
    if pool.is_empty() {
        return false;
    }
    let mut spare: Vec<Block> = Vec::new();
    let mut carry = Vec::new();
    // Which worker has each block out, oldest first.
    let mut out: VecDeque<usize> = VecDeque::with_capacity(pool.len() * DEPTH);
    let mut next = 0;
    // How the input ended, acted on once every block before it is taken.
    let mut ending: Option<Cut> = None;
    loop {
        while ending.is_none() && out.len() < pool.len() * DEPTH {
            let mut block = spare.pop().unwrap_or_default();
            let cut = read_block(reader.input(), &mut block, &mut carry);
            if matches!(cut, Cut::Lines | Cut::End) && block.len > 0 {
                if pool[next].blocks.send(block).is_err() {
                    emit(Err(stopped(reader)));
                    return true;
                }
                out.push_back(next);
                next = (next + 1) % pool.len();
            } else {
                spare.push(block);
            }
            if !matches!(cut, Cut::Lines) {
                ending = Some(cut);
            }
        }
        let Some(worker) = out.pop_front() else {
            break;
        };
        let Ok(mut block) = pool[worker].parsed.recv() else {
            emit(Err(stopped(reader)));
            return true;
        };
        let Block { bytes, lines, .. } = &mut block;
        for line in lines.drain(..) {
            let record = match line {
                Line::Op(op) => reader.next_parsed_op(op).map(Some),
                Line::Text(at) => reader.next_line(&bytes[at]),
                Line::TooLong => Err(reader.next_line_too_long()),
            };
            let item = match record {
                Ok(None) => continue,
                Ok(Some(record)) => Ok(Numbered {
                    record,
                    line: reader.line(),
                    client: reader.client(),
                }),
                Err(e) => Err(e),
            };
            let failed = item.is_err();
            if !emit(item) || failed {
                return true;
            }
        }
        spare.push(block);
    }
    match ending {
        Some(Cut::TooLong) => {
            emit(Err(reader.next_line_too_long()));
        }
        Some(Cut::Failed(cause)) => {
            emit(Err(reader.failed_read(cause)));
        }
        _ => {}
    }
    true
}

/// A worker thread ended before its block was parsed (it can only have panicked).
fn stopped<R: BufRead>(reader: &TraceReader<R>) -> TraceError {
    TraceError::Io {
        path: reader.path().to_path_buf(),
        cause: std::io::Error::other("a trace-parsing thread stopped unexpectedly"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor, Read};

    const HEAD: &str = concat!(
        "{\"type\":\"header\",\"format\":\"naslab-trace\",\"version\":1,\"workload\":\"w\"}\n",
        "{\"type\":\"file\",\"id\":0,\"path\":\"a\",\"exists\":true}\n",
        "{\"type\":\"file\",\"id\":1,\"path\":\"b\",\"exists\":true}\n",
    );

    /// `n` op lines of several shapes (measured, with a client, a rename, a blank line,
    /// a CRLF line, an escape for the general path), with `odd` in place of line `at`.
    fn trace(n: usize, at: usize, odd: &str) -> Vec<u8> {
        let mut t = String::from(HEAD);
        for i in 0..n {
            if i == at {
                t.push_str(odd);
                continue;
            }
            let line = match i % 7 {
                0 => format!(
                    "{{\"type\":\"op\",\"op\":\"read\",\"stream\":{},\"t_us\":{i},\"file\":0,\"offset\":{},\"len\":4096}}\n",
                    i % 3,
                    i * 4096
                ),
                1 => format!(
                    "{{\"type\":\"op\",\"op\":\"write\",\"t_us\":{i},\"file\":1,\"offset\":7,\"len\":9,\"sched_ns\":{i},\"issued_ns\":{},\"done_ns\":{},\"result\":-5,\"client\":{}}}\n",
                    i + 1,
                    i + 2,
                    i % 4
                ),
                2 => format!(
                    "{{\"type\":\"op\",\"op\":\"rename\",\"t_us\":{i},\"file\":0,\"to\":1}}\n"
                ),
                3 => "\n".to_string(),
                4 => format!(
                    "{{\"type\":\"op\",\"op\":\"open\",\"t_us\":{i},\"file\":1,\"flags\":\"read|write\"}}\r\n"
                ),
                5 => format!(
                    "{{\"type\":\"op\",\"op\":\"re\\u0061d\",\"t_us\":{i},\"file\":0,\"len\":1}}\n"
                ),
                _ => format!(
                    " {{ \"file\" : 1 , \"type\":\"op\", \"op\":\"stat\", \"t_us\":{i} }}\n"
                ),
            };
            t.push_str(&line);
        }
        t.into_bytes()
    }

    fn shown(item: Result<Numbered, TraceError>) -> String {
        match item {
            Ok(n) => format!("{:?} at {} by {:?}", n.record, n.line, n.client),
            Err(e) => format!("error at {:?}: {e}", e.line()),
        }
    }

    /// Every item the reader gives on its own, up to its first error.
    fn alone<R: BufRead>(mut reader: TraceReader<R>) -> Vec<String> {
        let mut all = Vec::new();
        while let Some(item) = crate::read_ahead::next_numbered(&mut reader) {
            let failed = item.is_err();
            all.push(shown(item));
            if failed {
                break;
            }
        }
        all
    }

    /// The same, the header read alone and the rest in blocks by `workers` threads.
    fn in_blocks<R: BufRead>(mut reader: TraceReader<R>, workers: usize) -> Vec<String> {
        let header = reader.next_record().unwrap().unwrap();
        assert!(reader.is_json_after_header());
        let mut all = vec![shown(Ok(Numbered {
            record: header,
            line: reader.line(),
            client: reader.client(),
        }))];
        assert!(read_rest(&mut reader, workers, |item| {
            all.push(shown(item));
            true
        }));
        all
    }

    fn reader(bytes: &[u8], buffer: usize) -> TraceReader<BufReader<Cursor<Vec<u8>>>> {
        let input = BufReader::with_capacity(buffer, Cursor::new(bytes.to_vec()));
        TraceReader::new("t".into(), input)
    }

    fn same(bytes: &[u8], what: &str) -> Vec<String> {
        let expected = alone(reader(bytes, 1 << 16));
        for (workers, buffer) in [(1, 1 << 16), (2, 4096), (3, 1 << 20)] {
            let got = in_blocks(reader(bytes, buffer), workers);
            assert_eq!(got.len(), expected.len(), "{what}: {workers} workers");
            for (g, e) in got.iter().zip(&expected) {
                assert_eq!(g, e, "{what}: {workers} workers");
            }
        }
        expected
    }

    #[test]
    fn records_lines_and_the_first_error_are_those_of_the_reader_alone() {
        // About 1.6 MB: a dozen blocks, so lines fall across their edges.
        let n = 20_000;
        let all = same(&trace(n, usize::MAX, ""), "a plain trace");
        let blank = (0..n).filter(|i| i % 7 == 3).count();
        assert_eq!(all.len(), 3 + n - blank);
        assert!(all.last().unwrap().starts_with("Op("));
        let long = format!(
            "{{\"type\":\"op\",\"op\":\"stat\",\"file\":0,\"x\":\"{}\"}}\n",
            "y".repeat(MAX_LINE_BYTES)
        );
        for (odd, says) in [
            (
                "{\"type\":\"op\",\"op\":\"read\",\"file\":9}\n",
                "no file line declares",
            ),
            (
                "{\"type\":\"op\",\"op\":\"rename\",\"file\":0,\"to\":5}\n",
                "'to' is file 5",
            ),
            (
                "{\"type\":\"op\",\"op\":\"rename\",\"file\":0}\n",
                "has no 'to'",
            ),
            (
                "{\"type\":\"op\",\"op\":\"read\",\"file\":0,\"offset\":18446744073709551615,\"len\":1}\n",
                "overflows",
            ),
            (
                "{\"type\":\"op\",\"op\":\"read\",\"file\":0,\"sched_ns\":1}\n",
                "come together",
            ),
            ("{\"type\":\"op\",\"op\":\"read\"}\n", "has no 'file'"),
            (
                "{\"type\":\"file\",\"id\":7,\"path\":\"c\",\"exists\":true}\n",
                "after the first op",
            ),
            (
                "{\"type\":\"op\",\"op\":\"read\",\"file\":0,\"bogus\":1}\n",
                "not a valid trace line",
            ),
            (
                "{\"type\":\"op\",\"op\":\"read\",\n",
                "not a valid trace line",
            ),
            (&long, "longer than"),
        ] {
            // Line 1 on: the file line is an error only after an op.
            for at in [1, 2, 4_444, 19_999] {
                let all = same(&trace(n, at, odd), odd);
                let last = all.last().unwrap();
                assert!(last.contains(says), "{odd}: {last}");
                assert!(
                    last.starts_with(&format!("error at Some({})", 4 + at)),
                    "{last}"
                );
            }
        }
    }

    #[test]
    fn the_last_line_without_a_break_and_an_endless_one_read_as_alone() {
        let mut t = trace(5_000, usize::MAX, "");
        t.extend_from_slice(b"{\"type\":\"op\",\"op\":\"stat\",\"file\":1,\"t_us\":1}");
        let all = same(&t, "no final break");
        assert!(all.last().unwrap().contains("at 5004"));
        // A last line longer than any may be, with no break: refused before it is all read.
        let mut t = trace(5_000, usize::MAX, "");
        t.resize(t.len() + MAX_LINE_BYTES + 10, b' ');
        let all = same(&t, "an endless line");
        assert!(
            all.last().unwrap().contains("longer than"),
            "{:?}",
            all.last()
        );
    }

    /// Gives `bytes`, then fails.
    struct Failing(Cursor<Vec<u8>>);

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(std::io::Error::other("the disk went away")),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_failed_read_comes_after_the_lines_read_before_it() {
        let mut t = trace(9_000, usize::MAX, "");
        // The failure comes inside a line.
        t.extend_from_slice(b"{\"type\":\"op\",");
        let failing = |buffer| {
            let input = BufReader::with_capacity(buffer, Failing(Cursor::new(t.clone())));
            TraceReader::new("t".into(), input)
        };
        let expected = alone(failing(1 << 16));
        assert!(expected.last().unwrap().contains("the disk went away"));
        for workers in [1, 2, 3] {
            assert_eq!(in_blocks(failing(4096), workers), expected);
        }
    }
}
