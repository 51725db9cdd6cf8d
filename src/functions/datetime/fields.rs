//! The fields of a date or time: `year(x)` … `microsecond(x)`, `epoch(x)` and
//! `date_part(field, x)` (EXTRACT).

use arrow::datatypes::{Float64Type, Int64Type};
use chrono::{Datelike, NaiveDateTime, Timelike};

use super::civil::civil_from_days;
use super::{epoch_nanos, on1, on_s1, Kind, F, I, KINDS, S, TIME_KINDS};
use crate::functions::{Inline, Lowering, Registry, ZoneReading};

/// A field of a date or time (EXTRACT's and date_part's), as PostgreSQL names
/// them: `Dow` is 0 (Sunday) to 6, `IsoDow` 1 (Monday) to 7, `Doy` 1 to 366,
/// `Week` and `IsoYear` ISO 8601's; `Second`, `Millisecond` and `Microsecond`
/// count whole units of the minute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Field {
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
pub(super) fn pg_year(y: i32) -> i64 {
    if y <= 0 {
        i64::from(y) - 1
    } else {
        i64::from(y)
    }
}

/// A field of the DATE `days` days after 1970-01-01 (a time field is 0) from the
/// integer calendar, which covers every DATE; `None` for the ISO week's fields,
/// which chrono computes.
fn date_field(f: Field, days: i64) -> Option<i64> {
    use Field::*;
    let c = civil_from_days(days);
    let pg = if c.year <= 0 { c.year - 1 } else { c.year };
    // 1970-01-01 was a Thursday.
    let weekday = days.rem_euclid(7);
    Some(match f {
        Millennium if c.year > 0 => (c.year - 1) / 1000 + 1,
        Millennium => -((-c.year) / 1000 + 1),
        Century if c.year > 0 => (c.year - 1) / 100 + 1,
        Century => -((-c.year) / 100 + 1),
        Decade => pg.div_euclid(10),
        Year => pg,
        Quarter => (c.month + 2) / 3,
        Month => c.month,
        Day => c.day,
        Dow => (weekday + 4) % 7,
        IsoDow => (weekday + 3) % 7 + 1,
        Doy => c.day_of_year,
        Hour | Minute | Second | Millisecond | Microsecond => 0,
        Epoch => days * 86_400,
        Week | IsoYear => return None,
    })
}

/// The field `f` of value `v` of kind `k`, as an integer ([`int_field`]).
fn int_field_of(f: Field, k: Kind, v: i64) -> Result<i64, String> {
    match (k == Kind::Date).then(|| date_field(f, v)).flatten() {
        Some(x) => Ok(x),
        None => Ok(int_field(f, k.read(v)?)),
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

/// The field `f` of value `v` of kind `k` as `date_part` gives it ([`float_field`]).
fn float_field_of(f: Field, k: Kind, v: i64) -> Result<f64, String> {
    match (k, f) {
        // A DATE's fields are whole numbers.
        (Kind::Date, _) => Ok(int_field_of(f, k, v)? as f64),
        _ => Ok(float_field(f, k.read(v)?)),
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

pub(super) fn register(r: &mut Registry) {
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
        let f = r.function(name).reads(ZoneReading::WallClock);
        for a in aliases {
            f.alias(a);
        }
        f.example(sql, result);
        let times = TIME_KINDS.iter().filter(|_| field.of_time());
        for k in KINDS.iter().chain(times).copied() {
            let imp = on1::<Int64Type>(k, move |v| int_field_of(field, k, v).map(Some));
            // Every DATE has its fields; chrono's range bounds the rest.
            let imp = if k == Kind::Date && date_field(field, 0).is_some() {
                imp
            } else {
                imp.fallible()
            };
            let lowering = match field {
                Field::Week | Field::IsoYear => Lowering::Helper,
                _ => Lowering::Inline(Inline::Field(field)),
            };
            f.lowered_sig(&[k.data_type()], I, doc, imp, lowering);
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
            on1::<Float64Type>(k, move |v| float_field_of(Field::Epoch, k, v).map(Some)).fallible(),
        );
    }
    // DuckDB's epoch_ms/us/ns: the instant in whole units since 1970-01-01, halves
    // rounded away from zero (as DuckDB's).
    for (name, per_second, example) in [
        (
            "epoch_ms",
            1_000i128,
            (
                "epoch_ms(TIMESTAMP '2024-01-01 00:00:01.5')",
                "1704067201500",
            ),
        ),
        (
            "epoch_us",
            1_000_000,
            ("epoch_us(DATE '1970-01-02')", "86400000000"),
        ),
        (
            "epoch_ns",
            1_000_000_000,
            ("epoch_ns(TIMESTAMP '1970-01-01 00:00:01')", "1000000000"),
        ),
    ] {
        let f = r.function(name).example(example.0, example.1);
        for k in KINDS {
            f.sig(
                &[k.data_type()],
                I,
                "the instant in whole units since 1970-01-01 00:00:00 (UTC for a TIMESTAMP WITH TIME ZONE), halves away from zero; one beyond BIGINT is an error",
                on1::<Int64Type>(k, move |v| {
                    let (nanos, per) = (epoch_nanos(k.read(v)?), 1_000_000_000 / per_second);
                    let (q, r) = (nanos / per, nanos % per);
                    let units = if 2 * r.abs() >= per { q + nanos.signum() } else { q };
                    i64::try_from(units)
                        .map(Some)
                        .map_err(|_| "bigint out of range".to_string())
                })
                .fallible(),
            );
        }
    }
    let f = r
        .function("date_part")
        .alias("datepart")
        .reads(ZoneReading::WallClock)
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
                float_field_of(f, k, v).map(Some)
            })
            .fallible(),
        );
    }
}
