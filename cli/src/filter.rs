//! `broadhead filter`: rows of Parquet files where a predicate is TRUE.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use broadhead::interpret::interpret;
use broadhead::prepare::{Prepared, Purpose};
use broadhead::scan::{expand_paths, Dataset, Scan, ScanError, ScanItem};
use broadhead::sql::{parse_expr, parse_select_list};
use broadhead::typed::TypedExpr;
use broadhead::{CompilePolicy, Expr, ExprKind, KernelCache, Projector};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::args::{ExecArgs, OutputArgs, ScanArgs};
use super::output::Output;
use super::target::check_not_input;
use super::{progress_allowed, CliResult, Failure};

/// Arguments of `broadhead filter`.
#[derive(Args, Debug)]
pub struct FilterArgs {
    #[command(flatten)]
    scan: ScanArgs,
    /// At most this many rows
    #[arg(long, short = 'n')]
    limit: Option<usize>,
    /// Print only the number of matching rows
    #[arg(long, short, conflicts_with_all = ["select", "format", "output"])]
    count: bool,
    #[command(flatten)]
    out: OutputArgs,
    #[command(flatten)]
    exec: ExecArgs,
}

/// An expression's text and what messages call it (`--where`, `the statement`): errors
/// are shown against the text, with a caret under the position.
#[derive(Debug, Clone)]
pub struct Source {
    /// What messages call it: `in {what}: …`.
    pub what: String,
    /// The text the expression's spans point into.
    pub text: String,
}

impl Source {
    /// An engine error about this text.
    pub fn failure(&self, e: impl Into<broadhead::Error>) -> Failure {
        Failure::expr(e, &self.what, &self.text)
    }
}

/// The predicate of a job.
pub struct Predicate {
    /// The predicate, parsed.
    pub expr: Expr,
    /// Where `expr`'s spans point.
    pub source: Source,
}

/// An item of a select list.
pub enum Selected {
    /// `*`: every column.
    All,
    /// An expression and its alias.
    Expr(Expr, Option<String>),
}

/// What to run: the work of `filter` and `sql`.
pub struct Job {
    /// Parquet files, directories or globs.
    pub paths: Vec<PathBuf>,
    /// `None`: every row.
    pub predicate: Option<Predicate>,
    /// `None`: every column.
    pub select: Option<(Vec<Selected>, Source)>,
    /// At most this many rows (with `Count::Plain`: the count's cap).
    pub limit: Option<usize>,
    /// Rows skipped before the first one written (SQL's OFFSET).
    pub offset: usize,
    /// Whether to count instead of writing rows.
    pub count: Count,
    /// Where and how the result is written.
    pub out: OutputArgs,
    /// How the scan runs.
    pub exec: ExecArgs,
}

/// Whether and how to count instead of writing rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Count {
    /// Write the rows.
    No,
    /// Print the count alone (`filter --count`; `--limit` caps it).
    Plain,
    /// Write a one-row result with a column of this name (`SELECT count(*)`: the limit
    /// and offset apply to that one row).
    Column(String),
}

/// Runs `broadhead filter`.
pub fn run(a: FilterArgs) -> CliResult {
    let predicate = match a.scan.predicate {
        Some(text) => {
            let source = Source {
                what: "--where".into(),
                text,
            };
            let expr = parse_expr(&source.text).map_err(|e| source.failure(e))?;
            Some(Predicate { expr, source })
        }
        None => None,
    };
    let select = match a.scan.select {
        Some(text) if text.trim() != "*" => {
            let source = Source {
                what: "--select".into(),
                text,
            };
            let items = parse_select_list(&source.text).map_err(|e| source.failure(e))?;
            let items = items
                .into_iter()
                .map(|(e, alias)| Selected::Expr(e, alias))
                .collect();
            Some((items, source))
        }
        _ => None,
    };
    run_job(Job {
        paths: a.scan.paths,
        predicate,
        select,
        limit: a.limit,
        offset: 0,
        count: if a.count { Count::Plain } else { Count::No },
        out: a.out,
        exec: a.exec,
    })
}

/// One output column: a column passed through, or a computed expression (prepared
/// for the files' schema).
enum Item {
    Column(usize),
    Computed(Box<Prepared>),
}

/// Opens the files named on the command line.
pub fn open_dataset(paths: &[PathBuf]) -> CliResult<Dataset> {
    let files = expand_paths(paths)?;
    Ok(Dataset::open(&files)?)
}

/// The select list as output items with names; `None`: every column.
fn select_items(
    select: Option<&(Vec<Selected>, Source)>,
    schema: &Schema,
) -> CliResult<Vec<(Item, String)>> {
    let all =
        || (0..schema.fields().len()).map(|i| (Item::Column(i), schema.field(i).name().clone()));
    let Some((items, source)) = select else {
        return Ok(all().collect());
    };
    let mut out = Vec::new();
    for item in items {
        let (expr, alias) = match item {
            Selected::All => {
                out.extend(all());
                continue;
            }
            Selected::Expr(e, alias) => (e, alias),
        };
        // A plain column is passed through, whatever its type. A name two columns
        // share is left to the binder, which says it is ambiguous.
        if let ExprKind::Column(name) = &expr.kind {
            let mut named = schema
                .fields()
                .iter()
                .enumerate()
                .filter(|(_, f)| f.name() == name);
            if let (Some((i, _)), None) = (named.next(), named.next()) {
                out.push((
                    Item::Column(i),
                    alias.clone().unwrap_or_else(|| name.clone()),
                ));
                continue;
            }
        }
        let prepared =
            Prepared::new(expr, schema, Purpose::Projection).map_err(|e| source.failure(e))?;
        let name = alias.clone().unwrap_or_else(|| expr.to_string());
        out.push((Item::Computed(Box::new(prepared)), name));
    }
    Ok(out)
}

/// Computes output batches from scanned ones.
enum Compute {
    Jit(Projector),
    Interpreted(Vec<TypedExpr>),
}

impl Compute {
    fn evaluate(&self, batch: &RecordBatch) -> broadhead::Result<Vec<ArrayRef>> {
        match self {
            Compute::Jit(p) => p.evaluate(batch),
            Compute::Interpreted(exprs) => exprs.iter().map(|e| interpret(e, batch)).collect(),
        }
    }
}

/// Runs a job: checks its expressions against the files' schema, scans, and writes the
/// rows (or the count).
pub fn run_job(job: Job) -> CliResult {
    check_not_input(&job.out.output, &job.paths)?;
    let dataset = open_dataset(&job.paths)?;
    let files: Vec<PathBuf> = dataset.files().iter().map(|f| f.path.clone()).collect();
    check_not_input(&job.out.output, &files)?;
    let schema = dataset.schema().clone();

    // Check the expressions against the schema first: errors point into their text.
    let predicate = match &job.predicate {
        Some(p) => Some(
            Prepared::new(&p.expr, &schema, Purpose::Predicate).map_err(|e| p.source.failure(e))?,
        ),
        None => None,
    };
    let items = if job.count == Count::No {
        select_items(job.select.as_ref(), &schema)?
    } else {
        vec![]
    };
    let mut needed: Vec<usize> = Vec::new();
    for (item, _) in &items {
        match item {
            Item::Column(i) => needed.push(*i),
            Item::Computed(p) => needed.extend(p.columns()),
        }
    }
    let options = job.exec.scan_options();
    let interpret_mode = options.interpret;
    let scan = Scan::from_prepared(&dataset, predicate.as_ref(), &needed, options).map_err(
        |e| match &job.predicate {
            Some(p) => p.source.failure(e),
            None => Failure::from(e),
        },
    )?;
    let scanned = scan.output_schema().clone();

    // The output: passed-through columns and computed ones, over the scanned batches.
    // By position: two columns may have one name.
    let position = |i: usize| scan.output_columns().binary_search(&i).expect("scanned");
    // Bound again to the scanned columns (their positions differ), not parsed again.
    let computed: Vec<Prepared> = items
        .iter()
        .filter_map(|(item, _)| match item {
            Item::Computed(p) => Some(p.rebind(&scanned)),
            Item::Column(_) => None,
        })
        .collect::<broadhead::Result<_>>()?;
    let compute = if computed.is_empty() {
        None
    } else if interpret_mode {
        let typed = computed.iter().map(|p| p.optimized().clone()).collect();
        Some(Compute::Interpreted(typed))
    } else {
        Some(Compute::Jit(Projector::with_policy(
            &scanned,
            &computed,
            KernelCache::global(),
            CompilePolicy::Tiered,
        )?))
    };
    let computed_types: Vec<DataType> = match &compute {
        Some(Compute::Jit(p)) => p
            .output_fields()
            .iter()
            .map(|f| f.data_type().clone())
            .collect(),
        Some(Compute::Interpreted(t)) => t.iter().map(|e| e.data_type.clone()).collect(),
        None => vec![],
    };
    let mut k = 0;
    let mut sources = Vec::new(); // Ok(position in scanned) or Err(computed index)
    let mut fields = Vec::new();
    for (item, name) in &items {
        match item {
            Item::Column(i) => {
                let f = schema.field(*i);
                fields.push(Field::new(name, f.data_type().clone(), f.is_nullable()));
                sources.push(Ok(position(*i)));
            }
            Item::Computed(_) => {
                fields.push(Field::new(name, computed_types[k].clone(), true));
                sources.push(Err(k));
                k += 1;
            }
        }
    }
    let out_schema: SchemaRef = Arc::new(Schema::new(fields));

    let map = |batch: RecordBatch| -> Result<RecordBatch, ScanError> {
        let rows = batch.num_rows();
        if job.count != Count::No {
            return Ok(RecordBatch::try_new_with_options(
                Arc::new(Schema::empty()),
                vec![],
                &RecordBatchOptions::new().with_row_count(Some(rows)),
            )
            .expect("an empty batch"));
        }
        let values = match &compute {
            Some(c) if rows > 0 => c.evaluate(&batch)?,
            _ => vec![],
        };
        let columns: Vec<ArrayRef> = sources
            .iter()
            .zip(out_schema.fields())
            .map(|(s, f)| match s {
                Ok(p) => batch.column(*p).clone(),
                Err(k) if rows > 0 => values[*k].clone(),
                Err(_) => arrow::array::new_empty_array(f.data_type()),
            })
            .collect();
        RecordBatch::try_new_with_options(
            out_schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
        .map_err(|e| ScanError::Engine(e.into()))
    };

    let progress = Progress::new(dataset.num_rows(), job.exec.quiet);
    let mut output = match job.count {
        Count::No => Some(Output::new(&job.out, &out_schema, job.limit)?),
        _ => None,
    };
    // `SELECT count(*)`: every matching row is counted; the limit and offset apply to
    // the one-row result.
    let (limit, mut skip) = match job.count {
        Count::Column(_) => (usize::MAX, 0),
        _ => (job.limit.unwrap_or(usize::MAX), job.offset),
    };
    let mut rows = 0usize;
    let mut failure = None;
    let result = scan.run(&map, &mut |item| {
        if rows >= limit {
            return Ok(false);
        }
        match item {
            ScanItem::Batch(batch) => {
                let skipped = skip.min(batch.num_rows());
                skip -= skipped;
                let batch = batch.slice(skipped, batch.num_rows() - skipped);
                let take = batch.num_rows().min(limit - rows);
                rows += take;
                if let Some(out) = output.as_mut() {
                    if take > 0 {
                        if let Err(f) = out.write(&batch.slice(0, take)) {
                            failure = Some(f);
                            return Ok(false);
                        }
                    }
                }
                if rows >= limit {
                    return Ok(false);
                }
            }
            ScanItem::RowGroupDone { rows, .. } => progress.advance(rows),
        }
        Ok(true)
    });
    progress.finish();
    if let Some(f) = failure {
        return Err(f);
    }
    let scanned = result?;
    if job.exec.stats {
        eprintln!(
            "row groups: {} read, {} pruned",
            scanned.row_groups - scanned.pruned,
            scanned.pruned
        );
        if scanned.keyed > 0 {
            eprintln!(
                "row groups decided on dictionary keys: {} of {}",
                scanned.keyed,
                scanned.row_groups - scanned.pruned
            );
        }
        if scanned.narrowed > 0 {
            eprintln!(
                "row groups whose conjuncts on several columns were evaluated at the rows \
                 the others kept only: {} of {}",
                scanned.narrowed,
                scanned.row_groups - scanned.pruned
            );
        }
        if scanned.gathered > 0 {
            eprintln!(
                "row groups whose output columns were read at the selected rows only: {} of {}",
                scanned.gathered,
                scanned.row_groups - scanned.pruned
            );
        }
        match &scan.predicate_tier_stats()[..] {
            [] => {}
            [stats] => eprintln!("where:  {stats}"),
            parts => {
                for (k, stats) in parts.iter().enumerate() {
                    eprintln!("where, part {} of {}:  {stats}", k + 1, parts.len());
                }
            }
        }
        if let Some(Compute::Jit(p)) = &compute {
            eprintln!("select: {}", p.tier_stats());
        }
    }
    match job.count {
        Count::No => output.expect("an output").finish(&out_schema)?,
        Count::Plain => outln!("{rows}")?,
        Count::Column(name) => {
            let schema = Arc::new(Schema::new(vec![Field::new(name, DataType::Int64, false)]));
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(Int64Array::from(vec![rows as i64]))],
            )
            .map_err(|e| Failure::runtime(e.to_string()))?;
            // LIMIT and OFFSET of the one-row result.
            let keep = usize::from(job.offset == 0 && job.limit != Some(0));
            super::output::write_all(&job.out, &schema, &[batch.slice(0, keep)])?;
        }
    }
    Ok(())
}

/// A progress bar on stderr, drawn only once a scan has taken more than a moment, and
/// cleared on Ctrl-C.
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: std::cell::Cell<bool>,
}

impl Progress {
    /// A bar counting rows.
    pub fn new(total_rows: u64, quiet: bool) -> Progress {
        Progress::with_unit(total_rows, "rows", quiet)
    }

    /// A bar counting `total` of `unit`.
    pub fn with_unit(total: u64, unit: &str, quiet: bool) -> Progress {
        let bar = progress_allowed(quiet).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
            if let Ok(style) = ProgressStyle::with_template(&format!(
                "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} ({{eta}})"
            )) {
                bar.set_style(style);
            }
            super::cleanup::register_bar(&bar);
            bar
        });
        Progress {
            bar,
            start: Instant::now(),
            shown: std::cell::Cell::new(false),
        }
    }

    fn maybe_show(&self, bar: &ProgressBar) {
        if !self.shown.get() && self.start.elapsed() > Duration::from_millis(700) {
            bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown.set(true);
        }
    }

    /// Counts `n` more done.
    pub fn advance(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(n);
            self.maybe_show(bar);
        }
    }

    /// Sets how many are done.
    pub fn set_position(&self, n: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(n);
            self.maybe_show(bar);
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
