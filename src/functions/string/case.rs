//! Case mapping: `upper`, `lower` and `initcap` (Unicode's full mappings).

use crate::functions::row::{map1, map1_with, Text, Utf8, Written};
use crate::functions::{Registry, Specialization};

use super::S;

/// Case mapping.
pub(super) fn case(r: &mut Registry) {
    r.function("upper")
        .alias("ucase")
        .example("upper('Straße')", "STRASSE")
        .sig(
            &[S],
            S,
            "s in upper case (Unicode)",
            map1_with::<Utf8, Written, _>(|s: &str, out: &mut Text| {
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
            map1_with::<Utf8, Written, _>(|s: &str, out: &mut Text| {
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

/// `initcap`: the first letter of each word (a run of letters and digits) in upper
/// case, the others in lower case.
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
