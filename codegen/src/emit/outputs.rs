//! Writing a block's results: a filter's selection words and count, a projection's
//! values and validity.

use inkwell::values::{IntValue, PointerValue, VectorValue};

use super::{Block, EmitError, Emitter, R, UNSTORED_VALIDITY_OUTPUTS, V};
use crate::program::{NodeId, PType};

impl<'ctx> Emitter<'_, 'ctx> {
    fn out_field(&self, k: usize, field: u32) -> R<PointerValue<'ctx>> {
        // SAFETY (of the generated code): the caller passes one OutSlot per output.
        let p = unsafe {
            self.gep(
                self.out_slot_ty,
                self.outs,
                &[
                    self.c64(k as u64),
                    self.ctx.i32_type().const_int(field as u64, false),
                ],
                true,
            )?
        };
        let ty = self
            .out_slot_ty
            .get_field_type_at_index(field)
            .ok_or_else(|| EmitError(format!("no output slot field {field}")))?;
        Ok(self.load(ty, p, "")?.into_pointer_value())
    }

    /// The block's mask of selected rows as its 16 bits of the result words, and its
    /// rows counted.
    pub(super) fn write_selection(
        &mut self,
        selected: IntValue<'ctx>,
        block: &Block<'ctx>,
    ) -> R<()> {
        let out = self.out_field(0, 0)?;
        let words = self.b.build_pointer_cast(out, self.ptr_to(self.mt), "")?;
        // SAFETY (of the generated code): the caller sizes the buffer to ceil(rows / 64)
        // 64-bit words, which hold every block's chunk.
        let p = unsafe { self.gep(self.mt, words, &[block.index], true)? };
        self.b.build_store(p, selected)?;
        let ctpop = self.intrinsic("llvm.ctpop", &[self.mt.into()])?;
        let n = self.call(ctpop, &[selected.into()])?.into_int_value();
        let n = self.b.build_int_z_extend(n, self.i64t, "")?;
        let c = self.load(self.i64t, self.count, "")?.into_int_value();
        let c = self.b.build_int_add(c, n, "")?;
        self.b.build_store(self.count, c)?;
        Ok(())
    }

    pub(super) fn write_output(
        &mut self,
        k: usize,
        node: NodeId,
        v: V<'ctx>,
        block: &Block<'ctx>,
    ) -> R<()> {
        let values = self.out_field(k, 0)?;
        let validity = self.out_field(k, 1)?;
        let words_ptr = |e: &Self, p: PointerValue<'ctx>| -> R<PointerValue<'ctx>> {
            let p = e.b.build_pointer_cast(p, e.ptr_to(e.mt), "")?;
            // SAFETY (of the generated code): word buffers hold ceil(rows / 64) 64-bit
            // words, which hold every block's chunk.
            unsafe { e.gep(e.mt, p, &[block.index], true) }
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
                let base = self
                    .b
                    .build_pointer_cast(values, self.ptr_to(self.i64t), "")?;
                // SAFETY (of the generated code): the caller sizes string outputs to
                // 2 * rows values.
                let lens_base = unsafe { self.gep(self.i64t, base, &[rows], true)? };
                for (v, area) in [(ptr, base), (len, lens_base)] {
                    let p = self.elem_ptr(
                        self.b
                            .build_pointer_cast(area, self.ptr_to(self.ctx.i8_type()), "")?,
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
}
