//! What a string predicate costs next to a selective one: `a < 10 AND s LIKE …`
//! against the string predicate alone, over one 8,192-row batch in cache (a DOUBLE
//! `a` uniform in [0, 100), so 10 % of rows pass `a < 10`, and 12 random lowercase
//! letters `s`). A string predicate is evaluated only for the rows the other
//! operands of its `AND` leave undecided, so the first three lines should cost a
//! fraction of the last.
//!
//! ```text
//! cargo run --release --example string_conjuncts
//! ```
//!
//! Prints the best of 5 runs of 500 calls, in ns/row, with the rows selected.

use std::hint::black_box;
use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::{Filter, SelectionMode, SelectionVector};

const ROWS: usize = 8_192;

fn main() -> broadhead::Result<()> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Float64, false),
        Field::new("s", DataType::Utf8, false),
    ]));
    let mut x = 42u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let a: Vec<f64> = (0..ROWS)
        .map(|_| (next() % 10_000) as f64 / 100.0)
        .collect();
    let s: Vec<String> = (0..ROWS)
        .map(|_| {
            (0..12)
                .map(|_| (b'a' + (next() % 26) as u8) as char)
                .collect()
        })
        .collect();
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Float64Array::from(a)),
        Arc::new(StringArray::from(s)),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    for sql in [
        "a < 10 AND s LIKE '%ab%'",
        "a < 10 AND s LIKE 'a%z'",
        "a < 10 AND s IN ('abcdefghijkl', 'mnopqrstuvwx')",
        "s LIKE '%ab%'",
    ] {
        let filter = Filter::new(&schema, sql)?;
        let mut selected = SelectionVector::new(SelectionMode::UInt32);
        // Past the first kernel and its upgrade.
        for _ in 0..1_000 {
            filter.evaluate_into(&batch, &mut selected)?;
        }
        filter.wait_for_kernel();
        let mut best = f64::MAX;
        for _ in 0..5 {
            let start = std::time::Instant::now();
            for _ in 0..500 {
                filter.evaluate_into(black_box(&batch), &mut selected)?;
            }
            best = best.min(start.elapsed().as_nanos() as f64 / 500.0 / ROWS as f64);
        }
        println!("{sql:50} {best:6.3} ns/row ({} rows)", selected.len());
    }
    Ok(())
}
