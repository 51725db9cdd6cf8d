//! Filtering and projecting a Parquet file batch by batch with Broadhead's public API,
//! the fast way: TPC-H Q6's revenue, `sum(l_extendedprice * l_discount)` where its
//! predicate is TRUE.
//!
//! ```text
//! cargo run --release --example parquet_stream                   # makes /tmp/…/lineitem.parquet (SF 0.1)
//! cargo run --release --example parquet_stream -- FILE ["PREDICATE"]
//! ```
//!
//! What makes it fast, compared with the obvious loop (read every column, then
//! `Filter::filter_record_batch` each batch), which the program also times:
//!
//! 1. the predicate runs **inside the reader** as a [`JitPredicate`] in a `RowFilter`:
//!    the reader decodes only the predicate's columns for every row, and the output
//!    columns only for the rows it keeps (late materialization);
//! 2. a **projection mask** reads the two output columns, not all sixteen;
//! 3. **row groups are read on several threads**, each with its own reader and a
//!    clone of the compiled predicate (`JitPredicate::for_file`: compiled once);
//! 4. batches of 8,192 rows: large enough to amortize per-batch work, small enough to
//!    stay in cache.

use std::error::Error;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{Array, AsArray, RecordBatch, RecordBatchReader};
use arrow::datatypes::{DataType, Decimal128Type, Float64Type, Schema};
use broadhead::parquet::{engine_schema, to_engine_batch, JitPredicate};
use broadhead::{Filter, Projector};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowFilter,
};
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::file::properties::WriterProperties;

/// TPC-H Q6's predicate.
pub const PREDICATE: &str = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' \
     AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

/// The projection summed.
const REVENUE: &str = "l_extendedprice * l_discount";

type Result<T> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

/// Writes TPC-H lineitem at `scale` to `path` (the money columns are DECIMAL(15,2),
/// which Broadhead computes exactly).
pub fn generate(path: &Path, scale: f64) -> Result<()> {
    use tpchgen::generators::LineItemGenerator;
    use tpchgen_arrow::LineItemArrow;
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(122_880))
        .build();
    let mut writer = ArrowWriter::try_new(
        File::create(path)?,
        LineItemArrow::schema_ref(),
        Some(props),
    )?;
    for batch in LineItemArrow::new(LineItemGenerator::new(scale, 1, 1)).with_batch_size(8192) {
        writer.write(&batch?)?;
    }
    writer.close()?;
    Ok(())
}

/// The fast way: the number of rows where `predicate` is TRUE and the sum of the
/// revenue over them, read `batch_size` rows at a time on all cores.
pub fn stream(path: &Path, predicate: &str, batch_size: usize) -> Result<(u64, f64)> {
    // The footer, read once and shared by every thread's reader.
    let metadata = ArrowReaderMetadata::load(&File::open(path)?, ArrowReaderOptions::new())?;
    let schema = metadata.schema().clone();
    let outputs = [
        schema.index_of("l_extendedprice")?,
        schema.index_of("l_discount")?,
    ];
    // Compiled once; each thread gets a clone for its row groups.
    let compiled = JitPredicate::new(predicate, metadata.metadata(), &schema)?;
    let output_schema = Arc::new(engine_schema(&schema.project(&outputs)?));
    let revenue = Projector::new(&output_schema, &[REVENUE])?;

    let groups = metadata.metadata().num_row_groups();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(groups.max(1));
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let mine: Vec<usize> = (t..groups).step_by(threads).collect();
                let (metadata, compiled, output_schema, revenue) =
                    (&metadata, &compiled, &output_schema, &revenue);
                scope.spawn(move || -> Result<(u64, f64)> {
                    let predicate = compiled.for_file(metadata.metadata(), &mine, None);
                    let mask = ProjectionMask::roots(metadata.parquet_schema(), outputs);
                    let reader = ParquetRecordBatchReaderBuilder::new_with_metadata(
                        File::open(path)?,
                        metadata.clone(),
                    )
                    .with_row_groups(mine)
                    .with_projection(mask)
                    .with_row_filter(RowFilter::new(vec![Box::new(predicate)]))
                    .with_batch_size(batch_size)
                    .build()?;
                    let (mut rows, mut sum) = (0u64, 0.0);
                    for batch in reader {
                        let batch = to_engine_batch(batch?, output_schema)?;
                        rows += batch.num_rows() as u64;
                        sum += total(&revenue.evaluate(&batch)?[0]);
                    }
                    Ok((rows, sum))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a reader thread"))
            .collect::<Vec<_>>()
    });
    let (mut rows, mut sum) = (0, 0.0);
    for r in results {
        let (n, s) = r?;
        rows += n;
        sum += s;
    }
    Ok((rows, sum))
}

/// The obvious way, for comparison: every column of every row decoded, then filtered.
pub fn naive(path: &Path, predicate: &str, batch_size: usize) -> Result<(u64, f64)> {
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(path)?)?
        .with_batch_size(batch_size)
        .build()?;
    let schema: Arc<Schema> = Arc::new(engine_schema(&reader.schema()));
    let filter = Filter::new(&schema, predicate)?;
    let revenue = Projector::new(&schema, &[REVENUE])?;
    let (mut rows, mut sum) = (0u64, 0.0);
    for batch in reader {
        let batch: RecordBatch = to_engine_batch(batch?, &schema)?;
        let selected = filter.filter_record_batch(&batch)?;
        rows += selected.num_rows() as u64;
        sum += total(&revenue.evaluate(&selected)?[0]);
    }
    Ok((rows, sum))
}

/// The sum of a DOUBLE column, or of a decimal column (exact, then as a double).
fn total(values: &dyn Array) -> f64 {
    match values.data_type() {
        DataType::Decimal128(_, scale) => {
            let sum: i128 = values
                .as_primitive::<Decimal128Type>()
                .iter()
                .flatten()
                .sum();
            sum as f64 / 10f64.powi(i32::from(*scale))
        }
        _ => values.as_primitive::<Float64Type>().iter().flatten().sum(),
    }
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let path = match args.next() {
        Some(p) => PathBuf::from(p),
        None => {
            let path = std::env::temp_dir().join("broadhead-parquet-stream-lineitem.parquet");
            if !path.exists() {
                eprintln!("writing TPC-H lineitem (scale 0.1) to {}", path.display());
                generate(&path, 0.1)?;
            }
            path
        }
    };
    let predicate = args.next().unwrap_or_else(|| PREDICATE.to_string());
    for (name, run) in [
        (
            "predicate in the reader, projection mask, threads",
            stream as fn(&Path, &str, usize) -> Result<(u64, f64)>,
        ),
        ("every column read, then filter_record_batch", naive),
    ] {
        // The first run compiles the kernels (later ones find them in the cache);
        // the best of three after it is reported.
        let (rows, sum) = run(&path, &predicate, 8192)?;
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let start = Instant::now();
            run(&path, &predicate, 8192)?;
            best = best.min(start.elapsed().as_secs_f64());
        }
        println!(
            "{name}: {rows} rows, revenue {sum:.2}, {:.1} ms",
            best * 1e3
        );
    }
    Ok(())
}
