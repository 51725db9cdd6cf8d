//! `broadhead-codegen`: Broadhead's LLVM back end.
//!
//! It compiles a [`Program`] — a small typed DAG of vector arithmetic, comparisons,
//! Kleene logic and helper calls over columns — into a native kernel for the host
//! CPU, and owns the machine code. It knows nothing of SQL: the `broadhead` crate
//! lowers SQL expressions into programs.

#![warn(missing_docs)]

mod emit;
mod jit;
mod orc;
mod program;
mod ranges;

pub use emit::LANES;
pub use jit::{
    compile, compile_object, host_cpu, initialize, load, loaded_kernels, CodegenError,
    CompileOptions, CompileTimings, Explain, Kernel, KernelFn, KernelKey, Object, Pipeline,
};
pub use program::{
    int_range, ArithOp, ByteLayout, CallArg, CallFn, CallOut, Callee, CaseMap, CmpOp, Find, Helper,
    HelperFn, InSet, InputSpec, Mode, Node, NodeId, OutSlot, PType, Program, QuickCheck, QuickTest,
    Slot, TruthTest,
};
