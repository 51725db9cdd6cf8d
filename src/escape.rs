//! User-provided text (file names, expression text, column names) shown in messages
//! and tables with its control characters escaped, so that a name holding a newline
//! cannot forge a second line of output and one holding `ESC [` cannot drive the
//! terminal.
//!
//! `\n`, `\r` and `\t` are shown as those escapes, the other ASCII control characters
//! and DEL as `\xNN`, and the C1 controls and Unicode's invisible direction
//! overrides (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, which can make text read
//! in another order than it is) as `\u{NNNN}`. Bytes of a path that are not UTF-8 are
//! shown as `\xNN`. Everything else, backslashes included, is shown as it is.

use std::borrow::Cow;
use std::path::Path;

/// Whether `c` is shown escaped.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Appends `c` as it is shown.
fn push_shown(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if needs_escape(c) && c.is_ascii() => out.push_str(&format!("\\x{:02x}", c as u32)),
        c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// `text` with its control characters escaped (borrowed when there are none).
///
/// ```
/// use broadhead::escape::escape;
/// assert_eq!(escape("a\nb\x1b[31m"), "a\\nb\\x1b[31m");
/// assert_eq!(escape("plain"), "plain");
/// ```
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_shown(&mut out, c);
    }
    Cow::Owned(out)
}

/// How many characters `c` takes once escaped (for carets under escaped text).
pub fn shown_width(c: char) -> usize {
    let mut s = String::new();
    push_shown(&mut s, c);
    s.chars().count()
}

/// A message of several lines with the control characters of each line escaped: the
/// newlines that separate the lines are kept.
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c != '\n' && needs_escape(c)) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.split('\n').map(escape).collect::<Vec<_>>().join("\n"))
}

/// A path as shown in messages: its control characters escaped, and on Unix, bytes
/// that are not UTF-8 as `\xNN` (where `Path::display` would show `�`).
///
/// ```
/// use broadhead::escape::escape_path;
/// use std::path::Path;
/// assert_eq!(escape_path(Path::new("dir/a\nb.parquet")), "dir/a\\nb.parquet");
/// ```
pub fn escape_path(path: &Path) -> Cow<'_, str> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = path.as_os_str().as_bytes();
        if let Ok(text) = std::str::from_utf8(bytes) {
            return escape(text);
        }
        let mut out = String::with_capacity(bytes.len() + 8);
        for chunk in bytes.utf8_chunks() {
            out.push_str(&escape(chunk.valid()));
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        Cow::Owned(out)
    }
    #[cfg(not(unix))]
    {
        match path.to_string_lossy() {
            Cow::Borrowed(text) => escape(text),
            Cow::Owned(text) => Cow::Owned(escape(&text).into_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        assert_eq!(escape("tab\there\r\n"), "tab\\there\\r\\n");
        assert_eq!(escape("\x00\x07\x7f"), "\\x00\\x07\\x7f");
        assert_eq!(escape("\u{85}x\u{202e}"), "\\u{85}x\\u{202e}");
        assert_eq!(escape("é ü 漢 \\n"), "é ü 漢 \\n");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(escape_lines("one\x1b\ntwo"), "one\\x1b\ntwo");
        assert_eq!(shown_width('a'), 1);
        assert_eq!(shown_width('\x1b'), 4);
        assert_eq!(shown_width('\u{202e}'), 8);
    }

    #[cfg(unix)]
    #[test]
    fn paths_show_bytes_that_are_not_utf8() {
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new(std::ffi::OsStr::from_bytes(b"a\xffb\n.parquet"));
        assert_eq!(escape_path(p), "a\\xffb\\n.parquet");
    }
}
