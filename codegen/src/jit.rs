//! Compiling a program to machine code, and owning that code.
//!
//! Each kernel gets its own LLVM context and MCJIT execution engine. The engine is
//! not `Send` (it holds an `Rc`) and borrows the context, so [`JitOwner`] keeps both
//! together, never touches them after compilation, and drops them together, engine
//! first. That is what makes [`Kernel`] `Send + Sync`: after compilation the only
//! thing used is a function pointer to immutable, re-entrant machine code.

use std::mem::ManuallyDrop;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use inkwell::context::Context;
use inkwell::execution_engine::ExecutionEngine;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine,
};
use inkwell::OptimizationLevel;

use crate::emit::{Emitter, KERNEL_NAME};
use crate::program::{OutSlot, Program, Slot};

/// Why compilation failed (always a bug in the caller or in Broadhead).
#[derive(Debug, thiserror::Error)]
#[error("code generation failed: {0}")]
pub struct CodegenError(pub String);

/// The generated function's type (see [`crate::emit`] for the ABI).
pub type KernelFn = unsafe extern "C" fn(
    *const Slot,
    *const u64,
    u64,
    *const OutSlot,
    u64,
    *mut u64,
    *mut u8,
) -> i64;

/// Which optimization pipeline compiles a kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Pipeline {
    /// The new pass manager's `default<O3>` and aggressive code generation.
    #[default]
    O3,
    /// The passes that matter for already-vectorized kernels (SROA, early CSE,
    /// instcombine, LICM, GVN, CFG simplification) and code generation at `-O1`:
    /// several times cheaper to compile.
    Fast,
}

impl Pipeline {
    fn passes(self) -> &'static str {
        match self {
            Pipeline::O3 => "default<O3>",
            Pipeline::Fast => concat!(
                "function(sroa,early-cse<memssa>,instcombine,simplifycfg,",
                "loop-mssa(licm),gvn,instcombine,simplifycfg)"
            ),
        }
    }

    fn codegen_level(self) -> OptimizationLevel {
        match self {
            Pipeline::O3 => OptimizationLevel::Aggressive,
            Pipeline::Fast => OptimizationLevel::Less,
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
    /// The O3 pipeline.
    pub optimize: Duration,
    /// Machine-code emission (MCJIT).
    pub codegen: Duration,
}

/// The text forms of a compiled kernel.
#[derive(Debug, Clone, Default)]
pub struct Explain {
    /// LLVM IR as generated.
    pub ir: String,
    /// LLVM IR after the O3 pipeline.
    pub optimized_ir: String,
    /// Native assembly for the host CPU.
    pub assembly: String,
}

/// The LLVM state behind a kernel's machine code.
struct JitOwner {
    engine: ManuallyDrop<ExecutionEngine<'static>>,
    context: ManuallyDrop<Box<Context>>,
}

impl Drop for JitOwner {
    fn drop(&mut self) {
        // SAFETY: the engine borrows the context, so it goes first; neither is used
        // again. Both were created for this owner alone.
        unsafe {
            ManuallyDrop::drop(&mut self.engine);
            ManuallyDrop::drop(&mut self.context);
        }
    }
}

// SAFETY: a JitOwner is never used after construction except to be dropped, which
// happens once, by whichever thread holds the last reference. Its context is private
// to it (LLVM allows independent contexts on different threads), and the only `Rc`
// inside the engine has no other clone left once `compile` returns (the module's
// handle is dropped there), so no reference count is shared between threads.
unsafe impl Send for JitOwner {}
// SAFETY: as above: no method reads or writes the owner through a shared reference.
unsafe impl Sync for JitOwner {}

/// A compiled kernel: a function pointer and the machine code it points into.
pub struct Kernel {
    func: KernelFn,
    _owner: JitOwner,
    /// Phase timings of its compilation.
    pub timings: CompileTimings,
    /// IR and assembly, when compiled with [`CompileOptions::explain`].
    pub explain: Option<Explain>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("timings", &self.timings)
            .finish_non_exhaustive()
    }
}

impl Kernel {
    /// Runs the kernel.
    ///
    /// Returns the number of selected rows (filters) or 0 (projections), or
    /// `Err(row)` for the first row whose value raised an error.
    ///
    /// # Safety
    /// The buffers must match the program the kernel was compiled from:
    /// `inputs` has one [`Slot`] per program input, each pointing at `rows` values of
    /// the input's type (words: `ceil(rows / 64)`), with a validity pointer exactly
    /// for the inputs compiled as nullable; `params` has one 8-byte value per
    /// parameter (pointers to helper state must stay valid during the call); for a
    /// filter, `outs[0].values` has room for `rows` indices of the `mode`'s width
    /// (mode 0: `ceil(rows / 64)` words); for a projection, one [`OutSlot`] per
    /// output with room for `rows` values (strings: `2 * rows` `u64`s) and
    /// `ceil(rows / 64)` validity words. `ctx` is what the program's call helpers
    /// expect (it is passed to them untouched).
    pub unsafe fn run(
        &self,
        inputs: &[Slot],
        params: &[u64],
        rows: usize,
        outs: &[OutSlot],
        mode: u64,
        ctx: *mut u8,
    ) -> Result<usize, usize> {
        let mut err_row = 0u64;
        // SAFETY: the caller upholds the contract above, which is what the generated
        // code relies on; the code was generated for this signature.
        let n = unsafe {
            (self.func)(
                inputs.as_ptr(),
                params.as_ptr(),
                rows as u64,
                outs.as_ptr(),
                mode,
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

static LLVM_LOCK: Mutex<()> = Mutex::new(());

fn host_machine() -> Result<TargetMachine, CodegenError> {
    Target::initialize_native(&InitializationConfig::default()).map_err(CodegenError)?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| CodegenError(e.to_string()))?;
    let cpu = TargetMachine::get_host_cpu_name().to_string();
    let features = TargetMachine::get_host_cpu_features().to_string();
    target
        .create_target_machine(
            &triple,
            &cpu,
            &features,
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::JITDefault,
        )
        .ok_or_else(|| CodegenError("no target machine for the host".into()))
}

/// The host CPU's name and feature string, as the kernels are compiled for.
pub fn host_cpu() -> (String, String) {
    (
        TargetMachine::get_host_cpu_name().to_string(),
        TargetMachine::get_host_cpu_features().to_string(),
    )
}

/// Compiles a program for the host CPU.
pub fn compile(program: &Program, options: CompileOptions) -> Result<Kernel, CodegenError> {
    program.validate().map_err(CodegenError)?;
    // Target registration and engine creation touch LLVM globals: one at a time.
    let _guard = LLVM_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let machine = host_machine()?;
    let context = Box::new(Context::create());
    // SAFETY: the context lives in a Box that JitOwner keeps (and drops last), so its
    // address stays valid for as long as anything borrowing it exists; the 'static
    // lifetime never escapes this module.
    let ctx: &'static Context = unsafe { &*(context.as_ref() as *const Context) };
    let start = Instant::now();
    let module = ctx.create_module("broadhead");
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    let (cpu, features) = host_cpu();
    let helpers =
        Emitter::emit(ctx, &module, program, &cpu, &features).map_err(|e| CodegenError(e.0))?;
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
        .run_passes(options.pipeline.passes(), &machine, pass_options)
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
    let engine = module
        .create_jit_execution_engine(options.pipeline.codegen_level())
        .map_err(|e| CodegenError(format!("execution engine: {e}")))?;
    for (f, addr) in helpers {
        engine.add_global_mapping(&f, addr);
    }
    let addr = engine
        .get_function_address(KERNEL_NAME)
        .map_err(|e| CodegenError(format!("kernel symbol: {e:?}")))?;
    let t_codegen = start.elapsed();
    drop(module);
    // SAFETY: `addr` is the address of the function emitted with exactly this
    // signature (see emit.rs), and the engine that owns the code lives in the owner.
    let func: KernelFn = unsafe { std::mem::transmute::<usize, KernelFn>(addr) };
    Ok(Kernel {
        func,
        _owner: JitOwner {
            engine: ManuallyDrop::new(engine),
            context: ManuallyDrop::new(context),
        },
        timings: CompileTimings {
            ir: t_ir,
            optimize: t_opt,
            codegen: t_codegen,
        },
        explain,
    })
}
