//! The pages of a flat column chunk, decoded without the parquet crate's reader: the
//! chunk's pages read whole ([`chunk`]), what each holds ([`page_data`]: a PLAIN
//! dictionary, keys, or PLAIN values), and PLAIN values made arrays of the column's
//! type ([`dictionary_array`], [`fixed_array`], [`byte_array`]; fixed-width values
//! through [`plain_fixed`], which widens the big-endian decimals of
//! `FIXED_LEN_BYTE_ARRAY` columns). Keys and definition levels are RLE/bit-packed
//! ([`hybrid`]).
//!
//! Used by the keyed conjuncts ([`keys`](super::keys)) and by the columns read at
//! chosen rows ([`gather`](super::gather)); it knows neither.

mod hybrid;

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{make_array, ArrayData, ArrayRef, BinaryArray, StringArray};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use parquet::basic::{Encoding, Type as Physical};
use parquet::column::page::Page;
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
use parquet::file::serialized_reader::SerializedPageReader;
use parquet::schema::types::ColumnDescriptor;

use super::single_leaf;
use super::source::FileBytes;

pub(super) use hybrid::{defined_rows, padded, Bits, Hybrid, Run, FAST_WIDTH};

/// How a column's dictionary values are laid out, as read here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Fixed-width values of this many bytes, read bit for bit as the Arrow type.
    Fixed(usize),
    /// A DECIMAL stored as `FIXED_LEN_BYTE_ARRAY` of this many bytes (1 to 8, what
    /// pyarrow and parquet-mr write for up to 18 digits): big-endian two's complement,
    /// read as `Decimal64` (8 bytes, little-endian), as the reader widens them.
    BigEndian(usize),
    /// Byte arrays (a length in 4 bytes, then the bytes), read as text or a BLOB.
    Bytes,
}

impl Layout {
    /// The bytes of a value in the arrays made here (`None`: byte arrays).
    pub(crate) fn width(self) -> Option<usize> {
        match self {
            Layout::Fixed(width) => Some(width),
            Layout::BigEndian(_) => Some(8),
            Layout::Bytes => None,
        }
    }

    /// The bytes of a PLAIN value in the file's pages (`None`: byte arrays, each
    /// after its length).
    pub(crate) fn stored_width(self) -> Option<usize> {
        match self {
            Layout::Fixed(width) | Layout::BigEndian(width) => Some(width),
            Layout::Bytes => None,
        }
    }
}

/// The first `count` PLAIN values of a fixed-width `layout` in `buf` as the values of
/// an array of it ([`Layout::width`] bytes each): the bytes themselves, or the
/// big-endian decimals sign-extended to 8 bytes, little-endian. `None`: `buf` holds
/// fewer, or `layout` is byte arrays.
pub(super) fn plain_fixed(buf: &[u8], count: usize, layout: Layout) -> Option<Cow<'_, [u8]>> {
    let stored = layout.stored_width()?;
    let bytes = buf.get(..count.checked_mul(stored)?)?;
    match layout {
        Layout::BigEndian(_) => Some(Cow::Owned(
            bytes
                .chunks_exact(stored)
                .flat_map(|value| widened(value).to_le_bytes())
                .collect(),
        )),
        _ => Some(Cow::Borrowed(bytes)),
    }
}

/// A big-endian two's complement integer of 1 to 8 bytes, sign-extended.
pub(super) fn widened(value: &[u8]) -> i64 {
    let fill = match value.first() {
        Some(&b) if b & 0x80 != 0 => 0xff,
        _ => 0,
    };
    let mut bytes = [fill; 8];
    bytes[8 - value.len()..].copy_from_slice(value);
    i64::from_be_bytes(bytes)
}

/// How values of Arrow type `t` the reader produces from Parquet column `descr`
/// are read here; `None` for the pairs the reader converts otherwise.
pub(super) fn value_layout(t: &DataType, descr: &ColumnDescriptor) -> Option<Layout> {
    if let (DataType::Decimal64(..), Physical::FIXED_LEN_BYTE_ARRAY, 1..=8) =
        (t, descr.physical_type(), descr.type_length())
    {
        return Some(Layout::BigEndian(descr.type_length() as usize));
    }
    match (t, descr.physical_type()) {
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
    let layout = value_layout(field.data_type(), descr)?;
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
    // Each value takes at least its fixed width, or a byte array's 4-byte length: a
    // count the page cannot hold is refused before anything is allocated for it.
    if count > buf.len() / layout.stored_width().unwrap_or(4) {
        return None;
    }
    let len = count + usize::from(nullable);
    let valid = nullable.then(|| NullBuffer::new(BooleanBuffer::collect_bool(len, |i| i < count)));
    match layout.width() {
        Some(width) => {
            let mut values = plain_fixed(buf, count, layout)?.into_owned();
            values.resize(len * width, 0);
            fixed_array(field, len, Buffer::from_vec(values), valid)
        }
        None => {
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

    /// Big-endian decimals of 1 to 8 bytes are sign-extended to 8 bytes, little-
    /// endian; a page shorter than its values is refused.
    #[test]
    fn big_endian_decimals_are_widened() {
        for width in 1..=8usize {
            let big = i64::MAX >> (64 - width * 8);
            let values = [0, 1, -1, 42, -42, big, -big - 1];
            let stored: Vec<u8> = values
                .iter()
                .flat_map(|v| v.to_be_bytes()[8 - width..].to_vec())
                .collect();
            let layout = Layout::BigEndian(width);
            let read = plain_fixed(&stored, values.len(), layout).unwrap();
            let read: Vec<i64> = read
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
                .collect();
            assert_eq!(read, values, "{width} bytes");
            assert!(plain_fixed(&stored, values.len() + 1, layout).is_none());
        }
        // Other fixed widths are the page's bytes themselves.
        let page = [1, 2, 3, 4, 5, 6, 7, 8];
        let read = plain_fixed(&page, 2, Layout::Fixed(4)).unwrap();
        assert!(matches!(read, Cow::Borrowed(b) if b == page));
    }

    /// A dictionary page claiming more values than its bytes can hold is refused
    /// before anything is allocated for them.
    #[test]
    fn dictionaries_larger_than_their_page_are_refused() {
        let page = [1, 0, 0, 0, b'a'];
        let text = Field::new("t", DataType::Utf8, true);
        let number = Field::new("n", DataType::Int32, true);
        assert!(dictionary_array(&page, 1 << 40, &text, Layout::Bytes, true).is_none());
        assert!(dictionary_array(&page, 1 << 40, &number, Layout::Fixed(4), true).is_none());
        let decimal = Field::new("d", DataType::Decimal64(15, 2), true);
        let forged = dictionary_array(&page, 1 << 40, &decimal, Layout::BigEndian(1), true);
        assert!(forged.is_none());
        let one = dictionary_array(&page, 1, &text, Layout::Bytes, true).unwrap();
        assert_eq!((one.len(), one.null_count()), (2, 1));
    }
}
