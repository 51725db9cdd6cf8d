//! Calls out of the kernel: string predicate helpers (behind their quick checks),
//! LLVM float intrinsics, and [`CallFn`](crate::CallFn) helpers, whose argument
//! blocks go through stack memory.

use inkwell::module::Linkage;
use inkwell::types::ArrayType;
use inkwell::values::{BasicMetadataValueEnum, BasicValue, BasicValueEnum, IntValue, PointerValue};
use inkwell::{FloatPredicate, IntPredicate};

use super::{Block, EmitError, Emitter, LANES, R, V};
use crate::program::{CmpOp, Helper, NodeId, PType, QuickCheck};

impl<'ctx> Emitter<'_, 'ctx> {
    pub(super) fn helper(
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
        let p = self
            .b
            .build_pointer_cast(self.helper_buf, self.ptr_to(vt), "")?;
        let load = self.load(vt, p, "")?;
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
                let i8p = self.ptr_to(self.ctx.i8_type());
                let sp = self.ptr_to(self.slot_ty);
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
            None => self.ptr_to(self.slot_ty).const_null(),
        };
        let buf =
            self.b
                .build_pointer_cast(self.helper_buf, self.ptr_to(self.ctx.i8_type()), "")?;
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

    /// A call of an LLVM intrinsic on float vectors; NULL where any argument is.
    pub(super) fn call_intrinsic(
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
    pub(super) fn call_helper(
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
        let i8p = self.ptr_to(self.ctx.i8_type());
        let i64p = self.ptr_to(self.i64t);
        let f = match self.module.get_function(helper.name) {
            Some(f) => f,
            None => {
                let ty = self.i64t.fn_type(
                    &[
                        i8p.into(),
                        i8p.into(),
                        self.ptr_to(mem.arg_ty).into(),
                        self.ptr_to(mem.out_ty).into(),
                    ],
                    false,
                );
                self.module
                    .add_function(helper.name, ty, Some(Linkage::External))
            }
        };
        let area = |e: &Self,
                    (ty, base): (ArrayType<'ctx>, PointerValue<'ctx>),
                    k: usize|
         -> R<PointerValue<'ctx>> {
            // SAFETY (of the generated code): k <= the largest call's argument count,
            // for which the areas were sized.
            unsafe { e.gep(ty, base, &[e.c64(0), e.c64(k as u64), e.c64(0)], true) }
        };
        let mut err = None;
        let mut all_valid = None;
        for (k, (a, id)) in args.iter().zip(arg_ids).enumerate() {
            let t = self.prog.type_of(*id);
            let values = area(self, (mem.values_ty, mem.values), k)?;
            let lens = area(self, (mem.lens_ty, mem.lens), k)?;
            let valid = self.validity(a)?;
            err = self.or_opt(err, a.err())?;
            all_valid = self.and_opt(all_valid, valid)?;
            let mut has_lens = false;
            match *a {
                V::Vals { v, .. } => {
                    let p = self
                        .b
                        .build_pointer_cast(values, self.ptr_to(v.get_type()), "")?;
                    let st = self.b.build_store(p, v)?;
                    st.set_alignment(t.width().max(1))
                        .map_err(|e| EmitError(e.to_string()))?;
                }
                V::Bool { t: yes, .. } => {
                    let w = self.b.build_int_z_extend(yes, self.i64t, "")?;
                    self.b.build_store(values, w)?;
                }
                V::Str { ptr, len, .. } => {
                    let vp = self.ptr_to(ptr.get_type());
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
                self.gep(
                    mem.args_ty,
                    mem.args,
                    &[self.c64(0), self.c64(k as u64)],
                    true,
                )?
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
                let fp = self.struct_gep(mem.arg_ty, desc, i as u32)?;
                self.b.build_store(fp, v)?;
            }
        }
        let compute = if strict {
            self.and(block.active, all_valid.unwrap_or(self.ones()))?
        } else {
            block.active
        };
        let out_values = area(self, (mem.values_ty, mem.values), args.len())?;
        let out_lens = area(self, (mem.lens_ty, mem.lens), args.len())?;
        let out_fields: [BasicValueEnum<'ctx>; 4] = [
            self.b.build_pointer_cast(out_values, i8p, "")?.into(),
            out_lens.into(),
            self.b.build_int_z_extend(compute, self.i64t, "")?.into(),
            block.row0.into(),
        ];
        for (i, v) in out_fields.into_iter().enumerate() {
            let fp = self.struct_gep(mem.out_ty, mem.out, i as u32)?;
            self.b.build_store(fp, v)?;
        }
        let state = self.params[state].ok_or_else(|| EmitError("call state not loaded".into()))?;
        let args_ptr = self
            .b
            .build_pointer_cast(mem.args, self.ptr_to(mem.arg_ty), "")?;
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
        let vp = self.struct_gep(mem.out_ty, mem.out, 2)?;
        let valid = self.load(self.i64t, vp, "")?.into_int_value();
        let valid = self.b.build_int_truncate_or_bit_cast(valid, self.mt, "")?;
        let valid = self.and(valid, compute)?;
        Ok(match ret {
            PType::Bool => {
                let m = self.load(
                    self.i64t,
                    self.b.build_pointer_cast(out_values, i64p, "")?,
                    "",
                )?;
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
                let vt = self.i64t.vec_type(LANES);
                let vp = self.ptr_to(vt);
                let ptr = self.load(vt, self.b.build_pointer_cast(out_values, vp, "")?, "")?;
                let len = self.load(vt, self.b.build_pointer_cast(out_lens, vp, "")?, "")?;
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
                let vt = self.vec_ty(t);
                let v = self.load(
                    vt,
                    self.b.build_pointer_cast(out_values, self.ptr_to(vt), "")?,
                    "",
                )?;
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
