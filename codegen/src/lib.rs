//! `broadhead-codegen`: Broadhead's LLVM back end.
//!
//! It compiles a [`Program`] — a small typed DAG of vector arithmetic, comparisons,
//! Kleene logic and helper calls over columns — into a native kernel for the host
//! CPU, and owns the machine code. It knows nothing of SQL: the `broadhead` crate
//! lowers SQL expressions into programs.

#![warn(missing_docs)]

// The LLVM version is chosen by a cargo feature: `llvm14` (the default) or `llvm19`.
#[cfg(all(feature = "llvm14", feature = "llvm19"))]
compile_error!(
    "features `llvm14` and `llvm19` are exclusive: for LLVM 19 build with \
     `--no-default-features --features llvm19` (plus `parquet` for the `broadhead` crate)"
);
#[cfg(not(any(feature = "llvm14", feature = "llvm19")))]
compile_error!(
    "no LLVM version chosen: enable feature `llvm14` (the default) or `llvm19` \
     (`--no-default-features --features llvm19`)"
);

// The one place the LLVM C API's crate is named: `llvm_sys` is the one that goes
// with the chosen LLVM (and with inkwell's feature).
#[cfg(feature = "llvm14")]
use llvm_sys_140 as llvm_sys;
#[cfg(all(feature = "llvm19", not(feature = "llvm14")))]
use llvm_sys_191 as llvm_sys;

mod division;
mod emit;
mod jit;
mod orc;
mod program;
mod ranges;

pub use division::DivisionMagic;
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
