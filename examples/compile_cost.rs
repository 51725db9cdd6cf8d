//! Compile cost and kernel speed of TPC-H Q6 under both pipelines (medians of 15
//! cold compiles; the kernel timed on one 8,192-row batch), the first compile in the
//! process (LLVM's one-time set-up included) and the cost of a cache hit.
//!
//! ```text
//! cargo run --release --example compile_cost
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Date32Array, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::sql::parse_expr;
use broadhead::{Filter, KernelCache, Pipeline, SelectionMode, SelectionVector};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> broadhead::Result<()> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_discount", DataType::Float64, false),
        Field::new("l_quantity", DataType::Float64, false),
    ]));
    let n = 8192;
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Date32Array::from_iter_values(
            (0..n).map(|i| 8036 + (i * 7919 % 2525)),
        )),
        Arc::new(Float64Array::from_iter_values(
            (0..n).map(|i| (i % 11) as f64 / 100.0),
        )),
        Arc::new(Float64Array::from_iter_values(
            (0..n).map(|i| (i % 50 + 1) as f64),
        )),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(broadhead::Error::Arrow)?;
    let q6 = parse_expr(
        "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
         AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
    )?;
    // The first compile in this process: LLVM's target set-up is paid here.
    let first = {
        let cache = Arc::new(KernelCache::new(4, 1 << 30));
        let t = Instant::now();
        Filter::with_cache(&schema, &q6, &cache)?;
        t.elapsed()
    };
    println!("first compile in the process (O3): {first:?}");
    for pipeline in [Pipeline::O3, Pipeline::Fast] {
        let (mut total, mut opt, mut cg) = (Vec::new(), Vec::new(), Vec::new());
        let mut filter = None;
        for _ in 0..15 {
            let cache = Arc::new(KernelCache::new(4, 1 << 30).with_pipeline(pipeline));
            let t = Instant::now();
            let f = Filter::with_cache(&schema, &q6, &cache)?;
            total.push(t.elapsed());
            opt.push(f.compile_timings().optimize);
            cg.push(f.compile_timings().codegen);
            filter = Some(f);
        }
        let filter = filter.expect("compiled");
        let mut sel = SelectionVector::new(SelectionMode::UInt32);
        let reps = 2000;
        let mut runs = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..reps {
                filter.evaluate_into(&batch, &mut sel)?;
            }
            runs.push(t.elapsed() / reps);
        }
        println!(
            "{pipeline:?}: compile {:?} (optimization {:?}, machine code {:?}); kernel {:.2} ns/row ({} rows selected)",
            median(total),
            median(opt),
            median(cg),
            median(runs).as_secs_f64() * 1e9 / n as f64,
            sel.len()
        );
    }
    cache_hits(&schema, &q6)?;
    Ok(())
}

/// A statement-cache hit (`Filter::new` with text it has seen) and a kernel-cache hit
/// (`Filter::with_cache`: binding and lowering again, then the lookup).
fn cache_hits(schema: &Schema, q6: &broadhead::Expr) -> broadhead::Result<()> {
    let text = q6.to_string();
    Filter::new(schema, &text)?;
    let reps = 10_000u32;
    let mut statement = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reps {
            std::hint::black_box(Filter::new(schema, &text)?);
        }
        statement.push(t.elapsed() / reps);
    }
    let cache = Arc::new(KernelCache::new(4, 1 << 30));
    Filter::with_cache(schema, q6, &cache)?;
    let mut kernel = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reps / 10 {
            std::hint::black_box(Filter::with_cache(schema, q6, &cache)?);
        }
        kernel.push(t.elapsed() / (reps / 10));
    }
    println!(
        "cache hit: Filter::new of seen text {:?}; Filter::with_cache (bind, lower, kernel lookup) {:?}",
        median(statement),
        median(kernel)
    );
    Ok(())
}
