//! A fast path for the commonest trace line: a flat op object of integers and plain
//! strings, as naslab itself writes them. It accepts only what the general JSON path
//! would read the same way, and gives up (returning `None`) on anything else: escapes,
//! floats, nulls, unknown or repeated keys, out-of-range numbers. The caller then
//! parses the line with serde_json, which also words any error.

use crate::model::{Expected, OpFlags, OpKind};

/// The fields an op line may carry (the measured ones included).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpFields {
    pub op: Option<OpKind>,
    pub stream: Option<u32>,
    pub t_us: Option<u64>,
    pub file: Option<u32>,
    pub offset: Option<u64>,
    pub len: Option<u64>,
    pub flags: Option<OpFlags>,
    pub to: Option<u32>,
    pub warmup: Option<bool>,
    pub expect: Option<Expected>,
    pub sched_ns: Option<u64>,
    pub issued_ns: Option<u64>,
    pub done_ns: Option<u64>,
    pub result: Option<i64>,
    pub client: Option<u32>,
}

const ONES: u64 = u64::from_le_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);

/// The bytes of `x` under `limit` (at most 0x80), each marked by its high bit. A byte
/// above the first marked one may be marked wrongly (a borrow carries into it); the first
/// marked byte is always right.
#[inline]
fn bytes_under(x: u64, limit: u8) -> u64 {
    x.wrapping_sub(ONES * limit as u64) & !x & HIGHS
}

/// Eight bytes of a string, little-endian: its quotes, backslashes and control
/// characters, marked as [`bytes_under`] marks; the first marked byte is the first of
/// them.
#[inline]
fn special_bytes(x: u64) -> u64 {
    bytes_under(x ^ (ONES * b'"' as u64), 1)
        | bytes_under(x ^ (ONES * b'\\' as u64), 1)
        | bytes_under(x, 0x20)
}

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    #[inline]
    fn ws(&mut self) {
        while let Some(c) = self.b.get(self.i) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.i += 1;
        }
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            return Some(());
        }
        self.ws();
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    /// `text` next, exactly (no whitespace before it): stepped over if so.
    #[inline]
    fn lit<const N: usize>(&mut self, text: &[u8; N]) -> bool {
        let here = self.b.get(self.i..self.i + N) == Some(&text[..]);
        if here {
            self.i += N;
        }
        here
    }

    /// A string without escapes, as its bytes (which the caller matches against ASCII
    /// names, or checks as UTF-8).
    #[inline]
    fn bytes(&mut self) -> Option<&'a [u8]> {
        self.eat(b'"')?;
        let start = self.i;
        let rest = &self.b[start..];
        let mut len = 0;
        // Eight bytes at a time while there are eight: the first that ends the string or
        // is left to the general path.
        while let Some(chunk) = rest.get(len..len + 8) {
            let special = special_bytes(u64::from_le_bytes(chunk.try_into().ok()?));
            if special != 0 {
                let at = len + (special.trailing_zeros() / 8) as usize;
                if rest[at] != b'"' {
                    return None;
                }
                self.i = start + at + 1;
                return Some(&rest[..at]);
            }
            len += 8;
        }
        loop {
            match *rest.get(len)? {
                b'"' => break,
                // Escapes and control characters are left to the general path.
                c if c == b'\\' || c < 0x20 => return None,
                _ => len += 1,
            }
        }
        self.i = start + len + 1;
        Some(&rest[..len])
    }

    /// A string without escapes.
    #[inline]
    fn string(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }

    /// A JSON integer that fits in u64 (no sign, no leading zero, no fraction).
    #[inline]
    fn unsigned(&mut self) -> Option<u64> {
        self.ws();
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(&c) = self.b.get(self.i) {
            if !c.is_ascii_digit() {
                break;
            }
            v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
            self.i += 1;
        }
        let n = self.i - start;
        if n == 0 || (n > 1 && self.b[start] == b'0') {
            return None;
        }
        // A fraction or exponent makes it a float: not for us.
        if matches!(self.b.get(self.i), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(v)
    }

    #[inline]
    fn signed(&mut self) -> Option<i64> {
        self.ws();
        if self.b.get(self.i) == Some(&b'-') {
            self.i += 1;
            // JSON puts nothing between the sign and the digits.
            if !self.b.get(self.i).is_some_and(u8::is_ascii_digit) {
                return None;
            }
            let v = self.unsigned()?;
            if v == 0 {
                // "-0" reads as 0 either way, but leave the oddity to the general path.
                return None;
            }
            0i64.checked_sub_unsigned(v)
        } else {
            i64::try_from(self.unsigned()?).ok()
        }
    }

    fn boolean(&mut self) -> Option<bool> {
        self.ws();
        let rest = &self.b[self.i..];
        if rest.starts_with(b"true") {
            self.i += 4;
            Some(true)
        } else if rest.starts_with(b"false") {
            self.i += 5;
            Some(false)
        } else {
            None
        }
    }
}

fn kind_named(name: &[u8]) -> Option<OpKind> {
    OpKind::ALL
        .into_iter()
        .find(|k| k.name().as_bytes() == name)
}

/// Sets `slot` once: a repeated key is for the general path to refuse.
#[inline]
fn once<T>(slot: &mut Option<T>, v: T) -> Option<()> {
    if slot.is_some() {
        return None;
    }
    *slot = Some(v);
    Some(())
}

/// Reads `line` (its bytes, with or without the newline) when it is a plain op line;
/// `None` when the general path must decide. A line read here is valid UTF-8: every
/// byte of it is JSON punctuation, whitespace, a digit, a known ASCII name, or a flags
/// string checked as UTF-8.
pub(crate) fn parse_op_line(line: &[u8]) -> Option<OpFields> {
    let mut s = Scan { b: line, i: 0 };
    let mut f = OpFields::default();
    // The line as naslab writes it goes first: its leading keys in their order, each
    // found with one comparison. What follows them, or any other line, goes through the
    // general loop below, key by key.
    let mut typed = s.lit(b"{\"type\":\"op\",\"op\":");
    let mut first = !typed;
    if typed {
        f.op = Some(kind_named(s.bytes()?)?);
        s.written_order(&mut f)?;
    } else {
        s.eat(b'{')?;
    }
    loop {
        if !first && s.eat(b',').is_none() {
            s.eat(b'}')?;
            s.ws();
            return (typed && s.i == s.b.len()).then_some(f);
        }
        first = false;
        let key = s.bytes()?;
        s.eat(b':')?;
        match key {
            b"type" => {
                if typed || s.bytes()? != b"op" {
                    return None;
                }
                typed = true;
            }
            b"op" => once(&mut f.op, kind_named(s.bytes()?)?)?,
            b"stream" => once(&mut f.stream, u32::try_from(s.unsigned()?).ok()?)?,
            b"t_us" => once(&mut f.t_us, s.unsigned()?)?,
            b"file" => once(&mut f.file, u32::try_from(s.unsigned()?).ok()?)?,
            b"offset" => once(&mut f.offset, s.unsigned()?)?,
            b"len" => once(&mut f.len, s.unsigned()?)?,
            b"flags" => once(&mut f.flags, OpFlags::parse(s.string()?).ok()?)?,
            b"to" => once(&mut f.to, u32::try_from(s.unsigned()?).ok()?)?,
            b"warmup" => once(&mut f.warmup, s.boolean()?)?,
            b"expect" => once(&mut f.expect, Expected::named(s.bytes()?)?)?,
            b"sched_ns" => once(&mut f.sched_ns, s.unsigned()?)?,
            b"issued_ns" => once(&mut f.issued_ns, s.unsigned()?)?,
            b"done_ns" => once(&mut f.done_ns, s.unsigned()?)?,
            b"result" => once(&mut f.result, s.signed()?)?,
            b"client" => once(&mut f.client, u32::try_from(s.unsigned()?).ok()?)?,
            _ => return None,
        }
    }
}

impl Scan<'_> {
    /// The keys naslab writes after `op`, in its order (`TraceWriter::op_line`), each
    /// there or not; a key out of this order is left to the general loop.
    #[inline]
    fn written_order(&mut self, f: &mut OpFields) -> Option<()> {
        if self.lit(b",\"stream\":") {
            f.stream = Some(u32::try_from(self.unsigned()?).ok()?);
        }
        if self.lit(b",\"t_us\":") {
            f.t_us = Some(self.unsigned()?);
        }
        if self.lit(b",\"file\":") {
            f.file = Some(u32::try_from(self.unsigned()?).ok()?);
        }
        if self.lit(b",\"offset\":") {
            f.offset = Some(self.unsigned()?);
        }
        if self.lit(b",\"len\":") {
            f.len = Some(self.unsigned()?);
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Option<OpFields> {
        parse_op_line(line.as_bytes())
    }

    #[test]
    fn plain_op_lines_are_read() {
        let f = parse(
            r#"{"type":"op","op":"read","stream":2,"t_us":15,"file":7,"offset":4096,"len":512,"flags":"read|write","sched_ns":1,"issued_ns":2,"done_ns":3,"result":-5}"#,
        )
        .unwrap();
        assert_eq!(f.op, Some(OpKind::Read));
        assert_eq!((f.stream, f.t_us, f.file), (Some(2), Some(15), Some(7)));
        assert_eq!((f.offset, f.len), (Some(4096), Some(512)));
        assert_eq!(f.flags, Some(OpFlags::READ | OpFlags::WRITE));
        assert_eq!(
            (f.sched_ns, f.issued_ns, f.done_ns),
            (Some(1), Some(2), Some(3))
        );
        assert_eq!(f.result, Some(-5));
        let f = parse(
            " { \"op\" : \"rename\" , \"type\":\"op\", \"file\":1, \"to\":2, \"warmup\":true } ",
        )
        .unwrap();
        assert_eq!(
            (f.op, f.to, f.warmup),
            (Some(OpKind::Rename), Some(2), Some(true))
        );
        assert_eq!(f.stream, None);
    }

    #[test]
    fn a_string_ends_at_its_first_quote_and_gives_up_at_an_escape_or_control_byte() {
        // Every length up to past two words, with each kind of byte at each place.
        for len in 0..20 {
            for at in 0..=len {
                for (c, ends) in [(b'"', true), (b'\\', false), (0x1f, false), (0, false)] {
                    let mut text = vec![b'"'];
                    text.extend((0..len).map(|i| b'a' + (i % 26) as u8));
                    text.extend([b'\xe9', 0x7f, 0x20]);
                    if at < len {
                        text[1 + at] = c;
                    }
                    text.push(b'"');
                    let mut s = Scan { b: &text, i: 0 };
                    let got = s.bytes();
                    // the reference: byte by byte
                    let body = &text[1..];
                    let first = body
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                        .unwrap();
                    if body[first] == b'"' {
                        assert_eq!(got, Some(&body[..first]), "len {len} at {at} {c:#x}");
                        assert_eq!(s.i, first + 2);
                    } else {
                        assert!(!ends);
                        assert_eq!(got, None, "len {len} at {at} {c:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn anything_unusual_is_left_to_the_general_path() {
        for line in [
            r#"{"type":"file","id":1}"#,
            r#"{"op":"read","file":1}"#,
            r#"{"type":"op","op":"read","file":1,"file":2}"#,
            r#"{"type":"op","op":"reed","file":1}"#,
            r#"{"type":"op","op":"read","file":1,"extra":1}"#,
            r#"{"type":"op","op":"read","file":4294967296}"#,
            r#"{"type":"op","op":"read","file":1,"offset":18446744073709551616}"#,
            r#"{"type":"op","op":"read","file":01}"#,
            r#"{"type":"op","op":"read","file":1.0}"#,
            r#"{"type":"op","op":"read","file":1e2}"#,
            r#"{"type":"op","op":"read","file":-1}"#,
            r#"{"type":"op","op":"read","file":null}"#,
            r#"{"type":"op","op":"re\u0061d","file":1}"#,
            r#"{"type":"op","op":"read","file":1,"flags":"bogus"}"#,
            r#"{"type":"op","op":"read","file":1,"result":-0}"#,
            r#"{"type":"op","op":"read","file":1,"result":- 5}"#,
            "{\"type\":\"op\",\"op\":\"read\",\"file\":1,\"result\":-\t5}",
            r#"{"type":"op","op":"read","file":1,"result":-}"#,
            r#"{"type":"op","op":"read","file":1,"result":-9223372036854775809}"#,
            r#"{"type":"op","op":"read","file":1,}"#,
            r#"{"type":"op","op":"read","file":1} x"#,
            r#"{"type":"op","op":"read","file":1"#,
            r#"{"type":"op","op":"read","file":1,"warmup":1}"#,
        ] {
            assert_eq!(parse(line), None, "{line}");
        }
        // Bytes that are not UTF-8 never pass: in a key, a name or the flags.
        for line in [
            &b"{\"type\":\"op\",\"op\":\"read\",\"file\":1,\"fl\xffags\":\"read\"}"[..],
            &b"{\"type\":\"op\",\"op\":\"re\xffad\",\"file\":1}"[..],
            &b"{\"type\":\"op\",\"op\":\"read\",\"file\":1,\"flags\":\"read|\xff\"}"[..],
        ] {
            assert_eq!(parse_op_line(line), None);
        }
        // The newline ending a line is whitespace.
        assert!(parse_op_line(b"{\"type\":\"op\",\"op\":\"read\",\"file\":1}\r\n").is_some());
        let f = parse(r#"{"type":"op","op":"read","file":0,"result":-9223372036854775808}"#);
        assert_eq!(f.unwrap().result, Some(i64::MIN));
    }

    /// A xorshift64 sequence from `seed`: the tests' random numbers, the same every run.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Random op lines: the keys naslab writes, in its order or shuffled, some left out
    /// or repeated, numbers of every length up to past u64's, with and without spaces.
    fn random_line(next: &mut impl FnMut() -> u64) -> String {
        let number = |next: &mut dyn FnMut() -> u64| -> String {
            let digits = 1 + next() % 22;
            let mut n: String = (0..digits)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            match next() % 8 {
                0 => n = format!("-{n}"),
                1 => n.push_str(".5"),
                3 => n = format!("- {n}"),
                2 if digits < 21 => n = n.trim_start_matches('0').to_string() + "7",
                _ => {}
            }
            n
        };
        let mut fields: Vec<(String, String)> = vec![
            ("type".into(), "\"op\"".into()),
            (
                "op".into(),
                format!(
                    "\"{}\"",
                    OpKind::ALL[next() as usize % OpKind::ALL.len()].name()
                ),
            ),
        ];
        for key in [
            "stream",
            "t_us",
            "file",
            "offset",
            "len",
            "flags",
            "to",
            "warmup",
            "sched_ns",
            "issued_ns",
            "done_ns",
            "result",
            "client",
        ] {
            if next().is_multiple_of(3) {
                continue;
            }
            let value = match key {
                "flags" => "\"read|write\"".to_string(),
                "warmup" => ["true", "false", "1"][next() as usize % 3].to_string(),
                _ if next().is_multiple_of(2) => (next() % 5000).to_string(),
                _ => number(next),
            };
            fields.push((key.to_string(), value));
        }
        if next().is_multiple_of(4) {
            let i = next() as usize % fields.len();
            fields.push(fields[i].clone());
        }
        if next().is_multiple_of(2) {
            for i in (1..fields.len()).rev() {
                fields.swap(i, next() as usize % (i + 1));
            }
        }
        let spaced = next().is_multiple_of(4);
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| {
                if spaced {
                    format!(" \"{k}\" : {v} ")
                } else {
                    format!("\"{k}\":{v}")
                }
            })
            .collect();
        format!("{{{}}}", body.join(","))
    }

    #[test]
    fn every_line_read_here_reads_the_same_through_the_general_path() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let (mut fast, mut general) = (0, 0);
        for _ in 0..200_000 {
            let line = random_line(&mut next);
            let reference = crate::reader::general_op_fields(&line);
            match parse_op_line(line.as_bytes()) {
                Some(f) => {
                    assert_eq!(Some(f), reference, "{line}");
                    fast += 1;
                }
                None => general += 1,
            }
        }
        // Both paths were taken often enough for the comparison to mean something.
        assert!(
            fast > 10_000 && general > 10_000,
            "{fast} read here, {general} left"
        );
    }

    #[test]
    fn lines_as_naslab_writes_them_are_read_here() {
        use crate::{Measured, Op};
        let mut w = crate::TraceWriter::new("t.jsonl".into(), Vec::new());
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let big = |n: u64, bits: u64| n >> (n % bits);
        for i in 0..20_000u64 {
            let kind = OpKind::ALL[i as usize % OpKind::ALL.len()];
            let mut op = Op::new(next() as u32, big(next(), 64), kind, next() as u32);
            op.offset = big(next(), 64) * (next() % 2);
            op.len = big(next(), 64) * (next() % 2);
            op.flags = OpFlags(next() as u8 & 127);
            op.to = kind.needs_to().then(|| next() as u32);
            op.warmup = next().is_multiple_of(5);
            let measured = Measured {
                sched_ns: big(next(), 64),
                issued_ns: big(next(), 64),
                done_ns: big(next(), 64),
                result: next() as i64 >> (next() % 64),
            };
            match next() % 3 {
                0 => w.op(&op, None).unwrap(),
                1 => w.op(&op, Some(&measured)).unwrap(),
                _ => w.client_op(&op, &measured, next() as u32).unwrap(),
            }
        }
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        for line in text.lines() {
            let f = parse_op_line(line.as_bytes());
            assert!(f.is_some(), "{line}");
            assert_eq!(f, crate::reader::general_op_fields(line), "{line}");
        }
        assert_eq!(text.lines().count(), 20_000);
    }
}
