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
//!   each looks its bit up, keys of up to 6 bits two to six at a lookup ([`chunk_mask`];
//!   the keys are decoded by [`pages`](super::pages));
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
//! `Decimal64`, a `FIXED_LEN_BYTE_ARRAY` decimal of up to 8 bytes read as a
//! `Decimal64` (its dictionary widened once), `FLOAT`, `DOUBLE`, or (in single-column groups) `BYTE_ARRAY` read as
//! a string or BLOB layout ([`keyed_layout`]). Anything else met on the way (a page
//! of another encoding, a key past the dictionary, text that is not UTF-8, a
//! truncated page) gives up on the row group ([`row_group_mask`] returns `None`) and
//! the scan reads it through the reader, which reports what is wrong with the file.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow::datatypes::{Field, Schema};
use parquet::column::page::PageReader;
use parquet::file::metadata::ParquetMetaData;

use super::gather::RowGroupGather;
use super::pages::Layout;
use super::pages::{
    chunk, defined_rows, dictionary_array, fixed_array, padded, page_data, plain_fixed,
    value_layout, Bits, Hybrid, PageData, FAST_WIDTH,
};
use super::source::FileBytes;
use super::{dictionary_encoded, single_leaf, Dataset, JitPredicate};

/// How root column `column` is read by its keys in the first file of `dataset`,
/// when in every file it is one flat leaf (no repetition, at most one level of
/// nulls) of a type read bit for bit ([`Layout`]) into values of the same width (a
/// DECIMAL stored as `INT64` in one file and as `FIXED_LEN_BYTE_ARRAY` in another is
/// `Decimal64` in both: each file's chunks are decoded by their own layout), and
/// every data page of every chunk dictionary-encoded (as the chunks' page encoding
/// statistics say). `None`: it is not.
pub(crate) fn keyed_layout(dataset: &Dataset, column: usize) -> Option<Layout> {
    let mut layouts = dataset.files().iter().map(|f| {
        let meta = f.metadata.metadata();
        let leaf = single_leaf(meta, column)?;
        let descr = meta.file_metadata().schema_descr().column(leaf);
        let t = f.metadata.schema().field(column).data_type();
        let layout = value_layout(t, &descr)?;
        let flat = descr.max_rep_level() == 0 && descr.max_def_level() <= 1;
        (flat && dictionary_encoded(meta, leaf)).then_some(layout)
    });
    let first = layouts.next()??;
    layouts
        .all(|l| l.is_some_and(|l| l.width() == first.width()))
        .then_some(first)
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
                    arrays.push(chunk_values(pages, field, layout, nullable, rows)?);
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
            (bits.len() <= rows).then_some(())
        }
        PageData::Plain(..) => None,
    });
    if skipped {
        return Some(Decided::Skipped);
    }
    (read? == rows && bits.len() == rows).then(|| Decided::Rows(bits.finish()))
}

/// What [`chunk_mask`] decided.
enum Decided {
    /// One bit a row: set where the conjuncts are TRUE.
    Rows(BooleanBuffer),
    /// Nothing: the dictionary's answers kept more than the group may keep.
    Skipped,
}

/// The values of a column chunk of fixed-width values (`pages`, `rows` rows of
/// `field`, laid out as `layout`, `nullable` with one level of nulls), as the
/// reader would give them: each key's dictionary value. `None` for byte arrays.
fn chunk_values(
    pages: impl PageReader,
    field: &Field,
    layout: Layout,
    nullable: bool,
    rows: usize,
) -> Option<ArrayRef> {
    match layout.width()? {
        4 => typed_values::<u32>(pages, field, layout, nullable, rows),
        8 => typed_values::<u64>(pages, field, layout, nullable, rows),
        _ => None,
    }
}

/// [`chunk_values`] for values of `T`'s width.
fn typed_values<T: Copy + Default + FromLe>(
    pages: impl PageReader,
    field: &Field,
    layout: Layout,
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
            let bytes = plain_fixed(buf, count, layout)?;
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
                    let present = defined_rows(levels, n, &mut scratch)?.finish();
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
    let present = defined_rows(levels, rows, scratch)?.finish();
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
