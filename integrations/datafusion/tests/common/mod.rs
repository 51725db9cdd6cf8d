//! Helpers shared by the tests: running SQL with and without the rule.

#![allow(dead_code)]

use arrow::array::RecordBatch;
use arrow::util::display::{ArrayFormatter, FormatOptions};
use broadhead_datafusion::{coverage, BroadheadOptions, Coverage, Semantics};
use datafusion::prelude::{SessionConfig, SessionContext};

pub mod tpch;

/// A context with one partition (so that both runs read batches alike).
pub fn plain_context() -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_target_partitions(1))
}

/// `ctx` with the rule, with `semantics`.
pub fn with_rule(ctx: &SessionContext, semantics: Semantics) -> SessionContext {
    broadhead_datafusion::register_with(ctx, BroadheadOptions { semantics })
}

/// The rows of `sql`'s answer as text, sorted (NULL as `NULL`), or its error.
pub async fn rows(ctx: &SessionContext, sql: &str) -> Result<Vec<String>, String> {
    let df = ctx.sql(sql).await.map_err(|e| e.to_string())?;
    let batches = df.collect().await.map_err(|e| e.to_string())?;
    let mut out = text_rows(&batches);
    out.sort();
    Ok(out)
}

/// Each row of `batches` as `v1 | v2 | …`.
pub fn text_rows(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut out = vec![];
    for b in batches {
        let formatters: Vec<_> = b
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for row in 0..b.num_rows() {
            let cells: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            out.push(cells.join(" | "));
        }
    }
    out
}

/// The coverage of `sql`'s physical plan in `ctx`.
pub async fn plan_coverage(ctx: &SessionContext, sql: &str) -> Coverage {
    let df = ctx.sql(sql).await.unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    coverage(&plan)
}
