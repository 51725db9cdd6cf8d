//! Dictionary columns evaluated once per dictionary value.
//!
//! A predicate that reads a single column, of a `Dictionary(K, V)` type (what
//! Parquet readers produce for low-cardinality columns), depends on a row only
//! through the row's key. So [`PerValue`] computes it once over the dictionary's
//! values (a batch of as many rows as the dictionary has values, through the same
//! back end, compiled kernel or interpreter), plus once over a NULL (what a NULL key
//! stands for), keeps whether it is TRUE per value as a table of `bool`s, and builds
//! the batch's bitmap of TRUE rows by one lookup per key, 64 keys to a word: one
//! lookup per row, whatever the predicate. Consecutive batches that share their dictionary array (as a
//! Parquet reader's batches within a column chunk do) reuse the result.
//!
//! Computing over every value can fail where no row would (a value no key uses, or
//! only NULL keys): then the caller decodes the column (casts it to `V`) and
//! evaluates row by row, which reports the error of the row that uses the value, if
//! any.

use std::sync::{Arc, Mutex};

use arrow::array::{new_null_array, Array, ArrayRef, AsArray, RecordBatch, RecordBatchOptions};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer};
use arrow::datatypes::{
    ArrowNativeType, DataType, Int16Type, Int32Type, Int64Type, Int8Type, Schema, SchemaRef,
    UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};

use crate::error::Result;

/// The dictionary column an expression reading `columns` of `schema` can be
/// computed per value of: its only column, if that is of a dictionary type.
pub(crate) fn single_dictionary_column(schema: &Schema, columns: &[usize]) -> Option<usize> {
    match columns {
        [c] if matches!(schema.field(*c).data_type(), DataType::Dictionary(..)) => Some(*c),
        _ => None,
    }
}

/// The last dictionary seen and, per value, whether the predicate is TRUE there,
/// the NULL a NULL key stands for last (`None`: computing it failed, decode
/// instead).
type Last = Option<(ArrayRef, Option<Arc<[bool]>>)>;

/// A predicate over one dictionary column, computed per dictionary value.
pub(crate) struct PerValue {
    /// The column (index in the caller's schema).
    column: usize,
    last: Mutex<Last>,
}

impl PerValue {
    /// For the dictionary column `column`.
    pub(crate) fn new(column: usize) -> PerValue {
        PerValue {
            column,
            last: Mutex::new(None),
        }
    }

    /// The rows of `batch` (of the caller's schema) where the predicate is TRUE:
    /// `compute` gives the rows where it is TRUE in a batch of `bound` (the schema
    /// the expression was bound to) holding the dictionary's values, cast to the
    /// column's bound type, then a NULL, in the column (the other columns are NULLs
    /// it does not read); each row takes its key's answer. `None`: the column is not
    /// a dictionary array in this batch, or `compute` failed; the caller evaluates
    /// the decoded batch instead.
    pub(crate) fn true_rows(
        &self,
        batch: &RecordBatch,
        bound: &SchemaRef,
        compute: impl FnOnce(&RecordBatch) -> Result<BooleanBuffer>,
    ) -> Result<Option<BooleanBuffer>> {
        let Some(dictionary) = batch.column(self.column).as_any_dictionary_opt() else {
            return Ok(None);
        };
        let values = dictionary.values();
        let truth = {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            match &*last {
                Some((seen, truth)) if Arc::ptr_eq(seen, values) => truth.clone(),
                _ => {
                    let batch = self.values_batch(values, bound)?;
                    let truth: Option<Arc<[bool]>> =
                        compute(&batch).ok().map(|rows| rows.iter().collect());
                    *last = Some((values.clone(), truth.clone()));
                    truth
                }
            }
        };
        Ok(truth.and_then(|truth| through_keys(dictionary.keys(), &truth)))
    }

    /// A batch of `bound`'s columns (all nullable) whose column is `values` (cast to
    /// its bound type) followed by a NULL (what NULL keys stand for), and whose other
    /// columns are NULL.
    fn values_batch(&self, values: &ArrayRef, bound: &SchemaRef) -> Result<RecordBatch> {
        let null = new_null_array(values.data_type(), 1);
        let values = arrow::compute::concat(&[values.as_ref(), null.as_ref()])?;
        let values = &values;
        let rows = values.len();
        let fields: Vec<_> = bound
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect();
        let schema = Arc::new(Schema::new_with_metadata(fields, bound.metadata().clone()));
        let columns = bound
            .fields()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                if i != self.column {
                    Ok(new_null_array(f.data_type(), rows))
                } else if values.data_type() == f.data_type() {
                    Ok(values.clone())
                } else {
                    arrow::compute::cast(values, f.data_type())
                }
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(
            schema, columns, &options,
        )?)
    }
}

/// Each row's answer in `truth` (one per dictionary value, then the NULL key's), by
/// its key in `keys` (an integer array; `None` for another type). Keys under a NULL
/// take the last answer whatever they hold (Arrow lets them be out of range), and
/// the others index `truth` clamped to it, so no key can read past it.
fn through_keys(keys: &dyn Array, truth: &[bool]) -> Option<BooleanBuffer> {
    macro_rules! by_type {
        ($($t:ty),*) => {
            $(if let Some(k) = keys.as_primitive_opt::<$t>() {
                return Some(answers(k.values(), k.nulls(), truth));
            })*
        };
    }
    by_type!(
        Int8Type, Int16Type, Int32Type, Int64Type, UInt8Type, UInt16Type, UInt32Type, UInt64Type
    );
    None
}

/// [`through_keys`] for keys of one type: 64 rows a word, one table lookup each.
fn answers<K: ArrowNativeType>(
    keys: &[K],
    nulls: Option<&NullBuffer>,
    truth: &[bool],
) -> BooleanBuffer {
    let Some((&at_null, _)) = truth.split_last() else {
        return BooleanBuffer::new_unset(keys.len());
    };
    let last = truth.len() - 1;
    let mut words: Vec<u64> = keys
        .chunks(64)
        .map(|chunk| {
            // The answers as bytes (0 or 1) first: independent loads and stores,
            // where shifting each into the word would chain them.
            let mut bytes = [0u8; 64];
            for (b, k) in bytes.iter_mut().zip(chunk) {
                // `as_usize` of a negative key is huge: clamped like any other.
                *b = u8::from(truth[k.as_usize().min(last)]);
            }
            bytes
                .chunks_exact(8)
                .enumerate()
                .fold(0u64, |word, (i, eight)| {
                    word | u64::from(pack_bits(eight)) << (8 * i)
                })
        })
        .collect();
    if let Some(valid) = nulls.filter(|n| n.null_count() > 0) {
        let valid = valid.inner();
        let fill = if at_null { u64::MAX } else { 0 };
        for (word, v) in words.iter_mut().zip(valid.bit_chunks().iter_padded()) {
            *word = (*word & v) | (fill & !v);
        }
    }
    BooleanBuffer::new(Buffer::from_vec(words), 0, keys.len())
}

/// Eight bytes that are each 0 or 1 as the bits of a byte, the first the lowest: the
/// multiply moves byte `j`'s bit to bit `56 + j` (no two partial products meet).
fn pack_bits(eight: &[u8]) -> u8 {
    let mut word = [0u8; 8];
    word.copy_from_slice(eight);
    (u64::from_le_bytes(word).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int8Array, StringArray, UInt16Array};

    #[test]
    fn eight_bytes_pack_into_a_byte_first_lowest() {
        for bits in 0..=255u8 {
            let bytes: Vec<u8> = (0..8).map(|j| bits >> j & 1).collect();
            assert_eq!(pack_bits(&bytes), bits);
        }
    }

    /// Each row takes its key's answer; NULL keys the last answer, whatever they
    /// hold (negative, or past the values); keys past the values are clamped to the
    /// table rather than read past it; sliced keys and their validity line up.
    #[test]
    fn rows_take_their_keys_answers() {
        // Values 0..3 and the NULL key's answer last.
        for at_null in [false, true] {
            let truth = [true, false, true, at_null];
            let keys: Vec<Option<i8>> = (0..150)
                .map(|i| match i % 7 {
                    3 => None,
                    k => Some((k % 3) as i8),
                })
                .collect();
            let array = Int8Array::from(keys.clone());
            // Under the NULLs, keys no valid row may hold.
            let (_, values, nulls) = array.into_parts();
            let mut raw = values.to_vec();
            for (i, k) in raw.iter_mut().enumerate() {
                if keys[i].is_none() {
                    *k = if i % 2 == 0 { -5 } else { 100 };
                }
            }
            let array = Int8Array::new(raw.into(), nulls);
            for (offset, len) in [(0, 150), (1, 149), (63, 70), (64, 64), (149, 1), (5, 0)] {
                let part = array.slice(offset, len);
                let got = through_keys(&part, &truth).expect("integer keys");
                let want: Vec<bool> = keys[offset..offset + len]
                    .iter()
                    .map(|k| k.map_or(at_null, |k| truth[k as usize]))
                    .collect();
                assert_eq!(got.iter().collect::<Vec<_>>(), want, "{offset}+{len}");
            }
        }
        // A key past the values (which a valid dictionary never holds) reads the
        // table's last entry, not past it.
        let keys = UInt16Array::from(vec![0, 7, 1]);
        let got = through_keys(&keys, &[false, true, true]).expect("integer keys");
        assert_eq!(got.iter().collect::<Vec<_>>(), [false, true, true]);
        assert!(through_keys(&StringArray::from(vec!["a"]), &[true]).is_none());
    }
}
