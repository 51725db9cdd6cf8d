//! [`Projector`]: compiled expressions that compute new columns from record batches.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};

use crate::cache::KernelCache;
use crate::decode::Decoding;
use crate::error::{EvalError, Result};
use crate::explain::{interpreted_nodes, Backend, Explanation, Stages};
use crate::expr::Expr;
use crate::functions::row::Arena;
use crate::interpret::interpret;
use crate::kernel::{check_schema, Columns, Jit};
use crate::layout::is_string;
use crate::outputs::KernelOutputs;
use crate::prepare::{projection_backend, Prepared, Purpose};
use crate::selection::SelectionVector;
use crate::tier::{CompilePolicy, Counters, TierStats};
use crate::typed::{TypedExpr, TypedKind};

/// Expressions compiled for one schema, evaluated together in one pass (one fused
/// kernel for all the outputs the JIT supports). Cheap to clone, `Send + Sync`.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Array, AsArray, Int64Array, RecordBatch};
/// use arrow::datatypes::{DataType, Field, Int64Type, Schema};
/// use broadhead::Projector;
///
/// let schema = Arc::new(Schema::new(vec![
///     Field::new("a", DataType::Int64, false),
///     Field::new("b", DataType::Int64, true),
/// ]));
/// let batch = RecordBatch::try_new(schema.clone(), vec![
///     Arc::new(Int64Array::from(vec![10, 60, 70])),
///     Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])),
/// ])?;
/// let projector = Projector::new(&schema, &["a * b + 1", "CASE WHEN a > 50 THEN a * 2 ELSE b END"])?;
/// let out = projector.evaluate(&batch)?;
/// let sums: Vec<_> = out[0].as_primitive::<Int64Type>().iter().collect();
/// assert_eq!(sums, vec![Some(11), None, Some(211)]);
/// let cases: Vec<_> = out[1].as_primitive::<Int64Type>().iter().collect();
/// assert_eq!(cases, vec![Some(1), Some(120), Some(140)]);
/// # Ok::<(), broadhead::Error>(())
/// ```
#[derive(Clone)]
pub struct Projector {
    inner: Arc<Inner>,
}

struct Output {
    prepared: Prepared,
    /// Position among the kernel's outputs, if compiled.
    kernel_output: Option<usize>,
    /// The column it returns unchanged, when it is a `LargeUtf8` or `Utf8View`
    /// column (which keeps its type; the kernel's string outputs are `Utf8`).
    column: Option<usize>,
}

struct Inner {
    schema: SchemaRef,
    /// How batches of `schema` become the batches the back ends read (dictionaries
    /// decoded).
    decoding: Decoding,
    outputs: Vec<Output>,
    /// The kernel's outputs, in its order.
    kernel_outputs: KernelOutputs,
    /// Whether output `i` is the kernel's output `i`, for every output.
    kernel_only: bool,
    jit: Option<Jit>,
    /// Why some outputs are interpreted (for explain).
    interpreted_reason: Option<String>,
    policy: CompilePolicy,
    /// Batches evaluated by each tier.
    counters: Counters,
    /// The bytes of computed strings the last kernel call made per 1,024 rows: the
    /// room the next call's arena starts with, so that its strings are one run the
    /// output can take without a copy.
    arena_per_1024_rows: AtomicUsize,
}

impl std::fmt::Debug for Projector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let exprs: Vec<String> = self
            .inner
            .outputs
            .iter()
            .map(|o| o.prepared.expr().to_string())
            .collect();
        f.debug_struct("Projector").field("exprs", &exprs).finish()
    }
}

impl Projector {
    /// Parses, binds, optimizes and compiles SQL expressions.
    pub fn new(schema: &Schema, sql: &[&str]) -> Result<Projector> {
        let prepared = sql
            .iter()
            .map(|s| Prepared::parse(s, schema, Purpose::Projection))
            .collect::<Result<Vec<_>>>()?;
        Self::build(
            schema,
            prepared,
            KernelCache::global(),
            CompilePolicy::Eager,
        )
    }

    /// Compiles expressions built with the [`Expr`] API.
    pub fn from_exprs(schema: &Schema, exprs: &[Expr]) -> Result<Projector> {
        Self::with_cache(schema, exprs, KernelCache::global())
    }

    /// Compiles expressions using `cache` instead of the process-wide cache.
    pub fn with_cache(
        schema: &Schema,
        exprs: &[Expr],
        cache: &Arc<KernelCache>,
    ) -> Result<Projector> {
        let prepared = exprs
            .iter()
            .map(|e| Prepared::new(e, schema, Purpose::Projection))
            .collect::<Result<Vec<_>>>()?;
        Self::build(schema, prepared, cache, CompilePolicy::Eager)
    }

    /// Compiles expressions already bound and optimized for `schema` (each
    /// [`Prepared::schema`] must be `schema`), with kernels from `cache`.
    pub fn from_prepared(
        schema: &Schema,
        prepared: &[Prepared],
        cache: &Arc<KernelCache>,
    ) -> Result<Projector> {
        Self::with_policy(schema, prepared, cache, CompilePolicy::Eager)
    }

    /// Like [`Projector::from_prepared`], compiling when `policy` says: with
    /// [`CompilePolicy::Tiered`] the projector is usable at once (the interpreter
    /// evaluates batches until the kernel, compiled in the background, arrives).
    pub fn with_policy(
        schema: &Schema,
        prepared: &[Prepared],
        cache: &Arc<KernelCache>,
        policy: CompilePolicy,
    ) -> Result<Projector> {
        for p in prepared {
            p.check_schema(schema)?;
        }
        Self::build(schema, prepared.to_vec(), cache, policy)
    }

    fn build(
        schema: &Schema,
        prepared: Vec<Prepared>,
        cache: &Arc<KernelCache>,
        policy: CompilePolicy,
    ) -> Result<Projector> {
        let mut read: Vec<usize> = prepared.iter().flat_map(|p| p.extended_columns()).collect();
        read.sort_unstable();
        read.dedup();
        let decoding = Decoding::new(schema, &read);
        let caller_schema = Arc::new(schema.clone());
        let schema = decoding.schema.clone();
        let schema = schema.as_ref();
        let columns: Vec<Option<usize>> = prepared
            .iter()
            .map(|p| match p.optimized().kind {
                TypedKind::Column(c)
                    if is_string(schema.field(c).data_type())
                        && *schema.field(c).data_type() != DataType::Utf8 =>
                {
                    Some(c)
                }
                _ => None,
            })
            .collect();
        let evaluated: Vec<&TypedExpr> = prepared
            .iter()
            .zip(&columns)
            .filter(|(_, c)| c.is_none())
            .map(|(p, _)| p.optimized())
            .collect();
        let backend = projection_backend(&evaluated, schema, cache, policy)?;
        let mut kernel_outputs = backend.kernel_outputs.into_iter();
        let outputs = prepared
            .into_iter()
            .zip(columns)
            .map(|(prepared, column)| Output {
                prepared,
                kernel_output: match column {
                    Some(_) => None,
                    None => kernel_outputs.next().flatten(),
                },
                column,
            })
            .collect::<Vec<Output>>();
        let kernel_outputs = KernelOutputs::new(
            outputs
                .iter()
                .filter(|o| o.kernel_output.is_some())
                .map(|o| o.prepared.optimized().data_type.clone()),
        );
        let kernel_only = outputs
            .iter()
            .enumerate()
            .all(|(i, o)| o.column.is_none() && o.kernel_output == Some(i));
        Ok(Projector {
            inner: Arc::new(Inner {
                schema: caller_schema,
                decoding,
                outputs,
                kernel_outputs,
                kernel_only,
                jit: backend.jit,
                interpreted_reason: backend.reason,
                policy,
                counters: Counters::default(),
                arena_per_1024_rows: AtomicUsize::new(0),
            }),
        })
    }

    /// The schema batches must have.
    pub fn schema(&self) -> &SchemaRef {
        &self.inner.schema
    }

    /// The output fields: named by the expression's SQL text, typed, nullable.
    pub fn output_fields(&self) -> Vec<Field> {
        self.inner
            .outputs
            .iter()
            .map(|o| {
                let p = &o.prepared;
                let name = p
                    .source()
                    .map_or_else(|| p.expr().to_string(), str::to_string);
                let ty = match o.column {
                    Some(c) => self.inner.decoding.schema.field(c).data_type(),
                    None => &p.optimized().data_type,
                };
                Field::new(name, ty.clone(), true)
            })
            .collect()
    }

    /// How long compiling the kernel took, by phase (zero when nothing is compiled).
    pub fn compile_timings(&self) -> broadhead_codegen::CompileTimings {
        self.inner
            .jit
            .as_ref()
            .map(|j| j.compile_timings())
            .unwrap_or_default()
    }

    /// Whether output `i` runs as compiled code, or is a `LargeUtf8`/`Utf8View`
    /// column returned as it is (else: the interpreter). A compiled output may still
    /// have subtrees the interpreter computes for the kernel; [`Projector::explain`]
    /// lists them.
    pub fn is_jit(&self, i: usize) -> bool {
        let compiles = self
            .inner
            .jit
            .as_ref()
            .is_some_and(|jit| jit.tier_state().failed.is_none());
        self.inner
            .outputs
            .get(i)
            .is_some_and(|o| (o.kernel_output.is_some() && compiles) || o.column.is_some())
    }

    /// One array per expression, each of `batch.num_rows()` values.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
        check_schema(&self.inner.schema, batch)?;
        let batch = &*self.inner.decoding.convert(batch)?;
        let compiled = match &self.inner.jit {
            Some(jit) if jit.kernel_tier() => jit
                .with_inputs(batch, |columns| {
                    self.run_kernel(jit, columns, batch.num_rows(), |row, limit| {
                        jit.describe_row(batch, row, row, limit)
                    })
                })
                .transpose(),
            _ => None,
        };
        self.inner.counters.count(compiled.is_some());
        self.assemble(
            batch,
            compiled,
            |c| Ok(batch.column(c).clone()),
            |e| interpret(e, batch),
        )
    }

    /// The expressions over the selected rows only, compacted: output row `i` is the
    /// value for row `selection[i]` of `batch`. Errors name the row of `batch`.
    pub fn evaluate_selected(
        &self,
        batch: &RecordBatch,
        selection: &SelectionVector,
    ) -> Result<Vec<ArrayRef>> {
        check_schema(&self.inner.schema, batch)?;
        let batch = &*self.inner.decoding.convert(batch)?;
        let rows = batch.num_rows();
        if let Some(bad) = selection.iter().find(|&i| i >= rows) {
            return Err(EvalError::Other(format!(
                "selection index {bad} is out of range for a batch of {rows} rows"
            ))
            .into());
        }
        let indices = selection.to_array();
        let compiled = match &self.inner.jit {
            Some(jit) if jit.kernel_tier() => {
                // Interpreted subtrees cannot fail, so computing them over every row
                // and taking the selected ones raises no error of an unselected row.
                let columns = jit
                    .inputs(batch)?
                    .iter()
                    .map(|c| arrow::compute::take(c, &indices, None))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                let describe = |k: usize, limit| {
                    let row = selection.get(k).unwrap_or(k);
                    jit.describe_row(batch, row, row, limit)
                };
                self.run_kernel(jit, Columns::Arrays(&columns), selection.len(), describe)
                    .transpose()
            }
            _ => None,
        };
        self.inner.counters.count(compiled.is_some());
        let needs_interpreter = self
            .inner
            .outputs
            .iter()
            .any(|o| o.column.is_none() && (o.kernel_output.is_none() || compiled.is_none()));
        let taken = if needs_interpreter {
            Some(arrow::compute::take_record_batch(batch, &indices)?)
        } else {
            None
        };
        let take_column = |c: usize| Ok(arrow::compute::take(batch.column(c), &indices, None)?);
        self.assemble(batch, compiled, take_column, |e| {
            let taken = taken.as_ref().expect("taken for interpreted outputs");
            interpret(e, taken).map_err(|err| match err {
                crate::Error::Eval(ev) => remap_row(ev, selection).into(),
                other => other,
            })
        })
    }

    /// The outputs in order, from the kernel's results (`None`: the kernel did not
    /// run, the interpreter computes its outputs too) and the interpreter's.
    ///
    /// When evaluation fails, the error is that of the lowest failing row of `batch`
    /// across all outputs, compiled or interpreted (on a tie, the earlier output's),
    /// as docs/semantics.md says; the kernel alone only knows its own outputs.
    fn assemble(
        &self,
        batch: &RecordBatch,
        compiled: Option<Result<Vec<ArrayRef>>>,
        column: impl Fn(usize) -> Result<ArrayRef>,
        interpret_one: impl Fn(&TypedExpr) -> Result<ArrayRef>,
    ) -> Result<Vec<ArrayRef>> {
        let kernel_ran = compiled.is_some();
        let (compiled, mut failed) = match compiled {
            // The kernel computed every output, in order.
            Some(Ok(c)) if self.inner.kernel_only => return Ok(c),
            Some(Ok(c)) => (c, None),
            Some(Err(e)) => (Vec::new(), Some(e)),
            None => (Vec::new(), None),
        };
        let mut arrays = Vec::with_capacity(self.inner.outputs.len());
        let mut first: Option<crate::Error> = None;
        for o in &self.inner.outputs {
            if let Some(c) = o.column {
                arrays.push(column(c)?);
                continue;
            }
            match o.kernel_output.filter(|_| kernel_ran) {
                Some(k) => arrays.extend(compiled.get(k).cloned()),
                None => match interpret_one(o.prepared.optimized()) {
                    Ok(a) => arrays.push(a),
                    Err(e) => first = Some(self.earlier(batch, first, e)),
                },
            }
        }
        if let Some(e) = failed.take() {
            first = Some(self.earlier(batch, first, e));
        }
        match first {
            Some(e) => Err(e),
            None => Ok(arrays),
        }
    }

    /// Of two errors, the one of the lower row of `batch`; on a tie, the one of the
    /// first output that fails on that row.
    fn earlier(
        &self,
        batch: &RecordBatch,
        a: Option<crate::Error>,
        b: crate::Error,
    ) -> crate::Error {
        let Some(a) = a else { return b };
        match (error_row(&a), error_row(&b)) {
            (Some(ra), Some(rb)) if ra == rb => self.first_error_at(batch, ra).unwrap_or(a),
            (Some(ra), Some(rb)) if rb < ra => b,
            (Some(_), None) => b,
            _ => a,
        }
    }

    /// The error of the first output that fails on row `row` of `batch`.
    fn first_error_at(&self, batch: &RecordBatch, row: usize) -> Option<crate::Error> {
        let one = batch.slice(row, 1);
        self.inner
            .outputs
            .iter()
            .find_map(|o| match interpret(o.prepared.optimized(), &one) {
                Err(crate::Error::Eval(e)) => Some(e.shifted(row).into()),
                _ => None,
            })
    }

    fn run_kernel(
        &self,
        jit: &Jit,
        columns: Columns<'_>,
        rows: usize,
        describe: impl Fn(usize, Option<String>) -> crate::Error,
    ) -> Result<Option<Vec<ArrayRef>>> {
        // Computed strings live here until the outputs are made: room for as many
        // bytes per row as the last call made, and an eighth more.
        let per_1024 = self.inner.arena_per_1024_rows.load(Ordering::Relaxed);
        let room = per_1024.saturating_mul(rows) / 1024;
        let mut arena = Arena::with_room(room.saturating_add(room / 8));
        let arrays = self
            .inner
            .kernel_outputs
            .evaluate(rows, &mut arena, |outs, arena| {
                jit.run(columns, rows, outs, 0, arena, describe)
            });
        if let Some(per_1024) = arena.used().saturating_mul(1024).checked_div(rows) {
            self.inner
                .arena_per_1024_rows
                .store(per_1024, Ordering::Relaxed);
        }
        arrays
    }

    /// Every stage's view of the expressions, and the compiled kernel.
    pub fn explain(&self) -> Result<Explanation> {
        let inner = &self.inner;
        let stages = inner
            .outputs
            .iter()
            .map(|o| Stages::of(&o.prepared))
            .collect();
        let tiers = self.tier_stats();
        let failed = inner.jit.as_ref().and(tiers.interpreted_because.clone());
        let (backend, interpreted) = match (&inner.jit, failed, &inner.interpreted_reason) {
            (Some(jit), None, _) => (
                Backend::Jit(jit.explain(&inner.decoding.schema)?),
                interpreted_nodes(jit, &inner.decoding.schema),
            ),
            (_, Some(failed), _) => (Backend::Interpreted(failed), vec![]),
            (None, None, reason) => (
                Backend::Interpreted(reason.clone().unwrap_or_default()),
                vec![],
            ),
        };
        Ok(Explanation {
            stages,
            backend,
            interpreted,
            tiers,
        })
    }

    /// When the kernel is compiled.
    pub fn policy(&self) -> CompilePolicy {
        self.inner.policy
    }

    /// How many batches each tier evaluated, and when the kernel arrived. Outputs
    /// that are interpreted whatever the tier count with the tier of the batch;
    /// when no output compiles, every batch is interpreted, and
    /// `interpreted_because` says why.
    pub fn tier_stats(&self) -> TierStats {
        let inner = &self.inner;
        let reason = inner.interpreted_reason.as_deref().unwrap_or("");
        crate::filter::tier_stats(
            inner.policy,
            &inner.counters,
            inner.jit.as_ref().ok_or(reason),
        )
    }

    /// Blocks until no compile of this expression is under way in the background:
    /// its kernel (with [`CompilePolicy::Tiered`]) and the upgrades of its hot
    /// kernels ([`Upgrade`](crate::Upgrade), under every policy) have arrived or
    /// failed. Returns whether the next batch runs on a kernel. Returns at once
    /// when nothing compiles.
    pub fn wait_for_kernel(&self) -> bool {
        self.inner
            .jit
            .as_ref()
            .is_some_and(|jit| jit.wait_for_kernel())
    }
}

/// The row an evaluation error names, if it names one.
fn error_row(e: &crate::Error) -> Option<usize> {
    match e {
        crate::Error::Eval(e) => e.row(),
        _ => None,
    }
}

fn remap_row(e: EvalError, selection: &SelectionVector) -> EvalError {
    e.map_row(|k| selection.get(k).unwrap_or(k))
}
