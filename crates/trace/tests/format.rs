// A test fails on the unwrap of what it did not expect, which is what a test is for.
#![allow(clippy::unwrap_used)]

use std::io::Cursor;
use std::path::Path;

use naslab_trace::{
    Expected, FileDecl, FileKind, Header, MAX_LINE_BYTES, Measured, Op, OpFlags, OpKind, Prepare,
    Record, Trace, TraceError, TraceReader, create_trace, open_trace, read_all,
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
        if kind.needs_to() {
            op.to = Some(2);
        }
        op.len = 7;
        t.ops.push(op);
    }
    for e in Expected::ALL {
        let mut op = Op::new(3, 30, OpKind::Open, 2);
        op.expect = Some(e);
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
        (
            format!("{HEAD}\n{FILE}\n{{not json\n"),
            3,
            "not a valid trace line",
        ),
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
            format!(
                "{HEAD}\n{FILE}\n{{\"type\":\"op\",\"op\":\"read\",\"file\":0}}\n{{\"type\":\"file\",\"id\":1,\"path\":\"b\",\"exists\":true}}\n"
            ),
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
    for v in [0, 4] {
        let e = error_of(&format!(
            r#"{{"type":"header","format":"naslab-trace","version":{v},"workload":"w"}}"#
        ));
        assert!(matches!(e, TraceError::Unsupported { .. }));
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("naslab-trace version {v} is not supported")),
            "{msg}"
        );
        assert!(msg.contains("reads versions 1 to 3"), "{msg}");
    }
}

#[test]
fn version_1_traces_are_still_read_and_traces_are_written_as_version_3() {
    let text = format!("{HEAD}\n{FILE}\n{{\"type\":\"op\",\"op\":\"stat\",\"file\":0}}\n");
    let recs = naslab_trace::read_all(Path::new("v1.jsonl"), text.as_bytes()).unwrap();
    assert_eq!(recs.len(), 3);
    let mut out = Vec::new();
    let mut w = naslab_trace::TraceWriter::new("v3.jsonl".into(), &mut out);
    w.header(&Header::new("w")).unwrap();
    w.finish().unwrap();
    let line = String::from_utf8(out).unwrap();
    assert!(line.contains("\"version\":3"), "{line}");
}

#[test]
fn an_exclusive_create_reads_back_and_belongs_on_a_create_only() {
    let create = format!(
        "{HEAD}\n{FILE}\n{{\"type\":\"op\",\"op\":\"create\",\"file\":0,\"flags\":\"write|excl\",\"expect\":\"EEXIST\"}}\n"
    );
    let recs = naslab_trace::read_all(Path::new("x.jsonl"), create.as_bytes()).unwrap();
    let Record::Op(op, _) = &recs[2] else {
        panic!("{recs:?}")
    };
    assert!(op.flags.contains(OpFlags::EXCL | OpFlags::WRITE));
    assert_eq!(op.flags.to_string(), "write|excl");
    assert_eq!(op.expect, Some(Expected::Exists));
    let open = create.replace("\"op\":\"create\"", "\"op\":\"open\"");
    let e = error_of(&open);
    assert_eq!(e.line(), Some(3), "{e}");
    assert!(
        e.to_string().contains("'excl' belongs on a 'create' only"),
        "{e}"
    );
}

#[test]
fn new_ops_and_expected_errors_read_back_from_their_json_names() {
    let text = format!(
        "{HEAD}\n{FILE}\n{{\"type\":\"op\",\"op\":\"lock\",\"file\":0,\"offset\":5,\"len\":1,\"flags\":\"read\"}}\n{{\"type\":\"op\",\"op\":\"open\",\"file\":0,\"expect\":\"ENOENT\"}}\n{{\"type\":\"op\",\"op\":\"open\",\"file\":0,\"expect\":\"EPIPE\"}}\n"
    );
    let e = error_of(&text);
    assert_eq!(e.line(), Some(5), "{e}");
    let good: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    let recs = naslab_trace::read_all(Path::new("v.jsonl"), good.as_bytes()).unwrap();
    let ops: Vec<Op> = recs
        .into_iter()
        .filter_map(|r| match r {
            Record::Op(op, _) => Some(op),
            _ => None,
        })
        .collect();
    assert_eq!(
        (ops[0].kind, ops[0].offset, ops[0].len, ops[0].flags),
        (OpKind::Lock, 5, 1, OpFlags::READ)
    );
    assert_eq!(ops[1].expect, Some(Expected::NotFound));
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

#[test]
fn a_line_over_the_limit_is_refused_with_its_number() {
    // 2 MiB without a newline.
    let e = error_of(&"a".repeat(2 << 20));
    assert_eq!(e.line(), Some(1), "{e}");
    assert!(e.to_string().contains("longer than 1048576 bytes"), "{e}");
    // What /dev/zero gives starts as a binary trace would, and is refused at once.
    let e = error_of(&"\0".repeat(2 << 20));
    assert_eq!(e.line(), Some(1), "{e}");
    assert!(e.to_string().contains("not a naslab binary trace"), "{e}");
    let long = format!(
        "{HEAD}\n{FILE}\n{{\"type\":\"op\",\"op\":\"stat\",\"file\":0,\"x\":\"{}\"}}\n",
        "a".repeat(MAX_LINE_BYTES)
    );
    let e = error_of(&long);
    assert_eq!(e.line(), Some(3), "{e}");
    assert!(
        e.to_string().starts_with("bad.jsonl:3: the line is longer"),
        "{e}"
    );
    // A line of exactly the limit, newline included, is still read.
    let pad = MAX_LINE_BYTES - FILE.len() - 1;
    let fits = format!(
        "{HEAD}\n{}{}\n",
        &FILE[..FILE.len() - 1],
        format_args!("{}}}", " ".repeat(pad))
    );
    assert_eq!(fits.lines().nth(1).unwrap().len() + 1, MAX_LINE_BYTES);
    let recs = read_all(Path::new("fits"), Cursor::new(fits.into_bytes())).unwrap();
    assert_eq!(recs.len(), 2);
}

#[test]
fn a_compressed_huge_line_fails_after_reading_one_mebibyte() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.jsonl.zst");
    // 256 MiB of one line compresses to a few kB; reading must stop at the limit.
    let mut enc =
        zstd::stream::write::Encoder::new(std::fs::File::create(&path).unwrap(), 19).unwrap();
    use std::io::Write;
    writeln!(enc, "{HEAD}").unwrap();
    let chunk = vec![b'a'; 1 << 20];
    for _ in 0..256 {
        enc.write_all(&chunk).unwrap();
    }
    enc.finish().unwrap();
    assert!(std::fs::metadata(&path).unwrap().len() < 100_000);
    let e = open_trace(&path)
        .unwrap()
        .find_map(|r| r.err())
        .expect("an error");
    assert_eq!(e.line(), Some(2), "{e}");
    assert!(e.to_string().contains("longer than 1048576 bytes"), "{e}");
}

#[test]
fn a_non_utf8_line_is_reported_at_its_own_number() {
    let mut bytes = format!("{HEAD}\n{FILE}\n").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"op\",\"op\":\"stat\",\"file\":0,\"x\":\"\xff\"}\n");
    let e = TraceReader::new("bad.jsonl".into(), Cursor::new(bytes))
        .find_map(|r| r.err())
        .unwrap();
    assert_eq!(e.line(), Some(3), "{e}");
    assert_eq!(e.to_string(), "bad.jsonl:3: the line is not UTF-8 text");
}

#[test]
fn json_errors_name_the_trace_line_and_column_not_serdes_line_one() {
    let e = error_of(&format!(
        "{HEAD}\n{FILE}\n{{\"type\":\"op\",\"op\":\"read\",\"file\":0,\"len\":-1}}\n"
    ));
    let msg = e.to_string();
    assert!(
        msg.starts_with("bad.jsonl:3: not a valid trace line (column "),
        "{msg}"
    );
    assert!(!msg.contains("at line"), "{msg}");
}

#[test]
fn a_damaged_zstd_stream_is_called_damaged_and_says_so_once() {
    let t = sample();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl.zst");
    let mut w = create_trace(&path).unwrap();
    w.header(&t.header).unwrap();
    for f in &t.files {
        w.file(f).unwrap();
    }
    for i in 0..100_000u64 {
        let mut op = t.ops[1];
        op.offset = i * 7919;
        w.op(&op, None).unwrap();
    }
    w.close().unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n / 2..n / 2 + 64] {
        *b ^= 0x5a;
    }
    std::fs::write(&path, &bytes).unwrap();
    let e = open_trace(&path)
        .unwrap()
        .find_map(|r| r.err())
        .expect("an error");
    let msg = e.to_string();
    assert!(matches!(e, TraceError::Corrupt { .. }), "{msg}");
    assert!(msg.contains("zstd stream is damaged"), "{msg}");
    assert!(!msg.contains("permissions"), "{msg}");
    // The cause is in the message, and not repeated as a source.
    assert!(std::error::Error::source(&e).is_none());
    // Whole lines came before the damage, and the message says after which one.
    let TraceError::Corrupt { after, .. } = e else {
        unreachable!()
    };
    assert!(after > 100, "{msg}");
    assert!(
        msg.starts_with(&format!(
            "{}: the zstd stream is damaged after line {after} (",
            path.display()
        )),
        "{msg}"
    );
}

#[test]
fn writing_to_a_directory_says_write_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let e = match create_trace(dir.path()) {
        Err(e) => e,
        Ok(_) => panic!("a directory was accepted"),
    };
    let msg = e.to_string();
    assert!(msg.starts_with("cannot write trace"), "{msg}");
    assert!(msg.contains("it is a directory"), "{msg}");
    assert!(std::error::Error::source(&e).is_none());
}

/// Every record and the line it came from, reading `bytes` through a buffer of
/// `capacity` bytes.
fn records_through(bytes: &[u8], capacity: usize) -> Vec<(u64, Record)> {
    let input = std::io::BufReader::with_capacity(capacity, Cursor::new(bytes.to_vec()));
    let mut r = TraceReader::new("t.jsonl".into(), input);
    let mut out = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        out.push((r.line(), rec));
    }
    out
}

#[test]
fn op_lines_read_alike_however_the_input_buffer_cuts_them() {
    // Plain op lines (read where they lie in the buffer), ones the general path reads
    // (an escape, a float-free but spaced line), blank lines and CRLF endings.
    let mut text = format!("{HEAD}\n{FILE}\n\n");
    for i in 0..200u64 {
        match i % 4 {
            0 => text.push_str(&format!(
                "{{\"type\":\"op\",\"op\":\"read\",\"stream\":{},\"t_us\":{i},\"file\":0,\"offset\":{},\"len\":4096}}\n",
                i % 3,
                i * 4096
            )),
            1 => text.push_str(&format!(
                "{{\"type\":\"op\",\"op\":\"write\",\"t_us\":{i},\"file\":0,\"len\":1,\"flags\":\"write\"}}\r\n"
            )),
            2 => text.push_str(&format!(
                "{{\"type\":\"op\",\"op\":\"st\\u0061t\",\"t_us\":{i},\"file\":0}}\n"
            )),
            _ => text.push_str(&format!(
                "  {{ \"type\" : \"op\", \"op\":\"close\", \"t_us\":{i}, \"file\":0 }}  \n\n"
            )),
        }
    }
    // The last line without its newline.
    text.push_str(r#"{"type":"op","op":"open","t_us":999,"file":0}"#);
    let whole = records_through(text.as_bytes(), 1 << 20);
    assert_eq!(whole.len(), 2 + 201);
    for capacity in [1, 7, 64, 100, 333] {
        assert_eq!(
            records_through(text.as_bytes(), capacity),
            whole,
            "buffer of {capacity} bytes"
        );
    }
    // Line numbers count blank lines too.
    assert_eq!(whole.last().unwrap().0, text.lines().count() as u64);
    // An op line before the header is still refused as one, however it is read.
    let e = error_of(r#"{"type":"op","op":"read","file":0}"#);
    assert!(
        e.to_string().contains("the first line must be the header"),
        "{e}"
    );
}

/// A trace exercising every field of the binary encoding: each op kind, offsets and
/// lengths at the extremes, times going backwards, errors, warm-up ops, clients.
fn write_varied(w: &mut naslab_trace::TraceWriter<impl std::io::Write>) {
    let t = sample();
    w.header(&t.header).unwrap();
    for f in &t.files {
        w.file(f).unwrap();
    }
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..2000u64 {
        let kind = OpKind::ALL[(next() % OpKind::ALL.len() as u64) as usize];
        let mut op = Op::new((next() % 4) as u32, next() % 1_000_000, kind, 1);
        op.offset = match i % 3 {
            0 => 0,
            1 => next() >> 20,
            _ => u64::MAX >> (next() % 64).max(1),
        };
        op.len = if i % 5 == 0 {
            0
        } else {
            next() % (op.offset ^ u64::MAX).min(1 << 24)
        };
        op.flags = OpFlags((next() % 128) as u8);
        op.warmup = i % 7 == 0;
        if kind.needs_to() {
            op.to = Some(2);
        }
        if i % 6 == 1 {
            op.expect = Some(Expected::ALL[(next() % Expected::ALL.len() as u64) as usize]);
        }
        let issued = if i % 11 == 0 {
            u64::MAX - i
        } else {
            next() >> 1
        };
        let m = Measured {
            sched_ns: issued.wrapping_sub(next() % 3000),
            issued_ns: issued,
            done_ns: if i % 13 == 0 {
                0
            } else {
                issued.wrapping_add(next() % 100_000)
            },
            result: match i % 4 {
                0 => op.len as i64,
                1 => -((next() % 130) as i64),
                2 => i64::MIN,
                _ => (next() >> 1) as i64,
            },
        };
        match i % 3 {
            0 => w.op(&op, None).unwrap(),
            1 => w.op(&op, Some(&m)).unwrap(),
            _ => w.client_op(&op, &m, (next() % 600) as u32).unwrap(),
        }
    }
}

/// Every record with the client it names, read from `bytes` through a buffer of
/// `capacity` bytes.
fn records_and_clients(
    bytes: &[u8],
    capacity: usize,
) -> Result<Vec<(u64, Record, Option<u32>)>, TraceError> {
    let input = std::io::BufReader::with_capacity(capacity, Cursor::new(bytes.to_vec()));
    let mut r = TraceReader::new("t.nbt".into(), input);
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push((r.line(), rec, r.client()));
    }
    Ok(out)
}

fn binary_bytes() -> Vec<u8> {
    let mut w = naslab_trace::TraceWriter::new_binary("b".into(), Vec::new());
    write_varied(&mut w);
    w.finish().unwrap()
}

#[test]
fn the_binary_encoding_reads_back_as_the_json_lines_it_stands_for() {
    let mut w = naslab_trace::TraceWriter::new("j".into(), Vec::new());
    write_varied(&mut w);
    let json = w.finish().unwrap();
    let binary = binary_bytes();
    assert!(binary.starts_with(naslab_trace::BINARY_MAGIC));
    assert!(
        binary.len() * 3 < json.len(),
        "{} vs {}",
        binary.len(),
        json.len()
    );
    let from_json = records_and_clients(&json, 1 << 20).unwrap();
    let from_binary = records_and_clients(&binary, 1 << 20).unwrap();
    assert_eq!(from_binary.len(), 2 + sample().files.len() + 2000 - 1);
    assert_eq!(from_binary, from_json);
    // Written again as JSON Lines, the binary records give the very same bytes.
    let mut again = naslab_trace::TraceWriter::new("again".into(), Vec::new());
    for (_, rec, client) in &from_binary {
        match (rec, client) {
            (Record::Header(h), _) => again.header(h).unwrap(),
            (Record::File(f), _) => again.file(f).unwrap(),
            (Record::Op(op, Some(m)), Some(c)) => again.client_op(op, m, *c).unwrap(),
            (Record::Op(op, m), _) => again.op(op, m.as_ref()).unwrap(),
        }
    }
    assert_eq!(again.finish().unwrap(), json);
    // However the input buffer cuts the records.
    for capacity in [1, 7, 64, 100, 333] {
        assert_eq!(
            records_and_clients(&binary, capacity).unwrap(),
            from_binary,
            "buffer of {capacity} bytes"
        );
    }
}

#[test]
fn binary_files_are_chosen_by_name_and_read_plain_or_compressed() {
    let t = sample();
    let dir = tempfile::tempdir().unwrap();
    let expected: Vec<Record> = t.records().collect::<Result<_, _>>().unwrap();
    for name in ["t.nbt", "t.ops.nbt.zst"] {
        let path = dir.path().join(name);
        assert!(naslab_trace::is_binary_name(&path));
        let mut w = create_trace(&path).unwrap();
        t.write_to(&mut w).unwrap();
        w.close().unwrap();
        let raw = std::fs::read(&path).unwrap();
        let plain = if name.ends_with(".zst") {
            zstd::decode_all(&raw[..]).unwrap()
        } else {
            raw
        };
        assert!(plain.starts_with(naslab_trace::BINARY_MAGIC), "{name}");
        let back: Vec<Record> = open_trace(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, expected, "{name}");
    }
    for name in ["t.jsonl", "t.jsonl.zst", "nbt", "t.nbt.json"] {
        assert!(!naslab_trace::is_binary_name(Path::new(name)), "{name}");
    }
}

#[test]
fn a_binary_trace_cut_short_or_extended_is_an_error_naming_the_record() {
    let binary = binary_bytes();
    let whole = records_and_clients(&binary, 1 << 20).unwrap();
    for cut in BINARY_CUTS.map(|c| c.min(binary.len() - 1)) {
        let e = records_and_clients(&binary[..cut], 1 << 20).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("truncated") || cut < 30, "cut at {cut}: {msg}");
        if cut >= 30 {
            // The record named is the one the cut falls in, or the one after the last whole one.
            let line = e.line().unwrap();
            assert!(line >= 1 && line <= whole.len() as u64 + 1, "{line}: {msg}");
        }
    }
    // Every cut, byte by byte, over the first records, and none panics or passes.
    for cut in 1..300.min(binary.len()) {
        assert!(
            records_and_clients(&binary[..cut], 64).is_err(),
            "cut at {cut}"
        );
    }
    // Once ended, a binary trace stays ended.
    let mut r = TraceReader::new("t.nbt".into(), Cursor::new(binary.clone()));
    while r.next_record().unwrap().is_some() {}
    assert!(r.next_record().unwrap().is_none());
    let mut longer = binary.clone();
    longer.push(b'O');
    let e = records_and_clients(&longer, 1 << 20).unwrap_err();
    assert!(
        e.to_string().contains("follow the binary trace's end mark"),
        "{e}"
    );
    assert_eq!(e.line(), Some(whole.last().unwrap().0 + 1));
}

const BINARY_CUTS: [usize; 6] = [1, 23, 40, 1000, 5000, 20_000];

#[test]
fn damaged_binary_records_are_refused_without_panic() {
    let binary = binary_bytes();
    // An unknown tag, op code and flag bits are named.
    let header_end = binary.windows(2).position(|w| w == [b'}', b'J']).unwrap() + 1;
    let mut bad_tag = binary.clone();
    bad_tag[header_end] = b'X';
    let e = records_and_clients(&bad_tag, 1 << 20).unwrap_err();
    assert!(e.to_string().contains("unknown record tag 0x58"), "{e}");
    assert_eq!(e.line(), Some(2));
    let t = sample();
    let mut w = naslab_trace::TraceWriter::new_binary("h".into(), Vec::new());
    w.header(&t.header).unwrap();
    for f in &t.files {
        w.file(f).unwrap();
    }
    // Less the end mark.
    let first_op = w.finish().unwrap().len() - 1;
    assert_eq!(binary[first_op], b'O');
    let mut bad_kind = binary.clone();
    bad_kind[first_op + 1] = OpKind::ALL.len() as u8;
    let e = records_and_clients(&bad_kind, 1 << 20).unwrap_err();
    let want = format!("unknown op code {}", OpKind::ALL.len());
    assert!(e.to_string().contains(&want), "{e}");
    // Not the magic: refused as not a binary trace.
    let mut bad_magic = binary.clone();
    bad_magic[3] ^= 0x20;
    let e = records_and_clients(&bad_magic, 1 << 20).unwrap_err();
    assert!(e.to_string().contains("not a naslab binary trace"), "{e}");
    // Any one byte changed: an error or other records, never a panic.
    for i in (0..400).chain((400..binary.len()).step_by(97)) {
        let mut b = binary.clone();
        b[i] = b[i].wrapping_add(0x41);
        let _ = records_and_clients(&b, 100);
    }
}
