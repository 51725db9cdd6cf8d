//! TPC-H tables (lineitem, orders, part) written as Parquet with tpchgen-arrow, and
//! the queries that read only them.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, Schema};
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use parquet::arrow::ArrowWriter;
use tpchgen::generators::{LineItemGenerator, OrderGenerator, PartGenerator};
use tpchgen_arrow::{LineItemArrow, OrderArrow, PartArrow};

/// The TPC-H queries over lineitem, orders and part: (name, SQL).
pub const QUERIES: [(&str, &str); 5] = [
    ("q1", include_str!("../../tpch/q1.sql")),
    ("q6", include_str!("../../tpch/q6.sql")),
    ("q12", include_str!("../../tpch/q12.sql")),
    ("q14", include_str!("../../tpch/q14.sql")),
    ("q19", include_str!("../../tpch/q19.sql")),
];

/// How the TPC-H decimal columns are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decimals {
    /// DECIMAL(15,2), as the specification says.
    Decimal,
    /// DOUBLE (the nearest double to each value).
    Double,
}

/// Writes `lineitem.parquet`, `orders.parquet` and `part.parquet` at `scale` into
/// `dir`.
pub fn write_tables(dir: &Path, scale: f64, decimals: Decimals) {
    write(
        &dir.join("lineitem.parquet"),
        LineItemArrow::new(LineItemGenerator::new(scale, 1, 1)).with_batch_size(8192),
        decimals,
    );
    write(
        &dir.join("orders.parquet"),
        OrderArrow::new(OrderGenerator::new(scale, 1, 1)).with_batch_size(8192),
        decimals,
    );
    write(
        &dir.join("part.parquet"),
        PartArrow::new(PartGenerator::new(scale, 1, 1)).with_batch_size(8192),
        decimals,
    );
}

fn write(
    path: &Path,
    batches: impl Iterator<Item = Result<RecordBatch, arrow::error::ArrowError>>,
    decimals: Decimals,
) {
    let mut writer: Option<ArrowWriter<File>> = None;
    for batch in batches {
        let batch = convert(&batch.unwrap(), decimals);
        let w = writer.get_or_insert_with(|| {
            ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), None).unwrap()
        });
        w.write(&batch).unwrap();
    }
    writer.unwrap().close().unwrap();
}

/// Decimals as doubles when asked; string views as strings (either reads alike).
fn convert(batch: &RecordBatch, decimals: Decimals) -> RecordBatch {
    let mut fields = vec![];
    let mut columns = vec![];
    for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
        let to = match f.data_type() {
            DataType::Decimal128(..) if decimals == Decimals::Double => DataType::Float64,
            DataType::Utf8View => DataType::Utf8,
            t => t.clone(),
        };
        columns.push(arrow::compute::cast(c, &to).unwrap());
        fields.push(Field::new(f.name(), to, f.is_nullable()));
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

/// Registers the three tables of `dir` in `ctx`.
pub async fn register_tables(ctx: &SessionContext, dir: &Path) {
    for t in ["lineitem", "orders", "part"] {
        let path = dir.join(format!("{t}.parquet"));
        ctx.register_parquet(t, path.to_str().unwrap(), ParquetReadOptions::default())
            .await
            .unwrap();
    }
}
