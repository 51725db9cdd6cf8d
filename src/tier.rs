//! Tiered execution: when a [`Filter`](crate::Filter) or
//! [`Projector`](crate::Projector) compiles its kernel ([`CompilePolicy`]), which tier
//! evaluated its batches and when the kernel arrived ([`TierStats`]).
//!
//! With [`CompilePolicy::Tiered`] an expression is usable the moment it is bound: the
//! kernel compiles on a background thread, batches evaluated meanwhile go through the
//! interpreter, and the first batch after the kernel is ready runs on it. Each batch
//! is evaluated once, by one tier; both give the same results (the interpreter is the
//! oracle the JIT is tested against). A compile failure leaves the interpreter in
//! charge for good, with the reason in [`TierStats::interpreted_because`] and
//! `explain`.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::array::{Float64Array, RecordBatch};
//! use arrow::datatypes::{DataType, Field, Schema};
//! use broadhead::prepare::{Prepared, Purpose};
//! use broadhead::{CompilePolicy, Filter, KernelCache};
//!
//! let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
//! let batch = RecordBatch::try_new(
//!     schema.clone(),
//!     vec![Arc::new(Float64Array::from(vec![1.0, 3.0, 5.0, 7.0]))],
//! )?;
//! let prepared = Prepared::parse("x > 2.0", &schema, Purpose::Predicate)?;
//! let filter = Filter::with_policy(&prepared, KernelCache::global(), CompilePolicy::Tiered)?;
//! // Usable at once, whichever tier runs this batch.
//! assert_eq!(filter.evaluate(&batch)?.iter().collect::<Vec<_>>(), vec![1, 2, 3]);
//! filter.wait_for_kernel();
//! assert_eq!(filter.evaluate(&batch)?.len(), 3);
//! let stats = filter.tier_stats();
//! assert_eq!(stats.interpreted_batches + stats.compiled_batches, 2);
//! assert_eq!(stats.compiled_batches, 1, "the batch after the kernel arrived is compiled");
//! assert!(stats.kernel_after.is_some());
//! # Ok::<(), broadhead::Error>(())
//! ```

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::cache::KernelCache;
use crate::Pipeline;

/// When a [`Filter`](crate::Filter) or [`Projector`](crate::Projector) compiles its
/// kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CompilePolicy {
    /// While it is built: building returns once the kernel is compiled (a compile
    /// failure is the builder's error). The library's default.
    #[default]
    Eager,
    /// On the first batch that needs it: building does not compile; the first
    /// evaluation compiles the kernel and waits for it. A compile failure makes the
    /// interpreter evaluate every batch, for good.
    Lazy,
    /// On a background thread, started while it is built: batches evaluated before
    /// the kernel is ready go through the interpreter, later ones run on the kernel.
    /// Nothing waits for the compiler. A compile failure makes the interpreter
    /// evaluate every batch, for good. The `broadhead` command line uses it.
    Tiered,
}

impl CompilePolicy {
    /// The policy's name, in lower case (`eager`, `lazy`, `tiered`).
    pub fn name(self) -> &'static str {
        match self {
            CompilePolicy::Eager => "eager",
            CompilePolicy::Lazy => "lazy",
            CompilePolicy::Tiered => "tiered",
        }
    }
}

/// Which tier evaluated the batches of a [`Filter`](crate::Filter) or
/// [`Projector`](crate::Projector) so far, and when its kernel arrived. Clones share
/// the counts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TierStats {
    /// When the kernel is compiled.
    pub policy: CompilePolicy,
    /// Batches the interpreter evaluated (all of them when nothing compiles).
    pub interpreted_batches: u64,
    /// Batches the compiled kernel evaluated.
    pub compiled_batches: u64,
    /// How long after binding the first kernel was ready to run: its compile time
    /// (or a cache hit's) for `Eager`; `None` before it arrives, and when the
    /// interpreter evaluates everything.
    pub kernel_after: Option<Duration>,
    /// Whether that kernel was loaded from the on-disk kernel cache
    /// ([`DiskCache`](crate::DiskCache)) instead of compiled (the first kernel: an
    /// upgrade may have replaced it since, see `pipeline`).
    pub kernel_from_disk_cache: bool,
    /// Whether a kernel, or an upgrade of one, is being compiled in the
    /// background now.
    pub compiling: bool,
    /// Why the interpreter evaluates every batch, when it does: what the JIT does
    /// not support, or why compiling failed.
    pub interpreted_because: Option<String>,
    /// The pipeline of the kernel running now (`None` before one has arrived):
    /// the cache's first pipeline, or its [`Upgrade`](crate::Upgrade)'s once one of
    /// the expression's kernels (one per null pattern) was upgraded or found
    /// upgraded in the cache.
    pub pipeline: Option<Pipeline>,
    /// How long after binding the upgraded kernel took over, when this
    /// expression's kernel was upgraded.
    pub optimized_after: Option<Duration>,
    /// Why the upgrade failed, when it did (the first kernel goes on running).
    pub optimize_failed: Option<String>,
}

impl fmt::Display for TierStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} batch{} interpreted, {} compiled ({})",
            self.interpreted_batches,
            if self.interpreted_batches == 1 {
                ""
            } else {
                "es"
            },
            self.compiled_batches,
            self.policy.name()
        )?;
        match (&self.kernel_after, &self.interpreted_because) {
            (_, Some(reason)) => write!(f, "; interpreted: {reason}"),
            (Some(t), None) => write!(
                f,
                "; kernel {} {:.1} ms after binding",
                if self.kernel_from_disk_cache {
                    "loaded from the disk cache"
                } else {
                    "ready"
                },
                millis(*t)
            ),
            (None, None) if self.compiling => write!(f, "; kernel compiling"),
            (None, None) => write!(f, "; kernel not compiled yet"),
        }?;
        if let Some(p) = self.pipeline {
            write!(f, " ({p:?})")?;
        }
        if let Some(t) = self.optimized_after {
            write!(f, "; optimized {:.1} ms after binding", millis(t))?;
        } else if let Some(reason) = &self.optimize_failed {
            write!(f, "; optimizing failed: {reason}")?;
        }
        Ok(())
    }
}

fn millis(t: Duration) -> f64 {
    t.as_secs_f64() * 1e3
}

/// How many batches each tier evaluated (shared by clones), exactly, from any
/// number of threads. The first thread to count owns a pair of counters that it
/// alone writes, with a plain load and store; the others add to a shared pair with
/// an atomic add. A locked add costs a call about 5 ns (10 % of a one-row call,
/// `examples/call_overhead.rs`), and more when threads contend for its cache line.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// The owning thread's token ([`thread_token`]; 0 until a thread counts).
    owner: AtomicU64,
    /// (interpreted, compiled), written by the owner only.
    owned: [AtomicU64; 2],
    /// (interpreted, compiled), added to by every other thread.
    shared: [AtomicU64; 2],
}

impl Counters {
    /// Counts one batch, evaluated by the kernel or by the interpreter.
    pub(crate) fn count(&self, compiled: bool) {
        let tier = usize::from(compiled);
        let me = thread_token();
        let owner = self.owner.load(Ordering::Relaxed);
        let owns = owner == me
            || (owner == 0
                && self
                    .owner
                    .compare_exchange(0, me, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok());
        if owns {
            // No other thread writes this counter: tokens are never reused, so
            // the owner is one thread for the counters' whole life.
            let c = &self.owned[tier];
            c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        } else {
            self.shared[tier].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// (interpreted, compiled) batches so far.
    pub(crate) fn get(&self) -> (u64, u64) {
        let total = |tier: usize| {
            self.owned[tier].load(Ordering::Relaxed) + self.shared[tier].load(Ordering::Relaxed)
        };
        (total(0), total(1))
    }
}

/// A number for the calling thread, unique for the life of the process (never 0).
fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TOKEN: Cell<u64> = const { Cell::new(0) };
    }
    TOKEN.with(|token| match token.get() {
        0 => {
            let new = NEXT.fetch_add(1, Ordering::Relaxed);
            token.set(new);
            new
        }
        known => known,
    })
}

/// The background compiles of one [`KernelCache`]: how many are under way, and the
/// test hooks that hold them back or make them fail.
#[derive(Debug, Default)]
pub(crate) struct Background {
    state: Mutex<BackgroundState>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct BackgroundState {
    /// Compiles wait while this is set.
    held: bool,
    /// When set, compiles fail with this message.
    fail: Option<String>,
    /// Background compiles started and not finished.
    in_flight: usize,
}

/// One background compile through a cache, counted in its [`Background`] from
/// [`InFlight::start`] (before its thread is spawned) until dropped: when the thread
/// ends, also by unwinding, so [`KernelCache::wait_for_background_compiles`] never
/// waits for a thread that is gone.
pub(crate) struct InFlight(Option<Arc<KernelCache>>);

impl InFlight {
    /// Counts a background compile through `cache`.
    pub(crate) fn start(cache: &Arc<KernelCache>) -> InFlight {
        cache.background.lock().in_flight += 1;
        PROCESS.started();
        InFlight(Some(cache.clone()))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(cache) = self.0.take() {
            cache.background.finished();
            // When this was the last reference, the cache's kernels are freed here,
            // through LLVM: before `exit` may stop waiting.
            drop(cache);
        }
        PROCESS.finished();
    }
}

/// The background compiles under way in the process, through every cache: `exit`
/// waits for them (see [`ProcessCompiles::started`]).
static PROCESS: ProcessCompiles = ProcessCompiles {
    in_flight: Mutex::new(0),
    changed: Condvar::new(),
    pid: AtomicU32::new(0),
    registered_after: AtomicU8::new(0),
};

/// How long `exit` waits for background compiles (a compile takes milliseconds;
/// only compiles held back by the test hooks take longer).
const EXIT_PATIENCE: Duration = Duration::from_secs(10);

struct ProcessCompiles {
    in_flight: Mutex<usize>,
    changed: Condvar,
    /// The process that registered the `atexit` handler (0: none has); a child
    /// forked from it inherits the handler and the count, and does not wait.
    pid: AtomicU32,
    /// The pipelines (bits of [`pipeline_bit`]) after whose first compile the
    /// handler was registered again.
    registered_after: AtomicU8,
}

thread_local! {
    /// Whether this thread is a background compile's (`exit` called on it, by a
    /// fatal LLVM error, must not wait for its own compile).
    static COMPILE_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks the calling thread as a background compile's.
pub(crate) fn mark_compile_thread() {
    COMPILE_THREAD.with(|c| c.set(true));
}

fn pipeline_bit(p: Pipeline) -> u8 {
    match p {
        Pipeline::O3 => 1,
        Pipeline::Fast => 2,
        Pipeline::Quick => 4,
    }
}

impl ProcessCompiles {
    fn lock(&self) -> MutexGuard<'_, usize> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Counts a compile, and the first time makes `exit` wait for the compiles
    /// under way. `exit` runs LLVM's static destructors, which crash a compile
    /// running meanwhile (2 processes in 260 in `tests/tier.rs`'s test of it,
    /// before this): the `atexit` handler registered here runs before the
    /// destructors registered earlier (handlers run in the reverse order of their
    /// registration: those of LLVM's global objects, registered when it was
    /// loaded), and returns when no compile is under way. LLVM registers the
    /// destructors of some objects when it first uses them, during a compile:
    /// [`after_compile`] registers the handler again after the first compile of
    /// each pipeline, so it also runs before those.
    fn started(&self) {
        *self.lock() += 1;
        if self
            .pid
            .compare_exchange(0, std::process::id(), Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            register_wait_at_exit();
        }
    }

    fn finished(&self) {
        let mut n = self.lock();
        *n = n.saturating_sub(1);
        self.changed.notify_all();
    }
}

/// Called after each compile with `pipeline`: once background compiles have
/// started, the first compile of each pipeline registers the `atexit` handler
/// again (see [`ProcessCompiles::started`]).
pub(crate) fn after_compile(pipeline: Pipeline) {
    let bit = pipeline_bit(pipeline);
    if PROCESS.pid.load(Ordering::SeqCst) != 0
        && PROCESS.registered_after.fetch_or(bit, Ordering::SeqCst) & bit == 0
    {
        register_wait_at_exit();
    }
}

fn register_wait_at_exit() {
    // SAFETY: `wait_at_exit` is an `extern "C" fn()` that does not unwind (it
    // reads atomics and a thread-local, takes a lock, poisoned or not, and waits
    // on a condition variable) and uses only statics that live until the process
    // ends. If registering fails, exit does not wait: the behaviour before this.
    unsafe {
        libc::atexit(wait_at_exit);
    }
}

/// Waits until no background compile is under way, or [`EXIT_PATIENCE`] has passed;
/// at once in a forked child and on a compile thread.
extern "C" fn wait_at_exit() {
    if PROCESS.pid.load(Ordering::SeqCst) != std::process::id()
        || COMPILE_THREAD.try_with(|c| c.get()).unwrap_or(true)
    {
        return;
    }
    let deadline = std::time::Instant::now() + EXIT_PATIENCE;
    let mut n = PROCESS.lock();
    while *n > 0 {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return;
        }
        n = match PROCESS.changed.wait_timeout(n, left) {
            Ok((n, _)) => n,
            Err(p) => p.into_inner().0,
        };
    }
}

impl Background {
    fn lock(&self) -> MutexGuard<'_, BackgroundState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes the waiters: something they wait for changed without a compile
    /// finishing (a compile thread that could not be started).
    pub(crate) fn notify(&self) {
        let _state = self.lock();
        self.changed.notify_all();
    }

    /// A background compile has finished and dropped what it held.
    fn finished(&self) {
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        self.changed.notify_all();
    }

    /// Waits while compiles are held; the failure to report instead of compiling,
    /// if one is injected.
    pub(crate) fn admit(&self) -> Option<String> {
        let mut state = self.lock();
        while state.held {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
        state.fail.clone()
    }

    /// Blocks until `done()`, checked again whenever a background compile of this
    /// cache finishes. `done` must turn true before (or as) a compile finishes.
    pub(crate) fn wait_until(&self, done: impl Fn() -> bool) {
        let mut state = self.lock();
        while !done() {
            state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn set(&self, change: impl FnOnce(&mut BackgroundState)) {
        change(&mut self.lock());
        self.changed.notify_all();
    }
}

/// Background compiles, and hooks for tests that need a tier to be deterministic.
/// The hooks apply to the kernels compiled for [`CompilePolicy::Lazy`] and
/// [`CompilePolicy::Tiered`] expressions through this cache, and to the upgrades of
/// every expression's kernels (an `Eager` expression's first kernel is not
/// affected).
impl KernelCache {
    /// Background compiles through this cache wait until
    /// [`KernelCache::release_compiles`]: an expression built with
    /// [`CompilePolicy::Tiered`] stays on the interpreter meanwhile.
    #[doc(hidden)]
    pub fn hold_compiles(&self) {
        self.background.set(|s| s.held = true);
    }

    /// Lets held compiles go on.
    #[doc(hidden)]
    pub fn release_compiles(&self) {
        self.background.set(|s| s.held = false);
    }

    /// Makes later `Lazy` and `Tiered` compiles and upgrades through this cache
    /// fail with `message` (`None`: compile again).
    #[doc(hidden)]
    pub fn fail_compiles(&self, message: Option<&str>) {
        let message = message.map(str::to_string);
        self.background.set(|s| s.fail = message);
    }

    /// Waits until no background compile started through this cache is under way
    /// (each has stored its kernel, or dropped it when its expression was dropped).
    ///
    /// `exit` runs LLVM's static destructors, which must not run under a compile:
    /// once a background compile has started, `exit` waits for those under way
    /// (through every cache, for up to 10 seconds) before it runs them. Call this
    /// to wait for one cache's yourself, or end the process with `_exit`, as the
    /// `broadhead` command line does.
    pub fn wait_for_background_compiles(&self) {
        let mut state = self.background.lock();
        while state.in_flight > 0 {
            state = self
                .background
                .changed
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
    }
}
