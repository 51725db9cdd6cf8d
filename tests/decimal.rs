//! DECIMAL(p, s): literal and result types, exact values, casts and errors, on both
//! back ends, against DuckDB's answers (checked with the duckdb Python package:
//! `SELECT typeof(x), x`), and issue 8's table of wrong answers.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, Decimal128Array, Float64Array, Int32Array, RecordBatch,
};
use arrow::datatypes::{Field, Schema};
use broadhead::bind::{bind, bind_predicate};
use broadhead::interpret::interpret;
use broadhead::sql::parse_expr;
use broadhead::{Filter, Projector};

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

fn decimals(values: &[Option<i128>], p: u8, s: i8) -> ArrayRef {
    Arc::new(
        Decimal128Array::from(values.to_vec())
            .with_precision_and_scale(p, s)
            .unwrap(),
    )
}

/// The selected rows, the same from the JIT (or its fallback) and the interpreter.
fn select(sql: &str, batch: &RecordBatch) -> Result<Vec<usize>, String> {
    let schema = batch.schema();
    let filter = Filter::new(&schema, sql).map_err(|e| e.to_string())?;
    let jit = filter
        .evaluate(batch)
        .map(|s| s.iter().collect::<Vec<_>>())
        .map_err(|e| e.to_string());
    let typed = bind_predicate(&parse_expr(sql).unwrap(), &schema).unwrap();
    let interpreted = interpret(&typed, batch)
        .map(|a| {
            let b = a.as_boolean();
            (0..b.len())
                .filter(|&i| b.is_valid(i) && b.value(i))
                .collect::<Vec<_>>()
        })
        .map_err(|e| e.to_string());
    assert_eq!(jit, interpreted, "JIT and interpreter disagree on {sql}");
    jit
}

/// One projected column as (SQL type, values as text), the same from both back ends.
fn project(sql: &str, batch: &RecordBatch) -> Result<(String, Vec<String>), String> {
    let schema = batch.schema();
    let projector = Projector::new(&schema, &[sql]).map_err(|e| e.to_string())?;
    let jit = projector
        .evaluate(batch)
        .map(|mut v| v.remove(0))
        .map_err(|e| e.to_string());
    let typed = bind(&parse_expr(sql).unwrap(), &schema).map_err(|e| e.to_string())?;
    let interpreted = interpret(&typed, batch).map_err(|e| e.to_string());
    match (&jit, &interpreted) {
        (Ok(j), Ok(i)) => assert_eq!(
            j.to_data(),
            i.to_data(),
            "JIT and interpreter disagree on {sql}"
        ),
        _ => assert_eq!(
            jit.as_ref().err(),
            interpreted.as_ref().err(),
            "JIT and interpreter disagree on {sql}"
        ),
    }
    let a = jit?;
    let text = (0..a.len())
        .map(
            |i| match broadhead::ScalarValue::from_array(a.as_ref(), i).unwrap() {
                broadhead::ScalarValue::Null(_) => "NULL".to_string(),
                v => v.decimal_text().unwrap_or_else(|| {
                    arrow::util::display::array_value_to_string(a.as_ref(), i).unwrap()
                }),
            },
        )
        .collect();
    Ok((broadhead::types::sql_type_name(a.data_type()), text))
}

/// One value of an expression of literals: (type, text).
fn value(sql: &str) -> (String, String) {
    let one = batch(vec![("x", Arc::new(Int32Array::from(vec![1])) as ArrayRef)]);
    let (t, mut v) = project(sql, &one).unwrap_or_else(|e| panic!("{sql}: {e}"));
    (t, v.remove(0))
}

fn issue_table() -> RecordBatch {
    // a + b = c exactly in every row; as doubles, 0.1 + 0.2 <> 0.3 and 0.7 + 0.1 <> 0.8.
    let a = [10, 70, 100, 25, 1, 12];
    let b = [20, 10, 200, 50, 2, 17];
    let c: Vec<i128> = a.iter().zip(b).map(|(x, y)| x + y).collect();
    let big = [
        9_007_199_254_740_993,
        9_007_199_254_740_992,
        12_345_678_901_234_567_890_123,
        1,
        -5,
        0,
    ];
    let f = [0.125, 1.005, 2.5, -2.5, 1e3, 123.456];
    let opt = |v: &[i128]| v.iter().map(|x| Some(*x)).collect::<Vec<_>>();
    batch(vec![
        ("a", decimals(&opt(&a), 15, 2)),
        ("b", decimals(&opt(&b), 15, 2)),
        ("c", decimals(&opt(&c), 15, 2)),
        ("big", decimals(&opt(&big), 38, 0)),
        ("f", Arc::new(Float64Array::from(f.to_vec()))),
    ])
}

/// Issue 8's table: the answers DuckDB gives.
#[test]
fn the_issue_table_gives_duckdbs_answers() {
    let t = issue_table();
    assert_eq!(select("a + b = c", &t).unwrap(), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(select("c = 0.1 + 0.2", &t).unwrap(), vec![0]);
    assert_eq!(select("c = 0.3 OR c = 0.8", &t).unwrap(), vec![0, 1]);
    let (ty, v) = project("a + b", &t).unwrap();
    assert_eq!(ty, "DECIMAL(16,2)");
    assert_eq!(v[0], "0.30");
    let (ty, v) = project("a * 100", &t).unwrap();
    assert_eq!(ty, "DECIMAL(18,2)");
    assert_eq!(v[5], "12.00");
    assert_eq!(select("big = 9007199254740993", &t).unwrap(), vec![0]);
    assert_eq!(
        select("big = 12345678901234567890123", &t).unwrap(),
        vec![2]
    );
    let (ty, v) = project("CAST(f AS DECIMAL(10,2))", &t).unwrap();
    assert_eq!(ty, "DECIMAL(10,2)");
    assert_eq!(v, ["0.13", "1.01", "2.50", "-2.50", "1000.00", "123.46"]);
}

/// Literal types as DuckDB's `typeof`.
#[test]
fn literals_are_typed_as_in_duckdb() {
    for (sql, ty, v) in [
        ("1.25", "DECIMAL(3,2)", "1.25"),
        ("0.05", "DECIMAL(3,2)", "0.05"),
        (".5", "DECIMAL(1,1)", "0.5"),
        ("100.0", "DECIMAL(4,1)", "100.0"),
        ("-1.25", "DECIMAL(3,2)", "-1.25"),
        ("000.10", "DECIMAL(5,2)", "0.10"),
        (
            "12345678901234567890123.5",
            "DECIMAL(24,1)",
            "12345678901234567890123.5",
        ),
        (
            "12345678901234567890123",
            "DECIMAL(23,0)",
            "12345678901234567890123",
        ),
        ("DECIMAL '1.25'", "DECIMAL(18,3)", "1.250"),
        ("NUMERIC '1.25'", "DECIMAL(18,3)", "1.250"),
        ("CAST('1.25' AS DECIMAL(10,2))", "DECIMAL(10,2)", "1.25"),
        ("'1.25'::NUMERIC(10,2)", "DECIMAL(10,2)", "1.25"),
        ("CAST('1e2' AS DECIMAL(10,2))", "DECIMAL(10,2)", "100.00"),
        ("CAST(1 AS DEC(5))", "DECIMAL(5,0)", "1"),
        ("CAST(1.25 AS DECIMAL)", "DECIMAL(18,3)", "1.250"),
    ] {
        assert_eq!(value(sql), (ty.to_string(), v.to_string()), "{sql}");
    }
    assert_eq!(value("1e3").0, "DOUBLE");
    assert_eq!(
        value("1.23456789012345678901234567890123456789").0,
        "DOUBLE"
    );
}

/// Arithmetic result types as DuckDB's.
#[test]
fn arithmetic_result_types_are_duckdbs() {
    for (sql, ty, v) in [
        ("0.1 + 0.2", "DECIMAL(3,1)", "0.3"),
        ("1.5 * 2", "DECIMAL(12,1)", "3.0"),
        ("1.5 * 100", "DECIMAL(12,1)", "150.0"),
        ("CAST(1.25 AS DECIMAL(18,2)) - 1", "DECIMAL(19,2)", "0.25"),
        (
            "CAST(1.25 AS DECIMAL(18,10)) * CAST(1.25 AS DECIMAL(18,10))",
            "DECIMAL(36,20)",
            "1.56250000000000000000",
        ),
        (
            "CAST(1.25 AS DECIMAL(10,9)) * CAST(1.25 AS DECIMAL(10,9))",
            "DECIMAL(20,18)",
            "1.562500000000000000",
        ),
        ("CAST(1.25 AS DECIMAL(15,2)) % 100", "DECIMAL(15,2)", "1.25"),
        (
            "CAST(1.25 AS DECIMAL(15,2)) * 3000000000",
            "DECIMAL(34,2)",
            "3750000000.00",
        ),
        (
            "CAST(1.25 AS DECIMAL(15,2)) * CAST(100 AS INTEGER)",
            "DECIMAL(18,2)",
            "125.00",
        ),
        (
            "CAST(1.25 AS DECIMAL(15,2)) + CAST(1.5 AS DECIMAL(10,3))",
            "DECIMAL(17,3)",
            "2.750",
        ),
        (
            "CAST(1.25 AS DECIMAL(15,2)) % CAST(1.5 AS DECIMAL(10,3))",
            "DECIMAL(16,3)",
            "1.250",
        ),
        (
            "CAST(1.25 AS DECIMAL(38,10)) * CAST(1.5 AS DECIMAL(38,10))",
            "DECIMAL(38,20)",
            "1.87500000000000000000",
        ),
        (
            "CAST(1.25 AS DECIMAL(15,2)) * 100",
            "DECIMAL(18,2)",
            "125.00",
        ),
        ("-(CAST(1.25 AS DECIMAL(15,2)))", "DECIMAL(15,2)", "-1.25"),
        ("abs(CAST(-1.25 AS DECIMAL(15,2)))", "DECIMAL(15,2)", "1.25"),
    ] {
        assert_eq!(value(sql), (ty.to_string(), v.to_string()), "{sql}");
    }
    assert_eq!(value("CAST(1.25 AS DECIMAL(15,2)) / 2").0, "DOUBLE");
    assert_eq!(value("CAST(1.25 AS DECIMAL(15,2)) + 1.0e0").0, "DOUBLE");
}

/// Casts round half away from zero (PostgreSQL), and out-of-range values are errors
/// naming the row.
#[test]
fn casts_round_half_away_from_zero_and_fail_out_of_range() {
    for (sql, v) in [
        ("CAST(2.5 AS INTEGER)", "3"),
        ("CAST(-2.5 AS INTEGER)", "-3"),
        ("CAST(2.49 AS INTEGER)", "2"),
        ("CAST(1.255 AS DECIMAL(10,2))", "1.26"),
        ("CAST(-1.255 AS DECIMAL(10,2))", "-1.26"),
        ("CAST(1.25 AS DOUBLE)", "1.25"),
        ("CAST(1.25 AS VARCHAR)", "1.25"),
        ("CAST(CAST(5 AS INTEGER) AS DECIMAL(4,2))", "5.00"),
    ] {
        assert_eq!(value(sql).1, v, "{sql}");
    }
    let t = issue_table();
    assert_eq!(
        project("CAST(big AS DECIMAL(5,0))", &t).unwrap_err(),
        "value 9007199254740993 is out of range for type DECIMAL(5,0) at row 0"
    );
    assert_eq!(
        project("CAST(a * 1000000000000000000 AS INTEGER)", &t)
            .unwrap_err()
            .split(" at row")
            .nth(1),
        Some(" 0")
    );
}

/// Comparisons across scales and with integers and floats are exact (floats compare
/// as DOUBLE).
#[test]
fn comparisons_across_scales_and_types() {
    let t = issue_table();
    assert_eq!(select("a = 0.1", &t).unwrap(), vec![0]);
    assert_eq!(select("a = 0.100", &t).unwrap(), vec![0]);
    assert_eq!(select("a = 0.101", &t).unwrap(), Vec::<usize>::new());
    assert_eq!(select("a < 0.125", &t).unwrap(), vec![0, 4, 5]);
    assert_eq!(select("a IN (0.1, 1, 0.25)", &t).unwrap(), vec![0, 2, 3]);
    assert_eq!(select("a BETWEEN 0.1 AND 0.25", &t).unwrap(), vec![0, 3, 5]);
    assert_eq!(select("b > a", &t).unwrap(), vec![0, 2, 3, 4, 5]);
    assert_eq!(select("big > 1", &t).unwrap(), vec![0, 1, 2]);
    assert_eq!(select("f = 2.5", &t).unwrap(), vec![2]);
    assert_eq!(select("a + b = c AND c > 1", &t).unwrap(), vec![2]);
}

/// Arrow does not enforce a decimal's precision; the JIT reads DECIMAL(p ≤ 18) as
/// 64-bit integers, so a valid value beyond the precision is an error naming the row,
/// while any value under a NULL is ignored.
#[test]
fn values_beyond_the_declared_precision() {
    use arrow::buffer::{NullBuffer, ScalarBuffer};
    // Row 4's low 64 bits read 1.00: only its high bits are beyond the precision.
    let values = ScalarBuffer::from(vec![100i128, i128::MAX, 250, 12_345_678, (1 << 64) + 100]);
    let d = |nulls: Vec<bool>| -> RecordBatch {
        let a = Decimal128Array::new(values.clone(), Some(NullBuffer::from(nulls)))
            .with_precision_and_scale(5, 2)
            .unwrap();
        batch(vec![("d", Arc::new(a) as ArrayRef)])
    };
    // Garbage under the NULLs of rows 1, 3 and 4: no error.
    let ok = d(vec![true, false, true, false, false]);
    let filter = Filter::new(&ok.schema(), "d > 1.5").unwrap();
    assert_eq!(
        filter.evaluate(&ok).unwrap().iter().collect::<Vec<_>>(),
        vec![2]
    );
    // Row 3 is valid and holds 123456.78 in a DECIMAL(5,2) column.
    let bad = d(vec![true, false, true, true, false]);
    let err = filter.evaluate(&bad).unwrap_err().to_string();
    assert!(
        err.contains("123456.78") && err.contains("DECIMAL(5,2)") && err.contains("row 3"),
        "{err}"
    );
    let bad = d(vec![true, false, true, false, true]);
    let err = filter.evaluate(&bad).unwrap_err().to_string();
    assert!(
        err.contains("184467440737095517.16") && err.contains("row 4"),
        "{err}"
    );
    // The same through a projection, and in a slice (rows renumbered).
    let projector = Projector::new(&bad.schema(), &["d + 1"]).unwrap();
    let err = projector
        .evaluate(&bad.slice(2, 3))
        .unwrap_err()
        .to_string();
    assert!(err.contains("row 2"), "{err}");
}

/// The JIT reads DECIMAL(p ≤ 18) columns in place (the low halves of their 16-byte
/// values), sliced or not; mixed with decimals the interpreter computes (a cast from
/// DOUBLE) the answers are the same.
#[test]
fn decimals_are_read_in_place() {
    let d = decimals(&[Some(150), None, Some(-250), Some(99_999), Some(1)], 5, 2);
    let f: ArrayRef = Arc::new(Float64Array::from(vec![
        Some(1.375),
        Some(2.0),
        None,
        Some(-0.5),
        Some(1.25),
    ]));
    let t = batch(vec![("d", d), ("f", f)]);
    assert_eq!(select("d > 1.2", &t).unwrap(), vec![0, 3]);
    assert_eq!(select("d < 0", &t.slice(1, 4)).unwrap(), vec![1]);
    assert_eq!(select("d * 2 >= 1999.98", &t.slice(3, 2)).unwrap(), vec![0]);
    // CAST(f AS DECIMAL(10,2)): 1.38 (half away from zero), 2.00, NULL, -0.50, 1.25.
    let mixed = "CAST(f AS DECIMAL(10,2)) > d";
    assert_eq!(select(mixed, &t).unwrap(), vec![4]);
    assert_eq!(
        select("CAST(f AS DECIMAL(10,2)) = 1.38", &t).unwrap(),
        vec![0]
    );
    let explained = Filter::new(&t.schema(), "d * 2 >= 1999.98")
        .unwrap()
        .explain()
        .unwrap();
    assert!(
        matches!(explained.backend, broadhead::Backend::Jit(_)) && explained.interpreted.is_empty(),
        "{explained}"
    );
    assert_eq!(
        project("d + CAST(f AS DECIMAL(10,2))", &t.slice(2, 3)).unwrap(),
        (
            "DECIMAL(11,2)".to_string(),
            vec!["NULL".to_string(), "999.49".to_string(), "1.26".to_string()]
        )
    );
}

/// `round`, `trunc`, `floor`, `ceil` of decimals are exact and typed as DuckDB types
/// them for a column (checked with DuckDB 2.0: `SELECT typeof(round(x, n)), …`).
#[test]
fn rounding_functions_are_exact_decimals() {
    let x = |v: &[Option<i128>], p, s| {
        batch(vec![
            ("x", decimals(v, p, s)),
            (
                "k",
                Arc::new(Int32Array::from(vec![1; v.len()])) as ArrayRef,
            ),
        ])
    };
    let three = x(
        &[Some(2675), Some(-2675), None, Some(9999), Some(-1)],
        10,
        3,
    );
    let cases: &[(&str, &str, &[&str])] = &[
        // round(2.675, 2) is 2.68 exactly (2.67 as a double).
        (
            "round(x, 2)",
            "DECIMAL(10,2)",
            &["2.68", "-2.68", "NULL", "10.00", "0.00"],
        ),
        ("round(x)", "DECIMAL(10,0)", &["3", "-3", "NULL", "10", "0"]),
        (
            "round(x, 0)",
            "DECIMAL(10,0)",
            &["3", "-3", "NULL", "10", "0"],
        ),
        (
            "round(x, 5)",
            "DECIMAL(10,3)",
            &["2.675", "-2.675", "NULL", "9.999", "-0.001"],
        ),
        (
            "round(x, -1)",
            "DECIMAL(10,0)",
            &["0", "0", "NULL", "10", "0"],
        ),
        (
            "trunc(x, 2)",
            "DECIMAL(10,2)",
            &["2.67", "-2.67", "NULL", "9.99", "0.00"],
        ),
        ("trunc(x)", "DECIMAL(10,0)", &["2", "-2", "NULL", "9", "0"]),
        ("floor(x)", "DECIMAL(10,0)", &["2", "-3", "NULL", "9", "-1"]),
        ("ceil(x)", "DECIMAL(10,0)", &["3", "-2", "NULL", "10", "0"]),
        (
            "ceiling(x)",
            "DECIMAL(10,0)",
            &["3", "-2", "NULL", "10", "0"],
        ),
        // A number of places from a column: computed in DOUBLE, as before.
        (
            "round(x, k)",
            "DOUBLE",
            &["2.7", "-2.7", "NULL", "10.0", "-0.0"],
        ),
    ];
    for (sql, ty, want) in cases {
        let (t, v) = project(sql, &three).unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert_eq!(
            (t.as_str(), v),
            (*ty, want.iter().map(|s| s.to_string()).collect()),
            "{sql}"
        );
    }
    // Places below zero: to tens, hundreds; room for the carry.
    let whole = x(&[Some(9999), Some(1234), Some(-1234), Some(155)], 4, 0);
    let (t, v) = project("round(x, -2)", &whole).unwrap();
    assert_eq!(
        (t.as_str(), v),
        (
            "DECIMAL(5,0)",
            vec!["10000".into(), "1200".into(), "-1200".into(), "200".into()]
        )
    );
    let (t, v) = project("trunc(x, -2)", &whole).unwrap();
    assert_eq!(
        (t.as_str(), v),
        (
            "DECIMAL(5,0)",
            vec!["9900".into(), "1200".into(), "-1200".into(), "100".into()]
        )
    );
    // A wide decimal (interpreted) rounds the same way.
    let wide = x(&[Some(123_456_789_012_345_678_901_234_567_895)], 38, 1);
    let (t, v) = project("round(x)", &wide).unwrap();
    assert_eq!(
        (t.as_str(), v),
        (
            "DECIMAL(38,0)",
            vec!["12345678901234567890123456790".into()]
        )
    );
    // A carry beyond 38 digits is an overflow error naming the row.
    let full = x(
        &[
            Some(1),
            Some(99_999_999_999_999_999_999_999_999_999_999_999_999),
        ],
        38,
        0,
    );
    let err = project("round(x, -1)", &full).unwrap_err();
    assert!(err.contains("row 1") || err.contains("row 2"), "{err}");
    // NULL places: NULL.
    let (_, v) = project("round(x, NULL)", &three).unwrap();
    assert!(v.iter().all(|s| s == "NULL"), "{v:?}");
    // Filters on rounded values compile (the JIT computes 64-bit decimals).
    assert_eq!(select("round(x, 2) = 2.68", &three), Ok(vec![0]));
    assert_eq!(select("floor(x) < -2", &three), Ok(vec![1]));
    for sql in [
        "round(x, 2) = 2.68",
        "floor(x) < -2",
        "ceil(x) > 0",
        "trunc(x, -1) = 0",
    ] {
        let explained = Filter::new(&three.schema(), sql)
            .unwrap()
            .explain()
            .unwrap();
        assert!(
            matches!(explained.backend, broadhead::Backend::Jit(_))
                && explained.interpreted.is_empty(),
            "{sql}: {explained}"
        );
    }
}

/// Decimals of 19 to 38 digits, with NULLs: TPC-H-like prices at DECIMAL(20,2),
/// DECIMAL(15,2) discounts and taxes, and DECIMAL(30,4) and DECIMAL(38,10) columns
/// holding the largest values of their precision in row 4.
fn wide_table() -> RecordBatch {
    let price = [
        Some(123_456_789_012_345_678),
        Some(-5),
        None,
        Some(9_999_999_999_999_999_999),
        Some(10_000),
        Some(1),
    ];
    let disc = [Some(5), Some(10), Some(0), None, Some(100), Some(7)];
    let tax = [Some(8), Some(0), Some(2), Some(4), None, Some(6)];
    let w = [
        Some(123_456_789_012_345_678_901_234),
        Some(-10_000),
        Some(1),
        None,
        Some(10i128.pow(30) - 1),
        Some(50_000),
    ];
    let x = [
        Some(12_345_678_901_234_567_890_123_456_781_234_567_890),
        Some(-5_000_000_000),
        None,
        Some(30_000_000_000),
        Some(10i128.pow(38) - 1),
        Some(0),
    ];
    batch(vec![
        ("price", decimals(&price, 20, 2)),
        ("disc", decimals(&disc, 15, 2)),
        ("tax", decimals(&tax, 15, 2)),
        ("w", decimals(&w, 30, 4)),
        ("x", decimals(&x, 38, 10)),
    ])
}

/// The assembly of the kernel `sql` (a projection over `schema`) compiles to, which
/// must compile whole: no subtree left to the interpreter.
fn compiled_assembly(sql: &str, schema: &Schema) -> String {
    let projector = Projector::new(schema, &[sql]).unwrap();
    let explained = projector.explain().unwrap();
    let broadhead::explain::Backend::Jit(compiled) = &explained.backend else {
        panic!("{sql} is not compiled: {:?}", explained.backend);
    };
    assert!(
        explained.interpreted.is_empty(),
        "{sql}: {:?}",
        explained.interpreted
    );
    compiled.assembly.clone()
}

/// The JIT computes `+ - *`, comparisons and casts that keep or raise the scale of
/// decimals of 19 to 38 digits as i128 without runtime library calls; `/`, `%` and
/// casts that lower the scale call `__divti3`/`__modti3` (which the JIT defines),
/// a cast to a float the cast's row function (see
/// `wide_division_remainder_and_float_casts`).
#[test]
fn wide_decimals_compile_to_inline_128_bit_code() {
    let t = wide_table();
    let schema = t.schema();
    for sql in [
        "price * (1 - disc) * (1 + tax)",
        "price * disc",
        "w + x",
        "x * x",
        "w - price",
        "-x",
        "abs(w)",
        "x > w",
        "w IN (-1, 5, 0.0001)",
        "CASE WHEN disc > 0.06 THEN w ELSE -w END",
        "coalesce(w, x)",
        "CAST(price AS DECIMAL(38,4))",
        "CAST(w AS DECIMAL(20,4))",
        "CAST(disc AS DECIMAL(30,10))",
        "w IS NULL OR w = 12345678901234567890.1234",
    ] {
        let asm = compiled_assembly(sql, &schema);
        let calls: Vec<&str> = asm
            .lines()
            .filter(|l| l.contains("call") && l.contains("__"))
            .collect();
        assert!(calls.is_empty(), "{sql} calls {calls:?}");
        for libcall in [
            "__divti3",
            "__modti3",
            "__floattidf",
            "__muloti4",
            "__multi3",
        ] {
            assert!(!asm.contains(libcall), "{sql} refers to {libcall}");
        }
    }
    // Rounding functions of wide decimals are left to the interpreter, and
    // `explain` says why.
    let projector = Projector::new(&schema, &["round(x, 2)"]).unwrap();
    let text = projector.explain().unwrap().to_string();
    assert!(
        text.contains("rounding functions of 128-bit decimals are not compiled"),
        "{text}"
    );
}

/// 128-bit `%`, casts that lower the scale (dividing by a power of ten, rounding
/// half away from zero) and casts to floats are compiled (the kernel calls
/// `__modti3`/`__divti3`, defined by the JIT, and the cast's row function), and
/// give DuckDB's answers (`SELECT typeof(e), e` over the same rows) on both back
/// ends.
#[test]
fn wide_division_remainder_and_float_casts() {
    let t = wide_table();
    let schema = t.schema();
    for sql in [
        "x % w",
        "w % 0.7",
        "CAST(x AS DOUBLE)",
        "CAST(x AS REAL)",
        "CAST(x AS DECIMAL(38,2))",
        "CAST(w AS DECIMAL(18,1))",
        "CAST(w AS BIGINT)",
        "CAST(x AS DOUBLE) > 1e27",
    ] {
        let asm = compiled_assembly(sql, &schema);
        // No call of compiler-rt's float conversion: floats come from the row function.
        assert!(!asm.contains("__floattidf"), "{sql}");
    }
    let text = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for (sql, ty, values) in [
        (
            "x % w",
            "DECIMAL(38,10)",
            text(&[
                "5678.1234567890",
                "-0.5000000000",
                "NULL",
                "NULL",
                "0.0099999999",
                "0.0000000000",
            ]),
        ),
        (
            "w % 0.7",
            "DECIMAL(30,4)",
            text(&["0.4234", "-0.3000", "0.0001", "NULL", "0.5999", "0.1000"]),
        ),
        (
            "CAST(x AS DECIMAL(38,2))",
            "DECIMAL(38,2)",
            text(&[
                "1234567890123456789012345678.12",
                "-0.50",
                "NULL",
                "3.00",
                "10000000000000000000000000000.00",
                "0.00",
            ]),
        ),
    ] {
        assert_eq!(project(sql, &t).unwrap(), (ty.to_string(), values), "{sql}");
    }
    let (ty, doubles) = project("CAST(x AS DOUBLE)", &t).unwrap();
    assert_eq!(ty, "DOUBLE");
    let expected = [
        Some(1.2345678901234569e27),
        Some(-0.5),
        None,
        Some(3.0),
        Some(1e28),
        Some(0.0),
    ];
    for (got, want) in doubles.iter().zip(expected) {
        assert_eq!(got.parse::<f64>().ok(), want, "{doubles:?}");
    }
    // DuckDB: `Failed to cast decimal value 12345678901234567890 to type INT64`.
    for sql in ["CAST(w AS BIGINT)", "CAST(w AS DECIMAL(18,1))"] {
        let err = project(sql, &t).unwrap_err();
        assert!(
            err.contains("out of range") && err.contains("row 0"),
            "{sql}: {err}"
        );
        assert_eq!(
            project(sql, &t.slice(1, 2)).unwrap().1,
            if sql.contains("BIGINT") {
                text(&["-1", "0"])
            } else {
                text(&["-1.0", "0.0"])
            }
        );
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Casts of 128-bit decimals to DOUBLE and REAL, to fewer fraction digits and to
    /// BIGINT, and `%`, on values of every magnitude up to 38 digits (and its
    /// largest ones), with NULLs and a slice: the JIT gives exactly the
    /// interpreter's values and errors.
    #[test]
    fn wide_conversions_and_remainders_are_the_interpreters(
        raw in proptest::collection::vec((0u32..=38, proptest::prelude::any::<u128>(), proptest::prelude::any::<bool>(), 0u8..10), 1..70),
        scale in proptest::sample::select(vec![0i8, 2, 10, 20, 37, 38]),
        offset in 0usize..3,
    ) {
        let value = |(digits, bits, negative, pick): (u32, u128, bool, u8)| -> Option<i128> {
            let max = 10i128.pow(38) - 1;
            let v = match pick {
                0 => return None,
                1 => max,
                2 => max - (bits % 1000) as i128,
                _ => (bits % 10u128.pow(digits)) as i128,
            };
            Some(if negative { -v } else { v })
        };
        let xs: Vec<Option<i128>> = raw.iter().copied().map(value).collect();
        let ys: Vec<Option<i128>> = raw.iter().rev().copied().map(value).collect();
        let t = batch(vec![
            ("x", decimals(&xs, 38, scale)),
            ("y", decimals(&ys, 38, 10)),
        ]);
        let t = t.slice(offset.min(t.num_rows()), t.num_rows() - offset.min(t.num_rows()));
        let lower = (scale - 1).max(0);
        for sql in [
            "CAST(x AS DOUBLE)".to_string(),
            "CAST(x AS REAL)".to_string(),
            format!("CAST(x AS DECIMAL(38,{lower}))"),
            "CAST(x AS DECIMAL(20,0))".to_string(),
            "CAST(x AS BIGINT)".to_string(),
            "x % y".to_string(),
            "y % 0.0000000003".to_string(),
        ] {
            // `project` asserts that both back ends agree.
            let _ = project(&sql, &t);
        }
    }
}

/// Wide decimal results on both back ends, as DuckDB gives them (`SELECT typeof(e),
/// e` over the same rows); overflow beyond 38 digits is an error naming the first
/// failing row (DuckDB fails the whole query).
#[test]
fn wide_decimal_arithmetic_matches_duckdb() {
    let t = wide_table();
    for (sql, ty, values) in [
        (
            "price * (1 - disc) * (1 + tax)",
            "DECIMAL(38,6)",
            vec![
                "1266666655266666.656280",
                "-0.045000",
                "NULL",
                "NULL",
                "NULL",
                "0.009858",
            ],
        ),
        (
            "price * disc",
            "DECIMAL(35,4)",
            vec![
                "61728394506172.8390",
                "-0.0050",
                "NULL",
                "NULL",
                "100.0000",
                "0.0007",
            ],
        ),
        (
            "w - price",
            "DECIMAL(31,4)",
            vec![
                "12344444333344444433.3434",
                "-0.9500",
                "NULL",
                "NULL",
                "99999999999999999999999899.9999",
                "4.9900",
            ],
        ),
        (
            "w * 2",
            "DECIMAL(38,4)",
            vec![
                "24691357802469135780.2468",
                "-2.0000",
                "0.0002",
                "NULL",
                "199999999999999999999999999.9998",
                "10.0000",
            ],
        ),
        (
            "CASE WHEN disc > 0.06 THEN w ELSE -w END",
            "DECIMAL(30,4)",
            vec![
                "-12345678901234567890.1234",
                "-1.0000",
                "-0.0001",
                "NULL",
                "99999999999999999999999999.9999",
                "5.0000",
            ],
        ),
        (
            "coalesce(w, x)",
            "DECIMAL(38,10)",
            vec![
                "12345678901234567890.1234000000",
                "-1.0000000000",
                "0.0001000000",
                "3.0000000000",
                "99999999999999999999999999.9999000000",
                "5.0000000000",
            ],
        ),
        (
            "-x",
            "DECIMAL(38,10)",
            vec![
                "-1234567890123456789012345678.1234567890",
                "0.5000000000",
                "NULL",
                "-3.0000000000",
                "-9999999999999999999999999999.9999999999",
                "0.0000000000",
            ],
        ),
        (
            "CAST(price AS DECIMAL(38,4))",
            "DECIMAL(38,4)",
            vec![
                "1234567890123456.7800",
                "-0.0500",
                "NULL",
                "99999999999999999.9900",
                "100.0000",
                "0.0100",
            ],
        ),
        (
            "CAST(disc AS DECIMAL(30,10))",
            "DECIMAL(30,10)",
            vec![
                "0.0500000000",
                "0.1000000000",
                "0.0000000000",
                "NULL",
                "1.0000000000",
                "0.0700000000",
            ],
        ),
    ] {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        assert_eq!(project(sql, &t).unwrap(), (ty.to_string(), values), "{sql}");
    }
    assert_eq!(
        project("price * (1 - disc)", &t).unwrap().0,
        "DECIMAL(36,4)"
    );
    for (sql, row) in [
        ("w + x", 4),
        ("x + x", 4),
        ("x * x", 0),
        ("price * 1000000000000000000000", 0),
        ("CAST(w AS DECIMAL(20,4))", 0),
    ] {
        let e = project(sql, &t).unwrap_err();
        assert!(e.ends_with(&format!(" at row {row}")), "{sql}: {e}");
    }
    assert_eq!(
        project("x * x", &t.slice(1, 1)).unwrap().1,
        ["0.25000000000000000000"]
    );
}

/// The wide table's rows repeated in blocks of 16, most of them small enough for
/// 64 bits: `price`, `disc`, `tax`, `w` and `x` as in [`wide_table`] for the rows
/// listed in `wide_rows` (in order, cycling), small values elsewhere.
fn mixed_wide_table(rows: usize, wide_rows: &[usize]) -> RecordBatch {
    let t = wide_table();
    let column = |name: &str, small: &dyn Fn(usize) -> Option<i128>| -> Vec<Option<i128>> {
        let c = t
            .column_by_name(name)
            .unwrap()
            .as_primitive::<arrow::datatypes::Decimal128Type>();
        let mut from_wide = (0..c.len()).cycle();
        (0..rows)
            .map(|i| match wide_rows.contains(&i) {
                true => {
                    let k = from_wide.next().unwrap();
                    c.is_valid(k).then(|| c.value(k))
                }
                false => small(i),
            })
            .collect()
    };
    let small = |m: i128| move |i: usize| (i % 13 != 0).then_some((i as i128 * 7_919) % m - m / 3);
    batch(vec![
        (
            "price",
            decimals(&column("price", &small(10_000_000)), 20, 2),
        ),
        ("disc", decimals(&column("disc", &small(11)), 15, 2)),
        ("tax", decimals(&column("tax", &small(9)), 15, 2)),
        ("w", decimals(&column("w", &small(1 << 40)), 30, 4)),
        ("x", decimals(&column("x", &small(1 << 62)), 38, 10)),
    ])
}

/// A wide decimal computation is emitted twice: in 64 bits, which a block takes
/// when all of its values fit, and in 128 bits, which a block takes otherwise
/// (a value beyond 64 bits, a result that overflows them, any error). Both give
/// the interpreter's values and errors, wherever the wide values fall among the
/// blocks (the first, a middle one, the tail), sliced or not.
#[test]
fn wide_arithmetic_takes_64_bits_where_the_values_fit() {
    let exprs = [
        "price * (1 - disc) * (1 + tax)",
        "price * disc",
        "w + x",
        "w - price",
        "-x",
        "abs(w)",
        "x * 3",
        "w * w",
        "price * 1000000000000000000000",
        "CAST(price AS DECIMAL(38,4))",
        "CAST(disc AS DECIMAL(30,10)) + w",
        "w % 0.7",
        "CASE WHEN disc > 0.03 THEN w * 2 ELSE w - 1 END",
    ];
    let mut compared = 0;
    for wide_rows in [&[][..], &[0], &[17, 18, 19, 20, 21, 22], &[60], &[3, 40]] {
        let t = mixed_wide_table(70, wide_rows);
        for sql in exprs {
            for (offset, len) in [(0, 70), (5, 60), (33, 2)] {
                // `project` asserts that both back ends agree, values or error.
                let _ = project(sql, &t.slice(offset, len));
                compared += 1;
            }
        }
        for sql in ["price * (1 - disc) > w", "w * w > x", "-x < price * 2"] {
            let _ = select(sql, &t);
        }
    }
    assert_eq!(compared, 5 * 13 * 3);
    // The same kernels compiled with O3 (the upgrade a hot expression gets; the
    // tests above run the first pipeline's): the same arrays.
    let o3 = Arc::new(
        broadhead::KernelCache::new(64, 64 << 20)
            .with_pipeline(broadhead::Pipeline::O3)
            .with_upgrade(None)
            .with_disk_cache(None),
    );
    for wide_rows in [&[][..], &[17, 18, 19, 20, 21, 22]] {
        let t = mixed_wide_table(70, wide_rows);
        for sql in [exprs[0], exprs[2], exprs[4], exprs[12]] {
            let expr = parse_expr(sql).unwrap();
            let fast = Projector::with_cache(&t.schema(), &[expr], &o3).unwrap();
            assert_eq!(fast.tier_stats().pipeline, Some(broadhead::Pipeline::O3));
            let usual = Projector::new(&t.schema(), &[sql]).unwrap();
            assert_eq!(
                fast.evaluate(&t)
                    .map(|a| a[0].to_data())
                    .map_err(|e| e.to_string()),
                usual
                    .evaluate(&t)
                    .map(|a| a[0].to_data())
                    .map_err(|e| e.to_string()),
                "{sql} with O3"
            );
        }
    }
    // Hand-computed: a product that overflows 64 bits but not 128 (row 20), among
    // rows whose products fit.
    let mut prices: Vec<Option<i128>> = (0..40).map(|i| Some(i * 100)).collect();
    prices[20] = Some(9_000_000_000_000_000_000);
    let t = batch(vec![
        ("price", decimals(&prices, 20, 2)),
        ("disc", decimals(&vec![Some(250); 40], 15, 2)),
    ]);
    let (ty, values) = project("price * disc", &t).unwrap();
    assert_eq!(ty, "DECIMAL(35,4)");
    assert_eq!(values[3], "7.5000");
    assert_eq!(values[20], "225000000000000000.0000");
    assert_eq!(values[39], "97.5000");
    // A value beyond the declared precision (which the interpreter does not check,
    // see `values_beyond_the_declared_precision`) fails on the 128-bit path, at its
    // row, after blocks that took the 64-bit one.
    let mut prices: Vec<i128> = (0..40).map(|i| i * 100).collect();
    prices[37] = 10i128.pow(20);
    let price = Decimal128Array::from(prices)
        .with_precision_and_scale(20, 2)
        .unwrap();
    let t = batch(vec![("price", Arc::new(price) as ArrayRef)]);
    let err = Projector::new(&t.schema(), &["price * 2"])
        .unwrap()
        .evaluate(&t)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("DECIMAL(20,2)") && err.ends_with(" at row 37"),
        "{err}"
    );
}

/// The 64-bit form is in the kernel: a block of Q1's charge on DECIMAL(20,2)
/// values that fit 64 bits does not run the 128-bit code.
#[test]
fn wide_arithmetic_has_a_64_bit_path() {
    let t = wide_table();
    let projector = Projector::new(&t.schema(), &["price * (1 - disc) * (1 + tax)"]).unwrap();
    let broadhead::explain::Backend::Jit(compiled) = projector.explain().unwrap().backend else {
        panic!("not compiled");
    };
    assert!(compiled.ir.contains("narrow:"), "{}", compiled.ir);
    assert!(compiled.ir.contains("wide:"), "{}", compiled.ir);
}

/// Comparisons between wide decimals of different scales, and with narrow ones and
/// literals, are exact (as DuckDB's).
#[test]
fn wide_decimal_comparisons_across_scales() {
    let t = wide_table();
    assert_eq!(select("x > w", &t).unwrap(), vec![0, 1, 4]);
    assert_eq!(select("x < price", &t).unwrap(), vec![1, 3, 5]);
    assert_eq!(
        select("w = 12345678901234567890.1234", &t).unwrap(),
        vec![0]
    );
    assert_eq!(select("w IN (-1, 5, 0.0001)", &t).unwrap(), vec![1, 2, 5]);
    assert_eq!(
        select("x >= 9999999999999999999999999999.9999999999", &t).unwrap(),
        vec![4]
    );
    assert_eq!(
        select("w IS DISTINCT FROM x", &t).unwrap(),
        vec![0, 1, 2, 3, 4, 5]
    );
    assert_eq!(
        select("-w < -1 AND w IS NOT NULL", &t).unwrap(),
        vec![0, 4, 5]
    );
    // Sliced: the same rows, renumbered.
    assert_eq!(select("x > w", &t.slice(1, 4)).unwrap(), vec![0, 3]);
}

/// `Decimal64` and `Decimal32` columns (what the Parquet scan reads DECIMAL(≤ 18)
/// columns as) are DECIMAL(p, s) like `Decimal128` ones: the same answers from
/// both back ends, sliced or not, with NULLs; results are `Decimal128` as for any
/// decimal; the JIT compiles them whole (read in place as `i64`s and `i32`s).
#[test]
fn narrow_decimal_columns_are_decimals() {
    use arrow::array::{Decimal32Array, Decimal64Array};
    let values = [
        Some(150i64),
        None,
        Some(-250),
        Some(99_999),
        Some(1),
        Some(-99_999),
        Some(5),
        None,
        Some(700),
    ];
    let d128 = decimals(
        &values.iter().map(|v| v.map(i128::from)).collect::<Vec<_>>(),
        9,
        2,
    );
    let d64: ArrayRef = Arc::new(
        Decimal64Array::from(values.to_vec())
            .with_precision_and_scale(9, 2)
            .unwrap(),
    );
    let d32: ArrayRef = Arc::new(
        values
            .iter()
            .map(|v| v.map(|v| v as i32))
            .collect::<Decimal32Array>()
            .with_precision_and_scale(9, 2)
            .unwrap(),
    );
    let t = batch(vec![("w", d128), ("l", d64), ("n", d32)]);
    assert_eq!(
        t.schema().field(1).data_type(),
        &arrow::datatypes::DataType::Decimal64(9, 2)
    );
    let predicates = [
        "{c} > 1.2",
        "{c} BETWEEN 0.05 AND 7",
        "{c} < 0 OR {c} IS NULL",
        "{c} * 2 >= 1999.98",
        "{c} = 1.50",
        "{c} + {c} > 3",
        "{c} IN (1.5, -2.5, 0.01)",
        "CAST({c} AS DOUBLE) < 0.5",
        "CAST({c} AS INTEGER) = 2",
    ];
    for sql in predicates {
        let answers: Vec<_> = ["w", "l", "n"]
            .iter()
            .map(|c| {
                let sql = sql.replace("{c}", c);
                (
                    select(&sql, &t).unwrap(),
                    select(&sql, &t.slice(2, 6)).unwrap(),
                )
            })
            .collect();
        assert_eq!(answers[0], answers[1], "{sql}");
        assert_eq!(answers[0], answers[2], "{sql}");
    }
    // Hand-computed: 1.50 > 1.2, 999.99, 7.00.
    assert_eq!(select("l > 1.2", &t).unwrap(), vec![0, 3, 8]);
    assert_eq!(select("n > 1.2", &t.slice(3, 6)).unwrap(), vec![0, 5]);
    let projections = [
        "{c}",
        "{c} + 1",
        "{c} * {c}",
        "-{c}",
        "abs({c})",
        "round({c}, 1)",
        "{c} % 0.07",
        "CAST({c} AS DECIMAL(12,4))",
        "CAST({c} AS DECIMAL(20,1))",
        "{c} * 12345678901234.5",
        "{c} * 123456789.5",
    ];
    for sql in projections {
        let answers: Vec<_> = ["w", "l", "n"]
            .iter()
            .map(|c| project(&sql.replace("{c}", c), &t.slice(1, 8)))
            .collect();
        assert_eq!(answers[0], answers[1], "{sql}");
        assert_eq!(answers[0], answers[2], "{sql}");
    }
    assert_eq!(
        project("l * 2", &t.slice(0, 4)).unwrap(),
        (
            "DECIMAL(18,2)".to_string(),
            ["3.00", "NULL", "-5.00", "1999.98"]
                .map(String::from)
                .to_vec()
        )
    );
    for sql in ["l BETWEEN 0.05 AND 0.07", "n * 2 >= 1999.98 AND l < 3"] {
        let explained = Filter::new(&t.schema(), sql).unwrap().explain().unwrap();
        assert!(
            matches!(explained.backend, broadhead::Backend::Jit(_))
                && explained.interpreted.is_empty(),
            "{explained}"
        );
    }
    // A negative scale (Arrow allows one) is not a DECIMAL Broadhead has.
    let negative: ArrayRef = Arc::new(
        Decimal64Array::from(vec![Some(1i64)])
            .with_precision_and_scale(9, -2)
            .unwrap(),
    );
    let err = Filter::new(&batch(vec![("x", negative)]).schema(), "x > 1")
        .unwrap_err()
        .to_string();
    assert!(err.contains("not support"), "{err}");
}

/// A value beyond the declared precision in a `Decimal64` or `Decimal32` column is
/// an error naming the value, the type and the row, as in a `Decimal128` one
/// (`values_beyond_the_declared_precision`); garbage under a NULL is ignored.
#[test]
fn narrow_decimal_values_beyond_the_declared_precision() {
    use arrow::array::{Decimal32Array, Decimal64Array};
    use arrow::buffer::NullBuffer;
    fn d64(values: &[i64], n: Vec<bool>) -> ArrayRef {
        Arc::new(
            Decimal64Array::new(values.to_vec().into(), Some(NullBuffer::from(n)))
                .with_precision_and_scale(5, 2)
                .unwrap(),
        )
    }
    fn d32(values: &[i64], n: Vec<bool>) -> ArrayRef {
        let narrow: Vec<i32> = values.iter().map(|&v| v as i32).collect();
        Arc::new(
            Decimal32Array::new(narrow.into(), Some(NullBuffer::from(n)))
                .with_precision_and_scale(5, 2)
                .unwrap(),
        )
    }
    let values = [100i64, i64::MAX, 250, 12_345_678];
    for column in [d64, d32] {
        let ok = batch(vec![("d", column(&values, vec![true, false, true, false]))]);
        let filter = Filter::new(&ok.schema(), "d > 1.5").unwrap();
        assert_eq!(
            filter.evaluate(&ok).unwrap().iter().collect::<Vec<_>>(),
            vec![2]
        );
        let bad = batch(vec![("d", column(&values, vec![true, false, true, true]))]);
        let err = filter.evaluate(&bad).unwrap_err().to_string();
        assert!(
            err.contains("123456.78") && err.contains("DECIMAL(5,2)") && err.contains("row 3"),
            "{err}"
        );
        let projector = Projector::new(&bad.schema(), &["d + 1"]).unwrap();
        let err = projector
            .evaluate(&bad.slice(2, 2))
            .unwrap_err()
            .to_string();
        assert!(err.contains("row 1"), "{err}");
    }
}

/// Unsigned and narrow integers widened to 128-bit decimals, and 64-bit decimal
/// results (written as the `i128`s of their `Decimal128` array by the kernel):
/// the largest `u64`, negative values, NULLs.
#[test]
fn integers_and_narrow_decimals_widened_to_128_bits() {
    use arrow::array::{Int32Array, UInt64Array};
    let t = batch(vec![
        (
            "u",
            Arc::new(UInt64Array::from(vec![
                Some(u64::MAX),
                Some(0),
                None,
                Some(5),
            ])) as ArrayRef,
        ),
        (
            "i",
            Arc::new(Int32Array::from(vec![
                Some(i32::MIN),
                Some(-1),
                Some(7),
                None,
            ])) as ArrayRef,
        ),
        (
            "d",
            decimals(&[Some(-150), Some(99_999), None, Some(1)], 5, 2),
        ),
    ]);
    let text = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for (sql, ty, values) in [
        (
            "CAST(u AS DECIMAL(20,0))",
            "DECIMAL(20,0)",
            text(&["18446744073709551615", "0", "NULL", "5"]),
        ),
        (
            "CAST(u AS DECIMAL(38,2))",
            "DECIMAL(38,2)",
            text(&["18446744073709551615.00", "0.00", "NULL", "5.00"]),
        ),
        (
            "CAST(i AS DECIMAL(30,1))",
            "DECIMAL(30,1)",
            text(&["-2147483648.0", "-1.0", "7.0", "NULL"]),
        ),
        (
            "d * 2",
            "DECIMAL(15,2)",
            text(&["-3.00", "1999.98", "NULL", "0.02"]),
        ),
        (
            "-d",
            "DECIMAL(5,2)",
            text(&["1.50", "-999.99", "NULL", "-0.01"]),
        ),
        (
            "d",
            "DECIMAL(5,2)",
            text(&["-1.50", "999.99", "NULL", "0.01"]),
        ),
    ] {
        assert_eq!(project(sql, &t).unwrap(), (ty.to_string(), values), "{sql}");
    }
}

/// `1 - d` and `1 + d` on a DECIMAL(15,2) column cannot overflow or leave their 16
/// digits once `d` is within its precision, so the kernel leaves out those checks
/// (no `ssub.with.overflow` in its IR): the largest and smallest values give exact
/// answers, a value beyond the precision is still its row's error, and a literal
/// with more digits still gets its checks where they can fail.
#[test]
fn decimal_checks_that_cannot_fail_are_left_out() {
    let max15 = 10i128.pow(15) - 1;
    let t = batch(vec![(
        "d",
        decimals(&[Some(max15), Some(-max15), Some(7), None], 15, 2),
    )]);
    let (ty, values) = project("1 - d", &t).unwrap();
    assert_eq!(ty, "DECIMAL(16,2)");
    assert_eq!(
        values,
        ["-9999999999998.99", "10000000000000.99", "0.93", "NULL"]
    );
    let (_, values) = project("d + 1", &t).unwrap();
    assert_eq!(
        values,
        ["10000000000000.99", "-9999999999998.99", "1.07", "NULL"]
    );
    let projector = Projector::new(&t.schema(), &["1 - d"]).unwrap();
    let broadhead::explain::Backend::Jit(compiled) = projector.explain().unwrap().backend else {
        panic!("not compiled");
    };
    assert!(
        !compiled.optimized_ir.contains("sub.with.overflow"),
        "{}",
        compiled.optimized_ir
    );
    // Beyond DECIMAL(15,2) in a valid row: still an error.
    let beyond = batch(vec![(
        "d",
        Arc::new(
            Decimal128Array::from(vec![Some(1), Some(max15 + 1)])
                .with_precision_and_scale(15, 2)
                .unwrap(),
        ) as ArrayRef,
    )]);
    // (The interpreter computes such values as they are: the JIT alone reads them
    // in 64 bits, see `values_beyond_the_declared_precision`.)
    let err = projector.evaluate(&beyond).unwrap_err().to_string();
    assert!(err.contains("does not fit its precision at row 1"), "{err}");
    // 18-digit operands: `d18 - 9999999999999999.99` leaves 18 digits at the bottom.
    let max18 = 10i128.pow(18) - 1;
    let t = batch(vec![("d18", decimals(&[Some(0), Some(-max18)], 18, 2))]);
    let (ty, values) = project("d18 - 9999999999999999.99", &t).unwrap();
    assert_eq!(ty, "DECIMAL(19,2)");
    assert_eq!(values[0], "-9999999999999999.99");
    assert_eq!(values[1], "-19999999999999999.98");
    let t = batch(vec![("d", decimals(&[Some(0), Some(-max15)], 15, 2))]);
    let (ty, values) = project("d - 999999999999999.99", &t).unwrap();
    assert_eq!(ty, "DECIMAL(18,2)");
    assert_eq!(values, ["-999999999999999.99", "-1009999999999999.98"]);
}
