//! Dates and timestamps made from numbers or text: `make_date`, `make_timestamp`,
//! `to_timestamp`, `strptime`, `to_date`.

use arrow::datatypes::{Date32Type, Float64Type, Int64Type, TimestampMicrosecondType};
use arrow_schema::DataType;
use chrono::{NaiveDate, NaiveTime};

use super::formatting::{chrono_format, parse_datetime};
use super::{days_of, read_ts, write_ts, D, F, I, OUT_OF_RANGE, S, US};
use crate::functions::row::{map1, map2, map3, variadic, Outcome, Utf8};
use crate::functions::Registry;

/// A PostgreSQL year (no year 0; negative is BC) as chrono's.
fn chrono_year(y: i64) -> Option<i32> {
    let y = match y {
        0 => return None,
        y if y < 0 => y + 1,
        y => y,
    };
    i32::try_from(y).ok()
}

/// `make_date(y, m, d)`: PostgreSQL's message names the invalid date.
fn make_date(y: i64, m: i64, d: i64) -> Result<NaiveDate, String> {
    chrono_year(y)
        .zip(u32::try_from(m).ok())
        .zip(u32::try_from(d).ok())
        .and_then(|((y, m), d)| NaiveDate::from_ymd_opt(y, m, d))
        .ok_or_else(|| format!("date field value out of range: {y}-{m:02}-{d:02}"))
}

/// `make_timestamp(y, mo, d, h, mi, s)`.
fn make_timestamp(v: &[Option<f64>]) -> Outcome<i64> {
    let [y, mo, d, h, mi, s] =
        [0, 1, 2, 3, 4, 5].map(|i| v.get(i).copied().flatten().unwrap_or(f64::NAN));
    let int = |x: f64| (x.fract() == 0.0 && x.abs() < 1e15).then_some(x as i64);
    let (Some(y), Some(mo), Some(d)) = (int(y), int(mo), int(d)) else {
        return Err(format!("date field value out of range: {y}-{mo}-{d}"));
    };
    let date = make_date(y, mo, d)?;
    let time_error = || format!("time field value out of range: {h}:{mi:02}:{s:02}");
    let (Some(hh), Some(mm)) = (int(h), int(mi)) else {
        return Err(time_error());
    };
    if !(0..24).contains(&hh) || !(0..60).contains(&mm) || !(0.0..60.0).contains(&s) {
        return Err(time_error());
    }
    let micros = (s * 1e6).round() as i64;
    let time = NaiveTime::from_hms_micro_opt(
        hh as u32,
        mm as u32,
        (micros / 1_000_000) as u32,
        (micros % 1_000_000) as u32,
    )
    .ok_or_else(time_error)?;
    write_ts(date.and_time(time), US).map(Some)
}

/// `to_timestamp(seconds)`: microseconds since 1970, rounded.
fn from_epoch_seconds(s: f64) -> Outcome<i64> {
    if s.is_nan() {
        return Err("timestamp cannot be NaN".into());
    }
    let micros = (s * 1e6).round();
    // Within the range chrono (and PostgreSQL's 294276 AD) can show.
    if micros.abs() >= 9.2e18 || read_ts(micros as i64, US).is_err() {
        return Err(OUT_OF_RANGE.into());
    }
    Ok(Some(micros as i64))
}

pub(super) fn register(r: &mut Registry) {
    r.function("make_date")
        .example("make_date(2024, 2, 29)", "2024-02-29")
        .sig(
            &[I, I, I],
            D,
            "the date of year, month and day; an invalid date is an error (negative years are BC)",
            map3::<Int64Type, Int64Type, Int64Type, Date32Type, _>(|y: i64, m: i64, d: i64| {
                make_date(y, m, d).map(|d| Some(days_of(d)))
            })
            .fallible(),
        );
    r.function("make_timestamp")
        .example("make_timestamp(2024, 2, 29, 13, 45, 30.5)", "2024-02-29T13:45:30.500")
        .sig(
            &[F, F, F, F, F, F],
            DataType::Timestamp(US, None),
            "the timestamp of year, month, day, hour, minute and seconds (with a fraction); invalid fields are an error",
            variadic::<Float64Type, TimestampMicrosecondType, _>(true, make_timestamp).fallible(),
        );
    r.function("to_timestamp")
        .example("to_timestamp(1709214330.5)", "2024-02-29T13:45:30.500Z")
        .example("to_timestamp('29 Feb 2024 13:45', 'DD Mon YYYY HH24:MI')", "2024-02-29T13:45:00Z")
        .sig(
            &[F],
            DataType::Timestamp(US, Some("UTC".into())),
            "the TIMESTAMP WITH TIME ZONE `seconds` after 1970-01-01 00:00:00 UTC (microseconds, rounded)",
            map1::<Float64Type, TimestampMicrosecondType, _>(from_epoch_seconds).fallible(),
        )
        .sig(
            &[S, S],
            DataType::Timestamp(US, Some("UTC".into())),
            "s read with PostgreSQL's template (YYYY MM DD HH24 MI SS Mon …), in UTC; a string that does not fit is an error",
            map2::<Utf8, Utf8, TimestampMicrosecondType, _>(|s: &str, template: &str| {
                let dt = parse_datetime(s, &chrono_format(template), template)?;
                write_ts(dt, US).map(Some)
            })
            .fallible(),
        );
    r.function("strptime")
        .example("strptime('2024-02-29 13:45', '%Y-%m-%d %H:%M')", "2024-02-29T13:45:00")
        .sig(
            &[S, S],
            DataType::Timestamp(US, None),
            "s read with a strftime format (%Y %m %d %H %M %S …); a string that does not fit is an error",
            map2::<Utf8, Utf8, TimestampMicrosecondType, _>(|s: &str, format: &str| {
                write_ts(parse_datetime(s, format, format)?, US).map(Some)
            })
            .fallible(),
        );
    r.function("to_date")
        .example("to_date('05 Dec 2000', 'DD Mon YYYY')", "2000-12-05")
        .sig(
            &[S, S],
            D,
            "s read as a date with PostgreSQL's template (YYYY MM DD Mon Month DDD …); a string that does not fit is an error",
            map2::<Utf8, Utf8, Date32Type, _>(|s: &str, template: &str| {
                let dt = parse_datetime(s, &chrono_format(template), template)?;
                Ok(Some(days_of(dt.date())))
            })
            .fallible(),
        );
}
