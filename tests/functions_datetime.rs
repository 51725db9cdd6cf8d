//! Date and time functions against hand-computed values: NULLs, leap years, ISO
//! weeks around New Year, dates and timestamps before 1970, time zones and rows
//! that fail. Every expression runs in the JIT (it must compile: `is_jit`) and in
//! the interpreter, which must agree.

mod common;

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, Date32Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    TimestampNanosecondArray, TimestampSecondArray,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::util::display::array_value_to_string;
use broadhead::bind::bind;
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::sql::parse_expr;
use broadhead::Projector;
use common::same_array;

/// The values of `expr` over `batch` as the CLI prints them (NULL as "NULL"),
/// after checking that the JIT compiles it and agrees with the interpreter.
fn eval(batch: &RecordBatch, expr: &str) -> Result<Vec<String>, String> {
    let schema = batch.schema();
    let projector = Projector::new(&schema, &[expr]).map_err(|e| e.to_string())?;
    assert!(projector.is_jit(0), "{expr} is interpreted");
    let typed = optimize(bind(&parse_expr(expr).unwrap(), &schema).unwrap());
    let jit = projector.evaluate(batch).map(|mut v| v.remove(0));
    let reference = interpret(&typed, batch);
    let out = match (jit, reference) {
        (Ok(a), Ok(b)) => {
            assert!(same_array(a.as_ref(), b.as_ref()), "{expr}:\n{a:?}\n{b:?}");
            a
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{expr}");
            return Err(a.to_string());
        }
        (a, b) => panic!("{expr}: JIT {a:?}, interpreter {b:?}"),
    };
    Ok((0..out.len())
        .map(|i| {
            if out.is_null(i) {
                "NULL".to_string()
            } else {
                array_value_to_string(&out, i).unwrap()
            }
        })
        .collect())
}

#[track_caller]
fn check(batch: &RecordBatch, expr: &str, expected: &[&str]) {
    match eval(batch, expr) {
        Ok(v) => assert_eq!(v, expected, "{expr}"),
        Err(e) => panic!("{expr}: {e}"),
    }
}

#[track_caller]
fn check_error(batch: &RecordBatch, expr: &str, message: &str) {
    match eval(batch, expr) {
        Ok(v) => panic!("{expr} gave {v:?}, not the error {message}"),
        Err(e) => assert_eq!(e, message, "{expr}"),
    }
}

/// Leap day 2024; 2021-01-01 (ISO week 53 of 2020); 2024-12-31 (ISO week 1 of
/// 2025); 1969-12-31 (before 1970, ISO week 1 of 1970); NULL; 2000-12-31 (the
/// last day of the 20th century, a Sunday).
fn dates() -> RecordBatch {
    let d = Date32Array::from(vec![
        Some(19782),
        Some(18628),
        Some(20088),
        Some(-1),
        None,
        Some(11322),
    ]);
    let schema = Schema::new(vec![Field::new("d", DataType::Date32, true)]);
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(d) as ArrayRef]).unwrap()
}

/// 2024-02-29 13:45:30.123456, 1969-12-31 23:59:59.5, NULL, 1970-01-01 00:00:00
/// as TIMESTAMP (us); the same instants in seconds (fractions dropped) and as
/// nanoseconds (1969-12-31 23:59:59.999999999 in the second row).
fn timestamps() -> RecordBatch {
    let us = TimestampMicrosecondArray::from(vec![
        Some(1_709_214_330_123_456),
        Some(-500_000),
        None,
        Some(0),
    ]);
    let s = TimestampSecondArray::from(vec![Some(1_709_214_330), Some(-1), None, Some(0)]);
    let ns = TimestampNanosecondArray::from(vec![
        Some(1_709_214_330_123_456_789),
        Some(-1),
        None,
        Some(0),
    ]);
    let schema = Schema::new(vec![
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
        Field::new("tss", DataType::Timestamp(TimeUnit::Second, None), true),
        Field::new("tsn", DataType::Timestamp(TimeUnit::Nanosecond, None), true),
    ]);
    RecordBatch::try_new(
        Arc::new(schema),
        vec![Arc::new(us) as ArrayRef, Arc::new(s), Arc::new(ns)],
    )
    .unwrap()
}

/// 2024-07-01 03:00:00 UTC (23:00 the day before in New York, EDT) and
/// 2024-01-15 12:00:00 UTC (07:00 EST), and NULL, in America/New_York.
fn zoned() -> RecordBatch {
    in_new_york(vec![
        Some(1_719_802_800_000_000),
        Some(1_705_320_000_000_000),
        None,
    ])
}

/// A batch of one column `tz`: TIMESTAMP (us) WITH TIME ZONE America/New_York.
fn in_new_york(micros: Vec<Option<i64>>) -> RecordBatch {
    let tz = TimestampMicrosecondArray::from(micros).with_timezone("America/New_York");
    let schema = Schema::new(vec![Field::new(
        "tz",
        DataType::Timestamp(TimeUnit::Microsecond, Some("America/New_York".into())),
        true,
    )]);
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(tz) as ArrayRef]).unwrap()
}

#[test]
fn fields_of_dates_with_leap_years_and_iso_weeks_around_new_year() {
    let b = dates();
    let n = "NULL";
    check(&b, "year(d)", &["2024", "2021", "2024", "1969", n, "2000"]);
    check(
        &b,
        "date_part('year', d)",
        &["2024", "2021", "2024", "1969", n, "2000"],
    );
    check(&b, "quarter(d)", &["1", "1", "4", "4", n, "4"]);
    check(&b, "month(d)", &["2", "1", "12", "12", n, "12"]);
    check(&b, "week(d)", &["9", "53", "1", "1", n, "52"]);
    check(&b, "date_part('week', d)", &["9", "53", "1", "1", n, "52"]);
    check(
        &b,
        "isoyear(d)",
        &["2024", "2020", "2025", "1970", n, "2000"],
    );
    check(&b, "day(d)", &["29", "1", "31", "31", n, "31"]);
    check(&b, "dayofweek(d)", &["4", "5", "2", "3", n, "0"]);
    check(&b, "date_part('dow', d)", &["4", "5", "2", "3", n, "0"]);
    check(&b, "isodow(d)", &["4", "5", "2", "3", n, "7"]);
    check(&b, "dayofyear(d)", &["60", "1", "366", "365", n, "366"]);
    check(
        &b,
        "date_part('doy', d)",
        &["60", "1", "366", "365", n, "366"],
    );
    check(&b, "decade(d)", &["202", "202", "202", "196", n, "200"]);
    check(&b, "century(d)", &["21", "21", "21", "20", n, "20"]);
    check(&b, "millennium(d)", &["3", "3", "3", "2", n, "2"]);
    check(&b, "hour(d)", &["0", "0", "0", "0", n, "0"]);
    check(
        &b,
        "date_part('epoch', d)",
        &[
            "1709164800.0",
            "1609459200.0",
            "1735603200.0",
            "-86400.0",
            n,
            "978220800.0",
        ],
    );
    check(
        &b,
        "last_day(d)",
        &[
            "2024-02-29",
            "2021-01-31",
            "2024-12-31",
            "1969-12-31",
            n,
            "2000-12-31",
        ],
    );
    check(
        &b,
        "date_add(d, 1)",
        &[
            "2024-03-01",
            "2021-01-02",
            "2025-01-01",
            "1970-01-01",
            n,
            "2001-01-01",
        ],
    );
}

#[test]
fn date_part_chooses_its_type_from_a_literal_field_and_rejects_unknown_fields() {
    let b = dates();
    let schema = b.schema();
    let typed = |text: &str| bind(&parse_expr(text).unwrap(), &schema).unwrap().data_type;
    assert_eq!(typed("date_part('year', d)"), DataType::Int64);
    assert_eq!(typed("date_part('isodow', d)"), DataType::Int64);
    assert_eq!(typed("date_part('second', d)"), DataType::Float64);
    assert_eq!(typed("date_part('epoch', d)"), DataType::Float64);
    let e = Projector::new(&schema, &["date_part('fortnight', d)"]).unwrap_err();
    assert!(
        e.to_string().contains("unit \"fortnight\" not recognized"),
        "{e}"
    );
    // A field that is not a literal is read per row: DOUBLE, errors per row.
    let s = Schema::new(vec![
        Field::new("f", DataType::Utf8, true),
        Field::new("d", DataType::Date32, true),
    ]);
    let b = RecordBatch::try_new(
        Arc::new(s),
        vec![
            Arc::new(StringArray::from(vec![Some("month"), Some("DOY"), None])) as ArrayRef,
            Arc::new(Date32Array::from(vec![Some(19782), Some(19782), Some(0)])),
        ],
    )
    .unwrap();
    check(&b, "date_part(f, d)", &["2.0", "60.0", "NULL"]);
    let b = b.slice(0, 2);
    let bad = RecordBatch::try_new(
        b.schema(),
        vec![
            Arc::new(StringArray::from(vec!["year", "eon"])) as ArrayRef,
            b.column(1).clone(),
        ],
    )
    .unwrap();
    check_error(
        &bad,
        "date_part(f, d)",
        "unit \"eon\" not recognized at row 1",
    );
}

#[test]
fn fields_of_timestamps_of_every_unit_before_and_after_1970() {
    let b = timestamps();
    let n = "NULL";
    check(&b, "hour(ts)", &["13", "23", n, "0"]);
    check(&b, "minute(ts)", &["45", "59", n, "0"]);
    check(&b, "second(ts)", &["30", "59", n, "0"]);
    check(&b, "millisecond(ts)", &["30123", "59500", n, "0"]);
    check(&b, "microsecond(ts)", &["30123456", "59500000", n, "0"]);
    check(
        &b,
        "date_part('second', ts)",
        &["30.123456", "59.5", n, "0.0"],
    );
    check(
        &b,
        "date_part('milliseconds', ts)",
        &["30123.456", "59500.0", n, "0.0"],
    );
    check(&b, "epoch(ts)", &["1709214330.123456", "-0.5", n, "0.0"]);
    check(&b, "year(ts)", &["2024", "1969", n, "1970"]);
    check(&b, "year(tss)", &["2024", "1969", n, "1970"]);
    check(&b, "second(tss)", &["30", "59", n, "0"]);
    check(&b, "epoch(tss)", &["1709214330.0", "-1.0", n, "0.0"]);
    check(&b, "microsecond(tsn)", &["30123456", "59999999", n, "0"]);
    check(&b, "day(tsn)", &["29", "31", n, "1"]);
    check(
        &b,
        "date_part('microsecond', tsn)",
        &["30123456.789", "59999999.999", n, "0.0"],
    );
}

#[test]
fn date_trunc_gives_timestamps_and_keeps_the_unit() {
    let (d, t) = (dates(), timestamps());
    let n = "NULL";
    check(
        &d,
        "date_trunc('month', d)",
        &[
            "2024-02-01T00:00:00",
            "2021-01-01T00:00:00",
            "2024-12-01T00:00:00",
            "1969-12-01T00:00:00",
            n,
            "2000-12-01T00:00:00",
        ],
    );
    check(
        &d,
        "date_trunc('week', d)",
        &[
            "2024-02-26T00:00:00",
            "2020-12-28T00:00:00",
            "2024-12-30T00:00:00",
            "1969-12-29T00:00:00",
            n,
            "2000-12-25T00:00:00",
        ],
    );
    check(
        &d,
        "date_trunc('century', d)",
        &[
            "2001-01-01T00:00:00",
            "2001-01-01T00:00:00",
            "2001-01-01T00:00:00",
            "1901-01-01T00:00:00",
            n,
            "1901-01-01T00:00:00",
        ],
    );
    check(
        &t,
        "date_trunc('hour', ts)",
        &[
            "2024-02-29T13:00:00",
            "1969-12-31T23:00:00",
            n,
            "1970-01-01T00:00:00",
        ],
    );
    check(
        &t,
        "date_trunc('milliseconds', ts)",
        &[
            "2024-02-29T13:45:30.123",
            "1969-12-31T23:59:59.500",
            n,
            "1970-01-01T00:00:00",
        ],
    );
    check(
        &t,
        "date_trunc('second', tsn)",
        &[
            "2024-02-29T13:45:30",
            "1969-12-31T23:59:59",
            n,
            "1970-01-01T00:00:00",
        ],
    );
    check(
        &t,
        "date_trunc('quarter', tss)",
        &[
            "2024-01-01T00:00:00",
            "1969-10-01T00:00:00",
            n,
            "1970-01-01T00:00:00",
        ],
    );
    let schema = t.schema();
    let typed = |text: &str| bind(&parse_expr(text).unwrap(), &schema).unwrap().data_type;
    assert_eq!(
        typed("date_trunc('day', tsn)"),
        DataType::Timestamp(TimeUnit::Nanosecond, None)
    );
    check_error(
        &t,
        "date_trunc('fortnight', ts)",
        "unit \"fortnight\" not recognized at row 0",
    );
}

#[test]
fn date_diff_counts_boundaries_crossed() {
    let t = timestamps();
    let n = "NULL";
    // From each row to 1970-01-01 00:00:00.
    let epoch = "TIMESTAMP '1970-01-01 00:00:00'";
    check(
        &t,
        &format!("date_diff('second', ts, {epoch})"),
        &["-1709214330", "1", n, "0"],
    );
    check(
        &t,
        &format!("datediff('day', ts, {epoch})"),
        &["-19782", "1", n, "0"],
    );
    check(
        &t,
        &format!("date_diff('year', ts, {epoch})"),
        &["-54", "1", n, "0"],
    );
    check(
        &t,
        &format!("date_diff('month', ts, {epoch})"),
        &["-649", "1", n, "0"],
    );
    check(
        &t,
        &format!("date_diff('microsecond', ts, {epoch})"),
        &["-1709214330123456", "500000", n, "0"],
    );
    let d = dates();
    check(
        &d,
        "date_diff('month', DATE '2024-01-31', d)",
        &["1", "-36", "11", "-649", n, "-277"],
    );
    // 2021-01-01 is a Friday; the Monday after it is 2021-01-04.
    check(
        &d,
        "date_diff('week', d, DATE '2021-01-04')",
        &["-164", "1", "-208", "2662", n, "1045"],
    );
}

#[test]
fn constructors_and_their_errors() {
    let s = Schema::new(vec![Field::new("y", DataType::Int64, true)]);
    let b = RecordBatch::try_new(
        Arc::new(s),
        vec![Arc::new(Int64Array::from(vec![Some(2024), None, Some(2023)])) as ArrayRef],
    )
    .unwrap();
    check(
        &b,
        "make_date(y, 3, 1)",
        &["2024-03-01", "NULL", "2023-03-01"],
    );
    check_error(
        &b,
        "make_date(y, 2, 29)",
        "date field value out of range: 2023-02-29 at row 2",
    );
    // The error is raised only where the value is used.
    check(
        &b,
        "CASE WHEN y % 4 = 0 THEN make_date(y, 2, 29) END",
        &["2024-02-29", "NULL", "NULL"],
    );
    check(
        &b,
        "make_date(-y, 1, 1)",
        &["-2023-01-01", "NULL", "-2022-01-01"],
    );
    check(
        &b,
        "make_timestamp(y, 12, 31, 23, 59, 59.25)",
        &["2024-12-31T23:59:59.250", "NULL", "2023-12-31T23:59:59.250"],
    );
    check_error(
        &b,
        "make_timestamp(y, 1, 1, 24, 0, 0)",
        "time field value out of range: 24:00:00 at row 0",
    );
    check(
        &b,
        "to_timestamp(y - y + 1709214330.5e0)",
        &[
            "2024-02-29T13:45:30.500Z",
            "NULL",
            "2024-02-29T13:45:30.500Z",
        ],
    );
    check(
        &b,
        "to_timestamp(-0.5e0 + y - y)",
        &[
            "1969-12-31T23:59:59.500Z",
            "NULL",
            "1969-12-31T23:59:59.500Z",
        ],
    );
    check_error(
        &b,
        "to_timestamp(y * 1e300)",
        "timestamp out of range at row 0",
    );
}

#[test]
fn parsing_names_the_value_that_does_not_fit() {
    let s = Schema::new(vec![Field::new("s", DataType::Utf8, true)]);
    let b = RecordBatch::try_new(
        Arc::new(s),
        vec![Arc::new(StringArray::from(vec![
            Some("2024-02-29 13:45"),
            None,
            Some("1969-12-31 23:59"),
        ])) as ArrayRef],
    )
    .unwrap();
    check(
        &b,
        "strptime(s, '%Y-%m-%d %H:%M')",
        &["2024-02-29T13:45:00", "NULL", "1969-12-31T23:59:00"],
    );
    check(
        &b,
        "to_date(s, 'YYYY-MM-DD HH24:MI')",
        &["2024-02-29", "NULL", "1969-12-31"],
    );
    check(
        &b,
        "to_timestamp(s, 'YYYY-MM-DD HH24:MI')",
        &["2024-02-29T13:45:00Z", "NULL", "1969-12-31T23:59:00Z"],
    );
    let e = eval(&b, "strptime(s, '%d/%m/%Y')").unwrap_err();
    assert!(
        e.starts_with("could not parse \"2024-02-29 13:45\" with format \"%d/%m/%Y\""),
        "{e}"
    );
    let e = eval(&b, "to_date(concat(s, 'x'), 'YYYY-MM-DD HH24:MI')").unwrap_err();
    assert!(e.contains("\"2024-02-29 13:45x\""), "{e}");
    let e = eval(&b, "to_date('2023-02-29', 'YYYY-MM-DD')").unwrap_err();
    assert!(e.contains("\"2023-02-29\""), "{e}");
}

#[test]
fn formatting_with_strftime_and_to_char() {
    let t = timestamps();
    let n = "NULL";
    check(
        &t,
        "strftime(ts, '%Y-%m-%d %H:%M:%S%.6f %a %j')",
        &[
            "2024-02-29 13:45:30.123456 Thu 060",
            "1969-12-31 23:59:59.500000 Wed 365",
            n,
            "1970-01-01 00:00:00.000000 Thu 001",
        ],
    );
    check(
        &t,
        "to_char(ts, 'YYYY-MM-DD HH24:MI:SS.MS Dy Mon FMDD FMHH12 AM')",
        &[
            "2024-02-29 13:45:30.123 Thu Feb 29 1 PM",
            "1969-12-31 23:59:59.500 Wed Dec 31 11 PM",
            n,
            "1970-01-01 00:00:00.000 Thu Jan 1 12 AM",
        ],
    );
    check(
        &dates(),
        "to_char(d, 'Day|Month|IYYY-IW')",
        &[
            "Thursday |February |2024-09",
            "Friday   |January  |2020-53",
            "Tuesday  |December |2025-01",
            "Wednesday|December |1970-01",
            n,
            "Sunday   |December |2000-52",
        ],
    );
    check_error(
        &t,
        "strftime(ts, '%Q')",
        "invalid format string \"%Q\" at row 0",
    );
}

#[test]
fn timestamps_with_a_time_zone_are_read_in_their_zone() {
    let z = zoned();
    let n = "NULL";
    check(&z, "day(tz)", &["30", "15", n]);
    check(&z, "hour(tz)", &["23", "7", n]);
    check(&z, "date_part('hour', tz)", &["23", "7", n]);
    // The epoch is the instant's, not the wall clock's (as PostgreSQL).
    check(&z, "epoch(tz)", &["1719802800.0", "1705320000.0", n]);
    check(
        &z,
        "date_part('epoch', tz)",
        &["1719802800.0", "1705320000.0", n],
    );
    check(
        &z,
        "date_trunc('day', tz)",
        &["2024-06-30T00:00:00-04:00", "2024-01-15T00:00:00-05:00", n],
    );
    check(
        &z,
        "timezone('UTC', tz)",
        &["2024-07-01T03:00:00", "2024-01-15T12:00:00", n],
    );
    check(
        &z,
        "timezone('Asia/Kolkata', tz)",
        &["2024-07-01T08:30:00", "2024-01-15T17:30:00", n],
    );
    check(
        &z,
        "to_char(tz, 'YYYY-MM-DD HH24:MI')",
        &["2024-06-30 23:00", "2024-01-15 07:00", n],
    );
    check(
        &z,
        "date_diff('day', tz, to_timestamp(1719802800))",
        &["1", "168", n],
    );
    // A wall-clock time in a zone to an instant, and back; 02:30 on the night
    // clocks jump forward in New York does not exist: the offset before the jump
    // (EST) applies, so it is 07:30 UTC.
    check(
        &z,
        "timezone('America/New_York', TIMESTAMP '2024-03-10 02:30:00') IS NOT NULL AND tz IS NOT NULL",
        &["true", "true", "false"],
    );
    check(
        &z,
        "timezone('UTC', timezone('America/New_York', timezone('America/New_York', tz)))",
        &["2024-07-01T03:00:00", "2024-01-15T12:00:00", n],
    );
    let schema = z.schema();
    let p = Projector::new(
        &schema,
        &["timezone('America/New_York', TIMESTAMP '2024-03-10 02:30:00')"],
    )
    .unwrap();
    let out = p.evaluate(&z).unwrap();
    assert_eq!(
        array_value_to_string(&out[0], 0).unwrap(),
        "2024-03-10T07:30:00Z"
    );
    let e = eval(&z, "timezone('Mars/Olympus', tz)").unwrap_err();
    assert_eq!(e, "time zone \"Mars/Olympus\" not recognized at row 0");
    let e = Projector::new(&schema, &["date_part(concat('ye', 'ar'), tz)"]).unwrap_err();
    assert!(e.to_string().contains("needs a literal field"), "{e}");
}

#[test]
fn current_date_and_time_are_one_literal_per_expression() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
    let before = chrono::Utc::now().timestamp_micros();
    let typed = bind(&parse_expr("now()").unwrap(), &schema).unwrap();
    let after = chrono::Utc::now().timestamp_micros();
    match typed.as_literal() {
        Some(broadhead::scalar::ScalarValue::Timestamp(v, TimeUnit::Microsecond, Some(z))) => {
            assert!((before..=after).contains(v));
            assert_eq!(&**z, "UTC");
        }
        other => panic!("now() bound to {other:?}"),
    }
    let b = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef],
    )
    .unwrap();
    check(
        &b,
        "now() = current_timestamp() AND epoch(now()) = epoch(current_timestamp())",
        &["true", "true"],
    );
    check(
        &b,
        "current_date() = make_date(year(now()), month(now()), day(now()))",
        &["true", "true"],
    );
    // The keywords without parentheses, as SQL writes them.
    check(
        &b,
        "CURRENT_DATE = CAST(CURRENT_TIMESTAMP AS DATE) AND CURRENT_TIMESTAMP = now()",
        &["true", "true"],
    );
}

#[test]
fn extract_is_date_part_with_a_literal_field() {
    let (d, z) = (dates(), zoned());
    check(
        &d,
        "EXTRACT(year FROM d)",
        &["2024", "2021", "2024", "1969", "NULL", "2000"],
    );
    check(
        &d,
        "EXTRACT(WEEK FROM d)",
        &["9", "53", "1", "1", "NULL", "52"],
    );
    check(
        &d,
        "EXTRACT(isodow FROM d)",
        &["4", "5", "2", "3", "NULL", "7"],
    );
    check(
        &timestamps(),
        "EXTRACT(second FROM ts)",
        &["30.123456", "59.5", "NULL", "0.0"],
    );
    check(&z, "EXTRACT(hour FROM tz)", &["23", "7", "NULL"]);
    check(
        &z,
        "EXTRACT(epoch FROM tz)",
        &["1719802800.0", "1705320000.0", "NULL"],
    );
}

#[test]
fn interval_arithmetic_adds_months_then_days_then_time() {
    let (d, t) = (dates(), timestamps());
    let n = "NULL";
    check(
        &d,
        "d + INTERVAL '1 month'",
        &[
            "2024-03-29T00:00:00",
            "2021-02-01T00:00:00",
            "2025-01-31T00:00:00",
            "1970-01-31T00:00:00",
            n,
            "2001-01-31T00:00:00",
        ],
    );
    // Months clamp to the end of the month, as PostgreSQL's.
    check(
        &d,
        "d - INTERVAL '1 year' = DATE '2023-02-28' OR d IS NULL OR year(d) <> 2024 OR month(d) <> 2",
        &["true", "true", "true", "true", "true", "true"],
    );
    check(
        &d,
        "DATE '2024-01-31' + INTERVAL '1 month' = TIMESTAMP '2024-02-29 00:00:00' AND d IS NOT NULL",
        &["true", "true", "true", "true", "false", "true"],
    );
    check(
        &t,
        "ts + INTERVAL '1 day 2 hours'",
        &[
            "2024-03-01T15:45:30.123456",
            "1970-01-02T01:59:59.500",
            n,
            "1970-01-02T02:00:00",
        ],
    );
    check(
        &t,
        "INTERVAL '1 month' + ts",
        &[
            "2024-03-29T13:45:30.123456",
            "1970-01-31T23:59:59.500",
            n,
            "1970-02-01T00:00:00",
        ],
    );
    check(
        &t,
        "ts - INTERVAL '1 month 1 day'",
        &[
            "2024-01-28T13:45:30.123456",
            "1969-11-29T23:59:59.500",
            n,
            "1969-11-30T00:00:00",
        ],
    );
    // Digits below the unit are dropped (rounded down).
    check(
        &t,
        "tss + INTERVAL '1.5 seconds'",
        &[
            "2024-02-29T13:45:31",
            "1970-01-01T00:00:00",
            n,
            "1970-01-01T00:00:01",
        ],
    );
    check(
        &t,
        "tsn - INTERVAL '1 microsecond'",
        &[
            "2024-02-29T13:45:30.123455789",
            "1969-12-31T23:59:59.999998999",
            n,
            "1969-12-31T23:59:59.999999",
        ],
    );
    let schema = d.schema();
    let typed = |text: &str| bind(&parse_expr(text).unwrap(), &schema).unwrap().data_type;
    assert_eq!(
        typed("d + INTERVAL '1 day'"),
        DataType::Timestamp(TimeUnit::Microsecond, None)
    );
    check_error(
        &t,
        "ts + INTERVAL '300000 years'",
        "timestamp out of range at row 0",
    );
}

#[test]
fn interval_days_follow_the_wall_clock_of_the_zone() {
    // 2024-03-09 12:00 EST (17:00 UTC), the day before New York's clocks jump forward.
    let b = in_new_york(vec![Some(1_710_003_600_000_000), None]);
    // One calendar day later is 12:00 EDT, 23 hours later; 24 hours later is 13:00 EDT.
    check(
        &b,
        "tz + INTERVAL '1 day'",
        &["2024-03-10T12:00:00-04:00", "NULL"],
    );
    check(
        &b,
        "tz + INTERVAL '24 hours'",
        &["2024-03-10T13:00:00-04:00", "NULL"],
    );
    check(
        &b,
        "tz + INTERVAL '1 month'",
        &["2024-04-09T12:00:00-04:00", "NULL"],
    );
    check(
        &b,
        "epoch(tz + INTERVAL '1 day') - epoch(tz)",
        &["82800.0", "NULL"],
    );
}

/// Every unit `date_trunc`, `date_diff` and `date_part` take, the fields without a
/// truncation or difference (`dow`, `doy`, `epoch`), and one none takes.
const UNITS: [&str; 18] = [
    "microsecond",
    "millisecond",
    "second",
    "minute",
    "hour",
    "day",
    "week",
    "month",
    "quarter",
    "year",
    "decade",
    "century",
    "millennium",
    "isoyear",
    "dow",
    "doy",
    "epoch",
    "fortnight",
];

/// The units `date_diff` of two DATEs counts from the calendar alone.
const DATE_UNITS: [&str; 10] = [
    "day",
    "week",
    "month",
    "quarter",
    "year",
    "decade",
    "century",
    "millennium",
    "dow",
    "doy",
];

/// `date_trunc` and `date_diff` with every literal unit (which the kernel computes
/// with the calendar's integer steps) and EXTRACT of every field, of DATE and
/// TIMESTAMP of every unit, through both back ends: all at once over dates chrono
/// represents (era, century and leap-year boundaries, the years around 1 BC, the
/// ends of chrono's range), and row by row beyond them, where the rows that fail
/// must be the same.
#[test]
fn calendar_units_agree_with_the_interpreter_at_the_extremes() {
    let (min_day, max_day) = (-96_465_292i64, 95_026_236i64); // chrono's first and last
    let inside: Vec<i64> = vec![
        0,
        -1,
        58,
        59,
        60,
        365,
        10_956,
        11_016,
        11_017,
        19_782,
        -719_468,
        -719_469,
        -719_528,
        -719_529,
        -719_893,
        -146_097,
        146_097,
        -1_000_000,
        2_932_896,
        2_932_897,
        min_day,
        min_day + 1,
        min_day + 400,
        max_day,
        max_day - 1,
        max_day - 400,
    ];
    let outside: Vec<i64> = vec![
        min_day - 1,
        max_day + 1,
        i64::from(i32::MIN),
        i64::from(i32::MAX),
    ];
    let kinds: [(DataType, i128); 5] = [
        (DataType::Date32, 1),
        (DataType::Timestamp(TimeUnit::Second, None), 86_400),
        (DataType::Timestamp(TimeUnit::Millisecond, None), 86_400_000),
        (
            DataType::Timestamp(TimeUnit::Microsecond, None),
            86_400_000_000,
        ),
        (
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            86_400_000_000_000,
        ),
    ];
    for (ty, per_day) in kinds {
        // A day's value, and for timestamps that day at 13:45:30.123456789 too.
        let values = |days: &[i64]| -> Vec<i64> {
            let mut out = Vec::new();
            for &d in days {
                let at = i128::from(d) * per_day;
                let later = at + per_day * 49_530_123_456_789 / 86_400_000_000_000;
                for v in [at, later] {
                    if let Ok(v) = i64::try_from(v) {
                        out.push(v);
                    }
                }
                if per_day == 1 {
                    out.pop();
                }
            }
            if per_day > 1 && days.len() < 10 {
                out.extend([i64::MIN, i64::MAX]);
            }
            out
        };
        let batch = |x: Vec<i64>| -> RecordBatch {
            let y = vec![19_782 * i64::try_from(per_day).unwrap(); x.len()];
            let column = |v: Vec<i64>| -> ArrayRef {
                let a: ArrayRef = Arc::new(Int64Array::from(v));
                let a = if ty == DataType::Date32 {
                    arrow::compute::cast(&a, &DataType::Int32).unwrap()
                } else {
                    a
                };
                arrow::compute::cast(&a, &ty).unwrap()
            };
            let schema = Schema::new(vec![
                Field::new("x", ty.clone(), true),
                Field::new("y", ty.clone(), true),
            ]);
            RecordBatch::try_new(Arc::new(schema), vec![column(x), column(y)]).unwrap()
        };
        let mut batches = vec![batch(values(&inside))];
        batches.extend(
            values(&outside)
                .into_iter()
                .filter(|&v| per_day > 1 || i32::try_from(v).is_ok())
                .map(|v| batch(vec![v])),
        );
        // Inside chrono's range, every row has a day.
        assert!(eval(&batches[0], "date_trunc('day', x)").is_ok(), "{ty}");
        // Interval steps by literals (a parameter) and by a column (128 bits).
        let steps = [
            "add_days(x, 1)",
            "add_days(x, -1)",
            "add_days(x, 100000000)",
            "add_days(x, -9223372036854775807)",
            "add_days(x, date_diff('day', x, y))",
            "add_nanoseconds(x, -1)",
            "add_nanoseconds(x, 86400000000001)",
            "add_nanoseconds(x, 9223372036854775807)",
            "add_nanoseconds(x, date_diff('microsecond', y, x))",
            "x + INTERVAL '30 days 1 second'",
            "x + INTERVAL '1 month'",
            "x - INTERVAL '13 months'",
            "add_months(x, 6000000)",
            "add_months(x, -9223372036854775807)",
            "add_months(x, date_diff('month', y, x))",
            "add_months(x, date_diff('month', x, y) * 2)",
            "x - INTERVAL '1000000 days'",
            "timezone('UTC', from_local_time('UTC', x))",
            "timezone('+05:30', from_local_time('Etc/UTC', x))",
            "from_local_time('-03:00', x)",
            "timezone('America/New_York', from_local_time('+14:00', x))",
            "hour(from_local_time('+05:30', x))",
            "date_trunc('day', from_local_time('-11:00', x))",
            "greatest(x, y)",
            "least(y, x, NULL)",
        ];
        for b in &batches {
            for expr in steps {
                if eval(b, expr).is_err() && b.num_rows() > 1 {
                    for row in 0..b.num_rows() {
                        let _ = eval(&b.slice(row, 1), expr);
                    }
                }
            }
        }
        for b in &batches {
            for unit in UNITS {
                for expr in [
                    format!("date_trunc('{unit}', x)"),
                    format!("date_diff('{unit}', x, y)"),
                    format!("date_diff('{unit}', y, x)"),
                    format!("date_part('{unit}', x)"),
                ] {
                    // Agreement is what `eval` checks; an unknown unit fails to bind.
                    // Where some row fails, each row on its own (a batch reports
                    // its first failure only).
                    if eval(b, &expr).is_err() && b.num_rows() > 1 {
                        for row in 0..b.num_rows() {
                            let _ = eval(&b.slice(row, 1), &expr);
                        }
                    }
                }
            }
        }
    }
}

/// `date_diff` of DATEs in days and coarser units cannot fail (every DATE has its
/// calendar), so a Parquet scan may decide it on dictionary values; in time units,
/// in ISO years or with a unit that is not a literal it can.
#[test]
fn date_differences_of_dates_declare_when_they_can_fail() {
    let schema = Schema::new(vec![
        Field::new("a", DataType::Date32, true),
        Field::new("b", DataType::Date32, true),
        Field::new("u", DataType::Utf8, true),
    ]);
    let can_error =
        |text: &str| optimize(bind(&parse_expr(text).unwrap(), &schema).unwrap()).can_error();
    for unit in DATE_UNITS {
        assert!(
            !can_error(&format!("date_diff('{unit}', a, b) > 3")),
            "{unit}"
        );
    }
    for unit in [
        "hour",
        "second",
        "microsecond",
        "isoyear",
        "epoch",
        "fortnight",
    ] {
        assert!(
            can_error(&format!("date_diff('{unit}', a, b) > 3")),
            "{unit}"
        );
    }
    assert!(can_error("date_diff(u, a, b) > 3"));
    // Extremes still agree (the i32 days at both ends).
    let d = Date32Array::from(vec![Some(i32::MIN), Some(i32::MAX), None]);
    let batch = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("a", DataType::Date32, true),
            Field::new("b", DataType::Date32, true),
        ])),
        vec![
            Arc::new(d.clone()) as ArrayRef,
            Arc::new(Date32Array::from(vec![Some(0), Some(0), Some(0)])),
        ],
    )
    .unwrap();
    check(
        &batch,
        "date_diff('day', a, b)",
        &["2147483648", "-2147483647", "NULL"],
    );
    check(
        &batch,
        "date_diff('year', b, a)",
        &["-5879611", "5879610", "NULL"],
    );
}

/// A timestamp chrono cannot read fails only on rows that read it: with another
/// argument NULL, a strict call is NULL and its arguments' checks do not fail (the
/// kernel once failed there, where the interpreter gave NULL).
#[test]
fn an_unreadable_timestamp_beside_a_null_argument_gives_null() {
    use arrow::array::{Int64Array, TimestampSecondArray};
    let schema = Arc::new(Schema::new(vec![
        Field::new("ts", DataType::Timestamp(TimeUnit::Second, None), true),
        Field::new("n", DataType::Int64, true),
        Field::new("ts2", DataType::Timestamp(TimeUnit::Second, None), true),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(TimestampSecondArray::from(vec![Some(i64::MIN), Some(0)])),
            Arc::new(Int64Array::from(vec![None, Some(1_000_000_000)])),
            Arc::new(TimestampSecondArray::from(vec![None, Some(60)])),
        ],
    )
    .unwrap();
    check(
        &batch,
        "add_nanoseconds(ts, n)",
        &["NULL", "1970-01-01T00:00:01"],
    );
    check(
        &batch,
        "add_months(ts, n - 999999999)",
        &["NULL", "1970-02-01T00:00:00"],
    );
    check(&batch, "date_diff('minute', ts, ts2)", &["NULL", "1"]);
    check_error(
        &batch.slice(0, 1),
        "add_nanoseconds(ts, 1)",
        "timestamp out of range at row 0",
    );
}
