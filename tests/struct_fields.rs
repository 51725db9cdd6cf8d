//! STRUCT fields (`s.f`, `s['f']`, `struct_extract(s, 'f')`): read as columns of their
//! own, with the NULLs of the structs above them.
//!
//! The oracle is the same data flattened by hand: each field written out as a
//! top-level column, NULL where it or a struct above it is NULL. A predicate on the
//! fields must select what the same predicate on the flattened columns selects, in
//! the kernel and in the interpreter, on sliced batches with NULL structs whose
//! children hold values.

mod common;

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray,
    StructArray,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, Fields, Schema};
use broadhead::interpret::interpret;
use broadhead::prepare::{Prepared, Purpose};
use broadhead::{Filter, Projector};
use common::{same_array, Rng};

fn inner_type() -> DataType {
    DataType::Struct(Fields::from(vec![Field::new("c", DataType::Int32, true)]))
}

fn s_type() -> DataType {
    DataType::Struct(Fields::from(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("b", DataType::Utf8, true),
        Field::new("d", DataType::Float64, true),
        Field::new("inner", inner_type(), true),
    ]))
}

/// A batch with `id` and `s` (NULL structs over children with values), sliced by
/// `offset`; and the same rows flattened by hand: `id, s_a, s_b, s_d, s_inner_c`.
fn batches(seed: u64, len: usize, offset: usize) -> (RecordBatch, RecordBatch) {
    let mut r = Rng::new(seed);
    let n = len + offset;
    let words = ["", "ab", "AB", "héllo", "x", "日本"];
    let s_valid: Vec<bool> = (0..n).map(|_| !r.chance(0.2)).collect();
    let inner_valid: Vec<bool> = (0..n).map(|_| !r.chance(0.2)).collect();
    let a: Vec<Option<i64>> = (0..n)
        .map(|_| (!r.chance(0.15)).then(|| r.below(200) as i64 - 100))
        .collect();
    let b: Vec<Option<&str>> = (0..n)
        .map(|_| (!r.chance(0.15)).then(|| words[r.below(words.len() as u64) as usize]))
        .collect();
    let d: Vec<Option<f64>> = (0..n)
        .map(|_| (!r.chance(0.15)).then(|| (r.below(100) as f64) / 4.0 - 10.0))
        .collect();
    let c: Vec<Option<i32>> = (0..n)
        .map(|_| (!r.chance(0.15)).then(|| r.below(50) as i32))
        .collect();
    let id: Vec<i64> = (0..n as i64).collect();
    let inner = StructArray::new(
        match inner_type() {
            DataType::Struct(f) => f,
            _ => unreachable!(),
        },
        vec![Arc::new(Int32Array::from(c.clone())) as ArrayRef],
        Some(NullBuffer::from(inner_valid.clone())),
    );
    let s = StructArray::new(
        match s_type() {
            DataType::Struct(f) => f,
            _ => unreachable!(),
        },
        vec![
            Arc::new(Int64Array::from(a.clone())) as ArrayRef,
            Arc::new(StringArray::from(b.clone())),
            Arc::new(Float64Array::from(d.clone())),
            Arc::new(inner),
        ],
        Some(NullBuffer::from(s_valid.clone())),
    );
    let nested = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("s", s_type(), true),
        ])),
        vec![Arc::new(Int64Array::from(id.clone())), Arc::new(s)],
    )
    .unwrap()
    .slice(offset, len);
    // By hand: a field is its value where every struct above it is valid.
    let under_s = |i: usize| s_valid[i];
    let under_inner = |i: usize| s_valid[i] && inner_valid[i];
    let rows = offset..n;
    let flat = RecordBatch::try_new(
        Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("s_a", DataType::Int64, true),
            Field::new("s_b", DataType::Utf8, true),
            Field::new("s_d", DataType::Float64, true),
            Field::new("s_inner_c", DataType::Int32, true),
        ])),
        vec![
            Arc::new(Int64Array::from(id[offset..].to_vec())),
            Arc::new(Int64Array::from_iter(
                rows.clone().map(|i| a[i].filter(|_| under_s(i))),
            )),
            Arc::new(StringArray::from_iter(
                rows.clone().map(|i| b[i].filter(|_| under_s(i))),
            )),
            Arc::new(Float64Array::from_iter(
                rows.clone().map(|i| d[i].filter(|_| under_s(i))),
            )),
            Arc::new(Int32Array::from_iter(
                rows.map(|i| c[i].filter(|_| under_inner(i))),
            )),
        ],
    )
    .unwrap();
    (nested, flat)
}

/// A predicate over the fields, written for the nested batch and for the flat one.
fn predicate(r: &mut Rng, depth: u32) -> (String, String) {
    if depth == 0 || r.chance(0.4) {
        let forms: [(&str, &str); 12] = [
            ("s.a < {n}", "s_a < {n}"),
            ("s['a'] + id > {n}", "s_a + id > {n}"),
            ("struct_extract(s, 'a') % 3 = 0", "s_a % 3 = 0"),
            ("s.b = 'ab'", "s_b = 'ab'"),
            ("upper(s.b) = 'AB'", "upper(s_b) = 'AB'"),
            ("length(s.b) > 1", "length(s_b) > 1"),
            ("s.d >= {n}", "s_d >= {n}"),
            ("s.inner.c > {n}", "s_inner_c > {n}"),
            ("S.Inner['c'] IS NULL", "s_inner_c IS NULL"),
            ("s.a IS NOT NULL", "s_a IS NOT NULL"),
            (
                "coalesce(s.a, s.inner.c, -1) = -1",
                "coalesce(s_a, s_inner_c, -1) = -1",
            ),
            ("s.b LIKE '%b%'", "s_b LIKE '%b%'"),
        ];
        let (x, y) = forms[r.below(forms.len() as u64) as usize];
        let n = (r.below(60) as i64 - 20).to_string();
        return (x.replace("{n}", &n), y.replace("{n}", &n));
    }
    let (l1, l2) = predicate(r, depth - 1);
    let (r1, r2) = predicate(r, depth - 1);
    match r.below(3) {
        0 => (format!("({l1}) AND ({r1})"), format!("({l2}) AND ({r2})")),
        1 => (format!("({l1}) OR ({r1})"), format!("({l2}) OR ({r2})")),
        _ => (format!("NOT ({l1})"), format!("NOT ({l2})")),
    }
}

fn mask(filter: &Filter, batch: &RecordBatch) -> BooleanArray {
    filter.evaluate_mask(batch).unwrap()
}

#[test]
fn predicates_on_fields_select_what_the_flattened_columns_select() {
    let mut r = Rng::new(44);
    let mut compiled = 0;
    for case in 0..300u64 {
        let len = [0, 1, 15, 16, 17, 200][(case % 6) as usize];
        let offset = r.below(9) as usize;
        let (nested, flat) = batches(case, len, offset);
        let (sql, flat_sql) = predicate(&mut r, 2);
        let on_fields =
            Filter::new(&nested.schema(), &sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        let on_flat = Filter::new(&flat.schema(), &flat_sql).unwrap();
        let expected = mask(&on_flat, &flat);
        assert_eq!(
            mask(&on_fields, &nested),
            expected,
            "{sql} (len {len}, offset {offset})"
        );
        compiled += usize::from(on_fields.is_jit());
        // The interpreter, on the caller's batch as it is.
        let p = Prepared::parse(&sql, &nested.schema(), Purpose::Predicate).unwrap();
        let interpreted = interpret(p.optimized(), &nested).unwrap();
        let interpreted: Vec<bool> = interpreted
            .as_any()
            .downcast_ref::<BooleanArray>()
            .unwrap()
            .iter()
            .map(|v| v == Some(true))
            .collect();
        let expected: Vec<bool> = expected.iter().map(|v| v == Some(true)).collect();
        assert_eq!(interpreted, expected, "{sql}");
    }
    assert!(compiled > 250, "{compiled} of 300 compiled");
}

#[test]
fn projections_of_fields_equal_the_flattened_columns() {
    for (case, len, offset) in [(1u64, 100usize, 3usize), (2, 17, 0), (3, 0, 5)] {
        let (nested, flat) = batches(case, len, offset);
        let exprs = [
            "s.a",
            "s.b",
            "s.d * 2",
            "s.inner.c",
            "s.a + s.inner.c",
            "upper(s.b)",
        ];
        let flat_exprs = [
            "s_a",
            "s_b",
            "s_d * 2",
            "s_inner_c",
            "s_a + s_inner_c",
            "upper(s_b)",
        ];
        let got = Projector::new(&nested.schema(), &exprs)
            .unwrap()
            .evaluate(&nested)
            .unwrap();
        let want = Projector::new(&flat.schema(), &flat_exprs)
            .unwrap()
            .evaluate(&flat)
            .unwrap();
        for ((g, w), e) in got.iter().zip(&want).zip(exprs) {
            assert!(same_array(g.as_ref(), w.as_ref()), "{e}: {g:?} vs {w:?}");
        }
    }
}

#[test]
fn by_hand_a_field_of_a_null_struct_is_null() {
    // s = NULL at rows 1 and 3, over children that hold 10, 20, 30, 40 and 'w'…'z'.
    let fields = match s_type() {
        DataType::Struct(f) => f,
        _ => unreachable!(),
    };
    let inner = StructArray::new(
        match inner_type() {
            DataType::Struct(f) => f,
            _ => unreachable!(),
        },
        vec![Arc::new(Int32Array::from(vec![1, 2, 3, 4])) as ArrayRef],
        Some(NullBuffer::from(vec![true, true, false, true])),
    );
    let s = StructArray::new(
        fields,
        vec![
            Arc::new(Int64Array::from(vec![10, 20, 30, 40])) as ArrayRef,
            Arc::new(StringArray::from(vec!["w", "x", "y", "z"])),
            Arc::new(Float64Array::from(vec![0.5; 4])),
            Arc::new(inner),
        ],
        Some(NullBuffer::from(vec![true, false, true, false])),
    );
    let schema = Arc::new(Schema::new(vec![Field::new("s", s_type(), true)]));
    let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(s)]).unwrap();
    let out = Projector::new(&schema, &["s.a", "s.b || '!'", "s.inner.c"])
        .unwrap()
        .evaluate(&batch)
        .unwrap();
    assert_eq!(
        *out[0],
        Int64Array::from(vec![Some(10), None, Some(30), None])
    );
    assert_eq!(
        *out[1],
        StringArray::from(vec![Some("w!"), None, Some("y!"), None])
    );
    assert_eq!(*out[2], Int32Array::from(vec![Some(1), None, None, None]));
    let count = |sql: &str| {
        Filter::new(&schema, sql)
            .unwrap()
            .evaluate(&batch)
            .unwrap()
            .len()
    };
    assert_eq!(count("s.a > 0"), 2);
    assert_eq!(count("s.a IS NULL"), 2);
    assert_eq!(count("s.inner.c IS NULL"), 3);
    // Sliced: rows 1..4.
    let sliced = batch.slice(1, 3);
    assert_eq!(
        Filter::new(&schema, "s.a > 0")
            .unwrap()
            .evaluate(&sliced)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn the_columns_read_are_the_struct_columns() {
    let (nested, _) = batches(1, 4, 0);
    let p = Prepared::parse(
        "s.inner.c > 1 AND s.a < 2",
        &nested.schema(),
        Purpose::Predicate,
    )
    .unwrap();
    assert_eq!(p.columns(), vec![1]);
    let p = Prepared::parse("id > 1 OR s.b = 'x'", &nested.schema(), Purpose::Predicate).unwrap();
    assert_eq!(p.columns(), vec![0, 1]);
    assert_eq!(
        p.optimized().display(&nested.schema()).to_string(),
        "((\"id\" > 1) OR (s.b = 'x'))"
    );
}

#[test]
fn bad_field_access_is_a_clear_error() {
    let (nested, _) = batches(1, 4, 0);
    let schema = nested.schema();
    let message = |sql: &str| match Filter::new(&schema, sql) {
        Ok(_) => panic!("{sql} was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(
        message("s.z = 1").contains("s has no field 'z'"),
        "{}",
        message("s.z = 1")
    );
    assert!(message("s.a.x = 1").contains("cannot read field 'x' of s.a, which has type BIGINT"));
    assert!(message("id.x = 1").contains("only a STRUCT has fields"));
    assert!(
        message("s = 1").contains("column 's' is a STRUCT: read its fields (s.a, s['a'])"),
        "{}",
        message("s = 1")
    );
    assert!(message("s.inner = 1").contains("column 's.inner' is a STRUCT"));
    assert!(message("struct_extract(s, id) = 1")
        .contains("struct_extract takes a STRUCT and a quoted field name"));
    assert!(message("(id + 1).x = 1").contains("cannot read a field of"));
    assert!(message("s[1] = 1").contains("list element access"));
    assert!(message("q.a = 1").contains("unknown column 'q'"));
    assert!(message("t.id = 1").contains("t.id: table names are not supported"));
}
