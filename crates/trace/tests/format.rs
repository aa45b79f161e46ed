use std::io::Cursor;
use std::path::Path;

use naslab_trace::{
    create_trace, open_trace, read_all, FileDecl, FileKind, Measured, Op, OpFlags, OpKind, Prepare,
    Record, Trace, TraceError, TraceReader,
};

fn sample() -> Trace {
    let mut t = Trace::new("sample");
    t.header.description = Some("a \"quoted\" description".into());
    t.files.push(FileDecl {
        id: 0,
        path: "docs".into(),
        kind: FileKind::Dir,
        size: 0,
        exists: true,
        prepare: Prepare::Copy,
    });
    t.files.push(FileDecl {
        id: 1,
        path: "docs/a.doc".into(),
        kind: FileKind::File,
        size: 123_456,
        exists: true,
        prepare: Prepare::Copy,
    });
    t.files.push(FileDecl {
        id: 2,
        path: "video.dvr-ms".into(),
        kind: FileKind::File,
        size: 1 << 30,
        exists: false,
        prepare: Prepare::Stream,
    });
    let mut open = Op::new(0, 0, OpKind::Open, 1);
    open.flags = OpFlags::READ | OpFlags::WRITE;
    t.ops.push(open);
    let mut read = Op::new(0, 10, OpKind::Read, 1);
    read.offset = 4096;
    read.len = 1300;
    t.ops.push(read);
    let mut rename = Op::new(1, 11, OpKind::Rename, 1);
    rename.to = Some(2);
    rename.warmup = true;
    t.ops.push(rename);
    for kind in OpKind::ALL {
        let mut op = Op::new(2, 20, kind, 1);
        if kind == OpKind::Rename {
            op.to = Some(2);
        }
        op.len = 7;
        t.ops.push(op);
    }
    t
}

#[test]
fn round_trip_is_identical_plain_and_compressed() {
    let t = sample();
    let dir = tempfile::tempdir().unwrap();
    for name in ["t.jsonl", "t.jsonl.zst"] {
        let path = dir.path().join(name);
        let mut w = create_trace(&path).unwrap();
        t.write_to(&mut w).unwrap();
        w.close().unwrap();
        let back: Vec<Record> = open_trace(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let expected: Vec<Record> = t.records().collect::<Result<_, _>>().unwrap();
        assert_eq!(back, expected, "{name}");
    }
    // Writing what was read gives the same bytes.
    let bytes = t.to_bytes();
    let reread = read_all(Path::new("x"), Cursor::new(bytes.clone())).unwrap();
    let mut again = Trace::new("sample");
    for r in reread {
        match r {
            Record::Header(h) => again.header = h,
            Record::File(f) => again.files.push(f),
            Record::Op(op, _) => again.ops.push(op),
        }
    }
    assert_eq!(again.to_bytes(), bytes);
}

#[test]
fn measured_fields_round_trip() {
    let t = sample();
    let mut w = naslab_trace::TraceWriter::new("m".into(), Vec::new());
    w.header(&t.header).unwrap();
    w.file(&t.files[1]).unwrap();
    let m = Measured {
        sched_ns: 5,
        issued_ns: 7,
        done_ns: 1000,
        result: -28,
    };
    w.op(&t.ops[1], Some(&m)).unwrap();
    let bytes = w.finish().unwrap();
    let recs = read_all(Path::new("m"), Cursor::new(bytes)).unwrap();
    assert_eq!(recs[2], Record::Op(t.ops[1], Some(m)));
}

#[test]
fn client_field_of_merged_records_round_trips() {
    let t = sample();
    let mut w = naslab_trace::TraceWriter::new("c".into(), Vec::new());
    w.header(&t.header).unwrap();
    w.file(&t.files[1]).unwrap();
    let m = Measured {
        sched_ns: 1,
        issued_ns: 2,
        done_ns: 3,
        result: 0,
    };
    w.op(&t.ops[1], Some(&m)).unwrap();
    w.client_op(&t.ops[1], &m, 3).unwrap();
    let bytes = w.finish().unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    assert_eq!(text.matches("\"client\":3").count(), 1, "{text}");
    let mut r = TraceReader::new("c".into(), Cursor::new(bytes));
    r.read_header().unwrap();
    let mut clients = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if let Record::Op(op, Some(got)) = rec {
            assert_eq!((op, got), (t.ops[1], m));
            clients.push(r.client());
        }
    }
    assert_eq!(clients, vec![None, Some(3)]);
}

fn error_of(text: &str) -> TraceError {
    let mut r = TraceReader::new("bad.jsonl".into(), Cursor::new(text.as_bytes().to_vec()));
    loop {
        match r.next_record() {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("no error for {text:?}"),
            Err(e) => return e,
        }
    }
}

const HEAD: &str = r#"{"type":"header","format":"naslab-trace","version":1,"workload":"w"}"#;
const FILE: &str = r#"{"type":"file","id":0,"path":"a","size":10,"exists":true}"#;

#[test]
fn malformed_lines_are_rejected_with_their_line_number() {
    let cases = [
        (format!("{HEAD}\n{FILE}\n{{not json\n"), 3, "not a valid trace line"),
        (
            format!("{HEAD}\n{FILE}\n\n{{\"type\":\"op\",\"op\":\"read\",\"file\":9}}\n"),
            4,
            "which no file line declares",
        ),
        (
            format!("{HEAD}\n{{\"type\":\"op\",\"op\":\"jump\",\"file\":0}}\n"),
            2,
            "unknown variant",
        ),
        (
            format!("{HEAD}\n{{\"type\":\"file\",\"id\":1,\"path\":\"../x\",\"exists\":true}}\n"),
            2,
            "may not leave",
        ),
        (format!("{HEAD}\n{FILE}\n{FILE}\n"), 3, "declared twice"),
        (format!("{FILE}\n"), 1, "first line must be the header"),
        (
            format!("{HEAD}\n{FILE}\n{{\"type\":\"op\",\"op\":\"read\",\"file\":0,\"ofset\":1}}\n"),
            3,
            "unknown field",
        ),
        (
            format!("{HEAD}\n{FILE}\n{{\"type\":\"op\",\"op\":\"read\",\"file\":0}}\n{{\"type\":\"file\",\"id\":1,\"path\":\"b\",\"exists\":true}}\n"),
            4,
            "declare every file before the ops",
        ),
    ];
    for (text, line, needle) in cases {
        let e = error_of(&text);
        assert_eq!(e.line(), Some(line), "{e}");
        let msg = e.to_string();
        assert!(msg.contains(needle), "{msg:?} lacks {needle:?}");
        assert!(msg.starts_with(&format!("bad.jsonl:{line}:")), "{msg}");
    }
}

#[test]
fn unknown_version_is_rejected_by_name() {
    let e = error_of(r#"{"type":"header","format":"naslab-trace","version":2,"workload":"w"}"#);
    assert!(matches!(e, TraceError::Unsupported { .. }));
    let msg = e.to_string();
    assert!(
        msg.contains("naslab-trace version 2 is not supported"),
        "{msg}"
    );
    assert!(msg.contains("reads version 1"), "{msg}");
}

#[test]
fn binary_garbage_does_not_panic() {
    let junk: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let r = TraceReader::new("junk".into(), Cursor::new(junk));
    let results: Vec<_> = r.take(10).collect();
    assert!(results.iter().any(|r| r.is_err()));
}
