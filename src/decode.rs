//! Column types the back ends do not read in place: the SQL type a column is bound
//! as, and the cast that turns such a column into one they read.
//!
//! Strings and BLOBs in any offset or view layout are read in place
//! ([`crate::layout`]). `Dictionary(K, V)` columns (any integer `K`) are bound as `V`
//! and decoded (cast to `V`) when a batch is evaluated, unless a filter evaluates
//! them once per dictionary value ([`crate::dictionary`]); `FixedSizeBinary` columns
//! are bound as `BLOB` and cast to `Binary`. Decimals of any width (Arrow's
//! `Decimal32` and `Decimal64` as well as `Decimal128`) are one type, `DECIMAL(p, s)`
//! (`Decimal128`): the JIT reads the narrow ones in place as `i32`s and `i64`s, the
//! interpreter widens them ([`widened_decimal`]).

use std::borrow::Cow;
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::error::Result;
use crate::layout::is_string;
use crate::struct_fields::{child_array, field_array, struct_fields, StructField};

/// The SQL type a column of Arrow type `t` is bound as: VARCHAR (`Utf8`) for every
/// string layout, BLOB (`Binary`) for every binary layout, `DECIMAL(p, s)`
/// (`Decimal128(p, s)`) for `Decimal32(p, s)` and `Decimal64(p, s)`, `V` (bound so)
/// for a dictionary of `V`, `t` itself otherwise.
pub(crate) fn bound_type(t: &DataType) -> DataType {
    match t {
        t if is_string(t) => DataType::Utf8,
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) => DataType::Decimal128(*p, *s),
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => DataType::Binary,
        DataType::Dictionary(_, value) => bound_type(value),
        t => t.clone(),
    }
}

/// A `Decimal32` or `Decimal64` array as the `Decimal128` array of the same
/// precision, scale, values and NULLs (what the interpreter computes on); `None`
/// for other arrays. Values are copied as they are, even beyond the precision (as a
/// `Decimal128` column may hold them).
pub(crate) fn widened_decimal(a: &ArrayRef) -> Option<ArrayRef> {
    use arrow::array::{AsArray, Decimal128Array};
    use arrow::datatypes::{Decimal32Type, Decimal64Type};
    let wide: Decimal128Array = match a.data_type() {
        DataType::Decimal32(..) => a.as_primitive::<Decimal32Type>().unary(i128::from),
        DataType::Decimal64(..) => a.as_primitive::<Decimal64Type>().unary(i128::from),
        _ => return None,
    };
    Some(Arc::new(wide.with_data_type(bound_type(a.data_type()))))
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
    /// their decoded types, and its STRUCT columns' fields after its columns when
    /// the expressions read one: [`crate::struct_fields`]): what kernels are
    /// compiled for.
    pub(crate) schema: SchemaRef,
    /// The columns to cast, with the type to cast them to.
    casts: Vec<(usize, DataType)>,
    /// The STRUCT fields appended as columns (empty when no field is read), each
    /// with whether an expression reads it (a field none reads is appended as its
    /// bare child array: a placeholder, its parents' NULLs not merged).
    fields: Vec<(StructField, bool)>,
}

impl Decoding {
    /// For expressions over `schema` that read `columns` (extended columns: those
    /// past the schema's width are STRUCT fields).
    pub(crate) fn new(schema: &Schema, columns: &[usize]) -> Decoding {
        let width = schema.fields().len();
        let struct_fields = if columns.iter().any(|&c| c >= width) {
            struct_fields(schema)
        } else {
            Vec::new()
        };
        let all: Vec<Field> = schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .chain(struct_fields.iter().map(|f| f.field.as_ref().clone()))
            .collect();
        let casts: Vec<(usize, DataType)> = columns
            .iter()
            .filter_map(|&c| decoded_type(all.get(c)?.data_type()).map(|t| (c, t)))
            .collect();
        let fields: Vec<Field> = all
            .into_iter()
            .enumerate()
            .map(|(i, f)| match casts.iter().find(|(c, _)| *c == i) {
                Some((_, t)) => f.with_data_type(t.clone()),
                None => f,
            })
            .collect();
        Decoding {
            schema: Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone())),
            casts,
            fields: struct_fields
                .into_iter()
                .enumerate()
                .map(|(k, f)| (f, columns.contains(&(width + k))))
                .collect(),
        }
    }

    /// `batch` (of the caller's schema, checked) as the back ends read it.
    ///
    /// Inlined, so that the common case, no column to cast, costs a test and not a
    /// call returning the `Cow` through memory (a few ns of every evaluation).
    #[inline]
    pub(crate) fn convert<'a>(&self, batch: &'a RecordBatch) -> Result<Cow<'a, RecordBatch>> {
        if self.casts.is_empty() && self.fields.is_empty() {
            Ok(Cow::Borrowed(batch))
        } else {
            self.cast(batch).map(Cow::Owned)
        }
    }

    /// `batch` with the STRUCT fields appended and the columns of `casts` cast.
    fn cast(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let mut columns = batch.columns().to_vec();
        let width = batch.num_columns();
        for (f, read) in &self.fields {
            let array = match read {
                true => field_array(&columns[..width], f),
                false => child_array(&columns[..width], f),
            };
            columns.push(array);
        }
        for (c, t) in &self.casts {
            columns[*c] = arrow::compute::cast(&columns[*c], t)?;
        }
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &options,
        )?)
    }
}
