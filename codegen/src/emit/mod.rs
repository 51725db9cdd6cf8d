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

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicType, BasicTypeEnum, IntType, StructType, VectorType};
use inkwell::values::InstructionOpcode;
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, BasicValueEnum, FunctionValue, IntValue, PointerValue,
    VectorValue,
};
use inkwell::{AddressSpace, FloatPredicate, IntPredicate};

use crate::program::{
    int_range, ArithOp, ByteLayout, Callee, CaseMap, CmpOp, Find, Helper, Mode, Node, NodeId,
    PType, Program, QuickCheck, QuickTest, TruthTest,
};
use crate::ranges::{cannot_overflow, value_ranges, Range};

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

/// A comparison's raw mask, the operands' validity, and their errors.
type CmpParts<'ctx> = (
    IntValue<'ctx>,
    Option<IntValue<'ctx>>,
    Option<IntValue<'ctx>>,
    Option<IntValue<'ctx>>,
);

/// Stack memory for [`Node::Call`]s to helpers: `args + 1` value areas of `2 *
/// LANES` `i64`s (room for 128-bit values) and length areas of `LANES` `i64`s (the
/// last of each for the result), the [`CallArg`]
/// descriptors and the [`CallOut`](crate::CallOut).
#[derive(Clone, Copy)]
struct CallMem<'ctx> {
    values: PointerValue<'ctx>,
    lens: PointerValue<'ctx>,
    args: PointerValue<'ctx>,
    out: PointerValue<'ctx>,
    arg_ty: StructType<'ctx>,
    out_ty: StructType<'ctx>,
}

/// What a [`QuickCheck`] reads of a block's rows of one string column.
#[derive(Clone, Copy)]
struct Heads<'ctx> {
    /// Each row's length in bytes (`<LANES x i32>`).
    len: VectorValue<'ctx>,
    /// Each row's first four bytes, little-endian (`<LANES x i32>`); past the row's
    /// length they are zero when `padded`, else anything.
    head: VectorValue<'ctx>,
    /// Whether `head` is zero past each row's length (views).
    padded: bool,
    /// For views, their second halves (`<LANES x i64>`): bytes 4..12 of a value of
    /// up to 12 bytes.
    rest: Option<VectorValue<'ctx>>,
    /// For columns with offsets, each row's bytes 4..8 (`<LANES x i32>`, anything
    /// past the row's length).
    next: Option<VectorValue<'ctx>>,
    /// The rows whose length and bytes were read (`None`: every row); the other
    /// lanes hold anything.
    read: Option<IntValue<'ctx>>,
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

/// Whether the CPU's vector gathers beat a scalar load per lane: yes on Intel's
/// AVX2 and AVX-512 cores (the string heads of F7 and U1 took 0.55 and 0.3 of the
/// scalar loads' time on the Intel Xeon VM), no on AMD's Zen 1 to 3, whose gathers
/// are microcoded (on the AMD EPYC VM a gather left F7 at 0.83× arrow-rs streaming,
/// the scalar loads at 1.51×: docs/performance-notes.md, "F7").
fn fast_gathers(cpu: &str, features: &str) -> bool {
    features.contains("+avx2") && !matches!(cpu, "znver1" | "znver2" | "znver3")
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
        let i8p = ctx.i8_type().ptr_type(AddressSpace::default());
        let i64t = ctx.i64_type();
        let i64p = i64t.ptr_type(AddressSpace::default());
        let slot_ty = ctx.opaque_struct_type("Slot");
        slot_ty.set_body(&[i8p.into(), i64p.into(), i8p.into()], false);
        let out_ty = ctx.opaque_struct_type("OutSlot");
        out_ty.set_body(&[i8p.into(), i64p.into()], false);
        let fn_ty = i64t.fn_type(
            &[
                slot_ty.ptr_type(AddressSpace::default()).into(),
                i64p.into(),
                i64t.into(),
                out_ty.ptr_type(AddressSpace::default()).into(),
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
                out_ty.set_body(&[i8p.into(), i64p.into(), i64t.into()], false);
                let args = b.build_alloca(arg_ty.array_type(n.max(1) as u32), "call_args")?;
                let out = b.build_alloca(out_ty, "call_out")?;
                Some(CallMem {
                    values,
                    lens,
                    args,
                    out,
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

    // ----- types and small helpers -----

    fn scalar_ty(&self, t: PType) -> BasicTypeEnum<'ctx> {
        match t {
            PType::I8 | PType::U8 => self.ctx.i8_type().into(),
            PType::I16 | PType::U16 => self.ctx.i16_type().into(),
            PType::I32 | PType::U32 => self.ctx.i32_type().into(),
            PType::I64 | PType::U64 => self.i64t.into(),
            PType::I128 => self.ctx.i128_type().into(),
            PType::F32 => self.ctx.f32_type().into(),
            PType::F64 => self.ctx.f64_type().into(),
            PType::Bool => self.ctx.bool_type().into(),
            PType::Str | PType::Ptr => self.ctx.i8_type().ptr_type(AddressSpace::default()).into(),
        }
    }

    fn vec_ty(&self, t: PType) -> VectorType<'ctx> {
        match self.scalar_ty(t) {
            BasicTypeEnum::IntType(i) => i.vec_type(LANES),
            BasicTypeEnum::FloatType(f) => f.vec_type(LANES),
            BasicTypeEnum::PointerType(p) => p.vec_type(LANES),
            _ => unreachable!("scalar types are ints, floats or pointers"),
        }
    }

    /// The alignment of `t`'s values in memory: their width, but 8 bytes for
    /// [`PType::I128`] (an Arrow `IntervalMonthDayNano` buffer is only 8-aligned).
    fn align(t: PType) -> u32 {
        t.width().min(8)
    }

    fn c64(&self, v: u64) -> IntValue<'ctx> {
        self.i64t.const_int(v, false)
    }

    /// The mask with every row set.
    fn ones(&self) -> IntValue<'ctx> {
        self.mt.const_all_ones()
    }

    /// The empty mask.
    fn mzero(&self) -> IntValue<'ctx> {
        self.mt.const_zero()
    }

    fn intrinsic(&self, name: &str, types: &[BasicTypeEnum<'ctx>]) -> R<FunctionValue<'ctx>> {
        Intrinsic::find(name)
            .and_then(|i| i.get_declaration(self.module, types))
            .ok_or_else(|| EmitError(format!("intrinsic {name} not available")))
    }

    /// A conditional branch to `then` when `cond`, else to `otherwise`, marked as
    /// taken (almost) always one way: `likely_then` says which. The weights let
    /// the register allocator keep the hot path's values in registers and spill
    /// only around the cold one (an error exit, a rare slow path).
    fn branch_weighted(
        &self,
        cond: IntValue<'ctx>,
        then: BasicBlock<'ctx>,
        otherwise: BasicBlock<'ctx>,
        likely_then: bool,
    ) -> R<()> {
        let branch = self.b.build_conditional_branch(cond, then, otherwise)?;
        let (hot, cold) = (
            self.ctx.i32_type().const_int(2000, false),
            self.ctx.i32_type().const_int(1, false),
        );
        let (t, o) = if likely_then {
            (hot, cold)
        } else {
            (cold, hot)
        };
        let weights = self.ctx.metadata_node(&[
            self.ctx.metadata_string("branch_weights").into(),
            t.into(),
            o.into(),
        ]);
        branch
            .set_metadata(weights, self.ctx.get_kind_id("prof"))
            .map_err(|e| EmitError(e.to_string()))
    }

    fn call(
        &self,
        f: FunctionValue<'ctx>,
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> R<BasicValueEnum<'ctx>> {
        self.b
            .build_call(f, args, "")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| EmitError("call returned void".into()))
    }

    fn and(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.b.build_and(a, b, "")?)
    }
    fn or(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.b.build_or(a, b, "")?)
    }
    fn not(&self, a: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.b.build_not(a, "")?)
    }

    fn and_opt(
        &self,
        a: Option<IntValue<'ctx>>,
        b: Option<IntValue<'ctx>>,
    ) -> R<Option<IntValue<'ctx>>> {
        Ok(match (a, b) {
            (Some(a), Some(b)) => Some(self.and(a, b)?),
            (x, None) | (None, x) => x,
        })
    }

    fn or_opt(
        &self,
        a: Option<IntValue<'ctx>>,
        b: Option<IntValue<'ctx>>,
    ) -> R<Option<IntValue<'ctx>>> {
        Ok(match (a, b) {
            (Some(a), Some(b)) => Some(self.or(a, b)?),
            (x, None) | (None, x) => x,
        })
    }

    /// `<64 x i1>` → `i64` bitmask.
    fn to_mask(&self, v: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.b.build_bit_cast(v, self.mt, "mask")?.into_int_value())
    }

    /// `i64` bitmask → `<64 x i1>`.
    fn to_lanes(&self, m: IntValue<'ctx>) -> R<VectorValue<'ctx>> {
        Ok(self
            .b
            .build_bit_cast(m, self.ctx.bool_type().vec_type(LANES), "lanes")?
            .into_vector_value())
    }

    fn splat(&self, x: BasicValueEnum<'ctx>) -> R<VectorValue<'ctx>> {
        let ty = match x.get_type() {
            BasicTypeEnum::IntType(i) => i.vec_type(LANES),
            BasicTypeEnum::FloatType(f) => f.vec_type(LANES),
            other => return Err(EmitError(format!("cannot splat {other:?}"))),
        };
        let undef = ty.get_undef();
        let one = self
            .b
            .build_insert_element(undef, x, self.ctx.i32_type().const_zero(), "")?;
        let zeros = self.ctx.i32_type().vec_type(LANES).const_zero();
        Ok(self.b.build_shuffle_vector(one, undef, zeros, "splat")?)
    }

    fn const_vec(&self, t: PType, bits: u64) -> R<VectorValue<'ctx>> {
        let scalar: BasicValueEnum = match self.scalar_ty(t) {
            BasicTypeEnum::IntType(i) => i.const_int(bits, t.is_signed()).into(),
            BasicTypeEnum::FloatType(f) => {
                let v = if t == PType::F32 {
                    f32::from_bits(bits as u32) as f64
                } else {
                    f64::from_bits(bits)
                };
                f.const_float(v).into()
            }
            _ => return Err(EmitError(format!("no constant of {t:?}"))),
        };
        self.splat(scalar)
    }

    /// The lanes `picks` of `a` followed by `b` (`b` undefined when `None`), as
    /// LLVM's `shufflevector` with a constant mask.
    fn shuffle(
        &self,
        a: VectorValue<'ctx>,
        b: Option<VectorValue<'ctx>>,
        picks: impl IntoIterator<Item = u64>,
    ) -> R<VectorValue<'ctx>> {
        let i32t = self.ctx.i32_type();
        let mask: Vec<IntValue> = picks
            .into_iter()
            .map(|i| i32t.const_int(i, false))
            .collect();
        let b = b.unwrap_or_else(|| a.get_type().get_undef());
        Ok(self
            .b
            .build_shuffle_vector(a, b, VectorType::const_vector(&mask), "")?)
    }

    fn int_vec_const(&self, t: PType, v: i128) -> R<VectorValue<'ctx>> {
        if t == PType::I128 {
            let words = [v as u64, (v >> 64) as u64];
            return self.splat(
                self.ctx
                    .i128_type()
                    .const_int_arbitrary_precision(&words)
                    .into(),
            );
        }
        self.const_vec(t, v as u64)
    }

    fn slot_field(&self, slot: usize, field: u32) -> R<BasicValueEnum<'ctx>> {
        // SAFETY (of the generated code): `slot` < number of inputs (validated) and
        // the caller passes that many slots; field < 3.
        let p = unsafe {
            self.b.build_in_bounds_gep(
                self.inputs,
                &[
                    self.c64(slot as u64),
                    self.ctx.i32_type().const_int(field as u64, false),
                ],
                "",
            )?
        };
        Ok(self.b.build_load(p, "")?)
    }

    fn slot_ptr(&self, slot: usize) -> R<PointerValue<'ctx>> {
        // SAFETY (of the generated code): as in `slot_field`.
        Ok(unsafe {
            self.b
                .build_in_bounds_gep(self.inputs, &[self.c64(slot as u64)], "")?
        })
    }

    /// The block's rows of a bitmap of 64-bit words (bit 0 of word 0 is row 0).
    fn word(&self, words: PointerValue<'ctx>, block: &Block<'ctx>) -> R<IntValue<'ctx>> {
        let index = self
            .b
            .build_right_shift(block.row0, self.c64(6), false, "")?;
        // SAFETY (of the generated code): word buffers hold ceil(rows / 64) words and
        // row0 < rows.
        let p = unsafe { self.b.build_in_bounds_gep(words, &[index], "")? };
        let w = self.b.build_load(p, "word")?.into_int_value();
        if LANES == 64 {
            return Ok(w);
        }
        let shift = self.b.build_and(block.row0, self.c64(63), "")?;
        let chunk = self.b.build_right_shift(w, shift, false, "")?;
        Ok(self.b.build_int_truncate(chunk, self.mt, "")?)
    }

    // ----- the kernel -----

    fn load_params(&mut self, params: PointerValue<'ctx>) -> R<()> {
        for (i, t) in self.prog.params.iter().enumerate() {
            // SAFETY (of the generated code): the caller passes one 8-byte slot per parameter.
            let p = unsafe {
                self.b
                    .build_in_bounds_gep(params, &[self.c64(i as u64)], "")?
            };
            let ty = match *t {
                // The parameter points at the string's `{ u64 address, u64 length }`.
                PType::Str => self.i64t.ptr_type(AddressSpace::default()).into(),
                // The parameter points at the 16-byte value.
                PType::I128 => self
                    .ctx
                    .i128_type()
                    .ptr_type(AddressSpace::default())
                    .into(),
                t => self.scalar_ty(t),
            };
            let p = self
                .b
                .build_pointer_cast(p, ty.ptr_type(AddressSpace::default()), "")?;
            let mut v = self.b.build_load(p, &format!("param{i}"))?;
            if *t == PType::I128 {
                let load = self.b.build_load(v.into_pointer_value(), "")?;
                if let Some(inst) = load.as_instruction_value() {
                    inst.set_alignment(8)
                        .map_err(|e| EmitError(e.to_string()))?;
                }
                v = load;
            }
            self.params[i] = Some(v);
        }
        Ok(())
    }

    fn body(&mut self, rows: IntValue<'ctx>) -> R<()> {
        self.total_rows = Some(rows);
        if self.one_body {
            // One loop over every block, the last one possibly partial: each block's
            // rows and active mask are computed at run time, and all its loads and
            // stores are masked.
            let rounded = self.b.build_int_add(rows, self.c64(LANES as u64 - 1), "")?;
            let blocks =
                self.b
                    .build_right_shift(rounded, self.c64(LOG2_LANES), false, "blocks")?;
            self.block_loop(blocks, |e, bi, row0| {
                let left = e.b.build_int_sub(rows, row0, "left")?;
                let whole =
                    e.b.build_int_compare(IntPredicate::UGE, left, e.c64(LANES as u64), "whole")?;
                let block_rows =
                    e.b.build_select(whole, e.c64(LANES as u64), left, "block_rows")?
                        .into_int_value();
                e.block(&Block {
                    index: bi,
                    row0,
                    active: e.first_rows(block_rows)?,
                    full: false,
                })
            })?;
        } else {
            // Full blocks, then the partial one if any: the DAG emitted twice.
            let full_blocks =
                self.b
                    .build_right_shift(rows, self.c64(LOG2_LANES), false, "full_blocks")?;
            self.block_loop(full_blocks, |e, bi, row0| {
                e.block(&Block {
                    index: bi,
                    row0,
                    active: e.ones(),
                    full: true,
                })
            })?;
            let rem = self.b.build_and(rows, self.c64(LANES as u64 - 1), "rem")?;
            let tail = self.ctx.append_basic_block(self.func, "tail");
            let done = self.ctx.append_basic_block(self.func, "done");
            let has_tail =
                self.b
                    .build_int_compare(IntPredicate::NE, rem, self.c64(0), "tail_check")?;
            self.b.build_conditional_branch(has_tail, tail, done)?;
            self.b.position_at_end(tail);
            let row0 = self
                .b
                .build_left_shift(full_blocks, self.c64(LOG2_LANES), "row0")?;
            let block = Block {
                index: full_blocks,
                row0,
                active: self.first_rows(rem)?,
                full: false,
            };
            self.block(&block)?;
            self.b.build_unconditional_branch(done)?;
            self.b.position_at_end(done);
        }
        let result = match self.prog.mode {
            Mode::Filter => self.b.build_load(self.count, "")?.into_int_value(),
            // The outputs whose validity is not stored, bit k for output k.
            Mode::Project => self.c64(
                self.stores_validity
                    .iter()
                    .enumerate()
                    .filter(|(_, stores)| **stores == Some(false))
                    .fold(0, |mask, (k, _)| mask | 1 << k),
            ),
        };
        self.b.build_return(Some(&result))?;
        Ok(())
    }

    /// `for bi in 0..blocks { each(bi, bi * LANES) }`, leaving the builder after
    /// the loop.
    fn block_loop(
        &mut self,
        blocks: IntValue<'ctx>,
        mut each: impl FnMut(&mut Self, IntValue<'ctx>, IntValue<'ctx>) -> R<()>,
    ) -> R<()> {
        let ctx = self.ctx;
        let b_var = self.b.build_alloca(self.i64t, "b")?;
        self.b.build_store(b_var, self.i64t.const_zero())?;
        let head = ctx.append_basic_block(self.func, "head");
        let body = ctx.append_basic_block(self.func, "block");
        let after = ctx.append_basic_block(self.func, "blocks_done");
        self.b.build_unconditional_branch(head)?;

        self.b.position_at_end(head);
        let bi = self.b.build_load(b_var, "bi")?.into_int_value();
        let more = self
            .b
            .build_int_compare(IntPredicate::ULT, bi, blocks, "")?;
        self.b.build_conditional_branch(more, body, after)?;

        self.b.position_at_end(body);
        let row0 = self.b.build_left_shift(bi, self.c64(LOG2_LANES), "row0")?;
        each(self, bi, row0)?;
        let next = self.b.build_int_add(bi, self.c64(1), "")?;
        self.b.build_store(b_var, next)?;
        self.b.build_unconditional_branch(head)?;

        self.b.position_at_end(after);
        Ok(())
    }

    /// The mask of a block's first `rows` rows (`rows` ≤ LANES, all ones at LANES).
    fn first_rows(&self, rows: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        // (1 << rows) - 1 in 64 bits, truncated to the mask type.
        let bit = self.b.build_left_shift(self.c64(1), rows, "")?;
        let active = self.b.build_int_sub(bit, self.c64(1), "")?;
        Ok(self
            .b
            .build_int_truncate_or_bit_cast(active, self.mt, "active")?)
    }

    fn block(&mut self, block: &Block<'ctx>) -> R<()> {
        let mut memo: HashMap<NodeId, V<'ctx>> = HashMap::new();
        self.heads.borrow_mut().clear();
        let outputs = self.prog.outputs.clone();
        let mut values = Vec::with_capacity(outputs.len());
        for &o in &outputs {
            values.push(self.node(o, block, &mut memo)?);
        }
        // Errors in rows of the batch stop the kernel, reporting the first row.
        let mut err = None;
        for v in &values {
            err = self.or_opt(err, v.err())?;
        }
        if let Some(err) = err {
            let err = self.and(err, block.active)?;
            let fail = self.ctx.append_basic_block(self.func, "fail");
            let ok = self.ctx.append_basic_block(self.func, "ok");
            let any = self
                .b
                .build_int_compare(IntPredicate::NE, err, self.mzero(), "")?;
            self.branch_weighted(any, fail, ok, false)?;
            self.b.position_at_end(fail);
            let cttz = self.intrinsic("llvm.cttz", &[self.mt.into()])?;
            let lane = self.call(
                cttz,
                &[err.into(), self.ctx.bool_type().const_zero().into()],
            )?;
            let lane = self
                .b
                .build_int_z_extend(lane.into_int_value(), self.i64t, "")?;
            let row = self.b.build_int_add(block.row0, lane, "")?;
            self.b.build_store(self.err_row, row)?;
            self.b.build_return(Some(&self.i64t.const_all_ones()))?;
            self.b.position_at_end(ok);
        }
        match self.prog.mode {
            Mode::Filter => match values[0] {
                V::Bool { t, .. } => {
                    let selected = self.and(t, block.active)?;
                    self.write_selection(selected, block)
                }
                _ => Err(EmitError("filter output is not boolean".into())),
            },
            Mode::Project => {
                for (k, v) in values.iter().enumerate() {
                    self.write_output(k, outputs[k], *v, block)?;
                }
                Ok(())
            }
        }
    }

    fn out_field(&self, k: usize, field: u32) -> R<PointerValue<'ctx>> {
        // SAFETY (of the generated code): the caller passes one OutSlot per output.
        let p = unsafe {
            self.b.build_in_bounds_gep(
                self.outs,
                &[
                    self.c64(k as u64),
                    self.ctx.i32_type().const_int(field as u64, false),
                ],
                "",
            )?
        };
        Ok(self.b.build_load(p, "")?.into_pointer_value())
    }

    /// The block's mask of selected rows as its 16 bits of the result words, and its
    /// rows counted.
    fn write_selection(&mut self, selected: IntValue<'ctx>, block: &Block<'ctx>) -> R<()> {
        let out = self.out_field(0, 0)?;
        let words =
            self.b
                .build_pointer_cast(out, self.mt.ptr_type(AddressSpace::default()), "")?;
        // SAFETY (of the generated code): the caller sizes the buffer to ceil(rows / 64)
        // 64-bit words, which hold every block's chunk.
        let p = unsafe { self.b.build_in_bounds_gep(words, &[block.index], "")? };
        self.b.build_store(p, selected)?;
        let ctpop = self.intrinsic("llvm.ctpop", &[self.mt.into()])?;
        let n = self.call(ctpop, &[selected.into()])?.into_int_value();
        let n = self.b.build_int_z_extend(n, self.i64t, "")?;
        let c = self.b.build_load(self.count, "")?.into_int_value();
        let c = self.b.build_int_add(c, n, "")?;
        self.b.build_store(self.count, c)?;
        Ok(())
    }

    /// `<LANES x idx>`: the block's row indices.
    fn row_indices(&self, block: &Block<'ctx>, idx_ty: IntType<'ctx>) -> R<VectorValue<'ctx>> {
        let lanes: Vec<IntValue<'ctx>> = (0..LANES as u64)
            .map(|i| idx_ty.const_int(i, false))
            .collect();
        let lanes = VectorType::const_vector(&lanes);
        let row0 = self
            .b
            .build_int_truncate_or_bit_cast(block.row0, idx_ty, "")?;
        let row0 = self.splat(row0.into())?;
        Ok(self.b.build_int_add(row0, lanes, "rows")?)
    }

    fn write_output(&mut self, k: usize, node: NodeId, v: V<'ctx>, block: &Block<'ctx>) -> R<()> {
        let values = self.out_field(k, 0)?;
        let validity = self.out_field(k, 1)?;
        let words_ptr = |e: &Self, p: PointerValue<'ctx>| -> R<PointerValue<'ctx>> {
            let p =
                e.b.build_pointer_cast(p, e.mt.ptr_type(AddressSpace::default()), "")?;
            // SAFETY (of the generated code): word buffers hold ceil(rows / 64) 64-bit
            // words, which hold every block's chunk.
            Ok(unsafe { e.b.build_in_bounds_gep(p, &[block.index], "")? })
        };
        let valid = match v {
            V::Bool { t, f, .. } => {
                let p = words_ptr(self, values)?;
                self.b.build_store(p, t)?;
                Some(self.or(t, f)?)
            }
            V::Vals { v, valid, .. } => {
                let t = self.prog.type_of(node);
                let p = self.elem_ptr(values, t, block)?;
                self.store_block(p, v, Self::align(t), block)?;
                valid
            }
            V::Str {
                ptr, len, valid, ..
            } => {
                // `rows` addresses, then `rows` lengths.
                let rows = self
                    .total_rows
                    .ok_or_else(|| EmitError("rows not known".into()))?;
                let base = self.b.build_pointer_cast(
                    values,
                    self.i64t.ptr_type(AddressSpace::default()),
                    "",
                )?;
                // SAFETY (of the generated code): the caller sizes string outputs to
                // 2 * rows values.
                let lens_base = unsafe { self.b.build_in_bounds_gep(base, &[rows], "")? };
                for (v, area) in [(ptr, base), (len, lens_base)] {
                    let p = self.elem_ptr(
                        self.b.build_pointer_cast(
                            area,
                            self.ctx.i8_type().ptr_type(AddressSpace::default()),
                            "",
                        )?,
                        PType::U64,
                        block,
                    )?;
                    self.store_block(p, v, 8, block)?;
                }
                valid
            }
        };
        // An output no row can make NULL gets no validity (a store per block less:
        // interleaved with the values' stores, it made `a * b + c` a quarter
        // slower): the kernel's result says so.
        let store = valid.is_some() || k >= UNSTORED_VALIDITY_OUTPUTS;
        match self.stores_validity.get_mut(k) {
            Some(Some(stored)) if *stored != store => {
                return Err(EmitError(format!(
                    "output {k}'s validity is stored by one copy of the block's code and not by another"
                )))
            }
            Some(stores) => *stores = Some(store),
            None => return Err(EmitError(format!("no output {k}"))),
        }
        if store {
            let p = words_ptr(self, validity)?;
            self.b.build_store(p, valid.unwrap_or(self.ones()))?;
        }
        Ok(())
    }

    /// Stores a block's vector at `p`: whole in full blocks, the active lanes in the
    /// tail block.
    fn store_block(
        &self,
        p: PointerValue<'ctx>,
        v: VectorValue<'ctx>,
        align: u32,
        block: &Block<'ctx>,
    ) -> R<()> {
        if block.full {
            let st = self.b.build_store(p, v)?;
            st.set_alignment(align)
                .map_err(|e| EmitError(e.to_string()))?;
        } else {
            let f = self.intrinsic(
                "llvm.masked.store",
                &[v.get_type().into(), p.get_type().into()],
            )?;
            let lanes = self.to_lanes(block.active)?;
            let align = self.ctx.i32_type().const_int(align as u64, false);
            self.b
                .build_call(f, &[v.into(), p.into(), align.into(), lanes.into()], "")?;
        }
        Ok(())
    }

    /// Loads a block's vector of `t` from `p`: whole in full blocks, the active
    /// lanes (others zero) in the tail block.
    fn load_block(
        &self,
        p: PointerValue<'ctx>,
        t: PType,
        block: &Block<'ctx>,
    ) -> R<VectorValue<'ctx>> {
        Ok(if block.full {
            let load = self.b.build_load(p, "")?;
            if let Some(inst) = load.as_instruction_value() {
                inst.set_alignment(Self::align(t))
                    .map_err(|e| EmitError(e.to_string()))?;
            }
            load.into_vector_value()
        } else {
            let vt = self.vec_ty(t);
            let f = self.intrinsic("llvm.masked.load", &[vt.into(), p.get_type().into()])?;
            let lanes = self.to_lanes(block.active)?;
            let align = self.ctx.i32_type().const_int(Self::align(t) as u64, false);
            self.call(
                f,
                &[p.into(), align.into(), lanes.into(), vt.const_zero().into()],
            )?
            .into_vector_value()
        })
    }

    /// Prefetches the lines [`PREFETCH_AHEAD`] bytes past the block of `t`s at
    /// `p`: a prefetch never faults, so the lines past the end of the column (the
    /// last blocks') are harmless.
    fn prefetch_ahead(&self, p: PointerValue<'ctx>, t: PType) -> R<()> {
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let base = self.b.build_pointer_cast(p, i8p, "")?;
        let f = self.intrinsic("llvm.prefetch", &[i8p.into()])?;
        let i32t = self.ctx.i32_type();
        let (read, keep_in_all_levels, data) = (0, 3, 1);
        let block_bytes = LANES as u64 * t.width() as u64;
        for line in (0..block_bytes).step_by(64) {
            // Not `inbounds`: the address may lie past the column's buffer.
            // SAFETY (of the generated code): the address is only prefetched.
            let at = unsafe {
                self.b
                    .build_gep(base, &[self.c64(PREFETCH_AHEAD + line)], "")?
            };
            self.b.build_call(
                f,
                &[
                    at.into(),
                    i32t.const_int(read, false).into(),
                    i32t.const_int(keep_in_all_levels, false).into(),
                    i32t.const_int(data, false).into(),
                ],
                "",
            )?;
        }
        Ok(())
    }

    /// Pointer to `<64 x T>` at the block's first row of a values buffer.
    fn elem_ptr(
        &self,
        base: PointerValue<'ctx>,
        t: PType,
        block: &Block<'ctx>,
    ) -> R<PointerValue<'ctx>> {
        let elem = self.scalar_ty(t);
        let p = self
            .b
            .build_pointer_cast(base, elem.ptr_type(AddressSpace::default()), "")?;
        // SAFETY (of the generated code): row0 + 64 <= rows for full blocks; tail blocks
        // only touch active lanes through masked operations.
        let p = unsafe { self.b.build_in_bounds_gep(p, &[block.row0], "")? };
        Ok(self
            .b
            .build_pointer_cast(p, self.vec_ty(t).ptr_type(AddressSpace::default()), "")?)
    }

    // ----- nodes -----

    #[recursive::recursive]
    fn node(
        &mut self,
        id: NodeId,
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        if let Some(v) = memo.get(&id) {
            return Ok(*v);
        }
        let node = self.prog.nodes[id].clone();
        // (A cast to `I128` of a narrower integer is its own 64-bit form.)
        let computed = matches!(
            node,
            Node::Arith(..) | Node::Neg(_) | Node::Abs(_) | Node::RangeCheck(..)
        );
        if computed && !self.wide_fallback && self.prog.type_of(id) == PType::I128 {
            if let Some(v) = self.speculate(id, block, memo)? {
                memo.insert(id, v);
                return Ok(v);
            }
        }
        let v = match node {
            Node::Input(slot) => self.input(slot, block)?,
            Node::Param(slot) => {
                let x = self.params[slot]
                    .ok_or_else(|| EmitError(format!("parameter {slot} not loaded")))?;
                let t = self.prog.params[slot];
                if t == PType::Str {
                    self.string_param(x.into_pointer_value())?
                } else {
                    let v = self.splat(x)?;
                    if t.is_float() {
                        self.numbers.borrow_mut().insert(v);
                    }
                    V::Vals {
                        v,
                        valid: None,
                        err: None,
                    }
                }
            }
            Node::Const(t, bits) => V::Vals {
                v: self.const_vec(t, bits)?,
                valid: None,
                err: None,
            },
            Node::Const128(x) => V::Vals {
                v: self.int_vec_const(PType::I128, x)?,
                valid: None,
                err: None,
            },
            Node::Bool(x) => {
                let (t, f) = if x {
                    (self.ones(), self.mzero())
                } else {
                    (self.mzero(), self.ones())
                };
                V::Bool { t, f, err: None }
            }
            Node::Null(PType::Bool) => V::Bool {
                t: self.mzero(),
                f: self.mzero(),
                err: None,
            },
            Node::Null(PType::Str) => {
                let zero = self.i64t.vec_type(LANES).const_zero();
                V::Str {
                    ptr: zero,
                    len: zero,
                    valid: Some(self.mzero()),
                    err: None,
                }
            }
            Node::Null(t) => V::Vals {
                v: self.vec_ty(t).const_zero(),
                valid: Some(self.mzero()),
                err: None,
            },
            Node::Arith(op, l, r) => {
                let t = self.prog.type_of(l);
                let exact = cannot_overflow(op, t, self.ranges[l], self.ranges[r]);
                let (l, r) = (self.node(l, block, memo)?, self.node(r, block, memo)?);
                if exact {
                    self.exact_arith(op, l, r)?
                } else {
                    self.arith(op, t, l, r)?
                }
            }
            Node::Neg(x) | Node::Abs(x) => {
                let t = self.prog.type_of(x);
                let xv = self.node(x, block, memo)?;
                self.neg_abs(matches!(self.prog.nodes[id], Node::Abs(_)), t, xv)?
            }
            Node::RangeCheck(x, lo, hi)
                if self.ranges[x].is_some_and(|(min, max)| min >= lo && max <= hi) =>
            {
                // Already inside the bounds.
                self.node(x, block, memo)?
            }
            Node::RangeCheck(x, lo, hi) => {
                let t = self.prog.type_of(x);
                let xv = self.node(x, block, memo)?;
                let (v, valid, err) = Self::vals(xv)?;
                let b = &self.b;
                let below =
                    b.build_int_compare(IntPredicate::SLT, v, self.int_vec_const(t, lo)?, "")?;
                let above =
                    b.build_int_compare(IntPredicate::SGT, v, self.int_vec_const(t, hi)?, "")?;
                let outside = b.build_or(below, above, "")?;
                let err = self.or_opt(err, Some(self.new_errors(outside, valid)?))?;
                V::Vals { v, valid, err }
            }
            Node::Cmp(op, l, r) => {
                let t = self.prog.type_of(l);
                let (l, r) = (self.node(l, block, memo)?, self.node(r, block, memo)?);
                self.compare(op, t, l, r)?
            }
            Node::Distinct(l, r, negated) => {
                let t = self.prog.type_of(l);
                let (l, r) = (self.node(l, block, memo)?, self.node(r, block, memo)?);
                self.distinct(t, l, r, negated)?
            }
            Node::And(children) | Node::Or(children) => {
                let is_and = matches!(self.prog.nodes[id], Node::And(_));
                self.logic_operands(is_and, &children, block, memo)?
            }
            Node::Not(x) => match self.node(x, block, memo)? {
                V::Bool { t, f, err } => V::Bool { t: f, f: t, err },
                _ => return Err(EmitError("NOT of a non-boolean".into())),
            },
            Node::IsNull(x, negated) => {
                let xv = self.node(x, block, memo)?;
                let valid = self.validity(&xv)?.unwrap_or(self.ones());
                let null = self.not(valid)?;
                let (t, f) = if negated {
                    (valid, null)
                } else {
                    (null, valid)
                };
                V::Bool {
                    t,
                    f,
                    err: xv.err(),
                }
            }
            Node::Truth(x, test) => match self.node(x, block, memo)? {
                V::Bool { t, f, err } => {
                    let (yes, no) = match test {
                        TruthTest::IsTrue => (t, self.not(t)?),
                        TruthTest::IsNotTrue => (self.not(t)?, t),
                        TruthTest::IsFalse => (f, self.not(f)?),
                        TruthTest::IsNotFalse => (self.not(f)?, f),
                    };
                    V::Bool { t: yes, f: no, err }
                }
                _ => return Err(EmitError("truth test of a non-boolean".into())),
            },
            Node::Case(branches, else_expr) => self.case(&branches, else_expr, block, memo)?,
            Node::Coalesce(args) => self.coalesce(&args, block, memo)?,
            Node::InList {
                x,
                values,
                has_null,
                negated,
            } => {
                let t = self.prog.type_of(x);
                let xv = self.node(x, block, memo)?;
                let mut found = self.mzero();
                for v in values {
                    let vv = self.node(v, block, memo)?;
                    if let V::Bool { t: eq, .. } = self.compare(CmpOp::Eq, t, xv, vv)? {
                        found = self.or(found, eq)?;
                    }
                }
                self.membership(found, &xv, has_null, negated)?
            }
            Node::InSet {
                x,
                state,
                has_null,
                negated,
            } => {
                let t = self.prog.type_of(x);
                let xv = self.node(x, block, memo)?;
                let found = self.in_set(t, state, &xv)?;
                self.membership(found, &xv, has_null, negated)?
            }
            Node::Cast(x, to) => {
                let from = self.prog.type_of(x);
                let xv = self.node(x, block, memo)?;
                self.cast(from, to, xv)?
            }
            Node::Extract(x, lsb, to) => {
                let from = self.prog.type_of(x);
                let (v, valid, err) = Self::vals(self.node(x, block, memo)?)?;
                let shifted = if lsb > 0 {
                    let by = self.int_vec_const(from, i128::from(lsb))?;
                    self.b.build_right_shift(v, by, false, "")?
                } else {
                    v
                };
                let v = if to.width() < from.width() {
                    let target = self.vec_ty(to).into_vector_type_int()?;
                    self.b.build_int_truncate(shifted, target, "")?
                } else {
                    shifted
                };
                V::Vals { v, valid, err }
            }
            Node::Pack(parts) => {
                let wide = self.vec_ty(PType::I128).into_vector_type_int()?;
                let mut packed = wide.const_zero();
                let (mut valid, mut err) = (None, None);
                let mut bit = 0u32;
                for p in parts {
                    let t = self.prog.type_of(p);
                    let (v, pvalid, perr) = Self::vals(self.node(p, block, memo)?)?;
                    valid = self.and_opt(valid, pvalid)?;
                    err = self.or_opt(err, perr)?;
                    let mut v = self.b.build_int_z_extend(v, wide, "")?;
                    if bit > 0 {
                        let by = self.int_vec_const(PType::I128, i128::from(bit))?;
                        v = self.b.build_left_shift(v, by, "")?;
                    }
                    packed = self.b.build_or(packed, v, "")?;
                    bit += 8 * t.width();
                }
                V::Vals {
                    v: packed,
                    valid,
                    err,
                }
            }
            Node::Helper {
                helper,
                state,
                args,
                out,
                quick,
            } => self.helper(helper, state, &args, out, quick, block)?,
            Node::Call {
                callee,
                args,
                ret,
                strict,
            } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in &args {
                    vals.push(self.node(*a, block, memo)?);
                }
                match callee {
                    Callee::Intrinsic { name, domain } => {
                        self.call_intrinsic(name, domain, ret, &vals)?
                    }
                    Callee::Helper { helper, state } => {
                        self.call_helper(helper, state, ret, strict, &args, &vals, block)?
                    }
                }
            }
        };
        memo.insert(id, v);
        Ok(v)
    }

    /// The result of `x [NOT] IN (…)` from the lanes where `x` was `found`.
    fn membership(
        &self,
        found: IntValue<'ctx>,
        xv: &V<'ctx>,
        has_null: bool,
        negated: bool,
    ) -> R<V<'ctx>> {
        let valid = self.validity(xv)?.unwrap_or(self.ones());
        let yes = self.and(found, valid)?;
        let no = if has_null {
            self.mzero()
        } else {
            self.and(self.not(found)?, valid)?
        };
        let (t, f) = if negated { (no, yes) } else { (yes, no) };
        Ok(V::Bool {
            t,
            f,
            err: xv.err(),
        })
    }

    /// The lanes whose value of `x` (of type `t`) is in the [`InSet`] at parameter
    /// `state`: the block's keys ([`InSet::key`]) are stored in the helper buffer and
    /// looked up by [`in_set_lookup`](crate::program::in_set_lookup).
    fn in_set(&mut self, t: PType, state: usize, x: &V<'ctx>) -> R<IntValue<'ctx>> {
        let V::Vals { v, .. } = *x else {
            return Err(EmitError("IN set of a non-numeric value".into()));
        };
        let keys_ty = self.i64t.vec_type(LANES);
        let keys = if t.is_float() {
            // -0.0 as 0.0 and every NaN as one NaN, as `InSet::key` does.
            let zero = v.get_type().const_zero();
            let is_zero = self
                .b
                .build_float_compare(FloatPredicate::OEQ, v, zero, "")?;
            let v = self
                .b
                .build_select(is_zero, zero, v, "")?
                .into_vector_value();
            let is_nan = self.b.build_float_compare(FloatPredicate::UNO, v, v, "")?;
            let nan = self.float_splat(t, f64::NAN)?;
            let v = self.b.build_select(is_nan, nan, v, "")?.into_vector_value();
            if t == PType::F32 {
                let bits = self
                    .b
                    .build_bit_cast(v, self.ctx.i32_type().vec_type(LANES), "")?
                    .into_vector_value();
                self.b.build_int_z_extend(bits, keys_ty, "")?
            } else {
                self.b.build_bit_cast(v, keys_ty, "")?.into_vector_value()
            }
        } else if t.width() == 8 {
            v
        } else if t.is_signed() {
            self.b.build_int_s_extend(v, keys_ty, "")?
        } else {
            self.b.build_int_z_extend(v, keys_ty, "")?
        };
        let buf = self.b.build_pointer_cast(
            self.helper_buf,
            keys_ty.ptr_type(AddressSpace::default()),
            "",
        )?;
        let store = self.b.build_store(buf, keys)?;
        store
            .set_alignment(8)
            .map_err(|e| EmitError(e.to_string()))?;
        let f = match self.module.get_function(IN_SET_LOOKUP) {
            Some(f) => f,
            None => {
                let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
                let i64p = self.i64t.ptr_type(AddressSpace::default());
                let ty = self.i64t.fn_type(&[i8p.into(), i64p.into()], false);
                self.module
                    .add_function(IN_SET_LOOKUP, ty, Some(Linkage::External))
            }
        };
        let set = self.params[state].ok_or_else(|| EmitError("IN set not loaded".into()))?;
        let keys_ptr = self.b.build_pointer_cast(
            self.helper_buf,
            self.i64t.ptr_type(AddressSpace::default()),
            "",
        )?;
        let m = self
            .call(f, &[set.into(), keys_ptr.into()])?
            .into_int_value();
        Ok(self.b.build_int_truncate_or_bit_cast(m, self.mt, "")?)
    }

    fn validity(&self, v: &V<'ctx>) -> R<Option<IntValue<'ctx>>> {
        Ok(match v {
            V::Vals { valid, .. } | V::Str { valid, .. } => *valid,
            V::Bool { t, f, .. } => Some(self.or(*t, *f)?),
        })
    }

    fn input(&mut self, slot: usize, block: &Block<'ctx>) -> R<V<'ctx>> {
        let spec = self.prog.inputs[slot];
        let valid = self.input_validity(slot, block)?;
        match spec.ty {
            PType::Str => self.string_views(slot, valid, block),
            PType::Bool => {
                let words = self.slot_field(slot, 0)?.into_pointer_value();
                let words = self.b.build_pointer_cast(
                    words,
                    self.i64t.ptr_type(AddressSpace::default()),
                    "",
                )?;
                let bits = self.word(words, block)?;
                let valid = valid.unwrap_or(self.ones());
                let t = self.and(bits, valid)?;
                let f = self.and(self.not(bits)?, valid)?;
                Ok(V::Bool { t, f, err: None })
            }
            PType::I64 if spec.stored_as_i128 => self.low_halves(slot, valid, block),
            t => {
                let base = self.slot_field(slot, 0)?.into_pointer_value();
                let p = self.elem_ptr(base, t, block)?;
                if self.prefetch {
                    self.prefetch_ahead(p, t)?;
                }
                let v = self.load_block(p, t, block)?;
                Ok(V::Vals {
                    v,
                    valid,
                    err: None,
                })
            }
        }
    }

    /// The block's validity word of input `slot` (`None`: it has no NULLs).
    fn input_validity(&self, slot: usize, block: &Block<'ctx>) -> R<Option<IntValue<'ctx>>> {
        if !self.prog.inputs[slot].nullable {
            return Ok(None);
        }
        let words = self.slot_field(slot, 1)?.into_pointer_value();
        Ok(Some(self.word(words, block)?))
    }

    /// The `i64`s of the 16-byte integers of input `slot` (little-endian `i128`s):
    /// their low halves; a valid value whose high half is not its low half's sign
    /// does not fit 64 bits: an error.
    fn low_halves(
        &self,
        slot: usize,
        valid: Option<IntValue<'ctx>>,
        block: &Block<'ctx>,
    ) -> R<V<'ctx>> {
        let (low, high) = self.halves_16(slot, block)?;
        let sign = self
            .b
            .build_right_shift(low, self.int_vec_const(PType::I64, 63)?, true, "")?;
        let wide = self.b.build_int_compare(IntPredicate::NE, high, sign, "")?;
        Ok(V::Vals {
            v: low,
            valid,
            err: Some(self.new_errors(wide, valid)?),
        })
    }

    /// Integer lanes of at most 64 bits extended to `i128`s (signed or not), built
    /// as their 64-bit halves interleaved: LLVM extends a `<16 x i64>` to
    /// `<16 x i128>` lane by lane through general registers, but interleaves two
    /// vectors with a few shuffles, and stores the result as the vector it is.
    fn widen_to_i128(&self, v: VectorValue<'ctx>, signed: bool) -> R<VectorValue<'ctx>> {
        let v64 = self.i64t.vec_type(LANES);
        let low = match v
            .get_type()
            .get_element_type()
            .into_int_type()
            .get_bit_width()
        {
            64 => v,
            _ if signed => self.b.build_int_s_extend(v, v64, "")?,
            _ => self.b.build_int_z_extend(v, v64, "")?,
        };
        let high = match signed {
            true => self
                .b
                .build_right_shift(low, self.int_vec_const(PType::I64, 63)?, true, "")?,
            false => v64.const_zero(),
        };
        let lanes = u64::from(LANES);
        let both = self.shuffle(low, Some(high), (0..lanes).flat_map(|i| [i, i + lanes]))?;
        let wide = self.vec_ty(PType::I128);
        Ok(self.b.build_bit_cast(both, wide, "")?.into_vector_value())
    }

    /// The value of `id`, a computed `I128` node, from its 64-bit form when that
    /// serves the block. 128-bit lanes have no vector instructions: LLVM splits a
    /// block of them into 32 scalar registers' worth, and a checked multiply or add
    /// into a chain of scalar code per lane (docs/performance-notes.md, "Decimals").
    /// But the values of a DECIMAL(38) computation mostly fit 64 bits. So the node
    /// and the `I128` nodes below it are emitted first on `i64` lanes
    /// ([`Emitter::narrow_node`]), where a value that does not fit, an overflow, or
    /// any other error is an error lane; a block without one takes those values,
    /// sign-extended (integer arithmetic that does not overflow gives the same
    /// values in 64 bits as in 128), and any other block computes the node in 128
    /// bits as before, with its own errors. `None`: the node has no 64-bit form
    /// (it reads a node that is not integer arithmetic, an interval's parts say).
    fn speculate(
        &mut self,
        id: NodeId,
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<Option<V<'ctx>>> {
        let mut narrow = HashMap::new();
        let Some(n) = self.narrow_node(id, block, memo, &mut narrow)? else {
            return Ok(None);
        };
        let (nv, valid, nerr) = Self::vals(n)?;
        let Some(nerr) = nerr else {
            // No lane can fail: the 64-bit form is the value.
            let v = self.widen_to_i128(nv, true)?;
            return Ok(Some(V::Vals {
                v,
                valid,
                err: None,
            }));
        };
        let nerr = self.and(nerr, block.active)?;
        let any = self
            .b
            .build_int_compare(IntPredicate::NE, nerr, self.mzero(), "")?;
        let (v, err) = self.rarely(
            any,
            ["narrow", "wide"],
            |e| Ok((e.widen_to_i128(nv, true)?, e.mzero())),
            |e| {
                // The 128-bit path: what it emits does not dominate the code after
                // the join, so it gets a copy of the memo (every other node it reads
                // was emitted by the 64-bit form, before the branch).
                e.wide_fallback = true;
                let wide = e.node(id, block, &mut memo.clone());
                e.wide_fallback = false;
                let (v, _, err) = Self::vals(wide?)?;
                Ok((v, err.unwrap_or(e.mzero())))
            },
        )?;
        Ok(Some(V::Vals {
            v,
            valid,
            err: Some(err),
        }))
    }

    /// The 64-bit form of `id`, an `I128` node ([`Emitter::speculate`]): its value
    /// on `i64` lanes, error lanes where it does not fit or fails; `None` if it has
    /// none. Nodes of other types below it are emitted as usual (into `memo`).
    fn narrow_node(
        &mut self,
        id: NodeId,
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
        narrow: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<Option<V<'ctx>>> {
        if let Some(v) = narrow.get(&id) {
            return Ok(Some(*v));
        }
        if self.prog.type_of(id) != PType::I128 {
            return Ok(None);
        }
        let t = PType::I64;
        let no_valid = |v: VectorValue<'ctx>| V::Vals {
            v,
            valid: None,
            err: None,
        };
        let v = match self.prog.nodes[id].clone() {
            Node::Input(slot) => {
                let valid = self.input_validity(slot, block)?;
                self.low_halves(slot, valid, block)?
            }
            Node::Param(slot) => {
                let x = self.params[slot]
                    .ok_or_else(|| EmitError(format!("parameter {slot} not loaded")))?
                    .into_int_value();
                let low = self.b.build_int_truncate(x, self.i64t, "")?;
                let back = self.b.build_int_s_extend(low, x.get_type(), "")?;
                let fits = self.b.build_int_compare(IntPredicate::EQ, back, x, "")?;
                let err = self
                    .b
                    .build_select(fits, self.mzero(), self.ones(), "")?
                    .into_int_value();
                V::Vals {
                    v: self.splat(low.into())?,
                    valid: None,
                    err: Some(err),
                }
            }
            Node::Const128(x) => match i64::try_from(x) {
                Ok(x) => no_valid(self.int_vec_const(t, x.into())?),
                Err(_) => return Ok(None),
            },
            Node::Null(_) => V::Vals {
                v: self.vec_ty(t).const_zero(),
                valid: Some(self.mzero()),
                err: None,
            },
            Node::Arith(op, l, r) => {
                let Some(lv) = self.narrow_node(l, block, memo, narrow)? else {
                    return Ok(None);
                };
                let Some(rv) = self.narrow_node(r, block, memo, narrow)? else {
                    return Ok(None);
                };
                // A product that fits 128 bits by construction may not fit 64.
                let op = match op {
                    ArithOp::WideMul => ArithOp::Mul,
                    op => op,
                };
                self.arith(op, t, lv, rv)?
            }
            Node::Neg(x) | Node::Abs(x) => {
                let Some(xv) = self.narrow_node(x, block, memo, narrow)? else {
                    return Ok(None);
                };
                self.neg_abs(matches!(self.prog.nodes[id], Node::Abs(_)), t, xv)?
            }
            Node::RangeCheck(x, lo, hi) => {
                let Some(xv) = self.narrow_node(x, block, memo, narrow)? else {
                    return Ok(None);
                };
                let (v, valid, mut err) = Self::vals(xv)?;
                // The bounds within 64 bits: past them, every `i64` passes.
                let b = &self.b;
                if lo > i128::from(i64::MIN) {
                    let below =
                        b.build_int_compare(IntPredicate::SLT, v, self.int_vec_const(t, lo)?, "")?;
                    err = self.or_opt(err, Some(self.new_errors(below, valid)?))?;
                }
                if hi < i128::from(i64::MAX) {
                    let above =
                        b.build_int_compare(IntPredicate::SGT, v, self.int_vec_const(t, hi)?, "")?;
                    err = self.or_opt(err, Some(self.new_errors(above, valid)?))?;
                }
                V::Vals { v, valid, err }
            }
            // A widening of an integer: the value itself, as an `i64` (a `u64`
            // beyond `i64::MAX` is an error lane, left to the 128-bit path).
            Node::Cast(x, _) => {
                let from = self.prog.type_of(x);
                if from.is_float() || int_range(from).is_none() || from == PType::I128 {
                    return Ok(None);
                }
                let xv = self.node(x, block, memo)?;
                match from {
                    PType::I64 => xv,
                    _ => self.cast(from, t, xv)?,
                }
            }
            _ => return Ok(None),
        };
        narrow.insert(id, v);
        Ok(Some(v))
    }

    fn vals(
        v: V<'ctx>,
    ) -> R<(
        VectorValue<'ctx>,
        Option<IntValue<'ctx>>,
        Option<IntValue<'ctx>>,
    )> {
        match v {
            V::Vals { v, valid, err } => Ok((v, valid, err)),
            _ => Err(EmitError("expected a value vector".into())),
        }
    }

    /// Errors raised in valid rows only.
    fn new_errors(
        &self,
        lanes: VectorValue<'ctx>,
        valid: Option<IntValue<'ctx>>,
    ) -> R<IntValue<'ctx>> {
        let m = self.to_mask(lanes)?;
        Ok(match valid {
            Some(v) => self.and(m, v)?,
            None => m,
        })
    }

    fn min_max(t: PType) -> (i128, i128) {
        int_range(t).unwrap_or((0, u64::MAX as i128))
    }

    fn arith(&mut self, op: ArithOp, t: PType, l: V<'ctx>, r: V<'ctx>) -> R<V<'ctx>> {
        let (lv, lvalid, lerr) = Self::vals(l)?;
        let (rv, rvalid, rerr) = Self::vals(r)?;
        let valid = self.and_opt(lvalid, rvalid)?;
        let mut err = self.or_opt(lerr, rerr)?;
        let b = &self.b;
        let v = if t.is_float() {
            match op {
                ArithOp::Add => b.build_float_add(lv, rv, "")?,
                ArithOp::Sub => b.build_float_sub(lv, rv, "")?,
                ArithOp::Mul | ArithOp::WideMul => b.build_float_mul(lv, rv, "")?,
                ArithOp::Div | ArithOp::Rem | ArithOp::FloorDiv => {
                    let zero = b.build_float_compare(
                        FloatPredicate::OEQ,
                        rv,
                        rv.get_type().const_zero(),
                        "",
                    )?;
                    err = self.or_opt(err, Some(self.new_errors(zero, valid)?))?;
                    if op == ArithOp::Rem {
                        self.b.build_float_rem(lv, rv, "")?
                    } else {
                        self.b.build_float_div(lv, rv, "")?
                    }
                }
            }
        } else {
            let signed = t.is_signed();
            match op {
                // No overflow check: the program guarantees the product fits.
                ArithOp::WideMul => self.b.build_int_mul(lv, rv, "")?,
                ArithOp::Mul
                    if matches!(
                        lv.get_type()
                            .get_element_type()
                            .into_int_type()
                            .get_bit_width(),
                        64 | 128
                    ) =>
                {
                    let (v, ovf) = self.checked_wide_mul(signed, lv, rv, valid)?;
                    err = self.or_opt(err, Some(ovf))?;
                    v
                }
                ArithOp::Add | ArithOp::Sub | ArithOp::Mul => {
                    let name = match (op, signed) {
                        (ArithOp::Add, true) => "llvm.sadd.with.overflow",
                        (ArithOp::Add, false) => "llvm.uadd.with.overflow",
                        (ArithOp::Sub, true) => "llvm.ssub.with.overflow",
                        (ArithOp::Sub, false) => "llvm.usub.with.overflow",
                        (_, true) => "llvm.smul.with.overflow",
                        (_, false) => "llvm.umul.with.overflow",
                    };
                    let f = self.intrinsic(name, &[lv.get_type().into()])?;
                    let pair = self.call(f, &[lv.into(), rv.into()])?.into_struct_value();
                    let v = self.b.build_extract_value(pair, 0, "")?.into_vector_value();
                    let ovf = self.b.build_extract_value(pair, 1, "")?.into_vector_value();
                    err = self.or_opt(err, Some(self.new_errors(ovf, valid)?))?;
                    v
                }
                ArithOp::Div | ArithOp::Rem => {
                    let vt = lv.get_type();
                    let zero =
                        self.b
                            .build_int_compare(IntPredicate::EQ, rv, vt.const_zero(), "")?;
                    let mut bad = zero;
                    err = self.or_opt(err, Some(self.new_errors(zero, valid)?))?;
                    if signed {
                        let (min, _) = Self::min_max(t);
                        let is_min = self.b.build_int_compare(
                            IntPredicate::EQ,
                            lv,
                            self.int_vec_const(t, min)?,
                            "",
                        )?;
                        let is_m1 = self.b.build_int_compare(
                            IntPredicate::EQ,
                            rv,
                            self.int_vec_const(t, -1)?,
                            "",
                        )?;
                        let ovf = self.b.build_and(is_min, is_m1, "")?;
                        // MIN / -1 overflows; MIN % -1 is 0 (as in PostgreSQL), which
                        // dividing by 1 below gives.
                        if op == ArithOp::Div {
                            err = self.or_opt(err, Some(self.new_errors(ovf, valid)?))?;
                        }
                        bad = self.b.build_or(bad, ovf, "")?;
                    }
                    // Divide by 1 where the divisor is 0 (or MIN / -1): zero divisors are
                    // errors anyway, and the hardware must not trap.
                    let safe = self
                        .b
                        .build_select(bad, self.int_vec_const(t, 1)?, rv, "")?
                        .into_vector_value();
                    match (op, signed) {
                        (ArithOp::Div, true) => self.b.build_int_signed_div(lv, safe, "")?,
                        (ArithOp::Div, false) => self.b.build_int_unsigned_div(lv, safe, "")?,
                        (_, true) => self.b.build_int_signed_rem(lv, safe, "")?,
                        (_, false) => self.b.build_int_unsigned_rem(lv, safe, "")?,
                    }
                }
                ArithOp::FloorDiv => {
                    // divisor is a positive constant (validated)
                    let q = self.b.build_int_signed_div(lv, rv, "")?;
                    let m = self.b.build_int_signed_rem(lv, rv, "")?;
                    let neg = self.b.build_int_compare(
                        IntPredicate::SLT,
                        m,
                        lv.get_type().const_zero(),
                        "",
                    )?;
                    let adj = self.b.build_int_s_extend(neg, lv.get_type(), "")?;
                    self.b.build_int_add(q, adj, "")?
                }
            }
        };
        Ok(V::Vals { v, valid, err })
    }

    /// `l op r` (a sum, difference or product) of signed integers that
    /// [`cannot_overflow`]: no overflow test.
    fn exact_arith(&mut self, op: ArithOp, l: V<'ctx>, r: V<'ctx>) -> R<V<'ctx>> {
        let (lv, lvalid, lerr) = Self::vals(l)?;
        let (rv, rvalid, rerr) = Self::vals(r)?;
        let valid = self.and_opt(lvalid, rvalid)?;
        let err = self.or_opt(lerr, rerr)?;
        let v = match op {
            ArithOp::Add => self.b.build_int_nsw_add(lv, rv, "exact")?,
            ArithOp::Sub => self.b.build_int_nsw_sub(lv, rv, "exact")?,
            ArithOp::Mul | ArithOp::WideMul => self.b.build_int_nsw_mul(lv, rv, "exact")?,
            other => return Err(EmitError(format!("{other:?} is not exact arithmetic"))),
        };
        Ok(V::Vals { v, valid, err })
    }

    /// `l * r` on 64- or 128-bit lanes with the overflow mask of the valid rows.
    ///
    /// Neither width has a vector multiply-with-overflow instruction: LLVM scalarizes
    /// `llvm.smul.with.overflow` (a multiply and a flag test per lane, 16 per block).
    /// When every valid lane's operands fit in half the width, no product can overflow,
    /// and the block takes one multiply of the sign- (zero-) extended halves, which is a
    /// single vector instruction for 64 bits (`vpmuldq`/`vpmuludq`) and one 64×64→128
    /// `imul` per lane for 128; only a block with a wider operand takes the checked path.
    fn checked_wide_mul(
        &mut self,
        signed: bool,
        lv: VectorValue<'ctx>,
        rv: VectorValue<'ctx>,
        valid: Option<IntValue<'ctx>>,
    ) -> R<(VectorValue<'ctx>, IntValue<'ctx>)> {
        let vt = lv.get_type();
        let width = vt.get_element_type().into_int_type().get_bit_width();
        let half = if width == 128 {
            self.i64t
        } else {
            self.ctx.i32_type()
        }
        .vec_type(LANES);
        // `x` truncated to half the width and extended back, which is `x` iff it fits.
        let narrowed = |x: VectorValue<'ctx>| -> R<VectorValue<'ctx>> {
            let t = self.b.build_int_truncate(x, half, "")?;
            Ok(if signed {
                self.b.build_int_s_extend(t, vt, "")?
            } else {
                self.b.build_int_z_extend(t, vt, "")?
            })
        };
        let (ln, rn) = (narrowed(lv)?, narrowed(rv)?);
        // A lane fits iff both operands, offset by half the narrow range when
        // signed, have no high-half bit set: the offset operands OR-ed together lane
        // by lane and then the two halves of the block, masked to the high half, are
        // zero for a block that fits. Vector adds and ORs and one test, where a
        // compare per operand and half would each take the one port that writes
        // masks (and the multiply reads the low halves itself).
        let elem = vt.get_element_type().into_int_type();
        let words = |low: u64, high: u64| match width {
            128 => elem.const_int_arbitrary_precision(&[low, high]),
            _ => elem.const_int(low, false),
        };
        let (bias, high_half) = match (width, signed) {
            (128, true) => (words(1 << 63, 0), words(0, u64::MAX)),
            (128, false) => (words(0, 0), words(0, u64::MAX)),
            (_, true) => (words(1 << 31, 0), words(u64::MAX << 32, 0)),
            (_, false) => (words(0, 0), words(u64::MAX << 32, 0)),
        };
        let bias = self.splat(bias.into())?;
        let differ = self.b.build_or(
            self.b.build_int_add(lv, bias, "")?,
            self.b.build_int_add(rv, bias, "")?,
            "offset",
        )?;
        // NULL rows hold any value; they need not fit.
        let differ = match valid {
            Some(v) => self
                .b
                .build_select(self.to_lanes(v)?, differ, vt.const_zero(), "")?
                .into_vector_value(),
            None => differ,
        };
        let half = u64::from(LANES / 2);
        let half_lanes = |from: u64| self.shuffle(differ, None, from..from + half);
        let differ = self.b.build_or(half_lanes(0)?, half_lanes(half)?, "")?;
        let half_ty = differ.get_type();
        let high_half = VectorType::const_vector(&vec![high_half; (LANES / 2) as usize]);
        let differ = self.b.build_and(differ, high_half, "beyond_half")?;
        let lanes = self
            .b
            .build_int_compare(IntPredicate::NE, differ, half_ty.const_zero(), "")?;
        let lanes = self
            .b
            // Half a block's lanes are the bits of a byte.
            .build_bit_cast(
                lanes,
                self.ctx.i8_type(),
                const {
                    assert!(LANES / 2 == 8);
                    ""
                },
            )?
            .into_int_value();
        let wider = self.b.build_int_compare(
            IntPredicate::NE,
            lanes,
            lanes.get_type().const_zero(),
            "wider",
        )?;
        self.rarely(
            wider,
            ["mul_narrow", "mul_checked"],
            |e| Ok((e.b.build_int_mul(ln, rn, "")?, e.mzero())),
            |e| {
                let name = if signed {
                    "llvm.smul.with.overflow"
                } else {
                    "llvm.umul.with.overflow"
                };
                let f = e.intrinsic(name, &[vt.into()])?;
                let pair = e.call(f, &[lv.into(), rv.into()])?.into_struct_value();
                let v = e.b.build_extract_value(pair, 0, "")?.into_vector_value();
                let lanes = e.b.build_extract_value(pair, 1, "")?.into_vector_value();
                Ok((v, e.new_errors(lanes, valid)?))
            },
        )
    }

    /// A value and its error lanes computed one of two ways: by `usual`, or, when
    /// `rare` holds (a branch marked cold), by `other`; the code after the join
    /// sees whichever ran. `names` names the two blocks.
    fn rarely(
        &mut self,
        rare: IntValue<'ctx>,
        names: [&str; 2],
        usual: impl FnOnce(&mut Self) -> R<(VectorValue<'ctx>, IntValue<'ctx>)>,
        other: impl FnOnce(&mut Self) -> R<(VectorValue<'ctx>, IntValue<'ctx>)>,
    ) -> R<(VectorValue<'ctx>, IntValue<'ctx>)> {
        let usual_bb = self.ctx.append_basic_block(self.func, names[0]);
        let other_bb = self.ctx.append_basic_block(self.func, names[1]);
        let join = self
            .ctx
            .append_basic_block(self.func, &format!("{}_done", names[0]));
        self.branch_weighted(rare, other_bb, usual_bb, false)?;
        self.b.position_at_end(usual_bb);
        let (usual_v, usual_err) = usual(self)?;
        let usual_end = self.end_with_branch(join)?;
        self.b.position_at_end(other_bb);
        let (other_v, other_err) = other(self)?;
        let other_end = self.end_with_branch(join)?;
        self.b.position_at_end(join);
        let v = self.b.build_phi(usual_v.get_type(), "")?;
        v.add_incoming(&[(&usual_v, usual_end), (&other_v, other_end)]);
        let e = self.b.build_phi(self.mt, "")?;
        e.add_incoming(&[(&usual_err, usual_end), (&other_err, other_end)]);
        Ok((
            v.as_basic_value().into_vector_value(),
            e.as_basic_value().into_int_value(),
        ))
    }

    /// Ends the block being emitted with a branch to `to`; returns that block.
    fn end_with_branch(&self, to: BasicBlock<'ctx>) -> R<BasicBlock<'ctx>> {
        let end = self
            .b
            .get_insert_block()
            .ok_or_else(|| EmitError("no insertion block".into()))?;
        self.b.build_unconditional_branch(to)?;
        Ok(end)
    }

    fn neg_abs(&mut self, abs: bool, t: PType, x: V<'ctx>) -> R<V<'ctx>> {
        let (xv, valid, mut err) = Self::vals(x)?;
        let v = if t.is_float() {
            if abs {
                let f = self.intrinsic("llvm.fabs", &[xv.get_type().into()])?;
                self.call(f, &[xv.into()])?.into_vector_value()
            } else {
                self.b.build_float_neg(xv, "")?
            }
        } else if t.is_unsigned() {
            xv
        } else {
            let (min, _) = Self::min_max(t);
            let is_min =
                self.b
                    .build_int_compare(IntPredicate::EQ, xv, self.int_vec_const(t, min)?, "")?;
            err = self.or_opt(err, Some(self.new_errors(is_min, valid)?))?;
            let neg = self.b.build_int_neg(xv, "")?;
            if abs {
                let is_neg = self.b.build_int_compare(
                    IntPredicate::SLT,
                    xv,
                    xv.get_type().const_zero(),
                    "",
                )?;
                self.b
                    .build_select(is_neg, neg, xv, "")?
                    .into_vector_value()
            } else {
                neg
            }
        };
        Ok(V::Vals { v, valid, err })
    }

    /// Comparison mask of two value vectors, SQL float semantics.
    fn cmp_lanes(
        &self,
        op: CmpOp,
        t: PType,
        l: VectorValue<'ctx>,
        r: VectorValue<'ctx>,
    ) -> R<IntValue<'ctx>> {
        let b = &self.b;
        let lanes = if t.is_float() {
            // NaN is equal to itself and greater than every number (docs/semantics.md).
            // A value's NaN lanes; `None` (all false) for a parameter, which holds no
            // NaN, so that its tests are left out of the code.
            let numbers = self.numbers.borrow();
            let uno = |x: VectorValue<'ctx>| -> R<Option<VectorValue<'ctx>>> {
                if numbers.contains(&x) {
                    return Ok(None);
                }
                Ok(Some(b.build_float_compare(
                    FloatPredicate::UNO,
                    x,
                    x,
                    "",
                )?))
            };
            // A value's number lanes, from its NaN lanes `nan`; `None`: all true.
            let ord = |nan: Option<VectorValue<'ctx>>| -> R<Option<VectorValue<'ctx>>> {
                nan.map(|n| Ok(b.build_not(n, "")?)).transpose()
            };
            // Both NaN tests (`None`: all false).
            let and = |x: Option<VectorValue<'ctx>>, y: Option<VectorValue<'ctx>>| match (x, y) {
                (Some(x), Some(y)) => Ok::<_, EmitError>(Some(b.build_and(x, y, "")?)),
                _ => Ok(None),
            };
            // A NaN test `x` (`None`: all false) and a number test `test` (`None`:
            // all true).
            let and_if =
                |x: Option<VectorValue<'ctx>>, test: Option<VectorValue<'ctx>>| match (x, test) {
                    (Some(x), Some(t)) => Ok::<_, EmitError>(Some(b.build_and(x, t, "")?)),
                    (x, None) => Ok(x),
                    (None, Some(_)) => Ok(None),
                };
            let or = |x: VectorValue<'ctx>, y: Option<VectorValue<'ctx>>| match y {
                Some(y) => Ok::<_, EmitError>(b.build_or(x, y, "")?),
                None => Ok(x),
            };
            let fc = |p| b.build_float_compare(p, l, r, "");
            let (l_nan, r_nan) = (uno(l)?, uno(r)?);
            // Against a number, "ordered and greater, or NaN" is "unordered or
            // greater": one compare (`vcmpnlepd`) instead of two and an OR.
            match (op, l_nan, r_nan) {
                (CmpOp::Gt, Some(_), None) => return self.to_mask(fc(FloatPredicate::UGT)?),
                (CmpOp::Ge, Some(_), None) => return self.to_mask(fc(FloatPredicate::UGE)?),
                (CmpOp::Lt, None, Some(_)) => return self.to_mask(fc(FloatPredicate::ULT)?),
                (CmpOp::Le, None, Some(_)) => return self.to_mask(fc(FloatPredicate::ULE)?),
                _ => {}
            }
            match op {
                CmpOp::Eq | CmpOp::Ne => {
                    let eq = or(fc(FloatPredicate::OEQ)?, and(l_nan, r_nan)?)?;
                    if op == CmpOp::Eq {
                        eq
                    } else {
                        b.build_not(eq, "")?
                    }
                }
                CmpOp::Lt => or(fc(FloatPredicate::OLT)?, and_if(r_nan, ord(l_nan)?)?)?,
                CmpOp::Le => or(fc(FloatPredicate::OLE)?, r_nan)?,
                CmpOp::Gt => or(fc(FloatPredicate::OGT)?, and_if(l_nan, ord(r_nan)?)?)?,
                CmpOp::Ge => or(fc(FloatPredicate::OGE)?, l_nan)?,
            }
        } else {
            let s = t.is_signed();
            let p = match op {
                CmpOp::Eq => IntPredicate::EQ,
                CmpOp::Ne => IntPredicate::NE,
                CmpOp::Lt if s => IntPredicate::SLT,
                CmpOp::Lt => IntPredicate::ULT,
                CmpOp::Le if s => IntPredicate::SLE,
                CmpOp::Le => IntPredicate::ULE,
                CmpOp::Gt if s => IntPredicate::SGT,
                CmpOp::Gt => IntPredicate::UGT,
                CmpOp::Ge if s => IntPredicate::SGE,
                CmpOp::Ge => IntPredicate::UGE,
            };
            b.build_int_compare(p, l, r, "")?
        };
        self.to_mask(lanes)
    }

    /// Comparison mask of two booleans (as value masks; FALSE < TRUE).
    fn cmp_bool(&self, op: CmpOp, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(match op {
            CmpOp::Eq => self.not(self.b.build_xor(a, b, "")?)?,
            CmpOp::Ne => self.b.build_xor(a, b, "")?,
            CmpOp::Lt => self.and(self.not(a)?, b)?,
            CmpOp::Le => self.or(self.not(a)?, b)?,
            CmpOp::Gt => self.and(a, self.not(b)?)?,
            CmpOp::Ge => self.or(a, self.not(b)?)?,
        })
    }

    /// The raw comparison mask and the operands' validity and errors.
    fn compare_parts(&self, op: CmpOp, t: PType, l: V<'ctx>, r: V<'ctx>) -> R<CmpParts<'ctx>> {
        let (m, lvalid, rvalid) = if t == PType::Bool {
            let (V::Bool { t: lt, .. }, V::Bool { t: rt, .. }) = (l, r) else {
                return Err(EmitError("boolean comparison of non-booleans".into()));
            };
            (
                self.cmp_bool(op, lt, rt)?,
                self.validity(&l)?,
                self.validity(&r)?,
            )
        } else {
            let (lv, lvalid, _) = Self::vals(l)?;
            let (rv, rvalid, _) = Self::vals(r)?;
            (self.cmp_lanes(op, t, lv, rv)?, lvalid, rvalid)
        };
        let err = self.or_opt(l.err(), r.err())?;
        Ok((m, lvalid, rvalid, err))
    }

    fn compare(&self, op: CmpOp, t: PType, l: V<'ctx>, r: V<'ctx>) -> R<V<'ctx>> {
        let (m, lvalid, rvalid, err) = self.compare_parts(op, t, l, r)?;
        let valid = self.and_opt(lvalid, rvalid)?.unwrap_or(self.ones());
        Ok(V::Bool {
            t: self.and(m, valid)?,
            f: self.and(self.not(m)?, valid)?,
            err,
        })
    }

    fn distinct(&self, t: PType, l: V<'ctx>, r: V<'ctx>, negated: bool) -> R<V<'ctx>> {
        let (ne, lvalid, rvalid, err) = self.compare_parts(CmpOp::Ne, t, l, r)?;
        let lv = lvalid.unwrap_or(self.ones());
        let rv = rvalid.unwrap_or(self.ones());
        let both = self.and(lv, rv)?;
        let one = self.b.build_xor(lv, rv, "")?;
        let d = self.or(self.and(both, ne)?, one)?;
        let nd = self.not(d)?;
        let (t, f) = if negated { (nd, d) } else { (d, nd) };
        Ok(V::Bool { t, f, err })
    }

    /// `AND` (`is_and`) or `OR` of `children`. Operands that call a string
    /// predicate helper and share nothing but columns and constants with the rest of
    /// the program ([`Emitter::private`], so that nothing is computed twice) come
    /// last, each for the rows the operands before it left undecided (where one is
    /// FALSE, for `AND`, without an error, the others' values and errors do not
    /// matter: docs/semantics.md). So TPC-H Q19's
    /// `l_shipinstruct = 'DELIVER IN PERSON'` calls its helper only for blocks with
    /// rows whose quantity and mode passed, and only for those rows, and `a < 10 AND
    /// s LIKE '%ab%'` searches the strings of the rows where `a < 10`. The order
    /// changes nothing else: the masks combine the same way, and the error reported
    /// for a row is the interpreter's.
    fn logic_operands(
        &mut self,
        is_and: bool,
        children: &[NodeId],
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        let (plain, guarded): (Vec<NodeId>, Vec<NodeId>) = children
            .iter()
            .partition(|&&c| !(self.guarded[c] && self.private(c)));
        let mut vals = Vec::with_capacity(children.len());
        for c in plain {
            vals.push(self.node(c, block, memo)?);
        }
        if guarded.is_empty() {
            return self.logic(is_and, &vals);
        }
        // The rows an operand so far decided (FALSE for AND) without an error.
        let mut decided = self.mzero();
        for v in &vals {
            decided = self.or(decided, self.decides_cleanly(is_and, v)?)?;
        }
        for c in guarded {
            let outer = self.care.get();
            let care = self.and(outer.unwrap_or(block.active), self.not(decided)?)?;
            let v = self.operand_for(c, care, block, memo)?;
            decided = self.or(decided, self.decides_cleanly(is_and, &v)?)?;
            vals.push(v);
        }
        self.logic(is_and, &vals)
    }

    /// The rows where `v` decides an `AND` (`is_and`: FALSE) or `OR` (TRUE) without
    /// an error.
    fn decides_cleanly(&self, is_and: bool, v: &V<'ctx>) -> R<IntValue<'ctx>> {
        let V::Bool { t, f, err } = *v else {
            return Err(EmitError("AND/OR of a non-boolean".into()));
        };
        let decides = if is_and { f } else { t };
        match err {
            Some(e) => self.and(decides, self.not(e)?),
            None => Ok(decides),
        }
    }

    /// Whether `c` can be evaluated for some rows only without computing anything
    /// twice: `c` has one use, and every node it reads, columns, parameters and
    /// constants aside, is read only from inside it.
    fn private(&self, c: NodeId) -> bool {
        if self.uses[c] != 1 {
            return false;
        }
        let mut inside: HashMap<NodeId, usize> = HashMap::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![c];
        while let Some(n) = stack.pop() {
            if seen.insert(n) {
                for o in self.prog.nodes[n].operands() {
                    *inside.entry(o).or_default() += 1;
                    stack.push(o);
                }
            }
        }
        inside
            .into_iter()
            .all(|(o, reads)| self.prog.nodes[o].is_input_or_constant() || self.uses[o] == reads)
    }

    /// Operand `c` of `AND`/`OR`, evaluated for the rows of `care` only: what is
    /// computed for these rows only is not reused for others.
    fn operand_for(
        &mut self,
        c: NodeId,
        care: IntValue<'ctx>,
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        let saved = memo.clone();
        let outer = self.care.replace(Some(care));
        let v = self.node(c, block, memo);
        self.care.set(outer);
        *memo = saved;
        v
    }

    /// Kleene AND/OR; errors in rows another child decides are dropped.
    fn logic(&self, is_and: bool, vals: &[V<'ctx>]) -> R<V<'ctx>> {
        let mut t = if is_and { self.ones() } else { self.mzero() };
        let mut f = if is_and { self.mzero() } else { self.ones() };
        let mut errs = None;
        let mut deciding = self.mzero();
        for v in vals {
            let V::Bool { t: vt, f: vf, err } = *v else {
                return Err(EmitError("AND/OR of a non-boolean".into()));
            };
            if is_and {
                t = self.and(t, vt)?;
                f = self.or(f, vf)?;
            } else {
                t = self.or(t, vt)?;
                f = self.and(f, vf)?;
            }
            let decides = if is_and { vf } else { vt };
            let clean = match err {
                Some(e) => self.and(decides, self.not(e)?)?,
                None => decides,
            };
            deciding = self.or(deciding, clean)?;
            errs = self.or_opt(errs, err)?;
        }
        let err = match errs {
            Some(e) => Some(self.and(e, self.not(deciding)?)?),
            None => None,
        };
        Ok(V::Bool { t, f, err })
    }

    fn case(
        &mut self,
        branches: &[(NodeId, NodeId)],
        else_expr: NodeId,
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        let mut remaining = self.ones();
        let mut err: Option<IntValue<'ctx>> = None;
        let mut taken = Vec::with_capacity(branches.len());
        for &(c, v) in branches {
            let V::Bool {
                t: ct, err: cerr, ..
            } = self.node(c, block, memo)?
            else {
                return Err(EmitError("CASE condition is not boolean".into()));
            };
            let mut take = self.and(remaining, ct)?;
            if let Some(ce) = cerr {
                err = self.or_opt(err, Some(self.and(remaining, ce)?))?;
                take = self.and(take, self.not(ce)?)?;
                remaining = self.and(remaining, self.not(ce)?)?;
            }
            remaining = self.and(remaining, self.not(take)?)?;
            let value = self.node(v, block, memo)?;
            if let Some(ve) = value.err() {
                err = self.or_opt(err, Some(self.and(take, ve)?))?;
            }
            taken.push((take, value));
        }
        let otherwise = self.node(else_expr, block, memo)?;
        if let Some(ee) = otherwise.err() {
            err = self.or_opt(err, Some(self.and(remaining, ee)?))?;
        }
        self.select_all(taken, remaining, otherwise, err)
    }

    /// Merges values taken on disjoint row masks, the last one on `rest`.
    fn select_all(
        &self,
        taken: Vec<(IntValue<'ctx>, V<'ctx>)>,
        rest: IntValue<'ctx>,
        last: V<'ctx>,
        err: Option<IntValue<'ctx>>,
    ) -> R<V<'ctx>> {
        match last {
            V::Bool { t, f, .. } => {
                let mut rt = self.and(t, rest)?;
                let mut rf = self.and(f, rest)?;
                for (take, v) in taken {
                    let V::Bool { t, f, .. } = v else {
                        return Err(EmitError("mixed CASE values".into()));
                    };
                    rt = self.or(rt, self.and(take, t)?)?;
                    rf = self.or(rf, self.and(take, f)?)?;
                }
                Ok(V::Bool { t: rt, f: rf, err })
            }
            V::Vals { v, valid, .. } => {
                let mut out = v;
                let all_valid = valid.is_none()
                    && taken
                        .iter()
                        .all(|(_, v)| matches!(v, V::Vals { valid: None, .. }));
                let mut rvalid = self.and(valid.unwrap_or(self.ones()), rest)?;
                for (take, tv) in taken {
                    let (x, xvalid, _) = Self::vals(tv)?;
                    let lanes = self.to_lanes(take)?;
                    out = self.b.build_select(lanes, x, out, "")?.into_vector_value();
                    rvalid = self.or(rvalid, self.and(take, xvalid.unwrap_or(self.ones()))?)?;
                }
                Ok(V::Vals {
                    v: out,
                    valid: if all_valid { None } else { Some(rvalid) },
                    err,
                })
            }
            V::Str {
                ptr, len, valid, ..
            } => {
                let (mut optr, mut olen) = (ptr, len);
                let all_valid = valid.is_none()
                    && taken
                        .iter()
                        .all(|(_, v)| matches!(v, V::Str { valid: None, .. }));
                let mut rvalid = self.and(valid.unwrap_or(self.ones()), rest)?;
                for (take, tv) in taken {
                    let V::Str {
                        ptr: xp,
                        len: xl,
                        valid: xvalid,
                        ..
                    } = tv
                    else {
                        return Err(EmitError("mixed CASE values".into()));
                    };
                    let lanes = self.to_lanes(take)?;
                    optr = self
                        .b
                        .build_select(lanes, xp, optr, "")?
                        .into_vector_value();
                    olen = self
                        .b
                        .build_select(lanes, xl, olen, "")?
                        .into_vector_value();
                    rvalid = self.or(rvalid, self.and(take, xvalid.unwrap_or(self.ones()))?)?;
                }
                Ok(V::Str {
                    ptr: optr,
                    len: olen,
                    valid: if all_valid { None } else { Some(rvalid) },
                    err,
                })
            }
        }
    }

    fn coalesce(
        &mut self,
        args: &[NodeId],
        block: &Block<'ctx>,
        memo: &mut HashMap<NodeId, V<'ctx>>,
    ) -> R<V<'ctx>> {
        let mut remaining = self.ones();
        let mut err = None;
        let mut taken = Vec::with_capacity(args.len());
        let (last_id, firsts) = args
            .split_last()
            .ok_or_else(|| EmitError("empty COALESCE".into()))?;
        for &a in firsts {
            let v = self.node(a, block, memo)?;
            let valid = self.validity(&v)?.unwrap_or(self.ones());
            if let Some(e) = v.err() {
                err = self.or_opt(err, Some(self.and(remaining, e)?))?;
                remaining = self.and(remaining, self.not(e)?)?;
            }
            let take = self.and(remaining, valid)?;
            remaining = self.and(remaining, self.not(valid)?)?;
            taken.push((take, v));
        }
        let last = self.node(*last_id, block, memo)?;
        if let Some(e) = last.err() {
            err = self.or_opt(err, Some(self.and(remaining, e)?))?;
        }
        self.select_all(taken, remaining, last, err)
    }

    fn cast(&mut self, from: PType, to: PType, x: V<'ctx>) -> R<V<'ctx>> {
        if from == to {
            return Ok(x);
        }
        if from == PType::Bool {
            let V::Bool { t, f, err } = x else {
                return Err(EmitError("cast of a non-boolean".into()));
            };
            let lanes = self.to_lanes(t)?;
            let v =
                self.b
                    .build_int_z_extend(lanes, self.vec_ty(to).into_vector_type_int()?, "")?;
            return Ok(V::Vals {
                v,
                valid: Some(self.or(t, f)?),
                err,
            });
        }
        let (xv, valid, mut err) = Self::vals(x)?;
        if to == PType::Bool {
            let nz =
                self.b
                    .build_int_compare(IntPredicate::NE, xv, xv.get_type().const_zero(), "")?;
            let m = self.to_mask(nz)?;
            let valid = valid.unwrap_or(self.ones());
            return Ok(V::Bool {
                t: self.and(m, valid)?,
                f: self.and(self.not(m)?, valid)?,
                err,
            });
        }
        let target = self.vec_ty(to);
        let v = if from.is_float() && to.is_float() {
            if to.width() > from.width() {
                self.b.build_float_ext(xv, target, "")?
            } else {
                self.b.build_float_trunc(xv, target, "")?
            }
        } else if to.is_float() {
            if from.is_signed() {
                self.b.build_signed_int_to_float(xv, target, "")?
            } else {
                self.b.build_unsigned_int_to_float(xv, target, "")?
            }
        } else if from.is_float() {
            // Round half to even, then check the range (NaN fails both bounds).
            let rint = self.intrinsic("llvm.rint", &[xv.get_type().into()])?;
            let r = self.call(rint, &[xv.into()])?.into_vector_value();
            let (min, max) = Self::min_max(to);
            let lo = self.float_splat(from, min as f64)?;
            let hi = self.float_splat(from, (max + 1) as f64)?;
            let ge = self.b.build_float_compare(FloatPredicate::OGE, r, lo, "")?;
            let lt = self.b.build_float_compare(FloatPredicate::OLT, r, hi, "")?;
            let ok = self.b.build_and(ge, lt, "")?;
            let bad = self.b.build_not(ok, "")?;
            err = self.or_opt(err, Some(self.new_errors(bad, valid)?))?;
            let safe = self
                .b
                .build_select(ok, r, xv.get_type().const_zero(), "")?
                .into_vector_value();
            if to.is_signed() {
                self.b.build_float_to_signed_int(safe, target, "")?
            } else {
                self.b.build_float_to_unsigned_int(safe, target, "")?
            }
        } else {
            // Integer to integer: range check in the source type, then resize.
            let (smin, smax) = Self::min_max(from);
            let (tmin, tmax) = Self::min_max(to);
            let mut bad: Option<VectorValue<'ctx>> = None;
            if tmin > smin {
                let below = self.b.build_int_compare(
                    if from.is_signed() {
                        IntPredicate::SLT
                    } else {
                        IntPredicate::ULT
                    },
                    xv,
                    self.int_vec_const(from, tmin)?,
                    "",
                )?;
                bad = Some(below);
            }
            if tmax < smax {
                let above = self.b.build_int_compare(
                    if from.is_signed() {
                        IntPredicate::SGT
                    } else {
                        IntPredicate::UGT
                    },
                    xv,
                    self.int_vec_const(from, tmax)?,
                    "",
                )?;
                bad = Some(match bad {
                    Some(b) => self.b.build_or(b, above, "")?,
                    None => above,
                });
            }
            if let Some(bad) = bad {
                err = self.or_opt(err, Some(self.new_errors(bad, valid)?))?;
            }
            let tt = target;
            if to == PType::I128 {
                self.widen_to_i128(xv, from.is_signed())?
            } else if to.width() > from.width() {
                if from.is_signed() {
                    self.b.build_int_s_extend(xv, tt, "")?
                } else {
                    self.b.build_int_z_extend(xv, tt, "")?
                }
            } else if to.width() < from.width() {
                self.b.build_int_truncate(xv, tt, "")?
            } else {
                xv
            }
        };
        Ok(V::Vals { v, valid, err })
    }

    fn float_splat(&self, t: PType, v: f64) -> R<VectorValue<'ctx>> {
        let bits = if t == PType::F32 {
            (v as f32).to_bits() as u64
        } else {
            v.to_bits()
        };
        self.const_vec(t, bits)
    }

    fn helper(
        &mut self,
        helper: Helper,
        state: usize,
        args: &[usize],
        out: PType,
        quick: Option<QuickCheck>,
        block: &Block<'ctx>,
    ) -> R<V<'ctx>> {
        let mut valid = None;
        for s in args {
            if self.prog.inputs[*s].nullable {
                let words = self.slot_field(*s, 1)?.into_pointer_value();
                valid = self.and_opt(valid, Some(self.word(words, block)?))?;
            }
        }
        let m = if out == PType::Bool {
            // Decide what the quick check decides; call the helper only for a
            // block with valid rows left that matter, for those rows only.
            let (t, f) = match quick {
                Some(q) => self.quick_masks(q, args[0], block)?,
                None => (self.mzero(), self.mzero()),
            };
            let care = self.care.get().unwrap_or(block.active);
            let undecided = self.and(self.not(self.or(t, f)?)?, care)?;
            let undecided = match valid {
                Some(v) => self.and(undecided, v)?,
                None => undecided,
            };
            let here = self
                .b
                .get_insert_block()
                .ok_or_else(|| EmitError("no insertion block".into()))?;
            let call_bb = self.ctx.append_basic_block(self.func, "undecided");
            let join = self.ctx.append_basic_block(self.func, "decided");
            let any = self
                .b
                .build_int_compare(IntPredicate::NE, undecided, self.mzero(), "")?;
            self.b.build_conditional_branch(any, call_bb, join)?;
            self.b.position_at_end(call_bb);
            let called = self.call_string_helper(helper, state, args, block, undecided)?;
            let from_call = self.end_with_branch(join)?;
            self.b.position_at_end(join);
            let phi = self.b.build_phi(self.mt, "helper_mask")?;
            phi.add_incoming(&[(&self.mzero(), here), (&called, from_call)]);
            // The helper's bits outside `undecided` are clear (`HelperFn`).
            self.or(t, phi.as_basic_value().into_int_value())?
        } else {
            self.call_string_helper(helper, state, args, block, block.active)?
        };
        if out == PType::Bool {
            let valid = valid.unwrap_or(self.ones());
            return Ok(V::Bool {
                t: self.and(m, valid)?,
                f: self.and(self.not(m)?, valid)?,
                err: None,
            });
        }
        let vt = self.vec_ty(out);
        let p =
            self.b
                .build_pointer_cast(self.helper_buf, vt.ptr_type(AddressSpace::default()), "")?;
        let load = self.b.build_load(p, "")?;
        if let Some(inst) = load.as_instruction_value() {
            inst.set_alignment(8)
                .map_err(|e| EmitError(e.to_string()))?;
        }
        Ok(V::Vals {
            v: load.into_vector_value(),
            valid,
            err: None,
        })
    }

    /// The masks of the rows a [`QuickCheck`] decides TRUE and FALSE from the rows
    /// of column `slot` (rows it leaves undecided are in neither).
    fn quick_masks(
        &self,
        q: QuickCheck,
        slot: usize,
        block: &Block<'ctx>,
    ) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
        // Read once a block: `s IN ('AIR', 'AIR REG')` is two equalities.
        let cached = self.heads.borrow().get(&slot).copied();
        let heads = match cached {
            Some(heads) => heads,
            None => {
                let heads = self.heads(slot, block)?;
                self.heads.borrow_mut().insert(slot, heads);
                heads
            }
        };
        let (t, f) = self.quick_decisions(q, &heads)?;
        Ok(match heads.read {
            Some(k) => (self.and(t, k)?, self.and(f, k)?),
            None => (t, f),
        })
    }

    /// What a quick check reads of the block's rows of string column `slot`.
    fn heads(&self, slot: usize, block: &Block<'ctx>) -> R<Heads<'ctx>> {
        let off = match self.prog.inputs[slot].layout {
            ByteLayout::Views => {
                let (lo, hi) = self.halves_16(slot, block)?;
                let i32v = self.ctx.i32_type().vec_type(LANES);
                let len = self.b.build_int_truncate(lo, i32v, "len")?;
                let head =
                    self.b
                        .build_right_shift(lo, self.splat(self.c64(32).into())?, false, "")?;
                let head = self.b.build_int_truncate(head, i32v, "head")?;
                return Ok(Heads {
                    len,
                    head,
                    padded: true,
                    rest: Some(hi),
                    next: None,
                    read: None,
                });
            }
            ByteLayout::Offsets64 => PType::I64,
            _ => PType::I32,
        };
        self.offset_heads(slot, off, block)
    }

    /// [`Heads`] of a column with `off` (`I32` or `I64`) offsets. A row's first eight
    /// bytes are read where they lie before the end of the column's last value (so
    /// inside the data buffer), and rows of 2^32 bytes or more are left out; the
    /// other rows read bytes that are not used, at an address clamped into the
    /// buffer (or, for a column of under eight bytes, in the helper buffer).
    fn offset_heads(&self, slot: usize, off: PType, block: &Block<'ctx>) -> R<Heads<'ctx>> {
        let (starts, ends) = self.offset_pairs(slot, off, block)?;
        let len = self.b.build_int_sub(ends, starts, "len")?;
        let rows = self
            .total_rows
            .ok_or_else(|| EmitError("rows not set".into()))?;
        let offsets = self.slot_field(slot, 0)?.into_pointer_value();
        let offp = self.scalar_ty(off).ptr_type(AddressSpace::default());
        let offsets = self.b.build_pointer_cast(offsets, offp, "")?;
        // SAFETY (of the generated code): offsets hold rows + 1 entries.
        let last = unsafe { self.b.build_in_bounds_gep(offsets, &[rows], "")? };
        let last = self.b.build_load(last, "last_offset")?.into_int_value();
        let last = self.b.build_int_z_extend_or_bit_cast(last, self.i64t, "")?;
        // Eight bytes at offset o lie inside when o < last - 7; reads are clamped to
        // offset last - 8, or made in the helper buffer when last < 8.
        let has_eight = self
            .b
            .build_int_compare(IntPredicate::UGE, last, self.c64(8), "")?;
        let pick = |a: IntValue<'ctx>, b: IntValue<'ctx>| -> R<IntValue<'ctx>> {
            Ok(self.b.build_select(has_eight, a, b, "")?.into_int_value())
        };
        let bound = pick(self.b.build_int_sub(last, self.c64(7), "")?, self.c64(0))?;
        let clamp = pick(self.b.build_int_sub(last, self.c64(8), "")?, self.c64(0))?;
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let data = self.slot_field(slot, 2)?.into_pointer_value();
        let data = self.b.build_pointer_cast(data, i8p, "")?;
        let spare = self.b.build_pointer_cast(self.helper_buf, i8p, "")?;
        let base = self
            .b
            .build_select(has_eight, data, spare, "heads_base")?
            .into_pointer_value();
        let width = self.scalar_ty(off).into_int_type();
        let splat = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let x = self.b.build_int_truncate_or_bit_cast(x, width, "")?;
            self.splat(x.into())
        };
        let inside =
            self.b
                .build_int_compare(IntPredicate::ULT, starts, splat(bound)?, "inside")?;
        let mut read = self.and(self.to_mask(inside)?, block.active)?;
        if off == PType::I64 {
            let small = self.b.build_int_compare(
                IntPredicate::ULE,
                len,
                splat(self.c64(u32::MAX as u64))?,
                "",
            )?;
            read = self.and(read, self.to_mask(small)?)?;
        }
        let clamp = splat(clamp)?;
        let below = self
            .b
            .build_int_compare(IntPredicate::ULT, starts, clamp, "")?;
        let at = self
            .b
            .build_select(below, starts, clamp, "")?
            .into_vector_value();
        // Eight bytes a row: they decide an equality with a literal of up to 8
        // bytes without the helper. `at` is at most `clamp`, so the eight bytes
        // from it lie inside the data buffer (or the helper buffer).
        let words = self.words_at(base, at)?;
        let i32v = self.ctx.i32_type().vec_type(LANES);
        let head = self.b.build_int_truncate(words, i32v, "head")?;
        let next = self
            .b
            .build_right_shift(words, self.splat(self.c64(32).into())?, false, "")?;
        let next = self.b.build_int_truncate(next, i32v, "next")?;
        let len = self.b.build_int_truncate_or_bit_cast(len, i32v, "")?;
        Ok(Heads {
            len,
            head,
            padded: false,
            rest: None,
            next: Some(next),
            read: Some(read),
        })
    }

    /// The eight bytes at `base + at[i]` for each lane `i` (every address valid),
    /// little-endian: one gather, or where gathers are slow ([`fast_gathers`]) a
    /// load per lane, as the hand-written loop and arrow's `starts_with` do.
    fn words_at(&self, base: PointerValue<'ctx>, at: VectorValue<'ctx>) -> R<VectorValue<'ctx>> {
        let i64p = self.i64t.ptr_type(AddressSpace::default());
        let vt = self.i64t.vec_type(LANES);
        if self.gathers {
            let at = self.b.build_int_z_extend_or_bit_cast(at, vt, "")?;
            let base = self.b.build_ptr_to_int(base, self.i64t, "")?;
            let addrs = self.b.build_int_add(self.splat(base.into())?, at, "")?;
            let ptrs = self.b.build_int_to_ptr(addrs, i64p.vec_type(LANES), "")?;
            let gather =
                self.intrinsic("llvm.masked.gather", &[vt.into(), ptrs.get_type().into()])?;
            let all = self.to_lanes(self.ones())?;
            let align = self.ctx.i32_type().const_int(1, false);
            let words = self.call(
                gather,
                &[ptrs.into(), align.into(), all.into(), vt.get_undef().into()],
            )?;
            return Ok(words.into_vector_value());
        }
        let mut words = vt.get_undef();
        for lane in 0..LANES {
            let lane = self.c64(lane as u64);
            let o = self.b.build_extract_element(at, lane, "")?.into_int_value();
            let o = self.b.build_int_z_extend_or_bit_cast(o, self.i64t, "")?;
            // SAFETY (of the generated code): the caller's addresses are valid.
            let p = unsafe { self.b.build_gep(base, &[o], "")? };
            let p = self.b.build_pointer_cast(p, i64p, "")?;
            let word = self.b.build_load(p, "")?;
            if let Some(load) = word.as_instruction_value() {
                load.set_alignment(1)
                    .map_err(|e| EmitError(format!("load alignment: {e}")))?;
            }
            words = self.b.build_insert_element(words, word, lane, "")?;
        }
        Ok(words)
    }

    /// The TRUE and FALSE decisions of `q` from what it reads of a block's rows.
    fn quick_decisions(
        &self,
        q: QuickCheck,
        h: &Heads<'ctx>,
    ) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
        let param = |i: usize| -> R<IntValue<'ctx>> {
            self.params[q.params[i]]
                .map(|v| v.into_int_value())
                .ok_or_else(|| EmitError("quick check parameter not loaded".into()))
        };
        let i32t = self.ctx.i32_type();
        let word = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let x = self.b.build_int_truncate(x, i32t, "")?;
            self.splat(x.into())
        };
        let cmp =
            |p: IntPredicate, a: VectorValue<'ctx>, b: VectorValue<'ctx>| -> R<IntValue<'ctx>> {
                self.to_mask(self.b.build_int_compare(p, a, b, "")?)
            };
        let flag = |b: IntValue<'ctx>| -> R<IntValue<'ctx>> {
            Ok(self
                .b
                .build_select(b, self.ones(), self.mzero(), "")?
                .into_int_value())
        };
        // The first min(n, 4) bytes of `head`: a mask of that many low bytes.
        let first_bytes = |n: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let short = self
                .b
                .build_int_compare(IntPredicate::ULE, n, self.c64(4), "")?;
            let n = self
                .b
                .build_select(short, n, self.c64(4), "")?
                .into_int_value();
            let bits = self.b.build_int_mul(n, self.c64(8), "")?;
            let mask = self.b.build_left_shift(self.c64(1), bits, "")?;
            word(self.b.build_int_sub(mask, self.c64(1), "")?)
        };
        let low32 = self.c64(u32::MAX as u64);
        Ok(match q.test {
            QuickTest::Equal { negated } => {
                let (p_lo, p_hi) = (param(0)?, param(1)?);
                let lit_len = self.b.build_and(p_lo, low32, "")?;
                let lit_head = self.b.build_right_shift(p_lo, self.c64(32), false, "")?;
                // Rows of the literal's length: their first min(length, 4) bytes.
                let shown = self.b.build_and(h.head, first_bytes(lit_len)?, "")?;
                let lo_eq = self.and(
                    cmp(IntPredicate::EQ, h.len, word(lit_len)?)?,
                    cmp(IntPredicate::EQ, shown, word(lit_head)?)?,
                )?;
                // A literal decided by what is compared: 12 bytes with a view's
                // second half, 8 with the bytes read at a row's offset, else 4.
                let (hi_eq, whole) = match (h.rest, h.next) {
                    (Some(hi), _) => {
                        let p_hi = self.splat(p_hi.into())?;
                        (cmp(IntPredicate::EQ, hi, p_hi)?, 12)
                    }
                    (None, Some(next)) => {
                        // The literal's bytes 4..8 (zero past its length) and the
                        // row's, as many as the literal has.
                        let long = self.b.build_int_compare(
                            IntPredicate::UGT,
                            lit_len,
                            self.c64(4),
                            "",
                        )?;
                        let beyond = self.b.build_int_sub(lit_len, self.c64(4), "")?;
                        let beyond = self
                            .b
                            .build_select(long, beyond, self.c64(0), "")?
                            .into_int_value();
                        let shown = self.b.build_and(next, first_bytes(beyond)?, "")?;
                        (cmp(IntPredicate::EQ, shown, word(p_hi)?)?, 8)
                    }
                    (None, None) => (self.ones(), 4),
                };
                let inline =
                    self.b
                        .build_int_compare(IntPredicate::ULE, lit_len, self.c64(whole), "")?;
                let inline = flag(inline)?;
                let t = self.and(self.and(lo_eq, hi_eq)?, inline)?;
                let f = self.or(self.not(lo_eq)?, self.and(inline, self.not(hi_eq)?)?)?;
                if negated {
                    (f, t)
                } else {
                    (t, f)
                }
            }
            QuickTest::Order(op) => {
                // Zero past each row's length, so a shorter row orders first.
                let prefix = if h.padded {
                    h.head
                } else {
                    let all = self.splat(i32t.const_all_ones().into())?;
                    let one = self.splat(i32t.const_int(1, false).into())?;
                    let four = self.splat(i32t.const_int(4, false).into())?;
                    let eight = self.splat(i32t.const_int(8, false).into())?;
                    let long = self
                        .b
                        .build_int_compare(IntPredicate::UGE, h.len, four, "")?;
                    // Rows of four bytes or more shift by 32 or more (poison), but
                    // the select takes all ones for them; the others by at most 24.
                    let bits = self.b.build_int_mul(h.len, eight, "")?;
                    let part = self.b.build_left_shift(one, bits, "")?;
                    let part = self.b.build_int_sub(part, one, "")?;
                    let mask = self
                        .b
                        .build_select(long, all, part, "")?
                        .into_vector_value();
                    self.b.build_and(h.head, mask, "")?
                };
                let bswap = self.intrinsic("llvm.bswap", &[prefix.get_type().into()])?;
                let own = self.call(bswap, &[prefix.into()])?.into_vector_value();
                let key = word(param(0)?)?;
                let differ = cmp(IntPredicate::NE, own, key)?;
                let pred = match op {
                    CmpOp::Eq => IntPredicate::EQ,
                    CmpOp::Ne => IntPredicate::NE,
                    CmpOp::Lt => IntPredicate::ULT,
                    CmpOp::Le => IntPredicate::ULE,
                    CmpOp::Gt => IntPredicate::UGT,
                    CmpOp::Ge => IntPredicate::UGE,
                };
                let holds = cmp(pred, own, key)?;
                (
                    self.and(differ, holds)?,
                    self.and(differ, self.not(holds)?)?,
                )
            }
            QuickTest::Prefix => {
                let (k, want) = (param(0)?, param(1)?);
                // Lengths are compared as u32. A pattern of 2^32 bytes or more
                // (clamped to 2^32 - 1) still rules out every shorter row, and is
                // never decided TRUE here: only patterns of up to 4 bytes are.
                let fits = self.b.build_int_compare(IntPredicate::ULE, k, low32, "")?;
                let k32 = self.b.build_select(fits, k, low32, "")?.into_int_value();
                let longer = cmp(IntPredicate::UGE, h.len, word(k32)?)?;
                let shown = self.b.build_and(h.head, first_bytes(k)?, "")?;
                let same = cmp(IntPredicate::EQ, shown, word(want)?)?;
                let ok = self.and(longer, same)?;
                let short = self
                    .b
                    .build_int_compare(IntPredicate::ULE, k, self.c64(4), "")?;
                (self.and(ok, flag(short)?)?, self.not(ok)?)
            }
            QuickTest::ShortRow { find, case } => {
                self.short_row_decisions(find, case, param(0)?, param(1)?, h)?
            }
        })
    }

    /// The TRUE and FALSE decisions of [`QuickTest::ShortRow`] with its
    /// parameters `lens` (the literal's length, and the longest row that can hold,
    /// in the low and high 32 bits) and `want` (its first eight bytes).
    fn short_row_decisions(
        &self,
        find: Find,
        case: CaseMap,
        lens: IntValue<'ctx>,
        want: IntValue<'ctx>,
        h: &Heads<'ctx>,
    ) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
        let i32t = self.ctx.i32_type();
        let i64v = self.i64t.vec_type(LANES);
        // Bytes 4..8: read at the row's offset, or a view's second half.
        let high = match (h.next, h.rest) {
            (Some(next), _) => self.b.build_int_z_extend(next, i64v, "")?,
            (None, Some(rest)) => {
                let low = self.splat(self.c64(u32::MAX as u64).into())?;
                self.b.build_and(rest, low, "")?
            }
            (None, None) => return Ok((self.mzero(), self.mzero())),
        };
        let splat64 = |x: u64| self.splat(self.c64(x).into());
        let splat32 = |x: IntValue<'ctx>| -> R<VectorValue<'ctx>> {
            let x = self.b.build_int_truncate(x, i32t, "")?;
            self.splat(x.into())
        };
        let mask = |v: VectorValue<'ctx>| self.to_mask(v);
        let cmp = |p: IntPredicate, a: VectorValue<'ctx>, b: VectorValue<'ctx>| {
            self.b.build_int_compare(p, a, b, "")
        };
        let high = self.b.build_left_shift(high, splat64(32)?, "")?;
        let low = self.b.build_int_z_extend(h.head, i64v, "")?;
        let word = self.b.build_or(low, high, "row_word")?;
        // The row's bytes, zero past its length: (1 << 8 len) - 1 for up to 7
        // bytes (the shift of a longer row's length is masked to stay defined).
        let len64 = self.b.build_int_z_extend(h.len, i64v, "")?;
        let low_bytes = |n: VectorValue<'ctx>| -> R<VectorValue<'ctx>> {
            let short = cmp(IntPredicate::ULT, n, splat64(8)?)?;
            let bits = self.b.build_and(n, splat64(7)?, "")?;
            let bits = self.b.build_int_mul(bits, splat64(8)?, "")?;
            let part = self.b.build_left_shift(splat64(1)?, bits, "")?;
            let part = self.b.build_int_sub(part, splat64(1)?, "")?;
            Ok(self
                .b
                .build_select(short, part, splat64(u64::MAX)?, "")?
                .into_vector_value())
        };
        let bytes = self.b.build_and(word, low_bytes(len64)?, "row_bytes")?;
        // Rows of up to eight bytes (all ASCII, to be case-mapped) are decided here.
        const ONES: u64 = u64::MAX / 255;
        let mut seen = mask(cmp(IntPredicate::ULE, h.len, splat32(self.c64(8))?)?)?;
        let row = match case {
            CaseMap::AsIs => bytes,
            CaseMap::Upper | CaseMap::Lower => {
                let high_bits = self.b.build_and(bytes, splat64(0x80 * ONES)?, "")?;
                let ascii = cmp(IntPredicate::EQ, high_bits, splat64(0)?)?;
                seen = self.and(seen, mask(ascii)?)?;
                // As `strings::map_ascii_words` does: per byte b < 0x80,
                // b + (0x80 - first) has its high bit set iff b >= first, and
                // b + (0x7f - last) iff b > last; the letters' 0x20 bit flips.
                let (first, last) = match case {
                    CaseMap::Upper => (b'a', b'z'),
                    _ => (b'A', b'Z'),
                };
                let from = splat64(u64::from(0x80 - first) * ONES)?;
                let at_least = self.b.build_int_add(bytes, from, "")?;
                let past = splat64(u64::from(0x7f - last) * ONES)?;
                let beyond = self.b.build_int_add(bytes, past, "")?;
                let letters = self
                    .b
                    .build_and(at_least, self.b.build_not(beyond, "")?, "")?;
                let letters = self.b.build_and(letters, splat64(0x80 * ONES)?, "")?;
                let flips = self.b.build_right_shift(letters, splat64(2)?, false, "")?;
                self.b.build_xor(bytes, flips, "mapped")?
            }
        };
        // The literal: its length (as the rows', in 32 bits) and its bytes, of
        // which a row's are compared under `keep` (its first min(length, 8)).
        let lit_len = self.b.build_and(lens, self.c64(u32::MAX as u64), "")?;
        let lit = splat32(lit_len)?;
        let lit64 = self.b.build_int_z_extend(lit, i64v, "")?;
        let keep = low_bytes(lit64)?;
        let want = self.splat(want.into())?;
        let at_least_lit = mask(cmp(IntPredicate::UGE, h.len, lit)?)?;
        let at = |shift: VectorValue<'ctx>| -> R<IntValue<'ctx>> {
            let moved = self.b.build_right_shift(row, shift, false, "")?;
            let part = self.b.build_and(moved, keep, "")?;
            mask(cmp(IntPredicate::EQ, part, want)?)
        };
        let hit = match find {
            Find::Equal => self.and(
                mask(cmp(IntPredicate::EQ, h.len, lit)?)?,
                mask(cmp(IntPredicate::EQ, row, want)?)?,
            )?,
            Find::Prefix => self.and(at_least_lit, at(splat64(0)?)?)?,
            Find::Suffix => {
                // The literal's bytes end where the row's do: a shift of
                // 8 (len - length), masked to stay defined where the row is shorter
                // (those rows are not `at_least_lit`).
                let gap = self.b.build_int_sub(len64, lit64, "")?;
                let gap = self.b.build_and(gap, splat64(7)?, "")?;
                let shift = self.b.build_int_mul(gap, splat64(8)?, "")?;
                self.and(at_least_lit, at(shift)?)?
            }
            Find::Contains => {
                // At each position i where the literal fits: i + length <= len.
                let mut any = self.mzero();
                for i in 0..8u64 {
                    let end = self.b.build_int_add(lit64, splat64(i)?, "")?;
                    let fits = mask(cmp(IntPredicate::ULE, end, len64)?)?;
                    let found = self.and(fits, at(splat64(8 * i)?)?)?;
                    any = self.or(any, found)?;
                }
                any
            }
        };
        let t = self.and(seen, hit)?;
        let mut f = self.and(seen, self.not(hit)?)?;
        let most = self.b.build_right_shift(lens, self.c64(32), false, "")?;
        let too_long = mask(cmp(IntPredicate::UGT, h.len, splat32(most)?)?)?;
        f = self.or(f, too_long)?;
        if case == CaseMap::AsIs {
            let too_short = self.not(at_least_lit)?;
            f = self.or(f, too_short)?;
        }
        Ok((t, f))
    }

    /// Calls `helper` for the rows of `block` in the mask `rows`; its mask of
    /// `LANES` bits (0 for the other rows).
    fn call_string_helper(
        &mut self,
        helper: Helper,
        state: usize,
        args: &[usize],
        block: &Block<'ctx>,
        rows: IntValue<'ctx>,
    ) -> R<IntValue<'ctx>> {
        let f = match self.module.get_function(helper.name) {
            Some(f) => f,
            None => {
                let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
                let sp = self.slot_ty.ptr_type(AddressSpace::default());
                let ty = self.i64t.fn_type(
                    &[
                        i8p.into(),
                        sp.into(),
                        sp.into(),
                        self.i64t.into(),
                        self.i64t.into(),
                        i8p.into(),
                    ],
                    false,
                );
                self.module
                    .add_function(helper.name, ty, Some(Linkage::External))
            }
        };
        let state =
            self.params[state].ok_or_else(|| EmitError("helper state not loaded".into()))?;
        let a = self.slot_ptr(args[0])?;
        let b = match args.get(1) {
            Some(s) => self.slot_ptr(*s)?,
            None => self.slot_ty.ptr_type(AddressSpace::default()).const_null(),
        };
        let buf = self.b.build_pointer_cast(
            self.helper_buf,
            self.ctx.i8_type().ptr_type(AddressSpace::default()),
            "",
        )?;
        let m = self
            .call(
                f,
                &[
                    state.into(),
                    a.into(),
                    b.into(),
                    block.row0.into(),
                    self.b.build_int_z_extend(rows, self.i64t, "rows")?.into(),
                    buf.into(),
                ],
            )?
            .into_int_value();
        Ok(self.b.build_int_truncate_or_bit_cast(m, self.mt, "")?)
    }
}

impl<'ctx> Emitter<'_, 'ctx> {
    /// A string literal: the parameter points at its `{ u64 address, u64 length }`.
    fn string_param(&self, p: PointerValue<'ctx>) -> R<V<'ctx>> {
        let addr = self.b.build_load(p, "str_addr")?;
        // SAFETY (of the generated code): the parameter points at two u64s.
        let lp = unsafe { self.b.build_in_bounds_gep(p, &[self.c64(1)], "")? };
        let len = self.b.build_load(lp, "str_len")?;
        Ok(V::Str {
            ptr: self.splat(addr)?,
            len: self.splat(len)?,
            valid: None,
            err: None,
        })
    }

    /// The views of a string column's rows in the block: the address of each row's
    /// first byte and its length, read in place from the column's layout.
    fn string_views(
        &self,
        slot: usize,
        valid: Option<IntValue<'ctx>>,
        block: &Block<'ctx>,
    ) -> R<V<'ctx>> {
        let (ptr, len) = match self.prog.inputs[slot].layout {
            ByteLayout::Offsets32 => self.offset_views(slot, PType::I32, block)?,
            ByteLayout::Offsets64 => self.offset_views(slot, PType::I64, block)?,
            ByteLayout::Views => self.view_views(slot, valid, block)?,
        };
        Ok(V::Str {
            ptr,
            len,
            valid,
            err: None,
        })
    }

    /// Addresses and lengths from `i32` or `i64` (`off`) offsets into one data buffer.
    fn offset_views(
        &self,
        slot: usize,
        off: PType,
        block: &Block<'ctx>,
    ) -> R<(VectorValue<'ctx>, VectorValue<'ctx>)> {
        let (starts, ends) = self.offset_pairs(slot, off, block)?;
        let wide = self.i64t.vec_type(LANES);
        // Offsets are never negative: zero-extending an i32 is exact.
        let starts = self.b.build_int_z_extend_or_bit_cast(starts, wide, "")?;
        let ends = self.b.build_int_z_extend_or_bit_cast(ends, wide, "")?;
        let len = self.b.build_int_sub(ends, starts, "len")?;
        let data = self.slot_field(slot, 2)?.into_pointer_value();
        let base = self.b.build_ptr_to_int(data, self.i64t, "")?;
        let ptr = self
            .b
            .build_int_add(self.splat(base.into())?, starts, "ptr")?;
        Ok((ptr, len))
    }

    /// The block's rows' start and end offsets, as `<LANES x off>` (`I32` or `I64`).
    fn offset_pairs(
        &self,
        slot: usize,
        off: PType,
        block: &Block<'ctx>,
    ) -> R<(VectorValue<'ctx>, VectorValue<'ctx>)> {
        let offsets = self.slot_field(slot, 0)?.into_pointer_value();
        let offp = self.scalar_ty(off).ptr_type(AddressSpace::default());
        let offsets = self.b.build_pointer_cast(offsets, offp, "")?;
        // SAFETY (of the generated code): offsets hold rows + 1 entries, so the block's
        // starts (row0 ..) and ends (row0 + 1 ..) are in bounds for its active lanes.
        let next = unsafe { self.b.build_in_bounds_gep(offsets, &[self.c64(1)], "")? };
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let mut pair = Vec::with_capacity(2);
        for base in [offsets, next] {
            let base = self.b.build_pointer_cast(base, i8p, "")?;
            let p = self.elem_ptr(base, off, block)?;
            pair.push(self.load_block(p, off, block)?);
        }
        Ok((pair[0], pair[1]))
    }

    /// The block's 16-byte values of input `slot` as two `<LANES x i64>`, their low
    /// and high halves: for string views, (length and prefix) and (buffer index and
    /// offset, or inline bytes 4..12); for little-endian `i128`s, the low and high
    /// words. One wide load and two shuffles (not a load per value).
    fn halves_16(
        &self,
        slot: usize,
        block: &Block<'ctx>,
    ) -> R<(VectorValue<'ctx>, VectorValue<'ctx>)> {
        let views = self.slot_field(slot, 0)?.into_pointer_value();
        let i64p = self.i64t.ptr_type(AddressSpace::default());
        let views = self.b.build_pointer_cast(views, i64p, "")?;
        let both = self.i64t.vec_type(2 * LANES);
        let first = self.b.build_left_shift(block.row0, self.c64(1), "")?;
        // SAFETY (of the generated code): the slot holds `rows` views of two u64s; a
        // full block's 2 * LANES words are in bounds, a tail block reads only the
        // words of its active lanes (masked).
        let p = unsafe { self.b.build_in_bounds_gep(views, &[first], "")? };
        let p = self
            .b
            .build_pointer_cast(p, both.ptr_type(AddressSpace::default()), "")?;
        let words = if block.full {
            let load = self.b.build_load(p, "views")?;
            if let Some(inst) = load.as_instruction_value() {
                inst.set_alignment(8)
                    .map_err(|e| EmitError(e.to_string()))?;
            }
            load.into_vector_value()
        } else {
            let f = self.intrinsic("llvm.masked.load", &[both.into(), p.get_type().into()])?;
            let lanes = self.to_lanes(block.active)?;
            let lanes = self.shuffle(lanes, None, (0..2 * u64::from(LANES)).map(|i| i / 2))?;
            let align = self.ctx.i32_type().const_int(8, false);
            self.call(
                f,
                &[
                    p.into(),
                    align.into(),
                    lanes.into(),
                    both.const_zero().into(),
                ],
            )?
            .into_vector_value()
        };
        let pick = |odd: u64| self.shuffle(words, None, (0..u64::from(LANES)).map(|i| 2 * i + odd));
        Ok((pick(0)?, pick(1)?))
    }

    /// Addresses and lengths from 16-byte views: an inline value's bytes are in the
    /// view itself (4 bytes after its start); a longer one's are at its offset in
    /// the data buffer its index names (the buffers' addresses are gathered for
    /// those lanes only, so NULL and inline lanes read no buffer table entry).
    fn view_views(
        &self,
        slot: usize,
        valid: Option<IntValue<'ctx>>,
        block: &Block<'ctx>,
    ) -> R<(VectorValue<'ctx>, VectorValue<'ctx>)> {
        let (lo, hi) = self.halves_16(slot, block)?;
        let low32 = self.splat(self.c64(u32::MAX as u64).into())?;
        let len = self.b.build_and(lo, low32, "len")?;
        let twelve = self.splat(self.c64(12).into())?;
        let inline = self
            .b
            .build_int_compare(IntPredicate::ULE, len, twelve, "inline")?;
        let views = self.slot_field(slot, 0)?.into_pointer_value();
        let views = self.b.build_ptr_to_int(views, self.i64t, "")?;
        let rows = self.row_indices(block, self.i64t)?;
        let at = self
            .b
            .build_int_mul(rows, self.splat(self.c64(16).into())?, "")?;
        let at = self.b.build_int_add(at, self.splat(views.into())?, "")?;
        let inline_ptr = self
            .b
            .build_int_add(at, self.splat(self.c64(4).into())?, "")?;
        // Lanes whose bytes are in a data buffer: long, active and valid.
        let long = self.not(self.to_mask(inline)?)?;
        let gather = self.and(long, block.active)?;
        let gather = match valid {
            Some(v) => self.and(gather, v)?,
            None => gather,
        };
        let index = self.b.build_and(hi, low32, "buffer")?;
        let offset =
            self.b
                .build_right_shift(hi, self.splat(self.c64(32).into())?, false, "offset")?;
        let buffers = self.slot_field(slot, 2)?.into_pointer_value();
        let buffers = self.b.build_ptr_to_int(buffers, self.i64t, "")?;
        let at = self
            .b
            .build_int_mul(index, self.splat(self.c64(8).into())?, "")?;
        let at = self.b.build_int_add(at, self.splat(buffers.into())?, "")?;
        // The gather below dereferences these addresses only for lanes whose view
        // names a data buffer (Arrow validates buffer indices when a view array is
        // built), so the table is read in bounds.
        let i64p = self.i64t.ptr_type(AddressSpace::default());
        let addrs = self
            .b
            .build_cast(InstructionOpcode::IntToPtr, at, i64p.vec_type(LANES), "")?
            .into_vector_value();
        let f = self.intrinsic(
            "llvm.masked.gather",
            &[self.i64t.vec_type(LANES).into(), addrs.get_type().into()],
        )?;
        let base = self
            .call(
                f,
                &[
                    addrs.into(),
                    self.ctx.i32_type().const_int(8, false).into(),
                    self.to_lanes(gather)?.into(),
                    self.i64t.vec_type(LANES).const_zero().into(),
                ],
            )?
            .into_vector_value();
        let far = self.b.build_int_add(base, offset, "")?;
        let ptr = self
            .b
            .build_select(inline, inline_ptr, far, "ptr")?
            .into_vector_value();
        Ok((ptr, len))
    }

    /// A call of an LLVM intrinsic on float vectors; NULL where any argument is.
    fn call_intrinsic(
        &mut self,
        name: &str,
        domain: Option<(CmpOp, u64)>,
        ret: PType,
        args: &[V<'ctx>],
    ) -> R<V<'ctx>> {
        let mut valid = None;
        let mut err = None;
        let mut vecs: Vec<BasicMetadataValueEnum<'ctx>> = Vec::with_capacity(args.len());
        for a in args {
            let (v, va, e) = Self::vals(*a)?;
            valid = self.and_opt(valid, va)?;
            err = self.or_opt(err, e)?;
            vecs.push(v.into());
        }
        let vt = self.vec_ty(ret);
        let f = self.intrinsic(name, &[vt.into()])?;
        let v = self.call(f, &vecs)?.into_vector_value();
        if let Some((op, bits)) = domain {
            let (x, _, _) = Self::vals(args[0])?;
            let c = self.float_splat(ret, f64::from_bits(bits))?;
            let pred = match op {
                CmpOp::Eq => FloatPredicate::OEQ,
                CmpOp::Ne => FloatPredicate::ONE,
                CmpOp::Lt => FloatPredicate::OLT,
                CmpOp::Le => FloatPredicate::OLE,
                CmpOp::Gt => FloatPredicate::OGT,
                CmpOp::Ge => FloatPredicate::OGE,
            };
            let bad = self.b.build_float_compare(pred, x, c, "")?;
            err = self.or_opt(err, Some(self.new_errors(bad, valid)?))?;
        }
        Ok(V::Vals { v, valid, err })
    }

    /// A call of a [`CallFn`](crate::CallFn) helper: the argument blocks go through
    /// stack memory, the helper writes the results and returns its error lanes.
    #[allow(clippy::too_many_arguments)]
    fn call_helper(
        &mut self,
        helper: Helper,
        state: usize,
        ret: PType,
        strict: bool,
        arg_ids: &[NodeId],
        args: &[V<'ctx>],
        block: &Block<'ctx>,
    ) -> R<V<'ctx>> {
        let mem = self
            .call_mem
            .ok_or_else(|| EmitError("no call memory".into()))?;
        let i8p = self.ctx.i8_type().ptr_type(AddressSpace::default());
        let i64p = self.i64t.ptr_type(AddressSpace::default());
        let f = match self.module.get_function(helper.name) {
            Some(f) => f,
            None => {
                let ty = self.i64t.fn_type(
                    &[
                        i8p.into(),
                        i8p.into(),
                        mem.arg_ty.ptr_type(AddressSpace::default()).into(),
                        mem.out_ty.ptr_type(AddressSpace::default()).into(),
                    ],
                    false,
                );
                self.module
                    .add_function(helper.name, ty, Some(Linkage::External))
            }
        };
        let area = |e: &Self, base: PointerValue<'ctx>, k: usize| -> R<PointerValue<'ctx>> {
            // SAFETY (of the generated code): k <= the largest call's argument count,
            // for which the areas were sized.
            let p = unsafe {
                e.b.build_in_bounds_gep(base, &[e.c64(0), e.c64(k as u64), e.c64(0)], "")?
            };
            Ok(p)
        };
        let mut err = None;
        let mut all_valid = None;
        for (k, (a, id)) in args.iter().zip(arg_ids).enumerate() {
            let t = self.prog.type_of(*id);
            let values = area(self, mem.values, k)?;
            let lens = area(self, mem.lens, k)?;
            let valid = self.validity(a)?;
            err = self.or_opt(err, a.err())?;
            all_valid = self.and_opt(all_valid, valid)?;
            let mut has_lens = false;
            match *a {
                V::Vals { v, .. } => {
                    let p = self.b.build_pointer_cast(
                        values,
                        v.get_type().ptr_type(AddressSpace::default()),
                        "",
                    )?;
                    let st = self.b.build_store(p, v)?;
                    st.set_alignment(t.width().max(1))
                        .map_err(|e| EmitError(e.to_string()))?;
                }
                V::Bool { t: yes, .. } => {
                    let w = self.b.build_int_z_extend(yes, self.i64t, "")?;
                    self.b.build_store(values, w)?;
                }
                V::Str { ptr, len, .. } => {
                    let vp = ptr.get_type().ptr_type(AddressSpace::default());
                    let p = self.b.build_pointer_cast(values, vp, "")?;
                    self.b
                        .build_store(p, ptr)?
                        .set_alignment(8)
                        .map_err(|e| EmitError(e.to_string()))?;
                    let p = self.b.build_pointer_cast(lens, vp, "")?;
                    self.b
                        .build_store(p, len)?
                        .set_alignment(8)
                        .map_err(|e| EmitError(e.to_string()))?;
                    has_lens = true;
                }
            }
            // SAFETY (of the generated code): k < the descriptor array's length.
            let desc = unsafe {
                self.b
                    .build_in_bounds_gep(mem.args, &[self.c64(0), self.c64(k as u64)], "")?
            };
            let fields: [BasicValueEnum<'ctx>; 3] = [
                self.b.build_pointer_cast(values, i8p, "")?.into(),
                if has_lens {
                    lens.into()
                } else {
                    i64p.const_null().into()
                },
                self.b
                    .build_int_z_extend(valid.unwrap_or(self.ones()), self.i64t, "")?
                    .into(),
            ];
            for (i, v) in fields.into_iter().enumerate() {
                let fp = self.b.build_struct_gep(desc, i as u32, "")?;
                self.b.build_store(fp, v)?;
            }
        }
        let compute = if strict {
            self.and(block.active, all_valid.unwrap_or(self.ones()))?
        } else {
            block.active
        };
        let out_values = area(self, mem.values, args.len())?;
        let out_lens = area(self, mem.lens, args.len())?;
        let out_fields: [BasicValueEnum<'ctx>; 3] = [
            self.b.build_pointer_cast(out_values, i8p, "")?.into(),
            out_lens.into(),
            self.b.build_int_z_extend(compute, self.i64t, "")?.into(),
        ];
        for (i, v) in out_fields.into_iter().enumerate() {
            let fp = self.b.build_struct_gep(mem.out, i as u32, "")?;
            self.b.build_store(fp, v)?;
        }
        let state = self.params[state].ok_or_else(|| EmitError("call state not loaded".into()))?;
        let args_ptr = self.b.build_pointer_cast(
            mem.args,
            mem.arg_ty.ptr_type(AddressSpace::default()),
            "",
        )?;
        let failed = self
            .call(
                f,
                &[
                    state.into(),
                    self.call_ctx.into(),
                    args_ptr.into(),
                    mem.out.into(),
                ],
            )?
            .into_int_value();
        let failed = self.b.build_int_truncate_or_bit_cast(failed, self.mt, "")?;
        let failed = self.and(failed, compute)?;
        err = self.or_opt(err, Some(failed))?;
        let vp = self.b.build_struct_gep(mem.out, 2, "")?;
        let valid = self.b.build_load(vp, "")?.into_int_value();
        let valid = self.b.build_int_truncate_or_bit_cast(valid, self.mt, "")?;
        let valid = self.and(valid, compute)?;
        Ok(match ret {
            PType::Bool => {
                let m = self
                    .b
                    .build_load(self.b.build_pointer_cast(out_values, i64p, "")?, "")?;
                let m = self
                    .b
                    .build_int_truncate_or_bit_cast(m.into_int_value(), self.mt, "")?;
                V::Bool {
                    t: self.and(m, valid)?,
                    f: self.and(self.not(m)?, valid)?,
                    err,
                }
            }
            PType::Str => {
                let vp = self.i64t.vec_type(LANES).ptr_type(AddressSpace::default());
                let ptr = self
                    .b
                    .build_load(self.b.build_pointer_cast(out_values, vp, "")?, "")?;
                let len = self
                    .b
                    .build_load(self.b.build_pointer_cast(out_lens, vp, "")?, "")?;
                for x in [ptr, len] {
                    if let Some(inst) = x.as_instruction_value() {
                        inst.set_alignment(8)
                            .map_err(|e| EmitError(e.to_string()))?;
                    }
                }
                V::Str {
                    ptr: ptr.into_vector_value(),
                    len: len.into_vector_value(),
                    valid: Some(valid),
                    err,
                }
            }
            t => {
                let vp = self.vec_ty(t).ptr_type(AddressSpace::default());
                let v = self
                    .b
                    .build_load(self.b.build_pointer_cast(out_values, vp, "")?, "")?;
                if let Some(inst) = v.as_instruction_value() {
                    inst.set_alignment(t.width())
                        .map_err(|e| EmitError(e.to_string()))?;
                }
                V::Vals {
                    v: v.into_vector_value(),
                    valid: Some(valid),
                    err,
                }
            }
        })
    }
}

trait IntVec<'ctx> {
    fn into_vector_type_int(self) -> R<VectorType<'ctx>>;
}

impl<'ctx> IntVec<'ctx> for VectorType<'ctx> {
    fn into_vector_type_int(self) -> R<VectorType<'ctx>> {
        if self.get_element_type().is_int_type() {
            Ok(self)
        } else {
            Err(EmitError("cast of a boolean to a float".into()))
        }
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
