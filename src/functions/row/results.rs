//! Result types: how row values are collected into an Arrow builder (the
//! interpreter's face) and written to a block's lanes (the JIT's).

use std::ops::Range;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, ArrowPrimitiveType, BinaryBuilder, BooleanBuilder, GenericByteBuilder,
    PrimitiveArray, PrimitiveBuilder, StringBuilder,
};
use arrow::datatypes::ByteArrayType;
use arrow_schema::DataType;
use broadhead_codegen::CallOut;

use super::arena::Arena;
use super::limit::{Budget, Text};
use super::{lanes, Blob, Bool, Slice, Utf8, Written};

/// A result type: how values are collected into an array and written to a block.
pub trait Ret: 'static {
    /// One row's value.
    type Item;
    /// What the interpreter collects into.
    type Builder: Collect;
    /// What the closure is lent for each row (the `_with` adapters): for
    /// [`Written`], the `String` it appends the row's value to; `()` otherwise.
    type Scratch: Default;
    /// Whether values are strings whose bytes count against the batch's limit
    /// ([`Budget`]): [`Utf8`], [`Written`] and [`Blob`] results, which are copied
    /// (a [`Slice`] is a view of the argument).
    const COUNTED: bool = false;
    /// The bytes of a row's value (its part of the scratch from `mark` on).
    fn bytes(_v: &Self::Item, _scratch: &Self::Scratch, _mark: usize) -> usize {
        0
    }
    /// Bounds what the closure may write to the scratch for the next row by the
    /// room `budget` has left.
    fn limit(_scratch: &mut Self::Scratch, _budget: &Budget) {}
    /// Whether the closure failed because its value would pass the limit.
    fn over(_scratch: &Self::Scratch) -> bool {
        false
    }
    /// Where the next row's value starts in the scratch.
    fn mark(_scratch: &Self::Scratch) -> usize {
        0
    }
    /// Drops what a row that has no value (NULL or failed) left after `mark`.
    fn discard(_scratch: &mut Self::Scratch, _mark: usize) {}
    /// Empties the scratch (the interpreter's face, after each row).
    fn clear(_scratch: &mut Self::Scratch) {}
    /// The scratch for a block, from the arena (where it keeps its capacity).
    fn take_scratch(_arena: &mut Arena) -> Self::Scratch {
        Self::Scratch::default()
    }
    /// Finishes a block whose lanes `valid` were written: their values are moved
    /// into the arena and their views completed; the scratch goes back.
    ///
    /// # Safety
    /// `out` has room for a block of this type, and the lanes `valid` were written
    /// by [`Ret::write`] with this scratch.
    unsafe fn end_block(_out: &mut CallOut, _valid: u64, _arena: &mut Arena, _s: Self::Scratch) {}
    /// Appends a value or a NULL; `first` is the first argument when it is a string,
    /// `scratch` what the closure was lent for the row (its value from `mark` on).
    fn append(
        b: &mut Self::Builder,
        v: Option<Self::Item>,
        first: Option<&str>,
        scratch: &Self::Scratch,
        mark: usize,
    );
    /// Writes lane `i` of a block; `first` is the first argument when it is a string,
    /// `scratch` what the closure was lent for the lane (its value from `mark` on).
    ///
    /// # Safety
    /// `out` has room for a block of this type; `first` is a string that lives for
    /// the kernel call.
    unsafe fn write(
        out: &mut CallOut,
        i: usize,
        v: Self::Item,
        first: Option<&str>,
        arena: &mut Arena,
        scratch: &mut Self::Scratch,
        mark: usize,
    );
}

/// An Arrow builder the interpreter collects a result into.
pub trait Collect {
    /// A builder for `rows` values.
    fn with_rows(rows: usize) -> Self;
    /// The array, of type `ty`.
    fn finish_as(self, ty: &DataType) -> ArrayRef;
}

impl<T: ArrowPrimitiveType> Collect for PrimitiveBuilder<T> {
    fn with_rows(rows: usize) -> Self {
        PrimitiveBuilder::with_capacity(rows)
    }
    fn finish_as(mut self, ty: &DataType) -> ArrayRef {
        let a: PrimitiveArray<T> = self.finish();
        Arc::new(a.with_data_type(ty.clone()))
    }
}

/// Strings and byte strings, with room for 8 bytes a row to begin with.
impl<T: ByteArrayType> Collect for GenericByteBuilder<T> {
    fn with_rows(rows: usize) -> Self {
        GenericByteBuilder::with_capacity(rows, rows * 8)
    }
    fn finish_as(mut self, _: &DataType) -> ArrayRef {
        Arc::new(self.finish())
    }
}

impl Collect for BooleanBuilder {
    fn with_rows(rows: usize) -> Self {
        BooleanBuilder::with_capacity(rows)
    }
    fn finish_as(mut self, _: &DataType) -> ArrayRef {
        Arc::new(self.finish())
    }
}

impl<T: ArrowPrimitiveType> Ret for T {
    type Item = T::Native;
    type Builder = PrimitiveBuilder<T>;
    type Scratch = ();
    fn append(
        b: &mut PrimitiveBuilder<T>,
        v: Option<T::Native>,
        _: Option<&str>,
        _: &(),
        _: usize,
    ) {
        b.append_option(v)
    }
    unsafe fn write(
        out: &mut CallOut,
        i: usize,
        v: T::Native,
        _: Option<&str>,
        _: &mut Arena,
        _: &mut (),
        _: usize,
    ) {
        // SAFETY: room for LANES values; i < LANES.
        unsafe { *(out.values as *mut T::Native).add(i) = v }
    }
}

/// Writes a string view to lane `i`.
///
/// # Safety
/// `out` has room for a block of strings; `i < LANES`.
pub(super) unsafe fn write_view(out: &mut CallOut, i: usize, ptr: *const u8, len: usize) {
    // SAFETY: as the caller promises.
    unsafe {
        *(out.values as *mut u64).add(i) = ptr as u64;
        *out.lens.add(i) = len as u64;
    }
}

impl Ret for Utf8 {
    type Item = String;
    type Builder = StringBuilder;
    type Scratch = ();
    const COUNTED: bool = true;
    fn bytes(v: &String, _: &(), _: usize) -> usize {
        v.len()
    }
    fn append(b: &mut StringBuilder, v: Option<String>, _: Option<&str>, _: &(), _: usize) {
        b.append_option(v)
    }
    unsafe fn write(
        out: &mut CallOut,
        i: usize,
        v: String,
        _: Option<&str>,
        arena: &mut Arena,
        _: &mut (),
        _: usize,
    ) {
        // SAFETY: as the caller promises.
        unsafe { write_view(out, i, arena.push(v.as_bytes()), v.len()) }
    }
}

impl Ret for Written {
    type Item = ();
    type Builder = StringBuilder;
    type Scratch = Text;
    const COUNTED: bool = true;
    fn bytes(_: &(), text: &Text, mark: usize) -> usize {
        text.len() - mark
    }
    fn limit(text: &mut Text, budget: &Budget) {
        text.limit_by(budget)
    }
    fn over(text: &Text) -> bool {
        text.is_over()
    }
    fn mark(text: &Text) -> usize {
        text.len()
    }
    fn discard(text: &mut Text, mark: usize) {
        text.truncate(mark)
    }
    fn clear(text: &mut Text) {
        text.clear()
    }
    fn take_scratch(arena: &mut Arena) -> Text {
        Text::new(std::mem::take(&mut arena.text))
    }
    unsafe fn end_block(out: &mut CallOut, valid: u64, arena: &mut Arena, mut text: Text) {
        if valid != 0 {
            let base = arena.push(text.as_bytes()) as u64;
            for i in lanes(valid) {
                // SAFETY: room for a block of views (as the caller promises); `write`
                // left lane `i`'s offset in the block's text, which now starts at
                // `base`.
                unsafe { *(out.values as *mut u64).add(i) += base }
            }
        }
        text.clear();
        arena.text = text.into_string();
    }
    fn append(b: &mut StringBuilder, v: Option<()>, _: Option<&str>, text: &Text, mark: usize) {
        match v {
            Some(()) => b.append_value(text.get(mark..).unwrap_or("")),
            None => b.append_null(),
        }
    }
    unsafe fn write(
        out: &mut CallOut,
        i: usize,
        _: (),
        _: Option<&str>,
        _: &mut Arena,
        text: &mut Text,
        mark: usize,
    ) {
        // The offset in the block's text for now: `end_block` adds where the text
        // ends up in the arena.
        // SAFETY: as the caller promises.
        unsafe { write_view(out, i, mark as *const u8, text.len() - mark) }
    }
}

impl Ret for Blob {
    type Item = Vec<u8>;
    type Builder = BinaryBuilder;
    type Scratch = ();
    const COUNTED: bool = true;
    fn bytes(v: &Vec<u8>, _: &(), _: usize) -> usize {
        v.len()
    }
    fn append(b: &mut BinaryBuilder, v: Option<Vec<u8>>, _: Option<&str>, _: &(), _: usize) {
        b.append_option(v)
    }
    unsafe fn write(
        out: &mut CallOut,
        i: usize,
        v: Vec<u8>,
        _: Option<&str>,
        arena: &mut Arena,
        _: &mut (),
        _: usize,
    ) {
        // SAFETY: as the caller promises.
        unsafe { write_view(out, i, arena.push(&v), v.len()) }
    }
}

/// The part of `first` a [`Slice`] result names; the empty string if the range is
/// not a part of it (a bug in the function, caught here rather than read out of
/// bounds).
fn slice_of(first: Option<&str>, range: Range<usize>) -> &str {
    first.and_then(|s| s.get(range)).unwrap_or("")
}

impl Ret for Slice {
    type Item = Range<usize>;
    type Builder = StringBuilder;
    type Scratch = ();
    fn append(
        b: &mut StringBuilder,
        v: Option<Range<usize>>,
        first: Option<&str>,
        _: &(),
        _: usize,
    ) {
        b.append_option(v.map(|r| slice_of(first, r)))
    }
    unsafe fn write(
        out: &mut CallOut,
        i: usize,
        v: Range<usize>,
        first: Option<&str>,
        _: &mut Arena,
        _: &mut (),
        _: usize,
    ) {
        let s = slice_of(first, v);
        // SAFETY: as the caller promises; `s` is part of the first argument, which
        // lives for the call.
        unsafe { write_view(out, i, s.as_ptr(), s.len()) }
    }
}

impl Ret for Bool {
    type Item = bool;
    type Builder = BooleanBuilder;
    /// The block's bits, stored once at its end.
    type Scratch = u64;
    unsafe fn end_block(out: &mut CallOut, valid: u64, _: &mut Arena, bits: u64) {
        // SAFETY: a boolean block is one u64 mask, whose lanes `valid` are this
        // block's (the others may be another run's, when lanes are retried alone).
        unsafe {
            let m = out.values as *mut u64;
            *m = (*m & !valid) | (bits & valid);
        }
    }
    fn append(b: &mut BooleanBuilder, v: Option<bool>, _: Option<&str>, _: &u64, _: usize) {
        b.append_option(v)
    }
    unsafe fn write(
        _: &mut CallOut,
        i: usize,
        v: bool,
        _: Option<&str>,
        _: &mut Arena,
        bits: &mut u64,
        _: usize,
    ) {
        *bits |= (v as u64) << i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::functions::row::arena::Chunk;
    use crate::functions::row::limit::set_test_limit;
    use crate::functions::row::testing::{run_block, N};
    use crate::functions::row::{lane_mask, map1, map1_with};
    use arrow::array::{Array, StringArray};
    use broadhead_codegen::CallArg;

    #[test]
    fn written_results_are_one_run_without_the_rows_that_have_none() {
        // Writes before deciding: "null" rows are NULL, "bad" rows fail.
        let f = map1_with::<Utf8, Written, _>(|s: &str, out: &mut Text| {
            out.push_str(&s.to_uppercase());
            match s {
                "null" => Ok(None),
                "bad" => Err("bad".into()),
                _ => Ok(Some(())),
            }
        })
        .fallible();
        let words = ["ab", "null", "", "bad", "héllo"];
        let arg: Vec<Option<&str>> = (0..N).map(|i| Some(words[i % words.len()])).collect();
        let mut arena = Arena::default();
        for _ in 0..2 {
            let (shown, failed, spans) =
                run_block(&f, std::slice::from_ref(&arg), lane_mask(), &mut arena);
            for (i, word) in arg.iter().enumerate() {
                let want = match word.unwrap() {
                    "null" | "bad" => None,
                    w => Some(w.to_uppercase()),
                };
                assert_eq!(shown[i], want, "lane {i}");
                assert_eq!(failed >> i & 1 == 1, *word == Some("bad"), "lane {i}");
            }
            // The values follow each other: what the rows without one wrote is gone.
            for w in spans.windows(2) {
                assert_eq!(w[0].0 + w[0].1, w[1].0);
            }
            // In the arena: the block's values are its last bytes.
            let (start, end) = (
                spans[0].0,
                spans[spans.len() - 1].0 + spans[spans.len() - 1].1,
            );
            let Some(Chunk::Open(chunk)) = arena.chunks.last() else {
                panic!("an open chunk");
            };
            let chunk_end = chunk.as_ptr() as u64 + chunk.len() as u64;
            assert_eq!(end, chunk_end);
            assert!(start >= chunk.as_ptr() as u64);
        }
    }

    #[test]
    fn string_results_fail_from_the_lane_that_passes_the_batch_limit() {
        set_test_limit(Some(25));
        // A written result that reserves its room first, and one made as a `String`
        // (checked once made): 10 bytes a lane, so lanes 0 and 1 fit 25 bytes.
        let written = map1_with::<Utf8, Written, _>(|s: &str, out: &mut Text| {
            out.reserve(2 * s.len())?;
            out.push_str(s);
            out.push_str(s);
            Ok(Some(()))
        });
        let made = map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(s.repeat(2))));
        let arg: Vec<Option<&str>> = vec![Some("abcde"); N];
        for f in [written, made] {
            let mut arena = Arena::default();
            let (shown, failed, _) =
                run_block(&f, std::slice::from_ref(&arg), lane_mask(), &mut arena);
            assert_eq!(failed, lane_mask() & !0b11);
            assert_eq!(shown[0].as_deref(), Some("abcdeabcde"));
            assert!(shown[2..].iter().all(Option::is_none));
            assert_eq!(arena.used(), 20);
            // The interpreter's face: the same rows fail, with the message.
            let a: ArrayRef = Arc::new(StringArray::from(vec!["abcde"; 4]));
            let (out, errors) = f.evaluate(&[a], 4, &DataType::Utf8);
            let message = "function: the batch's string results would exceed 25 bytes";
            assert_eq!(errors, vec![(2, message.into()), (3, message.into())]);
            assert_eq!(out.null_count(), 2);
        }
        set_test_limit(None);
    }

    #[test]
    fn boolean_results_keep_the_bits_of_lanes_not_computed() {
        let f = map1::<Utf8, Bool, _>(|s: &str| Ok(Some(s == "y")));
        let arg: Vec<Option<&str>> = (0..N).map(|i| Some(["y", "n"][i % 2])).collect();
        let views: Vec<u64> = arg.iter().map(|s| s.unwrap().as_ptr() as u64).collect();
        let lens: Vec<u64> = vec![1; N];
        let call = [CallArg {
            values: views.as_ptr() as *const u8,
            lens: lens.as_ptr(),
            valid: lane_mask(),
        }];
        // Lanes 0 and 1 computed by an earlier run: their bits must stay.
        let mut mask: u64 = 0b10;
        let mut out = CallOut {
            values: &mut mask as *mut u64 as *mut u8,
            lens: std::ptr::null_mut(),
            valid: lane_mask() & !0b11,
            row: 0,
        };
        let mut arena = Arena::default();
        assert_eq!((f.block)(&mut arena, &call, &mut out), 0);
        let even = 0x5555_5555_5555_5555 & lane_mask();
        assert_eq!(mask, (even & !0b11) | 0b10);
        assert_eq!(out.valid, lane_mask() & !0b11);
    }
}
