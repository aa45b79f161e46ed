//! Reading a trace ahead of its consumer, on a thread of its own: decompressing and
//! checking the records overlaps what the consumer does with them (compiling a trace,
//! building a report) on another CPU. Memory stays at a few batches of records.

use std::io::BufRead;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender};

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

/// Records per batch handed from the reading thread to the consumer.
const BATCH: usize = 4096;

/// The consumer's end: an iterator over the records, the first error ending it.
pub enum ReadAhead {
    Thread {
        batches: Receiver<Vec<Option<Item>>>,
        /// Emptied batches go back to the reader to be filled again.
        spent: Sender<Vec<Option<Item>>>,
        batch: Vec<Option<Item>>,
        next: usize,
    },
    /// No thread could be started: the one error to give.
    Failed(Option<TraceError>),
}

impl ReadAhead {
    /// Starts reading `reader` on a thread named `trace-read`. The thread stops at the
    /// trace's end, at its first error, or when the consumer drops this.
    pub fn start<R: BufRead + Send + 'static>(mut reader: TraceReader<R>) -> ReadAhead {
        let (batch_tx, batches) = sync_channel(2);
        let (spent, spent_rx) = channel::<Vec<Option<Item>>>();
        let path = reader.path().to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("trace-read".into())
            .spawn(move || loop {
                let mut batch = spent_rx
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(BATCH));
                batch.clear();
                let mut end = false;
                while !end && batch.len() < BATCH {
                    match reader.next_record() {
                        Ok(Some(record)) => batch.push(Some(Ok(Numbered {
                            record,
                            line: reader.line(),
                            client: reader.client(),
                        }))),
                        Ok(None) => end = true,
                        Err(e) => {
                            batch.push(Some(Err(e)));
                            end = true;
                        }
                    }
                }
                // The consumer stopped listening (it failed): nothing more to do.
                if batch_tx.send(batch).is_err() || end {
                    return;
                }
            });
        match spawned {
            Ok(_) => ReadAhead::Thread {
                batches,
                spent,
                batch: Vec::new(),
                next: 0,
            },
            Err(cause) => ReadAhead::Failed(Some(TraceError::Io { path, cause })),
        }
    }
}

impl Iterator for ReadAhead {
    type Item = Item;

    #[inline]
    fn next(&mut self) -> Option<Item> {
        match self {
            ReadAhead::Failed(e) => e.take().map(Err),
            ReadAhead::Thread {
                batches,
                spent,
                batch,
                next,
            } => loop {
                if let Some(slot) = batch.get_mut(*next) {
                    *next += 1;
                    return slot.take();
                }
                let done = std::mem::take(batch);
                let _ = spent.send(done);
                *batch = batches.recv().ok()?;
                *next = 0;
            },
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
}
