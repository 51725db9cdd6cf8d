//! Parts of a string, returned as byte ranges of it: `substr`, `left`, `right`,
//! the trims and `split_part`.

use std::ops::Range;

use arrow::datatypes::Int64Type;

use crate::functions::row::{map1, map2, map3, Outcome, Slice, Utf8};
use crate::functions::{Registry, Specialization};

use super::{I, S};

/// Parts of a string: results that are a range of the first argument.
pub(super) fn cut(r: &mut Registry) {
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
pub(super) fn byte_at(s: &str, chars: i64) -> usize {
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
}
