//! String functions. Lengths and positions count characters (Unicode code points),
//! not bytes; case mapping is Unicode's.

use arrow::datatypes::Int64Type;
use arrow_schema::DataType;

use super::row::{map1, map2, map3, variadic, Slice, Utf8};
use super::Registry;

const S: DataType = DataType::Utf8;
const I: DataType = DataType::Int64;

/// The byte range of the part of `s` starting at character `start` (1-based, may
/// be below 1) with `count` characters (all the rest when `None`), as PostgreSQL's
/// `substr`: the window `[start, start + count)` is cut to the string.
fn substr(s: &str, start: i64, count: Option<i64>) -> Result<std::ops::Range<usize>, String> {
    let end = match count {
        Some(c) if c < 0 => return Err("negative substring length not allowed".into()),
        Some(c) => Some(start.saturating_add(c)),
        None => None,
    };
    let from = start.max(1);
    if end.is_some_and(|e| e <= from) {
        return Ok(0..0);
    }
    let byte_at = |chars: i64| -> usize {
        // The byte offset of character `chars` (1-based), or the end.
        s.char_indices()
            .nth((chars - 1) as usize)
            .map_or(s.len(), |(b, _)| b)
    };
    let lo = byte_at(from);
    let hi = end.map_or(s.len(), |e| byte_at(e).max(lo));
    Ok(lo..hi)
}

pub(super) fn register(r: &mut Registry) {
    r.function("upper")
        .alias("ucase")
        .example("upper('Straße')", "STRASSE")
        .sig(
            &[S],
            S,
            "s in upper case (Unicode)",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(s.to_uppercase()))),
        );
    r.function("lower")
        .alias("lcase")
        .example("lower('ÀB')", "àb")
        .sig(
            &[S],
            S,
            "s in lower case (Unicode)",
            map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(s.to_lowercase()))),
        );
    r.function("concat_op")
        .example("concat_op('ab', 'cd')", "abcd")
        .sig(
            &[S, S],
            S,
            "a || b: the strings joined; NULL if either is NULL",
            map2::<Utf8, Utf8, Utf8, _>(|a: &str, b: &str| Ok(Some([a, b].concat()))),
        );
    r.function("concat")
        .example("concat('a', NULL, 'b')", "ab")
        .variadic_sig(
            &[S],
            S,
            "the strings joined, NULLs skipped (never NULL)",
            variadic::<Utf8, Utf8, _>(false, |parts: &[Option<&str>]| {
                Ok(Some(parts.iter().flatten().copied().collect()))
            }),
        );
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
        );
}

#[cfg(test)]
mod tests {
    use super::substr;

    #[test]
    fn substr_cuts_the_window_to_the_string_as_postgresql() {
        let cut = |s: &'static str, start, count| substr(s, start, count).map(|r| &s[r]);
        assert_eq!(cut("héllo", 2, Some(3)), Ok("éll"));
        assert_eq!(cut("héllo", 0, Some(2)), Ok("h"));
        assert_eq!(cut("héllo", -5, Some(10)), Ok("héll"));
        assert_eq!(cut("héllo", 3, None), Ok("llo"));
        assert_eq!(cut("héllo", 9, None), Ok(""));
        assert_eq!(cut("", 1, Some(1)), Ok(""));
        assert!(substr("abc", 1, Some(-1)).is_err());
    }
}
