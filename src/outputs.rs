//! The outputs of a projection's kernel: the memory it writes them into on each
//! call, and the Arrow arrays made from that memory without copying it (strings
//! excepted: their bytes are the call's arena's own when they are a run of one of
//! its chunks, else copied out of the arena and the input columns).
//!
//! Everything that depends only on the output types is decided once, when the
//! projector is built ([`KernelOutputs::new`]), so that a call allocates at most
//! one block of memory for all outputs (with its owner: a `Bytes`, and for a kept
//! block a [`Block`]), and an `Arc` per array. A block of [`KEEP_FROM`] to
//! [`KEEP_UP_TO`] bytes stays with the thread that made it: its next call writes
//! into it again once no array uses it, so that a call with primitive and boolean
//! outputs allocates nothing but the arrays' `Arc`s and the result `Vec` (strings
//! and narrowed decimals are copied into arrays of their own).

use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::Arc;

use arrow::array::{
    downcast_primitive, make_array, ArrayData, ArrayRef, ArrowPrimitiveType, BinaryArray,
    BooleanArray, Decimal128Array, PrimitiveArray, StringArray,
};
use arrow::buffer::{BooleanBuffer, Buffer, MutableBuffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow::datatypes::DataType;
use broadhead_codegen::{OutSlot, PType};

use crate::error::{Error, EvalError, Result};
use crate::functions::row::Arena;
use crate::kernel::with_scratch;
use crate::lower::output_physical;

/// The outputs of one kernel, in its order.
pub(crate) struct KernelOutputs {
    outputs: Vec<Output>,
}

struct Output {
    ty: DataType,
    values: Values,
    make: Make,
}

/// What an output's values are in the kernel's memory.
#[derive(Clone, Copy)]
enum Values {
    /// A view per row: `rows` addresses, then `rows` lengths (`u64`s), zeroed
    /// before the call.
    Views,
    /// `width` bytes per row, every one written by the kernel (full blocks store
    /// whole vectors, the tail block its active rows: codegen's `write_output`).
    Fixed(usize),
    /// A bit per row in zeroed 64-bit words.
    Bits,
}

impl Values {
    fn bytes(self, rows: usize) -> usize {
        match self {
            Values::Views => rows * 16,
            Values::Fixed(width) => rows * width,
            Values::Bits => validity_bytes(rows),
        }
    }

    fn zeroed(self) -> bool {
        !matches!(self, Values::Fixed(_))
    }
}

/// Makes an output's array of type `.0` from its values (exactly the bytes of its
/// `.2` rows) and nulls; strings may take memory of the call's arena.
type Make = fn(&DataType, Buffer, usize, Option<NullBuffer>, &mut Arena) -> Result<ArrayRef>;

/// The bytes of validity words (or of bits) for `rows` rows.
fn validity_bytes(rows: usize) -> usize {
    rows.div_ceil(64) * 8
}

/// The bytes of a cache line: each output's values and validity start on one.
const LINE: usize = 64;

/// The 16-byte words that hold `bytes` bytes, rounded up to whole cache lines, so
/// that the part after them starts on a line too. A kernel's vector stores into
/// values that do not start on a line each straddle two lines (with 64-byte
/// vectors, every one of them), which made a projection's stores several times
/// slower than its loads.
fn words(bytes: usize) -> usize {
    bytes.div_ceil(LINE) * (LINE / 16)
}

impl KernelOutputs {
    /// The outputs of a kernel computing values of `types`.
    pub(crate) fn new(types: impl IntoIterator<Item = DataType>) -> Self {
        let outputs = types
            .into_iter()
            .map(|ty| {
                let values = match output_physical(&ty) {
                    Some(PType::Str) => Values::Views,
                    Some(p) if p.width() > 0 => Values::Fixed(p.width() as usize),
                    _ => Values::Bits,
                };
                let make = maker(&ty);
                Output { ty, values, make }
            })
            .collect();
        KernelOutputs { outputs }
    }

    /// Calls `run` with a slot per output for `rows` rows, then makes the outputs'
    /// arrays from what it wrote. `run` returns whether the kernel ran (`None`: it
    /// did not, and neither does this) and, if it did, its result: the outputs
    /// whose validity it did not write, none of whose rows is NULL (bit k for
    /// output k; see `Kernel::run`).
    ///
    /// Strings are copied out of the memory the views point to before this
    /// returns: the caller's arena must outlive the call.
    pub(crate) fn evaluate(
        &self,
        rows: usize,
        arena: &mut Arena,
        run: impl FnOnce(&[OutSlot], &mut Arena) -> Result<Option<usize>>,
    ) -> Result<Option<Vec<ArrayRef>>> {
        let mut memory = self.allocate(rows);
        let empty = OutSlot {
            values: std::ptr::null_mut(),
            validity: std::ptr::null_mut(),
        };
        let base = memory.base();
        let ran = with_scratch(self.outputs.len(), empty, |slots| {
            let mut at = 0;
            for (o, slot) in self.outputs.iter().zip(slots.iter_mut()) {
                let values = words(o.values.bytes(rows));
                *slot = OutSlot {
                    values: base.wrapping_add(at) as *mut u8,
                    validity: base.wrapping_add(at + values) as *mut u64,
                };
                at += values + words(validity_bytes(rows));
            }
            run(slots, arena)
        });
        // The outputs whose validity the kernel did not write (no row of them is
        // NULL), bit k for output k.
        let unwritten_validity = match ran {
            Ok(Some(mask)) => mask,
            _ => {
                memory.unused();
                return ran.map(|_| None);
            }
        };
        // SAFETY: `allocate` zeroed every byte of the first `total_words` words but
        // the values of `Values::Fixed` outputs, and the kernel ran: it wrote every
        // one of those.
        let (all, keep) = unsafe { memory.written(self.total_words(rows)) };
        let validity = validity_bytes(rows);
        let mut at = 0;
        // Each array takes a slice of the block cut to its exact length (what
        // `ScalarBuffer::from` needs): one reference count per part an array keeps,
        // none for the validity of an output without nulls.
        let mut arrays = Vec::with_capacity(self.outputs.len());
        let made = self.outputs.iter().enumerate().try_for_each(|(k, o)| {
            let bytes = o.values.bytes(rows);
            let validity_at = at + words(bytes) * 16;
            let all_valid = u32::try_from(k)
                .ok()
                .and_then(|k| unwritten_validity.checked_shr(k))
                .is_some_and(|m| m & 1 == 1);
            let nulls = match all_valid {
                true => 0,
                false => null_count(
                    &all.typed_data::<u64>()[validity_at / 8..][..validity / 8],
                    rows,
                ),
            };
            let nulls = (nulls > 0).then(|| {
                let bits =
                    BooleanBuffer::new(all.slice_with_length(validity_at, validity), 0, rows);
                // SAFETY: `nulls` is the count of unset bits among the first `rows`
                // of these words, counted just above.
                unsafe { NullBuffer::new_unchecked(bits, nulls) }
            });
            arrays.push((o.make)(
                &o.ty,
                all.slice_with_length(at, bytes),
                rows,
                nulls,
                arena,
            )?);
            at = validity_at + words(validity) * 16;
            Ok::<_, Error>(())
        });
        // Kept whether or not every array could be made.
        if keep {
            Block::keep(all);
        }
        made?;
        Ok(Some(arrays))
    }

    /// The 16-byte words of memory all outputs take for `rows` rows.
    fn total_words(&self, rows: usize) -> usize {
        let validity = words(validity_bytes(rows));
        self.outputs
            .iter()
            .map(|o| words(o.values.bytes(rows)) + validity)
            .sum()
    }

    /// The memory for `rows` rows of every output: for each, its values, then its
    /// validity words, each part on a cache line ([`LINE`]: alignment enough for
    /// every type the kernel writes, `i128` too), all zeroed but the values the
    /// kernel writes itself (the padding after them is zeroed), in the first
    /// [`KernelOutputs::total_words`] words.
    ///
    /// Not arrow's `MutableBuffer`: that aligns to 128 bytes, and a
    /// `posix_memalign` (and its free) per buffer per call was most of the cost of
    /// evaluating a small batch. One block for all outputs, which their arrays
    /// share: it is freed when the last of them is dropped, or, for a kept block,
    /// when the thread lets it go too ([`Block`]).
    fn allocate(&self, rows: usize) -> Memory {
        let validity = words(validity_bytes(rows));
        let total = self.total_words(rows);
        let mut memory = Block::take(total);
        let base = memory.base();
        let mut at = 0;
        for o in &self.outputs {
            let values = words(o.values.bytes(rows));
            // The kernel writes the values' bytes: from the first word it does not
            // write whole.
            let zero_from = if o.values.zeroed() {
                at
            } else {
                at + o.values.bytes(rows) / 16
            };
            at += values + validity;
            // SAFETY: `base` is writable for at least `total` words (`Block::take`),
            // and `zero_from <= at <= total`.
            unsafe { std::ptr::write_bytes(base.add(zero_from), 0, at - zero_from) };
        }
        memory
    }
}

/// Blocks of at least this many bytes are kept for reuse: smaller ones come from
/// the allocator's per-thread cache as fast as from [`SPARE`], while larger ones
/// take its general path (about a tenth of a 1,024-row projection's time).
const KEEP_FROM: usize = 1024;

/// Blocks of more than this many bytes are not kept: a thread holds at most this
/// much memory for its next call.
const KEEP_UP_TO: usize = 1 << 20;

/// A spare block is reused for a call that needs at least this fraction of it.
const SPARE_SLACK: usize = 4;

thread_local! {
    /// The last block of a size to keep that this thread's calls made, or the one
    /// they kept in its place (see [`Block::take`]): reused by the next call once no
    /// array uses it. `None` before the first.
    static SPARE: Cell<Option<Buffer>> = const { Cell::new(None) };
}

/// The memory of one call's outputs, before the kernel has written it.
enum Memory {
    /// New memory from the allocator (`Vec`'s length is 0 until it is written),
    /// the words before its first cache line, where the block starts (`lead`),
    /// and whether the block is to be kept as the thread's spare.
    Fresh {
        memory: Vec<i128>,
        lead: usize,
        keep: bool,
    },
    /// A kept block no array uses any more, taken from [`SPARE`]: this is its only
    /// handle, so nothing else reads it while the kernel writes it.
    Reused(Buffer),
}

impl Memory {
    /// Where the first word is, writable for as many words as were asked of
    /// [`Block::take`].
    fn base(&mut self) -> *mut i128 {
        match self {
            Memory::Fresh { memory, lead, .. } => memory.as_mut_ptr().wrapping_add(*lead),
            // A pointer with the provenance of `Block::buffer`'s mutable borrow, which
            // `Buffer` keeps: writing through it is allowed while no other handle to
            // the memory (and no reference into it) exists, which `Block::take`
            // checked.
            Memory::Reused(buffer) => buffer.as_ptr() as *mut i128,
        }
    }

    /// The buffer of the first `total` words, once they are written, and whether
    /// it is to be kept as the thread's spare ([`Block::keep`]) when the call's
    /// arrays are made.
    ///
    /// # Safety
    /// Every byte of the first `total` words must have been written.
    unsafe fn written(self, total: usize) -> (Buffer, bool) {
        match self {
            Memory::Fresh {
                mut memory,
                lead,
                keep,
            } => {
                // SAFETY: `Block::take` reserved `lead + total` words; the words
                // before the block are written here, and the caller wrote the rest.
                unsafe {
                    std::ptr::write_bytes(memory.as_mut_ptr(), 0, lead);
                    memory.set_len(lead + total);
                }
                let all = match keep {
                    true => Block::buffer(memory),
                    false => Buffer::from_vec(memory),
                };
                (all.slice(lead * 16), keep)
            }
            // Its bytes past `total` words are a former call's, initialized too.
            Memory::Reused(buffer) => (buffer, true),
        }
    }

    /// New memory for a block of `words` words that starts on a cache line (the
    /// allocator's is 16-byte aligned: up to 3 words lead to the first line).
    fn fresh(words: usize, keep: bool) -> Memory {
        let memory = Vec::with_capacity(words + LINE / 16 - 1);
        let at = memory.as_ptr() as usize;
        let lead = (at.next_multiple_of(LINE) - at) / 16;
        Memory::Fresh { memory, lead, keep }
    }

    /// Gives a block that was not used back to [`SPARE`].
    fn unused(self) {
        if let Memory::Reused(buffer) = self {
            Block::keep(buffer);
        }
    }
}

/// The owner of a block of [`KEEP_FROM`] bytes or more that arrays share, which
/// frees it when the last of them (or [`SPARE`]) lets it go. The thread that made
/// it keeps a handle in [`SPARE`]: its next call writes into the block again if no
/// array uses it any more, instead of allocating another.
struct Block {
    /// The memory, freed with the `Block`.
    _memory: Vec<i128>,
}

impl Block {
    /// Memory for at least `words` words: the thread's spare block if no array uses
    /// it, and it is large enough and not more than [`SPARE_SLACK`] times that (a
    /// small result kept by the caller would hold on to all of it). Otherwise new
    /// memory, which takes the spare's place if it is of a size to keep.
    fn take(words: usize) -> Memory {
        if !Block::kept(words) {
            return Memory::fresh(words, false);
        }
        if let Ok(Some(spare)) = SPARE.try_with(Cell::take) {
            let fits = (words..=words.saturating_mul(SPARE_SLACK)).contains(&(spare.len() / 16));
            if fits && spare.strong_count() == 1 {
                // Pairs with the release decrement of the last array's drop, on
                // whatever thread: its reads of the block happen before our writes.
                std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
                return Memory::Reused(spare);
            }
            // Freed here, or by the arrays that still use it.
        }
        Memory::fresh(words, true)
    }

    /// Whether a block of `words` words is of a size to keep.
    fn kept(words: usize) -> bool {
        (KEEP_FROM..=KEEP_UP_TO).contains(&(words.saturating_mul(16)))
    }

    /// `memory`, of a size to keep, as a buffer owned by a `Block`.
    fn buffer(mut memory: Vec<i128>) -> Buffer {
        let bytes = memory.len() * 16;
        // From a mutable borrow: the pointer is written through when the block is
        // reused (`Memory::base`).
        let ptr = NonNull::from(memory.as_mut_slice()).cast::<u8>();
        // SAFETY: `ptr` is the start of `memory`'s `bytes` initialized bytes, on
        // the heap (moving the `Vec` into `Block` does not move them). `Block`
        // neither reads, writes nor frees them while the buffer's `Bytes` hold the
        // `Arc`; they are freed when that `Arc` is dropped.
        unsafe { Buffer::from_custom_allocation(ptr, bytes, Arc::new(Block { _memory: memory })) }
    }

    /// Makes `buffer`, a call's whole block, the thread's spare (replacing the one
    /// there, which its arrays, if any, free).
    fn keep(buffer: Buffer) {
        let _ = SPARE.try_with(|s| s.set(Some(buffer)));
    }
}

/// How many of the first `rows` bits of validity words `words` are unset (rows
/// that are NULL). Words are compared with all-valid first, which costs less than
/// counting their bits when no row is NULL (the usual case).
fn null_count(words: &[u64], rows: usize) -> usize {
    let (full, rest) = (rows / 64, rows % 64);
    let tail = match rest {
        0 => 0,
        _ => words[full] & ((1u64 << rest) - 1),
    };
    if words[..full].iter().all(|&w| w == u64::MAX) && tail.count_ones() as usize == rest {
        return 0;
    }
    let valid: usize = words[..full].iter().map(|w| w.count_ones() as usize).sum();
    rows - (valid + tail.count_ones() as usize)
}

/// How an output of type `t` becomes an array.
fn maker(t: &DataType) -> Make {
    // Arrow's type for `$t`, or one with a parameter (a time zone, a precision).
    macro_rules! typed {
        ($t:ty) => {
            if *t == <$t as ArrowPrimitiveType>::DATA_TYPE {
                primitive::<$t, false> as Make
            } else {
                primitive::<$t, true> as Make
            }
        };
    }
    match t {
        DataType::Utf8 => strings,
        DataType::Binary => blobs,
        DataType::Boolean => booleans,
        DataType::Decimal128(..) => decimals,
        _ => downcast_primitive! {
            t => (typed),
            _ => other,
        },
    }
}

/// A primitive array, made without going through `ArrayData` and its validation;
/// typed `t` if `RETYPED` (else `t` is `T`'s own type).
fn primitive<T: ArrowPrimitiveType, const RETYPED: bool>(
    t: &DataType,
    values: Buffer,
    _: usize,
    nulls: Option<NullBuffer>,
    _: &mut Arena,
) -> Result<ArrayRef> {
    let values = ScalarBuffer::<T::Native>::from(values);
    if nulls.as_ref().is_some_and(|n| n.len() != values.len()) {
        return Err(
            EvalError::Other("an output's validity and values differ in length".into()).into(),
        );
    }
    // SAFETY: the validity, if any, is as long as the values (checked just above).
    // Not `try_new`: its result, as large as the array and an error, was copied
    // through memory on every call.
    let array = unsafe { PrimitiveArray::<T>::new_unchecked(values, nulls) };
    Ok(Arc::new(if RETYPED {
        array.with_data_type(t.clone())
    } else {
        array
    }))
}

/// Any other fixed-width type, through `ArrayData`.
fn other(
    t: &DataType,
    values: Buffer,
    rows: usize,
    nulls: Option<NullBuffer>,
    _: &mut Arena,
) -> Result<ArrayRef> {
    let data = ArrayData::builder(t.clone())
        .len(rows)
        .add_buffer(values)
        .nulls(nulls)
        .build()?;
    Ok(make_array(data))
}

fn booleans(
    _: &DataType,
    bits: Buffer,
    rows: usize,
    nulls: Option<NullBuffer>,
    _: &mut Arena,
) -> Result<ArrayRef> {
    Ok(Arc::new(BooleanArray::new(
        BooleanBuffer::new(bits, 0, rows),
        nulls,
    )))
}

/// Decimals, written as `i128`s ([`output_physical`]), in place. Not through `ArrayData`'s
/// validation: rows that are NULL may hold any value.
fn decimals(
    t: &DataType,
    values: Buffer,
    _: usize,
    nulls: Option<NullBuffer>,
    _: &mut Arena,
) -> Result<ArrayRef> {
    let wide = Decimal128Array::new(ScalarBuffer::from(values), nulls);
    Ok(Arc::new(wide.with_data_type(t.clone())))
}

/// The offsets of the strings whose views are `addresses` and `lengths` (the rows
/// where `valid` is false are empty), the bytes they take, where the first
/// non-empty one starts, and whether the non-empty ones follow each other in
/// memory. Offsets past 2 GiB wrap: the caller checks the bytes.
fn offsets_of(
    addresses: &[u64],
    lengths: &[u64],
    valid: impl Fn(usize) -> bool,
) -> (Vec<i32>, u64, Option<u64>, bool) {
    let mut offsets = Vec::with_capacity(lengths.len() + 1);
    offsets.push(0i32);
    let (mut bytes, mut start, mut next, mut one_run) = (0u64, None, 0u64, true);
    for (i, (&at, &len)) in addresses.iter().zip(lengths).enumerate() {
        let len = if valid(i) { len } else { 0 };
        if len > 0 {
            match start {
                None => start = Some(at),
                Some(_) => one_run &= at == next,
            }
            next = at.wrapping_add(len);
        }
        bytes = bytes.wrapping_add(len);
        offsets.push(bytes as i32);
    }
    (offsets, bytes, start, one_run)
}

/// The byte strings a kernel wrote as views (`rows` addresses, then `rows`
/// lengths) as a BLOB array, made while the arena and the input columns they point
/// into are alive. When the bytes of the valid rows follow each other in one chunk
/// of the arena (a function's results, written in row order), the array takes that
/// chunk's memory; otherwise they are copied.
fn blobs_from_views(
    views: &Buffer,
    rows: usize,
    nulls: Option<NullBuffer>,
    arena: &mut Arena,
) -> Result<BinaryArray> {
    let views = views.typed_data::<u64>();
    let (addresses, lengths) = views.split_at(rows);
    let valid = |i: usize| nulls.as_ref().is_none_or(|n| n.is_valid(i));
    let (offsets, bytes, start, one_run) = match &nulls {
        None => offsets_of(addresses, lengths, |_| true),
        Some(n) => offsets_of(addresses, lengths, |i| n.is_valid(i)),
    };
    let bytes = usize::try_from(bytes)
        .ok()
        .filter(|&b| i32::try_from(b).is_ok())
        .ok_or_else(|| {
            Error::from(EvalError::Other(format!(
                "the strings of a result column of {rows} rows exceed 2 GiB, the most a column holds"
            )))
        })?;
    let adopted = match start {
        Some(at) if one_run => arena.adopt(at as *const u8, bytes),
        _ => None,
    };
    let values = match adopted {
        Some(values) => values,
        None => {
            let mut values = MutableBuffer::with_capacity(bytes);
            for i in (0..rows).filter(|&i| valid(i) && lengths[i] > 0) {
                // SAFETY: the kernel wrote, for every valid row, a view of bytes (from
                // a column of the call, a literal of the kernel, or the call's
                // arena), all alive until the caller's arena drops, after this copy.
                values.extend_from_slice(unsafe {
                    std::slice::from_raw_parts(addresses[i] as *const u8, lengths[i] as usize)
                });
            }
            values.into()
        }
    };
    // SAFETY: the offsets start at 0 and never decrease (lengths are added, and
    // their sum, checked above, fits an `i32`), and the last is `bytes`, the length
    // of `values`.
    let offsets = unsafe { OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)) };
    // SAFETY: as above for the offsets; `nulls` has `rows` bits.
    Ok(unsafe { BinaryArray::new_unchecked(offsets, values, nulls) })
}

fn blobs(
    _: &DataType,
    views: Buffer,
    rows: usize,
    nulls: Option<NullBuffer>,
    arena: &mut Arena,
) -> Result<ArrayRef> {
    Ok(Arc::new(blobs_from_views(&views, rows, nulls, arena)?))
}

/// The strings a kernel wrote as views: [`blobs_from_views`], as the VARCHAR they
/// are.
fn strings(
    _: &DataType,
    views: Buffer,
    rows: usize,
    nulls: Option<NullBuffer>,
    arena: &mut Arena,
) -> Result<ArrayRef> {
    let (offsets, values, nulls) = blobs_from_views(&views, rows, nulls, arena)?.into_parts();
    // SAFETY: every view of a VARCHAR output is of a UTF-8 string (a column of the
    // call, a literal, or a row function's `String`), so the bytes are UTF-8, and
    // each row's bytes are one view's.
    Ok(Arc::new(unsafe {
        StringArray::new_unchecked(offsets, values, nulls)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::EvalError;
    use arrow::array::{Array, AsArray};
    use arrow::datatypes::{
        Decimal128Type, Int64Type, Int8Type, TimeUnit, TimestampMillisecondType,
    };

    const WORDS: [&str; 3] = ["", "ab", "héllo"];

    /// A kernel stand-in: checks its memory is laid out and zeroed as promised, then
    /// writes row `i` of every output (valid unless `i % 3 == 0`).
    fn write(types: &[DataType], rows: usize, outs: &[OutSlot]) {
        let validity = validity_bytes(rows);
        let mut spans = Vec::new();
        for (t, out) in types.iter().zip(outs) {
            let values = KernelOutputs::new([t.clone()]).outputs[0].values;
            for p in [out.values as usize, out.validity as usize] {
                assert_eq!(p % LINE, 0, "{t}, {rows} rows: parts start on cache lines");
            }
            spans.push((out.values as usize, values.bytes(rows)));
            spans.push((out.validity as usize, validity));
            // SAFETY (test): the slots point into memory of these sizes.
            let valid = unsafe { std::slice::from_raw_parts_mut(out.validity, rows.div_ceil(64)) };
            assert!(valid.iter().all(|&w| w == 0), "{t}: validity zeroed");
            for i in (0..rows).filter(|i| i % 3 != 0) {
                valid[i / 64] |= 1 << (i % 64);
            }
            let v = out.values;
            // SAFETY (test): as above, for each type's width.
            unsafe {
                match values {
                    Values::Fixed(1) => {
                        let s = std::slice::from_raw_parts_mut(v as *mut i8, rows);
                        (0..rows).for_each(|i| s[i] = i as i8);
                    }
                    Values::Fixed(8) => {
                        let s = std::slice::from_raw_parts_mut(v as *mut i64, rows);
                        (0..rows).for_each(|i| s[i] = -(i as i64));
                    }
                    Values::Fixed(16) => {
                        let s = std::slice::from_raw_parts_mut(v as *mut i128, rows);
                        (0..rows).for_each(|i| s[i] = (i as i128) << 70);
                    }
                    Values::Bits => {
                        let s = std::slice::from_raw_parts_mut(v as *mut u64, rows.div_ceil(64));
                        assert!(s.iter().all(|&w| w == 0), "{t}: bits zeroed");
                        (0..rows)
                            .filter(|i| i % 2 == 1)
                            .for_each(|i| s[i / 64] |= 1 << (i % 64));
                    }
                    Values::Views => {
                        let s = std::slice::from_raw_parts_mut(v as *mut u64, 2 * rows);
                        assert!(s.iter().all(|&w| w == 0), "{t}: views zeroed");
                        for i in 0..rows {
                            let w = WORDS[i % 3];
                            (s[i], s[rows + i]) = (w.as_ptr() as u64, w.len() as u64);
                        }
                    }
                    Values::Fixed(w) => panic!("no test values of width {w}"),
                }
            }
        }
        spans.sort_unstable();
        for pair in spans.windows(2) {
            assert!(
                pair[0].0 + pair[0].1 <= pair[1].0,
                "parts overlap: {spans:?}"
            );
        }
    }

    #[test]
    fn every_kind_of_output_at_every_block_edge() {
        let types = vec![
            DataType::Int8,
            DataType::Int64,
            DataType::Decimal128(38, 2),
            DataType::Boolean,
            DataType::Utf8,
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
            DataType::Binary,
        ];
        let outputs = KernelOutputs::new(types.clone());
        for rows in [0, 1, 15, 16, 17, 63, 64, 65, 1000] {
            let arrays = outputs
                .evaluate(rows, &mut Arena::default(), |outs, _| {
                    write(&types, rows, outs);
                    // Every output's validity written.
                    Ok(Some(0))
                })
                .expect("no error")
                .expect("ran");
            for (a, t) in arrays.iter().zip(&types) {
                assert_eq!(a.data_type(), t);
                assert_eq!(a.len(), rows);
                assert_eq!(a.null_count(), rows.div_ceil(3), "{t} at {rows} rows");
            }
            for i in (0..rows).filter(|i| i % 3 != 0) {
                assert_eq!(arrays[0].as_primitive::<Int8Type>().value(i), i as i8);
                assert_eq!(arrays[1].as_primitive::<Int64Type>().value(i), -(i as i64));
                let wide = arrays[2].as_primitive::<Decimal128Type>().value(i);
                assert_eq!(wide, (i as i128) << 70);
                assert_eq!(arrays[3].as_boolean().value(i), i % 2 == 1);
                assert_eq!(arrays[4].as_string::<i32>().value(i), WORDS[i % 3]);
                let ms = arrays[5]
                    .as_primitive::<TimestampMillisecondType>()
                    .value(i);
                assert_eq!(ms, -(i as i64));
                assert_eq!(
                    arrays[6].as_binary::<i32>().value(i),
                    WORDS[i % 3].as_bytes()
                );
            }
            // The arrays share one allocation: each stays whole when the others go.
            let mut arrays = arrays;
            let last = arrays.pop().expect("outputs");
            drop(arrays);
            assert_eq!(last.len(), rows);
        }
    }

    #[test]
    fn nulls_are_the_unset_bits_of_the_rows_only() {
        for rows in [1usize, 63, 64, 65, 128, 129] {
            // Every bit set, past the last row too.
            let mut words = vec![u64::MAX; rows.div_ceil(64) + 1];
            assert_eq!(null_count(&words, rows), 0, "{rows} rows");
            words[(rows - 1) / 64] &= !(1 << ((rows - 1) % 64));
            words[0] &= !1;
            let expected = if rows == 1 { 1 } else { 2 };
            assert_eq!(null_count(&words, rows), expected, "{rows} rows");
            // Bits past the last row do not count, set or not.
            words[rows / 64] &= !(1u64 << (rows % 64));
            *words.last_mut().expect("a word") = 0;
            assert_eq!(null_count(&words, rows), expected, "{rows} rows");
        }
    }

    #[test]
    fn outputs_without_nulls_have_no_null_buffer() {
        let types = [DataType::Int64, DataType::Boolean, DataType::Utf8];
        let outputs = KernelOutputs::new(types.clone());
        for rows in [1, 64, 65, 1000] {
            let arrays = outputs
                .evaluate(rows, &mut Arena::default(), |outs, _| {
                    for out in outs {
                        // SAFETY (test): the validity words of `rows` rows.
                        let valid = unsafe {
                            std::slice::from_raw_parts_mut(out.validity, rows.div_ceil(64))
                        };
                        (0..rows).for_each(|i| valid[i / 64] |= 1 << (i % 64));
                    }
                    // SAFETY (test): the values of `rows` BIGINTs and of `rows` views
                    // (addresses, then lengths); the booleans' bits are zeroed.
                    unsafe {
                        let ints = std::slice::from_raw_parts_mut(outs[0].values as *mut i64, rows);
                        ints.fill(7);
                        let views =
                            std::slice::from_raw_parts_mut(outs[2].values as *mut u64, 2 * rows);
                        views[..rows].fill(WORDS[1].as_ptr() as u64);
                        views[rows..].fill(WORDS[1].len() as u64);
                    }
                    Ok(Some(0))
                })
                .expect("no error")
                .expect("ran");
            for a in &arrays {
                assert!(a.nulls().is_none(), "{} at {rows} rows", a.data_type());
                assert_eq!(a.len(), rows);
            }
        }
    }

    /// Row `i` of the strings test below: NULL every fifth row, empty every
    /// seventh, else a word with the row number.
    fn string_row(i: usize) -> Option<String> {
        match (i % 5, i % 7) {
            (0, _) => None,
            (_, 0) => Some(String::new()),
            _ => Some(format!("{}{i}", WORDS[i % 3])),
        }
    }

    #[test]
    fn strings_that_are_a_run_of_the_arena_take_its_memory_others_are_copied() {
        let types = [DataType::Utf8, DataType::Utf8, DataType::Binary];
        let outputs = KernelOutputs::new(types.clone());
        for rows in [0, 1, 64, 65, 1000, 10_000] {
            let values: Vec<Option<String>> = (0..rows).map(string_row).collect();
            // At 10,000 rows an arena with room for just what is pushed (two copies
            // of the strings and a byte after each of the second): a full chunk. At
            // fewer, a chunk of 64 KiB mostly empty, which is not given away.
            let pushed: usize = values.iter().flatten().map(|v| 2 * v.len() + 1).sum();
            let mut arena = match rows {
                10_000 => Arena::with_room(pushed),
                _ => Arena::default(),
            };
            // Where output 0's bytes start in the arena.
            let mut first = None;
            let arrays = outputs
                .evaluate(rows, &mut arena, |outs, arena| {
                    for (k, out) in outs.iter().enumerate() {
                        // SAFETY (test): the validity words and the views (addresses,
                        // then lengths) of `rows` rows.
                        let (valid, views) = unsafe {
                            (
                                std::slice::from_raw_parts_mut(out.validity, rows.div_ceil(64)),
                                std::slice::from_raw_parts_mut(out.values as *mut u64, 2 * rows),
                            )
                        };
                        for (i, v) in values.iter().enumerate() {
                            let Some(v) = v else { continue };
                            valid[i / 64] |= 1 << (i % 64);
                            // Output 0: the arena's bytes in row order (one run);
                            // output 1: the test's own strings; output 2: the arena's
                            // bytes with a gap after each.
                            let at = match k {
                                0 => arena.push(v.as_bytes()),
                                1 => v.as_ptr(),
                                _ => {
                                    let at = arena.push(v.as_bytes());
                                    arena.push(b"-");
                                    at
                                }
                            };
                            if k == 0 && !v.is_empty() {
                                first.get_or_insert(at as usize);
                            }
                            (views[i], views[rows + i]) = (at as u64, v.len() as u64);
                        }
                    }
                    Ok(Some(0))
                })
                .expect("no error")
                .expect("ran");
            for (k, a) in arrays.iter().enumerate() {
                let got: Vec<Option<Vec<u8>>> = match k {
                    2 => a
                        .as_binary::<i32>()
                        .iter()
                        .map(|v| v.map(<[u8]>::to_vec))
                        .collect(),
                    _ => a
                        .as_string::<i32>()
                        .iter()
                        .map(|v| v.map(|v| v.as_bytes().to_vec()))
                        .collect(),
                };
                let want: Vec<Option<Vec<u8>>> = values
                    .iter()
                    .map(|v| v.as_ref().map(|v| v.as_bytes().to_vec()))
                    .collect();
                assert_eq!(got, want, "output {k}, {rows} rows");
            }
            let data = |k: usize| arrays[k].to_data().buffers()[1].as_ptr() as usize;
            let copied = |k: usize| !arena.holds(data(k) as *const u8);
            match (rows, first) {
                (10_000, Some(first)) => {
                    assert_eq!(data(0), first, "output 0 takes the arena's memory")
                }
                (_, Some(_)) => assert!(copied(0), "output 0 is copied at {rows} rows"),
                _ => {}
            }
            assert!(rows < 2 || copied(1), "output 1 is copied");
            assert!(rows < 2 || copied(2), "output 2 is copied");
        }
    }

    #[test]
    fn outputs_whose_validity_the_kernel_left_unwritten_have_no_nulls() {
        let types = [DataType::Int64, DataType::Int64, DataType::Float64];
        let outputs = KernelOutputs::new(types.clone());
        for rows in [1, 64, 65, 1000] {
            let arrays = outputs
                .evaluate(rows, &mut Arena::default(), |outs, _| {
                    for out in outs {
                        // SAFETY (test): the values of `rows` BIGINTs or DOUBLEs.
                        let values =
                            unsafe { std::slice::from_raw_parts_mut(out.values as *mut i64, rows) };
                        (0..rows).for_each(|i| values[i] = i as i64);
                    }
                    // SAFETY (test): the validity words of `rows` rows.
                    let valid = unsafe {
                        std::slice::from_raw_parts_mut(outs[1].validity, rows.div_ceil(64))
                    };
                    (0..rows)
                        .filter(|i| i % 2 == 0)
                        .for_each(|i| valid[i / 64] |= 1 << (i % 64));
                    // Outputs 0 and 2 have no NULL: their words are left zero.
                    Ok(Some(0b101))
                })
                .expect("no error")
                .expect("ran");
            for k in [0, 2] {
                assert!(arrays[k].nulls().is_none(), "output {k} at {rows} rows");
                assert_eq!(arrays[k].len(), rows);
            }
            assert_eq!(arrays[1].null_count(), rows / 2, "{rows} rows");
            assert_eq!(
                arrays[0].as_primitive::<Int64Type>().value(rows - 1),
                rows as i64 - 1
            );
        }
    }

    /// Evaluates `rows` rows of one BIGINT output whose row `i` is `i + base`.
    fn bigints(outputs: &KernelOutputs, rows: usize, base: i64) -> ArrayRef {
        let arrays = outputs
            .evaluate(rows, &mut Arena::default(), |outs, _| {
                // SAFETY (test): the values and validity words of `rows` rows.
                unsafe {
                    let ints = std::slice::from_raw_parts_mut(outs[0].values as *mut i64, rows);
                    (0..rows).for_each(|i| ints[i] = i as i64 + base);
                    let valid = std::slice::from_raw_parts_mut(outs[0].validity, rows.div_ceil(64));
                    // Zeroed, a reused block's too (its last call set every bit).
                    assert!(valid.iter().all(|&w| w == 0), "validity zeroed");
                    (0..rows).for_each(|i| valid[i / 64] |= 1 << (i % 64));
                }
                Ok(Some(0))
            })
            .expect("no error")
            .expect("ran");
        arrays.into_iter().next().expect("one output")
    }

    fn values_address(a: &ArrayRef) -> usize {
        a.as_primitive::<Int64Type>().values().as_ptr() as usize
    }

    /// The address of the thread's spare block (0: none).
    fn spare_address() -> usize {
        SPARE.with(|s| {
            let spare = s.take();
            let address = spare.as_ref().map_or(0, |b| b.as_ptr() as usize);
            s.set(spare);
            address
        })
    }

    #[test]
    fn a_block_is_reused_only_when_no_array_uses_it() {
        let outputs = KernelOutputs::new([DataType::Int64]);
        let rows = 1000;
        let expected = |base: i64| (base..rows as i64 + base).collect::<Vec<i64>>();
        let first = bigints(&outputs, rows, 0);
        let a = values_address(&first);
        assert_eq!(spare_address(), a);
        // Held: the next call writes elsewhere, and the first array is unchanged.
        let second = bigints(&outputs, rows, 5_000);
        let b = values_address(&second);
        assert_ne!(b, a);
        assert_eq!(
            first.as_primitive::<Int64Type>().values().to_vec(),
            expected(0)
        );
        // Once its arrays are gone, the latest block is written again.
        drop((first, second));
        let third = bigints(&outputs, rows, 7);
        assert_eq!(values_address(&third), b);
        assert_eq!(spare_address(), b);
        assert_eq!(
            third.as_primitive::<Int64Type>().values().to_vec(),
            expected(7)
        );
        // A slice keeps the block from being written, too.
        let slice = third.slice(10, 5);
        drop(third);
        let fourth = bigints(&outputs, rows, 9);
        let c = values_address(&fourth);
        assert_ne!(c, b);
        assert_eq!(
            slice.as_primitive::<Int64Type>().values().to_vec(),
            (17..22).collect::<Vec<i64>>()
        );
        drop(slice);
        // Arrays dropped on another thread free the block for this one's next call.
        std::thread::spawn(move || drop(fourth))
            .join()
            .expect("the thread");
        let fifth = bigints(&outputs, rows / 2, 11);
        assert_eq!(values_address(&fifth), c);
        assert_eq!(spare_address(), c);
        assert_eq!(
            fifth.as_primitive::<Int64Type>().values().to_vec(),
            (11..rows as i64 / 2 + 11).collect::<Vec<i64>>()
        );
        drop(fifth);
        // And again: a reused block stays the spare (checked in the slot, while the
        // array is held: the allocator could hand out a freed block's address too).
        let sixth = bigints(&outputs, rows, 13);
        assert_eq!(values_address(&sixth), c);
        assert_eq!(spare_address(), c);
        drop(sixth);
        // A call needing under a quarter of the spare block does not take it (a
        // small result kept would hold on to all of it); its own block is kept.
        // (Its address may be the old block's: that is freed before the new one is
        // allocated. Its size tells them apart.)
        let spare_bytes = || {
            SPARE.with(|s| {
                let spare = s.take();
                let bytes = spare.as_ref().map_or(0, |b| b.len());
                s.set(spare);
                bytes
            })
        };
        let before = spare_bytes();
        let small = bigints(&outputs, 200, 0);
        let d = values_address(&small);
        assert_eq!(spare_address(), d);
        assert!(
            spare_bytes() * SPARE_SLACK < before,
            "{} of {before}",
            spare_bytes()
        );
        drop(small);
        assert_eq!(values_address(&bigints(&outputs, 200, 0)), d);
    }

    #[test]
    fn only_blocks_of_a_middling_size_are_kept() {
        assert!(!Block::kept(KEEP_FROM / 16 - 1));
        assert!(Block::kept(KEEP_FROM / 16));
        assert!(Block::kept(KEEP_UP_TO / 16));
        assert!(!Block::kept(KEEP_UP_TO / 16 + 1));
        // A small output's memory comes from the allocator: nothing is kept.
        let outputs = KernelOutputs::new([DataType::Int64]);
        drop(bigints(&outputs, 4, 0));
        assert_eq!(spare_address(), 0);
    }

    #[test]
    fn a_kernel_that_fails_or_does_not_run_leaves_the_spare_block_for_the_next_call() {
        let outputs = KernelOutputs::new([DataType::Int64]);
        drop(bigints(&outputs, 1000, 0));
        let kept = spare_address();
        assert_ne!(kept, 0);
        let failed = outputs.evaluate(1000, &mut Arena::default(), |_, _| {
            Err(EvalError::Other("overflow".into()).into())
        });
        assert!(failed.is_err());
        assert_eq!(spare_address(), kept);
        let not_run = outputs.evaluate(1000, &mut Arena::default(), |_, _| Ok(None));
        assert!(not_run.expect("no error").is_none());
        assert_eq!(spare_address(), kept);
        assert_eq!(values_address(&bigints(&outputs, 1000, 3)), kept);
    }

    #[test]
    fn a_kernel_that_does_not_run_makes_no_arrays() {
        let outputs = KernelOutputs::new([DataType::Int64]);
        assert!(outputs
            .evaluate(10, &mut Arena::default(), |_, _| Ok(None))
            .expect("no error")
            .is_none());
    }
}
