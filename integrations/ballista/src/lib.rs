//! Broadhead expressions on a [Ballista](https://datafusion.apache.org/ballista/)
//! cluster.
//!
//! Ballista sends each stage of a physical plan from its scheduler to its executors
//! as protobuf. A [`BroadheadExpr`](broadhead_datafusion::BroadheadExpr) (the compiled
//! filters and projections of `broadhead-datafusion`) is not one of DataFusion's
//! expressions, so it travels through a `PhysicalExtensionCodec`: [`BroadheadCodec`]
//! sends it as its SQL text, the schema of its inputs, DataFusion's own expression
//! and its options, and the executor compiles the SQL again (through Broadhead's
//! kernel cache: once per expression shape and process). Every other plan node and
//! expression goes through Ballista's own codec.
//!
//! [`ballista_state`] is the one-call setup: a `SessionState` whose query planner
//! applies the [`BroadheadRule`] ([`BroadheadQueryPlanner`]) and with the codec, for
//! `SessionContext::standalone_with_state` (a scheduler and an executor in this
//! process) or `SessionContext::remote_with_state`:
//!
//! ```
//! # #[tokio::main(flavor = "multi_thread")]
//! # async fn main() -> datafusion::common::Result<()> {
//! use ballista::prelude::SessionContextExt;
//! use broadhead_ballista::ballista_state;
//! use broadhead_datafusion::BroadheadOptions;
//! use datafusion::prelude::{SessionConfig, SessionContext};
//!
//! let state = ballista_state(SessionConfig::new(), BroadheadOptions::default());
//! let ctx = SessionContext::standalone_with_state(state).await?;
//! let batches = ctx
//!     .sql("SELECT x * 2 + 1 AS y FROM (VALUES (1), (2), (NULL)) AS t(x) WHERE x > 1 OR x IS NULL")
//!     .await?
//!     .collect()
//!     .await?;
//! let shown = arrow::util::pretty::pretty_format_batches(&batches)?.to_string();
//! assert!(shown.contains("| 5 |"), "{shown}");
//! # Ok(()) }
//! ```
//!
//! On a cluster of separate processes, the scheduler must plan with the rule and
//! every process must have the codec: the scheduler's session builder returns
//! [`ballista_state`]`(config, options)`, and executors are started with
//! [`BroadheadCodec`] as their physical codec (see the crate's README).

#![warn(missing_docs)]

mod codec;

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use ballista_core::extension::SessionConfigExt;
use broadhead_datafusion::{BroadheadOptions, BroadheadRule};
use datafusion::catalog::Session;
use datafusion::common::Result;
use datafusion::execution::context::QueryPlanner;
use datafusion::execution::session_state::{SessionState, SessionStateBuilder};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_planner::{DefaultPhysicalPlanner, PhysicalPlanner};
use datafusion::prelude::SessionConfig;

pub use codec::{BroadheadCodec, DecodedExpressions};

/// `config` with a [`BroadheadCodec`] as Ballista's physical extension codec,
/// wrapping the codec `config` had (Ballista's own, unless another was set; a
/// `BroadheadCodec` already there is kept as it is).
pub fn with_broadhead_codec(config: SessionConfig) -> SessionConfig {
    let inner = config.ballista_physical_extension_codec();
    let any: &dyn Any = inner.as_ref();
    if any.is::<BroadheadCodec>() {
        return config;
    }
    config.with_ballista_physical_extension_codec(Arc::new(BroadheadCodec::new(inner)))
}

/// A `SessionState` whose plans run their filters and projections through Broadhead
/// on a Ballista cluster: DataFusion's default features, `config` with Ballista's
/// settings (`upgrade_for_ballista`) and a [`BroadheadCodec`]
/// ([`with_broadhead_codec`]), and a [`BroadheadQueryPlanner`] with `options`.
///
/// It is what `SessionContext::standalone_with_state` and `remote_with_state` take,
/// and what a scheduler's session builder returns.
pub fn ballista_state(config: SessionConfig, options: BroadheadOptions) -> SessionState {
    SessionStateBuilder::new()
        .with_default_features()
        .with_config(with_broadhead_codec(config.upgrade_for_ballista()))
        .with_query_planner(Arc::new(BroadheadQueryPlanner::new(options)))
        .build()
}

/// DataFusion's physical planner followed by the
/// [`BroadheadRule`]: the way the rule reaches Ballista's scheduler.
///
/// Ballista's adaptive planner (its default) replaces a session's physical optimizer
/// rules with its own list, so a rule added with `with_broadhead` is dropped there;
/// it keeps the session's query planner. (The static planner, with
/// `ballista.planner.adaptive.enabled` off, runs this planner too.) The stages the
/// adaptive planner re-plans after each shuffle keep their `BroadheadExpr`s.
#[derive(Debug, Default)]
pub struct BroadheadQueryPlanner {
    rule: BroadheadRule,
}

impl BroadheadQueryPlanner {
    /// The planner compiling with these options.
    pub fn new(options: BroadheadOptions) -> BroadheadQueryPlanner {
        BroadheadQueryPlanner {
            rule: BroadheadRule::new(options),
        }
    }
}

#[async_trait]
impl QueryPlanner for BroadheadQueryPlanner {
    async fn create_physical_plan(
        &self,
        logical_plan: &LogicalPlan,
        session: &dyn Session,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let plan = DefaultPhysicalPlanner::default()
            .create_physical_plan(logical_plan, session)
            .await?;
        self.rule.optimize(plan, session.config_options())
    }
}
