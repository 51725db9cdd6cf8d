//! Math, conditional and hash functions against hand-computed values: NULL, NaN,
//! ±infinity, -0.0, integer extremes and error rows, each through the JIT (which
//! must compile the expression) and the interpreter, which must agree.

mod common;

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float64Array, Int16Array, Int32Array, Int64Array,
    RecordBatch, StringArray, TimestampMillisecondArray, UInt8Array,
};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::util::display::array_value_to_string;
use broadhead::bind::bind;
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::sql::parse_expr;
use broadhead::Projector;
use common::same_array;

/// `text` over the columns (`x`, `y`, … as named), through both back ends: the
/// values as arrow prints them ("NULL" for NULL), or the error message.
fn eval(columns: &[(&str, ArrayRef)], text: &str) -> Result<Vec<String>, String> {
    let schema = Arc::new(schema_of(columns));
    let batch = RecordBatch::try_new(
        schema.clone(),
        columns.iter().map(|(_, a)| a.clone()).collect(),
    )
    .unwrap();
    let projector = Projector::new(&schema, &[text]).map_err(|e| e.to_string())?;
    assert!(projector.is_jit(0), "{text} is interpreted");
    let typed = optimize(bind(&parse_expr(text).unwrap(), &schema).unwrap());
    let jit = projector.evaluate(&batch).map(|mut v| v.remove(0));
    let reference = interpret(&typed, &batch);
    match (jit, reference) {
        (Ok(a), Ok(b)) => {
            assert!(same_array(a.as_ref(), b.as_ref()), "{text}:\n{a:?}\n{b:?}");
            Ok((0..a.len())
                .map(|i| {
                    if a.is_null(i) {
                        "NULL".to_string()
                    } else {
                        array_value_to_string(&a, i).unwrap()
                    }
                })
                .collect())
        }
        (Err(a), Err(b)) => {
            assert_eq!(a.to_string(), b.to_string(), "{text}");
            Err(a.to_string())
        }
        (a, b) => panic!("{text}: JIT {a:?}, interpreter {b:?}"),
    }
}

/// The result type of `text` over `columns`.
fn result_type(columns: &[(&str, ArrayRef)], text: &str) -> DataType {
    bind(&parse_expr(text).unwrap(), &schema_of(columns))
        .unwrap()
        .data_type
}

fn schema_of(columns: &[(&str, ArrayRef)]) -> Schema {
    Schema::new(
        columns
            .iter()
            .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
            .collect::<Vec<_>>(),
    )
}

fn doubles(v: &[Option<f64>]) -> ArrayRef {
    Arc::new(Float64Array::from(v.to_vec()))
}

fn x(v: &[Option<f64>]) -> Vec<(&'static str, ArrayRef)> {
    vec![("x", doubles(v))]
}

/// The values as strings ("NULL" for None).
fn strs(v: &[&str]) -> Result<Vec<String>, String> {
    Ok(v.iter().map(|s| s.to_string()).collect())
}

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

#[test]
fn rounding_and_truncation() {
    let c = x(&[
        Some(2.5),
        Some(-2.5),
        Some(0.5),
        Some(-0.4),
        Some(1.005),
        Some(NAN),
        Some(INF),
        Some(-INF),
        None,
        Some(-0.0),
        Some(15.0),
    ]);
    assert_eq!(
        eval(&c, "round(x)"),
        strs(&["3.0", "-3.0", "1.0", "-0.0", "1.0", "NaN", "inf", "-inf", "NULL", "-0.0", "15.0"])
    );
    assert_eq!(
        eval(&c, "round(x, 2)"),
        strs(&["2.5", "-2.5", "0.5", "-0.4", "1.01", "NaN", "inf", "-inf", "NULL", "-0.0", "15.0"])
    );
    assert_eq!(
        eval(&c, "round(x, -1)"),
        strs(&["0.0", "-0.0", "0.0", "-0.0", "0.0", "NaN", "inf", "-inf", "NULL", "-0.0", "20.0"])
    );
    assert_eq!(
        eval(&c, "floor(x)"),
        strs(&["2.0", "-3.0", "0.0", "-1.0", "1.0", "NaN", "inf", "-inf", "NULL", "-0.0", "15.0"])
    );
    assert_eq!(
        eval(&c, "ceiling(x)"),
        strs(&["3.0", "-2.0", "1.0", "-0.0", "2.0", "NaN", "inf", "-inf", "NULL", "-0.0", "15.0"])
    );
    assert_eq!(eval(&c, "ceil(x)"), eval(&c, "ceiling(x)"));
    assert_eq!(
        eval(&c, "trunc(x)"),
        strs(&["2.0", "-2.0", "0.0", "-0.0", "1.0", "NaN", "inf", "-inf", "NULL", "-0.0", "15.0"])
    );
    assert_eq!(
        eval(&c, "trunc(x, 2)"),
        strs(&["2.5", "-2.5", "0.5", "-0.4", "1.0", "NaN", "inf", "-inf", "NULL", "-0.0", "15.0"])
    );
    // The places argument may be a column, and NULL.
    let c = vec![
        (
            "x",
            doubles(&[Some(1234.5678), Some(1234.5678), Some(1.0), Some(f64::MAX)]),
        ),
        (
            "n",
            Arc::new(Int32Array::from(vec![Some(3), Some(-2), None, Some(-308)])) as ArrayRef,
        ),
    ];
    assert_eq!(
        eval(&c, "round(x, n)"),
        Err("value out of range: overflow at row 3".to_string())
    );
    assert_eq!(
        eval(&c, "CASE WHEN n > -300 THEN round(x, n) END"),
        strs(&["1234.568", "1200.0", "NULL", "NULL"])
    );
    assert_eq!(
        eval(&c, "trunc(x, n)"),
        strs(&["1234.567", "1200.0", "NULL", "1e308"])
    );
}

#[test]
fn roots_exponentials_and_logarithms() {
    let c = x(&[
        Some(4.0),
        Some(-0.0),
        Some(INF),
        Some(NAN),
        None,
        Some(-8.0),
    ]);
    assert_eq!(
        eval(&c, "sqrt(x)"),
        Err("cannot take square root of a negative number at row 5".to_string())
    );
    assert_eq!(
        eval(&c, "cbrt(x)"),
        strs(&["1.5874010519681996", "-0.0", "inf", "NaN", "NULL", "-2.0"])
    );
    assert_eq!(
        eval(&c, "exp(x)"),
        strs(&[
            "54.598150033144236",
            "1.0",
            "inf",
            "NaN",
            "NULL",
            "0.00033546262790251185"
        ])
    );
    let big = x(&[Some(1.0), Some(1000.0)]);
    assert_eq!(
        eval(&big, "exp(x)"),
        Err("value out of range: overflow at row 1".to_string())
    );
    let small = x(&[Some(-1000.0)]);
    assert_eq!(
        eval(&small, "exp(x)"),
        Err("value out of range: underflow at row 0".to_string())
    );
    assert_eq!(eval(&x(&[Some(-INF)]), "exp(x)"), strs(&["0.0"]));

    let c = x(&[
        Some(1000.0),
        Some(1.0),
        Some(INF),
        Some(NAN),
        None,
        Some(0.001),
    ]);
    assert_eq!(
        eval(&c, "log10(x)"),
        strs(&["3.0", "0.0", "inf", "NaN", "NULL", "-3.0"])
    );
    assert_eq!(eval(&c, "log(x)"), eval(&c, "log10(x)"));
    assert_eq!(
        eval(&c, "ln(x)"),
        strs(&[
            "6.907755278982137",
            "0.0",
            "inf",
            "NaN",
            "NULL",
            "-6.907755278982137"
        ])
    );
    assert_eq!(
        eval(&c, "log2(x)"),
        strs(&[
            "9.965784284662087",
            "0.0",
            "inf",
            "NaN",
            "NULL",
            "-9.965784284662087"
        ])
    );
    assert_eq!(
        eval(&c, "log(10, x)"),
        strs(&["3.0", "0.0", "inf", "NaN", "NULL", "-3.0"])
    );
    for f in ["ln", "log10", "log2", "log"] {
        let zero = x(&[Some(1.0), Some(-0.0)]);
        assert_eq!(
            eval(&zero, &format!("{f}(x)")),
            Err("cannot take logarithm of zero at row 1".to_string()),
            "{f}"
        );
        let negative = x(&[Some(1.0), Some(2.0), Some(-INF)]);
        assert_eq!(
            eval(&negative, &format!("{f}(x)")),
            Err("cannot take logarithm of a negative number at row 2".to_string()),
            "{f}"
        );
        // Errors only where the value is used.
        assert_eq!(
            eval(&negative, &format!("CASE WHEN x > 0 THEN {f}(x) END")).map(|v| v[2].clone()),
            Ok("NULL".to_string())
        );
    }
    let bases = vec![
        (
            "b",
            doubles(&[Some(2.0), Some(1.0), Some(0.0), Some(-2.0), Some(3.0)]),
        ),
        (
            "x",
            doubles(&[Some(1024.0), Some(5.0), Some(5.0), Some(5.0), Some(81.0)]),
        ),
    ];
    assert_eq!(
        eval(&bases, "log(b, x)"),
        Err("division by zero at row 1".to_string())
    );
    assert_eq!(
        eval(&bases, "CASE WHEN b > 1 OR b < 0 THEN log(b, x) END"),
        Err("cannot take logarithm of a negative number at row 3".to_string())
    );
    assert_eq!(
        eval(&bases, "CASE WHEN b > 1 THEN log(b, x) END"),
        strs(&["10.0", "NULL", "NULL", "NULL", "4.0"])
    );
}

#[test]
fn powers_follow_postgresql() {
    let c = vec![
        (
            "x",
            doubles(&[
                Some(2.0),
                Some(-8.0),
                Some(0.0),
                Some(NAN),
                Some(1.0),
                Some(-INF),
                Some(-INF),
                Some(0.5),
                Some(-1.0),
                None,
            ]),
        ),
        (
            "y",
            doubles(&[
                Some(10.0),
                Some(3.0),
                Some(0.0),
                Some(0.0),
                Some(NAN),
                Some(3.0),
                Some(-2.0),
                Some(-INF),
                Some(INF),
                Some(1.0),
            ]),
        ),
    ];
    assert_eq!(
        eval(&c, "power(x, y)"),
        strs(&["1024.0", "-512.0", "1.0", "1.0", "1.0", "-inf", "0.0", "inf", "1.0", "NULL"])
    );
    assert_eq!(eval(&c, "pow(x, y)"), eval(&c, "power(x, y)"));
    let errors = [
        (0.0, -1.0, "zero raised to a negative power is undefined"),
        (
            -8.0,
            0.5,
            "a negative number raised to a non-integer power yields a complex result",
        ),
        (10.0, 400.0, "value out of range: overflow"),
        (10.0, -400.0, "value out of range: underflow"),
    ];
    for (a, b, message) in errors {
        let c = vec![
            ("x", doubles(&[Some(1.0), Some(a)])),
            ("y", doubles(&[Some(1.0), Some(b)])),
        ];
        assert_eq!(
            eval(&c, "power(x, y)"),
            Err(format!("{message} at row 1")),
            "{a} ^ {b}"
        );
    }
}

#[test]
fn trigonometry() {
    let c = x(&[Some(0.0), Some(-0.0), Some(NAN), None, Some(1.0)]);
    assert_eq!(
        eval(&c, "sin(x)"),
        strs(&["0.0", "-0.0", "NaN", "NULL", "0.8414709848078965"])
    );
    assert_eq!(
        eval(&c, "cos(x)"),
        strs(&["1.0", "1.0", "NaN", "NULL", "0.5403023058681398"])
    );
    assert_eq!(
        eval(&c, "tan(x)"),
        strs(&["0.0", "-0.0", "NaN", "NULL", "1.5574077246549023"])
    );
    assert_eq!(
        eval(&c, "cot(x)"),
        strs(&["inf", "-inf", "NaN", "NULL", "0.6420926159343306"])
    );
    assert_eq!(
        eval(&c, "asin(x)"),
        strs(&["0.0", "-0.0", "NaN", "NULL", "1.5707963267948966"])
    );
    assert_eq!(
        eval(&c, "acos(x)"),
        strs(&[
            "1.5707963267948966",
            "1.5707963267948966",
            "NaN",
            "NULL",
            "0.0"
        ])
    );
    let c = x(&[Some(INF), Some(-INF), Some(1.0)]);
    assert_eq!(
        eval(&c, "atan(x)"),
        strs(&[
            "1.5707963267948966",
            "-1.5707963267948966",
            "0.7853981633974483"
        ])
    );
    for f in ["sin", "cos", "tan", "cot", "asin", "acos"] {
        assert_eq!(
            eval(&c, &format!("{f}(x)")),
            Err("input is out of range at row 0".to_string()),
            "{f}"
        );
    }
    let c = x(&[Some(0.5), Some(1.0000000000000002)]);
    assert_eq!(
        eval(&c, "acos(x)"),
        Err("input is out of range at row 1".to_string())
    );
    let c = vec![
        (
            "y",
            doubles(&[Some(0.0), Some(-0.0), Some(1.0), Some(NAN), None]),
        ),
        (
            "x",
            doubles(&[Some(-1.0), Some(-1.0), Some(0.0), Some(1.0), Some(1.0)]),
        ),
    ];
    assert_eq!(
        eval(&c, "atan2(y, x)"),
        strs(&[
            "3.141592653589793",
            "-3.141592653589793",
            "1.5707963267948966",
            "NaN",
            "NULL"
        ])
    );
    let c = x(&[Some(180.0), Some(-90.0), Some(INF), None]);
    assert_eq!(
        eval(&c, "radians(x)"),
        strs(&["3.141592653589793", "-1.5707963267948966", "inf", "NULL"])
    );
    assert_eq!(
        eval(&c, "degrees(radians(x))"),
        strs(&["180.0", "-90.0", "inf", "NULL"])
    );
    assert_eq!(
        eval(&x(&[Some(1.0), Some(1e308)]), "degrees(x)"),
        Err("value out of range: overflow at row 1".to_string())
    );
    assert_eq!(
        eval(&x(&[Some(1.0), Some(5e-324)]), "radians(x)"),
        Err("value out of range: underflow at row 1".to_string())
    );
    assert_eq!(
        eval(&x(&[Some(1.0), None]), "pi() + x"),
        strs(&["4.141592653589793", "NULL"])
    );
    assert_eq!(eval(&x(&[Some(1.0)]), "degrees(pi())"), strs(&["180.0"]));
}

#[test]
fn sign_and_float_classes() {
    let c = x(&[
        Some(-2.5),
        Some(-0.0),
        Some(NAN),
        Some(INF),
        Some(-INF),
        None,
        Some(1e-300),
    ]);
    assert_eq!(
        eval(&c, "sign(x)"),
        strs(&["-1.0", "0.0", "0.0", "1.0", "-1.0", "NULL", "1.0"])
    );
    assert_eq!(
        eval(&c, "isnan(x)"),
        strs(&["false", "false", "true", "false", "false", "NULL", "false"])
    );
    assert_eq!(
        eval(&c, "isinf(x)"),
        strs(&["false", "false", "false", "true", "true", "NULL", "false"])
    );
    assert_eq!(
        eval(&c, "isfinite(x)"),
        strs(&["true", "true", "false", "false", "false", "NULL", "true"])
    );
    let i: Vec<(&str, ArrayRef)> = vec![(
        "i",
        Arc::new(Int32Array::from(vec![
            Some(i32::MIN),
            Some(0),
            Some(7),
            None,
        ])),
    )];
    assert_eq!(eval(&i, "sign(i)"), strs(&["-1", "0", "1", "NULL"]));
    assert_eq!(result_type(&i, "sign(i)"), DataType::Int32);
}

#[test]
fn mod_gcd_and_lcm_per_integer_type() {
    let c: Vec<(&str, ArrayRef)> = vec![
        (
            "a",
            Arc::new(Int32Array::from(vec![
                Some(-7),
                Some(i32::MIN),
                Some(12),
                Some(0),
                None,
                Some(i32::MIN),
            ])),
        ),
        (
            "b",
            Arc::new(Int32Array::from(vec![
                Some(3),
                Some(-1),
                Some(-18),
                Some(0),
                Some(1),
                Some(2),
            ])),
        ),
    ];
    assert_eq!(
        eval(&c, "mod(a, b)"),
        Err("division by zero at row 3".to_string())
    );
    assert_eq!(
        eval(&c, "CASE WHEN b <> 0 THEN mod(a, b) END"),
        strs(&["-1", "0", "12", "NULL", "NULL", "0"])
    );
    assert_eq!(
        eval(&c, "gcd(a, b)"),
        strs(&["1", "1", "6", "0", "NULL", "2"])
    );
    assert_eq!(result_type(&c, "gcd(a, b)"), DataType::Int32);
    assert_eq!(
        eval(&c, "lcm(a, b)"),
        Err("integer out of range at row 1".to_string())
    );
    assert_eq!(
        eval(&c, "CASE WHEN a > -100 THEN lcm(a, b) END"),
        strs(&["21", "NULL", "36", "0", "NULL", "NULL"])
    );
    assert_eq!(
        eval(&c, "gcd(a, 0)"),
        Err("integer out of range at row 1".to_string())
    );
    let big: Vec<(&str, ArrayRef)> = vec![(
        "a",
        Arc::new(Int64Array::from(vec![Some(i64::MAX), Some(i64::MIN)])),
    )];
    assert_eq!(
        eval(&big, "gcd(a, a)"),
        Err("bigint out of range at row 1".to_string())
    );
    assert_eq!(eval(&big, "gcd(a, 6)"), strs(&["1", "2"]));
    assert_eq!(
        eval(&big, "lcm(a, 2)"),
        Err("bigint out of range at row 0".to_string())
    );
    assert_eq!(
        eval(&big, "CASE WHEN a > 0 THEN lcm(a, 1) END"),
        strs(&["9223372036854775807", "NULL"])
    );
}

#[test]
fn bitwise_operators() {
    let c: Vec<(&str, ArrayRef)> = vec![
        (
            "a",
            Arc::new(Int64Array::from(vec![
                Some(12),
                Some(-16),
                Some(1),
                Some(1),
                None,
                Some(i64::MIN),
            ])),
        ),
        (
            "n",
            Arc::new(Int64Array::from(vec![
                Some(10),
                Some(2),
                Some(63),
                Some(64),
                Some(1),
                Some(-1),
            ])),
        ),
    ];
    assert_eq!(
        eval(&c, "bitwise_and(a, n)"),
        strs(&["8", "0", "1", "0", "NULL", "-9223372036854775808"])
    );
    assert_eq!(
        eval(&c, "bitwise_or(a, n)"),
        strs(&["14", "-14", "63", "65", "NULL", "-1"])
    );
    assert_eq!(
        eval(&c, "bitwise_xor(a, n)"),
        strs(&["6", "-14", "62", "65", "NULL", "9223372036854775807"])
    );
    assert_eq!(
        eval(&c, "bitwise_not(a)"),
        strs(&["-13", "15", "-2", "-2", "NULL", "9223372036854775807"])
    );
    // Counts modulo 64 for BIGINT: 1 << 64 is 1, x >> -1 is x >> 63.
    assert_eq!(
        eval(&c, "shift_left(a, n)"),
        strs(&["12288", "-64", "-9223372036854775808", "1", "NULL", "0"])
    );
    assert_eq!(
        eval(&c, "shift_right(a, n)"),
        strs(&["0", "-4", "0", "1", "NULL", "-1"])
    );
    // INTEGER: modulo 32; SMALLINT: computed in 32 bits, so 1 << 16 is 0.
    let i: Vec<(&str, ArrayRef)> = vec![
        ("a", Arc::new(Int32Array::from(vec![1, 1, -1, i32::MAX]))),
        ("n", Arc::new(Int32Array::from(vec![31, 32, 33, 1]))),
    ];
    assert_eq!(
        eval(&i, "shift_left(a, n)"),
        strs(&["-2147483648", "1", "-2", "-2"])
    );
    assert_eq!(result_type(&i, "shift_left(a, n)"), DataType::Int32);
    let s: Vec<(&str, ArrayRef)> = vec![
        ("a", Arc::new(Int16Array::from(vec![1, 1, -32768, 16384]))),
        ("n", Arc::new(Int16Array::from(vec![15, 16, 20, 1]))),
    ];
    assert_eq!(
        eval(&s, "shift_left(a, n)"),
        strs(&["-32768", "0", "0", "-32768"])
    );
    assert_eq!(
        eval(&s, "shift_right(a, n)"),
        strs(&["0", "0", "-1", "8192"])
    );
    assert_eq!(result_type(&s, "bitwise_and(a, n)"), DataType::Int16);
    assert_eq!(
        eval(&s, "bitwise_not(a)"),
        strs(&["-2", "-2", "32767", "-16385"])
    );
    // Literals meet the column's type.
    assert_eq!(eval(&i, "bitwise_and(a, 3)"), strs(&["1", "1", "3", "3"]));
}

#[test]
fn greatest_and_least_ignore_nulls() {
    let c = vec![
        (
            "x",
            doubles(&[Some(1.0), None, Some(NAN), Some(-0.0), Some(-INF), None]),
        ),
        (
            "y",
            doubles(&[Some(2.0), Some(5.0), Some(INF), Some(0.0), Some(-1.0), None]),
        ),
    ];
    assert_eq!(
        eval(&c, "greatest(x, y)"),
        strs(&["2.0", "5.0", "NaN", "-0.0", "-1.0", "NULL"])
    );
    assert_eq!(
        eval(&c, "least(x, y)"),
        strs(&["1.0", "5.0", "inf", "-0.0", "-inf", "NULL"])
    );
    assert_eq!(
        eval(&c, "greatest(x, y, 3)"),
        strs(&["3.0", "5.0", "NaN", "3.0", "3.0", "3.0"])
    );
    assert_eq!(
        eval(&c, "least(x, NULL)"),
        strs(&["1.0", "NULL", "NaN", "-0.0", "-inf", "NULL"])
    );
    let ints: Vec<(&str, ArrayRef)> = vec![
        (
            "i",
            Arc::new(Int32Array::from(vec![Some(i32::MIN), None, Some(3)])),
        ),
        (
            "b",
            Arc::new(Int64Array::from(vec![Some(i64::MAX), Some(7), None])),
        ),
    ];
    assert_eq!(
        eval(&ints, "greatest(i, b)"),
        strs(&["9223372036854775807", "7", "3"])
    );
    assert_eq!(eval(&ints, "least(i, b)"), strs(&["-2147483648", "7", "3"]));
    assert_eq!(result_type(&ints, "least(i, b)"), DataType::Int64);
    assert_eq!(result_type(&ints, "least(i, 2.5)"), DataType::Float64);
    // Strings compare by bytes: 'é' (C3 A9) after 'z'.
    let s: Vec<(&str, ArrayRef)> = vec![
        (
            "s",
            Arc::new(StringArray::from(vec![
                Some("z"),
                Some(""),
                None,
                Some("日本"),
            ])),
        ),
        (
            "t",
            Arc::new(StringArray::from(vec![
                Some("é"),
                Some("a"),
                None,
                Some("日"),
            ])),
        ),
    ];
    assert_eq!(
        eval(&s, "greatest(s, t)"),
        strs(&["é", "a", "NULL", "日本"])
    );
    assert_eq!(eval(&s, "least(s, t, 'b')"), strs(&["b", "", "b", "b"]));
    let d: Vec<(&str, ArrayRef)> = vec![
        ("d", Arc::new(Date32Array::from(vec![Some(0), None]))),
        (
            "e",
            Arc::new(Date32Array::from(vec![Some(-1), Some(19000)])),
        ),
    ];
    assert_eq!(eval(&d, "least(d, e)"), strs(&["1969-12-31", "2022-01-08"]));
    let ts = TimestampMillisecondArray::from(vec![Some(1_000), Some(-5)]).with_timezone("UTC");
    let t: Vec<(&str, ArrayRef)> = vec![
        ("t", Arc::new(ts)),
        (
            "u",
            Arc::new(TimestampMillisecondArray::from(vec![None, Some(5)]).with_timezone("UTC")),
        ),
    ];
    assert_eq!(
        eval(&t, "greatest(t, u)"),
        strs(&["1970-01-01T00:00:01Z", "1970-01-01T00:00:00.005Z"])
    );
    assert_eq!(
        result_type(&t, "greatest(t, u)"),
        DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
    );
    let b: Vec<(&str, ArrayRef)> = vec![
        (
            "p",
            Arc::new(BooleanArray::from(vec![Some(true), Some(false), None])),
        ),
        (
            "q",
            Arc::new(BooleanArray::from(vec![
                Some(false),
                Some(false),
                Some(true),
            ])),
        ),
    ];
    assert_eq!(eval(&b, "least(p, q)"), strs(&["false", "false", "true"]));
    assert_eq!(eval(&b, "greatest(p, q)"), strs(&["true", "false", "true"]));
}

#[test]
fn ifnull_nvl_nvl2_and_if() {
    let c = vec![
        ("x", doubles(&[Some(1.0), None, None])),
        ("y", doubles(&[Some(0.0), Some(10.0), None])),
    ];
    // ln(y) fails on row 0, where it is not used.
    assert_eq!(
        eval(&c, "ifnull(x, ln(y))"),
        strs(&["1.0", "2.302585092994046", "NULL"])
    );
    assert_eq!(eval(&c, "nvl(x, ln(y))"), eval(&c, "ifnull(x, ln(y))"));
    assert_eq!(eval(&c, "nvl(x, 7)"), strs(&["1.0", "7.0", "7.0"]));
    assert_eq!(
        eval(&c, "nvl2(x, 'set', 'unset')"),
        strs(&["set", "unset", "unset"])
    );
    assert_eq!(eval(&c, "nvl2(y, x, 5)"), strs(&["1.0", "NULL", "5.0"]));
    // 1 and 2.5 meet as DuckDB's CASE makes them meet: DECIMAL(11,1).
    assert_eq!(
        result_type(&c, "nvl2(x, 1, 2.5)"),
        DataType::Decimal128(11, 1)
    );
    assert_eq!(
        eval(&c, "if(y > 1, 'big', 'small')"),
        strs(&["small", "big", "small"])
    );
    for (text, message) in [
        ("nvl(x)", "nvl needs exactly two arguments"),
        ("ifnull(x, y, y)", "ifnull needs exactly two arguments"),
        ("nvl2(x, y)", "nvl2 needs exactly three arguments"),
        ("nvl2(x, y, 'a')", "invalid"),
    ] {
        let e = eval(&c, text).unwrap_err();
        assert!(e.contains(message), "{text}: {e}");
    }
}

#[test]
fn hashes() {
    let s: Vec<(&str, ArrayRef)> = vec![(
        "s",
        Arc::new(StringArray::from(vec![
            Some(""),
            Some("héllo"),
            None,
            Some("日本語"),
        ])),
    )];
    assert_eq!(
        eval(&s, "md5(s)"),
        strs(&[
            "d41d8cd98f00b204e9800998ecf8427e",
            "be50e8478cf24ff3595bc7307fb91b50",
            "NULL",
            "00110af8b4393ef3f72c50be5b332bec"
        ])
    );
    assert_eq!(
        eval(&s, "sha256(s)"),
        strs(&[
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "3c48591d8d098a4538f5e013dfcf406e948eac4d3277b10bf614e295d6068179",
            "NULL",
            "77710aedc74ecfa33685e33a6c7df5cc83004da1bdcef7fb280f5c2b2e97e0a5"
        ])
    );
    assert_eq!(
        eval(&s, "crc32(s)"),
        strs(&["0", "2654700086", "NULL", "2819314405"])
    );
    assert_eq!(
        eval(&s, "crc32('123456789')").map(|v| v[0].clone()),
        Ok("3421780262".into())
    );
    // XXH64 reference values (seed 0): "" and "abc".
    assert_eq!(
        eval(&s, "hash(s)").map(|v| v[0].clone()),
        Ok("17241709254077376921".into())
    );
    assert_eq!(
        eval(&s, "hash('abc')").map(|v| v[0].clone()),
        Ok(u64::from_str_radix("44bc2cf5ad770999", 16)
            .unwrap()
            .to_string())
    );
    assert_eq!(result_type(&s, "hash(s)"), DataType::UInt64);
    // Equal integers hash equally whatever their type; -0.0 as 0.0; NaN as NaN.
    let c: Vec<(&str, ArrayRef)> = vec![
        (
            "i",
            Arc::new(Int32Array::from(vec![Some(1), Some(-1), None])),
        ),
        (
            "b",
            Arc::new(Int64Array::from(vec![Some(1), Some(-1), Some(0)])),
        ),
        (
            "u",
            Arc::new(UInt8Array::from(vec![Some(1), Some(255), Some(0)])),
        ),
        ("x", doubles(&[Some(-0.0), Some(NAN), None])),
        ("y", doubles(&[Some(0.0), Some(-NAN), None])),
    ];
    assert_eq!(
        eval(&c, "hash(i) = hash(b)"),
        strs(&["true", "true", "NULL"])
    );
    assert_eq!(
        eval(&c, "hash(u) = hash(b)"),
        strs(&["true", "false", "true"])
    );
    assert_eq!(
        eval(&c, "hash(x) = hash(y)"),
        strs(&["true", "true", "NULL"])
    );
    assert_eq!(eval(&c, "hash(i)").map(|v| v[2].clone()), Ok("NULL".into()));
}

/// `x / d` and `x % d` by literals, which the kernel computes by multiplying
/// (`DivisionMagic`): against Rust's `/` and `%` (PostgreSQL's: truncating, the
/// remainder with the dividend's sign) for INTEGER and BIGINT extremes, small and
/// large, positive and negative divisors; 0 is an error and -1 overflows on MIN as
/// before.
#[test]
fn division_by_literals_per_integer_type() {
    let bigs: Vec<i64> = vec![
        i64::MIN,
        i64::MIN + 1,
        -1_000_000_007,
        -86_400_000_001,
        -7,
        -6,
        -1,
        0,
        1,
        6,
        7,
        13,
        1 << 40,
        9_007_199_254_740_993,
        i64::MAX - 1,
        i64::MAX,
    ];
    let ints: Vec<i32> = vec![
        i32::MIN,
        i32::MIN + 1,
        -100_003,
        -7,
        -1,
        0,
        1,
        7,
        65_536,
        i32::MAX,
    ];
    let divisors: [i64; 12] = [
        2,
        -2,
        3,
        7,
        -7,
        10,
        16,
        1_000,
        -1_000_003,
        86_400,
        2_147_483_647,
        -2_147_483_647,
    ];
    for d in divisors {
        for (op, f) in [
            ("/", i64::wrapping_div as fn(i64, i64) -> i64),
            ("%", i64::wrapping_rem),
        ] {
            let cols = [("x", Arc::new(Int64Array::from(bigs.clone())) as ArrayRef)];
            let expected: Vec<String> = bigs.iter().map(|&x| f(x, d).to_string()).collect();
            assert_eq!(
                eval(&cols, &format!("x {op} {d}")),
                Ok(expected),
                "BIGINT {op} {d}"
            );
            let cols = [("x", Arc::new(Int32Array::from(ints.clone())) as ArrayRef)];
            let literal = if i32::try_from(d).is_ok() {
                format!("CAST({d} AS INTEGER)")
            } else {
                continue;
            };
            let expected: Vec<String> = ints
                .iter()
                .map(|&x| f(i64::from(x), d).to_string())
                .collect();
            assert_eq!(
                eval(&cols, &format!("x {op} {literal}")),
                Ok(expected),
                "INTEGER {op} {d}"
            );
        }
    }
    let cols = [(
        "x",
        Arc::new(Int64Array::from(vec![i64::MIN, 5])) as ArrayRef,
    )];
    assert!(eval(&cols, "x / 0").is_err_and(|e| e.contains("division by zero")));
    assert!(eval(&cols, "x / -1").is_err_and(|e| e.contains("out of range")));
    assert_eq!(eval(&cols, "x % -1"), Ok(vec!["0".into(), "0".into()]));
}
