//! `CAST` and `TRY_CAST`: to and from VARCHAR by the row functions the JIT calls
//! too, dates and times by unit arithmetic, the rest by arrow's casts, checked.

use std::sync::Arc;

use arrow::array::{ArrayRef, AsArray, BooleanArray, PrimitiveArray};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{self as t, DataType};

use crate::error::{EvalError, Result};
use crate::functions::cast;
use crate::types::{is_float, is_integer, is_time, sql_type_name, time_unit, units_per_second};

use super::checked::{rename_overflow, scale_checked};
use super::errors::{ErrorKind, Errors};
use super::values::{logical, reinterpret_i64, valid_rows, Value};
use super::Interpreter;

impl Interpreter<'_> {
    pub(super) fn cast(&self, v: Value, to: &DataType) -> Result<Value> {
        let n = self.len();
        // To and from VARCHAR: the row functions the JIT calls too (they read strings
        // of any layout).
        let from = logical(v.data_type());
        if let Some(imp) = cast::cast_impl(&from, to) {
            let errors = v.errors.clone();
            return Ok(self.row(&imp, to, &[v]).with_errors(errors));
        }
        let a = v.to_array(n);
        let value = match (&from, to) {
            (DataType::Date32, DataType::Timestamp(unit, tz)) => {
                let days = cast_with_options(&a, &DataType::Int64, &CastOptions::default())?;
                let per_day = 86_400 * units_per_second(*unit);
                let scaled = scale_checked(&days, per_day, to)?;
                let out =
                    reinterpret_i64(&scaled.to_array(n), DataType::Timestamp(*unit, tz.clone()))?;
                Value::array(out).with_errors(scaled.errors)
            }
            (DataType::Timestamp(_, _), DataType::Date32)
            | (DataType::Date64, DataType::Date32) => {
                let unit = match &from {
                    DataType::Timestamp(unit, _) => *unit,
                    _ => t::TimeUnit::Millisecond,
                };
                let per_day = 86_400 * units_per_second(unit);
                let raw = reinterpret_i64(&a, DataType::Int64)?;
                let days: PrimitiveArray<t::Int64Type> = raw
                    .as_primitive::<t::Int64Type>()
                    .unary(|v| v.div_euclid(per_day));
                let days: ArrayRef = Arc::new(days);
                self.checked_cast(&days, &DataType::Date32)?
            }
            (DataType::Timestamp(from_unit, _), DataType::Timestamp(to_unit, tz)) => {
                let (f, t) = (units_per_second(*from_unit), units_per_second(*to_unit));
                let raw = reinterpret_i64(&a, DataType::Int64)?;
                let target = DataType::Timestamp(*to_unit, tz.clone());
                if t >= f {
                    let scaled = scale_checked(&raw, t / f, to)?;
                    let out = reinterpret_i64(&scaled.to_array(n), target)?;
                    Value::array(out).with_errors(scaled.errors)
                } else {
                    let div = f / t;
                    let p: PrimitiveArray<t::Int64Type> = raw
                        .as_primitive::<t::Int64Type>()
                        .unary(|v| v.div_euclid(div));
                    Value::array(reinterpret_i64(&(Arc::new(p) as ArrayRef), target)?)
                }
            }
            (f, to_time)
                if is_time(to_time) && (is_time(f) || matches!(f, DataType::Timestamp(..))) =>
            {
                self.to_time(&a, to)?
            }
            (f, i) if is_float(f) && is_integer(i) => {
                // PostgreSQL rounds half to even when converting floats to integers.
                let rounded: ArrayRef = match f {
                    DataType::Float32 => Arc::new(
                        a.as_primitive::<t::Float32Type>()
                            .unary::<_, t::Float32Type>(|v| v.round_ties_even()),
                    ),
                    _ => Arc::new(
                        a.as_primitive::<t::Float64Type>()
                            .unary::<_, t::Float64Type>(|v| v.round_ties_even()),
                    ),
                };
                self.checked_cast(&rounded, to)?
            }
            _ => self.checked_cast(&a, to)?,
        };
        Ok(value.with_errors(v.errors))
    }

    /// A TIME or TIMESTAMP array as a TIME of type `to`: a timestamp's time of day,
    /// or a time in another unit (made finer checked, coarser rounding toward the
    /// past), narrowed (checked) to 32 bits for seconds and milliseconds.
    fn to_time(&self, a: &ArrayRef, to: &DataType) -> Result<Value> {
        let n = self.len();
        let (unit, raw) = match a.data_type() {
            DataType::Timestamp(unit, _) => {
                let per_day = 86_400 * units_per_second(*unit);
                let raw = reinterpret_i64(a, DataType::Int64)?;
                let of_day: PrimitiveArray<t::Int64Type> = raw
                    .as_primitive::<t::Int64Type>()
                    .unary(|v| v.rem_euclid(per_day));
                (*unit, Arc::new(of_day) as ArrayRef)
            }
            DataType::Time32(unit) => {
                let narrow = reinterpret_i64(a, DataType::Int32)?;
                (
                    *unit,
                    cast_with_options(&narrow, &DataType::Int64, &CastOptions::default())?,
                )
            }
            DataType::Time64(unit) => (*unit, reinterpret_i64(a, DataType::Int64)?),
            other => return Err(EvalError::Other(format!("no TIME from {other}")).into()),
        };
        let target = time_unit(to).unwrap_or(unit);
        let (f, t) = (units_per_second(unit), units_per_second(target));
        let scaled = if t >= f {
            scale_checked(&raw, t / f, to)?
        } else {
            let p: PrimitiveArray<t::Int64Type> = raw
                .as_primitive::<t::Int64Type>()
                .unary(|v| v.div_euclid(f / t));
            Value::array(Arc::new(p))
        };
        let values = scaled.to_array(n);
        let (values, errors) = match to {
            DataType::Time32(_) => {
                let narrow = self.checked_cast(&values, &DataType::Int32)?;
                let errors =
                    rename_overflow(narrow.clone(), &format!("cast to {}", sql_type_name(to)))
                        .errors;
                (narrow.to_array(n), errors)
            }
            _ => (values, Errors::none()),
        };
        Ok(Value::array(reinterpret_i64(&values, to.clone())?)
            .with_errors(scaled.errors)
            .with_errors(errors))
    }

    /// `TRY_CAST`: the cast, with NULL in the rows where it fails; the operand's own
    /// errors are kept.
    pub(super) fn try_cast(&self, mut v: Value, to: &DataType) -> Result<Value> {
        let operand_errors = std::mem::replace(&mut v.errors, Errors::none());
        // To and from VARCHAR: the row functions the JIT calls too (NULL for a bad
        // string, no error to build).
        if let Some(imp) = cast::try_cast_impl(&logical(v.data_type()), to) {
            return Ok(self.row(&imp, to, &[v]).with_errors(operand_errors));
        }
        let cast = self.cast(v, to)?;
        if cast.errors.is_empty() {
            return Ok(cast.with_errors(operand_errors));
        }
        let failed = cast.errors.any(self.len());
        let out = cast.to_array(self.len());
        let out = arrow::compute::nullif(&out, &BooleanArray::new(failed, None))?;
        Ok(Value::array(out).with_errors(operand_errors))
    }

    /// An arrow cast that fails on overflow; the failing rows are found with a safe
    /// cast (which makes them NULL) and reported.
    fn checked_cast(&self, a: &ArrayRef, to: &DataType) -> Result<Value> {
        let strict = CastOptions {
            safe: false,
            ..Default::default()
        };
        match cast_with_options(a, to, &strict) {
            Ok(out) => Ok(Value::array(out)),
            Err(_) => {
                let out = cast_with_options(a, to, &CastOptions::default())?;
                let failed = &valid_rows(a) & &!&valid_rows(&out);
                let what = format!("cast to {}", sql_type_name(to));
                Ok(Value::array(out).with_errors(Errors::of(ErrorKind::Overflow(what), failed)))
            }
        }
    }
}
