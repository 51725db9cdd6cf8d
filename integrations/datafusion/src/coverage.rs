//! How much of a plan's expressions Broadhead computes: [`coverage`].

use std::sync::Arc;

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::physical_expr::expressions::{Column, Literal};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::ExecutionPlan;

use crate::BroadheadExpr;

/// The share of a plan's filter and projection expressions Broadhead computes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Coverage {
    /// Filter predicates and projection expressions with at least one operator (a
    /// projection of a bare column is not counted).
    pub expressions: usize,
    /// Of those, the ones whose root Broadhead computes.
    pub compiled: usize,
    /// Operators (nodes other than columns and literals) in those expressions.
    pub operators: usize,
    /// Of those, the ones Broadhead computes.
    pub compiled_operators: usize,
    /// Of `compiled_operators`, the ones in expressions Broadhead's interpreter
    /// computes (constructs its JIT does not compile, such as decimals of more than
    /// 18 digits), not machine code.
    pub interpreted_operators: usize,
}

impl std::fmt::Display for Coverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} expressions at the root, {}/{} operators",
            self.compiled, self.expressions, self.compiled_operators, self.operators
        )?;
        if self.interpreted_operators > 0 {
            write!(
                f,
                " ({} by Broadhead's interpreter)",
                self.interpreted_operators
            )?;
        }
        Ok(())
    }
}

/// The [`Coverage`] of the `FilterExec` predicates and `ProjectionExec` expressions
/// of `plan`.
pub fn coverage(plan: &Arc<dyn ExecutionPlan>) -> Coverage {
    let mut c = Coverage::default();
    // The closure never fails.
    let _ = plan.apply(|node| {
        if let Some(filter) = node.downcast_ref::<FilterExec>() {
            c.add(filter.predicate());
        }
        if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
            for p in projection.expr() {
                c.add(&p.expr);
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    c
}

impl Coverage {
    fn add(&mut self, expr: &Arc<dyn PhysicalExpr>) {
        let [total, compiled, interpreted] = operators(expr);
        if total == 0 {
            return;
        }
        self.expressions += 1;
        self.compiled += usize::from(expr.is::<BroadheadExpr>());
        self.operators += total;
        self.compiled_operators += compiled;
        self.interpreted_operators += interpreted;
    }
}

/// The operators of `expr`, how many of them Broadhead computes, and how many of
/// those its interpreter does.
fn operators(expr: &Arc<dyn PhysicalExpr>) -> [usize; 3] {
    let mut counts = match expr.downcast_ref::<BroadheadExpr>() {
        Some(b) if b.is_jit() => [b.operators(), b.operators(), 0],
        Some(b) => [b.operators(), b.operators(), b.operators()],
        None if expr.is::<Column>() || expr.is::<Literal>() => [0, 0, 0],
        None => [1, 0, 0],
    };
    for child in expr.children() {
        for (c, n) in counts.iter_mut().zip(operators(child)) {
            *c += n;
        }
    }
    counts
}
