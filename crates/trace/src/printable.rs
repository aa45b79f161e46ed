//! Text from a trace (workload names, paths) as naslab shows it on a terminal: a
//! control character is shown as an escape, never sent, so a hostile trace cannot
//! retitle the window, clear the screen, move the cursor or fake a line of output.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character (C0, DEL and C1) shown as an escape: `\n`, `\r`,
/// `\t`, `\\` for a backslash already there, and `\x1b`, `\u{9b}` for the others.
/// Printable text comes back as it was.
pub fn printable(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// Like [`printable`], but keeps line breaks: for a message of several lines, such as
/// an error, where only the characters inside the lines are escaped.
pub fn printable_lines(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, keep_lines: bool) -> Cow<'_, str> {
    let needs = |c: char| c.is_control() && !(keep_lines && c == '\n');
    if !text.chars().any(needs) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' if keep_lines => out.push('\n'),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_sent() {
        assert_eq!(printable("docs/report.doc"), "docs/report.doc");
        assert!(matches!(printable("plain"), Cow::Borrowed(_)));
        assert_eq!(
            printable("\u{1b}]0;owned\u{7}\u{1b}[2J"),
            "\\x1b]0;owned\\x07\\x1b[2J"
        );
        assert_eq!(printable("a\nb\r\tc\u{7f}"), "a\\nb\\r\\tc\\x7f");
        assert_eq!(printable("csi\u{9b}31m"), "csi\\u{9b}31m");
        // A backslash is doubled only when something else is escaped, so that an
        // escape cannot be faked next to a real one.
        assert_eq!(printable("a\\x1b"), "a\\x1b");
        assert_eq!(printable("a\\x1b\u{1b}"), "a\\\\x1b\\x1b");
        assert_eq!(printable_lines("one\ntwo\u{1b}[H"), "one\ntwo\\x1b[H");
        assert_eq!(printable("naïve ü 名前"), "naïve ü 名前");
    }
}
