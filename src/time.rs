//! Calendar and time-zone arithmetic and the text form of a time of day: the
//! low-level leaf that literal values ([`crate::scalar`]) and the date and time
//! functions share. It imports only [`crate::types`] and external crates.

use arrow::array::timezone::Tz;
use arrow_schema::TimeUnit;
use chrono::{LocalResult, NaiveDateTime, Offset, TimeDelta, TimeZone};

use crate::types::units_per_second;

/// The wall-clock time in `tz` at the instant `utc`.
pub(crate) fn to_local(utc: NaiveDateTime, tz: Tz) -> Option<NaiveDateTime> {
    let offset = tz.offset_from_utc_datetime(&utc).fix();
    utc.checked_add_signed(TimeDelta::seconds(i64::from(offset.local_minus_utc())))
}

/// The instant at which the wall clock in `tz` shows `local`: in a backward jump
/// (an hour that happens twice) the earlier; in a forward jump (an hour that does
/// not exist) the offset before the jump applies, so 02:30 on a spring-forward
/// night in New York is 03:30 EDT.
pub(crate) fn from_local(local: NaiveDateTime, tz: Tz) -> Option<NaiveDateTime> {
    let offset = match tz.offset_from_local_datetime(&local) {
        LocalResult::Single(o) | LocalResult::Ambiguous(o, _) => o.fix(),
        LocalResult::None => tz
            .offset_from_utc_datetime(&local.checked_sub_signed(TimeDelta::days(1))?)
            .fix(),
    };
    local.checked_sub_signed(TimeDelta::seconds(i64::from(offset.local_minus_utc())))
}

/// `HH:MM:SS` of `seconds` into the day, then `.fraction` (of `per_second` units)
/// without trailing zeros if it is not zero.
pub(crate) fn clock(seconds: i64, fraction: i64, per_second: i64) -> String {
    let mut out = format!(
        "{:02}:{:02}:{:02}",
        seconds / 3_600,
        seconds / 60 % 60,
        seconds % 60
    );
    if fraction != 0 {
        let width = per_second.ilog10() as usize;
        let digits = format!("{fraction:0width$}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
    out
}

/// A TIME's text form, as PostgreSQL prints it: `12:30:00`, with a fraction only
/// when there is one, without trailing zeros (`12:30:00.5`). A value outside the
/// day (a column holding one) prints as its count of units past midnight, wrapped.
pub(crate) fn format_time(value: i64, unit: TimeUnit) -> String {
    let per_second = units_per_second(unit);
    let seconds = value.div_euclid(per_second).rem_euclid(86_400);
    clock(seconds, value.rem_euclid(per_second), per_second)
}
