//! Typed scalar values: the literals of the expression tree.

use std::fmt;
use std::sync::Arc;

use arrow::array::{
    new_null_array, Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array,
    Decimal256Array, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array,
    IntervalMonthDayNanoArray, StringArray, Time32MillisecondArray, Time32SecondArray,
    Time64MicrosecondArray, Time64NanosecondArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow::compute::kernels::cast_utils::{
    parse_interval_month_day_nano_config, IntervalParseConfig, IntervalUnit as ParseUnit,
};
use arrow::datatypes::{i256, DataType, IntervalMonthDayNano, IntervalUnit, TimeUnit};

use crate::decimal;

pub use crate::types::LiteralError;
use crate::types::{sql_type_name, timestamp_precision};

/// A typed scalar value; `Null` carries the type of the missing value.
#[derive(Debug, Clone)]
pub enum ScalarValue {
    /// A NULL of the given type (`DataType::Null` for an untyped SQL `NULL`).
    Null(DataType),
    /// BOOLEAN
    Boolean(bool),
    /// TINYINT
    Int8(i8),
    /// SMALLINT
    Int16(i16),
    /// INTEGER
    Int32(i32),
    /// BIGINT (the type of an integer literal)
    Int64(i64),
    /// UTINYINT
    UInt8(u8),
    /// USMALLINT
    UInt16(u16),
    /// UINTEGER
    UInt32(u32),
    /// UBIGINT
    UInt64(u64),
    /// REAL
    Float32(f32),
    /// DOUBLE (the type of a literal with an exponent, or of more than 38 digits)
    Float64(f64),
    /// DECIMAL(p, s) with p <= 38: the unscaled value, the precision and the scale
    /// (`1.25` is `Decimal128(125, 3, 2)`, the type of a literal with a point)
    Decimal128(i128, u8, i8),
    /// DECIMAL(p, s) with 38 < p <= 76: the unscaled value, the precision and the scale
    Decimal256(i256, u8, i8),
    /// VARCHAR
    Utf8(String),
    /// BLOB (`X'4142'`)
    Binary(Vec<u8>),
    /// DATE, as days since 1970-01-01
    Date32(i32),
    /// TIMESTAMP, as units since the epoch (UTC), with Arrow's optional time zone
    Timestamp(i64, TimeUnit, Option<Arc<str>>),
    /// INTERVAL: months, days and nanoseconds, kept apart as in PostgreSQL (a month
    /// is not a fixed number of days, nor a day of hours across a time change).
    IntervalMonthDayNano(IntervalMonthDayNano),
    /// TIME: units since midnight (`Time32` for seconds and milliseconds, `Time64`
    /// for microseconds and nanoseconds).
    Time(i64, TimeUnit),
}

impl PartialEq for ScalarValue {
    /// Structural equality; floats compare by value with all NaNs equal and -0.0 ≠ 0.0,
    /// so a literal equals exactly the literal that prints the same.
    fn eq(&self, other: &ScalarValue) -> bool {
        use ScalarValue::*;
        match (self, other) {
            (Null(a), Null(b)) => a == b,
            (Boolean(a), Boolean(b)) => a == b,
            (Int8(a), Int8(b)) => a == b,
            (Int16(a), Int16(b)) => a == b,
            (Int32(a), Int32(b)) => a == b,
            (Int64(a), Int64(b)) => a == b,
            (UInt8(a), UInt8(b)) => a == b,
            (UInt16(a), UInt16(b)) => a == b,
            (UInt32(a), UInt32(b)) => a == b,
            (UInt64(a), UInt64(b)) => a == b,
            (Float32(a), Float32(b)) => (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits(),
            (Float64(a), Float64(b)) => (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits(),
            (Decimal128(a, pa, sa), Decimal128(b, pb, sb)) => (a, pa, sa) == (b, pb, sb),
            (Decimal256(a, pa, sa), Decimal256(b, pb, sb)) => (a, pa, sa) == (b, pb, sb),
            (Utf8(a), Utf8(b)) => a == b,
            (Binary(a), Binary(b)) => a == b,
            (Date32(a), Date32(b)) => a == b,
            (Timestamp(a, ua, za), Timestamp(b, ub, zb)) => a == b && ua == ub && za == zb,
            (IntervalMonthDayNano(a), IntervalMonthDayNano(b)) => a == b,
            (Time(a, ua), Time(b, ub)) => a == b && ua == ub,
            _ => false,
        }
    }
}

impl ScalarValue {
    /// The Arrow type of the value.
    pub fn data_type(&self) -> DataType {
        use ScalarValue::*;
        match self {
            Null(t) => t.clone(),
            Boolean(_) => DataType::Boolean,
            Int8(_) => DataType::Int8,
            Int16(_) => DataType::Int16,
            Int32(_) => DataType::Int32,
            Int64(_) => DataType::Int64,
            UInt8(_) => DataType::UInt8,
            UInt16(_) => DataType::UInt16,
            UInt32(_) => DataType::UInt32,
            UInt64(_) => DataType::UInt64,
            Float32(_) => DataType::Float32,
            Float64(_) => DataType::Float64,
            Decimal128(_, p, s) => DataType::Decimal128(*p, *s),
            Decimal256(_, p, s) => DataType::Decimal256(*p, *s),
            Utf8(_) => DataType::Utf8,
            Binary(_) => DataType::Binary,
            Date32(_) => DataType::Date32,
            Timestamp(_, unit, tz) => DataType::Timestamp(*unit, tz.clone()),
            IntervalMonthDayNano(_) => DataType::Interval(IntervalUnit::MonthDayNano),
            Time(_, unit) => crate::types::time_type(*unit),
        }
    }

    /// Whether this is a NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, ScalarValue::Null(_))
    }

    /// An array of `len` copies of the value.
    pub fn to_array(&self, len: usize) -> ArrayRef {
        use ScalarValue::*;
        match self {
            Null(t) => new_null_array(t, len),
            Boolean(v) => Arc::new(BooleanArray::from(vec![*v; len])),
            Int8(v) => Arc::new(Int8Array::from_value(*v, len)),
            Int16(v) => Arc::new(Int16Array::from_value(*v, len)),
            Int32(v) => Arc::new(Int32Array::from_value(*v, len)),
            Int64(v) => Arc::new(Int64Array::from_value(*v, len)),
            UInt8(v) => Arc::new(UInt8Array::from_value(*v, len)),
            UInt16(v) => Arc::new(UInt16Array::from_value(*v, len)),
            UInt32(v) => Arc::new(UInt32Array::from_value(*v, len)),
            UInt64(v) => Arc::new(UInt64Array::from_value(*v, len)),
            Float32(v) => Arc::new(Float32Array::from_value(*v, len)),
            Float64(v) => Arc::new(Float64Array::from_value(*v, len)),
            Decimal128(v, p, s) => Arc::new(
                Decimal128Array::from_value(*v, len).with_data_type(DataType::Decimal128(*p, *s)),
            ),
            Decimal256(v, p, s) => Arc::new(
                Decimal256Array::from_value(*v, len).with_data_type(DataType::Decimal256(*p, *s)),
            ),
            Utf8(v) => Arc::new(StringArray::from_iter_values(std::iter::repeat_n(v, len))),
            Binary(v) => Arc::new(BinaryArray::from_iter_values(std::iter::repeat_n(v, len))),
            Date32(v) => Arc::new(Date32Array::from_value(*v, len)),
            IntervalMonthDayNano(v) => Arc::new(IntervalMonthDayNanoArray::from_value(*v, len)),
            // A time of day fits its unit's native type (less than a day of units).
            Time(v, unit) => match unit {
                TimeUnit::Second => Arc::new(Time32SecondArray::from_value(*v as i32, len)),
                TimeUnit::Millisecond => {
                    Arc::new(Time32MillisecondArray::from_value(*v as i32, len))
                }
                TimeUnit::Microsecond => Arc::new(Time64MicrosecondArray::from_value(*v, len)),
                TimeUnit::Nanosecond => Arc::new(Time64NanosecondArray::from_value(*v, len)),
            },
            Timestamp(v, unit, tz) => match unit {
                TimeUnit::Second => Arc::new(
                    TimestampSecondArray::from_value(*v, len).with_timezone_opt(tz.clone()),
                ),
                TimeUnit::Millisecond => Arc::new(
                    TimestampMillisecondArray::from_value(*v, len).with_timezone_opt(tz.clone()),
                ),
                TimeUnit::Microsecond => Arc::new(
                    TimestampMicrosecondArray::from_value(*v, len).with_timezone_opt(tz.clone()),
                ),
                TimeUnit::Nanosecond => Arc::new(
                    TimestampNanosecondArray::from_value(*v, len).with_timezone_opt(tz.clone()),
                ),
            },
        }
    }

    /// The value at `index` of an array of a supported type (`None` for other types).
    pub fn from_array(array: &dyn Array, index: usize) -> Option<ScalarValue> {
        use arrow::array::AsArray;
        use arrow::datatypes as t;
        if array.is_null(index) {
            return Some(ScalarValue::Null(array.data_type().clone()));
        }
        Some(match array.data_type() {
            DataType::Boolean => ScalarValue::Boolean(array.as_boolean().value(index)),
            DataType::Int8 => ScalarValue::Int8(array.as_primitive::<t::Int8Type>().value(index)),
            DataType::Int16 => {
                ScalarValue::Int16(array.as_primitive::<t::Int16Type>().value(index))
            }
            DataType::Int32 => {
                ScalarValue::Int32(array.as_primitive::<t::Int32Type>().value(index))
            }
            DataType::Int64 => {
                ScalarValue::Int64(array.as_primitive::<t::Int64Type>().value(index))
            }
            DataType::UInt8 => {
                ScalarValue::UInt8(array.as_primitive::<t::UInt8Type>().value(index))
            }
            DataType::UInt16 => {
                ScalarValue::UInt16(array.as_primitive::<t::UInt16Type>().value(index))
            }
            DataType::UInt32 => {
                ScalarValue::UInt32(array.as_primitive::<t::UInt32Type>().value(index))
            }
            DataType::UInt64 => {
                ScalarValue::UInt64(array.as_primitive::<t::UInt64Type>().value(index))
            }
            DataType::Float32 => {
                ScalarValue::Float32(array.as_primitive::<t::Float32Type>().value(index))
            }
            DataType::Float64 => {
                ScalarValue::Float64(array.as_primitive::<t::Float64Type>().value(index))
            }
            DataType::Decimal128(p, s) => ScalarValue::Decimal128(
                array.as_primitive::<t::Decimal128Type>().value(index),
                *p,
                *s,
            ),
            DataType::Decimal256(p, s) => ScalarValue::Decimal256(
                array.as_primitive::<t::Decimal256Type>().value(index),
                *p,
                *s,
            ),
            DataType::Utf8 => ScalarValue::Utf8(array.as_string::<i32>().value(index).to_string()),
            DataType::Binary => ScalarValue::Binary(array.as_binary::<i32>().value(index).to_vec()),
            DataType::Date32 => {
                ScalarValue::Date32(array.as_primitive::<t::Date32Type>().value(index))
            }
            DataType::Timestamp(unit, tz) => {
                let v = match unit {
                    TimeUnit::Second => array.as_primitive::<t::TimestampSecondType>().value(index),
                    TimeUnit::Millisecond => array
                        .as_primitive::<t::TimestampMillisecondType>()
                        .value(index),
                    TimeUnit::Microsecond => array
                        .as_primitive::<t::TimestampMicrosecondType>()
                        .value(index),
                    TimeUnit::Nanosecond => array
                        .as_primitive::<t::TimestampNanosecondType>()
                        .value(index),
                };
                ScalarValue::Timestamp(v, *unit, tz.clone())
            }
            DataType::Interval(IntervalUnit::MonthDayNano) => ScalarValue::IntervalMonthDayNano(
                array
                    .as_primitive::<t::IntervalMonthDayNanoType>()
                    .value(index),
            ),
            DataType::Time32(TimeUnit::Second) => ScalarValue::Time(
                array
                    .as_primitive::<t::Time32SecondType>()
                    .value(index)
                    .into(),
                TimeUnit::Second,
            ),
            DataType::Time32(TimeUnit::Millisecond) => ScalarValue::Time(
                array
                    .as_primitive::<t::Time32MillisecondType>()
                    .value(index)
                    .into(),
                TimeUnit::Millisecond,
            ),
            DataType::Time64(TimeUnit::Microsecond) => ScalarValue::Time(
                array
                    .as_primitive::<t::Time64MicrosecondType>()
                    .value(index),
                TimeUnit::Microsecond,
            ),
            DataType::Time64(TimeUnit::Nanosecond) => ScalarValue::Time(
                array.as_primitive::<t::Time64NanosecondType>().value(index),
                TimeUnit::Nanosecond,
            ),
            _ => return None,
        })
    }
}

macro_rules! scalar_from {
    ($($t:ty => $variant:ident),*) => {$(
        impl From<$t> for ScalarValue {
            fn from(v: $t) -> Self {
                ScalarValue::$variant(v)
            }
        }
    )*};
}
scalar_from!(bool => Boolean, i8 => Int8, i16 => Int16, i32 => Int32, i64 => Int64,
    u8 => UInt8, u16 => UInt16, u32 => UInt32, u64 => UInt64, f32 => Float32, f64 => Float64,
    String => Utf8);

impl From<&str> for ScalarValue {
    fn from(v: &str) -> Self {
        ScalarValue::Utf8(v.to_string())
    }
}

/// Formats days since the epoch as `YYYY-MM-DD`.
pub(crate) fn format_date(days: i32) -> Option<String> {
    arrow::temporal_conversions::date32_to_datetime(days).map(|d| d.format("%Y-%m-%d").to_string())
}

/// Formats a timestamp as `YYYY-MM-DD HH:MM:SS[.fraction]` (UTC).
pub(crate) fn format_timestamp(value: i64, unit: TimeUnit) -> Option<String> {
    use arrow::temporal_conversions as tc;
    let dt = match unit {
        TimeUnit::Second => tc::timestamp_s_to_datetime(value),
        TimeUnit::Millisecond => tc::timestamp_ms_to_datetime(value),
        TimeUnit::Microsecond => tc::timestamp_us_to_datetime(value),
        TimeUnit::Nanosecond => tc::timestamp_ns_to_datetime(value),
    }?;
    Some(dt.format("%Y-%m-%d %H:%M:%S%.f").to_string())
}

fn write_string_literal(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("'")?;
    f.write_str(&s.replace('\'', "''"))?;
    f.write_str("'")
}

fn write_float(f: &mut fmt::Formatter<'_>, v: f64, type_name: &str, debug: String) -> fmt::Result {
    if !v.is_finite() {
        let text = if v.is_nan() {
            "NaN"
        } else if v > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        };
        write!(f, "{type_name} '{text}'")
    } else if type_name == "DOUBLE" {
        // With an exponent, so it reads back as a DOUBLE, not a DECIMAL.
        let text = if debug.contains(['e', 'E']) {
            debug
        } else {
            format!("{debug}e0")
        };
        if v.is_sign_negative() {
            write!(f, "({text})")
        } else {
            f.write_str(&text)
        }
    } else {
        write!(f, "{type_name} '{debug}'")
    }
}

impl fmt::Display for ScalarValue {
    /// Prints the value as a SQL literal that the parser reads back as the same value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ScalarValue::*;
        match self {
            Null(DataType::Null) => f.write_str("NULL"),
            Null(t) => write!(f, "CAST(NULL AS {})", sql_type_name(t)),
            Boolean(v) => f.write_str(if *v { "TRUE" } else { "FALSE" }),
            Int64(v) if *v < 0 => write!(f, "({v})"),
            Int64(v) => write!(f, "{v}"),
            Int8(_) | Int16(_) | Int32(_) | UInt8(_) | UInt16(_) | UInt32(_) | UInt64(_) => {
                let digits = match self {
                    Int8(v) => v.to_string(),
                    Int16(v) => v.to_string(),
                    Int32(v) => v.to_string(),
                    UInt8(v) => v.to_string(),
                    UInt16(v) => v.to_string(),
                    UInt32(v) => v.to_string(),
                    UInt64(v) => v.to_string(),
                    _ => unreachable!("integer variants only"),
                };
                // sqlparser does not read DuckDB's `UINTEGER '5'` as a typed literal
                // (it only knows UINTEGER as a custom type name), so UInt32 literals
                // use ClickHouse's spelling, which it does know.
                let type_name = match self {
                    UInt32(_) => "UINT32".to_string(),
                    _ => sql_type_name(&self.data_type()),
                };
                write!(f, "{type_name} '{digits}'")
            }
            Float32(v) => write_float(f, *v as f64, "REAL", format!("{v:?}")),
            Float64(v) => write_float(f, *v, "DOUBLE", format!("{v:?}")),
            Decimal128(..) | Decimal256(..) => {
                let text = self.decimal_text().unwrap_or_default();
                let t = self.data_type();
                // A literal written with a point reads back as DECIMAL(digits, scale);
                // another precision is spelled out.
                let natural = crate::types::decimal_parts(&t).is_some_and(|(p, s)| {
                    decimal::literal_type(text.trim_start_matches('-'))
                        == Some((p as usize, s as usize))
                });
                match (natural, text.starts_with('-')) {
                    (true, true) => write!(f, "({text})"),
                    (true, false) => f.write_str(&text),
                    (false, _) => write!(f, "{} '{text}'", sql_type_name(&t)),
                }
            }
            Utf8(s) => write_string_literal(f, s),
            Binary(bytes) => {
                f.write_str("X'")?;
                for b in bytes {
                    write!(f, "{b:02X}")?;
                }
                f.write_str("'")
            }
            Date32(days) => match format_date(*days) {
                Some(text) => write!(f, "DATE '{text}'"),
                None => write!(f, "CAST({days} AS DATE)"),
            },
            Timestamp(v, unit, tz) => {
                let text = format_timestamp(*v, *unit).unwrap_or_else(|| v.to_string());
                f.write_str("TIMESTAMP")?;
                if *unit != TimeUnit::Microsecond {
                    write!(f, "({})", timestamp_precision(unit))?;
                }
                if tz.is_some() {
                    f.write_str(" WITH TIME ZONE")?;
                }
                write!(f, " '{text}'")
            }
            IntervalMonthDayNano(v) => write!(f, "INTERVAL '{}'", interval_text(v)),
            Time(v, unit) => {
                f.write_str("TIME")?;
                if *unit != TimeUnit::Microsecond {
                    write!(f, "({})", timestamp_precision(unit))?;
                }
                write!(f, " '{}'", crate::time::format_time(*v, *unit))
            }
        }
    }
}

/// An interval as text that [`parse_interval`] reads back as the same value:
/// `1 year 2 months 3 days 4 hours 5 minutes 6 seconds 789000000 nanoseconds`,
/// leaving out zero parts (`0 days` for a zero interval). Every part carries the
/// sign of its field, so the text is exact for every value.
pub(crate) fn interval_text(v: &IntervalMonthDayNano) -> String {
    const NANOS_PER_SECOND: i64 = 1_000_000_000;
    let nanos = v.nanoseconds;
    let parts = [
        (i64::from(v.months / 12), "year"),
        (i64::from(v.months % 12), "month"),
        (i64::from(v.days), "day"),
        (nanos / (3600 * NANOS_PER_SECOND), "hour"),
        (nanos / (60 * NANOS_PER_SECOND) % 60, "minute"),
        (nanos / NANOS_PER_SECOND % 60, "second"),
        (nanos % NANOS_PER_SECOND, "nanosecond"),
    ];
    let text = parts
        .iter()
        .filter(|(n, _)| *n != 0)
        .map(|(n, unit)| format!("{n} {unit}{}", if *n == 1 { "" } else { "s" }))
        .collect::<Vec<_>>()
        .join(" ");
    if text.is_empty() {
        "0 days".into()
    } else {
        text
    }
}

/// An interval written as PostgreSQL writes one (`1 day`, `1 year 2 months`,
/// `-2 hours 30 minutes`, `1.5 days`), parsed by arrow's interval parser; a bare
/// number counts `unit`s (`INTERVAL '3' DAY`).
pub(crate) fn parse_interval(
    text: &str,
    unit: ParseUnit,
) -> Result<IntervalMonthDayNano, LiteralError> {
    parse_interval_month_day_nano_config(text.trim(), IntervalParseConfig::new(unit))
        .map_err(|_| LiteralError::Invalid)
}

/// `text` with PostgreSQL's era suffix (` BC`, ` AD`) removed and the year written
/// as chrono reads it: `0044-03-15 BC` is year -43 (1 BC is year 0), and years of
/// more than four digits get a sign.
fn astronomical_year(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    let upper = text.len().checked_sub(3).and_then(|i| text.get(i..));
    let (body, bc) = match upper.map(str::to_ascii_uppercase).as_deref() {
        Some(" BC") => (text[..text.len() - 3].trim_end(), true),
        Some(" AD") => (text[..text.len() - 3].trim_end(), false),
        _ => (text, false),
    };
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    if !bc && digits <= 4 {
        return Some(Cow::Borrowed(body));
    }
    // A sign, or no year, is not for an era suffix to fix.
    if digits == 0 {
        return (!bc).then_some(Cow::Borrowed(body));
    }
    let year: i64 = body[..digits].parse().ok()?;
    let year = if bc { 1 - year } else { year };
    let sign = if year < 0 { "-" } else { "+" };
    Some(Cow::Owned(format!(
        "{sign}{:04}{}",
        year.unsigned_abs(),
        &body[digits..]
    )))
}

/// The UTC offset (seconds) a date and time ends with (`+05:30`, `-03`, `+0530`,
/// `Z`), and the text before it; no offset is `None`.
fn split_offset(text: &str) -> (&str, Option<i64>) {
    // The offset follows the time, which follows the date after a space or `T`.
    let Some(time) = text.get(1..).and_then(|t| t.find([' ', 'T', 't'])) else {
        return (text, None);
    };
    let time = time + 1;
    if let Some(base) = text.strip_suffix(['Z', 'z']) {
        return (base.trim_end(), Some(0));
    }
    let Some(at) = text[time..].rfind(['+', '-']).map(|i| i + time) else {
        return (text, None);
    };
    let (base, offset) = (text[..at].trim_end(), &text[at + 1..]);
    let parts: Vec<&str> = match offset.split(':').collect::<Vec<_>>() {
        p if p.len() == 1 && offset.len() == 4 && offset.bytes().all(|b| b.is_ascii_digit()) => {
            vec![&offset[..2], &offset[2..]]
        }
        p => p,
    };
    let valid = !parts.is_empty()
        && parts.len() <= 3
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.bytes().all(|b| b.is_ascii_digit()));
    if !valid {
        return (text, None);
    }
    let seconds = parts
        .iter()
        .zip([3600, 60, 1])
        .map(|(p, k)| p.parse::<i64>().unwrap_or(0) * k)
        .sum::<i64>();
    let sign = if text.as_bytes()[at] == b'-' { -1 } else { 1 };
    (base, Some(sign * seconds))
}

/// A date and time followed by a named time zone (`1994-01-01 12:00
/// America/New_York`, `… UTC`): the text before it and the zone. Text that ends in
/// a word that is not a zone Arrow knows is not a timestamp.
fn split_zone_name(text: &str) -> Result<(&str, Option<arrow::array::timezone::Tz>), LiteralError> {
    let Some((base, last)) = text.rsplit_once(' ') else {
        return Ok((text, None));
    };
    let offset_letter = last.eq_ignore_ascii_case("z");
    if !last.starts_with(|c: char| c.is_ascii_alphabetic()) || offset_letter {
        return Ok((text, None));
    }
    let name = if last.eq_ignore_ascii_case("utc") || last.eq_ignore_ascii_case("gmt") {
        "+00:00"
    } else {
        last
    };
    let zone = name.parse().map_err(|_| LiteralError::Invalid)?;
    Ok((base.trim_end(), Some(zone)))
}

/// A date and time (UTC) as `YYYY-MM-DD[ |T]HH:MM[:SS[.fraction]]` or a bare date.
fn parse_datetime(text: &str) -> Option<chrono::NaiveDateTime> {
    [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M",
        "%Y-%m-%dT%H:%M",
    ]
    .iter()
    .find_map(|format| chrono::NaiveDateTime::parse_from_str(text, format).ok())
    .or_else(|| {
        chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
            .ok()?
            .and_hms_opt(0, 0, 0)
    })
}

/// Units of `unit` since the epoch, exactly.
fn timestamp_value(dt: chrono::NaiveDateTime, unit: TimeUnit) -> Result<i64, LiteralError> {
    let utc = dt.and_utc();
    let per_second = crate::types::units_per_second(unit);
    let nanos_per_unit = 1_000_000_000 / per_second;
    let nanos = i64::from(utc.timestamp_subsec_nanos());
    if nanos % nanos_per_unit != 0 {
        return Err(LiteralError::TooPrecise);
    }
    // In i128, so the instants just above the type's minimum (whose whole seconds
    // are below it) are read too.
    let units =
        i128::from(utc.timestamp()) * i128::from(per_second) + i128::from(nanos / nanos_per_unit);
    i64::try_from(units).map_err(|_| LiteralError::OutOfRange)
}

/// The bytes a string spells as DuckDB reads a BLOB: each ASCII character is its
/// byte, `\xHH` (two hexadecimal digits, either case) is the byte `HH`; any other
/// backslash and any character beyond ASCII are invalid (write them as `\xHH`).
/// The text is read as it is (surrounding spaces are bytes too).
pub(crate) fn parse_blob(text: &str) -> Result<Vec<u8>, LiteralError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                let hex = bytes.get(i + 1..i + 4).ok_or(LiteralError::Invalid)?;
                let digit = |c: u8| (c as char).to_digit(16);
                match (hex[0], digit(hex[1]), digit(hex[2])) {
                    (b'x', Some(h), Some(l)) => out.push((h * 16 + l) as u8),
                    _ => return Err(LiteralError::Invalid),
                }
                i += 4;
            }
            b if b.is_ascii() => {
                out.push(b);
                i += 1;
            }
            _ => return Err(LiteralError::Invalid),
        }
    }
    Ok(out)
}

/// A BLOB's text form, as DuckDB prints it: printable ASCII (space to `~`) as it
/// is, every other byte and the backslash as `\xHH` (upper-case hexadecimal), so
/// that `parse_blob` reads it back as the same bytes.
pub fn format_blob(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if (b' '..=b'~').contains(&b) && b != b'\\' {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

fn parse_int<T: std::str::FromStr<Err = std::num::ParseIntError>>(
    text: &str,
) -> Result<T, LiteralError> {
    use std::num::IntErrorKind;
    text.parse::<T>().map_err(|e| match e.kind() {
        IntErrorKind::PosOverflow | IntErrorKind::NegOverflow => LiteralError::OutOfRange,
        _ => LiteralError::Invalid,
    })
}

fn parse_float<T: std::str::FromStr + Copy>(
    text: &str,
    is_infinite: fn(T) -> bool,
) -> Result<T, LiteralError> {
    let v: T = text.parse().map_err(|_| LiteralError::Invalid)?;
    let written_infinite = text
        .trim_start_matches(['+', '-'])
        .to_ascii_lowercase()
        .starts_with("inf");
    if is_infinite(v) && !written_infinite {
        return Err(LiteralError::OutOfRange);
    }
    Ok(v)
}

impl ScalarValue {
    /// The value of type `to` that `text` spells (`INTEGER '5'`, `DATE '1994-01-01'`,
    /// `CAST('2.5' AS REAL)`): integers in decimal, floats incl. `NaN` and `Infinity`,
    /// booleans (`true/false/t/f/yes/no/on/off/1/0`), dates `YYYY-MM-DD`, timestamps
    /// `YYYY-MM-DD[ |T]HH:MM[:SS[.fraction]]` in UTC, exactly in the unit, intervals
    /// as `parse_interval` reads them (a bare number counts seconds, as in PostgreSQL).
    pub fn parse(text: &str, to: &DataType) -> Result<ScalarValue, LiteralError> {
        use ScalarValue::*;
        let t = text.trim();
        Ok(match to {
            DataType::Boolean => match t.to_ascii_lowercase().as_str() {
                "true" | "t" | "yes" | "y" | "on" | "1" => Boolean(true),
                "false" | "f" | "no" | "n" | "off" | "0" => Boolean(false),
                _ => return Err(LiteralError::Invalid),
            },
            DataType::Int8 => Int8(parse_int(t)?),
            DataType::Int16 => Int16(parse_int(t)?),
            DataType::Int32 => Int32(parse_int(t)?),
            DataType::Int64 => Int64(parse_int(t)?),
            DataType::UInt8 => UInt8(parse_int(t)?),
            DataType::UInt16 => UInt16(parse_int(t)?),
            DataType::UInt32 => UInt32(parse_int(t)?),
            DataType::UInt64 => UInt64(parse_int(t)?),
            DataType::Float32 => Float32(parse_float(t, f32::is_infinite)?),
            DataType::Float64 => Float64(parse_float(t, f64::is_infinite)?),
            DataType::Decimal128(p, s) => Decimal128(decimal::parse(t, *p, *s)?, *p, *s),
            DataType::Decimal256(p, s) => Decimal256(decimal::parse(t, *p, *s)?, *p, *s),
            DataType::Utf8 => Utf8(text.to_string()),
            DataType::Binary => Binary(parse_blob(text)?),
            DataType::Date32 => {
                let t = astronomical_year(t).ok_or(LiteralError::Invalid)?;
                let date = chrono::NaiveDate::parse_from_str(&t, "%Y-%m-%d")
                    .map_err(|_| LiteralError::Invalid)?;
                let epoch =
                    chrono::NaiveDate::from_ymd_opt(1970, 1, 1).ok_or(LiteralError::Invalid)?;
                let days = date.signed_duration_since(epoch).num_days();
                Date32(i32::try_from(days).map_err(|_| LiteralError::OutOfRange)?)
            }
            DataType::Timestamp(unit, tz) => {
                let t = astronomical_year(t).ok_or(LiteralError::Invalid)?;
                // A time zone (an offset or a name) is applied WITH TIME ZONE, and
                // ignored without (as PostgreSQL does).
                let (t, named) = split_zone_name(&t)?;
                let (t, offset) = split_offset(t);
                let mut dt = parse_datetime(t).ok_or(LiteralError::Invalid)?;
                if tz.is_some() {
                    if let Some(offset) = offset {
                        dt = dt
                            .checked_sub_signed(chrono::TimeDelta::seconds(offset))
                            .ok_or(LiteralError::OutOfRange)?;
                    } else if let Some(zone) = named {
                        dt = crate::time::from_local(dt, zone).ok_or(LiteralError::OutOfRange)?;
                    }
                }
                Timestamp(timestamp_value(dt, *unit)?, *unit, tz.clone())
            }
            ty if crate::types::is_time(ty) => {
                let unit = crate::types::time_unit(ty).ok_or(LiteralError::Unsupported)?;
                let time = ["%H:%M:%S%.f", "%H:%M"]
                    .iter()
                    .find_map(|format| chrono::NaiveTime::parse_from_str(t, format).ok())
                    .ok_or(LiteralError::Invalid)?;
                let dt = chrono::NaiveDate::default().and_time(time);
                Time(timestamp_value(dt, unit)?, unit)
            }
            DataType::Interval(IntervalUnit::MonthDayNano) => {
                IntervalMonthDayNano(parse_interval(t, ParseUnit::Second)?)
            }
            _ => return Err(LiteralError::Unsupported),
        })
    }
}

impl ScalarValue {
    /// The value as an `i128`, for integer variants.
    pub(crate) fn as_i128(&self) -> Option<i128> {
        use ScalarValue::*;
        Some(match self {
            Int8(v) => *v as i128,
            Int16(v) => *v as i128,
            Int32(v) => *v as i128,
            Int64(v) => *v as i128,
            UInt8(v) => *v as i128,
            UInt16(v) => *v as i128,
            UInt32(v) => *v as i128,
            UInt64(v) => *v as i128,
            _ => return None,
        })
    }

    /// The exact text of a decimal value (`1.25`), `None` for other variants.
    pub fn decimal_text(&self) -> Option<String> {
        match self {
            ScalarValue::Decimal128(v, _, s) => Some(decimal::format(*v, *s)),
            ScalarValue::Decimal256(v, _, s) => Some(decimal::format(*v, *s)),
            _ => None,
        }
    }

    /// A decimal value as (unscaled value widened to `i256`, precision, scale).
    pub(crate) fn as_decimal(&self) -> Option<(i256, u8, i8)> {
        match self {
            ScalarValue::Decimal128(v, p, s) => Some((i256::from_i128(*v), *p, *s)),
            ScalarValue::Decimal256(v, p, s) => Some((*v, *p, *s)),
            _ => None,
        }
    }

    /// The decimal `v / 10^from_scale` as a value of the decimal type `to`, exactly
    /// (`None` if digits would be lost or it does not fit the precision).
    fn decimal_exact(v: i256, from_scale: i8, to: &DataType) -> Option<ScalarValue> {
        let (p, s) = crate::types::decimal_parts(to)?;
        let scaled = decimal::rescale(v, from_scale, s)?;
        if decimal::rescale(scaled, s, from_scale)? != v || !decimal::fits(scaled, p) {
            return None;
        }
        Some(match to {
            DataType::Decimal128(..) => ScalarValue::Decimal128(scaled.to_i128()?, p, s),
            _ => ScalarValue::Decimal256(scaled, p, s),
        })
    }

    /// The integer `v` as a value of integer type `to`, if it fits.
    fn integer_of(v: i128, to: &DataType) -> Option<ScalarValue> {
        use ScalarValue::*;
        Some(match to {
            DataType::Int8 => Int8(v.try_into().ok()?),
            DataType::Int16 => Int16(v.try_into().ok()?),
            DataType::Int32 => Int32(v.try_into().ok()?),
            DataType::Int64 => Int64(v.try_into().ok()?),
            DataType::UInt8 => UInt8(v.try_into().ok()?),
            DataType::UInt16 => UInt16(v.try_into().ok()?),
            DataType::UInt32 => UInt32(v.try_into().ok()?),
            DataType::UInt64 => UInt64(v.try_into().ok()?),
            _ => return None,
        })
    }

    /// The same value in type `to` when the conversion loses nothing: integers that
    /// fit, integers that floats hold exactly, doubles that are exact reals, dates at
    /// midnight as timestamps, timestamps relabelled with another time zone or made
    /// finer, decimals that the decimal type holds exactly (and as floats: the float
    /// their text reads as, which is how a decimal literal meets a float), and
    /// strings that [parse](ScalarValue::parse) as a value of the type
    /// (a quoted literal is of unknown type, as in PostgreSQL). `None` otherwise.
    ///
    /// This is how a literal adopts the type of what it is compared with
    /// (`int32_col IN (1, 3)`, `date_col >= '1994-01-01'`, `float_col = 'NaN'`).
    pub fn convert_exact(&self, to: &DataType) -> Option<ScalarValue> {
        use ScalarValue::*;
        if let Null(_) = self {
            return Some(Null(to.clone()));
        }
        if let Some(v) = self.as_i128() {
            return match to {
                DataType::Decimal128(..) | DataType::Decimal256(..) => {
                    Self::decimal_exact(i256::from_i128(v), 0, to)
                }
                DataType::Float32 => {
                    let f = v as f32;
                    (f as i128 == v).then_some(Float32(f))
                }
                DataType::Float64 => {
                    let f = v as f64;
                    (f as i128 == v).then_some(Float64(f))
                }
                _ => Self::integer_of(v, to),
            };
        }
        if let Some((v, _, scale)) = self.as_decimal() {
            return match to {
                DataType::Decimal128(..) | DataType::Decimal256(..) => {
                    Self::decimal_exact(v, scale, to)
                }
                // The double the decimal's text reads as: `0.05` meeting a DOUBLE is
                // the double the literal `0.05` has always been.
                DataType::Float64 => Some(Float64(decimal::to_f64(v, scale))),
                DataType::Float32 => decimal::format(v, scale).parse().ok().map(Float32),
                _ if crate::types::is_integer(to) => {
                    let unit = decimal::pow10::<i256>(scale as u32)?;
                    let whole = v.checked_rem(unit)? == i256::ZERO;
                    whole
                        .then(|| Self::integer_of(v.checked_div(unit)?.to_i128()?, to))
                        .flatten()
                }
                _ => None,
            };
        }
        match (self, to) {
            (Boolean(_), DataType::Boolean) => Some(self.clone()),
            (Float32(v), DataType::Float32) => Some(Float32(*v)),
            (Float32(v), DataType::Float64) => Some(Float64(*v as f64)),
            (Float64(v), DataType::Float64) => Some(Float64(*v)),
            (Float64(v), DataType::Float32) => {
                let f = *v as f32;
                (f as f64 == *v || v.is_nan()).then_some(Float32(f))
            }
            (Utf8(_), DataType::Utf8) | (Binary(_), DataType::Binary) => Some(self.clone()),
            (IntervalMonthDayNano(_), DataType::Interval(IntervalUnit::MonthDayNano)) => {
                Some(self.clone())
            }
            (Utf8(s), _) => ScalarValue::parse(s, to).ok(),
            (Date32(d), DataType::Date32) => Some(Date32(*d)),
            (Time(v, from), t) if crate::types::is_time(t) => {
                let unit = crate::types::time_unit(t)?;
                let (f, t) = (
                    crate::types::units_per_second(*from),
                    crate::types::units_per_second(unit),
                );
                if t >= f {
                    Some(Time(v * (t / f), unit))
                } else {
                    (v % (f / t) == 0).then(|| Time(v / (f / t), unit))
                }
            }
            (Date32(d), DataType::Timestamp(unit, tz)) => {
                let per_day = 86_400 * crate::types::units_per_second(*unit);
                (*d as i64)
                    .checked_mul(per_day)
                    .map(|v| Timestamp(v, *unit, tz.clone()))
            }
            (Timestamp(v, from, _), DataType::Timestamp(unit, tz)) => {
                let (f, t) = (
                    crate::types::units_per_second(*from),
                    crate::types::units_per_second(*unit),
                );
                if t >= f {
                    v.checked_mul(t / f)
                        .map(|v| Timestamp(v, *unit, tz.clone()))
                } else {
                    (v % (f / t) == 0).then(|| Timestamp(v / (f / t), *unit, tz.clone()))
                }
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Floats are read as PostgreSQL's `float8in` reads them: `NaN`, `Infinity`,
    /// `-Infinity` and `inf` in any case, with surrounding spaces.
    #[test]
    fn special_floats_are_spelled_as_in_postgresql() {
        for (text, expected) in [
            ("NaN", f64::NAN),
            ("nan", f64::NAN),
            ("Infinity", f64::INFINITY),
            ("+infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            ("inf", f64::INFINITY),
            ("-INF", f64::NEG_INFINITY),
            ("  iNf ", f64::INFINITY),
            ("1e3", 1000.0),
        ] {
            let v = ScalarValue::parse(text, &DataType::Float64);
            assert_eq!(v, Ok(ScalarValue::Float64(expected)), "{text}");
            let v = ScalarValue::Utf8(text.into()).convert_exact(&DataType::Float32);
            assert_eq!(v, Some(ScalarValue::Float32(expected as f32)), "{text}");
        }
        for text in ["1e400", "-1e400"] {
            let v = ScalarValue::parse(text, &DataType::Float64);
            assert_eq!(v, Err(LiteralError::OutOfRange), "{text}");
        }
        for text in ["NaNa", "infinit", "", "1,5"] {
            let v = ScalarValue::parse(text, &DataType::Float64);
            assert_eq!(v, Err(LiteralError::Invalid), "{text}");
        }
    }

    /// Dates and timestamps are read in the forms `CAST(… AS VARCHAR)` prints, as
    /// PostgreSQL reads them: era suffixes, long years, time zone offsets.
    #[test]
    fn eras_long_years_and_offsets_are_read_as_in_postgresql() {
        let date = |t: &str| ScalarValue::parse(t, &DataType::Date32);
        assert_eq!(date("0044-03-15 BC"), Ok(ScalarValue::Date32(-735_160)));
        assert_eq!(date("0001-01-01 bc"), Ok(ScalarValue::Date32(-719_528)));
        assert_eq!(date("1994-01-01 AD"), Ok(ScalarValue::Date32(8766)));
        assert_eq!(date("10000-01-01"), Ok(ScalarValue::Date32(2_932_897)));
        assert_eq!(date("1994-01-01 XY"), Err(LiteralError::Invalid));
        assert_eq!(date(" BC"), Err(LiteralError::Invalid));
        let us = TimeUnit::Microsecond;
        let noon = 757_425_600_000_000;
        let tz = DataType::Timestamp(us, Some("+00:00".into()));
        let plain = DataType::Timestamp(us, None);
        let at = |v: i64, tz: &DataType| Ok(ScalarValue::Timestamp(v, us, tz_of(tz)));
        fn tz_of(t: &DataType) -> Option<Arc<str>> {
            match t {
                DataType::Timestamp(_, tz) => tz.clone(),
                _ => None,
            }
        }
        let hour = 3_600_000_000;
        for (text, v) in [
            ("1994-01-01 12:00:00+00", noon),
            ("1994-01-01 14:00:00+02", noon),
            ("1994-01-01 14:00:00+0200", noon),
            ("1994-01-01 06:30:00-05:30", noon),
            ("1994-01-01T12:00:00Z", noon),
            ("1994-01-01 13:00:00 +01:00", noon),
            ("1994-01-01 12:00:00", noon),
        ] {
            assert_eq!(ScalarValue::parse(text, &tz), at(v, &tz), "{text}");
        }
        // Without a time zone, the offset is ignored.
        assert_eq!(
            ScalarValue::parse("1994-01-01 14:00:00+02", &plain),
            at(noon + 2 * hour, &plain)
        );
        assert_eq!(
            ScalarValue::parse("1994-01-01 12:00:00+2:00", &tz),
            Err(LiteralError::Invalid)
        );
        assert_eq!(
            ScalarValue::parse("1994-01-01 12:00:00+1é1", &tz),
            Err(LiteralError::Invalid)
        );
    }

    #[test]
    fn quoted_literals_convert_to_the_type_they_meet() {
        let s = |t: &str| ScalarValue::Utf8(t.into());
        assert_eq!(
            s("5").convert_exact(&DataType::Int8),
            Some(ScalarValue::Int8(5))
        );
        assert_eq!(s("300").convert_exact(&DataType::Int8), None);
        assert_eq!(s("2.5").convert_exact(&DataType::Int64), None);
        assert_eq!(
            s("yes").convert_exact(&DataType::Boolean),
            Some(ScalarValue::Boolean(true))
        );
        assert_eq!(s("abc").convert_exact(&DataType::Utf8), Some(s("abc")));
        assert_eq!(
            LiteralError::OutOfRange.message("300", &DataType::Int8),
            "TINYINT literal '300' out of range"
        );
    }
}
