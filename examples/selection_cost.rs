//! What a filter's output costs: `a < x` over one 8,192-row batch of doubles in
//! cache, for each pipeline, selectivity and output (a mask, or row indices of each
//! width), in ns/row (medians of 5 runs of 2,000 evaluations). The rows that pass are
//! scattered (the values are a permutation), as after a real predicate.
//!
//! ```text
//! cargo run --release --example selection_cost
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::sql::parse_expr;
use broadhead::{Filter, KernelCache, Pipeline, SelectionMode, SelectionVector};

const ROWS: usize = 8192;
const REPS: u32 = 2000;

/// Median ns/row of `f` run `REPS` times, over 5 runs.
fn ns_per_row(mut f: impl FnMut() -> broadhead::Result<()>) -> broadhead::Result<f64> {
    let mut runs: Vec<Duration> = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..REPS {
            f()?;
        }
        runs.push(t.elapsed() / REPS);
    }
    runs.sort();
    Ok(runs[2].as_secs_f64() * 1e9 / ROWS as f64)
}

fn main() -> broadhead::Result<()> {
    let schema = Schema::new(vec![Field::new("a", DataType::Float64, false)]);
    // i * 4099 mod 8192 visits every row once (4099 is odd): values 0..100 scattered.
    let values: Vec<f64> = (0..ROWS)
        .map(|i| (i * 4099 % ROWS) as f64 * 100.0 / ROWS as f64)
        .collect();
    let batch = RecordBatch::try_new(
        Arc::new(schema.clone()),
        vec![Arc::new(Float64Array::from(values.clone()))],
    )
    .map_err(broadhead::Error::Arrow)?;
    println!("| pipeline | selected | mask | u16 | u32 | u64 |");
    println!("|---|---:|---:|---:|---:|---:|");
    for pipeline in [Pipeline::O3, Pipeline::Quick] {
        let cache = Arc::new(KernelCache::new(16, 1 << 30).with_pipeline(pipeline));
        for percent in [1.0, 10.0, 50.0, 90.0, 100.0] {
            let predicate = parse_expr(&format!("a < {percent}"))?;
            let filter = Filter::with_cache(&schema, &predicate, &cache)?;
            let expected = values.iter().filter(|&&v| v < percent).count();
            let mask = ns_per_row(|| filter.evaluate_mask(&batch).map(|_| ()))?;
            let mut cells = vec![format!("{mask:.3}")];
            for mode in [
                SelectionMode::UInt16,
                SelectionMode::UInt32,
                SelectionMode::UInt64,
            ] {
                let mut out = SelectionVector::new(mode);
                let t = ns_per_row(|| filter.evaluate_into(&batch, &mut out))?;
                assert_eq!(out.len(), expected, "{pipeline:?}, a < {percent}, {mode:?}");
                cells.push(format!("{t:.3}"));
            }
            println!("| {pipeline:?} | {percent}% | {} |", cells.join(" | "));
        }
    }
    Ok(())
}
