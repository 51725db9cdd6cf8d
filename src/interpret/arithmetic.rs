//! Arithmetic and `-x` / `abs(x)`, checked: arrow's kernels first, and where they
//! fail the per-row pass of [`super::checked`].

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray, Scalar};
use arrow::compute::kernels::{cmp, numeric};
use arrow::datatypes::{self as t, ArrowPrimitiveType, DataType};

use crate::error::{EvalError, Result};
use crate::functions::FuncId;
use crate::scalar::ScalarValue;
use crate::types::{is_float, is_integer};

use super::checked::{checked_binary, checked_map};
use super::decimals::{decimal_binary, decimal_unary};
use super::values::{comparable, expand, true_rows, Value};
use super::Interpreter;

impl Interpreter<'_> {
    pub(super) fn arithmetic(
        &self,
        func: FuncId,
        t: &DataType,
        l: &Value,
        r: &Value,
    ) -> Result<Value> {
        let n = self.len();
        if crate::types::is_decimal(t) {
            let (la, ra) = (l.to_array(n), r.to_array(n));
            return decimal_binary(func, t, &la, &ra);
        }
        let float = is_float(t);
        // Fast path: arrow's checked kernels; floats only need a zero-divisor check.
        let fast = if float && matches!(func, FuncId::Divide | FuncId::Modulo) {
            // -0.0 is a zero divisor too: compare normalized values.
            let divisor = comparable(r)?;
            let zero_value = ScalarValue::Float64(0.0)
                .convert_exact(t)
                .unwrap_or(ScalarValue::Float64(0.0));
            let zero = cmp::eq(&*divisor.datum(), &Scalar::new(zero_value.to_array(1)))?;
            if true_rows(&zero).count_set_bits() == 0 {
                Some(if func == FuncId::Divide {
                    numeric::div(&*l.datum(), &*r.datum())?
                } else {
                    numeric::rem(&*l.datum(), &*r.datum())?
                })
            } else {
                None
            }
        } else {
            let (ld, rd) = (l.datum(), r.datum());
            let result = match func {
                FuncId::Add => numeric::add(ld.as_ref(), rd.as_ref()),
                FuncId::Subtract => numeric::sub(ld.as_ref(), rd.as_ref()),
                FuncId::Multiply => numeric::mul(ld.as_ref(), rd.as_ref()),
                FuncId::Divide => numeric::div(ld.as_ref(), rd.as_ref()),
                _ => numeric::rem(ld.as_ref(), rd.as_ref()),
            };
            result.ok()
        };
        if let Some(result) = fast {
            let all_scalar = l.is_scalar() && r.is_scalar();
            let result = if all_scalar && n != 1 {
                expand(&result, n)
            } else {
                result
            };
            return Ok(Value::array(result));
        }
        // Slow path: per row, recording which rows fail and why.
        let (la, ra) = (l.to_array(n), r.to_array(n));
        checked_binary(func, t, &la, &ra)
    }

    pub(super) fn unary_checked(&self, func: FuncId, a: &ArrayRef) -> Result<Value> {
        macro_rules! signed {
            ($T:ty) => {{
                let p = a.as_primitive::<$T>();
                let f = if func == FuncId::Negate {
                    |v: <$T as ArrowPrimitiveType>::Native| v.checked_neg()
                } else {
                    |v: <$T as ArrowPrimitiveType>::Native| v.checked_abs()
                };
                checked_map(
                    p,
                    f,
                    if func == FuncId::Negate {
                        "negation"
                    } else {
                        "abs"
                    },
                )
            }};
        }
        macro_rules! float {
            ($T:ty) => {{
                let p = a.as_primitive::<$T>();
                let r: PrimitiveArray<$T> = if func == FuncId::Negate {
                    p.unary(|v| -v)
                } else {
                    p.unary(|v| v.abs())
                };
                Ok(Value::array(Arc::new(r)))
            }};
        }
        match a.data_type() {
            DataType::Int8 => signed!(t::Int8Type),
            DataType::Int16 => signed!(t::Int16Type),
            DataType::Int32 => signed!(t::Int32Type),
            DataType::Int64 => signed!(t::Int64Type),
            DataType::Float32 => float!(t::Float32Type),
            DataType::Float64 => float!(t::Float64Type),
            // abs of an unsigned integer is the value itself
            other if is_integer(other) => Ok(Value::array(a.clone())),
            DataType::Decimal128(..) => {
                let p = a.as_primitive::<t::Decimal128Type>();
                decimal_unary(func, p)
            }
            DataType::Decimal256(..) => {
                let p = a.as_primitive::<t::Decimal256Type>();
                decimal_unary(func, p)
            }
            other => Err(EvalError::Other(format!("no {func:?} for {other}")).into()),
        }
    }
}
