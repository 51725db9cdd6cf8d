//! The pages of a flat column chunk, decoded without the parquet crate's reader: the
//! chunk's pages read whole ([`chunk`]), what each holds ([`page_data`]: a PLAIN
//! dictionary, keys, or PLAIN values), and PLAIN values made arrays of the column's
//! type ([`dictionary_array`], [`fixed_array`], [`byte_array`]). Keys and definition
//! levels are RLE/bit-packed ([`hybrid`]).
//!
//! Used by the keyed conjuncts ([`keys`](super::keys)) and by the columns read at
//! chosen rows ([`gather`](super::gather)); it knows neither.

mod hybrid;

use std::sync::Arc;

use arrow::array::{make_array, ArrayData, ArrayRef, BinaryArray, StringArray};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use parquet::basic::{Encoding, Type as Physical};
use parquet::column::page::Page;
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
use parquet::file::serialized_reader::SerializedPageReader;

use super::single_leaf;
use super::source::FileBytes;

pub(super) use hybrid::{defined_rows, padded, Bits, Hybrid, Run, FAST_WIDTH};

/// How a column's dictionary values are laid out, as read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Fixed-width values of this many bytes, read bit for bit as the Arrow type.
    Fixed(usize),
    /// Byte arrays (a length in 4 bytes, then the bytes), read as text or a BLOB.
    Bytes,
}

/// How values of Arrow type `t` the reader produces from Parquet physical type
/// `physical` are read here; `None` for the pairs the reader converts.
pub(super) fn value_layout(t: &DataType, physical: Physical) -> Option<Layout> {
    match (t, physical) {
        (DataType::Int32 | DataType::Date32 | DataType::Decimal32(..), Physical::INT32) => {
            Some(Layout::Fixed(4))
        }
        (DataType::Int64 | DataType::Decimal64(..), Physical::INT64) => Some(Layout::Fixed(8)),
        (DataType::Float32, Physical::FLOAT) => Some(Layout::Fixed(4)),
        (DataType::Float64, Physical::DOUBLE) => Some(Layout::Fixed(8)),
        (
            DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView,
            Physical::BYTE_ARRAY,
        ) => Some(Layout::Bytes),
        _ => None,
    }
}

/// The pages of root column `column`'s chunk in row group `group` (read from
/// `source`: slices of the file mapped into memory, or reads), its field in `schema`,
/// its layout, and whether it has a level of nulls.
pub(super) fn chunk<'s>(
    meta: &ParquetMetaData,
    group: &RowGroupMetaData,
    schema: &'s Schema,
    column: usize,
    rows: usize,
    source: &Arc<FileBytes>,
) -> Option<(SerializedPageReader<FileBytes>, &'s Field, Layout, bool)> {
    let leaf = single_leaf(meta, column)?;
    let chunk = group.columns().get(leaf)?;
    let pages = SerializedPageReader::new(source.clone(), chunk, rows, None).ok()?;
    let descr = chunk.column_descr();
    let field = schema.fields().get(column)?;
    let layout = value_layout(field.data_type(), descr.physical_type())?;
    let nullable = match (descr.max_rep_level(), descr.max_def_level()) {
        (0, 0) => false,
        (0, 1) => true,
        _ => return None,
    };
    Some((pages, field, layout, nullable))
}

/// What a page of a flat column holds, as [`page_data`] reads it.
pub(super) enum PageData<'p> {
    /// The dictionary page: its PLAIN values, and how many.
    Dictionary(&'p [u8], usize),
    /// A data page of keys: the definition levels (when the column has a level of
    /// nulls; RLE/bit-packed of width 1), the keys (their width in a byte, then
    /// RLE/bit-packed), and the rows.
    Keys(Option<&'p [u8]>, &'p [u8], usize),
    /// A data page of PLAIN values (what a writer falls back to when a dictionary
    /// grows too big): the definition levels as for keys, the values of the rows
    /// that are not NULL, and the rows.
    Plain(Option<&'p [u8]>, &'p [u8], usize),
}

/// What `page` of a flat column (`nullable`: with one level of nulls) holds; `None`
/// for any other encoding or layout.
pub(super) fn page_data(page: &Page, nullable: bool) -> Option<PageData<'_>> {
    let (levels, values, n, encoding) = match page {
        Page::DictionaryPage {
            buf,
            num_values,
            encoding: Encoding::PLAIN | Encoding::PLAIN_DICTIONARY,
            ..
        } => return Some(PageData::Dictionary(buf, *num_values as usize)),
        Page::DataPage {
            buf,
            num_values,
            encoding,
            def_level_encoding,
            ..
        } => match nullable {
            // V1: the levels prefixed by their length in 4 bytes.
            true if *def_level_encoding == Encoding::RLE => {
                let len = u32::from_le_bytes(buf.get(..4)?.try_into().ok()?) as usize;
                let end = len.checked_add(4)?;
                (
                    Some(buf.get(4..end)?),
                    buf.get(end..)?,
                    *num_values,
                    encoding,
                )
            }
            true => return None,
            false => (None, &buf[..], *num_values, encoding),
        },
        Page::DataPageV2 {
            buf,
            num_values,
            encoding,
            def_levels_byte_len,
            rep_levels_byte_len: 0,
            ..
        } => {
            let split = *def_levels_byte_len as usize;
            let levels = match nullable {
                true => Some(buf.get(..split)?),
                false if split == 0 => None,
                false => return None,
            };
            (levels, buf.get(split..)?, *num_values, encoding)
        }
        _ => return None,
    };
    let n = n as usize;
    match encoding {
        Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY => {
            Some(PageData::Keys(levels, values, n))
        }
        Encoding::PLAIN => Some(PageData::Plain(levels, values, n)),
        _ => None,
    }
}

/// An array of `field`'s (fixed-width) type over `len` values in `values`.
pub(super) fn fixed_array(
    field: &Field,
    len: usize,
    values: Buffer,
    nulls: Option<NullBuffer>,
) -> Option<ArrayRef> {
    let data = ArrayData::builder(field.data_type().clone())
        .len(len)
        .add_buffer(values)
        .nulls(nulls)
        .build()
        .ok()?;
    Some(make_array(data))
}

/// The `count` values of a PLAIN dictionary page (`buf`), then a NULL if `nullable`,
/// as an array of `field`'s type (`None` if the page is shorter than they need, or
/// text is not UTF-8).
pub(super) fn dictionary_array(
    buf: &[u8],
    count: usize,
    field: &Field,
    layout: Layout,
    nullable: bool,
) -> Option<ArrayRef> {
    // Each value takes at least 4 bytes (a fixed width, or a byte array's length): a
    // count the page cannot hold is refused before anything is allocated for it.
    if count > buf.len() / 4 {
        return None;
    }
    let len = count + usize::from(nullable);
    let valid = nullable.then(|| NullBuffer::new(BooleanBuffer::collect_bool(len, |i| i < count)));
    match layout {
        Layout::Fixed(width) => {
            let mut values = buf.get(..count.checked_mul(width)?)?.to_vec();
            values.resize(len * width, 0);
            fixed_array(field, len, Buffer::from_vec(values), valid)
        }
        Layout::Bytes => {
            let mut offsets = Vec::with_capacity(count + 2);
            let mut bytes = Vec::with_capacity(buf.len());
            let mut at = 0;
            offsets.push(0i32);
            for _ in 0..count {
                let (start, end) = byte_array_at(buf, at)?;
                bytes.extend_from_slice(&buf[start..end]);
                at = end;
                offsets.push(i32::try_from(bytes.len()).ok()?);
            }
            if nullable {
                offsets.push(i32::try_from(bytes.len()).ok()?);
            }
            byte_array(
                field,
                OffsetBuffer::new(offsets.into()),
                Buffer::from_vec(bytes),
                valid,
            )
        }
    }
}

/// An array of `field`'s type (text or BLOB) over byte arrays `bytes` at `offsets`
/// (`None` if text is not UTF-8).
pub(super) fn byte_array(
    field: &Field,
    offsets: OffsetBuffer<i32>,
    bytes: Buffer,
    nulls: Option<NullBuffer>,
) -> Option<ArrayRef> {
    let array: ArrayRef = match field.data_type() {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            Arc::new(StringArray::try_new(offsets, bytes, nulls).ok()?)
        }
        _ => Arc::new(BinaryArray::try_new(offsets, bytes, nulls).ok()?),
    };
    match array.data_type() == field.data_type() {
        true => Some(array),
        false => cast(&array, field.data_type()).ok(),
    }
}

/// The PLAIN byte array at byte `at` of `data` (a length in 4 bytes, then the
/// bytes): where its bytes start and end.
pub(super) fn byte_array_at(data: &[u8], at: usize) -> Option<(usize, usize)> {
    let len = u32::from_le_bytes(data.get(at..at.checked_add(4)?)?.try_into().ok()?) as usize;
    let start = at + 4;
    let end = start.checked_add(len)?;
    (end <= data.len()).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dictionary page claiming more values than its bytes can hold is refused
    /// before anything is allocated for them.
    #[test]
    fn dictionaries_larger_than_their_page_are_refused() {
        let page = [1, 0, 0, 0, b'a'];
        let text = Field::new("t", DataType::Utf8, true);
        let number = Field::new("n", DataType::Int32, true);
        assert!(dictionary_array(&page, 1 << 40, &text, Layout::Bytes, true).is_none());
        assert!(dictionary_array(&page, 1 << 40, &number, Layout::Fixed(4), true).is_none());
        let one = dictionary_array(&page, 1, &text, Layout::Bytes, true).unwrap();
        assert_eq!((one.len(), one.null_count()), (2, 1));
    }
}
