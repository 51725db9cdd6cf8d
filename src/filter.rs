//! [`Filter`]: a compiled predicate that selects rows of record batches.

use std::sync::Arc;

use arrow::array::{AsArray, BooleanArray, RecordBatch};
use arrow::buffer::{BooleanBuffer, Buffer};
use arrow::datatypes::{DataType, Schema, SchemaRef};
use broadhead_codegen::OutSlot;

use crate::cache::KernelCache;
use crate::decode::Decoding;
use crate::dictionary::{single_dictionary_column, PerValue};
use crate::error::{EvalError, Result};
use crate::explain::{interpreted_nodes, Backend, Explanation, Stages};
use crate::expr::Expr;
use crate::interpret::{interpret, true_rows};
use crate::kernel::{check_schema, Jit, TierState};
use crate::prepare::{predicate_backend, Prepared, Purpose};
use crate::selection::{SelectionMode, SelectionVector};
use crate::tier::{CompilePolicy, Counters, TierStats};
use crate::typed::TypedExpr;

/// A predicate compiled for one schema. Cheap to clone, `Send + Sync`: evaluate it
/// from as many threads as you like.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Float64Array, RecordBatch};
/// use arrow::datatypes::{DataType, Field, Schema};
/// use broadhead::Filter;
///
/// let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
/// let batch = RecordBatch::try_new(
///     schema.clone(),
///     vec![Arc::new(Float64Array::from(vec![1.0, 3.0, 5.0, 7.0]))],
/// )?;
/// let filter = Filter::new(&schema, "x > 2.0 AND x < 6.0")?;
/// let selected = filter.evaluate(&batch)?;
/// assert_eq!(selected.iter().collect::<Vec<_>>(), vec![1, 2]);
/// # Ok::<(), broadhead::Error>(())
/// ```
#[derive(Clone)]
pub struct Filter {
    inner: Arc<Inner>,
}

struct Inner {
    /// How batches of the prepared schema become the batches the back ends read
    /// (dictionaries decoded).
    input: Decoding,
    prepared: Prepared,
    backend: Result<Jit, String>,
    /// For a predicate over one dictionary column: evaluated per dictionary value.
    per_value: Option<PerValue>,
    policy: CompilePolicy,
    /// Batches evaluated by each tier.
    counters: Counters,
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter")
            .field("expr", &self.inner.prepared.expr().to_string())
            .field("jit", &self.is_jit())
            .finish()
    }
}

impl Filter {
    /// Parses, binds, optimizes and compiles a SQL predicate.
    ///
    /// Filters made this way are remembered by their text and schema (the last 64,
    /// which keep their kernels alive: about 2 MB at most):
    /// asking again for the same predicate on the same schema returns a clone at once.
    /// A predicate that differs only in its literals reuses the compiled kernel
    /// (see [`KernelCache`]).
    pub fn new(schema: &Schema, sql: &str) -> Result<Filter> {
        let key = statement_key(sql, schema);
        if let Some(f) = STATEMENTS.get(key, sql, schema) {
            return Ok(f);
        }
        let prepared = Prepared::parse(sql, schema, Purpose::Predicate)?;
        let filter = Self::from_prepared(&prepared, KernelCache::global())?;
        STATEMENTS.put(key, filter.clone());
        Ok(filter)
    }

    /// Compiles a predicate built with the [`Expr`] API.
    pub fn from_expr(schema: &Schema, expr: &Expr) -> Result<Filter> {
        Self::with_cache(schema, expr, KernelCache::global())
    }

    /// Compiles a predicate using `cache` instead of the process-wide cache.
    pub fn with_cache(schema: &Schema, expr: &Expr, cache: &Arc<KernelCache>) -> Result<Filter> {
        Self::from_prepared(&Prepared::new(expr, schema, Purpose::Predicate)?, cache)
    }

    /// Compiles a predicate already bound and optimized (for its schema,
    /// [`Prepared::schema`]), with kernels from `cache`. An expression prepared as a
    /// [`Purpose::Projection`] is taken as it is when it is BOOLEAN, else bound again
    /// as a predicate (which reads an untyped NULL as BOOLEAN, or says why it cannot).
    pub fn from_prepared(prepared: &Prepared, cache: &Arc<KernelCache>) -> Result<Filter> {
        Self::with_policy(prepared, cache, CompilePolicy::Eager)
    }

    /// Like [`Filter::from_prepared`], compiling when `policy` says: with
    /// [`CompilePolicy::Tiered`] the filter is usable at once (the interpreter
    /// evaluates batches until the kernel, compiled in the background, arrives).
    pub fn with_policy(
        prepared: &Prepared,
        cache: &Arc<KernelCache>,
        policy: CompilePolicy,
    ) -> Result<Filter> {
        let rebound;
        let prepared = if prepared.purpose() == Purpose::Predicate
            || prepared.typed().data_type == DataType::Boolean
        {
            prepared
        } else {
            rebound = prepared.as_predicate()?;
            &rebound
        };
        let schema = prepared.schema();
        let columns = prepared.columns();
        let input = Decoding::new(schema, &prepared.extended_columns());
        let backend = predicate_backend(prepared.optimized(), &input.schema, cache, policy)?;
        let per_value = single_dictionary_column(schema, &columns).map(PerValue::new);
        Ok(Filter {
            inner: Arc::new(Inner {
                input,
                prepared: prepared.clone(),
                backend,
                per_value,
                policy,
                counters: Counters::default(),
            }),
        })
    }

    /// The schema batches must have.
    pub fn schema(&self) -> &SchemaRef {
        self.inner.prepared.schema()
    }

    /// The predicate as parsed (or built).
    pub fn expr(&self) -> &Expr {
        self.inner.prepared.expr()
    }

    /// The bound and optimized predicate (for pruning with statistics, say).
    pub fn typed_expr(&self) -> &TypedExpr {
        self.inner.prepared.optimized()
    }

    /// The predicate as prepared: its text, trees and schema.
    pub fn prepared(&self) -> &Prepared {
        &self.inner.prepared
    }

    /// How long compiling the kernel took, by phase (zero when interpreted).
    pub fn compile_timings(&self) -> broadhead_codegen::CompileTimings {
        match &self.inner.backend {
            Ok(jit) => jit.compile_timings(),
            Err(_) => Default::default(),
        }
    }

    /// Whether the predicate runs as compiled code (else: the interpreter, for
    /// constructs the JIT does not support that can raise an error, or after a
    /// `Lazy`/`Tiered` compile failed). A compiled predicate may still have
    /// subtrees the interpreter computes for the kernel; [`Filter::explain`] lists
    /// them. With [`CompilePolicy::Tiered`] this is true while the kernel compiles
    /// (the interpreter evaluates batches meanwhile: see [`Filter::tier_stats`]).
    pub fn is_jit(&self) -> bool {
        self.inner
            .backend
            .as_ref()
            .is_ok_and(|jit| jit.tier_state().failed.is_none())
    }

    /// When the kernel is compiled.
    pub fn policy(&self) -> CompilePolicy {
        self.inner.policy
    }

    /// How many batches each tier evaluated, and when the kernel arrived.
    pub fn tier_stats(&self) -> TierStats {
        tier_stats(
            self.inner.policy,
            &self.inner.counters,
            self.inner.backend.as_ref().map_err(String::as_str),
        )
    }

    /// Blocks until no compile of this expression is under way in the background:
    /// its kernel (with [`CompilePolicy::Tiered`]) and the upgrades of its hot
    /// kernels ([`Upgrade`](crate::Upgrade), under every policy) have arrived or
    /// failed. Returns whether the next batch runs on a kernel. Returns at once
    /// when nothing compiles.
    pub fn wait_for_kernel(&self) -> bool {
        self.inner
            .backend
            .as_ref()
            .is_ok_and(|jit| jit.wait_for_kernel())
    }

    /// The rows where the predicate is TRUE, as `u32` indices.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<SelectionVector> {
        self.evaluate_with_mode(batch, SelectionMode::UInt32)
    }

    /// The rows where the predicate is TRUE, with indices of the given width.
    pub fn evaluate_with_mode(
        &self,
        batch: &RecordBatch,
        mode: SelectionMode,
    ) -> Result<SelectionVector> {
        let mut out = SelectionVector::new(mode);
        self.evaluate_into(batch, &mut out)?;
        Ok(out)
    }

    /// Like [`Filter::evaluate`], writing into `out` (of any width) and reusing its
    /// allocation: the way to filter a stream of batches without allocating.
    pub fn evaluate_into(&self, batch: &RecordBatch, out: &mut SelectionVector) -> Result<()> {
        check_schema(self.schema(), batch)?;
        let rows = batch.num_rows();
        let mode = out.mode();
        if rows > mode.max_rows() {
            return Err(EvalError::SelectionTooSmall {
                rows,
                mode: mode.name(),
                max: mode.max_rows(),
            }
            .into());
        }
        out.reset(rows);
        if let Some(selected) = self.per_dictionary_value(batch)? {
            out.extend_from_bits(&selected);
            return Ok(());
        }
        let batch = &*self.inner.input.convert(batch)?;
        if let Ok(jit) = &self.inner.backend {
            if jit.kernel_tier() {
                let (ptr, width) = out.raw_parts();
                let outs = [OutSlot {
                    values: ptr,
                    validity: std::ptr::null_mut(),
                }];
                let ran = jit.run_batch(batch, &outs, width);
                if let Some(ran) = self.counted(ran) {
                    // SAFETY: the kernel wrote exactly `n` ≤ `rows` indices into the
                    // reserved capacity (`reset` reserved `rows`).
                    unsafe { out.set_len(ran?) };
                    return Ok(());
                }
            }
        }
        self.inner.counters.count(false);
        let result = interpret(self.typed_expr(), batch)?;
        out.extend_from_bits(&true_rows(result.as_boolean()));
        Ok(())
    }

    /// The result as a mask: TRUE for selected rows, FALSE otherwise (never NULL).
    pub fn evaluate_mask(&self, batch: &RecordBatch) -> Result<BooleanArray> {
        check_schema(self.schema(), batch)?;
        if let Some(selected) = self.per_dictionary_value(batch)? {
            return Ok(BooleanArray::new(selected, None));
        }
        let batch = &*self.inner.input.convert(batch)?;
        Ok(BooleanArray::new(self.true_bits(batch)?, None))
    }

    /// What the kernel tier did with a batch, counted when it ran (or failed):
    /// `None` when it had no kernel for it.
    fn counted(&self, ran: Result<Option<usize>>) -> Option<Result<usize>> {
        let ran = ran.transpose();
        if ran.is_some() {
            self.inner.counters.count(true);
        }
        ran
    }

    /// The rows of `batch` (of the bound schema) where the predicate is TRUE.
    fn true_bits(&self, batch: &RecordBatch) -> Result<BooleanBuffer> {
        let rows = batch.num_rows();
        if let Ok(jit) = &self.inner.backend {
            if jit.kernel_tier() {
                let mut words = vec![0u64; rows.div_ceil(64)];
                let outs = [OutSlot {
                    values: words.as_mut_ptr() as *mut u8,
                    validity: std::ptr::null_mut(),
                }];
                if let Some(ran) = self.counted(jit.run_batch(batch, &outs, 0)) {
                    ran?;
                    return Ok(BooleanBuffer::new(Buffer::from_vec(words), 0, rows));
                }
            }
        }
        self.inner.counters.count(false);
        Ok(true_rows(interpret(self.typed_expr(), batch)?.as_boolean()))
    }

    /// For a predicate over one dictionary column whose array in `batch` (of the
    /// caller's schema) is a dictionary: the rows where it is TRUE, from its value
    /// on each dictionary value (see [`crate::dictionary`]); `None` otherwise.
    #[inline]
    fn per_dictionary_value(&self, batch: &RecordBatch) -> Result<Option<BooleanBuffer>> {
        match &self.inner.per_value {
            Some(per_value) => self.evaluate_per_value(per_value, batch),
            None => Ok(None),
        }
    }

    /// [`Filter::per_dictionary_value`] for a predicate over one dictionary column.
    #[inline(never)]
    fn evaluate_per_value(
        &self,
        per_value: &PerValue,
        batch: &RecordBatch,
    ) -> Result<Option<BooleanBuffer>> {
        per_value.true_rows(batch, &self.inner.input.schema, |values| {
            self.true_bits(values)
        })
    }

    /// The rows of `batch` where the predicate is TRUE.
    pub fn filter_record_batch(&self, batch: &RecordBatch) -> Result<RecordBatch> {
        let mask = self.evaluate_mask(batch)?;
        Ok(arrow::compute::filter_record_batch(batch, &mask)?)
    }

    /// Every stage's view of the predicate: parsed, typed, optimized, and (for the
    /// JIT) the LLVM IR before and after optimization and the native assembly, of a
    /// kernel compiled for this call with the pipeline of the kernel running now
    /// (`O3` once it was upgraded, which takes tens of milliseconds).
    pub fn explain(&self) -> Result<Explanation> {
        let inner = &self.inner;
        let stats = self.tier_stats();
        let (backend, interpreted) = match (&inner.backend, &stats.interpreted_because) {
            (Ok(jit), None) => (
                Backend::Jit(jit.explain(&inner.input.schema)?),
                interpreted_nodes(jit, &inner.input.schema),
            ),
            (_, reason) => (
                Backend::Interpreted(reason.clone().unwrap_or_default()),
                vec![],
            ),
        };
        Ok(Explanation {
            stages: vec![Stages::of(&inner.prepared)],
            backend,
            interpreted,
            tiers: stats,
        })
    }
}

/// The stats of an expression evaluated by `backend` (its kernel, or why the
/// interpreter evaluates it), with its batch counts.
pub(crate) fn tier_stats(
    policy: CompilePolicy,
    counters: &Counters,
    backend: std::result::Result<&Jit, &str>,
) -> TierStats {
    let (interpreted_batches, compiled_batches) = counters.get();
    let state = match backend {
        Ok(jit) => jit.tier_state(),
        Err(_) => TierState::default(),
    };
    let interpreted_because = match backend {
        Ok(_) => state
            .failed
            .map(|e| format!("compiling the kernel failed: {e}")),
        Err(reason) => Some(reason.to_string()),
    };
    let kernel_after = state.arrived.filter(|_| interpreted_because.is_none());
    let kernel_from_disk_cache =
        kernel_after.is_some() && backend.is_ok_and(|jit| jit.compile_timings().from_disk_cache);
    TierStats {
        policy,
        interpreted_batches,
        compiled_batches,
        kernel_after,
        kernel_from_disk_cache,
        compiling: state.compiling,
        interpreted_because,
        pipeline: state.pipeline.filter(|_| kernel_after.is_some()),
        optimized_after: state.upgraded,
        optimize_failed: state.upgrade_failed,
    }
}

fn statement_key(sql: &str, schema: &Schema) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    sql.hash(&mut h);
    schema.hash(&mut h);
    h.finish()
}

/// The filters `Filter::new` built last, by a hash of their text and schema.
struct Statements {
    entries: std::sync::Mutex<lru::LruCache<u64, Filter>>,
}

/// At most this many filters (and so their kernels, about 26 KB each: see
/// docs/performance-notes.md) are kept alive by the statement cache, beyond the
/// kernel cache's own bound.
const STATEMENT_CAPACITY: std::num::NonZeroUsize = match std::num::NonZeroUsize::new(64) {
    Some(n) => n,
    None => unreachable!(),
};

static STATEMENTS: std::sync::LazyLock<Statements> = std::sync::LazyLock::new(|| Statements {
    entries: std::sync::Mutex::new(lru::LruCache::new(STATEMENT_CAPACITY)),
});

impl Statements {
    fn get(&self, key: u64, sql: &str, schema: &Schema) -> Option<Filter> {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let filter = map.get(&key)?;
        // The hash is only a hint: the text and schema must match.
        if filter.inner.prepared.source() != Some(sql) || filter.schema().as_ref() != schema {
            return None;
        }
        Some(filter.clone())
    }

    fn put(&self, key: u64, filter: Filter) {
        let mut map = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        map.put(key, filter);
    }
}
