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
//!
//! Behind it, optionally, a [`DiskCache`]: on a miss the kernel's object code is
//! looked up on disk (by its [`KernelKey`]) and loaded without compiling; a kernel
//! compiled here is written there for the next process.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, RwLock};

use broadhead_codegen::{
    compile_object, load, CodegenError, CompileOptions, CompileTimings, Kernel, KernelKey, Object,
    Pipeline, Program,
};
use lru::LruCache;

use crate::disk_cache::DiskCache;

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
    /// Misses served from the disk cache (loaded, not compiled).
    pub disk_hits: u64,
    /// Kernels compiled here and written to the disk cache.
    pub disk_writes: u64,
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
    pipeline: Mutex<Pipeline>,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    /// The background compiles of `Lazy`/`Tiered` expressions (see [`crate::tier`]).
    pub(crate) background: crate::tier::Background,
    disk: RwLock<Option<Arc<DiskCache>>>,
    disk_hits: AtomicU64,
    disk_writes: AtomicU64,
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
            pipeline: Mutex::new(Pipeline::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
            background: Default::default(),
            disk: RwLock::new(None),
            disk_hits: AtomicU64::new(0),
            disk_writes: AtomicU64::new(0),
        }
    }

    /// The same cache backed by `disk` (or by none): see [`KernelCache::set_disk_cache`].
    pub fn with_disk_cache(self, disk: Option<DiskCache>) -> KernelCache {
        self.set_disk_cache(disk);
        self
    }

    /// Backs this cache with a disk cache, or with none. Misses are then looked up
    /// there before compiling, and what is compiled is written there. A cache made
    /// with [`KernelCache::new`] has none, and so has the global cache unless asked
    /// (`KernelCache::global().set_disk_cache(DiskCache::from_env())`; the
    /// `broadhead` command does that unless given `--no-kernel-cache`).
    pub fn set_disk_cache(&self, disk: Option<DiskCache>) {
        *self.disk.write().unwrap_or_else(|p| p.into_inner()) = disk.map(Arc::new);
    }

    /// The disk cache behind this one, if any.
    pub fn disk_cache(&self) -> Option<Arc<DiskCache>> {
        self.disk.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The same cache compiling with another pipeline.
    pub fn with_pipeline(self, pipeline: Pipeline) -> KernelCache {
        self.set_pipeline(pipeline);
        self
    }

    /// Compiles the kernels missing from now on with `pipeline` (kernels already
    /// cached stay as they were compiled: every pipeline's kernel computes the same
    /// results). The `broadhead` command sets the global cache's to
    /// [`Pipeline::Quick`].
    pub fn set_pipeline(&self, pipeline: Pipeline) {
        *self.pipeline.lock().unwrap_or_else(|p| p.into_inner()) = pipeline;
    }

    /// The process-wide cache `Filter::new` and `Projector::new` use: at most 1,024
    /// kernels and 256 MiB (the entry limit is reached first: a kernel of the usual size
    /// takes about 26 KB).
    pub fn global() -> &'static Arc<KernelCache> {
        &GLOBAL
    }

    /// The pipeline kernels are compiled with.
    pub fn pipeline(&self) -> Pipeline {
        *self.pipeline.lock().unwrap_or_else(|p| p.into_inner())
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
            disk_hits: self.disk_hits.load(Ordering::Relaxed),
            disk_writes: self.disk_writes.load(Ordering::Relaxed),
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
        let kernel = Arc::new(self.load_or_compile(program)?);
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

    /// The kernel for `program` from the disk cache, or compiled (and written there).
    fn load_or_compile(&self, program: &Program) -> Result<Kernel, CodegenError> {
        let pipeline = self.pipeline();
        let Some(disk) = self.disk_cache() else {
            return load(program, Self::compile(program, pipeline)?);
        };
        let key = KernelKey::new(program, pipeline);
        if let Some(bytes) = disk.read(&key) {
            let object = Object {
                key,
                bytes,
                timings: CompileTimings {
                    from_disk_cache: true,
                    ..CompileTimings::default()
                },
                explain: None,
            };
            match load(program, object) {
                Ok(kernel) => {
                    self.disk_hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(kernel);
                }
                // Whole but not loadable here: replaced below.
                Err(_) => disk.remove(&key),
            }
        }
        let object = Self::compile(program, pipeline)?;
        if disk.write(&object.key, &object.bytes) {
            self.disk_writes.fetch_add(1, Ordering::Relaxed);
        }
        load(program, object)
    }

    fn compile(program: &Program, pipeline: Pipeline) -> Result<Object, CodegenError> {
        compile_object(
            program,
            CompileOptions {
                explain: false,
                pipeline,
            },
        )
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
