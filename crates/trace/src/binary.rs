//! The compact binary encoding of a trace (`.nbt`, `.nbt.zst`): the same records as the
//! JSON Lines format, for files naslab writes in bulk (the op records of a run). The
//! header and file records are carried as their JSON text; an op is a few bytes of
//! LEB128 numbers, its times written as differences from the op before. See
//! `docs/trace-format.md`.

use crate::model::{Expected, Measured, Op, OpFlags, OpKind};
use crate::op_line::OpFields;

/// The first bytes of every binary trace. The leading NUL tells it from JSON text.
pub const BINARY_MAGIC: &[u8] = b"\0naslab-trace binary 1\n";
/// A header or file record: a length, then the record's JSON text.
pub(crate) const TAG_JSON: u8 = b'J';
/// An op record.
pub(crate) const TAG_OP: u8 = b'O';
/// The end mark, the last byte of a complete binary trace.
pub(crate) const TAG_END: u8 = b'E';
/// The most bytes an op record can take (tag, kind, presence bits, expected error,
/// 12 numbers).
pub(crate) const MAX_OP_BYTES: usize = 4 + 12 * 10;

const HAS_MEASURED: u8 = 1;
const HAS_TO: u8 = 2;
const WARMUP: u8 = 4;
const HAS_CLIENT: u8 = 8;
const HAS_FLAGS: u8 = 16;
const HAS_OFFSET: u8 = 32;
const HAS_LEN: u8 = 64;
const HAS_STREAM: u8 = 128;
/// Set in an op record's kind byte when an expected-error byte follows the presence bits
/// (the presence bits are all taken).
const KIND_EXPECTS: u8 = 128;

/// What op records are written relative to: the times of the op before.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Deltas {
    t_us: u64,
    issued_ns: u64,
}

#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[inline]
fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// What a read or write is expected to return, so that a full transfer costs one byte.
#[inline]
fn expected_result(kind: OpKind, len: u64) -> i64 {
    match kind {
        OpKind::Read | OpKind::Write => len as i64,
        _ => 0,
    }
}

/// Appends one op record to `out`.
#[inline]
pub(crate) fn encode_op(
    out: &mut Vec<u8>,
    d: &mut Deltas,
    op: &Op,
    measured: Option<&Measured>,
    client: Option<u32>,
) {
    let mut bits = 0u8;
    bits |= if measured.is_some() { HAS_MEASURED } else { 0 };
    bits |= if op.to.is_some() { HAS_TO } else { 0 };
    bits |= if op.warmup { WARMUP } else { 0 };
    bits |= if client.is_some() { HAS_CLIENT } else { 0 };
    bits |= if op.flags.is_empty() { 0 } else { HAS_FLAGS };
    bits |= if op.offset != 0 { HAS_OFFSET } else { 0 };
    bits |= if op.len != 0 { HAS_LEN } else { 0 };
    bits |= if op.stream != 0 { HAS_STREAM } else { 0 };
    match op.expect {
        Some(e) => {
            out.extend_from_slice(&[TAG_OP, op.kind.index() as u8 | KIND_EXPECTS, bits, e.code()])
        }
        None => out.extend_from_slice(&[TAG_OP, op.kind.index() as u8, bits]),
    }
    if op.stream != 0 {
        put_varint(out, op.stream as u64);
    }
    put_varint(out, zigzag(op.t_us.wrapping_sub(d.t_us) as i64));
    d.t_us = op.t_us;
    put_varint(out, op.file as u64);
    if op.offset != 0 {
        put_varint(out, op.offset);
    }
    if op.len != 0 {
        put_varint(out, op.len);
    }
    if !op.flags.is_empty() {
        out.push(op.flags.0);
    }
    if let Some(to) = op.to {
        put_varint(out, to as u64);
    }
    if let Some(c) = client {
        put_varint(out, c as u64);
    }
    if let Some(m) = measured {
        put_varint(out, zigzag(m.issued_ns.wrapping_sub(d.issued_ns) as i64));
        d.issued_ns = m.issued_ns;
        put_varint(out, zigzag(m.issued_ns.wrapping_sub(m.sched_ns) as i64));
        put_varint(out, zigzag(m.done_ns.wrapping_sub(m.issued_ns) as i64));
        let expected = expected_result(op.kind, op.len);
        put_varint(out, zigzag(m.result.wrapping_sub(expected)));
    }
}

/// Why a binary record could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Undecodable {
    /// The bytes end inside the record.
    Short,
    /// The bytes are not a record.
    Bad(String),
}

/// Reads numbers off the front of a byte slice.
pub(crate) struct Bytes<'a> {
    pub b: &'a [u8],
    pub i: usize,
}

impl Bytes<'_> {
    #[inline]
    pub(crate) fn byte(&mut self) -> Result<u8, Undecodable> {
        let v = *self.b.get(self.i).ok_or(Undecodable::Short)?;
        self.i += 1;
        Ok(v)
    }

    #[inline]
    pub(crate) fn varint(&mut self) -> Result<u64, Undecodable> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err(Undecodable::Bad("a number longer than 64 bits".into()));
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(v);
            }
        }
        Err(Undecodable::Bad("a number longer than 64 bits".into()))
    }

    #[inline]
    fn varint_u32(&mut self, what: &str) -> Result<u32, Undecodable> {
        let v = self.varint()?;
        u32::try_from(v).map_err(|_| Undecodable::Bad(format!("{what} {v} is out of range")))
    }
}

/// Decodes the op record whose tag `b` has already consumed.
#[inline]
pub(crate) fn decode_op(b: &mut Bytes<'_>, d: &mut Deltas) -> Result<OpFields, Undecodable> {
    let code = b.byte()?;
    let kind = *OpKind::ALL
        .get((code & !KIND_EXPECTS) as usize)
        .ok_or_else(|| Undecodable::Bad(format!("unknown op code {code}")))?;
    let bits = b.byte()?;
    let expect = if code & KIND_EXPECTS != 0 {
        let e = b.byte()?;
        Some(
            Expected::from_code(e)
                .ok_or_else(|| Undecodable::Bad(format!("unknown expected error code {e}")))?,
        )
    } else {
        None
    };
    let stream = if bits & HAS_STREAM != 0 {
        b.varint_u32("stream")?
    } else {
        0
    };
    let t_us = d.t_us.wrapping_add(unzigzag(b.varint()?) as u64);
    let file = b.varint_u32("file id")?;
    let offset = if bits & HAS_OFFSET != 0 {
        b.varint()?
    } else {
        0
    };
    let len = if bits & HAS_LEN != 0 { b.varint()? } else { 0 };
    // Every bit of the byte is a known flag (version 3 took the last one).
    let flags = if bits & HAS_FLAGS != 0 {
        Some(OpFlags(b.byte()?))
    } else {
        None
    };
    let to = if bits & HAS_TO != 0 {
        Some(b.varint_u32("rename target")?)
    } else {
        None
    };
    let client = if bits & HAS_CLIENT != 0 {
        Some(b.varint_u32("client")?)
    } else {
        None
    };
    let mut f = OpFields {
        op: Some(kind),
        stream: Some(stream),
        t_us: Some(t_us),
        file: Some(file),
        offset: Some(offset),
        len: Some(len),
        flags,
        to,
        warmup: (bits & WARMUP != 0).then_some(true),
        expect,
        client,
        ..OpFields::default()
    };
    if bits & HAS_MEASURED != 0 {
        let issued = d.issued_ns.wrapping_add(unzigzag(b.varint()?) as u64);
        let sched = issued.wrapping_sub(unzigzag(b.varint()?) as u64);
        let done = issued.wrapping_add(unzigzag(b.varint()?) as u64);
        let result = unzigzag(b.varint()?).wrapping_add(expected_result(kind, len));
        f.issued_ns = Some(issued);
        f.sched_ns = Some(sched);
        f.done_ns = Some(done);
        f.result = Some(result);
    }
    // Only a whole record moves the deltas on.
    d.t_us = t_us;
    if let Some(issued) = f.issued_ns {
        d.issued_ns = issued;
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_zigzag_round_trip_at_the_extremes() {
        for v in [0, 1, 127, 128, 300, u32::MAX as u64, u64::MAX - 1, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            let mut b = Bytes { b: &out, i: 0 };
            assert_eq!(b.varint(), Ok(v));
            assert_eq!(b.i, out.len());
        }
        for v in [0, -1, 1, i64::MIN, i64::MAX] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        // Eleven bytes, or a tenth byte over 1, do not fit in 64 bits.
        let mut b = Bytes {
            b: &[0xff; 11],
            i: 0,
        };
        assert!(matches!(b.varint(), Err(Undecodable::Bad(_))));
        let mut b = Bytes {
            b: &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
            i: 0,
        };
        assert!(matches!(b.varint(), Err(Undecodable::Bad(_))));
    }

    #[test]
    fn an_op_cut_anywhere_is_short_and_never_a_different_op() {
        let op = Op {
            stream: 3,
            t_us: 1_000_000,
            kind: OpKind::Write,
            file: 7,
            offset: 1 << 40,
            len: 65536,
            flags: OpFlags::default(),
            to: None,
            warmup: false,
            expect: None,
        };
        let m = Measured {
            sched_ns: 10,
            issued_ns: 5,
            done_ns: u64::MAX,
            result: -28,
        };
        let mut out = Vec::new();
        encode_op(&mut out, &mut Deltas::default(), &op, Some(&m), Some(2));
        assert!(out.len() <= MAX_OP_BYTES);
        for cut in 1..out.len() {
            let mut b = Bytes {
                b: &out[..cut],
                i: 1,
            };
            assert_eq!(
                decode_op(&mut b, &mut Deltas::default()).err(),
                Some(Undecodable::Short),
                "cut at {cut}"
            );
        }
        let mut b = Bytes { b: &out, i: 1 };
        let f = decode_op(&mut b, &mut Deltas::default()).unwrap();
        assert_eq!(b.i, out.len());
        assert_eq!(
            (f.sched_ns, f.issued_ns, f.done_ns, f.result, f.client),
            (Some(10), Some(5), Some(u64::MAX), Some(-28), Some(2))
        );
    }
}
