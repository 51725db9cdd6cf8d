//! Reading a block of an input column: its slot's buffers, validity words, values
//! loaded whole or masked, and prefetches ahead.

use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue, VectorValue};

use super::{Block, EmitError, Emitter, LANES, PREFETCH_AHEAD, R, V};
use crate::program::PType;

impl<'ctx> Emitter<'_, 'ctx> {
    pub(super) fn slot_field(&self, slot: usize, field: u32) -> R<BasicValueEnum<'ctx>> {
        // SAFETY (of the generated code): `slot` < number of inputs (validated) and
        // the caller passes that many slots; field < 3.
        let p = unsafe {
            self.gep(
                self.slot_ty,
                self.inputs,
                &[
                    self.c64(slot as u64),
                    self.ctx.i32_type().const_int(field as u64, false),
                ],
                true,
            )?
        };
        let ty = self
            .slot_ty
            .get_field_type_at_index(field)
            .ok_or_else(|| EmitError(format!("no slot field {field}")))?;
        self.load(ty, p, "")
    }

    pub(super) fn slot_ptr(&self, slot: usize) -> R<PointerValue<'ctx>> {
        // SAFETY (of the generated code): as in `slot_field`.
        unsafe { self.gep(self.slot_ty, self.inputs, &[self.c64(slot as u64)], true) }
    }

    /// The block's rows of a bitmap of 64-bit words (bit 0 of word 0 is row 0).
    pub(super) fn word(&self, words: PointerValue<'ctx>, block: &Block<'ctx>) -> R<IntValue<'ctx>> {
        let index = self
            .b
            .build_right_shift(block.row0, self.c64(6), false, "")?;
        // SAFETY (of the generated code): word buffers hold ceil(rows / 64) words and
        // row0 < rows.
        let p = unsafe { self.gep(self.i64t, words, &[index], true)? };
        let w = self.load(self.i64t, p, "word")?.into_int_value();
        // The block's `LANES` bits of the word (a block never straddles two words).
        let shift = self.b.build_and(block.row0, self.c64(63), "")?;
        let chunk = self.b.build_right_shift(w, shift, false, "")?;
        Ok(self.b.build_int_truncate_or_bit_cast(chunk, self.mt, "")?)
    }

    pub(super) fn input(&mut self, slot: usize, block: &Block<'ctx>) -> R<V<'ctx>> {
        let spec = self.prog.inputs[slot];
        let valid = self.input_validity(slot, block)?;
        match spec.ty {
            PType::Str => self.string_views(slot, valid, block),
            PType::Bool => {
                let words = self.slot_field(slot, 0)?.into_pointer_value();
                let words = self
                    .b
                    .build_pointer_cast(words, self.ptr_to(self.i64t), "")?;
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
    pub(super) fn input_validity(
        &self,
        slot: usize,
        block: &Block<'ctx>,
    ) -> R<Option<IntValue<'ctx>>> {
        if !self.prog.inputs[slot].nullable {
            return Ok(None);
        }
        let words = self.slot_field(slot, 1)?.into_pointer_value();
        Ok(Some(self.word(words, block)?))
    }

    /// Pointer to `<LANES x T>` at the block's first row of a values buffer.
    pub(super) fn elem_ptr(
        &self,
        base: PointerValue<'ctx>,
        t: PType,
        block: &Block<'ctx>,
    ) -> R<PointerValue<'ctx>> {
        let elem = self.scalar_ty(t);
        let p = self.b.build_pointer_cast(base, self.ptr_to(elem), "")?;
        // SAFETY (of the generated code): row0 + LANES <= rows for full blocks; other
        // blocks only touch active lanes through masked operations.
        let p = unsafe { self.gep(elem, p, &[block.row0], true)? };
        Ok(self
            .b
            .build_pointer_cast(p, self.ptr_to(self.vec_ty(t)), "")?)
    }

    /// Loads a block's vector of `t` from `p`: whole in full blocks, the active
    /// lanes (others zero) in the tail block.
    pub(super) fn load_block(
        &self,
        p: PointerValue<'ctx>,
        t: PType,
        block: &Block<'ctx>,
    ) -> R<VectorValue<'ctx>> {
        Ok(if block.full {
            let load = self.load(self.vec_ty(t), p, "")?;
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
        let i8p = self.ptr_to(self.ctx.i8_type());
        let base = self.b.build_pointer_cast(p, i8p, "")?;
        let f = self.intrinsic("llvm.prefetch", &[i8p.into()])?;
        let i32t = self.ctx.i32_type();
        let (read, keep_in_all_levels, data) = (0, 3, 1);
        let block_bytes = LANES as u64 * t.width() as u64;
        for line in (0..block_bytes).step_by(64) {
            // Not `inbounds`: the address may lie past the column's buffer.
            // SAFETY (of the generated code): the address is only prefetched.
            let at = unsafe {
                self.gep(
                    self.ctx.i8_type(),
                    base,
                    &[self.c64(PREFETCH_AHEAD + line)],
                    false,
                )?
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
}
