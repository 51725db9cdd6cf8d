//! Literals: numbers typed as DuckDB types them, strings, BLOBs, typed strings
//! (`DATE '…'`) and `INTERVAL '…'`.

use arrow_schema::DataType;
use sqlparser::ast::{self, DateTimeField, Value, ValueWithSpan};

use super::errors::{describe, error, shallow_span, span};
use super::Cx;
use crate::error::ParseError;
use crate::expr::{Expr, ExprKind, Span};
use crate::scalar::ScalarValue;
use crate::types::{from_sql_type, sql_type_name};

/// A literal as a node; `negative` when a unary minus was applied to it directly.
pub(super) fn literal(v: &ValueWithSpan, negative: bool) -> Result<Expr, ParseError> {
    Ok(Expr::new(ExprKind::Literal(value(v, negative)?)).with_span(span(v.span)))
}

/// A literal value; `negative` when a unary minus was applied to it directly.
fn value(v: &ValueWithSpan, negative: bool) -> Result<ScalarValue, ParseError> {
    let at = span(v.span);
    Ok(match &v.value {
        Value::Number(text, false) => number(text, negative, at)?,
        Value::SingleQuotedString(s)
        | Value::EscapedStringLiteral(s)
        | Value::UnicodeStringLiteral(s)
        | Value::NationalStringLiteral(s)
        | Value::TripleSingleQuotedString(s)
        | Value::TripleDoubleQuotedString(s) => ScalarValue::Utf8(s.clone()),
        Value::DollarQuotedString(s) => ScalarValue::Utf8(s.value.clone()),
        Value::Boolean(b) => ScalarValue::Boolean(*b),
        Value::Null => ScalarValue::Null(DataType::Null),
        Value::HexStringLiteral(digits) => ScalarValue::Binary(hex_literal(digits, at)?),
        other => {
            return Err(error(
                format!("unsupported SQL construct: {}", describe(other)),
                at,
            ))
        }
    })
}

/// The bytes of `X'4142'` from its digits: an even number of hexadecimal digits.
fn hex_literal(digits: &str, at: Span) -> Result<Vec<u8>, ParseError> {
    if let Some(bad) = digits.chars().find(|c| !c.is_ascii_hexdigit()) {
        return Err(error(
            format!("a BLOB literal X'…' holds hexadecimal digits, not '{bad}'"),
            at,
        ));
    }
    if digits.len() % 2 == 1 {
        return Err(error(
            "a BLOB literal X'…' needs an even number of hexadecimal digits",
            at,
        ));
    }
    Ok((0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).unwrap_or(0))
        .collect())
}

/// A numeric literal, typed as DuckDB types it: `BIGINT`, else `UBIGINT`, else
/// `DECIMAL(digits, 0)`; with a point `DECIMAL(digits, fraction digits)` (`1.25` is
/// `DECIMAL(3,2)`); `DOUBLE` with an exponent or beyond 38 digits.
fn number(text: &str, negative: bool, at: Span) -> Result<ScalarValue, ParseError> {
    let signed = if negative {
        format!("-{text}")
    } else {
        text.to_string()
    };
    let as_double = || -> Result<ScalarValue, ParseError> {
        let v: f64 = signed
            .parse()
            .map_err(|_| error(format!("invalid numeric literal {signed}"), at))?;
        if v.is_infinite() {
            return Err(error(format!("numeric literal {signed} out of range"), at));
        }
        Ok(ScalarValue::Float64(v))
    };
    let max = crate::types::DECIMAL128_MAX_PRECISION as usize;
    if text.contains(['.', 'e', 'E']) {
        return match crate::decimal::literal_type(text) {
            Some((p, s)) if p <= max => {
                let (p, s) = (p.max(1) as u8, s as i8);
                let v = crate::decimal::parse::<i128>(&signed, p, s)
                    .map_err(|_| error(format!("invalid numeric literal {signed}"), at))?;
                Ok(ScalarValue::Decimal128(v, p, s))
            }
            _ => as_double(),
        };
    }
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(error(format!("invalid numeric literal {signed}"), at));
    }
    if let Ok(v) = signed.parse::<i64>() {
        Ok(ScalarValue::Int64(v))
    } else if let (false, Ok(v)) = (negative, text.parse::<u64>()) {
        Ok(ScalarValue::UInt64(v))
    } else if text.len() <= max {
        let p = text.len() as u8;
        let v = crate::decimal::parse::<i128>(&signed, p, 0)
            .map_err(|_| error(format!("invalid numeric literal {signed}"), at))?;
        Ok(ScalarValue::Decimal128(v, p, 0))
    } else {
        as_double()
    }
}

/// `TYPE 'text'`: a literal of the type, parsed from the text.
pub(super) fn typed_string(
    data_type: &ast::DataType,
    v: &ValueWithSpan,
    at: Span,
) -> Result<ScalarValue, ParseError> {
    let to = from_sql_type(data_type).map_err(|m| error(m, at))?;
    let type_name = sql_type_name(&to);
    let text = match &v.value {
        Value::SingleQuotedString(s)
        | Value::EscapedStringLiteral(s)
        | Value::UnicodeStringLiteral(s)
        | Value::NationalStringLiteral(s) => s.as_str(),
        Value::DollarQuotedString(s) => s.value.as_str(),
        _ => {
            return Err(error(
                format!("a {type_name} literal must be a quoted string"),
                at,
            ));
        }
    };
    ScalarValue::parse(text, &to).map_err(|e| error(e.message(text, &to), at))
}

/// The unit of a bare number in an interval with a leading field (`INTERVAL '3' DAY`).
fn interval_unit(
    field: &DateTimeField,
) -> Option<arrow::compute::kernels::cast_utils::IntervalUnit> {
    use arrow::compute::kernels::cast_utils::IntervalUnit as U;
    Some(match field {
        DateTimeField::Year | DateTimeField::Years => U::Year,
        DateTimeField::Month | DateTimeField::Months => U::Month,
        DateTimeField::Week(None) | DateTimeField::Weeks => U::Week,
        DateTimeField::Day | DateTimeField::Days => U::Day,
        DateTimeField::Hour | DateTimeField::Hours => U::Hour,
        DateTimeField::Minute | DateTimeField::Minutes => U::Minute,
        DateTimeField::Second | DateTimeField::Seconds => U::Second,
        DateTimeField::Millisecond | DateTimeField::Milliseconds => U::Millisecond,
        DateTimeField::Microsecond | DateTimeField::Microseconds => U::Microsecond,
        DateTimeField::Nanosecond | DateTimeField::Nanoseconds => U::Nanosecond,
        DateTimeField::Decade => U::Decade,
        DateTimeField::Century => U::Century,
        _ => return None,
    })
}

/// `INTERVAL 'text' [unit]` or `INTERVAL n unit`: a `MonthDayNano` interval literal,
/// read by arrow's interval parser (PostgreSQL's unit names and abbreviations).
pub(super) fn interval(e: &ast::Expr, iv: &ast::Interval, d: Cx) -> Result<Expr, ParseError> {
    use arrow::compute::kernels::cast_utils::IntervalUnit;
    let at = shallow_span(e, d);
    if iv.last_field.is_some()
        || iv.leading_precision.is_some()
        || iv.fractional_seconds_precision.is_some()
    {
        return Err(error(
            "INTERVAL … TO … and interval precisions are not supported; write INTERVAL '1 year 2 months'",
            at,
        ));
    }
    let (text, text_at) = match iv.value.as_ref() {
        ast::Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::Number(s, false) => (s.as_str(), span(v.span)),
            _ => return Err(error("an INTERVAL needs a quoted string or a number", at)),
        },
        _ => return Err(error("an INTERVAL needs a quoted string or a number", at)),
    };
    let unit = match &iv.leading_field {
        None => IntervalUnit::Second,
        Some(field) => interval_unit(field)
            .ok_or_else(|| error(format!("INTERVAL unit {field} is not supported"), at))?,
    };
    let value = crate::scalar::parse_interval(text, unit)
        .map_err(|_| error(format!("invalid INTERVAL literal '{text}'"), text_at))?;
    let at = if at.is_known() { at } else { text_at };
    Ok(Expr::new(ExprKind::Literal(ScalarValue::IntervalMonthDayNano(value))).with_span(at))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_schema::{DataType, TimeUnit};

    use super::super::test_util::{err, message, p, scalar};
    use crate::expr::{col, lit, null};
    use crate::scalar::ScalarValue;
    use crate::types::SQL_TIME_ZONE;

    #[test]
    fn integer_literals_are_bigint_then_ubigint() {
        assert_eq!(scalar("0"), ScalarValue::Int64(0));
        assert_eq!(scalar("9223372036854775807"), ScalarValue::Int64(i64::MAX));
        assert_eq!(scalar("9223372036854775808"), ScalarValue::UInt64(1 << 63));
        assert_eq!(
            scalar("18446744073709551615"),
            ScalarValue::UInt64(u64::MAX)
        );
        // Beyond UBIGINT: DECIMAL(digits, 0) up to 38 digits (DuckDB: HUGEINT), then
        // DOUBLE.
        assert_eq!(
            scalar("18446744073709551616"),
            ScalarValue::Decimal128(18446744073709551616, 20, 0)
        );
        assert_eq!(
            scalar("12345678901234567890123"),
            ScalarValue::Decimal128(12345678901234567890123, 23, 0)
        );
        assert_eq!(scalar(&"9".repeat(39)), ScalarValue::Float64(1e39));
    }

    #[test]
    fn unary_minus_folds_into_number_literals_only() {
        assert_eq!(scalar("-9223372036854775808"), ScalarValue::Int64(i64::MIN));
        assert_eq!(scalar("-5"), ScalarValue::Int64(-5));
        assert_eq!(scalar("- 5"), ScalarValue::Int64(-5));
        assert_eq!(scalar("-1.5"), ScalarValue::Decimal128(-15, 2, 1));
        assert_eq!(scalar("-0.0"), ScalarValue::Decimal128(0, 2, 1));
        assert_eq!(scalar("-0.0e0"), ScalarValue::Float64(-0.0));
        assert_ne!(scalar("-0.0e0"), ScalarValue::Float64(0.0));
        assert_eq!(scalar("(-5)"), ScalarValue::Int64(-5));
        assert_eq!(p("-(5)"), lit(5i64).neg());
        assert_eq!(p("-(-5)"), lit(-5i64).neg());
        assert_eq!(p("- -5"), lit(-5i64).neg());
        assert_eq!(p("-x"), col("x").neg());
        assert_eq!(p("-(x + 1)"), col("x").add(lit(1i64)).neg());
        assert_eq!(
            scalar("-9223372036854775809"),
            ScalarValue::Decimal128(-9223372036854775809, 19, 0)
        );
        assert_eq!(
            scalar("-18446744073709551615"),
            ScalarValue::Decimal128(-18446744073709551615, 20, 0)
        );
    }

    /// As DuckDB: a point makes a DECIMAL of the digits written, an exponent a DOUBLE.
    #[test]
    fn point_literals_are_decimal_and_exponents_double() {
        assert_eq!(scalar("1.5"), ScalarValue::Decimal128(15, 2, 1));
        assert_eq!(scalar("1e3"), ScalarValue::Float64(1000.0));
        assert_eq!(scalar("2E-2"), ScalarValue::Float64(0.02));
        assert_eq!(scalar("1.0"), ScalarValue::Decimal128(10, 2, 1));
        assert_eq!(scalar(".5"), ScalarValue::Decimal128(5, 1, 1));
        assert_eq!(scalar("0.05"), ScalarValue::Decimal128(5, 3, 2));
        assert_eq!(
            p("x > 2.0"),
            col("x").gt(lit(ScalarValue::Decimal128(20, 2, 1)))
        );
        assert_eq!(
            scalar("1.23456789012345678901234567890123456789"),
            ScalarValue::Float64(1.234_567_890_123_456_8)
        );
        assert_eq!(
            err("1e400"),
            ("numeric literal 1e400 out of range".into(), (1, 6))
        );
        assert_eq!(message("-1e400"), "numeric literal -1e400 out of range");
    }

    #[test]
    fn strings_booleans_and_null() {
        assert_eq!(p("'AIR'"), lit("AIR"));
        assert_eq!(p("'it''s'"), lit("it's"));
        assert_eq!(p("'back\\slash'"), lit("back\\slash"));
        assert_eq!(p("''"), lit(""));
        assert_eq!(p("TRUE"), lit(true));
        assert_eq!(p("false"), lit(false));
        assert_eq!(p("NULL"), null());
        assert_eq!(scalar("null"), ScalarValue::Null(DataType::Null));
    }

    #[test]
    fn typed_date_literals() {
        assert_eq!(scalar("DATE '1970-01-01'"), ScalarValue::Date32(0));
        assert_eq!(scalar("DATE '1994-01-01'"), ScalarValue::Date32(8766));
        assert_eq!(scalar("DATE '1969-12-31'"), ScalarValue::Date32(-1));
        assert_eq!(
            err("DATE '1994-13-45'"),
            ("invalid DATE literal '1994-13-45'".into(), (6, 18))
        );
        assert_eq!(err("x < DATE 'soon'").1, (10, 16));
        assert_eq!(message("DATE 5"), "a DATE literal must be a quoted string");
    }

    #[test]
    fn typed_timestamp_literals() {
        let us = |v| ScalarValue::Timestamp(v, TimeUnit::Microsecond, None);
        assert_eq!(scalar("TIMESTAMP '1970-01-01 00:00:01'"), us(1_000_000));
        assert_eq!(scalar("TIMESTAMP '1970-01-01 00:00:01.5'"), us(1_500_000));
        assert_eq!(
            scalar("TIMESTAMP '1970-01-01T00:00:01.000002'"),
            us(1_000_002)
        );
        assert_eq!(scalar("TIMESTAMP '1970-01-02'"), us(86_400_000_000));
        assert_eq!(scalar("TIMESTAMP '1970-01-01 00:02'"), us(120_000_000));
        assert_eq!(scalar("TIMESTAMP '1969-12-31 23:59:59.999999'"), us(-1));
        assert_eq!(
            scalar("TIMESTAMP(0) '1970-01-01 00:01:00'"),
            ScalarValue::Timestamp(60, TimeUnit::Second, None)
        );
        assert_eq!(
            scalar("TIMESTAMP(3) '1970-01-01 00:00:00.250'"),
            ScalarValue::Timestamp(250, TimeUnit::Millisecond, None)
        );
        assert_eq!(
            scalar("TIMESTAMP(9) WITH TIME ZONE '1970-01-01 00:00:00.000000001'"),
            ScalarValue::Timestamp(1, TimeUnit::Nanosecond, Some(Arc::from(SQL_TIME_ZONE)))
        );
        assert_eq!(
            scalar("TIMESTAMP WITH TIME ZONE '2000-01-01'"),
            ScalarValue::Timestamp(
                946_684_800_000_000,
                TimeUnit::Microsecond,
                Some(Arc::from(SQL_TIME_ZONE))
            )
        );
        assert_eq!(
            message("TIMESTAMP(0) '1970-01-01 00:00:00.5'"),
            "TIMESTAMP(0) literal '1970-01-01 00:00:00.5' is more precise than the type"
        );
        assert_eq!(
            message("TIMESTAMP(9) '3000-01-01'"),
            "TIMESTAMP(9) literal '3000-01-01' out of range"
        );
        assert_eq!(
            message("TIMESTAMP '1970-01-01 25:00:00'"),
            "invalid TIMESTAMP literal '1970-01-01 25:00:00'"
        );
        assert_eq!(
            message("TIMESTAMP(4) '1970-01-01'"),
            "TIMESTAMP(4) is not supported; use a precision of 0, 3, 6 or 9"
        );
    }

    #[test]
    fn typed_numeric_and_other_literals() {
        assert_eq!(scalar("TINYINT '-128'"), ScalarValue::Int8(-128));
        assert_eq!(scalar("SMALLINT '300'"), ScalarValue::Int16(300));
        assert_eq!(scalar("INTEGER '5'"), ScalarValue::Int32(5));
        assert_eq!(scalar("INT ' 5 '"), ScalarValue::Int32(5));
        assert_eq!(
            scalar("BIGINT '-9223372036854775808'"),
            ScalarValue::Int64(i64::MIN)
        );
        assert_eq!(scalar("UTINYINT '255'"), ScalarValue::UInt8(255));
        assert_eq!(scalar("USMALLINT '65535'"), ScalarValue::UInt16(65535));
        assert_eq!(scalar("UINT32 '4294967295'"), ScalarValue::UInt32(u32::MAX));
        assert_eq!(
            scalar("UBIGINT '18446744073709551615'"),
            ScalarValue::UInt64(u64::MAX)
        );
        assert_eq!(
            err("TINYINT '300'"),
            ("TINYINT literal '300' out of range".into(), (9, 14))
        );
        assert_eq!(message("UTINYINT '-1'"), "invalid UTINYINT literal '-1'");
        assert_eq!(message("INTEGER 'five'"), "invalid INTEGER literal 'five'");
        assert_eq!(scalar("REAL '2.5'"), ScalarValue::Float32(2.5));
        assert_eq!(scalar("DOUBLE '2.5'"), ScalarValue::Float64(2.5));
        assert!(matches!(scalar("DOUBLE 'NaN'"), ScalarValue::Float64(v) if v.is_nan()));
        assert!(matches!(scalar("REAL 'nan'"), ScalarValue::Float32(v) if v.is_nan()));
        assert_eq!(
            scalar("DOUBLE 'Infinity'"),
            ScalarValue::Float64(f64::INFINITY)
        );
        assert_eq!(
            scalar("DOUBLE '-Infinity'"),
            ScalarValue::Float64(f64::NEG_INFINITY)
        );
        assert_eq!(scalar("REAL 'inf'"), ScalarValue::Float32(f32::INFINITY));
        assert_eq!(
            scalar("REAL '-INF'"),
            ScalarValue::Float32(f32::NEG_INFINITY)
        );
        assert_eq!(message("REAL '1e39'"), "REAL literal '1e39' out of range");
        assert_eq!(message("DOUBLE 'x'"), "invalid DOUBLE literal 'x'");
        assert_eq!(scalar("BOOLEAN 'true'"), ScalarValue::Boolean(true));
        assert_eq!(scalar("BOOLEAN 'FALSE'"), ScalarValue::Boolean(false));
        assert_eq!(
            message("BOOLEAN 'maybe'"),
            "invalid BOOLEAN literal 'maybe'"
        );
        assert_eq!(scalar("VARCHAR 'x'"), ScalarValue::Utf8("x".into()));
        assert_eq!(
            scalar("TIME '12:00'"),
            ScalarValue::Time(43_200_000_000, TimeUnit::Microsecond)
        );
        assert_eq!(
            scalar("TIME(3) '00:00:01.5'"),
            ScalarValue::Time(1_500, TimeUnit::Millisecond)
        );
        assert_eq!(
            message("TIME(0) '12:00:00.5'"),
            "TIME(0) literal '12:00:00.5' is more precise than the type"
        );
        assert_eq!(message("TIME '24:00'"), "invalid TIME literal '24:00'");
    }

    #[test]
    fn interval_literals() {
        use arrow::datatypes::IntervalMonthDayNano as I;
        const HOUR: i64 = 3_600_000_000_000;
        let iv = |m, d, n| ScalarValue::IntervalMonthDayNano(I::new(m, d, n));
        for (text, value, shown) in [
            ("INTERVAL '1 day'", iv(0, 1, 0), "INTERVAL '1 day'"),
            ("INTERVAL '1' DAY", iv(0, 1, 0), "INTERVAL '1 day'"),
            ("INTERVAL 3 MONTH", iv(3, 0, 0), "INTERVAL '3 months'"),
            (
                "interval '1 year 2 months'",
                iv(14, 0, 0),
                "INTERVAL '1 year 2 months'",
            ),
            (
                "INTERVAL '2 hours 30 minutes'",
                iv(0, 0, 5 * HOUR / 2),
                "INTERVAL '2 hours 30 minutes'",
            ),
            ("INTERVAL '-1 day'", iv(0, -1, 0), "INTERVAL '-1 days'"),
            (
                "INTERVAL '1.5 days'",
                iv(0, 1, HOUR * 12),
                "INTERVAL '1 day 12 hours'",
            ),
            (
                "INTERVAL '5'",
                iv(0, 0, 5_000_000_000),
                "INTERVAL '5 seconds'",
            ),
            ("INTERVAL '0 days'", iv(0, 0, 0), "INTERVAL '0 days'"),
            (
                "INTERVAL '2' HOUR",
                iv(0, 0, 2 * HOUR),
                "INTERVAL '2 hours'",
            ),
            (
                "INTERVAL '1 second 1 nanosecond'",
                iv(0, 0, 1_000_000_001),
                "INTERVAL '1 second 1 nanosecond'",
            ),
        ] {
            assert_eq!(scalar(text), value, "{text}");
            assert_eq!(value.to_string(), shown);
            assert_eq!(scalar(shown), value, "{shown}");
        }
        let interval = DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano);
        assert_eq!(
            p("CAST('1 day' AS INTERVAL)"),
            lit("1 day").cast(interval.clone())
        );
        assert_eq!(ScalarValue::parse(" 1 day ", &interval), Ok(iv(0, 1, 0)));
        assert_eq!(p("x::INTERVAL"), col("x").cast(interval.clone()));
        assert_eq!(
            p("CAST(NULL AS INTERVAL)"),
            lit(ScalarValue::Null(interval))
        );
        assert_eq!(
            err("x + INTERVAL '1 fortnight'"),
            ("invalid INTERVAL literal '1 fortnight'".into(), (14, 27))
        );
        assert_eq!(
            err("INTERVAL 'soon'"),
            ("invalid INTERVAL literal 'soon'".into(), (10, 16))
        );
        assert_eq!(
            message("INTERVAL '1' QUARTER"),
            "INTERVAL unit QUARTER is not supported"
        );
        assert!(message("INTERVAL '1-2' YEAR TO MONTH").starts_with("INTERVAL … TO …"));
        assert_eq!(
            message("INTERVAL x DAY"),
            "an INTERVAL needs a quoted string or a number"
        );
    }
}
