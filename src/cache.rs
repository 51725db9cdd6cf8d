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
//!
//! A cache compiles kernels with one [`Pipeline`] first and, when it has an
//! [`Upgrade`] (by default: [`Pipeline::Quick`], then [`Pipeline::O3`] for kernels that
//! have run over 4 Mi rows), again with the upgrade's pipeline, in the background,
//! for the expressions whose kernel turned out hot. An entry holds a program's
//! kernels, until the upgrade's replaces the others; a lookup gives the upgrade's
//! when there is one.

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
    /// Lookups that compiled one (or loaded it from the disk cache), upgrades
    /// included.
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

/// A program's kernels, at most one per pipeline.
struct Entry {
    kernels: Vec<(Pipeline, Arc<Kernel>)>,
    bytes: usize,
}

impl Entry {
    fn get(&self, pipeline: Pipeline) -> Option<&Arc<Kernel>> {
        self.kernels
            .iter()
            .find(|(p, _)| *p == pipeline)
            .map(|(_, k)| k)
    }
}

/// Recompiling hot kernels with a better pipeline: a kernel compiled with the
/// cache's first pipeline that has evaluated `after_rows` rows (over all its calls,
/// for one expression) is compiled again with `pipeline` on a background thread,
/// and the expression's calls run the new kernel once it has arrived. Both compute
/// the same results; the upgrade only changes speed.
///
/// The default, `Quick` then `O3` after 4 Mi rows, makes a kernel usable in a few
/// milliseconds (TPC-H Q6: 1.5–1.7 ms with `Quick` against 19.7–21.1 ms with `O3` on
/// a 2-core VM, `cargo run --release --example compile_cost`) and gives the
/// expressions that run long the faster code (`O3`'s kernel takes 0.62–0.75 of
/// `Quick`'s time on data in cache). 4 Mi rows is about 2.5 ms of a `Quick` kernel's
/// time on data in cache: an expression that has run that long is likely to run
/// longer, and one that does not never pays for the slower compile.
///
/// ```
/// use std::sync::Arc;
/// use arrow::array::{Float64Array, RecordBatch};
/// use arrow::datatypes::{DataType, Field, Schema};
/// use broadhead::{col, lit, Filter, KernelCache, Pipeline, Upgrade};
///
/// // `Quick` first; `O3` once a kernel has evaluated 1,000 rows.
/// let cache = Arc::new(KernelCache::new(64, 64 << 20).with_upgrade(Some(Upgrade {
///     pipeline: Pipeline::O3,
///     after_rows: 1_000,
/// })));
/// let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Float64, false)]));
/// let x = Float64Array::from_iter_values((0..600).map(f64::from));
/// let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(x)])?;
/// let filter = Filter::with_cache(&schema, &col("x").gt(lit(10.0)), &cache)?;
/// assert_eq!(filter.tier_stats().pipeline, Some(Pipeline::Quick));
/// assert_eq!(filter.evaluate(&batch)?.len(), 589);
/// // 1,200 rows: the upgrade compiles in the background; calls go on meanwhile.
/// assert_eq!(filter.evaluate(&batch)?.len(), 589);
/// filter.wait_for_kernel();
/// assert_eq!(filter.tier_stats().pipeline, Some(Pipeline::O3));
/// assert_eq!(filter.evaluate(&batch)?.len(), 589);
/// # Ok::<(), broadhead::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Upgrade {
    /// The pipeline hot kernels are compiled again with.
    pub pipeline: Pipeline,
    /// After how many rows (evaluated by the first kernel) the recompile starts.
    pub after_rows: u64,
}

impl Default for Upgrade {
    fn default() -> Upgrade {
        Upgrade {
            pipeline: Pipeline::O3,
            after_rows: 1 << 22,
        }
    }
}

/// The pipelines a cache compiles with.
#[derive(Debug, Clone, Copy)]
struct Plan {
    first: Pipeline,
    upgrade: Option<Upgrade>,
}

/// A kernel from the cache, with the pipeline that compiled it.
pub(crate) struct Compiled {
    pub(crate) kernel: Arc<Kernel>,
    pub(crate) pipeline: Pipeline,
    /// The upgrade to make once it is hot (`None`: it is final).
    pub(crate) upgrade: Option<Upgrade>,
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
    plan: Mutex<Plan>,
    hits: AtomicU64,
    misses: AtomicU64,
    evictions: AtomicU64,
    /// The background compiles of `Lazy`/`Tiered` expressions (see [`crate::tier`]).
    pub(crate) background: crate::background::Background,
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
    /// with [`Pipeline::Quick`] and upgrading hot kernels to [`Pipeline::O3`]
    /// ([`Upgrade::default`]).
    pub fn new(max_entries: usize, max_bytes: usize) -> KernelCache {
        KernelCache {
            state: Mutex::new(State {
                entries: LruCache::unbounded(),
                bytes: 0,
                max_entries,
                max_bytes,
            }),
            plan: Mutex::new(Plan {
                first: Pipeline::Quick,
                upgrade: Some(Upgrade::default()),
            }),
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

    /// The same cache compiling with `pipeline` only (no upgrade).
    pub fn with_pipeline(self, pipeline: Pipeline) -> KernelCache {
        self.set_pipeline(pipeline);
        self
    }

    /// The same cache upgrading hot kernels as `upgrade` says (`None`: never).
    pub fn with_upgrade(self, upgrade: Option<Upgrade>) -> KernelCache {
        self.set_upgrade(upgrade);
        self
    }

    /// Compiles the kernels missing from now on with `pipeline`, and only with it:
    /// no [`Upgrade`] (set one after this if wanted). Kernels already cached stay
    /// as they were compiled, and a program that has one is not compiled again:
    /// every pipeline's kernel computes the same results. The `broadhead` command
    /// sets the global cache's to [`Pipeline::Quick`], its scans being bound by
    /// reading the file.
    pub fn set_pipeline(&self, pipeline: Pipeline) {
        *self.plan() = Plan {
            first: pipeline,
            upgrade: None,
        };
    }

    /// Upgrades the kernels of expressions bound from now on as `upgrade` says
    /// (`None`: never). An upgrade to the first pipeline itself is none.
    pub fn set_upgrade(&self, upgrade: Option<Upgrade>) {
        let mut plan = self.plan();
        plan.upgrade = upgrade.filter(|u| u.pipeline != plan.first);
    }

    /// The upgrade hot kernels get, if any.
    pub fn upgrade(&self) -> Option<Upgrade> {
        self.plan().upgrade
    }

    fn plan(&self) -> std::sync::MutexGuard<'_, Plan> {
        self.plan.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The process-wide cache `Filter::new` and `Projector::new` use: at most 1,024
    /// kernels and 256 MiB (the entry limit is reached first: a kernel of the usual size
    /// takes about 26 KB).
    pub fn global() -> &'static Arc<KernelCache> {
        &GLOBAL
    }

    /// The pipeline kernels are compiled with first.
    pub fn pipeline(&self) -> Pipeline {
        self.plan().first
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

    /// The kernel for `program`: the upgrade's if one is cached here or on disk,
    /// else the first pipeline's, compiled on a miss.
    pub(crate) fn get_or_compile(&self, program: &Program) -> Result<Compiled, CodegenError> {
        let plan = *self.plan();
        let target = plan.upgrade.map(|u| u.pipeline);
        let compiled = |kernel: Arc<Kernel>, pipeline: Pipeline| Compiled {
            kernel,
            pipeline,
            upgrade: plan.upgrade.filter(|u| u.pipeline != pipeline),
        };
        {
            let mut state = self.lock();
            if let Some(entry) = state.entries.get(program) {
                // The upgrade's kernel, the first pipeline's, or any other cached.
                let found = target
                    .into_iter()
                    .chain([plan.first])
                    .find_map(|p| entry.get(p).map(|k| (p, k)))
                    .or_else(|| entry.kernels.first().map(|(p, k)| (*p, k)));
                if let Some((p, kernel)) = found {
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(compiled(kernel.clone(), p));
                }
            }
        }
        if let Some(p) = target {
            if let Some(kernel) = self.load_from_disk(program, p) {
                self.misses.fetch_add(1, Ordering::Relaxed);
                return Ok(compiled(self.keep(program, p, kernel), p));
            }
        }
        let kernel = self.get_or_compile_with(program, plan.first)?;
        Ok(compiled(kernel, plan.first))
    }

    /// The kernel `pipeline` compiles for `program`: cached here, on disk, or
    /// compiled now.
    pub(crate) fn get_or_compile_with(
        &self,
        program: &Program,
        pipeline: Pipeline,
    ) -> Result<Arc<Kernel>, CodegenError> {
        {
            let mut state = self.lock();
            if let Some(kernel) = state.entries.get(program).and_then(|e| e.get(pipeline)) {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(kernel.clone());
            }
        }
        // Compile outside the lock so lookups of other kernels are not held up.
        self.misses.fetch_add(1, Ordering::Relaxed);
        let kernel = match self.load_from_disk(program, pipeline) {
            Some(kernel) => kernel,
            None => Arc::new(self.compile_and_store(program, pipeline)?),
        };
        Ok(self.keep(program, pipeline, kernel))
    }

    /// Keeps `kernel`, compiled by `pipeline` for `program`, unless another thread
    /// kept one meanwhile: the kernel kept. The upgrade's kernel replaces the
    /// others of its program (their users keep theirs).
    fn keep(&self, program: &Program, pipeline: Pipeline, kernel: Arc<Kernel>) -> Arc<Kernel> {
        let bytes = estimated_bytes(program);
        let supersedes = self.upgrade().is_some_and(|u| u.pipeline == pipeline);
        let mut state = self.lock();
        let kernel = match state.entries.get_mut(program) {
            Some(entry) => match entry.get(pipeline) {
                // Another thread compiled it meanwhile: share theirs.
                Some(theirs) => theirs.clone(),
                None => {
                    let freed = if supersedes {
                        let freed = entry.bytes;
                        entry.kernels.clear();
                        entry.bytes = 0;
                        freed
                    } else {
                        0
                    };
                    entry.kernels.push((pipeline, kernel.clone()));
                    entry.bytes += bytes;
                    state.bytes = state.bytes - freed + bytes;
                    kernel
                }
            },
            None => {
                state.entries.push(
                    program.clone(),
                    Entry {
                        kernels: vec![(pipeline, kernel.clone())],
                        bytes,
                    },
                );
                state.bytes += bytes;
                kernel
            }
        };
        // `program` is now the most recently used entry, so it goes last.
        self.evict(&mut state, 1);
        kernel
    }

    /// The kernel `pipeline` compiled for `program` in an earlier process, from the
    /// disk cache (a whole entry that does not load here is removed).
    fn load_from_disk(&self, program: &Program, pipeline: Pipeline) -> Option<Arc<Kernel>> {
        let disk = self.disk_cache()?;
        let key = KernelKey::new(program, pipeline);
        let bytes = disk.read(&key)?;
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
                Some(Arc::new(kernel))
            }
            // Whole but not loadable here: replaced when compiled.
            Err(_) => {
                disk.remove(&key);
                None
            }
        }
    }

    /// Compiles `program` with `pipeline`, writing the object code to the disk
    /// cache if there is one.
    fn compile_and_store(
        &self,
        program: &Program,
        pipeline: Pipeline,
    ) -> Result<Kernel, CodegenError> {
        let compiled = Self::compile(program, pipeline);
        crate::background::after_compile(pipeline);
        let object = compiled?;
        if let Some(disk) = self.disk_cache() {
            if disk.write(&object.key, &object.bytes) {
                self.disk_writes.fetch_add(1, Ordering::Relaxed);
            }
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

impl crate::background::Compiles for KernelCache {
    fn background(&self) -> &crate::background::Background {
        &self.background
    }
}

/// Background compiles, and hooks for tests that need a tier to be deterministic.
/// The hooks apply to the kernels compiled for [`CompilePolicy::Lazy`](crate::CompilePolicy::Lazy) and
/// [`CompilePolicy::Tiered`](crate::CompilePolicy::Tiered) expressions through this cache, and to the upgrades of
/// every expression's kernels (an `Eager` expression's first kernel is not
/// affected).
impl KernelCache {
    /// Background compiles through this cache wait until
    /// [`KernelCache::release_compiles`]: an expression built with
    /// [`CompilePolicy::Tiered`](crate::CompilePolicy::Tiered) stays on the interpreter meanwhile.
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
