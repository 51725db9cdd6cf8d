//! `broadhead schema`: what a Parquet file holds.

use std::path::PathBuf;

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

pub fn run(a: SchemaArgs) -> CliResult {
    let file = SourceFile::open(&a.path)?;
    let meta = file.metadata.metadata();
    let schema = file.metadata.schema();
    let groups = meta.row_groups();
    let bytes: i64 = groups.iter().map(|g| g.compressed_size()).sum();
    println!("file:       {}", a.path.display());
    println!("rows:       {}", file.num_rows());
    println!(
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
    );
    println!("columns:    {}\n", schema.fields().len());
    let width = schema
        .fields()
        .iter()
        .map(|f| f.name().len())
        .max()
        .unwrap_or(4)
        .max(4);
    println!("{:width$}  type", "name");
    for f in schema.fields() {
        let t = sql_type_name(f.data_type());
        let note = match engine_type(f.data_type()) {
            Some(e) => format!("  (read as {})", sql_type_name(&e)),
            None => String::new(),
        };
        let null = if f.is_nullable() { "" } else { " NOT NULL" };
        println!("{:width$}  {t}{null}{note}", f.name());
    }
    Ok(())
}
