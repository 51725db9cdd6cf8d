//! Dictionary columns evaluated once per dictionary value.
//!
//! An expression that reads a single column, of a `Dictionary(K, V)` type (what
//! Parquet readers produce for low-cardinality columns), depends on a row only
//! through the row's key. So [`PerValue`] computes it once over the dictionary's
//! values (a batch of as many rows as the dictionary has values, through the same
//! back end, compiled kernel or interpreter), plus once over a NULL (what a NULL key
//! stands for), and maps the result through the keys with arrow's `take`: about one
//! lookup per row, whatever the expression. Consecutive batches that share their dictionary array (as a
//! Parquet reader's batches within a column chunk do) reuse the result.
//!
//! Computing over every value can fail where no row would (a value no key uses, or
//! only NULL keys): then the caller decodes the column (casts it to `V`) and
//! evaluates row by row, which reports the error of the row that uses the value, if
//! any.

use std::sync::{Arc, Mutex};

use arrow::array::{
    new_null_array, Array, ArrayRef, AsArray, BooleanArray, RecordBatch, RecordBatchOptions, Scalar,
};
use arrow::datatypes::{DataType, Schema, SchemaRef};

use crate::error::Result;

/// The dictionary column an expression reading `columns` of `schema` can be
/// computed per value of: its only column, if that is of a dictionary type.
pub(crate) fn single_dictionary_column(schema: &Schema, columns: &[usize]) -> Option<usize> {
    match columns {
        [c] if matches!(schema.field(*c).data_type(), DataType::Dictionary(..)) => Some(*c),
        _ => None,
    }
}

/// The last dictionary seen and what the expression gave over its values (`None`:
/// computing it failed, decode instead).
type Last = Option<(ArrayRef, Option<ArrayRef>)>;

/// An expression over one dictionary column, computed per dictionary value.
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

    /// The expression's value for each row of `batch` (of the caller's schema):
    /// `compute` evaluates it over a batch of `bound` (the schema the expression was
    /// bound to) holding the dictionary's values, cast to the column's bound type,
    /// in the column (the other columns are NULLs it does not read); the result is
    /// taken through the keys. `None`: the column is not a dictionary array in this
    /// batch, or `compute` failed; the caller evaluates the decoded batch instead.
    pub(crate) fn evaluate(
        &self,
        batch: &RecordBatch,
        bound: &SchemaRef,
        compute: impl FnOnce(&RecordBatch) -> Result<ArrayRef>,
    ) -> Result<Option<ArrayRef>> {
        let Some(dictionary) = batch.column(self.column).as_any_dictionary_opt() else {
            return Ok(None);
        };
        let values = dictionary.values();
        let per_value = {
            let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            match &*last {
                Some((seen, result)) if Arc::ptr_eq(seen, values) => result.clone(),
                _ => {
                    let result = self.values_batch(values, bound)?;
                    let result = compute(&result).ok();
                    *last = Some((values.clone(), result.clone()));
                    result
                }
            }
        };
        let Some(per_value) = per_value else {
            return Ok(None);
        };
        let keys = dictionary.keys();
        let taken = arrow::compute::take(per_value.as_ref(), keys, None)?;
        // A NULL key is a NULL value: the result computed for the NULL after the
        // values (`IS NULL` is TRUE there).
        Ok(Some(match keys.nulls() {
            Some(valid) if valid.null_count() > 0 => {
                let at_null = Scalar::new(per_value.slice(per_value.len() - 1, 1));
                let valid = BooleanArray::new(valid.inner().clone(), None);
                arrow::compute::kernels::zip::zip(&valid, &taken, &at_null)?
            }
            _ => taken,
        }))
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
