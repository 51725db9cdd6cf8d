//! Running compiled kernels on Arrow data: binding a batch's buffers to the kernel's
//! input slots, choosing the kernel variant for the batch's nulls, and turning a
//! failing row into a precise error.
//!
//! A kernel is specialized on which inputs have nulls: a column whose `null_count`
//! is 0 gets no validity code at all. The variant for the schema's nullability is
//! compiled up front; others are compiled the first time a batch needs them, up to
//! [`MAX_SPECIALIZED`] patterns. Beyond that every other pattern runs the variant
//! that reads validity for every input (compiled once), with an all-valid bitmap
//! for columns that have none, so data whose nulls move between columns costs at
//! most `MAX_SPECIALIZED + 1` compilations per expression.
//!
//! A variant compiled with the cache's first pipeline counts the rows it evaluates;
//! past its [`Upgrade`]'s threshold it is compiled again with the upgrade's pipeline
//! on a background thread, and calls run that kernel once it has arrived.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Schema};
use broadhead_codegen::{compile, CompileOptions, Explain, Kernel, OutSlot, Pipeline, Slot};

use crate::cache::{Compiled, KernelCache, Upgrade};
use crate::tier::CompilePolicy;

use crate::error::{Error, EvalError, Result};
use crate::functions::row::Arena;
use crate::inputs::{Extra, Inputs};
use crate::interpret::interpret;
use crate::lower::{Interpreted, Lowered};
use crate::typed::TypedExpr;

/// How many null patterns get a kernel of their own before later patterns share the
/// all-nullable variant.
pub(crate) const MAX_SPECIALIZED: usize = 2;

/// One or more expressions compiled into one kernel, with its variants.
pub(crate) struct Jit {
    lowered: Lowered,
    /// How calls read the arrays of the input slots.
    inputs: Inputs,
    exprs: Vec<TypedExpr>,
    cache: Arc<KernelCache>,
    policy: CompilePolicy,
    /// What background compiles deliver to (they hold it weakly: an expression
    /// dropped before its kernel arrives drops the kernel).
    shared: Arc<Shared>,
}

/// The variants, and the state of their compilation.
struct Shared {
    variants: Variants,
    /// When the expression was bound (before its first compile).
    bound_at: Instant,
    /// How long after `bound_at` the first variant was ready.
    arrived: OnceLock<Duration>,
    /// Why compiling failed (`Lazy` and `Tiered`: the interpreter evaluates every
    /// batch from then on).
    failed: OnceLock<String>,
    /// The null patterns being compiled in the background.
    pending: Mutex<Vec<Box<[bool]>>>,
    /// Upgrades being compiled in the background.
    upgrading: AtomicUsize,
    /// How long after `bound_at` the first upgraded kernel was ready.
    upgraded: OnceLock<Duration>,
    /// Why an upgrade failed (the first kernel goes on running).
    upgrade_failed: OnceLock<String>,
}

impl Shared {
    /// Keeps a compiled variant (or records why it could not be compiled).
    fn deliver(&self, pattern: Box<[bool]>, kernel: std::result::Result<Compiled, String>) {
        match kernel {
            Ok(compiled) => {
                // Every slot taken (threads raced): batches use the variants kept.
                let _ = self.variants.insert(Variant::new(pattern, compiled));
                self.arrived.get_or_init(|| self.bound_at.elapsed());
            }
            Err(reason) => {
                let _ = self.failed.set(reason);
            }
        }
    }

    /// Stores the upgraded kernel of the variant for `pattern` (or records why it
    /// could not be compiled), and counts the upgrade as done.
    fn deliver_upgrade(&self, pattern: &[bool], kernel: std::result::Result<Arc<Kernel>, String>) {
        match kernel {
            Ok(kernel) => {
                if let Some(u) = self.variants.find(pattern).and_then(|v| v.upgrade.as_ref()) {
                    let _ = u.kernel.set(kernel);
                    self.upgraded.get_or_init(|| self.bound_at.elapsed());
                }
            }
            Err(reason) => {
                let _ = self.upgrade_failed.set(reason);
            }
        }
        self.upgrading.fetch_sub(1, Ordering::Relaxed);
    }

    fn pending(&self) -> MutexGuard<'_, Vec<Box<[bool]>>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A kernel and the null pattern it was compiled for (which inputs it reads
/// validity for), and its upgrade.
pub(crate) struct Variant {
    pattern: Box<[bool]>,
    kernel: Arc<Kernel>,
    /// The pipeline that compiled `kernel`.
    pipeline: Pipeline,
    /// `None` when `kernel` is final.
    upgrade: Option<Upgrading>,
}

/// A variant's way to its upgraded kernel.
struct Upgrading {
    upgrade: Upgrade,
    /// Rows the first kernel evaluated, counted until the upgrade starts.
    rows: AtomicU64,
    started: AtomicBool,
    /// The upgraded kernel, once it has arrived.
    kernel: OnceLock<Arc<Kernel>>,
}

impl Variant {
    fn new(pattern: Box<[bool]>, compiled: Compiled) -> Variant {
        Variant {
            pattern,
            kernel: compiled.kernel,
            pipeline: compiled.pipeline,
            upgrade: compiled.upgrade.map(|upgrade| Upgrading {
                upgrade,
                rows: AtomicU64::new(0),
                started: AtomicBool::new(false),
                kernel: OnceLock::new(),
            }),
        }
    }

    /// The kernel calls run: the upgraded one once it has arrived.
    fn current(&self) -> &Kernel {
        match self.upgrade.as_ref().and_then(|u| u.kernel.get()) {
            Some(k) => k,
            None => &self.kernel,
        }
    }

    /// The pipeline of [`Variant::current`].
    fn current_pipeline(&self) -> Pipeline {
        match &self.upgrade {
            Some(u) if u.kernel.get().is_some() => u.upgrade.pipeline,
            _ => self.pipeline,
        }
    }

    /// Counts `rows` evaluated by the first kernel: true when the variant is hot
    /// enough for its upgrade and it has not started (then [`Variant::claim`]).
    fn count(&self, rows: usize) -> bool {
        let Some(u) = &self.upgrade else {
            return false;
        };
        // A load, not a write, once started: calls from many threads do not
        // contend for the counter's cache line.
        if u.started.load(Ordering::Relaxed) {
            return false;
        }
        let total = u.rows.fetch_add(rows as u64, Ordering::Relaxed) + rows as u64;
        total >= u.upgrade.after_rows
    }

    /// Whether this call starts the upgrade (true for one call only).
    fn claim(&self) -> bool {
        self.upgrade
            .as_ref()
            .is_some_and(|u| !u.started.swap(true, Ordering::Relaxed))
    }
}

/// The state of an expression's compiles.
#[derive(Default)]
pub(crate) struct TierState {
    /// How long after binding the first kernel arrived.
    pub(crate) arrived: Option<Duration>,
    /// Whether a kernel or an upgrade is being compiled in the background.
    pub(crate) compiling: bool,
    /// Why compiling failed (the interpreter evaluates every batch).
    pub(crate) failed: Option<String>,
    /// The pipeline of the kernels calls run ([`Jit::pipeline_in_use`]).
    pub(crate) pipeline: Option<Pipeline>,
    /// How long after binding the first upgraded kernel arrived.
    pub(crate) upgraded: Option<Duration>,
    /// Why an upgrade failed.
    pub(crate) upgrade_failed: Option<String>,
}

/// The variants of a kernel: at most [`MAX_SPECIALIZED`] patterns of their own and
/// the all-nullable one. Slots are filled once and never emptied, so finding a
/// variant takes no lock and hands out a reference.
struct Variants {
    slots: [OnceLock<Variant>; MAX_SPECIALIZED + 1],
}

impl Variants {
    fn new() -> Variants {
        Variants {
            slots: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    fn find(&self, pattern: &[bool]) -> Option<&Variant> {
        // Compared flag by flag: the patterns are a few flags long, and slices'
        // `==` calls `memcmp` (about 4 ns of every call).
        let same = |v: &Variant| {
            v.pattern.len() == pattern.len() && v.pattern.iter().zip(pattern).all(|(a, b)| a == b)
        };
        self.iter().find(|v| same(v))
    }

    /// A variant that reads validity for every input with nulls in `pattern`
    /// (and maybe more: those get all-valid bitmaps).
    fn covering(&self, pattern: &[bool]) -> Option<&Variant> {
        self.iter()
            .find(|v| v.pattern.iter().zip(pattern).all(|(&v, &p)| v || !p))
    }

    fn iter(&self) -> impl Iterator<Item = &Variant> {
        self.slots.iter().map_while(OnceLock::get)
    }

    /// Stores `variant` (or finds the one another thread stored for its pattern
    /// meanwhile); gives it back when every slot holds another pattern.
    fn insert(&self, variant: Variant) -> std::result::Result<&Variant, Variant> {
        let pattern = variant.pattern.clone();
        let mut pending = Some(variant);
        for slot in &self.slots {
            let stored = slot.get_or_init(|| pending.take().expect("stored at most once"));
            if pending.is_none() || stored.pattern == pattern {
                return Ok(stored);
            }
        }
        match pending {
            Some(v) => Err(v),
            None => unreachable!("returned when stored"),
        }
    }
}

/// Why [`Jit::bind`] could not bind a batch's arrays to the input slots.
#[derive(Clone, Copy, Debug)]
enum Unbound {
    /// Not one array per input slot.
    Count,
    /// No array for an input slot.
    Missing,
    /// The array of this slot does not have the slot's physical type or layout.
    Type(usize),
    /// An array's length is not the batch's.
    Length,
}

/// The variant a batch runs: one the kernel keeps, or (rarely: threads raced to
/// fill the last slots) one compiled for this call, boxed so that a call's result
/// is the size of an error, not of a whole `Variant` copied on every call.
pub(crate) enum Chosen<'a> {
    Stored(&'a Variant),
    Spare(Box<Variant>),
}

impl std::ops::Deref for Chosen<'_> {
    type Target = Variant;
    fn deref(&self) -> &Variant {
        match self {
            Chosen::Stored(v) => v,
            Chosen::Spare(v) => v,
        }
    }
}

/// Compiles `program` for a `Lazy` or `Tiered` expression (through the cache, after
/// its test hooks: see [`crate::tier`]).
fn compile_deferred(
    cache: &KernelCache,
    program: &broadhead_codegen::Program,
) -> std::result::Result<Compiled, broadhead_codegen::CodegenError> {
    if let Some(message) = cache.background.admit() {
        return Err(broadhead_codegen::CodegenError(message));
    }
    cache.get_or_compile(program)
}

/// Runs `work` on a thread named `name`, counted as a background compile through
/// `cache` ([`crate::background::InFlight`]) from before the thread starts until it ends,
/// by unwinding too (or until the closure is dropped, when no thread starts). What
/// `work` holds (kernels, the expression's state) and the thread's reference to the
/// cache are dropped before the thread counts itself out: dropping them may free
/// kernels, through LLVM, which must happen before `exit` stops waiting for
/// background compiles.
fn spawn_compile(
    cache: &Arc<KernelCache>,
    name: &str,
    work: impl FnOnce(&KernelCache) + Send + 'static,
) -> std::io::Result<()> {
    let in_flight = crate::background::InFlight::start(cache);
    let cache = cache.clone();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            // Declared first, dropped last.
            let _in_flight = in_flight;
            let cache = cache;
            crate::background::mark_compile_thread();
            work(&cache);
        })
        .map(drop)
}

/// Up to this many values live on the stack during a call (input slots, null
/// patterns); more take a heap allocation.
const INLINE: usize = 16;

/// Runs `f` on a scratch slice of `n` copies of `fill`, on the stack when small.
pub(crate) fn with_scratch<T: Copy, R>(n: usize, fill: T, f: impl FnOnce(&mut [T]) -> R) -> R {
    if n <= INLINE {
        let mut buf = [fill; INLINE];
        f(&mut buf[..n])
    } else {
        f(&mut vec![fill; n])
    }
}

/// The arrays of a kernel's input slots: the batch's columns themselves when every
/// slot is a column read as it is, else arrays computed for the call.
#[derive(Clone, Copy)]
pub(crate) enum Columns<'a> {
    /// Slot `i` reads column `Lowered::columns[i]` of the batch.
    Batch(&'a RecordBatch),
    /// Slot `i` reads array `i`.
    Arrays(&'a [ArrayRef]),
}

impl Jit {
    /// The kernel of `exprs` (all over `schema`), lowered as `lowered`, compiled
    /// as `policy` says: now (`Eager`: a compile error is returned), on first use
    /// (`Lazy`) or in the background (`Tiered`).
    pub(crate) fn new(
        exprs: Vec<TypedExpr>,
        lowered: Lowered,
        schema: &Schema,
        cache: &Arc<KernelCache>,
        policy: CompilePolicy,
    ) -> Result<Jit> {
        let mut types: Vec<Option<&DataType>> = lowered
            .columns
            .iter()
            .map(|c| c.map(|c| schema.field(c).data_type()))
            .collect();
        for i in &lowered.interpreted {
            types[i.slot] = Some(&i.expr.data_type);
        }
        let inputs = Inputs::new(&lowered.program.inputs, types.into_iter());
        let jit = Jit {
            lowered,
            inputs,
            exprs,
            cache: cache.clone(),
            policy,
            shared: Arc::new(Shared {
                variants: Variants::new(),
                bound_at: Instant::now(),
                arrived: OnceLock::new(),
                failed: OnceLock::new(),
                pending: Mutex::new(Vec::new()),
                upgrading: AtomicUsize::new(0),
                upgraded: OnceLock::new(),
                upgrade_failed: OnceLock::new(),
            }),
        };
        let nullable = jit.nullable(schema);
        match policy {
            CompilePolicy::Eager => {
                jit.kernel(&nullable)?;
            }
            CompilePolicy::Lazy => {}
            CompilePolicy::Tiered => jit.compile_in_background(nullable.into_boxed_slice()),
        }
        Ok(jit)
    }

    /// Which input slots may hold nulls for batches of `schema` (an interpreted
    /// subtree may).
    fn nullable(&self, schema: &Schema) -> Vec<bool> {
        self.lowered
            .columns
            .iter()
            .map(|c| c.is_none_or(|c| schema.field(c).is_nullable()))
            .collect()
    }

    fn program_for(&self, nullable: &[bool]) -> broadhead_codegen::Program {
        let mut program = self.lowered.program.clone();
        for (spec, &n) in program.inputs.iter_mut().zip(nullable) {
            spec.nullable = n;
        }
        program
    }

    /// The kernel for inputs with nulls where `nullable` says, with the null pattern
    /// it was compiled for: `nullable` itself, or (once [`MAX_SPECIALIZED`] patterns
    /// have their own) the all-nullable pattern. Compiled now if need be, except
    /// with `Tiered`: then the variant is compiled in the background and a variant
    /// kept already that covers `nullable` runs meanwhile, if there is one.
    /// `None`: no kernel for these inputs (yet, or for good after a failure); the
    /// interpreter evaluates the batch.
    ///
    /// Inline: after the first calls the variant is kept already, and found without
    /// the result going through memory; the rest is [`Jit::kernel_not_kept`].
    #[inline]
    fn kernel(&self, nullable: &[bool]) -> Result<Option<Chosen<'_>>> {
        match self.shared.variants.find(nullable) {
            Some(v) => Ok(Some(Chosen::Stored(v))),
            None => self.kernel_not_kept(nullable),
        }
    }

    /// [`Jit::kernel`] when no variant for `nullable` is kept.
    #[inline(never)]
    fn kernel_not_kept(&self, nullable: &[bool]) -> Result<Option<Chosen<'_>>> {
        let variants = &self.shared.variants;
        if self.shared.failed.get().is_some() {
            return Ok(None);
        }
        let all = vec![true; nullable.len()];
        let specialized = variants.iter().filter(|v| *v.pattern != *all).count();
        let pattern = if specialized < MAX_SPECIALIZED {
            nullable.to_vec()
        } else if let Some(v) = variants.find(&all) {
            return Ok(Some(Chosen::Stored(v)));
        } else {
            all
        };
        if self.policy == CompilePolicy::Tiered {
            self.compile_in_background(pattern.into_boxed_slice());
            return Ok(variants.covering(nullable).map(Chosen::Stored));
        }
        let kernel = match self.policy {
            CompilePolicy::Eager => self.cache.get_or_compile(&self.program_for(&pattern)),
            _ => compile_deferred(&self.cache, &self.program_for(&pattern)),
        };
        let kernel = match kernel {
            Ok(k) => k,
            Err(e) if self.policy == CompilePolicy::Eager => {
                return Err(Error::Compile(e.to_string()))
            }
            Err(e) => {
                self.shared.deliver(pattern.into(), Err(e.to_string()));
                return Ok(None);
            }
        };
        self.shared
            .arrived
            .get_or_init(|| self.shared.bound_at.elapsed());
        let variant = Variant::new(pattern.into_boxed_slice(), kernel);
        Ok(Some(match variants.insert(variant) {
            Ok(v) => Chosen::Stored(v),
            Err(v) => Chosen::Spare(Box::new(v)),
        }))
    }

    /// Starts compiling the variant for `pattern` on a thread of its own, unless it
    /// is compiled or being compiled already. The thread holds the expression's
    /// state weakly: when the expression is dropped first, the kernel is dropped
    /// (the cache may keep it) and the thread ends when the compile does.
    fn compile_in_background(&self, pattern: Box<[bool]>) {
        let mut pending = self.shared.pending();
        if pending.contains(&pattern) || self.shared.variants.find(&pattern).is_some() {
            return;
        }
        pending.push(pattern.clone());
        drop(pending);
        let program = self.program_for(&pattern);
        let shared = Arc::downgrade(&self.shared);
        let spawned = spawn_compile(&self.cache, "broadhead-compile", {
            let pattern = pattern.clone();
            move |cache| {
                let kernel = compile_deferred(cache, &program).map_err(|e| e.to_string());
                if let Some(shared) = Weak::upgrade(&shared) {
                    shared.pending().retain(|p| *p != pattern);
                    shared.deliver(pattern, kernel);
                }
            }
        });
        if let Err(e) = spawned {
            self.shared.pending().retain(|p| *p != pattern);
            let reason = format!("cannot start a compile thread: {e}");
            self.shared.deliver(pattern, Err(reason));
            // The closure's guard woke the waiters before `pending` changed.
            self.cache.background.notify();
        }
    }

    /// Compiles `variant` again with its upgrade's pipeline on a thread of its own
    /// (counted in `upgrading` by the caller); calls run the new kernel once it is
    /// stored in the variant. The thread holds the expression's state weakly, as
    /// [`Jit::compile_in_background`]'s does. A failure leaves the first kernel
    /// running, with the reason kept for the stats.
    fn start_upgrade(&self, variant: &Variant) {
        let Some(upgrade) = variant.upgrade.as_ref().map(|u| u.upgrade) else {
            return;
        };
        let program = self.program_for(&variant.pattern);
        let pattern = variant.pattern.clone();
        let shared = Arc::downgrade(&self.shared);
        let spawned = spawn_compile(&self.cache, "broadhead-optimize", move |cache| {
            let kernel = match cache.background.admit() {
                Some(message) => Err(message),
                None => cache
                    .get_or_compile_with(&program, upgrade.pipeline)
                    .map_err(|e| e.to_string()),
            };
            if let Some(shared) = Weak::upgrade(&shared) {
                shared.deliver_upgrade(&pattern, kernel);
            }
        });
        if let Err(e) = spawned {
            let reason = format!("cannot start a compile thread: {e}");
            self.shared.deliver_upgrade(&variant.pattern, Err(reason));
            // The closure's guard woke the waiters before `upgrading` went down.
            self.cache.background.notify();
        }
    }

    /// Whether the kernel tier may evaluate a batch now: nothing failed, and (with
    /// `Tiered`) a kernel has arrived. With `Eager` and `Lazy` the kernel is
    /// compiled when a batch needs it.
    pub(crate) fn kernel_tier(&self) -> bool {
        self.shared.failed.get().is_none()
            && (self.policy != CompilePolicy::Tiered
                || self.shared.variants.iter().next().is_some())
    }

    /// Blocks until no background compile of this expression is pending (its
    /// kernel with `Tiered`, an upgrade with any policy): true when the kernel tier
    /// will evaluate the next batch of the schema's nullability.
    pub(crate) fn wait_for_kernel(&self) -> bool {
        // A compile thread empties its pattern from `pending` (an upgrade counts
        // itself out of `upgrading`) before it reports that it finished, which
        // wakes this.
        self.cache.background.wait_until(|| {
            self.shared.pending().is_empty() && self.shared.upgrading.load(Ordering::Relaxed) == 0
        });
        self.kernel_tier()
    }

    /// The pipeline of the kernels calls run: the most optimizing among the
    /// variants' (so an upgrade's once any variant runs one, or was found upgraded
    /// in the cache).
    fn pipeline_in_use(&self) -> Option<Pipeline> {
        let rank = |p: &Pipeline| match p {
            Pipeline::Quick => 0,
            Pipeline::Fast => 1,
            Pipeline::O3 => 2,
        };
        self.shared
            .variants
            .iter()
            .map(Variant::current_pipeline)
            .max_by_key(rank)
    }

    /// The state of the expression's compiles, for its [`crate::TierStats`].
    pub(crate) fn tier_state(&self) -> TierState {
        TierState {
            arrived: self.shared.arrived.get().copied(),
            compiling: !self.shared.pending().is_empty()
                || self.shared.upgrading.load(Ordering::Relaxed) > 0,
            failed: self.shared.failed.get().cloned(),
            pipeline: self.pipeline_in_use(),
            upgraded: self.shared.upgraded.get().copied(),
            upgrade_failed: self.shared.upgrade_failed.get().cloned(),
        }
    }

    /// Compile timings of the first variant compiled.
    pub(crate) fn compile_timings(&self) -> broadhead_codegen::CompileTimings {
        self.shared
            .variants
            .iter()
            .next()
            .map(|v| v.kernel.timings)
            .unwrap_or_default()
    }

    /// The IR and assembly of the variant for `schema`'s nullability, compiled with
    /// the pipeline of the kernel running now (the first pipeline before any has).
    pub(crate) fn explain(&self, schema: &Schema) -> Result<Explain> {
        let nullable = self.nullable(schema);
        let pipeline = match self.shared.variants.find(&nullable) {
            Some(v) => v.current_pipeline(),
            None => self.cache.pipeline(),
        };
        let kernel = compile(
            &self.program_for(&nullable),
            CompileOptions {
                explain: true,
                pipeline,
            },
        )
        .map_err(|e| Error::Compile(e.to_string()))?;
        Ok(kernel.explain.unwrap_or_default())
    }

    /// The subtrees the interpreter evaluates for the kernel.
    pub(crate) fn interpreted(&self) -> &[Interpreted] {
        &self.lowered.interpreted
    }

    /// The arrays of the kernel's input slots for `batch` (of the schema it was
    /// compiled for): its columns, and the values of the interpreted subtrees.
    pub(crate) fn inputs(&self, batch: &RecordBatch) -> Result<Vec<ArrayRef>> {
        let mut arrays: Vec<Option<ArrayRef>> = self
            .lowered
            .columns
            .iter()
            .map(|c| c.map(|c| batch.column(c).clone()))
            .collect();
        for i in &self.lowered.interpreted {
            arrays[i.slot] = Some(interpret(&i.expr, batch)?);
        }
        arrays
            .into_iter()
            .map(|a| a.ok_or_else(|| mismatch(&DataType::Null)))
            .collect()
    }

    /// The array of input slot `slot`.
    fn column<'a>(&self, columns: Columns<'a>, slot: usize) -> Option<&'a ArrayRef> {
        match columns {
            Columns::Arrays(arrays) => arrays.get(slot),
            Columns::Batch(batch) => self.lowered.columns[slot].map(|c| batch.column(c)),
        }
    }

    /// Reads the input arrays into `slots` (one per input), each with its validity
    /// bitmap when it has nulls (`has_nulls`), for a batch of `rows` rows: on `Ok`
    /// every slot is written. Words the slots point to that are not the arrays' own
    /// go into `extra`. The error is a word, returned in registers; [`Jit::unbound`]
    /// makes it an [`Error`] out of the hot path.
    fn bind(
        &self,
        columns: Columns<'_>,
        rows: usize,
        slots: &mut [MaybeUninit<Slot>],
        has_nulls: &mut [bool],
        extra: &mut Extra,
    ) -> std::result::Result<(), Unbound> {
        let specs = &self.lowered.program.inputs;
        if specs.len() != slots.len() || has_nulls.len() != slots.len() {
            return Err(Unbound::Count);
        }
        for (i, ((slot, has), spec)) in slots.iter_mut().zip(&mut *has_nulls).zip(specs).enumerate()
        {
            let array = self.column(columns, i).ok_or(Unbound::Missing)?;
            let read = self
                .inputs
                .read(i, spec, array.as_ref(), extra)
                .ok_or(Unbound::Type(i))?;
            if read.len != rows {
                return Err(Unbound::Length);
            }
            let nulls = read.nulls.filter(|n| n.null_count() > 0);
            *has = nulls.is_some();
            slot.write(read.slot(nulls.map_or(std::ptr::null(), |n| extra.words(n.inner()))));
        }
        Ok(())
    }

    /// The error for arrays [`Jit::bind`] could not bind.
    #[cold]
    #[inline(never)]
    fn unbound(&self, columns: Columns<'_>, why: Unbound) -> Error {
        let message = match why {
            Unbound::Count => "column count differs".to_string(),
            Unbound::Length => "column length differs".to_string(),
            Unbound::Missing => return mismatch(&DataType::Null),
            Unbound::Type(slot) => match self.column(columns, slot) {
                Some(array) => return mismatch(array.data_type()),
                None => return mismatch(&DataType::Null),
            },
        };
        EvalError::SchemaMismatch(message).into()
    }

    /// Runs the kernel over `columns` (the arrays of the input slots, all of `rows`
    /// rows and of the compiled types); `outs` must be sized as
    /// [`Kernel::run`] requires for `mode`. Strings the kernel computes live in
    /// `arena` (string outputs point into it and into the columns). On a failing
    /// row, `describe(row, limit)` gives the precise error (`limit`: why, when a
    /// call failed the row because the batch's strings passed their limit, see
    /// `Arena::limit_error`). `Ok(None)`: no kernel for these
    /// inputs (see [`Jit::kernel`]); nothing ran.
    ///
    /// A call allocates nothing when the inputs are columns read as they are (no
    /// interpreted subtree), at most [`INLINE`] of them, with
    /// word-aligned bitmaps, and a variant for their null pattern is compiled.
    pub(crate) fn run(
        &self,
        columns: Columns<'_>,
        rows: usize,
        outs: &[OutSlot],
        mode: u64,
        arena: &mut Arena,
        describe: impl Fn(usize, Option<String>) -> Error,
    ) -> Result<Option<usize>> {
        let inputs = self.lowered.columns.len();
        if let Columns::Arrays(arrays) = columns {
            if arrays.len() != inputs {
                return Err(EvalError::SchemaMismatch("column count differs".into()).into());
            }
        }
        if inputs <= INLINE {
            // On the stack, the slots left uninitialized: `bind` writes each.
            let (mut slots, mut has_nulls) = ([MaybeUninit::uninit(); INLINE], [false; INLINE]);
            let (slots, has_nulls) = (&mut slots[..inputs], &mut has_nulls[..inputs]);
            self.run_bound(columns, rows, slots, has_nulls, outs, mode, arena, describe)
        } else {
            let (mut slots, mut has_nulls) =
                (vec![MaybeUninit::uninit(); inputs], vec![false; inputs]);
            self.run_bound(
                columns,
                rows,
                &mut slots,
                &mut has_nulls,
                outs,
                mode,
                arena,
                describe,
            )
        }
    }

    /// [`Jit::run`] with `slots` and `has_nulls` to bind the inputs into (one of each
    /// per input).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn run_bound(
        &self,
        columns: Columns<'_>,
        rows: usize,
        slots: &mut [MaybeUninit<Slot>],
        has_nulls: &mut [bool],
        outs: &[OutSlot],
        mode: u64,
        arena: &mut Arena,
        describe: impl Fn(usize, Option<String>) -> Error,
    ) -> Result<Option<usize>> {
        let mut extra = Extra::default();
        if let Err(why) = self.bind(columns, rows, slots, has_nulls, &mut extra) {
            return Err(self.unbound(columns, why));
        }
        // SAFETY: `bind` returned `Ok`, so it wrote every slot, and `MaybeUninit<Slot>`
        // has `Slot`'s layout.
        let slots = unsafe { &mut *(slots as *mut [MaybeUninit<Slot>] as *mut [Slot]) };
        let Some(variant) = self.kernel(has_nulls)? else {
            return Ok(None);
        };
        // The variant reads validity for every input with nulls (and maybe more:
        // those get all-valid bitmaps).
        for ((slot, &nullable), &has) in slots.iter_mut().zip(&variant.pattern).zip(&*has_nulls) {
            debug_assert!(nullable || !has, "the variant covers the batch's nulls");
            if nullable && !has {
                slot.validity = extra.all_valid(rows);
            }
        }
        // SAFETY: `slots` has one slot per program input, read from arrays of `rows`
        // rows of the slots' physical types (and layouts): values pointers come from
        // the arrays' own buffers (offset-adjusted), bitmaps are whole words from row
        // 0 (realigned copies in `extra` otherwise, alive until after the call), and
        // a validity pointer (the array's, or all-valid words for `rows` rows) is
        // present exactly for the inputs the variant treats as nullable, which
        // include every input with nulls. `self.lowered.params` holds one value per
        // parameter, with helper states owned by `self.lowered.states`. `outs` is
        // sized by the caller. `arena` is the `Arena` the row-function helper expects
        // as `ctx`, borrowed mutably for the call.
        let ctx = arena as *mut Arena as *mut u8;
        let result = unsafe {
            variant
                .current()
                .run(slots, &self.lowered.params, rows, outs, mode, ctx)
        };
        // A spare variant (threads raced to fill the last slot) is not kept, so
        // it is not upgraded.
        if let Chosen::Stored(v) = variant {
            if v.count(rows) {
                // Counted before it is claimed, so that `wait_for_kernel` on another
                // thread never sees the upgrade started and not counted.
                self.shared.upgrading.fetch_add(1, Ordering::Relaxed);
                if v.claim() {
                    self.start_upgrade(v);
                } else {
                    // Another call claimed it; its thread wakes the waiters.
                    self.shared.upgrading.fetch_sub(1, Ordering::Relaxed);
                }
            }
        }
        // A row that failed because a call's strings passed the batch's limit is
        // reported as such: the interpreter cannot see that in the row alone.
        result
            .map(Some)
            .map_err(|row| describe(row, arena.limit_error(row)))
    }

    /// Calls `f` with the arrays of the kernel's input slots for `batch` (of the
    /// schema it was compiled for): the batch's columns themselves when the slots
    /// read them as they are, else the columns converted and the interpreted
    /// subtrees' values ([`Jit::inputs`]).
    pub(crate) fn with_inputs<R>(
        &self,
        batch: &RecordBatch,
        f: impl FnOnce(Columns<'_>) -> Result<R>,
    ) -> Result<R> {
        if self.lowered.interpreted.is_empty() {
            f(Columns::Batch(batch))
        } else {
            f(Columns::Arrays(&self.inputs(batch)?))
        }
    }

    /// Runs the kernel over `batch` (whose schema the caller checked).
    pub(crate) fn run_batch(
        &self,
        batch: &RecordBatch,
        outs: &[OutSlot],
        mode: u64,
    ) -> Result<Option<usize>> {
        let mut arena = Arena::default();
        self.with_inputs(batch, |columns| {
            self.run(
                columns,
                batch.num_rows(),
                outs,
                mode,
                &mut arena,
                |row, limit| self.describe_row(batch, row, row, limit),
            )
        })
    }

    /// The error the interpreter gives for row `row` of `batch` (used when the kernel
    /// reports that the row failed), with the row number of the batch; or, when a
    /// call failed the row because the batch's strings passed the limit, that
    /// (`limit`, the message).
    pub(crate) fn describe_row(
        &self,
        batch: &RecordBatch,
        row: usize,
        reported_row: usize,
        limit: Option<String>,
    ) -> Error {
        if let Some(message) = limit {
            return EvalError::Function {
                message,
                row: reported_row,
            }
            .into();
        }
        let one = batch.slice(row, 1);
        // A decimal column's value beyond its precision (the kernel checks them).
        for c in self.lowered.columns.iter().flatten() {
            if let Err(Error::Eval(err)) = check_precision(one.column(*c)) {
                return err.shifted(reported_row).into();
            }
        }
        for e in &self.exprs {
            if let Err(Error::Eval(err)) = interpret(e, &one) {
                return err.shifted(reported_row).into();
            }
        }
        EvalError::Other(format!("evaluation failed at row {reported_row}")).into()
    }
}

/// Checks the values of a decimal column (`Decimal32`, `Decimal64` or `Decimal128`)
/// against its precision (other columns pass). Arrow does not enforce a decimal's
/// precision, and the kernel reads a DECIMAL(p <= 18) as `i64`s (or `i32`s) and
/// bounds products by the digits: a valid value
/// beyond the precision is an error naming the row, not a silent truncation.
/// Garbage under a NULL is ignored. The kernel checks the values itself; this names
/// the error of a row it reports (it is not meant for long arrays).
fn check_precision(c: &ArrayRef) -> Result<()> {
    use arrow::datatypes::Decimal128Type;
    let widened = crate::decode::widened_decimal(c);
    let c = widened.as_ref().unwrap_or(c);
    let DataType::Decimal128(p, s) = c.data_type() else {
        return Ok(());
    };
    let wide = c.as_primitive::<Decimal128Type>();
    let limit = crate::decimal::pow10::<i128>(u32::from(*p)).unwrap_or(i128::MAX);
    match wide
        .iter()
        .position(|v| v.is_some_and(|v| v <= -limit || v >= limit))
    {
        Some(row) => Err(EvalError::Function {
            message: format!(
                "the value {} of a {} column does not fit its precision",
                crate::decimal::format(wide.value(row), *s),
                crate::types::sql_type_name(c.data_type())
            ),
            row,
        }
        .into()),
        None => Ok(()),
    }
}

fn mismatch(t: &DataType) -> Error {
    EvalError::SchemaMismatch(format!("unexpected column layout for {t}")).into()
}

/// Checks that `batch` has the schema an expression was compiled for: the same
/// column names and types (nullability and metadata may differ).
#[inline]
pub(crate) fn check_schema(expected: &Schema, batch: &RecordBatch) -> Result<()> {
    // The fields of a schema cloned from the one the expression was bound to are
    // the same allocation: nothing to compare.
    if std::ptr::eq(
        batch.schema_ref().fields().as_ref(),
        expected.fields().as_ref(),
    ) {
        return Ok(());
    }
    compare_schemas(expected, batch.schema_ref())
}

/// [`check_schema`] for schemas whose fields are not the same allocation.
#[inline(never)]
fn compare_schemas(expected: &Schema, actual: &Schema) -> Result<()> {
    if actual.fields().len() != expected.fields().len() {
        return Err(EvalError::SchemaMismatch(format!(
            "expected {} columns, the batch has {}",
            expected.fields().len(),
            actual.fields().len()
        ))
        .into());
    }
    for (e, a) in expected.fields().iter().zip(actual.fields()) {
        if e.name() != a.name() || e.data_type() != a.data_type() {
            return Err(EvalError::SchemaMismatch(format!(
                "expected column '{}' of type {}, found '{}' of type {}",
                e.name(),
                e.data_type(),
                a.name(),
                a.data_type()
            ))
            .into());
        }
    }
    Ok(())
}
