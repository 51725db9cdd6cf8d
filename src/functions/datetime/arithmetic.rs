//! Adding to dates and times: months, days and nanoseconds (the steps
//! `x ± INTERVAL '…'` becomes), a time plus nanoseconds, and date + time.

use arrow::datatypes::{
    Date32Type, Int64Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_schema::{DataType, TimeUnit};
use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta};

use super::truncation::last_day;
use super::{date_of, days_of, read_ts, write_ts, Kind, D, I, OUT_OF_RANGE, UNITS};
use crate::functions::row::map2;
use crate::functions::{Inline, Lowering, Registry, ZoneReading};
use crate::types::{time_type, units_per_second};

/// `x` plus `n` months, clamped to the end of the month (PostgreSQL's:
/// 2024-01-31 + 1 month is 2024-02-29).
pub(super) fn add_months(dt: NaiveDateTime, n: i64) -> Result<NaiveDateTime, String> {
    let total = (i64::from(dt.year()) * 12 + i64::from(dt.month0()))
        .checked_add(n)
        .ok_or_else(|| OUT_OF_RANGE.to_string())?;
    let (y, m0) = (total.div_euclid(12), total.rem_euclid(12) as u32);
    let y = i32::try_from(y).map_err(|_| OUT_OF_RANGE.to_string())?;
    let first = NaiveDate::from_ymd_opt(y, m0 + 1, 1).ok_or_else(|| OUT_OF_RANGE.to_string())?;
    let last = last_day(first.and_time(NaiveTime::MIN))?;
    let day = (i64::from(days_of(first)) + i64::from(dt.day()) - 1).min(i64::from(last));
    Ok(date_of(day)?.and_time(dt.time()))
}

/// A step of interval arithmetic: `x` plus `n` of some unit.
type Step = fn(NaiveDateTime, i64) -> Result<NaiveDateTime, String>;

/// One of the functions `x ± INTERVAL '…'` becomes: name, example, doc, step, and
/// how it reads a zoned timestamp.
type IntervalStep = (
    &'static str,
    (&'static str, &'static str),
    &'static str,
    Step,
    ZoneReading,
);

/// The functions `x ± INTERVAL '…'` becomes, in PostgreSQL's order (months, then
/// days, then the time part): `add_months` and `add_days` are calendar steps, on the
/// wall clock; `add_nanoseconds` is on the instant.
const INTERVAL_STEPS: [IntervalStep; 3] = [
    (
        "add_months",
        ("add_months(TIMESTAMP '2024-01-31 10:00:00', 1)", "2024-02-29T10:00:00"),
        "x plus n months, the day clamped to the end of the month (x + INTERVAL 'n months')",
        add_months,
        ZoneReading::WallClockAndBack,
    ),
    (
        "add_days",
        ("add_days(TIMESTAMP '2024-02-28 10:00:00', 2)", "2024-03-01T10:00:00"),
        "x plus n days of the calendar (x + INTERVAL 'n days'; 23 or 25 hours across a daylight saving change)",
        |dt, n| {
            dt.checked_add_signed(TimeDelta::try_days(n).ok_or_else(|| OUT_OF_RANGE.to_string())?)
                .ok_or_else(|| OUT_OF_RANGE.to_string())
        },
        ZoneReading::WallClockAndBack,
    ),
    (
        "add_nanoseconds",
        ("add_nanoseconds(TIMESTAMP '2024-02-29 23:59:59', 1500000000)", "2024-03-01T00:00:00.500"),
        "x plus n nanoseconds (the time part of x + INTERVAL; digits below x's unit are dropped)",
        |dt, n| {
            dt.checked_add_signed(TimeDelta::nanoseconds(n))
                .ok_or_else(|| OUT_OF_RANGE.to_string())
        },
        ZoneReading::Instant,
    ),
];

/// `t` plus `n` nanoseconds, wrapped around midnight (PostgreSQL's `time +
/// interval`); digits below `t`'s unit are dropped (rounded toward the past).
fn add_time(t: i64, n: i64, unit: TimeUnit) -> i64 {
    let per_day = 86_400 * i128::from(units_per_second(unit));
    let step = i128::from(n).div_euclid(1_000_000_000 / i128::from(units_per_second(unit)));
    // Less than a day of units: fits every unit's native type.
    (i128::from(t) + step).rem_euclid(per_day) as i64
}

pub(super) fn register(r: &mut Registry) {
    let f = r.function("add_nanoseconds").example(
        "add_nanoseconds(TIME '23:30:00', 3600000000000)",
        "00:30:00",
    );
    for u in UNITS {
        let doc = "t plus n nanoseconds, wrapped around midnight (the time part of t + INTERVAL; digits below t's unit are dropped)";
        let imp =
            match u {
                TimeUnit::Second => map2::<Time32SecondType, Int64Type, Time32SecondType, _>(
                    move |t: i32, n: i64| Ok(Some(add_time(t.into(), n, u) as i32)),
                ),
                TimeUnit::Millisecond => {
                    map2::<Time32MillisecondType, Int64Type, Time32MillisecondType, _>(
                        move |t: i32, n: i64| Ok(Some(add_time(t.into(), n, u) as i32)),
                    )
                }
                TimeUnit::Microsecond => {
                    map2::<Time64MicrosecondType, Int64Type, Time64MicrosecondType, _>(
                        move |t: i64, n: i64| Ok(Some(add_time(t, n, u))),
                    )
                }
                TimeUnit::Nanosecond => {
                    map2::<Time64NanosecondType, Int64Type, Time64NanosecondType, _>(
                        move |t: i64, n: i64| Ok(Some(add_time(t, n, u))),
                    )
                }
            };
        f.sig(&[time_type(u), I], time_type(u), doc, imp);
    }
    // date + time is the timestamp (PostgreSQL's), in the time's unit.
    let f = r
        .function("add")
        .example("DATE '2024-02-29' + TIME '13:45:30'", "2024-02-29T13:45:30");
    for u in UNITS {
        let (t, ts) = (time_type(u), DataType::Timestamp(u, None));
        let per_day = 86_400 * units_per_second(u);
        let at = move |d: i32, t: i64| {
            i64::from(d)
                .checked_mul(per_day)
                .and_then(|v| v.checked_add(t))
                .map(Some)
                .ok_or_else(|| OUT_OF_RANGE.to_string())
        };
        let doc = "date + time: the timestamp (in the time's unit)";
        let (date_time, time_date) = with_time_unit!(u, T, wide => {
            with_unit!(u, Ts => (
                map2::<Date32Type, T, Ts, _>(move |d: i32, t| at(d, wide(t))).fallible(),
                map2::<T, Date32Type, Ts, _>(move |t, d: i32| at(d, wide(t))).fallible(),
            ))
        });
        f.sig(&[D, t.clone()], ts.clone(), doc, date_time);
        f.sig(
            &[t, D],
            ts,
            "time + date: the timestamp (in the time's unit)",
            time_date,
        );
    }
    for (name, (sql, result), doc, step, reading) in INTERVAL_STEPS {
        let f = r.function(name).example(sql, result).reads(reading);
        let lowering = match name {
            "add_days" => Lowering::Inline(Inline::AddDays),
            "add_months" => Lowering::Inline(Inline::AddMonths),
            "add_nanoseconds" => Lowering::Inline(Inline::AddNanoseconds),
            _ => Lowering::Helper,
        };
        for u in UNITS {
            let k = Kind::Ts(u);
            f.lowered_sig(
                &[k.data_type(), I],
                k.data_type(),
                doc,
                with_unit!(u, T => map2::<T, Int64Type, T, _>(move |v: i64, n: i64| {
                    write_ts(step(read_ts(v, u)?, n)?, u).map(Some)
                }))
                .fallible(),
                lowering,
            );
        }
    }
}
