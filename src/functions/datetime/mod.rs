//! Date and time functions, with PostgreSQL's semantics (DuckDB's where
//! PostgreSQL has no such function: `date_diff`, `strftime`, `year()`, …).
//!
//! Every function over a date or time value has one signature for DATE and one per
//! timestamp unit (s, ms, us, ns); the row closures read the value as a wall-clock
//! [`NaiveDateTime`]. A TIMESTAMP WITH TIME ZONE holds an instant: before a
//! wall-clock function (fields, `date_trunc`, `date_diff`, formatting) sees it,
//! the binder converts it to the wall-clock time in its zone with `timezone(zone,
//! x)` (`bind::datetime`), and converts a truncated result back. Values outside the
//! calendar's range (±262,000 years) are errors ("timestamp out of range"), except
//! for a DATE's fields, which `civil` computes for every DATE.
//!
//! `current_date`, `current_timestamp` and `now()` are special forms (documented in
//! the registry, without signatures): the binder folds them to one literal per
//! bound expression (`bind::datetime`).
//!
//! This file holds what the parts share: the kinds of date and time arguments, reading
//! and writing their values, and the row adapters over them. The parts: `civil`
//! (the calendar in integer arithmetic), `fields` (EXTRACT), `truncation` (`date_trunc`, `date_diff`), `arithmetic` (adding months,
//! days and times), `intervals` (INTERVAL values), `zones`, `formatting` (to text and
//! back) and `constructors` (`make_date`, `to_timestamp`, …).

use arrow::datatypes::{
    Date32Type, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType,
};
use arrow_schema::{DataType, TimeUnit};
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime};

use super::row::{map1, map2, map3, Outcome, Ret, Utf8};
use super::{NullBehavior, Registry, RowImpl};
use crate::types::{time_type, units_per_second};

const S: DataType = DataType::Utf8;
const I: DataType = DataType::Int64;
const F: DataType = DataType::Float64;
const D: DataType = DataType::Date32;
const US: TimeUnit = TimeUnit::Microsecond;

const OUT_OF_RANGE: &str = "timestamp out of range";

/// The kind of a date/time argument: DATE, a timestamp of a unit, or a TIME of a
/// unit (read as that time on 1970-01-01).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Date,
    Ts(TimeUnit),
    Time(TimeUnit),
}

/// Every timestamp unit.
const UNITS: [TimeUnit; 4] = [
    TimeUnit::Second,
    TimeUnit::Millisecond,
    TimeUnit::Microsecond,
    TimeUnit::Nanosecond,
];

/// Every kind, one signature each.
const KINDS: [Kind; 5] = [
    Kind::Date,
    Kind::Ts(TimeUnit::Second),
    Kind::Ts(TimeUnit::Millisecond),
    Kind::Ts(TimeUnit::Microsecond),
    Kind::Ts(TimeUnit::Nanosecond),
];

/// TIME of every unit: the kinds of the time-of-day fields (hour … microsecond,
/// epoch) and `date_part`.
const TIME_KINDS: [Kind; 4] = [
    Kind::Time(TimeUnit::Second),
    Kind::Time(TimeUnit::Millisecond),
    Kind::Time(TimeUnit::Microsecond),
    Kind::Time(TimeUnit::Nanosecond),
];

impl Kind {
    fn data_type(self) -> DataType {
        match self {
            Kind::Date => D,
            Kind::Ts(u) => DataType::Timestamp(u, None),
            Kind::Time(u) => time_type(u),
        }
    }

    /// The kind of a timestamp computed from a value of this kind (a DATE gives a
    /// TIMESTAMP, as in PostgreSQL).
    fn timestamp_unit(self) -> TimeUnit {
        match self {
            Kind::Date => US,
            Kind::Ts(u) | Kind::Time(u) => u,
        }
    }

    /// A value (days, or a timestamp in its unit) as a wall-clock date and time.
    fn read(self, v: i64) -> Result<NaiveDateTime, String> {
        match self {
            Kind::Date => date_of(v).map(|d| d.and_time(NaiveTime::MIN)),
            Kind::Ts(u) | Kind::Time(u) => read_ts(v, u),
        }
    }
}

/// Days since 1970-01-01 as a date.
fn date_of(days: i64) -> Result<NaiveDate, String> {
    i32::try_from(days)
        .ok()
        .and_then(NaiveDate::from_epoch_days)
        .ok_or_else(|| "date out of range".to_string())
}

/// A timestamp of `unit` as a wall-clock date and time.
fn read_ts(v: i64, unit: TimeUnit) -> Result<NaiveDateTime, String> {
    let per = units_per_second(unit);
    let nanos = v.rem_euclid(per) * (1_000_000_000 / per);
    DateTime::from_timestamp(v.div_euclid(per), nanos as u32)
        .map(|d| d.naive_utc())
        .ok_or_else(|| OUT_OF_RANGE.to_string())
}

/// A wall-clock date and time as a timestamp of `unit` (sub-unit digits dropped).
fn write_ts(dt: NaiveDateTime, unit: TimeUnit) -> Result<i64, String> {
    let per = i128::from(units_per_second(unit));
    let utc = dt.and_utc();
    // In 128 bits: the value fits or not, whatever its seconds times the unit do
    // (the last second before 1677-09-21 00:12:44 in nanoseconds does not).
    let units = i128::from(utc.timestamp()) * per
        + i128::from(utc.timestamp_subsec_nanos()) / (1_000_000_000 / per);
    i64::try_from(units).map_err(|_| OUT_OF_RANGE.to_string())
}

/// Nanoseconds since 1970-01-01 00:00:00 of a wall-clock time (wide enough for
/// every date chrono knows).
fn epoch_nanos(dt: NaiveDateTime) -> i128 {
    let utc = dt.and_utc();
    i128::from(utc.timestamp()) * 1_000_000_000 + i128::from(utc.timestamp_subsec_nanos())
}

/// Days since 1970-01-01 of a date.
fn days_of(d: NaiveDate) -> i32 {
    d.to_epoch_days()
}

/// Calls the closure with the temporal argument as an `i64` (days or units).
macro_rules! with_unit {
    ($unit:expr, $t:ident => $body:expr) => {
        match $unit {
            TimeUnit::Second => {
                type $t = TimestampSecondType;
                $body
            }
            TimeUnit::Millisecond => {
                type $t = TimestampMillisecondType;
                $body
            }
            TimeUnit::Microsecond => {
                type $t = TimestampMicrosecondType;
                $body
            }
            TimeUnit::Nanosecond => {
                type $t = TimestampNanosecondType;
                $body
            }
        }
    };
}

/// Calls the closure with the TIME type of the unit as `$t` and a function that
/// widens its native value to `i64` as `$wide`.
macro_rules! with_time_unit {
    ($unit:expr, $t:ident, $wide:ident => $body:expr) => {
        match $unit {
            TimeUnit::Second => {
                type $t = Time32SecondType;
                let $wide = i64::from;
                $body
            }
            TimeUnit::Millisecond => {
                type $t = Time32MillisecondType;
                let $wide = i64::from;
                $body
            }
            TimeUnit::Microsecond => {
                type $t = Time64MicrosecondType;
                let $wide = |v: i64| v;
                $body
            }
            TimeUnit::Nanosecond => {
                type $t = Time64NanosecondType;
                let $wide = |v: i64| v;
                $body
            }
        }
    };
}

/// `f(x)` over a value of kind `k`, passed as an `i64`.
fn on1<R: Ret>(k: Kind, g: impl Fn(i64) -> Outcome<R::Item> + Send + Sync + 'static) -> RowImpl {
    match k {
        Kind::Date => map1::<Date32Type, R, _>(move |d: i32| g(d.into())),
        Kind::Ts(u) => with_unit!(u, T => map1::<T, R, _>(g)),
        Kind::Time(u) => with_time_unit!(u, T, wide => map1::<T, R, _>(move |v| g(wide(v)))),
    }
}

/// `f(text, x)` over a value of kind `k`.
fn on_s1<R: Ret>(
    k: Kind,
    g: impl Fn(&str, i64) -> Outcome<R::Item> + Send + Sync + 'static,
) -> RowImpl {
    match k {
        Kind::Date => map2::<Utf8, Date32Type, R, _>(move |s: &str, d: i32| g(s, d.into())),
        Kind::Ts(u) => with_unit!(u, T => map2::<Utf8, T, R, _>(g)),
        Kind::Time(u) => {
            with_time_unit!(u, T, wide => map2::<Utf8, T, R, _>(move |s: &str, v| g(s, wide(v))))
        }
    }
}

/// `f(x, text)` over a value of kind `k`.
fn on1_s<R: Ret>(
    k: Kind,
    g: impl Fn(i64, &str) -> Outcome<R::Item> + Send + Sync + 'static,
) -> RowImpl {
    match k {
        Kind::Date => map2::<Date32Type, Utf8, R, _>(move |d: i32, s: &str| g(d.into(), s)),
        Kind::Ts(u) => with_unit!(u, T => map2::<T, Utf8, R, _>(g)),
        Kind::Time(u) => {
            with_time_unit!(u, T, wide => map2::<T, Utf8, R, _>(move |v, s: &str| g(wide(v), s)))
        }
    }
}

/// `f(text, x, y)` over two values of kind `k`.
fn on_s2<R: Ret>(
    k: Kind,
    g: impl Fn(&str, i64, i64) -> Outcome<R::Item> + Send + Sync + 'static,
) -> RowImpl {
    match k {
        Kind::Date => map3::<Utf8, Date32Type, Date32Type, R, _>(move |s: &str, a: i32, b: i32| {
            g(s, a.into(), b.into())
        }),
        Kind::Ts(u) => with_unit!(u, T => map3::<Utf8, T, T, R, _>(g)),
        Kind::Time(u) => with_time_unit!(u, T, wide => map3::<Utf8, T, T, R, _>(
            move |s: &str, a, b| g(s, wide(a), wide(b))
        )),
    }
}

// The domain's parts, declared after the macros above, which they use.
mod arithmetic;
pub(crate) mod civil;
mod constructors;
mod fields;
mod formatting;
mod intervals;
pub(crate) mod truncation;
pub(crate) mod zones;

pub use fields::Field;
pub(crate) use fields::{not_of_time, unknown_unit};
pub(crate) use intervals::{interval_key, not_of_interval, IV, NANOS_PER_DAY};

/// Registers the date and time functions.
pub(super) fn register(r: &mut Registry) {
    for (name, syntax, doc) in [
        (
            "current_date",
            "current_date",
            "today's date (UTC), one value for the whole expression",
        ),
        (
            "current_timestamp",
            "current_timestamp",
            "the time the expression was bound, as TIMESTAMP WITH TIME ZONE UTC; one value \
             for the whole expression",
        ),
        ("now", "now()", "the same as current_timestamp"),
    ] {
        r.function(name).form(syntax, NullBehavior::NeverNull, doc);
    }
    r.function("current_date").alias("today");
    // In this order: a function's signatures are tried in the order registered.
    fields::register(r);
    truncation::register(r);
    constructors::register(r);
    formatting::register(r);
    zones::register(r);
    arithmetic::register(r);
    intervals::register(r);
}
