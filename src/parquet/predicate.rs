//! [`JitPredicate`]: a compiled predicate as the parquet crate's [`ArrowPredicate`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arrow::array::BooleanBufferBuilder;
use arrow::array::{Array, BooleanArray, RecordBatch};
use arrow::buffer::BooleanBuffer;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow_schema::ArrowError;
use parquet::arrow::arrow_reader::{ArrowPredicate, RowSelection};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::ParquetMetaData;

use super::dataset::{engine_schema, to_engine_batch};
use crate::cache::KernelCache;
use crate::decode::Decoding;
use crate::expr::Expr;
use crate::interpret::interpret;
use crate::interpret::true_rows;
use crate::prepare::{Prepared, Purpose};
use crate::scalar::ScalarValue;
use crate::sql::parse_expr;
use crate::struct_fields::{field_at, root_column, struct_fields};
use crate::typed::{TypedExpr, TypedKind};
use crate::Filter;

/// A SQL predicate compiled for the parquet crate's reader: put it in a `RowFilter`
/// and the reader decodes the predicate's columns, asks it which rows are TRUE, and
/// decodes the other columns of those rows only (late materialization).
///
/// It reads only the columns the predicate needs ([`JitPredicate::projection`]) and
/// is compiled against exactly those, as the reader passes them; a predicate that
/// folds to a constant reads no column at all. Column types the engine lacks are
/// converted as they are read ([`engine_type`](super::engine_type)). An error in the
/// data (a division by zero, an overflow) names the row group and the row of the file
/// (0-based), as [`RowError`]; the reader returns it as an `ArrowError` whose message
/// is the same.
///
/// Row numbers assume the reader visits every row group in order; tell it otherwise
/// with [`JitPredicate::with_rows`] when you select row groups or rows. Put it first
/// (or alone) in the `RowFilter`: a later predicate sees only the rows the earlier ones
/// kept, and its row numbers would be wrong.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Int64Array, RecordBatch, StringArray};
/// use arrow::datatypes::{DataType, Field, Schema};
/// use parquet::arrow::{ArrowWriter, ProjectionMask};
/// use parquet::arrow::arrow_reader::{ParquetRecordBatchReaderBuilder, RowFilter};
/// use broadhead::parquet::JitPredicate;
///
/// // A small file with three columns.
/// let schema = Arc::new(Schema::new(vec![
///     Field::new("id", DataType::Int64, false),
///     Field::new("qty", DataType::Int64, false),
///     Field::new("name", DataType::Utf8, false),
/// ]));
/// let batch = RecordBatch::try_new(schema.clone(), vec![
///     Arc::new(Int64Array::from(vec![1, 2, 3, 4])),
///     Arc::new(Int64Array::from(vec![10, 30, 50, 5])),
///     Arc::new(StringArray::from(vec!["a", "b", "c", "d"])),
/// ])?;
/// let file = tempfile::tempfile()?;
/// let mut writer = ArrowWriter::try_new(file.try_clone()?, schema, None)?;
/// writer.write(&batch)?;
/// writer.close()?;
///
/// // Read `name` where `qty > 20`: the predicate decodes `qty` alone.
/// let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
/// let predicate = JitPredicate::new("qty > 20", builder.metadata(), builder.schema())?;
/// let output = ProjectionMask::roots(builder.parquet_schema(), [2]);
/// let reader = builder
///     .with_projection(output)
///     .with_row_filter(RowFilter::new(vec![Box::new(predicate)]))
///     .with_batch_size(8192)
///     .build()?;
/// let mut names = Vec::new();
/// for batch in reader {
///     let batch = batch?;
///     let column = batch.column(0).as_any().downcast_ref::<StringArray>().unwrap();
///     names.extend(column.iter().map(|s| s.unwrap().to_string()));
/// }
/// assert_eq!(names, ["b", "c"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct JitPredicate {
    projection: ProjectionMask,
    /// The root columns read, in schema order.
    columns: Vec<usize>,
    /// The Parquet leaves read: every leaf of those columns, but only the leaves
    /// of the fields read of a STRUCT column the predicate reads just fields of.
    leaves: Vec<usize>,
    /// Those columns as the engine reads them (types converted).
    schema: SchemaRef,
    eval: Eval,
    rows: RowNumbers,
    /// Rows of the reader's selection seen so far (shared with the scan, which
    /// checks them against the row group's claimed count).
    seen: Arc<AtomicU64>,
    /// The last error, kept whole (the reader's error type flattens it to text).
    error: Arc<Mutex<Option<RowError>>>,
    /// The rows it selected, one bit per row seen, when the scan asks for them (to
    /// find the file row of a row of its output).
    kept: Option<Arc<Mutex<BooleanBufferBuilder>>>,
}

impl std::fmt::Debug for JitPredicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitPredicate")
            .field("columns", &self.columns)
            .field("jit", &self.is_jit())
            .finish()
    }
}

/// How the predicate is evaluated.
#[derive(Clone)]
enum Eval {
    /// It folded to a constant: TRUE selects every row, FALSE or NULL none.
    Constant(bool),
    /// Compiled (or the filter's own interpreter fallback).
    Jit(Filter),
    /// The interpreter, by request, and how batches become what it reads (STRUCT
    /// fields appended, [`crate::struct_fields`]).
    Interpreted(TypedExpr, Arc<Decoding>),
}

/// An error evaluating a predicate on a row of a Parquet file.
#[derive(Debug, Clone, thiserror::Error)]
#[error("row group {row_group}, row {row}: {message}")]
pub struct RowError {
    /// The row group (0-based).
    pub row_group: usize,
    /// The row of the file (0-based, counting from the first row of the file).
    pub row: u64,
    /// What went wrong, without the row.
    pub message: String,
    /// The engine's error (its row number counts within the batch the reader passed).
    pub source: Arc<crate::Error>,
}

/// Which rows of the file the reader presents, in order.
#[derive(Debug, Clone)]
struct RowNumbers {
    /// The first row of each row group, then the number of rows of the file.
    starts: Arc<[u64]>,
    /// The rows presented: (first row of the file, count), in order.
    ranges: Arc<[(u64, u64)]>,
}

impl RowNumbers {
    /// Every row group of the file, in order.
    fn new(metadata: &ParquetMetaData) -> RowNumbers {
        let mut starts = vec![0u64];
        for rg in metadata.row_groups() {
            let last = *starts.last().expect("not empty");
            starts.push(last.saturating_add(rg.num_rows().max(0) as u64));
        }
        let all = (0..starts.len() - 1).collect::<Vec<_>>();
        RowNumbers::of_groups(starts.into(), &all, None)
    }

    fn of_groups(
        starts: Arc<[u64]>,
        groups: &[usize],
        selection: Option<&RowSelection>,
    ) -> RowNumbers {
        let mut ranges: Vec<(u64, u64)> = groups
            .iter()
            .filter(|&&g| g + 1 < starts.len())
            .map(|&g| (starts[g], starts[g + 1] - starts[g]))
            .collect();
        if let Some(selection) = selection {
            // The selection counts rows of the chosen row groups, concatenated.
            let mut selected = Vec::new();
            let mut pending = ranges.into_iter();
            let mut current: Option<(u64, u64)> = pending.next();
            for s in selection.iter() {
                let mut left = s.row_count as u64;
                while left > 0 {
                    let Some((start, len)) = current else { break };
                    let n = left.min(len);
                    if !s.skip {
                        selected.push((start, n));
                    }
                    left -= n;
                    current = if n == len {
                        pending.next()
                    } else {
                        Some((start + n, len - n))
                    };
                }
            }
            ranges = selected;
        }
        RowNumbers {
            starts,
            ranges: ranges.into(),
        }
    }

    /// The row group and file row of the `ordinal`th row presented.
    fn locate(&self, ordinal: u64) -> (usize, u64) {
        let mut left = ordinal;
        let mut row = None;
        for &(start, len) in self.ranges.iter() {
            if left < len {
                row = Some(start + left);
                break;
            }
            left -= len;
        }
        // Past the known rows (the reader presented more than it was said to):
        // count on from the end.
        let row = row.unwrap_or_else(|| {
            let end = self.ranges.last().map_or(0, |&(s, l)| s + l);
            end + left
        });
        let group = self.starts.partition_point(|&s| s <= row).saturating_sub(1);
        (group, row)
    }
}

/// What a predicate reads of a file: root columns, a STRUCT column narrowed to the
/// fields the predicate reads of it when each is one Parquet leaf (the reader then
/// decodes just those), as the schema the reader's batches have.
struct ReadColumns {
    /// The root columns read, sorted.
    roots: Vec<usize>,
    /// Their leaves, sorted.
    leaves: Vec<usize>,
    /// The schema of the reader's batches: the roots, STRUCTs narrowed.
    schema: Schema,
}

impl ReadColumns {
    /// For the extended columns `read` of `engine`.
    fn new(engine: &Schema, metadata: &ParquetMetaData, read: &[usize]) -> ReadColumns {
        let descr = metadata.file_metadata().schema_descr();
        let mut roots: Vec<usize> = read.iter().map(|&c| root_column(engine, c)).collect();
        roots.sort_unstable();
        roots.dedup();
        let mut leaves = Vec::new();
        let mut fields = Vec::new();
        for &root in &roots {
            let all = (0..descr.num_columns()).filter(|&l| descr.get_column_root_idx(l) == root);
            let field = engine.field(root);
            // The fields read of it, each one leaf; None: read the column whole.
            let narrowed: Option<Vec<(Vec<usize>, usize)>> = read
                .iter()
                .filter_map(|&c| match field_at(engine, c) {
                    Some(f) if f.root == root => Some(
                        super::field_leaf(metadata, field.data_type(), &f).map(|l| (f.path, l)),
                    ),
                    Some(_) => None,
                    None if c == root => Some(None),
                    None => None,
                })
                .collect();
            match narrowed {
                Some(paths) if !paths.is_empty() => {
                    let kept: Vec<Vec<usize>> = paths.iter().map(|(p, _)| p.clone()).collect();
                    leaves.extend(paths.iter().map(|(_, l)| *l));
                    fields.push(
                        field
                            .clone()
                            .with_data_type(narrow(field.data_type(), &kept)),
                    );
                }
                _ => {
                    leaves.extend(all);
                    fields.push(field.clone());
                }
            }
        }
        leaves.sort_unstable();
        leaves.dedup();
        ReadColumns {
            roots,
            leaves,
            schema: Schema::new_with_metadata(fields, engine.metadata().clone()),
        }
    }

    /// Where extended column `c` of `engine` is among the columns read.
    fn moved(&self, engine: &Schema, c: usize) -> Option<usize> {
        let position = |c: usize| self.roots.binary_search(&c).ok();
        match field_at(engine, c) {
            None => position(c),
            Some(f) => {
                let at = position(f.root)?;
                struct_fields(&self.schema)
                    .iter()
                    .position(|g| g.root == at && g.names[1..] == f.names[1..])
                    .map(|k| self.schema.fields().len() + k)
            }
        }
    }
}

/// `t` (a STRUCT) with only the fields on `paths` (child positions from `t` down).
fn narrow(t: &DataType, paths: &[Vec<usize>]) -> DataType {
    let DataType::Struct(children) = t else {
        return t.clone();
    };
    let kept: Vec<Field> = children
        .iter()
        .enumerate()
        .filter_map(|(i, child)| {
            let below: Vec<Vec<usize>> = paths
                .iter()
                .filter(|p| p.first() == Some(&i))
                .map(|p| p[1..].to_vec())
                .collect();
            if below.is_empty() {
                None
            } else if below.iter().any(|p| p.is_empty()) {
                Some(child.as_ref().clone())
            } else {
                Some(
                    child
                        .as_ref()
                        .clone()
                        .with_data_type(narrow(child.data_type(), &below)),
                )
            }
        })
        .collect();
    DataType::Struct(kept.into())
}

/// `e` with each column index `i` replaced by `moved(i)` (which knows every column
/// `e` reads).
fn remap(e: &mut TypedExpr, moved: &dyn Fn(usize) -> Option<usize>) {
    let all = |v: &mut Vec<TypedExpr>| v.iter_mut().for_each(|c| remap(c, moved));
    match &mut e.kind {
        TypedKind::Column(i) => {
            *i = moved(*i).expect("a column the predicate reads");
        }
        TypedKind::Literal(_) | TypedKind::Ref(_) => {}
        TypedKind::Let { value, body, .. } => {
            remap(value, moved);
            remap(body, moved);
        }
        TypedKind::Call { args, .. } => all(args),
        TypedKind::And(c) | TypedKind::Or(c) | TypedKind::Coalesce(c) => all(c),
        TypedKind::Not(x) | TypedKind::Cast(x) | TypedKind::TryCast(x) => remap(x, moved),
        TypedKind::IsNull { expr, .. } | TypedKind::InList { expr, .. } => remap(expr, moved),
        TypedKind::Case {
            branches,
            else_expr,
        } => {
            for (c, v) in branches {
                remap(c, moved);
                remap(v, moved);
            }
            remap(else_expr, moved);
        }
    }
}

/// The constant a bound predicate folded to, if it did: TRUE, or FALSE for FALSE and
/// NULL alike (neither selects a row).
pub(crate) fn constant_value(optimized: &TypedExpr) -> Option<bool> {
    match optimized.as_literal()? {
        ScalarValue::Boolean(b) => Some(*b),
        ScalarValue::Null(_) => Some(false),
        _ => None,
    }
}

/// The message of an engine error without its row (which counts within a batch).
pub(crate) fn without_row(e: &crate::Error) -> String {
    match e {
        crate::Error::Eval(e) => e.without_row(),
        other => other.to_string(),
    }
}

/// The row (within its batch) an engine error is about, if it names one.
pub(crate) fn row_of(e: &crate::Error) -> Option<usize> {
    match e {
        crate::Error::Eval(e) => e.row(),
        _ => None,
    }
}

impl JitPredicate {
    /// Compiles the SQL predicate `sql` for a reader of a file with this metadata
    /// (`builder.metadata()`) and Arrow schema (`builder.schema()`).
    pub fn new(sql: &str, metadata: &ParquetMetaData, schema: &Schema) -> crate::Result<Self> {
        Self::from_expr(&parse_expr(sql)?, metadata, schema)
    }

    /// Compiles a predicate built with the [`Expr`] API; see [`JitPredicate::new`].
    pub fn from_expr(
        expr: &Expr,
        metadata: &ParquetMetaData,
        schema: &Schema,
    ) -> crate::Result<Self> {
        let prepared = Prepared::new(expr, &engine_schema(schema), Purpose::Predicate)?;
        Self::from_prepared(&prepared, metadata, false, crate::CompilePolicy::Eager)
    }

    /// Compiles `prepared` (bound to the file's schema with types converted) against
    /// the columns it reads, when `policy` says.
    pub(crate) fn from_prepared(
        prepared: &Prepared,
        metadata: &ParquetMetaData,
        interpret: bool,
        policy: crate::CompilePolicy,
    ) -> crate::Result<Self> {
        let optimized = prepared.optimized();
        let engine = prepared.schema();
        let descr = metadata.file_metadata().schema_descr();
        let (columns, read_schema, leaves, eval) = match constant_value(optimized) {
            Some(b) => (vec![], Schema::empty(), Vec::new(), Eval::Constant(b)),
            None => {
                // The columns read, a STRUCT column with just the fields read of it,
                // and the predicate over just those.
                let read = ReadColumns::new(engine, metadata, &optimized.columns());
                let mut typed = optimized.clone();
                remap(&mut typed, &|c| read.moved(engine, c));
                let schema = read.schema.clone();
                let eval = if interpret {
                    let decoding = Decoding::new(&schema, &typed.columns());
                    Eval::Interpreted(typed, Arc::new(decoding))
                } else {
                    let on_columns = Prepared::from_typed(
                        &schema,
                        Purpose::Predicate,
                        prepared.expr().clone(),
                        None,
                        typed,
                    );
                    Eval::Jit(Filter::with_policy(
                        &on_columns,
                        KernelCache::global(),
                        policy,
                    )?)
                };
                (read.roots, schema, read.leaves, eval)
            }
        };
        Ok(JitPredicate {
            projection: ProjectionMask::leaves(descr, leaves.iter().copied()),
            schema: Arc::new(read_schema),
            columns,
            leaves,
            eval,
            rows: RowNumbers::new(metadata),
            seen: Arc::new(AtomicU64::new(0)),
            error: Arc::new(Mutex::new(None)),
            kept: None,
        })
    }

    /// The same predicate for another file of the same schema (the scan compiles once
    /// and clones per row group), reading `row_groups` of it in that order, with
    /// `selection` (relative to those row groups' rows, as the reader takes it) if
    /// any. Row numbers in errors count in this file.
    pub fn for_file(
        &self,
        metadata: &ParquetMetaData,
        row_groups: &[usize],
        selection: Option<&RowSelection>,
    ) -> JitPredicate {
        let descr = metadata.file_metadata().schema_descr();
        let starts = RowNumbers::new(metadata).starts;
        JitPredicate {
            projection: ProjectionMask::leaves(descr, self.leaves.iter().copied()),
            columns: self.columns.clone(),
            leaves: self.leaves.clone(),
            schema: self.schema.clone(),
            eval: self.eval.clone(),
            rows: RowNumbers::of_groups(starts, row_groups, selection),
            seen: Arc::new(AtomicU64::new(0)),
            error: Arc::new(Mutex::new(None)),
            kept: None,
        }
    }

    /// Tells the predicate which rows the reader presents, so that errors name the
    /// right rows of the file: the row groups given to `with_row_groups` (in that
    /// order) and the selection given to `with_row_selection`, if any.
    pub fn with_rows(self, row_groups: &[usize], selection: Option<&RowSelection>) -> JitPredicate {
        let starts = self.rows.starts.clone();
        JitPredicate {
            rows: RowNumbers::of_groups(starts, row_groups, selection),
            ..self
        }
    }

    /// The root columns (indices into the file's schema) the predicate reads.
    pub fn columns(&self) -> &[usize] {
        &self.columns
    }

    /// `Some(true)` if the predicate folded to TRUE (it selects every row and reads
    /// no column), `Some(false)` if it folded to FALSE or NULL (it selects none).
    pub fn constant(&self) -> Option<bool> {
        match self.eval {
            Eval::Constant(b) => Some(b),
            _ => None,
        }
    }

    /// Which tier evaluated its batches so far (all clones together) and when its
    /// kernel arrived; `None` for a constant and with the interpreter by request.
    pub fn tier_stats(&self) -> Option<crate::TierStats> {
        match &self.eval {
            Eval::Jit(f) => Some(f.tier_stats()),
            _ => None,
        }
    }

    /// Whether it runs as compiled code (a constant needs no code and counts as such).
    pub fn is_jit(&self) -> bool {
        match &self.eval {
            Eval::Constant(_) => true,
            Eval::Jit(f) => f.is_jit(),
            Eval::Interpreted(..) => false,
        }
    }

    /// A handle on the last error this predicate raised, kept whole: the reader's
    /// own error type holds only its text. Take it before handing the predicate over.
    pub fn error_handle(&self) -> Arc<Mutex<Option<RowError>>> {
        self.error.clone()
    }

    /// From now on, records which rows it selects; the scan reads them to find the
    /// file row of a row of its output.
    pub(crate) fn record_kept(&mut self) -> Arc<Mutex<BooleanBufferBuilder>> {
        self.kept
            .get_or_insert_with(|| Arc::new(Mutex::new(BooleanBufferBuilder::new(1024))))
            .clone()
    }

    /// How many rows the predicate has been given, counted as it runs.
    pub(crate) fn rows_seen(&self) -> Arc<AtomicU64> {
        self.seen.clone()
    }

    /// The mask of TRUE rows of `batch` (the predicate's columns, as the reader reads
    /// them), and its row numbers counted on.
    pub(crate) fn mask(&mut self, batch: RecordBatch) -> Result<BooleanArray, RowError> {
        let rows = batch.num_rows();
        let first = self.seen.fetch_add(rows as u64, Ordering::Relaxed);
        let result = match &self.eval {
            Eval::Constant(b) => {
                let bits = if *b {
                    BooleanBuffer::new_set(rows)
                } else {
                    BooleanBuffer::new_unset(rows)
                };
                Ok(BooleanArray::new(bits, None))
            }
            Eval::Jit(f) => to_engine_batch(batch, &self.schema)
                .map_err(crate::Error::from)
                .and_then(|b| f.evaluate_mask(&b)),
            Eval::Interpreted(e, decoding) => to_engine_batch(batch, &self.schema)
                .map_err(crate::Error::from)
                .and_then(|b| interpret(e, &*decoding.convert(&b)?))
                .map(|r| {
                    let r = r
                        .as_any()
                        .downcast_ref::<BooleanArray>()
                        .expect("a predicate is BOOLEAN");
                    BooleanArray::new(true_rows(r), None)
                }),
        };
        if let (Ok(mask), Some(kept)) = (&result, &self.kept) {
            let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
            kept.append_buffer(mask.values());
        }
        result.map_err(|e| {
            let (row_group, row) = self.rows.locate(first + row_of(&e).unwrap_or(0) as u64);
            let error = RowError {
                row_group,
                row,
                message: without_row(&e),
                source: Arc::new(e),
            };
            *self.error.lock().unwrap_or_else(|p| p.into_inner()) = Some(error.clone());
            error
        })
    }
}

impl ArrowPredicate for JitPredicate {
    fn projection(&self) -> &ProjectionMask {
        &self.projection
    }

    fn evaluate(&mut self, batch: RecordBatch) -> Result<BooleanArray, ArrowError> {
        self.mask(batch)
            .map_err(|e| ArrowError::ComputeError(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::arrow::arrow_reader::RowSelector;

    fn numbers(groups: &[u64]) -> Arc<[u64]> {
        let mut starts = vec![0];
        for g in groups {
            starts.push(starts.last().unwrap() + g);
        }
        starts.into()
    }

    #[test]
    fn a_predicate_on_fields_reads_just_their_leaves() {
        use arrow::array::{ArrayRef, Int64Array, StringArray, StructArray};
        use arrow::datatypes::Fields;
        use parquet::arrow::ArrowWriter;
        use parquet::file::reader::{FileReader, SerializedFileReader};
        // Columns id, s {x, inner {name, n}}: Parquet leaves 0, 1, 2, 3.
        let inner = StructArray::new(
            Fields::from(vec![
                Field::new("name", DataType::Utf8, true),
                Field::new("n", DataType::Int64, true),
            ]),
            vec![
                Arc::new(StringArray::from(vec!["a"])) as ArrayRef,
                Arc::new(Int64Array::from(vec![1])),
            ],
            None,
        );
        let s = StructArray::new(
            Fields::from(vec![
                Field::new("x", DataType::Int64, true),
                Field::new("inner", inner.data_type().clone(), true),
            ]),
            vec![
                Arc::new(Int64Array::from(vec![7])) as ArrayRef,
                Arc::new(inner),
            ],
            None,
        );
        let batch = RecordBatch::try_from_iter(vec![
            ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
            ("s", Arc::new(s)),
        ])
        .unwrap();
        let mut bytes = Vec::new();
        let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let meta = SerializedFileReader::new(bytes::Bytes::from(bytes))
            .unwrap()
            .metadata()
            .clone();
        let schema = batch.schema();
        let read = |sql: &str| {
            let p = Prepared::parse(sql, &schema, Purpose::Predicate).unwrap();
            ReadColumns::new(&schema, &meta, &p.optimized().columns())
        };
        let r = read("s.inner.n > 0");
        assert_eq!((r.roots.clone(), r.leaves.clone()), (vec![1], vec![3]));
        assert_eq!(
            r.schema.field(0).data_type().to_string(),
            "Struct(\"inner\": Struct(\"n\": Int64))"
        );
        let p = Prepared::parse("s.inner.n > 0", &schema, Purpose::Predicate).unwrap();
        let mut typed = p.optimized().clone();
        remap(&mut typed, &|c| r.moved(&schema, c));
        assert_eq!(typed.display(&r.schema).to_string(), "(s.\"inner\".n > 0)");
        let r = read("s.x > 0 AND id < 3");
        assert_eq!((r.roots, r.leaves), (vec![0, 1], vec![0, 1]));
        // Two fields of one column: their two leaves, not the third.
        let r = read("s.x > 0 AND s.inner.name = 'a'");
        assert_eq!(r.leaves, vec![1, 2]);
    }

    #[test]
    fn row_numbers_follow_groups_and_selection() {
        let starts = numbers(&[10, 10, 10]);
        let all = RowNumbers::of_groups(starts.clone(), &[0, 1, 2], None);
        assert_eq!(all.locate(0), (0, 0));
        assert_eq!(all.locate(12), (1, 12));
        let some = RowNumbers::of_groups(starts.clone(), &[2, 0], None);
        assert_eq!(some.locate(3), (2, 23));
        assert_eq!(some.locate(13), (0, 3));
        // Skip 5 rows of group 1, take 3, skip 7 (the rest of 1 and 5 of 2), take 5.
        let selection = RowSelection::from(vec![
            RowSelector::skip(5),
            RowSelector::select(3),
            RowSelector::skip(7),
            RowSelector::select(5),
        ]);
        let selected = RowNumbers::of_groups(starts, &[1, 2], Some(&selection));
        assert_eq!(selected.locate(0), (1, 15));
        assert_eq!(selected.locate(2), (1, 17));
        assert_eq!(selected.locate(3), (2, 25));
        assert_eq!(selected.locate(7), (2, 29));
    }
}
