//! The fixed cost of one call: how long evaluating a batch takes as a function of
//! its size, for filters and a projection whose kernels are compiled already.
//!
//! ```text
//! cargo run --release --example call_overhead
//! ```
//!
//! For each expression and batch size (1, 16, 1,024, 8,192 and 65,536 rows) it
//! prints the median time per call of 7 runs of a loop of calls on the same batch
//! (in cache), and the time per row. Two figures summarize them:
//!
//! * the **fixed cost** of a call, the intercept of the line through the 8,192- and
//!   65,536-row times (what an 8,192-row call costs beyond its rows), and the time
//!   of a 1-row call (the whole call around one 16-row block);
//! * the **per-row ratio** of 1,024-row batches to 65,536-row ones.
//!
//! Filters write into a reused `SelectionVector` (`Filter::evaluate_into`), as a
//! scan does; the projection returns new arrays each call (`Projector::evaluate`).
//! Last, one filter is evaluated by every core at once, against one thread alone.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{ArrayRef, Date32Array, Float64Array, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::{Filter, Projector, SelectionMode, SelectionVector};

const SIZES: [usize; 5] = [1, 16, 1_024, 8_192, 65_536];

fn data() -> RecordBatch {
    let n: i64 = 65_536;
    let schema = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Float64, false),
        Field::new("i", DataType::Int64, true),
        Field::new("j", DataType::Int64, false),
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_discount", DataType::Float64, false),
        Field::new("l_quantity", DataType::Float64, false),
    ]));
    let mut x = 42u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Float64Array::from_iter_values(
            (0..n).map(|_| (next() % 10_000) as f64 / 100.0),
        )),
        Arc::new(Int64Array::from_iter(
            (0..n).map(|r| (r % 10 != 3).then_some(r * 7919 % 1000)),
        )),
        Arc::new(Int64Array::from_iter_values(
            (0..n).map(|r| r * 104_729 % 1000),
        )),
        Arc::new(Date32Array::from_iter_values(
            (0..n).map(|r| 8036 + (r * 7919 % 2525) as i32),
        )),
        Arc::new(Float64Array::from_iter_values(
            (0..n).map(|r| (r % 11) as f64 / 100.0),
        )),
        Arc::new(Float64Array::from_iter_values(
            (0..n).map(|r| (r % 50 + 1) as f64),
        )),
    ];
    RecordBatch::try_new(schema, columns).expect("a valid batch")
}

/// Median nanoseconds per call of `f` over 7 runs of enough calls for ~40 ms each.
fn ns_per_call(mut f: impl FnMut()) -> f64 {
    let start = Instant::now();
    let mut calls = 0u64;
    while start.elapsed().as_millis() < 20 {
        f();
        calls += 1;
    }
    let per_run = (calls * 2).max(1);
    let mut runs: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..per_run {
                f();
            }
            t.elapsed().as_nanos() as f64 / per_run as f64
        })
        .collect();
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn report(name: &str, times: &[(usize, f64)]) {
    println!("{name}");
    println!("  {:>8} {:>12} {:>10}", "rows", "ns/call", "ns/row");
    for &(rows, ns) in times {
        println!("  {rows:>8} {ns:>12.1} {:>10.3}", ns / rows as f64);
    }
    let at = |rows: usize| times.iter().find(|t| t.0 == rows).map(|t| t.1);
    if let (Some(t1), Some(t8k), Some(t64k), Some(t1k)) = (at(1), at(8_192), at(65_536), at(1_024))
    {
        let slope = (t64k - t8k) / (65_536.0 - 8_192.0);
        let fixed = t8k - slope * 8_192.0;
        let ratio = (t1k / 1_024.0) / (t64k / 65_536.0);
        println!(
            "  fixed cost: {fixed:.0} ns (intercept at 8,192 rows), {t1:.0} ns (1-row call); \
             per-row 1,024 / 65,536: {ratio:.2}x"
        );
    }
}

fn main() -> broadhead::Result<()> {
    let batch = data();
    let schema = batch.schema();
    let filters = [
        ("F1 filter: a > 50.0", "a > 50.0"),
        ("F2 filter: a > 2.0 AND a < 6.0", "a > 2.0 AND a < 6.0"),
        ("filter on a nullable column: i > 500", "i > 500"),
        (
            "F3 filter: Q6",
            "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
             AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
        ),
    ];
    for (name, sql) in filters {
        let filter = Filter::new(&schema, sql)?;
        assert!(filter.is_jit());
        let mut out = SelectionVector::new(SelectionMode::UInt32);
        let times: Vec<(usize, f64)> = SIZES
            .iter()
            .map(|&rows| {
                let b = batch.slice(0, rows);
                let ns = ns_per_call(|| {
                    filter
                        .evaluate_into(black_box(&b), &mut out)
                        .expect("evaluates");
                    black_box(out.len());
                });
                (rows, ns)
            })
            .collect();
        report(name, &times);
    }
    let projector = Projector::new(&schema, &["i * 3 + j"])?;
    let times: Vec<(usize, f64)> = SIZES
        .iter()
        .map(|&rows| {
            let b = batch.slice(0, rows);
            let ns = ns_per_call(|| {
                black_box(projector.evaluate(black_box(&b)).expect("evaluates"));
            });
            (rows, ns)
        })
        .collect();
    report("P3 projection: i * 3 + j", &times);
    shared_by_threads(&batch)
}

/// One filter evaluated by every core at once, each on its own 1,024-row batch and
/// selection vector, against one filter per thread (the same work, nothing shared)
/// and one thread alone. Per-call bookkeeping that every thread writes to would
/// show as the difference between the first two.
fn shared_by_threads(batch: &RecordBatch) -> broadhead::Result<()> {
    const Q6: &str = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
                      AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";
    // Each thread takes its own 1,024 rows of the 65,536.
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().min(64));
    let filters: Vec<Filter> = (0..threads)
        .map(|_| Filter::new(&batch.schema(), Q6))
        .collect::<broadhead::Result<_>>()?;
    let run = |filter: &Filter, part: usize| {
        let b = batch.slice(part * 1_024, 1_024);
        let mut out = SelectionVector::new(SelectionMode::UInt32);
        ns_per_call(|| {
            filter
                .evaluate_into(black_box(&b), &mut out)
                .expect("evaluates");
            black_box(out.len());
        })
    };
    // The slowest thread's time per call, with `filter_of(t)` on thread `t`.
    let at_once = |filter_of: &(dyn Fn(usize) -> usize + Sync)| {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let filter = &filters[filter_of(t)];
                    s.spawn(move || run(filter, t))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a measuring thread"))
                .fold(0.0, f64::max)
        })
    };
    let alone = run(&filters[0], 0);
    let separate = at_once(&|t| t);
    let shared = at_once(&|_| 0);
    println!(
        "F3 filter on {threads} threads at once, 1,024-row batches: {alone:.0} ns/call on one \
         thread alone; {separate:.0} with a filter per thread, {shared:.0} with one filter \
         shared (slowest thread)"
    );
    Ok(())
}
