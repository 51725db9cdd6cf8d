//! TPC-H tables (lineitem, orders, part) written as Parquet with tpchgen-arrow, the
//! queries that read only them, and answers as text for comparing them: what the
//! DataFusion and Ballista integrations' tests and examples run.

#![warn(missing_docs)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::RecordBatch;
use arrow::datatypes::{DataType, Field, Schema};
use arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::common::{DataFusionError, Result};
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use parquet::arrow::ArrowWriter;
use tpchgen::generators::{LineItemGenerator, OrderGenerator, PartGenerator};
use tpchgen_arrow::{LineItemArrow, OrderArrow, PartArrow};

/// The TPC-H queries over lineitem, orders and part: (name, SQL).
pub const QUERIES: [(&str, &str); 5] = [
    ("q1", include_str!("../queries/q1.sql")),
    ("q6", include_str!("../queries/q6.sql")),
    ("q12", include_str!("../queries/q12.sql")),
    ("q14", include_str!("../queries/q14.sql")),
    ("q19", include_str!("../queries/q19.sql")),
];

/// The SQL of the query named `name` (`"q1"`, …), if it is one of [`QUERIES`].
pub fn query(name: &str) -> Option<&'static str> {
    QUERIES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, sql)| *sql)
}

/// How the TPC-H decimal columns are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decimals {
    /// DECIMAL(15,2), as the specification says.
    Decimal,
    /// DOUBLE (the nearest double to each value).
    Double,
}

/// The tables [`write_tables`] writes, each as `<name>.parquet`.
pub const TABLES: [&str; 3] = ["lineitem", "orders", "part"];

/// Writes `lineitem.parquet`, `orders.parquet` and `part.parquet` at `scale` into
/// `dir` (which must exist).
pub fn write_tables(dir: &Path, scale: f64, decimals: Decimals) -> Result<()> {
    write(
        &dir.join("lineitem.parquet"),
        LineItemArrow::new(LineItemGenerator::new(scale, 1, 1)).with_batch_size(8192),
        decimals,
    )?;
    write(
        &dir.join("orders.parquet"),
        OrderArrow::new(OrderGenerator::new(scale, 1, 1)).with_batch_size(8192),
        decimals,
    )?;
    write(
        &dir.join("part.parquet"),
        PartArrow::new(PartGenerator::new(scale, 1, 1)).with_batch_size(8192),
        decimals,
    )
}

/// A directory holding the tables: the one asked for, or a temporary one removed
/// when this is dropped.
pub struct TablesDir {
    path: PathBuf,
    _temporary: Option<tempfile::TempDir>,
}

impl TablesDir {
    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The tables at `scale` in `dir` (written there unless `part.parquet`, the last one
/// written, is already there) or, without `dir`, in a new temporary directory; with
/// how long writing them took (`None` when they were there).
pub fn tables_dir(
    dir: Option<&Path>,
    scale: f64,
    decimals: Decimals,
) -> Result<(TablesDir, Option<Duration>)> {
    let (path, temporary) = match dir {
        Some(d) => (d.to_path_buf(), None),
        None => {
            let t = tempfile::tempdir()?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let mut took = None;
    if !path.join("part.parquet").exists() {
        std::fs::create_dir_all(&path)?;
        let start = Instant::now();
        write_tables(&path, scale, decimals)?;
        took = Some(start.elapsed());
    }
    let dir = TablesDir {
        path,
        _temporary: temporary,
    };
    Ok((dir, took))
}

/// Each row of `batches` as `v1 | v2 | …` (NULL as `NULL`), in their order: answers
/// in a form that compares exactly and prints readably.
pub fn text_rows(batches: &[RecordBatch]) -> Result<Vec<String>> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = vec![];
    for b in batches {
        let formatters = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()?;
        for row in 0..b.num_rows() {
            let cells = formatters
                .iter()
                .map(|f| f.value(row).try_to_string())
                .collect::<Result<Vec<_>, _>>()?;
            out.push(cells.join(" | "));
        }
    }
    Ok(out)
}

fn write(
    path: &Path,
    batches: impl Iterator<Item = Result<RecordBatch, arrow::error::ArrowError>>,
    decimals: Decimals,
) -> Result<()> {
    let mut writer: Option<ArrowWriter<File>> = None;
    for batch in batches {
        let batch = convert(&batch?, decimals)?;
        let w = match &mut writer {
            Some(w) => w,
            None => writer.insert(ArrowWriter::try_new(
                File::create(path)?,
                batch.schema(),
                None,
            )?),
        };
        w.write(&batch)?;
    }
    let writer = writer.ok_or_else(|| {
        DataFusionError::Execution(format!("no rows generated for {}", path.display()))
    })?;
    writer.close()?;
    Ok(())
}

/// Decimals as doubles when asked; string views as strings (either reads alike).
fn convert(batch: &RecordBatch, decimals: Decimals) -> Result<RecordBatch> {
    let mut fields = vec![];
    let mut columns = vec![];
    for (f, c) in batch.schema().fields().iter().zip(batch.columns()) {
        let to = match f.data_type() {
            DataType::Decimal128(..) if decimals == Decimals::Double => DataType::Float64,
            DataType::Utf8View => DataType::Utf8,
            t => t.clone(),
        };
        columns.push(arrow::compute::cast(c, &to)?);
        fields.push(Field::new(f.name(), to, f.is_nullable()));
    }
    Ok(RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns,
    )?)
}

/// Registers the three tables of `dir` in `ctx`.
pub async fn register_tables(ctx: &SessionContext, dir: &Path) -> Result<()> {
    for t in TABLES {
        let path = dir.join(format!("{t}.parquet"));
        let path = path.to_str().ok_or_else(|| {
            DataFusionError::Configuration(format!("{} is not UTF-8", path.display()))
        })?;
        ctx.register_parquet(t, path, ParquetReadOptions::default())
            .await?;
    }
    Ok(())
}
