//! Compile cost and kernel speed of TPC-H Q6 under each pipeline (medians of 15
//! cold compiles; the kernel timed on one 8,192-row batch, in cache, and streaming
//! over 10,000,000 rows), the first compile in a new process (LLVM's one-time set-up
//! included) per pipeline, loading the kernel from the disk
//! cache in a new process (with and without LLVM's set-up done first, as the
//! `broadhead` command does it on a thread of its own), and the cost of a cache hit.
//! New processes are this example run again with `--child`.
//!
//! ```text
//! cargo run --release --example compile_cost
//! ```

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Date32Array, Float64Array, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use broadhead::sql::parse_expr;
use broadhead::{DiskCache, Filter, KernelCache, Pipeline, SelectionMode, SelectionVector};

const Q6: &str = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
                  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_discount", DataType::Float64, false),
        Field::new("l_quantity", DataType::Float64, false),
    ]))
}

/// In a new process: the time of its first `Filter` for Q6 (a compilation, or a load
/// from the disk cache in `dir`), after LLVM's set-up when `initialize_first`
/// (timed apart); prints the nanoseconds of the `Filter`, whether it was loaded, of
/// the set-up, and of linking the kernel.
fn child(pipeline: Pipeline, dir: Option<&str>, initialize_first: bool) -> broadhead::Result<()> {
    let schema = schema();
    let q6 = parse_expr(Q6)?;
    let cache = KernelCache::new(4, 1 << 30)
        .with_pipeline(pipeline)
        .with_disk_cache(dir.map(DiskCache::new));
    let cache = Arc::new(cache);
    let t = Instant::now();
    if initialize_first {
        broadhead_codegen::initialize().map_err(|e| broadhead::Error::Compile(e.to_string()))?;
    }
    let initialized = t.elapsed();
    let t = Instant::now();
    let f = Filter::with_cache(&schema, &q6, &cache)?;
    let elapsed = t.elapsed();
    let timings = f.compile_timings();
    println!(
        "{} {} {} {}",
        elapsed.as_nanos(),
        timings.from_disk_cache,
        initialized.as_nanos(),
        timings.link.as_nanos()
    );
    Ok(())
}

/// What [`child`] measured, medians over the runs.
struct InNewProcesses {
    filter: Duration,
    loaded: bool,
    initialize: Duration,
    link: Duration,
}

/// Runs `child` in 9 new processes (see [`child`]).
fn in_new_processes(
    pipeline: Pipeline,
    dir: Option<&str>,
    initialize_first: bool,
) -> InNewProcesses {
    let exe = std::env::current_exe().expect("this example's path");
    let (mut filter, mut initialize, mut link) = (Vec::new(), Vec::new(), Vec::new());
    let mut loaded = true;
    for _ in 0..9 {
        let mut cmd = Command::new(&exe);
        cmd.arg(if initialize_first {
            "--child-initialized"
        } else {
            "--child"
        });
        cmd.arg(format!("{pipeline:?}"));
        if let Some(d) = dir {
            cmd.arg(d);
        }
        let out = cmd.output().expect("runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let parts: Vec<&str> = text.split_whitespace().collect();
        let nanos = |i: usize| {
            let n: u64 = parts.get(i).and_then(|p| p.parse().ok()).expect("a time");
            Duration::from_nanos(n)
        };
        filter.push(nanos(0));
        loaded &= parts.get(1) == Some(&"true");
        initialize.push(nanos(2));
        link.push(nanos(3));
    }
    InNewProcesses {
        filter: median(filter),
        loaded,
        initialize: median(initialize),
        link: median(link),
    }
}

fn main() -> broadhead::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let pipeline = match args.get(2).map(String::as_str) {
        Some("Fast") => Pipeline::Fast,
        Some("Quick") => Pipeline::Quick,
        _ => Pipeline::O3,
    };
    let dir = args.get(3).map(String::as_str);
    match args.get(1).map(String::as_str) {
        Some("--child") => return child(pipeline, dir, false),
        Some("--child-initialized") => return child(pipeline, dir, true),
        _ => {}
    }
    let schema = schema();
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
    let q6 = parse_expr(Q6)?;
    for pipeline in [Pipeline::O3, Pipeline::Fast, Pipeline::Quick] {
        let first = in_new_processes(pipeline, None, false).filter;
        println!("{pipeline:?}: first compile in a new process: {first:?}");
    }
    let streaming: Vec<RecordBatch> = (0..10_000_000 / n)
        .map(|k| {
            let columns: Vec<ArrayRef> = vec![
                Arc::new(Date32Array::from_iter_values(
                    (0..n).map(|i| 8036 + (i64::from(i + k * n) * 7919 % 2525) as i32),
                )),
                Arc::new(Float64Array::from_iter_values(
                    (0..n).map(|i| ((i + k) % 11) as f64 / 100.0),
                )),
                Arc::new(Float64Array::from_iter_values(
                    (0..n).map(|i| ((i + k) % 50 + 1) as f64),
                )),
            ];
            RecordBatch::try_new(schema.clone(), columns).map_err(broadhead::Error::Arrow)
        })
        .collect::<broadhead::Result<_>>()?;
    // Each pipeline alone, then the default: `Quick` first, upgraded to `O3` in the
    // background once the kernel has evaluated 4 Mi rows (its kernel is timed after
    // that: the batch is evaluated 600 times, 4.9 M rows, and the upgrade waited for).
    let plans = [
        Some(Pipeline::O3),
        Some(Pipeline::Fast),
        Some(Pipeline::Quick),
        None,
    ];
    for plan in plans {
        let (mut total, mut opt, mut cg, mut link) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut filter = None;
        for _ in 0..15 {
            // Dropped first, so each kernel is really linked (not shared with the last).
            drop(filter.take());
            let cache = match plan {
                Some(pipeline) => KernelCache::new(4, 1 << 30).with_pipeline(pipeline),
                None => KernelCache::new(4, 1 << 30),
            };
            let cache = Arc::new(cache);
            let t = Instant::now();
            let f = Filter::with_cache(&schema, &q6, &cache)?;
            total.push(t.elapsed());
            let timings = f.compile_timings();
            opt.push(timings.optimize);
            cg.push(timings.codegen);
            link.push(timings.link);
            filter = Some(f);
        }
        let filter: Filter = filter.expect("compiled");
        let mut sel = SelectionVector::new(SelectionMode::UInt32);
        if plan.is_none() {
            for _ in 0..600 {
                filter.evaluate_into(&batch, &mut sel)?;
            }
            filter.wait_for_kernel();
        }
        let reps = 2000;
        let mut runs = Vec::new();
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..reps {
                filter.evaluate_into(&batch, &mut sel)?;
            }
            runs.push(t.elapsed() / reps);
        }
        let mut streamed = Vec::new();
        let rows: usize = streaming.iter().map(|b| b.num_rows()).sum();
        for _ in 0..5 {
            let t = Instant::now();
            for b in &streaming {
                filter.evaluate_into(b, &mut sel)?;
            }
            streamed.push(t.elapsed());
        }
        let stats = filter.tier_stats();
        let name = match plan {
            Some(pipeline) => format!("{pipeline:?}"),
            None => format!(
                "default (Quick, then {:?} after {:.1} ms)",
                stats.pipeline.unwrap_or(Pipeline::Quick),
                stats.optimized_after.unwrap_or_default().as_secs_f64() * 1e3
            ),
        };
        println!(
            "{name}: compile {:?} (optimization {:?}, machine code {:?}, link {:?}); kernel {:.2} ns/row in cache ({} rows selected), {:.2} ns/row streaming",
            median(total),
            median(opt),
            median(cg),
            median(link),
            median(runs).as_secs_f64() * 1e9 / n as f64,
            sel.len(),
            median(streamed).as_secs_f64() * 1e9 / rows as f64,
        );
    }
    disk_cache(&schema, &q6)?;
    cache_hits(&schema, &q6)?;
    Ok(())
}

/// Loading Q6's kernel from the disk cache: in this process (after the kernel was
/// dropped) and in new processes.
fn disk_cache(schema: &Schema, q6: &broadhead::Expr) -> broadhead::Result<()> {
    let dir = std::env::temp_dir().join(format!("broadhead-compile-cost-{}", std::process::id()));
    let disk = || Some(DiskCache::new(&dir));
    drop(Filter::with_cache(
        schema,
        q6,
        &Arc::new(
            KernelCache::new(4, 1 << 30)
                .with_pipeline(Pipeline::O3)
                .with_disk_cache(disk()),
        ),
    )?);
    let mut here = Vec::new();
    for _ in 0..15 {
        let cache = Arc::new(
            KernelCache::new(4, 1 << 30)
                .with_pipeline(Pipeline::O3)
                .with_disk_cache(disk()),
        );
        let t = Instant::now();
        let f = Filter::with_cache(schema, q6, &cache)?;
        here.push(t.elapsed());
        assert!(f.compile_timings().from_disk_cache);
    }
    let cold = in_new_processes(Pipeline::O3, dir.to_str(), false);
    let initialized = in_new_processes(Pipeline::O3, dir.to_str(), true);
    assert!(
        cold.loaded && initialized.loaded,
        "the new processes loaded the kernel from the disk cache"
    );
    println!(
        "disk cache: Filter::with_cache loading the kernel {:?} in this process; \
         in a new process {:?} as its first use of LLVM (link {:?}), \
         {:?} after LLVM's set-up (link {:?}; the set-up itself {:?})",
        median(here),
        cold.filter,
        cold.link,
        initialized.filter,
        initialized.link,
        initialized.initialize,
    );
    let _ = std::fs::remove_dir_all(&dir);
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
