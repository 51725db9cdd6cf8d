//! Columns of a row group read at the rows the keyed conjuncts chose
//! ([`keys`](super::keys)) only, without the parquet crate's reader: the output
//! columns, and the columns of a keyed group on several columns evaluated after
//! groups that kept few rows.
//!
//! Handed a row selection, the reader alternates skipping and reading on every output
//! column for every run of selected rows. At TPC-H Q6's selectivity (2 % of the rows,
//! runs of about one row among fifty rejected ones) that is two calls a column a
//! selected row, each with its own set-up: `perf` of the Q6 rows written as CSV put
//! about 40 % of the time in `skip_records` and `read_records` besides the pages'
//! decompression (docs/performance-notes.md).
//!
//! Here each output column's pages are walked once, in order (the parquet crate's
//! page reader reads and decompresses them, [`pages`](super::pages) says what each
//! holds), and each selected row's value is looked up where it lies:
//!
//! - a page's definition levels are unpacked into bits with the count of set bits
//!   before each word, so a row's value index is one `popcount` away;
//! - a dictionary-encoded page's runs of keys are listed once; the key of value `i`
//!   is then the run's repeated key, or the `width` bits at bit `i × width` of its
//!   bit-packed groups, and the value is the dictionary's;
//! - a PLAIN page (what writers fall back to when the dictionary grows too big) holds
//!   value `i` of a fixed width at byte `i × width` (big-endian decimals are widened
//!   to 8 bytes as each is read, a dictionary's as it is read); byte arrays are
//!   walked length by length.
//!
//! What is read this way: flat columns (no repetition, at most one level of nulls)
//! of the layouts the keyed conjuncts read ([`Layout`]), whose pages are dictionary-
//! encoded or PLAIN. For anything else (another encoding, a key past the dictionary,
//! text that is not UTF-8, a page shorter than it claims) [`RowGroupGather::batch`]
//! returns `None` and the scan reads the rest of the row group with the reader, which
//! reports what is wrong with the file.

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{ArrayRef, BooleanBufferBuilder, RecordBatch, RecordBatchOptions};
use arrow::buffer::{MutableBuffer, NullBuffer, OffsetBuffer};
use arrow::datatypes::{FieldRef, Schema, SchemaRef};
use bytes::Bytes;
use parquet::basic::Encoding;
use parquet::column::page::PageReader;
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};

use super::pages::{
    byte_array, byte_array_at, chunk, defined_rows, fixed_array, page_data, plain_fixed, widened,
    Hybrid, Layout, PageData, Run,
};
use super::single_leaf;
use super::source::FileBytes;

/// Reading some root columns of one row group at selected rows, batch by batch.
pub(crate) struct RowGroupGather {
    schema: SchemaRef,
    columns: Vec<ColumnGather>,
}

impl RowGroupGather {
    /// Reads root columns `columns` of row group `rg` of a file (`meta`, Arrow schema
    /// `schema`, bytes `source`); `None` when one of them is not of a layout read
    /// here, or its chunk lists an encoding not read here.
    pub(crate) fn new(
        meta: &ParquetMetaData,
        schema: &Schema,
        rg: usize,
        columns: &[usize],
        source: &Arc<FileBytes>,
    ) -> Option<RowGroupGather> {
        let group = meta.row_groups().get(rg)?;
        let rows = usize::try_from(group.num_rows()).ok()?;
        let mut fields = Vec::with_capacity(columns.len());
        let mut gathers = Vec::with_capacity(columns.len());
        for &column in columns {
            let leaf = single_leaf(meta, column)?;
            if !known_encodings(group.columns().get(leaf)?) {
                return None;
            }
            let (pages, _, layout, nullable) = chunk(meta, group, schema, column, rows, source)?;
            let field = schema.fields().get(column)?.clone();
            fields.push(field.clone());
            gathers.push(ColumnGather {
                pages: Box::new(pages),
                field,
                layout,
                nullable,
                dictionary: None,
                page: None,
                next_row: 0,
            });
        }
        Some(RowGroupGather {
            schema: Arc::new(Schema::new(fields)),
            columns: gathers,
        })
    }

    /// The columns at `rows` (row numbers in the row group, ascending, each past
    /// those of the batches before), as the reader would read them; `None` when a
    /// page is not as expected (then nothing more can be read here).
    pub(crate) fn batch(&mut self, rows: &[u32]) -> Option<RecordBatch> {
        #[cfg(test)]
        {
            let mut hook = FAIL_AFTER.lock().unwrap();
            if let Some((column, left)) = hook.as_mut() {
                if self.schema.field_with_name(column).is_ok() {
                    match left.checked_sub(1) {
                        Some(fewer) => *left = fewer,
                        None => {
                            *hook = None;
                            return None;
                        }
                    }
                }
            }
        }
        let columns = self
            .columns
            .iter_mut()
            .map(|c| c.take(rows))
            .collect::<Option<Vec<_>>>()?;
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows.len())),
        )
        .ok()
    }
}

/// Whether the encodings `chunk`'s metadata lists are all read here.
fn known_encodings(chunk: &ColumnChunkMetaData) -> bool {
    // `BIT_PACKED` is deprecated for pages, not for the footer's lists.
    #[allow(deprecated)]
    chunk.encodings().all(|e| {
        matches!(
            e,
            Encoding::PLAIN
                | Encoding::PLAIN_DICTIONARY
                | Encoding::RLE_DICTIONARY
                | Encoding::RLE
                // Listed by parquet-mr (Spark, Hive) for the levels of columns
                // without any; a page that uses it is refused.
                | Encoding::BIT_PACKED
        )
    })
}

/// Tests: the first gather that reads a column of this name to reach the count
/// fails (what a page not as expected does) after this many more batches, to check that the scan then
/// reads the rest of the row group right.
#[cfg(test)]
pub(crate) static FAIL_AFTER: std::sync::Mutex<Option<(&'static str, usize)>> =
    std::sync::Mutex::new(None);

/// One column chunk, read page by page as the rows asked for reach them.
struct ColumnGather {
    pages: Box<dyn PageReader>,
    field: FieldRef,
    layout: Layout,
    nullable: bool,
    dictionary: Option<Dictionary>,
    /// The data page holding the rows last asked for.
    page: Option<DataPage>,
    /// The first row of the next data page.
    next_row: usize,
}

impl ColumnGather {
    /// The values at `rows` (ascending, past those asked for before).
    fn take(&mut self, rows: &[u32]) -> Option<ArrayRef> {
        let mut out = Output::new(self.layout, rows.len(), self.nullable);
        let mut rest = rows;
        while let Some(&row) = rest.first() {
            let row = row as usize;
            while self.page.as_ref().is_none_or(|p| row >= p.end) {
                self.next_page(row)?;
            }
            let page = self.page.as_mut()?;
            // The rows asked for that this page holds.
            let here = rest.partition_point(|&r| (r as usize) < page.end);
            let (these, later) = rest.split_at(here);
            rest = later;
            if page.push_fixed_keys(these, self.dictionary.as_ref(), &mut out)? {
                continue;
            }
            for &row in these {
                let at = (row as usize).checked_sub(page.first)?;
                match page.value_index(at)? {
                    None => out.push_null(),
                    Some(v) => page.push_value(v, self.dictionary.as_ref(), &mut out)?,
                }
            }
        }
        out.finish(&self.field)
    }

    /// Reads pages up to the next data page that can hold `row`, skipping those that
    /// end before it undecompressed, as the reader does (their headers count their
    /// rows: in a flat column, one level a row); `None`: no more pages, or one not as
    /// expected.
    fn next_page(&mut self, row: usize) -> Option<()> {
        loop {
            let next = self.pages.peek_next_page().ok()??;
            if let (false, Some(rows)) = (next.is_dict, next.num_rows.or(next.num_levels)) {
                let end = self.next_row.checked_add(rows)?;
                if end <= row {
                    self.pages.skip_next_page().ok()?;
                    self.next_row = end;
                    continue;
                }
            }
            let page = self.pages.get_next_page().ok()??;
            let (levels, values, rows, keyed) = match page_data(&page, self.nullable)? {
                PageData::Dictionary(values, count) if self.dictionary.is_none() => {
                    let buf = page.buffer();
                    self.dictionary =
                        Some(Dictionary::new(buf.slice_ref(values), count, self.layout)?);
                    continue;
                }
                PageData::Dictionary(..) => return None,
                PageData::Keys(levels, values, rows) => (levels, values, rows, true),
                PageData::Plain(levels, values, rows) => (levels, values, rows, false),
            };
            let buf = page.buffer();
            let present = match levels {
                Some(levels) => Some(Present::new(levels, rows)?),
                None => None,
            };
            let count = present.as_ref().map_or(rows, |p| p.count);
            let values = buf.slice_ref(values);
            let values = match keyed {
                true => Values::Keys(Keys::new(values, count, self.dictionary.as_ref()?)?),
                false => {
                    // Fixed-width values: the page must hold all it claims, as the
                    // reader checks (byte arrays are checked as they are walked).
                    if let Some(width) = self.layout.stored_width() {
                        if values.len() < count.checked_mul(width)? {
                            return None;
                        }
                    }
                    Values::Plain {
                        data: values,
                        layout: self.layout,
                        next: 0,
                        at: 0,
                    }
                }
            };
            let first = self.next_row;
            self.next_row = first.checked_add(rows)?;
            self.page = Some(DataPage {
                first,
                end: self.next_row,
                present,
                values,
            });
            return Some(());
        }
    }
}

/// A dictionary page's values.
enum Dictionary {
    /// `count` values of `width` bytes.
    Fixed {
        data: Bytes,
        width: usize,
        count: usize,
    },
    /// Byte arrays: where each lies in `data`.
    Bytes {
        data: Bytes,
        ranges: Vec<(usize, usize)>,
    },
}

impl Dictionary {
    fn new(data: Bytes, count: usize, layout: Layout) -> Option<Dictionary> {
        match layout.width() {
            Some(width) => {
                let data = match plain_fixed(&data, count, layout)? {
                    Cow::Borrowed(_) => data,
                    Cow::Owned(widened) => Bytes::from(widened),
                };
                Some(Dictionary::Fixed { data, width, count })
            }
            None => {
                // Each value takes at least its 4-byte length: a count the page
                // cannot hold is not reserved for.
                let mut ranges = Vec::with_capacity(count.min(data.len() / 4));
                let mut at = 0usize;
                for _ in 0..count {
                    let (start, end) = byte_array_at(&data, at)?;
                    ranges.push((start, end));
                    at = end;
                }
                Some(Dictionary::Bytes { data, ranges })
            }
        }
    }

    /// The bytes of value `key`.
    fn value(&self, key: usize) -> Option<&[u8]> {
        match self {
            Dictionary::Fixed { data, width, count } => match key < *count {
                true => data.get(key * width..key * width + width),
                false => None,
            },
            Dictionary::Bytes { data, ranges } => {
                let &(start, end) = ranges.get(key)?;
                data.get(start..end)
            }
        }
    }

    /// How many values it has.
    fn len(&self) -> usize {
        match self {
            Dictionary::Fixed { count, .. } => *count,
            Dictionary::Bytes { ranges, .. } => ranges.len(),
        }
    }
}

/// The data page being read.
struct DataPage {
    /// Its first row in the row group, and the row past its last.
    first: usize,
    end: usize,
    /// Which of its rows are not NULL (a column with a level of nulls).
    present: Option<Present>,
    values: Values,
}

impl DataPage {
    /// The index among the page's values of its row `at` (`Some(None)`: NULL).
    fn value_index(&self, at: usize) -> Option<Option<usize>> {
        match &self.present {
            None => Some(Some(at)),
            Some(present) => present.index(at),
        }
    }

    /// Appends the values at `rows` (all of this page, ascending, past those appended
    /// before) to `out` in one tight loop when they are the common case: keys into a
    /// dictionary of 4- or 8-byte values, and no NULLs. `Some(false)`: not that case,
    /// nothing appended; `None`: a key past the dictionary.
    fn push_fixed_keys(
        &mut self,
        rows: &[u32],
        dictionary: Option<&Dictionary>,
        out: &mut Output,
    ) -> Option<bool> {
        let (Values::Keys(keys), None, Some(Dictionary::Fixed { data, width, count })) =
            (&mut self.values, &self.present, dictionary)
        else {
            return Some(false);
        };
        if out.width != Some(*width) {
            return Some(false);
        }
        let values = data.get(..count * width)?;
        match width {
            4 => keys.push_values::<4>(rows, self.first, values, out)?,
            8 => keys.push_values::<8>(rows, self.first, values, out)?,
            _ => return Some(false),
        }
        if let Some(valid) = &mut out.valid {
            valid.append_n(rows.len(), true);
        }
        Some(true)
    }

    /// Appends value `v` (past those appended before) to `out`.
    fn push_value(
        &mut self,
        v: usize,
        dictionary: Option<&Dictionary>,
        out: &mut Output,
    ) -> Option<()> {
        match &mut self.values {
            Values::Keys(keys) => {
                let key = keys.key(v)?;
                out.push(dictionary?.value(key as usize)?)
            }
            Values::Plain {
                data,
                layout,
                next,
                at,
            } => match *layout {
                Layout::Fixed(width) => {
                    let start = v.checked_mul(width)?;
                    out.push(data.get(start..start.checked_add(width)?)?)
                }
                // Widened here, value by value: most of a page's values are not
                // asked for.
                Layout::BigEndian(width) => {
                    let start = v.checked_mul(width)?;
                    let value = data.get(start..start.checked_add(width)?)?;
                    out.push(&widened(value).to_le_bytes())
                }
                Layout::Bytes => {
                    // Byte arrays: walk the lengths up to value `v`.
                    if v < *next {
                        return None;
                    }
                    while *next < v {
                        *at = byte_array_at(data, *at)?.1;
                        *next += 1;
                    }
                    let (start, end) = byte_array_at(data, *at)?;
                    *at = end;
                    *next += 1;
                    out.push(&data[start..end])
                }
            },
        }
    }
}

/// The values of a data page.
enum Values {
    Keys(Keys),
    /// PLAIN values laid out as `layout`; for byte arrays, the next value's index
    /// and where it starts.
    Plain {
        data: Bytes,
        layout: Layout,
        next: usize,
        at: usize,
    },
}

/// A page's keys: its runs, listed once, and the run the last key came from.
struct Keys {
    data: Bytes,
    width: u32,
    runs: Vec<KeyRun>,
    cursor: usize,
}

/// A run of keys: values `first..end` of the page, one key repeated or bit-packed
/// from byte `at` of the keys' data.
struct KeyRun {
    first: usize,
    end: usize,
    repeated: Option<u32>,
    at: usize,
}

impl Keys {
    /// The `count` keys of a page (`data`: their width in a byte, then the runs),
    /// into `dictionary`.
    fn new(data: Bytes, count: usize, dictionary: &Dictionary) -> Option<Keys> {
        let (&width, runs_data) = data.split_first().unwrap_or((&0, &[]));
        let mut hybrid = Hybrid::new(runs_data, width)?;
        let base = data.as_ptr() as usize;
        let mut runs = Vec::new();
        let mut first = 0usize;
        while first < count {
            let run = hybrid.next_run(count - first)?;
            let (n, repeated, at) = match run {
                Run::Repeat(key, n) => {
                    // Checked once here rather than at every row.
                    if key >= dictionary.len() {
                        return None;
                    }
                    (n, Some(u32::try_from(key).ok()?), 0)
                }
                Run::Packed(packed, n) => (n, None, packed.as_ptr() as usize - base),
            };
            runs.push(KeyRun {
                first,
                end: first + n,
                repeated,
                at,
            });
            first += n;
        }
        Some(Keys {
            data,
            width: u32::from(width),
            runs,
            cursor: 0,
        })
    }

    /// Appends to `out` the `W`-byte value in `values` (the dictionary's) of the key
    /// of each of the page's rows `rows` (ascending, at or past the run of the last
    /// key asked for; the page's first row is `first`, and it has no NULLs). `None`:
    /// a key past the dictionary, or a row past the keys.
    fn push_values<const W: usize>(
        &mut self,
        rows: &[u32],
        first: usize,
        values: &[u8],
        out: &mut Output,
    ) -> Option<()> {
        out.values.reserve(rows.len() * W);
        for &row in rows {
            let key = self.key((row as usize).checked_sub(first)?)? as usize;
            let value: [u8; W] = values.get(key * W..key * W + W)?.try_into().ok()?;
            out.values.extend_from_slice(&value);
        }
        Some(())
    }

    /// The key of value `v` (at or past the run of the last one asked for).
    fn key(&mut self, v: usize) -> Option<u32> {
        while self.runs.get(self.cursor)?.end <= v {
            self.cursor += 1;
        }
        let run = &self.runs[self.cursor];
        if let Some(key) = run.repeated {
            return Some(key);
        }
        let bit = (v.checked_sub(run.first)?) * self.width as usize;
        let at = run.at + bit / 8;
        // Up to 32 bits starting anywhere in a byte: 5 bytes at most, read as 8
        // (padded with zeros at the end of the page).
        let window = match self.data.get(at..at.saturating_add(8)) {
            Some(bytes) => u64::from_le_bytes(bytes.try_into().expect("8 bytes")),
            None => {
                let mut window = [0u8; 8];
                let available = self.data.get(at..)?;
                window[..available.len()].copy_from_slice(available);
                u64::from_le_bytes(window)
            }
        };
        let mask = (1u64 << self.width) - 1;
        Some(((window >> (bit % 8)) & mask) as u32)
    }
}

/// Which rows of a page are not NULL, and how many set bits precede each word.
struct Present {
    words: Vec<u64>,
    before: Vec<u32>,
    count: usize,
}

impl Present {
    /// From `rows` definition levels (RLE/bit-packed, width 1).
    fn new(levels: &[u8], rows: usize) -> Option<Present> {
        let words = defined_rows(levels, rows, &mut Vec::new())?.into_words();
        let mut before = Vec::with_capacity(words.len());
        let mut count = 0u32;
        for w in &words {
            before.push(count);
            count += w.count_ones();
        }
        Some(Present {
            words,
            before,
            count: count as usize,
        })
    }

    /// The index among the page's values of row `at` (`Some(None)`: NULL).
    fn index(&self, at: usize) -> Option<Option<usize>> {
        let word = *self.words.get(at / 64)?;
        let bit = at % 64;
        Some(match (word >> bit) & 1 {
            0 => None,
            _ => {
                let below = (word & ((1u64 << bit) - 1)).count_ones();
                Some((self.before[at / 64] + below) as usize)
            }
        })
    }
}

/// The values of one column of a batch, as they are gathered.
struct Output {
    /// The width of fixed-width values (`None`: byte arrays).
    width: Option<usize>,
    values: MutableBuffer,
    offsets: Vec<i32>,
    valid: Option<BooleanBufferBuilder>,
}

impl Output {
    fn new(layout: Layout, rows: usize, nullable: bool) -> Output {
        let (width, values, offsets) = match layout.width() {
            Some(width) => (Some(width), MutableBuffer::new(rows * width), Vec::new()),
            None => {
                let mut offsets = Vec::with_capacity(rows + 1);
                offsets.push(0);
                (None, MutableBuffer::new(0), offsets)
            }
        };
        Output {
            width,
            values,
            offsets,
            valid: nullable.then(|| BooleanBufferBuilder::new(rows)),
        }
    }

    /// Appends a value (`None`: the byte arrays exceed 2 GiB).
    fn push(&mut self, value: &[u8]) -> Option<()> {
        // The common widths as one store, not a copy of a length known at run time.
        match (self.width, value.len()) {
            (Some(_), 8) => self.values.push(u64::from_ne_bytes(value.try_into().ok()?)),
            (Some(_), 4) => self.values.push(u32::from_ne_bytes(value.try_into().ok()?)),
            (Some(_), _) => self.values.extend_from_slice(value),
            (None, _) => {
                self.values.extend_from_slice(value);
                self.offsets.push(i32::try_from(self.values.len()).ok()?);
            }
        }
        if let Some(valid) = &mut self.valid {
            valid.append(true);
        }
        Some(())
    }

    fn push_null(&mut self) {
        match self.width {
            Some(width) => self.values.extend_zeros(width),
            None => self
                .offsets
                .push(*self.offsets.last().expect("a first offset")),
        }
        if let Some(valid) = &mut self.valid {
            valid.append(false);
        }
    }

    /// The values as an array of `field`'s type (`None`: text that is not UTF-8).
    fn finish(mut self, field: &FieldRef) -> Option<ArrayRef> {
        let nulls = self
            .valid
            .as_mut()
            .map(|v| NullBuffer::new(v.finish()))
            .filter(|n| n.null_count() > 0);
        let values: arrow::buffer::Buffer = self.values.into();
        match self.width {
            Some(width) => fixed_array(field, values.len() / width, values, nulls),
            None => byte_array(field, OffsetBuffer::new(self.offsets.into()), values, nulls),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{
        BinaryArray, BooleanArray, Date32Array, Decimal64Array, Float32Array, Float64Array,
        Int32Array, Int64Array, LargeStringArray, StringArray,
    };
    use arrow::compute::{concat_batches, filter_record_batch};
    use arrow::datatypes::{DataType, Field};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
    use parquet::arrow::ArrowWriter;
    use parquet::basic::Compression;
    use parquet::file::properties::{WriterProperties, WriterVersion};

    /// A batch of every layout read here, nullable and not, with runs (sorted,
    /// repeated) and scattered values, NULLs, text beyond ASCII, and values long
    /// enough to overflow a small dictionary.
    fn sample(rows: usize) -> RecordBatch {
        let schema = Arc::new(Schema::new(vec![
            Field::new("i32", DataType::Int32, true),
            Field::new("i64", DataType::Int64, false),
            Field::new("f32", DataType::Float32, false),
            Field::new("f64", DataType::Float64, true),
            Field::new("date", DataType::Date32, true),
            Field::new("dec", DataType::Decimal64(12, 2), false),
            Field::new("text", DataType::Utf8, true),
            Field::new("long", DataType::LargeUtf8, false),
            Field::new("blob", DataType::Binary, true),
        ]));
        let r = |i: usize| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
        let words = ["", "a", "héllo", "日本語", "x".repeat(40).leak() as &str];
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int32Array::from_iter(
                (0..rows).map(|i| (i % 7 != 3).then_some((r(i) % 50) as i32 - 25)),
            )),
            Arc::new(Int64Array::from_iter_values(
                (0..rows).map(|i| (i / 10) as i64),
            )),
            Arc::new(Float32Array::from_iter_values(
                (0..rows).map(|i| (r(i) % 9) as f32 / 4.0),
            )),
            Arc::new(Float64Array::from_iter(
                (0..rows).map(|i| (r(i) % 5 != 0).then_some(r(i) as f64 / 3.0)),
            )),
            Arc::new(Date32Array::from_iter(
                (0..rows).map(|i| (i % 100 < 90).then_some(9000 + (r(i) % 2500) as i32)),
            )),
            Arc::new(
                Decimal64Array::from_iter_values((0..rows).map(|i| (r(i) % 10_000) as i64))
                    .with_precision_and_scale(12, 2)
                    .unwrap(),
            ),
            Arc::new(StringArray::from_iter((0..rows).map(|i| {
                (i % 11 != 0).then(|| format!("{}{}", words[i % 5], r(i) % 300))
            }))),
            Arc::new(LargeStringArray::from_iter_values(
                (0..rows).map(|i| words[(r(i) % 5) as usize]),
            )),
            Arc::new(BinaryArray::from_iter((0..rows).map(|i| {
                (i % 13 != 0).then(|| (r(i) as u32).to_le_bytes()[..(i % 4)].to_vec())
            }))),
        ];
        RecordBatch::try_new(schema, columns).unwrap()
    }

    /// `batch` written as Parquet with `props`, its metadata, and its bytes.
    fn written(batch: &RecordBatch, props: WriterProperties) -> (ArrowReaderMetadata, Bytes) {
        let mut out = Vec::new();
        let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
        writer.write(batch).unwrap();
        writer.close().unwrap();
        let bytes = Bytes::from(out);
        let meta = ArrowReaderMetadata::load(&bytes, ArrowReaderOptions::new()).unwrap();
        (meta, bytes)
    }

    /// The layouts writers produce: dictionaries, PLAIN, a dictionary given up on in
    /// the middle of a chunk, many small pages, data pages of version 2, no
    /// compression.
    fn layouts() -> Vec<(&'static str, WriterProperties)> {
        let base = || {
            WriterProperties::builder()
                .set_max_row_group_row_count(Some(3_000))
                .set_compression(Compression::SNAPPY)
        };
        vec![
            ("dictionary", base().build()),
            ("plain", base().set_dictionary_enabled(false).build()),
            (
                "dictionary given up",
                base().set_dictionary_page_size_limit(256).build(),
            ),
            (
                "small pages",
                base()
                    .set_data_page_row_count_limit(64)
                    .set_write_batch_size(64)
                    .build(),
            ),
            (
                "version 2",
                base()
                    .set_writer_version(WriterVersion::PARQUET_2_0)
                    .set_data_page_row_count_limit(500)
                    .set_write_batch_size(100)
                    .build(),
            ),
            (
                "uncompressed",
                base().set_compression(Compression::UNCOMPRESSED).build(),
            ),
        ]
    }

    /// Every layout, every column, at selections from none to every row, in batches
    /// of several sizes: the same arrays as the reader's rows filtered.
    #[test]
    fn gathers_what_the_reader_reads() {
        let batch = sample(7_000);
        let columns: Vec<usize> = (0..batch.num_columns()).collect();
        for (name, props) in layouts() {
            let (meta, bytes) = written(&batch, props);
            let source = Arc::new(FileBytes::Mapped(bytes.clone()));
            for rg in 0..meta.metadata().num_row_groups() {
                let whole =
                    ParquetRecordBatchReaderBuilder::new_with_metadata(bytes.clone(), meta.clone())
                        .with_row_groups(vec![rg])
                        .with_batch_size(100_000)
                        .build()
                        .unwrap()
                        .next()
                        .unwrap()
                        .unwrap();
                let rows = whole.num_rows();
                for (every, batch_rows) in [(1000, 3), (37, 64), (5, 1), (3, 500), (1, 256)] {
                    let keep =
                        BooleanArray::from_iter((0..rows).map(|i| Some((i * 7 + rg) % every == 0)));
                    let expected = filter_record_batch(&whole, &keep).unwrap();
                    let chosen: Vec<u32> = (0..rows as u32)
                        .filter(|&i| keep.value(i as usize))
                        .collect();
                    let mut gather =
                        RowGroupGather::new(meta.metadata(), meta.schema(), rg, &columns, &source)
                            .unwrap_or_else(|| panic!("{name}: a layout read here"));
                    let batches: Vec<RecordBatch> = chosen
                        .chunks(batch_rows)
                        .map(|rows| {
                            gather
                                .batch(rows)
                                .unwrap_or_else(|| panic!("{name}, row group {rg}"))
                        })
                        .collect();
                    let got = concat_batches(&expected.schema(), &batches).unwrap();
                    assert_eq!(got, expected, "{name}, row group {rg}, 1 in {every}");
                }
            }
        }
    }

    /// Corrupt bytes anywhere in the column chunks whose page headers pass the
    /// scan's check give values, or `None`; never a panic (the scan then hands the
    /// row group to the reader, which reports it).
    #[test]
    fn corrupt_pages_give_none_or_values_but_no_panic() {
        let batch = sample(2_000);
        let columns: Vec<usize> = (0..batch.num_columns()).collect();
        let (mut read, mut refused) = (0, 0);
        for (name, props) in layouts() {
            let (meta, bytes) = written(&batch, props);
            let chunk = meta.metadata().row_group(0).column(0);
            let start = chunk.byte_range().0 as usize;
            let end = meta.metadata().row_group(0).column(8).byte_range();
            let end = (end.0 + end.1) as usize;
            for (k, at) in (start..end).step_by(97).enumerate() {
                let mut damaged = bytes.to_vec();
                damaged[at] ^= 1 << (k % 8);
                // The scan checks the page headers first (the parquet crate's page
                // reader panics on some).
                let every = parquet::arrow::ProjectionMask::all();
                let headers = super::super::footer::check_page_headers(
                    meta.metadata(),
                    0,
                    &every,
                    &mut |at, buf: &mut [u8]| {
                        let at = at as usize;
                        match damaged.get(at..at + buf.len()) {
                            Some(bytes) => {
                                buf.copy_from_slice(bytes);
                                Ok(())
                            }
                            None => Err(std::io::ErrorKind::UnexpectedEof.into()),
                        }
                    },
                );
                if headers.is_err() {
                    continue;
                }
                let source = Arc::new(FileBytes::Mapped(Bytes::from(damaged)));
                let outcome = std::panic::catch_unwind(|| {
                    let mut gather =
                        RowGroupGather::new(meta.metadata(), meta.schema(), 0, &columns, &source)?;
                    let rows: Vec<u32> = (0..2_000).step_by(3).collect();
                    gather.batch(&rows).map(|b| b.num_rows())
                });
                match outcome {
                    Ok(None) => refused += 1,
                    Ok(Some(667)) => read += 1,
                    other => panic!("{name}, byte {at}: {other:?}"),
                }
            }
        }
        // Most damage is in page data, not headers: both outcomes are exercised.
        assert!(
            read > 100 && refused > 100,
            "{read} read, {refused} refused"
        );
    }

    /// A dictionary page claiming more values than its bytes can hold is refused
    /// before anything is reserved for them (a forged count of 2³¹ byte arrays would
    /// ask for 34 GB, and a failed allocation aborts the process).
    #[test]
    fn counts_a_page_cannot_hold_are_refused_before_allocating() {
        let data = Bytes::from_static(&[1, 0, 0, 0, b'a']);
        for layout in [Layout::Bytes, Layout::Fixed(4), Layout::Fixed(8)] {
            assert!(Dictionary::new(data.clone(), 1 << 40, layout).is_none());
        }
        let one = Dictionary::new(data, 1, Layout::Bytes).unwrap();
        assert_eq!(one.value(0), Some(&b"a"[..]));
        assert_eq!(one.value(1), None);
    }

    /// Columns of other layouts are not read here.
    #[test]
    fn other_layouts_are_left_to_the_reader() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("flag", DataType::Boolean, false),
            Field::new("small", DataType::Int8, false),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(BooleanArray::from(vec![true, false])),
                Arc::new(arrow::array::Int8Array::from(vec![1, 2])),
            ],
        )
        .unwrap();
        let (meta, bytes) = written(&batch, WriterProperties::builder().build());
        let source = Arc::new(FileBytes::Mapped(bytes));
        for column in [0, 1] {
            assert!(
                RowGroupGather::new(meta.metadata(), meta.schema(), 0, &[column], &source)
                    .is_none()
            );
        }
    }
}
