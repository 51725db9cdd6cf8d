//! `broadhead schema`: what a Parquet file holds.

use std::path::PathBuf;

use arrow::datatypes::DataType;
use broadhead::scan::{engine_type, SourceFile};
use broadhead::types::sql_type_name;
use clap::Args;

use super::CliResult;

/// Arguments of `broadhead schema`.
#[derive(Args, Debug)]
pub struct SchemaArgs {
    /// A Parquet file
    path: PathBuf,
}

/// Runs `broadhead schema`.
pub fn run(a: SchemaArgs) -> CliResult {
    let file = SourceFile::open(&a.path)?;
    let meta = file.metadata.metadata();
    let schema = file.metadata.schema();
    let groups = meta.row_groups();
    let bytes: i64 = groups.iter().map(|g| g.compressed_size()).sum();
    outln!("file:       {}", a.path.display())?;
    outln!("rows:       {}", file.num_rows())?;
    outln!(
        "row groups: {} ({} compressed bytes{})",
        groups.len(),
        bytes,
        match (
            groups.iter().map(|g| g.num_rows()).min(),
            groups.iter().map(|g| g.num_rows()).max()
        ) {
            (Some(lo), Some(hi)) if lo == hi => format!(", {lo} rows each"),
            (Some(lo), Some(hi)) => format!(", {lo} to {hi} rows"),
            _ => String::new(),
        }
    )?;
    outln!("columns:    {}\n", schema.fields().len())?;
    let width = schema
        .fields()
        .iter()
        .map(|f| f.name().len())
        .max()
        .unwrap_or(4)
        .max(4);
    outln!("{:width$}  type", "name")?;
    for f in schema.fields() {
        let t = sql_name(f.data_type());
        let note = match engine_type(f.data_type()) {
            Some(e) => format!("  (read as {})", sql_name(&e)),
            None => String::new(),
        };
        let null = if f.is_nullable() { "" } else { " NOT NULL" };
        outln!("{:width$}  {t}{null}{note}", f.name())?;
    }
    Ok(())
}

/// The SQL name of a type, as DuckDB writes it: the engine's names for the types it
/// computes on (`DOUBLE`, `VARCHAR`, `TIMESTAMP WITH TIME ZONE`), and SQL-style names
/// for the others (`DECIMAL(15,2)`, `BLOB`, `VARCHAR[]`, `STRUCT(a INTEGER)`).
pub fn sql_name(t: &DataType) -> String {
    use DataType::*;
    match t {
        Decimal32(p, s) | Decimal64(p, s) | Decimal128(p, s) | Decimal256(p, s) => {
            format!("DECIMAL({p},{s})")
        }
        Utf8View | LargeUtf8 => "VARCHAR".into(),
        Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => "BLOB".into(),
        Float16 => "FLOAT16".into(),
        Date64 => "DATE".into(),
        Time32(_) | Time64(_) => "TIME".into(),
        Duration(_) | Interval(_) => "INTERVAL".into(),
        List(f) | LargeList(f) | ListView(f) | LargeListView(f) => {
            format!("{}[]", sql_name(f.data_type()))
        }
        FixedSizeList(f, n) => format!("{}[{n}]", sql_name(f.data_type())),
        Struct(fields) => format!(
            "STRUCT({})",
            fields
                .iter()
                .map(|f| format!("{} {}", f.name(), sql_name(f.data_type())))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Map(entries, _) => match entries.data_type() {
            Struct(kv) if kv.len() == 2 => format!(
                "MAP({}, {})",
                sql_name(kv[0].data_type()),
                sql_name(kv[1].data_type())
            ),
            _ => "MAP".into(),
        },
        Dictionary(_, v) => sql_name(v),
        RunEndEncoded(_, v) => sql_name(v.data_type()),
        Union(..) => "UNION".into(),
        _ => sql_type_name(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{Field, TimeUnit};
    use std::sync::Arc;

    #[test]
    fn sql_names() {
        let list = DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
        for (t, name) in [
            (DataType::Decimal128(15, 2), "DECIMAL(15,2)"),
            (DataType::Utf8View, "VARCHAR"),
            (DataType::LargeUtf8, "VARCHAR"),
            (
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                "TIMESTAMP WITH TIME ZONE",
            ),
            (list.clone(), "VARCHAR[]"),
            (
                DataType::Struct(vec![Field::new("a", DataType::Int32, true)].into()),
                "STRUCT(a INTEGER)",
            ),
            (
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                "VARCHAR",
            ),
            (DataType::Binary, "BLOB"),
            (DataType::Float64, "DOUBLE"),
        ] {
            assert_eq!(sql_name(&t), name, "{t}");
        }
    }
}
