//! String values: literals, and each row's address and length read in place from a
//! column's offsets or views.

use inkwell::types::{IntType, VectorType};
use inkwell::values::{BasicValue, InstructionOpcode, IntValue, PointerValue, VectorValue};
use inkwell::IntPredicate;

use super::{Block, EmitError, Emitter, LANES, R, V};
use crate::program::{ByteLayout, PType};

impl<'ctx> Emitter<'_, 'ctx> {
    /// A string literal: the parameter points at its `{ u64 address, u64 length }`.
    pub(super) fn string_param(&self, p: PointerValue<'ctx>) -> R<V<'ctx>> {
        let addr = self.load(self.i64t, p, "str_addr")?;
        // SAFETY (of the generated code): the parameter points at two u64s.
        let lp = unsafe { self.gep(self.i64t, p, &[self.c64(1)], true)? };
        let len = self.load(self.i64t, lp, "str_len")?;
        Ok(V::Str {
            ptr: self.splat(addr)?,
            len: self.splat(len)?,
            valid: None,
            err: None,
        })
    }

    /// The views of a string column's rows in the block: the address of each row's
    /// first byte and its length, read in place from the column's layout.
    pub(super) fn string_views(
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
    pub(super) fn offset_pairs(
        &self,
        slot: usize,
        off: PType,
        block: &Block<'ctx>,
    ) -> R<(VectorValue<'ctx>, VectorValue<'ctx>)> {
        let offsets = self.slot_field(slot, 0)?.into_pointer_value();
        let offsets = self
            .b
            .build_pointer_cast(offsets, self.ptr_to(self.scalar_ty(off)), "")?;
        // SAFETY (of the generated code): offsets hold rows + 1 entries, so the block's
        // starts (row0 ..) and ends (row0 + 1 ..) are in bounds for its active lanes.
        let next = unsafe { self.gep(self.scalar_ty(off), offsets, &[self.c64(1)], true)? };
        let i8p = self.ptr_to(self.ctx.i8_type());
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
    pub(super) fn halves_16(
        &self,
        slot: usize,
        block: &Block<'ctx>,
    ) -> R<(VectorValue<'ctx>, VectorValue<'ctx>)> {
        let views = self.slot_field(slot, 0)?.into_pointer_value();
        let views = self
            .b
            .build_pointer_cast(views, self.ptr_to(self.i64t), "")?;
        let both = self.i64t.vec_type(2 * LANES);
        let first = self.b.build_left_shift(block.row0, self.c64(1), "")?;
        // SAFETY (of the generated code): the slot holds `rows` views of two u64s; a
        // full block's 2 * LANES words are in bounds, a tail block reads only the
        // words of its active lanes (masked).
        let p = unsafe { self.gep(self.i64t, views, &[first], true)? };
        let p = self.b.build_pointer_cast(p, self.ptr_to(both), "")?;
        let words = if block.full {
            let load = self.load(both, p, "views")?;
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
        let i64p = self.ptr_to(self.i64t);
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
}
