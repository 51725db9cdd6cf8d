//! The fields of dates and times in the kernel (`year(x)`, `EXTRACT(month FROM x)`,
//! `hour(x)`, …): vector integer arithmetic on a DATE's days or a timestamp's units,
//! the steps of the interpreter's calendar (`functions::datetime::civil`), where a
//! division by a constant is a multiplication. The ISO week's fields (`week`,
//! `isoyear`) call their row-wise implementation.

use arrow_schema::{DataType, TimeUnit};
use broadhead_codegen::{ArithOp, CmpOp, Node, NodeId, PType};

use super::{unsupported, Lowerer, Unsupported};
use crate::functions::datetime::civil::{chrono_days, DAYS_PER_ERA, EPOCH_IN_ERA_4};
use crate::functions::Field;
use crate::typed::TypedExpr;
use crate::types::units_per_second;

/// The units of `unit` in a day.
fn units_per_day(unit: TimeUnit) -> i64 {
    units_per_second(unit) * 86_400
}

impl Lowerer {
    /// `field` of `arg` (a DATE, a TIMESTAMP without time zone or a TIME) as a
    /// BIGINT. A timestamp whose day chrono cannot represent is an error of its row,
    /// as in the interpreter.
    pub(super) fn date_field(
        &mut self,
        field: Field,
        arg: &TypedExpr,
    ) -> Result<NodeId, Unsupported> {
        let x = self.expr(arg)?;
        let (days, unit_and_time) = match &arg.data_type {
            DataType::Date32 => (x, None),
            DataType::Timestamp(unit, None) => {
                let x = self.in_chrono_range(x, *unit);
                let per_day = self.int(PType::I64, units_per_day(*unit));
                let days = self.add(Node::Arith(ArithOp::FloorDiv, x, per_day));
                let time = self.add(Node::Arith(ArithOp::FloorMod, x, per_day));
                // Inside chrono's days, which fit an i32: the cast checks nothing.
                (self.add(Node::Cast(days, PType::I32)), Some((*unit, time)))
            }
            DataType::Time32(unit) | DataType::Time64(unit) => {
                let x = self.add(Node::Cast(x, PType::I64));
                let per_day = self.int(PType::I64, units_per_day(*unit));
                let time = self.add(Node::Arith(ArithOp::FloorMod, x, per_day));
                return self.time_field(field, *unit, time);
            }
            other => return unsupported(format!("the field {field:?} of {other}")),
        };
        match (field, unit_and_time) {
            (Field::Hour | Field::Minute | Field::Second, Some((unit, time)))
            | (Field::Millisecond | Field::Microsecond, Some((unit, time))) => {
                self.time_field(field, unit, time)
            }
            (Field::Hour | Field::Minute | Field::Second, None)
            | (Field::Millisecond | Field::Microsecond, None) => {
                // A DATE's time is midnight: 0 (NULL where the date is).
                let days = self.add(Node::Cast(days, PType::I64));
                let zero = self.int(PType::I64, 0);
                Ok(self.add(Node::Arith(ArithOp::Mul, days, zero)))
            }
            _ => {
                let v = self.calendar_field(field, days)?;
                Ok(self.add(Node::Cast(v, PType::I64)))
            }
        }
    }

    /// A timestamp `x` of `unit`, its rows outside chrono's days errors.
    fn in_chrono_range(&mut self, x: NodeId, unit: TimeUnit) -> NodeId {
        let per_day = i128::from(units_per_day(unit));
        let days = chrono_days();
        let lo = i128::from(*days.start()) * per_day;
        let hi = (i128::from(*days.end()) + 1) * per_day - 1;
        let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
        if lo <= min && hi >= max {
            return x;
        }
        self.add(Node::RangeCheck(x, lo.max(min), hi.min(max)))
    }

    /// A field of the time of day: `time` units of `unit` since midnight (`0 ..`
    /// a day), as a BIGINT.
    fn time_field(
        &mut self,
        field: Field,
        unit: TimeUnit,
        time: NodeId,
    ) -> Result<NodeId, Unsupported> {
        let per_second = units_per_second(unit);
        let div = |l: &mut Lowerer, x: NodeId, by: i64| {
            let by = l.int(PType::I64, by);
            l.add(Node::Arith(ArithOp::Div, x, by))
        };
        let rem = |l: &mut Lowerer, x: NodeId, by: i64| {
            let by = l.int(PType::I64, by);
            l.add(Node::Arith(ArithOp::Rem, x, by))
        };
        // The units of the minute, as `per` of a second (milli: 1,000).
        let of_minute = |l: &mut Lowerer, per: i64| {
            let units = rem(l, time, 60 * per_second);
            if per_second >= per {
                div(l, units, per_second / per)
            } else {
                let k = l.int(PType::I64, per / per_second);
                l.add(Node::Arith(ArithOp::Mul, units, k))
            }
        };
        Ok(match field {
            Field::Hour => div(self, time, 3_600 * per_second),
            Field::Minute => {
                let minutes = div(self, time, 60 * per_second);
                rem(self, minutes, 60)
            }
            Field::Second => of_minute(self, 1),
            Field::Millisecond => of_minute(self, 1_000),
            Field::Microsecond => of_minute(self, 1_000_000),
            other => return unsupported(format!("the field {other:?} of a TIME")),
        })
    }

    /// A field of the date `days` (an `I32` node) days after 1970-01-01, as an `I32`:
    /// `civil_from_days`'s steps. Every value stays small, so the value ranges spare
    /// the arithmetic its overflow checks.
    fn calendar_field(&mut self, field: Field, days: NodeId) -> Result<NodeId, Unsupported> {
        use ArithOp::{Add, Div, FloorDiv, FloorMod, Mul, Sub};
        let k = |l: &mut Lowerer, v: i64| l.int(PType::I32, v);
        let op = |l: &mut Lowerer, op: ArithOp, a: NodeId, b: NodeId| l.add(Node::Arith(op, a, b));
        let opk = |l: &mut Lowerer, o: ArithOp, a: NodeId, v: i64| {
            let b = k(l, v);
            op(l, o, a, b)
        };
        let flag = |l: &mut Lowerer, c: CmpOp, a: NodeId, v: i64| {
            let b = k(l, v);
            let test = l.add(Node::Cmp(c, a, b));
            l.add(Node::Cast(test, PType::I32))
        };
        match field {
            Field::Dow | Field::IsoDow => {
                // 1970-01-01 was a Thursday.
                let weekday = opk(self, FloorMod, days, 7);
                let shift = if field == Field::Dow { 4 } else { 3 };
                let shifted = opk(self, Add, weekday, shift);
                let v = opk(self, ArithOp::Rem, shifted, 7);
                return Ok(if field == Field::Dow {
                    v
                } else {
                    opk(self, Add, v, 1)
                });
            }
            Field::Week | Field::IsoYear | Field::Epoch => {
                return unsupported(format!("the field {field:?} in the kernel"))
            }
            _ => {}
        }
        let era = opk(self, FloorDiv, days, DAYS_PER_ERA);
        let in_era = opk(self, FloorMod, days, DAYS_PER_ERA);
        let t = opk(self, Add, in_era, EPOCH_IN_ERA_4);
        let carry = flag(self, CmpOp::Ge, t, DAYS_PER_ERA);
        let whole_era = opk(self, Mul, carry, DAYS_PER_ERA);
        let day_of_era = op(self, Sub, t, whole_era);
        let era = opk(self, Add, era, 4);
        let era = op(self, Add, era, carry);
        // (doe - doe/1460 + doe/36524 - doe/146096) / 365
        let a = opk(self, Div, day_of_era, 1460);
        let b = opk(self, Div, day_of_era, 36_524);
        let c = opk(self, Div, day_of_era, 146_096);
        let y = op(self, Sub, day_of_era, a);
        let y = op(self, Add, y, b);
        let y = op(self, Sub, y, c);
        let year_of_era = opk(self, Div, y, 365);
        // doe - (365 * yoe + yoe/4 - yoe/100)
        let d = opk(self, Mul, year_of_era, 365);
        let e = opk(self, Div, year_of_era, 4);
        let f = opk(self, Div, year_of_era, 100);
        let d = op(self, Add, d, e);
        let d = op(self, Sub, d, f);
        let day_of_march_year = op(self, Sub, day_of_era, d);
        // (5 * doy + 2) / 153
        let m = opk(self, Mul, day_of_march_year, 5);
        let m = opk(self, Add, m, 2);
        let march_month = opk(self, Div, m, 153);
        let january_or_february = flag(self, CmpOp::Ge, march_month, 10);
        // month = mp + 3, less 12 in January and February
        let twelve = opk(self, Mul, january_or_february, 12);
        let month = opk(self, Add, march_month, 3);
        let month = op(self, Sub, month, twelve);
        let era_years = opk(self, Mul, era, 400);
        let year = op(self, Add, year_of_era, era_years);
        let year = op(self, Add, year, january_or_february);
        Ok(match field {
            Field::Month => month,
            Field::Quarter => {
                let q = opk(self, Add, month, 2);
                opk(self, Div, q, 3)
            }
            Field::Day => {
                // doy - (153 * mp + 2) / 5 + 1
                let s = opk(self, Mul, march_month, 153);
                let s = opk(self, Add, s, 2);
                let s = opk(self, Div, s, 5);
                let day = op(self, Sub, day_of_march_year, s);
                opk(self, Add, day, 1)
            }
            Field::Doy => {
                // January and February: doy - 305; else doy + 60 + leap(year).
                let leap = self.leap_year(year);
                let late = opk(self, Add, day_of_march_year, 60);
                let late = op(self, Add, late, leap);
                let early = opk(self, Sub, day_of_march_year, 305);
                let ten = k(self, 10);
                let is_early = self.add(Node::Cmp(CmpOp::Ge, march_month, ten));
                self.add(Node::Case(vec![(is_early, early)], late))
            }
            Field::Year | Field::Decade => {
                // PostgreSQL has no year 0: 1 BC is -1.
                let bc = flag(self, CmpOp::Le, year, 0);
                let pg = op(self, Sub, year, bc);
                if field == Field::Year {
                    pg
                } else {
                    opk(self, FloorDiv, pg, 10)
                }
            }
            Field::Century | Field::Millennium => {
                let span = if field == Field::Century { 100 } else { 1000 };
                // (year - 1) / span + 1 from year 1; -((-year) / span + 1) before.
                let ad = opk(self, Sub, year, 1);
                let ad = opk(self, Div, ad, span);
                let ad = opk(self, Add, ad, 1);
                let zero = k(self, 0);
                let back = op(self, Sub, zero, year);
                let back = opk(self, Div, back, span);
                let back = opk(self, Add, back, 1);
                let bc = op(self, Sub, zero, back);
                let is_ad = self.add(Node::Cmp(CmpOp::Gt, year, zero));
                self.add(Node::Case(vec![(is_ad, ad)], bc))
            }
            other => return unsupported(format!("the field {other:?} in the kernel")),
        })
    }

    /// 1 where the astronomical `year` (an `I32` node) is a leap year, else 0.
    fn leap_year(&mut self, year: NodeId) -> NodeId {
        let zero = self.int(PType::I32, 0);
        let divides = |l: &mut Lowerer, by: i64| {
            let by = l.int(PType::I32, by);
            let r = l.add(Node::Arith(ArithOp::FloorMod, year, by));
            l.add(Node::Cmp(CmpOp::Eq, r, zero))
        };
        let (by4, by100, by400) = (divides(self, 4), divides(self, 100), divides(self, 400));
        let not100 = self.add(Node::Not(by100));
        let either = self.add(Node::Or(vec![not100, by400]));
        let leap = self.add(Node::And(vec![by4, either]));
        self.add(Node::Cast(leap, PType::I32))
    }

    /// The integer constant `v` of type `ty`.
    fn int(&mut self, ty: PType, v: i64) -> NodeId {
        self.add(Node::Const(ty, v as u64))
    }
}
