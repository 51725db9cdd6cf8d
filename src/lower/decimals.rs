//! Decimal arithmetic in the kernel: a decimal is its unscaled value, an `i64` up
//! to 18 digits, else an `i128`. Precision checks, rounding to fewer places, the
//! 128-bit multiply, and casts to and from decimals (rescaling up with a range check
//! first, down rounding half away from zero).

use arrow_schema::DataType;
use broadhead_codegen::{ArithOp, CmpOp, Node, NodeId, PType};

use super::{physical, unsupported, Lowerer, Unsupported, DECIMAL_JIT_DIGITS};
use crate::functions::cast;
use crate::scalar::ScalarValue;
use crate::typed::TypedExpr;
use crate::types::sql_type_name;

/// Why the JIT does not compile rounding functions of 128-bit decimals.
const WIDE_ROUNDING: &str = "rounding functions of 128-bit decimals are not compiled";

/// The largest magnitude of a decimal of `digits` digits (`10^digits - 1`).
pub(super) fn decimal_max(digits: u8) -> Option<i128> {
    crate::decimal::pow10::<i128>(u32::from(digits)).map(|m| m - 1)
}

impl Lowerer {
    /// `xi` (a decimal of the physical type of `precision` digits: `i64` up to 18,
    /// else `i128`), with lanes beyond `precision` digits as errors.
    pub(super) fn precision_check(
        &mut self,
        xi: NodeId,
        precision: u8,
    ) -> Result<NodeId, Unsupported> {
        let max = decimal_max(precision)
            .filter(|_| precision <= DECIMAL_JIT_DIGITS)
            .ok_or_else(|| {
                Unsupported(format!(
                    "a decimal of {precision} digits (the JIT computes decimals of up to {DECIMAL_JIT_DIGITS} digits)"
                ))
            })?;
        Ok(self.add(Node::RangeCheck(xi, -max, max)))
    }

    /// `round`, `trunc`, `floor` or `ceil` of a 64-bit decimal to `ret`'s scale, as
    /// [`crate::decimal::round_value`] computes it: the dropped digits divided away in
    /// `direction`, multiplied back for places below zero, then `ret`'s precision
    /// checked.
    pub(super) fn decimal_round(
        &mut self,
        direction: crate::decimal::Rounding,
        args: &[TypedExpr],
        ret: &DataType,
    ) -> Result<NodeId, Unsupported> {
        use crate::decimal::Rounding::*;
        use crate::types::decimal_parts;
        if Self::typ(&args[0])? != PType::I64 || Self::typ_of(ret)? != PType::I64 {
            return unsupported(format!(
                "{direction:?} of {} values ({WIDE_ROUNDING})",
                sql_type_name(&args[0].data_type)
            ));
        }
        let (Some((_, s)), Some((p, _))) = (decimal_parts(&args[0].data_type), decimal_parts(ret))
        else {
            return unsupported(format!(
                "{direction:?} of {}",
                sql_type_name(&args[0].data_type)
            ));
        };
        let n = match args.get(1) {
            None => 0,
            Some(e) => match e.as_literal().and_then(ScalarValue::as_i128) {
                Some(n) => n,
                None => return unsupported("decimal places that are not a literal"),
            },
        };
        let xi = self.expr(&args[0])?;
        if n >= i128::from(s) {
            return Ok(xi);
        }
        let pow10 = |k: i128| -> Option<i64> {
            let v = crate::decimal::pow10::<i128>(u32::try_from(k).ok()?)?;
            i64::try_from(v).ok()
        };
        let too_many = || {
            unsupported(format!(
                "rounding {} to {n} places",
                sql_type_name(&args[0].data_type)
            ))
        };
        let Some(d) = pow10(i128::from(s) - n) else {
            return too_many();
        };
        let c = |l: &mut Self, v: i64| l.add(Node::Const(PType::I64, v as u64));
        let q = match direction {
            HalfAwayFromZero => self.div_round(xi, PType::I64, i128::from(d)),
            TowardZero => {
                let d = c(self, d);
                self.add(Node::Arith(ArithOp::Div, xi, d))
            }
            Floor => {
                let d = c(self, d);
                self.add(Node::Arith(ArithOp::FloorDiv, xi, d))
            }
            Ceil => {
                // -floor(-x / d): a decimal's range is symmetric, so -x never overflows.
                let d = c(self, d);
                let negated = self.add(Node::Neg(xi));
                let floor = self.add(Node::Arith(ArithOp::FloorDiv, negated, d));
                self.add(Node::Neg(floor))
            }
        };
        let rounded = if n < 0 {
            let Some(k) = pow10(-n) else {
                return too_many();
            };
            let k = c(self, k);
            self.add(Node::Arith(ArithOp::Mul, q, k))
        } else {
            q
        };
        self.precision_check(rounded, p)
    }

    /// `a * b` for a product of type `ret`, a decimal of more than 18 digits: both
    /// operands (decimals of `p1` and `p2` digits) as `i128`s. When `p1 + p2 <= 38`
    /// the product of values below `10^p1` and `10^p2` is below `10^(p1 + p2)`, the
    /// result's precision: multiplied without any check. Otherwise the multiply is
    /// checked for 128-bit overflow (inline code, no library call on x86-64) and the
    /// result against its precision.
    pub(super) fn wide_multiply(
        &mut self,
        a: &TypedExpr,
        b: &TypedExpr,
        ret: &DataType,
    ) -> Result<NodeId, Unsupported> {
        use crate::types::decimal_parts;
        let digits =
            |t: &DataType| decimal_parts(t).map_or(u16::from(u8::MAX), |(p, _)| u16::from(p));
        let exact = digits(&a.data_type) + digits(&b.data_type) <= digits(ret);
        let wide = |l: &mut Self, e: &TypedExpr| -> Result<NodeId, Unsupported> {
            let x = l.expr(e)?;
            Ok(match Self::typ(e)? {
                PType::I128 => x,
                _ => l.add(Node::Cast(x, PType::I128)),
            })
        };
        let (x, y) = (wide(self, a)?, wide(self, b)?);
        if exact {
            return Ok(self.add(Node::Arith(ArithOp::WideMul, x, y)));
        }
        let product = self.add(Node::Arith(ArithOp::Mul, x, y));
        let p = decimal_parts(ret).map_or(DECIMAL_JIT_DIGITS, |(p, _)| p);
        self.precision_check(product, p)
    }

    /// `xi` (of type `t`, `I64` or `I128`) over a positive constant `d` (of type `t`),
    /// rounded half away from zero (`(xi ± d/2) / d`, the sign of `xi`): the decimal
    /// rounding of casts. The shifted value cannot overflow: a decimal's magnitude
    /// is below `10^18` or `10^38` and `d/2` at most half as much.
    fn div_round(&mut self, xi: NodeId, t: PType, d: i128) -> NodeId {
        let c = |l: &mut Self, v: i128| {
            l.add(if t == PType::I128 {
                Node::Const128(v)
            } else {
                Node::Const(PType::I64, v as i64 as u64)
            })
        };
        let (zero, up, down, divisor) = (c(self, 0), c(self, d / 2), c(self, -(d / 2)), c(self, d));
        let negative = self.add(Node::Cmp(CmpOp::Lt, xi, zero));
        let half = self.add(Node::Case(vec![(negative, down)], up));
        let shifted = self.add(Node::Arith(ArithOp::Add, xi, half));
        self.add(Node::Arith(ArithOp::Div, shifted, divisor))
    }

    /// Casts to and from decimals of up to 38 digits, as `functions::cast` computes
    /// them: raising the scale multiplies by `10^k` after checking that the value
    /// fits the target's precision then, lowering it divides rounding half away from
    /// zero, then the precision is checked; a decimal becomes a double as
    /// `decimal::to_f64_cast` says (a 64-bit one: its unscaled value over `10^s`; a
    /// 128-bit one: the cast's own row function, called from the kernel, so both
    /// back ends round alike). Other decimal casts (from floats, to and from VARCHAR,
    /// `Decimal256`) are not compiled.
    pub(super) fn decimal_convert(
        &mut self,
        from: &DataType,
        xi: NodeId,
        to: &DataType,
    ) -> Result<NodeId, Unsupported> {
        use crate::types::{as_decimal, decimal_parts};
        let not_compiled = |why: &str| {
            unsupported(format!(
                "CAST from {} to {}{why}",
                sql_type_name(from),
                sql_type_name(to)
            ))
        };
        let (Some(pf), Some(pt)) = (physical(from), physical(to)) else {
            let wide = [from, to]
                .iter()
                .any(|t| matches!(t, DataType::Decimal256(..)));
            return not_compiled(if wide {
                " (the JIT computes decimals of up to 38 digits)"
            } else {
                ""
            });
        };
        let pow10 =
            |n: i8| -> Option<i128> { crate::decimal::pow10::<i128>(u32::try_from(n).ok()?) };
        match (decimal_parts(from), decimal_parts(to)) {
            (Some((p1, s1)), Some((p2, s2))) => {
                if s2 >= s1 {
                    return Ok(self.rescale_up(xi, pf, p1, pt, p2, (s2 - s1) as u8));
                }
                let Some(d) = pow10(s1 - s2) else {
                    return not_compiled("");
                };
                let rounded = self.div_round(xi, pf, d);
                Ok(match (pf, pt) {
                    // Checked in 128 bits, then narrowed (the value fits).
                    (PType::I128, PType::I64) => {
                        let checked = self.precision_check(rounded, p2)?;
                        self.add(Node::Cast(checked, PType::I64))
                    }
                    (PType::I64, PType::I64) | (PType::I128, PType::I128) => {
                        self.precision_check(rounded, p2)?
                    }
                    // Any i64 fits a precision of 19 digits or more.
                    _ => self.add(Node::Cast(rounded, pt)),
                })
            }
            (None, Some((p, s))) if pf.is_int() => {
                // The integer as a DECIMAL(w, 0) in the target's width (a value beyond
                // i64 fails the precision of a 64-bit decimal anyway).
                let x = if pf == pt {
                    xi
                } else {
                    self.add(Node::Cast(xi, pt))
                };
                let digits = as_decimal(from).map_or(u8::MAX, |(w, _)| w);
                Ok(self.rescale_up(x, pt, digits, pt, p, s as u8))
            }
            (Some((_, s)), None) if pt.is_int() => {
                if s == 0 {
                    return Ok(if pf == pt {
                        xi
                    } else {
                        self.add(Node::Cast(xi, pt))
                    });
                }
                let Some(d) = pow10(s) else {
                    return not_compiled("");
                };
                // Rounded, then narrowed with the integer casts' range check.
                let whole = self.div_round(xi, pf, d);
                Ok(if pt == pf {
                    whole
                } else {
                    self.add(Node::Cast(whole, pt))
                })
            }
            (Some((_, _)), None) if pt.is_float() && pf == PType::I128 => {
                // `decimal::to_f64_cast` of a 128-bit value rounds `v / 10^s`
                // correctly (through its digits): the kernel calls the cast's row
                // function, the one the interpreter runs.
                let Some(imp) = cast::cast_impl(from, to) else {
                    return not_compiled("");
                };
                let key = format!("CAST({from:?} AS {to:?})");
                Ok(self.row_helper(key, imp, vec![xi], pt))
            }
            (Some((_, s)), None) if pt.is_float() => {
                // decimal::to_f64_cast: the unscaled value as a double over 10^s.
                let Some(d) = pow10(s).and_then(|d| i64::try_from(d).ok()) else {
                    return not_compiled("");
                };
                let f = self.add(Node::Cast(xi, PType::F64));
                let d = self.add(Node::Const(PType::F64, (d as f64).to_bits()));
                let double = self.add(Node::Arith(ArithOp::Div, f, d));
                Ok(if pt == PType::F32 {
                    self.add(Node::Cast(double, PType::F32))
                } else {
                    double
                })
            }
            _ => not_compiled(""),
        }
    }

    /// `xi`, a decimal of `digits` digits of signed type `from`, times `10^k` as a
    /// decimal of `precision` digits of type `to` (`I64` or `I128`): lanes whose value
    /// has more than `precision - k` digits are errors (checked before multiplying,
    /// so the product always fits and a 128-bit one needs no overflow check).
    fn rescale_up(
        &mut self,
        xi: NodeId,
        from: PType,
        digits: u8,
        to: PType,
        precision: u8,
        k: u8,
    ) -> NodeId {
        let fits = precision.saturating_sub(k);
        let checked = match decimal_max(fits) {
            Some(max) if digits > fits => self.add(Node::RangeCheck(xi, -max, max)),
            _ => xi,
        };
        let resized = if from == to {
            checked
        } else {
            self.add(Node::Cast(checked, to))
        };
        if k == 0 {
            return resized;
        }
        let factor = crate::decimal::pow10::<i128>(u32::from(k)).unwrap_or(i128::MAX);
        if to == PType::I128 {
            let c = self.add(Node::Const128(factor));
            self.add(Node::Arith(ArithOp::WideMul, resized, c))
        } else {
            let c = self.add(Node::Const(PType::I64, factor as u64));
            self.add(Node::Arith(ArithOp::Mul, resized, c))
        }
    }
}
