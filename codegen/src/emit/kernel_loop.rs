//! The kernel's loop: parameters loaded once, the batch walked [`LANES`] rows at
//! a time (full blocks then a tail, or one masked body for every block), and each
//! block's outputs computed, its errors reported and its results written.

use std::collections::HashMap;

use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, IntValue, PointerValue};
use inkwell::IntPredicate;

use super::{Block, EmitError, Emitter, LANES, LOG2_LANES, R, V};
use crate::program::{Mode, NodeId, PType};

impl<'ctx> Emitter<'_, 'ctx> {
    pub(super) fn load_params(&mut self, params: PointerValue<'ctx>) -> R<()> {
        for (i, t) in self.prog.params.iter().enumerate() {
            // SAFETY (of the generated code): the caller passes one 8-byte slot per parameter.
            let p = unsafe { self.gep(self.i64t, params, &[self.c64(i as u64)], true)? };
            let ty: BasicTypeEnum = match *t {
                // The parameter points at the string's `{ u64 address, u64 length }`.
                PType::Str => self.ptr_to(self.i64t).into(),
                // The parameter points at the 16-byte value.
                PType::I128 => self.ptr_to(self.ctx.i128_type()).into(),
                t => self.scalar_ty(t),
            };
            let p = self.b.build_pointer_cast(p, self.ptr_to(ty), "")?;
            let mut v = self.load(ty, p, &format!("param{i}"))?;
            if *t == PType::I128 {
                let load = self.load(self.ctx.i128_type(), v.into_pointer_value(), "")?;
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

    pub(super) fn body(&mut self, rows: IntValue<'ctx>) -> R<()> {
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
            Mode::Filter => self.load(self.i64t, self.count, "")?.into_int_value(),
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
        let bi = self.load(self.i64t, b_var, "bi")?.into_int_value();
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
}
