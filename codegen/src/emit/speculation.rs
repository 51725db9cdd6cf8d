//! 128-bit integers on 64-bit lanes: `I128` nodes speculated in 64 bits (widened
//! back when no lane fails, recomputed in 128 bits when one does), the 64-bit
//! halves of 16-byte inputs, and the widening of 64-bit lanes to 128.

use std::collections::HashMap;

use inkwell::values::{IntValue, VectorValue};
use inkwell::IntPredicate;

use super::{Block, EmitError, Emitter, LANES, R, V};
use crate::program::{int_range, ArithOp, Node, NodeId, PType};

impl<'ctx> Emitter<'_, 'ctx> {
    /// The `i64`s of the 16-byte integers of input `slot` (little-endian `i128`s):
    /// their low halves; a valid value whose high half is not its low half's sign
    /// does not fit 64 bits: an error.
    pub(super) fn low_halves(
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
    pub(super) fn widen_to_i128(&self, v: VectorValue<'ctx>, signed: bool) -> R<VectorValue<'ctx>> {
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
    pub(super) fn speculate(
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
                    _ => self.cast(from, t, xv, None)?,
                }
            }
            _ => return Ok(None),
        };
        narrow.insert(id, v);
        Ok(Some(v))
    }
}
