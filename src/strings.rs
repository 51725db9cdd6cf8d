//! String runtime helpers called from generated code, one per specialized shape and
//! column layout.
//!
//! Each helper has the back end's [`HelperFn`](broadhead_codegen::HelperFn) ABI: it
//! reads the rows `row0 + i` of one or two string columns for the bits `i` set in
//! `rows` (for a predicate, the rows of a block whose value matters and that its
//! quick check left undecided; for `length`, the block's), and returns a bitmask
//! (bit i for row `row0 + i`, clear for the rows not wanted), or writes those rows'
//! values. It is instantiated for the layout of the columns it reads
//! ([`SlotLayout`]: `i32` offsets, `i64` offsets, views), which it reads in place
//! ([`Rows`]); on views, comparisons with a literal and the LIKE shapes first decide
//! what a row's length and inline 4-byte prefix decide ([`Quick`]), reading the
//! row's bytes only for the rest. The state it gets is one of the structs here,
//! owned by the compiled expression for as long as the kernel can run. The
//! predicates on one column share one entry, [`column_test`]: each states only its
//! test ([`ColumnTest`]). LIKE patterns are classified exactly as arrow's
//! `like`/`ilike` kernels classify them (equality, prefix, suffix, substring, else a
//! regex), so both back ends agree byte for byte.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::marker::PhantomData;

use broadhead_codegen::{ByteLayout, CmpOp, Find, Helper, HelperFn, Slot};
use memchr::memmem::Finder;
use regex::bytes::{Regex, RegexBuilder};

use crate::layout::{Decided, Offsets32, Offsets64, Quick, SlotLayout, Views};

/// The block's rows `rows` asks for, as offsets from its first row: the positions of
/// the set bits, lowest first.
fn wanted(rows: u64) -> impl Iterator<Item = usize> {
    let mut bits = rows;
    std::iter::from_fn(move || {
        let i = bits.trailing_zeros() as usize;
        bits &= bits.wrapping_sub(1);
        (i < 64).then_some(i)
    })
}

/// The rows a helper is asked for of a string column of layout `L`: `row0 + i` for
/// the bits `i` set in `asked`. Made only by [`Rows::new`], whose caller vouches
/// that the column holds them all, so that reading them is safe.
struct Rows<'a, L> {
    slot: &'a Slot,
    row0: usize,
    asked: u64,
    layout: PhantomData<L>,
}

impl<'a, L: SlotLayout> Rows<'a, L> {
    /// The rows `row0 + i` of `slot` for the bits `i` set in `asked`.
    ///
    /// # Safety
    /// `slot` must describe a live array of layout `L`, for `'a`, holding every row
    /// asked for.
    #[inline(always)]
    unsafe fn new(slot: *const Slot, row0: u64, asked: u64) -> Rows<'a, L> {
        Rows {
            // SAFETY: the caller's promise: `slot` points to a live slot.
            slot: unsafe { &*slot },
            row0: row0 as usize,
            asked,
            layout: PhantomData,
        }
    }

    /// Each row asked for: its bit `i` and its bytes, lowest first.
    #[inline(always)]
    fn bytes(&self) -> impl Iterator<Item = (usize, &'a [u8])> + '_ {
        wanted(self.asked).map(move |i| {
            // SAFETY: the row is one asked for, which the slot holds (`Rows::new`).
            (i, unsafe { L::bytes(self.slot, self.row0 + i) })
        })
    }

    /// A mask over the rows asked for (bit `i` for row `row0 + i`; the others
    /// clear): what the layout decides from `quick` without the bytes (a view's
    /// length and prefix), through `decided`, else `pred` of the row's bytes.
    #[inline(always)]
    fn mask(
        &self,
        quick: &Quick,
        decided: impl Fn(Decided) -> bool,
        mut pred: impl FnMut(&[u8]) -> bool,
    ) -> u64 {
        let mut m = 0u64;
        for i in wanted(self.asked) {
            let row = self.row0 + i;
            // SAFETY: the row is one asked for, which the slot holds (`Rows::new`).
            let hit = match unsafe { L::decide(self.slot, row, quick) } {
                Some(d) => decided(d),
                // SAFETY: as above.
                None => pred(unsafe { L::bytes(self.slot, row) }),
            };
            m |= (hit as u64) << i;
        }
        m
    }
}

/// A predicate on the rows of one string column, as its helper ([`column_test`])
/// answers it: what differs from one such helper to the next.
trait ColumnTest {
    /// The state the helper is built with (one of the structs here).
    type State;
    /// The mask of the rows asked for where the predicate of `s` holds (the others
    /// clear).
    fn mask<L: SlotLayout>(s: &Self::State, rows: &Rows<'_, L>) -> u64;
}

/// The helper of the predicate `T` on a string column of layout `L`.
unsafe extern "C" fn column_test<T: ColumnTest, L: SlotLayout>(
    state: *const u8,
    a: *const Slot,
    _b: *const Slot,
    row0: u64,
    rows: u64,
    _out: *mut u8,
) -> u64 {
    // SAFETY: the kernel passes the state the helper was built with (a `T::State`:
    // `helpers` pairs each state with its test) and a string slot of layout `L`
    // holding the rows asked for, both live for the call.
    let (s, rows) = unsafe { (&*(state as *const T::State), Rows::<L>::new(a, row0, rows)) };
    T::mask(s, &rows)
}

/// [`Decided::Is`]'s value (helpers that are not orderings never get `Order`).
fn is(d: Decided) -> bool {
    matches!(d, Decided::Is(true))
}

fn holds(op: CmpOp, o: Ordering) -> bool {
    match op {
        CmpOp::Eq => o.is_eq(),
        CmpOp::Ne => o.is_ne(),
        CmpOp::Lt => o.is_lt(),
        CmpOp::Le => o.is_le(),
        CmpOp::Gt => o.is_gt(),
        CmpOp::Ge => o.is_ge(),
    }
}

fn compare(op: CmpOp, a: &[u8], b: &[u8]) -> bool {
    match op {
        CmpOp::Eq => a.len() == b.len() && a == b,
        CmpOp::Ne => a.len() != b.len() || a != b,
        _ => holds(op, a.cmp(b)),
    }
}

/// State of a comparison with a literal: `column <op> literal`.
pub(crate) struct CompareLiteral {
    op: CmpOp,
    literal: Vec<u8>,
    quick: Quick,
}

impl CompareLiteral {
    pub(crate) fn new(op: CmpOp, literal: &[u8]) -> CompareLiteral {
        let quick = match op {
            CmpOp::Eq | CmpOp::Ne => Quick::equal(literal),
            _ => Quick::order(literal),
        };
        CompareLiteral {
            op,
            literal: literal.to_vec(),
            quick,
        }
    }
}

impl ColumnTest for CompareLiteral {
    type State = CompareLiteral;
    #[inline(always)]
    fn mask<L: SlotLayout>(s: &CompareLiteral, rows: &Rows<'_, L>) -> u64 {
        // `<>` is decided as `=` (a view's quick check is an equality's) and negated.
        let (op, negate) = match s.op {
            CmpOp::Ne => (CmpOp::Eq, u64::MAX),
            op => (op, 0),
        };
        let decided = |d| match d {
            Decided::Is(b) => b,
            Decided::Order(o) => holds(op, o),
        };
        let m = rows.mask(&s.quick, decided, |v| compare(op, v, &s.literal));
        (m ^ negate) & rows.asked
    }
}

/// State of a comparison of two columns.
pub(crate) struct CompareColumns {
    pub op: CmpOp,
}

unsafe extern "C" fn str_cmp_columns<A: SlotLayout, B: SlotLayout>(
    state: *const u8,
    a: *const Slot,
    b: *const Slot,
    row0: u64,
    rows: u64,
    _out: *mut u8,
) -> u64 {
    // SAFETY: the kernel passes the CompareColumns it was built with and two string
    // slots of the same batch, of layouts A and B, holding the rows asked for.
    let (s, a, b) = unsafe {
        (
            &*(state as *const CompareColumns),
            Rows::<A>::new(a, row0, rows),
            Rows::<B>::new(b, row0, rows),
        )
    };
    let mut m = 0u64;
    for ((i, x), (_, y)) in a.bytes().zip(b.bytes()) {
        m |= (compare(s.op, x, y) as u64) << i;
    }
    m
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
    /// Contains the (lower-cased) needle, ASCII letters in either case.
    IContainsAscii(Vec<u8>),
    Regex(Box<Regex>),
}

impl Pattern {
    /// The literal a `LIKE` shape compares rows with, and how (`None`: a regex, or
    /// an ILIKE shape).
    pub(crate) fn literal_shape(&self) -> Option<(Find, &[u8])> {
        Some(match self {
            Pattern::Equal(s) => (Find::Equal, s),
            Pattern::Prefix(s) => (Find::Prefix, s),
            Pattern::Suffix(s) => (Find::Suffix, s),
            Pattern::Contains(f) => (Find::Contains, f.needle()),
            _ => return None,
        })
    }
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
        } else if n >= 2
            && p.starts_with('%')
            && p.ends_with('%')
            && !p.ends_with("\\%")
            && !has_wildcards(&p[1..n - 1])
        {
            Some(Pattern::IContainsAscii(
                p.as_bytes()[1..n - 1].to_ascii_lowercase(),
            ))
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

/// Whether `v` contains `needle` (lower case), ASCII letters in either case: the
/// places that hold the needle's first byte in either case (found by `memchr2`,
/// many bytes at a time), each compared with the needle.
fn contains_ignore_ascii_case(v: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else {
        return true;
    };
    if v.len() < needle.len() {
        return false;
    }
    let last_start = v.len() - needle.len();
    memchr::memchr2_iter(first, first.to_ascii_uppercase(), &v[..=last_start])
        .any(|i| v[i..i + needle.len()].eq_ignore_ascii_case(needle))
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
        Pattern::IContainsAscii(s) => contains_ignore_ascii_case(v, s),
        Pattern::Regex(r) => r.is_match(v),
    }
}

/// State of `column LIKE pattern` (and of ILIKE's regex): the pattern and what a
/// view's length and prefix decide.
pub(crate) struct LikeColumn {
    pattern: Pattern,
    quick: Quick,
}

impl LikeColumn {
    pub(crate) fn new(pattern: Pattern) -> LikeColumn {
        let quick = match &pattern {
            Pattern::Equal(s) => Quick::equal(s),
            Pattern::Prefix(s) => Quick::prefix(s),
            Pattern::Suffix(s) => Quick::min_len(s),
            Pattern::Contains(f) => Quick::min_len(f.needle()),
            _ => Quick::None,
        };
        LikeColumn { pattern, quick }
    }
}

/// A `LIKE` predicate specialized for one pattern shape (the one
/// [`helpers::for_pattern`] picks it for), whose test is inlined into the row loop;
/// a pattern of another shape is matched in full.
macro_rules! like_shape {
    ($(#[$doc:meta])* $marker:ident, $variant:ident, |$s:ident, $v:ident| $test:expr) => {
        $(#[$doc])*
        struct $marker;

        impl ColumnTest for $marker {
            type State = LikeColumn;
            #[inline(always)]
            fn mask<L: SlotLayout>(p: &LikeColumn, rows: &Rows<'_, L>) -> u64 {
                match &p.pattern {
                    Pattern::$variant($s) => rows.mask(&p.quick, is, |$v| $test),
                    other => rows.mask(&p.quick, is, |v| matches(other, v)),
                }
            }
        }
    };
}

like_shape!(
    /// `LIKE` an equality.
    LikeEqual, Equal, |s, v| v == s.as_slice()
);
like_shape!(
    /// `LIKE` a prefix.
    LikePrefix, Prefix, |s, v| starts_with(v, s)
);
like_shape!(
    /// `LIKE` a suffix.
    LikeSuffix, Suffix, |s, v| ends_with(v, s)
);
like_shape!(
    /// `LIKE` a substring.
    LikeContains, Contains, |f, v| f.find(v).is_some()
);
like_shape!(
    /// `LIKE` a regex (and `ILIKE` one).
    LikeRegex, Regex, |r, v| r.is_match(v)
);

impl ColumnTest for ILikeAscii {
    type State = ILikeAscii;
    #[inline(always)]
    fn mask<L: SlotLayout>(s: &ILikeAscii, rows: &Rows<'_, L>) -> u64 {
        rows.mask(&Quick::None, is, |v| {
            if v.is_ascii() {
                matches(&s.fast, v)
            } else {
                s.regex.is_match(v)
            }
        })
    }
}

/// Whether the UTF-8 `s` upper-cased (with `upper`, else lower-cased) is `literal`:
/// an ASCII `s` is compared byte by byte as mapped, without building the mapped
/// string (small enough to be inlined into a block loop); other strings are mapped
/// in full, out of line (Unicode's mapping can change their length: `upper('ß')` is
/// `SS`).
#[inline]
fn mapped_equals(upper: bool, s: &[u8], literal: &[u8]) -> bool {
    if !s.is_ascii() {
        unicode_mapped_equals(upper, s, literal)
    } else if s.len() != literal.len() {
        false
    } else if upper {
        s.iter()
            .zip(literal)
            .all(|(c, l)| c.to_ascii_uppercase() == *l)
    } else {
        s.iter()
            .zip(literal)
            .all(|(c, l)| c.to_ascii_lowercase() == *l)
    }
}

/// Whether `s` (not ASCII) upper- (or lower-) cased is `literal` (never, for bytes
/// that are not UTF-8, which string columns do not hold).
#[cold]
#[inline(never)]
fn unicode_mapped_equals(upper: bool, s: &[u8], literal: &[u8]) -> bool {
    match std::str::from_utf8(s) {
        Ok(s) if upper => s.to_uppercase().as_bytes() == literal,
        Ok(s) => s.to_lowercase().as_bytes() == literal,
        Err(_) => false,
    }
}

/// Whether the UTF-8 `s` upper-cased (with `upper`, else lower-cased) matches
/// `pattern`: an equality as [`mapped_equals`]; an ASCII `s` of up to
/// [`MAPPED_ON_STACK`] bytes is mapped into a buffer on the stack and matched
/// there; other strings are mapped in full, out of line.
fn mapped_matches(upper: bool, s: &[u8], pattern: &Pattern) -> bool {
    if let Pattern::Equal(literal) = pattern {
        return mapped_equals(upper, s, literal);
    }
    let mut buf = [0u8; MAPPED_ON_STACK];
    match buf.get_mut(..s.len()) {
        Some(mapped) if s.is_ascii() => {
            mapped.copy_from_slice(s);
            map_ascii_words(&mut buf, s.len(), upper);
            matches(pattern, &buf[..s.len()])
        }
        _ => unicode_mapped_matches(upper, s, pattern),
    }
}

/// The longest ASCII string [`mapped_matches`] maps on the stack.
const MAPPED_ON_STACK: usize = 64;

/// Upper- (or lower-) cases the ASCII bytes of `buf` eight at a time, up to the
/// word holding byte `len - 1` (what follows `len` is left mapped too: the
/// caller reads only `..len`). Per byte `b < 0x80`, `b + 0x3f` sets the high bit
/// iff `b >= 'A'` and `b + 0x25` iff `b > 'Z'`, with no carry into the next
/// byte; the difference is the letters, whose `0x20` bit is the case.
fn map_ascii_words(buf: &mut [u8; MAPPED_ON_STACK], len: usize, upper: bool) {
    const ONES: u64 = u64::MAX / 255;
    let (first, last) = match upper {
        true => (b'a', b'z'),
        false => (b'A', b'Z'),
    };
    let (at_least, beyond) = (
        u64::from(0x80 - first) * ONES,
        u64::from(0x7f - last) * ONES,
    );
    for chunk in buf.chunks_exact_mut(8).take(len.div_ceil(8)) {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let letters = (w + at_least) & !(w + beyond) & (0x80 * ONES);
        chunk.copy_from_slice(&(w ^ (letters >> 2)).to_le_bytes());
    }
}

/// Whether `s` (long, or not ASCII) upper- (or lower-) cased matches `pattern`
/// (never, for bytes that are not UTF-8, which string columns do not hold).
#[cold]
#[inline(never)]
fn unicode_mapped_matches(upper: bool, s: &[u8], pattern: &Pattern) -> bool {
    match std::str::from_utf8(s) {
        Ok(s) if upper => matches(pattern, s.to_uppercase().as_bytes()),
        Ok(s) => matches(pattern, s.to_lowercase().as_bytes()),
        Err(_) => false,
    }
}

/// State of `upper(column)` or `lower(column)` compared with a literal or matched
/// with a `LIKE` pattern, whose rows of up to eight ASCII bytes the kernel decides
/// ([`QuickTest::ShortRow`]) where the pattern has a literal shape.
///
/// [`QuickTest::ShortRow`]: broadhead_codegen::QuickTest::ShortRow
pub(crate) struct CaseMapped {
    pub upper: bool,
    pub pattern: Pattern,
}

impl ColumnTest for CaseMapped {
    type State = CaseMapped;
    #[inline(always)]
    fn mask<L: SlotLayout>(s: &CaseMapped, rows: &Rows<'_, L>) -> u64 {
        rows.mask(&Quick::None, is, |v| mapped_matches(s.upper, v, &s.pattern))
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

impl ColumnTest for InSet {
    type State = InSet;
    #[inline(always)]
    fn mask<L: SlotLayout>(s: &InSet, rows: &Rows<'_, L>) -> u64 {
        rows.mask(&Quick::None, is, |v| s.contains(v))
    }
}

/// State of `length(column)` (characters); no fields.
pub(crate) struct Length;

/// The characters of UTF-8 `bytes`: the bytes that do not continue a character
/// (`10xxxxxx`), counted eight at a time.
pub(crate) fn char_count(bytes: &[u8]) -> usize {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut chunks = bytes.chunks_exact(8);
    let mut continuing = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        // Bit 7 of each byte set and bit 6 (shifted up into bit 7) clear.
        continuing += (w & !(w << 1) & HIGH).count_ones() as usize;
    }
    let rest = chunks.remainder();
    continuing += rest.iter().filter(|&&b| b & 0xC0 == 0x80).count();
    bytes.len() - continuing
}

unsafe extern "C" fn str_length<L: SlotLayout>(
    _state: *const u8,
    a: *const Slot,
    _b: *const Slot,
    row0: u64,
    rows: u64,
    out: *mut u8,
) -> u64 {
    // SAFETY: the kernel passes a string slot of layout L holding the rows asked for.
    let a = unsafe { Rows::<L>::new(a, row0, rows) };
    let out = out as *mut i32;
    for (i, v) in a.bytes() {
        let chars = char_count(v);
        // SAFETY: `out` is the kernel's helper buffer, `LANES` (16) i64 values: room
        // for the `LANES` i32 values of a block, whose rows mask `rows` is (so
        // `i < LANES`).
        unsafe { *out.add(i) = chars as i32 };
    }
    0
}

/// The helper for each state kind, instantiated for the layout of the column(s)
/// it reads.
pub(crate) mod helpers {
    use super::*;

    /// `$f` (with its test `$test`, if it takes one) instantiated for `layout`,
    /// named `broadhead_<$symbol>_<layout>`.
    macro_rules! helper {
        ($name:ident, $symbol:literal, $f:ident $(::<$test:ty>)?) => {
            pub(crate) fn $name(layout: ByteLayout) -> Helper {
                let (name, f): (&'static str, HelperFn) = match layout {
                    ByteLayout::Offsets32 => (
                        concat!("broadhead_", $symbol, "_offsets32"),
                        super::$f::<$($test,)? Offsets32>,
                    ),
                    ByteLayout::Offsets64 => (
                        concat!("broadhead_", $symbol, "_offsets64"),
                        super::$f::<$($test,)? Offsets64>,
                    ),
                    ByteLayout::Views => (
                        concat!("broadhead_", $symbol, "_views"),
                        super::$f::<$($test,)? Views>,
                    ),
                };
                Helper {
                    name,
                    addr: f as usize,
                }
            }
        };
    }
    helper!(
        cmp_literal,
        "str_cmp_literal",
        column_test::<CompareLiteral>
    );
    helper!(like_equal, "like_equal", column_test::<LikeEqual>);
    helper!(like_prefix, "like_prefix", column_test::<LikePrefix>);
    helper!(like_suffix, "like_suffix", column_test::<LikeSuffix>);
    helper!(like_contains, "like_contains", column_test::<LikeContains>);
    helper!(like_regex, "like_regex_helper", column_test::<LikeRegex>);
    helper!(ilike_ascii, "ilike_ascii", column_test::<ILikeAscii>);
    helper!(case_mapped, "case_mapped", column_test::<CaseMapped>);
    helper!(in_set, "str_in", column_test::<InSet>);
    helper!(length, "str_length", str_length);

    /// The comparison of two string columns of layouts `a` and `b`.
    pub(crate) fn cmp_columns(a: ByteLayout, b: ByteLayout) -> Helper {
        macro_rules! pairs {
            ($(($la:ident, $lb:ident, $name:literal)),*) => {
                match (a, b) {
                    $((ByteLayout::$la, ByteLayout::$lb) => Helper {
                        name: concat!("broadhead_str_cmp_columns_", $name),
                        addr: (str_cmp_columns::<$la, $lb> as HelperFn) as usize,
                    },)*
                }
            };
        }
        pairs!(
            (Offsets32, Offsets32, "32_32"),
            (Offsets32, Offsets64, "32_64"),
            (Offsets32, Views, "32_v"),
            (Offsets64, Offsets32, "64_32"),
            (Offsets64, Offsets64, "64_64"),
            (Offsets64, Views, "64_v"),
            (Views, Offsets32, "v_32"),
            (Views, Offsets64, "v_64"),
            (Views, Views, "v_v")
        )
    }

    /// The helper specialized for a pattern's shape.
    pub(crate) fn for_pattern(p: &Pattern, layout: ByteLayout) -> Helper {
        match p {
            Pattern::Equal(_) => like_equal(layout),
            Pattern::Prefix(_) => like_prefix(layout),
            Pattern::Suffix(_) => like_suffix(layout),
            Pattern::Contains(_) => like_contains(layout),
            _ => like_regex(layout),
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

    use super::{compare, mapped_equals, mapped_matches, matches, ILikeAscii, InSet, Pattern};
    use crate::functions::row::{map1, map2, variadic, Blob, Bool, Utf8};
    use crate::functions::RowImpl;

    /// `a <op> b`, byte by byte (VARCHAR and BLOB alike).
    pub(crate) fn compare_strings(op: CmpOp) -> RowImpl {
        map2::<Blob, Blob, Bool, _>(move |a: &[u8], b: &[u8]| Ok(Some(compare(op, a, b))))
    }

    /// `a <op> literal`, byte by byte (VARCHAR and BLOB alike): the literal held by
    /// the function rather than passed per row.
    pub(crate) fn compare_to_literal(op: CmpOp, literal: Vec<u8>) -> RowImpl {
        map1::<Blob, Bool, _>(move |a: &[u8]| Ok(Some(compare(op, a, &literal))))
    }

    /// `upper(s) = literal` (with `upper`, else `lower(s) = literal`), or `<>` with
    /// `negated`: an ASCII `s` is compared byte by byte as mapped, without building
    /// the mapped string; other strings are mapped in full (Unicode's mapping can
    /// change their length: `upper('ß')` is `SS`).
    pub(crate) fn case_mapped_equals(upper: bool, literal: Vec<u8>, negated: bool) -> RowImpl {
        map1::<Utf8, Bool, _>(move |s: &str| {
            Ok(Some(
                mapped_equals(upper, s.as_bytes(), &literal) != negated,
            ))
        })
    }

    /// `upper(s) LIKE pattern` (with `upper`, else `lower(s) LIKE pattern`), without
    /// writing the mapped string to the arena and reading it back in a second call
    /// ([`mapped_matches`]).
    pub(crate) fn case_mapped_like(upper: bool, pattern: Pattern) -> RowImpl {
        map1::<Utf8, Bool, _>(move |s: &str| {
            Ok(Some(mapped_matches(upper, s.as_bytes(), &pattern)))
        })
    }

    /// `a IS [NOT] DISTINCT FROM b` (VARCHAR and BLOB alike).
    pub(crate) fn distinct_strings(not: bool) -> RowImpl {
        variadic::<Blob, Bool, _>(false, move |v: &[Option<&[u8]>]| {
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

    /// `s IN (…)` (found or not; NULLs in the list are the caller's), for VARCHAR
    /// and BLOB alike.
    pub(crate) fn in_set(set: InSet) -> RowImpl {
        map1::<Blob, Bool, _>(move |s: &[u8]| Ok(Some(set.contains(s))))
    }

    /// The number of characters.
    pub(crate) fn length() -> RowImpl {
        map1::<Utf8, Int32Type, _>(|s: &str| Ok(Some(s.chars().count() as i32)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::StringArray;

    /// The bound the kernel's `upper(s) = 'LIT'` check relies on
    /// (`QuickTest::short_row_limit`): every character has at most three times as
    /// many bytes as its upper- or lower-case mapping, so a string longer than three
    /// times a literal never maps to it.
    #[test]
    fn characters_shrink_at_most_threefold_when_mapped() {
        let mut widest = 0;
        for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
            for mapped in [
                c.to_uppercase().collect::<String>(),
                c.to_lowercase().collect::<String>(),
            ] {
                assert!(c.len_utf8() <= 3 * mapped.len(), "{c:?} maps to {mapped:?}");
                if c.len_utf8() == 3 * mapped.len() {
                    widest = widest.max(c.len_utf8());
                }
            }
        }
        // The Kelvin sign, three bytes, lower-cases to `k`.
        assert_eq!(widest, 3);
        assert!(mapped_equals(false, "\u{212A}".as_bytes(), b"k"));
    }

    /// Helpers read and answer only the rows their `rows` mask asks for: the bits of
    /// the others are clear, `<>` (a negated `=`) included.
    #[test]
    fn ilike_contains_ignores_ascii_case() {
        let Ok(Ok(ILikeAscii { fast, regex })) = ilike_pattern("%SpeC%") else {
            panic!("'%SpeC%' has an ASCII shortcut");
        };
        for (v, expected) in [
            ("special requests", true),
            ("unusual SPECIAL", true),
            ("spe", false),
            ("", false),
            ("xsPecx", true),
            ("s p e c", false),
        ] {
            assert_eq!(matches(&fast, v.as_bytes()), expected, "{v:?}");
            assert_eq!(regex.is_match(v.as_bytes()), expected, "{v:?} by the regex");
        }
        assert!(contains_ignore_ascii_case(b"anything", b""));
        assert!(!contains_ignore_ascii_case(b"ab", b"abc"));
        assert!(contains_ignore_ascii_case(b"xxABC", b"abc"));
    }

    #[test]
    fn char_count_counts_code_points() {
        for s in [
            "",
            "a",
            "abcdefgh",
            "abcdefghi",
            "é",
            "naïve café, 東京 and 🦀🦀 over eight bytes",
            "\u{10FFFF}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}x",
        ] {
            for start in 0..s.len() {
                if let Some(t) = s.get(start..) {
                    assert_eq!(char_count(t.as_bytes()), t.chars().count(), "{t:?}");
                }
            }
        }
    }

    #[test]
    fn helpers_read_and_answer_only_the_rows_asked_for() {
        let strings = StringArray::from(vec!["abc", "xabx", "ab", "zzz", "cab"]);
        let mut extra = crate::inputs::Extra::default();
        let slot = crate::inputs::byte_slot(&strings, &mut extra).expect("a string slot");
        let mut read = Vec::new();
        // SAFETY: the slot describes `strings`, which has the rows asked for (1, 2, 4).
        let rows = unsafe { Rows::<Offsets32>::new(&slot, 0, 0b10110) };
        let m = rows.mask(&Quick::None, is, |v| {
            read.push(v.to_vec());
            v.windows(2).any(|w| w == b"ab")
        });
        assert_eq!(m, 0b10110);
        assert_eq!(read, [&b"xabx"[..], b"ab", b"cab"]);

        let not_ab = CompareLiteral::new(CmpOp::Ne, b"ab");
        let state = &not_ab as *const CompareLiteral as *const u8;
        // SAFETY: the state is a CompareLiteral and the slot an `i32`-offsets one
        // with rows 1 .. 5.
        let m = unsafe {
            column_test::<CompareLiteral, Offsets32>(
                state,
                &slot,
                std::ptr::null(),
                1,
                0b0101,
                std::ptr::null_mut(),
            )
        };
        // Rows 1 ("xabx") and 3 ("zzz") asked for, both not "ab"; rows 2 and 4 not.
        assert_eq!(m, 0b0101);
    }
}
