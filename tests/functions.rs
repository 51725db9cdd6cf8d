//! The function registry, walked: every signature runs in both back ends on
//! generated data with NULLs (the JIT must compile it, and agree with the
//! interpreter value for value, error for error), and every documented example
//! gives its documented result.

mod common;

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Float32Array, Float64Array,
    Int64Array, RecordBatch, RecordBatchOptions, StringArray,
};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::display::array_value_to_string;
use broadhead::bind::bind;
use broadhead::functions::{self, FuncId, Lowering, Signature};
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::sql::parse_expr;
use broadhead::types::sql_type_name;
use broadhead::Projector;
use common::{same_array, Rng};

/// Strings that exercise case mapping, multi-byte characters, empty strings,
/// whitespace, digits and pattern characters.
const WORDS: &[&str] = &[
    "",
    "a",
    "ab",
    "Abc",
    "héllo",
    "HÉLLO",
    "straße",
    "  pad  ",
    "x,y,,z",
    "42",
    "-3.5",
    "1994-01-01",
    "b%c_d",
    "日本語",
    "ǅungla",
    "a\nb",
];

/// `len` values of `t`, `null_p` of them NULL: small ranges (so that comparisons
/// and equalities happen), extremes and special floats now and then.
fn random_array(t: &DataType, len: usize, r: &mut Rng, null_p: f64) -> ArrayRef {
    let valid = |r: &mut Rng| !r.chance(null_p);
    match t {
        DataType::Utf8 => Arc::new(StringArray::from_iter((0..len).map(|_| {
            let w = WORDS[r.below(WORDS.len() as u64) as usize];
            valid(r).then_some(w)
        }))),
        DataType::Binary => Arc::new(BinaryArray::from_iter((0..len).map(|_| {
            let b = common::BLOBS[r.below(common::BLOBS.len() as u64) as usize];
            valid(r).then_some(b)
        }))),
        DataType::Boolean => Arc::new(BooleanArray::from_iter((0..len).map(|_| {
            let v = r.chance(0.5);
            valid(r).then_some(v)
        }))),
        DataType::Float64 | DataType::Float32 => {
            let specials = [0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e300];
            let a = Float64Array::from_iter((0..len).map(|_| {
                let v = if r.chance(0.1) {
                    specials[r.below(specials.len() as u64) as usize]
                } else {
                    (r.below(4001) as f64 - 2000.0) / 100.0
                };
                valid(r).then_some(v)
            }));
            if *t == DataType::Float32 {
                Arc::new(Float32Array::from_iter(
                    a.iter().map(|v| v.map(|x| x as f32)),
                ))
            } else {
                Arc::new(a)
            }
        }
        DataType::Date32 => Arc::new(Date32Array::from_iter((0..len).map(|_| {
            // Mostly 1967 to 2049; also the extremes of an i32 day, any day, and the
            // years around year 0 (1 BC), where calendars are easy to get wrong.
            let v = match r.below(20) {
                0 => i32::MIN,
                1 => i32::MAX,
                2 => r.below(1 << 32) as u32 as i32,
                3 => -719_468 - 200_000 + r.below(400_000) as i32,
                _ => -1000 + r.below(30_000) as i32,
            };
            valid(r).then_some(v)
        }))),
        DataType::Interval(arrow::datatypes::IntervalUnit::MonthDayNano) => {
            use arrow::datatypes::IntervalMonthDayNano;
            let extremes = [IntervalMonthDayNano::MIN, IntervalMonthDayNano::MAX];
            Arc::new(arrow::array::IntervalMonthDayNanoArray::from_iter(
                (0..len).map(|_| {
                    let v = match r.below(20) {
                        0 | 1 => extremes[r.below(2) as usize],
                        _ => IntervalMonthDayNano::new(
                            r.below(25) as i32 - 12,
                            r.below(61) as i32 - 30,
                            (r.below(97) as i64 - 48) * 1_800_000_000_000,
                        ),
                    };
                    valid(r).then_some(v)
                }),
            ))
        }
        t if broadhead::types::is_time(t) => {
            // Times of day: midnight, the last unit of the day, and random ones.
            let unit = broadhead::types::time_unit(t).expect("a TIME type");
            let per_day = 86_400 * broadhead::types::units_per_second(unit);
            let a = Int64Array::from_iter((0..len).map(|_| {
                let v = match r.below(10) {
                    0 => 0,
                    1 => per_day - 1,
                    _ => r.below(per_day as u64) as i64,
                };
                valid(r).then_some(v)
            }));
            let a: ArrayRef = Arc::new(a);
            let a = match t {
                DataType::Time32(_) => {
                    cast_with_options(&a, &DataType::Int32, &CastOptions::default())
                }
                _ => Ok(a),
            };
            cast_with_options(&a.expect("in range"), t, &CastOptions::default()).expect("a TIME")
        }
        other => {
            // Integers and timestamps: from i64s, out-of-range values made NULL.
            let a = Int64Array::from_iter((0..len).map(|_| {
                let v = match r.below(20) {
                    0 => i64::MAX,
                    1 => i64::MIN,
                    2 => 1_700_000_000_000,
                    // Any of about ±35,000 years of seconds (NULL where the type is
                    // narrower).
                    3 => r.below(1 << 41) as i64 - (1 << 40),
                    _ => r.below(41) as i64 - 20,
                };
                valid(r).then_some(v)
            }));
            let options = CastOptions {
                safe: true,
                ..Default::default()
            };
            cast_with_options(&a, other, &options).expect("integer or timestamp type")
        }
    }
}

/// The SQL of a call of `sig` on columns `c0, c1, …` (one more for variadic ones);
/// the conversions listed as `cast` are written as the syntax they are.
fn call_text(sig: &Signature) -> (String, usize) {
    if sig.name == "cast" {
        return (format!("CAST(c0 AS {})", sql_type_name(&sig.ret)), 1);
    }
    let n = sig.args.len() + usize::from(sig.variadic);
    let args: Vec<String> = (0..n).map(|i| format!("c{i}")).collect();
    (format!("{}({})", sig.name, args.join(", ")), n)
}

fn check_signature(sig: &Signature, seed: u64) {
    let (text, n) = call_text(sig);
    let fields: Vec<Field> = (0..n)
        .map(|i| Field::new(format!("c{i}"), sig.param(i).clone(), true))
        .collect();
    let schema = Arc::new(Schema::new(fields));
    let projector = Projector::new(&schema, &[&text]).unwrap_or_else(|e| panic!("{text}: {e}"));
    // Every function compiles, except those the registry says the interpreter
    // computes (`interpreted(x)`), which the kernel then reads as an input.
    let compiled = !matches!(sig.lowering, Lowering::Interpreted(_));
    let interpreted = projector.explain().unwrap().interpreted.len();
    assert_eq!(
        projector.is_jit(0) && interpreted == 0,
        compiled,
        "{}: the JIT does not compile it (or compiles what it should not)",
        sig.display()
    );
    let typed = optimize(bind(&parse_expr(&text).unwrap(), &schema).unwrap());
    let mut r = Rng::new(seed);
    for (len, null_p) in [(0, 0.0), (1, 0.0), (37, 0.2), (300, 0.1)] {
        let columns: Vec<ArrayRef> = schema
            .fields()
            .iter()
            .map(|f| random_array(f.data_type(), len + 3, &mut r, null_p))
            .collect();
        // Sliced, so offsets are exercised; the row count is explicit for functions
        // without arguments (`pi()`).
        let options = RecordBatchOptions::new().with_row_count(Some(len + 3));
        let batch = RecordBatch::try_new_with_options(schema.clone(), columns, &options)
            .unwrap()
            .slice(3, len);
        let jit = projector.evaluate(&batch).map(|mut v| v.remove(0));
        let reference = interpret(&typed, &batch);
        match (jit, reference) {
            (Ok(a), Ok(b)) => assert!(
                same_array(a.as_ref(), b.as_ref()),
                "{}: JIT and interpreter differ on {batch:?}:\n{a:?}\n{b:?}",
                sig.display()
            ),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", sig.display()),
            (a, b) => panic!("{}: JIT {a:?}, interpreter {b:?}", sig.display()),
        }
    }
}

#[test]
fn every_row_signature_runs_in_the_jit_and_agrees_with_the_interpreter() {
    let mut checked = 0;
    for (k, sig) in functions::signatures().enumerate() {
        if sig.func == FuncId::Row {
            check_signature(sig, k as u64 + 1);
            checked += 1;
        }
    }
    assert!(checked > 0);
}

#[test]
fn every_example_gives_its_documented_result() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int64Array::from(vec![1])) as ArrayRef],
    )
    .unwrap();
    for f in functions::functions() {
        for (sql, expected) in &f.examples {
            let projector =
                Projector::new(&schema, &[sql]).unwrap_or_else(|e| panic!("{sql}: {e}"));
            let result = projector
                .evaluate(&batch)
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
            let shown = array_value_to_string(&result[0], 0).unwrap();
            assert_eq!(&shown, expected, "{sql}");
        }
    }
}

#[test]
fn computed_strings_stay_in_the_jit() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Utf8, true),
        Field::new("t", DataType::Utf8, true),
        Field::new("i", DataType::Int64, true),
    ]));
    let exprs = [
        "upper(s)",
        "upper(s) = 'AB'",
        "substr(s, 1, 2) = 'ab'",
        "s || '-' || t",
        "lower(s) LIKE '%ab%'",
        "CASE WHEN i > 0 THEN s ELSE t END",
        "COALESCE(s, t, 'none')",
        "length(upper(s))",
        "upper(s) IN ('AB', 'HÉLLO')",
        "upper(s) IS NULL",
        "concat(s, NULL, t)",
        "upper(s) IS DISTINCT FROM t",
        "lower(s) ILIKE 'A%'",
    ];
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec![
                Some("ab"),
                None,
                Some("héllo"),
                Some(""),
                Some("xaBy"),
            ])) as ArrayRef,
            Arc::new(StringArray::from(vec![
                Some("t"),
                Some("u"),
                None,
                Some("ab"),
                None,
            ])),
            Arc::new(Int64Array::from(vec![
                Some(1),
                Some(-1),
                None,
                Some(2),
                Some(0),
            ])),
        ],
    )
    .unwrap();
    for text in exprs {
        let projector = Projector::new(&schema, &[text]).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(projector.is_jit(0), "{text} is interpreted");
        let typed = optimize(bind(&parse_expr(text).unwrap(), &schema).unwrap());
        let jit = projector.evaluate(&batch).unwrap().remove(0);
        let reference = interpret(&typed, &batch).unwrap();
        assert!(
            same_array(jit.as_ref(), reference.as_ref()),
            "{text}:\n{jit:?}\n{reference:?}"
        );
    }
    // Hand-computed: the JIT's strings are right, not just equal to the interpreter's.
    let p = Projector::new(&schema, &["s || '-' || t", "upper(s)", "substr(s, 2)"]).unwrap();
    let out = p.evaluate(&batch).unwrap();
    let strings = |a: &ArrayRef| -> Vec<Option<String>> {
        let a = a.as_any().downcast_ref::<StringArray>().unwrap();
        a.iter().map(|v| v.map(str::to_string)).collect()
    };
    let s = |v: &str| Some(v.to_string());
    assert_eq!(
        strings(&out[0]),
        vec![s("ab-t"), None, None, s("-ab"), None]
    );
    assert_eq!(
        strings(&out[1]),
        vec![s("AB"), None, s("HÉLLO"), s(""), s("XABY")]
    );
    assert_eq!(
        strings(&out[2]),
        vec![s("b"), None, s("éllo"), s(""), s("aBy")]
    );
}

#[test]
fn function_errors_name_the_row_and_only_count_where_used() {
    let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, true)]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Float64Array::from(vec![4.0, -1.0, 9.0])) as ArrayRef],
    )
    .unwrap();
    let p = Projector::new(&schema, &["sqrt(x)"]).unwrap();
    assert!(p.is_jit(0));
    let e = p.evaluate(&batch).unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot take square root of a negative number at row 1"
    );
    let p = Projector::new(&schema, &["CASE WHEN x >= 0 THEN sqrt(x) END"]).unwrap();
    let out = p.evaluate(&batch).unwrap();
    let v = out[0].as_any().downcast_ref::<Float64Array>().unwrap();
    assert_eq!(
        v.iter().collect::<Vec<_>>(),
        vec![Some(2.0), None, Some(3.0)]
    );
}

#[test]
fn functions_of_literals_fold_and_run_on_empty_batches() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Utf8, true),
        Field::new("flag", DataType::Boolean, true),
    ]));
    let empty = RecordBatch::new_empty(schema.clone());
    for text in ["flag AND (s = lower(''))", "sqrt(6) IS DISTINCT FROM 6"] {
        let f = broadhead::Filter::new(&schema, text).unwrap();
        assert_eq!(f.evaluate(&empty).unwrap().len(), 0, "{text}");
        let typed = bind(&parse_expr(text).unwrap(), &schema).unwrap();
        assert_eq!(interpret(&typed, &empty).unwrap().len(), 0, "{text}");
    }
    // A failing function of literals fails on every row that uses it.
    let one = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["a", "b"])) as ArrayRef,
            Arc::new(BooleanArray::from(vec![false, true])),
        ],
    )
    .unwrap();
    let typed = bind(&parse_expr("flag AND sqrt(-1) > 0").unwrap(), &schema).unwrap();
    assert_eq!(
        interpret(&typed, &one).unwrap_err().to_string(),
        "cannot take square root of a negative number at row 1"
    );
}
