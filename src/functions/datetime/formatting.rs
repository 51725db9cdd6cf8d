//! Dates and times as text and back: `strftime`, `to_char`, and the templates
//! `to_timestamp`, `to_date` and `strptime` parse with.

use std::fmt::Write as _;

use chrono::{Datelike, NaiveDate, NaiveDateTime, NaiveTime, Timelike};

use super::fields::pg_year;
use super::{on1, on1_s, KINDS, S};
use crate::functions::row::{Outcome, Utf8};
use crate::functions::{Registry, ZoneReading};

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
pub(super) fn chrono_format(template: &str) -> String {
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
pub(super) fn parse_datetime(
    s: &str,
    chrono_fmt: &str,
    shown: &str,
) -> Result<NaiveDateTime, String> {
    NaiveDateTime::parse_from_str(s, chrono_fmt)
        .or_else(|_| NaiveDate::parse_from_str(s, chrono_fmt).map(|d| d.and_time(NaiveTime::MIN)))
        .map_err(|e| format!("could not parse \"{s}\" with format \"{shown}\": {e}"))
}

pub(super) fn register(r: &mut Registry) {
    let f = r
        .function("dayname")
        .reads(ZoneReading::WallClock)
        .example("dayname(DATE '2024-01-07')", "Sunday");
    for k in KINDS {
        f.sig(
            &[k.data_type()],
            S,
            "the English name of x's day of the week",
            on1::<Utf8>(k, move |v| {
                Ok(Some(
                    DAYS[k.read(v)?.weekday().num_days_from_sunday() as usize].to_string(),
                ))
            })
            .fallible(),
        );
    }
    let f = r
        .function("monthname")
        .reads(ZoneReading::WallClock)
        .example("monthname(DATE '2024-12-01')", "December");
    for k in KINDS {
        f.sig(
            &[k.data_type()],
            S,
            "the English name of x's month",
            on1::<Utf8>(k, move |v| {
                Ok(Some(MONTHS[k.read(v)?.month0() as usize].to_string()))
            })
            .fallible(),
        );
    }
    let f = r
        .function("strftime")
        .reads(ZoneReading::WallClock)
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
        .reads(ZoneReading::WallClock)
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
}
