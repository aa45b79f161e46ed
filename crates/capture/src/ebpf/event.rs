//! One record of the kernel side's ring buffer (`struct event` in capture.bpf.c).

/// What a record stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A call that returned.
    Call,
    /// A call that began (sent only for calls whose strings must be read then: execve).
    Enter,
    /// A followed thread made a thread or process (`ret` is the child).
    Fork,
    /// A followed thread ended.
    Exit,
}

/// A decoded record.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    /// When the call began (for a call), or when the thread forked or ended: the
    /// kernel's monotonic clock, in ns.
    pub t_ns: u64,
    pub tid: u32,
    pub kind: Kind,
    /// The call's number (for a fork: the number of the call that forked, or -1).
    pub nr: i64,
    pub ret: i64,
    pub args: [u64; 6],
    /// The values read through the arguments the call's spec names, as it began.
    pub words: [u64; 2],
    /// The path strings read, without their NUL (`None` when not read).
    pub strings: [Option<&'a [u8]>; 2],
    /// The bytes copied through the spec's pointer argument.
    pub blob: &'a [u8],
}

const DATA_AT: usize = 112;

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(w)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_ne_bytes(w)
}

fn u16_at(b: &[u8], at: usize) -> usize {
    u16::from_ne_bytes([b[at], b[at + 1]]) as usize
}

impl<'a> Event<'a> {
    /// Decodes a record; `None` when it is too short for what it says it holds.
    pub fn parse(b: &'a [u8]) -> Option<Event<'a>> {
        if b.len() < DATA_AT {
            return None;
        }
        let kind = match u32_at(b, 16) {
            0 => Kind::Call,
            1 => Kind::Enter,
            2 => Kind::Fork,
            3 => Kind::Exit,
            _ => return None,
        };
        let mut args = [0u64; 6];
        for (i, a) in args.iter_mut().enumerate() {
            *a = u64_at(b, 40 + 8 * i);
        }
        let lens = [u16_at(b, 104), u16_at(b, 106), u16_at(b, 108)];
        let data = &b[DATA_AT..];
        if lens.iter().sum::<usize>() > data.len() {
            return None;
        }
        let mut at = 0;
        let mut strings = [None, None];
        for (i, s) in strings.iter_mut().enumerate() {
            if lens[i] > 0 {
                let raw = &data[at..at + lens[i]];
                *s = Some(raw.strip_suffix(&[0]).unwrap_or(raw));
                at += lens[i];
            }
        }
        Some(Event {
            t_ns: u64_at(b, 0),
            tid: u32_at(b, 8),
            kind,
            nr: u64_at(b, 24) as i64,
            ret: u64_at(b, 32) as i64,
            args,
            words: [u64_at(b, 88), u64_at(b, 96)],
            strings,
            blob: &data[at..at + lens[2]],
        })
    }
}
