//! The compiled-kernel cache: sharing across literals and column names, LRU
//! eviction, counters, and freeing machine code.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float64Array, Int64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema};
use broadhead::{col, lit, Expr, Filter, KernelCache, Pipeline, Projector};

fn schema(names: [&str; 3]) -> Schema {
    Schema::new(vec![
        Field::new(names[0], DataType::Float64, false),
        Field::new(names[1], DataType::Float64, false),
        Field::new(names[2], DataType::Int64, false),
    ])
}

fn batch(schema: &Schema) -> RecordBatch {
    let a: ArrayRef = Arc::new(Float64Array::from_iter_values((0..100).map(|i| i as f64)));
    let b: ArrayRef = Arc::new(Float64Array::from_iter_values(
        (0..100).map(|i| (i % 7) as f64 + 1.0),
    ));
    let c: ArrayRef = Arc::new(Int64Array::from_iter_values(0..100));
    RecordBatch::try_new(Arc::new(schema.clone()), vec![a, b, c]).unwrap()
}

#[test]
fn literals_are_parameters_so_one_kernel_serves_every_value() {
    let cache = Arc::new(KernelCache::new(64, 1 << 30).with_pipeline(Pipeline::Fast));
    let s = schema(["a", "b", "c"]);
    let b = batch(&s);
    let f50 = Filter::with_cache(&s, &col("a").gt(lit(50.0)), &cache).unwrap();
    let f60 = Filter::with_cache(&s, &col("a").gt(lit(60.0)), &cache).unwrap();
    let stats = cache.stats();
    assert_eq!((stats.misses, stats.hits, stats.entries), (1, 1, 1));
    assert_eq!(f50.evaluate(&b).unwrap().len(), 49);
    assert_eq!(f60.evaluate(&b).unwrap().len(), 39);
    // Other column names of the same types: the same kernel.
    let renamed = schema(["x", "y", "z"]);
    let fx = Filter::with_cache(&renamed, &col("x").gt(lit(10.0)), &cache).unwrap();
    assert_eq!(cache.stats().hits, 2);
    assert_eq!(fx.evaluate(&batch(&renamed)).unwrap().len(), 89);
    // Another type or shape: another kernel.
    Filter::with_cache(&s, &col("c").gt(lit(10i64)), &cache).unwrap();
    Filter::with_cache(&s, &col("a").lt(lit(10.0)), &cache).unwrap();
    assert_eq!(cache.stats().misses, 3);
    // Projections share kernels the same way.
    let p1 = Projector::with_cache(&s, &[col("a").mul(lit(2.0))], &cache).unwrap();
    let p2 = Projector::with_cache(&s, &[col("a").mul(lit(3.0))], &cache).unwrap();
    assert_eq!(cache.stats().misses, 4);
    let out1 = p1.evaluate(&b).unwrap();
    let out2 = p2.evaluate(&b).unwrap();
    assert_ne!(out1[0].to_data(), out2[0].to_data());
}

/// `((a op b) op b) … > 0` with the operators spelled by `n` in base 4: every `n`
/// below 4^depth is another shape, so another kernel.
fn shape(n: usize, depth: u32) -> Expr {
    let mut e = col("a");
    let mut k = n;
    for _ in 0..depth {
        e = match k % 4 {
            0 => e.add(col("b")),
            1 => e.sub(col("b")),
            2 => e.mul(col("b")),
            _ => e.div(col("b")),
        };
        k /= 4;
    }
    e.gt(lit(0.0))
}

#[test]
fn the_least_recently_used_kernel_is_evicted_and_lives_on_with_its_users() {
    let cache = Arc::new(KernelCache::new(2, 1 << 30).with_pipeline(Pipeline::Fast));
    let s = schema(["a", "b", "c"]);
    let b = batch(&s);
    let first = Filter::with_cache(&s, &shape(0, 3), &cache).unwrap();
    Filter::with_cache(&s, &shape(1, 3), &cache).unwrap();
    Filter::with_cache(&s, &shape(0, 3), &cache).unwrap(); // touch: now most recent
    Filter::with_cache(&s, &shape(2, 3), &cache).unwrap(); // evicts shape 1
    let stats = cache.stats();
    assert_eq!(
        (stats.entries, stats.evictions, stats.misses, stats.hits),
        (2, 1, 3, 1)
    );
    Filter::with_cache(&s, &shape(0, 3), &cache).unwrap();
    assert_eq!(cache.stats().hits, 2, "shape 0 survived the eviction");
    cache.clear();
    assert_eq!(cache.stats().entries, 0);
    // Evicted and cleared kernels stay usable by the filters that hold them.
    assert_eq!(first.evaluate(&b).unwrap().len(), 100);
    cache.set_limits(1, 1);
    Filter::with_cache(&s, &shape(5, 3), &cache).unwrap();
    assert!(
        cache.stats().bytes > 0,
        "the newest kernel is kept even above the byte limit"
    );
}

/// Resident memory of this process, in bytes.
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<usize>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

#[test]
#[cfg(target_os = "linux")]
fn compiling_and_dropping_ten_thousand_kernels_does_not_grow_the_process() {
    // Quick: the cheapest compile (the test's time is its 10,000 compilations); the
    // code is loaded into and freed from the JIT the same way whatever the pipeline.
    let cache = Arc::new(KernelCache::new(16, 1 << 30).with_pipeline(Pipeline::Quick));
    let s = schema(["a", "b", "c"]);
    let b = batch(&s);
    let run = |range: std::ops::Range<usize>| {
        for n in range {
            let f = Filter::with_cache(&s, &shape(n, 7), &cache).unwrap();
            assert!(f.evaluate(&b).is_ok());
        }
    };
    run(0..1_000);
    let before = rss();
    run(1_000..10_000);
    let after = rss();
    let stats = cache.stats();
    assert_eq!(stats.misses, 10_000, "every shape is its own kernel");
    assert_eq!(stats.evictions, 10_000 - 16);
    let growth = after.saturating_sub(before);
    // Kept alive, 9,000 kernels would take hundreds of MiB (see the next test).
    assert!(
        growth < 48 << 20,
        "the process grew by {} MiB over 9,000 dropped kernels",
        growth >> 20
    );
}

#[test]
#[cfg(target_os = "linux")]
fn the_byte_estimate_is_within_a_factor_of_four_of_what_live_kernels_take() {
    let cache = Arc::new(KernelCache::new(10_000, 1 << 40).with_pipeline(Pipeline::Fast));
    let s = schema(["a", "b", "c"]);
    let warm: Vec<Filter> = (20_000..20_050)
        .map(|n| Filter::with_cache(&s, &shape(n, 8), &cache).unwrap())
        .collect();
    let before = rss();
    let bytes_before = cache.stats().bytes;
    let live: Vec<Filter> = (30_000..30_300)
        .map(|n| Filter::with_cache(&s, &shape(n, 8), &cache).unwrap())
        .collect();
    let measured = (rss().saturating_sub(before)) / live.len();
    let estimated = (cache.stats().bytes - bytes_before) / live.len();
    eprintln!("per live kernel: measured {measured} bytes, estimated {estimated} bytes");
    assert!(measured > 0);
    assert!(
        estimated * 4 >= measured && estimated <= measured * 4,
        "measured {measured}, estimated {estimated}"
    );
    drop(warm);
}

#[test]
fn the_same_statement_on_the_same_schema_is_built_once() {
    let s = schema(["p", "q", "r"]);
    let b = batch(&s);
    let first = Filter::new(&s, "p > 41.5 AND r < 90").unwrap();
    let again = Filter::new(&s, "p > 41.5 AND r < 90").unwrap();
    assert_eq!(first.evaluate(&b).unwrap(), again.evaluate(&b).unwrap());
    assert_eq!(again.evaluate(&b).unwrap().len(), 48);
    // Another schema with the same text is another filter, bound to that schema.
    let other = Schema::new(vec![
        Field::new("p", DataType::Int64, false),
        Field::new("q", DataType::Float64, false),
        Field::new("r", DataType::Int64, false),
    ]);
    let f = Filter::new(&other, "p > 41.5 AND r < 90").unwrap();
    assert_eq!(f.schema().field(0).data_type(), &DataType::Int64);
    // Errors are not remembered.
    assert!(Filter::new(&s, "nope > 1").is_err());
    assert!(Filter::new(&s, "nope > 1").is_err());
}
