//! `broadhead demo`: the main job on built-in data, no files needed.

use std::time::Instant;

use arrow::array::{Array, RecordBatch};
use broadhead::{Filter, Projector};
use clap::Args;

use super::bench::{report, speedup, time_filter};
use super::gen::{engine_batches, Decimals, Table};
use super::{CliResult, Failure};

const Q6: &str = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
                  AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

/// Arguments of `broadhead demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// TPC-H scale factor of the generated lineitem table (1 = 6 million rows)
    #[arg(long, default_value_t = 0.5)]
    scale: f64,
    /// Timed runs of each back end (the median is reported)
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..))]
    runs: u64,
}

/// Runs `broadhead demo`.
pub fn run(a: DemoArgs) -> CliResult {
    if !(a.scale > 0.0 && a.scale.is_finite()) {
        return Err(Failure::usage("--scale must be a positive number"));
    }
    let start = Instant::now();
    let (schema, rx) = engine_batches(
        Table::Lineitem,
        a.scale,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        Decimals::Decimal,
    );
    let keep: Vec<usize> = [
        "l_orderkey",
        "l_quantity",
        "l_extendedprice",
        "l_discount",
        "l_shipdate",
    ]
    .iter()
    .map(|n| schema.index_of(n).expect("a lineitem column"))
    .collect();
    let mut batches: Vec<RecordBatch> = Vec::new();
    for b in rx {
        let b = b.map_err(|e| Failure::runtime(e.to_string()))?;
        batches.push(
            b.project(&keep)
                .map_err(|e| Failure::runtime(e.to_string()))?,
        );
    }
    let schema = batches
        .first()
        .map(|b| b.schema())
        .ok_or_else(|| Failure::runtime("no rows generated"))?;
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    outln!(
        "Generated TPC-H lineitem at scale {} in memory: {rows} rows in {} batches ({:.1} s).",
        a.scale,
        batches.len(),
        start.elapsed().as_secs_f64()
    )?;
    outln!("\nTPC-H Q6 predicate:\n  {Q6}\n")?;

    let compile = Instant::now();
    let filter = Filter::new(&schema, Q6)?;
    let compiled = compile.elapsed();
    let t = time_filter(&filter, &batches, a.runs)?;
    outln!(
        "Matching rows: JIT {}, interpreter {}{}",
        t.jit_count,
        t.interpreted_count,
        if t.jit_count == t.interpreted_count {
            " (equal)"
        } else {
            " (DIFFERENT: please report)"
        }
    )?;
    outln!("Median of {} runs over all {rows} rows:", a.runs)?;
    report(
        "JIT",
        t.jit,
        rows,
        &format!("compiled in {:.1} ms", compiled.as_secs_f64() * 1e3),
    )?;
    report("interpreter", t.interpreted, rows, "")?;
    outln!(
        "  the JIT is {:.1}x the interpreter's speed",
        speedup(t.interpreted, t.jit)
    )?;

    // A few matching rows, with the revenue Q6 sums.
    let projector = Projector::new(&schema, &["l_extendedprice * l_discount"])?;
    let first = batches.iter().find_map(|b| {
        let sel = filter.evaluate(b).ok()?;
        (!sel.is_empty()).then_some((b, sel))
    });
    if let Some((batch, sel)) = first {
        let rows = arrow::compute::take_record_batch(batch, &sel.to_array())
            .map_err(|e| Failure::runtime(e.to_string()))?;
        let revenue = projector.evaluate_selected(batch, &sel)?;
        let mut columns = rows.columns().to_vec();
        columns.push(revenue[0].clone());
        let mut fields: Vec<_> = rows
            .schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone())
            .collect();
        fields.push(arrow::datatypes::Field::new(
            "revenue",
            revenue[0].data_type().clone(),
            true,
        ));
        let shown = RecordBatch::try_new(
            std::sync::Arc::new(arrow::datatypes::Schema::new(fields)),
            columns,
        )
        .map_err(|e| Failure::runtime(e.to_string()))?;
        let shown = shown.slice(0, shown.num_rows().min(5));
        outln!(
            "\nThe first matching rows:\n{}",
            super::table::render(
                &shown.schema(),
                std::slice::from_ref(&shown),
                shown.num_rows(),
                None
            )
            .map_err(|e| Failure::runtime(e.to_string()))?
            .trim_end()
        )?;
    }
    if t.jit_count != t.interpreted_count {
        return Err(Failure::runtime("the JIT and the interpreter disagree"));
    }
    outln!(
        "\nOn files: broadhead gen tpch --scale 1 /tmp/lineitem.parquet && \\\n  \
         broadhead filter /tmp/lineitem.parquet --where \"{Q6}\" --count"
    )?;
    Ok(())
}
