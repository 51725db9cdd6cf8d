//! The compiled-kernel cache.
//!
//! Kernels are keyed by their [`Program`]: the expression's shape after binding,
//! with columns as typed input slots (not names), literals as typed parameter slots
//! (not values), string patterns by their specialized shape, and which inputs have
//! nulls. So `a > 50` and `a > 60` share one kernel, and so do `price > 1` and
//! `cost > 2` on columns of one type.
//!
//! The cache is thread-safe and bounded by entries and by an estimate of bytes
//! (least recently used entries go first: an [`lru::LruCache`] keeps the order). It holds kernels by `Arc`: an evicted kernel
//! lives on while a `Filter`/`Projector` uses it and frees its machine code when the
//! last user drops it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use broadhead_codegen::{compile, CodegenError, CompileOptions, Kernel, Pipeline, Program};
use lru::LruCache;

/// A snapshot of a cache's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups that found a compiled kernel.
    pub hits: u64,
    /// Lookups that compiled one.
    pub misses: u64,
    /// Kernels dropped to stay within the limits.
    pub evictions: u64,
    /// Kernels held now.
    pub entries: usize,
    /// Estimated bytes held now.
    pub bytes: usize,
}

struct Entry {
    kernel: Arc<Kernel>,
    bytes: usize,
}

struct State {
    /// Most recently used first.
    entries: LruCache<Program, Entry>,
    bytes: usize,
    max_entries: usize,
    max_bytes: usize,
}

/// A bounded, thread-safe cache of compiled kernels.
pub struct KernelCache {
    state: Mutex<State>,
    pipeline: Pipeline,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    /// The background compiles of `Lazy`/`Tiered` expressions (see [`crate::tier`]).
    pub(crate) background: crate::tier::Background,
}

impl std::fmt::Debug for KernelCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelCache")
            .field("stats", &self.stats())
            .finish()
    }
}

/// The estimated footprint of a kernel: its machine code and constants and the
/// JIT's records of them (the IR is gone once the object code is emitted).
/// Calibrated by `tests/cache.rs`, which measures the process's growth per live
/// kernel (about 26 KB for a 20-node kernel).
fn estimated_bytes(program: &Program) -> usize {
    16 * 1024 + program.nodes.len() * 512
}

static GLOBAL: LazyLock<Arc<KernelCache>> =
    LazyLock::new(|| Arc::new(KernelCache::new(1024, 256 << 20)));

impl KernelCache {
    /// A cache of at most `max_entries` kernels and about `max_bytes` bytes, compiling
    /// with the default pipeline (O3).
    pub fn new(max_entries: usize, max_bytes: usize) -> KernelCache {
        KernelCache {
            state: Mutex::new(State {
                entries: LruCache::unbounded(),
                bytes: 0,
                max_entries,
                max_bytes,
            }),
            pipeline: Pipeline::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            background: Default::default(),
        }
    }

    /// The same cache compiling with another pipeline.
    pub fn with_pipeline(mut self, pipeline: Pipeline) -> KernelCache {
        self.pipeline = pipeline;
        self
    }

    /// The process-wide cache `Filter::new` and `Projector::new` use: at most 1,024
    /// kernels and 256 MiB (the entry limit is reached first: a kernel of the usual size
    /// takes about 26 KB).
    pub fn global() -> &'static Arc<KernelCache> {
        &GLOBAL
    }

    /// The pipeline kernels are compiled with.
    pub fn pipeline(&self) -> Pipeline {
        self.pipeline
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The counters.
    pub fn stats(&self) -> CacheStats {
        let state = self.lock();
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            evictions: self.evictions.load(Ordering::Relaxed),
            entries: state.entries.len(),
            bytes: state.bytes,
        }
    }

    /// Changes the limits, evicting at once if needed.
    pub fn set_limits(&self, max_entries: usize, max_bytes: usize) {
        let mut state = self.lock();
        state.max_entries = max_entries;
        state.max_bytes = max_bytes;
        self.evict(&mut state, 0);
    }

    /// Drops every kernel the cache holds (users keep theirs).
    pub fn clear(&self) {
        let mut state = self.lock();
        state.entries.clear();
        state.bytes = 0;
    }

    /// The kernel for `program`, compiled on a miss.
    pub(crate) fn get_or_compile(&self, program: &Program) -> Result<Arc<Kernel>, CodegenError> {
        {
            let mut state = self.lock();
            if let Some(entry) = state.entries.get(program) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(entry.kernel.clone());
            }
        }
        // Compile outside the lock so lookups of other kernels are not held up.
        self.misses.fetch_add(1, Ordering::Relaxed);
        let kernel = Arc::new(compile(
            program,
            CompileOptions {
                explain: false,
                pipeline: self.pipeline,
            },
        )?);
        let mut state = self.lock();
        let kernel = match state.entries.get(program) {
            // Another thread compiled it meanwhile: share theirs.
            Some(entry) => entry.kernel.clone(),
            None => {
                let bytes = estimated_bytes(program);
                state.entries.push(
                    program.clone(),
                    Entry {
                        kernel: kernel.clone(),
                        bytes,
                    },
                );
                state.bytes += bytes;
                kernel
            }
        };
        // `program` is now the most recently used entry, so it goes last.
        self.evict(&mut state, 1);
        Ok(kernel)
    }

    /// Evicts least recently used entries until within the limits, keeping at least
    /// `keep` entries (the one just added must survive its own insertion).
    fn evict(&self, state: &mut State, keep: usize) {
        while state.entries.len() > keep
            && (state.entries.len() > state.max_entries || state.bytes > state.max_bytes)
        {
            let Some((_, entry)) = state.entries.pop_lru() else {
                break;
            };
            state.bytes -= entry.bytes;
            self.evictions.fetch_add(1, Ordering::Relaxed);
        }
    }
}
