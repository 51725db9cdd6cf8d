//! INTERVAL values in the kernel. An interval is one `i128` lane holding Arrow's
//! `IntervalMonthDayNano` as it is stored (months in bits 0..32, days in 32..64,
//! nanoseconds in 64..128), so columns are read in place and results written as
//! they are. Comparisons (on PostgreSQL's 128-bit span: a month is 30 days, a day
//! 24 hours), field-wise `+`, `-` and negation, and the reading of the other Arrow
//! intervals and of durations are vector instructions built here; the other
//! functions of intervals call their row-wise implementation per block.

use arrow::datatypes::IntervalMonthDayNano;
use arrow_schema::{DataType, IntervalUnit, TimeUnit};
use broadhead_codegen::{ArithOp, Node, NodeId, PType};

use super::{unsupported, Lowerer, Unsupported};
use crate::functions::datetime::{interval_key, NANOS_PER_DAY};
use crate::functions::Inline;
use crate::scalar::ScalarValue;
use crate::typed::TypedExpr;

/// An interval literal as the kernel holds it: Arrow's layout read as an `i128`.
pub(super) fn packed(v: IntervalMonthDayNano) -> i128 {
    i128::from(v.months as u32)
        | (i128::from(v.days as u32) << 32)
        | (i128::from(v.nanoseconds) << 64)
}

/// Whether values of `t` are read as INTERVAL by [`Lowerer::interval_from`].
pub(super) fn read_as_interval(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Interval(IntervalUnit::YearMonth | IntervalUnit::DayTime) | DataType::Duration(_)
    )
}

/// An interval's three fields, as nodes.
struct Fields {
    months: NodeId,
    days: NodeId,
    nanos: NodeId,
}

impl Lowerer {
    /// A registry function of intervals with
    /// [`Lowering::Inline`](crate::functions::Lowering::Inline).
    pub(super) fn interval_call(
        &mut self,
        inline: Inline,
        args: &[TypedExpr],
    ) -> Result<NodeId, Unsupported> {
        match (inline, args) {
            (Inline::Compare(op), [a, b]) => {
                let (ka, kb) = (self.interval_span(a)?, self.interval_span(b)?);
                Ok(self.add(Node::Cmp(op, ka, kb)))
            }
            (Inline::FieldWise(op), [a, b]) => {
                let (x, y) = (self.expr(a)?, self.expr(b)?);
                let (x, y) = (self.fields(x), self.fields(y));
                // Each field's own checked arithmetic: beyond i32 (months, days) or
                // i64 (nanoseconds) is the row's error, `interval out of range`.
                let months = self.add(Node::Arith(op, x.months, y.months));
                let days = self.add(Node::Arith(op, x.days, y.days));
                let nanos = self.add(Node::Arith(op, x.nanos, y.nanos));
                Ok(self.add(Node::Pack(vec![months, days, nanos])))
            }
            (Inline::Negate, [a]) => {
                let x = self.expr(a)?;
                let x = self.fields(x);
                let parts = [x.months, x.days, x.nanos].map(|f| self.add(Node::Neg(f)));
                Ok(self.add(Node::Pack(parts.to_vec())))
            }
            _ => unsupported(format!("{inline:?} of {} arguments", args.len())),
        }
    }

    /// The fields of the packed interval `x`.
    fn fields(&mut self, x: NodeId) -> Fields {
        Fields {
            months: self.add(Node::Extract(x, 0, PType::I32)),
            days: self.add(Node::Extract(x, 32, PType::I32)),
            nanos: self.add(Node::Extract(x, 64, PType::I64)),
        }
    }

    /// The interval `e` as one number of nanoseconds, a month as 30 days and a day
    /// as 24 hours (`interval_key`, what PostgreSQL compares): a parameter for a
    /// literal, else `(months * 30 + days) * 86400e9 + nanoseconds` in 128 bits,
    /// which no interval's fields overflow.
    fn interval_span(&mut self, e: &TypedExpr) -> Result<NodeId, Unsupported> {
        if let Some(ScalarValue::IntervalMonthDayNano(v)) = e.as_literal() {
            return Ok(self.wide_param(interval_key(*v)));
        }
        let x = self.expr(e)?;
        let f = self.fields(x);
        let [months, days, nanos] =
            [f.months, f.days, f.nanos].map(|v| self.add(Node::Cast(v, PType::I128)));
        let thirty = self.add(Node::Const128(30));
        let per_day = self.add(Node::Const128(NANOS_PER_DAY));
        // |months * 30| < 2^37 and |days| < 2^31, so both products fit 128 bits.
        let month_days = self.add(Node::Arith(ArithOp::WideMul, months, thirty));
        let all_days = self.add(Node::Arith(ArithOp::Add, month_days, days));
        let day_nanos = self.add(Node::Arith(ArithOp::WideMul, all_days, per_day));
        Ok(self.add(Node::Arith(ArithOp::Add, day_nanos, nanos)))
    }

    /// `xi`, a value of `from` ([`read_as_interval`]), as an INTERVAL: a `YearMonth`
    /// interval is its months, a `DayTime` one its days and milliseconds, a duration
    /// its value times the nanoseconds of its unit (beyond 64 bits an error of the
    /// row, as the interpreter's cast).
    pub(super) fn interval_from(
        &mut self,
        from: &DataType,
        xi: NodeId,
    ) -> Result<NodeId, Unsupported> {
        let zero32 = self.add(Node::Const(PType::I32, 0));
        let zero64 = self.add(Node::Const(PType::I64, 0));
        let parts = match from {
            DataType::Interval(IntervalUnit::YearMonth) => vec![xi, zero32, zero64],
            DataType::Interval(IntervalUnit::DayTime) => {
                // Arrow's `IntervalDayTime`: i32 days, then i32 milliseconds.
                let days = self.add(Node::Extract(xi, 0, PType::I32));
                let millis = self.add(Node::Extract(xi, 32, PType::I32));
                let millis = self.add(Node::Cast(millis, PType::I64));
                // |millis| < 2^31: times 10^6 fits 64 bits.
                let per_milli = self.add(Node::Const(PType::I64, 1_000_000));
                let nanos = self.add(Node::Arith(ArithOp::Mul, millis, per_milli));
                vec![zero32, days, nanos]
            }
            DataType::Duration(unit) => {
                let scale: u64 = match unit {
                    TimeUnit::Second => 1_000_000_000,
                    TimeUnit::Millisecond => 1_000_000,
                    TimeUnit::Microsecond => 1_000,
                    TimeUnit::Nanosecond => 1,
                };
                let nanos = if scale == 1 {
                    xi
                } else {
                    let k = self.add(Node::Const(PType::I64, scale));
                    self.add(Node::Arith(ArithOp::Mul, xi, k))
                };
                vec![zero32, zero32, nanos]
            }
            other => return unsupported(format!("{other} as INTERVAL")),
        };
        Ok(self.add(Node::Pack(parts)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_intervals_are_arrows_layout() {
        let v = IntervalMonthDayNano::new(-2, 3, -4);
        let bytes = packed(v).to_le_bytes();
        assert_eq!(bytes[0..4], (-2i32).to_le_bytes());
        assert_eq!(bytes[4..8], 3i32.to_le_bytes());
        assert_eq!(bytes[8..16], (-4i64).to_le_bytes());
    }
}
