//! Broadhead as DataFusion's expression engine.
//!
//! DataFusion evaluates a physical expression node by node, materializing one array
//! per node. This crate's [`BroadheadRule`] (a [`PhysicalOptimizerRule`]) rewrites the
//! predicates of `FilterExec`s and the expressions of `ProjectionExec`s into
//! [`BroadheadExpr`]s: one compiled Broadhead kernel per expression, which reads the
//! input columns once and writes the result (or, for a filter, the selection mask)
//! in one pass.
//!
//! ```no_run
//! # async fn demo() -> datafusion::common::Result<()> {
//! use datafusion::prelude::*;
//!
//! let ctx = broadhead_datafusion::register(&SessionContext::new());
//! ctx.register_parquet("lineitem", "lineitem.parquet", ParquetReadOptions::default())
//!     .await?;
//! let df = ctx
//!     .sql("SELECT sum(l_extendedprice * l_discount) FROM lineitem \
//!           WHERE l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24")
//!     .await?;
//! df.show().await?;
//! # Ok(()) }
//! ```
//!
//! # Semantics
//!
//! By default ([`Semantics::DataFusion`]) a query's result never depends on whether
//! the rule is on: only the nodes on which Broadhead and DataFusion agree are
//! translated (see the crate's README for the table), a batch on which the compiled
//! kernel raises an error (overflow, division by zero, which DataFusion may answer
//! with a wrapped value, an infinity or its own error) is evaluated again by
//! DataFusion's own expression, and float comparisons run compiled only for batches
//! whose inputs hold no NaN and no negative zero (where Arrow's total order and
//! Broadhead's SQL order differ). [`Semantics::Broadhead`] translates more (integer
//! division by a column, any float comparison, `ILIKE`, casts from floats to
//! integers) and gives Broadhead's SQL semantics: errors for the rows whose value is
//! used, NaN the largest value and equal to itself, `-0.0 = 0.0`.
//!
//! [`PhysicalOptimizerRule`]: datafusion::physical_optimizer::PhysicalOptimizerRule

#![warn(missing_docs)]

mod coverage;
mod expr;
mod rule;
mod translate;

use std::sync::Arc;

use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::prelude::SessionContext;

pub use coverage::{coverage, Coverage};
pub use expr::{evaluations, BroadheadExpr, BroadheadExprParts, Evaluations, Purpose};
pub use rule::BroadheadRule;

/// Whose semantics a rewritten plan follows where Broadhead and DataFusion differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Semantics {
    /// DataFusion's: the result is the one DataFusion gives without the rule.
    #[default]
    DataFusion,
    /// Broadhead's SQL semantics (PostgreSQL's, see Broadhead's `docs/semantics.md`):
    /// integer overflow and division by zero are errors for the rows whose value is
    /// used, NaN equals NaN and is the largest value, `-0.0 = 0.0`.
    Broadhead,
}

/// The options of the rewrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BroadheadOptions {
    /// Whose semantics the rewritten expressions follow.
    pub semantics: Semantics,
}

/// A [`SessionContext`] with the state (tables, configuration) of `ctx` whose plans
/// run their filters and projections through Broadhead, with DataFusion's semantics.
///
/// DataFusion's `SessionContext` cannot add a physical optimizer rule in place, so
/// this returns a new context sharing `ctx`'s catalog: `let ctx = register(&ctx);`.
pub fn register(ctx: &SessionContext) -> SessionContext {
    register_with(ctx, BroadheadOptions::default())
}

/// [`register`] with explicit [`BroadheadOptions`].
pub fn register_with(ctx: &SessionContext, options: BroadheadOptions) -> SessionContext {
    SessionContext::new_with_state(with_broadhead(ctx.state(), options))
}

/// `state` with the [`BroadheadRule`] appended to its physical optimizer rules.
pub fn with_broadhead(state: SessionState, options: BroadheadOptions) -> SessionState {
    SessionStateBuilder::new_from_existing(state)
        .with_broadhead(options)
        .build()
}

/// Adds the [`BroadheadRule`] to a [`SessionStateBuilder`].
pub trait SessionStateBuilderExt {
    /// Appends the [`BroadheadRule`] (after DataFusion's own rules, so filters are
    /// pushed down and projections merged before they are compiled).
    fn with_broadhead(self, options: BroadheadOptions) -> Self;
}

impl SessionStateBuilderExt for SessionStateBuilder {
    fn with_broadhead(self, options: BroadheadOptions) -> Self {
        self.with_physical_optimizer_rule(Arc::new(BroadheadRule::new(options)))
    }
}
