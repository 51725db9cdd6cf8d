//! Casts to and from VARCHAR: PostgreSQL's text forms, hand-written; every type to
//! text and back; invalid strings as errors naming the value and the row; column
//! and literal casts accepting the same strings. Each expression runs in the JIT
//! (which must compile it) and in the interpreter, and they must agree.

mod common;

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float32Array, Float64Array, Int16Array, Int32Array,
    Int64Array, Int8Array, RecordBatch, StringArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, TimestampSecondArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use broadhead::bind::bind;
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::sql::parse_expr;
use broadhead::types::sql_type_name;
use broadhead::{Filter, Projector, ScalarValue};
use common::same_array;

/// A batch of one column `c`.
fn one_column(array: ArrayRef) -> RecordBatch {
    let schema = Schema::new(vec![Field::new("c", array.data_type().clone(), true)]);
    RecordBatch::try_new(Arc::new(schema), vec![array]).unwrap()
}

/// `text` over `batch` in the JIT (which must compile it) and the interpreter,
/// which must agree; the result or the error message.
fn eval(text: &str, batch: &RecordBatch) -> Result<ArrayRef, String> {
    let schema = batch.schema();
    let projector = Projector::new(&schema, &[text]).unwrap_or_else(|e| panic!("{text}: {e}"));
    assert!(projector.is_jit(0), "{text} is interpreted");
    let typed = optimize(bind(&parse_expr(text).unwrap(), &schema).unwrap());
    let jit = projector.evaluate(batch).map(|mut v| v.remove(0));
    let reference = interpret(&typed, batch);
    match (jit, reference) {
        (Ok(a), Ok(b)) => {
            assert!(same_array(&a, &b), "{text}: JIT {a:?}, interpreter {b:?}");
            Ok(a)
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{text}");
            Err(a.to_string())
        }
        (a, b) => panic!("{text}: JIT {a:?}, interpreter {b:?}"),
    }
}

fn strings(a: &ArrayRef) -> Vec<Option<String>> {
    let a = a.as_any().downcast_ref::<StringArray>().expect("VARCHAR");
    a.iter().map(|v| v.map(str::to_string)).collect()
}

/// `CAST(c AS VARCHAR)` of `array`, which must print as `expected` (NULL as None).
fn check_text(array: ArrayRef, expected: &[Option<&str>]) {
    let batch = one_column(array);
    let out = eval("CAST(c AS VARCHAR)", &batch).unwrap();
    let expected: Vec<Option<String>> = expected.iter().map(|v| v.map(str::to_string)).collect();
    assert_eq!(strings(&out), expected, "{:?}", batch.column(0));
}

#[test]
fn every_type_prints_as_postgresql_prints_it() {
    check_text(
        Arc::new(Int64Array::from(vec![
            Some(0),
            Some(-42),
            None,
            Some(i64::MIN),
        ])),
        &[Some("0"), Some("-42"), None, Some("-9223372036854775808")],
    );
    check_text(
        Arc::new(Int8Array::from(vec![Some(-128), Some(127)])),
        &[Some("-128"), Some("127")],
    );
    check_text(
        Arc::new(Int16Array::from(vec![Some(-32768)])),
        &[Some("-32768")],
    );
    check_text(Arc::new(Int32Array::from(vec![Some(7)])), &[Some("7")]);
    check_text(Arc::new(UInt8Array::from(vec![Some(255)])), &[Some("255")]);
    check_text(
        Arc::new(UInt16Array::from(vec![Some(65535)])),
        &[Some("65535")],
    );
    check_text(
        Arc::new(UInt32Array::from(vec![Some(u32::MAX)])),
        &[Some("4294967295")],
    );
    check_text(
        Arc::new(UInt64Array::from(vec![Some(u64::MAX)])),
        &[Some("18446744073709551615")],
    );
    check_text(
        Arc::new(Float64Array::from(vec![
            Some(1.5),
            Some(0.1),
            Some(100.0),
            Some(1e20),
            Some(1e-5),
            Some(-0.0),
            None,
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            Some(1.0 / 3.0),
        ])),
        &[
            Some("1.5"),
            Some("0.1"),
            Some("100"),
            Some("1e+20"),
            Some("1e-05"),
            Some("-0"),
            None,
            Some("NaN"),
            Some("Infinity"),
            Some("-Infinity"),
            Some("0.3333333333333333"),
        ],
    );
    check_text(
        Arc::new(Float32Array::from(vec![
            Some(1.5f32),
            Some(0.1),
            Some(1e6),
            Some(f32::NAN),
            Some(1.0 / 3.0),
        ])),
        &[
            Some("1.5"),
            Some("0.1"),
            Some("1e+06"),
            Some("NaN"),
            Some("0.33333334"),
        ],
    );
    check_text(
        Arc::new(BooleanArray::from(vec![Some(true), None, Some(false)])),
        &[Some("true"), None, Some("false")],
    );
    check_text(
        Arc::new(Date32Array::from(vec![
            Some(8766),
            Some(-1),
            Some(-735_160),
            Some(2_932_897),
            None,
        ])),
        &[
            Some("1994-01-01"),
            Some("1969-12-31"),
            Some("0044-03-15 BC"),
            Some("10000-01-01"),
            None,
        ],
    );
    let noon_us = 757_425_600_000_000i64;
    check_text(
        Arc::new(TimestampMicrosecondArray::from(vec![
            Some(noon_us),
            Some(noon_us + 500_000),
            Some(noon_us + 1),
            Some(-1),
            None,
        ])),
        &[
            Some("1994-01-01 12:00:00"),
            Some("1994-01-01 12:00:00.5"),
            Some("1994-01-01 12:00:00.000001"),
            Some("1969-12-31 23:59:59.999999"),
            None,
        ],
    );
    check_text(
        Arc::new(TimestampSecondArray::from(vec![Some(noon_us / 1_000_000)])),
        &[Some("1994-01-01 12:00:00")],
    );
    check_text(
        Arc::new(TimestampMillisecondArray::from(vec![Some(
            noon_us / 1000 + 250,
        )])),
        &[Some("1994-01-01 12:00:00.25")],
    );
    check_text(
        Arc::new(TimestampNanosecondArray::from(vec![Some(
            noon_us * 1000 + 1,
        )])),
        &[Some("1994-01-01 12:00:00.000000001")],
    );
    // WITH TIME ZONE: in the column's zone, with its offset.
    for (zone, text) in [
        ("UTC", "1994-01-01 12:00:00+00"),
        ("+00:00", "1994-01-01 12:00:00+00"),
        ("+05:30", "1994-01-01 17:30:00+05:30"),
        ("-03:00", "1994-01-01 09:00:00-03"),
        ("Europe/Paris", "1994-01-01 13:00:00+01"),
    ] {
        check_text(
            Arc::new(TimestampMicrosecondArray::from(vec![noon_us]).with_timezone(zone)),
            &[Some(text)],
        );
    }
    // Summer time in a named zone.
    check_text(
        Arc::new(
            TimestampMicrosecondArray::from(vec![noon_us + 181 * 86_400_000_000])
                .with_timezone("Europe/Paris"),
        ),
        &[Some("1994-07-01 14:00:00+02")],
    );
}

/// Every type, cast to VARCHAR and back, gives the value back (NaN, -0 and the
/// extremes included).
#[test]
fn every_type_goes_to_text_and_back() {
    let noon_us = 757_425_600_000_000i64;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int8Array::from(vec![
            Some(i8::MIN),
            None,
            Some(i8::MAX),
            Some(0),
        ])),
        Arc::new(Int16Array::from(vec![Some(i16::MIN), Some(i16::MAX)])),
        Arc::new(Int32Array::from(vec![Some(i32::MIN), Some(-1), None])),
        Arc::new(Int64Array::from(vec![Some(i64::MIN), Some(i64::MAX)])),
        Arc::new(UInt8Array::from(vec![Some(0), Some(u8::MAX)])),
        Arc::new(UInt16Array::from(vec![Some(u16::MAX)])),
        Arc::new(UInt32Array::from(vec![Some(u32::MAX)])),
        Arc::new(UInt64Array::from(vec![Some(u64::MAX), None])),
        Arc::new(Float64Array::from(vec![
            Some(0.1),
            Some(-0.0),
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            Some(f64::MAX),
            Some(f64::MIN_POSITIVE),
            Some(5e-324),
            Some(1.0 / 3.0),
            Some(123456789012345680.0),
            None,
        ])),
        Arc::new(Float32Array::from(vec![
            Some(0.1f32),
            Some(-0.0),
            Some(f32::NAN),
            Some(f32::MAX),
            Some(f32::MIN_POSITIVE),
            Some(1.0 / 3.0),
            Some(f32::NEG_INFINITY),
        ])),
        Arc::new(BooleanArray::from(vec![Some(true), Some(false), None])),
        Arc::new(Date32Array::from(vec![
            Some(0),
            Some(-735_160),
            Some(-719_528),
            Some(2_932_897),
            None,
        ])),
        Arc::new(TimestampSecondArray::from(vec![
            Some(-62_167_219_200),
            Some(0),
        ])),
        Arc::new(TimestampMillisecondArray::from(vec![Some(
            noon_us / 1000 + 1,
        )])),
        Arc::new(TimestampMicrosecondArray::from(vec![
            Some(noon_us + 123_456),
            Some(-1),
            None,
        ])),
        Arc::new(TimestampNanosecondArray::from(vec![
            Some(i64::MAX),
            Some(i64::MIN),
        ])),
        Arc::new(
            TimestampMicrosecondArray::from(vec![Some(noon_us), Some(-1)]).with_timezone("+05:30"),
        ),
        Arc::new(
            TimestampMicrosecondArray::from(vec![
                Some(noon_us),
                Some(noon_us + 181 * 86_400_000_000),
            ])
            .with_timezone("Europe/Paris"),
        ),
    ];
    for array in columns {
        let t = sql_type_name(array.data_type());
        let batch = one_column(array.clone());
        let back = eval(&format!("CAST(CAST(c AS VARCHAR) AS {t})"), &batch)
            .unwrap_or_else(|e| panic!("{t}: {e}"));
        // The time zone of the column is kept by the type, not by SQL's spelling.
        let back = match (back.data_type(), array.data_type()) {
            (DataType::Timestamp(_, _), DataType::Timestamp(TimeUnit::Microsecond, Some(z))) => {
                let p = back
                    .as_any()
                    .downcast_ref::<TimestampMicrosecondArray>()
                    .unwrap();
                Arc::new(p.clone().with_timezone(z.clone())) as ArrayRef
            }
            _ => back,
        };
        assert!(
            same_array(&back, &array),
            "{t}: {array:?} came back as {back:?}"
        );
    }
}

/// `CAST(s AS t)` of each string, as PostgreSQL reads it.
fn parsed(to: &str, values: &[Option<&str>]) -> ArrayRef {
    let batch = one_column(Arc::new(StringArray::from(values.to_vec())));
    eval(&format!("CAST(c AS {to})"), &batch).unwrap_or_else(|e| panic!("{to}: {e}"))
}

#[test]
fn strings_are_read_as_postgresql_reads_them() {
    let ints = parsed("INTEGER", &[Some("42"), Some("  -7 "), None, Some("+3")]);
    assert_eq!(
        ints.as_any().downcast_ref::<Int32Array>().unwrap(),
        &Int32Array::from(vec![Some(42), Some(-7), None, Some(3)])
    );
    let bools = parsed(
        "BOOLEAN",
        &[
            Some("t"),
            Some("TRUE"),
            Some(" yes "),
            Some("on"),
            Some("1"),
            Some("f"),
            Some("False"),
            Some("no"),
            Some("off"),
            Some("0"),
            None,
        ],
    );
    let mut expected = vec![Some(true); 5];
    expected.extend([Some(false); 5]);
    expected.push(None);
    assert_eq!(
        bools.as_any().downcast_ref::<BooleanArray>().unwrap(),
        &BooleanArray::from(expected)
    );
    let floats = parsed(
        "DOUBLE",
        &[
            Some("1.5"),
            Some(" NaN "),
            Some("Infinity"),
            Some("-infinity"),
            Some("1e3"),
            Some("-0"),
        ],
    );
    let floats = floats.as_any().downcast_ref::<Float64Array>().unwrap();
    let v: Vec<f64> = floats.values().to_vec();
    assert_eq!(v[0], 1.5);
    assert!(v[1].is_nan());
    assert_eq!(&v[2..5], &[f64::INFINITY, f64::NEG_INFINITY, 1000.0]);
    assert!(v[5] == 0.0 && v[5].is_sign_negative());
    let reals = parsed("REAL", &[Some("0.1"), Some("-Infinity")]);
    assert_eq!(
        reals.as_any().downcast_ref::<Float32Array>().unwrap(),
        &Float32Array::from(vec![0.1f32, f32::NEG_INFINITY])
    );
    let dates = parsed(
        "DATE",
        &[
            Some("1994-01-01"),
            Some(" 0044-03-15 BC "),
            Some("10000-01-01"),
        ],
    );
    assert_eq!(
        dates.as_any().downcast_ref::<Date32Array>().unwrap(),
        &Date32Array::from(vec![8766, -735_160, 2_932_897])
    );
    let noon_us = 757_425_600_000_000i64;
    let ts = parsed(
        "TIMESTAMP",
        &[
            Some("1994-01-01 12:00:00"),
            Some("1994-01-01T12:00:00.5"),
            Some("1994-01-01"),
            Some("1994-01-01 12:00"),
        ],
    );
    assert_eq!(
        ts.as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap(),
        &TimestampMicrosecondArray::from(vec![
            noon_us,
            noon_us + 500_000,
            noon_us - 12 * 3_600_000_000,
            noon_us
        ])
    );
    // WITH TIME ZONE: an offset is applied; none means UTC.
    let tz = parsed(
        "TIMESTAMP WITH TIME ZONE",
        &[
            Some("1994-01-01 14:00:00+02"),
            Some("1994-01-01 12:00:00"),
            Some("1994-01-01 06:30:00-05:30"),
        ],
    );
    let tz = tz
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .unwrap();
    assert_eq!(tz.values().to_vec(), vec![noon_us; 3]);
    assert_eq!(tz.timezone(), Some("+00:00"));
    let unsigned = parsed("UBIGINT", &[Some("18446744073709551615")]);
    assert_eq!(
        unsigned.as_any().downcast_ref::<UInt64Array>().unwrap(),
        &UInt64Array::from(vec![u64::MAX])
    );
}

/// The error of `CAST(c AS to)` over the strings.
fn cast_error(to: &str, values: &[Option<&str>]) -> String {
    let batch = one_column(Arc::new(StringArray::from(values.to_vec())));
    eval(&format!("CAST(c AS {to})"), &batch).expect_err(to)
}

#[test]
fn invalid_strings_are_errors_naming_the_value_and_the_row() {
    assert_eq!(
        cast_error("INTEGER", &[Some("1"), Some(" 2 "), None, Some("abc")]),
        "invalid input syntax for type integer: \"abc\" at row 3"
    );
    assert_eq!(
        cast_error("SMALLINT", &[Some("99999")]),
        "value \"99999\" is out of range for type smallint at row 0"
    );
    assert_eq!(
        cast_error("TINYINT", &[Some("1"), Some("128")]),
        "value \"128\" is out of range for type tinyint at row 1"
    );
    assert_eq!(
        cast_error("UINTEGER", &[Some("-1")]),
        "invalid input syntax for type uinteger: \"-1\" at row 0"
    );
    assert_eq!(
        cast_error("INTEGER", &[Some("2.5")]),
        "invalid input syntax for type integer: \"2.5\" at row 0"
    );
    assert_eq!(
        cast_error("DOUBLE", &[Some("1,5")]),
        "invalid input syntax for type double precision: \"1,5\" at row 0"
    );
    assert_eq!(
        cast_error("DOUBLE", &[Some("1e400")]),
        "\"1e400\" is out of range for type double precision at row 0"
    );
    assert_eq!(
        cast_error("REAL", &[Some(""), Some("x")]),
        "invalid input syntax for type real: \"\" at row 0"
    );
    assert_eq!(
        cast_error("BOOLEAN", &[Some("maybe")]),
        "invalid input syntax for type boolean: \"maybe\" at row 0"
    );
    assert_eq!(
        cast_error("DATE", &[Some("1994-13-45")]),
        "invalid input syntax for type date: \"1994-13-45\" at row 0"
    );
    assert_eq!(
        cast_error("TIMESTAMP", &[None, Some("1994-01-01 25:00:00")]),
        "invalid input syntax for type timestamp: \"1994-01-01 25:00:00\" at row 1"
    );
    assert_eq!(
        cast_error("TIMESTAMP WITH TIME ZONE", &[Some("noon")]),
        "invalid input syntax for type timestamp with time zone: \"noon\" at row 0"
    );
    assert_eq!(
        cast_error("TIMESTAMP(0)", &[Some("1994-01-01 12:00:00.5")]),
        "invalid input syntax for type timestamp(0): \"1994-01-01 12:00:00.5\" \
         (more fractional digits than the type holds) at row 0"
    );
}

/// Only rows whose value is used raise the error, as for every other error.
#[test]
fn a_bad_string_fails_only_where_its_value_is_used() {
    let schema: SchemaRef = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, true)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(StringArray::from(vec![Some("5"), Some("x"), Some("12")])) as ArrayRef],
    )
    .unwrap();
    let out = eval("CASE WHEN s <> 'x' THEN CAST(s AS INTEGER) END", &batch).unwrap();
    assert_eq!(
        out.as_any().downcast_ref::<Int32Array>().unwrap(),
        &Int32Array::from(vec![Some(5), None, Some(12)])
    );
    let f = Filter::new(&schema, "s <> 'x' AND CAST(s AS INTEGER) > 6").unwrap();
    assert!(f.is_jit());
    assert_eq!(f.evaluate(&batch).unwrap().len(), 1);
    let f = Filter::new(&schema, "CAST(s AS INTEGER) > 6").unwrap();
    assert_eq!(
        f.evaluate(&batch).unwrap_err().to_string(),
        "invalid input syntax for type integer: \"x\" at row 1"
    );
}

/// A column cast and a literal cast read the same strings the same way.
#[test]
fn column_and_literal_casts_accept_the_same_strings() {
    let texts = [
        "42",
        " 42 ",
        "-0",
        "2.5",
        "1e3",
        "NaN",
        "inf",
        "yes",
        "t",
        "1994-01-01",
        "0044-03-15 BC",
        "1994-01-01 12:00:00.25",
        "1994-01-01 14:00:00+02",
        "300",
        "abc",
        "",
    ];
    let types = [
        "TINYINT",
        "INTEGER",
        "UBIGINT",
        "REAL",
        "DOUBLE",
        "BOOLEAN",
        "DATE",
        "TIMESTAMP",
        "TIMESTAMP(3)",
        "TIMESTAMP WITH TIME ZONE",
    ];
    let schema = Schema::new(vec![Field::new("c", DataType::Utf8, true)]);
    for to in types {
        for text in texts {
            let batch = one_column(Arc::new(StringArray::from(vec![text])));
            let column = eval(&format!("CAST(c AS {to})"), &batch);
            let literal = format!("CAST('{text}' AS {to})");
            let bound = bind(&parse_expr(&literal).unwrap(), &schema);
            match (column, bound) {
                (Ok(a), Ok(b)) => {
                    let b = b.as_literal().cloned().expect("a folded literal");
                    let a = ScalarValue::from_array(a.as_ref(), 0).unwrap();
                    assert_eq!(a, b, "{literal}");
                }
                (Err(_), Err(_)) => {}
                (a, b) => panic!("{literal}: column {a:?}, literal {b:?}"),
            }
        }
    }
}

fn ints<T: arrow::datatypes::ArrowPrimitiveType>(a: &ArrayRef) -> Vec<Option<T::Native>> {
    use arrow::array::AsArray;
    a.as_primitive::<T>().iter().collect()
}

/// `TRY_CAST` of a bad string is NULL, in both back ends, and never an error.
#[test]
fn try_cast_makes_bad_strings_null() {
    use arrow::datatypes::Int32Type;
    let batch = one_column(Arc::new(StringArray::from(vec![
        Some("1"),
        Some("abc"),
        None,
        Some(" 7 "),
        Some("99999999999"),
        Some(""),
    ])));
    let out = eval("TRY_CAST(c AS INTEGER)", &batch).unwrap();
    assert_eq!(
        ints::<Int32Type>(&out),
        vec![Some(1), None, None, Some(7), None, None]
    );
    // Every type, on strings that are mostly not values of it.
    let words: Vec<Option<&str>> = vec![
        Some(""),
        Some("x"),
        Some("1994-01-01"),
        Some("12"),
        Some("-3.5"),
        Some("NaN"),
        Some("t"),
        Some("1994-01-01 12:00:00+02"),
        Some("日本語"),
        None,
    ];
    let batch = one_column(Arc::new(StringArray::from(words.clone())));
    // Every type the registry lists a cast from VARCHAR to, and a zoned timestamp.
    let types = broadhead::functions::lookup("cast")
        .filter(|s| s.args == [DataType::Utf8])
        .map(|s| sql_type_name(&s.ret))
        .chain(["TIMESTAMP WITH TIME ZONE".to_string()]);
    for to in types {
        let tried = eval(&format!("TRY_CAST(c AS {to})"), &batch)
            .unwrap_or_else(|e| panic!("TRY_CAST(c AS {to}): {e}"));
        // Where CAST succeeds on a row, TRY_CAST gives the same value.
        for (row, w) in words.iter().enumerate() {
            let one = one_column(Arc::new(StringArray::from(vec![*w])));
            match eval(&format!("CAST(c AS {to})"), &one) {
                Ok(v) => assert!(
                    same_array(&v, &tried.slice(row, 1)),
                    "{to} {w:?}: {v:?} vs {:?}",
                    tried.slice(row, 1)
                ),
                Err(_) => assert!(tried.is_null(row), "{to} {w:?}"),
            }
        }
    }
    let tz = one_column(Arc::new(
        TimestampMicrosecondArray::from(vec![0]).with_timezone("+01:00"),
    ));
    let out = eval("TRY_CAST(c AS VARCHAR)", &tz).unwrap();
    assert_eq!(
        strings(&out),
        vec![Some("1970-01-01 01:00:00+01".to_string())]
    );
}

/// `TRY_CAST` between other types is NULL where `CAST` fails: out-of-range
/// integers, NaN and out-of-range floats (rounded half to even first), timestamps
/// that overflow when made finer or turned into dates.
#[test]
fn try_cast_makes_failed_conversions_null() {
    use arrow::datatypes::{
        Date32Type, Int64Type, Int8Type, TimestampNanosecondType, UInt32Type, UInt8Type,
    };
    let batch = one_column(Arc::new(Int64Array::from(vec![
        Some(127),
        Some(128),
        Some(-128),
        Some(-129),
        None,
        Some(i64::MAX),
        Some(-1),
    ])));
    let out = eval("TRY_CAST(c AS TINYINT)", &batch).unwrap();
    assert_eq!(
        ints::<Int8Type>(&out),
        vec![Some(127), None, Some(-128), None, None, None, Some(-1)]
    );
    let out = eval("TRY_CAST(c AS UINTEGER)", &batch).unwrap();
    assert_eq!(
        ints::<UInt32Type>(&out),
        vec![Some(127), Some(128), None, None, None, None, None]
    );
    let batch = one_column(Arc::new(UInt64Array::from(vec![u64::MAX, 5])));
    let out = eval("TRY_CAST(c AS BIGINT)", &batch).unwrap();
    assert_eq!(ints::<Int64Type>(&out), vec![None, Some(5)]);
    let floats = one_column(Arc::new(Float64Array::from(vec![
        Some(127.5),
        Some(127.49),
        Some(-128.5),
        Some(-128.51),
        Some(f64::NAN),
        Some(f64::INFINITY),
        Some(f64::NEG_INFINITY),
        Some(2.5),
        None,
    ])));
    let out = eval("TRY_CAST(c AS TINYINT)", &floats).unwrap();
    assert_eq!(
        ints::<Int8Type>(&out),
        vec![
            None,
            Some(127),
            Some(-128),
            None,
            None,
            None,
            None,
            Some(2),
            None
        ]
    );
    let out = eval("TRY_CAST(c AS UTINYINT)", &floats).unwrap();
    assert_eq!(
        ints::<UInt8Type>(&out),
        vec![
            Some(128),
            Some(127),
            None,
            None,
            None,
            None,
            None,
            Some(2),
            None
        ]
    );
    let big = one_column(Arc::new(Float64Array::from(vec![
        9.223372036854776e18,
        -9.223372036854776e18,
        1e300,
    ])));
    let out = eval("TRY_CAST(c AS BIGINT)", &big).unwrap();
    assert_eq!(ints::<Int64Type>(&out), vec![None, Some(i64::MIN), None]);
    let reals = one_column(Arc::new(Float32Array::from(vec![
        2.1474836e9f32,
        -2.1474836e9,
    ])));
    let out = eval("TRY_CAST(c AS INTEGER)", &reals).unwrap();
    assert_eq!(
        ints::<arrow::datatypes::Int32Type>(&out),
        vec![None, Some(i32::MIN)]
    );
    // 300,000 years do not fit nanoseconds; seconds that far do not fit a DATE.
    let days = one_column(Arc::new(Date32Array::from(vec![
        Some(0),
        Some(100_000_000),
        Some(-106_752),
        Some(-106_751),
    ])));
    let out = eval("TRY_CAST(c AS TIMESTAMP(9))", &days).unwrap();
    assert_eq!(
        ints::<TimestampNanosecondType>(&out),
        vec![Some(0), None, None, Some(-106_751 * 86_400_000_000_000)]
    );
    let seconds = one_column(Arc::new(TimestampSecondArray::from(vec![
        Some(i64::MAX),
        Some(86_400),
        Some(i64::MIN),
    ])));
    let out = eval("TRY_CAST(c AS TIMESTAMP(9))", &seconds).unwrap();
    assert_eq!(
        ints::<TimestampNanosecondType>(&out),
        vec![None, Some(86_400_000_000_000), None]
    );
    let out = eval("TRY_CAST(c AS DATE)", &seconds).unwrap();
    assert_eq!(ints::<Date32Type>(&out), vec![None, Some(1), None]);
    // Conversions that cannot fail are the cast itself.
    let out = eval("TRY_CAST(c AS DOUBLE)", &batch).unwrap();
    assert_eq!(out.len(), 2);
}

/// The errors of the operand itself are still raised.
#[test]
fn try_cast_keeps_the_errors_of_its_operand() {
    let batch = one_column(Arc::new(Int64Array::from(vec![Some(1), Some(0)])));
    assert_eq!(
        eval("TRY_CAST(10 / c AS VARCHAR)", &batch).unwrap_err(),
        "division by zero at row 1"
    );
    assert_eq!(
        eval("TRY_CAST(10 / c AS TINYINT)", &batch).unwrap_err(),
        "division by zero at row 1"
    );
    let out = eval("TRY_CAST(CAST(c AS VARCHAR) || 'x' AS BIGINT)", &batch).unwrap();
    assert_eq!(out.null_count(), 2);
}
