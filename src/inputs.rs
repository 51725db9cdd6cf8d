//! The inputs of a kernel: reading each array a call binds into the pointers of its
//! input slot ([`Slot`]).
//!
//! Which Rust type a slot's array has is known when the kernel is built (the schema
//! says it for a column, the interpreter's result type for an interpreted subtree), so
//! each slot gets a [`Reader`] for that type then: a call downcasts each array once and
//! reads its length, nulls and buffers directly, instead of asking the `dyn Array` for
//! each. An array of another type than expected takes [`Inputs::read`]'s general path:
//! the reader of its own type, if that type has the slot's physical type and width (or
//! layout, for strings).

use arrow::array::{
    downcast_primitive, Array, ArrowPrimitiveType, BooleanArray, GenericByteArray,
    GenericByteViewArray, PrimitiveArray,
};
use arrow::buffer::{BooleanBuffer, NullBuffer};
use arrow::datatypes::{
    BinaryType, BinaryViewType, ByteArrayType, ByteViewType, DataType, LargeBinaryType,
    LargeUtf8Type, StringViewType, Utf8Type,
};
use broadhead_codegen::{InputSpec, PType, Slot};

use crate::layout::byte_layout;

/// The words a bound batch needed beyond its own buffers: realigned or all-valid
/// bitmaps and the tables of data buffer addresses of view columns (slots point
/// into them, so they live until the kernel returns).
#[derive(Default)]
pub(crate) struct Extra {
    realigned: Vec<Vec<u64>>,
    tables: Vec<Vec<*const u8>>,
}

impl Extra {
    /// All-valid words for `rows` rows (kept until the call ends).
    pub(crate) fn all_valid(&mut self, rows: usize) -> *const u64 {
        self.realigned.push(vec![u64::MAX; rows.div_ceil(64)]);
        last_ptr(&self.realigned).cast()
    }

    /// A bitmap as 64-bit words starting at row 0: the buffer itself when it is
    /// already word-aligned with whole words in bounds, else a copy.
    pub(crate) fn words(&mut self, bits: &BooleanBuffer) -> *const u64 {
        let (offset, len) = (bits.offset(), bits.len());
        let bytes = bits.inner();
        let needed = len.div_ceil(64) * 8;
        let start = offset / 8;
        if offset % 64 == 0 && bytes.len() >= start + needed {
            let p = bytes.as_ptr().wrapping_add(start);
            if (p as usize) % 8 == 0 {
                return p as *const u64;
            }
        }
        self.realigned
            .push(bytes.bit_chunks(offset, len).iter_padded().collect());
        last_ptr(&self.realigned).cast()
    }
}

/// The address of the last vector's first element (null when there is none).
fn last_ptr<T>(vectors: &[Vec<T>]) -> *const T {
    vectors.last().map_or(std::ptr::null(), |v| v.as_ptr())
}

/// What a call needs of one input array: its length, its nulls, and the slot's
/// pointers but validity (which depends on the kernel variant chosen for the
/// batch's nulls).
pub(crate) struct Read<'a> {
    pub(crate) len: usize,
    pub(crate) nulls: Option<&'a NullBuffer>,
    pub(crate) values: *const u8,
    pub(crate) data: *const u8,
}

/// Reads an array of one Rust type, whose values have the width or layout of the
/// slot it was chosen for; `None` when the array has another type.
type Reader = for<'a> fn(&'a dyn Array, &mut Extra) -> Option<Read<'a>>;

/// How to read the arrays of a kernel's input slots.
pub(crate) struct Inputs {
    /// Per slot: the reader for the type its arrays have, when the schema gives one
    /// the slot can read.
    readers: Box<[Option<Reader>]>,
}

impl Inputs {
    /// The readers for slots of `specs` whose arrays have the types `types` (`None`:
    /// not known before a call).
    pub(crate) fn new<'t>(
        specs: &[InputSpec],
        types: impl Iterator<Item = Option<&'t DataType>>,
    ) -> Inputs {
        Inputs {
            readers: specs
                .iter()
                .zip(types)
                .map(|(spec, t)| t.and_then(|t| reader(t, spec)))
                .collect(),
        }
    }

    /// `array` read for slot `slot` of spec `spec`; `None` when it does not have
    /// the slot's physical type (or layout, for strings).
    pub(crate) fn read<'a>(
        &self,
        slot: usize,
        spec: &InputSpec,
        array: &'a dyn Array,
        extra: &mut Extra,
    ) -> Option<Read<'a>> {
        if let Some(read) = self.readers.get(slot).copied().flatten() {
            if let Some(r) = read(array, extra) {
                return Some(r);
            }
        }
        read_any(spec, array, extra)
    }
}

/// The reader of arrays of type `t` for a slot of spec `spec`, if `t` is one the
/// slot can read.
fn reader(t: &DataType, spec: &InputSpec) -> Option<Reader> {
    match spec.ty {
        PType::Str => {
            if byte_layout(t) != Some(spec.layout) {
                return None;
            }
            Some(match t {
                DataType::Utf8 => read_bytes::<Utf8Type> as Reader,
                DataType::LargeUtf8 => read_bytes::<LargeUtf8Type>,
                DataType::Binary => read_bytes::<BinaryType>,
                DataType::LargeBinary => read_bytes::<LargeBinaryType>,
                DataType::Utf8View => read_views::<StringViewType>,
                DataType::BinaryView => read_views::<BinaryViewType>,
                _ => return None,
            })
        }
        PType::Bool => (t == &DataType::Boolean).then_some(read_boolean as Reader),
        _ => {
            let width = value_width(spec);
            macro_rules! primitive_reader {
                ($t:ty) => {
                    (std::mem::size_of::<<$t as ArrowPrimitiveType>::Native>() == width)
                        .then_some(read_primitive::<$t> as Reader)
                };
            }
            downcast_primitive! {
                t => (primitive_reader),
                _ => None,
            }
        }
    }
}

fn read_primitive<'a, T: ArrowPrimitiveType>(
    array: &'a dyn Array,
    _: &mut Extra,
) -> Option<Read<'a>> {
    let a = array.as_any().downcast_ref::<PrimitiveArray<T>>()?;
    Some(Read {
        len: a.len(),
        nulls: a.nulls(),
        values: a.values().as_ptr().cast(),
        data: std::ptr::null(),
    })
}

fn read_boolean<'a>(array: &'a dyn Array, extra: &mut Extra) -> Option<Read<'a>> {
    let a = array.as_any().downcast_ref::<BooleanArray>()?;
    Some(Read {
        len: a.len(),
        nulls: a.nulls(),
        values: extra.words(a.values()).cast(),
        data: std::ptr::null(),
    })
}

fn read_bytes<'a, T: ByteArrayType>(array: &'a dyn Array, _: &mut Extra) -> Option<Read<'a>> {
    let a = array.as_any().downcast_ref::<GenericByteArray<T>>()?;
    Some(Read {
        len: a.len(),
        nulls: a.nulls(),
        values: a.value_offsets().as_ptr().cast(),
        data: a.values().as_ptr(),
    })
}

fn read_views<'a, T: ByteViewType + ?Sized>(
    array: &'a dyn Array,
    extra: &mut Extra,
) -> Option<Read<'a>> {
    let a = array.as_any().downcast_ref::<GenericByteViewArray<T>>()?;
    extra
        .tables
        .push(a.data_buffers().iter().map(|b| b.as_ptr()).collect());
    Some(Read {
        len: a.len(),
        nulls: a.nulls(),
        values: a.views().as_ptr().cast(),
        data: last_ptr(&extra.tables).cast(),
    })
}

/// `array` read for a slot of spec `spec` whatever its type: `None` when it does
/// not have the slot's physical type and width (or layout, for strings).
fn read_any<'a>(spec: &InputSpec, array: &'a dyn Array, extra: &mut Extra) -> Option<Read<'a>> {
    reader(array.data_type(), spec)?(array, extra)
}

/// A string or bytes array of any layout as a slot without validity (a view
/// array's table of addresses kept in `extra`): for the tests of the string helpers.
#[cfg(test)]
pub(crate) fn byte_slot(array: &dyn Array, extra: &mut Extra) -> Option<Slot> {
    let spec = InputSpec {
        ty: PType::Str,
        nullable: false,
        layout: byte_layout(array.data_type())?,
        stored_as_i128: false,
    };
    read_any(&spec, array, extra).map(|read| read.slot(std::ptr::null()))
}

/// The bytes of one value of a slot of fixed-width type.
fn value_width(spec: &InputSpec) -> usize {
    let ty = if spec.stored_as_i128 {
        PType::I128
    } else {
        spec.ty
    };
    ty.width() as usize
}

impl Read<'_> {
    /// The slot of the array, with validity `validity`.
    pub(crate) fn slot(&self, validity: *const u64) -> Slot {
        Slot {
            values: self.values,
            validity,
            data: self.data,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow::array::{
        ArrayRef, AsArray, BinaryArray, BooleanArray, Date32Array, Date64Array, Decimal128Array,
        Decimal64Array, DurationSecondArray, Float32Array, Float64Array, Int32Array, Int64Array,
        Int8Array, LargeStringArray, StringArray, StringViewArray, TimestampNanosecondArray,
        UInt64Array,
    };
    use broadhead_codegen::ByteLayout;

    use super::*;

    fn spec(ty: PType, layout: ByteLayout, stored_as_i128: bool) -> InputSpec {
        InputSpec {
            ty,
            nullable: false,
            layout,
            stored_as_i128,
        }
    }

    /// Arrays of every kind of slot, whole and sliced (offsets, bitmaps not starting
    /// at a word), with and without nulls, and the spec of the slot that reads them.
    fn cases() -> Vec<(ArrayRef, InputSpec)> {
        let long = "a string longer than twelve bytes";
        let whole: Vec<(ArrayRef, InputSpec)> = vec![
            (
                Arc::new(Int8Array::from(vec![Some(1), None, Some(-3), Some(4)])),
                spec(PType::I8, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(Int32Array::from(vec![5, 6, 7, 8])),
                spec(PType::I32, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(Int64Array::from(vec![Some(9), Some(10), None, Some(12)])),
                spec(PType::I64, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(UInt64Array::from(vec![1, 2, 3, u64::MAX])),
                spec(PType::U64, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(Float32Array::from(vec![0.5, 1.5, f32::NAN, -0.0])),
                spec(PType::F32, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(Float64Array::from(vec![Some(0.25), None, None, Some(2.0)])),
                spec(PType::F64, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(Date32Array::from(vec![0, 1, 2, 3])),
                spec(PType::I32, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(TimestampNanosecondArray::from(vec![1, 2, 3, 4]).with_timezone("+01:00")),
                spec(PType::I64, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(
                    Decimal128Array::from(vec![Some(12_345), None, Some(-1), Some(0)])
                        .with_precision_and_scale(18, 2)
                        .unwrap(),
                ),
                spec(PType::I64, ByteLayout::Offsets32, true),
            ),
            (
                Arc::new(
                    Decimal64Array::from(vec![Some(-5), Some(7), None, Some(99)])
                        .with_precision_and_scale(10, 1)
                        .unwrap(),
                ),
                spec(PType::I64, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(Date64Array::from(vec![0, 86_400_000, -1, 5])),
                spec(PType::I64, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(DurationSecondArray::from(vec![
                    Some(1),
                    None,
                    Some(3),
                    Some(4),
                ])),
                spec(PType::I64, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(BooleanArray::from(vec![
                    Some(true),
                    None,
                    Some(false),
                    Some(true),
                ])),
                spec(PType::Bool, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(StringArray::from(vec![
                    Some("é"),
                    None,
                    Some(""),
                    Some(long),
                ])),
                spec(PType::Str, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(LargeStringArray::from(vec!["a", "bc", "", long])),
                spec(PType::Str, ByteLayout::Offsets64, false),
            ),
            (
                Arc::new(BinaryArray::from(vec![&b"\x00"[..], b"", b"xy", b"z"])),
                spec(PType::Str, ByteLayout::Offsets32, false),
            ),
            (
                Arc::new(StringViewArray::from(vec![
                    Some(long),
                    None,
                    Some("ab"),
                    Some(long),
                ])),
                spec(PType::Str, ByteLayout::Views, false),
            ),
        ];
        let sliced: Vec<(ArrayRef, InputSpec)> =
            whole.iter().map(|(a, s)| (a.slice(1, 3), *s)).collect();
        whole.into_iter().chain(sliced).collect()
    }

    /// What a read says of its array: its length, its null count, and where its
    /// values and data are, with what a copy made for the read holds in place of its
    /// (per read) address: a boolean column's first word (its rows' bits), a view
    /// column's table's first address.
    fn summary(read: &Read<'_>, spec: &InputSpec) -> (usize, usize, usize, usize) {
        let values = if spec.ty == PType::Bool {
            // SAFETY: a boolean slot's values are whole words (one at least here).
            let word = unsafe { *read.values.cast::<u64>() };
            (word & ((1u64 << read.len) - 1)) as usize
        } else {
            read.values as usize
        };
        let data = if spec.layout == ByteLayout::Views && spec.ty == PType::Str {
            // SAFETY: a view slot's `data` is the table `read_views` pushed, of one
            // address per data buffer (at least one here).
            unsafe { *read.data.cast::<*const u8>() as usize }
        } else {
            read.data as usize
        };
        (
            read.len,
            read.nulls.map_or(0, |n| n.null_count()),
            values,
            data,
        )
    }

    /// [`summary`] as Arrow's own description of the array says it must be: its
    /// first buffer at its offset, and for strings the bytes or the first data buffer.
    fn expected(array: &dyn Array, spec: &InputSpec) -> (usize, usize, usize, usize) {
        let data = array.to_data();
        let (offset, buffers) = (data.offset(), data.buffers());
        let first = buffers[0].as_ptr() as usize;
        let (values, bytes) = match (spec.ty, spec.layout) {
            (PType::Bool, _) => {
                let bits = array.as_boolean().values();
                let word = bits.iter().enumerate();
                (word.fold(0, |w, (i, b)| w | (usize::from(b) << i)), 0)
            }
            (PType::Str, ByteLayout::Offsets32) => {
                (first + offset * 4, buffers[1].as_ptr() as usize)
            }
            (PType::Str, ByteLayout::Offsets64) => {
                (first + offset * 8, buffers[1].as_ptr() as usize)
            }
            (PType::Str, ByteLayout::Views) => (first + offset * 16, buffers[1].as_ptr() as usize),
            _ => (first + offset * value_width(spec), 0),
        };
        (array.len(), array.null_count(), values, bytes)
    }

    /// The reader chosen for each array's type reads its buffers at its offset, and
    /// a slot expecting that type reads it through that reader.
    #[test]
    fn each_types_reader_reads_the_arrays_buffers_at_its_offset() {
        for (array, spec) in cases() {
            let t = array.data_type().clone();
            let context = format!("{t}, offset {}", array.offset());
            let read = reader(&t, &spec).unwrap_or_else(|| panic!("a reader for {context}"));
            let mut extra = Extra::default();
            let direct = read(array.as_ref(), &mut extra).expect(&context);
            assert_eq!(
                summary(&direct, &spec),
                expected(array.as_ref(), &spec),
                "{context}"
            );
            let inputs = Inputs::new(&[spec], [Some(&t)].into_iter());
            let slot = inputs
                .read(0, &spec, array.as_ref(), &mut extra)
                .expect(&context);
            assert_eq!(
                summary(&slot, &spec),
                expected(array.as_ref(), &spec),
                "{context}"
            );
        }
    }

    /// A primitive slot's values pointer is the array's first value, its offset
    /// applied.
    #[test]
    fn a_sliced_columns_values_start_at_its_first_row() {
        let array = Int64Array::from(vec![10, 20, 30, 40]).slice(2, 2);
        let spec = spec(PType::I64, ByteLayout::Offsets32, false);
        let inputs = Inputs::new(&[spec], [Some(&DataType::Int64)].into_iter());
        let read = inputs
            .read(0, &spec, &array, &mut Extra::default())
            .unwrap();
        // SAFETY: the slot points at the slice's 2 values.
        let values = unsafe { std::slice::from_raw_parts(read.values.cast::<i64>(), 2) };
        assert_eq!(values, [30, 40]);
    }

    /// An array of another type than the one the reader was chosen for is read by
    /// the general path when the slot can read it, and refused when it cannot.
    #[test]
    fn an_array_of_another_type_than_the_schemas_is_checked_against_the_slot() {
        let int32 = spec(PType::I32, ByteLayout::Offsets32, false);
        let inputs = Inputs::new(&[int32], [Some(&DataType::Int32)].into_iter());
        let mut extra = Extra::default();
        // Same width, another Rust type: the general path reads it.
        let dates = Date32Array::from(vec![7, 8]);
        let read = inputs.read(0, &int32, &dates, &mut extra).unwrap();
        assert_eq!(read.values, dates.values().as_ptr().cast());
        // Another width, or not a primitive array: refused.
        assert!(inputs
            .read(0, &int32, &Int64Array::from(vec![1]), &mut extra)
            .is_none());
        assert!(inputs
            .read(0, &int32, &StringArray::from(vec!["1"]), &mut extra)
            .is_none());

        let utf8 = spec(PType::Str, ByteLayout::Offsets32, false);
        let inputs = Inputs::new(&[utf8], [Some(&DataType::Utf8)].into_iter());
        // Another layout than the slot's: refused.
        for other in [
            Arc::new(LargeStringArray::from(vec!["x"])) as ArrayRef,
            Arc::new(StringViewArray::from(vec!["x"])),
            Arc::new(Int32Array::from(vec![1])),
        ] {
            assert!(
                inputs.read(0, &utf8, other.as_ref(), &mut extra).is_none(),
                "{}",
                other.data_type()
            );
        }
        // A `Binary` array has the slot's layout: read.
        assert!(inputs
            .read(0, &utf8, &BinaryArray::from(vec![&b"x"[..]]), &mut extra)
            .is_some());
    }

    /// No reader is chosen for a type the slot cannot read (nor, so, by the general
    /// path for arrays of that type).
    #[test]
    fn a_type_the_slot_cannot_read_has_no_reader() {
        let i64_slot = spec(PType::I64, ByteLayout::Offsets32, false);
        assert!(reader(&DataType::Int32, &i64_slot).is_none());
        assert!(reader(&DataType::Utf8, &i64_slot).is_none());
        let wide = spec(PType::I64, ByteLayout::Offsets32, true);
        assert!(reader(&DataType::Int64, &wide).is_none());
        assert!(reader(&DataType::Decimal128(18, 2), &wide).is_some());
        let views = spec(PType::Str, ByteLayout::Views, false);
        assert!(reader(&DataType::Utf8, &views).is_none());
        assert!(reader(&DataType::Utf8View, &views).is_some());
        let boolean = spec(PType::Bool, ByteLayout::Offsets32, false);
        assert!(reader(&DataType::Int8, &boolean).is_none());
    }
}
