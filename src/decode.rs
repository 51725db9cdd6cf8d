//! Column types the back ends do not read in place: the SQL type a column is bound
//! as, and the cast that turns such a column into one they read.
//!
//! Strings and BLOBs in any offset or view layout are read in place
//! ([`crate::layout`]). `Dictionary(K, V)` columns (any integer `K`) are bound as `V`
//! and decoded (cast to `V`) when a batch is evaluated, unless a filter evaluates
//! them once per dictionary value ([`crate::dictionary`]); `FixedSizeBinary` columns
//! are bound as `BLOB` and cast to `Binary`.

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::error::Result;
use crate::layout::is_string;

/// The SQL type a column of Arrow type `t` is bound as: VARCHAR (`Utf8`) for every
/// string layout, BLOB (`Binary`) for every binary layout, `V` (bound so) for a
/// dictionary of `V`, `t` itself otherwise.
pub(crate) fn bound_type(t: &DataType) -> DataType {
    match t {
        t if is_string(t) => DataType::Utf8,
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => DataType::Binary,
        DataType::Dictionary(_, value) => bound_type(value),
        t => t.clone(),
    }
}

/// The type a column of type `t` is cast to before the back ends read it; `None`
/// when they read it as it is.
fn decoded_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::FixedSizeBinary(_) => Some(DataType::Binary),
        DataType::Dictionary(_, value) => {
            Some(decoded_type(value).unwrap_or_else(|| (**value).clone()))
        }
        _ => None,
    }
}

/// How a batch of the caller's schema becomes a batch the back ends read: the
/// columns the expressions use that are of a type the back ends do not read in place
/// are cast ([`decoded_type`]); other columns are passed through untouched.
pub(crate) struct Decoding {
    /// The schema of the decoded batches (the caller's, with the cast columns of
    /// their decoded types): what kernels are compiled for.
    pub(crate) schema: SchemaRef,
    /// The columns to cast, with the type to cast them to.
    casts: Vec<(usize, DataType)>,
}

impl Decoding {
    /// For expressions over `schema` that read `columns`.
    pub(crate) fn new(schema: &Schema, columns: &[usize]) -> Decoding {
        let casts: Vec<(usize, DataType)> = columns
            .iter()
            .filter_map(|&c| decoded_type(schema.field(c).data_type()).map(|t| (c, t)))
            .collect();
        let fields: Vec<Field> = (0..schema.fields().len())
            .map(|i| {
                let f = schema.field(i).clone();
                match casts.iter().find(|(c, _)| *c == i) {
                    Some((_, t)) => f.with_data_type(t.clone()),
                    None => f,
                }
            })
            .collect();
        Decoding {
            schema: Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
            casts,
        }
    }

    /// `batch` (of the caller's schema, checked) as the back ends read it.
    pub(crate) fn convert<'a>(&self, batch: &'a RecordBatch) -> Result<Cow<'a, RecordBatch>> {
        if self.casts.is_empty() {
            return Ok(Cow::Borrowed(batch));
        }
        let mut columns = batch.columns().to_vec();
        for (c, t) in &self.casts {
            columns[*c] = arrow::compute::cast(&columns[*c], t)?;
        }
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(Cow::Owned(RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &options,
        )?))
    }
}
