//! String runtime helpers called from generated code, one per specialized shape.
//!
//! Each helper has the back end's [`HelperFn`](broadhead_codegen::HelperFn) ABI: it
//! reads rows `row0 .. row0 + n` (n ≤ 64) of one or two Utf8 columns and returns a
//! bitmask (bit i for row `row0 + i`), or writes `n` values. The state it gets is one
//! of the structs here, owned by the compiled expression for as long as the kernel
//! can run. LIKE patterns are classified exactly as arrow's `like`/`ilike` kernels
//! classify them (equality, prefix, suffix, substring, else a regex), so both back
//! ends agree byte for byte.

use std::collections::HashSet;

use broadhead_codegen::{CmpOp, Helper, HelperFn, Slot};
use memchr::memmem::Finder;
use regex::bytes::{Regex, RegexBuilder};

/// Calls `f(i, bytes)` for rows `row0 .. row0 + n` of a Utf8 slot.
///
/// # Safety
/// `slot` must describe a live Utf8 array (offsets at `values`, bytes at `data`)
/// with at least `row0 + n` rows.
unsafe fn for_each_row(slot: *const Slot, row0: u64, n: u64, mut f: impl FnMut(usize, &[u8])) {
    // SAFETY: the caller guarantees the slot describes a valid array of at least
    // row0 + n rows, so offsets row0 ..= row0 + n exist and each pair bounds a range
    // of the data buffer (arrow validates offsets when the array is built).
    unsafe {
        let slot = &*slot;
        let offsets = std::slice::from_raw_parts(
            (slot.values as *const i32).add(row0 as usize),
            n as usize + 1,
        );
        for i in 0..n as usize {
            let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
            f(
                i,
                std::slice::from_raw_parts(slot.data.add(start), end - start),
            );
        }
    }
}

/// Builds a mask from a per-row predicate.
///
/// # Safety
/// As [`for_each_row`].
unsafe fn mask(slot: *const Slot, row0: u64, n: u64, mut pred: impl FnMut(&[u8]) -> bool) -> u64 {
    let mut m = 0u64;
    // SAFETY: forwarded from the caller.
    unsafe { for_each_row(slot, row0, n, |i, s| m |= (pred(s) as u64) << i) };
    m
}

fn compare(op: CmpOp, a: &[u8], b: &[u8]) -> bool {
    match op {
        CmpOp::Eq => return a.len() == b.len() && a == b,
        CmpOp::Ne => return a.len() != b.len() || a != b,
        _ => {}
    }
    let o = a.cmp(b);
    match op {
        CmpOp::Eq => o.is_eq(),
        CmpOp::Ne => o.is_ne(),
        CmpOp::Lt => o.is_lt(),
        CmpOp::Le => o.is_le(),
        CmpOp::Gt => o.is_gt(),
        CmpOp::Ge => o.is_ge(),
    }
}

/// State of a comparison with a literal: `column <op> literal`.
pub(crate) struct CompareLiteral {
    pub op: CmpOp,
    pub literal: Vec<u8>,
}

unsafe extern "C" fn str_cmp_literal(
    state: *const u8,
    a: *const Slot,
    _b: *const Slot,
    row0: u64,
    n: u64,
    _out: *mut u8,
) -> u64 {
    // SAFETY: the kernel passes the CompareLiteral it was built with and a Utf8 slot.
    unsafe {
        let s = &*(state as *const CompareLiteral);
        mask(a, row0, n, |v| compare(s.op, v, &s.literal))
    }
}

/// State of a comparison of two columns.
pub(crate) struct CompareColumns {
    pub op: CmpOp,
}

unsafe extern "C" fn str_cmp_columns(
    state: *const u8,
    a: *const Slot,
    b: *const Slot,
    row0: u64,
    n: u64,
    _out: *mut u8,
) -> u64 {
    // SAFETY: the kernel passes the CompareColumns it was built with and two Utf8
    // slots of the same batch.
    unsafe {
        let s = &*(state as *const CompareColumns);
        let mut m = 0u64;
        for i in 0..n {
            m |= (compare(s.op, row_bytes(a, row0 + i), row_bytes(b, row0 + i)) as u64) << i;
        }
        m
    }
}

/// The bytes of one row of a Utf8 slot.
///
/// # Safety
/// As [`for_each_row`], with `row` a row of the array.
unsafe fn row_bytes<'a>(slot: *const Slot, row: u64) -> &'a [u8] {
    // SAFETY: forwarded from the caller; offsets row and row + 1 exist and bound a
    // range of the data buffer.
    unsafe {
        let slot = &*slot;
        let offsets = slot.values as *const i32;
        let (start, end) = (
            *offsets.add(row as usize) as usize,
            *offsets.add(row as usize + 1) as usize,
        );
        std::slice::from_raw_parts(slot.data.add(start), end - start)
    }
}

/// A LIKE / ILIKE pattern, classified like arrow's kernels classify it.
pub(crate) enum Pattern {
    Equal(Vec<u8>),
    Prefix(Vec<u8>),
    Suffix(Vec<u8>),
    Contains(Box<Finder<'static>>),
    IEqualAscii(Vec<u8>),
    IPrefixAscii(Vec<u8>),
    ISuffixAscii(Vec<u8>),
    Regex(Box<Regex>),
}

/// State of an ILIKE pattern whose ASCII fast path applies only to ASCII rows
/// (arrow uses the case-insensitive regex when the data is not ASCII).
pub(crate) struct ILikeAscii {
    pub fast: Pattern,
    pub regex: Regex,
}

fn has_wildcards(p: &str) -> bool {
    p.bytes().any(|b| matches!(b, b'%' | b'_' | b'\\'))
}

/// The regex for a LIKE pattern (`%` any run, `_` one character, `\` escapes).
fn like_regex(pattern: &str, case_insensitive: bool) -> Result<Regex, String> {
    let mut re = String::with_capacity(pattern.len() * 2);
    let mut chars = pattern.chars().peekable();
    if chars.peek() == Some(&'%') {
        chars.next();
    } else {
        re.push('^');
    }
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next) => re.push_str(&regex::escape(&next.to_string())),
                None => re.push_str("\\\\"),
            },
            '%' => re.push_str(".*"),
            '_' => re.push('.'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    if re.ends_with(".*") {
        re.truncate(re.len() - 2);
    } else {
        re.push('$');
    }
    RegexBuilder::new(&re)
        .case_insensitive(case_insensitive)
        .dot_matches_new_line(true)
        .build()
        .map_err(|e| format!("invalid LIKE pattern '{pattern}': {e}"))
}

/// Classifies a LIKE pattern.
pub(crate) fn like_pattern(p: &str) -> Result<Pattern, String> {
    let n = p.len();
    Ok(if !has_wildcards(p) {
        Pattern::Equal(p.as_bytes().to_vec())
    } else if p.ends_with('%') && !has_wildcards(&p[..n - 1]) {
        Pattern::Prefix(p.as_bytes()[..n - 1].to_vec())
    } else if p.starts_with('%') && !has_wildcards(&p[1..]) {
        Pattern::Suffix(p.as_bytes()[1..].to_vec())
    } else if n >= 2 && p.starts_with('%') && p.ends_with('%') && !has_wildcards(&p[1..n - 1]) {
        Pattern::Contains(Box::new(Finder::new(&p.as_bytes()[1..n - 1]).into_owned()))
    } else {
        Pattern::Regex(Box::new(like_regex(p, false)?))
    })
}

/// Classifies an ILIKE pattern: the ASCII shortcut with its regex fallback, or a regex.
pub(crate) fn ilike_pattern(p: &str) -> Result<Result<ILikeAscii, Regex>, String> {
    let regex = like_regex(p, true)?;
    let n = p.len();
    if p.is_ascii() {
        let fast = if !has_wildcards(p) {
            Some(Pattern::IEqualAscii(p.as_bytes().to_vec()))
        } else if p.ends_with('%') && !p.ends_with("\\%") && !has_wildcards(&p[..n - 1]) {
            Some(Pattern::IPrefixAscii(p.as_bytes()[..n - 1].to_vec()))
        } else if p.starts_with('%') && !has_wildcards(&p[1..]) {
            Some(Pattern::ISuffixAscii(p.as_bytes()[1..].to_vec()))
        } else {
            None
        };
        if let Some(fast) = fast {
            return Ok(Ok(ILikeAscii { fast, regex }));
        }
    }
    Ok(Err(regex))
}

/// `v` starts with `prefix`, compared byte by byte: patterns are short, and a loop
/// beats a call to `memcmp` for a few bytes.
#[inline(always)]
fn starts_with(v: &[u8], prefix: &[u8]) -> bool {
    v.len() >= prefix.len() && prefix.iter().zip(v).all(|(a, b)| a == b)
}

/// `v` ends with `suffix`, byte by byte.
#[inline(always)]
fn ends_with(v: &[u8], suffix: &[u8]) -> bool {
    v.len() >= suffix.len() && starts_with(&v[v.len() - suffix.len()..], suffix)
}

fn matches(p: &Pattern, v: &[u8]) -> bool {
    match p {
        Pattern::Equal(s) => v == s.as_slice(),
        Pattern::Prefix(s) => starts_with(v, s),
        Pattern::Suffix(s) => ends_with(v, s),
        Pattern::Contains(f) => f.find(v).is_some(),
        Pattern::IEqualAscii(s) => v.eq_ignore_ascii_case(s),
        Pattern::IPrefixAscii(s) => v.len() >= s.len() && v[..s.len()].eq_ignore_ascii_case(s),
        Pattern::ISuffixAscii(s) => {
            v.len() >= s.len() && v[v.len() - s.len()..].eq_ignore_ascii_case(s)
        }
        Pattern::Regex(r) => r.is_match(v),
    }
}

macro_rules! like_helper {
    ($name:ident, $variant:ident) => {
        unsafe extern "C" fn $name(
            state: *const u8,
            a: *const Slot,
            _b: *const Slot,
            row0: u64,
            n: u64,
            _out: *mut u8,
        ) -> u64 {
            // SAFETY: the kernel passes the Pattern it was built with and a Utf8 slot.
            unsafe {
                let p = &*(state as *const Pattern);
                match p {
                    Pattern::$variant(s) => mask(a, row0, n, |v| matches_inline!($variant, s, v)),
                    other => mask(a, row0, n, |v| matches(other, v)),
                }
            }
        }
    };
}

macro_rules! matches_inline {
    (Equal, $s:expr, $v:expr) => {
        $v == $s.as_slice()
    };
    (Prefix, $s:expr, $v:expr) => {
        starts_with($v, $s)
    };
    (Suffix, $s:expr, $v:expr) => {
        ends_with($v, $s)
    };
    (Contains, $s:expr, $v:expr) => {
        $s.find($v).is_some()
    };
    (Regex, $s:expr, $v:expr) => {
        $s.is_match($v)
    };
}

like_helper!(like_equal, Equal);
like_helper!(like_prefix, Prefix);
like_helper!(like_suffix, Suffix);
like_helper!(like_contains, Contains);
like_helper!(like_regex_helper, Regex);

unsafe extern "C" fn ilike_ascii(
    state: *const u8,
    a: *const Slot,
    _b: *const Slot,
    row0: u64,
    n: u64,
    _out: *mut u8,
) -> u64 {
    // SAFETY: the kernel passes the ILikeAscii it was built with and a Utf8 slot.
    unsafe {
        let s = &*(state as *const ILikeAscii);
        mask(a, row0, n, |v| {
            if v.is_ascii() {
                matches(&s.fast, v)
            } else {
                s.regex.is_match(v)
            }
        })
    }
}

/// State of `column IN ('a', 'b', …)`: a short list is scanned (length first), a
/// long one hashed.
pub(crate) enum InSet {
    Few(Vec<Vec<u8>>),
    Many(HashSet<Vec<u8>>),
}

impl InSet {
    pub(crate) fn new(values: HashSet<Vec<u8>>) -> InSet {
        if values.len() <= 8 {
            InSet::Few(values.into_iter().collect())
        } else {
            InSet::Many(values)
        }
    }

    fn contains(&self, v: &[u8]) -> bool {
        match self {
            InSet::Few(list) => list.iter().any(|x| x.len() == v.len() && x.as_slice() == v),
            InSet::Many(set) => set.contains(v),
        }
    }
}

unsafe extern "C" fn str_in(
    state: *const u8,
    a: *const Slot,
    _b: *const Slot,
    row0: u64,
    n: u64,
    _out: *mut u8,
) -> u64 {
    // SAFETY: the kernel passes the InSet it was built with and a Utf8 slot.
    unsafe {
        let s = &*(state as *const InSet);
        mask(a, row0, n, |v| s.contains(v))
    }
}

/// State of `length(column)` (characters); no fields.
pub(crate) struct Length;

unsafe extern "C" fn str_length(
    _state: *const u8,
    a: *const Slot,
    _b: *const Slot,
    row0: u64,
    n: u64,
    out: *mut u8,
) -> u64 {
    // SAFETY: the kernel passes a Utf8 slot and a buffer of 64 i32 values (n ≤ 64).
    unsafe {
        let out = out as *mut i32;
        for_each_row(a, row0, n, |i, v| {
            let chars = v.iter().filter(|&&b| (b as i8) >= -0x40).count();
            *out.add(i) = chars as i32;
        });
    }
    0
}

/// The helper for each state kind.
pub(crate) mod helpers {
    use super::*;

    macro_rules! helper {
        ($name:ident, $f:ident) => {
            pub(crate) const $name: fn() -> Helper = || Helper {
                name: concat!("broadhead_", stringify!($f)),
                addr: ($f as HelperFn) as usize,
            };
        };
    }
    helper!(CMP_LITERAL, str_cmp_literal);
    helper!(CMP_COLUMNS, str_cmp_columns);
    helper!(LIKE_EQUAL, like_equal);
    helper!(LIKE_PREFIX, like_prefix);
    helper!(LIKE_SUFFIX, like_suffix);
    helper!(LIKE_CONTAINS, like_contains);
    helper!(LIKE_REGEX, like_regex_helper);
    helper!(ILIKE_ASCII, ilike_ascii);
    helper!(IN_SET, str_in);
    helper!(LENGTH, str_length);

    /// The helper specialized for a pattern's shape.
    pub(crate) fn for_pattern(p: &Pattern) -> Helper {
        match p {
            Pattern::Equal(_) => LIKE_EQUAL(),
            Pattern::Prefix(_) => LIKE_PREFIX(),
            Pattern::Suffix(_) => LIKE_SUFFIX(),
            Pattern::Contains(_) => LIKE_CONTAINS(),
            _ => LIKE_REGEX(),
        }
    }
}

/// Row-wise versions of the string operators, for operands the kernel computes
/// (a `CASE`, a function's result): the same comparisons and patterns as the
/// column helpers above, over the views a [`Node::Call`](broadhead_codegen::Node)
/// passes.
pub(crate) mod computed {
    use arrow::datatypes::Int32Type;
    use broadhead_codegen::CmpOp;
    use regex::bytes::Regex;

    use super::{compare, matches, ILikeAscii, InSet, Pattern};
    use crate::functions::row::{map1, map2, variadic, Bool, Utf8};
    use crate::functions::RowImpl;

    /// `a <op> b`.
    pub(crate) fn compare_strings(op: CmpOp) -> RowImpl {
        map2::<Utf8, Utf8, Bool, _>(move |a: &str, b: &str| {
            Ok(Some(compare(op, a.as_bytes(), b.as_bytes())))
        })
    }

    /// `a IS [NOT] DISTINCT FROM b`.
    pub(crate) fn distinct_strings(not: bool) -> RowImpl {
        variadic::<Utf8, Bool, _>(false, move |v: &[Option<&str>]| {
            let distinct = v.first() != v.get(1);
            Ok(Some(distinct != not))
        })
    }

    /// `s LIKE pattern`.
    pub(crate) fn like(p: Pattern) -> RowImpl {
        map1::<Utf8, Bool, _>(move |s: &str| Ok(Some(matches(&p, s.as_bytes()))))
    }

    /// `s ILIKE pattern`.
    pub(crate) fn ilike(p: Result<ILikeAscii, Regex>) -> RowImpl {
        map1::<Utf8, Bool, _>(move |s: &str| {
            let v = s.as_bytes();
            Ok(Some(match &p {
                Ok(a) if v.is_ascii() => matches(&a.fast, v),
                Ok(a) => a.regex.is_match(v),
                Err(r) => r.is_match(v),
            }))
        })
    }

    /// `s IN (…)` (found or not; NULLs in the list are the caller's).
    pub(crate) fn in_set(set: InSet) -> RowImpl {
        map1::<Utf8, Bool, _>(move |s: &str| Ok(Some(set.contains(s.as_bytes()))))
    }

    /// The number of characters.
    pub(crate) fn length() -> RowImpl {
        map1::<Utf8, Int32Type, _>(|s: &str| Ok(Some(s.chars().count() as i32)))
    }
}
