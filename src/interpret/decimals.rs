//! Decimal arithmetic row by row: negation and `abs`, rounding to a number of
//! places, and `+ - * %` checked against the result's precision.

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, PrimitiveArray};
use arrow::datatypes::{self as t, ArrowPrimitiveType, DataType};

use crate::error::Result;
use crate::functions::FuncId;

use super::checked::{arithmetic_errors, checked_map, checked_map_as};
use super::values::Value;

/// `-x` or `abs(x)` of decimals (exact: a decimal's range is symmetric; a value
/// outside its precision, which Arrow allows, may overflow).
pub(super) fn decimal_unary<T>(func: FuncId, p: &PrimitiveArray<T>) -> Result<Value>
where
    T: ArrowPrimitiveType,
    T::Native: crate::decimal::DecimalInt,
{
    use arrow::datatypes::ArrowNativeTypeOp;
    let what = if func == FuncId::Negate {
        "negation"
    } else {
        "abs"
    };
    checked_map(
        p,
        move |v: T::Native| {
            if func == FuncId::Negate || v < T::Native::ZERO {
                v.neg_checked().ok()
            } else {
                Some(v)
            }
        },
        what,
    )
}

/// `round`, `trunc`, `floor` or `ceil` of decimals to `places` decimal places (the
/// result of type `ret`, which [`crate::decimal::rounded_type`] gave; `None`: a NULL
/// number of places, so NULL); a result beyond `ret`'s precision is an overflow error.
pub(super) fn decimal_round(
    x: &ArrayRef,
    places: Option<i64>,
    direction: crate::decimal::Rounding,
    ret: &DataType,
) -> Result<Value> {
    fn run<T>(
        x: &ArrayRef,
        n: i64,
        direction: crate::decimal::Rounding,
        ret: &DataType,
    ) -> Result<Value>
    where
        T: ArrowPrimitiveType,
        T::Native: crate::decimal::DecimalInt,
    {
        use crate::decimal::{fits, round_value};
        let p = x.as_primitive::<T>();
        let scale = crate::types::decimal_parts(p.data_type()).map_or(0, |(_, s)| s);
        let precision = crate::types::decimal_parts(ret).map_or(0, |(p, _)| p);
        let round = |v| round_value(v, scale, n, direction).filter(|r| fits(*r, precision));
        checked_map_as(p, round, "rounding", ret)
    }
    let Some(n) = places else {
        return Ok(Value::array(arrow::array::new_null_array(ret, x.len())));
    };
    match x.data_type() {
        DataType::Decimal256(..) => run::<t::Decimal256Type>(x, n, direction, ret),
        _ => run::<t::Decimal128Type>(x, n, direction, ret),
    }
}

/// Decimal `+ - * %` row by row, in the result type `t` (the binder gave `+ - %`
/// operands of type `t`; `*` multiplies the unscaled values, whose scales add up):
/// a result beyond `t`'s precision is an overflow error, `%` by zero a division by zero.
pub(super) fn decimal_binary(
    func: FuncId,
    t: &DataType,
    l: &ArrayRef,
    r: &ArrayRef,
) -> Result<Value> {
    fn run<T>(func: FuncId, t: &DataType, l: &ArrayRef, r: &ArrayRef) -> Result<Value>
    where
        T: ArrowPrimitiveType,
        T::Native: crate::decimal::DecimalInt,
    {
        use arrow::datatypes::ArrowNativeTypeOp;
        let precision = crate::types::decimal_parts(t).map_or(0, |(p, _)| p);
        let (l, r) = (l.as_primitive::<T>(), r.as_primitive::<T>());
        let n = l.len();
        let mut zero = vec![false; n];
        let mut over = vec![false; n];
        let out: PrimitiveArray<T> = (0..n)
            .map(|i| {
                if l.is_null(i) || r.is_null(i) {
                    return None;
                }
                let (a, b) = (l.value(i), r.value(i));
                let v = match func {
                    FuncId::Add => a.add_checked(b).ok(),
                    FuncId::Subtract => a.sub_checked(b).ok(),
                    FuncId::Multiply => a.mul_checked(b).ok(),
                    _ if b.is_zero() => {
                        zero[i] = true;
                        return None;
                    }
                    _ => Some(a.mod_wrapping(b)),
                };
                let v = v.filter(|v| crate::decimal::fits(*v, precision));
                over[i] = v.is_none();
                v
            })
            .collect();
        let errors = arithmetic_errors(func, t, zero, over);
        Ok(Value::array(Arc::new(out.with_data_type(t.clone()))).with_errors(errors))
    }
    match l.data_type() {
        DataType::Decimal256(..) => run::<t::Decimal256Type>(func, t, l, r),
        _ if matches!(t, DataType::Decimal256(..)) => {
            // Decimal128 operands of a Decimal256 result: widened first.
            let (l, r) = (decimal_as_256(l)?, decimal_as_256(r)?);
            run::<t::Decimal256Type>(func, t, &l, &r)
        }
        _ => run::<t::Decimal128Type>(func, t, l, r),
    }
}

/// A `Decimal128` array's unscaled values as a `Decimal256` array (same scale).
fn decimal_as_256(a: &ArrayRef) -> Result<ArrayRef> {
    let p = a.as_primitive::<t::Decimal128Type>();
    let wide: PrimitiveArray<t::Decimal256Type> = p.unary(arrow::datatypes::i256::from_i128);
    let s = crate::types::decimal_parts(a.data_type()).map_or(0, |(_, s)| s);
    Ok(Arc::new(wide.with_data_type(DataType::Decimal256(76, s))))
}
