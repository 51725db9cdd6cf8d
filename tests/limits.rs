//! Expression size: shapes that used to take exponential time and memory (nested
//! NULLIF, BETWEEN, simple CASE, IN with expressions), the documented size limits at
//! their edges, wide IN lists and ORs, and the bound on null-pattern variants.
//!
//! No timing assertions: a linear implementation finishes these at once, the old
//! exponential one ran out of memory on them.

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, UInt8Array,
};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::bind::bind;
use broadhead::expr::{MAX_DEPTH, MAX_NODES};
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::sql::parse_expr;
use broadhead::{
    call, case, col, lit, or, Expr, ExprKind, Filter, KernelCache, Pipeline, Projector,
};

fn schema() -> Schema {
    Schema::new(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Int64, true),
        Field::new("f", DataType::Float64, true),
        Field::new("i", DataType::Int32, true),
        Field::new("u", DataType::UInt8, true),
    ])
}

fn batch() -> RecordBatch {
    let n = 1000;
    let a: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..n).map(|i| (i % 11 != 3).then_some(i % 23 - 3)),
    ));
    let b: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..n).map(|i| (i % 13 != 5).then_some(i % 7)),
    ));
    let specials = [0.0, -0.0, f64::NAN, -f64::NAN, 1.5, f64::INFINITY];
    let f: ArrayRef = Arc::new(Float64Array::from_iter((0..n).map(|i| {
        (i % 17 != 2).then_some(if i % 3 == 0 {
            specials[(i / 3) as usize % specials.len()]
        } else {
            (i % 50) as f64
        })
    })));
    let i32s: ArrayRef = Arc::new(Int32Array::from_iter(
        (0..n).map(|i| (i % 19 != 4).then_some(i as i32 % 100 - 50)),
    ));
    let u: ArrayRef = Arc::new(UInt8Array::from_iter(
        (0..n).map(|i| (i % 29 != 1).then_some((i * 7 % 256) as u8)),
    ));
    RecordBatch::try_new(Arc::new(schema()), vec![a, b, f, i32s, u]).unwrap()
}

/// The interpreter's result for `e` on `b`.
fn interpreted(s: &Schema, e: &Expr, b: &RecordBatch) -> ArrayRef {
    interpret(&optimize(bind(e, s).unwrap()), b).unwrap()
}

/// Projects `e` with the JIT (which must take it when `jit`) and checks the result
/// against the interpreter.
fn project_matches(e: &Expr, jit: bool) {
    let (s, b) = (schema(), batch());
    let p = Projector::from_exprs(&s, std::slice::from_ref(e)).unwrap();
    assert_eq!(p.is_jit(0), jit, "{}", p.explain().unwrap());
    let got = p.evaluate(&b).unwrap();
    let want = interpreted(&s, e, &b);
    assert_eq!(got[0].to_data(), want.to_data(), "{e}");
}

/// Filters with `e` and checks the selected rows against the interpreter.
fn filter_matches(e: &Expr, jit: bool) -> usize {
    let (s, b) = (schema(), batch());
    let f = Filter::from_expr(&s, e).unwrap();
    assert_eq!(f.is_jit(), jit, "{}", f.explain().unwrap());
    let got = f.evaluate_mask(&b).unwrap();
    let want = interpreted(&s, e, &b);
    let want = want.as_any().downcast_ref::<BooleanArray>().unwrap();
    let want: Vec<bool> = want.iter().map(|v| v == Some(true)).collect();
    let got: Vec<bool> = got.iter().map(|v| v == Some(true)).collect();
    assert_eq!(got, want, "{e}");
    got.iter().filter(|&&x| x).count()
}

fn parse(text: &str) -> Expr {
    let e = parse_expr(text).unwrap();
    // Display still round-trips.
    assert_eq!(parse_expr(&e.to_string()).unwrap(), e);
    e
}

// The SQL forms are as deep as sqlparser's recursion limit allows (the sizes the
// issue measured: 22 NULLIFs took 25 s and 7.5 GB); the builder forms go deeper.

#[test]
fn nested_nullif_is_linear() {
    let mut text = "a".to_string();
    for k in 0..22 {
        text = format!("NULLIF({text}, {})", k % 5);
    }
    let e = parse(&text);
    project_matches(&e, true);
    let typed = bind(&e, &schema()).unwrap();
    assert!(typed.display(&schema()).to_string().len() < 100 * text.len());
    // 2^100 nodes if the operand were copied at every level.
    let mut e = col("a");
    for k in 0..100i64 {
        e = call("nullif", vec![e.add(lit(1i64)), lit(k % 7)]);
    }
    project_matches(&e, true);
}

#[test]
fn nested_between_is_linear() {
    let mut text = "a BETWEEN 1 AND 9".to_string();
    for _ in 0..23 {
        text = format!("({text}) BETWEEN FALSE AND TRUE");
    }
    filter_matches(&parse(&text), true);
    let mut e = col("a").between(lit(1i64), lit(9i64));
    for _ in 0..100 {
        e = e.between(lit(false), lit(true));
    }
    filter_matches(&e, true);
    let mut e = col("a");
    // Three levels each: 80 of them stay within MAX_DEPTH.
    for k in 0..80i64 {
        e = e
            .add(lit(1i64))
            .not_between(lit(k % 9), lit(9i64))
            .cast(DataType::Int64);
    }
    project_matches(&e, true);
}

#[test]
fn nested_between_symmetric_is_linear() {
    // Each level uses its operand and both bounds twice; copied, 24 levels would be
    // 2^24 copies of the innermost comparison.
    let mut text = "a BETWEEN SYMMETRIC 9 AND 1".to_string();
    for _ in 0..23 {
        text = format!("({text}) BETWEEN SYMMETRIC TRUE AND FALSE");
    }
    let parsed = parse(&text);
    assert!(parsed.size().0 < 200, "{} nodes", parsed.size().0);
    filter_matches(&parsed, true);
    let mut e = col("a").between_symmetric(lit(9i64), lit(1i64), false);
    for k in 0..100 {
        e = e.between_symmetric(lit(true), lit(false), k % 2 == 0);
    }
    filter_matches(&e, true);
}

#[test]
fn nested_simple_case_is_linear() {
    let mut text = "a".to_string();
    for k in 0..20 {
        text = format!("CASE {text} WHEN 1 THEN {k} WHEN 2 THEN b WHEN 3 THEN 7 ELSE 0 END");
    }
    project_matches(&parse(&text), true);
    let mut e = col("a");
    for k in 0..60i64 {
        e = Expr::new(ExprKind::Case {
            operand: Some(Box::new(e.add(lit(1i64)))),
            branches: vec![
                (lit(1i64), lit(k)),
                (lit(2i64), col("b")),
                (lit(3i64), lit(7i64)),
            ],
            else_expr: Some(Box::new(lit(0i64))),
        });
    }
    project_matches(&e, true);
}

#[test]
fn nested_in_with_expressions_is_linear() {
    let mut e = col("a");
    for _ in 0..60 {
        let probe = e.add(lit(1i64));
        let test = probe.in_list(vec![col("b"), col("b").add(lit(1i64)), lit(3i64)]);
        e = case(vec![(test, lit(1i64))], Some(lit(2i64)));
    }
    project_matches(&e, true);
}

#[test]
fn size_limit_edges() {
    let s = schema();
    // `a IN (…)` with k items is k + 2 nodes.
    let list = |k: usize| col("a").in_list((0..k as i64).map(lit).collect());
    let at = list(MAX_NODES - 2);
    assert_eq!(at.size().0, MAX_NODES);
    let f = Filter::from_expr(&s, &at).unwrap();
    assert!(f.is_jit());
    let over = list(MAX_NODES - 1);
    let err = Filter::from_expr(&s, &over).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "expression too large: {} nodes (limit {MAX_NODES})",
            MAX_NODES + 1
        )),
        "{err}"
    );
    // Depth: NOT nested MAX_DEPTH - 1 times over a comparison is MAX_DEPTH levels
    // (the comparison and its operands are two).
    let nots = |levels: usize| {
        let mut e = col("a").gt(lit(0i64));
        for _ in 0..levels - 2 {
            e = e.not();
        }
        e
    };
    let deepest = nots(MAX_DEPTH);
    assert_eq!(deepest.size().1, MAX_DEPTH);
    filter_matches(&deepest, true);
    let err = Filter::from_expr(&s, &nots(MAX_DEPTH + 1))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(&format!(
            "expression too deeply nested: {} levels (limit {MAX_DEPTH})",
            MAX_DEPTH + 1
        )),
        "{err}"
    );
}

#[test]
fn wide_in_lists_use_a_lookup() {
    for k in [10, 100, 1_000, 10_000] {
        let items: Vec<String> = (0..k).map(|i| i.to_string()).collect();
        let text = format!("a IN ({})", items.join(", "));
        filter_matches(&parse(&text), true);
        let text = format!("a NOT IN ({}, NULL)", items.join(", "));
        filter_matches(&parse(&text), true);
    }
    // Other types, with NULLs, NaN and -0.0 in the lists.
    let floats: Vec<String> = (0..40).map(|i| format!("{i}.0")).collect();
    for text in [
        format!("f IN ({}, CAST('NaN' AS DOUBLE), -0.0)", floats.join(", ")),
        format!("f NOT IN ({}, CAST('NaN' AS DOUBLE))", floats.join(", ")),
        format!("f IN ({}, NULL)", floats.join(", ")),
        format!(
            "i IN ({})",
            (-60..60)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            "u NOT IN ({})",
            (0..200)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            "a * 2 IN ({})",
            (-40..40)
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ] {
        filter_matches(&parse(&text), true);
        project_matches(&parse(&text), true);
    }
}

#[test]
fn long_boolean_in_lists_compile_to_two_comparisons() {
    let list: Vec<Expr> = (0..10_000).map(|i| lit(i % 2 == 0)).collect();
    filter_matches(&col("a").gt(lit(3i64)).in_list(list), true);
}

#[test]
fn wide_or_of_equalities_is_an_in_list() {
    let e = or((0..10_000i64).map(|i| col("a").eq(lit(i))).collect());
    filter_matches(&e, true);
    let text = (0..1000)
        .map(|i| format!("a = {i} OR b = {}", i % 3))
        .collect::<Vec<_>>()
        .join(" OR ");
    filter_matches(&parse(&text), true);
}

#[test]
fn expressions_too_large_to_compile_quickly_are_interpreted() {
    let e = or((0..5_000i64)
        .map(|i| col("a").gt(lit(i)).and(col("b").lt(lit(i))))
        .collect());
    let selected = filter_matches(&e, false);
    assert!(selected > 0);
    let f = Filter::from_expr(&schema(), &e).unwrap();
    let text = f.explain().unwrap().to_string();
    assert!(text.contains("kernel nodes"), "{text}");
    project_matches(&e, false);
}

#[test]
fn null_pattern_variants_are_bounded() {
    let n = 12;
    let mut fields: Vec<Field> = (0..n)
        .map(|k| Field::new(format!("c{k}"), DataType::Int64, true))
        .collect();
    fields.push(Field::new("flag", DataType::Boolean, true));
    let s = Schema::new(fields);
    let mut terms: Vec<Expr> = (0..n)
        .map(|k| col(format!("c{k}")).gt(lit(40i64)))
        .collect();
    terms.push(col("flag").and(col("c0").lt(lit(3i64))));
    let e = or(terms);
    let cache = Arc::new(KernelCache::new(64, 1 << 30).with_pipeline(Pipeline::Fast));
    let f = Filter::with_cache(&s, &e, &cache).unwrap();
    assert!(f.is_jit());
    // One batch without nulls, then one with nulls in each column in turn (the
    // boolean column last), sliced so bitmaps start mid-word.
    for pattern in 0..=n + 1 {
        let mut columns: Vec<ArrayRef> = (0..n)
            .map(|k| {
                let nulls = pattern == k + 1;
                Arc::new(Int64Array::from_iter((0..103i64).map(|r| {
                    let v = (r * (k as i64 + 3)) % 50;
                    (!(nulls && r % 3 == 0)).then_some(v)
                }))) as ArrayRef
            })
            .collect();
        columns.push(Arc::new(BooleanArray::from_iter(
            (0..103).map(|r| (!(pattern == n + 1 && r % 4 == 0)).then_some(r % 5 < 3)),
        )));
        let b = RecordBatch::try_new(Arc::new(s.clone()), columns)
            .unwrap()
            .slice(3, 100);
        let got: Vec<bool> = f
            .evaluate_mask(&b)
            .unwrap()
            .iter()
            .map(|v| v == Some(true))
            .collect();
        let want = interpret(&optimize(bind(&e, &s).unwrap()), &b).unwrap();
        let want = want.as_any().downcast_ref::<BooleanArray>().unwrap();
        let want: Vec<bool> = want.iter().map(|v| v == Some(true)).collect();
        assert_eq!(got, want, "pattern {pattern}");
    }
    // The schema's pattern (all nullable), the no-null one, one more, and then
    // the all-nullable kernel serves every other pattern: three compilations, not 14.
    assert!(cache.stats().misses <= 3, "{:?}", cache.stats());
}

#[test]
fn the_deepest_parseable_chain_compiles_on_a_test_thread() {
    // Left-deep: each `+` nests one level; the parser allows MAX_DEPTH of them.
    let mut depth = MAX_DEPTH;
    let e = loop {
        let text = vec!["a"; depth].join(" + ");
        match parse_expr(&text) {
            Ok(e) => break e,
            Err(_) => depth -= 1,
        }
    };
    assert!(depth > MAX_DEPTH - 8, "{depth}");
    project_matches(&e, true);
}
