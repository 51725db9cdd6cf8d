//! [`Scan`]: reading some columns of a dataset where a predicate is TRUE.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use arrow::array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchOptions, UInt64Array};
use arrow::buffer::BooleanBuffer;
use arrow::compute::{cast, filter_record_batch};
use arrow::datatypes::SchemaRef;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{
    ArrowPredicate, ArrowReaderMetadata, ParquetRecordBatchReaderBuilder, RowFilter, RowSelection,
    RowSelectionPolicy,
};
use parquet::arrow::ProjectionMask;

use super::dataset::to_engine_batch;
use super::footer::check_page_headers;
use super::predicate::{constant_value, row_of, without_row};
use super::source::FileBytes;
use super::{conjuncts, gather, keys};
use super::{
    field_leaf, guarded, single_leaf, Dataset, JitPredicate, RowError, ScanError, SourceFile,
};
use crate::expr::Expr;
use crate::prepare::{Prepared, Purpose};
use crate::prune::{may_be_true, ColumnStats};
use crate::scalar::ScalarValue;
use crate::struct_fields::{field_at, struct_fields};
use crate::typed::TypedExpr;

/// How the reader skips the rows a predicate rejected in the columns read after it:
/// by runs (skipping values without materializing them) unless the runs average under
/// 3 rows, then by decoding every row and filtering with a mask. The parquet crate's
/// default switches to the mask below 32 rows a run, which at Q6's selectivity (2 %
/// of rows kept, runs of ~25) decodes every value of every output column, strings
/// included. The CSV export of Q6's rows at TPC-H SF1 (`broadhead filter … --format
/// csv`, medians of 5 runs alternating the two builds) takes 669 ms with this against
/// 850 with the crate's default (1 thread; 504 against 613 with 2); the counts of Q6
/// and the Q12-style query, which read no output column, are unchanged within the
/// noise. Around half the rows kept (runs of ~2) the mask is faster (a CSV of three
/// columns, 48 % of rows: 720–730 ms with the mask, 860–940 skipping every run); this
/// threshold keeps the mask there (669 ms against the default's 671).
/// `scripts/bench-e2e.sh` measures the queries.
const SELECTION_POLICY: RowSelectionPolicy = RowSelectionPolicy::Auto { threshold: 3 };

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
    /// When the predicate's kernel is compiled (`Eager` by default; the command
    /// line uses `Tiered`: row groups read before the kernel arrives are filtered by
    /// the interpreter).
    pub policy: crate::CompilePolicy,
}

impl Default for ScanOptions {
    fn default() -> Self {
        ScanOptions {
            batch_size: 8192,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            pushdown: true,
            prune: true,
            interpret: false,
            policy: crate::CompilePolicy::Eager,
        }
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
        /// Whether statistics (or a predicate folded to FALSE) ruled it out.
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
    /// Row groups read whose conjuncts on dictionary-encoded columns were decided on
    /// the dictionaries and keys, before the reader (see [the module](crate::parquet)).
    pub keyed: usize,
    /// Of those, the row groups whose output columns were read at the selected rows
    /// without the reader (see [the module](crate::parquet)).
    pub gathered: usize,
    /// Of the keyed row groups, those whose conjuncts on several columns were
    /// evaluated only at the rows the conjuncts on one column kept, their values read
    /// at those rows (see [the module](crate::parquet)).
    pub narrowed: usize,
}

/// What the threads of a scan count as they read row groups ([`ScanStats`]).
#[derive(Default)]
struct Counters {
    keyed: AtomicUsize,
    gathered: AtomicUsize,
    narrowed: AtomicUsize,
}

/// The predicate of a scan, once bound and optimized.
enum Selects {
    /// Every row (no predicate, or one that folded to TRUE).
    All,
    /// No row (a predicate that folded to FALSE or NULL).
    Nothing,
    /// The rows where it is TRUE: the optimized predicate over the dataset schema
    /// (for pruning), the reader's predicates compiled for the columns they read
    /// (one, or with pushdown a conjunction split cheapest first, [`conjuncts`]; none
    /// when every conjunct is keyed), the conjuncts decided on dictionary keys
    /// before the reader runs, in groups ([`keys`]), and which of those groups are
    /// optional ([`conjuncts::Split::optional`]).
    Where(TypedExpr, Vec<JitPredicate>, Vec<JitPredicate>, Vec<bool>),
}

/// Reading some columns of a dataset where a predicate is TRUE.
pub struct Scan<'a> {
    dataset: &'a Dataset,
    options: ScanOptions,
    selects: Selects,
    output_columns: Vec<usize>,
    output_schema: SchemaRef,
    /// Per file, its footer with the columns a split predicate reads as dictionaries
    /// typed so; `None`: the files' own.
    reader_metadata: Option<Vec<ArrowReaderMetadata>>,
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
        let predicate = predicate
            .map(|sql| Prepared::parse(sql, schema, Purpose::Predicate))
            .transpose()?;
        Scan::from_prepared(dataset, predicate.as_ref(), output_columns, options)
    }

    /// [`Scan::new`] with a predicate built with the [`Expr`] API (or parsed already).
    /// It is bound and optimized once: a predicate that folds to TRUE reads no column
    /// for itself, one that folds to FALSE or NULL reads nothing.
    pub fn from_expr(
        dataset: &'a Dataset,
        predicate: Option<&Expr>,
        output_columns: &[usize],
        options: ScanOptions,
    ) -> crate::Result<Scan<'a>> {
        let schema = dataset.schema();
        let predicate = predicate
            .map(|e| Prepared::new(e, schema, Purpose::Predicate))
            .transpose()?;
        Scan::from_prepared(dataset, predicate.as_ref(), output_columns, options)
    }

    /// [`Scan::new`] with a predicate already bound and optimized for the dataset's
    /// schema (as `Prepared::new(expr, dataset.schema(), Purpose::Predicate)` makes it).
    pub fn from_prepared(
        dataset: &'a Dataset,
        predicate: Option<&Prepared>,
        output_columns: &[usize],
        options: ScanOptions,
    ) -> crate::Result<Scan<'a>> {
        let schema = dataset.schema();
        if let Some(p) = predicate {
            p.check_schema(schema)?;
        }
        let mut output_columns = output_columns.to_vec();
        output_columns.sort_unstable();
        output_columns.dedup();
        let output_schema = Arc::new(schema.project(&output_columns)?);
        let mut reader_metadata = None;
        let selects = match predicate {
            None => Selects::All,
            Some(prepared) => match constant_value(prepared.optimized()) {
                Some(true) => Selects::All,
                Some(false) => Selects::Nothing,
                None => {
                    let split = match options.pushdown && !options.interpret {
                        true => conjuncts::split(prepared, dataset),
                        false => None,
                    };
                    let (parts, keyed, optional) = match split {
                        Some(split) => {
                            reader_metadata = split.reader_metadata;
                            (split.parts, split.keyed, split.optional)
                        }
                        None => (vec![prepared.clone()], Vec::new(), Vec::new()),
                    };
                    let first = dataset.files()[0].metadata.metadata();
                    let compile = |parts: Vec<Prepared>| {
                        parts
                            .iter()
                            .map(|p| {
                                JitPredicate::from_prepared(
                                    p,
                                    first,
                                    options.interpret,
                                    options.policy,
                                )
                            })
                            .collect::<crate::Result<Vec<_>>>()
                    };
                    Selects::Where(
                        prepared.optimized().clone(),
                        compile(parts)?,
                        compile(keyed)?,
                        optional,
                    )
                }
            },
        };
        Ok(Scan {
            dataset,
            options,
            selects,
            output_columns,
            output_schema,
            reader_metadata,
        })
    }

    /// For each of the reader's predicates (one, or the parts of a conjunction
    /// split cheapest first, in the order they run), which tier evaluated its batches
    /// so far and when its kernel arrived (empty without a predicate to evaluate, or
    /// with `interpret`).
    pub fn predicate_tier_stats(&self) -> Vec<crate::TierStats> {
        match &self.selects {
            Selects::Where(_, parts, keyed, _) => keyed
                .iter()
                .chain(parts)
                .filter_map(|p| p.tier_stats())
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The schema of the batches the scan produces: the output columns, in schema order.
    pub fn output_schema(&self) -> &SchemaRef {
        &self.output_schema
    }

    /// The output columns (schema indices), sorted: the columns of the batches the
    /// scan produces, in this order.
    pub fn output_columns(&self) -> &[usize] {
        &self.output_columns
    }

    /// Whether the predicate runs as compiled code (a constant needs no code).
    pub fn is_jit(&self) -> bool {
        match &self.selects {
            Selects::Where(_, parts, keyed, _) => keyed.iter().chain(parts).all(|p| p.is_jit()),
            Selects::All | Selects::Nothing => true,
        }
    }

    /// Row groups (file index, row group index, rows, pruned) in file order.
    fn plan(&self) -> Vec<(usize, usize, u64, bool)> {
        let mut tasks = Vec::new();
        for (fi, file) in self.dataset.files().iter().enumerate() {
            let meta = file.metadata.metadata();
            let keep = match (&self.selects, self.options.prune) {
                (Selects::Nothing, _) => vec![false; meta.num_row_groups()],
                // Statistics of a corrupt file may make the parquet crate panic:
                // then they prove nothing.
                (Selects::Where(bound, ..), true) => guarded(|| self.prune_file(file, bound))
                    .unwrap_or_else(|_| vec![true; meta.num_row_groups()]),
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
        let descr = file.metadata.parquet_schema();
        // Per column: per-row-group minimums, maximums and null counts. Columns are
        // found by position (a root with one leaf), never by name.
        let mut per_column = Vec::new();
        for c in bound.columns() {
            // A STRUCT field's statistics are its Parquet leaf's (a leaf is NULL
            // where its parents are, as the field is).
            let (field, leaf, file_field) = match field_at(schema, c) {
                None => (
                    Arc::new(schema.field(c).clone()),
                    single_leaf(meta, c),
                    Arc::new(file.metadata.schema().field(c).clone()),
                ),
                Some(f) => {
                    let file_root = file.metadata.schema().field(f.root).data_type();
                    let file_field = struct_fields(file.metadata.schema())
                        .into_iter()
                        .find(|g| g.root == f.root && g.path == f.path)
                        .map(|g| g.field);
                    match file_field {
                        Some(file_field) => {
                            (f.field.clone(), field_leaf(meta, file_root, &f), file_field)
                        }
                        None => continue,
                    }
                }
            };
            let Some(leaf) = leaf else {
                continue;
            };
            let Ok(conv) = StatisticsConverter::from_column_index(leaf, &file_field, descr) else {
                continue;
            };
            // Statistics of the type the predicate was bound with (a dictionary's
            // values' type).
            let bound = crate::decode::bound_type(field.data_type());
            let to_engine = |a: parquet::errors::Result<ArrayRef>| {
                a.ok().and_then(|a| {
                    if a.data_type() == &bound {
                        Some(a)
                    } else {
                        cast(&a, &bound).ok()
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
        let counters = Counters::default();
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
                    let result = self.read_row_group(fi, rg, map, &tx, &counters);
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
        Ok(ScanStats {
            row_groups: tasks.len(),
            pruned: tasks.iter().filter(|t| t.3).count(),
            keyed: counters.keyed.into_inner(),
            gathered: counters.gathered.into_inner(),
            narrowed: counters.narrowed.into_inner(),
        })
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
                                &self.dataset.files()[fi].path,
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
        counters: &Counters,
    ) -> Result<(), ScanError> {
        let source = &self.dataset.files()[fi];
        let path = &source.path;
        let file = File::open(path).map_err(|e| ScanError::file(path, e))?;
        let descr = source.metadata.parquet_schema();
        // The pages this read decodes are checked first (a forged page header could
        // make the parquet crate's decoder hang).
        let mut read_columns = self.output_columns.clone();
        if let Selects::Where(_, parts, keyed, _) = &self.selects {
            read_columns.extend(parts.iter().chain(keyed).flat_map(|p| p.columns()));
        }
        let read_mask = ProjectionMask::roots(descr, read_columns);
        check_page_headers(
            source.metadata.metadata(),
            rg,
            &read_mask,
            &mut |at, buf| file.read_exact_at(buf, at),
        )
        .map_err(|e| ScanError::corrupt(path, e))?;
        let metadata = match &self.reader_metadata {
            Some(files) => files[fi].clone(),
            None => source.metadata.clone(),
        };
        let reader_file = FileBytes::of(&file).map_err(|e| ScanError::file(path, e))?;
        // The same bytes for the conjuncts decided on keys ([`keys`]) and the output
        // columns read without the reader ([`gather`]).
        let keyed_bytes = match &self.selects {
            Selects::Where(_, _, keyed, _) if !keyed.is_empty() => Some(Arc::new(
                reader_file
                    .try_clone()
                    .map_err(|e| ScanError::file(path, e))?,
            )),
            _ => None,
        };
        let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(reader_file, metadata)
            .with_row_groups(vec![rg])
            .with_batch_size(self.options.batch_size);
        let output_mask = |columns: &[usize]| ProjectionMask::roots(descr, columns.iter().copied());
        // A reader failure is the predicate's error on a row if it raised one, else
        // the file's.
        let failed = |e: &dyn std::fmt::Display, raised: Option<RowError>| match raised {
            Some(error) => ScanError::Row {
                path: path.clone(),
                error,
            },
            None => ScanError::corrupt(path, format!("row group {rg}: {e}")),
        };
        // A row group whose pages hold fewer or more rows than it claims is corrupt
        // (the reader itself stops quietly where the pages end).
        let claimed = source.metadata.metadata().row_group(rg).num_rows().max(0) as u64;
        let check_rows = |read: u64| {
            if read == claimed {
                Ok(())
            } else {
                Err(ScanError::corrupt(
                    path,
                    format!("row group {rg} claims {claimed} rows, its pages hold {read}"),
                ))
            }
        };
        // An error of `map` on a row (a division by zero in a computed output, say)
        // names that row of the file: `file_row` finds it from the row of the batch.
        let first_row: u64 = source.metadata.metadata().row_groups()[..rg]
            .iter()
            .map(|g| g.num_rows().max(0) as u64)
            .sum();
        let send = |batch: RecordBatch,
                    file_row: &dyn Fn(usize) -> Option<u64>|
         -> Result<bool, ScanError> {
            let batch = to_engine_batch(batch, &self.output_schema)
                .map_err(|e| ScanError::corrupt(path, format!("row group {rg}: {e}")))?;
            let mapped = map(batch).map_err(|e| match e {
                ScanError::Engine(e) => match row_of(&e).and_then(file_row) {
                    Some(row) => ScanError::Row {
                        path: path.clone(),
                        error: RowError {
                            row_group: rg,
                            row: first_row + row,
                            message: without_row(&e),
                            source: Arc::new(e),
                        },
                    },
                    None => ScanError::Engine(e),
                },
                other => other,
            })?;
            Ok(tx.send(Msg::Batch(mapped)).is_ok())
        };
        // Rows sent so far, and the rows of the row group they are.
        let mut sent = 0usize;
        match &self.selects {
            Selects::Where(_, parts, keyed_parts, optional) if self.options.pushdown => {
                let meta = source.metadata.metadata();
                // The keyed conjuncts first, on their dictionaries and keys; when a
                // chunk is not as its metadata says, they join the reader's.
                let mut keyed: Vec<JitPredicate> = keyed_parts
                    .iter()
                    .map(|p| p.for_file(meta, &[rg], None))
                    .collect();
                let selected = match keyed.is_empty() {
                    true => None,
                    false => reading(path, rg, || {
                        keys::row_group_mask(
                            meta,
                            source.metadata.schema(),
                            rg,
                            &mut keyed,
                            optional,
                            keyed_bytes.as_ref()?,
                        )
                    })?
                    .map(|keyed| {
                        if keyed.narrowed {
                            counters.narrowed.fetch_add(1, Ordering::Relaxed);
                        }
                        keyed.rows
                    }),
                };
                let mut pushed: Vec<JitPredicate> = match selected {
                    Some(_) => {
                        counters.keyed.fetch_add(1, Ordering::Relaxed);
                        Vec::new()
                    }
                    // Fresh ones: those counted the dictionaries' values as rows. The
                    // optional groups' conjuncts are in another group too.
                    None => keyed_parts
                        .iter()
                        .enumerate()
                        .filter(|(k, _)| optional.get(*k) != Some(&true))
                        .map(|(_, p)| p.for_file(meta, &[rg], None))
                        .collect(),
                };
                pushed.extend(parts.iter().map(|p| p.for_file(meta, &[rg], None)));
                if pushed.is_empty() && self.output_columns.is_empty() {
                    // Nothing else to read: batches of the selected rows' count.
                    let selected = selected.expect("keyed conjuncts decided the rows");
                    let total = selected.count_set_bits();
                    while sent < total {
                        let n = (total - sent).min(self.options.batch_size.max(1));
                        let batch = RecordBatch::try_new_with_options(
                            self.output_schema.clone(),
                            vec![],
                            &RecordBatchOptions::new().with_row_count(Some(n)),
                        )
                        .map_err(|e| failed(&e, None))?;
                        let file_row = |r: usize| selected.set_indices().nth(sent + r);
                        let file_row = |r: usize| file_row(r).map(|i| i as u64);
                        if !send(batch, &file_row)? {
                            return Ok(());
                        }
                        sent += n;
                    }
                    return Ok(());
                }
                // When the keyed conjuncts decided every row and kept at most half
                // of them, the output columns are read at those rows without the
                // reader ([`gather`]); a page not as expected leaves the rows not yet
                // sent to the reader. Above half, the reader's decoding of whole runs
                // is faster: reading `l_orderkey` where `l_quantity > 0` (every row of
                // TPC-H SF1) takes 157 ms this way against 114 with the reader, where
                // `l_quantity < 26` (half) 111 against 118, where `l_quantity < 13`
                // (a quarter) 90 against 102 (`perf stat -r 3`, 1 thread).
                let mut remaining = selected.clone();
                let few = |chosen: &BooleanBuffer| chosen.count_set_bits() * 2 <= chosen.len();
                if let (true, Some(chosen), Some(bytes)) = (
                    pushed.is_empty(),
                    selected.as_ref().filter(|c| few(c)),
                    &keyed_bytes,
                ) {
                    let gather = gather::RowGroupGather::new(
                        meta,
                        source.metadata.schema(),
                        rg,
                        &self.output_columns,
                        bytes,
                    );
                    if let Some(mut gather) = gather {
                        let rows: Vec<u32> = chosen.set_indices().map(|i| i as u32).collect();
                        for batch_rows in rows.chunks(self.options.batch_size.max(1)) {
                            let Some(batch) = reading(path, rg, || gather.batch(batch_rows))?
                            else {
                                break;
                            };
                            let file_row = |r: usize| rows.get(sent + r).map(|&i| u64::from(i));
                            if !send(batch, &file_row)? {
                                return Ok(());
                            }
                            sent += batch_rows.len();
                        }
                        let Some(&from) = rows.get(sent) else {
                            counters.gathered.fetch_add(1, Ordering::Relaxed);
                            return Ok(());
                        };
                        let from = from as usize;
                        remaining = Some(BooleanBuffer::collect_bool(chosen.len(), |i| {
                            i >= from && chosen.value(i)
                        }));
                    }
                }
                let kept: Vec<_> = pushed.iter_mut().map(|p| p.record_kept()).collect();
                let raised: Vec<_> = pushed.iter().map(|p| p.error_handle()).collect();
                let seen = pushed.first().map(|p| p.rows_seen());
                let take = || {
                    raised
                        .iter()
                        .find_map(|r| r.lock().unwrap_or_else(|p| p.into_inner()).take())
                };
                let predicates: Vec<_> = pushed
                    .into_iter()
                    .map(|p| Box::new(p) as Box<dyn ArrowPredicate>)
                    .collect();
                let mut builder = builder
                    .with_projection(output_mask(&self.output_columns))
                    .with_row_selection_policy(SELECTION_POLICY);
                if let Some(remaining) = &remaining {
                    let selected = BooleanArray::new(remaining.clone(), None);
                    builder = builder.with_row_selection(RowSelection::from_filters(&[selected]));
                }
                if !predicates.is_empty() {
                    builder = builder.with_row_filter(RowFilter::new(predicates));
                }
                let mut reader =
                    reading(path, rg, || builder.build())?.map_err(|e| failed(&e, take()))?;
                let mut read = 0u64;
                while let Some(batch) = reading(path, rg, || reader.next())? {
                    let batch = batch.map_err(|e| failed(&e, take()))?;
                    let n = batch.num_rows();
                    read += n as u64;
                    // The output's rows are the rows the last predicate kept, in
                    // order; each predicate saw the rows the one before it kept, the
                    // first the rows the keyed conjuncts selected (or all).
                    let file_row = |r: usize| {
                        let row = kept.iter().rev().try_fold(sent + r, |row, kept| {
                            let kept = kept.lock().unwrap_or_else(|p| p.into_inner());
                            let bits =
                                BooleanBuffer::new(kept.as_slice().to_vec().into(), 0, kept.len());
                            bits.set_indices().nth(row)
                        })?;
                        match &selected {
                            Some(selected) => selected.set_indices().nth(row),
                            None => Some(row),
                        }
                        .map(|i| i as u64)
                    };
                    if !send(batch, &file_row)? {
                        return Ok(());
                    }
                    sent += n;
                }
                // The rows the reader handed the first predicate (or, with none, the
                // output) are all the row group's, or those the keyed conjuncts kept.
                let handed = seen.map_or(read, |seen| seen.load(Ordering::Relaxed));
                match &remaining {
                    Some(remaining) if handed != remaining.count_set_bits() as u64 => {
                        return Err(ScanError::corrupt(
                            path,
                            format!("row group {rg}: its pages hold fewer rows than it claims"),
                        ));
                    }
                    Some(_) => {}
                    None => check_rows(handed)?,
                }
            }
            Selects::Where(_, parts, ..) => {
                // Read every needed column once, evaluate, then keep the output columns
                // (without pushdown the predicate is never split: one part).
                let mut predicate = parts[0].for_file(source.metadata.metadata(), &[rg], None);
                let mut columns = predicate.columns().to_vec();
                columns.extend(&self.output_columns);
                columns.sort_unstable();
                columns.dedup();
                let position = |c: &usize| columns.binary_search(c).expect("read");
                let inputs: Vec<usize> = predicate.columns().iter().map(position).collect();
                let outputs: Vec<usize> = self.output_columns.iter().map(position).collect();
                let mut reader = reading(path, rg, || {
                    builder.with_projection(output_mask(&columns)).build()
                })?
                .map_err(|e| failed(&e, None))?;
                let mut read = 0;
                while let Some(batch) = reading(path, rg, || reader.next())? {
                    let batch = batch.map_err(|e| failed(&e, None))?;
                    read += batch.num_rows() as u64;
                    let inputs = batch.project(&inputs).map_err(|e| failed(&e, None))?;
                    let mask = predicate.mask(inputs).map_err(|error| ScanError::Row {
                        path: path.clone(),
                        error,
                    })?;
                    let projected = batch.project(&outputs).map_err(|e| failed(&e, None))?;
                    let selected =
                        filter_record_batch(&projected, &mask).map_err(|e| failed(&e, None))?;
                    let before = read - mask.len() as u64;
                    let file_row = |r: usize| {
                        mask.values()
                            .set_indices()
                            .nth(r)
                            .map(|i| before + i as u64)
                    };
                    if !send(selected, &file_row)? {
                        return Ok(());
                    }
                }
                check_rows(read)?;
            }
            Selects::All | Selects::Nothing => {
                let mut reader = reading(path, rg, || {
                    builder
                        .with_projection(output_mask(&self.output_columns))
                        .build()
                })?
                .map_err(|e| failed(&e, None))?;
                let mut read = 0;
                while let Some(batch) = reading(path, rg, || reader.next())? {
                    let batch = batch.map_err(|e| failed(&e, None))?;
                    let before = read;
                    read += batch.num_rows() as u64;
                    if !send(batch, &|r| Some(before + r as u64))? {
                        return Ok(());
                    }
                }
                check_rows(read)?;
            }
        }
        Ok(())
    }
}

/// `f()`, with a panic inside it as an error of the file: the parquet and arrow crates
/// panic on some corrupt files. (Only reading is guarded: a panic in `map` or the sink
/// is Broadhead's own bug, reported as such.)
fn reading<T>(path: &Path, rg: usize, f: impl FnOnce() -> T) -> Result<T, ScanError> {
    guarded(f).map_err(|panic| ScanError::corrupt(path, format!("row group {rg}: {panic}")))
}

enum Msg<T> {
    Batch(T),
    Done,
    Failed(ScanError),
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int32Array, Int64Array, StringArray};
    use arrow::datatypes::{DataType, Field, Schema};
    use arrow::util::display::array_value_to_string;

    /// Held by the tests that set the hooks making row groups fail (`keys::GIVE_UP`,
    /// `gather::FAIL_AFTER`) and by those that count how row groups were read, so
    /// that one's hooks do not change the other's counts.
    static HOOKS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// `batch` written to a Parquet file at `path` with `props`, opened.
    fn written(
        path: &Path,
        batch: &RecordBatch,
        props: parquet::file::properties::WriterProperties,
    ) -> Dataset {
        let file = File::create(path).unwrap();
        let mut writer =
            parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
        writer.write(batch).unwrap();
        writer.close().unwrap();
        Dataset::open(&[path.to_path_buf()]).unwrap()
    }

    /// The first three columns of `dataset`'s rows where `predicate` is TRUE, a line
    /// of text a row, and the scan's statistics.
    fn lines_of(
        dataset: &Dataset,
        predicate: &str,
        options: ScanOptions,
    ) -> (Vec<String>, ScanStats) {
        let scan = Scan::new(dataset, Some(predicate), &[0, 1, 2], options).unwrap();
        let mut lines = Vec::new();
        let stats = scan
            .run(
                &|b: RecordBatch| {
                    Ok((0..b.num_rows())
                        .map(|r| {
                            b.columns()
                                .iter()
                                .map(|c| array_value_to_string(c, r).unwrap())
                                .collect::<Vec<_>>()
                                .join(",")
                        })
                        .collect::<Vec<_>>())
                },
                &mut |item| {
                    if let ScanItem::Batch(b) = item {
                        lines.extend(b);
                    }
                    Ok(true)
                },
            )
            .unwrap();
        (lines, stats)
    }

    /// A row group whose keyed conjuncts are given back to the reader (a chunk not
    /// as its metadata says) is read by the reader with all the conjuncts: the same
    /// rows and values as when they are decided on the keys (and the output columns
    /// gathered at the rows kept), and as the interpreter; so is one whose gathering
    /// stops after two batches (a page not as expected).
    #[test]
    fn row_groups_given_back_to_the_reader_read_the_same_rows() {
        let _hooks = HOOKS.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("keys.parquet");
        let schema = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("b", DataType::Int32, true),
            Field::new("t", DataType::Utf8, true),
        ]));
        let rows = 1_000i64;
        let a = Int64Array::from_iter_values((0..rows).map(|r| r % 17));
        let b = Int32Array::from_iter((0..rows).map(|r| (r % 9 != 0).then_some(r as i32 % 23)));
        let words = ["x", "y", "héllo"];
        let t =
            StringArray::from_iter((0..rows).map(|r| (r % 4 != 0).then(|| words[r as usize % 3])));
        let batch =
            RecordBatch::try_new(schema, vec![Arc::new(a), Arc::new(b), Arc::new(t)]).unwrap();
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(128))
            .build();
        let dataset = written(&path, &batch, props);
        let scanned = |predicate: &str, interpret: bool| {
            let options = ScanOptions {
                interpret,
                batch_size: 5,
                threads: 1,
                ..ScanOptions::default()
            };
            lines_of(&dataset, predicate, options)
        };
        for predicate in [
            "a < 5 AND t = 'x'",
            "a < 9 AND b > a AND t <> 'y'",
            "b IS NULL AND t IS NOT NULL",
        ] {
            let (expected, _) = scanned(predicate, true);
            assert!(expected.len() > 10, "{predicate}");
            let (keyed, stats) = scanned(predicate, false);
            assert_eq!((stats.keyed, stats.gathered), (8, 8), "{predicate}");
            assert_eq!(keyed, expected, "{predicate}");
            // The output columns gathered for the first two batches, the rest of
            // that row group read by the reader.
            *gather::FAIL_AFTER.lock().unwrap() = Some(("t", 2));
            let (partly, stats) = scanned(predicate, false);
            *gather::FAIL_AFTER.lock().unwrap() = None;
            assert_eq!((stats.keyed, stats.gathered), (8, 7), "{predicate}");
            assert_eq!(partly, expected, "{predicate}");
            keys::GIVE_UP.store(true, Ordering::Relaxed);
            let (read, stats) = scanned(predicate, false);
            keys::GIVE_UP.store(false, Ordering::Relaxed);
            assert_eq!((stats.keyed, stats.gathered), (0, 0), "{predicate}");
            assert_eq!(read, expected, "{predicate}");
        }
    }

    /// Rows `first..end` of a lineitem of decimals written to `path` in row groups
    /// of 30,000 rows: `q` -10.00 to 49.00, `d` 0.00 to 0.10 (NULL every 13th row),
    /// `price` distinct (NULL every 17th row) in big-endian `FIXED_LEN_BYTE_ARRAY(7)`
    /// (pyarrow's and parquet-mr's way) or, with `int64`, as `INT64`; `small` -2.00 to
    /// 1.99 in 3 bytes; `k` an INTEGER 0 to 6. Pages of 1,000 rows; dictionaries of
    /// at most 2 KiB, past which PLAIN pages, as pyarrow falls back to.
    fn decimals_written(path: &Path, first: i64, end: i64, int64: bool) {
        use parquet::basic::Encoding;
        use parquet::data_type::{FixedLenByteArray, FixedLenByteArrayType};
        use parquet::data_type::{Int32Type, Int64Type};
        use parquet::file::writer::SerializedFileWriter;

        let wide = match int64 {
            true => "int64",
            false => "fixed_len_byte_array(7)",
        };
        let schema = parquet::schema::parser::parse_message_type(&format!(
            "message lineitem {{
                required {wide} q (DECIMAL(15,2));
                optional {wide} d (DECIMAL(15,2));
                optional {wide} price (DECIMAL(15,2));
                required fixed_len_byte_array(3) small (DECIMAL(6,2));
                required int32 k;
            }}"
        ))
        .unwrap();
        // The parquet crate writes dictionaries of FIXED_LEN_BYTE_ARRAY with format
        // 2's pages only (pyarrow with v1's: the pages' layout is the same for every
        // type).
        let props = parquet::file::properties::WriterProperties::builder()
            .set_writer_version(parquet::file::properties::WriterVersion::PARQUET_2_0)
            .set_encoding(Encoding::PLAIN)
            .set_data_page_row_count_limit(1_000)
            .set_write_batch_size(250)
            .set_dictionary_page_size_limit(2_048)
            .build();
        let file = File::create(path).unwrap();
        let mut writer =
            SerializedFileWriter::new(file, Arc::new(schema), Arc::new(props)).unwrap();
        // Big-endian two's complement in `n` bytes, as a writer stores a decimal.
        let be = |v: i64, n: usize| FixedLenByteArray::from(v.to_be_bytes()[8 - n..].to_vec());
        let rows: Vec<i64> = (first..end).collect();
        for rows in rows.chunks(30_000) {
            let q: Vec<i64> = rows.iter().map(|r| (r * 7919 % 60 - 10) * 100).collect();
            let d: Vec<i64> = rows
                .iter()
                .filter(|r| *r % 13 != 0)
                .map(|r| r % 11)
                .collect();
            let d_levels: Vec<i16> = rows.iter().map(|r| i16::from(r % 13 != 0)).collect();
            let price: Vec<i64> = rows
                .iter()
                .filter(|r| *r % 17 != 0)
                .map(|r| r * 37 - 500_000)
                .collect();
            let price_levels: Vec<i16> = rows.iter().map(|r| i16::from(r % 17 != 0)).collect();
            let small: Vec<_> = rows.iter().map(|r| be(r * 31 % 400 - 200, 3)).collect();
            let k: Vec<i32> = rows.iter().map(|r| (r % 7) as i32).collect();
            let mut group = writer.next_row_group().unwrap();
            for (values, levels) in [
                (&q, None),
                (&d, Some(&d_levels[..])),
                (&price, Some(&price_levels[..])),
            ] {
                let mut column = group.next_column().unwrap().unwrap();
                match int64 {
                    true => column
                        .typed::<Int64Type>()
                        .write_batch(values, levels, None),
                    false => {
                        let values: Vec<_> = values.iter().map(|&v| be(v, 7)).collect();
                        let typed = column.typed::<FixedLenByteArrayType>();
                        typed.write_batch(&values, levels, None)
                    }
                }
                .unwrap();
                column.close().unwrap();
            }
            let mut column = group.next_column().unwrap().unwrap();
            let typed = column.typed::<FixedLenByteArrayType>();
            typed.write_batch(&small, None, None).unwrap();
            column.close().unwrap();
            let mut column = group.next_column().unwrap().unwrap();
            column
                .typed::<Int32Type>()
                .write_batch(&k, None, None)
                .unwrap();
            column.close().unwrap();
            group.close().unwrap();
        }
        writer.close().unwrap();
    }

    /// Decimals stored as big-endian `FIXED_LEN_BYTE_ARRAY`, in row groups of many
    /// pages ([`decimals_written`]): their conjuncts are decided on their
    /// dictionaries and keys, on one column and on several, and the output columns
    /// gathered at the rows kept, a column past its dictionary's size limit (PLAIN
    /// pages) and NULLs included; the same rows and values as the interpreter reading
    /// them through the reader. So with one file of them and one of the same rows
    /// stored as `INT64`.
    #[test]
    fn big_endian_decimals_are_read_by_their_keys() {
        use parquet::basic::Encoding;

        let _hooks = HOOKS.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("flba.parquet");
        decimals_written(&path, 0, 60_000, false);
        let dataset = Dataset::open(std::slice::from_ref(&path)).unwrap();
        let meta = dataset.files()[0].metadata.metadata();
        // `price` outgrew its dictionary: some of its pages are PLAIN.
        let price = meta.row_group(0).column(2);

        assert!(price
            .page_encoding_stats_mask()
            .unwrap()
            .is_set(Encoding::PLAIN));
        assert_eq!(
            dataset.schema().field(0).data_type(),
            &DataType::Decimal64(15, 2)
        );
        let scanned = |predicate: &str, interpret: bool| {
            let options = ScanOptions {
                interpret,
                batch_size: 4_096,
                threads: 2,
                ..ScanOptions::default()
            };
            lines_of(&dataset, predicate, options)
        };
        // (predicate, row groups read, and of those, row groups whose output columns
        // are gathered: where the conjuncts decided on keys are all and keep at most
        // half the rows)
        for (predicate, read, gathered) in [
            ("q < 24 AND d BETWEEN 0.05 AND 0.07", 2, 2),
            ("q < -5 AND small < -1.5", 2, 2),
            ("q > d AND small >= 0 AND k = 3", 2, 2),
            ("d IS NULL AND q < 0.00", 2, 2),
            ("q > -10", 2, 0),
            // Can raise an error (an overflow), so decided whole on the keys.
            ("q * d > 0.5", 2, 2),
            ("k / (k - 7) = 0 AND q < 0", 2, 2),
            // `price` has PLAIN pages: its conjunct is the reader's, at the rows `q >
            // 40` kept on the keys; its statistics prune the second row group.
            ("price < -4000 AND q > 40", 1, 0),
        ] {
            let (expected, _) = scanned(predicate, true);
            assert!(expected.len() > 100, "{predicate}: {}", expected.len());
            let (keyed, stats) = scanned(predicate, false);
            assert_eq!(keyed, expected, "{predicate}");
            let expected_stats = (2 - read, read, gathered);
            let got = (stats.pruned, stats.keyed, stats.gathered);
            assert_eq!(got, expected_stats, "{predicate}");
        }
        // Errors raised on the keys: the row group is read by the reader, which names
        // the row, as without pushdown.
        for predicate in [
            "k / (k - 3) = 0 AND q < 0",
            "q / (k - 3) > 0",
            "k / (k - 6) < 1",
        ] {
            let error = |pushdown| {
                let options = ScanOptions {
                    pushdown,
                    threads: 1,
                    ..ScanOptions::default()
                };
                let scan = Scan::new(&dataset, Some(predicate), &[0], options).unwrap();
                let run = scan.run(&|b: RecordBatch| Ok(b.num_rows()), &mut |_| Ok(true));
                run.unwrap_err().to_string()
            };
            let message = error(true);
            assert!(
                message.contains("division by zero"),
                "{predicate}: {message}"
            );
            assert_eq!(message, error(false), "{predicate}");
        }
        // The first 30,000 rows in big-endian, the others as INT64: every row group
        // keyed, each file's pages decoded by their own layout.
        let (flba, int64) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
        decimals_written(&flba, 0, 30_000, false);
        decimals_written(&int64, 30_000, 60_000, true);
        let mixed = Dataset::open(&[flba, int64]).unwrap();
        for predicate in [
            "q < 24 AND d BETWEEN 0.05 AND 0.07",
            "q > d AND small >= 0 AND k = 3",
        ] {
            let options = |interpret| ScanOptions {
                interpret,
                threads: 2,
                ..ScanOptions::default()
            };
            let (expected, _) = lines_of(&dataset, predicate, options(true));
            let (read, stats) = lines_of(&mixed, predicate, options(false));
            assert_eq!(read, expected, "{predicate}");
            assert_eq!((stats.keyed, stats.gathered), (2, 2), "{predicate}");
        }
    }

    /// A group of conjuncts on several columns after selective ones on one column is
    /// evaluated at the rows those kept only (`narrowed`): across pages, past pages
    /// with no kept row, with NULLs in its columns; the same rows as the interpreter.
    /// And it is evaluated on every row when more than one row in eight is kept, and
    /// not at all when none is (this assumes `s > 20 AND s < 21` is not folded to
    /// FALSE: the row groups are then read and counted as keyed).
    #[test]
    fn conjuncts_on_several_columns_at_the_rows_kept_read_the_same_rows() {
        let _hooks = HOOKS.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::TempDir::new().unwrap();
        let path = dir.path().join("narrowed.parquet");
        let schema = Arc::new(Schema::new(vec![
            Field::new("k", DataType::Int32, false),
            Field::new("a", DataType::Int64, true),
            Field::new("d", DataType::Date32, false),
            Field::new("t", DataType::Utf8, false),
            Field::new("s", DataType::Int32, false),
            Field::new("b", DataType::Int32, false),
            Field::new("e", DataType::Int32, false),
        ]));
        let rows = 20_000i64;
        let k = Int32Array::from_iter_values((0..rows).map(|r| (r * 7919 % 40) as i32));
        let a = Int64Array::from_iter((0..rows).map(|r| (r % 13 != 5).then_some(r * 31 % 97)));
        let d = arrow::array::Date32Array::from_iter_values(
            (0..rows).map(|r| 9_100 + (r * 104_729 % 300) as i32),
        );
        let words = [
            "MAIL", "SHIP", "AIR", "RAIL", "TRUCK", "FOB", "REG AIR", "ÉTÉ",
        ];
        let t = StringArray::from_iter_values((0..rows).map(|r| words[(r * 13 % 8) as usize]));
        let s = Int32Array::from_iter_values((0..rows).map(|r| (r * 7 % 50) as i32));
        // Blocks of 1,000 rows: `b = 2` leaves runs of 8 pages without a row.
        let b = Int32Array::from_iter_values((0..rows).map(|r| (r / 1_000 % 5) as i32));
        // 0 in 32 rows of 33, 1 to 100 in the others: `e > 0` is TRUE on nearly all
        // of its dictionary's values but keeps 3 % of the rows.
        let e = Int32Array::from_iter_values((0..rows).map(|r| {
            if r % 33 == 0 {
                (1 + r / 33 % 100) as i32
            } else {
                0
            }
        }));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(k),
                Arc::new(a),
                Arc::new(d),
                Arc::new(t),
                Arc::new(s),
                Arc::new(b),
                Arc::new(e),
            ],
        )
        .unwrap();
        // Small pages, so a row group's kept rows span several of them.
        let props = parquet::file::properties::WriterProperties::builder()
            .set_max_row_group_row_count(Some(4_096))
            .set_data_page_row_count_limit(500)
            .set_write_batch_size(100)
            .build();
        let dataset = written(&path, &batch, props);
        let scanned = |predicate: &str, interpret: bool| {
            let options = ScanOptions {
                interpret,
                batch_size: 1_000,
                threads: 2,
                ..ScanOptions::default()
            };
            lines_of(&dataset, predicate, options)
        };
        // Comparisons only: a predicate that can fail is not split.
        let group = "(a < k OR d > DATE '1995-03-01') AND (a <> k OR d < DATE '1995-04-01')";
        // Kept before the group: `t = 'ÉTÉ' AND s < 20` one row in 20, narrowed; `t =
        // 'ÉTÉ' AND b = 2` one row in 40, in one or two blocks of each row group,
        // narrowed; `t IN (…) AND s < 30` about 15 %, not, `AND s < 10` 5 %, narrowed;
        // `t <> 'MAIL'` seven in eight, not; `s > 20 AND s < 21` none, the group is
        // not reached. Conjuncts on one of the group's own columns are also decided
        // on its keys first when that makes the rows kept few: `d < DATE
        // '1994-12-10'` keeps 3 %, narrowed; `d > DATE '1990-01-01' AND k >= 0` every
        // row, not (skipped on their dictionaries' answers); `t IN (…) AND s < 30`
        // with `d < DATE '1995-01-10'` (13 %) 2 %, narrowed; with `t = 'ÉTÉ' AND s <
        // 20`, few already, `d` is not read first. The decision rests on the share of
        // the dictionary's values: `e > 0` (with `e <> k`, `e` is one of the group's
        // columns) would keep 3 % of the rows, but is TRUE on 100 of its 101 values,
        // so it is not decided first, and the group is not narrowed.
        for (keep, narrowed) in [
            ("d < DATE '1994-12-10'", 5),
            ("d > DATE '1990-01-01' AND k >= 0", 0),
            (
                "t IN ('MAIL', 'AIR') AND s < 30 AND d < DATE '1995-01-10'",
                5,
            ),
            ("t = 'ÉTÉ' AND s < 20 AND d < DATE '1995-01-10'", 5),
            ("e > 0 AND e <> k", 0),
            ("t = 'ÉTÉ' AND s < 20", 5),
            ("t = 'ÉTÉ' AND b = 2", 5),
            ("t IN ('MAIL', 'AIR') AND s < 30", 0),
            ("t IN ('MAIL', 'AIR') AND s < 10", 5),
            ("t <> 'MAIL'", 0),
            ("s > 20 AND s < 21", 0),
        ] {
            let predicate = format!("{keep} AND {group}");
            let (expected, _) = scanned(&predicate, true);
            let (keyed, stats) = scanned(&predicate, false);
            assert_eq!((stats.keyed, stats.narrowed), (5, narrowed), "{predicate}");
            assert_eq!(keyed, expected, "{predicate}");
            if narrowed > 0 {
                assert!(!expected.is_empty(), "{predicate}");
            }
        }
    }
}
