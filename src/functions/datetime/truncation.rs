//! Truncating and comparing on the calendar: `date_trunc`, `date_diff`, `date_add`
//! and `last_day`.

use arrow::datatypes::{
    Date32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_schema::{DataType, TimeUnit};
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike};

use super::civil::{civil_from_days, Civil};
use super::fields::{unknown_unit, Field};
use super::{
    date_of, days_of, epoch_nanos, on1, on_s1, on_s2, write_ts, Kind, D, I, KINDS, OUT_OF_RANGE, S,
};
use crate::functions::row::map2;
use crate::functions::{Inline, Lowering, Registry, ZoneReading};
use crate::scalar::ScalarValue;

/// `date_trunc`'s units.
fn truncate(unit: &str, dt: NaiveDateTime) -> Result<NaiveDateTime, String> {
    use Field::*;
    let field = Field::named(unit).ok_or_else(|| unknown_unit(unit))?;
    let date = dt.date();
    let ymd = |y: i32, m: u32| {
        NaiveDate::from_ymd_opt(y, m, 1)
            .map(|d| d.and_time(NaiveTime::MIN))
            .ok_or_else(|| OUT_OF_RANGE.to_string())
    };
    let time = |h: u32, m: u32, s: u32, n: u32| {
        date.and_hms_nano_opt(h, m, s, n)
            .ok_or_else(|| OUT_OF_RANGE.to_string())
    };
    let y = dt.year();
    match field {
        // Millennia and centuries start in years ending in 001 (PostgreSQL's).
        Millennium => ymd((y - 1).div_euclid(1000) * 1000 + 1, 1),
        Century => ymd((y - 1).div_euclid(100) * 100 + 1, 1),
        Decade => ymd(y.div_euclid(10) * 10, 1),
        Year => ymd(y, 1),
        Quarter => ymd(y, dt.month0() / 3 * 3 + 1),
        Month => ymd(y, dt.month()),
        Week => {
            let back = TimeDelta::days(i64::from(dt.weekday().num_days_from_monday()));
            let monday = date
                .checked_sub_signed(back)
                .ok_or_else(|| OUT_OF_RANGE.to_string())?;
            Ok(monday.and_time(NaiveTime::MIN))
        }
        Day => time(0, 0, 0, 0),
        Hour => time(dt.hour(), 0, 0, 0),
        Minute => time(dt.hour(), dt.minute(), 0, 0),
        Second => time(dt.hour(), dt.minute(), dt.second(), 0),
        Millisecond => time(
            dt.hour(),
            dt.minute(),
            dt.second(),
            dt.nanosecond() / 1_000_000 * 1_000_000,
        ),
        Microsecond => time(
            dt.hour(),
            dt.minute(),
            dt.second(),
            dt.nanosecond() / 1_000 * 1_000,
        ),
        IsoYear | Dow | IsoDow | Doy | Epoch => Err(unknown_unit(unit)),
    }
}

/// `date_diff(unit, a, b)`: the number of `unit` boundaries crossed going from `a`
/// to `b` (DuckDB's definition; negative when `b` is earlier).
fn difference(unit: &str, a: NaiveDateTime, b: NaiveDateTime) -> Result<i64, String> {
    use Field::*;
    let field = Field::named(unit).ok_or_else(|| unknown_unit(unit))?;
    let months = |d: NaiveDateTime| i64::from(d.year()) * 12 + i64::from(d.month0());
    let years = |d: NaiveDateTime| i64::from(d.year());
    let days = |d: NaiveDateTime| i64::from(days_of(d.date()));
    // Floor division of the time since 1970 in nanoseconds by the unit's length.
    let ticks = |per: i128| {
        let (x, y) = (
            epoch_nanos(a).div_euclid(per),
            epoch_nanos(b).div_euclid(per),
        );
        i64::try_from(y - x).map_err(|_| "bigint out of range".to_string())
    };
    Ok(match field {
        Millennium => years(b).div_euclid(1000) - years(a).div_euclid(1000),
        Century => years(b).div_euclid(100) - years(a).div_euclid(100),
        Decade => years(b).div_euclid(10) - years(a).div_euclid(10),
        Year => years(b) - years(a),
        IsoYear => i64::from(b.iso_week().year()) - i64::from(a.iso_week().year()),
        Quarter => months(b).div_euclid(3) - months(a).div_euclid(3),
        Month => months(b) - months(a),
        // Weeks start on Monday; 1970-01-01 was a Thursday.
        Week => (days(b) + 3).div_euclid(7) - (days(a) + 3).div_euclid(7),
        Day | Dow | IsoDow | Doy => days(b) - days(a),
        Hour => ticks(3_600_000_000_000)?,
        Minute => ticks(60_000_000_000)?,
        Second | Epoch => ticks(1_000_000_000)?,
        Millisecond => ticks(1_000_000)?,
        Microsecond => ticks(1_000)?,
    })
}

/// Whether `date_diff` counts `field` on dates alone (day and coarser, but not the
/// ISO year): then it is computed from the calendar's integer steps for every
/// DATE and cannot fail.
pub(crate) fn counts_dates(field: Field) -> bool {
    use Field::*;
    matches!(
        field,
        Millennium | Century | Decade | Year | Quarter | Month | Week | Day | Dow | IsoDow | Doy
    )
}

/// `date_diff(field, a, b)` of the DATEs `a` and `b` (days) for a field
/// [`counts_dates`] counts, from the integer calendar; `None` for other fields.
fn date_difference(field: Field, a: i64, b: i64) -> Option<i64> {
    use Field::*;
    if !counts_dates(field) {
        return None;
    }
    let (ca, cb) = (civil_from_days(a), civil_from_days(b));
    let months = |c: &Civil| c.year * 12 + c.month - 1;
    Some(match field {
        Millennium => cb.year.div_euclid(1000) - ca.year.div_euclid(1000),
        Century => cb.year.div_euclid(100) - ca.year.div_euclid(100),
        Decade => cb.year.div_euclid(10) - ca.year.div_euclid(10),
        Year => cb.year - ca.year,
        Quarter => months(&cb).div_euclid(3) - months(&ca).div_euclid(3),
        Month => months(&cb) - months(&ca),
        // Weeks start on Monday; 1970-01-01 was a Thursday.
        Week => (b + 3).div_euclid(7) - (a + 3).div_euclid(7),
        _ => b - a,
    })
}

/// The last day of the month of `dt`.
pub(super) fn last_day(dt: NaiveDateTime) -> Result<i32, String> {
    let (y, m) = (dt.year(), dt.month());
    let next = if m == 12 {
        NaiveDate::from_ymd_opt(y + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(y, m + 1, 1)
    };
    next.and_then(|d| d.pred_opt())
        .map(days_of)
        .ok_or_else(|| "date out of range".to_string())
}

pub(super) fn register(r: &mut Registry) {
    let f = r
        .function("date_trunc")
        .alias("datetrunc")
        .reads(ZoneReading::WallClockAndBack)
        .example(
            "date_trunc('month', DATE '2024-02-29')",
            "2024-02-01T00:00:00",
        )
        .example(
            "date_trunc('week', TIMESTAMP '2024-03-03 12:30:00')",
            "2024-02-26T00:00:00",
        );
    for k in KINDS {
        let unit = k.timestamp_unit();
        f.lowered_sig(
            &[S, k.data_type()],
            DataType::Timestamp(unit, None),
            "x truncated to the unit (microseconds, milliseconds, second, minute, hour, day, week (Monday), month, quarter, year, decade, century, millennium); a DATE gives a TIMESTAMP",
            with_unit!(unit, T => on_s1::<T>(k, move |u: &str, v| {
                write_ts(truncate(u, k.read(v)?)?, unit).map(Some)
            }))
            .fallible(),
            Lowering::Inline(Inline::Truncate),
        );
    }
    let f = r
        .function("date_diff")
        .alias("datediff")
        .reads(ZoneReading::WallClock)
        .example(
            "date_diff('month', DATE '2024-01-31', DATE '2024-02-01')",
            "1",
        )
        .example(
            "date_diff('hour', TIMESTAMP '2024-01-01 23:59:00', TIMESTAMP '2024-01-02 00:01:00')",
            "1",
        );
    for k in KINDS {
        f.lowered_sig(
            &[S, k.data_type(), k.data_type()],
            I,
            "the number of unit boundaries (year, quarter, month, week, day, hour, minute, second, millisecond, microsecond, …) crossed from a to b (DuckDB's)",
            on_s2::<Int64Type>(k, move |u: &str, a, b| {
                if k == Kind::Date {
                    if let Some(d) = Field::named(u).and_then(|f| date_difference(f, a, b)) {
                        return Ok(Some(d));
                    }
                }
                difference(u, k.read(a)?, k.read(b)?).map(Some)
            })
            .fallible(),
            Lowering::Inline(Inline::Difference),
        );
        if k == Kind::Date {
            f.fails_with(|literals| {
                let unit = match literals.first() {
                    Some(Some(ScalarValue::Utf8(u))) => Field::named(u),
                    _ => None,
                };
                !unit.is_some_and(counts_dates)
            });
        }
    }
    r.function("date_add")
        .example("date_add(DATE '2024-02-28', 2)", "2024-03-01")
        .sig(
            &[D, I],
            D,
            "the date `days` days after date",
            map2::<Date32Type, Int64Type, Date32Type, _>(|d: i32, days: i64| {
                i64::from(d)
                    .checked_add(days)
                    .and_then(|v| date_of(v).ok())
                    .map(|d| Some(days_of(d)))
                    .ok_or_else(|| "date out of range".to_string())
            })
            .fallible(),
        );
    let f = r
        .function("last_day")
        .reads(ZoneReading::WallClock)
        .example("last_day(DATE '2024-02-10')", "2024-02-29");
    for k in KINDS {
        f.sig(
            &[k.data_type()],
            D,
            "the last day of the month of x",
            on1::<Date32Type>(k, move |v| last_day(k.read(v)?).map(Some)).fallible(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").unwrap()
    }

    #[test]
    fn truncation_and_differences() {
        let t = dt("2024-03-03 12:30:45.5");
        assert_eq!(truncate("week", t), Ok(dt("2024-02-26 00:00:00")));
        assert_eq!(truncate("century", t), Ok(dt("2001-01-01 00:00:00")));
        assert_eq!(
            truncate("millennium", dt("2000-12-31 00:00:00")),
            Ok(dt("1001-01-01 00:00:00"))
        );
        assert_eq!(truncate("decade", t), Ok(dt("2020-01-01 00:00:00")));
        assert_eq!(truncate("quarter", t), Ok(dt("2024-01-01 00:00:00")));
        assert_eq!(truncate("seconds", t), Ok(dt("2024-03-03 12:30:45")));
        assert!(truncate("fortnight", t).is_err());
        let (a, b) = (dt("1969-12-31 23:59:59.9"), dt("1970-01-01 00:00:00"));
        assert_eq!(difference("second", a, b), Ok(1));
        assert_eq!(difference("hour", b, a), Ok(-1));
        // 2024-01-07 is a Sunday, 2024-01-08 a Monday.
        assert_eq!(
            difference("week", dt("2024-01-07 00:00:00"), dt("2024-01-08 00:00:00")),
            Ok(1)
        );
        assert_eq!(
            difference("week", dt("2024-01-01 00:00:00"), dt("2024-01-07 00:00:00")),
            Ok(0)
        );
    }
}
