//! `broadhead bench`: JIT against interpreter on the user's own file.

use std::time::{Duration, Instant};

use arrow::array::{Array, AsArray, RecordBatch};
use broadhead::interpret::interpret;
use broadhead::prepare::{Prepared, Purpose};
use broadhead::scan::{Scan, ScanItem, ScanOptions};
use broadhead::sql::parse_select_list;
use broadhead::{Filter, KernelCache, Projector, SelectionMode, SelectionVector};
use clap::Args;

use super::args::ScanArgs;
use super::filter::open_dataset;
use super::{CliResult, Failure};

/// Arguments of `broadhead bench`.
#[derive(Args, Debug)]
#[command(group = clap::ArgGroup::new("what").required(true).multiple(true).args(["predicate", "select"]))]
// The scan's arguments, with what they mean here.
#[command(mut_arg("paths", |a| a.help("Parquet files, directories of them, or globs")))]
#[command(mut_arg("predicate", |a| a.help("A predicate to time as a filter (@FILE: from FILE, -: from stdin)")))]
#[command(mut_arg("select", |a| a.help("A select list to time as a projection over every row (@FILE, - as for --where)")))]
pub struct BenchArgs {
    #[command(flatten)]
    scan: ScanArgs,
    /// Timed runs (the median is reported)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
    /// Rows per batch
    #[arg(long, default_value_t = 8192, value_parser = clap::value_parser!(u64).range(1..))]
    batch_size: u64,
}

/// The median time of `runs` runs of `f` (after one untimed warm-up run).
pub fn median_time<T>(
    runs: u64,
    mut f: impl FnMut() -> broadhead::Result<T>,
) -> broadhead::Result<(Duration, T)> {
    let mut result = f()?;
    let mut times = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        result = f()?;
        times.push(start.elapsed());
    }
    times.sort();
    Ok((times[times.len() / 2], result))
}

/// Median times and match counts of a predicate over batches.
pub struct FilterTimes {
    /// The compiled filter's median time.
    pub jit: Duration,
    /// Rows it selected.
    pub jit_count: usize,
    /// The interpreter's median time.
    pub interpreted: Duration,
    /// Rows the interpreter found TRUE.
    pub interpreted_count: usize,
}

/// Times `filter` and the interpreter on its typed, optimized predicate over
/// `batches`, `runs` times each.
pub fn time_filter(
    filter: &Filter,
    batches: &[RecordBatch],
    runs: u64,
) -> broadhead::Result<FilterTimes> {
    let mut selection = SelectionVector::new(SelectionMode::UInt32);
    let (jit, jit_count) = median_time(runs, || {
        let mut n = 0;
        for b in batches {
            filter.evaluate_into(b, &mut selection)?;
            n += selection.len();
        }
        Ok(n)
    })?;
    let typed = filter.typed_expr();
    let (interpreted, interpreted_count) = median_time(runs, || {
        let mut n = 0;
        for b in batches {
            let r = interpret(typed, b)?;
            let r = r.as_boolean();
            n += match r.nulls() {
                Some(v) => (r.values() & v.inner()).count_set_bits(),
                None => r.values().count_set_bits(),
            };
        }
        Ok(n)
    })?;
    Ok(FilterTimes {
        jit,
        jit_count,
        interpreted,
        interpreted_count,
    })
}

/// How many times faster the JIT (`jit`) ran than the interpreter (`interpreted`).
pub fn speedup(interpreted: Duration, jit: Duration) -> f64 {
    interpreted.as_secs_f64() / jit.as_secs_f64().max(1e-12)
}

/// Prints one timing line.
pub fn report(name: &str, time: Duration, rows: usize, note: &str) -> CliResult {
    outln!(
        "  {name:<12} {:>10.2} ms  {:>7.2} ns/row  {note}",
        time.as_secs_f64() * 1e3,
        time.as_secs_f64() * 1e9 / rows.max(1) as f64
    )
}

/// Runs `broadhead bench`.
pub fn run(a: BenchArgs) -> CliResult {
    let dataset = open_dataset(&a.scan.paths)?;
    let schema = dataset.schema().clone();
    let mut columns = Vec::new();
    let predicate = match &a.scan.predicate {
        Some(p) => {
            let prepared = Prepared::parse(p, &schema, Purpose::Predicate)
                .map_err(|e| Failure::expr(e, "--where", p))?;
            columns.extend(prepared.columns());
            Some(prepared)
        }
        None => None,
    };
    let mut exprs = Vec::new();
    if let Some(s) = &a.scan.select {
        for (e, _) in parse_select_list(s).map_err(|e| Failure::expr(e, "--select", s))? {
            let prepared = Prepared::new(&e, &schema, Purpose::Projection)
                .map_err(|x| Failure::expr(x, "--select", s))?;
            columns.extend(prepared.columns());
            exprs.push(prepared);
        }
    }

    // Read the columns into memory first: only evaluation is timed.
    let start = Instant::now();
    let options = ScanOptions {
        batch_size: a.batch_size as usize,
        ..ScanOptions::default()
    };
    let scan = Scan::new(&dataset, None, &columns, options)?;
    let loaded = scan.output_schema().clone();
    let mut batches: Vec<RecordBatch> = Vec::new();
    scan.run(&|b| Ok(b), &mut |item| {
        if let ScanItem::Batch(b) = item {
            batches.push(b);
        }
        Ok(true)
    })?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    let names: Vec<&str> = loaded.fields().iter().map(|f| f.name().as_str()).collect();
    outln!(
        "loaded {rows} rows in {} batches (columns {}) in {:.2} s; {} timed runs each, median:",
        batches.len(),
        names.join(", "),
        start.elapsed().as_secs_f64(),
        a.runs
    )?;

    if let (Some(p), Some(prepared)) = (&a.scan.predicate, &predicate) {
        outln!("\nfilter: {p}")?;
        let compile = Instant::now();
        let filter = Filter::from_prepared(&prepared.rebind(&loaded)?, KernelCache::global())?;
        let compiled = compile.elapsed();
        let t = time_filter(&filter, &batches, a.runs)?;
        let backend = if filter.is_jit() {
            ""
        } else {
            " [fell back to the interpreter]"
        };
        report(
            "JIT",
            t.jit,
            rows,
            &format!(
                "{} rows selected; {}{backend}",
                t.jit_count,
                made_in(filter.compile_timings(), compiled)
            ),
        )?;
        report(
            "interpreter",
            t.interpreted,
            rows,
            &format!("{} rows selected", t.interpreted_count),
        )?;
        outln!(
            "  JIT is {:.2}x the interpreter's speed",
            speedup(t.interpreted, t.jit)
        )?;
        if t.jit_count != t.interpreted_count {
            return Err(Failure::runtime(format!(
                "the JIT selected {} rows and the interpreter {}: please report this",
                t.jit_count, t.interpreted_count
            )));
        }
    }
    if let Some(s) = &a.scan.select {
        outln!("\nprojection: {s}")?;
        let compile = Instant::now();
        let exprs = exprs
            .iter()
            .map(|p| p.rebind(&loaded))
            .collect::<broadhead::Result<Vec<_>>>()?;
        let projector = Projector::from_prepared(&loaded, &exprs, KernelCache::global())?;
        let compiled = compile.elapsed();
        let (jit, _) = median_time(a.runs, || {
            let mut n = 0;
            for b in &batches {
                n += projector.evaluate(b)?.len();
            }
            Ok(n)
        })?;
        let (int, _) = median_time(a.runs, || {
            let mut n = 0;
            for b in &batches {
                for p in &exprs {
                    n += interpret(p.optimized(), b)?.len();
                }
            }
            Ok(n)
        })?;
        report(
            "JIT",
            jit,
            rows,
            &made_in(projector.compile_timings(), compiled),
        )?;
        report("interpreter", int, rows, "")?;
        outln!("  JIT is {:.2}x the interpreter's speed", speedup(int, jit))?;
    }
    Ok(())
}

/// How the kernel came to be, and how long it took (binding and lowering included).
fn made_in(timings: broadhead_codegen::CompileTimings, elapsed: Duration) -> String {
    let how = if timings.from_disk_cache {
        "loaded from the kernel cache"
    } else {
        "compiled"
    };
    format!("{how} in {:.1} ms", elapsed.as_secs_f64() * 1e3)
}
