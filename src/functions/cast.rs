//! Casts between VARCHAR and the other types, written once for both back ends.
//!
//! `CAST(x AS VARCHAR)` gives PostgreSQL's text form of `x`: integers as they are,
//! floats as the shortest text that reads back as the same value (`0.1`, `1e+20`,
//! `NaN`, `-Infinity`, `-0`), booleans `true`/`false`, dates `1994-01-01` (years
//! before 1 as `0044-03-15 BC`), timestamps `1994-01-01 12:00:00` with a fraction
//! only when there is one, and timestamps with a time zone in that zone, with its
//! offset (`1994-01-01 13:00:00+01`). A BLOB's text form is DuckDB's: printable
//! ASCII as it is, other bytes and the backslash as `\xHH` (`A\xFF\x00`), which
//! `CAST(s AS BLOB)` reads back.
//!
//! `CAST(s AS t)` reads `s` as a literal of `t` is read ([`ScalarValue::parse`]), so a
//! column and a literal cast accept the same strings; an invalid string is an error
//! in PostgreSQL's words (`invalid input syntax for type integer: "abc"`), and
//! `TRY_CAST` makes it a NULL instead.
//!
//! The binder keeps `CAST` as syntax ([`TypedKind::Cast`](crate::typed::TypedKind));
//! the registry lists the conversions under the name `cast` (one signature per
//! pair of types) so the reference documents them, and the interpreter and the
//! lowering get their implementations from [`cast_impl`] and [`try_cast_impl`].

use arrow::array::timezone::Tz;
use arrow::datatypes::{
    i256, Date32Type, Decimal128Type, Decimal256Type, Float32Type, Float64Type, Int16Type,
    Int32Type, Int64Type, Int8Type, IntervalMonthDayNanoType, Time32MillisecondType,
    Time32SecondType, Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type,
    UInt64Type, UInt8Type,
};
use arrow_schema::{DataType, TimeUnit};
use chrono::{Offset, TimeZone};

use super::row::{map1, map1_with, Blob, Bool, Text, Utf8, Written};
use super::{Lowering, Registry, RowImpl};
use crate::scalar::{format_blob, LiteralError, ScalarValue};
use crate::time::{clock, format_time};
use crate::types::{sql_type_name, units_per_second};

/// The types a VARCHAR casts to and from (a timestamp of each unit matches any
/// time zone).
fn castable_types() -> Vec<DataType> {
    use DataType::*;
    let mut types = vec![
        Boolean, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Float32, Float64,
        Date32, Binary,
    ];
    for unit in [
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
    ] {
        types.push(Timestamp(unit, None));
    }
    for unit in [
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
    ] {
        types.push(crate::types::time_type(unit));
    }
    types.push(Interval(arrow_schema::IntervalUnit::MonthDayNano));
    types
}

/// The implementation of `CAST(x AS to)` for `x` of type `from`, where one of the
/// two is VARCHAR (and the other is not); `None` for other pairs.
pub(crate) fn cast_impl(from: &DataType, to: &DataType) -> Option<RowImpl> {
    if let Some(imp) = decimal_cast(from, to, false) {
        return Some(imp);
    }
    match (from, to) {
        (DataType::Utf8, DataType::Utf8) => None,
        (_, DataType::Utf8) => to_text(from, false).map(|imp| imp.named("CAST")),
        (DataType::Utf8, _) => from_text(to, false),
        _ => None,
    }
}

/// The implementation of `TRY_CAST(x AS to)` for the pairs of [`cast_impl`]: NULL
/// where the cast fails, never an error.
pub(crate) fn try_cast_impl(from: &DataType, to: &DataType) -> Option<RowImpl> {
    if let Some(imp) = decimal_cast(from, to, true) {
        return Some(imp);
    }
    match (from, to) {
        (DataType::Utf8, DataType::Utf8) => None,
        (DataType::Utf8, _) => from_text(to, true),
        (_, DataType::Utf8) => to_text(from, true).map(|imp| imp.named("TRY_CAST")),
        _ => None,
    }
}

/// A number on its way into or out of a decimal: an exact value (`v / 10^scale`,
/// integers at scale 0, with the precision of its type) or a float.
#[derive(Clone, Copy)]
enum Number {
    Exact(i256, i8, u8),
    Float(f64),
}

impl Number {
    fn text(self) -> String {
        match self {
            Number::Exact(v, s, _) => crate::decimal::format(v, s),
            Number::Float(f) => format_f64(f),
        }
    }
}

/// Casts between a decimal and a number of another type or another decimal
/// (`None` when neither side is a decimal, or the other is not a number): reducing
/// the scale rounds half away from zero (so `CAST(2.5 AS INTEGER)` is 3, as in
/// PostgreSQL), a float becomes the decimal its shortest text reads as, a decimal
/// a float as [`crate::decimal::to_f64_cast`] says (a `REAL` through the double); a value that does not fit is an error (NULL with
/// `try_cast`). Decimal and VARCHAR: the exact text, and the literal reader.
fn decimal_cast(from: &DataType, to: &DataType, try_cast: bool) -> Option<RowImpl> {
    use crate::types::{is_decimal, is_numeric};
    let numeric = |t: &DataType| is_numeric(t) || is_decimal(t);
    if !(is_decimal(from) || is_decimal(to)) || !numeric(from) || !numeric(to) {
        return None;
    }
    let target = to.clone();
    let out_of_range = move |n: Number| {
        format!(
            "value {} is out of range for type {}",
            n.text(),
            sql_type_name(&target)
        )
    };
    let decimal_target = crate::types::decimal_parts(to);
    // The exact value of the target type, or why not.
    let to_exact = move |n: Number| -> Option<i256> {
        let (p, s) = decimal_target.unwrap_or((crate::types::DECIMAL256_MAX_PRECISION, 0));
        let v = match n {
            Number::Exact(v, from, _) => crate::decimal::rescale(v, from, s)?,
            Number::Float(f) => crate::decimal::from_f64::<i256>(f, p, s).ok()?,
        };
        crate::decimal::fits(v, p).then_some(v)
    };
    macro_rules! finish {
        ($imp:expr) => {{
            let imp = $imp;
            Some(if try_cast { imp } else { imp.fallible() })
        }};
    }
    // The result of the closure for one value: NULL when `try_cast` fails.
    macro_rules! outcome {
        ($value:expr, $n:expr) => {
            match $value {
                Some(v) => Ok(Some(v)),
                None if try_cast => Ok(None),
                None => Err(out_of_range($n)),
            }
        };
    }
    macro_rules! into {
        ($A:ty, $read:expr) => {{
            let read = $read;
            match to {
                DataType::Decimal128(..) => finish!(map1::<$A, Decimal128Type, _>(move |x| {
                    let n = read(x);
                    outcome!(to_exact(n).and_then(|v| v.to_i128()), n)
                })),
                DataType::Decimal256(..) => finish!(map1::<$A, Decimal256Type, _>(move |x| {
                    let n = read(x);
                    outcome!(to_exact(n), n)
                })),
                DataType::Float64 => finish!(map1::<$A, Float64Type, _>(move |x| match read(x) {
                    Number::Exact(v, s, p) => Ok(Some(crate::decimal::to_f64_cast(v, p, s))),
                    Number::Float(f) => Ok(Some(f)),
                })),
                DataType::Float32 => finish!(map1::<$A, Float32Type, _>(move |x| match read(x) {
                    Number::Exact(v, s, p) => Ok(Some(crate::decimal::to_f64_cast(v, p, s) as f32)),
                    Number::Float(f) => Ok(Some(f as f32)),
                })),
                DataType::Int8 => into!(@int $A, read, Int8Type, i8),
                DataType::Int16 => into!(@int $A, read, Int16Type, i16),
                DataType::Int32 => into!(@int $A, read, Int32Type, i32),
                DataType::Int64 => into!(@int $A, read, Int64Type, i64),
                DataType::UInt8 => into!(@int $A, read, UInt8Type, u8),
                DataType::UInt16 => into!(@int $A, read, UInt16Type, u16),
                DataType::UInt32 => into!(@int $A, read, UInt32Type, u32),
                DataType::UInt64 => into!(@int $A, read, UInt64Type, u64),
                _ => None,
            }
        }};
        (@int $A:ty, $read:expr, $R:ty, $native:ty) => {{
            let read = $read;
            finish!(map1::<$A, $R, _>(move |x| {
                let n = read(x);
                let v = match n {
                    Number::Exact(v, s, _) => crate::decimal::to_integer(v, s),
                    Number::Float(_) => None,
                };
                outcome!(v.and_then(|v| <$native>::try_from(v).ok()), n)
            }))
        }};
    }
    macro_rules! int_from {
        ($A:ty) => {
            into!($A, |x| Number::Exact(i256::from_i128(x as i128), 0, 20))
        };
    }
    match from {
        DataType::Decimal128(p, s) => {
            let (p, s) = (*p, *s);
            into!(Decimal128Type, move |x: i128| Number::Exact(
                i256::from_i128(x),
                s,
                p
            ))
        }
        DataType::Decimal256(p, s) => {
            let (p, s) = (*p, *s);
            into!(Decimal256Type, move |x: i256| Number::Exact(x, s, p))
        }
        DataType::Float32 => into!(Float32Type, |x: f32| Number::Float(x as f64)),
        DataType::Float64 => into!(Float64Type, Number::Float),
        DataType::Int8 => int_from!(Int8Type),
        DataType::Int16 => int_from!(Int16Type),
        DataType::Int32 => int_from!(Int32Type),
        DataType::Int64 => int_from!(Int64Type),
        DataType::UInt8 => int_from!(UInt8Type),
        DataType::UInt16 => int_from!(UInt16Type),
        DataType::UInt32 => int_from!(UInt32Type),
        DataType::UInt64 => int_from!(UInt64Type),
        _ => None,
    }
}

/// PostgreSQL's name of a type in input errors (`integer`, `double precision`);
/// DuckDB's for the types PostgreSQL lacks.
fn input_type_name(t: &DataType) -> String {
    match t {
        DataType::Boolean => "boolean".into(),
        DataType::Int16 => "smallint".into(),
        DataType::Int32 => "integer".into(),
        DataType::Int64 => "bigint".into(),
        DataType::Float32 => "real".into(),
        DataType::Float64 => "double precision".into(),
        DataType::Date32 => "date".into(),
        DataType::Timestamp(_, None) => "timestamp".into(),
        DataType::Timestamp(_, Some(_)) => "timestamp with time zone".into(),
        t if crate::types::is_time(t) => "time".into(),
        other => sql_type_name(other).to_lowercase(),
    }
}

/// The error for a string `s` that is not a value of `to`, in PostgreSQL's words.
fn input_error(e: LiteralError, s: &str, to: &DataType) -> String {
    let name = input_type_name(to);
    match (e, to) {
        (LiteralError::OutOfRange, DataType::Date32) => format!("date out of range: \"{s}\""),
        (LiteralError::OutOfRange, DataType::Timestamp(..)) => {
            format!("timestamp out of range: \"{s}\"")
        }
        (LiteralError::OutOfRange, DataType::Float32 | DataType::Float64) => {
            format!("\"{s}\" is out of range for type {name}")
        }
        (LiteralError::OutOfRange, _) => format!("value \"{s}\" is out of range for type {name}"),
        (LiteralError::TooPrecise, _) => format!(
            "invalid input syntax for type {}: \"{s}\" (more fractional digits than the type holds)",
            sql_type_name(to).to_lowercase()
        ),
        _ => format!("invalid input syntax for type {name}: \"{s}\""),
    }
}

/// `CAST(s AS to)` (or, with `try_cast`, `TRY_CAST`).
fn from_text(to: &DataType, try_cast: bool) -> Option<RowImpl> {
    macro_rules! parse {
        ($T:ty, $pat:pat => $v:expr) => {{
            let to = to.clone();
            let imp = map1::<Utf8, $T, _>(move |s: &str| match ScalarValue::parse(s, &to) {
                Ok($pat) => Ok(Some($v)),
                Err(_) if try_cast => Ok(None),
                Err(e) => Err(input_error(e, s, &to)),
                // `parse` gives a value of the type asked for.
                Ok(_) => Err(input_error(LiteralError::Invalid, s, &to)),
            });
            if try_cast {
                imp
            } else {
                imp.fallible()
            }
        }};
    }
    use ScalarValue as V;
    Some(match to {
        DataType::Boolean => parse!(Bool, V::Boolean(v) => v),
        DataType::Int8 => parse!(Int8Type, V::Int8(v) => v),
        DataType::Int16 => parse!(Int16Type, V::Int16(v) => v),
        DataType::Int32 => parse!(Int32Type, V::Int32(v) => v),
        DataType::Int64 => parse!(Int64Type, V::Int64(v) => v),
        DataType::UInt8 => parse!(UInt8Type, V::UInt8(v) => v),
        DataType::UInt16 => parse!(UInt16Type, V::UInt16(v) => v),
        DataType::UInt32 => parse!(UInt32Type, V::UInt32(v) => v),
        DataType::UInt64 => parse!(UInt64Type, V::UInt64(v) => v),
        DataType::Float32 => parse!(Float32Type, V::Float32(v) => v),
        DataType::Float64 => parse!(Float64Type, V::Float64(v) => v),
        DataType::Decimal128(..) => parse!(Decimal128Type, V::Decimal128(v, ..) => v),
        DataType::Decimal256(..) => parse!(Decimal256Type, V::Decimal256(v, ..) => v),
        DataType::Date32 => parse!(Date32Type, V::Date32(v) => v),
        DataType::Binary => parse!(Blob, V::Binary(v) => v),
        DataType::Timestamp(TimeUnit::Second, _) => {
            parse!(TimestampSecondType, V::Timestamp(v, ..) => v)
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            parse!(TimestampMillisecondType, V::Timestamp(v, ..) => v)
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            parse!(TimestampMicrosecondType, V::Timestamp(v, ..) => v)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            parse!(TimestampNanosecondType, V::Timestamp(v, ..) => v)
        }
        // A time of day fits a Time32 in seconds and milliseconds.
        DataType::Time32(TimeUnit::Second) => parse!(Time32SecondType, V::Time(v, _) => v as i32),
        DataType::Time32(TimeUnit::Millisecond) => {
            parse!(Time32MillisecondType, V::Time(v, _) => v as i32)
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            parse!(Time64MicrosecondType, V::Time(v, _) => v)
        }
        DataType::Time64(TimeUnit::Nanosecond) => parse!(Time64NanosecondType, V::Time(v, _) => v),
        DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano) => {
            parse!(IntervalMonthDayNanoType, V::IntervalMonthDayNano(v) => v)
        }
        _ => return None,
    })
}

/// `CAST(x AS VARCHAR)` for `x` of type `from` (or, with `try_cast`, `TRY_CAST`:
/// every value has a text form, but a timestamp in a zone Arrow cannot read is
/// then NULL rather than an error).
fn to_text(from: &DataType, try_cast: bool) -> Option<RowImpl> {
    macro_rules! display {
        ($T:ty) => {
            map1_with::<$T, Written, _>(|v, out: &mut Text| {
                use std::fmt::Write;
                // Writing to a `String` cannot fail.
                let _ = write!(out, "{v}");
                Ok(Some(()))
            })
        };
    }
    macro_rules! timestamp {
        ($T:ty, $unit:expr, $tz:expr) => {{
            match $tz {
                None => map1::<$T, Utf8, _>(|v: i64| Ok(Some(format_timestamp(v, $unit, None)))),
                Some(name) => match zone(name) {
                    Ok(tz) => map1::<$T, Utf8, _>(move |v: i64| {
                        Ok(Some(format_timestamp(v, $unit, Some(&tz))))
                    }),
                    Err(_) if try_cast => map1::<$T, Utf8, _>(|_: i64| Ok(None)),
                    Err(message) => {
                        map1::<$T, Utf8, _>(move |_: i64| Err(message.clone())).fallible()
                    }
                },
            }
        }};
    }
    Some(match from {
        DataType::Boolean => {
            map1::<Bool, Utf8, _>(|b: bool| Ok(Some(if b { "true" } else { "false" }.to_string())))
        }
        DataType::Int8 => display!(Int8Type),
        DataType::Int16 => display!(Int16Type),
        DataType::Int32 => display!(Int32Type),
        DataType::Int64 => display!(Int64Type),
        DataType::UInt8 => display!(UInt8Type),
        DataType::UInt16 => display!(UInt16Type),
        DataType::UInt32 => display!(UInt32Type),
        DataType::UInt64 => display!(UInt64Type),
        DataType::Float32 => map1::<Float32Type, Utf8, _>(|v: f32| Ok(Some(format_f32(v)))),
        DataType::Float64 => map1::<Float64Type, Utf8, _>(|v: f64| Ok(Some(format_f64(v)))),
        DataType::Date32 => map1::<Date32Type, Utf8, _>(|d: i32| Ok(Some(format_date(d.into())))),
        DataType::Binary => map1::<Blob, Utf8, _>(|b: &[u8]| Ok(Some(format_blob(b)))),
        DataType::Decimal128(_, s) => {
            let s = *s;
            map1::<Decimal128Type, Utf8, _>(move |v: i128| Ok(Some(crate::decimal::format(v, s))))
        }
        DataType::Decimal256(_, s) => {
            let s = *s;
            map1::<Decimal256Type, Utf8, _>(move |v: i256| Ok(Some(crate::decimal::format(v, s))))
        }
        DataType::Timestamp(unit, tz) => {
            let tz = tz.as_deref();
            match unit {
                TimeUnit::Second => timestamp!(TimestampSecondType, TimeUnit::Second, tz),
                TimeUnit::Millisecond => {
                    timestamp!(TimestampMillisecondType, TimeUnit::Millisecond, tz)
                }
                TimeUnit::Microsecond => {
                    timestamp!(TimestampMicrosecondType, TimeUnit::Microsecond, tz)
                }
                TimeUnit::Nanosecond => {
                    timestamp!(TimestampNanosecondType, TimeUnit::Nanosecond, tz)
                }
            }
        }
        DataType::Time32(TimeUnit::Second) => map1::<Time32SecondType, Utf8, _>(|v: i32| {
            Ok(Some(format_time(v.into(), TimeUnit::Second)))
        }),
        DataType::Time32(TimeUnit::Millisecond) => {
            map1::<Time32MillisecondType, Utf8, _>(|v: i32| {
                Ok(Some(format_time(v.into(), TimeUnit::Millisecond)))
            })
        }
        DataType::Time64(TimeUnit::Microsecond) => {
            map1::<Time64MicrosecondType, Utf8, _>(|v: i64| {
                Ok(Some(format_time(v, TimeUnit::Microsecond)))
            })
        }
        DataType::Time64(TimeUnit::Nanosecond) => {
            map1::<Time64NanosecondType, Utf8, _>(|v: i64| {
                Ok(Some(format_time(v, TimeUnit::Nanosecond)))
            })
        }
        DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano) => {
            map1::<IntervalMonthDayNanoType, Utf8, _>(|v| Ok(Some(format_interval(v))))
        }
        _ => return None,
    })
}

/// The time zone an Arrow type names (`UTC`, `+01:00`, `Europe/Paris`).
fn zone(name: &str) -> Result<Tz, String> {
    let name = if name.eq_ignore_ascii_case("utc") || name == "Z" {
        "+00:00"
    } else {
        name
    };
    name.parse::<Tz>()
        .map_err(|_| format!("time zone \"{name}\" not recognized"))
}

/// A float as PostgreSQL 12+ prints it: the shortest digits that read back as the
/// same value (`sci` is Rust's `{:e}` of it, which has them), in positional
/// notation when the decimal exponent is in `-4..cutoff` (`cutoff` is 15 for
/// DOUBLE and 6 for REAL, as `%g` with DBL_DIG / FLT_DIG), else as `1.5e+20`.
fn pg_float(sci: &str, cutoff: i32) -> String {
    let (negative, body) = match sci.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, sci),
    };
    let (mantissa, exp) = body.split_once('e').unwrap_or((body, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    if (-4..cutoff).contains(&exp) {
        if exp >= 0 {
            let whole = exp as usize + 1;
            if digits.len() <= whole {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', whole - digits.len()));
            } else {
                out.push_str(&digits[..whole]);
                out.push('.');
                out.push_str(&digits[whole..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push_str(&format!(
            "e{}{:02}",
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        ));
    }
    out
}

/// `NaN`, `Infinity`, `-Infinity`, or `None` for a finite value.
fn special_float(nan: bool, infinite: bool, negative: bool) -> Option<String> {
    if nan {
        Some("NaN".into())
    } else if infinite {
        Some(if negative { "-Infinity" } else { "Infinity" }.into())
    } else {
        None
    }
}

/// A DOUBLE's text form, as PostgreSQL's `float8out`.
pub(crate) fn format_f64(v: f64) -> String {
    special_float(v.is_nan(), v.is_infinite(), v < 0.0)
        .unwrap_or_else(|| pg_float(&format!("{v:e}"), 15))
}

/// A REAL's text form, as PostgreSQL's `float4out`.
pub(crate) fn format_f32(v: f32) -> String {
    special_float(v.is_nan(), v.is_infinite(), v < 0.0)
        .unwrap_or_else(|| pg_float(&format!("{v:e}"), 6))
}

/// The proleptic Gregorian (year, month, day) of a day count since 1970-01-01
/// (Howard Hinnant's `civil_from_days`; exact for every `i64` day count used here).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD` for a day count, and whether the year is before 1 (printed as
/// PostgreSQL does: year 0 is `0001 … BC`).
fn ymd(days: i64) -> (String, bool) {
    let (year, month, day) = civil_from_days(days);
    let (year, bc) = if year <= 0 {
        (1 - year, true)
    } else {
        (year, false)
    };
    (format!("{year:04}-{month:02}-{day:02}"), bc)
}

/// A DATE's text form: `1994-01-01`, `0044-03-15 BC`.
pub(crate) fn format_date(days: i64) -> String {
    match ymd(days) {
        (text, false) => text,
        (text, true) => text + " BC",
    }
}

/// A TIMESTAMP's text form: `1994-01-01 12:00:00`, a fraction only when it is not
/// zero (`12:00:00.5`), in `tz` with its offset when given (`12:00:00+01`), ` BC`
/// last for years before 1.
pub(crate) fn format_timestamp(value: i64, unit: TimeUnit, tz: Option<&Tz>) -> String {
    let per_second = units_per_second(unit);
    let mut seconds = i128::from(value.div_euclid(per_second));
    let fraction = value.rem_euclid(per_second);
    let offset = tz.map(|tz| offset_at(tz, seconds));
    seconds += i128::from(offset.unwrap_or(0));
    // |seconds| < 2^64, so the day count fits an i64.
    let days = seconds.div_euclid(86_400) as i64;
    let of_day = seconds.rem_euclid(86_400) as i64;
    let (date, bc) = ymd(days);
    let mut out = format!("{date} {}", clock(of_day, fraction, per_second));
    if let Some(offset) = offset {
        let sign = if offset < 0 { '-' } else { '+' };
        let o = offset.unsigned_abs();
        out.push_str(&format!("{sign}{:02}", o / 3_600));
        if o % 3_600 != 0 {
            out.push_str(&format!(":{:02}", o / 60 % 60));
        }
        if o % 60 != 0 {
            out.push_str(&format!(":{:02}", o % 60));
        }
    }
    if bc {
        out.push_str(" BC");
    }
    out
}

/// An INTERVAL's text form, as PostgreSQL prints it (`IntervalStyle` `postgres`):
/// `1 year 2 mons 3 days 04:05:06.5`, `-1 days -02:00:00`, `00:00:00` for zero;
/// years and months from the months, the time part from the nanoseconds (hours
/// beyond 24 stay hours), with up to nine fractional digits; a positive part after
/// a negative one has a `+` (`-1 years +01:00:00`).
pub(crate) fn format_interval(v: arrow::datatypes::IntervalMonthDayNano) -> String {
    let mut parts = Vec::new();
    let mut negative_before = false;
    let mut sign_of = |n: i64| {
        let sign = if n > 0 && negative_before {
            "+"
        } else if n < 0 {
            "-"
        } else {
            ""
        };
        negative_before |= n < 0;
        sign
    };
    let (years, months) = (v.months / 12, v.months % 12);
    for (n, one, many) in [
        (i64::from(years), "year", "years"),
        (i64::from(months), "mon", "mons"),
        (i64::from(v.days), "day", "days"),
    ] {
        if n != 0 {
            let sign = sign_of(n);
            let name = if n == 1 { one } else { many };
            parts.push(format!("{sign}{} {name}", n.unsigned_abs()));
        }
    }
    if v.nanoseconds != 0 || parts.is_empty() {
        let sign = sign_of(v.nanoseconds);
        let nanos = v.nanoseconds.unsigned_abs();
        // |nanoseconds| < 2^63: the seconds and the fraction fit an i64.
        let (seconds, fraction) = (nanos / 1_000_000_000, nanos % 1_000_000_000);
        let time = clock(seconds as i64, fraction as i64, 1_000_000_000);
        parts.push(format!("{sign}{time}"));
    }
    parts.join(" ")
}

/// The offset from UTC (seconds) of `tz` at `seconds` since the epoch; instants
/// beyond chrono's range (±262,000 years) take the offset at the end of its range.
fn offset_at(tz: &Tz, seconds: i128) -> i32 {
    const LIMIT: i128 = 8_000_000_000_000;
    let clamped = seconds.clamp(-LIMIT, LIMIT) as i64;
    match chrono::DateTime::from_timestamp(clamped, 0) {
        Some(utc) => tz
            .offset_from_utc_datetime(&utc.naive_utc())
            .fix()
            .local_minus_utc(),
        None => 0,
    }
}

pub(super) fn register(r: &mut Registry) {
    let f = r
        .function("cast")
        .example("CAST(1.5 AS VARCHAR)", "1.5")
        .example("CAST(1e20 AS VARCHAR)", "1e+20")
        .example(
            "CAST(TIMESTAMP '1994-01-01 12:00:00.5' AS VARCHAR)",
            "1994-01-01 12:00:00.5",
        )
        .example("CAST(x = 1 AS VARCHAR)", "true");
    for t in castable_types() {
        let Some(imp) = to_text(&t, false) else {
            continue;
        };
        f.lowered_sig(
            std::slice::from_ref(&t),
            DataType::Utf8,
            "CAST(x AS VARCHAR): PostgreSQL's text form of x (`0.1`, `1e+20`, `true`, \
             `1994-01-01`, `1994-01-01 12:00:00+00`, `1 year 2 mons 03:00:00`)",
            imp,
            Lowering::Helper,
        );
    }
    for t in castable_types() {
        let Some(imp) = from_text(&t, false) else {
            continue;
        };
        f.lowered_sig(
            &[DataType::Utf8],
            t.clone(),
            "CAST(s AS type): s read as a literal of the type (surrounding spaces allowed); \
             an invalid string is an error, NULL with TRY_CAST",
            imp,
            Lowering::Helper,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_postgresql_prints_them() {
        for (v, text) in [
            (1.5, "1.5"),
            (0.1, "0.1"),
            (100.0, "100"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1e20, "1e+20"),
            (1e15, "1e+15"),
            (1e14, "100000000000000"),
            (123456789012345.6, "123456789012345.6"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (-2.5e300, "-2.5e+300"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(format_f64(v), text, "{v:e}");
        }
        for (v, text) in [
            (1.5f32, "1.5"),
            (0.1, "0.1"),
            (100000.0, "100000"),
            (1000000.0, "1e+06"),
            (1234567.0, "1.234567e+06"),
            (3.4028235e38, "3.4028235e+38"),
            (-0.0, "-0"),
            (f32::NAN, "NaN"),
        ] {
            assert_eq!(format_f32(v), text, "{v:e}");
        }
    }

    #[test]
    fn dates_and_timestamps_print_as_postgresql_prints_them() {
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(8766), "1994-01-01");
        assert_eq!(format_date(-1), "1969-12-31");
        // 1 BC is year 0, 44 BC year -43.
        assert_eq!(format_date(-719_528), "0001-01-01 BC");
        assert_eq!(format_date(-735_160), "0044-03-15 BC");
        assert_eq!(format_date(2_932_897), "10000-01-01");
        let us = TimeUnit::Microsecond;
        let noon = 757_425_600_000_000; // 1994-01-01 12:00:00 UTC
        assert_eq!(format_timestamp(noon, us, None), "1994-01-01 12:00:00");
        assert_eq!(
            format_timestamp(noon + 500_000, us, None),
            "1994-01-01 12:00:00.5"
        );
        assert_eq!(
            format_timestamp(noon + 1, us, None),
            "1994-01-01 12:00:00.000001"
        );
        assert_eq!(
            format_timestamp(-1, TimeUnit::Nanosecond, None),
            "1969-12-31 23:59:59.999999999"
        );
        let utc = zone("UTC").unwrap();
        let plus = zone("+05:30").unwrap();
        let minus = zone("-03:00").unwrap();
        assert_eq!(
            format_timestamp(noon, us, Some(&utc)),
            "1994-01-01 12:00:00+00"
        );
        assert_eq!(
            format_timestamp(noon, us, Some(&plus)),
            "1994-01-01 17:30:00+05:30"
        );
        assert_eq!(
            format_timestamp(noon, us, Some(&minus)),
            "1994-01-01 09:00:00-03"
        );
        assert_eq!(
            format_timestamp(-62_167_219_200, TimeUnit::Second, None),
            "0001-01-01 00:00:00 BC"
        );
        // The extremes of the type print (no panic, no overflow).
        format_timestamp(i64::MAX, TimeUnit::Second, Some(&plus));
        format_timestamp(i64::MIN, TimeUnit::Second, Some(&minus));
        assert!(zone("Mars/Olympus").is_err());
    }

    #[test]
    fn input_errors_use_postgresql_words() {
        assert_eq!(
            input_error(LiteralError::Invalid, "abc", &DataType::Int32),
            "invalid input syntax for type integer: \"abc\""
        );
        assert_eq!(
            input_error(LiteralError::OutOfRange, "99999", &DataType::Int16),
            "value \"99999\" is out of range for type smallint"
        );
        assert_eq!(
            input_error(LiteralError::OutOfRange, "1e400", &DataType::Float64),
            "\"1e400\" is out of range for type double precision"
        );
    }
}
