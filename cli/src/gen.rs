//! `broadhead gen tpch`: TPC-H tables as Parquet, with `tpchgen` / `tpchgen-arrow`.

use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{AsArray, RecordBatch};
use arrow::datatypes::{DataType, Field, Int64Type, Schema, SchemaRef};
use arrow::error::ArrowError;
use broadhead::scan::{engine_type, to_engine_batch};
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
    /// TPC-H data (decimal columns as DECIMAL(15,2), strings as VARCHAR, dates as DATE).
    #[command(
        after_help = "Prices, quantities, discounts, taxes and balances are DECIMAL(15,2), as \
        the TPC-H specification says; `--decimals double` writes them as DOUBLE instead (the \
        nearest double), to compare the two.\n\n\
        Example:\n  broadhead gen tpch --scale 1 --table lineitem /tmp/lineitem.parquet"
    )]
    Tpch(TpchArgs),
}

/// Arguments of `broadhead gen tpch`.
#[derive(Args, Debug)]
pub struct TpchArgs {
    /// The output Parquet file (see `filter --help` for how an existing one is replaced)
    output: PathBuf,
    /// Replace the output file even if it is read-only (its permissions are kept)
    #[arg(long)]
    force: bool,
    /// Scale factor: 1 is 6 million lineitem rows (about 250 MB of Parquet)
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// The table
    #[arg(long, value_enum, default_value_t = Table::Lineitem)]
    table: Table,
    /// Rows per row group
    #[arg(long, default_value_t = 122_880, value_parser = clap::value_parser!(u64).range(1..))]
    row_group_size: u64,
    /// How the decimal columns are written
    #[arg(long, value_enum, default_value_t = Decimals::Decimal)]
    decimals: Decimals,
    /// Threads generating the table's parts [default: all cores]
    #[arg(long)]
    threads: Option<usize>,
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

/// How `gen tpch` writes the TPC-H decimal columns.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decimals {
    /// DECIMAL(15,2), as the TPC-H specification says
    Decimal,
    /// DOUBLE: the nearest double to each value (for comparisons with the DOUBLE path)
    Double,
}

/// The type a generated column of type `t` is written as: decimals as `decimals`
/// says, strings (`tpchgen-arrow` makes `Utf8View`s) as plain `Utf8`, what other
/// Parquet writers produce and the benchmarks measure, other types the engine lacks
/// converted by [`engine_type`].
fn written_type(t: &DataType, decimals: Decimals) -> DataType {
    match (t, decimals) {
        (DataType::Decimal128(..), Decimals::Decimal) => t.clone(),
        (DataType::Decimal128(..), Decimals::Double) => DataType::Float64,
        (DataType::Utf8View | DataType::LargeUtf8, _) => DataType::Utf8,
        _ => engine_type(t).unwrap_or_else(|| t.clone()),
    }
}

/// The schema a generated table is written with ([`written_type`] of each column).
fn written_schema(schema: &Schema, decimals: Decimals) -> Schema {
    Schema::new(
        schema
            .fields()
            .iter()
            .map(|f| {
                Field::new(
                    f.name(),
                    written_type(f.data_type(), decimals),
                    f.is_nullable(),
                )
            })
            .collect::<Vec<_>>(),
    )
}

type Batches = Box<dyn Iterator<Item = Result<RecordBatch, ArrowError>> + Send>;

/// Rows per generated batch.
const BATCH: usize = 8192;

/// Part `part` (1-based) of `parts` of a table, as tpchgen-arrow makes it, and its schema.
fn generator(table: Table, scale: f64, part: i32, parts: i32) -> (SchemaRef, Batches) {
    macro_rules! gen {
        ($arrow:ident, $gen:ident) => {
            (
                $arrow::schema_ref(),
                Box::new($arrow::new($gen::new(scale, part, parts)).with_batch_size(BATCH)),
            )
        };
    }
    match table {
        Table::Lineitem => gen!(LineItemArrow, LineItemGenerator),
        Table::Orders => gen!(OrderArrow, OrderGenerator),
        Table::Customer => gen!(CustomerArrow, CustomerGenerator),
        Table::Part => gen!(PartArrow, PartGenerator),
        Table::Partsupp => gen!(PartSuppArrow, PartSuppGenerator),
        Table::Supplier => gen!(SupplierArrow, SupplierGenerator),
        Table::Nation => gen!(NationArrow, NationGenerator),
        Table::Region => gen!(RegionArrow, RegionGenerator),
    }
}

/// The rows of a table at a scale; for lineitem (1 to 7 rows per order, at random) the
/// number of orders.
fn total_units(table: Table, scale: f64) -> u64 {
    let n = match table {
        Table::Lineitem | Table::Orders => OrderGenerator::calculate_row_count(scale, 1, 1),
        Table::Customer => CustomerGenerator::calculate_row_count(scale, 1, 1),
        Table::Part => PartGenerator::calculate_row_count(scale, 1, 1),
        Table::Partsupp => PartSuppGenerator::calculate_row_count(scale, 1, 1),
        Table::Supplier => SupplierGenerator::calculate_row_count(scale, 1, 1),
        Table::Nation => 25,
        Table::Region => 5,
    };
    u64::try_from(n).unwrap_or(0)
}

/// The number of orders up to and including `order_key` (keys are sparse: 8 of every 32).
fn orders_through(order_key: i64) -> u64 {
    u64::try_from(((order_key >> 5) << 3) | (order_key & 7)).unwrap_or(0)
}

/// The number of parts a table is generated in: about 256k rows each (lineitem: 64k
/// orders, about 256k lines), so that threads share the work and memory stays bounded
/// by a few parts' batches.
fn part_count(table: Table, scale: f64) -> i32 {
    let units = total_units(table, scale).max(1);
    let per_part = match table {
        Table::Nation | Table::Region => return 1,
        Table::Lineitem => 1 << 16,
        _ => 1 << 18,
    };
    i32::try_from(units.div_ceil(per_part).clamp(1, 100_000)).unwrap_or(1)
}

/// A table's batches with the types it is written with (decimals as `decimals` says,
/// VARCHAR for string views; dates stay DATE), in order, generated in parts on
/// `threads` threads.
pub fn engine_batches(
    table: Table,
    scale: f64,
    threads: usize,
    decimals: Decimals,
) -> (
    SchemaRef,
    std::sync::mpsc::Receiver<Result<RecordBatch, ArrowError>>,
) {
    batches_in_parts(table, scale, threads, part_count(table, scale), decimals)
}

/// [`engine_batches`] in `parts` parts.
fn batches_in_parts(
    table: Table,
    scale: f64,
    threads: usize,
    parts: i32,
    decimals: Decimals,
) -> (
    SchemaRef,
    std::sync::mpsc::Receiver<Result<RecordBatch, ArrowError>>,
) {
    let (schema, _) = generator(table, scale, 1, 1);
    let target: SchemaRef = Arc::new(written_schema(&schema, decimals));
    let (tx, rx) = std::sync::mpsc::sync_channel(8);
    let t = target.clone();
    std::thread::spawn(move || {
        let next = std::sync::atomic::AtomicI32::new(1);
        let channels: Vec<_> = (0..parts)
            .map(|_| std::sync::mpsc::sync_channel::<Result<RecordBatch, ArrowError>>(16))
            .collect();
        let (senders, receivers): (Vec<_>, Vec<_>) = channels.into_iter().unzip();
        // A worker takes its part's sender, and drops it (ending the part) when done.
        let senders: Vec<_> = senders
            .into_iter()
            .map(|s| std::sync::Mutex::new(Some(s)))
            .collect();
        std::thread::scope(|s| {
            for _ in 0..threads.max(1) {
                s.spawn(|| loop {
                    let part = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if part > parts {
                        return;
                    }
                    let Some(sender) = usize::try_from(part - 1)
                        .ok()
                        .and_then(|i| senders.get(i))
                        .and_then(|m| m.lock().ok()?.take())
                    else {
                        return;
                    };
                    let (_, batches) = generator(table, scale, part, parts);
                    for b in batches {
                        if sender.send(b.and_then(|b| to_engine_batch(b, &t))).is_err() {
                            return;
                        }
                    }
                });
            }
            // Hand the parts on in order.
            for r in receivers {
                for b in r {
                    if tx.send(b).is_err() {
                        return;
                    }
                }
            }
        });
    });
    (target, rx)
}

/// Runs `broadhead gen`.
pub fn run(cmd: GenCommand) -> CliResult {
    let GenCommand::Tpch(a) = cmd;
    if !(a.scale > 0.0 && a.scale.is_finite()) {
        return Err(Failure::usage("--scale must be a positive number"));
    }
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let (schema, batches) = engine_batches(a.table, a.scale, threads, a.decimals);
    let fail = |e: &dyn std::fmt::Display| {
        Failure::runtime(format!(
            "{}: {e}",
            broadhead::escape::escape_path(&a.output)
        ))
    };
    let opened = super::target::open_target(&a.output, a.force)?;
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(
            usize::try_from(a.row_group_size).unwrap_or(usize::MAX),
        ))
        .build();
    let mut writer = ArrowWriter::try_new(
        std::io::BufWriter::with_capacity(1 << 20, opened.file),
        schema.clone(),
        Some(props),
    )
    .map_err(|e| fail(&e))?;
    let lineitem = matches!(a.table, Table::Lineitem);
    let progress = Progress::with_unit(
        total_units(a.table, a.scale),
        if lineitem { "orders" } else { "rows" },
        a.quiet,
    );
    let key = schema.index_of("l_orderkey").ok();
    let mut rows = 0u64;
    for batch in batches {
        let batch = batch.map_err(|e| fail(&e))?;
        rows += batch.num_rows() as u64;
        writer.write(&batch).map_err(|e| fail(&e))?;
        match (lineitem, key) {
            (true, Some(k)) if batch.num_rows() > 0 => {
                let keys = batch.column(k).as_primitive::<Int64Type>();
                progress.set_position(orders_through(keys.value(keys.len() - 1)));
            }
            _ => progress.advance(batch.num_rows() as u64),
        }
    }
    writer.close().map_err(|e| fail(&e))?;
    progress.finish();
    super::target::Opened::finish(opened.rename)?;
    if !a.quiet {
        super::warn(format_args!(
            "wrote {rows} rows to {}",
            broadhead::escape::escape_path(&a.output)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of a table generated in `parts` parts, in one batch.
    fn generated(table: Table, scale: f64, parts: i32) -> RecordBatch {
        generated_with(table, scale, parts, Decimals::Decimal)
    }

    fn generated_with(table: Table, scale: f64, parts: i32, decimals: Decimals) -> RecordBatch {
        let (schema, rx) = batches_in_parts(table, scale, 2, parts, decimals);
        let batches: Vec<RecordBatch> = rx.into_iter().map(|b| b.unwrap()).collect();
        arrow::compute::concat_batches(&schema, &batches).unwrap()
    }

    #[test]
    fn parts_concatenated_are_the_whole_table() {
        for table in [Table::Lineitem, Table::Partsupp, Table::Orders] {
            let whole = generated(table, 0.01, 1);
            assert!(whole.num_rows() >= 8_000, "{table:?}");
            assert_eq!(generated(table, 0.01, 3), whole, "{table:?}");
        }
    }

    #[test]
    fn order_keys_count_orders() {
        for index in [1i64, 2, 7, 8, 9, 100, 1_500_000] {
            assert_eq!(
                orders_through(OrderGenerator::make_order_key(index)),
                index as u64
            );
        }
    }

    #[test]
    fn decimal_columns_are_decimal_15_2_or_the_nearest_doubles() {
        use arrow::datatypes::{Decimal128Type, DecimalType, Float64Type};
        let exact = generated_with(Table::Lineitem, 0.001, 1, Decimals::Decimal);
        let double = generated_with(Table::Lineitem, 0.001, 1, Decimals::Double);
        assert_eq!(exact.num_rows(), double.num_rows());
        for name in ["l_quantity", "l_extendedprice", "l_discount", "l_tax"] {
            let d = exact.column_by_name(name).unwrap();
            assert_eq!(d.data_type(), &DataType::Decimal128(15, 2), "{name}");
            let f = double.column_by_name(name).unwrap();
            assert_eq!(f.data_type(), &DataType::Float64, "{name}");
            let (d, f) = (
                d.as_primitive::<Decimal128Type>(),
                f.as_primitive::<Float64Type>(),
            );
            for i in 0..d.len() {
                // The double nearest to the decimal: what its text reads as.
                let text = Decimal128Type::format_decimal(d.value(i), 15, 2);
                assert_eq!(f.value(i), text.parse::<f64>().unwrap(), "{name} row {i}");
            }
        }
    }
}
