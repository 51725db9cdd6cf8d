//! `broadhead explain`: every stage's view of an expression.

use std::path::PathBuf;

use arrow::datatypes::DataType;
use broadhead::prepare::{Prepared, Purpose};
use broadhead::sql::parse_expr;
use broadhead::{Backend, Explanation, Filter, KernelCache, Projector};
use clap::Args;

use super::filter::open_dataset;
use super::schema::sql_name;
use super::text_arg::text_arg;
use super::{CliResult, Failure};

/// Arguments of `broadhead explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A SQL expression; @FILE reads it from FILE, - from standard input
    #[arg(allow_hyphen_values = true, value_parser = text_arg)]
    expr: String,
    /// A Parquet file whose schema to bind against (without it: the parse tree only)
    #[arg(long)]
    schema: Option<PathBuf>,
    /// Also print the native assembly
    #[arg(long)]
    asm: bool,
}

/// Runs `broadhead explain`.
pub fn run(a: ExplainArgs) -> CliResult {
    let text = &a.expr;
    let expr = parse_expr(text).map_err(|e| Failure::expr(e, "the expression", text))?;
    let Some(path) = &a.schema else {
        outln!("parsed:    {expr}")?;
        outln!("\n(give --schema <PARQUET FILE> for the typed and optimized trees, the LLVM IR and the assembly)")?;
        return Ok(());
    };
    let dataset = open_dataset(std::slice::from_ref(path))?;
    let schema = dataset.schema();
    let prepared = Prepared::new(&expr, schema, Purpose::Projection)
        .map_err(|e| Failure::expr(e, "the expression", text))?;
    let cache = KernelCache::global();
    let result_type = sql_name(&prepared.typed().data_type);
    let explanation = if prepared.typed().data_type == DataType::Boolean {
        Filter::from_prepared(&prepared, cache)?.explain()?
    } else {
        Projector::from_prepared(schema, &[prepared], cache)?.explain()?
    };
    let pipeline = format!("{:?}", cache.pipeline());
    out!("{}", render(&explanation, &result_type, &pipeline, a.asm))
}

/// The explanation as printed; `result_type`: the SQL type of the expression's value,
/// `pipeline`: the name of the pipeline that compiled the kernel.
fn render(e: &Explanation, result_type: &str, pipeline: &str, asm: bool) -> String {
    let mut out = String::new();
    for s in &e.stages {
        out.push_str(&format!("parsed:    {}\n", s.parsed));
        out.push_str(&format!("typed:     {}\n", s.typed));
        out.push_str(&format!("optimized: {}\n", s.optimized));
    }
    out.push_str(&format!("type:      {result_type}\n"));
    match &e.backend {
        Backend::Jit(c) => {
            out.push_str("backend:   JIT (LLVM)\n");
            for node in &e.interpreted {
                out.push_str(&format!("{node}\n"));
            }
            out.push_str(&format!("tiers:     {}\n", e.tiers));
            out.push_str(&format!("\n== LLVM IR ==\n{}\n", c.ir.trim_end()));
            out.push_str(&format!(
                "\n== LLVM IR (after the {pipeline} pipeline) ==\n{}\n",
                c.optimized_ir.trim_end()
            ));
            if asm {
                out.push_str(&format!("\n== assembly ==\n{}\n", c.assembly.trim_end()));
            } else {
                out.push_str("\n(add --asm for the native assembly)\n");
            }
        }
        Backend::Interpreted(reason) => {
            out.push_str(&format!("backend:   interpreter ({reason})\n"));
        }
    }
    out
}
