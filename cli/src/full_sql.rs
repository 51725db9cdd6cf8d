//! `broadhead sql` beyond the scan (feature `datafusion`): the statement planned and
//! run by DataFusion (GROUP BY, ORDER BY, aggregates, joins, subqueries, `EXPLAIN`),
//! with Broadhead compiling the plan's filters and projections
//! ([`broadhead_datafusion::register`]).
//!
//! Tables are Parquet paths, as the scan takes them: `'data/*.parquet'` (a file, a
//! directory or a glob, expanded by [`expand_paths`]), `"f.parquet"`,
//! `read_parquet('f.parquet')` (or `parquet_scan`), and unquoted names such as
//! `lineitem.parquet`. A catalog resolves every table name DataFusion asks for as a
//! path, so a path may appear wherever SQL has a table: in joins, subqueries, CTEs.

use std::sync::{Arc, Mutex};

use broadhead::parquet::{expand_paths, Dataset};
use broadhead_datafusion::BroadheadExpr;
use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::catalog::{
    CatalogProvider, CatalogProviderList, SchemaProvider, TableFunctionArgs, TableFunctionImpl,
    TableProvider,
};
use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::common::ScalarValue;
use datafusion::datasource::file_format::parquet::ParquetFormat;
use datafusion::datasource::listing::{
    ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
};
use datafusion::datasource::physical_plan::parquet::transform_schema_to_view;
use datafusion::error::DataFusionError;
use datafusion::execution::SessionStateBuilder;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::{execute_stream, ExecutionPlan, PhysicalExpr};
use datafusion::prelude::{SQLOptions, SessionConfig, SessionContext};
use futures::StreamExt;
use parquet::arrow::parquet_to_arrow_schema;

use crate::args::SqlArgs;
use crate::output::Output;
use crate::target::check_not_input;
use crate::{warn, CliResult, Failure};

/// The table functions that read Parquet files: `read_parquet('data/*.parquet')`.
const TABLE_FUNCTIONS: [&str; 2] = ["read_parquet", "parquet_scan"];

/// Runs the statement of `a` through DataFusion.
pub fn run(a: &SqlArgs) -> CliResult {
    let threads = a.exec.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name("broadhead-datafusion")
        .enable_all()
        .build()?;
    runtime.block_on(run_statement(a, threads.max(1)))
}

async fn run_statement(a: &SqlArgs, threads: usize) -> CliResult {
    let mut config = SessionConfig::new()
        .with_target_partitions(threads)
        .with_batch_size(a.exec.batch_size as usize);
    config.options_mut().execution.parquet.pruning = !a.exec.no_prune;
    let tables = Arc::new(PathTables {
        view_types: config.options().execution.parquet.schema_force_view_types,
        opened: Mutex::new(Vec::new()),
    });
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .with_catalog_list(Arc::new(PathCatalogs(Arc::clone(&tables))))
        .build();
    let ctx = SessionContext::new_with_state(state);
    for name in TABLE_FUNCTIONS {
        ctx.register_udtf(name, Arc::new(ReadParquet(Arc::clone(&tables))));
    }
    // `--interpret`: DataFusion's own expression evaluation, for comparison.
    let ctx = if a.exec.interpret {
        ctx
    } else {
        broadhead_datafusion::register(&ctx)
    };
    // Queries only: no CREATE, INSERT, COPY or SET from the command line.
    let read_only = SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false);
    let frame = ctx
        .sql_with_options(&a.query, read_only)
        .await
        .map_err(failure)?;
    let inputs = tables.opened.lock().map(|o| o.clone()).unwrap_or_default();
    check_not_input(&a.out.output, &inputs)?;
    let plan = frame.create_physical_plan().await.map_err(failure)?;
    if a.exec.stats {
        report_compiled(&plan, a.exec.interpret);
    }
    let schema = plan.schema();
    let mut output = Output::new(&a.out, &schema, None)?;
    let mut batches = execute_stream(plan, ctx.task_ctx()).map_err(failure)?;
    while let Some(batch) = batches.next().await {
        output.write(&batch.map_err(failure)?)?;
    }
    output.finish(&schema)
}

/// Writes to stderr how much of the plan Broadhead computes and the expressions it
/// compiled, with the back end of each.
fn report_compiled(plan: &Arc<dyn ExecutionPlan>, without_broadhead: bool) {
    if without_broadhead {
        warn(format_args!(
            "broadhead: DataFusion evaluated every expression (--interpret)"
        ));
        return;
    }
    warn(format_args!(
        "broadhead: Broadhead computes {} of the plan's filters and projections",
        broadhead_datafusion::coverage(plan)
    ));
    for (what, expr) in plan_expressions(plan) {
        // The closure never fails.
        let _ = expr.apply(|e| {
            if let Some(b) = e.downcast_ref::<BroadheadExpr>() {
                let backend = if b.is_jit() { "JIT" } else { "interpreter" };
                warn(format_args!("  {what} ({backend}): {}", b.sql()));
                return Ok(TreeNodeRecursion::Jump);
            }
            Ok(TreeNodeRecursion::Continue)
        });
    }
}

/// The filter predicates and projection expressions of a plan, each with its kind.
fn plan_expressions(plan: &Arc<dyn ExecutionPlan>) -> Vec<(&'static str, Arc<dyn PhysicalExpr>)> {
    let mut found = Vec::new();
    // The closure never fails.
    let _ = plan.apply(|node| {
        if let Some(filter) = node.downcast_ref::<FilterExec>() {
            found.push(("filter", Arc::clone(filter.predicate())));
        }
        if let Some(projection) = node.downcast_ref::<ProjectionExec>() {
            for p in projection.expr() {
                found.push(("projection", Arc::clone(&p.expr)));
            }
        }
        Ok(TreeNodeRecursion::Continue)
    });
    found
}

/// A DataFusion error as a failure: the message of a table that could not be opened
/// as it is, planning errors as usage errors (exit 2), the rest as runtime errors.
fn failure(e: DataFusionError) -> Failure {
    if let DataFusionError::External(inner) = e.find_root() {
        if let Some(t) = inner.downcast_ref::<TableError>() {
            return Failure::runtime(t.0.clone());
        }
    }
    let e = e.find_root();
    let message = e.strip_backtrace();
    match e {
        DataFusionError::SQL(..) | DataFusionError::Plan(_) | DataFusionError::SchemaError(..) => {
            Failure::usage(format!("DataFusion: {message}"))
        }
        _ => Failure::runtime(format!("DataFusion: {message}")),
    }
}

/// A table that could not be opened, in the words of the scan's errors.
#[derive(Debug)]
struct TableError(String);

impl std::fmt::Display for TableError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TableError {}

/// Opens table paths as DataFusion tables, and keeps the files they named.
#[derive(Debug)]
struct PathTables {
    /// Strings as `Utf8View`, as DataFusion's own schema inference makes them
    /// (`datafusion.execution.parquet.schema_force_view_types`).
    view_types: bool,
    /// Every file a table of the statement reads (an output file must not be one).
    opened: Mutex<Vec<std::path::PathBuf>>,
}

impl PathTables {
    /// The Parquet files `path` names (a file, a directory or a glob) as one table.
    /// The files are checked as the scan checks them (the same errors: a missing
    /// file, a corrupt footer, files whose columns differ).
    fn open(&self, path: &str) -> Result<Arc<dyn TableProvider>, DataFusionError> {
        let table_error = |m: String| DataFusionError::External(Box::new(TableError(m)));
        let files = expand_paths(&[path]).map_err(|e| table_error(e.to_string()))?;
        let dataset = Dataset::open(&files).map_err(|e| table_error(e.to_string()))?;
        // The first file's schema as DataFusion infers it (the scan's may differ:
        // it reads narrow decimals as `Decimal64`): from the footer, without
        // metadata, strings as views. `Dataset::open` checked the others match.
        let first = (dataset.files().first())
            .ok_or_else(|| table_error(format!("{path}: no Parquet files")))?;
        let footer = first.metadata.metadata().file_metadata();
        let file_schema =
            parquet_to_arrow_schema(footer.schema_descr(), footer.key_value_metadata())
                .map_err(|e| table_error(format!("{path}: {e}")))?;
        let fields: Vec<_> = file_schema
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_metadata(Default::default()))
            .collect();
        let mut schema = Schema::new(fields);
        if self.view_types {
            schema = transform_schema_to_view(&schema);
        }
        let schema: SchemaRef = Arc::new(schema);
        let mut urls = Vec::new();
        for file in dataset.files() {
            let absolute = std::path::absolute(&file.path).map_err(|e| {
                table_error(format!(
                    "{}: {e}",
                    broadhead::escape::escape_path(&file.path)
                ))
            })?;
            let url = url::Url::from_file_path(&absolute).map_err(|()| {
                table_error(format!(
                    "{}: not a file path",
                    broadhead::escape::escape_path(&file.path)
                ))
            })?;
            // A URL of its own: the file's name is not a glob.
            urls.push(ListingTableUrl::try_new(url, None)?);
        }
        if let Ok(mut opened) = self.opened.lock() {
            opened.extend(files);
        }
        let options =
            ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension("");
        let config = ListingTableConfig::new_with_multi_paths(urls)
            .with_listing_options(options)
            .with_schema(schema);
        Ok(Arc::new(ListingTable::try_new(config)?))
    }
}

/// Every catalog's tables are paths.
#[derive(Debug)]
struct PathCatalogs(Arc<PathTables>);

/// DataFusion's default catalog, which bare table names are looked up in.
const DEFAULT_CATALOG: &str = "datafusion";
/// DataFusion's default schema.
const DEFAULT_SCHEMA: &str = "public";

impl CatalogProviderList for PathCatalogs {
    fn register_catalog(
        &self,
        _name: String,
        _catalog: Arc<dyn CatalogProvider>,
    ) -> Option<Arc<dyn CatalogProvider>> {
        None
    }

    fn catalog_names(&self) -> Vec<String> {
        vec![DEFAULT_CATALOG.into()]
    }

    fn catalog(&self, name: &str) -> Option<Arc<dyn CatalogProvider>> {
        let prefix = (name != DEFAULT_CATALOG).then(|| name.to_string());
        Some(Arc::new(PathCatalog {
            tables: Arc::clone(&self.0),
            prefix,
        }))
    }
}

/// A catalog whose schemas hold paths: `a.b.c` is the path `a.b.c`.
#[derive(Debug)]
struct PathCatalog {
    tables: Arc<PathTables>,
    /// The catalog's part of a three-part name.
    prefix: Option<String>,
}

impl CatalogProvider for PathCatalog {
    fn schema_names(&self) -> Vec<String> {
        vec![DEFAULT_SCHEMA.into()]
    }

    fn schema(&self, name: &str) -> Option<Arc<dyn SchemaProvider>> {
        // A bare name (`FROM 'f.parquet'`) is looked up in the default schema; an
        // unquoted `lineitem.parquet` is schema `lineitem`, table `parquet`.
        let prefix = match &self.prefix {
            Some(catalog) => Some(format!("{catalog}.{name}")),
            None => (name != DEFAULT_SCHEMA).then(|| name.to_string()),
        };
        Some(Arc::new(PathSchema {
            tables: Arc::clone(&self.tables),
            prefix,
        }))
    }
}

/// A schema whose tables are paths.
#[derive(Debug)]
struct PathSchema {
    tables: Arc<PathTables>,
    /// The leading parts of a multi-part name.
    prefix: Option<String>,
}

#[async_trait::async_trait]
impl SchemaProvider for PathSchema {
    fn table_names(&self) -> Vec<String> {
        vec![]
    }

    async fn table(&self, name: &str) -> Result<Option<Arc<dyn TableProvider>>, DataFusionError> {
        let path = match &self.prefix {
            Some(prefix) => format!("{prefix}.{name}"),
            None if TABLE_FUNCTIONS.contains(&name) => {
                // DataFusion looks up the name of a table function call as a table
                // too before it calls the function.
                return Ok(None);
            }
            None => name.to_string(),
        };
        self.tables.open(&path).map(Some)
    }

    fn table_exist(&self, _name: &str) -> bool {
        false
    }
}

/// `read_parquet('path')`: the files a path names, as a table.
#[derive(Debug)]
struct ReadParquet(Arc<PathTables>);

impl TableFunctionImpl for ReadParquet {
    fn call_with_args(
        &self,
        args: TableFunctionArgs,
    ) -> Result<Arc<dyn TableProvider>, DataFusionError> {
        match args.exprs() {
            [Expr::Literal(ScalarValue::Utf8(Some(path)), _)] => self.0.open(path),
            _ => Err(DataFusionError::Plan(
                "read_parquet takes one quoted path: read_parquet('data/*.parquet')".into(),
            )),
        }
    }
}
