//! The fields of dates and times in the kernel (`year(x)`, `EXTRACT(month FROM x)`,
//! `hour(x)`, …): vector integer arithmetic on a DATE's days or a timestamp's units,
//! the steps of the interpreter's calendar (`functions::datetime::civil`), where a
//! division by a constant is a multiplication. The ISO week's fields (`week`,
//! `isoyear`) call their row-wise implementation.

use arrow_schema::{DataType, TimeUnit};
use broadhead_codegen::{ArithOp, CmpOp, Node, NodeId, PType};

use super::{unsupported, Lowerer, Unsupported};
use crate::functions::datetime::civil::{
    chrono_days, civil_from_days, DAYS_PER_ERA, EPOCH_IN_ERA_4,
};
use crate::functions::datetime::truncation::counts_dates;
use crate::functions::datetime::zones::fixed_offset;
use crate::functions::Field;
use crate::scalar::ScalarValue;
use crate::typed::TypedExpr;
use crate::types::units_per_second;

/// A civil date's parts, as `I32` nodes.
struct Civil {
    /// The astronomical year (0 is 1 BC).
    year: NodeId,
    /// 1 to 12.
    month: NodeId,
    /// 1 to 31.
    day: NodeId,
    /// The month counted from March (0) to February (11).
    march_month: NodeId,
    /// The day of the year counted from March 1 (0 to 365).
    day_of_march_year: NodeId,
}

/// The field a literal unit names (`'month'`), if it is a literal.
fn literal_field(unit: &TypedExpr) -> Option<Field> {
    match unit.as_literal()? {
        ScalarValue::Utf8(s) => Field::named(s),
        _ => None,
    }
}

/// For truncating to decades, centuries and millennia: the span of years, and the
/// year (mod the span) a span starts in; `Some((1, 0))` for days, weeks, months,
/// quarters and years; `None` for the units `date_trunc` rejects.
fn truncatable(field: Field) -> Option<(i64, i64)> {
    match field {
        Field::Day | Field::Week | Field::Month | Field::Quarter | Field::Year => Some((1, 0)),
        Field::Decade => Some((10, 0)),
        Field::Century => Some((100, 1)),
        Field::Millennium => Some((1000, 1)),
        _ => None,
    }
}

/// The nanoseconds of a unit of the time of day (hour … microsecond).
fn truncatable_time(field: Field) -> i64 {
    match field {
        Field::Hour => 3_600_000_000_000,
        Field::Minute => 60_000_000_000,
        Field::Second => 1_000_000_000,
        Field::Millisecond => 1_000_000,
        _ => 1_000,
    }
}

/// The timestamps of `unit` whose day chrono can represent, within 64 bits.
fn chrono_units(unit: TimeUnit) -> (i128, i128) {
    let per_day = i128::from(units_per_day(unit));
    let days = chrono_days();
    let lo = i128::from(*days.start()) * per_day;
    let hi = (i128::from(*days.end()) + 1) * per_day - 1;
    (lo.max(i64::MIN.into()), hi.min(i64::MAX.into()))
}

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

    /// `date_trunc(unit, x)` of a DATE or TIMESTAMP with a literal unit, as a
    /// TIMESTAMP of `x`'s unit (microseconds for a DATE); `None` for another unit
    /// or one that is not a literal, which the row function computes (an unknown
    /// unit is its error). Rows whose date or result chrono cannot represent are
    /// errors, as in the interpreter.
    pub(super) fn truncation(&mut self, args: &[TypedExpr]) -> Result<Option<NodeId>, Unsupported> {
        let [unit, x] = args else { return Ok(None) };
        let Some(field) = literal_field(unit) else {
            return Ok(None);
        };
        let (ts_unit, is_date) = match &x.data_type {
            DataType::Date32 => (TimeUnit::Microsecond, true),
            DataType::Timestamp(u, None) => (*u, false),
            _ => return Ok(None),
        };
        let of_time = matches!(
            field,
            Field::Hour | Field::Minute | Field::Second | Field::Millisecond | Field::Microsecond
        );
        if !of_time && truncatable(field).is_none() {
            return Ok(None);
        }
        let xi = self.expr(x)?;
        let days = if is_date {
            self.days_in_chrono_range(xi)
        } else {
            let xi = self.in_chrono_range(xi, ts_unit);
            if of_time {
                // Down to a multiple of the unit's length (none when the column's
                // unit is coarser).
                let nanos = truncatable_time(field);
                let per = nanos / (1_000_000_000 / units_per_second(ts_unit));
                if per <= 1 {
                    return Ok(Some(xi));
                }
                let len = self.int(PType::I64, per);
                let into = self.op(ArithOp::FloorMod, xi, len);
                return Ok(Some(self.op(ArithOp::Sub, xi, into)));
            }
            let per_day = self.int(PType::I64, units_per_day(ts_unit));
            let days = self.op(ArithOp::FloorDiv, xi, per_day);
            self.add(Node::Cast(days, PType::I32))
        };
        let first = if of_time {
            self.add(Node::Cast(days, PType::I64))
        } else {
            let first = self.truncated_days(field, days)?;
            self.days_in_chrono_range(first)
        };
        let per_day = self.int(PType::I64, units_per_day(ts_unit));
        Ok(Some(self.op(ArithOp::Mul, first, per_day)))
    }

    /// The first day (an `I64` node) of the `field` (day … millennium) holding the
    /// date `days` (`I32`).
    fn truncated_days(&mut self, field: Field, days: NodeId) -> Result<NodeId, Unsupported> {
        use ArithOp::{Add, FloorDiv, FloorMod, Mul, Sub};
        let wide = |l: &mut Lowerer, v: NodeId| l.add(Node::Cast(v, PType::I64));
        Ok(match field {
            Field::Day => wide(self, days),
            Field::Week => {
                // Back to Monday: 1970-01-01 was a Thursday, 3 days after one.
                let from_monday = self.opk(Add, days, 3);
                let from_monday = self.opk(FloorMod, from_monday, 7);
                let monday = self.op(Sub, days, from_monday);
                wide(self, monday)
            }
            Field::Month => {
                let c = self.civil(days);
                let first = self.op(Sub, days, c.day);
                let first = self.opk(Add, first, 1);
                wide(self, first)
            }
            _ => {
                let c = self.civil(days);
                let (year, month) = match field {
                    Field::Year => (c.year, self.int(PType::I32, 1)),
                    Field::Quarter => {
                        let m = self.opk(Sub, c.month, 1);
                        let m = self.opk(FloorDiv, m, 3);
                        let m = self.opk(Mul, m, 3);
                        (c.year, self.opk(Add, m, 1))
                    }
                    _ => {
                        // Decades start in years ending in 0; centuries and millennia
                        // in years ending in 001 (PostgreSQL's).
                        let Some((span, offset)) = truncatable(field) else {
                            return unsupported(format!("date_trunc to {field:?} in the kernel"));
                        };
                        let y = self.opk(Sub, c.year, offset);
                        let y = self.opk(FloorDiv, y, span);
                        let y = self.opk(Mul, y, span);
                        (self.opk(Add, y, offset), self.int(PType::I32, 1))
                    }
                };
                self.first_of_month(year, month)
            }
        })
    }

    /// `date_diff(unit, a, b)` of DATEs or TIMESTAMPs with a literal unit: the unit
    /// boundaries crossed from `a` to `b` (`None`: the row function's, as
    /// [`Lowerer::truncation`]).
    pub(super) fn difference(&mut self, args: &[TypedExpr]) -> Result<Option<NodeId>, Unsupported> {
        use ArithOp::{Add, FloorDiv, Mul, Sub};
        let [unit, a, b] = args else { return Ok(None) };
        let Some(field) = literal_field(unit) else {
            return Ok(None);
        };
        let ts_unit = match &a.data_type {
            DataType::Date32 => None,
            DataType::Timestamp(u, None) => Some(*u),
            _ => return Ok(None),
        };
        if field == Field::IsoYear {
            return Ok(None);
        }
        // A DATE's days and coarser units are counted for every DATE (the
        // interpreter's `date_difference`); the rest read it as chrono does.
        // Each end's check fails only where the other end is not NULL (where it is,
        // the difference is NULL and the interpreter reads neither).
        let raw = [self.expr(a)?, self.expr(b)?];
        let mut ends = Vec::with_capacity(2);
        for (k, &x) in raw.iter().enumerate() {
            let other = [raw[1 - k]];
            ends.push(match ts_unit {
                None if counts_dates(field) => x,
                None => {
                    let checked = self.days_in_chrono_range(x);
                    self.where_valid(checked, x, PType::I32, &other)
                }
                Some(u) => self.in_chrono_range_where(x, u, &other),
            });
        }
        // What is counted at each end: its ticks of the unit, as an I64 (days and
        // coarser from the date's civil parts).
        let mut ticks = Vec::with_capacity(2);
        for x in ends {
            let per_day = ts_unit.map_or(1, units_per_day);
            let days = match ts_unit {
                None => x,
                Some(_) => {
                    let k = self.int(PType::I64, per_day);
                    let d = self.op(FloorDiv, x, k);
                    self.add(Node::Cast(d, PType::I32))
                }
            };
            let wide = |l: &mut Lowerer, v: NodeId| l.add(Node::Cast(v, PType::I64));
            let t = match field {
                Field::Day | Field::Dow | Field::IsoDow | Field::Doy => wide(self, days),
                Field::Week => {
                    // In 64 bits: every i32 day plus 3 fits.
                    let d = wide(self, days);
                    let three = self.int(PType::I64, 3);
                    let d = self.op(Add, d, three);
                    let seven = self.int(PType::I64, 7);
                    self.op(FloorDiv, d, seven)
                }
                Field::Month | Field::Quarter => {
                    let c = self.civil(days);
                    let months = self.opk(Mul, c.year, 12);
                    let months = self.op(Add, months, c.month);
                    let months = self.opk(Sub, months, 1);
                    let months = if field == Field::Quarter {
                        self.opk(FloorDiv, months, 3)
                    } else {
                        months
                    };
                    wide(self, months)
                }
                Field::Year | Field::Decade | Field::Century | Field::Millennium => {
                    let c = self.civil(days);
                    let span = match field {
                        Field::Year => 1,
                        Field::Decade => 10,
                        Field::Century => 100,
                        _ => 1000,
                    };
                    let y = if span == 1 {
                        c.year
                    } else {
                        self.opk(FloorDiv, c.year, span)
                    };
                    wide(self, y)
                }
                Field::IsoYear => return Ok(None),
                Field::Hour
                | Field::Minute
                | Field::Second
                | Field::Epoch
                | Field::Millisecond
                | Field::Microsecond => {
                    let nanos = if field == Field::Epoch {
                        1_000_000_000
                    } else {
                        truncatable_time(field)
                    };
                    let unit_nanos = match ts_unit {
                        None => 86_400_000_000_000,
                        Some(u) => 1_000_000_000 / units_per_second(u),
                    };
                    let x = match ts_unit {
                        None => wide(self, x),
                        Some(_) => x,
                    };
                    if nanos >= unit_nanos {
                        let k = self.int(PType::I64, nanos / unit_nanos);
                        self.op(FloorDiv, x, k)
                    } else {
                        // Inside chrono's range, a tick count fits 64 bits.
                        let k = self.int(PType::I64, unit_nanos / nanos);
                        self.op(Mul, x, k)
                    }
                }
            };
            ticks.push(t);
        }
        Ok(Some(self.op(Sub, ticks[1], ticks[0])))
    }

    /// `add_days(x, n)` (`days`) or `add_nanoseconds(x, n)` of a TIMESTAMP (`x +
    /// INTERVAL`'s steps): `x` plus `n` days, or plus `n` nanoseconds rounded down to
    /// `x`'s unit, computed in 128 bits; rows whose `x` or result chrono cannot
    /// represent, or whose result leaves 64 bits, fail (the interpreter's chrono
    /// steps). `None` for other types.
    pub(super) fn add_to_timestamp(
        &mut self,
        days: bool,
        args: &[TypedExpr],
    ) -> Result<Option<NodeId>, Unsupported> {
        let [x, n] = args else { return Ok(None) };
        let DataType::Timestamp(unit, None) = &x.data_type else {
            return Ok(None);
        };
        let unit = *unit;
        let xi = self.expr(x)?;
        let unit_nanos = 1_000_000_000 / units_per_second(unit);
        // A literal step of 64 bits is a parameter: one checked 64-bit sum (beyond 64
        // bits the result is out of range anyway).
        let literal = match n.as_literal() {
            Some(ScalarValue::Int64(v)) if days => v.checked_mul(units_per_day(unit)),
            Some(ScalarValue::Int64(v)) => Some(v.div_euclid(unit_nanos)),
            _ => None,
        };
        if let Some(step) = literal {
            let xi = self.in_chrono_range(xi, unit);
            let step = self.param(PType::I64, step as u64);
            let sum = self.op(ArithOp::Add, xi, step);
            let (lo, hi) = chrono_units(unit);
            return Ok(Some(self.add(Node::RangeCheck(sum, lo, hi))));
        }
        let ni = self.expr(n)?;
        let xi = self.in_chrono_range_where(xi, unit, &[ni]);
        let step = if days {
            let ni = self.add(Node::Cast(ni, PType::I128));
            // |n| < 2^63 days of fewer than 2^47 units: the product fits.
            let per_day = self.add(Node::Const128(i128::from(units_per_day(unit))));
            self.op(ArithOp::WideMul, ni, per_day)
        } else {
            let ni = if unit_nanos > 1 {
                let k = self.int(PType::I64, unit_nanos);
                self.op(ArithOp::FloorDiv, ni, k)
            } else {
                ni
            };
            self.add(Node::Cast(ni, PType::I128))
        };
        let wide = self.add(Node::Cast(xi, PType::I128));
        let sum = self.op(ArithOp::Add, wide, step);
        let (lo, hi) = chrono_units(unit);
        let sum = self.add(Node::RangeCheck(sum, lo, hi));
        Ok(Some(self.add(Node::Cast(sum, PType::I64))))
    }

    /// `add_months(x, n)` of a TIMESTAMP (`x + INTERVAL 'n months'`): the date `n`
    /// months on, its day clamped to the end of the month (PostgreSQL's), at the
    /// same time of day. Rows fail as the interpreter's chrono steps do: `x` outside
    /// chrono's days, a month outside chrono's years, or December of its last year
    /// (whose month end chrono cannot find), or a result beyond 64 bits.
    pub(super) fn add_months(&mut self, args: &[TypedExpr]) -> Result<Option<NodeId>, Unsupported> {
        use ArithOp::{Add, FloorDiv, FloorMod, Mul, Sub};
        let [x, n] = args else { return Ok(None) };
        let DataType::Timestamp(unit, None) = &x.data_type else {
            return Ok(None);
        };
        let per_day = units_per_day(*unit);
        let xi = self.expr(x)?;
        let ni = self.expr(n)?;
        let xi = self.in_chrono_range_where(xi, *unit, &[ni]);
        let per_day_node = self.int(PType::I64, per_day);
        let days = self.op(FloorDiv, xi, per_day_node);
        let days = self.add(Node::Cast(days, PType::I32));
        let time = self.op(FloorMod, xi, per_day_node);
        let c = self.civil(days);
        // Months since year 0, plus n: a checked 64-bit sum.
        let months = self.opk(Mul, c.year, 12);
        let months = self.op(Add, months, c.month);
        let months = self.opk(Sub, months, 1);
        let months = self.add(Node::Cast(months, PType::I64));
        let total = self.op(Add, months, ni);
        let (first_year, last_year) = (
            civil_from_days(*chrono_days().start()).year,
            civil_from_days(*chrono_days().end()).year,
        );
        let total = self.add(Node::RangeCheck(
            total,
            i128::from(first_year * 12),
            i128::from(last_year * 12 + 10),
        ));
        let twelve = self.int(PType::I64, 12);
        let year = self.op(FloorDiv, total, twelve);
        let year = self.add(Node::Cast(year, PType::I32));
        let month = self.op(FloorMod, total, twelve);
        let month = self.add(Node::Cast(month, PType::I32));
        let month = self.opk(Add, month, 1);
        let first = self.first_of_month(year, month);
        // The first of the next month, less one day: the month's last day.
        let december = self.flag(CmpOp::Eq, month, 12);
        let next_year = self.op(Add, year, december);
        let next_month = self.opk(FloorMod, month, 12);
        let next_month = self.opk(Add, next_month, 1);
        let next = self.first_of_month(next_year, next_month);
        let one = self.int(PType::I64, 1);
        let last = self.op(Sub, next, one);
        let day = self.add(Node::Cast(c.day, PType::I64));
        let wanted = self.op(Add, first, day);
        let wanted = self.op(Sub, wanted, one);
        let beyond = self.add(Node::Cmp(CmpOp::Gt, wanted, last));
        let result_days = self.add(Node::Case(vec![(beyond, last)], wanted));
        // days * per_day + time of day, in 128 bits, then back to 64.
        let wide_days = self.add(Node::Cast(result_days, PType::I128));
        let per = self.add(Node::Const128(i128::from(per_day)));
        let at = self.op(ArithOp::WideMul, wide_days, per);
        let time = self.add(Node::Cast(time, PType::I128));
        let value = self.op(Add, at, time);
        let value = self.add(Node::RangeCheck(
            value,
            i128::from(i64::MIN),
            i128::from(i64::MAX),
        ));
        Ok(Some(self.add(Node::Cast(value, PType::I64))))
    }

    /// `timezone(zone, x)` (`to_wall_clock`: the wall clock at the instant `x`) or
    /// `from_local_time(zone, x)` (the instant at which the wall clock shows `x`) of a
    /// literal zone whose offset never changes ([`fixed_offset`]): `x` plus or minus
    /// the offset, failing where `x` or the result is outside chrono's days (the
    /// interpreter's steps). `None` for other zones, which the row function reads
    /// through the zone database.
    pub(super) fn fixed_zone(
        &mut self,
        to_wall_clock: bool,
        args: &[TypedExpr],
    ) -> Result<Option<NodeId>, Unsupported> {
        let [zone, x] = args else { return Ok(None) };
        let Some(ScalarValue::Utf8(name)) = zone.as_literal() else {
            return Ok(None);
        };
        let (Some(offset), DataType::Timestamp(unit, _)) = (fixed_offset(name), &x.data_type)
        else {
            return Ok(None);
        };
        let xi = self.expr(x)?;
        let xi = self.in_chrono_range(xi, *unit);
        if offset == 0 {
            return Ok(Some(xi));
        }
        let shift = i64::from(offset) * units_per_second(*unit);
        let shift = self.int(PType::I64, if to_wall_clock { shift } else { -shift });
        let moved = self.op(ArithOp::Add, xi, shift);
        Ok(Some(self.in_chrono_range(moved, *unit)))
    }

    /// Days `x` (an integer node), its rows outside chrono's days errors.
    fn days_in_chrono_range(&mut self, x: NodeId) -> NodeId {
        let days = chrono_days();
        self.add(Node::RangeCheck(
            x,
            i128::from(*days.start()),
            i128::from(*days.end()),
        ))
    }

    /// [`Self::in_chrono_range`] checked only where every node of `others` (the
    /// call's other arguments) is valid: elsewhere a strict call is NULL, and the
    /// interpreter does not read its arguments there, so no row may fail.
    fn in_chrono_range_where(&mut self, x: NodeId, unit: TimeUnit, others: &[NodeId]) -> NodeId {
        let checked = self.in_chrono_range(x, unit);
        self.where_valid(checked, x, PType::I64, others)
    }

    /// `checked` (`x` with a check that can fail) where every node of `others` is
    /// valid, NULL elsewhere; `x` itself when there is no check.
    fn where_valid(&mut self, checked: NodeId, x: NodeId, ty: PType, others: &[NodeId]) -> NodeId {
        if checked == x || others.is_empty() {
            return checked;
        }
        let tests: Vec<NodeId> = others
            .iter()
            .map(|&o| self.add(Node::IsNull(o, true)))
            .collect();
        let all = match tests[..] {
            [one] => one,
            _ => self.add(Node::And(tests)),
        };
        let null = self.add(Node::Null(ty));
        self.add(Node::Case(vec![(all, checked)], null))
    }

    /// A timestamp `x` of `unit`, its rows outside chrono's days errors.
    fn in_chrono_range(&mut self, x: NodeId, unit: TimeUnit) -> NodeId {
        let (lo, hi) = chrono_units(unit);
        if lo == i128::from(i64::MIN) && hi == i128::from(i64::MAX) {
            return x;
        }
        self.add(Node::RangeCheck(x, lo, hi))
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

    /// The civil date of `days` (an `I32` node) days after 1970-01-01:
    /// `civil_from_days`'s steps. Every value stays small, so the value ranges spare
    /// the arithmetic its overflow checks.
    fn civil(&mut self, days: NodeId) -> Civil {
        use ArithOp::{Add, Div, FloorDiv, FloorMod, Mul, Sub};
        let era = self.opk(FloorDiv, days, DAYS_PER_ERA);
        let in_era = self.opk(FloorMod, days, DAYS_PER_ERA);
        let t = self.opk(Add, in_era, EPOCH_IN_ERA_4);
        let carry = self.flag(CmpOp::Ge, t, DAYS_PER_ERA);
        let whole_era = self.opk(Mul, carry, DAYS_PER_ERA);
        let day_of_era = self.op(Sub, t, whole_era);
        let era = self.opk(Add, era, 4);
        let era = self.op(Add, era, carry);
        // (doe - doe/1460 + doe/36524 - doe/146096) / 365
        let a = self.opk(Div, day_of_era, 1460);
        let b = self.opk(Div, day_of_era, 36_524);
        let c = self.opk(Div, day_of_era, 146_096);
        let y = self.op(Sub, day_of_era, a);
        let y = self.op(Add, y, b);
        let y = self.op(Sub, y, c);
        let year_of_era = self.opk(Div, y, 365);
        let before = self.days_before(year_of_era);
        let day_of_march_year = self.op(Sub, day_of_era, before);
        // (5 * doy + 2) / 153
        let m = self.opk(Mul, day_of_march_year, 5);
        let m = self.opk(Add, m, 2);
        let march_month = self.opk(Div, m, 153);
        let january_or_february = self.flag(CmpOp::Ge, march_month, 10);
        // month = mp + 3, less 12 in January and February
        let twelve = self.opk(Mul, january_or_february, 12);
        let month = self.opk(Add, march_month, 3);
        let month = self.op(Sub, month, twelve);
        let era_years = self.opk(Mul, era, 400);
        let year = self.op(Add, year_of_era, era_years);
        let year = self.op(Add, year, january_or_february);
        // doy - (153 * mp + 2) / 5 + 1
        let s = self.opk(Mul, march_month, 153);
        let s = self.opk(Add, s, 2);
        let s = self.opk(Div, s, 5);
        let day = self.op(Sub, day_of_march_year, s);
        let day = self.opk(Add, day, 1);
        Civil {
            year,
            month,
            day,
            march_month,
            day_of_march_year,
        }
    }

    /// A field of the date `days` (an `I32` node) days after 1970-01-01, as an `I32`.
    fn calendar_field(&mut self, field: Field, days: NodeId) -> Result<NodeId, Unsupported> {
        use ArithOp::{Add, Div, FloorDiv, FloorMod, Sub};
        match field {
            Field::Dow | Field::IsoDow => {
                // 1970-01-01 was a Thursday.
                let weekday = self.opk(FloorMod, days, 7);
                let shift = if field == Field::Dow { 4 } else { 3 };
                let shifted = self.opk(Add, weekday, shift);
                let v = self.opk(ArithOp::Rem, shifted, 7);
                return Ok(if field == Field::Dow {
                    v
                } else {
                    self.opk(Add, v, 1)
                });
            }
            Field::Week | Field::IsoYear | Field::Epoch => {
                return unsupported(format!("the field {field:?} in the kernel"))
            }
            _ => {}
        }
        let c = self.civil(days);
        Ok(match field {
            Field::Month => c.month,
            Field::Quarter => {
                let q = self.opk(Add, c.month, 2);
                self.opk(Div, q, 3)
            }
            Field::Day => c.day,
            Field::Doy => self.day_of_year(&c),
            Field::Year | Field::Decade => {
                // PostgreSQL has no year 0: 1 BC is -1.
                let bc = self.flag(CmpOp::Le, c.year, 0);
                let pg = self.op(Sub, c.year, bc);
                if field == Field::Year {
                    pg
                } else {
                    self.opk(FloorDiv, pg, 10)
                }
            }
            Field::Century | Field::Millennium => {
                let span = if field == Field::Century { 100 } else { 1000 };
                // (year - 1) / span + 1 from year 1; -((-year) / span + 1) before.
                let ad = self.opk(Sub, c.year, 1);
                let ad = self.opk(Div, ad, span);
                let ad = self.opk(Add, ad, 1);
                let zero = self.int(PType::I32, 0);
                let back = self.op(Sub, zero, c.year);
                let back = self.opk(Div, back, span);
                let back = self.opk(Add, back, 1);
                let bc = self.op(Sub, zero, back);
                let is_ad = self.add(Node::Cmp(CmpOp::Gt, c.year, zero));
                self.add(Node::Case(vec![(is_ad, ad)], bc))
            }
            other => return unsupported(format!("the field {other:?} in the kernel")),
        })
    }

    /// The day of the year, 1 to 366: in January and February the March-based day
    /// less 305, else plus 60 and the leap day.
    fn day_of_year(&mut self, c: &Civil) -> NodeId {
        let leap = self.leap_year(c.year);
        let late = self.opk(ArithOp::Add, c.day_of_march_year, 60);
        let late = self.op(ArithOp::Add, late, leap);
        let early = self.opk(ArithOp::Sub, c.day_of_march_year, 305);
        let ten = self.int(PType::I32, 10);
        let is_early = self.add(Node::Cmp(CmpOp::Ge, c.march_month, ten));
        self.add(Node::Case(vec![(is_early, early)], late))
    }

    /// The days since 1970-01-01 (an `I64` node) of the first of `month` (1 to 12)
    /// of the astronomical `year` (`I32` nodes): `days_from_civil`.
    fn first_of_month(&mut self, year: NodeId, month: NodeId) -> NodeId {
        use ArithOp::{Add, Div, FloorDiv, Mul, Sub};
        // Years start in March: January and February belong to the year before.
        let early = self.flag(CmpOp::Le, month, 2);
        let y = self.op(Sub, year, early);
        let era = self.opk(FloorDiv, y, 400);
        let per_era = self.opk(Mul, era, 400);
        let year_of_era = self.op(Sub, y, per_era);
        // March-based month: m - 3, or m + 9 in January and February.
        let twelve = self.opk(Mul, early, 12);
        let mp = self.opk(Sub, month, 3);
        let mp = self.op(Add, mp, twelve);
        let first = self.opk(Mul, mp, 153);
        let first = self.opk(Add, first, 2);
        let first = self.opk(Div, first, 5);
        let doe = self.days_before(year_of_era);
        let doe = self.op(Add, doe, first);
        // era * 146097 + doe - 719468, in 64 bits.
        let era = self.add(Node::Cast(era, PType::I64));
        let doe = self.add(Node::Cast(doe, PType::I64));
        let per = self.int(PType::I64, DAYS_PER_ERA);
        let days = self.op(Mul, era, per);
        let days = self.op(Add, days, doe);
        let epoch = self.int(PType::I64, 719_468);
        self.op(Sub, days, epoch)
    }

    /// The days of an era before the March-based year `year_of_era` (0 to 399)
    /// starts: `365 * yoe + yoe / 4 - yoe / 100`.
    fn days_before(&mut self, year_of_era: NodeId) -> NodeId {
        let days = self.opk(ArithOp::Mul, year_of_era, 365);
        let leap_days = self.opk(ArithOp::Div, year_of_era, 4);
        let centuries = self.opk(ArithOp::Div, year_of_era, 100);
        let days = self.op(ArithOp::Add, days, leap_days);
        self.op(ArithOp::Sub, days, centuries)
    }

    /// `a op b`.
    fn op(&mut self, op: ArithOp, a: NodeId, b: NodeId) -> NodeId {
        self.add(Node::Arith(op, a, b))
    }

    /// `a op v` for an `I32` constant `v`.
    fn opk(&mut self, op: ArithOp, a: NodeId, v: i64) -> NodeId {
        let b = self.int(PType::I32, v);
        self.op(op, a, b)
    }

    /// 1 where `a c v` (an `I32` constant), else 0, as an `I32`.
    fn flag(&mut self, c: CmpOp, a: NodeId, v: i64) -> NodeId {
        let b = self.int(PType::I32, v);
        let test = self.add(Node::Cmp(c, a, b));
        self.add(Node::Cast(test, PType::I32))
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
