//! INTERVAL values: comparisons, arithmetic, scaling, their fields, `timestamp -
//! timestamp` and `add_interval` (a timestamp plus an INTERVAL value).

use arrow::datatypes::{
    Float64Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow::datatypes::{IntervalMonthDayNano, IntervalMonthDayNanoType};
use arrow_schema::{DataType, IntervalUnit, TimeUnit};
use chrono::TimeDelta;

use super::arithmetic::add_months;
use super::fields::{unknown_unit, Field};
use super::zones::zone;
use super::{read_ts, write_ts, F, I, OUT_OF_RANGE, S, UNITS};
use crate::functions::row::{map1, map2, map3, Bool, Outcome, Utf8};
use broadhead_codegen::{ArithOp, CmpOp};

use crate::functions::{Inline, Lowering, Registry};
use crate::time::{from_local, to_local};
use crate::types::units_per_second;

/// INTERVAL: Arrow's `Interval(MonthDayNano)`.
pub(crate) const IV: DataType = DataType::Interval(IntervalUnit::MonthDayNano);

/// The zero interval.
const ZERO: IntervalMonthDayNano = IntervalMonthDayNano::new(0, 0, 0);

/// How the JIT computes the other functions of intervals: the row-wise
/// implementation, called once per block (an interval is 16 bytes a lane).
const BY_HELPER: Lowering = Lowering::Helper;

/// Nanoseconds in a day of 24 hours.
pub(crate) const NANOS_PER_DAY: i128 = 86_400_000_000_000;

/// An interval as one number of nanoseconds, with PostgreSQL's conventions for
/// ordering and equality: a month is 30 days, a day 24 hours (`INTERVAL '1 month'
/// = INTERVAL '30 days'`, as in PostgreSQL and DuckDB).
pub(crate) fn interval_key(v: IntervalMonthDayNano) -> i128 {
    (i128::from(v.months) * 30 + i128::from(v.days)) * NANOS_PER_DAY + i128::from(v.nanoseconds)
}

/// An interval of these fields, or "interval out of range".
fn interval_of(months: i128, days: i128, nanos: i128) -> Result<IntervalMonthDayNano, String> {
    let out = || "interval out of range".to_string();
    Ok(IntervalMonthDayNano::new(
        i32::try_from(months).map_err(|_| out())?,
        i32::try_from(days).map_err(|_| out())?,
        i64::try_from(nanos).map_err(|_| out())?,
    ))
}

/// `x + sign * y` field by field (`sign` is 1 or -1), or "interval out of range".
fn interval_sum(
    x: IntervalMonthDayNano,
    y: IntervalMonthDayNano,
    sign: i128,
) -> Result<IntervalMonthDayNano, String> {
    interval_of(
        i128::from(x.months) + sign * i128::from(y.months),
        i128::from(x.days) + sign * i128::from(y.days),
        i128::from(x.nanoseconds) + sign * i128::from(y.nanoseconds),
    )
}

/// `v * factor` as PostgreSQL multiplies an interval: each field by the factor, the
/// fraction of the months spilled into days (30 a month) and the fraction of the
/// days into the time (24 hours a day), nanoseconds rounded.
fn scale_interval(v: IntervalMonthDayNano, factor: f64) -> Result<IntervalMonthDayNano, String> {
    let months = f64::from(v.months) * factor;
    let spilled_days = (months - months.trunc()) * 30.0;
    let days = f64::from(v.days) * factor + spilled_days.trunc();
    let nanos = v.nanoseconds as f64 * factor
        + (days - days.trunc() + spilled_days - spilled_days.trunc()) * NANOS_PER_DAY as f64;
    let whole = |x: f64| -> Result<i128, String> {
        if x.is_finite() && x.abs() < 1e38 {
            Ok(x as i128)
        } else {
            Err("interval out of range".to_string())
        }
    };
    interval_of(
        whole(months.trunc())?,
        whole(days.trunc())?,
        whole(nanos.round())?,
    )
}

/// A field of an interval (PostgreSQL's `EXTRACT`): years, quarters, months and
/// decades … of the months, days, the time's hours, minutes and seconds (with the
/// fraction); `epoch` counts a year as 365.25 days and a month as 30 (PostgreSQL's).
/// `None`: the field does not apply to intervals (week, dow, …).
fn interval_field(f: Field, v: IntervalMonthDayNano) -> Option<f64> {
    use Field::*;
    let (months, nanos) = (i64::from(v.months), v.nanoseconds);
    let minute_nanos = (nanos % 60_000_000_000) as f64;
    Some(match f {
        Millennium => (months / 12 / 1000) as f64,
        Century => (months / 12 / 100) as f64,
        Decade => (months / 12 / 10) as f64,
        Year => (months / 12) as f64,
        Quarter => ((months % 12) / 3 + 1) as f64,
        Month => (months % 12) as f64,
        Day => f64::from(v.days),
        Hour => (nanos / 3_600_000_000_000) as f64,
        Minute => (nanos / 60_000_000_000 % 60) as f64,
        Second => minute_nanos / 1e9,
        Millisecond => minute_nanos / 1e6,
        Microsecond => minute_nanos / 1e3,
        Epoch => {
            (months / 12) as f64 * 365.25 * 86_400.0
                + (months % 12) as f64 * 30.0 * 86_400.0
                + f64::from(v.days) * 86_400.0
                + nanos as f64 / 1e9
        }
        IsoYear | Week | Dow | IsoDow | Doy => return None,
    })
}

impl Field {
    /// Whether an interval has this field (not week, dow, …: see [`interval_field`]).
    pub(crate) fn of_interval(self) -> bool {
        interval_field(self, ZERO).is_some()
    }
}

/// PostgreSQL's message for a field an interval does not have.
pub(crate) fn not_of_interval(name: &str) -> String {
    format!("unit \"{name}\" not supported for type interval")
}

/// `x + iv` for a timestamp of `unit` in `zone` ('' for none): the months (clamped
/// to the month's end) and days on the wall clock of the zone, then the time part
/// as an exact duration, as PostgreSQL adds an interval.
fn add_interval(zone_name: &str, v: i64, unit: TimeUnit, iv: IntervalMonthDayNano) -> Outcome<i64> {
    let tz = if zone_name.is_empty() {
        None
    } else {
        Some(zone(zone_name)?)
    };
    let out = || OUT_OF_RANGE.to_string();
    let utc = read_ts(v, unit)?;
    let mut dt = match tz {
        Some(tz) => to_local(utc, tz).ok_or_else(out)?,
        None => utc,
    };
    if iv.months != 0 {
        dt = add_months(dt, i64::from(iv.months))?;
    }
    if iv.days != 0 {
        dt = dt
            .checked_add_signed(TimeDelta::try_days(i64::from(iv.days)).ok_or_else(out)?)
            .ok_or_else(out)?;
    }
    if let (Some(tz), true) = (tz, iv.months != 0 || iv.days != 0) {
        dt = from_local(dt, tz).ok_or_else(out)?;
    } else if tz.is_some() {
        dt = utc;
    }
    let dt = dt
        .checked_add_signed(TimeDelta::nanoseconds(iv.nanoseconds))
        .ok_or_else(out)?;
    write_ts(dt, unit).map(Some)
}

/// `a - b` of two timestamps of `unit`: the interval of whole days (24 hours) and
/// the rest, both with the sign of the difference (PostgreSQL's, and DuckDB's).
fn timestamp_difference(a: i64, b: i64, unit: TimeUnit) -> Outcome<IntervalMonthDayNano> {
    let per_unit = 1_000_000_000 / i128::from(units_per_second(unit));
    let nanos = (i128::from(a) - i128::from(b)) * per_unit;
    interval_of(0, nanos / NANOS_PER_DAY, nanos % NANOS_PER_DAY).map(Some)
}

pub(super) fn register(r: &mut Registry) {
    type Iv = IntervalMonthDayNanoType;
    let b = DataType::Boolean;
    type Test = fn(std::cmp::Ordering) -> bool;
    let comparisons: [(&str, CmpOp, Test); 6] = [
        ("equal", CmpOp::Eq, |o| o.is_eq()),
        ("not_equal", CmpOp::Ne, |o| o.is_ne()),
        ("less_than", CmpOp::Lt, |o| o.is_lt()),
        ("less_than_or_equal_to", CmpOp::Le, |o| o.is_le()),
        ("greater_than", CmpOp::Gt, |o| o.is_gt()),
        ("greater_than_or_equal_to", CmpOp::Ge, |o| o.is_ge()),
    ];
    for (name, op, test) in comparisons {
        r.function(name).lowered_sig(
            &[IV, IV],
            b.clone(),
            "intervals compare as PostgreSQL's: a month is 30 days, a day 24 hours",
            map2::<Iv, Iv, Bool, _>(move |x, y| {
                Ok(Some(test(interval_key(x).cmp(&interval_key(y)))))
            }),
            Lowering::Inline(Inline::Compare(op)),
        );
    }
    for (name, op, sign, doc) in [
        (
            "add",
            ArithOp::Add,
            1,
            "interval + interval, field by field; beyond the fields' range is an error",
        ),
        (
            "subtract",
            ArithOp::Sub,
            -1,
            "interval - interval, field by field; beyond the fields' range is an error",
        ),
    ] {
        r.function(name).lowered_sig(
            &[IV, IV],
            IV,
            doc,
            map2::<Iv, Iv, Iv, _>(move |x, y| interval_sum(x, y, sign).map(Some)).fallible(),
            Lowering::Inline(Inline::FieldWise(op)),
        );
    }
    r.function("negate").lowered_sig(
        &[IV],
        IV,
        "-interval, field by field",
        map1::<Iv, Iv, _>(|x| interval_sum(ZERO, x, -1).map(Some)).fallible(),
        Lowering::Inline(Inline::Negate),
    );
    let f = r.function("multiply");
    f.lowered_sig(
        &[IV, F],
        IV,
        "interval * number, as PostgreSQL: fractions of months spill into days (30 a month), of days into hours",
        map2::<Iv, Float64Type, Iv, _>(|x, k| scale_interval(x, k).map(Some)).fallible(),
        BY_HELPER,
    );
    f.lowered_sig(
        &[F, IV],
        IV,
        "number * interval",
        map2::<Float64Type, Iv, Iv, _>(|k, x| scale_interval(x, k).map(Some)).fallible(),
        BY_HELPER,
    );
    r.function("divide").lowered_sig(
        &[IV, F],
        IV,
        "interval / number, as interval * (1 / number); division by zero is an error",
        map2::<Iv, Float64Type, Iv, _>(|x, k| {
            if k == 0.0 {
                return Err("division by zero".to_string());
            }
            scale_interval(x, 1.0 / k).map(Some)
        })
        .fallible(),
        BY_HELPER,
    );
    let f = r
        .function("add_interval")
        .example(
            "add_interval('America/New_York', TIMESTAMP WITH TIME ZONE '2024-03-09 12:00:00-05', INTERVAL '1 day 1 hour')",
            "2024-03-10T17:00:00",
        );
    for u in UNITS {
        let ts = DataType::Timestamp(u, None);
        f.lowered_sig(
            &[S, ts.clone(), IV],
            ts,
            "x + interval (what x + iv becomes for an INTERVAL value iv): the months and days on the wall clock of zone ('' for UTC), then the time part",
            with_unit!(u, T => map3::<Utf8, T, Iv, T, _>(move |z: &str, v: i64, iv| {
                add_interval(z, v, u, iv)
            }))
            .fallible(),
            BY_HELPER,
        );
    }
    let f = r.function("subtract").example(
        "TIMESTAMP '2024-03-01 12:00:00' - TIMESTAMP '2024-01-01 10:30:00'",
        "60 days 1 hours 30 mins",
    );
    for u in UNITS {
        let ts = DataType::Timestamp(u, None);
        f.lowered_sig(
            &[ts.clone(), ts],
            IV,
            "timestamp - timestamp: the interval of whole days (24 hours) and the rest (PostgreSQL's and DuckDB's)",
            with_unit!(u, T => map2::<T, T, Iv, _>(move |a: i64, b: i64| timestamp_difference(a, b, u)))
                .fallible(),
            BY_HELPER,
        );
    }
    // The fields of an interval.
    for field in [
        Field::Millennium,
        Field::Century,
        Field::Decade,
        Field::Year,
        Field::Quarter,
        Field::Month,
        Field::Day,
        Field::Hour,
        Field::Minute,
        Field::Second,
        Field::Millisecond,
        Field::Microsecond,
    ] {
        let Some(name) = field.function().or(match field {
            Field::Second => Some("second"),
            Field::Millisecond => Some("millisecond"),
            Field::Microsecond => Some("microsecond"),
            _ => None,
        }) else {
            continue;
        };
        r.function(name).lowered_sig(
            &[IV],
            I,
            "the field of an interval (PostgreSQL's EXTRACT: years and months of its months, its days, the hours … of its time part)",
            map1::<Iv, Int64Type, _>(move |v| {
                Ok(interval_field(field, v).map(|x| x.trunc() as i64))
            }),
            BY_HELPER,
        );
    }
    r.function("epoch").lowered_sig(
        &[IV],
        F,
        "the seconds of an interval (a year is 365.25 days, a month 30 days: PostgreSQL's)",
        map1::<Iv, Float64Type, _>(|v| Ok(interval_field(Field::Epoch, v))),
        BY_HELPER,
    );
    r.function("date_part").lowered_sig(
        &[S, IV],
        F,
        "EXTRACT(field FROM interval): year, quarter, month, day, hour, minute, second (with the fraction), millisecond, microsecond, epoch, decade, century, millennium",
        map2::<Utf8, Iv, Float64Type, _>(|name: &str, v| {
            let f = Field::named(name).ok_or_else(|| unknown_unit(name))?;
            interval_field(f, v)
                .map(Some)
                .ok_or_else(|| not_of_interval(name))
        })
        .fallible(),
        BY_HELPER,
    );
}
