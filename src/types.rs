//! The types Broadhead supports, their SQL names, and the implicit promotion rules.
//!
//! Promotion follows DuckDB/PostgreSQL: integers widen; a signed and an unsigned
//! integer meet in the smallest signed type that holds both (`UBIGINT` with a signed
//! type meets in `BIGINT`, with an overflow error at run time for values above
//! `i64::MAX`); integers meet floats in `REAL` when they have at most 16 bits and in
//! `DOUBLE` otherwise; `DATE` meets `TIMESTAMP` in the timestamp; two timestamps meet
//! in the finer unit.
//!
//! Decimals follow DuckDB: `DECIMAL(p, s)` is Arrow's `Decimal128` for `p <= 38` and
//! `Decimal256` for `38 < p <= 76` (DuckDB stops at 38). Two decimals meet in the
//! type with the larger scale and the larger number of integral digits; an integer
//! meets a decimal as `DECIMAL(w, 0)` with its type's width ([`integer_digits`]);
//! a float meets a decimal in `DOUBLE` (PostgreSQL; DuckDB keeps `REAL`).

use arrow_schema::{DataType, IntervalUnit, TimeUnit};

/// Whether Broadhead can read, compute and return values of this type.
pub fn is_supported(t: &DataType) -> bool {
    is_numeric(t)
        || matches!(
            t,
            DataType::Boolean
                | DataType::Utf8
                | DataType::Binary
                | DataType::Date32
                | DataType::Null
        )
        || matches!(
            t,
            DataType::Timestamp(_, _) | DataType::Interval(IntervalUnit::MonthDayNano)
        )
        || is_time(t)
        || is_decimal(t)
}

/// The type a column of type `t` is read as when Broadhead computes on another
/// (`None` for the types it reads as they are): `DATE64` (milliseconds) as DATE,
/// the one date type of PostgreSQL and DuckDB; the other Arrow intervals
/// (`YearMonth`, `DayTime`) and `DURATION`s (as DuckDB reads them) as INTERVAL
/// (`MonthDayNano`). The binder reads such a column as a cast to that type.
pub fn read_as(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Date64 => Some(DataType::Date32),
        DataType::Interval(IntervalUnit::YearMonth | IntervalUnit::DayTime)
        | DataType::Duration(_) => Some(DataType::Interval(IntervalUnit::MonthDayNano)),
        _ => None,
    }
}

/// Whether `CAST(x AS to)` for `x` of type `from` succeeds for every value (so the
/// cast raises no error): Arrow's narrower intervals widened to `MonthDayNano`,
/// numbers to DOUBLE (and integers and 38-digit decimals to REAL), integers to wider
/// integers, integers and decimals to decimals that hold all their digits.
pub fn cast_never_fails(from: &DataType, to: &DataType) -> bool {
    match (from, to) {
        (
            DataType::Interval(IntervalUnit::YearMonth | IntervalUnit::DayTime),
            DataType::Interval(IntervalUnit::MonthDayNano),
        ) => true,
        // Every integer, REAL and decimal (below 1e76) is within DOUBLE's range, and
        // every integer and 38-digit decimal within REAL's: they round, never fail.
        (f, DataType::Float64) => is_numeric(f) || is_decimal(f),
        (f, DataType::Float32) => is_integer(f) || matches!(f, DataType::Decimal128(..)),
        // An integer or decimal into a decimal with as many integral digits and as
        // fine a scale is exact.
        (f, t) if is_decimal(t) => match (as_decimal(f), decimal_parts(t)) {
            (Some((p, s)), Some((q, u))) => u >= s && q as i32 - u as i32 >= p as i32 - s as i32,
            _ => false,
        },
        (f, t) if is_integer(f) && is_integer(t) => {
            let (a, b) = (bit_width(f), bit_width(t));
            match (is_signed(f), is_signed(t)) {
                (true, true) | (false, false) => a <= b,
                (false, true) => a < b,
                (true, false) => false,
            }
        }
        _ => false,
    }
}

/// `TIME` of each unit: Arrow's `Time32(s|ms)` and `Time64(us|ns)`, a time of day
/// in units since midnight.
pub fn is_time(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Time32(TimeUnit::Second | TimeUnit::Millisecond)
            | DataType::Time64(TimeUnit::Microsecond | TimeUnit::Nanosecond)
    )
}

/// The time of day type of `unit` (`Time32` for seconds and milliseconds, `Time64`
/// for finer units, as Arrow defines them).
pub fn time_type(unit: TimeUnit) -> DataType {
    match unit {
        TimeUnit::Second | TimeUnit::Millisecond => DataType::Time32(unit),
        _ => DataType::Time64(unit),
    }
}

/// The unit of a `TIME` type.
pub fn time_unit(t: &DataType) -> Option<TimeUnit> {
    match t {
        DataType::Time32(u) | DataType::Time64(u) if is_time(t) => Some(*u),
        _ => None,
    }
}

/// The largest precision of a `Decimal128` (and of DuckDB's `DECIMAL`).
pub const DECIMAL128_MAX_PRECISION: u8 = 38;
/// The largest precision of a `Decimal256`.
pub const DECIMAL256_MAX_PRECISION: u8 = 76;
/// The type `DECIMAL` without precision stands for (DuckDB's default).
pub const DECIMAL_DEFAULT: (u8, i8) = (18, 3);

/// A supported decimal: `Decimal128(p, s)` with `1 <= p <= 38` or `Decimal256(p, s)`
/// with `38 < p <= 76`, and `0 <= s <= p` (a negative scale is not supported).
pub fn is_decimal(t: &DataType) -> bool {
    match *t {
        DataType::Decimal128(p, s) => {
            (1..=DECIMAL128_MAX_PRECISION).contains(&p) && valid_scale(p, s)
        }
        DataType::Decimal256(p, s) => {
            (DECIMAL128_MAX_PRECISION + 1..=DECIMAL256_MAX_PRECISION).contains(&p)
                && valid_scale(p, s)
        }
        _ => false,
    }
}

fn valid_scale(p: u8, s: i8) -> bool {
    s >= 0 && s as u8 <= p
}

/// The precision and scale of a decimal type (`None` for other types).
pub fn decimal_parts(t: &DataType) -> Option<(u8, i8)> {
    match *t {
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => Some((p, s)),
        _ => None,
    }
}

/// The finer of two units.
fn finer(a: TimeUnit, b: TimeUnit) -> TimeUnit {
    if units_per_second(a) >= units_per_second(b) {
        a
    } else {
        b
    }
}
/// `DECIMAL(p, s)`: `Decimal128` up to 38 digits, `Decimal256` above. `None` when
/// `p` is 0 or above 76, or `s` is outside `0..=p`.
pub fn decimal_type(p: u8, s: i8) -> Option<DataType> {
    let t = if p <= DECIMAL128_MAX_PRECISION {
        DataType::Decimal128(p, s)
    } else {
        DataType::Decimal256(p, s)
    };
    is_decimal(&t).then_some(t)
}

/// The number of decimal digits an integer type needs (DuckDB's widths when it meets
/// a decimal: `TINYINT` is `DECIMAL(3,0)`, `INTEGER` `DECIMAL(10,0)`, `BIGINT`
/// `DECIMAL(19,0)`, `UBIGINT` `DECIMAL(20,0)`).
pub fn integer_digits(t: &DataType) -> Option<u8> {
    Some(match t {
        DataType::Int8 | DataType::UInt8 => 3,
        DataType::Int16 | DataType::UInt16 => 5,
        DataType::Int32 | DataType::UInt32 => 10,
        DataType::Int64 => 19,
        DataType::UInt64 => 20,
        _ => return None,
    })
}

/// A decimal type, or an integer type as the `DECIMAL(w, 0)` it meets decimals as.
pub fn as_decimal(t: &DataType) -> Option<(u8, i8)> {
    decimal_parts(t).or_else(|| integer_digits(t).map(|w| (w, 0)))
}

/// The decimal two decimals (or a decimal and an integer) meet in: the larger scale
/// and the larger number of integral digits. Above 38 digits it is a `Decimal256`
/// (DuckDB caps at 38 and may then lose digits); `None` beyond 76.
pub fn common_decimal(a: (u8, i8), b: (u8, i8)) -> Option<DataType> {
    let scale = a.1.max(b.1);
    let integral = (a.0 as i32 - a.1 as i32).max(b.0 as i32 - b.1 as i32);
    let p = integral + scale as i32;
    decimal_type(u8::try_from(p).ok()?, scale)
}

/// Signed or unsigned integer types.
pub fn is_integer(t: &DataType) -> bool {
    is_signed(t) || is_unsigned(t)
}

/// Int8 … Int64.
pub fn is_signed(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64
    )
}

/// UInt8 … UInt64.
pub fn is_unsigned(t: &DataType) -> bool {
    matches!(
        t,
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64
    )
}

/// Float32 or Float64.
pub fn is_float(t: &DataType) -> bool {
    matches!(t, DataType::Float32 | DataType::Float64)
}

/// Integers and floats.
pub fn is_numeric(t: &DataType) -> bool {
    is_integer(t) || is_float(t)
}

/// Date32 and timestamps.
pub fn is_temporal(t: &DataType) -> bool {
    matches!(t, DataType::Date32 | DataType::Timestamp(_, _))
}

/// Width in bits of an integer or float type.
pub fn bit_width(t: &DataType) -> u32 {
    match t {
        DataType::Int8 | DataType::UInt8 => 8,
        DataType::Int16 | DataType::UInt16 => 16,
        DataType::Int32
        | DataType::UInt32
        | DataType::Float32
        | DataType::Date32
        | DataType::Time32(_) => 32,
        _ => 64,
    }
}

fn signed_of_width(bits: u32) -> DataType {
    match bits {
        8 => DataType::Int8,
        16 => DataType::Int16,
        32 => DataType::Int32,
        _ => DataType::Int64,
    }
}

/// How many of the unit fit in a second.
pub fn units_per_second(unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    }
}

/// The type two values meet in for comparison, arithmetic, `IN`, `CASE` and `COALESCE`.
///
/// Returns `None` when there is no implicit conversion between them.
pub fn common_type(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    if a == b {
        return Some(a.clone());
    }
    match (a, b) {
        (Null, t) | (t, Null) => Some(t.clone()),
        (x, y) if is_integer(x) && is_integer(y) => {
            let (wx, wy) = (bit_width(x), bit_width(y));
            Some(match (is_signed(x), is_signed(y)) {
                (true, true) | (false, false) => {
                    if wx >= wy {
                        x.clone()
                    } else {
                        y.clone()
                    }
                }
                (true, false) => signed_of_width(wx.max((wy * 2).min(64))),
                (false, true) => signed_of_width(wy.max((wx * 2).min(64))),
            })
        }
        (x, y) if is_decimal(x) || is_decimal(y) => {
            if is_float(x) || is_float(y) {
                return Some(Float64);
            }
            common_decimal(as_decimal(x)?, as_decimal(y)?)
        }
        (Float64, y) | (y, Float64) if is_numeric(y) => Some(Float64),
        (Float32, y) | (y, Float32) if is_integer(y) => {
            Some(if bit_width(y) <= 16 { Float32 } else { Float64 })
        }
        (Date32, Timestamp(u, tz)) | (Timestamp(u, tz), Date32) => Some(Timestamp(*u, tz.clone())),
        (Timestamp(ua, za), Timestamp(ub, zb)) => Some(Timestamp(
            finer(*ua, *ub),
            za.clone().or_else(|| zb.clone()),
        )),
        (x, y) if is_time(x) && is_time(y) => Some(time_type(finer(time_unit(x)?, time_unit(y)?))),
        _ => None,
    }
}

/// The SQL spelling of a type, as `Display` prints it and the parser reads it.
pub fn sql_type_name(t: &DataType) -> String {
    use DataType::*;
    match t {
        Null => "NULL".into(),
        Boolean => "BOOLEAN".into(),
        Int8 => "TINYINT".into(),
        Int16 => "SMALLINT".into(),
        Int32 => "INTEGER".into(),
        Int64 => "BIGINT".into(),
        UInt8 => "UTINYINT".into(),
        UInt16 => "USMALLINT".into(),
        UInt32 => "UINTEGER".into(),
        UInt64 => "UBIGINT".into(),
        Float32 => "REAL".into(),
        Float64 => "DOUBLE".into(),
        Utf8 => "VARCHAR".into(),
        Binary => "BLOB".into(),
        Date32 => "DATE".into(),
        Interval(IntervalUnit::MonthDayNano) => "INTERVAL".into(),
        Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) | Decimal256(p, s) => {
            format!("DECIMAL({p},{s})")
        }
        Timestamp(unit, tz) => {
            let mut s = String::from("TIMESTAMP");
            if *unit != TimeUnit::Microsecond {
                s.push_str(&format!("({})", timestamp_precision(unit)));
            }
            if tz.is_some() {
                s.push_str(" WITH TIME ZONE");
            }
            s
        }
        t if is_time(t) => match time_unit(t) {
            Some(TimeUnit::Microsecond) | None => "TIME".into(),
            Some(unit) => format!("TIME({})", timestamp_precision(&unit)),
        },
        other => format!("{other}"),
    }
}

/// The time zone a `TIMESTAMP … WITH TIME ZONE` written in SQL gets.
pub const SQL_TIME_ZONE: &str = "+00:00";

/// The Arrow type for a SQL type from the parser, or a description of why not.
pub fn from_sql_type(t: &sqlparser::ast::DataType) -> Result<DataType, String> {
    use sqlparser::ast::{DataType as S, TimezoneInfo};
    Ok(match t {
        S::Boolean | S::Bool => DataType::Boolean,
        S::TinyInt(_) => DataType::Int8,
        S::SmallInt(_) | S::Int2(_) | S::Int16 => DataType::Int16,
        S::Int(_) | S::Integer(_) | S::Int4(_) | S::Int32 => DataType::Int32,
        S::BigInt(_) | S::Int8(_) | S::Int64 => DataType::Int64,
        S::UTinyInt | S::TinyIntUnsigned(_) | S::UInt8 => DataType::UInt8,
        S::USmallInt | S::SmallIntUnsigned(_) | S::UInt16 => DataType::UInt16,
        S::IntUnsigned(_) | S::IntegerUnsigned(_) | S::UInt32 => DataType::UInt32,
        S::Custom(name, args)
            if args.is_empty() && name.to_string().eq_ignore_ascii_case("UINTEGER") =>
        {
            DataType::UInt32
        }
        S::UBigInt | S::BigIntUnsigned(_) | S::UInt64 => DataType::UInt64,
        S::Real | S::Float4 | S::Float32 => DataType::Float32,
        S::Double(_) | S::DoublePrecision | S::Float8 | S::Float64 => DataType::Float64,
        S::Float(info) => match info {
            sqlparser::ast::ExactNumberInfo::Precision(p) if *p <= 24 => DataType::Float32,
            _ => DataType::Float64,
        },
        S::Varchar(_)
        | S::Text
        | S::String(_)
        | S::CharVarying(_)
        | S::CharacterVarying(_)
        | S::Char(_)
        | S::Character(_)
        | S::Nvarchar(_) => DataType::Utf8,
        S::Blob(_)
        | S::Bytea
        | S::Binary(_)
        | S::Varbinary(_)
        | S::TinyBlob
        | S::MediumBlob
        | S::LongBlob => DataType::Binary,
        S::Interval {
            fields: None,
            precision: None,
        } => DataType::Interval(IntervalUnit::MonthDayNano),
        S::Decimal(info) | S::Numeric(info) | S::Dec(info) => decimal_of_sql(info)?,
        S::Date => DataType::Date32,
        S::Timestamp(precision, tz) => {
            let unit = precision_unit("TIMESTAMP", *precision)?;
            let tz = match tz {
                TimezoneInfo::None | TimezoneInfo::WithoutTimeZone => None,
                TimezoneInfo::WithTimeZone | TimezoneInfo::Tz => Some(SQL_TIME_ZONE.into()),
            };
            DataType::Timestamp(unit, tz)
        }
        S::TimestampNtz(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
        S::Time(precision, tz) => {
            if matches!(tz, TimezoneInfo::WithTimeZone | TimezoneInfo::Tz) {
                return Err(
                    "TIME WITH TIME ZONE is not supported (PostgreSQL advises against \
                            it); use TIME or TIMESTAMP WITH TIME ZONE"
                        .into(),
                );
            }
            time_type(precision_unit("TIME", *precision)?)
        }
        other => return Err(format!("the type {other} is not supported")),
    })
}

/// The unit of `TIMESTAMP(p)` or `TIME(p)` (`type_name`): 0, 3, 6 (the default) or
/// 9 fractional digits.
fn precision_unit(type_name: &str, precision: Option<u64>) -> Result<TimeUnit, String> {
    Ok(match precision {
        None | Some(6) => TimeUnit::Microsecond,
        Some(0) => TimeUnit::Second,
        Some(3) => TimeUnit::Millisecond,
        Some(9) => TimeUnit::Nanosecond,
        Some(p) => {
            return Err(format!(
                "{type_name}({p}) is not supported; use a precision of 0, 3, 6 or 9"
            ))
        }
    })
}
/// `DECIMAL`, `DECIMAL(p)`, `DECIMAL(p, s)` (also `NUMERIC`, `DEC`): DuckDB's default
/// of `DECIMAL(18,3)`, a scale of 0 when only the precision is given.
fn decimal_of_sql(info: &sqlparser::ast::ExactNumberInfo) -> Result<DataType, String> {
    use sqlparser::ast::ExactNumberInfo as I;
    let (p, s) = match *info {
        I::None => return Ok(DataType::Decimal128(DECIMAL_DEFAULT.0, DECIMAL_DEFAULT.1)),
        I::Precision(p) => (p, 0),
        I::PrecisionAndScale(p, s) => (p, s),
    };
    if !(1..=DECIMAL256_MAX_PRECISION as u64).contains(&p) {
        return Err(format!(
            "DECIMAL precision {p} is out of range: it must be between 1 and {DECIMAL256_MAX_PRECISION}"
        ));
    }
    let s = i8::try_from(s)
        .ok()
        .filter(|s| *s >= 0 && *s as u64 <= p)
        .ok_or_else(|| {
            format!("DECIMAL scale {s} is out of range: it must be between 0 and the precision {p}")
        })?;
    decimal_type(p as u8, s).ok_or_else(|| format!("DECIMAL({p},{s}) is not supported"))
}

/// Whether `CAST(x AS to)` is supported for a non-literal `x` of type `from`.
///
/// Every supported type casts to and from VARCHAR (a string that is not a value of
/// the type is an error at run time); literal strings are folded by the binder.
pub fn cast_supported(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    from == to
        || matches!(from, Null)
        || (matches!(from, Utf8) && is_supported(to) && !matches!(to, Null))
        || (matches!(to, Utf8) && is_supported(from))
        || (is_numeric(from) && is_numeric(to))
        || (is_decimal(from) && (is_numeric(to) || is_decimal(to)))
        || (is_decimal(to) && is_numeric(from))
        || (matches!(from, Boolean) && is_integer(to))
        || (is_integer(from) && matches!(to, Boolean))
        || (is_temporal(from) && is_temporal(to))
        || (is_time(from) && is_time(to))
        || (matches!(from, Timestamp(_, _)) && is_time(to))
}

/// Why a string is not a literal of a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralError {
    /// The text is not a value of the type.
    Invalid,
    /// The value does not fit the type.
    OutOfRange,
    /// A timestamp with more fractional digits than its unit holds.
    TooPrecise,
    /// The type has no literals.
    Unsupported,
}

impl LiteralError {
    /// The message for `text` not being a literal of type `to`, e.g.
    /// `invalid DATE literal '1994-13-45'`.
    pub fn message(self, text: &str, to: &DataType) -> String {
        let type_name = sql_type_name(to);
        match self {
            LiteralError::Invalid => format!("invalid {type_name} literal '{text}'"),
            LiteralError::OutOfRange => format!("{type_name} literal '{text}' out of range"),
            LiteralError::TooPrecise => {
                format!("{type_name} literal '{text}' is more precise than the type")
            }
            LiteralError::Unsupported => format!("literals of type {type_name} are not supported"),
        }
    }
}

/// The time units' SQL precisions: `TIMESTAMP(0)` seconds … `TIMESTAMP(9)` nanoseconds.
pub(crate) fn timestamp_precision(unit: &TimeUnit) -> u64 {
    match unit {
        TimeUnit::Second => 0,
        TimeUnit::Millisecond => 3,
        TimeUnit::Microsecond => 6,
        TimeUnit::Nanosecond => 9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_that_never_fail() {
        use DataType::*;
        for (from, to, never) in [
            (Int32, Int64, true),
            (Int64, Int32, false),
            (UInt32, Int64, true),
            (UInt32, Int32, false),
            (Int8, UInt64, false),
            (UInt64, Float32, true),
            (Float64, Float32, false),
            (Float32, Float64, true),
            (Decimal128(15, 2), Float64, true),
            (Decimal256(76, 0), Float64, true),
            (Decimal256(76, 0), Float32, false),
            (Decimal128(15, 2), Decimal128(16, 3), true),
            (Decimal128(15, 2), Decimal128(15, 3), false),
            (Decimal128(15, 2), Decimal128(15, 1), false),
            (Decimal128(38, 0), Decimal256(40, 2), true),
            (Int32, Decimal128(10, 0), true),
            (Int32, Decimal128(10, 1), false),
            (Int64, Decimal128(21, 2), true),
            (Float64, Decimal128(38, 0), false),
            (Decimal128(15, 2), Int64, false),
            (Utf8, Int64, false),
        ] {
            assert_eq!(cast_never_fails(&from, &to), never, "{from} -> {to}");
        }
    }

    #[test]
    fn integer_promotion_widens_and_mixes_signedness() {
        use DataType::*;
        assert_eq!(common_type(&Int8, &Int32), Some(Int32));
        assert_eq!(common_type(&UInt8, &Int8), Some(Int16));
        assert_eq!(common_type(&UInt32, &Int16), Some(Int64));
        assert_eq!(common_type(&UInt64, &Int64), Some(Int64));
        assert_eq!(common_type(&UInt16, &UInt64), Some(UInt64));
    }

    #[test]
    fn floats_and_temporal_types_meet_as_documented() {
        use DataType::*;
        assert_eq!(common_type(&Int16, &Float32), Some(Float32));
        assert_eq!(common_type(&Int32, &Float32), Some(Float64));
        assert_eq!(common_type(&Float32, &Float64), Some(Float64));
        assert_eq!(
            common_type(&Date32, &Timestamp(TimeUnit::Second, None)),
            Some(Timestamp(TimeUnit::Second, None))
        );
        assert_eq!(
            common_type(
                &Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
                &Timestamp(TimeUnit::Nanosecond, None)
            ),
            Some(Timestamp(TimeUnit::Nanosecond, Some("UTC".into())))
        );
        assert_eq!(common_type(&Utf8, &Int32), None);
        assert_eq!(common_type(&Boolean, &Int32), None);
    }
}
