//! Checked arithmetic: arrow's kernels first, and where they fail a per-row pass
//! that records which rows divide by zero or overflow.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray, Scalar};
use arrow::buffer::BooleanBuffer;
use arrow::compute::kernels::{cmp, numeric};
use arrow::datatypes::{self as t, ArrowPrimitiveType, DataType};

use crate::error::{Error, EvalError, Result};
use crate::functions::FuncId;
use crate::scalar::ScalarValue;
use crate::types::{is_float, is_integer, sql_type_name};

use super::decimals::{decimal_binary, decimal_unary};
use super::errors::{overflow, ErrorKind, Errors};
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

pub(super) fn scale_checked(a: &ArrayRef, factor: i64, to: &DataType) -> Result<Value> {
    let p = a.as_primitive::<t::Int64Type>();
    let what = format!("cast to {}", sql_type_name(to));
    checked_map(p, move |v: i64| v.checked_mul(factor), &what).map(|v| rename_overflow(v, &what))
}

pub(super) fn rename_overflow(v: Value, what: &str) -> Value {
    let errors = Errors(
        v.errors
            .0
            .into_iter()
            .map(|(k, m)| {
                (
                    if let ErrorKind::Overflow(_) = k {
                        ErrorKind::Overflow(what.to_string())
                    } else {
                        k
                    },
                    m,
                )
            })
            .collect(),
    );
    Value {
        data: v.data,
        errors,
    }
}

/// Applies `f` to every valid value; rows where it returns `None` become NULL and
/// are reported as overflow errors.
pub(super) fn checked_map<T: ArrowPrimitiveType>(
    p: &PrimitiveArray<T>,
    f: impl Fn(T::Native) -> Option<T::Native>,
    what: &str,
) -> Result<Value> {
    checked_map_as(p, f, what, p.data_type())
}

/// [`checked_map`] into values of type `out` (the same Arrow primitive type, with
/// another precision and scale: a decimal rounded to fewer places).
pub(super) fn checked_map_as<T: ArrowPrimitiveType>(
    p: &PrimitiveArray<T>,
    f: impl Fn(T::Native) -> Option<T::Native>,
    what: &str,
    out_type: &DataType,
) -> Result<Value> {
    let mut failed = vec![false; p.len()];
    let out: PrimitiveArray<T> = p
        .iter()
        .zip(failed.iter_mut())
        .map(|(v, fail)| {
            v.and_then(|v| {
                let r = f(v);
                *fail = r.is_none();
                r
            })
        })
        .collect();
    let out = out.with_data_type(out_type.clone());
    let kind = overflow(what, out_type);
    let kind = if what.starts_with("cast") {
        ErrorKind::Overflow(what.to_string())
    } else {
        kind
    };
    Ok(Value::array(Arc::new(out)).with_errors(Errors::of(kind, BooleanBuffer::from(failed))))
}

/// The errors of `func` over rows of type `t`: division by zero where `zero` is
/// set, overflow (named by the operation) where `over` is.
pub(super) fn arithmetic_errors(
    func: FuncId,
    t: &DataType,
    zero: Vec<bool>,
    over: Vec<bool>,
) -> Errors {
    let what = match func {
        FuncId::Add => "addition",
        FuncId::Subtract => "subtraction",
        FuncId::Multiply => "multiplication",
        FuncId::Divide => "division",
        _ => "modulo",
    };
    Errors::of(ErrorKind::DivisionByZero, BooleanBuffer::from(zero))
        .union(Errors::of(overflow(what, t), BooleanBuffer::from(over)))
}

/// Binary arithmetic row by row, recording division by zero and overflow per row.
fn checked_binary(func: FuncId, t: &DataType, l: &ArrayRef, r: &ArrayRef) -> Result<Value> {
    macro_rules! run {
        ($T:ty, $int:expr) => {{
            let (l, r) = (l.as_primitive::<$T>(), r.as_primitive::<$T>());
            let n = l.len();
            let mut zero = vec![false; n];
            let mut over = vec![false; n];
            let out: PrimitiveArray<$T> = (0..n)
                .map(|i| {
                    if l.is_null(i) || r.is_null(i) {
                        return None;
                    }
                    let (a, b) = (l.value(i), r.value(i));
                    let divides = matches!(func, FuncId::Divide | FuncId::Modulo);
                    #[allow(clippy::float_cmp)]
                    if divides && b == <$T as ArrowPrimitiveType>::Native::default() {
                        zero[i] = true;
                        return None;
                    }
                    let v = arith::<$T>(func, a, b, $int);
                    over[i] = v.is_none();
                    v
                })
                .collect();
            Ok(Value::array(Arc::new(out)).with_errors(arithmetic_errors(func, t, zero, over)))
        }};
    }
    match t {
        DataType::Int8 => run!(t::Int8Type, true),
        DataType::Int16 => run!(t::Int16Type, true),
        DataType::Int32 => run!(t::Int32Type, true),
        DataType::Int64 => run!(t::Int64Type, true),
        DataType::UInt8 => run!(t::UInt8Type, true),
        DataType::UInt16 => run!(t::UInt16Type, true),
        DataType::UInt32 => run!(t::UInt32Type, true),
        DataType::UInt64 => run!(t::UInt64Type, true),
        DataType::Float32 => run!(t::Float32Type, false),
        DataType::Float64 => run!(t::Float64Type, false),
        other => Err(Error::Eval(EvalError::Other(format!(
            "no arithmetic for {other}"
        )))),
    }
}

/// One checked arithmetic operation (the divisor is known to be non-zero).
fn arith<T: ArrowPrimitiveType>(
    func: FuncId,
    a: T::Native,
    b: T::Native,
    _int: bool,
) -> Option<T::Native>
where
    T::Native: arrow::datatypes::ArrowNativeTypeOp,
{
    use arrow::datatypes::ArrowNativeTypeOp;
    match func {
        FuncId::Add => a.add_checked(b).ok(),
        FuncId::Subtract => a.sub_checked(b).ok(),
        FuncId::Multiply => a.mul_checked(b).ok(),
        FuncId::Divide => a.div_checked(b).ok(),
        // MIN % -1 is 0 (as in PostgreSQL and arrow's rem kernel), not an overflow.
        _ => Some(a.mod_wrapping(b)),
    }
}
