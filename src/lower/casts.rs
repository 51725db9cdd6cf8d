//! `CAST` and `TRY_CAST` between non-decimal types: integer and float conversions
//! (checked), temporal ones (checked multiplications and floor divisions), the
//! row functions to and from VARCHAR, and the conditions under which a cast
//! succeeds (`TRY_CAST`'s NULLs). Decimal casts are in [`super::decimals`].

use arrow_schema::{DataType, IntervalUnit, TimeUnit};
use broadhead_codegen::{int_range, ArithOp, Callee, CmpOp, Node, NodeId, PType};

use super::{interval, physical, unsupported, Lowerer, Unsupported};
use crate::functions::cast;
use crate::typed::TypedExpr;
use crate::types::{is_time, sql_type_name, time_unit, units_per_second};

impl Lowerer {
    pub(super) fn cast(&mut self, x: &TypedExpr, to: &DataType) -> Result<NodeId, Unsupported> {
        let xi = self.expr(x)?;
        self.convert(&x.data_type, xi, to)
    }

    /// `TRY_CAST(x AS to)`: to and from VARCHAR, the row function that gives NULL
    /// for a bad string; other conversions are the cast where [`Self::cast_ok`]
    /// holds, else NULL. The errors of `x` itself stay.
    pub(super) fn try_cast(&mut self, x: &TypedExpr, to: &DataType) -> Result<NodeId, Unsupported> {
        let from = &x.data_type;
        if crate::types::is_decimal(from) || crate::types::is_decimal(to) {
            return unsupported(format!(
                "TRY_CAST from {} to {}",
                sql_type_name(from),
                sql_type_name(to)
            ));
        }
        let xi = self.expr(x)?;
        if let Some(imp) = cast::try_cast_impl(from, to) {
            let key = format!("TRY_CAST({from:?} AS {to:?})");
            return Ok(self.row_helper(key, imp, vec![xi], Self::typ_of(to)?));
        }
        let value = self.convert(from, xi, to)?;
        Ok(match self.cast_ok(from, xi, to) {
            None => value,
            Some(ok) => {
                let null = self.add(Node::Null(Self::typ_of(to)?));
                self.add(Node::Case(vec![(ok, value)], null))
            }
        })
    }

    /// `xi`, of type `from`, as a value of type `to`.
    fn convert(
        &mut self,
        from: &DataType,
        xi: NodeId,
        to: &DataType,
    ) -> Result<NodeId, Unsupported> {
        if crate::types::is_decimal(from) || crate::types::is_decimal(to) {
            return self.decimal_convert(from, xi, to);
        }
        // To and from VARCHAR: the row functions the interpreter calls too.
        if let Some(imp) = cast::cast_impl(from, to) {
            let ret = Self::typ_of(to)?;
            let key = format!("CAST({from:?} AS {to:?})");
            return Ok(self.row_helper(key, imp, vec![xi], ret));
        }
        let const_i64 = |l: &mut Self, v: i64| l.add(Node::Const(PType::I64, v as u64));
        Ok(match (from, to) {
            (f, DataType::Interval(IntervalUnit::MonthDayNano))
                if interval::read_as_interval(f) =>
            {
                self.interval_from(f, xi)?
            }
            (DataType::Date32, DataType::Timestamp(unit, _)) => {
                // The days whose timestamp fits 64 bits, checked on the days: the
                // product then needs no overflow test (a vector multiply).
                let per_day = 86_400 * units_per_second(*unit);
                let (lo, hi) = (i64::MIN / per_day, i64::MAX / per_day);
                let (lo, hi) = (lo.max(i32::MIN.into()), hi.min(i32::MAX.into()));
                let days = self.add(Node::RangeCheck(xi, lo.into(), hi.into()));
                let wide = self.add(Node::Cast(days, PType::I64));
                let per_day = const_i64(self, per_day);
                self.add(Node::Arith(ArithOp::Mul, wide, per_day))
            }
            (DataType::Timestamp(_, _), DataType::Date32)
            | (DataType::Date64, DataType::Date32) => {
                let unit = match from {
                    DataType::Timestamp(unit, _) => *unit,
                    _ => TimeUnit::Millisecond,
                };
                let per_day = const_i64(self, 86_400 * units_per_second(unit));
                let days = self.add(Node::Arith(ArithOp::FloorDiv, xi, per_day));
                self.add(Node::Cast(days, PType::I32))
            }
            (DataType::Timestamp(a, _), DataType::Timestamp(b, _)) => self.rescale(xi, *a, *b),
            (DataType::Timestamp(a, _), t) if is_time(t) => {
                // The time of day: the remainder of a day (made non-negative), in
                // the time's unit.
                let per_day = const_i64(self, 86_400 * units_per_second(*a));
                let of_day = self.add(Node::Arith(ArithOp::FloorMod, xi, per_day));
                let b = time_unit(t).unwrap_or(*a);
                let v = self.rescale(of_day, *a, b);
                self.narrow(v, t)?
            }
            (f, t) if is_time(f) && is_time(t) => {
                let (a, b) = (
                    time_unit(f).unwrap_or(TimeUnit::Second),
                    time_unit(t).unwrap_or(TimeUnit::Second),
                );
                let wide = if physical(f) == Some(PType::I32) {
                    self.add(Node::Cast(xi, PType::I64))
                } else {
                    xi
                };
                let v = self.rescale(wide, a, b);
                self.narrow(v, t)?
            }
            _ => {
                let (pf, pt) = (physical(from), physical(to));
                match (pf, pt) {
                    (Some(pf), Some(pt)) if pf != PType::Str && pt != PType::Str => {
                        if pf == pt {
                            xi
                        } else {
                            self.add(Node::Cast(xi, pt))
                        }
                    }
                    _ => {
                        return unsupported(format!(
                            "CAST from {} to {}",
                            sql_type_name(from),
                            sql_type_name(to)
                        ))
                    }
                }
            }
        })
    }

    /// A BOOLEAN node that is TRUE exactly where [`Self::convert`] of `xi` (of
    /// type `from`) succeeds (the same conditions as the kernel's checks: integer
    /// ranges, rounded floats within the target's range, timestamp scaling without
    /// overflow), NULL where `xi` is NULL; `None` for conversions that never fail.
    fn cast_ok(&mut self, from: &DataType, xi: NodeId, to: &DataType) -> Option<NodeId> {
        use DataType::{Date32, Timestamp};
        let (pf, pt) = (physical(from)?, physical(to)?);
        match (from, to) {
            (Date32, Timestamp(unit, _)) => {
                let per_day = 86_400 * i128::from(units_per_second(*unit));
                let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
                // Truncating division: the ceiling below zero, the floor above.
                self.within(pf, xi, min / per_day, max / per_day)
            }
            (Timestamp(unit, _), Date32) => {
                let per_day = 86_400 * i128::from(units_per_second(*unit));
                let lo = i128::from(i32::MIN) * per_day;
                let hi = (i128::from(i32::MAX) + 1) * per_day - 1;
                self.within(pf, xi, lo, hi)
            }
            (Timestamp(a, _), Timestamp(b, _)) => {
                let (f, t) = (units_per_second(*a), units_per_second(*b));
                if t <= f {
                    return None;
                }
                let k = i128::from(t / f);
                let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
                self.within(pf, xi, min / k, max / k)
            }
            (Timestamp(..), t) if is_time(t) => None,
            (f, t) if is_time(f) && is_time(t) => {
                // Scaled, then narrowed: the values whose result fits the target.
                let (a, b) = (
                    units_per_second(time_unit(f)?),
                    units_per_second(time_unit(t)?),
                );
                let (min, max) = int_range(pt)?;
                let (lo, hi) = if b >= a {
                    let k = i128::from(b / a);
                    (min / k, max / k)
                } else {
                    let k = i128::from(a / b);
                    (min * k, (max + 1) * k - 1)
                };
                self.within(pf, xi, lo, hi)
            }
            _ if pf.is_float() && pt != PType::Bool && !pt.is_float() => {
                // Rounded half to even, within [min, max + 1) of the target, as the
                // kernel checks it (NaN sorts above every value, so it fails).
                let (min, max) = int_range(pt)?;
                let rounded = self.add(Node::Call {
                    callee: Callee::Intrinsic {
                        name: "llvm.rint",
                        domain: None,
                    },
                    args: vec![xi],
                    ret: pf,
                    strict: true,
                });
                let float = |v: i128| {
                    if pf == PType::F32 {
                        u64::from((v as f32).to_bits())
                    } else {
                        (v as f64).to_bits()
                    }
                };
                let lo = self.add(Node::Const(pf, float(min)));
                let hi = self.add(Node::Const(pf, float(max + 1)));
                let ge = self.add(Node::Cmp(CmpOp::Ge, rounded, lo));
                let lt = self.add(Node::Cmp(CmpOp::Lt, rounded, hi));
                Some(self.add(Node::And(vec![ge, lt])))
            }
            _ if int_range(pf).is_some() && int_range(pt).is_some() => {
                let (min, max) = int_range(pt)?;
                self.within(pf, xi, min, max)
            }
            _ => None,
        }
    }

    /// `lo <= xi <= hi` for `xi` of integer type `t`, checking only the bounds that
    /// are inside `t`'s range; `None` if neither is.
    fn within(&mut self, t: PType, xi: NodeId, lo: i128, hi: i128) -> Option<NodeId> {
        let (min, max) = int_range(t)?;
        let mut checks = Vec::new();
        if lo > min {
            let c = self.add(Node::Const(t, lo as u64));
            checks.push(self.add(Node::Cmp(CmpOp::Ge, xi, c)));
        }
        if hi < max {
            let c = self.add(Node::Const(t, hi as u64));
            checks.push(self.add(Node::Cmp(CmpOp::Le, xi, c)));
        }
        match checks.len() {
            0 => None,
            1 => checks.pop(),
            _ => Some(self.add(Node::And(checks))),
        }
    }

    /// `xi`, an `i64` count of `from` units, in `to` units (multiplied, checked, or
    /// divided rounding toward the past).
    fn rescale(&mut self, xi: NodeId, from: TimeUnit, to: TimeUnit) -> NodeId {
        let (f, t) = (units_per_second(from), units_per_second(to));
        if f == t {
            xi
        } else if t > f {
            let k = self.add(Node::Const(PType::I64, (t / f) as u64));
            self.add(Node::Arith(ArithOp::Mul, xi, k))
        } else {
            let k = self.add(Node::Const(PType::I64, (f / t) as u64));
            self.add(Node::Arith(ArithOp::FloorDiv, xi, k))
        }
    }

    /// An `i64` node as the physical type of `to` (a checked narrowing for 32-bit
    /// types).
    fn narrow(&mut self, xi: NodeId, to: &DataType) -> Result<NodeId, Unsupported> {
        Ok(match Self::typ_of(to)? {
            PType::I64 => xi,
            pt => self.add(Node::Cast(xi, pt)),
        })
    }
}
