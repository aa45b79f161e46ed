//! One line of `strace -f -ttt -T -yy` output, split into its parts; calls that strace
//! printed in two pieces (`<unfinished ...>` then `<... NAME resumed>`) are put back
//! together first.

use std::collections::HashMap;

/// A finished system call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The thread that made it (0 when the log has no pid column).
    pub tid: u32,
    /// When it began, µs since the epoch (strace's `-ttt` column).
    pub t_us: u64,
    pub name: String,
    /// The arguments as strace printed them, split at top-level commas.
    pub args: Vec<String>,
    pub ret: Ret,
}

/// What a call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ret {
    /// A value, with the path strace decoded for a returned descriptor (`= 3</a/b>`).
    Value(i64, Option<String>),
    /// A failure: the errno's name (`ENOENT`).
    Error(String),
    /// No value (`= ?`, a call cut short by the process's end).
    Unknown,
}

impl Ret {
    /// The value when the call succeeded.
    pub fn ok(&self) -> Option<i64> {
        match self {
            Ret::Value(v, _) => Some(*v),
            _ => None,
        }
    }
}

/// What one log line amounted to.
#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    Call(Call),
    /// The first half of a call; the rest comes on a later line.
    Pending,
    /// A thread that exited or was killed: its descriptors close if no thread left
    /// shares them.
    Exit {
        tid: u32,
        t_us: u64,
    },
    /// A signal or another line that is no call.
    Other,
}

/// Joins split calls; one per log.
#[derive(Default)]
pub struct Joiner {
    pending: HashMap<u32, (u64, String)>,
}

impl Joiner {
    /// Parses one line. An error says what is wrong with it.
    pub fn line(&mut self, line: &str) -> Result<Parsed, String> {
        let line = line.trim_end();
        if line.is_empty() {
            return Ok(Parsed::Other);
        }
        let (first, rest) = split_word(line);
        let (tid, ts, rest) = if first.contains('.') {
            (0, first, rest)
        } else {
            let tid: u32 = first.parse().map_err(|_| {
                format!("'{first}' is not a thread id; make the log with strace -f -ttt -T -yy")
            })?;
            let (ts, rest) = split_word(rest);
            (tid, ts, rest)
        };
        let t_us = parse_time(ts).ok_or_else(|| {
            format!("'{ts}' is not a -ttt time stamp (seconds.micros); make the log with strace -f -ttt -T -yy")
        })?;
        if rest.starts_with("+++ exited") || rest.starts_with("+++ killed") {
            return Ok(Parsed::Exit { tid, t_us });
        }
        if rest.starts_with("+++") || rest.starts_with("---") || rest.starts_with("???") {
            return Ok(Parsed::Other);
        }
        if let Some(body) = rest.strip_suffix("<unfinished ...>") {
            self.pending
                .insert(tid, (t_us, body.trim_end().to_string()));
            return Ok(Parsed::Pending);
        }
        if let Some(after) = rest.strip_prefix("<... ") {
            let Some((name, tail)) = after.split_once(" resumed>") else {
                return Err("a resumed call without 'resumed>'".into());
            };
            let Some((t0, head)) = self.pending.remove(&tid) else {
                // Its first half came before the log started (or was lost): skip it.
                return Ok(Parsed::Other);
            };
            if !head.starts_with(name) {
                return Ok(Parsed::Other);
            }
            let mut whole = head;
            whole.push_str(tail.trim_start());
            return parse_call(tid, t0, &whole).map(Parsed::Call);
        }
        if rest.contains("resuming interrupted") || !rest.contains('(') {
            return Ok(Parsed::Other);
        }
        parse_call(tid, t_us, rest).map(Parsed::Call)
    }
}

fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(' ') {
        Some(i) => (&s[..i], s[i + 1..].trim_start()),
        None => (s, ""),
    }
}

/// `1795377037.565058` → µs.
pub fn parse_time(ts: &str) -> Option<u64> {
    let (secs, frac) = ts.split_once('.')?;
    let secs: u64 = secs.parse().ok()?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut micros: u64 = frac[..frac.len().min(6)].parse().ok()?;
    for _ in frac.len()..6 {
        micros *= 10;
    }
    secs.checked_mul(1_000_000)?.checked_add(micros)
}

fn parse_call(tid: u32, t_us: u64, text: &str) -> Result<Call, String> {
    let open = text
        .find('(')
        .ok_or_else(|| "no '(' after the call's name".to_string())?;
    let name = text[..open].trim().to_string();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!("'{}' is not a system call's name", &text[..open]));
    }
    let (args, after) = split_args(&text[open + 1..])?;
    let after = after.trim_start();
    let Some(ret_text) = after.strip_prefix('=') else {
        return Err(format!("no ' = ' result after {name}(...)"));
    };
    Ok(Call {
        tid,
        t_us,
        name,
        args,
        ret: parse_ret(ret_text.trim())?,
    })
}

/// Splits the text after `(` into top-level arguments, up to the matching `)`;
/// returns them and what follows the `)`.
fn split_args(text: &str) -> Result<(Vec<String>, &str), String> {
    let bytes = text.as_bytes();
    let mut args = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    if bytes[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'<' if i > 0 && (bytes[i - 1].is_ascii_digit() || bytes[i - 1] == b'D') => {
                i = skip_annotation(bytes, i);
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b']' | b'}' => depth -= 1,
            b')' if depth == 0 => {
                let last = text[start..i].trim();
                if !last.is_empty() || !args.is_empty() {
                    args.push(last.to_string());
                }
                return Ok((args, &text[i + 1..]));
            }
            b')' => depth -= 1,
            b',' if depth == 0 => {
                args.push(text[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    Err("the call's arguments never close with ')'".into())
}

/// From a `<` opening a descriptor's decoded path, the index just past its `>`
/// (decoded paths of devices nest: `</dev/null<char 1:3>>`).
fn skip_annotation(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

fn parse_ret(text: &str) -> Result<Ret, String> {
    // Drop the -T duration at the end.
    let text = match text.rfind(" <") {
        Some(i) if text.ends_with('>') && text[i + 2..text.len() - 1].contains('.') => {
            text[..i].trim_end()
        }
        _ => text,
    };
    if text.starts_with('?') {
        return Ok(Ret::Unknown);
    }
    let (value, rest) = split_word(text);
    let (num, annotation) = match value.find('<') {
        Some(i) => (&value[..i], Some(&value[i..])),
        None => (value, None),
    };
    let v = parse_int(num).ok_or_else(|| format!("'{value}' is not a result"))?;
    if v < 0 {
        let (errno, _) = split_word(rest);
        return Ok(Ret::Error(errno.to_string()));
    }
    let path = annotation.map(|_| {
        // The annotation may hold spaces, so take it from the whole text.
        let start = text.find('<').unwrap_or(0);
        let bytes = text.as_bytes();
        let end = skip_annotation(bytes, start);
        decoded_path(&text[start..end])
    });
    Ok(Ret::Value(v, path.flatten()))
}

/// A number as strace prints it: decimal, `0x` hex or `0` octal.
pub fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    if let Some(h) = t.strip_prefix("0x") {
        return u64::from_str_radix(h, 16).ok().map(|v| v as i64);
    }
    if let Some(neg) = t.strip_prefix('-') {
        return neg.parse::<i64>().ok().map(|v| -v);
    }
    if t.len() > 1 && t.starts_with('0') && t.bytes().all(|b| b.is_ascii_digit()) {
        return i64::from_str_radix(&t[1..], 8).ok();
    }
    t.parse::<u64>().ok().map(|v| v as i64)
}

/// `<path>` (as strace -yy decodes a descriptor) → the path; `None` for what is no
/// path (a socket, a pipe, an anonymous inode).
pub fn decoded_path(annotation: &str) -> Option<String> {
    let inner = annotation.strip_prefix('<')?.strip_suffix('>')?;
    // A device carries its numbers: </dev/null<char 1:3>>.
    let inner = match inner.find('<') {
        Some(i) => &inner[..i],
        None => inner,
    };
    if !inner.starts_with('/') {
        return None;
    }
    let inner = inner.strip_suffix(" (deleted)").unwrap_or(inner);
    Some(unescape(inner))
}

/// A descriptor argument: its number and the path strace decoded for it.
pub fn fd_arg(arg: &str) -> Option<(i64, Option<String>)> {
    let (num, ann) = match arg.find('<') {
        Some(i) => (&arg[..i], Some(&arg[i..])),
        None => (arg, None),
    };
    let fd = if num == "AT_FDCWD" {
        -100
    } else {
        parse_int(num)?
    };
    Some((fd, ann.and_then(decoded_path)))
}

/// A quoted string argument, unescaped; `None` when it is not a string or strace cut
/// it short (`"abc"...`).
pub fn string_arg(arg: &str) -> Option<String> {
    let inner = arg.strip_prefix('"')?.strip_suffix('"')?;
    Some(unescape(inner))
}

/// Undoes strace's C-style escapes (`\"`, `\\`, `\n`, `\x41`, octal).
pub fn unescape(s: &str) -> String {
    if !s.contains('\\') {
        return s.to_string();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        match b[i] {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let hex = s.get(i + 1..i + 3).unwrap_or("");
                if let Ok(v) = u8::from_str_radix(hex, 16) {
                    out.push(v);
                    i += 2;
                } else {
                    out.push(b'x');
                }
            }
            b'0'..=b'7' => {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 3 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    n += 1;
                }
                out.push(v as u8);
                continue;
            }
            other => out.push(other),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The first integer in an argument like `[4096]` or `[0 => 6]`; `None` for `NULL`.
pub fn bracketed_int(arg: &str) -> Option<i64> {
    let inner = arg.strip_prefix('[')?;
    let end = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .unwrap_or(inner.len());
    parse_int(&inner[..end])
}

/// The value of `key=` in a struct argument (`st_size=6`), as text.
pub fn field<'a>(arg: &'a str, key: &str) -> Option<&'a str> {
    let mut from = 0;
    while let Some(i) = arg[from..].find(key) {
        let at = from + i;
        let before_ok = at == 0 || !arg.as_bytes()[at - 1].is_ascii_alphanumeric();
        let after = &arg[at + key.len()..];
        if before_ok && let Some(v) = after.strip_prefix('=') {
            let end = v.find([',', '}', ' ']).unwrap_or(v.len());
            return Some(&v[..end]);
        }
        from = at + key.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(line: &str) -> Call {
        match Joiner::default().line(line).unwrap() {
            Parsed::Call(c) => c,
            other => panic!("not a call: {other:?}"),
        }
    }

    #[test]
    fn splits_a_call_with_decoded_descriptors() {
        let c = call(
            r#"21441 1795377037.567241 openat(AT_FDCWD</tmp/x>, "b, (c).txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</tmp/x/b, (c).txt> <0.000133>"#,
        );
        assert_eq!(c.tid, 21441);
        assert_eq!(c.t_us, 1795377037567241);
        assert_eq!(c.name, "openat");
        assert_eq!(c.args.len(), 4);
        assert_eq!(string_arg(&c.args[1]).as_deref(), Some("b, (c).txt"));
        assert_eq!(fd_arg(&c.args[0]), Some((-100, Some("/tmp/x".into()))));
        assert_eq!(c.ret, Ret::Value(3, Some("/tmp/x/b, (c).txt".into())));
    }

    #[test]
    fn joins_unfinished_and_resumed_halves() {
        let mut j = Joiner::default();
        assert_eq!(
            j.line("7 10.000001 read(3</d/f>,  <unfinished ...>")
                .unwrap(),
            Parsed::Pending
        );
        assert_eq!(
            j.line("8 10.000002 close(4</d/g>) = 0 <0.000001>")
                .map(|p| matches!(p, Parsed::Call(_))),
            Ok(true)
        );
        let Parsed::Call(c) = j
            .line("7 10.000050 <... read resumed>\"ab\"..., 4096) = 2 <0.000049>")
            .unwrap()
        else {
            panic!("the resumed half completes the call")
        };
        assert_eq!(c.t_us, 10_000_001);
        assert_eq!(c.args.len(), 3);
        assert_eq!(c.ret.ok(), Some(2));
    }

    #[test]
    fn reads_failures_devices_and_struct_fields() {
        let c = call(
            r#"5 1.5 newfstatat(AT_FDCWD</r>, "x", 0x7ffe, 0) = -1 ENOENT (No such file or directory) <0.000011>"#,
        );
        assert_eq!(c.ret, Ret::Error("ENOENT".into()));
        let c = call("5 1.5 dup2(3</dev/null<char 1:3>>, 1) = 1</dev/null<char 1:3>> <0.000009>");
        assert_eq!(c.ret, Ret::Value(1, Some("/dev/null".into())));
        let c =
            call(r#"5 1.5 fstat(3</r/a>, {st_mode=S_IFREG|0644, st_size=6, ...}) = 0 <0.000010>"#);
        assert_eq!(field(&c.args[1], "st_size"), Some("6"));
        assert_eq!(field(&c.args[1], "st_mode"), Some("S_IFREG|0644"));
        assert_eq!(bracketed_int("[0 => 6]"), Some(0));
        assert_eq!(bracketed_int("NULL"), None);
        assert_eq!(unescape(r"a\x41\\\042"), "aA\\\"");
    }

    #[test]
    fn rejects_lines_that_are_not_strace_output() {
        assert!(Joiner::default().line("hello world").is_err());
        assert!(Joiner::default().line("12 1.0 read(3, \"x\", 1").is_err());
    }
}
