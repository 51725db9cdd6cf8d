//! Conjuncts on one dictionary-encoded fixed-width column, decided on the column's
//! dictionary and its keys, without the parquet crate's reader.
//!
//! A Parquet writer stores a column with few distinct values (dates, quantities,
//! discounts, codes) as a dictionary page of the distinct values and data pages of
//! keys into it, bit-packed or run-length encoded. To hand over the column, the
//! reader looks every key up and copies its value (`RleDecoder::get_batch_with_dict`:
//! about a third of the time of TPC-H Q6 counted on a file), and a predicate then
//! compares every value. Here a conjunct that reads that column alone is evaluated
//! once per dictionary value instead, giving one bit per value; the keys are unpacked
//! and each looks its bit up. The bits of the row group's rows are the conjunct's
//! mask; the masks of several such columns are ANDed, and the scan hands the result
//! to the reader as its row selection (or counts it, when nothing else is read).
//!
//! Only what can be read bit for bit is read this way: a flat column (no repetition,
//! at most one level of nulls) of `INT32` read as INTEGER, DATE or a `Decimal32`,
//! `INT64` read as BIGINT or a `Decimal64`, `FLOAT` or `DOUBLE`, whose every data
//! page is dictionary-encoded ([`keyed_column`]). Anything else met on the way (a
//! page of another encoding, a key past the dictionary, a truncated page) gives up on
//! the row group ([`row_group_mask`] returns `None`) and the scan reads it through
//! the reader, which reports what is wrong with the file.

use std::sync::Arc;

use arrow::array::{make_array, Array, ArrayData, BooleanArray, RecordBatch};
use arrow::buffer::{BooleanBuffer, Buffer};
use arrow::datatypes::{DataType, Field, Schema};
use bytes::{Buf, Bytes};
use parquet::basic::{Encoding, Type as Physical};
use parquet::column::page::{Page, PageReader};
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::reader::{ChunkReader, Length};
use parquet::file::serialized_reader::SerializedPageReader;

use super::{Dataset, JitPredicate};

/// The width in bytes of a value of a column whose Arrow type `t` the reader produces
/// from its Parquet physical type `physical` bit for bit; `None` for any other pair.
fn bitwise_width(t: &DataType, physical: Physical) -> Option<usize> {
    match (t, physical) {
        (DataType::Int32 | DataType::Date32 | DataType::Decimal32(..), Physical::INT32) => Some(4),
        (DataType::Int64 | DataType::Decimal64(..), Physical::INT64) => Some(8),
        (DataType::Float32, Physical::FLOAT) => Some(4),
        (DataType::Float64, Physical::DOUBLE) => Some(8),
        _ => None,
    }
}

/// The single leaf of root column `column`, if it has one.
fn single_leaf(meta: &ParquetMetaData, column: usize) -> Option<usize> {
    let descr = meta.file_metadata().schema_descr();
    let mut leaves = (0..descr.num_columns()).filter(|&l| descr.get_column_root_idx(l) == column);
    match (leaves.next(), leaves.next()) {
        (Some(leaf), None) => Some(leaf),
        _ => None,
    }
}

/// Whether root column `column` can be read by its keys in every file of `dataset`:
/// one flat leaf (no repetition, at most one level of nulls), a type the reader
/// produces bit for bit from the physical values, and every data page of every chunk
/// dictionary-encoded (as the chunks' page encoding statistics say).
pub(crate) fn keyed_column(dataset: &Dataset, column: usize) -> bool {
    dataset.files().iter().all(|f| {
        let meta = f.metadata.metadata();
        let Some(leaf) = single_leaf(meta, column) else {
            return false;
        };
        let descr = meta.file_metadata().schema_descr().column(leaf);
        let t = f.metadata.schema().field(column).data_type();
        bitwise_width(t, descr.physical_type()).is_some()
            && descr.max_rep_level() == 0
            && descr.max_def_level() <= 1
            && meta.row_groups().iter().all(|rg| {
                let chunk = rg.column(leaf);
                chunk.dictionary_page_offset().is_some()
                    && chunk.page_encoding_stats_mask().is_some_and(|mask| {
                        mask.is_only(Encoding::RLE_DICTIONARY)
                            || mask.is_only(Encoding::PLAIN_DICTIONARY)
                    })
            })
    })
}

/// The rows of row group `rg` of a file (`meta`, Arrow schema `schema`, bytes read
/// with `read_at`) where every one of `predicates` is TRUE; each predicate reads one
/// column, one that [`keyed_column`] accepts. `None` when a chunk is not as its
/// metadata promised: the caller then reads the row group through the reader.
pub(crate) fn row_group_mask(
    meta: &ParquetMetaData,
    schema: &Schema,
    rg: usize,
    predicates: &mut [JitPredicate],
    read_at: &dyn Fn(u64, &mut [u8]) -> std::io::Result<()>,
) -> Option<BooleanBuffer> {
    let group = meta.row_groups().get(rg)?;
    let rows = usize::try_from(group.num_rows()).ok()?;
    let mut selected: Option<BooleanBuffer> = None;
    for predicate in predicates {
        let &[column] = predicate.columns() else {
            return None;
        };
        let leaf = single_leaf(meta, column)?;
        let chunk = group.column(leaf);
        let (start, len) = chunk.byte_range();
        let mut bytes = vec![0; usize::try_from(len).ok()?];
        read_at(start, &mut bytes).ok()?;
        let source = ChunkBytes {
            bytes: Bytes::from(bytes),
            start,
        };
        let pages = SerializedPageReader::new(Arc::new(source), chunk, rows, None).ok()?;
        let descr = chunk.column_descr();
        let field = schema.field(column);
        let width = bitwise_width(field.data_type(), descr.physical_type())?;
        let nullable = descr.max_def_level() == 1;
        let mask = chunk_mask(pages, field, width, nullable, rows, predicate)?;
        let mask = match selected {
            Some(before) => &before & &mask,
            None => mask,
        };
        // Later columns cannot bring rows back.
        let none_left = mask.count_set_bits() == 0;
        selected = Some(mask);
        if none_left {
            break;
        }
    }
    selected
}

/// One bit per row of a column chunk (`pages`, `rows` rows of `field`, values
/// `width` bytes, `nullable` with one level of nulls): TRUE where `predicate` is
/// TRUE on the row's value (or NULL).
fn chunk_mask(
    mut pages: impl PageReader,
    field: &Field,
    width: usize,
    nullable: bool,
    rows: usize,
    predicate: &mut JitPredicate,
) -> Option<BooleanBuffer> {
    let mut table: Option<Table> = None;
    let mut bits = Bits::with_capacity(rows);
    let mut scratch = Vec::new();
    while let Some(page) = pages.get_next_page().ok()? {
        match page {
            Page::DictionaryPage {
                buf,
                num_values,
                encoding: Encoding::PLAIN | Encoding::PLAIN_DICTIONARY,
                ..
            } if table.is_none() => {
                let (entries, null) =
                    dictionary_bits(&buf, num_values as usize, field, width, predicate)?;
                table = Some(Table {
                    entries,
                    padded: None,
                    null,
                });
            }
            Page::DataPage {
                buf,
                num_values,
                encoding: Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY,
                def_level_encoding,
                ..
            } => {
                let (levels, values) = match nullable {
                    // V1: the levels prefixed by their length in 4 bytes.
                    true if def_level_encoding == Encoding::RLE => {
                        let len = u32::from_le_bytes(buf.get(..4)?.try_into().ok()?) as usize;
                        let end = len.checked_add(4)?;
                        (Some(buf.get(4..end)?), buf.get(end..)?)
                    }
                    true => return None,
                    false => (None, &buf[..]),
                };
                let table = table.as_mut()?;
                page_bits(
                    levels,
                    values,
                    num_values as usize,
                    table,
                    &mut bits,
                    &mut scratch,
                )?;
            }
            Page::DataPageV2 {
                buf,
                num_values,
                encoding: Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY,
                def_levels_byte_len,
                rep_levels_byte_len: 0,
                ..
            } => {
                let split = def_levels_byte_len as usize;
                let levels = match nullable {
                    true => Some(buf.get(..split)?),
                    false if split == 0 => None,
                    false => return None,
                };
                let values = buf.get(split..)?;
                let table = table.as_mut()?;
                page_bits(
                    levels,
                    values,
                    num_values as usize,
                    table,
                    &mut bits,
                    &mut scratch,
                )?;
            }
            _ => return None,
        }
        if bits.len > rows {
            return None;
        }
    }
    (bits.len == rows).then(|| bits.finish())
}

/// Whether the predicate is TRUE (1) or not (0) for each of the `count` values of a
/// PLAIN dictionary page, and whether it is TRUE for NULL (`x IS NULL`, say).
fn dictionary_bits(
    buf: &[u8],
    count: usize,
    field: &Field,
    width: usize,
    predicate: &mut JitPredicate,
) -> Option<(Vec<u8>, bool)> {
    // The values, then a NULL.
    let mut values = buf.get(..count.checked_mul(width)?)?.to_vec();
    values.resize(values.len() + width, 0);
    let valid = BooleanBuffer::collect_bool(count + 1, |i| i < count);
    let data = ArrayData::builder(field.data_type().clone())
        .len(count + 1)
        .add_buffer(Buffer::from_vec(values))
        .null_bit_buffer(Some(valid.into_inner()))
        .build()
        .ok()?;
    let column = Field::new(field.name(), field.data_type().clone(), true);
    let batch =
        RecordBatch::try_new(Arc::new(Schema::new(vec![column])), vec![make_array(data)]).ok()?;
    let mask: BooleanArray = predicate.mask(batch).ok()?;
    let is_true = |i: usize| mask.is_valid(i) && mask.value(i);
    Some((
        (0..count).map(|i| u8::from(is_true(i))).collect(),
        is_true(count),
    ))
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
struct Bits {
    words: Vec<u64>,
    len: usize,
}

impl Bits {
    fn with_capacity(bits: usize) -> Bits {
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

    fn finish(self) -> BooleanBuffer {
        BooleanBuffer::new(Buffer::from_vec(self.words), 0, self.len)
    }
}

/// Parquet's RLE/bit-packed hybrid encoding of small integers (keys, levels): runs,
/// each a ULEB128 header, then either one value repeated (`header >> 1` times, in
/// whole bytes) or groups of 8 values packed `width` bits each (`header >> 1` groups,
/// least significant bit first).
struct Hybrid<'a> {
    data: &'a [u8],
    width: u32,
}

impl<'a> Hybrid<'a> {
    fn new(data: &'a [u8], width: u8) -> Option<Hybrid<'a>> {
        (width <= 32).then_some(Hybrid {
            data,
            width: u32::from(width),
        })
    }

    /// Appends to `bits` the `table` entry of each of the next `count` values: 1
    /// TRUE, 0 not (`None`: the data ends first, or a value's entry is neither).
    /// Keys of at most [`FAST_WIDTH`] bits are unpacked and looked up 8 at a time
    /// without a bounds check: `table` must then have an entry for every value of
    /// the width (2 for those past the dictionary, [`padded`]).
    fn lookup(
        mut self,
        count: usize,
        table: &[u8],
        bits: &mut Bits,
        scratch: &mut Vec<u32>,
    ) -> Option<()> {
        let mut left = count;
        while left > 0 {
            let header = self.uleb128()?;
            let n = usize::try_from(header >> 1).ok()?;
            if header & 1 == 0 {
                // A run of one value.
                let bytes = self.width.div_ceil(8) as usize;
                let raw = self.data.get(..bytes)?;
                self.data = &self.data[bytes..];
                let value = raw
                    .iter()
                    .rev()
                    .fold(0usize, |v, &b| (v << 8) | usize::from(b));
                let take = n.min(left);
                if take == 0 {
                    return None;
                }
                match table.get(value)? {
                    bit @ (0 | 1) => bits.push_run(*bit == 1, take),
                    _ => return None,
                }
                left -= take;
            } else {
                // Groups of 8 packed values; the last run may be cut short of its
                // groups (only as many values as the page holds are read).
                let width = self.width as usize;
                let bytes = n.checked_mul(width)?.min(self.data.len());
                let packed = &self.data[..bytes];
                self.data = &self.data[bytes..];
                let available = if width == 0 {
                    n.checked_mul(8)?
                } else {
                    bytes * 8 / width
                };
                let take = available.min(n.saturating_mul(8)).min(left);
                if take == 0 {
                    return None;
                }
                if width <= FAST_WIDTH {
                    if !packed_bits(packed, self.width, take, table, bits) {
                        return None;
                    }
                } else {
                    scratch.clear();
                    scratch.resize(take, 0);
                    unpack(packed, self.width, scratch);
                    for chunk in scratch.chunks(64) {
                        let mut word = 0u64;
                        for (i, &key) in chunk.iter().enumerate() {
                            match table.get(key as usize)? {
                                bit @ (0 | 1) => word |= u64::from(*bit) << i,
                                _ => return None,
                            }
                        }
                        bits.push_word(word, chunk.len());
                    }
                }
                left -= take;
            }
        }
        Some(())
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
/// `None` for keys wider than [`FAST_WIDTH`].
fn padded(table: &[u8], width: u32) -> Option<Vec<u8>> {
    if width as usize > FAST_WIDTH {
        return None;
    }
    let size = 1usize << width;
    let mut out = table[..table.len().min(size)].to_vec();
    out.resize(size, 2);
    Some(out)
}

/// Appends to `bits` the `table` entries of the first `take` of the packed values of
/// `width` (≤ [`FAST_WIDTH`]) bits in `packed` (which holds at least `take` of them);
/// `table` has `2^width` entries. `false` if an entry is neither 0 nor 1.
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
/// loads, shifts and masks by constants, and 8 lookups that need no bounds check.
fn packed_bits_width<const W: usize>(
    packed: &[u8],
    take: usize,
    table: &[u8],
    bits: &mut Bits,
) -> bool {
    let mask = (1usize << W) - 1;
    let Some(table) = table.get(..=mask) else {
        return false;
    };
    // The 8 bits of the group of 8 keys that starts `s` (at least W + 8 bytes, so
    // that every key's 8-byte window is inside), and the OR of their entries.
    let group = |s: &[u8]| -> (u8, u8) {
        let s = &s[..W + 8];
        let (mut byte, mut all) = (0u8, 0u8);
        for i in 0..8 {
            let bit = i * W;
            let at = bit / 8;
            let window = u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
            let entry = table[(window >> (bit % 8)) as usize & mask];
            byte |= (entry & 1) << i;
            all |= entry;
        }
        (byte, all)
    };
    let groups = take / 8;
    // Groups whose windows lie inside `packed`, read in place.
    let direct = match packed.len().checked_sub(W + 8) {
        Some(last) => (last / W + 1).min(groups),
        None => 0,
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
    for g in 0..direct {
        let (byte, a) = group(&packed[g * W..g * W + W + 8]);
        all |= a;
        push(byte, 8, bits);
    }
    // The rest through a copy padded with zeros; a last group of fewer than 8 keys
    // keeps their bits only.
    let mut padded = [0u8; 2 * FAST_WIDTH + 8];
    for g in direct..take.div_ceil(8) {
        let from = (g * W).min(packed.len());
        let n = (packed.len() - from).min(W);
        padded[..W].fill(0);
        padded[..n].copy_from_slice(&packed[from..from + n]);
        let keys = (take - g * 8).min(8);
        let (byte, _) = group(&padded);
        let kept = if keys == 8 { 0xff } else { (1u8 << keys) - 1 };
        for i in 0..keys {
            let bit = i * W;
            let window = u64::from_le_bytes(padded[bit / 8..bit / 8 + 8].try_into().expect("8"));
            all |= table[(window >> (bit % 8)) as usize & mask];
        }
        push(byte & kept, keys, bits);
    }
    if in_word > 0 {
        bits.push_word(word, in_word);
    }
    all <= 1
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

/// A column chunk's bytes, read at once, as the page reader reads a file: offsets are
/// the file's.
struct ChunkBytes {
    bytes: Bytes,
    start: u64,
}

impl ChunkBytes {
    fn range(&self, start: u64, len: usize) -> parquet::errors::Result<std::ops::Range<usize>> {
        let from = start
            .checked_sub(self.start)
            .and_then(|s| usize::try_from(s).ok())
            .filter(|&s| s <= self.bytes.len());
        match from {
            Some(from) if len <= self.bytes.len() - from => Ok(from..from + len),
            _ => Err(ParquetError::EOF(format!(
                "{len} bytes at offset {start} are outside the column chunk"
            ))),
        }
    }
}

impl Length for ChunkBytes {
    fn len(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
}

impl ChunkReader for ChunkBytes {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        let range = self.range(start, 0)?;
        Ok(self.bytes.slice(range.start..).reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<Bytes> {
        Ok(self.bytes.slice(self.range(start, length)?))
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
