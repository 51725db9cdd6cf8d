//! The small typed IR vocabulary the other files speak: the LLVM types of
//! [`PType`]s, pointers, loads and element addresses, constants and splats, mask
//! logic, a node value's parts, intrinsic calls, and branches weighted or joined.
//!
//! Pointers are where LLVM 14 and LLVM 15+ differ: LLVM 14's are typed (`i64*`, a
//! load's type is its pointer's element type), LLVM 15+'s are one opaque `ptr` (a
//! load or address computation names the type it reads). The IR is built the
//! LLVM 15+ way everywhere, through [`ptr_to`], [`Emitter::load`],
//! [`Emitter::gep`] and [`Emitter::struct_gep`], which name the pointee type; on
//! LLVM 14 they build the typed form, and check (in debug builds) that the type
//! named is the pointer's element type, so the LLVM 14 tests vouch for the types
//! the LLVM 19 build relies on. Pointer casts are kept (no-ops on LLVM 15+).

use inkwell::basic_block::BasicBlock;
use inkwell::context::Context;
use inkwell::intrinsics::Intrinsic;
use inkwell::types::{BasicType, BasicTypeEnum, PointerType, StructType, VectorType};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue, PointerValue, VectorValue,
};
use inkwell::AddressSpace;

use super::{EmitError, Emitter, LANES, R, V};
use crate::program::{int_range, PType};

/// The type of pointers to `elem`s: `elem*` on LLVM 14, `ptr` on LLVM 15+.
#[cfg(feature = "llvm14")]
pub(super) fn ptr_to<'ctx>(_ctx: &'ctx Context, elem: impl BasicType<'ctx>) -> PointerType<'ctx> {
    elem.ptr_type(AddressSpace::default())
}

/// The type of pointers to `elem`s: `elem*` on LLVM 14, `ptr` on LLVM 15+.
#[cfg(not(feature = "llvm14"))]
pub(super) fn ptr_to<'ctx>(ctx: &'ctx Context, _elem: impl BasicType<'ctx>) -> PointerType<'ctx> {
    ctx.ptr_type(AddressSpace::default())
}

/// On LLVM 14, that `p` points at `ty`s: the type an access through `p` names is
/// the one the LLVM 15+ build reads or steps over.
#[cfg(feature = "llvm14")]
fn check_pointee<'ctx>(p: PointerValue<'ctx>, ty: impl BasicType<'ctx>) {
    debug_assert_eq!(
        p.get_type().get_element_type(),
        ty.as_any_type_enum(),
        "pointee type named for {p:?}"
    );
}

impl<'ctx> Emitter<'_, 'ctx> {
    /// The type of pointers to `elem`s ([`ptr_to`]).
    pub(super) fn ptr_to(&self, elem: impl BasicType<'ctx>) -> PointerType<'ctx> {
        ptr_to(self.ctx, elem)
    }

    /// Loads a `ty` from `p` (which points at `ty`s).
    pub(super) fn load(
        &self,
        ty: impl BasicType<'ctx>,
        p: PointerValue<'ctx>,
        name: &str,
    ) -> R<BasicValueEnum<'ctx>> {
        #[cfg(feature = "llvm14")]
        {
            check_pointee(p, ty);
            Ok(self.b.build_load(p, name)?)
        }
        #[cfg(not(feature = "llvm14"))]
        Ok(self.b.build_load(ty, p, name)?)
    }

    /// The address `indices` select from `p`, which points at `ty`s (`inbounds`
    /// when `in_bounds`).
    ///
    /// # Safety
    ///
    /// Of the generated code: with `in_bounds`, the address must lie within the
    /// object `p` points into.
    pub(super) unsafe fn gep(
        &self,
        ty: impl BasicType<'ctx>,
        p: PointerValue<'ctx>,
        indices: &[IntValue<'ctx>],
        in_bounds: bool,
    ) -> R<PointerValue<'ctx>> {
        #[cfg(feature = "llvm14")]
        check_pointee(p, ty);
        // SAFETY: as the caller promises.
        unsafe {
            #[cfg(feature = "llvm14")]
            let p = if in_bounds {
                self.b.build_in_bounds_gep(p, indices, "")
            } else {
                self.b.build_gep(p, indices, "")
            };
            #[cfg(not(feature = "llvm14"))]
            let p = if in_bounds {
                self.b.build_in_bounds_gep(ty, p, indices, "")
            } else {
                self.b.build_gep(ty, p, indices, "")
            };
            Ok(p?)
        }
    }

    /// The address of field `field` of the `ty` at `p`.
    pub(super) fn struct_gep(
        &self,
        ty: StructType<'ctx>,
        p: PointerValue<'ctx>,
        field: u32,
    ) -> R<PointerValue<'ctx>> {
        #[cfg(feature = "llvm14")]
        {
            check_pointee(p, ty);
            Ok(self.b.build_struct_gep(p, field, "")?)
        }
        #[cfg(not(feature = "llvm14"))]
        Ok(self.b.build_struct_gep(ty, p, field, "")?)
    }

    pub(super) fn scalar_ty(&self, t: PType) -> BasicTypeEnum<'ctx> {
        match t {
            PType::I8 | PType::U8 => self.ctx.i8_type().into(),
            PType::I16 | PType::U16 => self.ctx.i16_type().into(),
            PType::I32 | PType::U32 => self.ctx.i32_type().into(),
            PType::I64 | PType::U64 => self.i64t.into(),
            PType::I128 => self.ctx.i128_type().into(),
            PType::F32 => self.ctx.f32_type().into(),
            PType::F64 => self.ctx.f64_type().into(),
            PType::Bool => self.ctx.bool_type().into(),
            PType::Str | PType::Ptr => self.ptr_to(self.ctx.i8_type()).into(),
        }
    }

    pub(super) fn vec_ty(&self, t: PType) -> VectorType<'ctx> {
        match self.scalar_ty(t) {
            BasicTypeEnum::IntType(i) => i.vec_type(LANES),
            BasicTypeEnum::FloatType(f) => f.vec_type(LANES),
            BasicTypeEnum::PointerType(p) => p.vec_type(LANES),
            _ => unreachable!("scalar types are ints, floats or pointers"),
        }
    }

    /// The alignment of `t`'s values in memory: their width, but 8 bytes for
    /// [`PType::I128`] (an Arrow `IntervalMonthDayNano` buffer is only 8-aligned).
    pub(super) fn align(t: PType) -> u32 {
        t.width().min(8)
    }

    pub(super) fn c64(&self, v: u64) -> IntValue<'ctx> {
        self.i64t.const_int(v, false)
    }

    /// The mask with every row set.
    pub(super) fn ones(&self) -> IntValue<'ctx> {
        self.mt.const_all_ones()
    }

    /// The empty mask.
    pub(super) fn mzero(&self) -> IntValue<'ctx> {
        self.mt.const_zero()
    }

    pub(super) fn intrinsic(
        &self,
        name: &str,
        types: &[BasicTypeEnum<'ctx>],
    ) -> R<FunctionValue<'ctx>> {
        Intrinsic::find(name)
            .and_then(|i| i.get_declaration(self.module, types))
            .ok_or_else(|| EmitError(format!("intrinsic {name} not available")))
    }

    /// A conditional branch to `then` when `cond`, else to `otherwise`, marked as
    /// taken (almost) always one way: `likely_then` says which. The weights let
    /// the register allocator keep the hot path's values in registers and spill
    /// only around the cold one (an error exit, a rare slow path).
    pub(super) fn branch_weighted(
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

    pub(super) fn call(
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

    pub(super) fn and(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.b.build_and(a, b, "")?)
    }

    pub(super) fn or(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.b.build_or(a, b, "")?)
    }

    pub(super) fn not(&self, a: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.b.build_not(a, "")?)
    }

    pub(super) fn and_opt(
        &self,
        a: Option<IntValue<'ctx>>,
        b: Option<IntValue<'ctx>>,
    ) -> R<Option<IntValue<'ctx>>> {
        Ok(match (a, b) {
            (Some(a), Some(b)) => Some(self.and(a, b)?),
            (x, None) | (None, x) => x,
        })
    }

    pub(super) fn or_opt(
        &self,
        a: Option<IntValue<'ctx>>,
        b: Option<IntValue<'ctx>>,
    ) -> R<Option<IntValue<'ctx>>> {
        Ok(match (a, b) {
            (Some(a), Some(b)) => Some(self.or(a, b)?),
            (x, None) | (None, x) => x,
        })
    }

    /// `<LANES x i1>` → mask (an `i16`: bit `i` for lane `i`).
    pub(super) fn to_mask(&self, v: VectorValue<'ctx>) -> R<IntValue<'ctx>> {
        Ok(self.b.build_bit_cast(v, self.mt, "mask")?.into_int_value())
    }

    /// Mask → `<LANES x i1>`.
    pub(super) fn to_lanes(&self, m: IntValue<'ctx>) -> R<VectorValue<'ctx>> {
        Ok(self
            .b
            .build_bit_cast(m, self.ctx.bool_type().vec_type(LANES), "lanes")?
            .into_vector_value())
    }

    pub(super) fn splat(&self, x: BasicValueEnum<'ctx>) -> R<VectorValue<'ctx>> {
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

    pub(super) fn const_vec(&self, t: PType, bits: u64) -> R<VectorValue<'ctx>> {
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
    pub(super) fn shuffle(
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

    pub(super) fn int_vec_const(&self, t: PType, v: i128) -> R<VectorValue<'ctx>> {
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

    pub(super) fn float_splat(&self, t: PType, v: f64) -> R<VectorValue<'ctx>> {
        let bits = if t == PType::F32 {
            (v as f32).to_bits() as u64
        } else {
            v.to_bits()
        };
        self.const_vec(t, bits)
    }

    pub(super) fn vals(
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

    pub(super) fn validity(&self, v: &V<'ctx>) -> R<Option<IntValue<'ctx>>> {
        Ok(match v {
            V::Vals { valid, .. } | V::Str { valid, .. } => *valid,
            V::Bool { t, f, .. } => Some(self.or(*t, *f)?),
        })
    }

    /// Errors raised in valid rows only.
    pub(super) fn new_errors(
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

    pub(super) fn min_max(t: PType) -> (i128, i128) {
        int_range(t).unwrap_or((0, u64::MAX as i128))
    }

    /// A value and its error lanes computed one of two ways: by `usual`, or, when
    /// `rare` holds (a branch marked cold), by `other`; the code after the join
    /// sees whichever ran. `names` names the two blocks.
    pub(super) fn rarely(
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
    pub(super) fn end_with_branch(&self, to: BasicBlock<'ctx>) -> R<BasicBlock<'ctx>> {
        let end = self
            .b
            .get_insert_block()
            .ok_or_else(|| EmitError("no insertion block".into()))?;
        self.b.build_unconditional_branch(to)?;
        Ok(end)
    }
}

/// Vector types checked to have integer lanes.
pub(super) trait IntVec<'ctx> {
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
