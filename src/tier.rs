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
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

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
