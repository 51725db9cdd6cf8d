//! Helpers shared by the tests: running SQL with and without the rule.

#![allow(dead_code)]

use broadhead_datafusion::{coverage, BroadheadOptions, Coverage, Semantics};
use broadhead_tpch::text_rows;
use datafusion::prelude::{SessionConfig, SessionContext};

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
    let mut out = text_rows(&batches).map_err(|e| e.to_string())?;
    out.sort();
    Ok(out)
}

/// The coverage of `sql`'s physical plan in `ctx`.
pub async fn plan_coverage(ctx: &SessionContext, sql: &str) -> Coverage {
    let df = ctx.sql(sql).await.unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    coverage(&plan)
}
