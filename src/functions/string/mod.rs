//! String functions. Lengths and positions count characters (Unicode code points),
//! not bytes; case mapping is Unicode's. Regular expressions use the `regex` crate
//! with PostgreSQL's defaults (`.` matches a newline) and flags; each pattern is
//! compiled once per thread ([`with_regex`]).

use std::cell::RefCell;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::rc::Rc;

use arrow::datatypes::{Int32Type, Int64Type};
use arrow_schema::DataType;
use lru::LruCache;
use regex::{Regex, RegexBuilder};

use super::row::{
    join_block, map1, map1_with, map2, map3, map3_with, push_short, variadic, variadic_with, Blob,
    Bool, Outcome, RowImpl, Slice, Utf8, Written,
};
use super::{Registry, Specialization};

const S: DataType = DataType::Utf8;
const I: DataType = DataType::Int64;
const INT: DataType = DataType::Int32;
const B: DataType = DataType::Boolean;

/// The byte range of the part of `s` starting at character `start` (1-based, may
/// be below 1) with `count` characters (all the rest when `None`), as PostgreSQL's
/// `substr`: the window `[start, start + count)` is cut to the string.
fn substr(s: &str, start: i64, count: Option<i64>) -> Result<Range<usize>, String> {
    let end = match count {
        Some(c) if c < 0 => return Err("negative substring length not allowed".into()),
        Some(c) => Some(start.saturating_add(c)),
        None => None,
    };
    let from = start.max(1);
    if end.is_some_and(|e| e <= from) {
        return Ok(0..0);
    }
    let lo = byte_at(s, from - 1);
    let hi = end.map_or(s.len(), |e| byte_at(s, e - 1).max(lo));
    Ok(lo..hi)
}

/// The byte offset of the character after the first `chars` characters of `s` (the
/// end of `s` if it has fewer). Where the first `chars` bytes are ASCII they are
/// those characters, so no walk (and nothing past them is read).
fn byte_at(s: &str, chars: i64) -> usize {
    let Ok(n) = usize::try_from(chars) else {
        return s.len();
    };
    let head = n.min(s.len());
    // A plain loop: `<[u8]>::is_ascii` is built for long slices, and heads are
    // mostly a few bytes.
    if s.as_bytes()[..head].iter().all(u8::is_ascii) {
        return head;
    }
    s.char_indices().nth(n).map_or(s.len(), |(b, _)| b)
}

/// The byte range of `part`, a sub-slice of `s`, within `s`.
fn range_in(s: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(s.as_ptr() as usize);
    start..start + part.len()
}

/// `left(s, n)`: the first `n` characters; with a negative `n`, all but the last `|n|`.
fn left(s: &str, n: i64) -> Range<usize> {
    if n >= 0 {
        0..byte_at(s, n)
    } else {
        let keep = (s.chars().count() as i64).saturating_add(n);
        0..byte_at(s, keep.max(0))
    }
}

/// `right(s, n)`: the last `n` characters; with a negative `n`, all but the first `|n|`.
fn right(s: &str, n: i64) -> Range<usize> {
    let skip = if n >= 0 {
        (s.chars().count() as i64).saturating_sub(n).max(0)
    } else {
        n.saturating_neg()
    };
    byte_at(s, skip)..s.len()
}

/// Which ends `trim` cuts.
#[derive(Clone, Copy)]
enum Ends {
    Both,
    Leading,
    Trailing,
}

/// The part of `s` left when the characters of `set` are cut from `ends`.
fn trim(s: &str, set: &str, ends: Ends) -> Range<usize> {
    let cut = |c: char| set.contains(c);
    let part = match ends {
        Ends::Both => s.trim_matches(cut),
        Ends::Leading => s.trim_start_matches(cut),
        Ends::Trailing => s.trim_end_matches(cut),
    };
    range_in(s, part)
}

/// PostgreSQL's limit on a computed string (1 GB less one byte), which `lpad`,
/// `rpad` and `repeat` check before allocating.
const MAX_BYTES: usize = 0x3fff_ffff;

const TOO_LARGE: &str = "requested length too large";

/// `lpad` / `rpad`: `s` filled with `fill` (repeated) on the left or right to `n`
/// characters, or cut to its first `n` characters.
fn pad(s: &str, n: i64, fill: &str, on_left: bool) -> Outcome<String> {
    let n = n.max(0);
    let end = byte_at(s, n);
    let kept = &s[..end];
    let have = kept.chars().count() as i64;
    if fill.is_empty() || have == n {
        return Ok(Some(kept.to_string()));
    }
    // PostgreSQL's worst-case check: four bytes a character.
    if n.saturating_mul(4) > MAX_BYTES as i64 {
        return Err(TOO_LARGE.into());
    }
    let filler: String = fill.chars().cycle().take((n - have) as usize).collect();
    Ok(Some(if on_left {
        filler + kept
    } else {
        [kept, &filler].concat()
    }))
}

/// `split_part`: field `n` (1-based; negative counts from the end) of `s` split at
/// `delimiter`; '' when there is no such field.
fn split_part(s: &str, delimiter: &str, n: i64) -> Outcome<Range<usize>> {
    if n == 0 {
        return Err("field position must not be zero".into());
    }
    if s.is_empty() {
        return Ok(Some(0..0));
    }
    if delimiter.is_empty() {
        // The whole string is the only field.
        return Ok(Some(if n == 1 || n == -1 { 0..s.len() } else { 0..0 }));
    }
    let index = if n > 0 {
        Some(n as u64 - 1)
    } else {
        let fields = s.matches(delimiter).count() as u64 + 1;
        fields.checked_sub(n.unsigned_abs())
    };
    let field = index
        .and_then(|i| usize::try_from(i).ok())
        .and_then(|i| s.split(delimiter).nth(i));
    Ok(Some(field.map_or(0..0, |f| range_in(s, f))))
}

/// `translate`: each character of `from` in `s` replaced by the character at the
/// same position of `to`, or removed when `to` is shorter.
fn translate(s: &str, from: &str, to: &str) -> String {
    let to: Vec<char> = to.chars().collect();
    s.chars()
        .filter_map(|c| match from.chars().position(|f| f == c) {
            Some(i) => to.get(i).copied(),
            None => Some(c),
        })
        .collect()
}

/// `chr`: the character with code point `n`.
fn chr(n: i64) -> Outcome<String> {
    if n == 0 {
        return Err("null character not permitted".into());
    }
    let code =
        u32::try_from(n).map_err(|_| format!("requested character too large for encoding: {n}"))?;
    if code > 0x10ffff {
        return Err(format!("requested character too large for encoding: {n}"));
    }
    char::from_u32(code)
        .map(|c| Some(c.to_string()))
        .ok_or_else(|| format!("requested character not valid for encoding: {n}"))
}

/// `initcap`: the first letter of each word (a run of letters and digits) in upper
/// case, the others in lower case.
/// `upper(s)` appended to `out`: ASCII text mapped in place, other text by
/// Unicode's full mapping (`ß` → `SS`).
fn upper_into(s: &str, out: &mut String) {
    if s.is_ascii() {
        let start = out.len();
        out.push_str(s);
        out[start..].make_ascii_uppercase();
    } else {
        out.extend(s.chars().flat_map(char::to_uppercase));
    }
}

/// `lower(s)` appended to `out`: ASCII text mapped in place, other text by
/// `str::to_lowercase` (which maps a final `Σ` to `ς`, as a per-character mapping
/// cannot).
fn lower_into(s: &str, out: &mut String) {
    if s.is_ascii() {
        let start = out.len();
        out.push_str(s);
        out[start..].make_ascii_lowercase();
    } else {
        out.push_str(&s.to_lowercase());
    }
}

/// `replace(s, from, to)` appended to `out`; `s` as it is when `from` is empty.
fn replace_into(s: &str, from: &str, to: &str, out: &mut String) {
    if from.is_empty() {
        out.push_str(s);
        return;
    }
    let mut rest = 0;
    for (at, _) in s.match_indices(from) {
        out.push_str(&s[rest..at]);
        out.push_str(to);
        rest = at + from.len();
    }
    out.push_str(&s[rest..]);
}

fn initcap(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_word = false;
    for c in s.chars() {
        if in_word {
            out.extend(c.to_lowercase());
        } else {
            out.extend(c.to_uppercase());
        }
        in_word = c.is_alphanumeric();
    }
    out
}

/// `quote_literal`: `s` as an SQL string literal (quotes doubled; with backslashes,
/// doubled and the `E'…'` form, as PostgreSQL writes it).
fn quote_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 3);
    if s.contains('\\') {
        out.push('E');
    }
    out.push('\'');
    for c in s.chars() {
        if c == '\'' || c == '\\' {
            out.push(c);
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// The 1-based character position of the first `needle` in `s`; 0 when absent.
fn strpos(s: &str, needle: &str) -> i32 {
    s.find(needle)
        .map_or(0, |b| s[..b].chars().count() as i32 + 1)
}

// ---------------------------------------------------------------------------
// Regular expressions

/// The options of a regular expression, from PostgreSQL's flag letters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Flags {
    /// `i` (and `c` undoes it).
    case_insensitive: bool,
    /// `n` or `m`: `.` does not match a newline, `^`/`$` match at lines.
    newline_sensitive: bool,
    /// `x`: whitespace and `#` comments in the pattern are ignored.
    expanded: bool,
    /// `g`: every match (regexp_replace only).
    global: bool,
}

/// Reads PostgreSQL's flag letters; `func` names the function in the error for `g`
/// where it does not apply.
fn parse_flags(letters: &str, global_allowed: Option<&str>) -> Result<Flags, String> {
    let mut f = Flags::default();
    for c in letters.chars() {
        match c {
            'i' => f.case_insensitive = true,
            'c' => f.case_insensitive = false,
            'n' | 'm' => f.newline_sensitive = true,
            's' => f.newline_sensitive = false,
            'x' => f.expanded = true,
            'g' => match global_allowed {
                None => f.global = true,
                Some(func) => {
                    return Err(format!("{func}() does not support the \"global\" option"))
                }
            },
            _ => return Err(format!("invalid regular expression option: \"{c}\"")),
        }
    }
    Ok(f)
}

/// The regex crate's error on one line: `invalid regular expression: unclosed group`.
fn regex_error(e: regex::Error) -> String {
    let text = e.to_string();
    let line = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "))
        .or_else(|| text.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("")
        .to_string();
    format!("invalid regular expression: {line}")
}

/// Compiles `source` with `flags`.
fn compile(source: &str, flags: Flags) -> Result<Regex, String> {
    RegexBuilder::new(source)
        .case_insensitive(flags.case_insensitive)
        .dot_matches_new_line(!flags.newline_sensitive)
        .multi_line(flags.newline_sensitive)
        .ignore_whitespace(flags.expanded)
        .build()
        .map_err(regex_error)
}

/// How many compiled patterns each thread keeps.
const CACHE_SIZE: NonZeroUsize = NonZeroUsize::new(64).unwrap();

type Compiled = Result<Rc<Regex>, String>;

thread_local! {
    /// Compiled patterns (or why they do not compile), by kind, parameter and
    /// pattern, least recently used first out; `KEY` is the reused key buffer.
    static CACHE: RefCell<LruCache<String, Compiled>> = RefCell::new(LruCache::new(CACHE_SIZE));
    static KEY: RefCell<String> = const { RefCell::new(String::new()) };
}

/// The regex that `build` makes of `pattern` for `kind` (`'r'` a regular
/// expression, `'l'` LIKE, …) with `param` (its flags or escape), compiled once
/// per thread: a literal pattern is compiled on its first row only.
fn with_regex(
    kind: char,
    param: &str,
    pattern: &str,
    build: impl FnOnce() -> Result<Regex, String>,
) -> Result<Rc<Regex>, String> {
    KEY.with_borrow_mut(|key| {
        use std::fmt::Write;
        key.clear();
        // The parameter's length keeps keys apart whatever the strings hold.
        let _ = write!(key, "{kind}{}:{param}{pattern}", param.len());
        CACHE.with_borrow_mut(|cache| {
            if let Some(hit) = cache.get(key.as_str()) {
                return hit.clone();
            }
            let compiled = build().map(Rc::new);
            cache.put(key.clone(), compiled.clone());
            compiled
        })
    })
}

/// The regex of a regular expression with PostgreSQL's flag letters (checked
/// before the cache is asked: whether `g` is allowed depends on the function).
fn regex(pattern: &str, flags: &str, func: Option<&str>) -> Result<Rc<Regex>, String> {
    let f = parse_flags(flags, func)?;
    with_regex('r', flags, pattern, || compile(pattern, f))
}

/// The regex of a regular expression that must match all of the string.
fn full_regex(pattern: &str, flags: &str) -> Result<Rc<Regex>, String> {
    let f = parse_flags(flags, Some("regexp_full_match"))?;
    with_regex('f', flags, pattern, || {
        // The pattern alone must be valid: `a)|(b` is not made valid by the wrapping.
        compile(pattern, f)?;
        compile(&format!(r"\A(?:{pattern})\z"), f)
    })
}

/// The escape character of LIKE / SIMILAR TO: none for '', else one character.
fn escape_char(escape: &str) -> Result<Option<char>, String> {
    let mut chars = escape.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Ok(None),
        (Some(c), None) => Ok(Some(c)),
        _ => Err("invalid escape string (it must be empty or one character)".into()),
    }
}

/// The anchored regular expression of a LIKE pattern with an escape character.
fn like_source(pattern: &str, escape: Option<char>) -> Result<String, String> {
    let mut re = String::with_capacity(pattern.len() + 8);
    re.push_str(r"\A");
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if Some(c) == escape {
            match chars.next() {
                Some(next) => re.push_str(&regex::escape(next.encode_utf8(&mut [0; 4]))),
                None => return Err("LIKE pattern must not end with escape character".into()),
            }
        } else if c == '%' {
            re.push_str(".*");
        } else if c == '_' {
            re.push('.');
        } else {
            re.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
        }
    }
    re.push_str(r"\z");
    Ok(re)
}

/// `s LIKE pattern ESCAPE escape` (`ILIKE` with `case_insensitive`).
fn like_escape(s: &str, pattern: &str, escape: &str, case_insensitive: bool) -> Outcome<bool> {
    let kind = if case_insensitive { 'I' } else { 'L' };
    let re = with_regex(kind, escape, pattern, || {
        let source = like_source(pattern, escape_char(escape)?)?;
        let flags = Flags {
            case_insensitive,
            ..Flags::default()
        };
        compile(&source, flags)
    })?;
    Ok(Some(re.is_match(s)))
}

/// PostgreSQL's translation of an SQL regular expression (SIMILAR TO) into a
/// POSIX one, anchored at both ends: `%` is `.*`, `_` is `.`, `.` `^` `$` are
/// literal, the rest (`|` `*` `+` `?` `{…}` `(…)` `[…]`) as in regular
/// expressions; the escape character makes the next character literal, and two
/// escaped double quotes mark the part `substring` would return.
fn similar_source(pattern: &str, escape: Option<char>) -> Result<String, String> {
    let mut re = String::with_capacity(pattern.len() + 10);
    re.push_str(r"\A(?:");
    // Within a bracket expression: the characters seen after `[` (and `^`).
    let mut class: Option<usize> = None;
    let mut quotes = 0;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if Some(c) == escape {
            // A trailing escape character is dropped, as PostgreSQL does.
            let Some(next) = chars.next() else { break };
            if next == '"' && class.is_none() {
                re.push_str(match quotes {
                    0 => "){1,1}?(",
                    1 => "){1,1}(?:",
                    _ => {
                        return Err("SQL regular expression may not contain more than two \
                                    escape-double-quote separators"
                            .into())
                    }
                });
                quotes += 1;
            } else if next.is_ascii_alphanumeric() {
                // A class shorthand or escape of the regular expression (`\d`).
                re.push('\\');
                re.push(next);
            } else {
                re.push_str(&regex::escape(next.encode_utf8(&mut [0; 4])));
            }
            class = class.map(|n| n + 1);
        } else if let Some(seen) = class {
            match c {
                '^' if seen == 0 && re.ends_with('[') => re.push('^'),
                ']' if seen > 0 => {
                    re.push(']');
                    class = None;
                    continue;
                }
                '[' if chars.peek() == Some(&':') => {
                    // A POSIX class, `[:alpha:]`, copied as it is.
                    re.push('[');
                    while let Some(k) = chars.next() {
                        re.push(k);
                        if k == ':' && chars.peek() == Some(&']') {
                            re.push(']');
                            chars.next();
                            break;
                        }
                    }
                }
                // Literal here, special to the regex crate's classes.
                '\\' | '[' | ']' | '&' | '~' => {
                    re.push('\\');
                    re.push(c);
                }
                c => re.push(c),
            }
            if !(c == '^' && seen == 0 && re.ends_with("[^")) {
                class = Some(seen + 1);
            }
        } else {
            match c {
                '[' => {
                    re.push('[');
                    class = Some(0);
                }
                '%' => re.push_str(".*"),
                '_' => re.push('.'),
                '(' => re.push_str("(?:"),
                '\\' | '.' | '^' | '$' => {
                    re.push('\\');
                    re.push(c);
                }
                c => re.push(c),
            }
        }
    }
    re.push_str(r")\z");
    Ok(re)
}

/// `s SIMILAR TO pattern ESCAPE escape`.
fn similar_to(s: &str, pattern: &str, escape: &str) -> Outcome<bool> {
    let re = with_regex('s', escape, pattern, || {
        compile(
            &similar_source(pattern, escape_char(escape)?)?,
            Flags::default(),
        )
    })?;
    Ok(Some(re.is_match(s)))
}

/// Appends PostgreSQL's replacement text: `\1`…`\9` the groups ('' for a group
/// that did not take part or does not exist), `\&` the match, `\\` a backslash,
/// anything else as written.
fn expand(out: &mut String, template: &str, caps: &regex::Captures) {
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(d @ '1'..='9') => {
                chars.next();
                let group = d as usize - '0' as usize;
                out.push_str(caps.get(group).map_or("", |m| m.as_str()));
            }
            Some('&') => {
                chars.next();
                out.push_str(caps.get(0).map_or("", |m| m.as_str()));
            }
            Some('\\') => {
                chars.next();
                out.push('\\');
            }
            _ => out.push('\\'),
        }
    }
}

/// The matches of `re` in `s` from byte `start` on, found as PostgreSQL finds them:
/// each search starts where the last match ended, one character further after an
/// empty match (so an empty match right after another match counts, unlike the
/// regex crate's `captures_iter`).
fn matches<'h>(
    re: &'h Regex,
    s: &'h str,
    mut start: usize,
) -> impl Iterator<Item = regex::Captures<'h>> + 'h {
    std::iter::from_fn(move || {
        if start > s.len() {
            return None;
        }
        let caps = re.captures_at(s, start)?;
        let m = caps.get(0)?;
        start = m.end()
            + if m.is_empty() {
                s[m.end()..].chars().next().map_or(1, char::len_utf8)
            } else {
                0
            };
        Some(caps)
    })
}

/// `regexp_replace(s, pattern, replacement, flags)`.
fn regexp_replace(s: &str, pattern: &str, replacement: &str, flags: &str) -> Outcome<String> {
    let re = regex(pattern, flags, None)?;
    let global = parse_flags(flags, None)?.global;
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for caps in matches(&re, s, 0).take(if global { usize::MAX } else { 1 }) {
        let Some(m) = caps.get(0) else { break };
        out.push_str(&s[last..m.start()]);
        expand(&mut out, replacement, &caps);
        last = m.end();
    }
    out.push_str(&s[last..]);
    Ok(Some(out))
}

/// `regexp_extract(s, pattern, group)`: the group of the first match, '' when there
/// is none.
fn regexp_extract(s: &str, pattern: &str, group: i64) -> Outcome<Range<usize>> {
    let re = regex(pattern, "", None)?;
    let groups = re.captures_len() - 1;
    let index = usize::try_from(group)
        .ok()
        .filter(|&g| g <= groups)
        .ok_or_else(|| {
            format!("regexp_extract group {group} does not exist (the pattern has {groups})")
        })?;
    let found = re
        .captures(s)
        .and_then(|c| c.get(index))
        .map_or(0..0, |m| m.range());
    Ok(Some(found))
}

/// Strict four string arguments, as the variadic adapter gives them.
fn four<'a>(args: &[Option<&'a str>]) -> Option<[&'a str; 4]> {
    match args {
        [Some(a), Some(b), Some(c), Some(d)] => Some([a, b, c, d]),
        _ => None,
    }
}

pub(super) fn register(r: &mut Registry) {
    case(r);
    measure(r);
    cut(r);
    build(r);
    search(r);
    regular_expressions(r);
    similarity(r);
}

/// Case mapping.
fn case(r: &mut Registry) {
    r.function("upper")
        .alias("ucase")
        .example("upper('Straße')", "STRASSE")
        .sig(
            &[S],
            S,
            "s in upper case (Unicode)",
            map1_with::<Utf8, Written, _>(|s: &str, out: &mut String| {
                upper_into(s, out);
                Ok(Some(()))
            }),
        )
        .specialize(Specialization::CaseMap { upper: true });
    r.function("lower")
        .alias("lcase")
        .example("lower('ÀB')", "àb")
        .sig(
            &[S],
            S,
            "s in lower case (Unicode)",
            map1_with::<Utf8, Written, _>(|s: &str, out: &mut String| {
                lower_into(s, out);
                Ok(Some(()))
            }),
        )
        .specialize(Specialization::CaseMap { upper: false });
    r.function("initcap")
        .example("initcap('hello wORLD-héllo')", "Hello World-Héllo")
        .sig(
            &[S],
            S,
            "the first letter of each word (a run of letters and digits) in upper case, the rest in lower case",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(initcap(s)))),
        );
}

/// Sizes and codes.
fn measure(r: &mut Registry) {
    r.function("octet_length")
        .alias("strlen")
        .example("octet_length('héllo')", "6")
        .sig(
            &[S],
            INT,
            "the number of bytes of s (UTF-8)",
            map1::<Utf8, Int32Type, _>(|s: &str| Ok(Some(s.len() as i32))),
        )
        .sig(
            &[DataType::Binary],
            INT,
            "the number of bytes of a BLOB",
            map1::<Blob, Int32Type, _>(|b: &[u8]| Ok(Some(b.len() as i32))),
        );
    r.function("ascii").example("ascii('é')", "233").sig(
        &[S],
        INT,
        "the code point of the first character of s; 0 for ''",
        map1::<Utf8, Int32Type, _>(|s: &str| Ok(Some(s.chars().next().map_or(0, |c| c as i32)))),
    );
    r.function("chr").example("chr(233)", "é").sig(
        &[I],
        S,
        "the character with code point n; 0 and invalid code points are errors",
        map1::<Int64Type, Utf8, _>(chr).fallible(),
    );
}

/// Parts of a string: results that are a range of the first argument.
fn cut(r: &mut Registry) {
    r.function("substr")
        .alias("substring")
        .example("substr('héllo', 2, 3)", "éll")
        .example("substr('héllo', 3)", "llo")
        .sig(
            &[S, I],
            S,
            "the characters of s from position start (1-based) to the end",
            map2::<Utf8, Int64Type, Slice, _>(|s: &str, start: i64| {
                substr(s, start, None).map(Some)
            }),
        )
        .sig(
            &[S, I, I],
            S,
            "count characters of s from position start (1-based); a negative count is an error",
            map3::<Utf8, Int64Type, Int64Type, Slice, _>(|s: &str, start: i64, count: i64| {
                substr(s, start, Some(count)).map(Some)
            })
            .fallible(),
        )
        .specialize(Specialization::LeadingCharacters {
            start: Some(1),
            count: 2,
        });
    r.function("left")
        .example("left('héllo', 2)", "hé")
        .example("left('héllo', -2)", "hél")
        .sig(
            &[S, I],
            S,
            "the first n characters of s; with a negative n, all but the last |n|",
            map2::<Utf8, Int64Type, Slice, _>(|s: &str, n: i64| Ok(Some(left(s, n)))),
        )
        .specialize(Specialization::LeadingCharacters {
            start: None,
            count: 1,
        });
    r.function("right")
        .example("right('héllo', 4)", "éllo")
        .example("right('héllo', -3)", "lo")
        .sig(
            &[S, I],
            S,
            "the last n characters of s; with a negative n, all but the first |n|",
            map2::<Utf8, Int64Type, Slice, _>(|s: &str, n: i64| Ok(Some(right(s, n)))),
        );
    let trims = [
        (
            "btrim",
            Ends::Both,
            "s without the spaces at both ends",
            "s without the characters of chars at both ends",
            ("btrim('xxhixyx', 'xy')", "hi"),
        ),
        (
            "ltrim",
            Ends::Leading,
            "s without its leading spaces",
            "s without the characters of chars at its start",
            ("ltrim('  hi  ')", "hi  "),
        ),
        (
            "rtrim",
            Ends::Trailing,
            "s without its trailing spaces",
            "s without the characters of chars at its end",
            ("rtrim('héllo!!', '!')", "héllo"),
        ),
    ];
    for (name, ends, doc, doc_chars, (sql, result)) in trims {
        r.function(name)
            .example(sql, result)
            .sig(
                &[S],
                S,
                doc,
                map1::<Utf8, Slice, _>(move |s: &str| Ok(Some(trim(s, " ", ends)))),
            )
            .sig(
                &[S, S],
                S,
                doc_chars,
                map2::<Utf8, Utf8, Slice, _>(move |s: &str, set: &str| {
                    Ok(Some(trim(s, set, ends)))
                }),
            );
    }
    r.function("btrim").alias("trim");
    r.function("split_part")
        .example("split_part('a,b,,c', ',', 2)", "b")
        .example("split_part('a,b,,c', ',', -1)", "c")
        .sig(
            &[S, S, I],
            S,
            "field n (1-based; negative counts from the end) of s split at delimiter; '' if there is none; 0 is an error",
            map3::<Utf8, Utf8, Int64Type, Slice, _>(split_part).fallible(),
        );
}

/// `a || b || …`: the strings joined, NULL if any is NULL. The JIT lowers a chain
/// of `||` to one call of it with every operand, so a row builds one string, not one
/// per `||`.
pub(crate) fn joined() -> RowImpl {
    variadic_with::<Utf8, Written, _>(true, |parts: &[Option<&str>], out: &mut String| {
        for part in parts.iter().flatten() {
            push_short(out, part);
        }
        Ok(Some(()))
    })
    .with_block(join_block(true))
}

/// Strings built from others.
fn build(r: &mut Registry) {
    r.function("concat_op")
        .example("'ab' || 'cd'", "abcd")
        .sig(
            &[S, S],
            S,
            "a || b: the strings joined; NULL if either is NULL",
            joined(),
        )
        .specialize(Specialization::Concatenation);
    r.function("concat")
        .example("concat('a', NULL, 'b')", "ab")
        .variadic_sig(
            &[S],
            S,
            "the strings joined, NULLs skipped (never NULL)",
            variadic_with::<Utf8, Written, _>(false, |parts: &[Option<&str>], out: &mut String| {
                out.extend(parts.iter().flatten().copied());
                Ok(Some(()))
            })
            .with_block(join_block(false)),
        );
    r.function("concat_ws")
        .example("concat_ws(', ', 'a', NULL, 'b')", "a, b")
        .variadic_sig(
            &[S],
            S,
            "the strings after the first joined with the first between them, NULLs skipped; NULL if the separator is NULL",
            variadic_with::<Utf8, Written, _>(false, |parts: &[Option<&str>], out: &mut String| {
                let Some((Some(sep), rest)) = parts.split_first() else {
                    return Ok(None);
                };
                for (k, part) in rest.iter().flatten().enumerate() {
                    if k > 0 {
                        out.push_str(sep);
                    }
                    out.push_str(part);
                }
                Ok(Some(()))
            }),
        );
    for (name, on_left, sql, result) in [
        ("lpad", true, "lpad('hi', 5, 'xy')", "xyxhi"),
        ("rpad", false, "rpad('héllo', 3)", "hél"),
    ] {
        r.function(name)
            .example(sql, result)
            .sig(
                &[S, I],
                S,
                "s filled with spaces to n characters, or cut to n; '' for n ≤ 0",
                map2::<Utf8, Int64Type, Utf8, _>(move |s: &str, n: i64| pad(s, n, " ", on_left))
                    .fallible(),
            )
            .sig(
                &[S, I, S],
                S,
                "s filled with fill (repeated) to n characters, or cut to n; '' for n ≤ 0",
                map3::<Utf8, Int64Type, Utf8, Utf8, _>(move |s: &str, n: i64, fill: &str| {
                    pad(s, n, fill, on_left)
                })
                .fallible(),
            );
    }
    r.function("repeat")
        .example("repeat('ab', 3)", "ababab")
        .sig(
            &[S, I],
            S,
            "s repeated n times; '' for n ≤ 0; a result over 1 GB is an error",
            map2::<Utf8, Int64Type, Utf8, _>(|s: &str, n: i64| {
                let n = usize::try_from(n).unwrap_or(0);
                match s.len().checked_mul(n) {
                    Some(bytes) if bytes <= MAX_BYTES => Ok(Some(s.repeat(n))),
                    _ => Err(TOO_LARGE.into()),
                }
            })
            .fallible(),
        );
    r.function("replace")
        .example("replace('héllo héllo', 'é', 'e')", "hello hello")
        .sig(
            &[S, S, S],
            S,
            "s with every from replaced by to (s as it is when from is '')",
            map3_with::<Utf8, Utf8, Utf8, Written, _>(
                |s: &str, from: &str, to: &str, out: &mut String| {
                    replace_into(s, from, to, out);
                    Ok(Some(()))
                },
            ),
        );
    r.function("translate")
        .example("translate('straße', 'ßa', 'sA')", "strAse")
        .sig(
            &[S, S, S],
            S,
            "s with each character of from replaced by the one at its position in to, or removed if to is shorter",
            map3::<Utf8, Utf8, Utf8, Utf8, _>(|s: &str, from: &str, to: &str| {
                Ok(Some(translate(s, from, to)))
            }),
        );
    r.function("reverse")
        .example("reverse('日本語')", "語本日")
        .sig(
            &[S],
            S,
            "the characters of s in reverse order",
            map1_with::<Utf8, Written, _>(|s: &str, out: &mut String| {
                out.extend(s.chars().rev());
                Ok(Some(()))
            }),
        );
    r.function("quote_literal")
        .example("quote_literal('O''Reilly')", "'O''Reilly'")
        .sig(
            &[S],
            S,
            "s as an SQL string literal: quoted, quotes doubled (E'…' with backslashes doubled if it has any)",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(quote_literal(s)))),
        );
}

/// Finding strings in strings.
fn search(r: &mut Registry) {
    r.function("strpos")
        .alias("position")
        .alias("instr")
        .example("strpos('héllo', 'l')", "3")
        .example("strpos('héllo', 'x')", "0")
        .sig(
            &[S, S],
            INT,
            "the character position (1-based) of the first substring in s; 0 if absent",
            map2::<Utf8, Utf8, Int32Type, _>(|s: &str, x: &str| Ok(Some(strpos(s, x)))),
        );
    type Test = fn(&str, &str) -> bool;
    let tests = [
        (
            "starts_with",
            Some("prefix"),
            (|s, x| s.starts_with(x)) as Test,
            "whether s starts with prefix",
            ("starts_with('héllo', 'hé')", "true"),
        ),
        (
            "ends_with",
            Some("suffix"),
            (|s, x| s.ends_with(x)) as Test,
            "whether s ends with suffix",
            ("ends_with('héllo', 'lo')", "true"),
        ),
        (
            "contains",
            None,
            (|s, x| s.contains(x)) as Test,
            "whether s contains the substring",
            ("contains('héllo', 'él')", "true"),
        ),
    ];
    for (name, alias, test, doc, (sql, result)) in tests {
        let f = r.function(name);
        if let Some(alias) = alias {
            f.alias(alias);
        }
        f.example(sql, result).sig(
            &[S, S],
            B,
            doc,
            map2::<Utf8, Utf8, Bool, _>(move |s: &str, x: &str| Ok(Some(test(s, x)))),
        );
    }
    for (name, case_insensitive, sql) in [
        ("like", false, "like('10%', '10!%', '!')"),
        ("ilike", true, "ilike('Été_1', 'ÉTÉ!_%', '!')"),
    ] {
        r.function(name).example(sql, "true").sig(
            &[S, S, S],
            B,
            "s LIKE pattern ESCAPE escape: the escape character ('' for none) makes the next one literal",
            map3::<Utf8, Utf8, Utf8, Bool, _>(move |s: &str, p: &str, e: &str| {
                like_escape(s, p, e, case_insensitive)
            })
            .fallible(),
        );
    }
    r.function("similar_to")
        .example("similar_to('abc', '(a|x)%')", "true")
        .example("similar_to('a.c', 'a#.c', '#')", "true")
        .sig(
            &[S, S],
            B,
            "s SIMILAR TO pattern: an SQL regular expression (% any run, _ one character, | * + ? {} () [] as in regular expressions) matching all of s",
            map2::<Utf8, Utf8, Bool, _>(|s: &str, p: &str| similar_to(s, p, "\\")).fallible(),
        )
        .sig(
            &[S, S, S],
            B,
            "s SIMILAR TO pattern ESCAPE escape",
            map3::<Utf8, Utf8, Utf8, Bool, _>(similar_to).fallible(),
        );
}

/// Regular expressions (PostgreSQL's flags; `regexp_extract` and
/// `regexp_full_match` are DuckDB's).
fn regular_expressions(r: &mut Registry) {
    r.function("regexp_like")
        .alias("regexp_matches")
        .example("regexp_like('héllo', '^h.l')", "true")
        .example("regexp_like('HÉLLO', 'é', 'i')", "true")
        .sig(
            &[S, S],
            B,
            "whether the regular expression matches a part of s (s ~ pattern)",
            map2::<Utf8, Utf8, Bool, _>(|s: &str, p: &str| {
                Ok(Some(regex(p, "", None)?.is_match(s)))
            })
            .fallible(),
        )
        .sig(
            &[S, S, S],
            B,
            "regexp_like with flags: i (ignore case), c (respect case), n or m (newline-sensitive), s (not), x (expanded)",
            map3::<Utf8, Utf8, Utf8, Bool, _>(|s: &str, p: &str, flags: &str| {
                Ok(Some(regex(p, flags, Some("regexp_like"))?.is_match(s)))
            })
            .fallible(),
        );
    r.function("regexp_full_match")
        .example("regexp_full_match('héllo', 'h.*o')", "true")
        .sig(
            &[S, S],
            B,
            "whether the regular expression matches all of s",
            map2::<Utf8, Utf8, Bool, _>(|s: &str, p: &str| {
                Ok(Some(full_regex(p, "")?.is_match(s)))
            })
            .fallible(),
        )
        .sig(
            &[S, S, S],
            B,
            "regexp_full_match with flags (as regexp_like's)",
            map3::<Utf8, Utf8, Utf8, Bool, _>(|s: &str, p: &str, flags: &str| {
                Ok(Some(full_regex(p, flags)?.is_match(s)))
            })
            .fallible(),
        );
    r.function("regexp_replace")
        .example("regexp_replace('héllo', 'l+', '[\\&]')", "hé[ll]o")
        .example(
            "regexp_replace('a1b22', '(\\d)', '<\\1>', 'g')",
            "a<1>b<2><2>",
        )
        .sig(
            &[S, S, S],
            S,
            "s with the first match of the pattern replaced (\\1…\\9 insert groups, \\& the match)",
            map3::<Utf8, Utf8, Utf8, Utf8, _>(|s: &str, p: &str, replacement: &str| {
                regexp_replace(s, p, replacement, "")
            })
            .fallible(),
        )
        .sig(
            &[S, S, S, S],
            S,
            "regexp_replace with flags: g (every match) and regexp_like's",
            variadic::<Utf8, Utf8, _>(true, |args: &[Option<&str>]| match four(args) {
                Some([s, p, replacement, flags]) => regexp_replace(s, p, replacement, flags),
                None => Ok(None),
            })
            .fallible(),
        );
    r.function("regexp_extract")
        .example("regexp_extract('key=val', '(\\w+)=(\\w+)', 2)", "val")
        .example("regexp_extract('héllo', 'x')", "")
        .sig(
            &[S, S],
            S,
            "the first match of the pattern in s; '' if none (DuckDB)",
            map2::<Utf8, Utf8, Slice, _>(|s: &str, p: &str| regexp_extract(s, p, 0)).fallible(),
        )
        .sig(
            &[S, S, I],
            S,
            "group n of the first match (0: all of it); '' if none (DuckDB)",
            map3::<Utf8, Utf8, Int64Type, Slice, _>(regexp_extract).fallible(),
        );
    r.function("regexp_substr")
        .example("regexp_substr('héllo', 'l+')", "ll")
        .sig(
            &[S, S],
            S,
            "the first match of the pattern in s; NULL if none",
            map2::<Utf8, Utf8, Slice, _>(|s: &str, p: &str| {
                Ok(regex(p, "", None)?.find(s).map(|m| m.range()))
            })
            .fallible(),
        );
    r.function("regexp_count")
        .example("regexp_count('héllo', 'l')", "2")
        .sig(
            &[S, S],
            INT,
            "the number of (non-overlapping) matches of the pattern in s",
            map2::<Utf8, Utf8, Int32Type, _>(|s: &str, p: &str| {
                Ok(Some(matches(&*regex(p, "", None)?, s, 0).count() as i32))
            })
            .fallible(),
        )
        .sig(
            &[S, S, I],
            INT,
            "the number of matches from character position start (1-based; below 1 is an error)",
            map3::<Utf8, Utf8, Int64Type, Int32Type, _>(|s: &str, p: &str, start: i64| {
                if start < 1 {
                    return Err(format!("invalid value for parameter \"start\": {start}"));
                }
                let re = regex(p, "", None)?;
                Ok(Some(matches(&re, s, byte_at(s, start - 1)).count() as i32))
            })
            .fallible(),
        );
}

/// Edit distances.
fn similarity(r: &mut Registry) {
    r.function("levenshtein")
        .alias("editdist3")
        .example("levenshtein('kitten', 'sitting')", "3")
        .example("levenshtein('straße', 'strasse')", "2")
        .sig(
            &[S, S],
            INT,
            "the number of character insertions, deletions and substitutions that turn a into b",
            map2::<Utf8, Utf8, Int32Type, _>(|a: &str, b: &str| {
                Ok(Some(
                    strsim::levenshtein(a, b).try_into().unwrap_or(i32::MAX),
                ))
            }),
        );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substr_cuts_the_window_to_the_string_as_postgresql() {
        let cut = |s: &'static str, start, count| substr(s, start, count).map(|r| &s[r]);
        assert_eq!(cut("héllo", 2, Some(3)), Ok("éll"));
        assert_eq!(cut("héllo", 0, Some(2)), Ok("h"));
        assert_eq!(cut("héllo", -5, Some(10)), Ok("héll"));
        assert_eq!(cut("héllo", 3, None), Ok("llo"));
        assert_eq!(cut("héllo", 9, None), Ok(""));
        assert_eq!(cut("", 1, Some(1)), Ok(""));
        assert_eq!(cut("hello", 2, Some(3)), Ok("ell"));
        assert_eq!(cut("hello", 4, Some(9)), Ok("lo"));
        assert_eq!(cut("hello", 6, None), Ok(""));
        assert!(substr("abc", 1, Some(-1)).is_err());
    }

    #[test]
    fn sql_regular_expressions_translate_as_postgresql() {
        let t = |p: &str| similar_source(p, Some('\\')).unwrap();
        assert_eq!(t("a%b_c"), r"\A(?:a.*b.c)\z");
        assert_eq!(t("(a|b).^$"), r"\A(?:(?:a|b)\.\^\$)\z");
        assert_eq!(t(r"a\%"), r"\A(?:a%)\z");
        assert_eq!(t("[]a[]"), r"\A(?:[\]a\[])\z");
        assert_eq!(t("[^]x]"), r"\A(?:[^\]x])\z");
        assert_eq!(t("[[:alpha:]]+"), r"\A(?:[[:alpha:]]+)\z");
        assert_eq!(similar_source("a#%", Some('#')).unwrap(), r"\A(?:a%)\z");
        assert_eq!(similar_source(r"a\", None).unwrap(), r"\A(?:a\\)\z");
        assert_eq!(similar_source(r"a\", Some('\\')).unwrap(), r"\A(?:a)\z");
    }

    #[test]
    fn a_pattern_is_compiled_once_per_thread_and_kinds_are_kept_apart() {
        let a = regex("a+", "", None).unwrap();
        assert!(Rc::ptr_eq(&a, &regex("a+", "", None).unwrap()));
        assert!(!Rc::ptr_eq(&a, &regex("a+", "i", None).unwrap()));
        // The same text as a LIKE pattern is another regex: `+` is literal there.
        assert_eq!(like_escape("a+", "a+", "", false), Ok(Some(true)));
        assert_eq!(like_escape("aa", "a+", "", false), Ok(Some(false)));
        assert!(a.is_match("aa"));
        // Whether `g` is allowed depends on the function, whatever the cache holds.
        assert!(regex("a", "g", None).is_ok());
        assert!(regex("a", "g", Some("regexp_like")).is_err());
        assert!(regex("a", "g", None).is_ok());
        assert!(full_regex("a)|(b", "").is_err());
    }

    #[test]
    fn regex_errors_are_one_line() {
        let e = regex("(", "", None).unwrap_err();
        assert_eq!(e, "invalid regular expression: unclosed group");
        assert_eq!(
            regex("a", "iz", None).unwrap_err(),
            "invalid regular expression option: \"z\""
        );
    }
}
