//! LLVM IR generation for a [`Program`].
//!
//! The kernel walks the batch [`LANES`] (16) rows at a time. Within a block every
//! value node is an LLVM vector `<16 x T>`, every boolean a pair of `i16` masks (TRUE
//! rows, FALSE rows; NULL is neither), validity an `i16` mask, and the rows that
//! raised errors an `i16` mask. Full blocks use plain vector loads; the last partial
//! block uses masked loads and stores, so nothing outside the batch is read or
//! written. The DAG is emitted twice (full block, tail block) with nodes shared
//! inside each, or, for a kernel compiled for
//! [`Pipeline::Quick`](crate::Pipeline::Quick) on an AVX-512 host, once: every block
//! then uses masked loads and stores (which AVX-512 does in one instruction), which
//! halves the code LLVM has to optimize and emit.
//!
//! Kernel signature:
//! `i64 kernel(Slot* inputs, i64* params, i64 rows, OutSlot* outs, i64* err_row, i8* ctx)`
//! returning the number of selected rows (filters), 0 (projections) or -1 after
//! storing the first failing row in `err_row`. A filter writes each block's mask of
//! selected rows into the result words (16 bits a block);
//! [`Kernel::run`](crate::Kernel::run) turns them into row indices when asked.
//! `ctx` is passed through to [`CallFn`](crate::CallFn) helpers (the arena that
//! computed strings live in).
//!
//! Function calls ([`Node::Call`]) to runtime helpers pass each argument block
//! through stack memory ([`CallArg`](crate::CallArg)): values (strings: addresses and lengths) and
//! a validity mask; the helper writes a block of results into a
//! [`CallOut`](crate::CallOut).
//!
//! # Start here
//!
//! [`Emitter::emit`] (this file) declares the kernel and sets up its state; the
//! other files each add the methods of one concern to [`Emitter`]:
//!
//! - `kernel_loop`: the loop over blocks and what one block does;
//! - `inputs`, `outputs`: reading a block of a column, writing a block's results;
//! - `node`: the dispatch from a [`Node`] to the file that emits it;
//! - `arith`, `speculation`: arithmetic and its overflow checks; 128-bit integers
//!   computed on 64-bit lanes when they fit;
//! - `compare`, `logic`, `cast`: comparisons and `IN`; Kleene logic, `CASE`,
//!   `COALESCE`; casts;
//! - `strings`, `quick`: string values read in place; string predicates decided
//!   in the kernel from each row's first bytes;
//! - `calls`: calls of string helpers, LLVM intrinsics and [`CallFn`](crate::CallFn)s;
//! - `ir`: the small typed helpers all of them use (constants, splats, masks).
//!
//! A node's value in a block is a [`V`]; the block being emitted is a [`Block`].

mod arith;
mod calls;
mod cast;
mod compare;
mod inputs;
mod ir;
mod kernel_loop;
mod logic;
mod node;
mod outputs;
mod quick;
mod speculation;
mod strings;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::{ArrayType, IntType, StructType};
use inkwell::values::{
    BasicValue, BasicValueEnum, FunctionValue, IntValue, PointerValue, VectorValue,
};

use crate::program::{Callee, Node, PType, Program};
use crate::ranges::{value_ranges, Range};

use ir::ptr_to;
use quick::{fast_gathers, Heads};

/// The symbol kernels call [`in_set_lookup`](crate::program::in_set_lookup) by.
pub(crate) const IN_SET_LOOKUP: &str = "broadhead_in_set_lookup";

/// Rows per block: the width of the vectors and of the masks.
///
/// 16 rows keep each vector operation to a few registers (4 AVX2 registers or 2
/// AVX-512 registers for doubles), which keeps machine-code emission fast and avoids
/// spills; Arrow's 64-bit bitmap words are read and written 16 bits at a time.
pub const LANES: u32 = 16;
const LOG2_LANES: u64 = LANES.trailing_zeros() as u64;

/// An IR-building failure (a bug: programs are validated first).
#[derive(Debug)]
pub struct EmitError(pub String);

impl From<BuilderError> for EmitError {
    fn from(e: BuilderError) -> Self {
        EmitError(format!("LLVM builder: {e:?}"))
    }
}

type R<T> = Result<T, EmitError>;

/// A node's value in one block.
#[derive(Clone, Copy)]
enum V<'ctx> {
    /// Values with optional validity (None: all valid) and error rows.
    Vals {
        v: VectorValue<'ctx>,
        valid: Option<IntValue<'ctx>>,
        err: Option<IntValue<'ctx>>,
    },
    /// Boolean as TRUE and FALSE masks.
    Bool {
        t: IntValue<'ctx>,
        f: IntValue<'ctx>,
        err: Option<IntValue<'ctx>>,
    },
    /// Strings: each lane's address and byte length (`<LANES x i64>` each).
    Str {
        ptr: VectorValue<'ctx>,
        len: VectorValue<'ctx>,
        valid: Option<IntValue<'ctx>>,
        err: Option<IntValue<'ctx>>,
    },
}

impl<'ctx> V<'ctx> {
    fn err(&self) -> Option<IntValue<'ctx>> {
        match self {
            V::Vals { err, .. } | V::Bool { err, .. } | V::Str { err, .. } => *err,
        }
    }
}

/// Stack memory for [`Node::Call`]s to helpers: `args + 1` value areas of `2 *
/// LANES` `i64`s (room for 128-bit values) and length areas of `LANES` `i64`s (the
/// last of each for the result), the [`CallArg`]
/// descriptors and the [`CallOut`](crate::CallOut); with the types they hold.
#[derive(Clone, Copy)]
struct CallMem<'ctx> {
    values: PointerValue<'ctx>,
    lens: PointerValue<'ctx>,
    args: PointerValue<'ctx>,
    out: PointerValue<'ctx>,
    values_ty: ArrayType<'ctx>,
    lens_ty: ArrayType<'ctx>,
    args_ty: ArrayType<'ctx>,
    arg_ty: StructType<'ctx>,
    out_ty: StructType<'ctx>,
}

/// The block being emitted.
struct Block<'ctx> {
    /// Block number (i64).
    index: IntValue<'ctx>,
    /// First row (i64).
    row0: IntValue<'ctx>,
    /// Mask of rows in the batch.
    active: IntValue<'ctx>,
    /// Whether the block is known, as it is emitted, to hold `LANES` rows of the
    /// batch (plain loads and stores); false for the tail block and for every block
    /// of a one-body kernel, whose loads and stores are masked by `active`.
    full: bool,
}

pub(crate) struct Emitter<'a, 'ctx> {
    ctx: &'ctx Context,
    module: &'a Module<'ctx>,
    b: Builder<'ctx>,
    prog: &'a Program,
    func: FunctionValue<'ctx>,
    i64t: IntType<'ctx>,
    /// The mask type: one bit per row of a block.
    mt: IntType<'ctx>,
    slot_ty: StructType<'ctx>,
    /// The type of the kernel's `outs` (an array of them).
    out_slot_ty: StructType<'ctx>,
    inputs: PointerValue<'ctx>,
    outs: PointerValue<'ctx>,
    err_row: PointerValue<'ctx>,
    params: Vec<Option<BasicValueEnum<'ctx>>>,
    helper_buf: PointerValue<'ctx>,
    count: PointerValue<'ctx>,
    /// The kernel's `ctx` argument, passed to call helpers.
    call_ctx: PointerValue<'ctx>,
    /// Stack memory for call helpers: argument blocks, their descriptors, the result.
    call_mem: Option<CallMem<'ctx>>,
    /// The number of rows of the batch (i64).
    total_rows: Option<IntValue<'ctx>>,
    /// Emit the expression once, for every block (masked), instead of a full-block
    /// copy and a tail copy.
    one_body: bool,
    /// What [`Emitter::heads`] read of the block being emitted, by slot: every
    /// quick check on a column shares it.
    heads: RefCell<HashMap<usize, Heads<'ctx>>>,
    /// By node: whether it is, or reads, a string predicate helper: the kernel calls
    /// it only for the rows whose value matters (`care`) that its quick check, if it
    /// has one ([`Node::Helper`]'s `quick`), leaves undecided.
    guarded: Vec<bool>,
    /// By node: how many times nodes (and the outputs) read it.
    uses: Vec<usize>,
    /// By node: the values an integer node holds in the rows that matter
    /// ([`ranges::value_ranges`]), so checks that cannot fail are left out.
    ranges: Vec<Option<Range>>,
    /// Float vectors that hold no NaN: the splats of float parameters (a NaN
    /// literal is a constant, [`Node::Param`]), whose NaN tests comparisons leave out.
    numbers: RefCell<HashSet<VectorValue<'ctx>>>,
    /// Prefetch the fixed-width columns ahead of each block: the program reads no
    /// string column ([`PREFETCH_AHEAD`]).
    prefetch: bool,
    /// The rows whose value matters in the operand of `AND`/`OR` being emitted: the
    /// block's, less those an earlier operand decided (`None`: the block's). A
    /// guarded helper is called only for undecided rows among them.
    care: Cell<Option<IntValue<'ctx>>>,
    /// By output of a projection: whether the code emitted so far stores its
    /// validity (`None`: not emitted yet). An output that no row can make NULL
    /// ([`V::Vals`] and [`V::Str`] without validity) is not given any: the kernel
    /// returns those outputs as a mask ([`Emitter::body`]).
    stores_validity: Vec<Option<bool>>,
    /// Emitting the 128-bit path of a block whose 64-bit form failed
    /// ([`Emitter::speculate`]): its nodes are not speculated again.
    wide_fallback: bool,
    /// Read the bytes at a block's string offsets with one vector gather rather
    /// than a load per row ([`fast_gathers`]).
    gathers: bool,
}

/// Outputs from this one on always get their validity stored: the mask a
/// projection kernel returns has a bit for each output before it (bit 63 stays
/// clear, so that the result is never taken for an error's -1).
pub(crate) const UNSTORED_VALIDITY_OUTPUTS: usize = 63;

/// How far ahead of a block, in bytes, a kernel prefetches each fixed-width
/// column it reads (one prefetch per 64-byte line of the block), when it reads no
/// string column. A kernel of little work per row over columns streamed from
/// memory otherwise waits on lines the hardware prefetcher asks for too late; with
/// string columns the per-row work dominates, and the prefetches made Q19's
/// predicate slower (docs/performance-notes.md, "Fixed-width columns prefetched
/// ahead").
pub(crate) const PREFETCH_AHEAD: u64 = 2048;

/// By node of `prog`: how many times nodes (and the outputs) read it.
fn uses(prog: &Program) -> Vec<usize> {
    let mut uses = vec![0; prog.nodes.len()];
    for o in prog
        .nodes
        .iter()
        .flat_map(Node::operands)
        .chain(prog.outputs.iter().copied())
    {
        if let Some(n) = uses.get_mut(o) {
            *n += 1;
        }
    }
    uses
}

/// By node of `prog`: whether it is, or reads, a string predicate helper.
fn guarded_helpers(prog: &Program) -> Vec<bool> {
    let mut guarded = Vec::with_capacity(prog.nodes.len());
    for node in &prog.nodes {
        let here = matches!(
            node,
            Node::Helper {
                out: PType::Bool,
                ..
            }
        ) || node
            .operands()
            .iter()
            .any(|&c| guarded.get(c) == Some(&true));
        guarded.push(here);
    }
    guarded
}

impl<'a, 'ctx> Emitter<'a, 'ctx> {
    /// Declares the kernel as `symbol` and emits its body into `module`. Helpers are
    /// declared by name (external symbols the JIT resolves when it links the code).
    /// With `one_body` the expression is emitted once, for every block, masked (for
    /// hosts whose masked loads and stores are single instructions: AVX-512).
    pub(crate) fn emit(
        ctx: &'ctx Context,
        module: &'a Module<'ctx>,
        prog: &'a Program,
        symbol: &str,
        (cpu, features): (&str, &str),
        one_body: bool,
    ) -> R<()> {
        let i8p = ptr_to(ctx, ctx.i8_type());
        let i64t = ctx.i64_type();
        let i64p = ptr_to(ctx, i64t);
        let slot_ty = ctx.opaque_struct_type("Slot");
        slot_ty.set_body(&[i8p.into(), i64p.into(), i8p.into()], false);
        let out_ty = ctx.opaque_struct_type("OutSlot");
        out_ty.set_body(&[i8p.into(), i64p.into()], false);
        let fn_ty = i64t.fn_type(
            &[
                ptr_to(ctx, slot_ty).into(),
                i64p.into(),
                i64t.into(),
                ptr_to(ctx, out_ty).into(),
                i64p.into(),
                i8p.into(),
            ],
            false,
        );
        let func = module.add_function(symbol, fn_ty, None);
        for (key, value) in [("target-cpu", cpu), ("target-features", features)] {
            func.add_attribute(
                AttributeLoc::Function,
                ctx.create_string_attribute(key, value),
            );
        }
        let enum_attr = |name: &str| -> Attribute {
            ctx.create_enum_attribute(Attribute::get_named_enum_kind_id(name), 0)
        };
        func.add_attribute(AttributeLoc::Function, enum_attr("nounwind"));
        for p in [0u32, 1, 3, 4] {
            func.add_attribute(AttributeLoc::Param(p), enum_attr("noalias"));
            func.add_attribute(AttributeLoc::Param(p), enum_attr("nocapture"));
        }
        let b = ctx.create_builder();
        let entry = ctx.append_basic_block(func, "entry");
        b.position_at_end(entry);
        let param = |i: u32| func.get_nth_param(i).expect("kernel parameter");
        let helper_buf = b.build_alloca(i64t.array_type(LANES), "helper_buf")?;
        if let Some(inst) = helper_buf.as_instruction_value() {
            inst.set_alignment(64)
                .map_err(|e| EmitError(e.to_string()))?;
        }
        let count = b.build_alloca(i64t, "count")?;
        b.build_store(count, i64t.const_zero())?;
        let most_args = prog
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Call {
                    callee: Callee::Helper { .. },
                    args,
                    ..
                } => Some(args.len()),
                _ => None,
            })
            .max();
        let call_mem = match most_args {
            Some(n) => {
                // Values take up to 16 bytes a lane (PType::I128), lengths 8.
                let values_area = i64t.array_type(2 * LANES).array_type(n as u32 + 1);
                let lens_area = i64t.array_type(LANES).array_type(n as u32 + 1);
                let values = b.build_alloca(values_area, "call_values")?;
                let lens = b.build_alloca(lens_area, "call_lens")?;
                for p in [values, lens] {
                    if let Some(inst) = p.as_instruction_value() {
                        inst.set_alignment(64)
                            .map_err(|e| EmitError(e.to_string()))?;
                    }
                }
                let arg_ty = ctx.opaque_struct_type("CallArg");
                arg_ty.set_body(&[i8p.into(), i64p.into(), i64t.into()], false);
                let out_ty = ctx.opaque_struct_type("CallOut");
                out_ty.set_body(&[i8p.into(), i64p.into(), i64t.into(), i64t.into()], false);
                let args_ty = arg_ty.array_type(n.max(1) as u32);
                let args = b.build_alloca(args_ty, "call_args")?;
                let out = b.build_alloca(out_ty, "call_out")?;
                Some(CallMem {
                    values,
                    lens,
                    args,
                    out,
                    values_ty: values_area,
                    lens_ty: lens_area,
                    args_ty,
                    arg_ty,
                    out_ty,
                })
            }
            None => None,
        };
        let mut e = Emitter {
            ctx,
            module,
            b,
            prog,
            func,
            i64t,
            mt: mask_type(ctx),
            slot_ty,
            out_slot_ty: out_ty,
            inputs: param(0).into_pointer_value(),
            outs: param(3).into_pointer_value(),
            err_row: param(4).into_pointer_value(),
            params: vec![None; prog.params.len()],
            helper_buf,
            count,
            call_ctx: param(5).into_pointer_value(),
            call_mem,
            total_rows: None,
            one_body,
            heads: RefCell::default(),
            guarded: guarded_helpers(prog),
            uses: uses(prog),
            ranges: value_ranges(prog),
            numbers: RefCell::new(HashSet::new()),
            care: Cell::new(None),
            prefetch: !prog.inputs.iter().any(|i| i.ty == PType::Str),
            stores_validity: vec![None; prog.outputs.len()],
            wide_fallback: false,
            gathers: fast_gathers(cpu, features),
        };
        e.load_params(param(1).into_pointer_value())?;
        e.body(param(2).into_int_value())
    }
}

/// The integer type of a block's masks.
fn mask_type(ctx: &Context) -> IntType<'_> {
    match LANES {
        8 => ctx.i8_type(),
        16 => ctx.i16_type(),
        32 => ctx.i32_type(),
        _ => ctx.i64_type(),
    }
}
