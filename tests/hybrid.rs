//! Node-level fallback: a subtree the JIT does not compile, and that cannot raise an
//! error, is evaluated by the interpreter and read by the kernel as an input; the rest
//! of the expression stays compiled. A subtree that can fail keeps the whole
//! expression in the interpreter (its errors must come only from the rows that use it).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::interpret::interpret;
use broadhead::prepare::{Prepared, Purpose};
use broadhead::{Backend, Filter, Projector};

fn batch() -> RecordBatch {
    let schema = Schema::new(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("t", DataType::Utf8, true),
    ]);
    let n = 100;
    let a: ArrayRef = Arc::new(Int64Array::from_iter(
        (0..n).map(|i| (i % 7 != 3).then_some(i as i64 - 40)),
    ));
    let b: ArrayRef = Arc::new(Float64Array::from_iter(
        (0..n).map(|i| (i % 11 != 5).then_some((i % 4) as f64)),
    ));
    let words = ["x", "ab", "", "héllo", "x"];
    let s: ArrayRef = Arc::new(StringArray::from_iter(
        (0..n).map(|i| (i % 5 != 1).then_some(words[i % words.len()])),
    ));
    let t: ArrayRef = Arc::new(StringArray::from_iter(
        (0..n).map(|i| (i % 3 != 0).then_some(words[(i / 2) % words.len()])),
    ));
    RecordBatch::try_new(Arc::new(schema), vec![a, b, s, t]).unwrap()
}

fn interpreted(sql: &str, batch: &RecordBatch, purpose: Purpose) -> ArrayRef {
    let p = Prepared::parse(sql, &batch.schema(), purpose).unwrap();
    interpret(p.optimized(), batch).unwrap()
}

/// The filter compiles with `nodes` interpreted, and selects what the interpreter does.
fn hybrid_filter(sql: &str, nodes: &[&str]) {
    let b = batch();
    let f = Filter::new(&b.schema(), sql).unwrap();
    let explanation = f.explain().unwrap();
    assert!(f.is_jit(), "{sql}: {explanation}");
    let got: Vec<&str> = explanation
        .interpreted
        .iter()
        .map(|n| n.node.as_str())
        .collect();
    assert_eq!(got, nodes, "{sql}");
    let want = interpreted(sql, &b, Purpose::Predicate);
    let want: Vec<usize> = (0..b.num_rows())
        .filter(|&i| want.as_boolean().is_valid(i) && want.as_boolean().value(i))
        .collect();
    assert_eq!(
        f.evaluate(&b).unwrap().iter().collect::<Vec<_>>(),
        want,
        "{sql}"
    );
    assert_eq!(
        f.evaluate_mask(&b).unwrap().true_count(),
        want.len(),
        "{sql} as a mask"
    );
}

// TRY_CAST is what the JIT does not lower today (its conversions are the
// interpreter's): the subtrees below use it to stand for any construct the JIT lacks.

#[test]
fn a_value_the_jit_lacks_is_interpreted() {
    hybrid_filter(
        "TRY_CAST(b AS INTEGER) > 1 AND a > 0",
        &["TRY_CAST(b AS INTEGER)"],
    );
    hybrid_filter(
        "CASE WHEN a > 0 THEN TRY_CAST(b AS SMALLINT) ELSE a END < 3 OR b = 1",
        &["TRY_CAST(b AS SMALLINT)"],
    );
}

#[test]
fn a_boolean_subtree_the_jit_lacks_is_interpreted() {
    hybrid_filter(
        "TRY_CAST(a AS BOOLEAN) AND a < 10",
        &["TRY_CAST(a AS BOOLEAN)"],
    );
    // Two interpreted inputs in one comparison.
    hybrid_filter(
        "TRY_CAST(b AS INTEGER) < TRY_CAST(a AS SMALLINT)",
        &["TRY_CAST(b AS INTEGER)", "TRY_CAST(a AS SMALLINT)"],
    );
}

#[test]
fn projections_compile_around_interpreted_nodes() {
    let b = batch();
    let sql = [
        "CASE WHEN TRY_CAST(a AS BOOLEAN) THEN a * 2 ELSE b END",
        "length(CASE WHEN b > 1 THEN s END) + TRY_CAST(b AS INTEGER)",
        "a + 1",
    ];
    let p = Projector::new(&b.schema(), &sql).unwrap();
    let explanation = p.explain().unwrap();
    for (i, s) in sql.iter().enumerate() {
        assert!(p.is_jit(i), "{s}: {explanation}");
    }
    let text = explanation.to_string();
    assert!(
        text.contains("interpreted: TRY_CAST(a AS BOOLEAN) — TRY_CAST"),
        "{text}"
    );
    assert!(
        text.contains("interpreted: TRY_CAST(b AS INTEGER) — TRY_CAST"),
        "{text}"
    );
    let got = p.evaluate(&b).unwrap();
    for (i, s) in sql.iter().enumerate() {
        let want = interpreted(s, &b, Purpose::Projection);
        assert_eq!(got[i].to_data(), want.to_data(), "{s}");
    }
    // Selected rows: the interpreted inputs are taken like the columns.
    let selection = broadhead::SelectionVector::UInt32(vec![3, 4, 50, 99]);
    let indices = selection.to_array();
    let taken = arrow::compute::take_record_batch(&b, &indices).unwrap();
    let got = p.evaluate_selected(&b, &selection).unwrap();
    for (i, s) in sql.iter().enumerate() {
        let want = interpreted(s, &taken, Purpose::Projection);
        assert_eq!(got[i].to_data(), want.to_data(), "{s} on selected rows");
    }
}

/// A subtree the JIT lacks that can fail (a division inside a TRY_CAST) keeps
/// the whole expression in the interpreter: its error is raised only for the rows
/// that use its value.
#[test]
fn a_subtree_that_can_fail_keeps_the_whole_expression_interpreted() {
    let schema = Arc::new(Schema::new(vec![
        Field::new("b", DataType::Int64, false),
        Field::new("t", DataType::Utf8, false),
    ]));
    let batch = |b: Vec<i64>| {
        let t: Vec<&str> = b.iter().map(|_| "x").collect();
        RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int64Array::from(b)),
                Arc::new(StringArray::from(t)),
            ],
        )
        .unwrap()
    };
    let failing = "TRY_CAST(10 / b AS SMALLINT) = 5";
    let sql = format!("CASE WHEN b = 0 THEN 0 WHEN {failing} THEN 1 ELSE 2 END");
    let p = Projector::new(&schema, &[sql.as_str()]).unwrap();
    let explanation = p.explain().unwrap();
    assert!(!p.is_jit(0), "{explanation}");
    assert!(explanation.interpreted.is_empty(), "{explanation}");
    assert!(
        matches!(&explanation.backend, Backend::Interpreted(r) if r.contains("TRY_CAST")),
        "{explanation}"
    );
    // Rows with b = 0 do not use the division: no error.
    let got = p.evaluate(&batch(vec![1, 0, 2, 0])).unwrap();
    let got: Vec<_> = got[0]
        .as_primitive::<arrow::datatypes::Int64Type>()
        .iter()
        .collect();
    assert_eq!(got, vec![Some(2), Some(0), Some(1), Some(0)]);
    // Unguarded, the division fails on the row where b = 0.
    let f = Filter::new(&schema, failing).unwrap();
    assert!(!f.is_jit(), "{}", f.explain().unwrap());
    let err = f
        .evaluate(&batch(vec![1, 2, 0, 5]))
        .unwrap_err()
        .to_string();
    assert_eq!(err, "division by zero at row 2");
    // Guarded in a filter, it still raises nothing.
    let f = Filter::new(&schema, &format!("b <> 0 AND {failing}")).unwrap();
    assert!(!f.is_jit(), "{}", f.explain().unwrap());
    assert_eq!(f.evaluate(&batch(vec![0, 1, 2])).unwrap().len(), 1);
}

/// Many subtrees the JIT lacks: an `OR` of 5,000 of them (more interpreted inputs
/// than a kernel may have nodes) is interpreted whole, and agrees with the
/// interpreter. (The lowering stays linear: undoing a subtree forgets only what it
/// added, and at most `MAX_JIT_NODES` inputs are searched for repeats.)
#[test]
fn many_interpreted_subtrees_stay_linear() {
    let b = batch();
    let text = (0..5_000)
        .map(|i| format!("TRY_CAST(b AS INTEGER) = {i}"))
        .collect::<Vec<_>>()
        .join(" OR ");
    let f = Filter::new(&b.schema(), &text).unwrap();
    assert!(!f.is_jit());
    let want = interpreted(&text, &b, Purpose::Predicate);
    assert_eq!(
        f.evaluate_mask(&b).unwrap().true_count(),
        want.as_boolean().true_count()
    );
}
