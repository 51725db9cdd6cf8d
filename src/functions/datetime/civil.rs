//! The proleptic Gregorian calendar in integer arithmetic, for every day a DATE
//! can hold (±5.8 million years, where chrono stops at ±262,143): Howard
//! Hinnant's `civil_from_days`, written with the steps the kernel takes
//! (`lower::datetime` builds the same ones as vector code), so that both back ends
//! give one answer for every date.

use std::ops::RangeInclusive;

use chrono::NaiveDate;

/// Days in 400 Gregorian years, an era: the calendar repeats after one.
pub(crate) const DAYS_PER_ERA: i64 = 146_097;

/// The days from 0000-03-01 (the first day of era 0, counting years from March
/// so that a leap day ends its year) to 1970-01-01, less four eras: the steps count
/// days from the start of era `floor(days / DAYS_PER_ERA) + 4`, which keeps every
/// intermediate value of an `i32` day inside an `i32`.
pub(crate) const EPOCH_IN_ERA_4: i64 = 719_468 - 4 * DAYS_PER_ERA;

/// The days (since 1970-01-01) of the dates chrono can represent: the timestamps
/// whose day is outside are errors ("timestamp out of range"), as the interpreter
/// reads them with chrono.
pub(crate) fn chrono_days() -> RangeInclusive<i64> {
    i64::from(NaiveDate::MIN.to_epoch_days())..=i64::from(NaiveDate::MAX.to_epoch_days())
}

/// A day of the calendar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    /// The astronomical year (year 0 is 1 BC).
    pub year: i64,
    /// 1 to 12.
    pub month: i64,
    /// 1 to 31.
    pub day: i64,
    /// The day of the year, 1 to 366.
    pub day_of_year: i64,
}

/// Whether `year` (astronomical) has a February 29.
pub(crate) fn is_leap(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

/// The date `days` after 1970-01-01.
pub(crate) fn civil_from_days(days: i64) -> Civil {
    let era = days.div_euclid(DAYS_PER_ERA);
    // Days since the start of era `era + 4` (at most one era on).
    let t = days.rem_euclid(DAYS_PER_ERA) + EPOCH_IN_ERA_4;
    let carry = i64::from(t >= DAYS_PER_ERA);
    let day_of_era = t - carry * DAYS_PER_ERA;
    let era = era + 4 + carry;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    // From March 1, 0 to 365.
    let day_of_march_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // March is 0, February 11.
    let march_month = (5 * day_of_march_year + 2) / 153;
    let day = day_of_march_year - (153 * march_month + 2) / 5 + 1;
    let january_or_february = march_month >= 10;
    let month = march_month + if january_or_february { -9 } else { 3 };
    let year = year_of_era + era * 400 + i64::from(january_or_february);
    let day_of_year = if january_or_february {
        day_of_march_year - 305
    } else {
        day_of_march_year + 60 + i64::from(is_leap(year))
    };
    Civil {
        year,
        month,
        day,
        day_of_year,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Datelike;

    /// Every day chrono knows near the epoch and at the edges of its range, and
    /// a sample of the rest, agree with chrono.
    #[test]
    fn agrees_with_chrono() {
        let range = chrono_days();
        let (lo, hi) = (*range.start(), *range.end());
        let near = (-800_000..800_000)
            .chain(lo..lo + 1000)
            .chain(hi - 1000..=hi);
        let sampled = (lo..=hi).step_by(9_973);
        for days in near.chain(sampled) {
            let d = NaiveDate::from_epoch_days(days as i32).expect("in chrono's range");
            let c = civil_from_days(days);
            let expected = Civil {
                year: i64::from(d.year()),
                month: i64::from(d.month()),
                day: i64::from(d.day()),
                day_of_year: i64::from(d.ordinal()),
            };
            assert_eq!(c, expected, "day {days}");
        }
    }

    /// chrono's range: -262143-01-01 to +262142-12-31 (the tests use these days).
    #[test]
    fn chrono_days_are_its_range() {
        assert_eq!(chrono_days(), -96_465_292..=95_026_236);
        assert_eq!(civil_from_days(-96_465_292).year, -262_143);
        assert_eq!(civil_from_days(95_026_236).year, 262_142);
    }

    /// The extremes of an `i32` day: the steps stay in range and the calendar
    /// continues (2^31 days is about 5.88 million years).
    #[test]
    fn covers_every_i32_day() {
        let max = civil_from_days(i32::MAX.into());
        assert_eq!((max.year, max.month, max.day), (5_881_580, 7, 11));
        let min = civil_from_days(i32::MIN.into());
        assert_eq!((min.year, min.month, min.day), (-5_877_641, 6, 23));
        // Day-to-day continuity across the last era boundary below the maximum.
        let a = civil_from_days(i64::from(i32::MAX) - 1);
        assert_eq!((a.month, a.day), (7, 10));
    }
}
