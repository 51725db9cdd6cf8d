//! `broadhead functions [PATTERN]`: the function registry, one row per signature
//! (as DuckDB's `duckdb_functions()`), the same entries `docs/functions.md` is
//! generated from.

use broadhead::functions::{catalog, catalog_schema, Pattern};
use clap::Args;

use super::args::OutputArgs;
use super::{output, CliResult, Failure};

/// Arguments of `broadhead functions`.
#[derive(Args, Debug)]
pub struct FunctionsArgs {
    /// Only functions whose name or an alias contains PATTERN, or matches it as a
    /// glob (`*`, `?`, `[…]`); case-insensitive. An operator also matches its SQL
    /// spelling (`+`, `LIKE`)
    pattern: Option<String>,
    #[command(flatten)]
    out: OutputArgs,
}

/// Runs `broadhead functions`.
pub fn run(a: FunctionsArgs) -> CliResult {
    let pattern = Pattern::new(a.pattern.as_deref()).map_err(Failure::usage)?;
    let batch = catalog(&pattern);
    if batch.num_rows() == 0 {
        if let Some(p) = &a.pattern {
            return Err(Failure::usage(format!(
                "no function matches {p:?} (`broadhead functions` lists them all)"
            )));
        }
    }
    let schema = catalog_schema();
    let mut out = output::Output::new(&a.out, &schema, Some(usize::MAX))?;
    out.write(&batch)?;
    out.finish(&schema)
}
