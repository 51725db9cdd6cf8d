//! `broadhead gen tpch`: TPC-H tables as Parquet, with `tpchgen` / `tpchgen-arrow`.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use arrow::error::ArrowError;
use broadhead::scan::{engine_schema, to_engine_batch};
use clap::{Args, Subcommand, ValueEnum};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator,
    PartSuppGenerator, RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RegionArrow,
    SupplierArrow,
};

use super::filter::Progress;
use super::{CliResult, Failure};

#[derive(Subcommand, Debug)]
pub enum GenCommand {
    /// TPC-H data (decimal columns are written as DOUBLE, strings as VARCHAR, dates as DATE).
    #[command(
        after_help = "Prices, quantities, discounts and taxes are DECIMAL(15,2) in TPC-H; \
        Broadhead has no decimals yet, so they are written as DOUBLE.\n\n\
        Example:\n  broadhead gen tpch --scale 1 --table lineitem /tmp/lineitem.parquet"
    )]
    Tpch(TpchArgs),
}

/// Arguments of `broadhead gen tpch`.
#[derive(Args, Debug)]
pub struct TpchArgs {
    /// The output Parquet file
    output: PathBuf,
    /// Scale factor: 1 is 6 million lineitem rows (about 250 MB of Parquet)
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// The table
    #[arg(long, value_enum, default_value_t = Table::Lineitem)]
    table: Table,
    /// Rows per row group
    #[arg(long, default_value_t = 122_880)]
    row_group_size: usize,
    /// No progress bar
    #[arg(long, short)]
    quiet: bool,
}

/// TPC-H tables.
#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum Table {
    Lineitem,
    Orders,
    Customer,
    Part,
    Partsupp,
    Supplier,
    Nation,
    Region,
}

type Batches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>> + Send>;

/// A table's batches as tpchgen-arrow makes them, and their schema.
fn generator(table: Table, scale: f64) -> (SchemaRef, Batches) {
    const BATCH: usize = 8192;
    match table {
        Table::Lineitem => (
            LineItemArrow::schema_ref(),
            Box::new(
                LineItemArrow::new(LineItemGenerator::new(scale, 1, 1)).with_batch_size(BATCH),
            ),
        ),
        Table::Orders => (
            OrderArrow::schema_ref(),
            Box::new(OrderArrow::new(OrderGenerator::new(scale, 1, 1)).with_batch_size(BATCH)),
        ),
        Table::Customer => (
            CustomerArrow::schema_ref(),
            Box::new(
                CustomerArrow::new(CustomerGenerator::new(scale, 1, 1)).with_batch_size(BATCH),
            ),
        ),
        Table::Part => (
            PartArrow::schema_ref(),
            Box::new(PartArrow::new(PartGenerator::new(scale, 1, 1)).with_batch_size(BATCH)),
        ),
        Table::Partsupp => (
            PartSuppArrow::schema_ref(),
            Box::new(
                PartSuppArrow::new(PartSuppGenerator::new(scale, 1, 1)).with_batch_size(BATCH),
            ),
        ),
        Table::Supplier => (
            SupplierArrow::schema_ref(),
            Box::new(
                SupplierArrow::new(SupplierGenerator::new(scale, 1, 1)).with_batch_size(BATCH),
            ),
        ),
        Table::Nation => (
            NationArrow::schema_ref(),
            Box::new(NationArrow::new(NationGenerator::new(scale, 1, 1)).with_batch_size(BATCH)),
        ),
        Table::Region => (
            RegionArrow::schema_ref(),
            Box::new(RegionArrow::new(RegionGenerator::new(scale, 1, 1)).with_batch_size(BATCH)),
        ),
    }
}

/// A table's batches with the engine's types (DOUBLE for decimals, VARCHAR for
/// string views; dates stay DATE), generated on a thread of their own.
pub fn engine_batches(
    table: Table,
    scale: f64,
) -> (
    SchemaRef,
    std::sync::mpsc::Receiver<Result<RecordBatch, ArrowError>>,
) {
    let (schema, batches) = generator(table, scale);
    let target: SchemaRef = Arc::new(engine_schema(&schema));
    let (tx, rx) = std::sync::mpsc::sync_channel(8);
    let t = target.clone();
    std::thread::spawn(move || {
        for b in batches {
            if tx.send(b.and_then(|b| to_engine_batch(b, &t))).is_err() {
                return;
            }
        }
    });
    (target, rx)
}

/// Rows a table has at a scale (lineitem: about).
fn expected_rows(table: Table, scale: f64) -> u64 {
    let base = match table {
        Table::Lineitem => 6_001_215.0,
        Table::Orders => 1_500_000.0,
        Table::Customer => 150_000.0,
        Table::Part => 200_000.0,
        Table::Partsupp => 800_000.0,
        Table::Supplier => 10_000.0,
        Table::Nation => return 25,
        Table::Region => return 5,
    };
    (base * scale) as u64
}

pub fn run(cmd: GenCommand) -> CliResult {
    let GenCommand::Tpch(a) = cmd;
    if !(a.scale > 0.0 && a.scale.is_finite()) {
        return Err(Failure::usage("--scale must be a positive number"));
    }
    let (schema, batches) = engine_batches(a.table, a.scale);
    let dir = match a.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let fail = |e: &dyn std::fmt::Display| Failure::runtime(format!("{}: {e}", a.output.display()));
    let tmp = super::output::temp_file_in(&dir).map_err(|e| fail(&e))?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(a.row_group_size.max(1)))
        .build();
    let handle = tmp.as_file().try_clone()?;
    let mut writer = ArrowWriter::try_new(
        std::io::BufWriter::with_capacity(1 << 20, handle),
        schema,
        Some(props),
    )
    .map_err(|e| fail(&e))?;
    let progress = Progress::new(expected_rows(a.table, a.scale), a.quiet);
    let mut rows = 0u64;
    for batch in batches {
        let batch = batch.map_err(|e| fail(&e))?;
        rows += batch.num_rows() as u64;
        writer.write(&batch).map_err(|e| fail(&e))?;
        progress.advance(batch.num_rows() as u64);
    }
    writer.close().map_err(|e| fail(&e))?;
    progress.finish();
    tmp.persist(&a.output).map_err(|e| fail(&e.error))?;
    if !a.quiet {
        eprintln!("wrote {rows} rows to {}", a.output.display());
    }
    Ok(())
}
