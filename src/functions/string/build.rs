//! Strings built from others: concatenation, padding, `repeat`, `replace`,
//! `translate`, `reverse` and `quote_literal`.

use arrow::datatypes::Int64Type;

use crate::functions::row::{
    join_block, map1, map1_with, map2_with, map3, map3_with, push_short, variadic_with, Outcome,
    RowImpl, Text, Utf8, Written,
};
use crate::functions::{Registry, Specialization, TextArguments};

use super::cut::byte_at;
use super::{I, S};

/// `a || b || …`: the strings joined, NULL if any is NULL. The JIT lowers a chain
/// of `||` to one call of it with every operand, so a row builds one string, not one
/// per `||`.
pub(crate) fn joined() -> RowImpl {
    variadic_with::<Utf8, Written, _>(true, |parts: &[Option<&str>], out: &mut Text| {
        for part in parts.iter().flatten() {
            push_short(out, part);
        }
        Ok(Some(()))
    })
    .with_block(join_block(true))
    .named("||")
}

/// Strings built from others.
pub(super) fn build(r: &mut Registry) {
    r.function("concat_op")
        .example("'ab' || 'cd'", "abcd")
        .example("'id-' || 42", "id-42")
        .sig(
            &[S, S],
            S,
            "a || b: the strings joined; NULL if either is NULL",
            joined(),
        )
        .specialize(Specialization::Concatenation)
        .text_arguments(TextArguments::WhenOneIsText);
    r.function("concat")
        .text_arguments(TextArguments::All)
        .example("concat('a', NULL, 'b')", "ab")
        .example(
            "concat(1, '-', DATE '2024-01-02', true)",
            "1-2024-01-02true",
        )
        .variadic_sig(
            &[S],
            S,
            "the strings joined, NULLs skipped (never NULL)",
            variadic_with::<Utf8, Written, _>(false, |parts: &[Option<&str>], out: &mut Text| {
                out.extend(parts.iter().flatten().copied());
                Ok(Some(()))
            })
            .with_block(join_block(false)),
        );
    r.function("concat_ws")
        .text_arguments(TextArguments::All)
        .example("concat_ws(', ', 'a', NULL, 'b')", "a, b")
        .variadic_sig(
            &[S],
            S,
            "the strings after the first joined with the first between them, NULLs skipped; NULL if the separator is NULL",
            variadic_with::<Utf8, Written, _>(false, |parts: &[Option<&str>], out: &mut Text| {
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
                map2_with::<Utf8, Int64Type, Written, _>(move |s: &str, n: i64, out: &mut Text| {
                    pad(s, n, " ", on_left, out)
                })
                .fallible(),
            )
            .sig(
                &[S, I, S],
                S,
                "s filled with fill (repeated) to n characters, or cut to n; '' for n ≤ 0",
                map3_with::<Utf8, Int64Type, Utf8, Written, _>(
                    move |s: &str, n: i64, fill: &str, out: &mut Text| {
                        pad(s, n, fill, on_left, out)
                    },
                )
                .fallible(),
            );
    }
    r.function("repeat")
        .example("repeat('ab', 3)", "ababab")
        .sig(
            &[S, I],
            S,
            "s repeated n times; '' for n ≤ 0; a result over 1 GB is an error",
            map2_with::<Utf8, Int64Type, Written, _>(|s: &str, n: i64, out: &mut Text| {
                let n = usize::try_from(n).unwrap_or(0);
                match s.len().checked_mul(n) {
                    Some(bytes) if bytes <= MAX_BYTES => out.reserve(bytes)?,
                    _ => return Err(TOO_LARGE.into()),
                }
                repeat_into(s, n, out);
                Ok(Some(()))
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
                |s: &str, from: &str, to: &str, out: &mut Text| {
                    replace_into(s, from, to, out)?;
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
            map1_with::<Utf8, Written, _>(|s: &str, out: &mut Text| {
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

/// PostgreSQL's limit on a computed string (1 GB less one byte), which `lpad`,
/// `rpad` and `repeat` check before allocating (and then the room left of the
/// batch's limit on string results, [`Text::reserve`]).
const MAX_BYTES: usize = 0x3fff_ffff;

const TOO_LARGE: &str = "requested length too large";

/// `lpad` / `rpad`: `s` filled with `fill` (repeated) on the left or right to `n`
/// characters, or cut to its first `n` characters, appended to `out`. The result's
/// bytes are counted, and checked against the limits, before any is written.
fn pad(s: &str, n: i64, fill: &str, on_left: bool, out: &mut Text) -> Outcome<()> {
    let n = n.max(0);
    let end = byte_at(s, n);
    let kept = &s[..end];
    let have = kept.chars().count() as i64;
    if fill.is_empty() || have == n {
        out.push_str(kept);
        return Ok(Some(()));
    }
    // PostgreSQL's worst-case check: four bytes a character.
    if n.saturating_mul(4) > MAX_BYTES as i64 {
        return Err(TOO_LARGE.into());
    }
    // The filler: whole copies of `fill`, then the first characters of one more.
    // (Within 4 bytes a character of `n`, so none of this overflows.)
    let missing = (n - have) as usize;
    let fill_chars = fill.chars().count();
    let (copies, rest) = (missing / fill_chars, missing % fill_chars);
    let tail = &fill[..byte_at(fill, rest as i64)];
    out.reserve(kept.len() + copies * fill.len() + tail.len())?;
    if !on_left {
        out.push_str(kept);
    }
    repeat_into(fill, copies, out);
    out.push_str(tail);
    if on_left {
        out.push_str(kept);
    }
    Ok(Some(()))
}

/// `s` repeated `n` times, appended to `out` a few KiB at a time (not a character
/// or a short string at a time).
fn repeat_into(s: &str, n: usize, out: &mut String) {
    if s.is_empty() || n == 0 {
        return;
    }
    let per = (4096 / s.len()).clamp(1, n);
    let chunk = s.repeat(per);
    for _ in 0..n / per {
        out.push_str(&chunk);
    }
    out.push_str(&chunk[..n % per * s.len()]);
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

/// `replace(s, from, to)` appended to `out`; `s` as it is when `from` is empty. Its
/// result can be far longer than `s`: an error as soon as it passes the batch's
/// limit on string results.
fn replace_into(s: &str, from: &str, to: &str, out: &mut Text) -> Result<(), String> {
    if from.is_empty() {
        out.push_str(s);
        return Ok(());
    }
    let mut rest = 0;
    for (at, _) in s.match_indices(from) {
        out.push_str(&s[rest..at]);
        out.push_str(to);
        out.check()?;
        rest = at + from.len();
    }
    out.push_str(&s[rest..]);
    Ok(())
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
