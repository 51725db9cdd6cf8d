//! Values as DuckDB's sqllogictest runner prints them, and its rules for
//! comparing a result with the expected text.

use arrow::array::Array;
use arrow::datatypes::{DataType, TimeUnit};
use arrow::util::display::array_value_to_string;
use broadhead::scalar::format_blob;
use broadhead::ScalarValue;
use chrono::{Datelike, NaiveDate};

/// Days since 1970-01-01 as (year, month, day), proleptic Gregorian, for any day
/// count: chrono covers ±262,143 years, and the calendar repeats every 400 years
/// (146,097 days).
pub(crate) fn civil(days: i64) -> (i64, u32, u32) {
    let cycles = days.div_euclid(146_097);
    // 1970-01-01 is day 719,163 of the Common Era (0001-01-01 is day 1).
    let d = NaiveDate::from_num_days_from_ce_opt((days.rem_euclid(146_097) + 719_163) as i32)
        .expect("a day within 400 years of 1970 is in chrono's range");
    (i64::from(d.year()) + 400 * cycles, d.month(), d.day())
}

/// DuckDB's date text: `1992-01-01`, `0044-03-15 (BC)`.
pub(crate) fn date_text(days: i64) -> (String, bool) {
    let (y, m, d) = civil(days);
    if y <= 0 {
        (format!("{:04}-{m:02}-{d:02}", 1 - y), true)
    } else {
        (format!("{y:04}-{m:02}-{d:02}"), false)
    }
}

/// `HH:MM:SS[.fraction]` of nanoseconds, trailing zeros trimmed.
pub(crate) fn time_text(nanos: i64) -> String {
    let (secs, frac) = (
        nanos.div_euclid(1_000_000_000),
        nanos.rem_euclid(1_000_000_000),
    );
    let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if frac != 0 {
        let f = format!("{frac:09}");
        s.push('.');
        s.push_str(f.trim_end_matches('0'));
    }
    s
}

pub(crate) fn nanos_per(unit: &TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// DuckDB's interval text: `1 year 2 months 3 days 04:05:06.5`, `00:00:00`.
pub(crate) fn interval_text(months: i32, days: i32, nanos: i64) -> String {
    let mut parts = Vec::new();
    let (years, months) = (months / 12, months % 12);
    for (n, unit) in [(years, "year"), (months, "month"), (days, "day")] {
        if n != 0 {
            let plural = if n == 1 || n == -1 { "" } else { "s" };
            parts.push(format!("{n} {unit}{plural}"));
        }
    }
    if nanos != 0 {
        let sign = if nanos < 0 { "-" } else { "" };
        parts.push(format!("{sign}{}", time_text(nanos.abs())));
    }
    if parts.is_empty() {
        "00:00:00".into()
    } else {
        parts.join(" ")
    }
}

/// Row `row` of `a` as DuckDB's sqllogictest runner prints it.
pub(crate) fn render(a: &dyn Array, row: usize) -> String {
    let Some(v) = ScalarValue::from_array(a, row) else {
        return array_value_to_string(a, row).unwrap_or_else(|e| format!("<{e}>"));
    };
    use ScalarValue as S;
    match v {
        S::Null(_) => "NULL".into(),
        S::Boolean(b) => b.to_string(),
        S::Int8(x) => x.to_string(),
        S::Int16(x) => x.to_string(),
        S::Int32(x) => x.to_string(),
        S::Int64(x) => x.to_string(),
        S::UInt8(x) => x.to_string(),
        S::UInt16(x) => x.to_string(),
        S::UInt32(x) => x.to_string(),
        S::UInt64(x) => x.to_string(),
        S::Float32(x) => float_text(f64::from(x)),
        S::Float64(x) => float_text(x),
        S::Decimal128(u, _, s) => {
            let digits = u.unsigned_abs().to_string();
            let s = s.max(0) as usize;
            let digits = format!("{digits:0>width$}", width = s + 1);
            let (int, frac) = digits.split_at(digits.len() - s);
            let sign = if u < 0 { "-" } else { "" };
            if s == 0 {
                format!("{sign}{int}")
            } else {
                format!("{sign}{int}.{frac}")
            }
        }
        S::Utf8(s) if s.is_empty() => "(empty)".into(),
        S::Utf8(s) => s.replace('\0', "\\0"),
        S::Binary(b) => format_blob(&b),
        S::Date32(d) => {
            let (text, bc) = date_text(i64::from(d));
            if bc {
                format!("{text} (BC)")
            } else {
                text
            }
        }
        S::Timestamp(t, unit, zone) => {
            let per = nanos_per(&unit);
            let per_day = 86_400_000_000_000 / per;
            let (days, rest) = (t.div_euclid(per_day), t.rem_euclid(per_day));
            let (date, bc) = date_text(days);
            let mut s = format!("{date} {}", time_text(rest * per));
            if zone.is_some() {
                s.push_str("+00");
            }
            if bc {
                s.push_str(" (BC)");
            }
            s
        }
        S::Time(t, unit) => time_text(t * nanos_per(&unit)),
        S::IntervalMonthDayNano(i) => interval_text(i.months, i.days, i.nanoseconds),
        S::Decimal256(..) => array_value_to_string(a, row).unwrap_or_default(),
    }
}

pub(crate) fn float_text(x: f64) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else if x != 0.0 && !(1e-5..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
    }
}

pub(crate) fn parse_float(s: &str) -> Option<f64> {
    match s.to_ascii_lowercase().as_str() {
        "nan" | "-nan" => Some(f64::NAN),
        "inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        t => t.parse().ok(),
    }
}

/// Whether our value (of type `t`) is the expected text, as DuckDB's runner decides.
pub(crate) fn same_value(ours: &str, expected: &str, t: &DataType) -> bool {
    if ours == expected {
        return true;
    }
    if t.is_numeric() {
        let (Some(a), Some(b)) = (parse_float(ours), parse_float(expected)) else {
            return false;
        };
        if matches!(t, DataType::Float16 | DataType::Float32 | DataType::Float64) {
            if a.is_nan() && b.is_nan() {
                return true;
            }
            if !a.is_finite() || !b.is_finite() {
                return a == b;
            }
            return (a - b).abs() <= b.abs() * 0.01 + 0.000_000_01;
        }
        // Integers and decimals: equal as numbers (both texts are exact here, and
        // the runner casts the expected text to the result's type).
        return match (ours.parse::<i128>(), expected.parse::<i128>()) {
            (Ok(x), Ok(y)) => x == y,
            _ => a == b,
        };
    }
    if *t == DataType::Boolean {
        let norm = |s: &str| match s.to_ascii_lowercase().as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        };
        return norm(ours).is_some() && norm(ours) == norm(expected);
    }
    false
}

/// One line of the outcome, for the deviation list: SQL, our answer, DuckDB's.
pub(crate) fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_dates_and_intervals_as_duckdb() {
        assert_eq!(date_text(0), ("1970-01-01".to_string(), false));
        assert_eq!(date_text(8035), ("1992-01-01".to_string(), false));
        // 44 BC is the proleptic year -43.
        let (y, m, d) = civil(-735_160);
        assert_eq!((y, m, d), (-43, 3, 15));
        assert_eq!(date_text(-735_160), ("0044-03-15".to_string(), true));
        // The largest DATE, beyond chrono's range.
        assert_eq!(civil(i64::from(i32::MAX)), (5_881_580, 7, 11));
        assert_eq!(
            interval_text(14, 3, 3_723_500_000_000),
            "1 year 2 months 3 days 01:02:03.5"
        );
        assert_eq!(interval_text(-1, 0, -1_000_000_000), "-1 month -00:00:01");
        assert_eq!(interval_text(0, 0, 0), "00:00:00");
        assert!(same_value("0.1", "0.1000001", &DataType::Float64));
        assert!(!same_value("0.1", "0.2", &DataType::Float64));
        assert!(same_value("true", "1", &DataType::Boolean));
        assert!(same_value("1.50", "1.5", &DataType::Decimal128(3, 2)));
    }
}
