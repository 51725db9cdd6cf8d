//! Conjuncts on dictionary-encoded columns decided on the columns' dictionaries and
//! keys, without the parquet crate's reader.
//!
//! A Parquet writer stores a column with few distinct values (dates, quantities,
//! discounts, codes, modes) as a dictionary page of the distinct values and data
//! pages of keys into it, bit-packed or run-length encoded. To hand over the column,
//! the reader looks every key up and copies its value (`RleDecoder::get_batch_with_dict`:
//! about a third of the time of TPC-H Q6 counted on a file), and a predicate then
//! compares every value. Here:
//!
//! - a conjunct group that reads one column is evaluated once per dictionary value
//!   (and on NULL), giving one bit per value; the keys are unpacked 8 at a time and
//!   each looks its bit up, keys of up to 6 bits two to six at a lookup ([`chunk_mask`],
//!   [`combined`]);
//! - a group that reads several fixed-width columns is evaluated on the columns'
//!   values, decoded here from their keys ([`chunk_values`]), in batches; or, when the
//!   groups before it kept at most one row in eight, on the values at those rows only
//!   ([`gathered_mask`]).
//!
//! The bits of the row group's rows are the group's mask; the masks are ANDed, and the
//! scan counts the result (when nothing else is read), reads the output columns at
//! its rows itself ([`gather`](super::gather)), or hands it to the reader as its row
//! selection.
//!
//! Only what can be read bit for bit is read this way: a flat column (no repetition,
//! at most one level of nulls) whose every data page is dictionary-encoded, of
//! `INT32` read as INTEGER, DATE or a `Decimal32`, `INT64` read as BIGINT or a
//! `Decimal64`, `FLOAT`, `DOUBLE`, or (in single-column groups) `BYTE_ARRAY` read as
//! a string or BLOB layout ([`keyed_layout`]). Anything else met on the way (a page
//! of another encoding, a key past the dictionary, text that is not UTF-8, a
//! truncated page) gives up on the row group ([`row_group_mask`] returns `None`) and
//! the scan reads it through the reader, which reports what is wrong with the file.

use std::sync::Arc;

use arrow::array::{
    make_array, Array, ArrayData, ArrayRef, BinaryArray, BooleanArray, RecordBatch, StringArray,
};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Schema};
use parquet::basic::{Encoding, Type as Physical};
use parquet::column::page::{Page, PageReader};
use parquet::file::metadata::{ParquetMetaData, RowGroupMetaData};
use parquet::file::serialized_reader::SerializedPageReader;

use super::gather::RowGroupGather;
use super::source::FileBytes;
use super::{dictionary_encoded, single_leaf, Dataset, JitPredicate};

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
fn value_layout(t: &DataType, physical: Physical) -> Option<Layout> {
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

/// How root column `column` is read by its keys, the same in every file of
/// `dataset`: one flat leaf (no repetition, at most one level of nulls), a type read
/// bit for bit ([`Layout`]), and every data page of every chunk dictionary-encoded
/// (as the chunks' page encoding statistics say). `None`: it is not.
pub(crate) fn keyed_layout(dataset: &Dataset, column: usize) -> Option<Layout> {
    let mut layouts = dataset.files().iter().map(|f| {
        let meta = f.metadata.metadata();
        let leaf = single_leaf(meta, column)?;
        let descr = meta.file_metadata().schema_descr().column(leaf);
        let t = f.metadata.schema().field(column).data_type();
        let layout = value_layout(t, descr.physical_type())?;
        let flat = descr.max_rep_level() == 0 && descr.max_def_level() <= 1;
        (flat && dictionary_encoded(meta, leaf)).then_some(layout)
    });
    let first = layouts.next()??;
    layouts.all(|l| l == Some(first)).then_some(first)
}

/// The rows the keyed conjuncts of a row group keep ([`row_group_mask`]).
pub(crate) struct KeyedRows {
    /// One bit a row of the row group: set where every keyed conjunct is TRUE.
    pub rows: BooleanBuffer,
    /// Whether a group on several columns was evaluated only at the rows the groups
    /// before it kept ([`gathered_mask`]).
    pub narrowed: bool,
}

/// The rows of row group `rg` of a file (`meta`, Arrow schema `schema`, bytes
/// `source`) where every one of `predicates` is TRUE; each reads columns
/// [`keyed_layout`] accepts (fixed-width ones when it reads more than one). They are
/// evaluated in order, a group on several columns at the rows the groups before it
/// kept when those are [`few`]. A group `optional` marks (one column's conjuncts that
/// the group on several columns after it has too) runs only when the rows kept
/// before it are not few and its dictionary's answers say that it would make them
/// few ([`worth_narrowing`]). `None` when a chunk is not as its metadata promised:
/// the caller then reads the row group through the reader.
pub(crate) fn row_group_mask(
    meta: &ParquetMetaData,
    schema: &Schema,
    rg: usize,
    predicates: &mut [JitPredicate],
    optional: &[bool],
    source: &Arc<FileBytes>,
) -> Option<KeyedRows> {
    #[cfg(test)]
    if GIVE_UP.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let group = meta.row_groups().get(rg)?;
    let rows = usize::try_from(group.num_rows()).ok()?;
    let mut selected: Option<BooleanBuffer> = None;
    let mut narrowed = false;
    for (k, predicate) in predicates.iter_mut().enumerate() {
        let optional = optional.get(k).copied().unwrap_or(false);
        let columns = predicate.columns().to_vec();
        // The most of its dictionary's values it may find TRUE (as a share).
        let at_most = match &selected {
            _ if !optional => f64::INFINITY,
            Some(chosen) if few(chosen) => continue,
            Some(chosen) => worth_narrowing(chosen),
            None => 1.0 / OPTIONAL_BELOW as f64,
        };
        // A group on several columns after groups that kept few rows: its columns
        // read at those rows (unless a chunk lists an encoding not read so).
        let gather = match (&columns[..], &selected) {
            ([_, _, ..], Some(chosen)) if few(chosen) => {
                RowGroupGather::new(meta, schema, rg, &columns, source).map(|g| (g, chosen))
            }
            _ => None,
        };
        let mask = match columns[..] {
            [column] => {
                let (pages, field, layout, nullable) =
                    chunk(meta, group, schema, column, rows, source)?;
                match chunk_mask(pages, field, layout, nullable, rows, predicate, at_most)? {
                    Decided::Rows(mask) => mask,
                    Decided::Skipped => continue,
                }
            }
            _ if gather.is_some() => {
                narrowed = true;
                let (gather, chosen) = gather?;
                gathered_mask(gather, chosen, predicate)?
            }
            _ => {
                let mut arrays = Vec::with_capacity(columns.len());
                let mut fields = Vec::with_capacity(columns.len());
                for &column in &columns {
                    let (pages, field, layout, nullable) =
                        chunk(meta, group, schema, column, rows, source)?;
                    let Layout::Fixed(width) = layout else {
                        return None;
                    };
                    arrays.push(chunk_values(pages, field, width, nullable, rows)?);
                    fields.push(Field::new(
                        field.name(),
                        field.data_type().clone(),
                        nullable,
                    ));
                }
                let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).ok()?;
                batch_mask(&batch, predicate)?
            }
        };
        let mask = match selected {
            Some(before) => &before & &mask,
            None => mask,
        };
        // Later groups cannot bring rows back.
        let none_left = mask.count_set_bits() == 0;
        selected = Some(mask);
        if none_left {
            break;
        }
    }
    selected.map(|rows| KeyedRows { rows, narrowed })
}

/// Whether the rows `chosen` keeps are few enough that a group on several columns
/// is evaluated on those rows only ([`gathered_mask`]), not on every row's values
/// decoded from the keys. Looking a kept row's value up costs more than decoding
/// one in a run; see docs/performance-notes.md for the measured crossover.
fn few(chosen: &BooleanBuffer) -> bool {
    chosen.count_set_bits() * GATHER_BELOW <= chosen.len()
}

/// A group on several columns is evaluated on the rows kept so far only when at
/// most one row in this many is kept ([`few`]).
const GATHER_BELOW: usize = 8;

/// An optional group runs only when it would leave at most one row in this many
/// ([`worth_narrowing`]): its own pass over the keys costs about what reading the
/// group on several columns at the rows kept saves when one row in 8 is kept.
const OPTIONAL_BELOW: usize = 16;

/// The largest share of its dictionary's values an optional group may find TRUE
/// and still be run after the groups that kept `chosen` (not [`few`]): assuming its
/// column's values independent of the rows kept so far, and its dictionary's values
/// about equally frequent, it would then leave at most one row in [`OPTIONAL_BELOW`].
fn worth_narrowing(chosen: &BooleanBuffer) -> f64 {
    let kept = chosen.count_set_bits() as f64 / chosen.len().max(1) as f64;
    1.0 / (OPTIONAL_BELOW as f64 * kept)
}

/// The mask of `predicate` at the rows `chosen` keeps, FALSE elsewhere: the values of
/// its columns are read at those rows only (`gather`) and evaluated in batches of
/// 8,192. `None` as for [`row_group_mask`].
///
/// Only for a group ANDed with the ones that chose the rows: a predicate split into
/// groups cannot raise an error (`conjuncts::split`), so the rows another group
/// dropped need not be evaluated. As for the output columns gathered, pages past the
/// last kept row are not read, and pages before a kept row are skipped undecompressed:
/// damage there goes unseen by a count (the values read are checked as always).
fn gathered_mask(
    mut gather: RowGroupGather,
    chosen: &BooleanBuffer,
    predicate: &mut JitPredicate,
) -> Option<BooleanBuffer> {
    const ROWS: usize = 8192;
    let rows: Vec<u32> = chosen.set_indices().map(|i| i as u32).collect();
    let mut words = vec![0u64; chosen.len().div_ceil(64)];
    for part in rows.chunks(ROWS) {
        let mask = predicate.mask(gather.batch(part)?).ok()?;
        let mask = match mask.nulls() {
            Some(nulls) => mask.values() & nulls.inner(),
            None => mask.values().clone(),
        };
        for k in mask.set_indices() {
            let row = *part.get(k)? as usize;
            words[row / 64] |= 1 << (row % 64);
        }
    }
    Some(BooleanBuffer::new(Buffer::from_vec(words), 0, chosen.len()))
}

/// Tests: every row group is given back to the reader (what a chunk that is not as
/// its metadata says does), to check that the scan then reads it right.
#[cfg(test)]
pub(crate) static GIVE_UP: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

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

/// The mask of `predicate` on `batch` (in batches of 8,192 rows, which stay in the
/// cache), TRUE rows only.
fn batch_mask(batch: &RecordBatch, predicate: &mut JitPredicate) -> Option<BooleanBuffer> {
    const ROWS: usize = 8192;
    let mut bits = Bits::with_capacity(batch.num_rows());
    let mut at = 0;
    while at < batch.num_rows() {
        let n = ROWS.min(batch.num_rows() - at);
        let mask = predicate.mask(batch.slice(at, n)).ok()?;
        let mask = match mask.nulls() {
            Some(nulls) => mask.values() & nulls.inner(),
            None => mask.values().clone(),
        };
        bits.push_buffer(&mask);
        at += n;
    }
    Some(bits.finish())
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

/// Walks a column chunk's pages, the dictionary page first, then pages of keys,
/// handing each to `visit`. Returns the rows of the data pages; `None` when a page is
/// not as expected, or `visit` says so.
fn walk(
    mut pages: impl PageReader,
    nullable: bool,
    mut visit: impl FnMut(PageData<'_>) -> Option<()>,
) -> Option<usize> {
    let mut seen_dictionary = false;
    let mut rows = 0usize;
    while let Some(page) = pages.get_next_page().ok()? {
        match page_data(&page, nullable)? {
            data @ PageData::Dictionary(..) if !seen_dictionary => {
                seen_dictionary = true;
                visit(data)?;
            }
            data @ PageData::Keys(_, _, n) if seen_dictionary => {
                visit(data)?;
                rows = rows.checked_add(n)?;
            }
            _ => return None,
        }
    }
    Some(rows)
}

/// One bit per row of a column chunk (`pages`, `rows` rows of `field`, laid out as
/// `layout`, `nullable` with one level of nulls): TRUE where `predicate` is TRUE on
/// the row's value (or NULL); [`Decided::Skipped`] when the predicate is TRUE on more
/// than `at_most` of the dictionary's values (a share).
fn chunk_mask(
    pages: impl PageReader,
    field: &Field,
    layout: Layout,
    nullable: bool,
    rows: usize,
    predicate: &mut JitPredicate,
    at_most: f64,
) -> Option<Decided> {
    let mut table: Option<Table> = None;
    let mut bits = Bits::with_capacity(rows);
    let mut scratch = Vec::new();
    let mut skipped = false;
    let read = walk(pages, nullable, |page| match page {
        PageData::Dictionary(values, count) => {
            let (entries, null) =
                dictionary_bits(values, count, field, layout, nullable, predicate)?;
            let true_values = entries.iter().filter(|&&e| e == 1).count();
            if true_values as f64 > at_most * entries.len() as f64 {
                skipped = true;
                return None;
            }
            table = Some(Table {
                entries,
                padded: None,
                null,
            });
            Some(())
        }
        PageData::Keys(levels, keys, n) => {
            page_bits(levels, keys, n, table.as_mut()?, &mut bits, &mut scratch)?;
            (bits.len <= rows).then_some(())
        }
        PageData::Plain(..) => None,
    });
    if skipped {
        return Some(Decided::Skipped);
    }
    (read? == rows && bits.len == rows).then(|| Decided::Rows(bits.finish()))
}

/// What [`chunk_mask`] decided.
enum Decided {
    /// One bit a row: set where the conjuncts are TRUE.
    Rows(BooleanBuffer),
    /// Nothing: the dictionary's answers kept more than the group may keep.
    Skipped,
}

/// The values of a column chunk of fixed-width values (`pages`, `rows` rows of
/// `field`, `width` bytes a value, `nullable` with one level of nulls), as the
/// reader would give them: each key's dictionary value.
fn chunk_values(
    pages: impl PageReader,
    field: &Field,
    width: usize,
    nullable: bool,
    rows: usize,
) -> Option<ArrayRef> {
    match width {
        4 => typed_values::<u32>(pages, field, nullable, rows),
        8 => typed_values::<u64>(pages, field, nullable, rows),
        _ => None,
    }
}

/// [`chunk_values`] for values of `T`'s width.
fn typed_values<T: Copy + Default + FromLe>(
    pages: impl PageReader,
    field: &Field,
    nullable: bool,
    rows: usize,
) -> Option<ArrayRef> {
    let mut dictionary: Vec<T> = Vec::new();
    // The dictionary padded for the keys' width of the last page.
    let mut padded: Option<(u8, Vec<T>)> = None;
    let mut values: Vec<T> = Vec::with_capacity(rows);
    let mut valid = nullable.then(|| Bits::with_capacity(rows));
    let mut found = Vec::new();
    let mut scratch = Vec::new();
    let read = walk(pages, nullable, |page| match page {
        PageData::Dictionary(buf, count) => {
            let bytes = buf.get(..count.checked_mul(T::WIDTH)?)?;
            dictionary = bytes.chunks_exact(T::WIDTH).map(T::from_le).collect();
            Some(())
        }
        PageData::Keys(levels, data, n) => {
            if values.len().checked_add(n)? > rows {
                return None;
            }
            let (&width, data) = data.split_first().unwrap_or((&0, &[]));
            let hybrid = Hybrid::new(data, width)?;
            if width as usize <= FAST_WIDTH && padded.as_ref().is_none_or(|(w, _)| *w != width) {
                let mut p = dictionary[..dictionary.len().min(1 << width)].to_vec();
                p.resize(1 << width, T::default());
                padded = Some((width, p));
            }
            let fast = match &padded {
                Some((w, p)) if *w == width => &p[..],
                _ => &[],
            };
            let present = match (levels, valid.as_mut()) {
                (Some(levels), Some(valid)) => {
                    let mut present = Bits::with_capacity(n);
                    Hybrid::new(levels, 1)?.lookup(n, &[0, 1], &mut present, &mut scratch)?;
                    let present = present.finish();
                    valid.push_buffer(&present);
                    Some(present)
                }
                _ => None,
            };
            let count = present.as_ref().map_or(n, |p| p.count_set_bits());
            match present.filter(|_| count < n) {
                None => hybrid.gather(count, &dictionary, fast, &mut values, &mut scratch)?,
                Some(present) => {
                    found.clear();
                    hybrid.gather(count, &dictionary, fast, &mut found, &mut scratch)?;
                    let mut next = found.iter();
                    for p in present.iter() {
                        values.push(match p {
                            true => *next.next()?,
                            false => T::default(),
                        });
                    }
                }
            }
            Some(())
        }
        PageData::Plain(..) => None,
    })?;
    if read != rows || values.len() != rows {
        return None;
    }
    let nulls = valid
        .map(|v| NullBuffer::new(v.finish()))
        .filter(|n| n.null_count() > 0);
    fixed_array(field, rows, Buffer::from_vec(values), nulls)
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

/// A fixed-width value read from its little-endian bytes.
trait FromLe: arrow::datatypes::ArrowNativeType {
    const WIDTH: usize;
    fn from_le(bytes: &[u8]) -> Self;
}

impl FromLe for u32 {
    const WIDTH: usize = 4;
    fn from_le(bytes: &[u8]) -> u32 {
        u32::from_le_bytes(bytes.try_into().expect("4 bytes"))
    }
}

impl FromLe for u64 {
    const WIDTH: usize = 8;
    fn from_le(bytes: &[u8]) -> u64 {
        u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
    }
}

/// The `count` values of a PLAIN dictionary page (`buf`), then a NULL if `nullable`,
/// as an array of `field`'s type (`None` if the page is shorter than they need, or
/// text is not UTF-8).
fn dictionary_array(
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
            // Each value: its length in 4 bytes, then its bytes.
            let mut offsets = Vec::with_capacity(count + 2);
            let mut bytes = Vec::with_capacity(buf.len());
            let mut rest = buf;
            offsets.push(0i32);
            for _ in 0..count {
                let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
                let value = rest.get(4..4usize.checked_add(len)?)?;
                bytes.extend_from_slice(value);
                rest = &rest[4 + len..];
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

/// Whether the predicate is TRUE (1) or not (0) for each of the `count` values of a
/// PLAIN dictionary page, and whether it is TRUE for NULL (`x IS NULL`, say) when the
/// column is `nullable`.
fn dictionary_bits(
    buf: &[u8],
    count: usize,
    field: &Field,
    layout: Layout,
    nullable: bool,
    predicate: &mut JitPredicate,
) -> Option<(Vec<u8>, bool)> {
    let array = dictionary_array(buf, count, field, layout, nullable)?;
    let column = Field::new(field.name(), field.data_type().clone(), nullable);
    let batch = RecordBatch::try_new(Arc::new(Schema::new(vec![column])), vec![array]).ok()?;
    let mask: BooleanArray = predicate.mask(batch).ok()?;
    let is_true = |i: usize| mask.is_valid(i) && mask.value(i);
    let null = nullable && is_true(count);
    Some(((0..count).map(|i| u8::from(is_true(i))).collect(), null))
}

/// The predicate's value on each dictionary value (1 TRUE, 0 not), the same padded
/// for the keys' width of the last page ([`padded`]), and its value on NULL.
struct Table {
    entries: Vec<u8>,
    padded: Option<(u8, Vec<u8>)>,
    null: bool,
}

impl Table {
    /// The table to look keys of `width` bits up in.
    fn for_width(&mut self, width: u8) -> &[u8] {
        if self.padded.as_ref().is_none_or(|(w, _)| *w != width) {
            self.padded = padded(&self.entries, u32::from(width)).map(|p| (width, p));
        }
        match &self.padded {
            Some((_, padded)) => padded,
            None => &self.entries,
        }
    }
}

/// Appends to `bits` the bits of a data page's `rows` rows: `levels` (the
/// definition levels, RLE/bit-packed with width 1, when the column has NULLs) and
/// `values` (the keys: their bit width in a byte, then RLE/bit-packed), each key
/// looked up in `table`.
fn page_bits(
    levels: Option<&[u8]>,
    values: &[u8],
    rows: usize,
    table: &mut Table,
    bits: &mut Bits,
    scratch: &mut Vec<u32>,
) -> Option<()> {
    let (&width, keys) = match values.split_first() {
        Some(split) => split,
        // A page of NULLs only may have no key at all.
        None => (&0, &[][..]),
    };
    let null = table.null;
    let table = table.for_width(width);
    let keys = Hybrid::new(keys, width)?;
    let Some(levels) = levels else {
        return keys.lookup(rows, table, bits, scratch);
    };
    let mut defined = Bits::with_capacity(rows);
    Hybrid::new(levels, 1)?.lookup(rows, &[0, 1], &mut defined, scratch)?;
    let present = defined.finish();
    let count = present.count_set_bits();
    if count == rows {
        return keys.lookup(rows, table, bits, scratch);
    }
    let mut found = Bits::with_capacity(count);
    keys.lookup(count, table, &mut found, scratch)?;
    let found = found.finish();
    let mut next = 0;
    for row in 0..rows {
        let bit = match present.value(row) {
            true => found.value(next),
            false => null,
        };
        next += usize::from(present.value(row));
        bits.push_run(bit, 1);
    }
    Some(())
}

/// A growing bitmap, 64 bits a word, least significant first (Arrow's order).
pub(super) struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    pub(super) fn with_capacity(bits: usize) -> Bits {
        Bits {
            words: Vec::with_capacity(bits.div_ceil(64)),
            len: 0,
        }
    }

    /// Appends the low `n` bits of `word` (`n` ≤ 64; the bits above are zero).
    fn push_word(&mut self, word: u64, n: usize) {
        let offset = self.len % 64;
        if offset == 0 {
            self.words.push(word);
        } else {
            *self.words.last_mut().expect("a partial word") |= word << offset;
            if offset + n > 64 {
                self.words.push(word >> (64 - offset));
            }
        }
        self.len += n;
    }

    /// Appends `bit` `n` times.
    fn push_run(&mut self, bit: bool, mut n: usize) {
        let fill = if bit { u64::MAX } else { 0 };
        while n > 0 {
            let take = n.min(64);
            let word = if take == 64 {
                fill
            } else {
                fill & ((1 << take) - 1)
            };
            self.push_word(word, take);
            n -= take;
        }
    }

    /// Appends the bits of `buffer`.
    fn push_buffer(&mut self, buffer: &BooleanBuffer) {
        let chunks = buffer.bit_chunks();
        for word in chunks.iter() {
            self.push_word(word, 64);
        }
        if chunks.remainder_len() > 0 {
            self.push_word(chunks.remainder_bits(), chunks.remainder_len());
        }
    }

    fn finish(self) -> BooleanBuffer {
        BooleanBuffer::new(Buffer::from_vec(self.words), 0, self.len)
    }

    /// The words, the bits past the length zero.
    pub(super) fn into_words(self) -> Vec<u64> {
        self.words
    }
}

/// A run of [`Hybrid`] values: one value repeated so many times, or packed values
/// (their bytes, and how many to read).
pub(super) enum Run<'a> {
    Repeat(usize, usize),
    Packed(&'a [u8], usize),
}

/// Parquet's RLE/bit-packed hybrid encoding of small integers (keys, levels): runs,
/// each a ULEB128 header, then either one value repeated (`header >> 1` times, in
/// whole bytes) or groups of 8 values packed `width` bits each (`header >> 1` groups,
/// least significant bit first).
pub(super) struct Hybrid<'a> {
    data: &'a [u8],
    width: u32,
}

impl<'a> Hybrid<'a> {
    pub(super) fn new(data: &'a [u8], width: u8) -> Option<Hybrid<'a>> {
        (width <= 32).then_some(Hybrid {
            data,
            width: u32::from(width),
        })
    }

    /// The next run, of at most `left` values (the last run of a page may be cut
    /// short of its groups: only as many values as the page holds are read); `None`
    /// when the data ends first or a run is empty.
    pub(super) fn next_run(&mut self, left: usize) -> Option<Run<'a>> {
        let header = self.uleb128()?;
        let n = usize::try_from(header >> 1).ok()?;
        let run = if header & 1 == 0 {
            // One value, in whole bytes.
            let bytes = self.width.div_ceil(8) as usize;
            let raw = self.data.get(..bytes)?;
            self.data = &self.data[bytes..];
            let value = raw
                .iter()
                .rev()
                .fold(0usize, |v, &b| (v << 8) | usize::from(b));
            Run::Repeat(value, n.min(left))
        } else {
            // Groups of 8 packed values.
            let width = self.width as usize;
            let bytes = n.checked_mul(width)?.min(self.data.len());
            let packed = &self.data[..bytes];
            self.data = &self.data[bytes..];
            let available = match width {
                0 => n.checked_mul(8)?,
                _ => bytes * 8 / width,
            };
            Run::Packed(packed, available.min(n.saturating_mul(8)).min(left))
        };
        match run {
            Run::Repeat(_, 0) | Run::Packed(_, 0) => None,
            run => Some(run),
        }
    }

    /// Hands each run of the next `count` values to `each`.
    fn runs(mut self, count: usize, mut each: impl FnMut(Run<'a>) -> Option<()>) -> Option<()> {
        let mut left = count;
        while left > 0 {
            let run = self.next_run(left)?;
            left -= match run {
                Run::Repeat(_, n) | Run::Packed(_, n) => n,
            };
            each(run)?;
        }
        Some(())
    }

    /// Appends to `bits` the `table` entry of each of the next `count` values: 1
    /// TRUE, 0 not (`None`: the data ends first, or a value's entry is neither).
    /// Keys of at most [`FAST_WIDTH`] bits are unpacked and looked up 8 at a time
    /// without a bounds check: `table` must then have an entry for every value of
    /// the width (2 for those past the dictionary, [`padded`]).
    pub(super) fn lookup(
        self,
        count: usize,
        table: &[u8],
        bits: &mut Bits,
        scratch: &mut Vec<u32>,
    ) -> Option<()> {
        let width = self.width;
        self.runs(count, |run| match run {
            // (A padded table's combined entries follow its keys' own.)
            Run::Repeat(value, n) => {
                match table.get(value).filter(|_| value as u64 >> width == 0)? {
                    bit @ (0 | 1) => {
                        bits.push_run(*bit == 1, n);
                        Some(())
                    }
                    _ => None,
                }
            }
            Run::Packed(packed, n) if width as usize <= FAST_WIDTH => {
                packed_bits(packed, width, n, table, bits).then_some(())
            }
            Run::Packed(packed, n) => {
                for chunk in unpacked(packed, width, n, scratch).chunks(64) {
                    let mut word = 0u64;
                    for (i, &key) in chunk.iter().enumerate() {
                        match table.get(key as usize)? {
                            bit @ (0 | 1) => word |= u64::from(*bit) << i,
                            _ => return None,
                        }
                    }
                    bits.push_word(word, chunk.len());
                }
                Some(())
            }
        })
    }

    /// Appends to `out` the `dictionary` value of each of the next `count` keys
    /// (`None`: the data ends first, or a key is past the dictionary). Keys of at
    /// most [`FAST_WIDTH`] bits are unpacked 8 at a time and look their value up in
    /// `padded` (the dictionary with a value for every key of the width) without a
    /// bounds check; the others through `scratch`.
    fn gather<T: Copy + Default>(
        self,
        count: usize,
        dictionary: &[T],
        padded: &[T],
        out: &mut Vec<T>,
        scratch: &mut Vec<u32>,
    ) -> Option<()> {
        let width = self.width;
        self.runs(count, |run| match run {
            Run::Repeat(key, n) => {
                out.extend(std::iter::repeat_n(*dictionary.get(key)?, n));
                Some(())
            }
            Run::Packed(packed, n) if width as usize <= FAST_WIDTH => {
                let at = out.len();
                out.resize(at + n, T::default());
                let keys = dictionary.len();
                packed_values(packed, width, padded, keys, &mut out[at..]).then_some(())
            }
            Run::Packed(packed, n) => {
                for &key in unpacked(packed, width, n, scratch).iter() {
                    out.push(*dictionary.get(key as usize)?);
                }
                Some(())
            }
        })
    }

    fn uleb128(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.data.split_first()?;
            self.data = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
}

/// The widest keys looked up through a table with an entry for every value of
/// their width (2¹⁶ entries: dictionaries of up to 65,536 values).
const FAST_WIDTH: usize = 16;

/// `table` (one entry per dictionary value) with an entry for every value of
/// `width` bits, 2 (neither TRUE nor not: corrupt) for those past the dictionary;
/// `None` for keys wider than [`FAST_WIDTH`]. For keys of at most 6 bits the
/// [`combined`] entries of [`keys_per_lookup`] keys follow.
fn padded(table: &[u8], width: u32) -> Option<Vec<u8>> {
    if width as usize > FAST_WIDTH {
        return None;
    }
    let size = 1usize << width;
    let mut out = table[..table.len().min(size)].to_vec();
    out.resize(size, 2);
    combined(&mut out, width as usize);
    Some(out)
}

/// How many keys of `w` bits one lookup of a [`combined`] entry decides: as many as
/// fit in 12 bits (a table of at most 4,096 bytes, which stays in the L1 cache), at
/// most 6 (their bits and a flag fit in a byte); 0 for keys of more than 6 bits.
const fn keys_per_lookup(w: usize) -> usize {
    match w {
        1 | 2 => 6,
        3..=6 => 12 / w,
        _ => 0,
    }
}

/// Appends to `table` (the `2^w` entries of keys of `w` bits) an entry for each
/// value of `k` = [`keys_per_lookup`]`(w)` such keys side by side (the first in the
/// low bits): bit `j` is the entry of key `j` (TRUE or not), bit 7 is set when one
/// of them is neither (past the dictionary). Nothing for wider keys.
fn combined(table: &mut Vec<u8>, w: usize) {
    let k = keys_per_lookup(w);
    if k == 0 || table.len() != 1 << w {
        return;
    }
    let mask = (1 << w) - 1;
    let one = |entry: u8| (entry & 1) | if entry > 1 { 0x80 } else { 0 };
    let keys_bits = (1u8 << k) - 1;
    let mut entries = vec![0u8; 1 << (k * w)];
    // Value `v` is its first key (its low `w` bits), then the keys of `v >> w`: the
    // entry of `v >> w` (built before, it is smaller) shifted by one key, its last
    // key (a 0 past the `k`) dropped. For `v` = 0 that is itself: `k` keys 0.
    entries[0] = (0..k).fold(one(table[0]) & 0x80, |e, j| e | (table[0] & 1) << j);
    for v in 1..entries.len() {
        let rest = entries[v >> w];
        entries[v] = one(table[v & mask]) | ((rest << 1) & keys_bits) | (rest & 0x80);
    }
    table.extend(entries);
}

/// Appends to `bits` the `table` entries of the first `take` of the packed values of
/// `width` (≤ [`FAST_WIDTH`]) bits in `packed` (which holds at least `take` of them);
/// `table` has `2^width` entries, then possibly their [`combined`] entries. `false`
/// if an entry is neither 0 nor 1.
fn packed_bits(packed: &[u8], width: u32, take: usize, table: &[u8], bits: &mut Bits) -> bool {
    macro_rules! widths {
        ($($w:literal)*) => {
            match width {
                0 => {
                    // Every key is 0.
                    return match table.first() {
                        Some(&bit @ (0 | 1)) => {
                            bits.push_run(bit == 1, take);
                            true
                        }
                        _ => false,
                    };
                }
                $($w => packed_bits_width::<$w>(packed, take, table, bits),)*
                _ => false,
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// [`packed_bits`] for one width, known when compiled: each group of 8 keys is 8
/// loads, shifts and masks by constants, and 8 lookups that need no bounds check; for
/// keys of at most 6 bits with [`combined`] entries, one load and 2 to 4 lookups.
fn packed_bits_width<const W: usize>(
    packed: &[u8],
    take: usize,
    table: &[u8],
    bits: &mut Bits,
) -> bool {
    let mask = (1usize << W) - 1;
    let k = keys_per_lookup(W);
    let combined = table
        .get(mask + 1..)
        .filter(|c| k > 0 && c.len() == 1 << (k * W));
    let Some(table) = table.get(..=mask) else {
        return false;
    };
    // The bits of the group of 8 keys whose window is `s`, and the OR of their
    // entries (a combined entry's flag counts as 2).
    let group = |s: &[u8]| -> (u8, u8) {
        let (mut byte, mut all) = (0u8, 0u8);
        match combined {
            Some(combined) => {
                // 8 keys of at most 6 bits: 48 bits of the window's first 8 bytes,
                // `k` keys a lookup; the keys past the 8th are zeroed, their bits
                // shifted out of the byte.
                let window = u64::from_le_bytes(s[..8].try_into().expect("8 bytes"));
                let keys = window & ((1u64 << (8 * W)) - 1);
                let chunk = (1usize << (k * W)) - 1;
                for j in 0..8usize.div_ceil(k) {
                    let entry = combined[(keys >> (j * k * W)) as usize & chunk];
                    byte |= ((u16::from(entry & 0x3f)) << (j * k)) as u8;
                    all |= (entry >> 6) & 2;
                }
            }
            None => {
                for i in 0..8 {
                    let entry = table[key::<W>(s, i) & mask];
                    byte |= (entry & 1) << i;
                    all |= entry;
                }
            }
        }
        (byte, all)
    };
    let mut all = 0u8;
    let mut word = 0u64;
    let mut in_word = 0;
    let mut push = |byte: u8, n: usize, bits: &mut Bits| {
        word |= u64::from(byte) << in_word;
        in_word += n;
        if in_word == 64 {
            bits.push_word(word, 64);
            word = 0;
            in_word = 0;
        }
    };
    let direct = direct_groups::<W>(packed, take);
    for g in 0..direct {
        let (byte, a) = group(&packed[g * W..g * W + W + 8]);
        all |= a;
        push(byte, 8, bits);
    }
    // A last group of fewer than 8 keys keeps their bits and entries only.
    let mut copy = [0u8; 2 * FAST_WIDTH + 8];
    for g in direct..take.div_ceil(8) {
        let n = (take - g * 8).min(8);
        let window = tail_window::<W>(packed, g, &mut copy);
        let mut byte = 0u8;
        for i in 0..n {
            let entry = table[key::<W>(window, i) & mask];
            byte |= (entry & 1) << i;
            all |= entry;
        }
        push(byte, n, bits);
    }
    if in_word > 0 {
        bits.push_word(word, in_word);
    }
    all <= 1
}

/// How many of the groups of 8 packed `W`-bit values among the first `take` of
/// `packed` can be read in place: those whose window (the group's bytes and 8 more)
/// lies inside `packed`.
fn direct_groups<const W: usize>(packed: &[u8], take: usize) -> usize {
    match packed.len().checked_sub(W + 8) {
        Some(last) => (last / W + 1).min(take / 8),
        None => 0,
    }
}

/// The window of group `g` of packed `W`-bit values, copied into `copy` and padded
/// with zeros past the end of `packed`.
fn tail_window<'c, const W: usize>(packed: &[u8], g: usize, copy: &'c mut [u8]) -> &'c [u8] {
    let from = (g * W).min(packed.len());
    let n = (packed.len() - from).min(W);
    copy[..W + 8].fill(0);
    copy[..n].copy_from_slice(&packed[from..from + n]);
    &copy[..W + 8]
}

/// Value `i` (< 8) of a group of `W`-bit values whose `window` is at least `W + 8`
/// bytes, with the bits above it (mask them off).
#[inline(always)]
fn key<const W: usize>(window: &[u8], i: usize) -> usize {
    let window = &window[..W + 8];
    let bit = i * W;
    let at = bit / 8;
    let bytes = u64::from_le_bytes(window[at..at + 8].try_into().expect("8 bytes"));
    (bytes >> (bit % 8)) as usize
}

/// Fills `out` with the `padded` values of the first `out.len()` packed keys of
/// `width` (≤ [`FAST_WIDTH`]) bits in `packed` (which holds at least that many);
/// `padded` has `2^width` values, the first `keys` of them the dictionary's.
/// `false` if a key is past the dictionary.
fn packed_values<T: Copy + Default>(
    packed: &[u8],
    width: u32,
    padded: &[T],
    keys: usize,
    out: &mut [T],
) -> bool {
    macro_rules! widths {
        ($($w:literal)*) => {
            match width {
                0 => match padded.first() {
                    Some(&v) if keys > 0 => {
                        out.fill(v);
                        true
                    }
                    _ => false,
                },
                $($w => packed_values_width::<$w, T>(packed, padded, keys, out),)*
                _ => false,
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// [`packed_values`] for one width, known when compiled.
fn packed_values_width<const W: usize, T: Copy + Default>(
    packed: &[u8],
    padded: &[T],
    keys: usize,
    out: &mut [T],
) -> bool {
    let mask = (1usize << W) - 1;
    let Some(padded) = padded.get(..=mask) else {
        return false;
    };
    // The values of the group whose window is `s` into `o`; whether a key is past
    // the dictionary.
    let group = |s: &[u8], o: &mut [T]| -> bool {
        let mut past = false;
        for (i, o) in o.iter_mut().enumerate() {
            let key = key::<W>(s, i) & mask;
            past |= key >= keys;
            *o = padded[key];
        }
        past
    };
    let direct = direct_groups::<W>(packed, out.len());
    let (inside, rest) = out.split_at_mut(direct * 8);
    let mut past = false;
    for (g, o) in inside.chunks_exact_mut(8).enumerate() {
        past |= group(&packed[g * W..g * W + W + 8], o);
    }
    let mut copy = [0u8; 2 * FAST_WIDTH + 8];
    for (g, o) in rest.chunks_mut(8).enumerate() {
        past |= group(tail_window::<W>(packed, direct + g, &mut copy), o);
    }
    !past
}

/// The first `n` values of `width` bits in `packed`, unpacked into `scratch`.
fn unpacked<'s>(packed: &[u8], width: u32, n: usize, scratch: &'s mut Vec<u32>) -> &'s [u32] {
    scratch.clear();
    scratch.resize(n, 0);
    unpack(packed, width, scratch);
    scratch
}

/// Unpacks `out.len()` values of `width` bits (≤ 32), least significant bit first,
/// from `packed`, which holds at least that many bits.
fn unpack(packed: &[u8], width: u32, out: &mut [u32]) {
    macro_rules! widths {
        ($($w:literal)*) => {
            match width {
                $($w => unpack_width::<$w>(packed, out),)*
                _ => out.fill(0),
            }
        };
    }
    widths!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);
}

/// [`unpack`] for one width, known when compiled: the shifts and masks are constants.
fn unpack_width<const W: usize>(packed: &[u8], out: &mut [u32]) {
    let mask = if W == 32 {
        u64::from(u32::MAX)
    } else {
        (1u64 << W) - 1
    };
    // Values whose 8-byte window lies inside `packed`, loaded directly.
    let direct = (packed.len().saturating_sub(8) * 8 / W + 1).min(out.len());
    let direct = if packed.len() >= 8 { direct } else { 0 };
    for (i, v) in out[..direct].iter_mut().enumerate() {
        let bit = i * W;
        let at = bit / 8;
        let window = u64::from_le_bytes(packed[at..at + 8].try_into().expect("8 bytes"));
        *v = ((window >> (bit % 8)) & mask) as u32;
    }
    for (i, v) in out.iter_mut().enumerate().skip(direct) {
        let bit = i * W;
        let at = bit / 8;
        let mut window = [0u8; 8];
        let tail = &packed[at.min(packed.len())..];
        let n = tail.len().min(8);
        window[..n].copy_from_slice(&tail[..n]);
        *v = ((u64::from_le_bytes(window) >> (bit % 8)) & mask) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-packs `values` `width` bits each, least significant first.
    fn pack(values: &[u32], width: u32) -> Vec<u8> {
        let mut out = vec![0u8; (values.len() * width as usize).div_ceil(8)];
        for (i, &v) in values.iter().enumerate() {
            for b in 0..width as usize {
                if v >> b & 1 == 1 {
                    let bit = i * width as usize + b;
                    out[bit / 8] |= 1 << (bit % 8);
                }
            }
        }
        out
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
        let one = dictionary_array(&page, 1, &text, Layout::Bytes, true).unwrap();
        assert_eq!((one.len(), one.null_count()), (2, 1));
    }

    /// Keys of up to 6 bits are looked up several at a time ([`combined`]); for every
    /// width up to 8, dictionaries of random sizes, runs of any length (a last group of
    /// fewer than 8 keys too) and keys past the dictionary, the bits and the verdict
    /// are those of looking each key up alone.
    #[test]
    fn keys_looked_up_several_at_a_time_match_one_at_a_time() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |below: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % below
        };
        for width in 1..=8u32 {
            let size = 1u64 << width;
            for case in 0..60 {
                let dictionary = 1 + next(size) as usize;
                let entries: Vec<u8> = (0..dictionary).map(|_| next(2) as u8).collect();
                let bound = match case % 4 {
                    0 => size,
                    _ => dictionary as u64,
                };
                let take = 1 + next(200) as usize;
                let mut keys: Vec<u32> = (0..take).map(|_| next(bound) as u32).collect();
                if case % 4 == 1 && dictionary < size as usize && take > 80 {
                    // One key past the dictionary, in the first group (read in place
                    // with the others, not as part of a last short group).
                    keys[next(8) as usize] = (size - 1) as u32;
                }
                let packed = pack(&keys, width);
                let table = padded(&entries, width).unwrap();
                let k = keys_per_lookup(width as usize);
                let expected_len = (1 << width) + if k > 0 { 1 << (k * width as usize) } else { 0 };
                assert_eq!(table.len(), expected_len, "width {width}");
                let mut bits = Bits::with_capacity(take);
                let ok = packed_bits(&packed, width, take, &table, &mut bits);
                let valid = keys.iter().all(|&key| (key as usize) < dictionary);
                assert_eq!(ok, valid, "width {width}, case {case}");
                if ok {
                    let bits = bits.finish();
                    assert_eq!(bits.len(), take);
                    for (i, &key) in keys.iter().enumerate() {
                        let expected = entries[key as usize] == 1;
                        assert_eq!(
                            bits.value(i),
                            expected,
                            "width {width}, case {case}, key {i}"
                        );
                    }
                }
            }
        }
    }

    /// A run repeating a key wider than the keys' width (a corrupt page) finds no
    /// entry: not one of the combined entries that follow the keys' own.
    #[test]
    fn a_repeated_key_past_its_width_is_refused() {
        let table = padded(&[0, 1, 0], 3).unwrap();
        // Entry 8 is the combined entry of four keys 0: 0, as if key 8 were FALSE.
        assert_eq!(table[8], 0);
        let lookup = |key: u8| {
            let mut bits = Bits::with_capacity(8);
            // A run of 8 repetitions of `key`, in one byte.
            Hybrid::new(&[8 << 1, key], 3)
                .unwrap()
                .lookup(8, &table, &mut bits, &mut Vec::new())
                .map(|()| bits.finish().count_set_bits())
        };
        assert_eq!(lookup(1), Some(8));
        assert_eq!(lookup(2), Some(0));
        assert_eq!(lookup(5), None);
        assert_eq!(lookup(8), None);
    }

    #[test]
    fn unpacks_every_width() {
        for width in 1..=32u32 {
            let values: Vec<u32> = (0..67u64)
                .map(|i| ((i * 2_654_435_761) as u32) & (u32::MAX >> (32 - width)))
                .collect();
            let packed = pack(&values, width);
            let mut out = vec![0; values.len()];
            unpack(&packed, width, &mut out);
            assert_eq!(out, values, "width {width}");
        }
    }

    #[test]
    fn bits_append_across_words() {
        let mut bits = Bits::with_capacity(0);
        bits.push_run(true, 3);
        bits.push_word(0b101, 3);
        bits.push_run(false, 70);
        bits.push_run(true, 65);
        let b = bits.finish();
        assert_eq!(b.len(), 3 + 3 + 70 + 65);
        let expected: Vec<bool> = [true; 3]
            .into_iter()
            .chain([true, false, true])
            .chain([false; 70])
            .chain([true; 65])
            .collect();
        assert_eq!(b.iter().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn hybrid_runs_and_groups() {
        // A run of 5 × key 2, then one group of 8 packed keys (width 2), of which 6
        // are read; table: key 1 and 2 TRUE.
        let mut data = vec![5 << 1, 2];
        data.push((1 << 1) | 1);
        data.extend(pack(&[0, 1, 2, 3, 1, 0, 0, 0], 2));
        let mut bits = Bits::with_capacity(0);
        let mut scratch = Vec::new();
        let table = [0, 1, 1, 0];
        Hybrid::new(&data, 2)
            .unwrap()
            .lookup(11, &table, &mut bits, &mut scratch)
            .unwrap();
        let got: Vec<bool> = bits.finish().iter().collect();
        let t = true;
        let f = false;
        assert_eq!(got, [t, t, t, t, t, f, t, t, f, t, f]);
        // A key past the table, or data that ends early, gives up.
        let mut bits = Bits::with_capacity(0);
        assert!(Hybrid::new(&data, 2)
            .unwrap()
            .lookup(11, &table[..3], &mut bits, &mut scratch)
            .is_none());
        let mut bits = Bits::with_capacity(0);
        assert!(Hybrid::new(&data, 2)
            .unwrap()
            .lookup(20, &table, &mut bits, &mut scratch)
            .is_none());
    }
}
