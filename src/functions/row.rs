//! Functions written row by row, run by both back ends.
//!
//! A function is a closure over one row's argument values (`|s: &str| …`). The
//! adapters here ([`map1`], [`map2`], [`map3`], [`variadic`]) turn it into a
//! [`RowImpl`] with two faces:
//!
//! * the interpreter's: a loop over Arrow arrays building the result array, with
//!   the rows that failed and why;
//! * the JIT's: a loop over one block of rows ([`CallArg`]s in, a [`CallOut`]
//!   out), which the kernel calls through the single runtime helper
//!   [`call_row_function`]. Strings arrive as views (address, length) into the
//!   batch or into the call's [`Arena`]; computed strings ([`Utf8`] results) are
//!   written to the arena, while a [`Slice`] result — a byte range of the first
//!   argument, as `substr` and `trim` give — is passed on as a view, without
//!   copying.
//!
//! Argument and result types are the markers of [`Arg`] and [`Ret`]: Arrow's
//! primitive types (`Int64Type`, `Float64Type`, `Date32Type`, …), [`Utf8`],
//! [`Slice`], [`Bool`] and [`Blob`] (bytes). A closure returns `Ok(Some(v))`, `Ok(None)` for a NULL result, or
//! `Err(message)` for a row that fails (`"cannot take the square root of a
//! negative number"`); the message is reported with the row, and only for rows
//! whose value is used.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, AsArray, BinaryBuilder, BooleanBuilder, PrimitiveArray,
    PrimitiveBuilder, StringBuilder,
};
use arrow_schema::DataType;
use broadhead_codegen::{CallArg, CallFn, CallOut, Helper, LANES};

/// Where a kernel call's computed strings live: chunks that never move, so the
/// views handed out stay valid until the arena is dropped (after the call's
/// outputs are copied out).
#[derive(Debug, Default)]
pub struct Arena {
    chunks: Vec<Vec<u8>>,
}

impl Arena {
    /// Copies `bytes` into the arena and returns their address.
    pub fn push(&mut self, bytes: &[u8]) -> *const u8 {
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= bytes.len());
        if !fits {
            let last = self.chunks.last().map_or(0, |c| c.capacity());
            let size = (last * 2)
                .clamp(64 * 1024, 16 * 1024 * 1024)
                .max(bytes.len());
            self.chunks.push(Vec::with_capacity(size));
        }
        let chunk = self.chunks.last_mut().expect("a chunk with room");
        let start = chunk.len();
        // Within capacity: the chunk's buffer does not move.
        chunk.extend_from_slice(bytes);
        chunk[start..].as_ptr()
    }
}

/// A row that failed and why.
pub type RowError = (usize, String);

/// The interpreter's face: the arguments (arrays of `rows` rows) and the result
/// type to the result array and the rows that failed.
type EvalFn = dyn Fn(&[ArrayRef], usize, &DataType) -> (ArrayRef, Vec<RowError>) + Send + Sync;

/// The JIT's face: one block (see [`CallFn`]); returns the lanes that failed.
type BlockFn = dyn Fn(&mut Arena, &[CallArg], &mut CallOut) -> u64 + Send + Sync;

/// A function implemented row by row, for both back ends.
#[derive(Clone)]
pub struct RowImpl {
    eval: Arc<EvalFn>,
    block: Arc<BlockFn>,
    /// NULL if any argument is NULL (the closure never sees NULLs).
    pub strict: bool,
    /// Whether a row can fail.
    pub can_error: bool,
}

impl std::fmt::Debug for RowImpl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowImpl")
            .field("strict", &self.strict)
            .field("can_error", &self.can_error)
            .finish_non_exhaustive()
    }
}

impl RowImpl {
    /// The same function with errors declared (for closures that can fail).
    pub fn fallible(mut self) -> RowImpl {
        self.can_error = true;
        self
    }

    /// Evaluates over arrays of `rows` rows (each argument has `rows` values).
    /// A row on which the function panics (a bug) fails with a message saying so.
    pub fn evaluate(
        &self,
        args: &[ArrayRef],
        rows: usize,
        ret: &DataType,
    ) -> (ArrayRef, Vec<RowError>) {
        if let Ok(result) = catch_unwind(AssertUnwindSafe(|| (self.eval)(args, rows, ret))) {
            return result;
        }
        // Find the rows that panic, one row at a time.
        let mut parts = Vec::with_capacity(rows);
        let mut errors = Vec::new();
        for row in 0..rows {
            let one: Vec<ArrayRef> = args.iter().map(|a| a.slice(row, 1)).collect();
            match catch_unwind(AssertUnwindSafe(|| (self.eval)(&one, 1, ret))) {
                Ok((part, failed)) => {
                    errors.extend(failed.into_iter().map(|(_, m)| (row, m)));
                    parts.push(part);
                }
                Err(_) => {
                    errors.push((row, "the function failed unexpectedly".to_string()));
                    parts.push(arrow::array::new_null_array(ret, 1));
                }
            }
        }
        let parts: Vec<&dyn Array> = parts.iter().map(|p| p.as_ref()).collect();
        let result = arrow::compute::concat(&parts)
            .unwrap_or_else(|_| arrow::array::new_null_array(ret, rows));
        (result, errors)
    }
}

/// What a kernel's call site points its helper at: the implementation and the
/// number of arguments at that site.
pub(crate) struct CallState {
    pub(crate) imp: RowImpl,
    pub(crate) arity: usize,
}

/// The runtime helper every [`Lowering::Helper`](super::Lowering::Helper) call
/// goes through.
pub(crate) fn helper() -> Helper {
    let f: CallFn = call_row_function;
    Helper {
        name: "broadhead_call_row_function",
        addr: f as usize,
    }
}

/// The [`CallFn`] of row functions: `state` is a [`CallState`], `ctx` the call's
/// [`Arena`].
///
/// # Safety
/// Called by generated code only: `state` points at a live `CallState`, `ctx` at
/// the `Arena` of the running call (used by one thread), `args` at `arity`
/// descriptors whose lanes in `out.valid` (strict calls) or whose valid lanes
/// (others) hold values of the signature's types, and `out` at room for a block of
/// results.
unsafe extern "C" fn call_row_function(
    state: *const u8,
    ctx: *mut u8,
    args: *const CallArg,
    out: *mut CallOut,
) -> u64 {
    // SAFETY: as the contract above says.
    let (call, arena, out) = unsafe {
        (
            &*(state as *const CallState),
            &mut *(ctx as *mut Arena),
            &mut *out,
        )
    };
    // SAFETY: `args` points at `arity` descriptors.
    let args = unsafe { std::slice::from_raw_parts(args, call.arity) };
    let compute = out.valid;
    if let Ok(failed) = catch_unwind(AssertUnwindSafe(|| (call.imp.block)(arena, args, out))) {
        return failed;
    }
    // A lane panicked (a bug in the function): run the lanes one at a time, so that
    // just the ones that panic fail, as the interpreter's rows do.
    let (mut valid, mut failed) = (0, 0);
    for i in lanes(compute) {
        out.valid = 1 << i;
        match catch_unwind(AssertUnwindSafe(|| (call.imp.block)(arena, args, out))) {
            Ok(f) => {
                failed |= f;
                valid |= out.valid;
            }
            Err(_) => failed |= 1 << i,
        }
    }
    out.valid = valid;
    failed
}

/// An argument type: how a row's value is read from an array and from a block.
pub trait Arg: 'static {
    /// One row's value.
    type Item<'a>: Copy;
    /// Row `i` of `a` (an array of this type; the row is valid).
    fn get(a: &dyn Array, i: usize) -> Self::Item<'_>;
    /// Lane `i` of a block.
    ///
    /// # Safety
    /// The descriptor holds a block of this type and lane `i` is valid.
    unsafe fn lane(arg: &CallArg, i: usize) -> Self::Item<'_>;
    /// The value as a string, for string arguments ([`Slice`] results are ranges of
    /// the first argument).
    fn as_str<'a>(_v: Self::Item<'a>) -> Option<&'a str> {
        None
    }
}

/// A result type: how values are collected into an array and written to a block.
pub trait Ret: 'static {
    /// One row's value.
    type Item;
    /// What the interpreter collects into.
    type Builder;
    /// A builder for `rows` values.
    fn builder(rows: usize) -> Self::Builder;
    /// Appends a value or a NULL; `first` is the first argument when it is a string.
    fn append(b: &mut Self::Builder, v: Option<Self::Item>, first: Option<&str>);
    /// The array, of type `ty`.
    fn finish(b: Self::Builder, ty: &DataType) -> ArrayRef;
    /// Writes lane `i` of a block; `first` is the first argument when it is a string.
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
    );
}

/// The VARCHAR marker: arguments are `&str` (read from arrays of any string layout:
/// `Utf8`, `LargeUtf8`, `Utf8View`), results `String`s (`Utf8` arrays).
pub struct Utf8;
/// A VARCHAR result that is part of the first argument (a string): the closure
/// returns the byte range, and the JIT passes it on as a view without copying.
pub struct Slice;
/// The BOOLEAN marker.
pub struct Bool;
/// The BLOB marker: arguments are `&[u8]` (of a BLOB, or the UTF-8 bytes of a
/// VARCHAR, in any layout), results `Vec<u8>` (a BLOB).
pub struct Blob;

impl<T: ArrowPrimitiveType> Arg for T {
    type Item<'a> = T::Native;
    fn get(a: &dyn Array, i: usize) -> T::Native {
        a.as_primitive::<T>().value(i)
    }
    unsafe fn lane(arg: &CallArg, i: usize) -> T::Native {
        // SAFETY: the block holds LANES values of this type and i < LANES.
        unsafe { *(arg.values as *const T::Native).add(i) }
    }
}

impl Arg for Utf8 {
    type Item<'a> = &'a str;
    fn get(a: &dyn Array, i: usize) -> &str {
        crate::layout::str_value(a, i)
    }
    unsafe fn lane(arg: &CallArg, i: usize) -> &str {
        // SAFETY: a valid lane's view points at UTF-8 bytes (an Arrow string array's
        // or the arena's copy of a `str`) that live for the call.
        unsafe {
            let ptr = *(arg.values as *const u64).add(i) as *const u8;
            let len = *arg.lens.add(i) as usize;
            std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len))
        }
    }
    fn as_str<'a>(v: Self::Item<'a>) -> Option<&'a str> {
        Some(v)
    }
}

impl Arg for Blob {
    type Item<'a> = &'a [u8];
    fn get(a: &dyn Array, i: usize) -> &[u8] {
        crate::layout::bytes_value(a, i)
    }
    unsafe fn lane(arg: &CallArg, i: usize) -> &[u8] {
        // SAFETY: a valid lane's view points at bytes (of an Arrow array, a literal
        // or the arena) that live for the call.
        unsafe {
            let ptr = *(arg.values as *const u64).add(i) as *const u8;
            let len = *arg.lens.add(i) as usize;
            std::slice::from_raw_parts(ptr, len)
        }
    }
}

impl Arg for Bool {
    type Item<'a> = bool;
    fn get(a: &dyn Array, i: usize) -> bool {
        a.as_boolean().value(i)
    }
    unsafe fn lane(arg: &CallArg, i: usize) -> bool {
        // SAFETY: a boolean block is one u64 mask.
        unsafe { (*(arg.values as *const u64) >> i) & 1 == 1 }
    }
}

impl<T: ArrowPrimitiveType> Ret for T {
    type Item = T::Native;
    type Builder = PrimitiveBuilder<T>;
    fn builder(rows: usize) -> PrimitiveBuilder<T> {
        PrimitiveBuilder::with_capacity(rows)
    }
    fn append(b: &mut PrimitiveBuilder<T>, v: Option<T::Native>, _: Option<&str>) {
        b.append_option(v)
    }
    fn finish(mut b: PrimitiveBuilder<T>, ty: &DataType) -> ArrayRef {
        let a: PrimitiveArray<T> = b.finish();
        Arc::new(a.with_data_type(ty.clone()))
    }
    unsafe fn write(out: &mut CallOut, i: usize, v: T::Native, _: Option<&str>, _: &mut Arena) {
        // SAFETY: room for LANES values; i < LANES.
        unsafe { *(out.values as *mut T::Native).add(i) = v }
    }
}

/// Writes a string view to lane `i`.
///
/// # Safety
/// `out` has room for a block of strings; `i < LANES`.
unsafe fn write_view(out: &mut CallOut, i: usize, ptr: *const u8, len: usize) {
    // SAFETY: as the caller promises.
    unsafe {
        *(out.values as *mut u64).add(i) = ptr as u64;
        *out.lens.add(i) = len as u64;
    }
}

impl Ret for Utf8 {
    type Item = String;
    type Builder = StringBuilder;
    fn builder(rows: usize) -> StringBuilder {
        StringBuilder::with_capacity(rows, rows * 8)
    }
    fn append(b: &mut StringBuilder, v: Option<String>, _: Option<&str>) {
        b.append_option(v)
    }
    fn finish(mut b: StringBuilder, _: &DataType) -> ArrayRef {
        Arc::new(b.finish())
    }
    unsafe fn write(out: &mut CallOut, i: usize, v: String, _: Option<&str>, arena: &mut Arena) {
        let ptr = arena.push(v.as_bytes());
        // SAFETY: as the caller promises.
        unsafe { write_view(out, i, ptr, v.len()) }
    }
}

impl Ret for Blob {
    type Item = Vec<u8>;
    type Builder = BinaryBuilder;
    fn builder(rows: usize) -> BinaryBuilder {
        BinaryBuilder::with_capacity(rows, rows * 8)
    }
    fn append(b: &mut BinaryBuilder, v: Option<Vec<u8>>, _: Option<&str>) {
        b.append_option(v)
    }
    fn finish(mut b: BinaryBuilder, _: &DataType) -> ArrayRef {
        Arc::new(b.finish())
    }
    unsafe fn write(out: &mut CallOut, i: usize, v: Vec<u8>, _: Option<&str>, arena: &mut Arena) {
        let ptr = arena.push(&v);
        // SAFETY: as the caller promises.
        unsafe { write_view(out, i, ptr, v.len()) }
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
    fn builder(rows: usize) -> StringBuilder {
        StringBuilder::with_capacity(rows, rows * 8)
    }
    fn append(b: &mut StringBuilder, v: Option<Range<usize>>, first: Option<&str>) {
        b.append_option(v.map(|r| slice_of(first, r)))
    }
    fn finish(mut b: StringBuilder, _: &DataType) -> ArrayRef {
        Arc::new(b.finish())
    }
    unsafe fn write(
        out: &mut CallOut,
        i: usize,
        v: Range<usize>,
        first: Option<&str>,
        _: &mut Arena,
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
    fn builder(rows: usize) -> BooleanBuilder {
        BooleanBuilder::with_capacity(rows)
    }
    fn append(b: &mut BooleanBuilder, v: Option<bool>, _: Option<&str>) {
        b.append_option(v)
    }
    fn finish(mut b: BooleanBuilder, _: &DataType) -> ArrayRef {
        Arc::new(b.finish())
    }
    unsafe fn write(out: &mut CallOut, i: usize, v: bool, _: Option<&str>, _: &mut Arena) {
        // SAFETY: a boolean block is one u64 mask (bits of lanes not written are
        // ignored: they are not valid).
        unsafe {
            let m = out.values as *mut u64;
            *m = (*m & !(1 << i)) | ((v as u64) << i);
        }
    }
}

/// What a function returns for one row: a value, `None` for NULL, or why it failed.
pub type Outcome<T> = Result<Option<T>, String>;

/// The lanes of a mask, lowest first.
fn lanes(mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (mask != 0).then(|| {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            i
        })
    })
}

/// Collects one row's outcome into the interpreter's builder.
fn collect<R: Ret>(
    b: &mut R::Builder,
    errors: &mut Vec<RowError>,
    row: usize,
    o: Outcome<R::Item>,
    first: Option<&str>,
) {
    match o {
        Ok(v) => R::append(b, v, first),
        Err(m) => {
            errors.push((row, m));
            R::append(b, None, None)
        }
    }
}

/// Writes one lane's outcome into a block; returns (valid, failed) bits.
fn emit<R: Ret>(
    out: &mut CallOut,
    arena: &mut Arena,
    i: usize,
    o: Outcome<R::Item>,
    first: Option<&str>,
) -> (u64, u64) {
    match o {
        Ok(Some(v)) => {
            // SAFETY: the kernel gives room for a block of the result type, and a
            // string argument lives for the call.
            unsafe { R::write(out, i, v, first, arena) };
            (1 << i, 0)
        }
        Ok(None) => (0, 0),
        Err(_) => (0, 1 << i),
    }
}

/// The first argument as a string, if it is one.
macro_rules! first_str {
    ($a:ident $x:ident $(, $rest:ident $y:ident)*) => {
        $a::as_str($x)
    };
}

macro_rules! map_n {
    ($(#[$doc:meta])* $name:ident, $($a:ident $x:ident $k:tt),+) => {
        $(#[$doc])*
        pub fn $name<$($a: Arg,)+ R: Ret, F>(f: F) -> RowImpl
        where
            F: for<'a> Fn($($a::Item<'a>),+) -> Outcome<R::Item> + Send + Sync + 'static,
        {
            let f = Arc::new(f);
            let g = f.clone();
            RowImpl {
                eval: Arc::new(move |args: &[ArrayRef], rows: usize, ty: &DataType| {
                    let mut b = R::builder(rows);
                    let mut errors = Vec::new();
                    for row in 0..rows {
                        if $(args[$k].is_null(row))||+ {
                                R::append(&mut b, None, None);
                            continue;
                        }
                        $(let $x = $a::get(args[$k].as_ref(), row);)+
                        let first = first_str!($($a $x),+);
                        collect::<R>(&mut b, &mut errors, row, f($($x),+), first);
                    }
                    (R::finish(b, ty), errors)
                }),
                block: Arc::new(move |arena: &mut Arena, args: &[CallArg], out: &mut CallOut| {
                    let (mut valid, mut failed) = (0u64, 0u64);
                    for i in lanes(out.valid & lane_mask()) {
                        // SAFETY: the kernel computes only lanes where every argument
                        // is valid (a strict call), and those hold values.
                        $(let $x = unsafe { $a::lane(&args[$k], i) };)+
                        let first = first_str!($($a $x),+);
                        let (v, e) = emit::<R>(out, arena, i, g($($x),+), first);
                        valid |= v;
                        failed |= e;
                    }
                    out.valid = valid;
                    failed
                }),
                strict: true,
                can_error: false,
            }
        }
    };
}

/// Every lane of a block.
fn lane_mask() -> u64 {
    if LANES >= 64 {
        u64::MAX
    } else {
        (1u64 << LANES) - 1
    }
}

map_n!(
    /// A function of one argument, NULL when it is NULL.
    map1, A a 0
);
map_n!(
    /// A function of two arguments, NULL when either is NULL.
    map2, A a 0, B b 1
);
map_n!(
    /// A function of three arguments, NULL when any is NULL.
    map3, A a 0, B b 1, C c 2
);

/// A function of any number of arguments of one type, which sees NULLs (as
/// `None`) and decides its result itself (`concat` skips them); with `strict`, it
/// is NULL when any argument is NULL and sees only non-NULL rows.
pub fn variadic<A: Arg, R: Ret, F>(strict: bool, f: F) -> RowImpl
where
    F: for<'a> Fn(&[Option<A::Item<'a>>]) -> Outcome<R::Item> + Send + Sync + 'static,
{
    let f = Arc::new(f);
    let g = f.clone();
    RowImpl {
        eval: Arc::new(move |args: &[ArrayRef], rows: usize, ty: &DataType| {
            let mut b = R::builder(rows);
            let mut errors = Vec::new();
            let mut values = Vec::with_capacity(args.len());
            for row in 0..rows {
                values.clear();
                values.extend(
                    args.iter()
                        .map(|a| (!a.is_null(row)).then(|| A::get(a.as_ref(), row))),
                );
                if strict && values.iter().any(Option::is_none) {
                    R::append(&mut b, None, None);
                    continue;
                }
                let first = values.first().copied().flatten();
                let first = first.and_then(A::as_str);
                collect::<R>(&mut b, &mut errors, row, f(&values), first);
            }
            (R::finish(b, ty), errors)
        }),
        block: Arc::new(
            move |arena: &mut Arena, args: &[CallArg], out: &mut CallOut| {
                let (mut valid, mut failed) = (0u64, 0u64);
                let mut values = Vec::with_capacity(args.len());
                for i in lanes(out.valid & lane_mask()) {
                    values.clear();
                    // SAFETY: valid lanes hold values.
                    values.extend(
                        args.iter()
                            .map(|a| (a.valid >> i & 1 == 1).then(|| unsafe { A::lane(a, i) })),
                    );
                    let first = values.first().copied().flatten();
                    let first = first.and_then(A::as_str);
                    let (v, e) = emit::<R>(out, arena, i, g(&values), first);
                    valid |= v;
                    failed |= e;
                }
                out.valid = valid;
                failed
            },
        ),
        strict,
        can_error: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, StringArray};
    use arrow::datatypes::Int64Type;

    #[test]
    fn the_interpreter_face_skips_nulls_and_collects_errors() {
        let f = map1::<Int64Type, Int64Type, _>(|x: i64| {
            if x < 0 {
                Err("negative".to_string())
            } else {
                Ok(Some(x * 2))
            }
        })
        .fallible();
        let a: ArrayRef = Arc::new(Int64Array::from(vec![Some(1), None, Some(-1)]));
        let (out, errors) = f.evaluate(&[a], 3, &DataType::Int64);
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(out.iter().collect::<Vec<_>>(), vec![Some(2), None, None]);
        assert_eq!(errors, vec![(2, "negative".to_string())]);
    }

    #[test]
    fn strings_borrow_or_own() {
        let upper = map1::<Utf8, Utf8, _>(|s: &str| Ok(Some(s.to_uppercase())));
        let first = map1::<Utf8, Slice, _>(|s: &str| {
            Ok(Some(0..s.chars().next().map_or(0, char::len_utf8)))
        });
        let a: ArrayRef = Arc::new(StringArray::from(vec![Some("straße"), None, Some("")]));
        let (u, _) = upper.evaluate(std::slice::from_ref(&a), 3, &DataType::Utf8);
        let (f, _) = first.evaluate(&[a], 3, &DataType::Utf8);
        let u: Vec<_> = u.as_string::<i32>().iter().collect();
        let f: Vec<_> = f.as_string::<i32>().iter().collect();
        assert_eq!(u, vec![Some("STRASSE"), None, Some("")]);
        assert_eq!(f, vec![Some("s"), None, Some("")]);
    }

    #[test]
    fn a_panic_fails_only_the_rows_that_panic() {
        let f = map1::<Int64Type, Int64Type, _>(|x: i64| {
            assert!(x != 2, "a bug");
            Ok(Some(x))
        });
        let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let (out, errors) = f.evaluate(&[a], 3, &DataType::Int64);
        let out = out.as_primitive::<Int64Type>();
        assert_eq!(out.iter().collect::<Vec<_>>(), vec![Some(1), None, Some(3)]);
        assert_eq!(
            errors,
            vec![(1, "the function failed unexpectedly".to_string())]
        );
    }

    #[test]
    fn the_arena_keeps_earlier_strings_in_place() {
        let mut arena = Arena::default();
        let first = arena.push(b"abc");
        let big = vec![b'x'; 200_000];
        arena.push(&big);
        // SAFETY: three bytes were pushed at `first` and the arena is alive.
        assert_eq!(unsafe { std::slice::from_raw_parts(first, 3) }, b"abc");
    }
}
