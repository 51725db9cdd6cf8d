//! Compiling a program to machine code, and loading that code.
//!
//! [`compile_object`] builds the program's IR in an LLVM context of its own, runs the
//! optimization pipeline and emits a relocatable object file in memory with a
//! `TargetMachine` for the host (taken from a pool, so threads compile in parallel
//! and no machine is built per kernel). [`load`] links object code into the
//! process's one ORC LLJIT ([`crate::orc`]) and returns a [`Kernel`]: the function
//! pointer and a handle on the code, which is unloaded when the last `Kernel` using
//! it drops. Object code does not depend on the process it was compiled in (helpers
//! are called by symbol name), so the same bytes can be kept on disk and loaded by
//! another process: that is what a [`KernelKey`] names.

use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use inkwell::context::Context;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, RelocMode, Target, TargetMachine};
use inkwell::OptimizationLevel;
use sha2::{Digest, Sha256};

use crate::emit::{Emitter, IN_SET_LOOKUP};
use crate::orc::{self, Code};
use crate::program::{in_set_lookup, ArithOp, Callee, InSet, Node, OutSlot, PType, Program, Slot};

/// Why compilation failed (always a bug in the caller or in Broadhead).
#[derive(Debug, thiserror::Error)]
#[error("code generation failed: {0}")]
pub struct CodegenError(pub String);

/// The generated function's type (see the `emit` module for the ABI).
pub type KernelFn =
    unsafe extern "C" fn(*const Slot, *const u64, u64, *const OutSlot, *mut u64, *mut u8) -> i64;

/// Which optimization pipeline compiles a kernel. `Default` is `O3`, the pipeline
/// of a single compile; Broadhead's `KernelCache` compiles with `Quick` first and
/// recompiles hot kernels with `O3` (its `Upgrade`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Pipeline {
    /// The new pass manager's `default<O3>` and aggressive code generation.
    #[default]
    O3,
    /// The passes that matter for already-vectorized kernels (SROA, early CSE,
    /// instcombine, LICM, GVN, CFG simplification) and code generation at `-O1`:
    /// several times cheaper to compile.
    Fast,
    /// The least work that gives a vector kernel: on AVX-512 hosts the expression
    /// emitted once for every block (masked loads and stores) instead of a
    /// full-block copy and a tail copy, only SROA and early CSE, and code
    /// generation at `-O0` (fast instruction selection and register allocation).
    /// About a tenth of `O3`'s compile time (TPC-H Q6: 2.4–2.7 ms against
    /// 25–29 ms on the 2-core VM), for a kernel 1.4–1.7× as slow on data in cache
    /// and 1.15–1.3× as slow streaming from memory (`cargo run --release
    /// --example compile_cost`, `--example selection_cost`). For kernels
    /// whose arrival matters more than their last nanosecond: the `broadhead`
    /// command line uses it, its scans being bound by reading the file.
    Quick,
}

impl Pipeline {
    fn passes(self) -> &'static str {
        match self {
            Pipeline::O3 => "default<O3>",
            Pipeline::Fast => concat!(
                "function(sroa,early-cse<memssa>,instcombine,simplifycfg,",
                "loop-mssa(licm),gvn,instcombine,simplifycfg)"
            ),
            // SROA turns the emitter's stack slots into registers (without it the
            // loop counter and the selection count live in memory); early CSE drops
            // the repeated loads of slot fields, which -O0 code generation would
            // otherwise emit one by one.
            Pipeline::Quick => "function(sroa,early-cse)",
        }
    }

    fn codegen_level(self) -> OptimizationLevel {
        match self {
            Pipeline::O3 => OptimizationLevel::Aggressive,
            Pipeline::Fast => OptimizationLevel::Less,
            Pipeline::Quick => OptimizationLevel::None,
        }
    }

    /// Whether kernels are emitted with one masked body for every block on a host
    /// with `features`.
    fn one_body(self, features: &str) -> bool {
        self == Pipeline::Quick && features.contains("+avx512f")
    }

    /// The pipeline's name in kernel keys.
    fn name(self) -> &'static str {
        match self {
            Pipeline::O3 => "O3",
            Pipeline::Fast => "Fast",
            Pipeline::Quick => "Quick",
        }
    }
}

/// Compilation settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CompileOptions {
    /// Keep the IR before and after optimization and the native assembly.
    pub explain: bool,
    /// The optimization pipeline.
    pub pipeline: Pipeline,
}

/// Time spent in each compilation phase.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompileTimings {
    /// Building the LLVM IR.
    pub ir: Duration,
    /// The optimization pipeline.
    pub optimize: Duration,
    /// Machine-code emission (an object file in memory).
    pub codegen: Duration,
    /// Linking the object code into the JIT.
    pub link: Duration,
    /// The object code was read from a disk cache, not compiled here (the other
    /// phases are zero); set by whoever read it.
    pub from_disk_cache: bool,
}

/// The text forms of a compiled kernel.
#[derive(Debug, Clone, Default)]
pub struct Explain {
    /// LLVM IR as generated.
    pub ir: String,
    /// LLVM IR after the optimization pipeline.
    pub optimized_ir: String,
    /// Native assembly for the host CPU.
    pub assembly: String,
}

/// What a kernel's machine code depends on, hashed (SHA-256): the program (helpers by
/// name, not address), the pipeline, the code generator's build (a hash of its
/// sources) and version, the LLVM version, the target triple and the host CPU's
/// name and features. Equal keys mean interchangeable object code, in this process or
/// another; the key names a kernel's symbol and its entry in a disk cache.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelKey([u8; 32]);

impl std::fmt::Debug for KernelKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KernelKey({})", self.hex())
    }
}

/// Feeds `Hash` output into SHA-256. The derived `Hash` impls write fixed-width
/// integers and length-prefixed strings, so equal programs give equal bytes on one
/// target.
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finish(&self) -> u64 {
        unreachable!("only the digest is read")
    }
}

impl KernelKey {
    /// The key of `program` compiled with `pipeline` for the host.
    pub fn new(program: &Program, pipeline: Pipeline) -> KernelKey {
        let mut portable = program.clone();
        for node in &mut portable.nodes {
            match node {
                Node::Helper { helper, .. }
                | Node::Call {
                    callee: Callee::Helper { helper, .. },
                    ..
                } => helper.addr = 0,
                _ => {}
            }
        }
        let (cpu, features) = host_cpu();
        let mut h = ShaHasher(Sha256::new());
        for part in [
            "broadhead-kernel 1",
            env!("CARGO_PKG_VERSION"),
            env!("BROADHEAD_CODEGEN_SOURCE_HASH"),
            env!("BROADHEAD_LLVM_VERSION"),
            &TargetMachine::get_default_triple().to_string(),
            &cpu,
            &features,
            pipeline.name(),
        ] {
            part.hash(&mut h);
        }
        portable.hash(&mut h);
        KernelKey(h.0.finalize().into())
    }

    /// The key's 32 bytes.
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key in lowercase hexadecimal (64 digits).
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The kernel function's symbol: unique per key (128 bits of it).
    fn symbol(&self) -> String {
        format!("broadhead_kernel_{}", &self.hex()[..32])
    }
}

/// A program compiled to relocatable object code for the host, not loaded yet.
#[derive(Debug, Clone)]
pub struct Object {
    /// What the code was compiled from.
    pub key: KernelKey,
    /// The object file (ELF on Linux).
    pub bytes: Vec<u8>,
    /// Phase timings (`link` is zero: nothing is linked yet).
    pub timings: CompileTimings,
    /// IR and assembly, when compiled with [`CompileOptions::explain`].
    pub explain: Option<Explain>,
}

/// A compiled kernel: a function pointer and the machine code it points into.
pub struct Kernel {
    func: KernelFn,
    _code: Arc<Code>,
    /// What it was compiled from.
    pub key: KernelKey,
    /// Phase timings of its compilation (all zero but `link` for object code that
    /// was compiled elsewhere, e.g. loaded from a disk cache).
    pub timings: CompileTimings,
    /// IR and assembly, when compiled with [`CompileOptions::explain`].
    pub explain: Option<Explain>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("key", &self.key)
            .field("timings", &self.timings)
            .finish_non_exhaustive()
    }
}

impl Kernel {
    /// Runs the kernel.
    ///
    /// Returns the number of selected rows (filters), or for projections the
    /// outputs whose validity words it left as they were, as a mask (bit `k` for
    /// output `k`: none of its rows is NULL; only outputs before the 64th are ever
    /// left so); or `Err(row)` for the first row whose value raised an error.
    ///
    /// # Safety
    /// The buffers must match the program the kernel was compiled from:
    /// `inputs` has one [`Slot`] per program input, each pointing at `rows` values of
    /// the input's type (words: `ceil(rows / 64)`), with a validity pointer exactly
    /// for the inputs compiled as nullable; `params` has one 8-byte value per
    /// parameter (pointers to helper state must stay valid during the call); for a
    /// filter, `mode` is what it writes at `outs[0].values`: 0, the selected rows as
    /// bits of `ceil(rows / 64)` words; 2, 4 or 8, their indices as integers of that
    /// many bytes, with room for `rows` of them (and `rows` within their range); for
    /// a projection, `mode` is 0 and there is one [`OutSlot`] per output with room
    /// for `rows` values (strings: `2 * rows` `u64`s) and `ceil(rows / 64)` validity
    /// words. `ctx` is what the program's call helpers expect (it is passed to them
    /// untouched).
    pub unsafe fn run(
        &self,
        inputs: &[Slot],
        params: &[u64],
        rows: usize,
        outs: &[OutSlot],
        mode: u64,
        ctx: *mut u8,
    ) -> Result<usize, usize> {
        if !matches!(mode, 2 | 4 | 8) {
            // SAFETY: the caller upholds this function's contract.
            return unsafe { self.call(inputs, params, rows, outs, ctx) };
        }
        // The code writes mask words: into scratch words, then expanded (faster than
        // writing indices in the kernel: examples/selection_cost.rs).
        with_mask_words(rows.div_ceil(64), |words| {
            // The kernel writes every block's 16 bits, so only the last word's bits
            // past the batch's blocks are not written: that word is cleared first,
            // not all of them.
            if let Some(last) = words.last_mut() {
                last.write(0);
            }
            let mask = [OutSlot {
                values: words.as_mut_ptr().cast(),
                validity: std::ptr::null_mut(),
            }];
            // SAFETY: as the caller's call, with mode 0's output: `words` holds
            // ceil(rows / 64) words.
            let n = unsafe { self.call(inputs, params, rows, &mask, ctx) }?;
            // SAFETY: the kernel wrote the 16 bits of each of the ceil(rows / 16)
            // blocks, which cover every word but the last one's bits past them,
            // written (zero) above: every word is initialized.
            let words = unsafe { &mut *(words as *mut [MaybeUninit<u64>] as *mut [u64]) };
            if let Some(last) = words.last_mut() {
                *last = reassembled(last);
            }
            let out = outs[0].values;
            // SAFETY: the caller gave room for `rows` indices of the mode's width at
            // `out`; the words have n <= rows set bits, each below `rows`, which the
            // mode's width holds (the caller checked the batch against the mode's
            // maximum).
            unsafe {
                match mode {
                    2 => expand(words, rows, out.cast::<u16>(), |i| i as u16),
                    4 => expand(words, rows, out.cast::<u32>(), |i| i as u32),
                    _ => expand(words, rows, out.cast::<u64>(), |i| i as u64),
                }
            }
            Ok(n)
        })
    }

    /// Calls the generated function (the contract of [`Kernel::run`]).
    unsafe fn call(
        &self,
        inputs: &[Slot],
        params: &[u64],
        rows: usize,
        outs: &[OutSlot],
        ctx: *mut u8,
    ) -> Result<usize, usize> {
        let mut err_row = 0u64;
        // SAFETY: the caller upholds the contract of `run`, which is what the
        // generated code relies on; the code was generated for this signature.
        let n = unsafe {
            (self.func)(
                inputs.as_ptr(),
                params.as_ptr(),
                rows as u64,
                outs.as_ptr(),
                &mut err_row,
                ctx,
            )
        };
        if n < 0 {
            Err(err_row as usize)
        } else {
            Ok(n as usize)
        }
    }
}

/// `word` read as the four 16-bit block masks the kernel just stored into it. Read
/// whole, the word waits for those stores to reach the cache (a store-forwarding
/// stall: a load wider than the stores it overlaps) — the kernel's last stores, a
/// few cycles old when the call returns. Four loads of the stores' width are each
/// forwarded from one store; volatile, so that they are not merged back into one.
#[inline(always)]
fn reassembled(word: &u64) -> u64 {
    let blocks = (word as *const u64).cast::<u16>();
    (0..4).fold(0, |whole, b| {
        // SAFETY: `blocks` points to the word's 8 bytes, aligned for `u16`; `b < 4`.
        let block = unsafe { blocks.add(b).read_volatile() };
        // Where the block's two bytes sit in the word's value.
        let shift = if cfg!(target_endian = "little") {
            16 * b
        } else {
            48 - 16 * b
        };
        whole | u64::from(block) << shift
    })
}

/// The mask words of batches of up to 2,048 rows live on the stack (cheaper than
/// reaching the thread's words).
const STACK_WORDS: usize = 32;

/// Calls `f` with `needed` scratch words, uninitialized (or holding an earlier
/// call's bits): a small batch's on the stack, others kept by the thread from call
/// to call. A nested call (a helper running a kernel) finds the thread's words
/// borrowed and takes its own.
#[inline(always)]
fn with_mask_words<R>(needed: usize, f: impl FnOnce(&mut [MaybeUninit<u64>]) -> R) -> R {
    if needed <= STACK_WORDS {
        // Not zeroed: the kernel writes them (16 vector stores saved on every call).
        return f(&mut [MaybeUninit::uninit(); STACK_WORDS][..needed]);
    }
    MASK_WORDS.with(|scratch| {
        let mut own = Vec::new();
        let mut borrowed = scratch.try_borrow_mut();
        let words = match &mut borrowed {
            Ok(words) => &mut **words,
            Err(_) => &mut own,
        };
        if words.len() < needed {
            words.resize(needed, 0);
        }
        let head: *mut [u64] = &mut words[..needed];
        // SAFETY: `MaybeUninit<u64>` has `u64`'s layout, and `f` stores only whole
        // initialized words or the kernel's 16-bit block masks into them, so the
        // vector never holds uninitialized bytes.
        let result = f(unsafe { &mut *(head as *mut [MaybeUninit<u64>]) });
        if words.capacity() > MAX_KEPT_WORDS {
            // A huge batch's words are not kept for the rest of the thread's life.
            *words = Vec::new();
        }
        result
    })
}

/// The most scratch words a thread keeps between calls (128 KiB: batches of up to
/// 1,048,576 rows).
const MAX_KEPT_WORDS: usize = 1 << 14;

thread_local! {
    /// Mask words for filters asked for row indices, reused from call to call.
    static MASK_WORDS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// [`write_indices`], compiled with the `popcnt` instruction where the CPU has it:
/// the crate is built for baseline x86-64, which counts a word's bits with a dozen
/// instructions.
///
/// # Safety
/// As [`write_indices`].
unsafe fn expand<T>(words: &[u64], rows: usize, out: *mut T, index: impl Fn(usize) -> T) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("popcnt") {
        // SAFETY: the CPU has `popcnt`; the caller upholds `write_indices`' contract.
        return unsafe { write_indices_popcnt(words, rows, out, index) };
    }
    // SAFETY: the caller upholds `write_indices`' contract.
    unsafe { write_indices(words, rows, out, index) }
}

/// [`write_indices`] with `popcnt`.
///
/// # Safety
/// The CPU has `popcnt`; as [`write_indices`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn write_indices_popcnt<T>(
    words: &[u64],
    rows: usize,
    out: *mut T,
    index: impl Fn(usize) -> T,
) {
    // SAFETY: the caller upholds `write_indices`' contract.
    unsafe { write_indices(words, rows, out, index) }
}

/// Writes the positions of the set bits of `words` (none at or past `rows`), in
/// order, from `out`. Sparse words take a trailing-zero count per set bit; dense ones
/// (a quarter of their bits set or more) are written a byte at a time: the byte's
/// set positions from [`BYTE_POSITIONS`], eight entries written whatever the count
/// (those past it are overwritten next, or lie past the result), without a branch
/// per bit. A last byte with rows past `rows` is written bit by bit.
///
/// # Safety
/// `out` has room for `rows` `T`s, and `words` holds `ceil(rows / 64)` words.
#[inline(always)]
unsafe fn write_indices<T>(words: &[u64], rows: usize, out: *mut T, index: impl Fn(usize) -> T) {
    let mut n = 0;
    for (w, &word) in words.iter().enumerate() {
        let base = w * 64;
        if word.count_ones() >= 16 {
            let lanes = (rows - base).min(64);
            let whole = lanes / 8;
            for b in 0..whole {
                let byte = (word >> (8 * b)) as u8;
                let at = base + 8 * b;
                for (k, &position) in BYTE_POSITIONS[byte as usize].iter().enumerate() {
                    // SAFETY: n counts the set bits before position at, so n + k <
                    // at + 8 <= rows.
                    unsafe { out.add(n + k).write(index(at + position as usize)) };
                }
                n += byte.count_ones() as usize;
            }
            for lane in whole * 8..lanes {
                // SAFETY: n counts the set bits before position base + lane < rows.
                unsafe { out.add(n).write(index(base + lane)) };
                n += (word >> lane) as usize & 1;
            }
        } else {
            let mut bits = word;
            while bits != 0 {
                // SAFETY: n counts the set bits before this one, fewer than `rows`.
                unsafe {
                    out.add(n)
                        .write(index(base + bits.trailing_zeros() as usize))
                };
                n += 1;
                bits &= bits - 1;
            }
        }
    }
}

/// For each byte, the positions of its set bits in order, then zeroes.
static BYTE_POSITIONS: [[u8; 8]; 256] = byte_positions();

const fn byte_positions() -> [[u8; 8]; 256] {
    let mut table = [[0u8; 8]; 256];
    let mut byte = 0;
    while byte < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if byte >> bit & 1 == 1 {
                table[byte][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        byte += 1;
    }
    table
}

/// Target machines for the host, by code generation level: one is taken for each
/// compilation and put back after, so concurrent compilations never share one
/// (a `TargetMachine` is not safe for concurrent use) and none is built per kernel.
struct Machine(TargetMachine);

// SAFETY: a TargetMachine has no thread affinity; the pool hands each one to a single
// thread at a time.
unsafe impl Send for Machine {}

/// How many idle machines the pool keeps per level.
const MAX_IDLE_MACHINES: usize = 8;

static MACHINES: [Mutex<Vec<Machine>>; 4] = [
    Mutex::new(Vec::new()),
    Mutex::new(Vec::new()),
    Mutex::new(Vec::new()),
    Mutex::new(Vec::new()),
];

fn pool(level: OptimizationLevel) -> &'static Mutex<Vec<Machine>> {
    &MACHINES[level as usize]
}

fn host_machine(level: OptimizationLevel) -> Result<Machine, CodegenError> {
    orc::initialize().map_err(CodegenError)?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| CodegenError(e.to_string()))?;
    let (cpu, features) = host_cpu();
    // The large code model: the JIT places code and constants wherever it finds
    // memory, so no reference may assume they are within 2 GiB of each other.
    target
        .create_target_machine(
            &triple,
            &cpu,
            &features,
            level,
            RelocMode::Static,
            CodeModel::Large,
        )
        .map(Machine)
        .ok_or_else(|| CodegenError("no target machine for the host".into()))
}

/// Runs `f` with a target machine of `level` for the host.
fn with_machine<T>(
    level: OptimizationLevel,
    f: impl FnOnce(&TargetMachine) -> Result<T, CodegenError>,
) -> Result<T, CodegenError> {
    let idle = pool(level).lock().unwrap_or_else(|p| p.into_inner()).pop();
    let machine = match idle {
        Some(m) => m,
        None => host_machine(level)?,
    };
    let result = f(&machine.0);
    let mut idle = pool(level).lock().unwrap_or_else(|p| p.into_inner());
    if idle.len() < MAX_IDLE_MACHINES {
        idle.push(machine);
    }
    result
}

/// The host CPU's name and feature string, as the kernels are compiled for.
pub fn host_cpu() -> (String, String) {
    (
        TargetMachine::get_host_cpu_name().to_string(),
        TargetMachine::get_host_cpu_features().to_string(),
    )
}

/// Compiles a program for the host CPU into object code (not loaded).
pub fn compile_object(program: &Program, options: CompileOptions) -> Result<Object, CodegenError> {
    program.validate().map_err(CodegenError)?;
    let key = KernelKey::new(program, options.pipeline);
    with_machine(options.pipeline.codegen_level(), |machine| {
        let context = Context::create();
        let start = Instant::now();
        let module = context.create_module("broadhead");
        module.set_triple(&machine.get_triple());
        module.set_data_layout(&machine.get_target_data().get_data_layout());
        let (cpu, features) = host_cpu();
        Emitter::emit(
            &context,
            &module,
            program,
            &key.symbol(),
            (&cpu, &features),
            options.pipeline.one_body(&features),
        )
        .map_err(|e| CodegenError(e.0))?;
        module
            .verify()
            .map_err(|e| CodegenError(format!("invalid IR: {e}")))?;
        let ir = options
            .explain
            .then(|| module.print_to_string().to_string());
        let t_ir = start.elapsed();

        let start = Instant::now();
        let pass_options = PassBuilderOptions::create();
        pass_options.set_loop_vectorization(true);
        pass_options.set_loop_slp_vectorization(true);
        pass_options.set_loop_unrolling(true);
        module
            .run_passes(options.pipeline.passes(), machine, pass_options)
            .map_err(|e| CodegenError(format!("optimization: {e}")))?;
        let t_opt = start.elapsed();

        let explain = match ir {
            Some(ir) => {
                let optimized_ir = module.print_to_string().to_string();
                let asm = machine
                    .write_to_memory_buffer(&module, FileType::Assembly)
                    .map_err(|e| CodegenError(format!("assembly: {e}")))?;
                let assembly = String::from_utf8_lossy(asm.as_slice()).into_owned();
                Some(Explain {
                    ir,
                    optimized_ir,
                    assembly,
                })
            }
            None => None,
        };

        let start = Instant::now();
        let object = machine
            .write_to_memory_buffer(&module, FileType::Object)
            .map_err(|e| CodegenError(format!("machine code: {e}")))?;
        let bytes = object.as_slice().to_vec();
        let t_codegen = start.elapsed();
        Ok(Object {
            key,
            bytes,
            timings: CompileTimings {
                ir: t_ir,
                optimize: t_opt,
                codegen: t_codegen,
                link: Duration::ZERO,
                from_disk_cache: false,
            },
            explain,
        })
    })
}

/// The compiler-rt functions LLVM calls for 128-bit `sdiv` and `srem` (x86-64 has
/// no such instruction), defined for the kernels that divide 128-bit values: a
/// Rust binary's copies of them are not exported to the JIT's symbol lookup.
const WIDE_DIVISION: [(&str, extern "C" fn(i128, i128) -> i128); 2] =
    [("__divti3", wide_div), ("__modti3", wide_rem)];

/// `a / b` truncated, as compiler-rt's `__divti3`. Kernels never divide by zero nor
/// `i128::MIN` by -1 (they divide by 1 in those lanes, which are errors or NULL);
/// should they, the result is 0 or wraps rather than unwinding out of a kernel.
extern "C" fn wide_div(a: i128, b: i128) -> i128 {
    if b == 0 {
        0
    } else {
        a.wrapping_div(b)
    }
}

/// `a % b` with the sign of `a`, as compiler-rt's `__modti3` (see [`wide_div`]).
extern "C" fn wide_rem(a: i128, b: i128) -> i128 {
    if b == 0 {
        0
    } else {
        a.wrapping_rem(b)
    }
}

/// The helpers `program`'s code calls, by symbol, with their addresses here.
fn helpers(program: &Program) -> Vec<(&'static str, usize)> {
    let mut out = Vec::new();
    for node in &program.nodes {
        match node {
            Node::Helper { helper, .. }
            | Node::Call {
                callee: Callee::Helper { helper, .. },
                ..
            } => out.push((helper.name, helper.addr)),
            Node::InSet { .. } => {
                let lookup: unsafe extern "C" fn(*const InSet, *const u64) -> u64 = in_set_lookup;
                out.push((IN_SET_LOOKUP, lookup as usize));
            }
            Node::Arith(ArithOp::Div | ArithOp::Rem, l, _)
                if program.type_of(*l) == PType::I128 =>
            {
                out.extend(WIDE_DIVISION.iter().map(|&(name, f)| (name, f as usize)));
            }
            _ => {}
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Loads object code compiled from `program` (by [`compile_object`], in this process
/// or, with an equal [`KernelKey`], another) into the JIT.
///
/// Fails, leaving nothing loaded, if the bytes are not an object file for this host
/// that defines the key's kernel; a caller reading them from disk recompiles then.
pub fn load(program: &Program, object: Object) -> Result<Kernel, CodegenError> {
    let start = Instant::now();
    let code =
        orc::load(&object.key.symbol(), &object.bytes, &helpers(program)).map_err(CodegenError)?;
    // SAFETY: `addr` is the address of the function emitted with exactly this
    // signature (see emit.rs) under the key's symbol; `code` keeps it loaded for as
    // long as the kernel lives.
    let func: KernelFn = unsafe { std::mem::transmute::<usize, KernelFn>(code.addr) };
    Ok(Kernel {
        func,
        _code: code,
        key: object.key,
        timings: CompileTimings {
            link: start.elapsed(),
            ..object.timings
        },
        explain: object.explain,
    })
}

/// Compiles a program for the host CPU and loads it.
pub fn compile(program: &Program, options: CompileOptions) -> Result<Kernel, CodegenError> {
    load(program, compile_object(program, options)?)
}

/// Sets up LLVM's native target and the JIT now, once per process (later calls
/// return at once), instead of in the first compile or load: about a millisecond
/// that a program can spend on a thread of its own while it does other work (the
/// `broadhead` command does it while it opens its input).
pub fn initialize() -> Result<(), CodegenError> {
    orc::initialize().map_err(CodegenError)
}

/// How many kernels' machine code is loaded in this process (kernels sharing code
/// count once): what dropping kernels must bring back down.
pub fn loaded_kernels() -> usize {
    orc::loaded()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{ArithOp, CmpOp, InputSpec, Mode, Node, PType};

    /// `x > p` over one `f64` column, for a filter.
    fn greater_than() -> Program {
        Program {
            nodes: vec![Node::Input(0), Node::Param(0), Node::Cmp(CmpOp::Gt, 0, 1)],
            inputs: vec![InputSpec::new(PType::F64)],
            params: vec![PType::F64],
            outputs: vec![2],
            mode: Mode::Filter,
        }
    }

    /// How many of 0.0, 1.0, …, 99.0 exceed 41.5, by `kernel`.
    fn count(kernel: &Kernel) -> usize {
        let xs: Vec<f64> = (0..100).map(f64::from).collect();
        let slot = Slot {
            values: xs.as_ptr().cast(),
            validity: std::ptr::null(),
            data: std::ptr::null(),
        };
        let mut selected = vec![0u32; xs.len()];
        let out = OutSlot {
            values: selected.as_mut_ptr().cast(),
            validity: std::ptr::null_mut(),
        };
        // SAFETY: one f64 input of 100 rows without validity, one f64 parameter, room
        // for 100 u32 indices (mode 4); the kernel calls no helper.
        unsafe {
            kernel.run(
                &[slot],
                &[41.5f64.to_bits()],
                xs.len(),
                &[out],
                4,
                std::ptr::null_mut(),
            )
        }
        .expect("no error rows")
    }

    /// The rows of `xs` above `threshold` selected by `kernel` in `mode` (2, 4, 8:
    /// row indices of that width; 0: one bit per row), checking that nothing is
    /// written past the `xs.len()` entries (or words) the kernel may use.
    fn selected(kernel: &Kernel, xs: &[f64], threshold: f64, mode: u64) -> Vec<usize> {
        const SENTINEL: u8 = 0xA5;
        let width = if mode == 0 { 8 } else { mode as usize };
        let room = if mode == 0 {
            xs.len().div_ceil(64)
        } else {
            xs.len()
        };
        // Room for the kernel and 64 bytes after it that must stay untouched, in
        // 8-byte words so that every index width is aligned.
        let mut words = vec![u64::from_ne_bytes([SENTINEL; 8]); (room * width).div_ceil(8) + 8];
        let slot = Slot {
            values: xs.as_ptr().cast(),
            validity: std::ptr::null(),
            data: std::ptr::null(),
        };
        let outs = [OutSlot {
            values: words.as_mut_ptr().cast(),
            validity: std::ptr::null_mut(),
        }];
        // SAFETY: one f64 input of xs.len() rows without validity, one f64 parameter,
        // room for xs.len() indices of the mode's width (mode 0: a bit per row in
        // ceil(rows / 64) 64-bit words); the kernel calls no helper.
        let n = unsafe {
            kernel.run(
                &[slot],
                &[threshold.to_bits()],
                xs.len(),
                &outs,
                mode,
                std::ptr::null_mut(),
            )
        }
        .expect("no error rows");
        let out: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
        assert!(
            out[room * width..].iter().all(|&b| b == SENTINEL),
            "{} rows, mode {mode}: written past the buffer",
            xs.len()
        );
        let rows: Vec<usize> = if mode == 0 {
            (0..xs.len())
                .filter(|&i| out[i / 8] >> (i % 8) & 1 == 1)
                .collect()
        } else {
            (0..n)
                .map(|k| {
                    let mut bytes = [0u8; 8];
                    bytes[..width].copy_from_slice(&out[k * width..(k + 1) * width]);
                    u64::from_le_bytes(bytes) as usize
                })
                .collect()
        };
        assert_eq!(rows.len(), n, "{} rows, mode {mode}: count", xs.len());
        rows
    }

    #[test]
    fn the_error_exit_and_the_wide_multiply_are_marked_cold() {
        // `x * 3 + y` on BIGINT: a narrow multiply with a checked one beside it, and
        // an error exit for overflowing rows.
        let program = Program {
            nodes: vec![
                Node::Input(0),
                Node::Const(PType::I64, 3),
                Node::Arith(ArithOp::Mul, 0, 1),
                Node::Input(1),
                Node::Arith(ArithOp::Add, 2, 3),
            ],
            inputs: vec![InputSpec::new(PType::I64), InputSpec::new(PType::I64)],
            params: vec![],
            outputs: vec![4],
            mode: Mode::Project,
        };
        let options = CompileOptions {
            explain: true,
            pipeline: Pipeline::Quick,
        };
        let object = compile_object(&program, options).unwrap();
        let ir = &object.explain.as_ref().unwrap().ir;
        let weights_of = |branch: &str| {
            let line = ir
                .lines()
                .find(|l| l.contains(branch))
                .unwrap_or_else(|| panic!("no `{branch}` in\n{ir}"));
            let id = line.rsplit_once("!prof ").map(|(_, id)| id.trim());
            let id = id.unwrap_or_else(|| panic!("no weights on `{line}`"));
            ir.lines()
                .find(|l| l.starts_with(&format!("{id} = ")))
                .unwrap_or_else(|| panic!("no {id} in\n{ir}"))
                .to_string()
        };
        let checked = weights_of("label %mul_checked, label %mul_narrow");
        assert!(checked.contains("i32 1, i32 2000"), "{checked}");
        let fail = weights_of("label %fail, label %ok");
        assert!(fail.contains("i32 1, i32 2000"), "{fail}");
    }

    #[test]
    fn fixed_width_columns_are_prefetched_ahead_unless_a_string_column_is_read() {
        let ir = |program: &Program| {
            let options = CompileOptions {
                explain: true,
                pipeline: Pipeline::O3,
            };
            let object = compile_object(program, options).unwrap();
            object.explain.unwrap().ir
        };
        let prefetches = |ir: &str| {
            ir.lines()
                .filter(|l| l.contains("call void @llvm.prefetch"))
                .count()
        };
        // `x > $1` on DOUBLE: 128 bytes a block, two lines, each prefetched
        // PREFETCH_AHEAD bytes ahead, in the full and the tail block's code.
        let fixed = ir(&greater_than());
        assert_eq!(prefetches(&fixed), 4, "{fixed}");
        let ahead = crate::emit::PREFETCH_AHEAD;
        for at in [ahead, ahead + 64] {
            let addresses = fixed
                .lines()
                .filter(|l| {
                    // `i8* %p` on LLVM 14, `ptr %p` on LLVM 15+.
                    l.contains("getelementptr i8, ") && l.ends_with(&format!("i64 {at}"))
                })
                .count();
            assert_eq!(addresses, 2, "{at} in\n{fixed}");
        }
        // The same with a VARCHAR column beside it: none.
        let mut with_string = greater_than();
        with_string.inputs.insert(0, InputSpec::new(PType::Str));
        with_string.nodes = vec![Node::Input(1), Node::Param(0), Node::Cmp(CmpOp::Gt, 0, 1)];
        let with_string = ir(&with_string);
        assert_eq!(prefetches(&with_string), 0, "{with_string}");
    }

    #[test]
    fn every_pipeline_selects_the_same_rows_at_every_batch_length() {
        let program = greater_than();
        for pipeline in [Pipeline::O3, Pipeline::Fast, Pipeline::Quick] {
            let options = CompileOptions {
                explain: true,
                pipeline,
            };
            let object = compile_object(&program, options).unwrap();
            let ir = &object.explain.as_ref().unwrap().ir;
            // One masked body for every block: no separate tail block.
            let one_body = pipeline == Pipeline::Quick && host_cpu().1.contains("+avx512f");
            assert_eq!(ir.contains("tail_check"), !one_body, "{pipeline:?}");
            let kernel = load(&program, object).unwrap();
            for rows in (0..=70).chain([127, 128, 129, 1000]) {
                let xs: Vec<f64> = (0..rows).map(|i| ((i * 37) % 100) as f64).collect();
                // 58% of the rows (dense words: every position written), 2% (sparse
                // words: one trailing-zero count per selected row), none and all.
                for threshold in [41.5, 97.5, 100.0, -1.0] {
                    let expected: Vec<usize> = (0..rows).filter(|&i| xs[i] > threshold).collect();
                    for mode in [0, 2, 4, 8] {
                        assert_eq!(
                            selected(&kernel, &xs, threshold, mode),
                            expected,
                            "{pipeline:?}, {rows} rows, > {threshold}, mode {mode}"
                        );
                    }
                }
            }
        }
    }

    /// The scratch mask words are reused from call to call: a batch after a longer
    /// one selects its own rows only, and writes no index past them.
    #[test]
    fn a_batch_after_a_longer_one_selects_only_its_own_rows() {
        let program = greater_than();
        let options = CompileOptions::default();
        let kernel = load(&program, compile_object(&program, options).unwrap()).unwrap();
        // Batches of up to `STACK_WORDS` words take words on the stack, not zeroed
        // (and likely where the longer batch's were); longer ones reuse the thread's
        // words, whose last one holds the longer batch's bits.
        for base in [0, STACK_WORDS * 64] {
            // Rows base + 60..63 selected: a word of few bits, expanded one bit at a
            // time.
            let ones = base + 60..base + 64;
            let long: Vec<f64> = (0..base + 200)
                .map(|i| if ones.contains(&i) { 1.0 } else { 0.0 })
                .collect();
            for rows in [1, 10, 16, 17, 47, 48, 59, 61, 64] {
                assert_eq!(
                    selected(&kernel, &long, 0.5, 4),
                    ones.clone().collect::<Vec<_>>()
                );
                // Its first `base` rows selected: an index for a stale bit would be
                // written past the room for `base + rows` indices.
                let short: Vec<f64> = (0..base + rows)
                    .map(|i| if i < base { 1.0 } else { 0.0 })
                    .collect();
                for mode in [2, 4, 8] {
                    assert_eq!(
                        selected(&kernel, &short, 0.5, mode),
                        (0..base).collect::<Vec<_>>(),
                        "{base} + {rows} rows, mode {mode}"
                    );
                }
            }
        }
    }

    /// A mask word read as its four blocks is the word read whole.
    #[test]
    fn a_word_reassembled_from_its_blocks_is_the_word() {
        for word in [0, 1, 1 << 16, 1 << 63, 0x0123_4567_89ab_cdef, u64::MAX] {
            assert_eq!(reassembled(&word), word, "{word:#x}");
        }
    }

    #[test]
    fn a_batch_too_large_to_keep_its_scratch_words_selects_every_row() {
        let program = greater_than();
        let options = CompileOptions {
            explain: false,
            pipeline: Pipeline::Quick,
        };
        let kernel = load(&program, compile_object(&program, options).unwrap()).unwrap();
        let rows = (MAX_KEPT_WORDS + 1) * 64 + 7;
        let xs: Vec<f64> = (0..rows).map(|i| ((i * 37) % 100) as f64).collect();
        let expected: Vec<usize> = (0..rows).filter(|&i| xs[i] > 97.5).collect();
        assert_eq!(selected(&kernel, &xs, 97.5, 8), expected);
        let kept = MASK_WORDS.with(|words| words.borrow().capacity());
        assert!(kept <= MAX_KEPT_WORDS, "kept {kept} words");
    }

    #[test]
    fn one_program_loaded_twice_shares_its_code_and_is_loaded_again_after_dropping() {
        let program = greater_than();
        let object = compile_object(&program, CompileOptions::default()).unwrap();
        assert!(object.bytes.starts_with(b"\x7fELF") || !cfg!(target_os = "linux"));
        let first = load(&program, object.clone()).unwrap();
        let second = load(&program, object.clone()).unwrap();
        assert_eq!(
            first.func as usize, second.func as usize,
            "one copy of the code"
        );
        assert_eq!((count(&first), count(&second)), (58, 58));
        drop((first, second));
        // The symbol was freed with the code: defining it again works.
        let again = load(&program, object).unwrap();
        assert_eq!(count(&again), 58);
    }

    #[test]
    fn bytes_that_are_not_the_keys_object_code_fail_to_load_and_leave_nothing_behind() {
        let program = greater_than();
        let mut object = compile_object(&program, CompileOptions::default()).unwrap();
        let good = object.bytes.clone();
        object.bytes = b"not an object file".to_vec();
        assert!(load(&program, object.clone()).is_err());
        object.bytes = good[..good.len() / 2].to_vec();
        assert!(load(&program, object.clone()).is_err());
        // Object code of another program does not define this key's symbol.
        let mut other = greater_than();
        other.nodes[2] = Node::Cmp(CmpOp::Lt, 0, 1);
        object.bytes = compile_object(&other, CompileOptions::default())
            .unwrap()
            .bytes;
        assert!(load(&program, object.clone()).is_err());
        object.bytes = good;
        assert_eq!(count(&load(&program, object).unwrap()), 58);
    }

    #[test]
    fn threads_compiling_loading_and_dropping_one_program_agree() {
        let program = greater_than();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for i in 0..40 {
                        let pipeline = [Pipeline::Fast, Pipeline::O3, Pipeline::Quick][i % 3];
                        let options = CompileOptions {
                            explain: false,
                            pipeline,
                        };
                        let kernel = compile(&program, options).unwrap();
                        assert_eq!(count(&kernel), 58);
                    }
                });
            }
        });
    }

    #[test]
    fn keys_depend_on_the_program_and_pipeline_and_helper_names_not_addresses() {
        let program = greater_than();
        let key = KernelKey::new(&program, Pipeline::O3);
        assert_eq!(key, KernelKey::new(&program.clone(), Pipeline::O3));
        assert_ne!(key, KernelKey::new(&program, Pipeline::Fast));
        assert_ne!(key, KernelKey::new(&program, Pipeline::Quick));
        let mut other = program.clone();
        other.inputs[0].nullable = true;
        assert_ne!(key, KernelKey::new(&other, Pipeline::O3));
        assert_eq!(key.hex().len(), 64);
        // A helper is named by its symbol: its address differs between processes.
        let with_helper = |name: &'static str, addr: usize| Program {
            nodes: vec![
                Node::Input(0),
                Node::Helper {
                    helper: crate::program::Helper { name, addr },
                    state: 0,
                    args: vec![0],
                    out: PType::Bool,
                    quick: None,
                },
            ],
            inputs: vec![InputSpec::new(PType::Str)],
            params: vec![PType::U64],
            outputs: vec![1],
            mode: Mode::Filter,
        };
        let key = |p: &Program| KernelKey::new(p, Pipeline::O3);
        assert_eq!(key(&with_helper("h", 1)), key(&with_helper("h", 2)));
        assert_ne!(key(&with_helper("h", 1)), key(&with_helper("g", 1)));
    }
}
