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
//! [`Slice`], [`Written`], [`Bool`] and [`Blob`] (bytes). A [`Written`] result is
//! appended by the closure to a `String` the adapter lends it (the `_with`
//! adapters, [`map1_with`] …): the JIT's face collects a block's values in that
//! one buffer and copies it into the arena once per block, so that no `String`
//! is allocated and no copy made per row. A closure returns `Ok(Some(v))`, `Ok(None)` for a NULL result, or
//! `Err(message)` for a row that fails (`"cannot take the square root of a
//! negative number"`); the message is reported with the row, and only for rows
//! whose value is used.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, ArrowPrimitiveType, AsArray, BinaryBuilder, BooleanBuilder,
    GenericByteBuilder, PrimitiveArray, PrimitiveBuilder, StringBuilder,
};
use arrow::buffer::Buffer;
use arrow::datatypes::ByteArrayType;
use arrow_schema::DataType;
use broadhead_codegen::{CallArg, CallFn, CallOut, Helper, LANES};

/// Where a kernel call's computed strings live: chunks that never move, so the
/// views handed out stay valid until the arena is dropped (after the call's
/// outputs are made). A projection's output whose strings are a run of one chunk
/// takes that chunk as its data ([`Arena::adopt`]) instead of copying it.
#[derive(Debug, Default)]
pub struct Arena {
    chunks: Vec<Chunk>,
    /// The room the first chunk is made with.
    first: usize,
    /// The buffer [`Written`] results of a block are collected in, kept between
    /// blocks for its capacity.
    text: String,
}

#[derive(Debug)]
enum Chunk {
    /// Still written to (within its capacity, so that it never moves).
    Open(Vec<u8>),
    /// Given to arrays: read only.
    Adopted(Buffer),
}

impl Chunk {
    /// Where the chunk's bytes are, and how many there are.
    fn span(&self) -> (usize, usize) {
        match self {
            Chunk::Open(v) => (v.as_ptr() as usize, v.len()),
            Chunk::Adopted(b) => (b.as_ptr() as usize, b.len()),
        }
    }
}

impl Arena {
    /// An arena whose first chunk has room for `bytes` bytes (at least 64 KiB), so
    /// that a call that needs no more keeps its strings in one chunk.
    pub fn with_room(bytes: usize) -> Arena {
        Arena {
            first: bytes,
            ..Arena::default()
        }
    }

    /// Whether `at` is one of the bytes the arena holds.
    #[cfg(test)]
    pub(crate) fn holds(&self, at: *const u8) -> bool {
        let at = at as usize;
        self.chunks.iter().any(|c| {
            let (base, used) = c.span();
            (base..base + used).contains(&at)
        })
    }

    /// The bytes the arena holds.
    pub fn used(&self) -> usize {
        self.chunks.iter().map(|c| c.span().1).sum()
    }

    /// Copies `bytes` into the arena and returns their address.
    pub fn push(&mut self, bytes: &[u8]) -> *const u8 {
        // SAFETY: `fill` lends room for `bytes.len()` bytes, all of which are written.
        unsafe {
            self.fill(bytes.len(), |dst| {
                std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len())
            })
        }
    }

    /// Adds `len` bytes to the arena, written by `write` into the room it is lent
    /// (at the address it is given), and returns their address.
    ///
    /// # Safety
    /// `write` writes every one of the `len` bytes at the address it is given, and
    /// nothing outside them.
    pub(crate) unsafe fn fill(&mut self, len: usize, write: impl FnOnce(*mut u8)) -> *const u8 {
        let last = match self.chunks.last_mut() {
            Some(Chunk::Open(c)) if c.capacity() - c.len() >= len => {
                // SAFETY: the chunk has room for `len` bytes; `write` is as
                // promised.
                return unsafe { append_to(c, len, write) };
            }
            Some(Chunk::Open(c)) => c.capacity(),
            Some(Chunk::Adopted(b)) => b.len(),
            None => 0,
        };
        // The first chunk as asked (up to 1 GiB), then doubling up to 16 MiB.
        let size = match last {
            0 => self.first.clamp(64 * 1024, 1 << 30),
            _ => last.saturating_mul(2).clamp(64 * 1024, 16 * 1024 * 1024),
        };
        let mut chunk = Vec::with_capacity(size.max(len));
        // SAFETY: the chunk has room for `len` bytes; `write` is as promised.
        let at = unsafe { append_to(&mut chunk, len, write) };
        // Moving the vector does not move its buffer.
        self.chunks.push(Chunk::Open(chunk));
        at
    }

    /// The `len` bytes at `start`, if they are in one chunk of the arena that is at
    /// least half full, as a slice of a buffer that owns that chunk (without
    /// copying). The chunk is written no more. A chunk mostly empty is not given
    /// away: the array would hold all of its memory (64 KiB at least) for a few
    /// bytes, which are cheaper to copy.
    pub fn adopt(&mut self, start: *const u8, len: usize) -> Option<Buffer> {
        let start = start as usize;
        let chunk = self.chunks.iter_mut().find(|c| {
            let (base, used) = c.span();
            start >= base && start.checked_add(len).is_some_and(|end| end <= base + used)
        })?;
        if let Chunk::Open(v) = chunk {
            if v.len() < v.capacity() / 2 {
                return None;
            }
            // The vector's memory becomes the buffer's: same address, no copy.
            *chunk = Chunk::Adopted(Buffer::from_vec(std::mem::take(v)));
        }
        let (base, _) = chunk.span();
        match chunk {
            Chunk::Adopted(b) => Some(b.slice_with_length(start - base, len)),
            Chunk::Open(_) => None,
        }
    }
}

/// Appends `len` bytes written by `write` to `chunk` and returns their address.
///
/// # Safety
/// `chunk` has room for `len` more bytes; `write` writes every one of the `len`
/// bytes at the address it is given, and nothing outside them.
unsafe fn append_to(chunk: &mut Vec<u8>, len: usize, write: impl FnOnce(*mut u8)) -> *const u8 {
    let start = chunk.len();
    // SAFETY: within the chunk's capacity (as the caller promises), so its buffer
    // does not move; `write` initializes the `len` bytes before the length covers
    // them.
    unsafe {
        let at = chunk.as_mut_ptr().add(start);
        write(at);
        chunk.set_len(start + len);
        at
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

    /// The same function with its JIT face replaced by `block`, written for the
    /// function's job instead of through an adapter. It must compute what the
    /// interpreter's face does (`tests/functions.rs` runs both on every signature).
    pub(crate) fn with_block(
        mut self,
        block: impl Fn(&mut Arena, &[CallArg], &mut CallOut) -> u64 + Send + Sync + 'static,
    ) -> RowImpl {
        self.block = Arc::new(block);
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
    type Builder: Collect;
    /// What the closure is lent for each row (the `_with` adapters): for
    /// [`Written`], the `String` it appends the row's value to; `()` otherwise.
    type Scratch: Default;
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

/// The VARCHAR marker: arguments are `&str` (read from arrays of any string layout:
/// `Utf8`, `LargeUtf8`, `Utf8View`), results `String`s (`Utf8` arrays).
pub struct Utf8;
/// A VARCHAR result that is part of the first argument (a string): the closure
/// returns the byte range, and the JIT passes it on as a view without copying.
pub struct Slice;
/// A VARCHAR result the closure appends to the `String` it is lent and reports
/// with `Ok(Some(()))`. The `String` may hold earlier rows' values: the closure
/// only appends. One buffer serves every row, where a [`Utf8`] result allocates a
/// `String` per row.
pub struct Written;
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
        // SAFETY: as the caller promises; a valid lane's view points at UTF-8 bytes
        // (an Arrow string array's or the arena's copy of a `str`).
        unsafe { std::str::from_utf8_unchecked(Blob::lane(arg, i)) }
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
    type Scratch = ();
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

/// Appends `s` to `out`, as `push_str` does, but copies few bytes without a call
/// to `memcpy` ([`copy_short`]).
pub fn push_short(out: &mut String, s: &str) {
    out.reserve(s.len());
    // SAFETY: `out` has room for `s.len()` more bytes (reserved above), which the
    // copy fills with `s`'s bytes, so `out` stays UTF-8 when its length grows by
    // them.
    unsafe {
        let v = out.as_mut_vec();
        copy_short(s.as_ptr(), v.as_mut_ptr().add(v.len()), s.len());
        v.set_len(v.len() + s.len());
    }
}

/// Copies `n` bytes from `src` to `dst`, as `copy_nonoverlapping` does, but up to
/// 16 bytes with two overlapping loads and stores ([`copy_two`]): a call to
/// `memcpy` costs more than the copy itself for the few bytes most strings have.
///
/// # Safety
/// As for `std::ptr::copy_nonoverlapping(src, dst, n)`.
#[inline(always)]
pub(crate) unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: as the caller promises, with `n` within each copy's range.
    unsafe {
        match n {
            0 => {}
            1 => *dst = *src,
            2..=3 => copy_two::<u16>(src, dst, n),
            4..=7 => copy_two::<u32>(src, dst, n),
            8..=16 => copy_two::<u64>(src, dst, n),
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

/// Copies `n` bytes, `size_of::<W>() <= n <= 2 * size_of::<W>()`, as two words of
/// type `W` that overlap: the first `W`'s bytes and the last.
///
/// # Safety
/// As for `std::ptr::copy_nonoverlapping(src, dst, n)`, and `n` is in that range.
#[inline(always)]
unsafe fn copy_two<W: Copy>(src: *const u8, dst: *mut u8, n: usize) {
    let w = std::mem::size_of::<W>();
    // SAFETY: `w <= n`, so both words are within the `n` bytes at `src` and at
    // `dst`; with `n <= 2w` together they cover all of them.
    unsafe {
        let (head, tail) = (
            (src as *const W).read_unaligned(),
            (src.add(n - w) as *const W).read_unaligned(),
        );
        (dst as *mut W).write_unaligned(head);
        (dst.add(n - w) as *mut W).write_unaligned(tail);
    }
}

impl Ret for Written {
    type Item = ();
    type Builder = StringBuilder;
    type Scratch = String;
    fn mark(scratch: &String) -> usize {
        scratch.len()
    }
    fn discard(scratch: &mut String, mark: usize) {
        scratch.truncate(mark)
    }
    fn clear(scratch: &mut String) {
        scratch.clear()
    }
    fn take_scratch(arena: &mut Arena) -> String {
        std::mem::take(&mut arena.text)
    }
    unsafe fn end_block(out: &mut CallOut, valid: u64, arena: &mut Arena, mut text: String) {
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
        arena.text = text;
    }
    fn append(b: &mut StringBuilder, v: Option<()>, _: Option<&str>, text: &String, mark: usize) {
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
        text: &mut String,
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

/// The interpreter's face of an adapter: the result's rows, collected one by one,
/// and the rows that failed.
struct Collected<R: Ret> {
    b: R::Builder,
    errors: Vec<RowError>,
    scratch: R::Scratch,
}

impl<R: Ret> Collected<R> {
    fn new(rows: usize) -> Collected<R> {
        Collected {
            b: R::Builder::with_rows(rows),
            errors: Vec::new(),
            scratch: R::Scratch::default(),
        }
    }

    /// A NULL row, without a call (a strict function's argument is NULL).
    fn null(&mut self) {
        R::append(&mut self.b, None, None, &self.scratch, 0)
    }

    /// Row `row`'s outcome of `f`, which is lent the scratch; `first` is the first
    /// argument when it is a string.
    #[inline(always)]
    fn row(
        &mut self,
        row: usize,
        first: Option<&str>,
        f: impl FnOnce(&mut R::Scratch) -> Outcome<R::Item>,
    ) {
        match f(&mut self.scratch) {
            Ok(v) => R::append(&mut self.b, v, first, &self.scratch, 0),
            Err(m) => {
                self.errors.push((row, m));
                R::append(&mut self.b, None, None, &self.scratch, 0)
            }
        }
        R::clear(&mut self.scratch);
    }

    /// The array, of type `ty`, and the rows that failed.
    fn finish(self, ty: &DataType) -> (ArrayRef, Vec<RowError>) {
        (self.b.finish_as(ty), self.errors)
    }
}

/// The JIT's face of an adapter: one block's lanes, written one by one, and those
/// that were valid and that failed.
struct BlockWriter<R: Ret> {
    valid: u64,
    failed: u64,
    scratch: R::Scratch,
}

impl<R: Ret> BlockWriter<R> {
    fn new(arena: &mut Arena) -> BlockWriter<R> {
        BlockWriter {
            valid: 0,
            failed: 0,
            scratch: R::take_scratch(arena),
        }
    }

    /// Lane `i`'s outcome of `f`, which is lent the scratch; `first` is the first
    /// argument when it is a string.
    #[inline(always)]
    fn lane(
        &mut self,
        out: &mut CallOut,
        arena: &mut Arena,
        i: usize,
        first: Option<&str>,
        f: impl FnOnce(&mut R::Scratch) -> Outcome<R::Item>,
    ) {
        let mark = R::mark(&self.scratch);
        match f(&mut self.scratch) {
            Ok(Some(v)) => {
                // SAFETY: the kernel gives room for a block of the result type, and a
                // string argument lives for the call.
                unsafe { R::write(out, i, v, first, arena, &mut self.scratch, mark) };
                self.valid |= 1 << i;
            }
            Ok(None) => R::discard(&mut self.scratch, mark),
            Err(_) => {
                R::discard(&mut self.scratch, mark);
                self.failed |= 1 << i;
            }
        }
    }

    /// Ends the block: the valid lanes in `out.valid`; returns the failed ones.
    fn end(self, out: &mut CallOut, arena: &mut Arena) -> u64 {
        // SAFETY: the lanes `valid` were written by `lane`, with this scratch.
        unsafe { R::end_block(out, self.valid, arena, self.scratch) };
        out.valid = self.valid;
        self.failed
    }
}

/// The first argument as a string, if it is one.
macro_rules! first_str {
    ($a:ident $x:ident $(, $rest:ident $y:ident)*) => {
        $a::as_str($x)
    };
}

macro_rules! map_n {
    ($(#[$doc:meta])* $name:ident, $(#[$doc_with:meta])* $with:ident, $($a:ident $x:ident $k:tt),+) => {
        $(#[$doc])*
        pub fn $name<$($a: Arg,)+ R: Ret, F>(f: F) -> RowImpl
        where
            F: for<'a> Fn($($a::Item<'a>),+) -> Outcome<R::Item> + Send + Sync + 'static,
        {
            $with::<$($a,)+ R, _>(move |$($x,)+ _: &mut R::Scratch| f($($x),+))
        }

        $(#[$doc_with])*
        pub fn $with<$($a: Arg,)+ R: Ret, F>(f: F) -> RowImpl
        where
            F: for<'a> Fn($($a::Item<'a>,)+ &mut R::Scratch) -> Outcome<R::Item>
                + Send
                + Sync
                + 'static,
        {
            let f = Arc::new(f);
            let g = f.clone();
            RowImpl {
                eval: Arc::new(move |args: &[ArrayRef], rows: usize, ty: &DataType| {
                    let mut c = Collected::<R>::new(rows);
                    for row in 0..rows {
                        if $(args[$k].is_null(row))||+ {
                            c.null();
                            continue;
                        }
                        $(let $x = $a::get(args[$k].as_ref(), row);)+
                        c.row(row, first_str!($($a $x),+), |s| f($($x,)+ s));
                    }
                    c.finish(ty)
                }),
                block: Arc::new(move |arena: &mut Arena, args: &[CallArg], out: &mut CallOut| {
                    let mut w = BlockWriter::<R>::new(arena);
                    for i in lanes(out.valid & lane_mask()) {
                        // SAFETY: the kernel computes only lanes where every argument
                        // is valid (a strict call), and those hold values.
                        $(let $x = unsafe { $a::lane(&args[$k], i) };)+
                        w.lane(out, arena, i, first_str!($($a $x),+), |s| g($($x,)+ s));
                    }
                    w.end(out, arena)
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
    map1,
    /// [`map1`] with the result type's scratch lent to the closure (the `String` a
    /// [`Written`] result is appended to).
    map1_with,
    A a 0
);
map_n!(
    /// A function of two arguments, NULL when either is NULL.
    map2,
    /// [`map2`] with the result type's scratch lent to the closure.
    map2_with,
    A a 0, B b 1
);
map_n!(
    /// A function of three arguments, NULL when any is NULL.
    map3,
    /// [`map3`] with the result type's scratch lent to the closure.
    map3_with,
    A a 0, B b 1, C c 2
);

/// A function of any number of arguments of one type, which sees NULLs (as
/// `None`) and decides its result itself (`concat` skips them); with `strict`, it
/// is NULL when any argument is NULL and sees only non-NULL rows.
pub fn variadic<A: Arg, R: Ret, F>(strict: bool, f: F) -> RowImpl
where
    F: for<'a> Fn(&[Option<A::Item<'a>>]) -> Outcome<R::Item> + Send + Sync + 'static,
{
    variadic_with::<A, R, _>(strict, move |values, _: &mut R::Scratch| f(values))
}

/// [`variadic`] with the result type's scratch lent to the closure (the `String` a
/// [`Written`] result is appended to).
pub fn variadic_with<A: Arg, R: Ret, F>(strict: bool, f: F) -> RowImpl
where
    F: for<'a> Fn(&[Option<A::Item<'a>>], &mut R::Scratch) -> Outcome<R::Item>
        + Send
        + Sync
        + 'static,
{
    let f = Arc::new(f);
    let g = f.clone();
    RowImpl {
        eval: Arc::new(move |args: &[ArrayRef], rows: usize, ty: &DataType| {
            let mut c = Collected::<R>::new(rows);
            let mut values = Vec::with_capacity(args.len());
            for row in 0..rows {
                values.clear();
                values.extend(
                    args.iter()
                        .map(|a| (!a.is_null(row)).then(|| A::get(a.as_ref(), row))),
                );
                if strict && values.iter().any(Option::is_none) {
                    c.null();
                    continue;
                }
                let first = values.first().copied().flatten();
                c.row(row, first.and_then(A::as_str), |s| f(&values, s));
            }
            c.finish(ty)
        }),
        block: Arc::new(
            move |arena: &mut Arena, args: &[CallArg], out: &mut CallOut| {
                // The row's values: on the stack for up to 8 arguments.
                let (mut inline, mut spilled) = ([None; 8], Vec::new());
                let values = match args.len() {
                    n @ 0..=8 => &mut inline[..n],
                    n => {
                        spilled.resize(n, None);
                        &mut spilled[..]
                    }
                };
                let mut w = BlockWriter::<R>::new(arena);
                for i in lanes(out.valid & lane_mask()) {
                    for (v, a) in values.iter_mut().zip(args) {
                        // SAFETY: valid lanes hold values; a strict call computes only
                        // lanes where every argument is valid.
                        *v = (strict || a.valid >> i & 1 == 1).then(|| unsafe { A::lane(a, i) });
                    }
                    let first = values.first().copied().flatten();
                    w.lane(out, arena, i, first.and_then(A::as_str), |s| g(values, s));
                }
                w.end(out, arena)
            },
        ),
        strict,
        can_error: false,
    }
}

/// The JIT's face of joining strings: `a || b || …` when `strict` (NULL if any
/// part is NULL), else `concat(a, b, …)` (NULL parts skipped, never NULL). The
/// block's lengths are added up lane by lane, room for all of its values is taken
/// from the arena at once, and each part is copied straight into its place, part
/// by part (a part's lengths are alike from lane to lane, so the copies' branches
/// are predicted): no closure call, `Option` or scratch copy per row, which were
/// most of the cost of `||` through [`variadic_with`] (performance-notes.md,
/// "String functions").
pub(crate) fn join_block(
    strict: bool,
) -> impl Fn(&mut Arena, &[CallArg], &mut CallOut) -> u64 + Send + Sync + 'static {
    move |arena: &mut Arena, args: &[CallArg], out: &mut CallOut| match strict {
        true => join_lanes::<true>(arena, args, out),
        false => join_lanes::<false>(arena, args, out),
    }
}

/// [`join_block`]'s work, for strict calls (`STRICT`: every part of the lanes to
/// compute is valid) or not (a part's invalid lanes are skipped).
fn join_lanes<const STRICT: bool>(arena: &mut Arena, args: &[CallArg], out: &mut CallOut) -> u64 {
    const N: usize = LANES as usize;
    let compute = out.valid & lane_mask();
    let taken = |a: &CallArg| if STRICT { compute } else { compute & a.valid };
    // Each lane's length, then where it starts in the block's bytes.
    let mut starts = [0u64; N];
    for a in args {
        let take = taken(a);
        // SAFETY: a string argument's block has `LANES` lengths (those of lanes it
        // does not hold are masked off here, unread as lengths).
        let part = unsafe { std::slice::from_raw_parts(a.lens, N) };
        for (i, (sum, &len)) in starts.iter_mut().zip(part).enumerate() {
            *sum += len & 0u64.wrapping_sub(take >> i & 1);
        }
    }
    let mut total = 0u64;
    for (i, start) in starts.iter_mut().enumerate() {
        let len = *start & 0u64.wrapping_sub(compute >> i & 1);
        *start = total;
        total += len;
    }
    let mut write = |base: *mut u8| {
        for i in lanes(compute) {
            let len = starts.get(i + 1).map_or(total, |&next| next) - starts[i];
            // SAFETY: room for a block of views; lane `i`'s value is the `len`
            // bytes from `starts[i]` in the room lent, written below.
            unsafe { write_view(out, i, base.wrapping_add(starts[i] as usize), len as usize) };
        }
        let mut at = starts;
        for a in args {
            for i in lanes(taken(a)) {
                // SAFETY: the part's lane is valid, so its view is of bytes that live
                // for the call; the room lent holds, from `starts[i]`, the lane's
                // parts one after another, the lengths of which `starts` was built
                // from.
                unsafe {
                    let src = *(a.values as *const u64).add(i) as *const u8;
                    let n = *a.lens.add(i);
                    copy_short(src, base.add(at[i] as usize), n as usize);
                    at[i] += n;
                }
            }
        }
    };
    if total == 0 {
        // Only empty values: nothing to copy, no arena chunk to make for them.
        write(std::ptr::NonNull::dangling().as_ptr());
    } else {
        // SAFETY: `write` fills exactly the `total` bytes lent (every lane's parts,
        // whose lengths add up to `total`).
        unsafe { arena.fill(total as usize, write) };
    }
    out.valid = compute;
    0
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

    /// Lanes per block.
    const N: usize = LANES as usize;

    /// The JIT's face of `f` over one block of string arguments (`None`: NULL),
    /// computing the lanes `compute`: each lane's value (read from its view) and
    /// the failed lanes.
    fn run_block(
        f: &RowImpl,
        args: &[Vec<Option<&str>>],
        compute: u64,
        arena: &mut Arena,
    ) -> (Vec<Option<String>>, u64, Vec<(u64, u64)>) {
        let views: Vec<(Vec<u64>, Vec<u64>, u64)> = args
            .iter()
            .map(|a| {
                let mut v = (vec![0u64; N], vec![0u64; N], 0u64);
                for (i, s) in a.iter().enumerate() {
                    // A NULL lane's view is of other bytes, which must not be read.
                    let bytes = s.unwrap_or("NULL!");
                    (v.0[i], v.1[i]) = (bytes.as_ptr() as u64, bytes.len() as u64);
                    v.2 |= (s.is_some() as u64) << i;
                }
                v
            })
            .collect();
        let call_args: Vec<CallArg> = views
            .iter()
            .map(|(values, lens, valid)| CallArg {
                values: values.as_ptr() as *const u8,
                lens: lens.as_ptr(),
                valid: *valid,
            })
            .collect();
        let (mut values, mut lens) = (vec![0u64; N], vec![0u64; N]);
        let mut out = CallOut {
            values: values.as_mut_ptr() as *mut u8,
            lens: lens.as_mut_ptr(),
            valid: compute,
        };
        let failed = (f.block)(arena, &call_args, &mut out);
        let shown = (0..N)
            .map(|i| {
                (out.valid >> i & 1 == 1).then(|| {
                    // SAFETY (test): a valid lane's view is of the arena's bytes.
                    let bytes = unsafe {
                        std::slice::from_raw_parts(values[i] as *const u8, lens[i] as usize)
                    };
                    String::from_utf8(bytes.to_vec()).unwrap()
                })
            })
            .collect();
        let spans = (0..N)
            .filter(|i| out.valid >> i & 1 == 1)
            .map(|i| (values[i], lens[i]))
            .collect();
        (shown, failed, spans)
    }

    #[test]
    fn written_results_are_one_run_without_the_rows_that_have_none() {
        // Writes before deciding: "null" rows are NULL, "bad" rows fail.
        let f = map1_with::<Utf8, Written, _>(|s: &str, out: &mut String| {
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
        };
        let mut arena = Arena::default();
        assert_eq!((f.block)(&mut arena, &call, &mut out), 0);
        let even = 0x5555_5555_5555_5555 & lane_mask();
        assert_eq!(mask, (even & !0b11) | 0b10);
        assert_eq!(out.valid, lane_mask() & !0b11);
    }

    #[test]
    fn the_arena_gives_a_run_of_one_chunk_to_a_buffer_without_copying() {
        let mut arena = Arena::with_room(100);
        let a = arena.push(b"abc");
        // A chunk (of 64 KiB) mostly empty is not given away.
        assert!(arena.adopt(a, 3).is_none());
        let b = arena.push(&vec![b'x'; 40_000]);
        let run = arena.adopt(a, 40_003).unwrap();
        assert_eq!(run.as_ptr(), a);
        assert_eq!(&run.as_slice()[..5], b"abcxx");
        // Part of the same chunk again: the same memory.
        assert_eq!(arena.adopt(b, 2).unwrap().as_ptr(), b);
        // Not the arena's bytes, or past what was written.
        assert!(arena.adopt(b"abcde".as_ptr(), 5).is_none());
        assert!(arena.adopt(a, 40_004).is_none());
        // An adopted chunk is not written again: new bytes go to a new chunk.
        let c = arena.push(b"fgh");
        assert_eq!(&run.as_slice()[..5], b"abcxx");
        assert!(
            arena.adopt(a, 40_006).is_none(),
            "{c:?} is in a chunk of its own"
        );
        assert_eq!(arena.used(), 40_006);
    }

    #[test]
    fn joined_blocks_copy_every_part_into_one_run() {
        let words = [
            "",
            "a",
            "-",
            "ab",
            "héllo",
            "日本語テキスト",
            "0123456789abcdefg",
            "x",
        ];
        let long = "l".repeat(300);
        let part = |k: usize| -> Vec<Option<&str>> {
            (0..N)
                .map(|i| match (i * 7 + k * 3) % 11 {
                    0 => None,
                    10 => Some(long.as_str()),
                    j => Some(words[j % words.len()]),
                })
                .collect()
        };
        let args = [part(0), part(1), part(2)];
        for strict in [true, false] {
            let f = variadic::<Utf8, Utf8, _>(strict, |_| Ok(None)).with_block(join_block(strict));
            let all_valid = (0..N)
                .filter(|&i| args.iter().all(|a| a[i].is_some()))
                .fold(0u64, |m, i| m | 1 << i);
            // Every lane, and a tail block of the first 13 lanes.
            for lanes_in_batch in [lane_mask(), lane_mask() & 0x1fff] {
                // The kernel asks a strict call for the lanes where every part is
                // valid.
                let compute = match strict {
                    true => lanes_in_batch & all_valid,
                    false => lanes_in_batch,
                };
                let mut arena = Arena::default();
                let (shown, failed, spans) = run_block(&f, &args, compute, &mut arena);
                assert_eq!(failed, 0);
                for i in 0..N {
                    let want = (compute >> i & 1 == 1)
                        .then(|| args.iter().filter_map(|a| a[i]).collect::<String>());
                    assert_eq!(shown[i], want, "strict {strict}, lane {i}");
                }
                // One run of the arena, in lane order.
                for w in spans.windows(2) {
                    assert_eq!(w[0].0 + w[0].1, w[1].0);
                }
                let bytes: u64 = spans.iter().map(|s| s.1).sum();
                assert_eq!(arena.used() as u64, bytes);
                assert!(arena.holds(spans[0].0 as *const u8));
            }
        }
    }

    #[test]
    fn joined_empty_strings_take_no_arena_chunk() {
        let empty: Vec<Option<&str>> = vec![Some(""); N];
        let f = variadic::<Utf8, Utf8, _>(true, |_| Ok(None)).with_block(join_block(true));
        let mut arena = Arena::default();
        let (shown, _, _) = run_block(&f, &[empty.clone(), empty], lane_mask(), &mut arena);
        assert!(shown.iter().all(|s| s.as_deref() == Some("")));
        assert!(arena.chunks.is_empty());
    }

    #[test]
    fn short_copies_copy_every_length() {
        let src: Vec<u8> = (1..=40).collect();
        for n in 0..=40 {
            let mut dst = vec![0u8; 48];
            // SAFETY (test): `n` bytes are in bounds of both.
            unsafe { copy_short(src.as_ptr(), dst.as_mut_ptr(), n) };
            assert_eq!(&dst[..n], &src[..n], "{n}");
            assert!(
                dst[n..].iter().all(|&b| b == 0),
                "{n}: nothing past the copy"
            );
        }
    }

    #[test]
    fn short_strings_are_appended_whole() {
        let text = "aé日b🦀cdefghijklmnopqrstuvwxyz";
        for (start, _) in text.char_indices() {
            for (end, _) in text[start..]
                .char_indices()
                .chain([(text.len() - start, ' ')])
            {
                let part = &text[start..start + end];
                let mut out = String::from("x");
                push_short(&mut out, part);
                push_short(&mut out, part);
                assert_eq!(out, format!("x{part}{part}"), "{part:?}");
            }
        }
    }
}
