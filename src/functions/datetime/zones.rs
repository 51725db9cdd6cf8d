//! Time zones: `timezone(zone, x)` (AT TIME ZONE) and `from_local_time`, and the
//! zone names they read.

use std::cell::RefCell;
use std::str::FromStr;

use arrow::array::timezone::Tz;
use arrow::datatypes::{
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_schema::{DataType, TimeUnit};
use chrono::{Offset, TimeZone};

use super::{read_ts, write_ts, OUT_OF_RANGE, S, UNITS};
use crate::functions::row::{map2, Outcome, Utf8};
use crate::functions::{Inline, Lowering, Registry};
use crate::time::{from_local, to_local};

thread_local! {
    /// The last zone parsed on this thread (a column's zone is one literal).
    static ZONE: RefCell<Option<(String, Tz)>> = const { RefCell::new(None) };
}

/// The time zone named `name` ("UTC", "+05:30", "Europe/Berlin").
pub(super) fn zone(name: &str) -> Result<Tz, String> {
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

/// The offset from UTC in seconds of a zone whose offset never changes: an offset
/// (`+05:30`, `-03`) or a name of UTC itself. `None` for other names (whose offset
/// may change: the row function reads them through the zone database) and for
/// names not recognized.
pub(crate) fn fixed_offset(name: &str) -> Option<i32> {
    const UTC_NAMES: [&str; 12] = [
        "UTC",
        "Etc/UTC",
        "GMT",
        "Etc/GMT",
        "UCT",
        "Etc/UCT",
        "Zulu",
        "Etc/Zulu",
        "Universal",
        "Etc/Universal",
        "Greenwich",
        "Etc/Greenwich",
    ];
    if UTC_NAMES.contains(&name) {
        return zone(name).ok().map(|_| 0);
    }
    if !name.starts_with(['+', '-']) {
        return None;
    }
    let tz = zone(name).ok()?;
    let epoch = chrono::DateTime::UNIX_EPOCH.naive_utc();
    Some(tz.offset_from_utc_datetime(&epoch).fix().local_minus_utc())
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

pub(super) fn register(r: &mut Registry) {
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
            f.lowered_sig(
                &[S, DataType::Timestamp(u, None)],
                DataType::Timestamp(u, ret_zone.map(Into::into)),
                doc,
                with_unit!(u, T => map2::<Utf8, T, T, _>(move |z: &str, v: i64| {
                    convert(z, v, u, to_wall_clock)
                }))
                .fallible(),
                Lowering::Inline(Inline::FixedZone { to_wall_clock }),
            );
        }
    }
}

#[cfg(test)]
mod fixed_offset_tests {
    use super::fixed_offset;

    /// Offsets and UTC's names are fixed; named zones with rules and unknown names
    /// are not (the row function reads or rejects them).
    #[test]
    fn only_offsets_and_utc_are_fixed() {
        assert_eq!(fixed_offset("UTC"), Some(0));
        assert_eq!(fixed_offset("Etc/UTC"), Some(0));
        assert_eq!(fixed_offset("+05:30"), Some(19_800));
        assert_eq!(fixed_offset("-03:00"), Some(-10_800));
        assert_eq!(fixed_offset("America/New_York"), None);
        assert_eq!(fixed_offset("Nowhere/City"), None);
        assert_eq!(fixed_offset("+99:99"), None);
    }
}
