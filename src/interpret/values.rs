//! A node's value (an array, or a scalar for a literal, with the rows that raised
//! errors) and the shapes arrow's kernels want it in: expanded to the batch, as row
//! bitmaps, in one string layout or time zone, with floats made comparable.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, BooleanArray, Datum, Scalar};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{self as t, ArrowPrimitiveType, DataType};

use crate::error::Result;
use crate::layout::is_string;
use crate::scalar::ScalarValue;

use super::errors::Errors;

/// A node's result: an array (or a scalar for literals) and the rows that errored.
#[derive(Clone)]
pub(super) struct Value {
    pub(super) data: Data,
    pub(super) errors: Errors,
}

#[derive(Clone)]
pub(super) enum Data {
    Array(ArrayRef),
    Scalar(ArrayRef),
}

impl Value {
    pub(super) fn array(array: ArrayRef) -> Value {
        Value {
            data: Data::Array(array),
            errors: Errors::none(),
        }
    }

    pub(super) fn with_errors(mut self, errors: Errors) -> Value {
        self.errors = self.errors.union(errors);
        self
    }

    pub(super) fn into_array(self, len: usize) -> ArrayRef {
        match self.data {
            Data::Array(a) => a,
            Data::Scalar(s) => expand(&s, len),
        }
    }

    pub(super) fn to_array(&self, len: usize) -> ArrayRef {
        match &self.data {
            Data::Array(a) => a.clone(),
            Data::Scalar(s) => expand(s, len),
        }
    }

    pub(super) fn datum(&self) -> Box<dyn Datum + '_> {
        match &self.data {
            Data::Array(a) => Box::new(a.clone()),
            Data::Scalar(s) => Box::new(Scalar::new(s.clone())),
        }
    }

    pub(super) fn data_type(&self) -> DataType {
        match &self.data {
            Data::Array(a) | Data::Scalar(a) => a.data_type().clone(),
        }
    }

    pub(super) fn is_scalar(&self) -> bool {
        matches!(self.data, Data::Scalar(_))
    }
}

/// `a` labelled with the time zone of `ty` when both are timestamps of one unit in
/// different zones (the values, UTC instants, are kept); otherwise `a` itself.
pub(super) fn with_zone_of(a: ArrayRef, ty: &DataType) -> ArrayRef {
    use arrow::array::AsArray;
    use t::TimeUnit::*;
    let (DataType::Timestamp(unit, zone), DataType::Timestamp(own, own_zone)) = (ty, a.data_type())
    else {
        return a;
    };
    if unit != own || zone == own_zone {
        return a;
    }
    let zone = zone.clone();
    match unit {
        Second => Arc::new(
            a.as_primitive::<t::TimestampSecondType>()
                .clone()
                .with_timezone_opt(zone),
        ),
        Millisecond => Arc::new(
            a.as_primitive::<t::TimestampMillisecondType>()
                .clone()
                .with_timezone_opt(zone),
        ),
        Microsecond => Arc::new(
            a.as_primitive::<t::TimestampMicrosecondType>()
                .clone()
                .with_timezone_opt(zone),
        ),
        Nanosecond => Arc::new(
            a.as_primitive::<t::TimestampNanosecondType>()
                .clone()
                .with_timezone_opt(zone),
        ),
    }
}

pub(super) fn expand(scalar: &ArrayRef, len: usize) -> ArrayRef {
    match ScalarValue::from_array(scalar.as_ref(), 0) {
        Some(v) => v.to_array(len),
        None => arrow::array::new_null_array(scalar.data_type(), len),
    }
}

/// TRUE rows (NULL counts as not TRUE), as a bitmap.
pub(crate) fn true_rows(b: &BooleanArray) -> BooleanBuffer {
    match b.nulls() {
        Some(n) => b.values() & n.inner(),
        None => b.values().clone(),
    }
}

/// FALSE rows, as a bitmap.
pub(super) fn false_rows(b: &BooleanArray) -> BooleanBuffer {
    match b.nulls() {
        Some(n) => &!b.values() & n.inner(),
        None => !b.values(),
    }
}

pub(super) fn valid_rows(a: &dyn Array) -> BooleanBuffer {
    match a.logical_nulls() {
        Some(n) => n.inner().clone(),
        None => BooleanBuffer::new_set(a.len()),
    }
}

/// Makes floats comparable by arrow's total order the SQL way: -0.0 becomes 0.0 and
/// every NaN the positive quiet NaN (so NaN = NaN and NaN sorts above everything).
pub(super) fn normalize_floats(a: &ArrayRef) -> Result<ArrayRef> {
    fn fix<T: ArrowPrimitiveType>(
        a: &ArrayRef,
        canon: fn(T::Native) -> T::Native,
        needs: fn(T::Native) -> bool,
    ) -> ArrayRef {
        let p = a.as_primitive::<T>();
        if p.values().iter().any(|v| needs(*v)) {
            Arc::new(p.unary::<_, T>(canon))
        } else {
            a.clone()
        }
    }
    Ok(match a.data_type() {
        DataType::Float64 => fix::<t::Float64Type>(
            a,
            |v| if v.is_nan() { f64::NAN } else { v + 0.0 },
            |v| v.is_sign_negative() && (v == 0.0 || v.is_nan()),
        ),
        DataType::Float32 => fix::<t::Float32Type>(
            a,
            |v| if v.is_nan() { f32::NAN } else { v + 0.0 },
            |v| v.is_sign_negative() && (v == 0.0 || v.is_nan()),
        ),
        DataType::Timestamp(unit, Some(_)) => reinterpret_i64(a, DataType::Timestamp(*unit, None))?,
        _ => a.clone(),
    })
}

/// The SQL type of an array's type: VARCHAR (`Utf8`) for strings of any layout,
/// BLOB (`Binary`) for binary values of any layout.
pub(super) fn logical(t: DataType) -> DataType {
    plain_layout(&t).unwrap_or(t)
}

/// `a` as an array of type `ty` when both are strings, or both BLOBs, of different
/// layouts (a copy); otherwise `a` itself. A value that is a column (`LargeUtf8`,
/// `Utf8View`, `LargeBinary`, `BinaryView`) is read in place everywhere but where
/// arrow needs one layout: `CASE` and `COALESCE` build their (`Utf8`) results, and
/// literals meet a column.
pub(super) fn in_layout(a: ArrayRef, ty: &DataType) -> Result<ArrayRef> {
    if a.data_type() != ty
        && plain_layout(a.data_type()).is_some_and(|p| plain_layout(ty) == Some(p))
    {
        return Ok(arrow::compute::cast(&a, ty)?);
    }
    Ok(a)
}

/// The `i32`-offsets type of a string (`Utf8`) or BLOB (`Binary`) of any layout.
fn plain_layout(t: &DataType) -> Option<DataType> {
    match t {
        t if is_string(t) => Some(DataType::Utf8),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => Some(DataType::Binary),
        _ => None,
    }
}

/// The operands of a comparison or LIKE in one string (or BLOB) layout, as arrow's
/// kernels need: a literal takes the column's layout (one value converted); two
/// columns of different layouts are compared as `Utf8` (`Binary`).
pub(super) fn same_layout(l: Value, r: Value) -> Result<(Value, Value)> {
    let (lt, rt) = (l.data_type(), r.data_type());
    let Some(plain) =
        plain_layout(&lt).filter(|p| lt != rt && plain_layout(&rt).as_ref() == Some(p))
    else {
        return Ok((l, r));
    };
    let convert = |v: Value, ty: &DataType| -> Result<Value> {
        let data = match v.data {
            Data::Array(a) => Data::Array(in_layout(a, ty)?),
            Data::Scalar(s) => Data::Scalar(in_layout(s, ty)?),
        };
        Ok(Value {
            data,
            errors: v.errors,
        })
    };
    Ok(match (l.is_scalar(), r.is_scalar()) {
        (true, false) => (convert(l, &rt)?, r),
        (false, true) => (l, convert(r, &lt)?),
        _ => (convert(l, &plain)?, convert(r, &plain)?),
    })
}

/// A value ready for arrow's comparison kernels.
pub(super) fn comparable(v: &Value) -> Result<Value> {
    let data = match &v.data {
        Data::Array(a) => Data::Array(normalize_floats(a)?),
        Data::Scalar(s) => Data::Scalar(normalize_floats(s)?),
    };
    Ok(Value {
        data,
        errors: Errors::none(),
    })
}

pub(super) fn reinterpret_i64(a: &ArrayRef, to: DataType) -> Result<ArrayRef> {
    let data = a.to_data().into_builder().data_type(to).build()?;
    Ok(arrow::array::make_array(data))
}
