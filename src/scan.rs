//! Scanning Parquet files with a Broadhead predicate pushed into the reader
//! (feature `parquet`).
//!
//! A [`Dataset`] is a list of Parquet files with one schema. A [`Scan`] reads some of
//! its columns where a predicate is TRUE:
//!
//! - row groups whose statistics prove the predicate never TRUE are skipped
//!   ([`crate::prune`]);
//! - with pushdown (the default) the compiled predicate runs as the parquet crate's
//!   `ArrowPredicate` inside a `RowFilter`: only the predicate's columns are decoded
//!   for every row, the other output columns for the surviving rows only;
//! - row groups are read on a pool of threads, and the results come back in file
//!   order; at most a couple of batches per thread are in flight, so memory stays
//!   bounded by batch size × threads whatever the file size.
//!
//! Column types the engine does not have are converted as they are read (see
//! [`engine_type`]): decimals to DOUBLE, `Utf8View`/`LargeUtf8` and string
//! dictionaries to VARCHAR, half floats to REAL.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, UInt64Array};
use arrow::compute::{cast, filter_record_batch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow_schema::ArrowError;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{
    ArrowPredicate, ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
    RowFilter,
};
use parquet::arrow::ProjectionMask;

use crate::bind::bind_predicate;
use crate::filter::true_rows;
use crate::interpret::interpret;
use crate::optimize::optimize;
use crate::prune::{may_be_true, ColumnStats};
use crate::scalar::ScalarValue;
use crate::sql::parse_expr;
use crate::typed::TypedExpr;
use crate::types::sql_type_name;
use crate::Filter;

/// A scan failure.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The expression is wrong, or evaluating it failed.
    #[error(transparent)]
    Engine(#[from] crate::Error),
    /// A file could not be read, is not Parquet, is corrupted, or does not fit.
    #[error("{}: {message}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The input paths name no file.
    #[error("{0}")]
    Input(String),
}

impl ScanError {
    fn file(path: &Path, message: impl std::fmt::Display) -> ScanError {
        ScanError::File {
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }
}

/// The type a column of type `t` is read as, when the engine lacks `t` itself:
/// decimals become DOUBLE (the nearest double: exact decimals are a deviation from
/// SQL, see `docs/cli.md`), `Utf8View`, `LargeUtf8` and dictionaries of strings
/// become VARCHAR, `Float16` becomes REAL. `None`: read as it is.
pub fn engine_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Decimal32(..)
        | DataType::Decimal64(..)
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => Some(DataType::Float64),
        DataType::Utf8View | DataType::LargeUtf8 => Some(DataType::Utf8),
        DataType::Float16 => Some(DataType::Float32),
        DataType::Dictionary(_, value) => Some(engine_type(value).unwrap_or((**value).clone())),
        _ => None,
    }
}

/// `schema` with every field of a type the engine lacks converted ([`engine_type`]).
pub fn engine_schema(schema: &Schema) -> Schema {
    let fields: Vec<Field> = schema
        .fields()
        .iter()
        .map(|f| match engine_type(f.data_type()) {
            Some(t) => Field::new(f.name(), t, f.is_nullable()),
            None => f.as_ref().clone(),
        })
        .collect();
    Schema::new(fields)
}

/// `batch` with its columns cast to the types of `target` (which has the same fields
/// but for types, as [`engine_schema`] makes it).
pub fn to_engine_batch(batch: RecordBatch, target: &SchemaRef) -> Result<RecordBatch, ArrowError> {
    if batch.schema().fields() == target.fields() {
        return Ok(batch);
    }
    let columns = batch
        .columns()
        .iter()
        .zip(target.fields())
        .map(|(c, f)| {
            if c.data_type() == f.data_type() {
                Ok(c.clone())
            } else {
                cast(c, f.data_type())
            }
        })
        .collect::<Result<Vec<ArrayRef>, _>>()?;
    RecordBatch::try_new_with_options(
        target.clone(),
        columns,
        &RecordBatchOptions::new().with_row_count(Some(batch.num_rows())),
    )
}

/// The Parquet files that command-line paths name: files as they are, directories
/// searched recursively for `*.parquet` (sorted by path), and globs (`*`, `?` in
/// the file name: `data/part-*.parquet`) expanded and sorted.
pub fn expand_paths(args: &[impl AsRef<Path>]) -> Result<Vec<PathBuf>, ScanError> {
    let mut out = Vec::new();
    for arg in args {
        let path = arg.as_ref();
        let text = path.to_string_lossy();
        if path.is_file() {
            out.push(path.to_path_buf());
        } else if path.is_dir() {
            let mut found = Vec::new();
            walk(path, &mut found).map_err(|e| ScanError::file(path, e))?;
            if found.is_empty() {
                return Err(ScanError::file(
                    path,
                    "directory contains no .parquet files",
                ));
            }
            found.sort();
            out.extend(found);
        } else if text.contains(['*', '?']) {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let Some(pattern) = name.filter(|_| !dir.to_string_lossy().contains(['*', '?'])) else {
                return Err(ScanError::Input(format!(
                    "{text}: wildcards are supported in the file name only"
                )));
            };
            let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
                .map_err(|e| ScanError::file(&dir, e))?
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .filter(|e| wildcard_match(&pattern, &e.file_name().to_string_lossy()))
                .map(|e| {
                    if path.parent().is_some_and(|p| p.as_os_str().is_empty()) {
                        PathBuf::from(e.file_name())
                    } else {
                        e.path()
                    }
                })
                .collect();
            if found.is_empty() {
                return Err(ScanError::Input(format!("{text}: no file matches")));
            }
            found.sort();
            out.extend(found);
        } else {
            return Err(ScanError::file(path, "no such file or directory"));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("parquet"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Shell-style matching of `*` (any run of characters) and `?` (one character).
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// One Parquet file of a dataset, with its footer read.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its footer (schema, row groups, statistics).
    pub metadata: ArrowReaderMetadata,
}

impl SourceFile {
    /// Opens a file and reads its footer; errors name the file.
    pub fn open(path: &Path) -> Result<SourceFile, ScanError> {
        let file = File::open(path).map_err(|e| ScanError::file(path, e))?;
        let metadata =
            ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()).map_err(|e| {
                ScanError::file(
                    path,
                    format!("not a Parquet file, or truncated or corrupted: {e}"),
                )
            })?;
        Ok(SourceFile {
            path: path.to_path_buf(),
            metadata,
        })
    }

    /// The number of rows.
    pub fn num_rows(&self) -> u64 {
        self.metadata.metadata().file_metadata().num_rows().max(0) as u64
    }
}

/// Parquet files that share one schema.
#[derive(Debug, Clone)]
pub struct Dataset {
    files: Vec<SourceFile>,
    file_schema: SchemaRef,
    schema: SchemaRef,
}

impl Dataset {
    /// Opens the files (at least one) and checks that they have the same columns and
    /// types; the error names the first file that differs from the first file.
    pub fn open(paths: &[PathBuf]) -> Result<Dataset, ScanError> {
        let files = paths
            .iter()
            .map(|p| SourceFile::open(p))
            .collect::<Result<Vec<_>, _>>()?;
        let Some(first) = files.first() else {
            return Err(ScanError::Input("no input files".into()));
        };
        let file_schema = first.metadata.schema().clone();
        for f in &files[1..] {
            if let Some(diff) = schema_difference(&file_schema, f.metadata.schema()) {
                return Err(ScanError::file(
                    &f.path,
                    format!(
                        "its schema differs from that of {}: {diff}",
                        first.path.display()
                    ),
                ));
            }
        }
        let schema = Arc::new(engine_schema(&file_schema));
        Ok(Dataset {
            files,
            file_schema,
            schema,
        })
    }

    /// The schema expressions are bound against (types converted by [`engine_type`]).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The schema as stored in the files.
    pub fn file_schema(&self) -> &SchemaRef {
        &self.file_schema
    }

    /// The files.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The total number of rows.
    pub fn num_rows(&self) -> u64 {
        self.files.iter().map(|f| f.num_rows()).sum()
    }
}

/// How two schemas differ, if they do (names and types; nullability may differ).
fn schema_difference(a: &Schema, b: &Schema) -> Option<String> {
    let name = |t: &DataType| sql_type_name(t);
    for (x, y) in a.fields().iter().zip(b.fields()) {
        if x.name() != y.name() {
            return Some(format!(
                "it has column '{}' where the first has '{}'",
                y.name(),
                x.name()
            ));
        }
        if x.data_type() != y.data_type() {
            return Some(format!(
                "column '{}' is {} there and {} here",
                x.name(),
                name(x.data_type()),
                name(y.data_type())
            ));
        }
    }
    if a.fields().len() != b.fields().len() {
        return Some(format!(
            "it has {} columns, the first has {}",
            b.fields().len(),
            a.fields().len()
        ));
    }
    None
}

/// How a scan reads.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Rows per batch.
    pub batch_size: usize,
    /// Threads reading row groups.
    pub threads: usize,
    /// Run the predicate inside the Parquet reader (late materialization).
    pub pushdown: bool,
    /// Skip row groups whose statistics prove the predicate never TRUE.
    pub prune: bool,
    /// Evaluate the predicate with the interpreter instead of the JIT.
    pub interpret: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            batch_size: 8192,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            pushdown: true,
            prune: true,
            interpret: false,
        }
    }
}

/// A predicate compiled for the batches it will see.
#[derive(Clone)]
enum Predicate {
    Jit(Filter),
    Interpreted(TypedExpr),
}

impl Predicate {
    fn new(schema: &Schema, sql: &str, interpret: bool) -> crate::Result<Predicate> {
        Ok(if interpret {
            Predicate::Interpreted(optimize(bind_predicate(&parse_expr(sql)?, schema)?))
        } else {
            Predicate::Jit(Filter::new(schema, sql)?)
        })
    }

    fn mask(&self, batch: &RecordBatch) -> crate::Result<BooleanArray> {
        match self {
            Predicate::Jit(f) => f.evaluate_mask(batch),
            Predicate::Interpreted(e) => {
                let result = interpret(e, batch)?;
                let result = result
                    .as_any()
                    .downcast_ref::<BooleanArray>()
                    .expect("a predicate is BOOLEAN");
                Ok(BooleanArray::new(true_rows(result), None))
            }
        }
    }
}

/// The predicate as the parquet reader calls it.
struct Pushed {
    projection: ProjectionMask,
    schema: SchemaRef,
    predicate: Predicate,
    /// The engine's own error, kept whole (the reader's error type flattens it).
    error: Arc<Mutex<Option<crate::Error>>>,
}

impl ArrowPredicate for Pushed {
    fn projection(&self) -> &ProjectionMask {
        &self.projection
    }

    fn evaluate(&mut self, batch: RecordBatch) -> Result<BooleanArray, ArrowError> {
        let batch = to_engine_batch(batch, &self.schema)?;
        self.predicate.mask(&batch).map_err(|e| {
            let message = e.to_string();
            *self.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            ArrowError::ComputeError(message)
        })
    }
}

/// What a scan hands its consumer, in file order.
#[derive(Debug)]
pub enum ScanItem<T> {
    /// The mapped result of one batch of selected rows.
    Batch(T),
    /// A row group has been read to the end (or skipped: `pruned`).
    RowGroupDone {
        /// Its row count.
        rows: u64,
        /// Whether statistics ruled it out.
        pruned: bool,
    },
}

/// What a finished scan did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScanStats {
    /// Row groups in the dataset.
    pub row_groups: usize,
    /// Row groups skipped on their statistics.
    pub pruned: usize,
}

/// Reading some columns of a dataset where a predicate is TRUE.
pub struct Scan<'a> {
    dataset: &'a Dataset,
    options: ScanOptions,
    /// The predicate bound to the dataset schema, for pruning.
    bound: Option<TypedExpr>,
    /// The predicate compiled for the batches it sees, and their columns.
    predicate: Option<(Predicate, Vec<usize>, SchemaRef)>,
    output_columns: Vec<usize>,
    output_schema: SchemaRef,
}

impl<'a> Scan<'a> {
    /// A scan of `output_columns` (schema indices; sorted and deduplicated here) of
    /// the rows where `predicate` (SQL; `None`: every row) is TRUE. Errors in the
    /// predicate are reported against `predicate`'s text.
    pub fn new(
        dataset: &'a Dataset,
        predicate: Option<&str>,
        output_columns: &[usize],
        options: ScanOptions,
    ) -> crate::Result<Scan<'a>> {
        let schema = dataset.schema();
        let mut output_columns = output_columns.to_vec();
        output_columns.sort_unstable();
        output_columns.dedup();
        let output_schema = Arc::new(schema.project(&output_columns)?);
        let (bound, predicate) = match predicate {
            Some(sql) => {
                let bound = optimize(bind_predicate(&parse_expr(sql)?, schema)?);
                let columns = if options.pushdown {
                    bound.columns()
                } else {
                    let mut c = bound.columns();
                    c.extend(&output_columns);
                    c.sort_unstable();
                    c.dedup();
                    c
                };
                let read = Arc::new(schema.project(&columns)?);
                let compiled = Predicate::new(&read, sql, options.interpret)?;
                (Some(bound), Some((compiled, columns, read)))
            }
            None => (None, None),
        };
        Ok(Scan {
            dataset,
            options,
            bound,
            predicate,
            output_columns,
            output_schema,
        })
    }

    /// The schema of the batches the scan produces: the output columns, in schema order.
    pub fn output_schema(&self) -> &SchemaRef {
        &self.output_schema
    }

    /// Whether the predicate runs as compiled code.
    pub fn is_jit(&self) -> bool {
        matches!(self.predicate, Some((Predicate::Jit(ref f), _, _)) if f.is_jit())
    }

    /// Row groups (file index, row group index, rows, pruned) in file order.
    fn plan(&self) -> Vec<(usize, usize, u64, bool)> {
        let mut tasks = Vec::new();
        for (fi, file) in self.dataset.files.iter().enumerate() {
            let meta = file.metadata.metadata();
            let keep = match (&self.bound, self.options.prune) {
                (Some(bound), true) => self.prune_file(file, bound),
                _ => vec![true; meta.num_row_groups()],
            };
            for (rg, keep) in keep.into_iter().enumerate() {
                let rows = meta.row_group(rg).num_rows().max(0) as u64;
                tasks.push((fi, rg, rows, !keep));
            }
        }
        tasks
    }

    /// Which row groups of `file` may hold a row where `bound` is TRUE.
    fn prune_file(&self, file: &SourceFile, bound: &TypedExpr) -> Vec<bool> {
        let meta = file.metadata.metadata();
        let groups = meta.row_groups();
        let schema = self.dataset.schema();
        // Per column: per-row-group minimums, maximums and null counts.
        let mut per_column = Vec::new();
        for c in bound.columns() {
            let field = schema.field(c);
            let Ok(conv) = StatisticsConverter::try_new(
                field.name(),
                file.metadata.schema(),
                file.metadata.parquet_schema(),
            ) else {
                continue;
            };
            let to_engine = |a: parquet::errors::Result<ArrayRef>| {
                a.ok().and_then(|a| {
                    if a.data_type() == field.data_type() {
                        Some(a)
                    } else {
                        cast(&a, field.data_type()).ok()
                    }
                })
            };
            let mins = to_engine(conv.row_group_mins(groups.iter()));
            let maxes = to_engine(conv.row_group_maxes(groups.iter()));
            let nulls: Option<UInt64Array> = conv.row_group_null_counts(groups.iter()).ok();
            per_column.push((c, mins, maxes, nulls));
        }
        (0..groups.len())
            .map(|rg| {
                let stats = |col: usize| {
                    let (_, mins, maxes, nulls) = per_column.iter().find(|p| p.0 == col)?;
                    let value = |a: &Option<ArrayRef>| {
                        a.as_ref()
                            .filter(|a| a.len() == groups.len())
                            .and_then(|a| ScalarValue::from_array(a.as_ref(), rg))
                    };
                    Some(ColumnStats {
                        min: value(mins),
                        max: value(maxes),
                        null_count: nulls
                            .as_ref()
                            .filter(|n| n.len() == groups.len() && n.is_valid(rg))
                            .map(|n| n.value(rg)),
                    })
                };
                let rows = groups[rg].num_rows().max(0) as u64;
                may_be_true(bound, rows, &stats)
            })
            .collect()
    }

    /// Runs the scan: row groups are read on `threads` threads, each batch of
    /// selected rows (with the output columns) is passed through `map` on the reading
    /// thread, and the results are handed to `sink` on the calling thread in file
    /// order. `sink` returns `false` to stop early (a `LIMIT`, say).
    pub fn run<T: Send>(
        &self,
        map: &(dyn Fn(RecordBatch) -> Result<T, ScanError> + Sync),
        sink: &mut dyn FnMut(ScanItem<T>) -> Result<bool, ScanError>,
    ) -> Result<ScanStats, ScanError> {
        let tasks = self.plan();
        let stats = ScanStats {
            row_groups: tasks.len(),
            pruned: tasks.iter().filter(|t| t.3).count(),
        };
        let live: Vec<usize> = (0..tasks.len()).filter(|&i| !tasks[i].3).collect();
        // One bounded channel per row group that is read; a reader blocks when its
        // consumer is behind, so memory stays bounded.
        let (senders, receivers): (Vec<_>, Vec<_>) =
            live.iter().map(|_| sync_channel::<Msg<T>>(2)).unzip();
        let senders: Vec<Mutex<Option<SyncSender<Msg<T>>>>> =
            senders.into_iter().map(|s| Mutex::new(Some(s))).collect();
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let threads = self.options.threads.max(1).min(live.len().max(1));
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| loop {
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&task) = live.get(i) else { return };
                    let Some(tx) = senders[i].lock().unwrap_or_else(|p| p.into_inner()).take()
                    else {
                        return;
                    };
                    let (fi, rg, _, _) = tasks[task];
                    let result = self.read_row_group(fi, rg, map, &tx);
                    let _ = tx.send(match result {
                        Ok(()) => Msg::Done,
                        Err(e) => Msg::Failed(e),
                    });
                });
            }
            let result = self.consume(&tasks, receivers, sink);
            stop.store(true, Ordering::Relaxed);
            result
        })?;
        Ok(stats)
    }

    fn consume<T>(
        &self,
        tasks: &[(usize, usize, u64, bool)],
        receivers: Vec<Receiver<Msg<T>>>,
        sink: &mut dyn FnMut(ScanItem<T>) -> Result<bool, ScanError>,
    ) -> Result<(), ScanError> {
        let mut receivers = receivers.into_iter();
        for &(fi, rg, rows, pruned) in tasks {
            if !pruned {
                let rx = receivers.next().expect("one receiver per row group read");
                loop {
                    match rx.recv() {
                        Ok(Msg::Batch(t)) => {
                            if !sink(ScanItem::Batch(t))? {
                                return Ok(());
                            }
                        }
                        Ok(Msg::Done) => break,
                        Ok(Msg::Failed(e)) => return Err(e),
                        Err(_) => {
                            return Err(ScanError::file(
                                &self.dataset.files[fi].path,
                                format!("reading row group {rg} stopped unexpectedly"),
                            ))
                        }
                    }
                }
            }
            if !sink(ScanItem::RowGroupDone { rows, pruned })? {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Reads one row group, sending mapped batches of selected rows.
    fn read_row_group<T>(
        &self,
        fi: usize,
        rg: usize,
        map: &(dyn Fn(RecordBatch) -> Result<T, ScanError> + Sync),
        tx: &SyncSender<Msg<T>>,
    ) -> Result<(), ScanError> {
        let source = &self.dataset.files[fi];
        let path = &source.path;
        let parquet_err = |e: parquet::errors::ParquetError| {
            ScanError::file(path, format!("row group {rg}: {e}"))
        };
        let file = File::open(path).map_err(|e| ScanError::file(path, e))?;
        let descr = source.metadata.parquet_schema();
        let builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(file, source.metadata.clone())
                .with_row_groups(vec![rg])
                .with_batch_size(self.options.batch_size);
        let error = Arc::new(Mutex::new(None));
        let engine_error = |e: ScanError| -> ScanError {
            match error.lock().unwrap_or_else(|p| p.into_inner()).take() {
                Some(e) => ScanError::Engine(e),
                None => e,
            }
        };
        match &self.predicate {
            Some((predicate, columns, read)) if self.options.pushdown => {
                let pushed = Pushed {
                    projection: ProjectionMask::roots(descr, columns.iter().copied()),
                    schema: read.clone(),
                    predicate: predicate.clone(),
                    error: error.clone(),
                };
                let reader = builder
                    .with_projection(ProjectionMask::roots(
                        descr,
                        self.output_columns.iter().copied(),
                    ))
                    .with_row_filter(RowFilter::new(vec![Box::new(pushed)]))
                    .build()
                    .map_err(|e| engine_error(parquet_err(e)))?;
                for batch in reader {
                    let batch = batch.map_err(|e| {
                        engine_error(ScanError::file(path, format!("row group {rg}: {e}")))
                    })?;
                    let batch = to_engine_batch(batch, &self.output_schema)
                        .map_err(|e| ScanError::file(path, e))?;
                    if tx.send(Msg::Batch(map(batch)?)).is_err() {
                        return Ok(());
                    }
                }
            }
            Some((predicate, columns, read)) => {
                // Read every column once, evaluate, then keep the output columns.
                let positions: Vec<usize> = self
                    .output_columns
                    .iter()
                    .map(|c| columns.binary_search(c).expect("output columns are read"))
                    .collect();
                let reader = builder
                    .with_projection(ProjectionMask::roots(descr, columns.iter().copied()))
                    .build()
                    .map_err(parquet_err)?;
                for batch in reader {
                    let batch =
                        batch.map_err(|e| ScanError::file(path, format!("row group {rg}: {e}")))?;
                    let batch =
                        to_engine_batch(batch, read).map_err(|e| ScanError::file(path, e))?;
                    let mask = predicate.mask(&batch)?;
                    let projected = batch
                        .project(&positions)
                        .map_err(|e| ScanError::file(path, e))?;
                    let selected = filter_record_batch(&projected, &mask)
                        .map_err(|e| ScanError::file(path, e))?;
                    if tx.send(Msg::Batch(map(selected)?)).is_err() {
                        return Ok(());
                    }
                }
            }
            None => {
                let reader = builder
                    .with_projection(ProjectionMask::roots(
                        descr,
                        self.output_columns.iter().copied(),
                    ))
                    .build()
                    .map_err(parquet_err)?;
                for batch in reader {
                    let batch =
                        batch.map_err(|e| ScanError::file(path, format!("row group {rg}: {e}")))?;
                    let batch = to_engine_batch(batch, &self.output_schema)
                        .map_err(|e| ScanError::file(path, e))?;
                    if tx.send(Msg::Batch(map(batch)?)).is_err() {
                        return Ok(());
                    }
                }
            }
        }
        Ok(())
    }
}

enum Msg<T> {
    Batch(T),
    Done,
    Failed(ScanError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards() {
        assert!(wildcard_match("*.parquet", "a.parquet"));
        assert!(wildcard_match("part-?.parquet", "part-1.parquet"));
        assert!(!wildcard_match("part-?.parquet", "part-12.parquet"));
        assert!(wildcard_match("p*t-*", "part-12.parquet"));
        assert!(!wildcard_match("*.parquet", "a.csv"));
        assert!(wildcard_match("*", ""));
    }

    #[test]
    fn engine_types() {
        assert_eq!(
            engine_type(&DataType::Decimal128(15, 2)),
            Some(DataType::Float64)
        );
        assert_eq!(engine_type(&DataType::Utf8View), Some(DataType::Utf8));
        assert_eq!(engine_type(&DataType::Date32), None);
        assert_eq!(
            engine_type(&DataType::Dictionary(
                Box::new(DataType::Int32),
                Box::new(DataType::LargeUtf8)
            )),
            Some(DataType::Utf8)
        );
    }
}
