//! Regular expressions with PostgreSQL's flags and replacement syntax, each pattern
//! compiled once per thread ([`with_regex`]).

use std::cell::RefCell;
use std::num::NonZeroUsize;
use std::ops::Range;
use std::rc::Rc;

use arrow::datatypes::{Int32Type, Int64Type};
use lru::LruCache;
use regex::{Regex, RegexBuilder};

use crate::functions::row::{map2, map3, variadic, Bool, Outcome, Slice, Utf8};
use crate::functions::Registry;

use super::cut::byte_at;
use super::{B, I, INT, S};

/// Regular expressions (PostgreSQL's flags; `regexp_extract` and
/// `regexp_full_match` are DuckDB's).
pub(super) fn regular_expressions(r: &mut Registry) {
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

/// The options of a regular expression, from PostgreSQL's flag letters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct Flags {
    /// `i` (and `c` undoes it).
    pub(super) case_insensitive: bool,
    /// `n` or `m`: `.` does not match a newline, `^`/`$` match at lines.
    pub(super) newline_sensitive: bool,
    /// `x`: whitespace and `#` comments in the pattern are ignored.
    pub(super) expanded: bool,
    /// `g`: every match (regexp_replace only).
    pub(super) global: bool,
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
pub(super) fn compile(source: &str, flags: Flags) -> Result<Regex, String> {
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
pub(super) fn with_regex(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::string::search::like_escape;

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
