//! Differential property tests: random well-typed expressions over random batches;
//! the JIT must give exactly what the interpreter gives (values, NULLs and errors),
//! for filters in all three selection modes and as masks, and for projections (all
//! rows and selected rows); the optimizer must not change the interpreter's answer.

mod common;

use arrow::array::{Array, AsArray, RecordBatch};
use broadhead::bind::{bind, bind_predicate};
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::{
    call, case, col, lit, null, Error, Expr, Filter, Projector, ScalarValue, SelectionMode,
};
use common::{sliced_batch, Rng};
use proptest::prelude::*;

const NUMERIC: &[&str] = &[
    "a", "b", "f32", "i", "j", "k", "i16", "t8", "u8", "u32", "u64",
];
const TYPES: &[arrow::datatypes::DataType] = &[
    arrow::datatypes::DataType::Int8,
    arrow::datatypes::DataType::Int16,
    arrow::datatypes::DataType::Int32,
    arrow::datatypes::DataType::Int64,
    arrow::datatypes::DataType::UInt8,
    arrow::datatypes::DataType::UInt32,
    arrow::datatypes::DataType::Float32,
    arrow::datatypes::DataType::Float64,
];
const PATTERNS: &[&str] = &[
    "a%", "%c", "%b%", "abc", "a_c", "%", "AB%", "h_llo", "%\\%%", "b\\%c", "%É%", "",
];
const WORDS: &[&str] = &["a", "ab", "abc", "AB", "xyz", "héllo", "AIR"];

fn pick<'a, T>(r: &mut Rng, items: &'a [T]) -> &'a T {
    &items[r.below(items.len() as u64) as usize]
}

fn num_literal(r: &mut Rng) -> Expr {
    match r.below(5) {
        0 => lit(0i64),
        1 => lit(r.below(21) as i64 - 10),
        2 => lit((r.below(400) as f64 - 200.0) / 4.0),
        3 => lit(ScalarValue::Float64(*pick(
            r,
            &[0.0, -0.0, f64::NAN, f64::INFINITY],
        ))),
        _ => lit(ScalarValue::Int32(r.below(5) as i32)),
    }
}

fn num(r: &mut Rng, depth: u32) -> Expr {
    let leaf = depth == 0 || r.chance(0.3);
    if leaf {
        return match r.below(6) {
            0 => num_literal(r),
            _ => col(*pick(r, NUMERIC)),
        };
    }
    let d = depth - 1;
    match r.below(12) {
        0..=3 => {
            let (x, y) = (num(r, d), num(r, d));
            match r.below(5) {
                0 => x.add(y),
                1 => x.sub(y),
                2 => x.mul(y),
                3 => x.div(y),
                _ => x.rem(y),
            }
        }
        4 => num(r, d).neg(),
        5 => call("abs", vec![num(r, d)]),
        6 => {
            let else_expr = r.chance(0.7).then(|| num(r, d));
            case(vec![(boolean(r, d), num(r, d))], else_expr)
        }
        7 => call("coalesce", vec![num(r, d), num(r, d)]),
        8 => call("nullif", vec![num(r, d), num(r, d)]),
        9 => num(r, d).cast(pick(r, TYPES).clone()),
        10 => call("length", vec![col("s")]),
        _ => col("d").sub(col("d")),
    }
}

fn boolean(r: &mut Rng, depth: u32) -> Expr {
    let leaf = depth == 0 || r.chance(0.2);
    if leaf {
        return match r.below(8) {
            0 => col("flag"),
            1 => lit(r.chance(0.5)),
            2 => null(),
            3 => col("s").like(lit(*pick(r, PATTERNS))),
            4 => col("d").gt_eq(lit(ScalarValue::Date32(8700 + r.below(800) as i32))),
            5 => col("ts").lt(col("d")),
            _ => {
                let c = col(*pick(r, NUMERIC));
                c.gt(num_literal(r))
            }
        };
    }
    let d = depth - 1;
    match r.below(16) {
        0..=2 => {
            let (x, y) = (num(r, d), num(r, d));
            match r.below(6) {
                0 => x.eq(y),
                1 => x.not_eq(y),
                2 => x.lt(y),
                3 => x.lt_eq(y),
                4 => x.gt(y),
                _ => x.gt_eq(y),
            }
        }
        3 => boolean(r, d).and(boolean(r, d)),
        4 => boolean(r, d).or(boolean(r, d)),
        5 => broadhead::and(vec![boolean(r, d), boolean(r, d), boolean(r, d)]),
        6 => boolean(r, d).not(),
        7 => {
            if r.chance(0.5) {
                num(r, d).is_null()
            } else {
                col(*pick(r, &["s", "flag", "ts"])).is_not_null()
            }
        }
        8 => {
            let mut list: Vec<Expr> = (0..1 + r.below(6)).map(|_| num_literal(r)).collect();
            if r.chance(0.3) {
                list.push(null());
            }
            let x = num(r, d);
            if r.chance(0.3) {
                x.not_in_list(list)
            } else {
                x.in_list(list)
            }
        }
        9 => {
            let p = lit(*pick(r, PATTERNS));
            match r.below(3) {
                0 => col("s").ilike(p),
                1 => col("s").like(p).not(),
                _ => col("s").like(p),
            }
        }
        10 => {
            let other = if r.chance(0.5) {
                lit(*pick(r, WORDS))
            } else {
                col("s")
            };
            match r.below(4) {
                0 => col("s").eq(other),
                1 => col("s").lt(other),
                2 => other.gt_eq(col("s")),
                _ => col("s").not_eq(other),
            }
        }
        11 => {
            let mut list: Vec<Expr> = (0..1 + r.below(4)).map(|_| lit(*pick(r, WORDS))).collect();
            if r.chance(0.2) {
                list.push(null());
            }
            col("s").in_list(list)
        }
        12 => num(r, d).between(num_literal(r), num_literal(r)),
        13 => {
            let b = boolean(r, d);
            call(
                *pick(r, &["is_true", "is_not_true", "is_false", "is_not_false"]),
                vec![b],
            )
        }
        14 => {
            let (x, y) = (num(r, d), num(r, d));
            if r.chance(0.5) {
                x.is_distinct_from(y)
            } else {
                x.is_not_distinct_from(y)
            }
        }
        _ => case(vec![(boolean(r, d), boolean(r, d))], Some(boolean(r, d))),
    }
}

/// VARCHAR-valued expressions: the column, literals, NULL, and `CASE`, `if`,
/// `COALESCE` and `NULLIF` over them (the JIT carries no computed strings).
fn text(r: &mut Rng, depth: u32) -> Expr {
    if depth == 0 || r.chance(0.25) {
        return match r.below(5) {
            0 | 1 => col("s"),
            2 | 3 => lit(*pick(r, WORDS)),
            _ => null(),
        };
    }
    let d = depth - 1;
    match r.below(5) {
        0 => case(vec![(boolean(r, d), text(r, d))], None),
        // `if(c, x, y)` is a CASE with an ELSE.
        1 => case(vec![(boolean(r, d), text(r, d))], Some(text(r, d))),
        2 => call("coalesce", vec![text(r, d), text(r, d)]),
        3 => call("nullif", vec![text(r, d), text(r, d)]),
        _ => case(
            vec![(boolean(r, d), text(r, d)), (boolean(r, d), text(r, d))],
            Some(text(r, d)),
        ),
    }
}

/// Predicates over [`text`]: `IS [NOT] NULL`, comparisons, `IN`, `LIKE`, `length`,
/// `IS DISTINCT FROM`, mixed with the numeric grammar.
fn text_predicate(r: &mut Rng, depth: u32) -> Expr {
    let d = depth.saturating_sub(1);
    let x = text(r, depth);
    match r.below(10) {
        0 => x.is_null(),
        1 => x.is_not_null(),
        2 => x.eq(text(r, d)),
        3 => x.lt(text(r, d)),
        4 => {
            let list = (0..1 + r.below(3)).map(|_| lit(*pick(r, WORDS))).collect();
            x.in_list(list)
        }
        5 => x.like(lit(*pick(r, PATTERNS))),
        6 => call("length", vec![x]).gt(num_literal(r)),
        7 => x.is_distinct_from(text(r, d)),
        8 => x.is_null().and(boolean(r, d)),
        _ => x.is_not_null().or(text_predicate(r, d)),
    }
}

/// Batch shapes: (length, slice offset, NULL probability).
fn shape(r: &mut Rng) -> (usize, usize, f64) {
    let len = *pick(r, &[0usize, 1, 63, 64, 65, 130, 1000]);
    let offset = *pick(r, &[0usize, 0, 3, 64, 67]);
    let null_p = *pick(r, &[0.0, 0.0, 0.1, 0.5]);
    (len, offset, null_p)
}

/// A projection's expected outcome: the arrays, or the error of the lowest failing
/// row (the earlier expression on a tie), as `Projector` reports it.
fn first_error(
    results: Vec<Result<arrow::array::ArrayRef, Error>>,
) -> Result<Vec<arrow::array::ArrayRef>, String> {
    let row = |e: &Error| match e {
        Error::Eval(broadhead::EvalError::DivisionByZero { row }) => *row,
        Error::Eval(broadhead::EvalError::Overflow { row, .. }) => *row,
        _ => usize::MAX,
    };
    let first = results
        .iter()
        .filter_map(|r| r.as_ref().err())
        .min_by_key(|e| row(e));
    match first {
        Some(e) => Err(e.to_string()),
        None => Ok(results.into_iter().map(|r| r.expect("no error")).collect()),
    }
}

/// `Ok(values)` or `Err(message)`.
fn outcome<T>(r: Result<T, Error>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

/// `require_jit`: the expression must compile (else it may be interpreted, but
/// `Filter` must still accept it and agree with the interpreter).
fn check_filter(
    expr: &Expr,
    batch: &RecordBatch,
    require_jit: bool,
) -> Result<bool, TestCaseError> {
    let schema = batch.schema();
    let Ok(typed) = bind_predicate(expr, &schema) else {
        return Ok(false);
    };
    let sql = expr.to_string();
    let reference = outcome(interpret(&typed, batch)).map(|a| {
        let b = a.as_boolean();
        (0..b.len())
            .filter(|&i| b.is_valid(i) && b.value(i))
            .collect::<Vec<usize>>()
    });
    let optimized = outcome(interpret(&optimize(typed), batch)).map(|a| {
        let b = a.as_boolean();
        (0..b.len())
            .filter(|&i| b.is_valid(i) && b.value(i))
            .collect::<Vec<usize>>()
    });
    prop_assert_eq!(
        &optimized,
        &reference,
        "optimizer changed the result of {}",
        sql
    );
    if std::env::var("BH_TRACE").is_ok() {
        eprintln!(
            "FILTER {sql} rows={} nulls={}",
            batch.num_rows(),
            batch
                .columns()
                .iter()
                .map(|c| c.null_count())
                .sum::<usize>()
        );
    }
    let filter =
        Filter::from_expr(&schema, expr).map_err(|e| TestCaseError::fail(format!("{sql}: {e}")))?;
    prop_assert!(
        filter.is_jit() || !require_jit,
        "{} is not compiled: {:?}",
        sql,
        filter.explain().map(|e| e.to_string())
    );
    for mode in [
        SelectionMode::UInt16,
        SelectionMode::UInt32,
        SelectionMode::UInt64,
    ] {
        if batch.num_rows() > mode.max_rows() {
            continue;
        }
        let jit =
            outcome(filter.evaluate_with_mode(batch, mode)).map(|s| s.iter().collect::<Vec<_>>());
        prop_assert_eq!(&jit, &reference, "{} in mode {:?}", sql, mode);
    }
    let mask = outcome(filter.evaluate_mask(batch))
        .map(|m| (0..m.len()).filter(|&i| m.value(i)).collect::<Vec<usize>>());
    prop_assert_eq!(&mask, &reference, "{} as a mask", sql);
    Ok(true)
}

fn check_projection(
    exprs: &[Expr],
    batch: &RecordBatch,
    require_jit: bool,
) -> Result<bool, TestCaseError> {
    let schema = batch.schema();
    let mut typed = Vec::new();
    for e in exprs {
        match bind(e, &schema) {
            Ok(t) => typed.push(t),
            Err(_) => return Ok(false),
        }
    }
    let sql: Vec<String> = exprs.iter().map(|e| e.to_string()).collect();
    let projector = Projector::from_exprs(&schema, exprs)
        .map_err(|e| TestCaseError::fail(format!("{sql:?}: {e}")))?;
    let reference = first_error(typed.iter().map(|t| interpret(t, batch)).collect());
    for (i, t) in typed.iter().enumerate() {
        let opt = outcome(interpret(&optimize(t.clone()), batch));
        match (&opt, outcome(interpret(t, batch))) {
            (Ok(a), Ok(b)) => {
                prop_assert!(common::same_array(a, &b), "optimizer changed {}", sql[i])
            }
            (a, b) => prop_assert_eq!(
                a.as_ref().err(),
                b.as_ref().err(),
                "optimizer changed {}",
                sql[i]
            ),
        }
    }
    for i in 0..exprs.len() {
        if require_jit
            && !matches!(
                typed[i].data_type,
                arrow::datatypes::DataType::Utf8 | arrow::datatypes::DataType::Null
            )
        {
            prop_assert!(projector.is_jit(i), "{} is not compiled", sql[i]);
        }
    }
    let jit = outcome(projector.evaluate(batch));
    match (&jit, &reference) {
        (Ok(j), Ok(r)) => {
            for i in 0..exprs.len() {
                prop_assert!(
                    common::same_array(&j[i], &r[i]),
                    "{}: jit {:?} vs interpreter {:?}",
                    sql[i],
                    j[i],
                    r[i]
                );
            }
        }
        (j, r) => prop_assert_eq!(j.as_ref().err(), r.as_ref().err(), "{:?}", sql),
    }
    // Selected rows: every other row, compacted.
    let selection =
        broadhead::SelectionVector::UInt32((0..batch.num_rows() as u32).step_by(2).collect());
    let indices = selection.to_array();
    let taken = arrow::compute::take_record_batch(batch, &indices).expect("take");
    let jit_sel = projector.evaluate_selected(batch, &selection);
    let reference_sel = first_error(typed.iter().map(|t| interpret(t, &taken)).collect());
    match (outcome(jit_sel), reference_sel) {
        (Ok(j), Ok(r)) => {
            for i in 0..exprs.len() {
                prop_assert!(
                    common::same_array(&j[i], &r[i]),
                    "{} on selected rows",
                    sql[i]
                );
            }
        }
        (Err(_), Err(_)) => {}
        (j, r) => prop_assert!(
            false,
            "{:?}: selected rows: jit {:?}, interpreter {:?}",
            sql,
            j.err(),
            r.err()
        ),
    }
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn jit_filters_match_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let expr = boolean(&mut r, 3);
        let (len, offset, null_p) = shape(&mut r);
        let batch = sliced_batch(seed, len, offset, null_p);
        check_filter(&expr, &batch, true)?;
    }

    #[test]
    fn jit_projections_match_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let exprs = vec![num(&mut r, 3), boolean(&mut r, 2), num(&mut r, 2)];
        let (len, offset, null_p) = shape(&mut r);
        let batch = sliced_batch(seed ^ 1, len, offset, null_p);
        check_projection(&exprs, &batch, true)?;
    }

    /// Whatever the binder accepts, `Filter` and `Projector` accept too (compiled or
    /// interpreted), and give the interpreter's answer: computed strings never reach
    /// the user as an internal error.
    #[test]
    fn every_bound_string_expression_runs_and_matches_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let expr = text_predicate(&mut r, 3);
        let exprs = vec![text(&mut r, 3), text_predicate(&mut r, 2), call("length", vec![text(&mut r, 2)])];
        let (len, offset, null_p) = shape(&mut r);
        let batch = sliced_batch(seed ^ 2, len, offset, null_p);
        check_filter(&expr, &batch, false)?;
        check_projection(&exprs, &batch, false)?;
    }

    /// Node-level fallback: computed strings inside numeric and boolean expressions.
    /// When no part of the expression can fail, it compiles (the parts the JIT lacks
    /// are interpreted for the kernel), and gives the interpreter's answer either way.
    #[test]
    fn hybrid_expressions_compile_and_match_the_interpreter(seed in any::<u64>()) {
        let mut r = Rng::new(seed);
        let expr = text_predicate(&mut r, 3).and(boolean(&mut r, 1));
        let projected = [
            case(vec![(text_predicate(&mut r, 2), num(&mut r, 2))], Some(num(&mut r, 1))),
            call("length", vec![text(&mut r, 3)]).add(num(&mut r, 1)),
        ];
        let (len, offset, null_p) = shape(&mut r);
        let batch = sliced_batch(seed ^ 3, len, offset, null_p);
        let schema = batch.schema();
        let never_fails = |bound: Result<broadhead::typed::TypedExpr, broadhead::BindError>| {
            bound.is_ok_and(|t| !optimize(t).can_error())
        };
        check_filter(&expr, &batch, never_fails(bind_predicate(&expr, &schema)))?;
        for e in &projected {
            check_projection(std::slice::from_ref(e), &batch, never_fails(bind(e, &schema)))?;
        }
    }
}

/// Batches longer than a u16 selection vector can index, and longer than 65,536.
#[test]
fn large_batches_match_the_interpreter() {
    let mut checked = 0;
    for seed in 0..6u64 {
        let mut r = Rng::new(seed * 7919);
        let batch = sliced_batch(seed, 70_001, 5, 0.1);
        let expr = boolean(&mut r, 3);
        if check_filter(&expr, &batch, true).expect("filter matches") {
            checked += 1;
        }
        let exprs = vec![num(&mut r, 3)];
        check_projection(&exprs, &batch, true).expect("projection matches");
    }
    assert!(checked > 0);
    let schema = common::schema();
    let filter = Filter::from_expr(&schema, &col("a").gt(lit(0.0))).expect("compiles");
    let batch = sliced_batch(1, 70_000, 0, 0.0);
    let err = filter
        .evaluate_with_mode(&batch, SelectionMode::UInt16)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "a batch of 70000 rows does not fit a UInt16 selection vector (at most 65536 rows)"
    );
}

/// Most generated expressions must bind, or the properties above test little.
#[test]
fn the_generators_produce_mostly_well_typed_expressions() {
    let schema = common::schema();
    let (mut ok, mut total) = (0, 0);
    for seed in 0..400u64 {
        let mut r = Rng::new(seed);
        total += 2;
        ok += bind_predicate(&boolean(&mut r, 3), &schema).is_ok() as usize;
        ok += bind(&num(&mut r, 3), &schema).is_ok() as usize;
        total += 2;
        ok += bind_predicate(&text_predicate(&mut r, 3), &schema).is_ok() as usize;
        ok += bind(&text(&mut r, 3), &schema).is_ok() as usize;
    }
    assert!(
        ok * 10 >= total * 7,
        "only {ok} of {total} generated expressions bind"
    );
}

/// Found by the projection property: `MIN % -1` is 0 in both back ends, not an error.
#[test]
fn min_modulo_minus_one_is_zero_in_both_back_ends() {
    let seed = 5215841336009491050u64;
    let mut r = Rng::new(seed);
    let exprs = vec![num(&mut r, 3), boolean(&mut r, 2), num(&mut r, 2)];
    let (len, offset, null_p) = shape(&mut r);
    let batch = sliced_batch(seed ^ 1, len, offset, null_p);
    check_projection(&exprs, &batch, true).expect("the JIT matches the interpreter");
}
