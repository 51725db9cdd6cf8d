//! Every rule of docs/semantics.md against hand-computed expectations, on both back
//! ends (the JIT through Filter/Projector, and the interpreter), and every error
//! message with its position.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanArray, Date32Array, Float32Array, Float64Array, Int32Array,
    Int64Array, Int8Array, RecordBatch, StringArray, UInt8Array,
};
use arrow::datatypes::{DataType, Field, Float64Type, Int32Type, Int64Type, Int8Type, Schema};
use broadhead::bind::{bind, bind_predicate};
use broadhead::interpret::interpret;
use broadhead::sql::parse_expr;
use broadhead::{Error, Filter, Projector, SelectionMode};

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

/// The selected rows, checked to be the same from the JIT and the interpreter.
fn select(sql: &str, batch: &RecordBatch) -> Result<Vec<usize>, String> {
    select_compiled_or_not(sql, batch, true)
}

/// The selected rows of `Filter` (compiled if `compiled`, else compiled or not),
/// checked to be the same as the interpreter's.
fn select_compiled_or_not(
    sql: &str,
    batch: &RecordBatch,
    compiled: bool,
) -> Result<Vec<usize>, String> {
    let schema = batch.schema();
    let filter = Filter::new(&schema, sql).map_err(|e| e.to_string())?;
    assert!(filter.is_jit() || !compiled, "{sql} should compile");
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

/// One projected column, checked to be the same from the JIT and the interpreter.
fn project(sql: &str, batch: &RecordBatch) -> Result<ArrayRef, String> {
    project_compiled_or_not(sql, batch, true)
}

/// One column of `Projector` (compiled if `compiled`, else compiled or not),
/// checked to be the same as the interpreter's.
fn project_compiled_or_not(
    sql: &str,
    batch: &RecordBatch,
    compiled: bool,
) -> Result<ArrayRef, String> {
    let schema = batch.schema();
    let projector = Projector::new(&schema, &[sql]).map_err(|e| e.to_string())?;
    assert!(projector.is_jit(0) || !compiled, "{sql} should compile");
    let jit = projector
        .evaluate(batch)
        .map(|mut v| v.remove(0))
        .map_err(|e| e.to_string());
    let typed = bind(&parse_expr(sql).unwrap(), &schema).unwrap();
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
    jit
}

fn bools(a: &ArrayRef) -> Vec<Option<bool>> {
    a.as_boolean().iter().collect()
}

fn ints(n: &[Option<i64>]) -> ArrayRef {
    Arc::new(Int64Array::from(n.to_vec()))
}

fn floats(n: &[f64]) -> ArrayRef {
    Arc::new(Float64Array::from(n.to_vec()))
}

#[test]
fn a_filter_keeps_true_rows_only() {
    let b = batch(vec![("x", ints(&[Some(1), None, Some(3)]))]);
    assert_eq!(select("x > 2", &b), Ok(vec![2]));
    assert_eq!(select("NOT (x > 2)", &b), Ok(vec![0]));
    assert_eq!(select("x > 2 OR x <= 2", &b), Ok(vec![0, 2]));
}

#[test]
fn and_or_not_follow_kleene_logic() {
    let t = Some(true);
    let f = Some(false);
    let p: ArrayRef = Arc::new(BooleanArray::from(vec![t, t, t, f, f, f, None, None, None]));
    let q: ArrayRef = Arc::new(BooleanArray::from(vec![t, f, None, t, f, None, t, f, None]));
    let b = batch(vec![("p", p), ("q", q)]);
    assert_eq!(
        bools(&project("p AND q", &b).unwrap()),
        vec![t, f, None, f, f, f, None, f, None]
    );
    assert_eq!(
        bools(&project("p OR q", &b).unwrap()),
        vec![t, t, t, t, f, None, t, None, None]
    );
    assert_eq!(
        bools(&project("NOT p", &b).unwrap()),
        vec![f, f, f, t, t, t, None, None, None]
    );
    assert_eq!(
        bools(&project("p IS TRUE", &b).unwrap()),
        vec![t, t, t, f, f, f, f, f, f]
    );
    assert_eq!(
        bools(&project("p IS NOT FALSE", &b).unwrap()),
        vec![t, t, t, f, f, f, t, t, t]
    );
    assert_eq!(
        bools(&project("p IS DISTINCT FROM q", &b).unwrap()),
        vec![f, t, t, t, f, t, t, t, f]
    );
}

#[test]
fn integer_overflow_is_an_error_naming_the_row() {
    let b = batch(vec![
        ("i", ints(&[Some(1), Some(2), Some(i64::MAX)])),
        ("j", ints(&[Some(1), Some(1), Some(1)])),
    ]);
    assert_eq!(
        project("i + j", &b).unwrap_err(),
        "BIGINT addition out of range at row 2"
    );
    assert_eq!(
        project("-i - 2 * j", &b).unwrap_err(),
        "BIGINT subtraction out of range at row 2"
    );
    let t: ArrayRef = Arc::new(Int8Array::from(vec![100, -128]));
    let b = batch(vec![("t", t)]);
    assert_eq!(
        project("t * CAST(2 AS TINYINT)", &b).unwrap_err(),
        "TINYINT multiplication out of range at row 0"
    );
    assert_eq!(
        project("-t", &b).unwrap_err(),
        "TINYINT negation out of range at row 1"
    );
    assert_eq!(
        project("abs(t)", &b).unwrap_err(),
        "TINYINT abs out of range at row 1"
    );
    let u: ArrayRef = Arc::new(UInt8Array::from(vec![5, 3]));
    let b = batch(vec![("u", u)]);
    assert_eq!(
        project("u - 4", &b).unwrap_err(),
        "UTINYINT subtraction out of range at row 1"
    );
}

/// 64- and 128-bit products take a plain multiply for a 16-row block whose operands
/// all fit in half the width and the checked multiply otherwise: both give exact
/// products, an overflow is its row's error in either, and the values under NULLs
/// (anything) never make an error.
#[test]
fn wide_products_are_exact_and_checked_in_every_block() {
    // Block 0: small values. Block 1: one operand beyond 32 bits whose product fits.
    // Block 2: the 32-bit extremes, whose products are at most 2^62.
    let mut i: Vec<Option<i64>> = (0..48).map(|r| Some(r - 20)).collect();
    i[20] = Some(1 << 40);
    i[32] = Some(i32::MIN as i64);
    i[33] = Some(i32::MAX as i64);
    i[40] = None;
    let j: Vec<Option<i64>> = (0..48).map(|r| Some(3 - r % 7)).collect();
    let mut j = j;
    j[32] = Some(i32::MIN as i64);
    j[33] = Some(i32::MIN as i64);
    let b = batch(vec![("i", ints(&i)), ("j", ints(&j))]);
    let got = project("i * j", &b).unwrap();
    let got = got.as_primitive::<Int64Type>();
    for r in 0..48 {
        match (i[r], j[r]) {
            (Some(x), Some(y)) => assert_eq!(got.value(r), x * y, "row {r}"),
            _ => assert!(got.is_null(r), "row {r}"),
        }
    }
    assert_eq!(got.value(32), 1 << 62);
    assert_eq!(got.value(20), (1 << 40) * -3);
    assert_eq!(select("i * j > 4611686018427387000", &b), Ok(vec![32]));
    // 3,037,000,500² exceeds 2^63 - 1; 3,037,000,499² does not.
    let b = batch(vec![(
        "i",
        ints(&[
            Some(1),
            Some(3_037_000_499),
            None,
            Some(3_037_000_500),
            Some(2),
        ]),
    )]);
    assert_eq!(
        project("i * i", &b).unwrap_err(),
        "BIGINT multiplication out of range at row 3"
    );
    assert_eq!(select("i < 5 OR i * i > 0", &b.slice(0, 3)), Ok(vec![0, 1]));
    // i64::MIN * -1 overflows although -1 fits in 32 bits.
    let b = batch(vec![
        ("i", ints(&[Some(i64::MIN)])),
        ("j", ints(&[Some(-1)])),
    ]);
    assert_eq!(
        project("i * j", &b).unwrap_err(),
        "BIGINT multiplication out of range at row 0"
    );
    // Huge values under NULLs are not multiplied into errors.
    let values: Vec<i64> = (0..40)
        .map(|r| if r % 5 == 0 { r } else { i64::MAX })
        .collect();
    let nulls = arrow::buffer::NullBuffer::from((0..40).map(|r| r % 5 == 0).collect::<Vec<_>>());
    let masked: ArrayRef = Arc::new(Int64Array::new(values.into(), Some(nulls)));
    let b = batch(vec![("m", masked)]);
    let got = project("m * m", &b).unwrap();
    let got = got.as_primitive::<Int64Type>();
    assert_eq!(got.null_count(), 32);
    assert_eq!(got.value(35), 35 * 35);
    // Unsigned: (2^32 - 1)² fits in 64 bits, 2^32 · 2^32 does not.
    let u: ArrayRef = Arc::new(arrow::array::UInt64Array::from(vec![
        u32::MAX as u64,
        7,
        1 << 32,
    ]));
    let b = batch(vec![("u", u)]);
    let got = project("u * u", &b.slice(0, 2)).unwrap();
    let got = got.as_primitive::<arrow::datatypes::UInt64Type>();
    assert_eq!(got.values().to_vec(), vec![(u32::MAX as u64).pow(2), 49]);
    assert_eq!(
        project("u * u", &b).unwrap_err(),
        "UBIGINT multiplication out of range at row 2"
    );
}

#[test]
fn division_and_modulo_by_zero_are_errors_naming_the_row() {
    let b = batch(vec![
        ("a", ints(&[Some(6), Some(1), Some(5)])),
        ("b", ints(&[Some(3), None, Some(0)])),
    ]);
    assert_eq!(
        project("a / b", &b).unwrap_err(),
        "division by zero at row 2"
    );
    assert_eq!(
        project("a % b", &b).unwrap_err(),
        "division by zero at row 2"
    );
    let b = batch(vec![("x", floats(&[1.0, -0.0]))]);
    assert_eq!(
        project("1.0 / x", &b).unwrap_err(),
        "division by zero at row 1"
    );
}

#[test]
fn errors_are_raised_only_for_rows_whose_value_is_used() {
    let b = batch(vec![
        ("a", ints(&[Some(6), Some(1), Some(5)])),
        ("b", ints(&[Some(3), Some(0), Some(0)])),
    ]);
    assert_eq!(select("b <> 0 AND a / b > 1", &b), Ok(vec![0]));
    assert_eq!(select("a / b > 1 AND b <> 0", &b), Ok(vec![0]));
    assert_eq!(select("b = 0 OR a / b > 1", &b), Ok(vec![0, 1, 2]));
    let out = project("CASE WHEN b = 0 THEN 0 ELSE a / b END", &b).unwrap();
    assert_eq!(
        out.as_primitive::<Int64Type>().values().to_vec(),
        vec![2, 0, 0]
    );
    let out = project("coalesce(b, a / b)", &b).unwrap();
    assert_eq!(
        out.as_primitive::<Int64Type>().values().to_vec(),
        vec![3, 0, 0]
    );
    // A used value still fails: here the ELSE branch is taken where b = 0.
    assert_eq!(
        project("CASE WHEN b = 3 THEN 0 ELSE a / b END", &b).unwrap_err(),
        "division by zero at row 1"
    );
    // NULL in a strict function does not hide an error in another argument.
    assert_eq!(
        project("(a / b) + NULL", &b).unwrap_err(),
        "division by zero at row 1"
    );
}

#[test]
fn integer_division_truncates_toward_zero() {
    let b = batch(vec![
        ("a", ints(&[Some(-7), Some(7), Some(-7)])),
        ("b", ints(&[Some(2), Some(-2), Some(-2)])),
    ]);
    let q = project("a / b", &b).unwrap();
    assert_eq!(
        q.as_primitive::<Int64Type>().values().to_vec(),
        vec![-3, -3, 3]
    );
    let r = project("a % b", &b).unwrap();
    assert_eq!(
        r.as_primitive::<Int64Type>().values().to_vec(),
        vec![-1, 1, -1]
    );
}

#[test]
fn nan_equals_nan_sorts_above_everything_and_negative_zero_equals_zero() {
    let b = batch(vec![
        ("x", floats(&[f64::NAN, f64::NAN, -0.0, f64::INFINITY, 1.0])),
        ("y", floats(&[f64::NAN, f64::INFINITY, 0.0, f64::NAN, 2.0])),
    ]);
    assert_eq!(select("x = y", &b), Ok(vec![0, 2]));
    assert_eq!(select("x > y", &b), Ok(vec![1]));
    assert_eq!(select("x < y", &b), Ok(vec![3, 4]));
    assert_eq!(select("x <= y", &b), Ok(vec![0, 2, 3, 4]));
    assert_eq!(select("x <> y", &b), Ok(vec![1, 3, 4]));
    assert_eq!(select("x IN (DOUBLE 'NaN')", &b), Ok(vec![0, 1]));
    assert_eq!(select("x = 0", &b), Ok(vec![2]));
}

/// Comparisons with a literal, the literal a number or NaN, on either side, over
/// DOUBLE and REAL columns holding NaN: NaN equals NaN and sorts above everything.
/// (The kernel leaves a literal's NaN tests out unless the literal is NaN.)
#[test]
fn comparisons_with_literals_place_nan_above_everything() {
    let doubles = [f64::NAN, f64::NEG_INFINITY, 1.0, f64::INFINITY, -0.0];
    let reals: ArrayRef = Arc::new(Float32Array::from(
        doubles.iter().map(|&x| x as f32).collect::<Vec<_>>(),
    ));
    let b = batch(vec![("x", floats(&doubles)), ("r", reals)]);
    for column in ["x", "r"] {
        let cases: [(&str, &[usize]); 14] = [
            ("{} < 'NaN'", &[1, 2, 3, 4]),
            ("{} <= 'NaN'", &[0, 1, 2, 3, 4]),
            ("{} > 'NaN'", &[]),
            ("{} >= 'NaN'", &[0]),
            ("{} = 'NaN'", &[0]),
            ("{} <> 'NaN'", &[1, 2, 3, 4]),
            ("{} < 1", &[1, 4]),
            ("{} <= 1", &[1, 2, 4]),
            ("{} > 1", &[0, 3]),
            ("{} >= 1", &[0, 2, 3]),
            ("{} <> 1", &[0, 1, 3, 4]),
            ("1 < {}", &[0, 3]),
            ("'NaN' > {}", &[1, 2, 3, 4]),
            ("{} BETWEEN 0 AND 'NaN'", &[0, 2, 3, 4]),
        ];
        for (sql, rows) in cases {
            let sql = sql.replace("{}", column);
            let cast = sql.replace("'NaN'", "CAST('NaN' AS DOUBLE)");
            assert_eq!(select(&sql, &b), Ok(rows.to_vec()), "{sql}");
            assert_eq!(select(&cast, &b), Ok(rows.to_vec()), "{cast}");
        }
    }
}

#[test]
fn in_lists_with_nulls_follow_sql() {
    let b = batch(vec![("x", ints(&[Some(1), Some(2), None]))]);
    assert_eq!(
        bools(&project("x IN (1, NULL)", &b).unwrap()),
        vec![Some(true), None, None]
    );
    assert_eq!(
        bools(&project("x NOT IN (1, NULL)", &b).unwrap()),
        vec![Some(false), None, None]
    );
    assert_eq!(
        bools(&project("x IN (1, 3)", &b).unwrap()),
        vec![Some(true), Some(false), None]
    );
    assert_eq!(
        bools(&project("x NOT IN (1, 3)", &b).unwrap()),
        vec![Some(false), Some(true), None]
    );
    let s: ArrayRef = Arc::new(StringArray::from(vec![Some("AIR"), Some("MAIL"), None]));
    let b = batch(vec![("s", s)]);
    assert_eq!(
        bools(&project("s IN ('AIR', NULL)", &b).unwrap()),
        vec![Some(true), None, None]
    );
    assert_eq!(
        bools(&project("s NOT IN ('AIR', 'SHIP')", &b).unwrap()),
        vec![Some(false), Some(true), None]
    );
}

#[test]
fn casts_round_floats_half_to_even_and_check_ranges() {
    let b = batch(vec![("x", floats(&[2.5, 3.5, -2.5, 2.4]))]);
    let out = project("CAST(x AS INTEGER)", &b).unwrap();
    assert_eq!(
        out.as_primitive::<Int32Type>().values().to_vec(),
        vec![2, 4, -2, 2]
    );
    let b = batch(vec![("x", floats(&[1.0, 1e10, f64::NAN]))]);
    assert_eq!(
        project("CAST(x AS INTEGER)", &b).unwrap_err(),
        "cast to INTEGER out of range at row 1"
    );
    let b = batch(vec![("x", ints(&[Some(127), Some(128)]))]);
    assert_eq!(
        project("CAST(x AS TINYINT)", &b).unwrap_err(),
        "cast to TINYINT out of range at row 1"
    );
    let out = project(
        "x::TINYINT IS NULL",
        &batch(vec![("x", ints(&[Some(127), None]))]),
    )
    .unwrap();
    assert_eq!(bools(&out), vec![Some(false), Some(true)]);
}

#[test]
fn mixed_types_promote_and_literals_adopt_the_column_type() {
    let k: ArrayRef = Arc::new(Int32Array::from(vec![1, 2, 3, 5]));
    let b = batch(vec![("k", k.clone()), ("x", floats(&[0.5, 2.0, 2.9, 5.0]))]);
    assert_eq!(select("k IN (1, 3, 5, 7)", &b), Ok(vec![0, 2, 3]));
    assert_eq!(select("k > 2.5", &b), Ok(vec![2, 3]));
    assert_eq!(select("k = x", &b), Ok(vec![1, 3]));
    let sum = project("k + x", &b).unwrap();
    assert_eq!(
        sum.as_primitive::<Float64Type>().values().to_vec(),
        vec![1.5, 4.0, 5.9, 10.0]
    );
    let t: ArrayRef = Arc::new(Int8Array::from(vec![1, 2]));
    let b = batch(vec![("t", t)]);
    let out = project("t + 1", &b).unwrap();
    assert_eq!(out.as_primitive::<Int8Type>().values().to_vec(), vec![2, 3]);
}

#[test]
fn dates_timestamps_and_strings_compare_as_documented() {
    let d: ArrayRef = Arc::new(Date32Array::from(vec![8765, 8766, 9130, 9131]));
    let b = batch(vec![("d", d)]);
    // 8766 = 1994-01-01, 9130 = 1994-12-31
    assert_eq!(
        select("d >= DATE '1994-01-01' AND d < DATE '1995-01-01'", &b),
        Ok(vec![1, 2])
    );
    assert_eq!(
        select("d >= '1994-01-01' AND d < '1995-01-01'", &b),
        Ok(vec![1, 2])
    );
    assert_eq!(
        select("d < TIMESTAMP '1994-01-01 00:00:01'", &b),
        Ok(vec![0, 1])
    );
    assert_eq!(select("d + 1 = DATE '1995-01-01'", &b), Ok(vec![2]));
    let s: ArrayRef = Arc::new(StringArray::from(vec!["abc", "abd", "ab", "ABC", "xabcx"]));
    let b = batch(vec![("s", s)]);
    assert_eq!(select("s LIKE 'ab%'", &b), Ok(vec![0, 1, 2]));
    assert_eq!(select("s LIKE '%bc'", &b), Ok(vec![0]));
    assert_eq!(select("s LIKE '%bc%'", &b), Ok(vec![0, 4]));
    assert_eq!(select("s LIKE 'a_c'", &b), Ok(vec![0]));
    assert_eq!(select("s ILIKE 'abc'", &b), Ok(vec![0, 3]));
    assert_eq!(select("s NOT LIKE 'ab%'", &b), Ok(vec![3, 4]));
    assert_eq!(select("s < 'abd' AND s > 'AB'", &b), Ok(vec![0, 2, 3]));
    assert_eq!(select("length(s) = 3", &b), Ok(vec![0, 1, 3]));
}

#[test]
fn empty_and_sliced_batches_work() {
    let b = batch(vec![("x", floats(&[1.0, 3.0, 5.0, 7.0]))]);
    assert_eq!(select("x > 2.0 AND x < 6.0", &b.slice(0, 0)), Ok(vec![]));
    assert_eq!(
        select("x > 2.0 AND x < 6.0", &b.slice(1, 3)),
        Ok(vec![0, 1])
    );
    let out = project("x * 2", &b.slice(2, 2)).unwrap();
    assert_eq!(
        out.as_primitive::<Float64Type>().values().to_vec(),
        vec![10.0, 14.0]
    );
}

#[test]
fn a_batch_of_another_schema_is_an_error() {
    let b = batch(vec![("x", floats(&[1.0]))]);
    let filter = Filter::new(&b.schema(), "x > 0").unwrap();
    let other = batch(vec![("x", ints(&[Some(1)]))]);
    assert_eq!(
        filter.evaluate(&other).unwrap_err().to_string(),
        "batch does not match the compiled schema: expected column 'x' of type Float64, found 'x' of type Int64"
    );
    let wider = batch(vec![("x", floats(&[1.0])), ("y", floats(&[1.0]))]);
    assert!(filter.evaluate(&wider).is_err());
}

#[test]
fn selection_modes_and_reused_buffers_give_the_same_rows() {
    let b = batch(vec![(
        "x",
        floats(&(0..200).map(|i| i as f64).collect::<Vec<_>>()),
    )]);
    let filter = Filter::new(&b.schema(), "x > 150 OR x < 3").unwrap();
    let expect: Vec<usize> = (0..3).chain(151..200).collect();
    for mode in [
        SelectionMode::UInt16,
        SelectionMode::UInt32,
        SelectionMode::UInt64,
    ] {
        let s = filter.evaluate_with_mode(&b, mode).unwrap();
        assert_eq!(s.mode(), mode);
        assert_eq!(s.iter().collect::<Vec<_>>(), expect);
    }
    let mut reused = broadhead::SelectionVector::new(SelectionMode::UInt32);
    filter.evaluate_into(&b, &mut reused).unwrap();
    filter.evaluate_into(&b.slice(0, 10), &mut reused).unwrap();
    assert_eq!(reused.iter().collect::<Vec<_>>(), vec![0, 1, 2]);
    let filtered = filter.filter_record_batch(&b).unwrap();
    assert_eq!(filtered.num_rows(), expect.len());
}

fn bind_error(sql: &str, schema: &Schema) -> (String, u32) {
    let err = Filter::new(schema, sql).unwrap_err();
    let col = err.span().map(|s| s.column).unwrap_or(0);
    (err.to_string(), col)
}

#[test]
fn error_messages_name_the_problem_and_its_position() {
    let schema = Schema::new(vec![
        Field::new("l_quantity", DataType::Float64, true),
        Field::new("l_discount", DataType::Float64, true),
        Field::new("l_shipdate", DataType::Date32, true),
        Field::new("name", DataType::Utf8, true),
    ]);
    let (msg, col) = bind_error("l_quantiy < 24", &schema);
    assert_eq!(
        msg,
        "unknown column 'l_quantiy' (did you mean 'l_quantity'?) at line 1, column 1"
    );
    assert_eq!(col, 1);
    let (msg, col) = bind_error("l_discount > 0 AND fooo(l_quantity) > 1", &schema);
    assert!(msg.starts_with("unknown function 'fooo'"), "{msg}");
    assert_eq!(col, 20);
    let (msg, _) = bind_error("abs(name) > 1", &schema);
    assert!(
        msg.starts_with("no function matches abs(VARCHAR); candidates: abs(TINYINT) -> TINYINT"),
        "{msg}"
    );
    let (msg, col) = bind_error("l_shipdate >= DATE '1994-13-45'", &schema);
    assert!(msg.contains("1994-13-45"), "{msg}");
    assert_eq!(col, 20, "the position of the malformed text");
    let (msg, _) = bind_error("l_shipdate >= '1994-13-45'", &schema);
    assert!(
        msg.starts_with("invalid DATE literal '1994-13-45'"),
        "{msg}"
    );
    let (msg, _) = bind_error("l_quantity + 1", &schema);
    assert!(
        msg.starts_with("a filter needs a BOOLEAN expression, but this is DOUBLE"),
        "{msg}"
    );
    let (msg, _) = bind_error("l_quantity AND TRUE", &schema);
    assert!(
        msg.starts_with("AND needs BOOLEAN operands, but this is DOUBLE"),
        "{msg}"
    );
    let err = Filter::new(&schema, "l_quantiy < 24").unwrap_err();
    assert_eq!(
        err.render("l_quantiy < 24"),
        "unknown column 'l_quantiy' (did you mean 'l_quantity'?) at line 1, column 1\n  l_quantiy < 24\n  ^^^^^^^^^"
    );
}

#[test]
fn unsupported_syntax_is_a_parse_error_with_a_position() {
    let schema = Schema::new(vec![Field::new("x", DataType::Int64, true)]);
    for sql in ["x >", "x > (SELECT 1)", "", "x + ?", "x @> 'a'"] {
        match Filter::new(&schema, sql) {
            Err(Error::Parse(_)) => {}
            other => panic!("{sql}: expected a parse error, got {other:?}"),
        }
    }
}

#[test]
fn one_filter_evaluated_from_many_threads_gives_identical_results() {
    let n = 10_000;
    let b = batch(vec![
        (
            "x",
            floats(&(0..n).map(|i| (i * 7 % 100) as f64).collect::<Vec<_>>()),
        ),
        (
            "y",
            ints(
                &(0..n)
                    .map(|i| (i % 13 != 0).then_some(i as i64))
                    .collect::<Vec<_>>(),
            ),
        ),
    ]);
    let filter = Filter::new(&b.schema(), "x > 20 AND (y % 3 = 0 OR y IS NULL)").unwrap();
    let expected = filter.evaluate(&b).unwrap();
    assert!(!expected.is_empty());
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let f = filter.clone();
                let b = &b;
                scope.spawn(move || {
                    for i in 0..50 {
                        let slice = b.slice((t * 50 + i) % 100, n - 100);
                        let whole = f.evaluate(b).unwrap();
                        assert_eq!(whole, f.evaluate(b).unwrap());
                        let part = f.evaluate(&slice).unwrap();
                        assert!(part.len() <= whole.len());
                    }
                    f.evaluate(b).unwrap()
                })
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), expected);
        }
    });
}

#[test]
fn compiled_kernels_are_send_sync_and_cheap_to_clone() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Filter>();
    assert_send_sync::<Projector>();
}

#[test]
fn explain_shows_every_stage_and_the_machine_code() {
    let b = batch(vec![("x", floats(&[1.0])), ("d", ints(&[Some(1)]))]);
    let filter = Filter::new(&b.schema(), "x BETWEEN 1 AND 2 AND d IN (1, 2)").unwrap();
    let e = filter.explain().unwrap();
    let text = e.to_string();
    assert!(
        text.contains("parsed:    ((x >= 1) AND (x <= 2) AND (d IN (1, 2)))"),
        "{text}"
    );
    assert!(
        text.contains("typed:     ((x >= 1.0e0) AND (x <= 2.0e0) AND (d IN (1, 2)))"),
        "{text}"
    );
    match e.backend {
        broadhead::Backend::Jit(c) => {
            assert!(c.ir.contains("define i64 @broadhead_kernel"));
            assert!(c.optimized_ir.contains("fcmp"));
            // The kernel's symbol carries its key: `broadhead_kernel_<32 hex digits>:`.
            assert!(c.assembly.lines().any(|l| l
                .strip_prefix("broadhead_kernel_")
                .and_then(|l| l.strip_suffix(':'))
                .is_some_and(|k| k.len() == 32 && k.bytes().all(|b| b.is_ascii_hexdigit()))));
        }
        other => panic!("not compiled: {other:?}"),
    }
    let projector = Projector::new(&b.schema(), &["x * 2", "d + 1"]).unwrap();
    assert!(projector
        .explain()
        .unwrap()
        .to_string()
        .contains("== expression 2 =="));
}

#[test]
fn min_modulo_minus_one_is_zero_but_min_divided_by_minus_one_overflows() {
    let m = batch(vec![
        ("a", ints(&[Some(i64::MIN), Some(3)])),
        ("b", ints(&[Some(-1), Some(0)])),
    ]);
    let r = project("a % b", &m.slice(0, 1)).unwrap();
    assert_eq!(r.as_primitive::<Int64Type>().value(0), 0);
    assert_eq!(
        project("a / b", &m.slice(0, 1)).unwrap_err(),
        "BIGINT division out of range at row 0"
    );
    // With a zero divisor in the batch the interpreter takes its per-row path: same rule.
    assert_eq!(
        project("a % b", &m).unwrap_err(),
        "division by zero at row 1"
    );
    assert_eq!(select("a % b = 0 AND b <> 0", &m), Ok(vec![0]));
}

fn strings(v: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

/// `IS [NOT] NULL` of a computed VARCHAR compiles: the kernel computes the string's
/// validity without the string (it used to fail in code generation).
#[test]
fn is_null_of_a_computed_string_compiles() {
    let b = batch(vec![
        ("s", strings(&[Some("a"), None, Some("b"), None])),
        ("t", strings(&[Some("x"), Some("y"), None, None])),
        (
            "b",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
            ])) as ArrayRef,
        ),
    ]);
    assert_eq!(select("COALESCE(s, t) IS NULL", &b), Ok(vec![3]));
    assert_eq!(select("COALESCE(s, t) IS NOT NULL", &b), Ok(vec![0, 1, 2]));
    assert_eq!(select("NULLIF(s, 'a') IS NULL", &b), Ok(vec![0, 1, 3]));
    assert_eq!(select("if(b, s, t) IS NOT NULL", &b), Ok(vec![0, 1]));
    assert_eq!(
        select("CASE WHEN b THEN s END IS NULL", &b),
        Ok(vec![1, 2, 3])
    );
    assert_eq!(
        select(
            "CASE WHEN b THEN 'k' ELSE COALESCE(t, NULL) END IS NULL",
            &b
        ),
        Ok(vec![2])
    );
    let out = project("COALESCE(NULLIF(s, 'a'), t) IS NULL", &b).unwrap();
    assert_eq!(
        bools(&out),
        vec![Some(false), Some(false), Some(false), Some(true)]
    );
}

/// Errors inside a computed string's operands are raised only where the operand is
/// used, as for every other type.
#[test]
fn is_null_of_a_computed_string_raises_errors_only_where_used() {
    let b = batch(vec![
        ("s", strings(&[Some("a"), None])),
        ("x", ints(&[Some(1), Some(0)])),
    ]);
    assert_eq!(
        select("CASE WHEN x <> 0 AND 1 / x = 1 THEN s END IS NULL", &b),
        Ok(vec![1])
    );
    assert_eq!(
        select("COALESCE(s, CASE WHEN 1 / x = 1 THEN 'k' END) IS NULL", &b),
        Err("division by zero at row 1".into())
    );
    assert_eq!(
        select("COALESCE('k', CASE WHEN 1 / x = 1 THEN s END) IS NULL", &b),
        Ok(vec![])
    );
}

/// A quoted literal has no type of its own: it takes the type of what it meets
/// (PostgreSQL's `unknown`), in comparisons, arithmetic, IN, BETWEEN, CASE and
/// COALESCE.
#[test]
fn string_literals_take_the_type_of_what_they_meet() {
    let b = batch(vec![
        ("q", floats(&[1.0, 5.0, 7.5, f64::NAN])),
        ("i", ints(&[Some(1), Some(5), Some(8), None])),
        (
            "flag",
            Arc::new(BooleanArray::from(vec![
                Some(true),
                Some(false),
                None,
                Some(true),
            ])) as ArrayRef,
        ),
    ]);
    assert_eq!(select("q < '5'", &b), Ok(vec![0]));
    assert_eq!(select("'5' > q", &b), Ok(vec![0]));
    assert_eq!(select("i + '1' = 6", &b), Ok(vec![1]));
    assert_eq!(select("i IN ('1', '8')", &b), Ok(vec![0, 2]));
    assert_eq!(select("q BETWEEN '2' AND '8'", &b), Ok(vec![1, 2]));
    assert_eq!(select("flag = 'yes'", &b), Ok(vec![0, 3]));
    assert_eq!(select("flag AND 't'", &b), Ok(vec![0, 3]));
    assert_eq!(select("'yes'", &b), Ok(vec![0, 1, 2, 3]));
    assert_eq!(select("'off' OR 'on' IS FALSE", &b), Ok(vec![]));
    assert_eq!(
        Filter::new(&b.schema(), "flag AND 'maybe'")
            .unwrap_err()
            .to_string(),
        "invalid BOOLEAN literal 'maybe' at line 1, column 10"
    );
    assert_eq!(
        select("CASE WHEN flag THEN i ELSE '7' END = 7", &b),
        Ok(vec![1, 2])
    );
    assert_eq!(select("COALESCE(i, '9') > 7", &b), Ok(vec![2, 3]));
    assert_eq!(select("NULLIF(i, '5') IS NULL", &b), Ok(vec![1, 3]));
    // NaN and the infinities are spelled as in PostgreSQL, in any case.
    assert_eq!(select("q = 'NaN'", &b), Ok(vec![3]));
    assert_eq!(select("q = 'nan'", &b), Ok(vec![3]));
    assert_eq!(select("q < 'Infinity'", &b), Ok(vec![0, 1, 2]));
    assert_eq!(
        select("q > '-Infinity' AND q < 'inf'", &b),
        Ok(vec![0, 1, 2])
    );
    assert_eq!(select("q > '-INF'", &b), Ok(vec![0, 1, 2, 3]));
}

/// A string that does not parse as the type it meets is a bind error naming the
/// literal, the type and the position; mismatched operators say so in one line.
#[test]
fn type_errors_are_one_line_and_name_the_literal() {
    let schema = Schema::new(vec![
        Field::new("l_quantity", DataType::Float64, true),
        Field::new("l_shipdate", DataType::Date32, true),
        Field::new("t", DataType::Int8, true),
        Field::new("name", DataType::Utf8, true),
    ]);
    let (msg, col) = bind_error("l_quantity < 'abc'", &schema);
    assert_eq!(msg, "invalid DOUBLE literal 'abc' at line 1, column 14");
    assert_eq!(col, 14);
    let (msg, _) = bind_error("t = '300'", &schema);
    assert_eq!(
        msg,
        "TINYINT literal '300' out of range at line 1, column 5"
    );
    let (msg, col) = bind_error("l_quantity IN (1, 'x')", &schema);
    assert_eq!(msg, "invalid DOUBLE literal 'x' at line 1, column 19");
    assert_eq!(col, 19);
    let (msg, _) = bind_error("COALESCE(l_quantity, 'x') > 1", &schema);
    assert_eq!(msg, "invalid DOUBLE literal 'x' at line 1, column 22");
    let (msg, _) = bind_error("l_shipdate > 1994-01-01", &schema);
    assert_eq!(
        msg,
        "cannot compare DATE with BIGINT (hint: write DATE '1994-01-01') at line 1, column 1"
    );
    let (msg, _) = bind_error("l_shipdate IN (19940101)", &schema);
    assert!(
        msg.starts_with(
            "cannot compare DATE with BIGINT (hint: write a date as DATE 'YYYY-MM-DD')"
        ),
        "{msg}"
    );
    let (msg, _) = bind_error("l_shipdate + name IS NULL", &schema);
    assert_eq!(msg, "cannot add DATE and VARCHAR at line 1, column 1");
    let (msg, _) = bind_error("l_shipdate * 2 IS NULL", &schema);
    assert_eq!(msg, "cannot multiply DATE by BIGINT at line 1, column 1");
    let (msg, _) = bind_error("name / 2 > 1", &schema);
    assert_eq!(msg, "cannot divide VARCHAR by BIGINT at line 1, column 1");
    let (msg, _) = bind_error("name = 5", &schema);
    assert_eq!(
        msg,
        "cannot compare VARCHAR with BIGINT at line 1, column 1"
    );
    let (msg, _) = bind_error("l_quantity LIKE 'a%'", &schema);
    assert_eq!(
        msg,
        "LIKE needs VARCHAR operands, not DOUBLE and VARCHAR at line 1, column 1"
    );
    let (msg, _) = bind_error("l_shipdate + '5' > l_shipdate", &schema);
    assert_eq!(msg, "cannot add DATE and VARCHAR at line 1, column 1");
    assert!(Filter::new(&schema, "l_quantity < '5'").is_ok());
    for sql in ["l_quantity < 'x'", "l_shipdate > 1994-01-01", "name = 5"] {
        let err = Filter::new(&schema, sql).unwrap_err().to_string();
        assert!(!err.contains("candidates"), "{sql}: {err}");
    }
}

/// Two columns of one name: a reference to it is ambiguous; the others still work,
/// by position.
#[test]
fn an_ambiguous_column_name_is_an_error_naming_both_columns() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Int64, true),
        Field::new("a", DataType::Int64, true),
    ]));
    let b = RecordBatch::try_new(
        schema.clone(),
        vec![
            ints(&[Some(1), Some(2)]),
            ints(&[Some(10), Some(20)]),
            ints(&[Some(3), Some(4)]),
        ],
    )
    .unwrap();
    let (msg, col) = bind_error("a > 2", &schema);
    assert_eq!(
        msg,
        "column reference \"a\" is ambiguous: it names columns 1 and 3 at line 1, column 1"
    );
    assert_eq!(col, 1);
    assert!(Projector::new(&schema, &["a + 1"]).is_err());
    assert_eq!(select("b > 15", &b), Ok(vec![1]));
    let out = project("b * 2", &b).unwrap();
    assert_eq!(
        out.as_primitive::<Int64Type>().values().to_vec(),
        vec![20, 40]
    );
}

/// `BETWEEN SYMMETRIC` accepts its bounds in either order (PostgreSQL); a NULL bound
/// gives NULL; `ASYMMETRIC` is the default.
#[test]
fn between_symmetric_swaps_the_bounds() {
    let b = batch(vec![
        (
            "x",
            ints(&[Some(0), Some(1), Some(2), Some(3), Some(4), None]),
        ),
        ("n", ints(&[None, None, None, None, None, None])),
    ]);
    assert_eq!(select("x BETWEEN SYMMETRIC 3 AND 1", &b), Ok(vec![1, 2, 3]));
    assert_eq!(select("x BETWEEN SYMMETRIC 1 AND 3", &b), Ok(vec![1, 2, 3]));
    assert_eq!(select("x BETWEEN 3 AND 1", &b), Ok(vec![]));
    assert_eq!(select("x BETWEEN ASYMMETRIC 3 AND 1", &b), Ok(vec![]));
    assert_eq!(
        select("x BETWEEN ASYMMETRIC 1 AND 3", &b),
        Ok(vec![1, 2, 3])
    );
    assert_eq!(
        select("x NOT BETWEEN SYMMETRIC 3 AND 1", &b),
        Ok(vec![0, 4])
    );
    assert_eq!(
        select("x BETWEEN SYMMETRIC (1 + 2) * 1 AND abs(-1) AND x <> 2", &b),
        Ok(vec![1, 3])
    );
    assert_eq!(
        select(
            "x BETWEEN SYMMETRIC CASE WHEN x > 2 AND x < 4 THEN 9 ELSE 4 END AND 2",
            &b
        ),
        Ok(vec![2, 3, 4])
    );
    let out = project("x BETWEEN SYMMETRIC n AND 2", &b).unwrap();
    assert_eq!(bools(&out), vec![None; 6], "a NULL bound gives NULL");
    let out = project("x NOT BETWEEN SYMMETRIC 2 AND n", &b).unwrap();
    assert_eq!(bools(&out), vec![None; 6]);
}

/// `LargeUtf8` and `Utf8View` columns are read as VARCHAR.
#[test]
fn large_and_view_strings_are_read_as_varchar() {
    use arrow::array::{LargeStringArray, StringViewArray};
    let values = [Some("abc"), None, Some("xyz"), Some("ab")];
    let schema = Arc::new(Schema::new(vec![
        Field::new("l", DataType::LargeUtf8, true),
        Field::new("v", DataType::Utf8View, true),
        Field::new("unused", DataType::LargeUtf8, true),
    ]));
    let b = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(LargeStringArray::from(values.to_vec())),
            Arc::new(StringViewArray::from(values.to_vec())),
            Arc::new(LargeStringArray::from(values.to_vec())),
        ],
    )
    .unwrap();
    let rows = |sql: &str| {
        let filter = Filter::new(&schema, sql).unwrap();
        assert!(filter.is_jit(), "{sql}");
        let mask = filter.evaluate_mask(&b).unwrap();
        let selected: Vec<usize> = filter.evaluate(&b).unwrap().iter().collect();
        assert_eq!(
            selected,
            (0..mask.len())
                .filter(|&i| mask.value(i))
                .collect::<Vec<_>>()
        );
        selected
    };
    assert_eq!(rows("l LIKE 'ab%'"), vec![0, 3]);
    assert_eq!(rows("v > 'b' OR v IS NULL"), vec![1, 2]);
    assert_eq!(rows("l = v AND length(v) = 3"), vec![0, 2]);
    let projector = Projector::new(&schema, &["length(l)", "v", "COALESCE(l, 'none')"]).unwrap();
    let out = projector.evaluate(&b).unwrap();
    assert_eq!(
        out[0]
            .as_primitive::<Int32Type>()
            .iter()
            .collect::<Vec<_>>(),
        vec![Some(3), None, Some(3), Some(2)]
    );
    assert_eq!(
        out[2].as_string::<i32>().iter().collect::<Vec<_>>(),
        vec![Some("abc"), Some("none"), Some("xyz"), Some("ab")]
    );
    let selected = Filter::new(&schema, "v <> 'xyz'")
        .unwrap()
        .evaluate(&b)
        .unwrap();
    let taken = projector.evaluate_selected(&b, &selected).unwrap();
    assert_eq!(taken[0].len(), 2);
}

/// A projection reports the error of the lowest failing row across all outputs,
/// compiled or interpreted (on a tie, the earlier output's): the kernel's own error
/// used to win whatever its row.
#[test]
fn a_projection_reports_the_lowest_failing_row_across_both_back_ends() {
    let b = batch(vec![
        ("i", ints(&[Some(1), Some(i64::MAX), Some(i64::MAX)])),
        ("x", ints(&[Some(0), Some(1), Some(0)])),
    ]);
    let schema = b.schema();
    // A NULL-typed output is interpreted.
    let p = Projector::new(&schema, &["i + 1", "CASE WHEN 1 / x = 1 THEN NULL END"]).unwrap();
    assert!(p.is_jit(0) && !p.is_jit(1));
    let err = p.evaluate(&b).unwrap_err().to_string();
    assert_eq!(err, "division by zero at row 0");
    let selected = broadhead::SelectionVector::UInt32(vec![1, 2]);
    let err = p.evaluate_selected(&b, &selected).unwrap_err().to_string();
    assert_eq!(err, "BIGINT addition out of range at row 1");
    let selected = broadhead::SelectionVector::UInt32(vec![2]);
    let err = p.evaluate_selected(&b, &selected).unwrap_err().to_string();
    assert_eq!(
        err, "BIGINT addition out of range at row 2",
        "a tie: the first output"
    );
    let p = Projector::new(&schema, &["CASE WHEN 1 / x = 1 THEN 'a' END", "i + 1"]).unwrap();
    let err = p.evaluate_selected(&b, &selected).unwrap_err().to_string();
    assert_eq!(err, "division by zero at row 2", "a tie: the first output");
}

#[test]
fn timestamps_in_different_zones_meet_in_case_and_coalesce() {
    // A zoned column and a zone-less literal hold UTC instants alike: COALESCE and
    // CASE take the column's type, keep the instants, and both back ends agree (the
    // interpreter used to fail: "arguments need to have the same data type").
    use arrow::array::{Array, TimestampMillisecondArray};
    let ts: ArrayRef = Arc::new(
        TimestampMillisecondArray::from(vec![Some(1_000), None, Some(3_000)]).with_timezone("UTC"),
    );
    let b = batch(vec![("ts", ts)]);
    let literal = "TIMESTAMP(3) '1970-01-01 00:00:02'";
    let coalesced = project(&format!("COALESCE(ts, {literal})"), &b).unwrap();
    assert_eq!(
        coalesced.data_type(),
        &DataType::Timestamp(arrow::datatypes::TimeUnit::Millisecond, Some("UTC".into()))
    );
    let values = coalesced
        .as_any()
        .downcast_ref::<TimestampMillisecondArray>()
        .unwrap();
    assert_eq!(values.values().to_vec(), vec![1_000, 2_000, 3_000]);
    assert_eq!(coalesced.null_count(), 0);
    assert_eq!(
        select(&format!("COALESCE(ts, {literal}) IS NULL"), &b),
        Ok(vec![])
    );
    let cased = project(
        &format!("CASE WHEN ts IS NULL THEN {literal} ELSE ts END"),
        &b,
    )
    .unwrap();
    assert_eq!(cased.to_data(), coalesced.to_data());
}

#[test]
fn comparisons_with_integer_literals_outside_the_type_are_decided_not_errors() {
    // PostgreSQL and DuckDB compare in a wider type: no BIGINT exceeds 2^64 - 1, so
    // the answer is known for every non-NULL value (it used to be "cast to BIGINT out
    // of range" on every row).
    let b = batch(vec![(
        "x",
        ints(&[Some(-5), Some(0), None, Some(i64::MAX)]),
    )]);
    let big = "18446744073709551615";
    assert_eq!(select(&format!("x > {big}"), &b), Ok(vec![]));
    assert_eq!(select(&format!("x >= {big}"), &b), Ok(vec![]));
    assert_eq!(select(&format!("x = {big}"), &b), Ok(vec![]));
    assert_eq!(select(&format!("x < {big}"), &b), Ok(vec![0, 1, 3]));
    assert_eq!(select(&format!("x <> {big}"), &b), Ok(vec![0, 1, 3]));
    assert_eq!(select(&format!("{big} > x"), &b), Ok(vec![0, 1, 3]));
    assert_eq!(select(&format!("{big} <= x"), &b), Ok(vec![]));
    assert_eq!(
        select(&format!("x BETWEEN 0 AND {big}"), &b),
        Ok(vec![1, 3])
    );
    let out = project(&format!("x < {big}"), &b).unwrap();
    assert_eq!(
        bools(&out),
        vec![Some(true), Some(true), None, Some(true)],
        "NULL stays NULL"
    );
    // Below the range of an unsigned column.
    let u: ArrayRef = Arc::new(arrow::array::UInt8Array::from(vec![
        Some(0),
        None,
        Some(255),
    ]));
    let b = batch(vec![("u", u)]);
    assert_eq!(select("u > -1", &b), Ok(vec![0, 2]));
    assert_eq!(select("u = -1", &b), Ok(vec![]));
    assert_eq!(select("-1 < u", &b), Ok(vec![0, 2]));
    assert_eq!(select("u < 256", &b), Ok(vec![0, 2]));
    // Errors in the other operand are still raised where it is used.
    let b = batch(vec![("x", ints(&[Some(i64::MAX)]))]);
    assert_eq!(
        select(&format!("x + 1 < {big}"), &b),
        Err("BIGINT addition out of range at row 0".to_string())
    );
}

/// TRY_CAST: rows whose conversion fails are NULL, the operand's own errors are still
/// raised, and a string literal that is not a value of the type is a NULL (both back
/// ends: tests/functions_cast.rs compares them).
#[test]
fn try_cast_makes_failed_conversions_null() {
    let b = batch(vec![("x", ints(&[Some(1), Some(300), None, Some(-5)]))]);
    let schema = b.schema();
    let run = |sql: &str| {
        let projector = Projector::new(&schema, &[sql]).map_err(|e| e.to_string())?;
        projector
            .evaluate(&b)
            .map(|mut v| v.remove(0))
            .map_err(|e| e.to_string())
    };
    let out = run("TRY_CAST(x AS TINYINT)").unwrap();
    let out = out.as_primitive::<Int8Type>();
    assert_eq!(
        out.iter().collect::<Vec<_>>(),
        vec![Some(1), None, None, Some(-5)]
    );
    assert_eq!(
        run("TRY_CAST(x * 9223372036854775807 AS TINYINT)").unwrap_err(),
        "BIGINT multiplication out of range at row 1"
    );
    let out = run("TRY_CAST('abc' AS INTEGER)").unwrap();
    assert_eq!(out.null_count(), 4);
    let out = run("TRY_CAST('12' AS INTEGER)").unwrap();
    assert_eq!(out.as_primitive::<Int32Type>().value(3), 12);
    assert!(run("TRY_CAST(x AS DATE)")
        .unwrap_err()
        .starts_with("cannot cast BIGINT to DATE"));
}

/// An INTERVAL literal (or a string cast to INTERVAL) projects as Arrow's
/// `Interval(MonthDayNano)`.
#[test]
fn interval_literals_project_as_month_day_nano() {
    use arrow::datatypes::{IntervalMonthDayNano, IntervalMonthDayNanoType};
    let b = batch(vec![("x", ints(&[Some(1), None]))]);
    for (sql, expected) in [
        ("INTERVAL '1 day'", IntervalMonthDayNano::new(0, 1, 0)),
        (
            "CAST('1 year 2 hours' AS INTERVAL)",
            IntervalMonthDayNano::new(12, 0, 7_200_000_000_000),
        ),
        ("INTERVAL 3 MONTH", IntervalMonthDayNano::new(3, 0, 0)),
    ] {
        let projector = Projector::new(&b.schema(), &[sql]).unwrap();
        let out = projector.evaluate(&b).unwrap().remove(0);
        let out = out.as_primitive::<IntervalMonthDayNanoType>();
        assert_eq!(out.values().to_vec(), vec![expected; 2], "{sql}");
    }
}

fn texts(a: &ArrayRef) -> Vec<Option<String>> {
    let text = arrow::compute::cast(a, &DataType::Utf8).unwrap();
    text.as_string::<i32>()
        .iter()
        .map(|s| s.map(str::to_string))
        .collect()
}

/// TIME of every unit: literals, comparisons across units, fields, casts, and
/// arithmetic with intervals that wraps around midnight (expectations checked
/// against DuckDB and PostgreSQL's documentation).
#[test]
fn times_compare_extract_cast_and_wrap_around_midnight() {
    use arrow::array::{
        Time32MillisecondArray, Time32SecondArray, Time64MicrosecondArray, Time64NanosecondArray,
        TimestampMicrosecondArray,
    };
    let s: ArrayRef = Arc::new(Time32SecondArray::from(vec![
        Some(0),
        Some(45_000),
        None,
        Some(86_399),
        Some(3_600),
    ]));
    let ms: ArrayRef = Arc::new(Time32MillisecondArray::from(vec![
        Some(500),
        Some(45_000_500),
        Some(1),
        None,
        Some(84_600_000),
    ]));
    let us: ArrayRef = Arc::new(Time64MicrosecondArray::from(vec![
        Some(0),
        Some(45_000_000_250),
        Some(1),
        Some(86_399_999_999),
        None,
    ]));
    let ns: ArrayRef = Arc::new(Time64NanosecondArray::from(vec![
        Some(1),
        None,
        Some(0),
        Some(86_399_000_000_000),
        Some(3_600_000_000_000),
    ]));
    // 2024-02-29 13:45:30.25 UTC, and 1969-12-31 23:00:00 UTC.
    let ts: ArrayRef = Arc::new(
        TimestampMicrosecondArray::from(vec![
            Some(1_709_214_330_250_000),
            Some(-3_600_000_000),
            None,
            Some(0),
            Some(1),
        ])
        .with_timezone("America/New_York"),
    );
    let full = batch(vec![
        ("s", s),
        ("ms", ms),
        ("us", us),
        ("ns", ns),
        ("ts", ts),
    ]);
    for b in [full.clone(), full.slice(1, 4)] {
        let shift = if b.num_rows() == 5 { 0 } else { 1 };
        let rows = |v: &[usize]| -> Result<Vec<usize>, String> {
            Ok(v.iter()
                .filter(|&&i| i >= shift)
                .map(|i| i - shift)
                .collect())
        };
        assert_eq!(select("s < ms", &b), rows(&[0, 1, 4]));
        assert_eq!(select("ms > us", &b), rows(&[0, 1, 2]));
        assert_eq!(select("us = ns", &b), rows(&[]));
        assert_eq!(select("s = TIME '12:30:00'", &b), rows(&[1]));
        assert_eq!(select("us >= '12:30'", &b), rows(&[1, 3]));
        assert_eq!(
            select("ns BETWEEN TIME(9) '00:00:00' AND '01:00'", &b),
            rows(&[0, 2, 4])
        );
        assert_eq!(select("hour(ms) = 23", &b), rows(&[4]));
    }
    let b = full;
    let text = |sql: &str| texts(&project(sql, &b).unwrap());
    let some = |v: &[&str]| v.iter().map(|s| Some(s.to_string())).collect::<Vec<_>>();
    assert_eq!(
        text("CAST(ms AS VARCHAR)"),
        vec![
            Some("00:00:00.5".into()),
            Some("12:30:00.5".into()),
            Some("00:00:00.001".into()),
            None,
            Some("23:30:00".into())
        ]
    );
    assert_eq!(
        text("CAST(us AS VARCHAR)")[1..4],
        some(&["12:30:00.00025", "00:00:00.000001", "23:59:59.999999"])
    );
    assert_eq!(
        text("EXTRACT(second FROM ms)"),
        vec![
            Some("0.5".into()),
            Some("0.5".into()),
            Some("0.001".into()),
            None,
            Some("0.0".into())
        ]
    );
    assert_eq!(
        text("EXTRACT(epoch FROM s)")[..2],
        some(&["0.0", "45000.0"])
    );
    assert_eq!(text("minute(us)")[..2], some(&["0", "30"]));
    // PostgreSQL: time ± interval ignores months and days and wraps around midnight.
    assert_eq!(
        text("CAST(s + INTERVAL '1 month 1 day 1 hour' AS VARCHAR)"),
        vec![
            Some("01:00:00".into()),
            Some("13:30:00".into()),
            None,
            Some("00:59:59".into()),
            Some("02:00:00".into())
        ]
    );
    assert_eq!(
        text("CAST(ns - INTERVAL '2 hours' AS VARCHAR)")[2..],
        some(&["22:00:00", "21:59:59", "23:00:00"])
    );
    // date + time is a timestamp; a timestamp's time of day is read on its zone's
    // wall clock (New York: UTC-5 in winter).
    assert_eq!(
        text("CAST(DATE '2024-02-29' + ms AS VARCHAR)")[..2],
        some(&["2024-02-29 00:00:00.5", "2024-02-29 12:30:00.5"])
    );
    assert_eq!(
        text("CAST(CAST(ts AS TIME) AS VARCHAR)"),
        vec![
            Some("08:45:30.25".into()),
            Some("18:00:00".into()),
            None,
            Some("19:00:00".into()),
            Some("19:00:00.000001".into())
        ]
    );
    assert_eq!(
        text("CAST(CAST(us AS TIME(0)) AS VARCHAR)")[..4],
        some(&["00:00:00", "12:30:00", "00:00:00", "23:59:59"])
    );
    let s: ArrayRef = Arc::new(StringArray::from(vec![Some("12:30"), Some("25:00"), None]));
    let b = batch(vec![("s", s)]);
    assert_eq!(
        project("TRY_CAST(s AS TIME)", &b).map(|a| texts(&a)),
        Ok(vec![Some("12:30:00".into()), None, None])
    );
    assert_eq!(
        project("CAST(s AS TIME)", &b).unwrap_err(),
        "invalid input syntax for type time: \"25:00\" at row 1"
    );
    let (message, _) = bind_error("EXTRACT(year FROM TIME '12:00') = 1", &b.schema());
    assert!(
        message.starts_with("unit \"year\" not supported for type time"),
        "{message}"
    );
    let (message, _) = bind_error("TIME '12:00' = TIME WITH TIME ZONE '12:00'", &b.schema());
    assert!(
        message.contains("TIME WITH TIME ZONE is not supported"),
        "{message}"
    );
}

/// DATE64 columns (milliseconds) are DATEs: compared with dates, timestamps and
/// literals, in date arithmetic, fields and casts.
#[test]
fn date64_columns_are_dates() {
    use arrow::array::Date64Array;
    const DAY: i64 = 86_400_000;
    let d64: ArrayRef = Arc::new(Date64Array::from(vec![
        Some(8766 * DAY),
        None,
        Some(-DAY),
        Some(19_782 * DAY),
    ]));
    let d: ArrayRef = Arc::new(Date32Array::from(vec![8766, 0, 0, 19_783]));
    let full = batch(vec![("d64", d64), ("d", d)]);
    let b = full.slice(1, 3);
    assert_eq!(select("d64 = DATE '1969-12-31'", &b), Ok(vec![1]));
    assert_eq!(select("d64 < d", &b), Ok(vec![1, 2]));
    assert_eq!(select("d64 >= '2024-01-01'", &b), Ok(vec![2]));
    assert_eq!(
        select("d64 < TIMESTAMP '1970-01-01 00:00:00'", &b),
        Ok(vec![1])
    );
    assert_eq!(select("d64 = d", &full), Ok(vec![0]));
    let text = |sql: &str| texts(&project(sql, &full).unwrap());
    assert_eq!(
        text("CAST(d64 AS VARCHAR)"),
        vec![
            Some("1994-01-01".into()),
            None,
            Some("1969-12-31".into()),
            Some("2024-02-29".into())
        ]
    );
    assert_eq!(
        text("year(d64)"),
        vec![
            Some("1994".into()),
            None,
            Some("1969".into()),
            Some("2024".into())
        ]
    );
    assert_eq!(
        text("CAST(d64 + INTERVAL '1 month' AS VARCHAR)")[3],
        Some("2024-03-29 00:00:00".into())
    );
    assert_eq!(text("d - d64")[3], Some("1".into()));
    assert_eq!(text("d64 + 1")[2], Some("1970-01-01".into()));
}

/// `TIMESTAMP WITH TIME ZONE` literals and casts read offsets, `Z` and IANA zone
/// names (the instant they denote, stored in UTC); without a time zone the zone is
/// ignored, as in PostgreSQL.
#[test]
fn time_zone_literals_read_offsets_and_zone_names() {
    use arrow::array::TimestampMicrosecondArray;
    // 1994-01-01 05:00:00 UTC, and 1994-07-01 10:00:00 UTC.
    let ts: ArrayRef = Arc::new(
        TimestampMicrosecondArray::from(vec![
            Some(757_400_400_000_000),
            Some(773_056_800_000_000),
            None,
        ])
        .with_timezone("UTC"),
    );
    let s: ArrayRef = Arc::new(StringArray::from(vec![
        Some("1994-01-01 00:00:00 America/New_York"),
        Some("1994-07-01 12:00:00 Europe/Paris"),
        Some("1994-07-01 12:00:00 Mars/Olympus"),
    ]));
    let b = batch(vec![("ts", ts), ("s", s)]);
    for sql in [
        "ts = TIMESTAMP WITH TIME ZONE '1994-01-01 00:00:00 America/New_York'",
        "ts = TIMESTAMPTZ '1994-01-01 05:00:00Z'",
        "ts = TIMESTAMP WITH TIME ZONE '1994-01-01 07:00:00+02:00'",
        "ts = '1994-01-01 00:00:00-05'",
        "ts = TIMESTAMP WITH TIME ZONE '1994-01-01 05:00:00 UTC'",
    ] {
        assert_eq!(select(sql, &b), Ok(vec![0]), "{sql}");
    }
    // Summer time in Paris (UTC+2).
    assert_eq!(
        select(
            "ts = TIMESTAMP WITH TIME ZONE '1994-07-01 12:00:00 Europe/Paris'",
            &b
        ),
        Ok(vec![1])
    );
    assert_eq!(
        select(
            "TIMESTAMP '1994-01-01 05:00:00 America/New_York' = TIMESTAMP '1994-01-01 05:00:00'",
            &b
        ),
        Ok(vec![0, 1, 2])
    );
    assert_eq!(
        project("TRY_CAST(s AS TIMESTAMP WITH TIME ZONE) = ts", &b).map(|a| bools(&a)),
        Ok(vec![Some(true), Some(true), None])
    );
    let (message, column) = bind_error(
        "ts = TIMESTAMP WITH TIME ZONE '1994-01-01 00:00:00 Mars/Olympus'",
        &b.schema(),
    );
    assert_eq!(
        (message.as_str(), column),
        ("invalid TIMESTAMP WITH TIME ZONE literal '1994-01-01 00:00:00 Mars/Olympus' at line 1, column 31", 31)
    );
}

/// INTERVAL values: `Interval(MonthDayNano)` columns (and `DayTime`, `YearMonth`
/// and `DURATION` columns read as INTERVAL), compared as PostgreSQL (a month is 30
/// days), in arithmetic, fields, casts and added to timestamps; `timestamp -
/// timestamp` is an interval. Compiled (every expression here runs in the kernel, and
/// agrees with the interpreter). Checked against DuckDB and PostgreSQL's
/// documentation.
#[test]
fn intervals_compare_compute_and_move_timestamps() {
    use arrow::array::{
        DurationMicrosecondArray, IntervalDayTimeArray, IntervalMonthDayNanoArray,
        IntervalYearMonthArray, TimestampMicrosecondArray,
    };
    use arrow::datatypes::{IntervalDayTime, IntervalMonthDayNano as Iv};
    const HOUR: i64 = 3_600_000_000_000;
    let iv: ArrayRef = Arc::new(IntervalMonthDayNanoArray::from(vec![
        Some(Iv::new(1, 0, 0)),
        Some(Iv::new(0, 30, 0)),
        None,
        Some(Iv::new(0, 1, 2 * HOUR)),
        Some(Iv::new(0, 0, -HOUR)),
    ]));
    let dt: ArrayRef = Arc::new(IntervalDayTimeArray::from(vec![
        Some(IntervalDayTime::new(1, 500)),
        None,
        Some(IntervalDayTime::new(0, 0)),
        Some(IntervalDayTime::new(-2, 0)),
        Some(IntervalDayTime::new(0, 3_600_000)),
    ]));
    let ym: ArrayRef = Arc::new(IntervalYearMonthArray::from(vec![
        Some(14),
        Some(-1),
        None,
        Some(0),
        Some(12),
    ]));
    let dur: ArrayRef = Arc::new(DurationMicrosecondArray::from(vec![
        Some(1_000_000),
        Some(-5),
        None,
        Some(86_400_000_000),
        Some(0),
    ]));
    // 2024-01-31 10:00:00 UTC
    let ts: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![
        Some(
            1_706_695_200_000_000
        );
        5
    ]));
    let b = batch(vec![
        ("iv", iv),
        ("dt", dt),
        ("ym", ym),
        ("dur", dur),
        ("ts", ts),
    ]);
    assert_eq!(select("iv = INTERVAL '30 days'", &b), Ok(vec![0, 1]));
    assert_eq!(select("iv = '720 hours'", &b), Ok(vec![0, 1]));
    assert_eq!(select("iv > INTERVAL '1 day'", &b), Ok(vec![0, 1, 3]));
    assert_eq!(
        select("iv IN (INTERVAL '1 month', INTERVAL '-60 minutes')", &b),
        Ok(vec![0, 1, 4])
    );
    assert_eq!(select("dur >= INTERVAL '1 second'", &b), Ok(vec![0, 3]));
    assert_eq!(select("dt < ym", &b), Ok(vec![0, 3, 4]));
    let text = |sql: &str| texts(&project(&format!("CAST({sql} AS VARCHAR)"), &b).unwrap());
    let of = |v: &[Option<&str>]| v.iter().map(|s| s.map(str::to_string)).collect::<Vec<_>>();
    assert_eq!(
        text("iv"),
        of(&[
            Some("1 mon"),
            Some("30 days"),
            None,
            Some("1 day 02:00:00"),
            Some("-01:00:00")
        ])
    );
    assert_eq!(
        text("dt"),
        of(&[
            Some("1 day 00:00:00.5"),
            None,
            Some("00:00:00"),
            Some("-2 days"),
            Some("01:00:00")
        ])
    );
    assert_eq!(
        text("ym"),
        of(&[
            Some("1 year 2 mons"),
            Some("-1 mons"),
            None,
            Some("00:00:00"),
            Some("1 year")
        ])
    );
    assert_eq!(
        text("dur"),
        of(&[
            Some("00:00:01"),
            Some("-00:00:00.000005"),
            None,
            Some("24:00:00"),
            Some("00:00:00")
        ])
    );
    assert_eq!(
        text("iv * 1.5"),
        of(&[
            Some("1 mon 15 days"),
            Some("45 days"),
            None,
            Some("1 day 15:00:00"),
            Some("-01:30:00")
        ])
    );
    // A factor that is not a double exactly (a DECIMAL literal) is one, as in
    // PostgreSQL (`interval * double precision`).
    assert_eq!(
        text("iv * 0.1"),
        of(&[
            Some("3 days"),
            Some("3 days"),
            None,
            Some("02:36:00"),
            Some("-00:06:00")
        ])
    );
    assert_eq!(text("iv / 2")[..2], of(&[Some("15 days"), Some("15 days")]));
    assert_eq!(
        text("-iv")[3..],
        of(&[Some("-1 days -02:00:00"), Some("01:00:00")])
    );
    assert_eq!(
        text("iv + INTERVAL '1 hour' - ym")[..2],
        of(&[
            Some("-1 years -1 mons +01:00:00"),
            Some("1 mon 30 days 01:00:00")
        ])
    );
    assert_eq!(
        text("EXTRACT(epoch FROM iv)"),
        of(&[
            Some("2592000"),
            Some("2592000"),
            None,
            Some("93600"),
            Some("-3600")
        ])
    );
    assert_eq!(
        text("EXTRACT(day FROM iv)")[..2],
        of(&[Some("0"), Some("30")])
    );
    assert_eq!(
        text("EXTRACT(hour FROM iv)")[3..],
        of(&[Some("2"), Some("-1")])
    );
    assert_eq!(
        text("EXTRACT(year FROM ym)")[..2],
        of(&[Some("1"), Some("0")])
    );
    // PostgreSQL: months clamped to the month's end, then days, then the time.
    assert_eq!(
        text("ts + iv"),
        of(&[
            Some("2024-02-29 10:00:00"),
            Some("2024-03-01 10:00:00"),
            None,
            Some("2024-02-01 12:00:00"),
            Some("2024-01-31 09:00:00")
        ])
    );
    assert_eq!(
        text("iv + DATE '2024-01-31'")[0],
        Some("2024-02-29 00:00:00".into())
    );
    assert_eq!(text("ts - dur")[3], Some("2024-01-30 10:00:00".into()));
    assert_eq!(
        text("TIMESTAMP '2024-03-01 12:00:00' - ts")[0],
        Some("30 days 02:00:00".into())
    );
    assert_eq!(
        text("ts - TIMESTAMP '2024-02-01 12:00:00'")[0],
        Some("-1 days -02:00:00".into())
    );
    let (message, _) = bind_error("EXTRACT(dow FROM iv) = 1", &b.schema());
    assert!(
        message.starts_with("unit \"dow\" not supported for type interval"),
        "{message}"
    );
    assert_eq!(
        project("iv / 0", &b).unwrap_err(),
        "division by zero at row 0"
    );
}

/// `timestamp + interval` with a zone reads the months and days on the zone's wall
/// clock and adds the time part as a duration (PostgreSQL's rule): one day after
/// noon the day before the spring change in New York is noon again (23 hours later).
#[test]
fn intervals_move_zoned_timestamps_on_the_wall_clock() {
    use arrow::array::{IntervalMonthDayNanoArray, TimestampMicrosecondArray};
    use arrow::datatypes::IntervalMonthDayNano as Iv;
    // 2024-03-09 12:00 EST = 17:00 UTC.
    let ts: ArrayRef = Arc::new(
        TimestampMicrosecondArray::from(vec![Some(1_710_003_600_000_000); 2])
            .with_timezone("America/New_York"),
    );
    let iv: ArrayRef = Arc::new(IntervalMonthDayNanoArray::from(vec![
        Some(Iv::new(0, 1, 0)),
        Some(Iv::new(0, 0, 24 * 3_600_000_000_000)),
    ]));
    let b = batch(vec![("ts", ts), ("iv", iv)]);
    assert_eq!(
        texts(&project("CAST(ts + iv AS VARCHAR)", &b).unwrap()),
        vec![
            Some("2024-03-10 12:00:00-04".to_string()),
            Some("2024-03-10 13:00:00-04".to_string())
        ]
    );
}

/// INTERVALs at the limits of their fields, and durations beyond what 64 bits of
/// nanoseconds hold, in the kernel: comparisons use the whole 128-bit span (a month
/// is 30 days, as PostgreSQL and DuckDB compare), arithmetic beyond a field's range
/// is `interval out of range` naming the first row whose value is used, a duration
/// in seconds whose nanoseconds overflow is an error of its row; every expression
/// here compiles whole (`explain` lists no interpreted subtree).
#[test]
fn intervals_at_their_limits_in_the_kernel() {
    use arrow::array::{DurationNanosecondArray, DurationSecondArray, IntervalMonthDayNanoArray};
    use arrow::datatypes::IntervalMonthDayNano as Iv;
    let iv: ArrayRef = Arc::new(IntervalMonthDayNanoArray::from(vec![
        Some(Iv::new(i32::MAX, i32::MAX, i64::MAX)),
        Some(Iv::new(i32::MIN, 0, 0)),
        Some(Iv::new(0, 0, -1)),
        Some(Iv::new(1, -30, 0)),
        None,
        Some(Iv::new(0, 1, -86_400_000_000_000)),
    ]));
    let secs: ArrayRef = Arc::new(DurationSecondArray::from(vec![
        Some(1),
        Some(-1),
        Some(i64::MAX / 1_000_000_000 + 1),
        Some(0),
        None,
        Some(86_400),
    ]));
    let nanos: ArrayRef = Arc::new(DurationNanosecondArray::from(vec![
        Some(i64::MAX),
        Some(i64::MIN),
        Some(1),
        Some(0),
        None,
        Some(-1),
    ]));
    let b = batch(vec![("iv", iv), ("secs", secs), ("nanos", nanos)]);
    let compiled_whole = |sql: &str, filter: bool| {
        let explanation = if filter {
            Filter::new(&b.schema(), sql).unwrap().explain().unwrap()
        } else {
            Projector::new(&b.schema(), &[sql])
                .unwrap()
                .explain()
                .unwrap()
        };
        assert!(
            matches!(explanation.backend, broadhead::Backend::Jit(_))
                && explanation.interpreted.is_empty(),
            "{sql}: {explanation}"
        );
    };
    for (sql, rows) in [
        ("iv > INTERVAL '0 seconds'", vec![0]),
        // 1 month - 30 days and 1 day - 24 hours are zero.
        ("iv = INTERVAL '0 days'", vec![3, 5]),
        ("iv < INTERVAL '0 days'", vec![1, 2]),
        (
            "iv BETWEEN INTERVAL '-1 microsecond' AND INTERVAL '0 days'",
            vec![2, 3, 5],
        ),
        (
            "iv IN (INTERVAL '-1 nanosecond', INTERVAL '1 month')",
            vec![2],
        ),
        ("iv <> INTERVAL '30 days'", vec![0, 1, 2, 3, 5]),
        ("nanos > INTERVAL '292 years'", vec![0]),
        ("nanos < iv", vec![0, 5]),
        ("COALESCE(nanos, iv) >= INTERVAL '0 days'", vec![0, 2, 3]),
        (
            "CASE WHEN nanos > INTERVAL '0 days' THEN iv ELSE nanos END = iv",
            vec![0, 2, 3],
        ),
        // Row 2's duration overflows, but its value is not used.
        (
            "nanos < INTERVAL '0 days' AND secs > INTERVAL '0 days'",
            vec![5],
        ),
    ] {
        compiled_whole(sql, true);
        assert_eq!(select(sql, &b), Ok(rows), "{sql}");
    }
    for (sql, error) in [
        ("iv + iv", "interval out of range at row 0"),
        ("-iv", "interval out of range at row 1"),
        ("iv - INTERVAL '1 month'", "interval out of range at row 1"),
        (
            "nanos + INTERVAL '1 nanosecond'",
            "interval out of range at row 0",
        ),
    ] {
        compiled_whole(sql, false);
        assert_eq!(
            project(sql, &b).map(|_| ()),
            Err(error.to_string()),
            "{sql}"
        );
    }
    compiled_whole("CAST(secs AS VARCHAR)", false);
    assert_eq!(
        project("CAST(secs AS VARCHAR)", &b).map(|_| ()),
        Err("cast to INTERVAL out of range at row 2".to_string())
    );
    assert_eq!(
        texts(&project("CAST(iv - iv AS VARCHAR)", &b).unwrap())[1..4],
        [
            Some("00:00:00".to_string()),
            Some("00:00:00".to_string()),
            Some("00:00:00".to_string())
        ]
    );
}

/// A string equality whose quick check leaves rows undecided (a literal longer than
/// four bytes) is evaluated after the other operands of its AND, for the rows they
/// left, unless it is shared with another branch: then it is called from one place,
/// as when it is used once (narrowing it would evaluate it twice). Values are the
/// interpreter's either way.
#[test]
fn a_string_condition_two_branches_share_is_evaluated_once() {
    let b = batch(vec![
        ("i", ints(&[Some(1), Some(0), Some(20), None])),
        ("q", floats(&[3.0, 1.0, 5.0, 4.0])),
        (
            "s",
            Arc::new(StringArray::from(vec![
                "DELIVER IN PERSON",
                "DELIVER IN PERSON",
                "NONE",
                "DELIVER IN PERSON",
            ])) as ArrayRef,
        ),
    ]);
    let helper_calls = |sql: &str| match Filter::new(&b.schema(), sql).unwrap().explain() {
        Ok(e) => match e.backend {
            broadhead::Backend::Jit(c) => {
                c.ir.lines()
                    .filter(|l| l.contains("call") && l.contains("@broadhead_str_cmp_literal"))
                    .count()
            }
            other => panic!("{sql} is not compiled: {other:?}"),
        },
        Err(e) => panic!("{sql}: {e}"),
    };
    // `10 / i` can fail, so the optimizer leaves the OR as it is and the two
    // branches share the equality.
    let shared = "(10 / i > 1 AND s = 'DELIVER IN PERSON') OR (q > 2 AND s = 'DELIVER IN PERSON')";
    let once = "q > 2 AND s = 'DELIVER IN PERSON'";
    assert!(helper_calls(once) > 0);
    assert_eq!(helper_calls(shared), helper_calls(once));
    // Row 1 divides by zero where the second branch is FALSE (q = 1): an error.
    assert_eq!(select(shared, &b), Err("division by zero at row 1".into()));
    // Without the zero: 10 / 5 > 1; row 2 fails both branches; row 3's first branch
    // is NULL and its second TRUE.
    let b = batch(vec![
        ("i", ints(&[Some(1), Some(5), Some(20), None])),
        ("q", b.column(1).clone()),
        ("s", b.column(2).clone()),
    ]);
    assert_eq!(select(shared, &b), Ok(vec![0, 1, 3]));
    assert_eq!(select(once, &b), Ok(vec![0, 3]));
}

/// A string predicate without a quick check (`LIKE '%b%'`, a regex, `IN`, a
/// comparison of two columns) is evaluated only for the rows the other operands of
/// its `AND`/`OR` leave undecided: across blocks (more than 16 rows), with NULLs on
/// both sides, the answers are the interpreter's and the ones computed by hand.
#[test]
fn string_predicates_evaluated_for_the_undecided_rows_only_keep_their_answers() {
    let n = 40;
    let q: Vec<f64> = (0..n).map(|r| (r % 5) as f64).collect();
    let s: Vec<Option<&str>> = (0..n)
        .map(|r| match r % 4 {
            0 => Some("abc"),
            1 => None,
            2 => Some("zzz"),
            _ => Some("bob"),
        })
        .collect();
    let t: Vec<Option<&str>> = (0..n)
        .map(|r| if r % 7 == 0 { None } else { Some("bob") })
        .collect();
    let b = batch(vec![
        ("q", floats(&q)),
        ("s", strings(&s)),
        ("t", strings(&t)),
    ]);
    let rows = |f: &dyn Fn(usize) -> bool| (0..n).filter(|&r| f(r)).collect::<Vec<_>>();
    let has_b = |r: usize| r % 4 == 0 || r % 4 == 3;
    assert_eq!(
        select("q = 1 AND s LIKE '%b%'", &b),
        Ok(rows(&|r| r % 5 == 1 && has_b(r)))
    );
    assert_eq!(
        select("q = 1 OR s LIKE '%b%'", &b),
        Ok(rows(&|r| r % 5 == 1 || has_b(r)))
    );
    assert_eq!(
        select("q > 2 AND s LIKE 'a%c'", &b),
        Ok(rows(&|r| r % 5 > 2 && r % 4 == 0))
    );
    assert_eq!(
        select("q < 2 AND s IN ('zzz', 'bob')", &b),
        Ok(rows(&|r| r % 5 < 2 && (r % 4 == 2 || r % 4 == 3)))
    );
    assert_eq!(
        select("q = 3 AND s = t", &b),
        Ok(rows(&|r| r % 5 == 3 && r % 4 == 3 && r % 7 != 0))
    );
    assert_eq!(
        select("NOT (q = 4 AND s LIKE '%b%')", &b),
        Ok(rows(&|r| r % 5 != 4 || (r % 4 != 1 && !has_b(r))))
    );
}
