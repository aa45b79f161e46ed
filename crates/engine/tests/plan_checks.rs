//! Every check `compile` makes on a trace, one trace each: the error names the line and
//! says what is wrong. A good trace's plan carries the counts and figures the ops give.

// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use naslab_engine::plan::{PlanError, compile};
use naslab_trace::{FileDecl, FileKind, Header, Op, OpFlags, OpKind, Record};

fn decl(id: u32, path: &str, kind: FileKind, exists: bool) -> Record {
    Record::File(FileDecl {
        kind,
        ..FileDecl::file(id, path, 4096, exists)
    })
}

fn op(t_us: u64, kind: OpKind, file: u32) -> Op {
    Op::new(0, t_us, kind, file)
}

fn header() -> Record {
    Record::Header(Header::new("checks"))
}

/// A header, a file (id 1, `a`) and a directory (id 2, `d`), then `ops`.
fn with_ops(ops: Vec<Op>) -> Vec<Record> {
    let mut r = vec![
        header(),
        decl(1, "a", FileKind::File, true),
        decl(2, "d", FileKind::Dir, true),
    ];
    r.extend(ops.into_iter().map(|o| Record::Op(o, None)));
    r
}

/// Compiles `records`, numbered from line 1, and returns the error's line and message.
fn error_of(records: Vec<Record>) -> (u64, String) {
    let spool = tempfile::tempdir().unwrap();
    let numbered = records
        .into_iter()
        .enumerate()
        .map(|(i, r)| Ok((r, i as u64 + 1)));
    match compile(Path::new("t.jsonl"), numbered, spool.path()) {
        Ok(_) => panic!("the trace compiled"),
        Err(PlanError::Invalid { line, message, .. }) => (line, message),
        Err(e) => panic!("not an invalid-trace error: {e}"),
    }
}

fn expect(records: Vec<Record>, line: u64, words: &str) {
    let (got_line, message) = error_of(records);
    assert!(message.contains(words), "line {got_line}: {message}");
    assert_eq!(got_line, line, "{message}");
}

#[test]
fn the_header_must_come_first_and_once() {
    expect(vec![], 1, "the trace is empty");
    expect(
        vec![decl(1, "a", FileKind::File, true)],
        1,
        "first line must be the header",
    );
    expect(
        vec![Record::Op(op(0, OpKind::Stat, 1), None)],
        1,
        "first line must be the header",
    );
    expect(vec![header(), header()], 2, "a second header line");
    let mut deep = Header::new("deep");
    deep.queue_depth = Some(0);
    expect(
        vec![Record::Header(deep)],
        1,
        "queue_depth 0 is out of range",
    );
}

#[test]
fn declarations_are_checked() {
    let mut r = with_ops(vec![op(0, OpKind::Stat, 1)]);
    r.push(decl(3, "late", FileKind::File, true));
    expect(r, 5, "a file line after the first op");
    expect(
        vec![
            header(),
            decl(1, "a", FileKind::File, true),
            decl(1, "b", FileKind::File, true),
        ],
        3,
        "file id 1 is declared twice",
    );
    expect(
        vec![
            header(),
            decl(1, "a", FileKind::File, true),
            decl(2, "a", FileKind::File, true),
        ],
        3,
        "path 'a' is declared twice",
    );
    expect(
        vec![header(), decl(1, "../x", FileKind::File, true)],
        2,
        "path '../x' has a '..' component",
    );
    expect(
        vec![
            header(),
            decl(1, "f", FileKind::File, true),
            decl(2, "f/x", FileKind::File, true),
        ],
        0,
        "inside 'f', which is declared as a file",
    );
}

#[test]
fn an_op_must_fit_its_files() {
    let mut big = op(0, OpKind::Read, 1);
    big.len = 1 << 30;
    let mut overflow = op(0, OpKind::Read, 1);
    overflow.offset = u64::MAX;
    overflow.len = 2;
    let mut rename = op(0, OpKind::Rename, 1);
    rename.to = Some(2);
    let cases = [
        (
            op(0, OpKind::Stat, 9),
            "refers to file 9, which no file line declares",
        ),
        (op(0, OpKind::Rename, 1), "the rename op has no 'to'"),
        (rename, "rename between a file and a directory"),
        (op(0, OpKind::Readdir, 1), "declared as a file"),
        (op(0, OpKind::Open, 2), "declared as a directory"),
        (big, "over naslab's limit"),
        (overflow, "offset + len overflows"),
    ];
    for (o, words) in cases {
        let mut ops = vec![op(0, OpKind::Open, 1)];
        ops.push(o);
        expect(with_ops(ops), 5, words);
    }
}

#[test]
fn a_stream_keeps_time_order_and_its_handles() {
    expect(
        with_ops(vec![op(5, OpKind::Stat, 1), op(4, OpKind::Stat, 1)]),
        5,
        "time goes backwards in stream 0: t_us 4 after 5",
    );
    expect(
        with_ops(vec![op(0, OpKind::Open, 1), op(1, OpKind::Open, 1)]),
        5,
        "opens 'a' again without closing it",
    );
    expect(
        with_ops(vec![op(0, OpKind::Read, 1)]),
        4,
        "issues a read on 'a' without opening it",
    );
    expect(
        with_ops(vec![
            op(0, OpKind::Open, 1),
            op(1, OpKind::Close, 1),
            op(2, OpKind::Close, 1),
        ]),
        6,
        "issues a close on 'a' without opening it",
    );
}

#[test]
fn a_streams_warm_up_comes_first_and_closes_its_files() {
    let warm = |mut o: Op| {
        o.warmup = true;
        o
    };
    expect(
        with_ops(vec![op(0, OpKind::Stat, 1), warm(op(1, OpKind::Stat, 1))]),
        5,
        "a warm-up op after stream 0's measured ops",
    );
    expect(
        with_ops(vec![warm(op(0, OpKind::Open, 1)), op(1, OpKind::Stat, 1)]),
        5,
        "stream 0 leaves 'a' open at the end of its warm-up",
    );
    expect(
        with_ops(vec![warm(op(0, OpKind::Open, 1))]),
        0,
        "stream 0 ends its warm-up with a file still open",
    );
}

#[test]
fn a_good_trace_gives_its_counts_and_figures() {
    let warm = |mut o: Op| {
        o.warmup = true;
        o
    };
    let data = |t: u64, kind: OpKind, stream: u32, offset: u64, len: u64| Op {
        offset,
        len,
        ..Op::new(stream, t, kind, 1)
    };
    let mut direct = Op::new(1, 20, OpKind::Open, 1);
    direct.flags = OpFlags::READ | OpFlags::DIRECT;
    let ops = vec![
        warm(op(0, OpKind::Open, 1)),
        warm(data(1, OpKind::Write, 0, 0, 4096)),
        warm(op(2, OpKind::Close, 1)),
        op(10, OpKind::Open, 1),
        data(11, OpKind::Read, 0, 100, 1000),
        data(12, OpKind::Write, 0, 0, 8192),
        op(13, OpKind::Close, 1),
        direct,
        data(21, OpKind::Read, 1, 0, 512),
        Op::new(1, 22, OpKind::Close, 1),
    ];
    let spool = tempfile::tempdir().unwrap();
    let numbered = with_ops(ops)
        .into_iter()
        .enumerate()
        .map(|(i, r)| Ok((r, i as u64 + 1)));
    let plan = compile(Path::new("t.jsonl"), numbered, spool.path()).unwrap();
    assert_eq!(plan.ops(), 7);
    assert_eq!(plan.op_counts[OpKind::Read.index()], 2);
    assert_eq!(plan.warmup_counts[OpKind::Write.index()], 1);
    assert_eq!(plan.first_line[OpKind::Write.index()], 5);
    assert_eq!(plan.first_line[OpKind::Read.index()], 8);
    assert_eq!(plan.t0_us, 10);
    assert_eq!(plan.max_len, 8192);
    assert_eq!(plan.planned_read_bytes, 1512);
    assert_eq!(plan.planned_write_bytes, 4096 + 8192);
    assert_eq!(plan.unaligned_ops, 1);
    assert_eq!(plan.direct_opens, 1);
    assert_eq!(plan.streams.len(), 2);
    assert_eq!(plan.warmup.len(), 1);
    assert_eq!(plan.streams[0].max_write, 8192);
    assert_eq!(plan.streams[0].max_read, 1000);
    assert_eq!(plan.streams[0].ops.len(), 4);
    assert_eq!(plan.warmup[0].ops.len(), 3);
    assert_eq!(plan.streams[1].max_read, 512);
    assert_eq!(plan.files.entries.len(), 2);
}
