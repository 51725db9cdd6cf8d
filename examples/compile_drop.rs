//! Compiles and drops many distinct kernels and prints the resident memory every
//! 1,000 cycles: a flat curve means compiled code is freed.
//!
//! ```text
//! cargo run --release --example compile_drop -- [CYCLES] [o3|fast]
//! ```
//!
//! Each cycle builds a `Filter` of a shape no earlier cycle had (so no cache can
//! serve it), through a `KernelCache` bounded to 16 kernels, evaluates it on a small
//! batch, and drops it; the cache evicts the kernel when later ones arrive, and its
//! machine code is freed.

use std::sync::Arc;
use std::time::Instant;

use arrow::array::{ArrayRef, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::sql::parse_expr;
use broadhead::{Filter, KernelCache, Pipeline};

/// The SQL of cycle `n`: `a o1 b o2 b o3 b … > 0`, the operators `o1, o2, …`
/// spelling `n` in base 5 (so every `n` below 5^12 is another kernel; `b` is never 0).
fn shape(n: usize) -> String {
    const OPS: [&str; 5] = [" + ", " - ", " * ", " / ", " % "];
    let mut sql = String::from("a");
    let mut k = n;
    for _ in 0..12 {
        sql += OPS[k % 5];
        sql += "b";
        k /= 5;
    }
    sql + " > 0"
}

/// Resident memory of this process, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let cycles: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let pipeline = match args.next().as_deref() {
        Some("o3") => Pipeline::O3,
        _ => Pipeline::Fast,
    };
    let schema = Schema::new(vec![
        Field::new("a", DataType::Float64, false),
        Field::new("b", DataType::Float64, false),
    ]);
    let a: ArrayRef = Arc::new(Float64Array::from_iter_values((0..100).map(f64::from)));
    let b: ArrayRef = Arc::new(Float64Array::from_iter_values(
        (0..100).map(|i| f64::from(i % 7) + 1.0),
    ));
    let batch = RecordBatch::try_new(Arc::new(schema.clone()), vec![a, b]).expect("a batch");
    let cache = Arc::new(KernelCache::new(16, 1 << 30).with_pipeline(pipeline));
    let start = Instant::now();
    println!("{pipeline:?} pipeline, {cycles} cycles");
    println!("{:>8} {:>10} {:>9}", "cycles", "rss_kib", "seconds");
    println!("{:>8} {:>10} {:>9.1}", 0, rss_kib(), 0.0);
    let mut first = None;
    for n in 0..cycles {
        let expr = parse_expr(&shape(n)).expect("parses");
        let filter = Filter::with_cache(&schema, &expr, &cache).expect("compiles");
        assert!(filter.is_jit());
        filter.evaluate(&batch).expect("evaluates");
        drop(filter);
        if (n + 1) % 1000 == 0 {
            let rss = rss_kib();
            first.get_or_insert(rss);
            println!(
                "{:>8} {:>10} {:>9.1}",
                n + 1,
                rss,
                start.elapsed().as_secs_f64()
            );
        }
    }
    let stats = cache.stats();
    let last = rss_kib();
    println!(
        "compiled {} kernels ({} evicted); RSS after 1,000 cycles {} KiB, at the end {last} KiB ({:+} KiB)",
        stats.misses,
        stats.evictions,
        first.unwrap_or(last),
        last as i64 - first.unwrap_or(last) as i64
    );
}
