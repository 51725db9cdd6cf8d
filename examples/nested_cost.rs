//! STRUCT fields and JSON paths in predicates against arrow-rs and a hand loop.
//!
//! ```text
//! cargo run --release --example nested_cost
//! ```
//!
//! Over 8,192-row batches (1,048,576 rows in all) of `s STRUCT(f BIGINT, name
//! VARCHAR)` (NULL in 1 row of 10, its `f` NULL in 1 of 20 more) and `j VARCHAR`
//! holding a JSON object per row (`{"id":…,"a":"x"|"y"|…,"tags":[…],"n":{"v":…}}`),
//! it counts the rows where each predicate is TRUE, and prints the best of 7 runs in
//! nanoseconds per row:
//!
//! - `s.f > 990`: Broadhead's kernel (`Filter::evaluate`), against arrow-rs's
//!   comparison kernel on the child array with the struct's NULLs merged (`cmp::gt`,
//!   `NullBuffer::union`, the count of TRUE), and a hand-written loop over the
//!   child's values and both validity bitmaps;
//! - `j->>'$.a' = 'x'`: Broadhead (a row function: serde_json reading the document
//!   once, keeping only the value at the path), against a hand-written loop that
//!   parses each document into a `serde_json::Value` and compares its `a` (arrow-rs
//!   has no JSON path kernel).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{
    Array, ArrayRef, AsArray, Int64Array, RecordBatch, Scalar, StringArray, StructArray,
};
use arrow::buffer::NullBuffer;
use arrow::compute::kernels::cmp;
use arrow::datatypes::{DataType, Field, Fields, Int64Type, Schema};
use broadhead::Filter;

const BATCH: usize = 8_192;
const BATCHES: usize = 128;

fn s_fields() -> Fields {
    Fields::from(vec![
        Field::new("f", DataType::Int64, true),
        Field::new("name", DataType::Utf8, true),
    ])
}

fn data() -> Vec<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("s", DataType::Struct(s_fields()), true),
        Field::new("j", DataType::Utf8, true),
    ]));
    // A xorshift generator, so the data is the same every run.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    };
    let words = ["x", "y", "zebra", "alpha", "beta"];
    (0..BATCHES)
        .map(|b| {
            let f = Int64Array::from_iter(
                (0..BATCH).map(|_| (next(20) != 0).then(|| next(1000) as i64)),
            );
            let name = StringArray::from_iter_values((0..BATCH).map(|_| words[next(5) as usize]));
            let valid = NullBuffer::from_iter((0..BATCH).map(|_| next(10) != 0));
            let s = StructArray::new(
                s_fields(),
                vec![Arc::new(f) as ArrayRef, Arc::new(name)],
                Some(valid),
            );
            let j = StringArray::from_iter_values((0..BATCH).map(|i| {
                let tags: Vec<String> = (0..next(4))
                    .map(|_| format!("\"{}\"", words[next(5) as usize]))
                    .collect();
                format!(
                    r#"{{"id":{},"a":"{}","tags":[{}],"n":{{"v":{}}}}}"#,
                    b * BATCH + i,
                    words[next(5) as usize],
                    tags.join(","),
                    next(1_000_000) as f64 / 7.0
                )
            }));
            RecordBatch::try_new(schema.clone(), vec![Arc::new(s), Arc::new(j)]).unwrap()
        })
        .collect()
}

/// The best of 7 runs of `f` over every batch, in ns per row, and its count.
fn best(batches: &[RecordBatch], f: impl Fn(&RecordBatch) -> usize) -> (f64, usize) {
    let rows = (BATCH * BATCHES) as f64;
    let mut best = f64::MAX;
    let mut count = 0;
    for _ in 0..7 {
        let start = Instant::now();
        count = batches.iter().map(|b| black_box(f(b))).sum();
        best = best.min(start.elapsed().as_nanos() as f64 / rows);
    }
    (best, count)
}

fn main() {
    let batches = data();
    let schema = batches[0].schema();

    let field = Filter::new(&schema, "s.f > 990").unwrap();
    let (jit, n_jit) = best(&batches, |b| field.evaluate(b).unwrap().len());
    let (arrow_rs, n_arrow) = best(&batches, |b| {
        let s = b.column(0).as_struct();
        let f = s.column(0);
        let gt = cmp::gt(f, &Scalar::new(Int64Array::from(vec![990]))).unwrap();
        let nulls = NullBuffer::union(gt.nulls(), s.nulls());
        match nulls {
            Some(n) => (gt.values() & n.inner()).count_set_bits(),
            None => gt.values().count_set_bits(),
        }
    });
    let (hand, n_hand) = best(&batches, |b| {
        let s = b.column(0).as_struct();
        let f = s.column(0).as_primitive::<Int64Type>();
        let (values, f_nulls, s_nulls) = (f.values(), f.nulls(), s.nulls());
        let mut n = 0;
        for i in 0..values.len() {
            let valid =
                f_nulls.is_none_or(|v| v.is_valid(i)) && s_nulls.is_none_or(|v| v.is_valid(i));
            n += usize::from(valid && values[i] > 990);
        }
        n
    });
    assert_eq!((n_jit, n_arrow), (n_hand, n_hand));
    println!(
        "s.f > 990            broadhead {jit:6.2} ns/row   arrow-rs {arrow_rs:6.2}   hand loop {hand:6.2}   ({n_jit} rows)"
    );

    let json = Filter::new(&schema, "j->>'$.a' = 'x'").unwrap();
    let (ours, n_ours) = best(&batches, |b| json.evaluate(b).unwrap().len());
    let (hand, n_hand) = best(&batches, |b| {
        let j = b.column(1).as_string::<i32>();
        j.iter()
            .filter(|d| {
                d.and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok())
                    .is_some_and(|v| v["a"] == "x")
            })
            .count()
    });
    assert_eq!(n_ours, n_hand);
    println!("j->>'$.a' = 'x'      broadhead {ours:6.1} ns/row   hand loop (serde_json::Value) {hand:6.1}   ({n_ours} rows)");
}
