//! `broadhead filter`: rows of Parquet files where a predicate is TRUE.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Int64Array, RecordBatch, RecordBatchOptions};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use broadhead::bind::{bind, bind_predicate};
use broadhead::interpret::interpret;
use broadhead::optimize::optimize;
use broadhead::scan::{expand_paths, Dataset, Scan, ScanError, ScanItem};
use broadhead::sql::{parse_expr, parse_select_list};
use broadhead::typed::TypedExpr;
use broadhead::{Expr, ExprKind, Projector};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::output::{check_not_input, Output};
use super::{progress_allowed, CliResult, ExecArgs, Failure, OutputArgs};

/// Arguments of `broadhead filter`.
#[derive(Args, Debug)]
pub struct FilterArgs {
    /// Parquet files, directories of them, or globs ('data/*.parquet'); one schema
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The predicate, a SQL expression: rows where it is TRUE are kept
    #[arg(long = "where", short = 'w', value_name = "EXPR")]
    predicate: String,
    /// The output columns, a SQL select list ("a, b * 2 AS c") [default: all columns]
    #[arg(long, short, value_name = "LIST")]
    select: Option<String>,
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

/// What to run: the work of `filter` and `sql`.
pub struct Job {
    pub paths: Vec<PathBuf>,
    pub predicate: Option<String>,
    /// `None`: every column.
    pub select: Option<String>,
    pub limit: Option<usize>,
    pub count: Count,
    pub out: OutputArgs,
    pub exec: ExecArgs,
}

/// Whether and how to count instead of writing rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Count {
    /// Write the rows.
    No,
    /// Print the count alone (`filter --count`).
    Plain,
    /// Write a one-row result with a column of this name (`SELECT count(*)`).
    Column(String),
}

pub fn run(a: FilterArgs) -> CliResult {
    run_job(Job {
        paths: a.paths,
        predicate: Some(a.predicate),
        select: a.select,
        limit: a.limit,
        count: if a.count { Count::Plain } else { Count::No },
        out: a.out,
        exec: a.exec,
    })
}

/// One output column: a column passed through, or a computed expression.
enum Item {
    Column(usize),
    Computed(Expr),
}

/// Opens the files named on the command line.
pub fn open_dataset(paths: &[PathBuf]) -> CliResult<Dataset> {
    let files = expand_paths(paths)?;
    Ok(Dataset::open(&files)?)
}

/// The select list as output items with names; `None` or `*`: every column.
fn select_items(select: Option<&str>, schema: &Schema) -> CliResult<Vec<(Item, String)>> {
    let all = || {
        (0..schema.fields().len())
            .map(|i| (Item::Column(i), schema.field(i).name().clone()))
            .collect()
    };
    let Some(text) = select.filter(|s| s.trim() != "*") else {
        return Ok(all());
    };
    let items = parse_select_list(text).map_err(|e| Failure::expr(e, "--select", text))?;
    items
        .into_iter()
        .map(|(expr, alias)| {
            // A plain column is passed through, whatever its type. A name two columns
            // share is left to the binder, which says it is ambiguous.
            if let ExprKind::Column(name) = &expr.kind {
                let mut named = schema
                    .fields()
                    .iter()
                    .enumerate()
                    .filter(|(_, f)| f.name() == name);
                if let (Some((i, _)), None) = (named.next(), named.next()) {
                    return Ok((Item::Column(i), alias.unwrap_or_else(|| name.clone())));
                }
            }
            bind(&expr, schema).map_err(|e| Failure::expr(e, "--select", text))?;
            let name = alias.unwrap_or_else(|| expr.to_string());
            Ok((Item::Computed(expr), name))
        })
        .collect()
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

pub fn run_job(job: Job) -> CliResult {
    check_not_input(&job.out.output, &job.paths)?;
    let dataset = open_dataset(&job.paths)?;
    let files: Vec<PathBuf> = dataset.files().iter().map(|f| f.path.clone()).collect();
    check_not_input(&job.out.output, &files)?;
    let schema = dataset.schema().clone();

    // Check the expressions against the schema first: errors point into their text.
    if let Some(p) = &job.predicate {
        let expr = parse_expr(p).map_err(|e| Failure::expr(e, "--where", p))?;
        bind_predicate(&expr, &schema).map_err(|e| Failure::expr(e, "--where", p))?;
    }
    let items = if job.count == Count::No {
        select_items(job.select.as_deref(), &schema)?
    } else {
        vec![]
    };
    let mut needed: Vec<usize> = Vec::new();
    for (item, _) in &items {
        match item {
            Item::Column(i) => needed.push(*i),
            Item::Computed(e) => needed.extend(bind(e, &schema)?.columns()),
        }
    }
    let options = job.exec.scan_options();
    let interpret_mode = options.interpret;
    let scan = Scan::new(&dataset, job.predicate.as_deref(), &needed, options)
        .map_err(|e| Failure::expr(e, "--where", job.predicate.as_deref().unwrap_or("")))?;
    let scanned = scan.output_schema().clone();

    // The output: passed-through columns and computed ones, over the scanned batches.
    // By position: two columns may have one name.
    let position = |i: usize| scan.output_columns().binary_search(&i).expect("scanned");
    let computed: Vec<Expr> = items
        .iter()
        .filter_map(|(item, _)| match item {
            Item::Computed(e) => Some(e.clone()),
            Item::Column(_) => None,
        })
        .collect();
    let compute = if computed.is_empty() {
        None
    } else if interpret_mode {
        let typed = computed
            .iter()
            .map(|e| Ok(optimize(bind(e, &scanned)?)))
            .collect::<broadhead::Result<Vec<_>>>()?;
        Some(Compute::Interpreted(typed))
    } else {
        Some(Compute::Jit(Projector::from_exprs(&scanned, &computed)?))
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
    let limit = job.limit.unwrap_or(usize::MAX);
    let mut rows = 0usize;
    let mut failure = None;
    let result = scan.run(&map, &mut |item| {
        match item {
            ScanItem::Batch(batch) => {
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
    result?;
    match job.count {
        Count::No => output.expect("an output").finish(&out_schema)?,
        Count::Plain => {
            use std::io::Write;
            let mut out = std::io::stdout();
            if let Err(e) = writeln!(out, "{rows}") {
                if e.kind() != std::io::ErrorKind::BrokenPipe {
                    return Err(e.into());
                }
            }
        }
        Count::Column(name) => {
            let schema = Arc::new(Schema::new(vec![Field::new(name, DataType::Int64, false)]));
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(Int64Array::from(vec![rows as i64]))],
            )
            .expect("a count batch");
            super::output::write_all(&job.out, &schema, &[batch])?;
        }
    }
    Ok(())
}

/// A progress bar on stderr, drawn only once a scan has taken more than a moment.
pub struct Progress {
    bar: Option<ProgressBar>,
    start: Instant,
    shown: std::cell::Cell<bool>,
}

impl Progress {
    pub fn new(total_rows: u64, quiet: bool) -> Progress {
        let bar = progress_allowed(quiet).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total_rows), ProgressDrawTarget::hidden());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} rows ({eta})",
                )
                .expect("a valid template"),
            );
            bar
        });
        Progress {
            bar,
            start: Instant::now(),
            shown: std::cell::Cell::new(false),
        }
    }

    pub fn advance(&self, rows: u64) {
        if let Some(bar) = &self.bar {
            bar.inc(rows);
            if !self.shown.get() && self.start.elapsed() > Duration::from_millis(700) {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                self.shown.set(true);
            }
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
