//! Reading a trace ahead of its consumer, on a thread of its own: decompressing and
//! checking the records overlaps what the consumer does with them (compiling a trace,
//! building a report) on another CPU; the op lines of a JSON Lines trace are parsed on
//! further threads, one per CPU up to four (`line_blocks`). Memory stays at a few batches
//! of records; a trace of one batch or less is read in line.

use std::io::BufRead;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};

use crate::{Record, TraceError, TraceReader};

/// One record as the reader gave it.
#[derive(Debug)]
pub struct Numbered {
    pub record: Record,
    /// Its line (in a binary trace, its record number).
    pub line: u64,
    /// A multi-client run's op records: the client that issued the op.
    pub client: Option<u32>,
}

type Item = Result<Numbered, TraceError>;
type Batch = Vec<Option<Item>>;

/// Records per batch handed from the reading thread to the consumer.
const BATCH: usize = 4096;

/// The consumer's end: an iterator over the records, the first error ending it.
pub struct ReadAhead {
    batch: Batch,
    next: usize,
    /// The reading thread's batches (and where emptied ones go back to be filled again),
    /// once the trace proved longer than one batch.
    rest: Option<(Receiver<Batch>, Sender<Batch>)>,
}

/// The reader's next record with its line and client, or its error; `None` at the end.
pub(crate) fn next_numbered<R: BufRead>(reader: &mut TraceReader<R>) -> Option<Item> {
    match reader.next_record() {
        Ok(Some(record)) => Some(Ok(Numbered {
            record,
            line: reader.line(),
            client: reader.client(),
        })),
        Ok(None) => None,
        Err(e) => Some(Err(e)),
    }
}

/// Fills `batch` with up to [`BATCH`] records; whether the trace ended (or failed).
fn fill<R: BufRead>(reader: &mut TraceReader<R>, batch: &mut Batch) -> bool {
    while batch.len() < BATCH {
        let Some(item) = next_numbered(reader) else {
            return true;
        };
        let failed = item.is_err();
        batch.push(Some(item));
        if failed {
            return true;
        }
    }
    false
}

/// The most threads parsing JSON Lines at once.
const MAX_WORKERS: usize = 4;

/// The reading thread's end: records gathered into batches for the consumer.
struct Sending {
    batch: Batch,
    full: SyncSender<Batch>,
    spent: Receiver<Batch>,
}

impl Sending {
    /// Adds an item, sending the batch when it is full; `false` once the consumer has
    /// stopped listening (it failed): nothing more to do.
    #[inline]
    fn push(&mut self, item: Item) -> bool {
        self.batch.push(Some(item));
        self.batch.len() < BATCH || self.send()
    }

    /// Sends the batch as it is, taking an emptied one back to fill.
    fn send(&mut self) -> bool {
        let mut next = self
            .spent
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        next.clear();
        self.full
            .send(std::mem::replace(&mut self.batch, next))
            .is_ok()
    }
}

impl ReadAhead {
    /// Reads the first batch here; a trace longer than that is read on, ahead of the
    /// consumer, by a thread named `trace-read` (with `trace-parse` threads for a JSON
    /// Lines trace on a machine of several CPUs), which stops at the trace's end, at its
    /// first error, or when the consumer drops this. A short trace starts no thread.
    pub fn start<R: BufRead + Send + 'static>(mut reader: TraceReader<R>) -> ReadAhead {
        let mut first = Vec::with_capacity(BATCH);
        if fill(&mut reader, &mut first) {
            return ReadAhead {
                batch: first,
                next: 0,
                rest: None,
            };
        }
        let (batch_tx, batches) = sync_channel(2);
        let (spent, spent_rx) = channel::<Batch>();
        let path = reader.path().to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("trace-read".into())
            .spawn(move || {
                let mut out = Sending {
                    batch: Vec::with_capacity(BATCH),
                    full: batch_tx,
                    spent: spent_rx,
                };
                let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
                let in_blocks = reader.is_json_after_header()
                    && workers > 1
                    && crate::line_blocks::read_rest(
                        &mut reader,
                        workers.min(MAX_WORKERS),
                        |item| out.push(item),
                    );
                if !in_blocks {
                    while let Some(item) = next_numbered(&mut reader) {
                        let failed = item.is_err();
                        if !out.push(item) || failed {
                            break;
                        }
                    }
                }
                out.send();
            });
        match spawned {
            Ok(_) => ReadAhead {
                batch: first,
                next: 0,
                rest: Some((batches, spent)),
            },
            Err(cause) => {
                first.push(Some(Err(TraceError::Io { path, cause })));
                ReadAhead {
                    batch: first,
                    next: 0,
                    rest: None,
                }
            }
        }
    }
}

impl Iterator for ReadAhead {
    type Item = Item;

    #[inline]
    fn next(&mut self) -> Option<Item> {
        loop {
            if let Some(slot) = self.batch.get_mut(self.next) {
                self.next += 1;
                return slot.take();
            }
            let (batches, spent) = self.rest.as_ref()?;
            let _ = spent.send(std::mem::take(&mut self.batch));
            self.batch = batches.recv().ok()?;
            self.next = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn records_come_in_order_with_their_lines_and_clients_and_the_error_ends_them() {
        let mut text = String::from(
            "{\"type\":\"header\",\"format\":\"naslab-trace\",\"version\":1,\"workload\":\"w\"}\n{\"type\":\"file\",\"id\":0,\"path\":\"a\",\"exists\":true}\n",
        );
        let n = 3 * BATCH + 5;
        for i in 0..n {
            text.push_str(&format!(
                "{{\"type\":\"op\",\"op\":\"stat\",\"t_us\":{i},\"file\":0,\"sched_ns\":1,\"issued_ns\":2,\"done_ns\":3,\"result\":0,\"client\":{}}}\n",
                i % 3
            ));
        }
        text.push_str("not json\n");
        let reader = TraceReader::new("t".into(), Cursor::new(text.into_bytes()));
        let all: Vec<Item> = ReadAhead::start(reader).collect();
        assert_eq!(all.len(), 2 + n + 1);
        for (i, r) in all[2..2 + n].iter().enumerate() {
            let r = r.as_ref().unwrap();
            assert_eq!(r.line, i as u64 + 3);
            assert_eq!(r.client, Some(i as u32 % 3));
            assert!(matches!(&r.record, Record::Op(op, Some(_)) if op.t_us == i as u64));
        }
        let e = all.last().unwrap().as_ref().unwrap_err();
        assert_eq!(e.line(), Some(n as u64 + 3));
    }

    #[test]
    fn a_trace_of_one_batch_is_read_in_line_with_no_thread() {
        let mut text = String::from(
            "{\"type\":\"header\",\"format\":\"naslab-trace\",\"version\":1,\"workload\":\"w\"}\n{\"type\":\"file\",\"id\":0,\"path\":\"a\",\"exists\":true}\n",
        );
        for i in 0..BATCH - 3 {
            text.push_str(&format!(
                "{{\"type\":\"op\",\"op\":\"stat\",\"t_us\":{i},\"file\":0}}\n"
            ));
        }
        let reader = TraceReader::new("t".into(), Cursor::new(text.into_bytes()));
        let it = ReadAhead::start(reader);
        assert!(it.rest.is_none());
        let all: Vec<Item> = it.collect();
        assert_eq!(all.len(), BATCH - 1);
        assert!(all.iter().all(|r| r.is_ok()));
    }
}
