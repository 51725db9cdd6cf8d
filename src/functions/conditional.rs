//! Conditional functions: `greatest` and `least`. (`coalesce`, `nullif`, `ifnull`/
//! `nvl` and `nvl2` are special forms of the binder, `if` one of the parser: they
//! evaluate an argument only for the rows that use it.)

use std::cmp::Ordering;

use arrow::datatypes::{
    ArrowPrimitiveType, Date32Type, Float32Type, Float64Type, Int16Type, Int32Type, Int64Type,
    Int8Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_schema::{DataType, TimeUnit};

use super::operators::comparable_types;
use super::row::{variadic, Bool, RowImpl, Utf8};
use super::{Inline, Lowering, NullBehavior, Registry};

/// PostgreSQL's order of floats: NaN above everything (infinity included), -0.0
/// equal to 0.0.
fn float_order(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}

fn ord<T: Ord>(a: T, b: T) -> Ordering {
    a.cmp(&b)
}

/// The non-NULL value that is `want` (greater or less) than every other; of equal
/// ones the first (as PostgreSQL); NULL when all are NULL.
fn pick<V: Copy>(values: &[Option<V>], want: Ordering, cmp: fn(V, V) -> Ordering) -> Option<V> {
    let mut best: Option<V> = None;
    for v in values.iter().flatten().copied() {
        best = match best {
            Some(b) if cmp(v, b) != want => Some(b),
            _ => Some(v),
        };
    }
    best
}

fn extreme<T: ArrowPrimitiveType>(
    want: Ordering,
    cmp: fn(T::Native, T::Native) -> Ordering,
) -> RowImpl {
    variadic::<T, T, _>(false, move |values: &[Option<T::Native>]| {
        Ok(pick(values, want, cmp))
    })
}

/// `greatest` (`want` = Greater) or `least` over values of type `t`.
fn implementation(t: &DataType, want: Ordering) -> Option<RowImpl> {
    use DataType::*;
    use TimeUnit::*;
    Some(match t {
        Int8 => extreme::<Int8Type>(want, ord),
        Int16 => extreme::<Int16Type>(want, ord),
        Int32 => extreme::<Int32Type>(want, ord),
        Int64 => extreme::<Int64Type>(want, ord),
        UInt8 => extreme::<UInt8Type>(want, ord),
        UInt16 => extreme::<UInt16Type>(want, ord),
        UInt32 => extreme::<UInt32Type>(want, ord),
        UInt64 => extreme::<UInt64Type>(want, ord),
        Float32 => extreme::<Float32Type>(want, |a, b| float_order(a.into(), b.into())),
        Float64 => extreme::<Float64Type>(want, float_order),
        Date32 => extreme::<Date32Type>(want, ord),
        Timestamp(Second, _) => extreme::<TimestampSecondType>(want, ord),
        Timestamp(Millisecond, _) => extreme::<TimestampMillisecondType>(want, ord),
        Timestamp(Microsecond, _) => extreme::<TimestampMicrosecondType>(want, ord),
        Timestamp(Nanosecond, _) => extreme::<TimestampNanosecondType>(want, ord),
        Boolean => variadic::<Bool, Bool, _>(false, move |values: &[Option<bool>]| {
            Ok(pick(values, want, ord))
        }),
        Utf8 => variadic::<self::Utf8, self::Utf8, _>(false, move |values: &[Option<&str>]| {
            Ok(pick(values, want, ord).map(str::to_string))
        }),
        _ => return None,
    })
}

/// The conditional forms the binder rewrites into `COALESCE` and `CASE` (so an
/// argument is evaluated, and can fail, only for rows that use it).
fn register_forms(r: &mut Registry) {
    use NullBehavior::DecidesItself;
    r.function("coalesce")
        .form(
            "coalesce(x, …)",
            DecidesItself,
            "the first argument that is not NULL (NULL if all are); later arguments are \
             not evaluated for rows an earlier one decides",
        )
        .example("coalesce(NULL, 2, 3)", "2");
    r.function("nullif")
        .form("nullif(a, b)", DecidesItself, "NULL when a = b, else a")
        .example("nullif(1, 1)", "");
    r.function("ifnull")
        .alias("nvl")
        .form(
            "ifnull(a, b)",
            DecidesItself,
            "a when it is not NULL, else b: coalesce(a, b)",
        )
        .example("ifnull(NULL, 'x')", "x");
    r.function("nvl2")
        .form(
            "nvl2(a, b, c)",
            DecidesItself,
            "b when a is not NULL, else c",
        )
        .example("nvl2(1, 'set', 'unset')", "set");
    r.function("if")
        .form(
            "if(condition, a, b)",
            DecidesItself,
            "a when the condition is TRUE, else b: CASE WHEN condition THEN a ELSE b END",
        )
        .example("if(1 < 2, 'yes', 'no')", "yes");
}

pub(super) fn register(r: &mut Registry) {
    register_forms(r);
    for t in comparable_types() {
        for (name, want, doc) in [
            (
                "greatest",
                Ordering::Greater,
                "the largest of the values, NULLs ignored (NULL only if all are NULL); NaN is the largest float, strings compare by bytes",
            ),
            (
                "least",
                Ordering::Less,
                "the smallest of the values, NULLs ignored (NULL only if all are NULL); NaN is the largest float, strings compare by bytes",
            ),
        ] {
            if let Some(imp) = implementation(&t, want) {
                let f = r
                    .function(name)
                    .variadic_sig(std::slice::from_ref(&t), t.clone(), doc, imp);
                if !matches!(t, DataType::Utf8 | DataType::Boolean) {
                    f.lowering(Lowering::Inline(Inline::Extreme {
                        greatest: want == Ordering::Greater,
                    }));
                }
            }
        }
    }
    r.function("greatest")
        .example("greatest(1, NULL, 3.5)", "3.5")
        .example("greatest('apple', 'banana')", "banana");
    r.function("least")
        .example("least(1, NULL, 3)", "1")
        .example("least(DATE '2024-03-01', DATE '2023-12-31')", "2023-12-31");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_is_largest_and_ties_keep_the_first() {
        let g = |v: &[Option<f64>]| pick(v, Ordering::Greater, float_order);
        let l = |v: &[Option<f64>]| pick(v, Ordering::Less, float_order);
        assert!(g(&[Some(1.0), Some(f64::NAN), Some(f64::INFINITY)])
            .unwrap()
            .is_nan());
        assert_eq!(
            l(&[Some(f64::NAN), Some(f64::INFINITY)]),
            Some(f64::INFINITY)
        );
        assert!(g(&[Some(-0.0), Some(0.0)]).unwrap().is_sign_negative());
        assert!(l(&[Some(0.0), Some(-0.0)]).unwrap().is_sign_positive());
        assert_eq!(g(&[None, None]), None);
        assert_eq!(l(&[None, Some(2.0), None]), Some(2.0));
    }
}
