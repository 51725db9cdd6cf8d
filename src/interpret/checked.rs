//! The per-row slow path of checked arithmetic: maps and binary operations that
//! record, row by row, which rows divide by zero or overflow.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{self as t, ArrowPrimitiveType, DataType};

use crate::error::{Error, EvalError, Result};
use crate::functions::FuncId;
use crate::types::sql_type_name;

use super::errors::{overflow, ErrorKind, Errors};
use super::values::Value;

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
pub(super) fn checked_binary(
    func: FuncId,
    t: &DataType,
    l: &ArrayRef,
    r: &ArrayRef,
) -> Result<Value> {
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
