//! Casts between numeric and boolean types, with their range checks.

use inkwell::values::VectorValue;
use inkwell::{FloatPredicate, IntPredicate};

use super::ir::IntVec;
use super::{EmitError, Emitter, R, V};
use crate::program::PType;
use crate::ranges::Range;

impl<'ctx> Emitter<'_, 'ctx> {
    /// `x`, of type `from`, as a `to`; `known`: the range of `x`'s values
    /// ([`crate::ranges`]), which spares an integer the range check it cannot fail.
    pub(super) fn cast(
        &mut self,
        from: PType,
        to: PType,
        x: V<'ctx>,
        known: Option<Range>,
    ) -> R<V<'ctx>> {
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
            let (smin, smax) = known.map_or((smin, smax), |(lo, hi)| (lo.max(smin), hi.min(smax)));
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
}
