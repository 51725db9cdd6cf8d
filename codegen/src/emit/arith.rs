//! Arithmetic: checked integer sums, differences, products and quotients, float
//! arithmetic, negation and absolute value, with the rows they fail in.

use inkwell::types::VectorType;
use inkwell::values::{IntValue, VectorValue};
use inkwell::{FloatPredicate, IntPredicate};

use super::{EmitError, Emitter, LANES, R, V};
use crate::program::{ArithOp, PType};

impl<'ctx> Emitter<'_, 'ctx> {
    pub(super) fn arith(&mut self, op: ArithOp, t: PType, l: V<'ctx>, r: V<'ctx>) -> R<V<'ctx>> {
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
                ArithOp::Div | ArithOp::Rem | ArithOp::FloorDiv | ArithOp::FloorMod => {
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
                ArithOp::FloorDiv | ArithOp::FloorMod => {
                    // The divisor is a positive constant (validated): LLVM divides by
                    // multiplying, and neither can fail.
                    let m = self.b.build_int_signed_rem(lv, rv, "")?;
                    let neg = self.b.build_int_compare(
                        IntPredicate::SLT,
                        m,
                        lv.get_type().const_zero(),
                        "",
                    )?;
                    if op == ArithOp::FloorMod {
                        let up = self.b.build_int_add(m, rv, "")?;
                        self.b.build_select(neg, up, m, "")?.into_vector_value()
                    } else {
                        let q = self.b.build_int_signed_div(lv, rv, "")?;
                        let adj = self.b.build_int_s_extend(neg, lv.get_type(), "")?;
                        self.b.build_int_add(q, adj, "")?
                    }
                }
            }
        };
        Ok(V::Vals { v, valid, err })
    }

    /// `x / d` or `x % d` by a literal `d` from its magic parameters `m` (`|d|`,
    /// multiplier, shift, add mask, negate mask; [`crate::DivisionMagic`]): the
    /// high half of a widening multiply, vector instructions for 32-bit lanes and a
    /// multiply per lane for 64-bit ones, where a division would be an `idiv`
    /// per lane.
    pub(super) fn divide_by_literal(
        &mut self,
        x: V<'ctx>,
        m: &[VectorValue<'ctx>],
        remainder: bool,
    ) -> R<V<'ctx>> {
        let (n, valid, err) = Self::vals(x)?;
        let [abs_d, multiplier, shift, add, negate] = m else {
            return Err(EmitError(
                "a division by a literal takes five parameters".into(),
            ));
        };
        let vt = n.get_type();
        let bits = vt.get_element_type().into_int_type().get_bit_width();
        let (lane, wide_lane) = if bits == 32 {
            (PType::I32, PType::I64)
        } else {
            (PType::I64, PType::I128)
        };
        let wide = self.vec_ty(wide_lane);
        // The high half of the product, and the sign bit of a lane.
        let width = self.int_vec_const(wide_lane, i128::from(bits))?;
        let sign = self.int_vec_const(lane, i128::from(bits - 1))?;
        let b = &self.b;
        let product = b.build_int_mul(
            b.build_int_s_extend(n, wide, "")?,
            b.build_int_s_extend(*multiplier, wide, "")?,
            "",
        )?;
        let high = b.build_int_truncate(b.build_right_shift(product, width, true, "")?, vt, "")?;
        let q = b.build_int_add(high, b.build_and(n, *add, "")?, "")?;
        let q = b.build_right_shift(q, *shift, true, "")?;
        let q = b.build_int_add(
            q,
            b.build_right_shift(q, sign, false, "")?,
            "trunc_quotient",
        )?;
        let v = if remainder {
            b.build_int_sub(n, b.build_int_mul(q, *abs_d, "")?, "")?
        } else {
            b.build_int_sub(b.build_xor(q, *negate, "")?, *negate, "")?
        };
        Ok(V::Vals { v, valid, err })
    }

    /// `l op r` (a sum, difference or product) of signed integers that
    /// [`cannot_overflow`]: no overflow test.
    pub(super) fn exact_arith(&mut self, op: ArithOp, l: V<'ctx>, r: V<'ctx>) -> R<V<'ctx>> {
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

    pub(super) fn neg_abs(&mut self, abs: bool, t: PType, x: V<'ctx>) -> R<V<'ctx>> {
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
}
