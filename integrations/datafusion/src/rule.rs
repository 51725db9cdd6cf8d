//! [`BroadheadRule`]: the physical optimizer rule that compiles filters and
//! projections.

use std::sync::Arc;

use arrow::datatypes::Schema;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::Result;
use datafusion::config::ConfigOptions;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::filter::{FilterExec, FilterExecBuilder};
use datafusion::physical_plan::projection::{ProjectionExec, ProjectionExpr};
use datafusion::physical_plan::ExecutionPlan;

use crate::expr::{BroadheadExpr, Purpose};
use crate::BroadheadOptions;

/// Rewrites the predicate of every `FilterExec` and the expressions of every
/// `ProjectionExec` into [`BroadheadExpr`]s, node by node: a sub-tree Broadhead does
/// not translate stays DataFusion's, and its own sub-trees are compiled where they
/// can be.
///
/// Enable it with [`crate::register`] or
/// [`SessionStateBuilderExt::with_broadhead`](crate::SessionStateBuilderExt).
#[derive(Debug, Default, Clone)]
pub struct BroadheadRule {
    options: BroadheadOptions,
}

impl BroadheadRule {
    /// The rule with these options.
    pub fn new(options: BroadheadOptions) -> BroadheadRule {
        BroadheadRule { options }
    }

    /// `expr` (over `schema`) with every translatable sub-tree compiled.
    pub fn rewrite_expr(
        &self,
        expr: &Arc<dyn PhysicalExpr>,
        schema: &Schema,
        purpose: Purpose,
    ) -> Result<Arc<dyn PhysicalExpr>> {
        // An expression Broadhead would only interpret (decimals of more than 18
        // digits, say) is left to DataFusion's own interpreter.
        let compiled = BroadheadExpr::try_new(expr, schema, self.options.semantics, purpose);
        if let Some(b) = compiled.filter(BroadheadExpr::is_jit) {
            // The inputs DataFusion computes may have parts of their own to compile.
            let inputs = b
                .inputs()
                .iter()
                .map(|i| self.rewrite_expr(i, schema, Purpose::Value))
                .collect::<Result<Vec<_>>>()?;
            return Ok(Arc::new(b.with_inputs(inputs)));
        }
        let children = expr.children();
        if children.is_empty() {
            return Ok(Arc::clone(expr));
        }
        let new = children
            .into_iter()
            .map(|c| self.rewrite_expr(c, schema, Purpose::Value))
            .collect::<Result<Vec<_>>>()?;
        let rewritten = Arc::clone(expr).with_new_children(new)?;
        // DataFusion derives some nodes' nullability from their children's shape
        // (`CASE WHEN a IS NOT NULL THEN a …` is not nullable); where compiled
        // children would change the node's field, the node keeps its own children.
        let (old, new) = (expr.return_field(schema)?, rewritten.return_field(schema)?);
        if old.data_type() != new.data_type() || old.is_nullable() != new.is_nullable() {
            return Ok(Arc::clone(expr));
        }
        Ok(rewritten)
    }

    fn rewrite_plan(
        &self,
        node: Arc<dyn ExecutionPlan>,
    ) -> Result<Transformed<Arc<dyn ExecutionPlan>>> {
        if let Some(filter) = node.downcast_ref::<FilterExec>() {
            let schema = filter.input().schema();
            let predicate = self.rewrite_expr(filter.predicate(), &schema, Purpose::Predicate)?;
            if predicate.as_ref() == filter.predicate().as_ref() {
                return Ok(Transformed::no(node));
            }
            let rewritten = FilterExecBuilder::from(filter)
                .with_predicate(predicate)
                .build()?;
            return Ok(Transformed::yes(Arc::new(rewritten)));
        }
        if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
            let schema = projection.input().schema();
            let mut changed = false;
            let exprs = projection
                .expr()
                .iter()
                .map(|p| {
                    let expr = self.rewrite_expr(&p.expr, &schema, Purpose::Value)?;
                    changed |= expr.as_ref() != p.expr.as_ref();
                    Ok(ProjectionExpr {
                        expr,
                        alias: p.alias.clone(),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            if !changed {
                return Ok(Transformed::no(node));
            }
            let rewritten = ProjectionExec::try_new(exprs, Arc::clone(projection.input()))?;
            return Ok(Transformed::yes(Arc::new(rewritten)));
        }
        Ok(Transformed::no(node))
    }
}

impl PhysicalOptimizerRule for BroadheadRule {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            let t = self.rewrite_plan(node)?;
            Ok(Transformed::new(
                t.data,
                t.transformed,
                TreeNodeRecursion::Continue,
            ))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "broadhead"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
