//! Comparisons in SQL's orders (NaN equal to itself and above every number, FALSE
//! below TRUE), `IS [NOT] DISTINCT FROM`, and `IN` lists and sets.

use inkwell::module::Linkage;
use inkwell::values::{IntValue, VectorValue};
use inkwell::{FloatPredicate, IntPredicate};

use super::{EmitError, Emitter, IN_SET_LOOKUP, LANES, R, V};
use crate::program::{CmpOp, PType};

/// A comparison's raw mask, the operands' validity, and their errors.
type CmpParts<'ctx> = (
    IntValue<'ctx>,
    Option<IntValue<'ctx>>,
    Option<IntValue<'ctx>>,
    Option<IntValue<'ctx>>,
);

impl<'ctx> Emitter<'_, 'ctx> {
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

    pub(super) fn compare(&self, op: CmpOp, t: PType, l: V<'ctx>, r: V<'ctx>) -> R<V<'ctx>> {
        let (m, lvalid, rvalid, err) = self.compare_parts(op, t, l, r)?;
        let valid = self.and_opt(lvalid, rvalid)?.unwrap_or(self.ones());
        Ok(V::Bool {
            t: self.and(m, valid)?,
            f: self.and(self.not(m)?, valid)?,
            err,
        })
    }

    pub(super) fn distinct(&self, t: PType, l: V<'ctx>, r: V<'ctx>, negated: bool) -> R<V<'ctx>> {
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

    /// The result of `x [NOT] IN (…)` from the lanes where `x` was `found`.
    pub(super) fn membership(
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
    pub(super) fn in_set(&mut self, t: PType, state: usize, x: &V<'ctx>) -> R<IntValue<'ctx>> {
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
        let buf = self
            .b
            .build_pointer_cast(self.helper_buf, self.ptr_to(keys_ty), "")?;
        let store = self.b.build_store(buf, keys)?;
        store
            .set_alignment(8)
            .map_err(|e| EmitError(e.to_string()))?;
        let f = match self.module.get_function(IN_SET_LOOKUP) {
            Some(f) => f,
            None => {
                let i8p = self.ptr_to(self.ctx.i8_type());
                let i64p = self.ptr_to(self.i64t);
                let ty = self.i64t.fn_type(&[i8p.into(), i64p.into()], false);
                self.module
                    .add_function(IN_SET_LOOKUP, ty, Some(Linkage::External))
            }
        };
        let set = self.params[state].ok_or_else(|| EmitError("IN set not loaded".into()))?;
        let keys_ptr = self
            .b
            .build_pointer_cast(self.helper_buf, self.ptr_to(self.i64t), "")?;
        let m = self
            .call(f, &[set.into(), keys_ptr.into()])?
            .into_int_value();
        Ok(self.b.build_int_truncate_or_bit_cast(m, self.mt, "")?)
    }
}
