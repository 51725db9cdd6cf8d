//! INTERVAL expressions in the kernel against the interpreter, per row.
//!
//! ```text
//! cargo run --release --example interval_cost
//! ```
//!
//! Over 8,192-row batches (1,048,576 rows in all, in cache) of an INTERVAL column
//! `iv` (0 to 23 months, 0 to 59 days, a time of day) and a TIMESTAMP column `ts`,
//! it times each expression compiled (`Filter::evaluate_mask`,
//! `Projector::evaluate`) and interpreted (`broadhead::interpret::interpret` of the
//! same bound, optimized tree), and prints the best of 7 runs in nanoseconds per
//! row. The filter compares the 128-bit span of each interval in the kernel; `iv +
//! iv` is field-wise arithmetic in the kernel; `ts + iv` calls `add_interval`'s
//! row function once per 16-row block (calendar months), `iv * 1.5` the row
//! function of `interval * number`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{ArrayRef, IntervalMonthDayNanoArray, RecordBatch, TimestampMicrosecondArray};
use arrow::datatypes::{DataType, Field, IntervalMonthDayNano, IntervalUnit, Schema, TimeUnit};
use broadhead::interpret::interpret;
use broadhead::prepare::{Prepared, Purpose};
use broadhead::{Filter, Projector};

const BATCH: usize = 8_192;
const BATCHES: usize = 128;

fn data() -> Vec<RecordBatch> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("iv", DataType::Interval(IntervalUnit::MonthDayNano), true),
        Field::new("ts", DataType::Timestamp(TimeUnit::Microsecond, None), true),
    ]));
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    (0..BATCHES)
        .map(|_| {
            let iv = IntervalMonthDayNanoArray::from_iter_values((0..BATCH).map(|_| {
                IntervalMonthDayNano::new(
                    next(24) as i32,
                    next(60) as i32,
                    next(86_400) as i64 * 1_000_000_000,
                )
            }));
            // 2000-01-01 to about 2030.
            let ts = TimestampMicrosecondArray::from_iter_values(
                (0..BATCH).map(|_| 946_684_800_000_000 + next(946_080_000) as i64 * 1_000_000),
            );
            let columns: Vec<ArrayRef> = vec![Arc::new(iv), Arc::new(ts)];
            RecordBatch::try_new(schema.clone(), columns).expect("same length")
        })
        .collect()
}

/// The best of 7 runs of `f` over every batch, in nanoseconds per row.
fn best(batches: &[RecordBatch], mut f: impl FnMut(&RecordBatch)) -> f64 {
    (0..7)
        .map(|_| {
            let t = Instant::now();
            for b in batches {
                f(b);
            }
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
        * 1e9
        / (BATCH * BATCHES) as f64
}

fn main() {
    let batches = data();
    let schema = batches[0].schema();
    println!(
        "{:<40} {:>10} {:>12} {:>7}",
        "expression", "jit ns/row", "interp ns/row", "ratio"
    );
    let filter_sql = "iv > INTERVAL '1 month 10 days'";
    let filter = Filter::new(&schema, filter_sql).expect("binds");
    assert!(filter.is_jit() && filter.explain().expect("explains").interpreted.is_empty());
    let prepared = Prepared::parse(filter_sql, &schema, Purpose::Predicate).expect("binds");
    let typed = prepared.optimized();
    let jit = best(&batches, |b| {
        black_box(filter.evaluate_mask(b).expect("runs"));
    });
    let interpreted = best(&batches, |b| {
        black_box(interpret(typed, b).expect("runs"));
    });
    println!(
        "{filter_sql:<40} {jit:>10.2} {interpreted:>12.2} {:>6.1}x",
        interpreted / jit
    );
    for sql in ["iv + iv", "ts + iv", "iv * 1.5"] {
        let projector = Projector::new(&schema, &[sql]).expect("binds");
        assert!(
            projector.is_jit(0)
                && projector
                    .explain()
                    .expect("explains")
                    .interpreted
                    .is_empty()
        );
        let prepared = Prepared::parse(sql, &schema, Purpose::Projection).expect("binds");
        let typed = prepared.optimized();
        let jit = best(&batches, |b| {
            black_box(projector.evaluate(b).expect("runs"));
        });
        let interpreted = best(&batches, |b| {
            black_box(interpret(typed, b).expect("runs"));
        });
        println!(
            "{sql:<40} {jit:>10.2} {interpreted:>12.2} {:>6.1}x",
            interpreted / jit
        );
    }
}
