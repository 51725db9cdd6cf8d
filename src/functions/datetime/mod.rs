//! Date and time functions, with PostgreSQL's semantics (DuckDB's where
//! PostgreSQL has no such function: `date_diff`, `strftime`, `year()`, …).
//!
//! Every function over a date or time value has one signature for DATE and one per
//! timestamp unit (s, ms, us, ns); the row closures read the value as a wall-clock
//! [`NaiveDateTime`]. A TIMESTAMP WITH TIME ZONE holds an instant: before a
//! wall-clock function (fields, `date_trunc`, `date_diff`, formatting) sees it,
//! the binder converts it to the wall-clock time in its zone with `timezone(zone,
//! x)` (`bind::datetime`), and converts a truncated result back. Values outside the
//! calendar's range (±262,000 years) are errors ("timestamp out of range").
//!
//! `current_date`, `current_timestamp` and `now()` are special forms (documented in
//! the registry, without signatures): the binder folds them to one literal per
//! bound expression (`bind::datetime`).

use std::cell::RefCell;
use std::fmt::Write as _;
use std::str::FromStr;

use arrow::array::timezone::Tz;
use arrow::datatypes::{
    Date32Type, Float64Type, Int64Type, Time32MillisecondType, Time32SecondType,
    Time64MicrosecondType, Time64NanosecondType, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use arrow::datatypes::{IntervalMonthDayNano, IntervalMonthDayNanoType};
use arrow_schema::{DataType, IntervalUnit, TimeUnit};
use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, NaiveTime, TimeDelta, Timelike};

use super::row::{map1, map2, map3, variadic, Outcome, Ret, Utf8};
use super::{Lowering, NullBehavior, Registry, RowImpl};
use crate::time::{from_local, to_local};
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
    let per = units_per_second(unit);
    let utc = dt.and_utc();
    utc.timestamp()
        .checked_mul(per)
        .and_then(|s| {
            s.checked_add(i64::from(utc.timestamp_subsec_nanos()) / (1_000_000_000 / per))
        })
        .ok_or_else(|| OUT_OF_RANGE.to_string())
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

// ---------------------------------------------------------------------------
// Fields

/// A field of a date or time (EXTRACT's and date_part's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    Millennium,
    Century,
    Decade,
    Year,
    IsoYear,
    Quarter,
    Month,
    Week,
    Day,
    Dow,
    IsoDow,
    Doy,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
    Epoch,
}

impl Field {
    /// The field PostgreSQL calls `name` (singular or plural, any case). Called per
    /// row for a unit that is not a literal: lower-cased on the stack.
    pub(crate) fn named(name: &str) -> Option<Field> {
        use Field::*;
        let name = name.trim().as_bytes();
        let mut buf = [0u8; 16];
        let lower = buf.get_mut(..name.len())?;
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        Some(match std::str::from_utf8(lower).ok()? {
            "millennium" | "millennia" | "millenniums" | "mil" | "mils" => Millennium,
            "century" | "centuries" | "c" | "cent" => Century,
            "decade" | "decades" | "dec" | "decs" => Decade,
            "year" | "years" | "y" | "yr" | "yrs" => Year,
            "isoyear" => IsoYear,
            "quarter" | "quarters" | "qtr" => Quarter,
            "month" | "months" | "mon" | "mons" => Month,
            "week" | "weeks" | "w" => Week,
            "day" | "days" | "d" => Day,
            "dow" | "dayofweek" | "weekday" => Dow,
            "isodow" => IsoDow,
            "doy" | "dayofyear" => Doy,
            "hour" | "hours" | "h" | "hr" | "hrs" => Hour,
            "minute" | "minutes" | "m" | "min" | "mins" => Minute,
            "second" | "seconds" | "s" | "sec" | "secs" => Second,
            "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => Millisecond,
            "microsecond" | "microseconds" | "us" | "usec" | "usecs" => Microsecond,
            "epoch" => Epoch,
            _ => return None,
        })
    }

    /// The function that gives this field as a BIGINT (`year`, `dayofweek`, …); the
    /// fields with a fraction in PostgreSQL (second, millisecond, microsecond) and
    /// `epoch` have none.
    pub(crate) fn function(self) -> Option<&'static str> {
        use Field::*;
        Some(match self {
            Millennium => "millennium",
            Century => "century",
            Decade => "decade",
            Year => "year",
            IsoYear => "isoyear",
            Quarter => "quarter",
            Month => "month",
            Week => "week",
            Day => "day",
            Dow => "dayofweek",
            IsoDow => "isodow",
            Doy => "dayofyear",
            Hour => "hour",
            Minute => "minute",
            Second | Millisecond | Microsecond | Epoch => return None,
        })
    }

    /// Whether a TIME has this field (PostgreSQL: hour … microsecond, epoch).
    pub(crate) fn of_time(self) -> bool {
        use Field::*;
        matches!(
            self,
            Hour | Minute | Second | Millisecond | Microsecond | Epoch
        )
    }
}

/// PostgreSQL's message for a field a TIME does not have.
pub(crate) fn not_of_time(name: &str) -> String {
    format!("unit \"{name}\" not supported for type time")
}

/// `unit "x" not recognized`, PostgreSQL's message.
pub(crate) fn unknown_unit(name: &str) -> String {
    format!("unit \"{name}\" not recognized")
}

/// A year as PostgreSQL counts it: no year 0, 1 BC is -1 (chrono's year 0).
fn pg_year(y: i32) -> i64 {
    if y <= 0 {
        i64::from(y) - 1
    } else {
        i64::from(y)
    }
}

/// The field as an integer; second, millisecond and microsecond count whole units
/// of the minute (DuckDB's `second()`, `millisecond()`, `microsecond()`), epoch
/// whole seconds.
fn int_field(f: Field, dt: NaiveDateTime) -> i64 {
    use Field::*;
    let year = i64::from(dt.year());
    let sub_minute_nanos =
        i64::from(dt.second()) * 1_000_000_000 + i64::from(dt.nanosecond() % 1_000_000_000);
    match f {
        // PostgreSQL: the 21st century and the 3rd millennium start in 2001.
        Millennium if year > 0 => (year - 1) / 1000 + 1,
        Millennium => -((-year) / 1000 + 1),
        Century if year > 0 => (year - 1) / 100 + 1,
        Century => -((-year) / 100 + 1),
        Decade => pg_year(dt.year()).div_euclid(10),
        Year => pg_year(dt.year()),
        IsoYear => pg_year(dt.iso_week().year()),
        Quarter => i64::from(dt.month0() / 3 + 1),
        Month => i64::from(dt.month()),
        Week => i64::from(dt.iso_week().week()),
        Day => i64::from(dt.day()),
        Dow => i64::from(dt.weekday().num_days_from_sunday()),
        IsoDow => i64::from(dt.weekday().number_from_monday()),
        Doy => i64::from(dt.ordinal()),
        Hour => i64::from(dt.hour()),
        Minute => i64::from(dt.minute()),
        Second => i64::from(dt.second()),
        Millisecond => sub_minute_nanos / 1_000_000,
        Microsecond => sub_minute_nanos / 1_000,
        Epoch => dt.and_utc().timestamp(),
    }
}

/// The field as PostgreSQL's `date_part` gives it (DOUBLE): second, millisecond,
/// microsecond and epoch with their fraction.
fn float_field(f: Field, dt: NaiveDateTime) -> f64 {
    let nanos = i64::from(dt.second()) * 1_000_000_000 + i64::from(dt.nanosecond() % 1_000_000_000);
    match f {
        Field::Second => nanos as f64 / 1e9,
        Field::Millisecond => nanos as f64 / 1e6,
        Field::Microsecond => nanos as f64 / 1e3,
        Field::Epoch => epoch_nanos(dt) as f64 / 1e9,
        other => int_field(other, dt) as f64,
    }
}

// ---------------------------------------------------------------------------
// Truncation and differences

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

/// The last day of the month of `dt`.
fn last_day(dt: NaiveDateTime) -> Result<i32, String> {
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

// ---------------------------------------------------------------------------
// Time zones

thread_local! {
    /// The last zone parsed on this thread (a column's zone is one literal).
    static ZONE: RefCell<Option<(String, Tz)>> = const { RefCell::new(None) };
}

/// The time zone named `name` ("UTC", "+05:30", "Europe/Berlin").
fn zone(name: &str) -> Result<Tz, String> {
    ZONE.with(|z| {
        let mut z = z.borrow_mut();
        if let Some((n, tz)) = z.as_ref() {
            if n == name {
                return Ok(*tz);
            }
        }
        let tz = Tz::from_str(name).map_err(|_| format!("time zone \"{name}\" not recognized"))?;
        *z = Some((name.to_string(), tz));
        Ok(tz)
    })
}

/// Converts a timestamp of `unit` between an instant and a wall-clock time.
fn convert(zone_name: &str, v: i64, unit: TimeUnit, to_wall_clock: bool) -> Outcome<i64> {
    let tz = zone(zone_name)?;
    let dt = read_ts(v, unit)?;
    let dt = if to_wall_clock {
        to_local(dt, tz)
    } else {
        from_local(dt, tz)
    };
    write_ts(dt.ok_or_else(|| OUT_OF_RANGE.to_string())?, unit).map(Some)
}

// ---------------------------------------------------------------------------
// Formatting and parsing

/// `strftime`: chrono's `%` codes; a bad code is an error naming the format.
fn strftime(dt: NaiveDateTime, format: &str) -> Outcome<String> {
    let mut out = String::new();
    write!(out, "{}", dt.format(format))
        .map_err(|_| format!("invalid format string \"{format}\""))?;
    Ok(Some(out))
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// The template patterns of PostgreSQL's `to_char` that Broadhead knows, longest
/// first (a prefix of a pattern comes after it).
const PATTERNS: [&str; 35] = [
    "HH24", "HH12", "HH", "MI", "SSSS", "SS", "MS", "US", "AM", "PM", "am", "pm", "YYYY", "IYYY",
    "YYY", "YY", "Y", "MONTH", "Month", "month", "MON", "Mon", "mon", "MM", "DAY", "Day", "day",
    "DY", "Dy", "dy", "DDD", "DD", "D", "IW", "Q",
];

/// The pattern at the start of `s`, if any (numeric patterns in any case).
fn pattern_at(s: &str) -> Option<&'static str> {
    PATTERNS.iter().copied().find(|p| {
        let numeric = !matches!(
            p.to_ascii_uppercase().as_str(),
            "MONTH" | "MON" | "DAY" | "DY" | "AM" | "PM"
        );
        s.get(..p.len()).is_some_and(|head| {
            if numeric {
                head.eq_ignore_ascii_case(p)
            } else {
                head == *p
            }
        })
    })
}

/// A name in the case of its pattern (`MONTH`, `Month`, `month`), padded to `width`
/// unless `fill_mode` (PostgreSQL pads Month and Day to 9 characters).
fn cased(name: &str, pattern: &str, width: usize, fill_mode: bool) -> String {
    let mut s = if pattern.chars().all(|c| c.is_ascii_uppercase()) {
        name.to_uppercase()
    } else if pattern.chars().all(|c| c.is_ascii_lowercase()) {
        name.to_lowercase()
    } else {
        name.to_string()
    };
    if !fill_mode {
        while s.len() < width {
            s.push(' ');
        }
    }
    s
}

/// PostgreSQL's `to_char(timestamp, template)`: the common patterns (`YYYY MM DD
/// HH24 HH12 MI SS MS US AM Mon Month Dy Day DDD D IW Q`), the `FM` prefix (no
/// padding), text in double quotes copied; other characters are copied.
fn to_char(dt: NaiveDateTime, template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            let end = rest[1..].find('"').map_or(rest.len(), |i| i + 2);
            out.push_str(rest[1..end].trim_end_matches('"'));
            rest = &rest[end..];
            continue;
        }
        let fill_mode = rest.get(..2).is_some_and(|h| h.eq_ignore_ascii_case("FM"));
        let body = if fill_mode { &rest[2..] } else { rest };
        let Some(p) = pattern_at(body) else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        };
        rest = &body[p.len()..];
        let num = |v: i64, width: usize| {
            if fill_mode {
                v.to_string()
            } else if v < 0 {
                format!("-{:0width$}", -v)
            } else {
                format!("{v:0width$}")
            }
        };
        let hour12 = (dt.hour() + 11) % 12 + 1;
        let year = pg_year(dt.year()).abs();
        let text = match p.to_ascii_uppercase().as_str() {
            "HH24" => num(dt.hour().into(), 2),
            "HH12" | "HH" => num(hour12.into(), 2),
            "MI" => num(dt.minute().into(), 2),
            "SSSS" => num(dt.num_seconds_from_midnight().into(), 1),
            "SS" => num(dt.second().into(), 2),
            "MS" => num(i64::from(dt.nanosecond() % 1_000_000_000 / 1_000_000), 3),
            "US" => num(i64::from(dt.nanosecond() % 1_000_000_000 / 1_000), 6),
            "AM" | "PM" => {
                let noon = if dt.hour() < 12 { "AM" } else { "PM" };
                if p.starts_with(|c: char| c.is_ascii_lowercase()) {
                    noon.to_lowercase()
                } else {
                    noon.to_string()
                }
            }
            "YYYY" => num(year, 4),
            "IYYY" => num(pg_year(dt.iso_week().year()).abs(), 4),
            "YYY" => num(year % 1000, 3),
            "YY" => num(year % 100, 2),
            "Y" => num(year % 10, 1),
            "MONTH" => cased(MONTHS[dt.month0() as usize], p, 9, fill_mode),
            "MON" => cased(&MONTHS[dt.month0() as usize][..3], p, 3, fill_mode),
            "MM" => num(dt.month().into(), 2),
            "DAY" => cased(
                DAYS[dt.weekday().num_days_from_sunday() as usize],
                p,
                9,
                fill_mode,
            ),
            "DY" => cased(
                &DAYS[dt.weekday().num_days_from_sunday() as usize][..3],
                p,
                3,
                fill_mode,
            ),
            "DDD" => num(dt.ordinal().into(), 3),
            "DD" => num(dt.day().into(), 2),
            "D" => num(i64::from(dt.weekday().number_from_sunday()), 1),
            "IW" => num(dt.iso_week().week().into(), 2),
            _ => num(i64::from(dt.month0() / 3 + 1), 1), // Q
        };
        out.push_str(&text);
    }
    out
}

/// A PostgreSQL template (`to_date`, `to_timestamp`) as a chrono parse format.
fn chrono_format(template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(c) = rest.chars().next() {
        let fill_mode = rest.get(..2).is_some_and(|h| h.eq_ignore_ascii_case("FM"));
        let body = if fill_mode { &rest[2..] } else { rest };
        let Some(p) = pattern_at(body) else {
            match c {
                '%' => out.push_str("%%"),
                '"' => {}
                c => out.push(c),
            }
            rest = &rest[c.len_utf8()..];
            continue;
        };
        rest = &body[p.len()..];
        out.push_str(match p.to_ascii_uppercase().as_str() {
            "HH24" => "%H",
            "HH12" | "HH" => "%I",
            "MI" => "%M",
            "SS" => "%S",
            "MS" => "%3f",
            "US" => "%6f",
            "AM" | "PM" => "%p",
            "YYYY" | "IYYY" => "%Y",
            "YY" => "%y",
            "MONTH" => "%B",
            "MON" => "%b",
            "MM" => "%m",
            "DAY" => "%A",
            "DY" => "%a",
            "DDD" => "%j",
            "DD" => "%d",
            "IW" => "%V",
            _ => "\u{0}", // a pattern that cannot be parsed: no input matches it
        });
    }
    out
}

/// `strptime(s, format)` / `to_timestamp(s, template)`: a date and time, or a date
/// alone (midnight).
fn parse_datetime(s: &str, chrono_fmt: &str, shown: &str) -> Result<NaiveDateTime, String> {
    NaiveDateTime::parse_from_str(s, chrono_fmt)
        .or_else(|_| NaiveDate::parse_from_str(s, chrono_fmt).map(|d| d.and_time(NaiveTime::MIN)))
        .map_err(|e| format!("could not parse \"{s}\" with format \"{shown}\": {e}"))
}

// ---------------------------------------------------------------------------
// The registry

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
    register_fields(r);
    register_arithmetic(r);
    register_constructors(r);
    register_formatting(r);
    register_zones(r);
    register_intervals(r);
    register_interval_values(r);
}

fn register_fields(r: &mut Registry) {
    type Entry = (
        &'static str,
        &'static [&'static str],
        Field,
        &'static str,
        (&'static str, &'static str),
    );
    const FIELDS: [Entry; 17] = [
        (
            "year",
            &[],
            Field::Year,
            "the year (PostgreSQL's: 1 BC is -1)",
            ("year(DATE '2024-02-29')", "2024"),
        ),
        (
            "quarter",
            &[],
            Field::Quarter,
            "the quarter, 1 to 4",
            ("quarter(TIMESTAMP '2024-08-15 10:00:00')", "3"),
        ),
        (
            "month",
            &[],
            Field::Month,
            "the month, 1 to 12",
            ("month(DATE '2024-02-29')", "2"),
        ),
        (
            "week",
            &["weekofyear"],
            Field::Week,
            "the ISO 8601 week, 1 to 53 (weeks start on Monday; week 1 holds January 4)",
            ("week(DATE '2021-01-01')", "53"),
        ),
        (
            "day",
            &["dayofmonth"],
            Field::Day,
            "the day of the month, 1 to 31",
            ("day(DATE '2024-02-29')", "29"),
        ),
        (
            "dayofweek",
            &["dow"],
            Field::Dow,
            "the day of the week, 0 (Sunday) to 6 (Saturday)",
            ("dayofweek(DATE '2024-02-25')", "0"),
        ),
        (
            "isodow",
            &[],
            Field::IsoDow,
            "the ISO day of the week, 1 (Monday) to 7 (Sunday)",
            ("isodow(DATE '2024-02-25')", "7"),
        ),
        (
            "dayofyear",
            &["doy"],
            Field::Doy,
            "the day of the year, 1 to 366",
            ("dayofyear(DATE '2024-12-31')", "366"),
        ),
        (
            "isoyear",
            &[],
            Field::IsoYear,
            "the ISO 8601 week-numbering year (of the week's Thursday)",
            ("isoyear(DATE '2021-01-01')", "2020"),
        ),
        (
            "decade",
            &[],
            Field::Decade,
            "the year divided by 10, rounded down",
            ("decade(DATE '2024-02-29')", "202"),
        ),
        (
            "century",
            &[],
            Field::Century,
            "the century (the 21st began on 2001-01-01)",
            ("century(DATE '2000-12-31')", "20"),
        ),
        (
            "millennium",
            &[],
            Field::Millennium,
            "the millennium (the 3rd began on 2001-01-01)",
            ("millennium(DATE '2024-02-29')", "3"),
        ),
        (
            "hour",
            &[],
            Field::Hour,
            "the hour, 0 to 23",
            ("hour(TIMESTAMP '2024-02-29 13:45:30')", "13"),
        ),
        (
            "minute",
            &[],
            Field::Minute,
            "the minute, 0 to 59",
            ("minute(TIMESTAMP '2024-02-29 13:45:30')", "45"),
        ),
        (
            "second",
            &[],
            Field::Second,
            "the whole seconds of the minute, 0 to 59 (date_part('second', x) has the fraction)",
            ("second(TIMESTAMP '2024-02-29 13:45:30.5')", "30"),
        ),
        (
            "millisecond",
            &[],
            Field::Millisecond,
            "the milliseconds of the minute, seconds included (DuckDB's)",
            ("millisecond(TIMESTAMP '2024-02-29 13:45:30.5')", "30500"),
        ),
        (
            "microsecond",
            &[],
            Field::Microsecond,
            "the microseconds of the minute, seconds included (DuckDB's)",
            ("microsecond(TIMESTAMP '2024-02-29 13:45:30.5')", "30500000"),
        ),
    ];
    for (name, aliases, field, doc, (sql, result)) in FIELDS {
        let f = r.function(name);
        for a in aliases {
            f.alias(a);
        }
        f.example(sql, result);
        let times = TIME_KINDS.iter().filter(|_| field.of_time());
        for k in KINDS.iter().chain(times).copied() {
            f.sig(
                &[k.data_type()],
                I,
                doc,
                on1::<Int64Type>(k, move |v| Ok(Some(int_field(field, k.read(v)?)))).fallible(),
            );
        }
    }
    let f = r
        .function("epoch")
        .example("epoch(TIMESTAMP '1969-12-31 23:59:59.5')", "-0.5")
        .example("epoch(TIME '01:00:00.5')", "3600.5");
    for k in KINDS.into_iter().chain(TIME_KINDS) {
        f.sig(
            &[k.data_type()],
            F,
            "seconds since 1970-01-01 00:00:00 (UTC for a TIMESTAMP WITH TIME ZONE), with the fraction",
            on1::<Float64Type>(k, move |v| Ok(Some(float_field(Field::Epoch, k.read(v)?)))).fallible(),
        );
    }
    let f = r
        .function("date_part")
        .alias("datepart")
        .example(
            "date_part('second', TIMESTAMP '2024-02-29 13:45:30.25')",
            "30.25",
        )
        .example("date_part('dow', DATE '2024-02-25')", "0");
    for k in KINDS.into_iter().chain(TIME_KINDS) {
        f.sig(
            &[S, k.data_type()],
            F,
            "EXTRACT(field FROM x): the field (year, quarter, month, week, day, dow, isodow, doy, hour, minute, second, millisecond, microsecond, epoch, …; a TIME has hour … microsecond and epoch); BIGINT for a literal integral field, DOUBLE otherwise",
            on_s1::<Float64Type>(k, move |field: &str, v| {
                let f = Field::named(field).ok_or_else(|| unknown_unit(field))?;
                if matches!(k, Kind::Time(_)) && !f.of_time() {
                    return Err(not_of_time(field));
                }
                Ok(Some(float_field(f, k.read(v)?)))
            })
            .fallible(),
        );
    }
}

fn register_arithmetic(r: &mut Registry) {
    let f = r
        .function("date_trunc")
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
        f.sig(
            &[S, k.data_type()],
            DataType::Timestamp(unit, None),
            "x truncated to the unit (microseconds, milliseconds, second, minute, hour, day, week (Monday), month, quarter, year, decade, century, millennium); a DATE gives a TIMESTAMP",
            with_unit!(unit, T => on_s1::<T>(k, move |u: &str, v| {
                write_ts(truncate(u, k.read(v)?)?, unit).map(Some)
            }))
            .fallible(),
        );
    }
    let f = r
        .function("date_diff")
        .alias("datediff")
        .example(
            "date_diff('month', DATE '2024-01-31', DATE '2024-02-01')",
            "1",
        )
        .example(
            "date_diff('hour', TIMESTAMP '2024-01-01 23:59:00', TIMESTAMP '2024-01-02 00:01:00')",
            "1",
        );
    for k in KINDS {
        f.sig(
            &[S, k.data_type(), k.data_type()],
            I,
            "the number of unit boundaries (year, quarter, month, week, day, hour, minute, second, millisecond, microsecond, …) crossed from a to b (DuckDB's)",
            on_s2::<Int64Type>(k, move |u: &str, a, b| {
                difference(u, k.read(a)?, k.read(b)?).map(Some)
            })
            .fallible(),
        );
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

/// `x` plus `n` months, clamped to the end of the month (PostgreSQL's:
/// 2024-01-31 + 1 month is 2024-02-29).
fn add_months(dt: NaiveDateTime, n: i64) -> Result<NaiveDateTime, String> {
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

/// The functions `x ± INTERVAL '…'` becomes, in PostgreSQL's order (months, then
/// days, then the time part): name, example, doc and step.
const INTERVAL_STEPS: [(&str, (&str, &str), &str, Step); 3] = [
    (
        "add_months",
        ("add_months(TIMESTAMP '2024-01-31 10:00:00', 1)", "2024-02-29T10:00:00"),
        "x plus n months, the day clamped to the end of the month (x + INTERVAL 'n months')",
        add_months,
    ),
    (
        "add_days",
        ("add_days(TIMESTAMP '2024-02-28 10:00:00', 2)", "2024-03-01T10:00:00"),
        "x plus n days of the calendar (x + INTERVAL 'n days'; 23 or 25 hours across a daylight saving change)",
        |dt, n| {
            dt.checked_add_signed(TimeDelta::try_days(n).ok_or_else(|| OUT_OF_RANGE.to_string())?)
                .ok_or_else(|| OUT_OF_RANGE.to_string())
        },
    ),
    (
        "add_nanoseconds",
        ("add_nanoseconds(TIMESTAMP '2024-02-29 23:59:59', 1500000000)", "2024-03-01T00:00:00.500"),
        "x plus n nanoseconds (the time part of x + INTERVAL; digits below x's unit are dropped)",
        |dt, n| {
            dt.checked_add_signed(TimeDelta::nanoseconds(n))
                .ok_or_else(|| OUT_OF_RANGE.to_string())
        },
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

fn register_intervals(r: &mut Registry) {
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
    for (name, (sql, result), doc, step) in INTERVAL_STEPS {
        let f = r.function(name).example(sql, result);
        for u in UNITS {
            let k = Kind::Ts(u);
            f.sig(
                &[k.data_type(), I],
                k.data_type(),
                doc,
                with_unit!(u, T => map2::<T, Int64Type, T, _>(move |v: i64, n: i64| {
                    write_ts(step(read_ts(v, u)?, n)?, u).map(Some)
                }))
                .fallible(),
            );
        }
    }
}

fn register_constructors(r: &mut Registry) {
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

fn register_formatting(r: &mut Registry) {
    let f = r
        .function("strftime")
        .example("strftime(DATE '2024-02-29', '%d/%m/%Y')", "29/02/2024")
        .example(
            "strftime(TIMESTAMP '2024-02-29 13:45:30', '%A %H:%M')",
            "Thursday 13:45",
        );
    for k in KINDS {
        f.sig(
            &[k.data_type(), S],
            S,
            "x written with a strftime format (chrono's %-codes: %Y %m %d %H %M %S %b %A %j …); an invalid code is an error",
            on1_s::<Utf8>(k, move |v, format: &str| strftime(k.read(v)?, format)).fallible(),
        );
    }
    let f = r
        .function("to_char")
        .example(
            "to_char(TIMESTAMP '2024-02-29 13:45:30', 'FMDay, DD Mon YYYY HH12:MI AM')",
            "Thursday, 29 Feb 2024 01:45 PM",
        )
        .example("to_char(DATE '2024-02-29', 'YYYY-MM-DD')", "2024-02-29");
    for k in KINDS {
        f.sig(
            &[k.data_type(), S],
            S,
            "x written with PostgreSQL's template patterns (YYYY MM DD HH24 HH12 MI SS MS US AM Mon Month Dy Day DDD D IW Q; FM drops padding)",
            on1_s::<Utf8>(k, move |v, template: &str| Ok(Some(to_char(k.read(v)?, template)))).fallible(),
        );
    }
}

fn register_zones(r: &mut Registry) {
    let entries = [
        (
            "timezone",
            ("timezone('America/New_York', to_timestamp(1719835200))", "2024-07-01T08:00:00"),
            None,
            "x AT TIME ZONE zone: the wall-clock time in zone at the instant x (a TIMESTAMP WITH TIME ZONE); for a TIMESTAMP without one, the instant at which zone's clock shows x",
        ),
        (
            "from_local_time",
            ("from_local_time('Europe/Berlin', TIMESTAMP '2024-07-01 12:00:00')", "2024-07-01T10:00:00Z"),
            Some("UTC"),
            "the instant (a TIMESTAMP WITH TIME ZONE) at which the wall clock in zone shows x; timezone(zone, x) of a TIMESTAMP without time zone",
        ),
    ];
    for (name, (sql, result), ret_zone, doc) in entries {
        let to_wall_clock = ret_zone.is_none();
        let f = r.function(name).example(sql, result);
        for u in UNITS {
            f.sig(
                &[S, DataType::Timestamp(u, None)],
                DataType::Timestamp(u, ret_zone.map(Into::into)),
                doc,
                with_unit!(u, T => map2::<Utf8, T, T, _>(move |z: &str, v: i64| {
                    convert(z, v, u, to_wall_clock)
                }))
                .fallible(),
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Intervals as values

/// INTERVAL: Arrow's `Interval(MonthDayNano)`.
pub(crate) const IV: DataType = DataType::Interval(IntervalUnit::MonthDayNano);

/// The zero interval.
const ZERO: IntervalMonthDayNano = IntervalMonthDayNano::new(0, 0, 0);

/// How the JIT computes the comparisons and the field-wise arithmetic of intervals:
/// vector instructions on the packed 128-bit value (`lower::interval`).
const INLINE: Lowering = Lowering::Inline;

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

fn register_interval_values(r: &mut Registry) {
    type Iv = IntervalMonthDayNanoType;
    let b = DataType::Boolean;
    for (name, test) in [
        (
            "equal",
            (|o| o == std::cmp::Ordering::Equal) as fn(std::cmp::Ordering) -> bool,
        ),
        ("not_equal", |o| o != std::cmp::Ordering::Equal),
        ("less_than", |o| o == std::cmp::Ordering::Less),
        ("less_than_or_equal_to", |o| {
            o != std::cmp::Ordering::Greater
        }),
        ("greater_than", |o| o == std::cmp::Ordering::Greater),
        ("greater_than_or_equal_to", |o| {
            o != std::cmp::Ordering::Less
        }),
    ] {
        r.function(name).lowered_sig(
            &[IV, IV],
            b.clone(),
            "intervals compare as PostgreSQL's: a month is 30 days, a day 24 hours",
            map2::<Iv, Iv, super::row::Bool, _>(move |x, y| {
                Ok(Some(test(interval_key(x).cmp(&interval_key(y)))))
            }),
            INLINE,
        );
    }
    r.function("add").lowered_sig(
        &[IV, IV],
        IV,
        "interval + interval, field by field; beyond the fields' range is an error",
        map2::<Iv, Iv, Iv, _>(|x, y| {
            let (m, d, n) = (
                i128::from(x.months),
                i128::from(x.days),
                i128::from(x.nanoseconds),
            );
            interval_of(
                m + i128::from(y.months),
                d + i128::from(y.days),
                n + i128::from(y.nanoseconds),
            )
            .map(Some)
        })
        .fallible(),
        INLINE,
    );
    r.function("subtract").lowered_sig(
        &[IV, IV],
        IV,
        "interval - interval, field by field; beyond the fields' range is an error",
        map2::<Iv, Iv, Iv, _>(|x, y| {
            let (m, d, n) = (
                i128::from(x.months),
                i128::from(x.days),
                i128::from(x.nanoseconds),
            );
            interval_of(
                m - i128::from(y.months),
                d - i128::from(y.days),
                n - i128::from(y.nanoseconds),
            )
            .map(Some)
        })
        .fallible(),
        INLINE,
    );
    r.function("negate").lowered_sig(
        &[IV],
        IV,
        "-interval, field by field",
        map1::<Iv, Iv, _>(|x| {
            interval_of(
                -i128::from(x.months),
                -i128::from(x.days),
                -i128::from(x.nanoseconds),
            )
            .map(Some)
        })
        .fallible(),
        INLINE,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S%.f").unwrap()
    }

    #[test]
    fn templates_translate_and_format() {
        assert_eq!(chrono_format("DD Mon YYYY"), "%d %b %Y");
        assert_eq!(chrono_format("YYYY-MM-DD HH24:MI:SS"), "%Y-%m-%d %H:%M:%S");
        let t = dt("2024-02-29 13:05:09.123456");
        assert_eq!(
            to_char(t, "Month|FMMonth|MON|mon|Dy|DAY"),
            "February |February|FEB|feb|Thu|THURSDAY "
        );
        assert_eq!(
            to_char(t, "HH:MI:SS.MS.US pm Q DDD D IW \"Q\""),
            "01:05:09.123.123456 pm 1 060 5 09 Q"
        );
        assert_eq!(to_char(t, "FMDD/FMMM yyyy"), "29/2 2024");
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
