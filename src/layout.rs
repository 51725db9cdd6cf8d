//! Variable-length columns (strings, and bytes in general) in each of Arrow's three
//! layouts, read in place by both back ends: `i32` offsets (`Utf8`, `Binary`), `i64`
//! offsets (`LargeUtf8`, `LargeBinary`) and 16-byte views (`Utf8View`, `BinaryView`).
//!
//! Expressions are bound with every string column typed `Utf8` (VARCHAR is one SQL
//! type); the layout is a property of the batch's arrays, which the interpreter reads
//! through [`str_value`], and which the JIT's kernels read through
//! the input slots `crate::inputs` binds (the loader in `codegen` turns each layout
//! into a view per row) and through the [`SlotLayout`] readers its string helpers are
//! instantiated for. Nothing is converted or copied on the way in.

use arrow::array::{Array, AsArray};
use arrow::datatypes::DataType;
use broadhead_codegen::{ByteLayout, QuickTest, Slot};

/// The layout of a variable-length type, if it is one.
pub(crate) fn byte_layout(t: &DataType) -> Option<ByteLayout> {
    Some(match t {
        DataType::Utf8 | DataType::Binary => ByteLayout::Offsets32,
        DataType::LargeUtf8 | DataType::LargeBinary => ByteLayout::Offsets64,
        DataType::Utf8View | DataType::BinaryView => ByteLayout::Views,
        _ => return None,
    })
}

/// Whether `t` is a string type (any layout of VARCHAR).
pub(crate) fn is_string(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

/// Row `i` of a string array of any layout (the row is valid).
///
/// # Panics
/// If `a` is not a string array (the binder gives string functions strings only).
pub(crate) fn str_value(a: &dyn Array, i: usize) -> &str {
    if let Some(s) = a.as_string_opt::<i32>() {
        s.value(i)
    } else if let Some(s) = a.as_string_opt::<i64>() {
        s.value(i)
    } else {
        a.as_string_view().value(i)
    }
}

/// Row `i` of a BLOB array of any layout as its bytes, or of a string array as its
/// UTF-8 bytes (the row is valid).
///
/// # Panics
/// If `a` is neither (the binder gives BLOB functions BLOBs or strings only).
pub(crate) fn bytes_value(a: &dyn Array, i: usize) -> &[u8] {
    match a.data_type() {
        t if is_string(t) => str_value(a, i).as_bytes(),
        DataType::LargeBinary => a.as_binary::<i64>().value(i),
        DataType::BinaryView => a.as_binary_view().value(i),
        _ => a.as_binary::<i32>().value(i),
    }
}

/// What a view's length and first four bytes can decide about a row without
/// reading its bytes (see [`SlotLayout::decide`]), precomputed from a literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quick {
    /// Nothing: read the bytes.
    None,
    /// Equality with a literal of `len` bytes whose first `min(len, 4)` bytes are
    /// `prefix` (as a view holds them, little-endian, zero-padded); `view` is the
    /// literal's whole view when it is inline (12 bytes or fewer).
    Equal {
        len: u32,
        prefix: u32,
        view: Option<u128>,
    },
    /// An ordering with a literal whose first four bytes, zero-padded, read
    /// big-endian, are `key`: rows whose key differs are decided by the keys.
    Order { key: u32 },
    /// Starts with a literal of `len` bytes whose first `min(len, 4)` bytes are
    /// `prefix` (masked by `mask`).
    Prefix { len: u32, prefix: u32, mask: u32 },
    /// Rows shorter than `len` bytes are FALSE (a suffix or a substring).
    MinLen(u32),
}

/// The first `min(len, 4)` bytes of `b`, as a view holds them, and their mask.
fn prefix_of(b: &[u8]) -> (u32, u32) {
    let mut four = [0u8; 4];
    let k = b.len().min(4);
    four[..k].copy_from_slice(&b[..k]);
    let mask = if k == 4 {
        u32::MAX
    } else {
        (1u32 << (8 * k)) - 1
    };
    (u32::from_le_bytes(four), mask)
}

/// The inline view of `b` (12 bytes or fewer): length, bytes, zero padding.
pub(crate) fn inline_view(b: &[u8]) -> Option<u128> {
    if b.len() > 12 {
        return None;
    }
    let mut bytes = [0u8; 16];
    bytes[..4].copy_from_slice(&(b.len() as u32).to_le_bytes());
    bytes[4..4 + b.len()].copy_from_slice(b);
    Some(u128::from_le_bytes(bytes))
}

impl Quick {
    /// `= literal`.
    pub(crate) fn equal(literal: &[u8]) -> Quick {
        match u32::try_from(literal.len()) {
            Ok(len) => Quick::Equal {
                len,
                prefix: prefix_of(literal).0,
                view: inline_view(literal),
            },
            Err(_) => Quick::None,
        }
    }

    /// `<`, `<=`, `>`, `>=` with `literal`.
    pub(crate) fn order(literal: &[u8]) -> Quick {
        Quick::Order {
            key: prefix_of(literal).0.swap_bytes(),
        }
    }

    /// `LIKE 'literal%'`.
    pub(crate) fn prefix(literal: &[u8]) -> Quick {
        match u32::try_from(literal.len()) {
            Ok(len) => {
                let (prefix, mask) = prefix_of(literal);
                Quick::Prefix { len, prefix, mask }
            }
            Err(_) => Quick::None,
        }
    }

    /// Needs at least `literal.len()` bytes.
    pub(crate) fn min_len(literal: &[u8]) -> Quick {
        u32::try_from(literal.len()).map_or(Quick::None, Quick::MinLen)
    }
}

/// The parameters of a kernel's [`QuickTest`] against `literal` (see its variants).
pub(crate) fn quick_params(test: QuickTest, literal: &[u8]) -> [u64; 2] {
    let prefix = u64::from(prefix_of(literal).0);
    match test {
        QuickTest::Equal { .. } => {
            let mut high = [0u8; 8];
            if literal.len() <= 12 && literal.len() > 4 {
                high[..literal.len() - 4].copy_from_slice(&literal[4..]);
            }
            [
                literal.len() as u64 | prefix << 32,
                u64::from_le_bytes(high),
            ]
        }
        QuickTest::Order(_) => [u64::from((prefix as u32).swap_bytes()), 0],
        QuickTest::Prefix => [literal.len() as u64, prefix],
        QuickTest::ShortRow { find, case } => {
            let len = u32::try_from(literal.len()).unwrap_or(u32::MAX);
            let most = QuickTest::short_row_limit(find, case, len);
            let mut first = [0u8; 8];
            if literal.len() <= 8 {
                first[..literal.len()].copy_from_slice(literal);
            }
            [
                u64::from(len) | u64::from(most) << 32,
                u64::from_le_bytes(first),
            ]
        }
    }
}

/// How a string helper reads rows of an input [`Slot`] of one layout.
pub(crate) trait SlotLayout: 'static {
    /// Row `row`'s bytes.
    ///
    /// # Safety
    /// `slot` describes a live array of this layout (as `crate::inputs` binds it) with
    /// more than `row` rows.
    unsafe fn bytes<'a>(slot: &Slot, row: usize) -> &'a [u8];

    /// What `quick` decides about row `row` from what the layout holds without the
    /// bytes (`None`: read them). For `Order`, `Some(o)` is the row's ordering
    /// against the literal.
    ///
    /// # Safety
    /// As [`SlotLayout::bytes`].
    #[inline(always)]
    unsafe fn decide(_slot: &Slot, _row: usize, _quick: &Quick) -> Option<Decided> {
        None
    }
}

/// What [`SlotLayout::decide`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decided {
    /// The predicate's value.
    Is(bool),
    /// The row's ordering against the literal.
    Order(std::cmp::Ordering),
}

/// `i32` offsets.
pub(crate) struct Offsets32;
/// `i64` offsets.
pub(crate) struct Offsets64;
/// 16-byte views.
pub(crate) struct Views;

impl SlotLayout for Offsets32 {
    #[inline(always)]
    unsafe fn bytes<'a>(slot: &Slot, row: usize) -> &'a [u8] {
        // SAFETY: the caller's contract: offsets row and row + 1 exist and bound a
        // range of the data buffer (arrow validates offsets when the array is built).
        unsafe {
            let offsets = slot.values as *const i32;
            let (start, end) = (*offsets.add(row) as usize, *offsets.add(row + 1) as usize);
            std::slice::from_raw_parts(slot.data.add(start), end - start)
        }
    }
}

impl SlotLayout for Offsets64 {
    #[inline(always)]
    unsafe fn bytes<'a>(slot: &Slot, row: usize) -> &'a [u8] {
        // SAFETY: as for `Offsets32`, with i64 offsets.
        unsafe {
            let offsets = slot.values as *const i64;
            let (start, end) = (*offsets.add(row) as usize, *offsets.add(row + 1) as usize);
            std::slice::from_raw_parts(slot.data.add(start), end - start)
        }
    }
}

impl Views {
    /// Row `row`'s view.
    ///
    /// # Safety
    /// As [`SlotLayout::bytes`].
    #[inline(always)]
    unsafe fn view(slot: &Slot, row: usize) -> u128 {
        // SAFETY: the slot holds more than `row` views of 16 bytes.
        unsafe { std::ptr::read_unaligned((slot.values as *const u128).add(row)) }
    }
}

impl SlotLayout for Views {
    #[inline(always)]
    unsafe fn bytes<'a>(slot: &Slot, row: usize) -> &'a [u8] {
        // SAFETY: the caller's contract; arrow validates a view array when it is
        // built (an inline value is within its view; a longer one names a data
        // buffer, whose address the table at `data` holds, and a range within it).
        unsafe {
            let view = slot.values.add(16 * row);
            let len = std::ptr::read_unaligned(view as *const u32) as usize;
            if len <= 12 {
                return std::slice::from_raw_parts(view.add(4), len);
            }
            let index = std::ptr::read_unaligned(view.add(8) as *const u32) as usize;
            let offset = std::ptr::read_unaligned(view.add(12) as *const u32) as usize;
            let buffer = *(slot.data as *const *const u8).add(index);
            std::slice::from_raw_parts(buffer.add(offset), len)
        }
    }

    #[inline(always)]
    unsafe fn decide(slot: &Slot, row: usize, quick: &Quick) -> Option<Decided> {
        // SAFETY: forwarded from the caller.
        let view = unsafe { Self::view(slot, row) };
        let len = view as u32;
        // The first four bytes (zero-padded below four: arrow validates padding).
        let prefix = (view >> 32) as u32;
        match *quick {
            Quick::None => None,
            Quick::Equal {
                len: want,
                prefix: p,
                view: inline,
            } => {
                if len != want || prefix != p {
                    Some(Decided::Is(false))
                } else {
                    inline.map(|v| Decided::Is(view == v))
                }
            }
            Quick::Order { key } => {
                let own = prefix.swap_bytes();
                (own != key).then(|| Decided::Order(own.cmp(&key)))
            }
            Quick::Prefix {
                len: want,
                prefix: p,
                mask,
            } => {
                if len < want || prefix & mask != p {
                    Some(Decided::Is(false))
                } else if want <= 4 {
                    Some(Decided::Is(true))
                } else {
                    None
                }
            }
            Quick::MinLen(want) => (len < want).then_some(Decided::Is(false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inputs::{byte_slot, Extra};
    use arrow::array::{LargeStringArray, StringArray, StringViewArray};
    use broadhead_codegen::{CaseMap, Find};

    fn rows<L: SlotLayout>(slot: &Slot, n: usize) -> Vec<Vec<u8>> {
        // SAFETY: the slot was bound from a live array of `n` rows of layout L.
        (0..n)
            .map(|i| unsafe { L::bytes(slot, i) }.to_vec())
            .collect()
    }

    #[test]
    fn every_layout_reads_the_same_bytes_sliced() {
        let values = [
            "",
            "abcd",
            "exactly12byt",
            "thirteen byte",
            "ünïcødé strings here",
            "x",
        ];
        let expect: Vec<Vec<u8>> = values[1..5].iter().map(|s| s.as_bytes().to_vec()).collect();
        let utf8 = StringArray::from_iter_values(values).slice(1, 4);
        let large = LargeStringArray::from_iter_values(values).slice(1, 4);
        let view = StringViewArray::from_iter_values(values).slice(1, 4);
        let mut extra = Extra::default();
        let s = byte_slot(&utf8, &mut extra).unwrap();
        assert_eq!(rows::<Offsets32>(&s, 4), expect);
        let s = byte_slot(&large, &mut extra).unwrap();
        assert_eq!(rows::<Offsets64>(&s, 4), expect);
        let s = byte_slot(&view, &mut extra).unwrap();
        assert_eq!(rows::<Views>(&s, 4), expect);
        for (i, v) in values[1..5].iter().enumerate() {
            assert_eq!(str_value(&view, i), *v);
            assert_eq!(str_value(&large, i), *v);
            assert_eq!(str_value(&utf8, i), *v);
        }
    }

    #[test]
    fn views_decide_from_length_and_prefix() {
        let values = [
            "abc",
            "abd",
            "abcdefghijklmnop",
            "ab",
            "",
            "abcdefghijklmnoq",
        ];
        let view = StringViewArray::from_iter_values(values);
        let mut extra = Extra::default();
        let s = byte_slot(&view, &mut extra).unwrap();
        let decide = |row: usize, q: Quick| {
            // SAFETY: the slot was bound from `view`, of 6 rows.
            unsafe { Views::decide(&s, row, &q) }
        };
        let eq = Quick::equal(b"abc");
        assert_eq!(decide(0, eq), Some(Decided::Is(true)));
        assert_eq!(decide(1, eq), Some(Decided::Is(false)));
        assert_eq!(decide(3, eq), Some(Decided::Is(false)));
        let long = Quick::equal(b"abcdefghijklmnop");
        assert_eq!(
            decide(2, long),
            None,
            "same length and prefix: read the bytes"
        );
        assert_eq!(decide(0, long), Some(Decided::Is(false)));
        let lt = Quick::order(b"abd");
        assert_eq!(
            decide(0, lt),
            Some(Decided::Order(std::cmp::Ordering::Less))
        );
        assert_eq!(decide(1, lt), None, "equal keys: compare the bytes");
        assert_eq!(
            decide(4, lt),
            Some(Decided::Order(std::cmp::Ordering::Less))
        );
        let p = Quick::prefix(b"ab");
        assert_eq!(decide(3, p), Some(Decided::Is(true)));
        assert_eq!(decide(4, p), Some(Decided::Is(false)));
        let p = Quick::prefix(b"abcde");
        assert_eq!(decide(2, p), None);
        assert_eq!(decide(1, p), Some(Decided::Is(false)));
        assert_eq!(decide(0, Quick::min_len(b"abcd")), Some(Decided::Is(false)));
    }

    #[test]
    fn quick_parameters_are_the_literal_as_a_view_holds_it() {
        let view = |s: &str| StringViewArray::from_iter_values([s]).views()[0];
        for s in ["", "ab", "abcd", "abcdefghijkl"] {
            let [lo, hi] = quick_params(QuickTest::Equal { negated: false }, s.as_bytes());
            assert_eq!(u128::from(lo) | u128::from(hi) << 64, view(s), "{s:?}");
        }
        let [lo, _] = quick_params(QuickTest::Equal { negated: false }, b"abcdefghijklm");
        assert_eq!(u128::from(lo), view("abcdefghijklm") & u128::from(u64::MAX));
        assert_eq!(
            quick_params(QuickTest::Order(broadhead_codegen::CmpOp::Lt), b"m"),
            [0x6d00_0000, 0]
        );
        assert_eq!(quick_params(QuickTest::Prefix, b"ab"), [2, 0x6261]);
        let mapped = QuickTest::ShortRow {
            find: Find::Equal,
            case: CaseMap::Upper,
        };
        assert_eq!(quick_params(mapped, b"AB"), [2 | 6 << 32, 0x4241]);
        assert_eq!(
            quick_params(mapped, b"ABCDEFGH"),
            [8 | 24 << 32, u64::from_le_bytes(*b"ABCDEFGH")]
        );
        let contains = QuickTest::ShortRow {
            find: Find::Contains,
            case: CaseMap::AsIs,
        };
        assert_eq!(
            quick_params(contains, b"ab"),
            [2 | 0xffff_ffff << 32, 0x6261]
        );
        assert_eq!(quick_params(mapped, b"ABCDEFGHI"), [9 | 27 << 32, 0]);
    }
}
