//! The one prepare path: SQL text or an [`Expr`], plus a schema, becomes the bound and
//! optimized expression ([`Prepared`]); the back end that runs it (compiled code, or
//! the interpreter with the reason) is chosen here too.
//!
//! Every way into the engine goes through this module: [`Filter`](crate::Filter),
//! [`Projector`](crate::Projector), the Parquet scan and its `JitPredicate`, the
//! `broadhead` command line and the benchmarks. Text is parsed once: a caller that
//! needs the tree (to check it against one schema, then evaluate it against the
//! columns it loaded, say) keeps the [`Prepared`] and [rebinds](Prepared::rebind)
//! its tree rather than parsing the text again.
//!
//! ```
//! use arrow::datatypes::{DataType, Field, Schema};
//! use broadhead::prepare::{Prepared, Purpose};
//! use broadhead::{Filter, KernelCache};
//!
//! let schema = Schema::new(vec![Field::new("x", DataType::Int64, true)]);
//! let prepared = Prepared::parse("x > 1 + 1", &schema, Purpose::Predicate)?;
//! assert_eq!(prepared.optimized().display(&schema).to_string(), "(x > 2)");
//! let filter = Filter::from_prepared(&prepared, KernelCache::global())?;
//! assert!(filter.is_jit());
//! # Ok::<(), broadhead::Error>(())
//! ```

use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};
use broadhead_codegen::Mode;

use crate::bind::{bind, bind_predicate};
use crate::cache::KernelCache;
use crate::error::{EvalError, Result};
use crate::expr::Expr;
use crate::kernel::Jit;
use crate::lower::{lower, lower_each};
use crate::optimize::optimize;
use crate::sql::parse_expr;
use crate::struct_fields::root_column;
use crate::tier::CompilePolicy;
use crate::typed::TypedExpr;

/// What an expression is prepared for: it decides how it is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A filter predicate: the result must be BOOLEAN (an untyped NULL or a quoted
    /// literal is read as one), as [`bind_predicate`] binds it.
    Predicate,
    /// A computed column of any type, as [`bind`] binds it.
    Projection,
}

/// An expression bound to a schema and optimized: what both back ends read.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The caller's schema (batches have it; `LargeUtf8`/`Utf8View` columns are
    /// VARCHAR, read in their layout when evaluated).
    schema: SchemaRef,
    purpose: Purpose,
    source: Option<String>,
    expr: Expr,
    typed: TypedExpr,
    optimized: TypedExpr,
}

impl Prepared {
    /// Parses `sql` and binds and optimizes it for `schema`. Errors point into `sql`.
    pub fn parse(sql: &str, schema: &Schema, purpose: Purpose) -> Result<Prepared> {
        let expr = parse_expr(sql)?;
        Self::bind(expr, Some(sql.to_string()), schema, purpose)
    }

    /// Binds and optimizes a tree built with the [`Expr`] API (or parsed already).
    pub fn new(expr: &Expr, schema: &Schema, purpose: Purpose) -> Result<Prepared> {
        Self::bind(expr.clone(), None, schema, purpose)
    }

    /// The same tree (and text) bound to another schema: the way to evaluate against
    /// a subset of the columns (those a scan loaded) what was checked against the
    /// whole schema, without parsing again.
    pub fn rebind(&self, schema: &Schema) -> Result<Prepared> {
        Self::bind(self.expr.clone(), self.source.clone(), schema, self.purpose)
    }

    /// The same tree bound as a [`Purpose::Predicate`] to the same schema.
    pub(crate) fn as_predicate(&self) -> Result<Prepared> {
        let schema = self.schema.clone();
        Self::bind(
            self.expr.clone(),
            self.source.clone(),
            &schema,
            Purpose::Predicate,
        )
    }

    fn bind(
        expr: Expr,
        source: Option<String>,
        schema: &Schema,
        purpose: Purpose,
    ) -> Result<Prepared> {
        let typed = match purpose {
            Purpose::Predicate => bind_predicate(&expr, schema)?,
            Purpose::Projection => bind(&expr, schema)?,
        };
        Ok(Self::from_typed(schema, purpose, expr, source, typed))
    }

    /// An expression already bound to `schema` (`expr` is what it was bound from, for
    /// `explain`): optimizes it.
    pub(crate) fn from_typed(
        schema: &Schema,
        purpose: Purpose,
        expr: Expr,
        source: Option<String>,
        typed: TypedExpr,
    ) -> Prepared {
        let optimized = optimize(typed.clone());
        Prepared {
            schema: Arc::new(schema.clone()),
            purpose,
            source,
            expr,
            typed,
            optimized,
        }
    }

    /// The schema it was bound to.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// What it was prepared for.
    pub fn purpose(&self) -> Purpose {
        self.purpose
    }

    /// The SQL text it was parsed from (`None` when built with the [`Expr`] API).
    pub fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }

    /// The tree as parsed (or built).
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// The tree as bound, before optimization.
    pub fn typed(&self) -> &TypedExpr {
        &self.typed
    }

    /// The bound and optimized tree: what the back ends evaluate.
    pub fn optimized(&self) -> &TypedExpr {
        &self.optimized
    }

    /// An error unless it was prepared for `schema` (its column indices are
    /// positions in that schema).
    pub(crate) fn check_schema(&self, schema: &Schema) -> Result<()> {
        if self.schema.as_ref() == schema {
            return Ok(());
        }
        Err(
            EvalError::SchemaMismatch(format!("{} was prepared for another schema", self.expr))
                .into(),
        )
    }

    /// The schema columns it reads, sorted (a STRUCT column once for all the fields
    /// read of it).
    pub fn columns(&self) -> Vec<usize> {
        let mut columns: Vec<usize> = self
            .typed
            .columns()
            .into_iter()
            .map(|c| root_column(&self.schema, c))
            .collect();
        columns.sort_unstable();
        columns.dedup();
        columns
    }

    /// The extended columns it reads, sorted: the schema's, and past them the STRUCT
    /// fields ([`crate::struct_fields`]) as bound.
    pub(crate) fn extended_columns(&self) -> Vec<usize> {
        self.typed.columns()
    }
}

/// The back end of a predicate over `schema` (the schema batches have when they reach
/// the kernel): the compiled kernel, or why the interpreter runs it instead.
pub(crate) fn predicate_backend(
    optimized: &TypedExpr,
    schema: &Schema,
    cache: &Arc<KernelCache>,
    policy: CompilePolicy,
) -> Result<std::result::Result<Jit, String>> {
    match lower(&[optimized], Mode::Filter, schema) {
        Ok(lowered) => Ok(Ok(Jit::new(
            vec![optimized.clone()],
            lowered,
            schema,
            cache,
            policy,
        )?)),
        Err(u) => Ok(Err(u.0)),
    }
}

/// The back end of projected expressions: one kernel for the outputs the JIT compiles.
pub(crate) struct ProjectionBackend {
    /// The kernel, if any output compiles.
    pub(crate) jit: Option<Jit>,
    /// For each expression, its position among the kernel's outputs (if compiled).
    pub(crate) kernel_outputs: Vec<Option<usize>>,
    /// Why the first interpreted output is interpreted.
    pub(crate) reason: Option<String>,
}

/// The back end of `exprs` (optimized, over `schema`) evaluated together.
pub(crate) fn projection_backend(
    exprs: &[&TypedExpr],
    schema: &Schema,
    cache: &Arc<KernelCache>,
    policy: CompilePolicy,
) -> Result<ProjectionBackend> {
    let (lowered, kernel_outputs, reason) = lower_each(exprs, schema);
    let jit = if lowered.program.outputs.is_empty() {
        None
    } else {
        let compiled = exprs
            .iter()
            .zip(&kernel_outputs)
            .filter(|(_, k)| k.is_some())
            .map(|(e, _)| (*e).clone())
            .collect();
        Some(Jit::new(compiled, lowered, schema, cache, policy)?)
    };
    Ok(ProjectionBackend {
        jit,
        kernel_outputs,
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Filter, Projector};
    use arrow::datatypes::{DataType, Field};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("a", DataType::Int64, true),
            Field::new("s", DataType::LargeUtf8, true),
        ])
    }

    #[test]
    fn text_and_tree_prepare_alike() {
        let schema = schema();
        let text = Prepared::parse("a + 1 > 2 AND s = 'x'", &schema, Purpose::Predicate).unwrap();
        let tree = Prepared::new(text.expr(), &schema, Purpose::Predicate).unwrap();
        assert_eq!(text.optimized(), tree.optimized());
        assert_eq!(text.source(), Some("a + 1 > 2 AND s = 'x'"));
        assert_eq!(tree.source(), None);
        // VARCHAR, whatever the string layout of the caller's schema.
        assert_eq!(text.columns(), vec![0, 1]);
        let filter = Filter::new(&schema, "a + 1 > 2 AND s = 'x'").unwrap();
        assert_eq!(filter.typed_expr(), text.optimized());
    }

    #[test]
    fn a_predicate_must_be_boolean() {
        let schema = schema();
        let e = Prepared::parse("a + 1", &schema, Purpose::Predicate).unwrap_err();
        assert!(
            e.to_string()
                .contains("a filter needs a BOOLEAN expression"),
            "{e}"
        );
        // Prepared for a projection, then compiled as a filter: bound again as one.
        let p = Prepared::parse("a + 1", &schema, Purpose::Projection).unwrap();
        let e = Filter::from_prepared(&p, KernelCache::global()).unwrap_err();
        assert!(
            e.to_string()
                .contains("a filter needs a BOOLEAN expression"),
            "{e}"
        );
        let p = Prepared::parse("NULL", &schema, Purpose::Projection).unwrap();
        let f = Filter::from_prepared(&p, KernelCache::global()).unwrap();
        assert_eq!(f.typed_expr().data_type, DataType::Boolean);
    }

    #[test]
    fn rebind_moves_columns_without_parsing() {
        let schema = schema();
        let p = Prepared::parse("a * 2", &schema, Purpose::Projection).unwrap();
        let only_a = Schema::new(vec![Field::new("a", DataType::Int64, true)]);
        let q = p.rebind(&only_a).unwrap();
        assert_eq!(q.source(), Some("a * 2"));
        assert_eq!(q.columns(), vec![0]);
        assert_eq!(q.schema().as_ref(), &only_a);
        // Compiling for a schema it was not prepared for is refused.
        let e = Projector::from_prepared(&only_a, &[p], KernelCache::global()).unwrap_err();
        assert!(e.to_string().contains("prepared for another schema"), "{e}");
        assert!(Projector::from_prepared(&only_a, &[q], KernelCache::global()).is_ok());
    }
}
