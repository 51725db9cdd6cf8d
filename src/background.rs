//! Background compiles: how many are under way per kernel cache and in the whole
//! process, the test hooks that hold them back or make them fail, and the `atexit`
//! handler that keeps `exit` from running LLVM's destructors under a compile.

use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use broadhead_codegen::Pipeline;

/// The background compiles of one kernel cache: how many are under way, and the
/// test hooks that hold them back or make them fail.
#[derive(Debug, Default)]
pub(crate) struct Background {
    state: Mutex<BackgroundState>,
    pub(crate) changed: Condvar,
}

#[derive(Debug, Default)]
pub(crate) struct BackgroundState {
    /// Compiles wait while this is set.
    pub(crate) held: bool,
    /// When set, compiles fail with this message.
    pub(crate) fail: Option<String>,
    /// Background compiles started and not finished.
    pub(crate) in_flight: usize,
}

/// One background compile through a cache, counted in its [`Background`] from
/// [`InFlight::start`] (before its thread is spawned) until dropped: when the thread
/// ends, also by unwinding, so `KernelCache::wait_for_background_compiles` never
/// waits for a thread that is gone.
pub(crate) struct InFlight<C: Compiles>(Option<Arc<C>>);

/// What owns a [`Background`]: the kernel cache (kept apart so this module needs
/// nothing of the cache's).
pub(crate) trait Compiles {
    /// The owner's background compiles.
    fn background(&self) -> &Background;
}

impl<C: Compiles> InFlight<C> {
    /// Counts a background compile through `cache`.
    pub(crate) fn start(cache: &Arc<C>) -> InFlight<C> {
        cache.background().lock().in_flight += 1;
        PROCESS.started();
        InFlight(Some(cache.clone()))
    }
}

impl<C: Compiles> Drop for InFlight<C> {
    fn drop(&mut self) {
        if let Some(cache) = self.0.take() {
            cache.background().finished();
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
    pub(crate) fn lock(&self) -> MutexGuard<'_, BackgroundState> {
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

    pub(crate) fn set(&self, change: impl FnOnce(&mut BackgroundState)) {
        change(&mut self.lock());
        self.changed.notify_all();
    }
}
