//! Numbers of strings and strings of numbers: byte lengths, code points (`ascii`,
//! `chr`) and edit distances.

use arrow::datatypes::{Int32Type, Int64Type};
use arrow_schema::DataType;

use crate::functions::row::{map1, map2, Blob, Outcome, Utf8};
use crate::functions::Registry;

use super::{I, INT, S};

/// Sizes and codes.
pub(super) fn measure(r: &mut Registry) {
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
    r.function("unicode")
        .alias("ord")
        .example("unicode('é')", "233")
        .example("unicode('')", "-1")
        .sig(
            &[S],
            INT,
            "the code point of the first character of s; -1 for '' (DuckDB)",
            map1::<Utf8, Int32Type, _>(|s: &str| {
                Ok(Some(s.chars().next().map_or(-1, |c| c as i32)))
            }),
        );
    r.function("bit_length")
        .example("bit_length('é')", "16")
        .sig(
            &[S],
            I,
            "the number of bits of s (8 per UTF-8 byte)",
            map1::<Utf8, Int64Type, _>(|s: &str| Ok(Some(s.len() as i64 * 8))),
        )
        .sig(
            &[DataType::Binary],
            I,
            "the number of bits of a BLOB",
            map1::<Blob, Int64Type, _>(|b: &[u8]| Ok(Some(b.len() as i64 * 8))),
        );
    r.function("chr").example("chr(233)", "é").sig(
        &[I],
        S,
        "the character with code point n; 0 and invalid code points are errors",
        map1::<Int64Type, Utf8, _>(chr).fallible(),
    );
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

/// Edit distances.
pub(super) fn similarity(r: &mut Registry) {
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
