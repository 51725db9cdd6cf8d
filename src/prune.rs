//! Pruning with statistics: can a predicate be TRUE on any row of a set of rows (a
//! Parquet row group, say) whose columns' minimum, maximum and NULL count are known?
//!
//! [`may_be_true`] walks a bound predicate ([`crate::Filter::typed_expr`]) and answers
//! `false` only when the statistics *prove* that no row is TRUE; anything it does not
//! recognise means "maybe". It understands comparisons of a column with a literal
//! (either side), `AND`, `OR`, `NOT`, `BETWEEN` (which binds to two comparisons),
//! `IN` lists, `IS [NOT] NULL`, bare BOOLEAN columns, and casts that never decrease a
//! value (integer widening, integer to float, REAL to DOUBLE, DATE to TIMESTAMP, and
//! timestamp unit changes), through which bounds are carried by evaluating the same
//! cast on them.
//!
//! Floats: NaN sorts above every other value and equals itself (see
//! `docs/semantics.md`), and Parquet statistics leave NaN out of the maximum, so a
//! float column's maximum is never trusted: `x > 5.0` cannot prune a float column,
//! `x < 5.0` can. `-0.0` and `0.0` compare equal.
//!
//! Pruning a row group also means not evaluating it: an error (division by zero, say)
//! that its rows would have raised is not raised.
//!
//! ```
//! use std::sync::Arc;
//! use arrow::datatypes::{DataType, Field, Schema};
//! use broadhead::prune::{may_be_true, ColumnStats};
//! use broadhead::{Filter, ScalarValue};
//!
//! let schema = Schema::new(vec![Field::new("q", DataType::Int64, true)]);
//! let filter = Filter::new(&schema, "q < 24")?;
//! let stats = |_: usize| Some(ColumnStats {
//!     min: Some(ScalarValue::Int64(30)),
//!     max: Some(ScalarValue::Int64(50)),
//!     null_count: Some(0),
//! });
//! assert!(!may_be_true(filter.typed_expr(), 1000, &stats)); // every q ≥ 30: skip
//! # Ok::<(), broadhead::Error>(())
//! ```

use std::cmp::Ordering;

use arrow::datatypes::DataType;

use crate::decimal::rescale;
use crate::functions::FuncId;
use crate::interpret::evaluate_constant;
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};

/// What is known about one column over a set of rows. Every field is optional: a
/// missing one is simply not used.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ColumnStats {
    /// A lower bound of the non-NULL values (the minimum, or less).
    pub min: Option<ScalarValue>,
    /// An upper bound of the non-NULL values (the maximum, or more). Ignored for
    /// float columns, whose NaNs sort above it.
    pub max: Option<ScalarValue>,
    /// The exact number of NULLs.
    pub null_count: Option<u64>,
}

/// Whether `predicate` may be TRUE on some row of a set of `rows` rows whose columns
/// (by schema index) have the statistics `stats` returns (`None`: nothing known).
/// `false` is a proof that every row is FALSE or NULL.
pub fn may_be_true(
    predicate: &TypedExpr,
    rows: u64,
    stats: &dyn Fn(usize) -> Option<ColumnStats>,
) -> bool {
    Pruner { rows, stats }.may_be(predicate, true)
}

struct Pruner<'a> {
    rows: u64,
    stats: &'a dyn Fn(usize) -> Option<ColumnStats>,
}

/// Bounds of a column-valued node.
#[derive(Debug, Default)]
struct Range {
    lo: Option<ScalarValue>,
    hi: Option<ScalarValue>,
    nulls: Option<u64>,
    all_null: bool,
}

impl Pruner<'_> {
    /// Whether `e` may evaluate to `want` (TRUE or FALSE; NULL is neither) on some row.
    fn may_be(&self, e: &TypedExpr, want: bool) -> bool {
        match &e.kind {
            TypedKind::Literal(ScalarValue::Boolean(b)) => *b == want,
            TypedKind::Literal(ScalarValue::Null(_)) => false,
            TypedKind::And(children) => {
                if want {
                    children.iter().all(|c| self.may_be(c, true))
                } else {
                    children.iter().any(|c| self.may_be(c, false))
                }
            }
            TypedKind::Or(children) => {
                if want {
                    children.iter().any(|c| self.may_be(c, true))
                } else {
                    children.iter().all(|c| self.may_be(c, false))
                }
            }
            TypedKind::Not(x) => self.may_be(x, !want),
            TypedKind::Column(_) if e.data_type == DataType::Boolean => match self.range(e) {
                Some(r) if r.all_null => false,
                // A TRUE needs max = TRUE, a FALSE needs min = FALSE.
                Some(r) => {
                    let bound = if want { &r.hi } else { &r.lo };
                    bound.as_ref() != Some(&ScalarValue::Boolean(!want))
                }
                None => true,
            },
            TypedKind::Call { sig, args } if sig.func.is_comparison() && args.len() == 2 => {
                let op = if want { sig.func } else { negate(sig.func) };
                self.comparison(op, &args[0], &args[1])
            }
            TypedKind::InList {
                expr,
                list,
                negated,
            } => {
                let Some(r) = self.range(expr) else {
                    return true;
                };
                if r.all_null {
                    return false;
                }
                // TRUE for IN (FALSE for NOT IN) needs the value to equal a list item.
                if *negated != want {
                    list.iter().filter(|v| !v.is_null()).any(|v| within(&r, v))
                } else {
                    true
                }
            }
            TypedKind::IsNull { expr, negated } => {
                let Some(r) = self.range(expr) else {
                    return true;
                };
                if *negated != want {
                    // Some row must be NULL.
                    r.nulls != Some(0)
                } else {
                    // Some row must be non-NULL.
                    !r.all_null
                }
            }
            _ => true,
        }
    }

    /// Whether `a op b` may be TRUE.
    fn comparison(&self, op: FuncId, a: &TypedExpr, b: &TypedExpr) -> bool {
        if a.as_literal().is_some_and(|v| v.is_null())
            || b.as_literal().is_some_and(|v| v.is_null())
        {
            return false;
        }
        let (range, value, op) = match (b.as_literal(), a.as_literal()) {
            (Some(v), _) => (self.range(a), v, op),
            (None, Some(v)) => (self.range(b), v, flip(op)),
            (None, None) => return true,
        };
        let Some(r) = range else {
            return true;
        };
        if r.all_null {
            return false;
        }
        // `None` (a missing bound, or values that do not compare) means maybe.
        let le = |x: &Option<ScalarValue>, y: &ScalarValue| {
            x.as_ref()
                .and_then(|x| order(x, y))
                .is_none_or(|o| o != Ordering::Greater)
        };
        let lt = |x: &Option<ScalarValue>, y: &ScalarValue| {
            x.as_ref()
                .and_then(|x| order(x, y))
                .is_none_or(|o| o == Ordering::Less)
        };
        let ge = |x: &Option<ScalarValue>, y: &ScalarValue| {
            x.as_ref()
                .and_then(|x| order(x, y))
                .is_none_or(|o| o != Ordering::Less)
        };
        let gt = |x: &Option<ScalarValue>, y: &ScalarValue| {
            x.as_ref()
                .and_then(|x| order(x, y))
                .is_none_or(|o| o == Ordering::Greater)
        };
        match op {
            FuncId::Less => lt(&r.lo, value),
            FuncId::LessEq => le(&r.lo, value),
            FuncId::Greater => gt(&r.hi, value),
            FuncId::GreaterEq => ge(&r.hi, value),
            FuncId::Equal => within(&r, value),
            FuncId::NotEqual => {
                let is = |x: &Option<ScalarValue>| {
                    x.as_ref().and_then(|x| order(x, value)) == Some(Ordering::Equal)
                };
                !(is(&r.lo) && is(&r.hi))
            }
            _ => true,
        }
    }

    /// The bounds of a column, or of a non-decreasing cast of one.
    fn range(&self, e: &TypedExpr) -> Option<Range> {
        match &e.kind {
            TypedKind::Column(i) => {
                let s = (self.stats)(*i)?;
                let nan = |v: &ScalarValue| match v {
                    ScalarValue::Float32(x) => x.is_nan(),
                    ScalarValue::Float64(x) => x.is_nan(),
                    _ => false,
                };
                let typed = |v: Option<ScalarValue>| {
                    v.filter(|v| !v.is_null() && v.data_type() == e.data_type && !nan(v))
                };
                let is_float = matches!(e.data_type, DataType::Float32 | DataType::Float64);
                Some(Range {
                    lo: typed(s.min),
                    hi: if is_float { None } else { typed(s.max) },
                    nulls: s.null_count,
                    all_null: s.null_count.is_some_and(|n| n >= self.rows),
                })
            }
            TypedKind::Cast(x) if non_decreasing(&x.data_type, &e.data_type) => {
                let r = self.range(x)?;
                let cast = |v: Option<ScalarValue>| {
                    let v = v?;
                    let node = TypedExpr::new(
                        TypedKind::Cast(Box::new(TypedExpr::literal(v, x.span))),
                        e.data_type.clone(),
                        e.span,
                    );
                    evaluate_constant(&node).ok().filter(|v| !v.is_null())
                };
                Some(Range {
                    lo: cast(r.lo),
                    hi: cast(r.hi),
                    nulls: r.nulls,
                    all_null: r.all_null,
                })
            }
            _ => None,
        }
    }
}

/// Whether `v` may lie within the range.
fn within(r: &Range, v: &ScalarValue) -> bool {
    let above_lo =
        r.lo.as_ref()
            .and_then(|lo| order(lo, v))
            .is_none_or(|o| o != Ordering::Greater);
    let below_hi =
        r.hi.as_ref()
            .and_then(|hi| order(hi, v))
            .is_none_or(|o| o != Ordering::Less);
    above_lo && below_hi
}

/// `NOT (a op b)` for non-NULL operands (the order is total: NaN is the largest float).
fn negate(op: FuncId) -> FuncId {
    match op {
        FuncId::Equal => FuncId::NotEqual,
        FuncId::NotEqual => FuncId::Equal,
        FuncId::Less => FuncId::GreaterEq,
        FuncId::LessEq => FuncId::Greater,
        FuncId::Greater => FuncId::LessEq,
        FuncId::GreaterEq => FuncId::Less,
        other => other,
    }
}

/// `b op a` as `a op' b`.
fn flip(op: FuncId) -> FuncId {
    match op {
        FuncId::Less => FuncId::Greater,
        FuncId::LessEq => FuncId::GreaterEq,
        FuncId::Greater => FuncId::Less,
        FuncId::GreaterEq => FuncId::LessEq,
        other => other,
    }
}

/// SQL order of two non-NULL values of the same type (NaN above every float, -0.0 =
/// 0.0, strings and BLOBs by bytes, a prefix first); `None` for values that do not compare.
fn order(a: &ScalarValue, b: &ScalarValue) -> Option<Ordering> {
    use ScalarValue::*;
    fn float(x: f64, y: f64) -> Ordering {
        match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        }
    }
    Some(match (a, b) {
        (Boolean(x), Boolean(y)) => x.cmp(y),
        (Int8(x), Int8(y)) => x.cmp(y),
        (Int16(x), Int16(y)) => x.cmp(y),
        (Int32(x), Int32(y)) => x.cmp(y),
        (Int64(x), Int64(y)) => x.cmp(y),
        (UInt8(x), UInt8(y)) => x.cmp(y),
        (UInt16(x), UInt16(y)) => x.cmp(y),
        (UInt32(x), UInt32(y)) => x.cmp(y),
        (UInt64(x), UInt64(y)) => x.cmp(y),
        (Float32(x), Float32(y)) => float(*x as f64, *y as f64),
        (Float64(x), Float64(y)) => float(*x, *y),
        (Utf8(x), Utf8(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Binary(x), Binary(y)) => x.cmp(y),
        (Date32(x), Date32(y)) => x.cmp(y),
        (Timestamp(x, u, _), Timestamp(y, v, _)) if u == v => x.cmp(y),
        (Decimal128(..) | Decimal256(..), Decimal128(..) | Decimal256(..)) => {
            return decimal_order(a, b)
        }
        (Time(x, u), Time(y, v)) if u == v => x.cmp(y),
        _ => return None,
    })
}

/// The exact order of two decimals whatever their precisions and scales (`0.05` and
/// `0.050` are equal): both brought to the larger scale in 256 bits; `None` (maybe)
/// should that overflow.
fn decimal_order(a: &ScalarValue, b: &ScalarValue) -> Option<Ordering> {
    let ((x, _, s), (y, _, t)) = (a.as_decimal()?, b.as_decimal()?);
    let scale = s.max(t);
    Some(rescale(x, s, scale)?.cmp(&rescale(y, t, scale)?))
}

/// Casts that never decrease a value (`a ≤ b ⇒ cast(a) ≤ cast(b)`), so the bounds of
/// the input cast to bounds of the output.
fn non_decreasing(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    // (signed, bits) of an integer type.
    fn int(t: &DataType) -> Option<(bool, u32)> {
        Some(match t {
            Int8 => (true, 8),
            Int16 => (true, 16),
            Int32 => (true, 32),
            Int64 => (true, 64),
            UInt8 => (false, 8),
            UInt16 => (false, 16),
            UInt32 => (false, 32),
            UInt64 => (false, 64),
            _ => return None,
        })
    }
    // Exact casts into a decimal (the binder makes them only where values fit), and
    // decimals to floats (rounding to nearest keeps the order).
    let decimal = crate::types::is_decimal;
    if decimal(to) && (int(from).is_some() || decimal(from)) {
        return true;
    }
    if decimal(from) {
        return matches!(to, Float32 | Float64);
    }
    match (int(from), int(to)) {
        // Every value of `from` fits `to`.
        (Some((fs, fb)), Some((ts, tb))) => match (fs, ts) {
            (true, true) | (false, false) => tb >= fb,
            (false, true) => tb > fb,
            (true, false) => false,
        },
        (Some(_), None) => matches!(to, Float32 | Float64),
        (None, _) => {
            matches!(
                (from, to),
                (Float32, Float64) | (Date32, Timestamp(_, _)) | (Timestamp(_, _), Timestamp(_, _))
            ) || (crate::types::is_time(from) && crate::types::is_time(to))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Filter;
    use arrow::datatypes::{Field, Schema, TimeUnit};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("i", DataType::Int32, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Date32, true),
            Field::new("b", DataType::Boolean, true),
            Field::new("u", DataType::UInt8, true),
            Field::new("t", DataType::Timestamp(TimeUnit::Millisecond, None), true),
        ])
    }

    fn stats(col: usize) -> Option<ColumnStats> {
        use ScalarValue::*;
        let s = |min: ScalarValue, max: ScalarValue, nulls: u64| ColumnStats {
            min: Some(min),
            max: Some(max),
            null_count: Some(nulls),
        };
        Some(match col {
            0 => s(Int32(10), Int32(20), 0),
            1 => s(Float64(-1.5), Float64(2.5), 3),
            2 => s(Utf8("b".into()), Utf8("d".into()), 0),
            3 => s(Date32(8766), Date32(9130), 0), // 1994-01-01 … 1994-12-31
            4 => s(Boolean(false), Boolean(false), 0),
            5 => s(UInt8(200), UInt8(250), 0),
            6 => return None,
            _ => unreachable!(),
        })
    }

    fn may(sql: &str) -> bool {
        let f = Filter::new(&schema(), sql).unwrap();
        may_be_true(f.typed_expr(), 100, &stats)
    }

    #[test]
    fn comparisons_with_integers() {
        for (sql, expect) in [
            ("i < 10", false),
            ("i < 11", true),
            ("i <= 10", true),
            ("i > 20", false),
            ("i >= 20", true),
            ("i = 9", false),
            ("i = 15", true),
            ("i = 21", false),
            ("i <> 15", true),
            ("21 <= i", false),
            ("5 > i", false),
            ("20 < i", false),
            ("i BETWEEN 21 AND 30", false),
            ("i BETWEEN 0 AND 10", true),
            ("i NOT BETWEEN 0 AND 30", false),
            ("i NOT BETWEEN 12 AND 13", true),
            ("NOT (i < 10)", true),
            ("NOT (i >= 10)", false),
            // Widened to BIGINT by the binder, and to DOUBLE.
            ("i > 3000000000", false),
            ("i < 9.5", false),
            ("i < 10.5", true),
            ("u < 200", false),
            ("u > 300", false),
            ("u + 1 > 1000", true), // arithmetic: maybe
        ] {
            assert_eq!(may(sql), expect, "{sql}");
        }
    }

    #[test]
    fn boolean_logic() {
        assert!(!may("i < 10 AND s = 'c'"));
        assert!(may("i < 10 OR s = 'c'"));
        assert!(!may("i < 10 OR s = 'a'"));
        assert!(!may("NOT (i >= 10 OR s = 'c')"));
        assert!(may("NOT (i >= 15 AND s = 'c')"));
        assert!(!may("b"));
        assert!(may("NOT b"));
        assert!(!may("b IS TRUE AND i < 0"));
    }

    #[test]
    fn in_lists_and_nulls() {
        assert!(!may("i IN (1, 2, 30)"));
        assert!(may("i IN (1, 12)"));
        assert!(!may("i IN (1, NULL)"));
        assert!(may("i NOT IN (1, 2)"));
        assert!(!may("NOT (i NOT IN (1, 2))"));
        assert!(!may("i IS NULL"));
        assert!(may("i IS NOT NULL"));
        assert!(may("f IS NULL"));
        assert!(
            may("NOT (f IS NULL OR f IS NOT NULL)"),
            "not provable child by child"
        );
        assert!(!may("NOT (i IS NULL OR i IS NOT NULL)"));
    }

    #[test]
    fn floats_never_trust_the_maximum() {
        assert!(!may("f < -1.5"));
        assert!(may("f <= -1.5"));
        assert!(may("f > 100.0"), "NaN rows are > 100");
        assert!(may("f = 'NaN'::double"));
        assert!(!may("f = -2.0"));
        assert!(may("f = 100.0"), "maximum not trusted");
        assert!(may("f < 'NaN'::double"));
        assert!(!may("f < -1.5 OR f IN (-3.0, -2.0)"));
        // -0.0 = 0.0
        let zero = |_: usize| {
            Some(ColumnStats {
                min: Some(ScalarValue::Float64(0.0)),
                max: Some(ScalarValue::Float64(0.0)),
                null_count: Some(0),
            })
        };
        let f = Filter::new(&schema(), "f <= -0.0").unwrap();
        assert!(may_be_true(f.typed_expr(), 1, &zero));
        let f = Filter::new(&schema(), "f < -0.0").unwrap();
        assert!(!may_be_true(f.typed_expr(), 1, &zero));
    }

    #[test]
    fn strings_dates_and_unknowns() {
        assert!(!may("s < 'b'"));
        assert!(may("s <= 'b'"));
        assert!(!may("s > 'd'"));
        assert!(may("s > 'cz'"));
        assert!(!may("s = 'a'"));
        assert!(may("s LIKE 'a%'"), "LIKE: maybe");
        assert!(!may("d < DATE '1994-01-01'"));
        assert!(may("d < DATE '1994-01-02'"));
        assert!(!may("d >= DATE '1995-01-01'"));
        assert!(!may("d >= DATE '1994-01-01' + 365"));
        assert!(may("t > TIMESTAMP '2000-01-01 00:00:00'"), "no statistics");
        assert!(may("i / 0 > 1"));
    }

    #[test]
    fn all_null_columns_and_missing_bounds() {
        let all_null = |_: usize| {
            Some(ColumnStats {
                min: None,
                max: None,
                null_count: Some(100),
            })
        };
        let only_nulls = |sql: &str| {
            let f = Filter::new(&schema(), sql).unwrap();
            may_be_true(f.typed_expr(), 100, &all_null)
        };
        assert!(!only_nulls("i = 1"));
        assert!(!only_nulls("i IS NOT NULL"));
        assert!(only_nulls("i IS NULL"));
        assert!(!only_nulls("i IN (1, 2)"));
        assert!(only_nulls("i IS NULL OR i = 1"));
        let nothing = |_: usize| Some(ColumnStats::default());
        let f = Filter::new(&schema(), "i = 1 AND s < 'a'").unwrap();
        assert!(may_be_true(f.typed_expr(), 100, &nothing));
    }

    #[test]
    fn casts() {
        assert!(non_decreasing(&DataType::Int32, &DataType::Int64));
        assert!(non_decreasing(&DataType::UInt32, &DataType::Int64));
        assert!(!non_decreasing(&DataType::UInt32, &DataType::Int32));
        assert!(!non_decreasing(&DataType::Int32, &DataType::UInt64));
        assert!(!non_decreasing(&DataType::Int64, &DataType::Int32));
        assert!(non_decreasing(&DataType::Int64, &DataType::Float64));
        assert!(!non_decreasing(&DataType::Float64, &DataType::Int64));
        assert!(!non_decreasing(&DataType::Utf8, &DataType::Int64));
        // A narrowing cast is not pruned through.
        assert!(may("CAST(i AS TINYINT) > 100"));
    }

    #[test]
    fn decimals_compare_exactly_across_scales() {
        use arrow::datatypes::{Field, Schema};
        use ScalarValue::{Decimal128 as D, Decimal256 as W};
        let wide = |v: i128, p, s| W(arrow::datatypes::i256::from_i128(v), p, s);
        assert_eq!(order(&D(5, 15, 2), &D(50, 16, 3)), Some(Ordering::Equal));
        assert_eq!(order(&D(5, 15, 2), &D(51, 4, 3)), Some(Ordering::Less));
        assert_eq!(order(&D(-5, 15, 2), &D(-51, 4, 3)), Some(Ordering::Greater));
        assert_eq!(
            order(&D(12, 2, 0), &wide(1200, 40, 2)),
            Some(Ordering::Equal)
        );
        assert_eq!(
            order(&wide(1, 76, 0), &D(1, 38, 38)),
            Some(Ordering::Greater)
        );

        // A DECIMAL(15,2) column whose values lie in [0.05, 0.07].
        let schema = Schema::new(vec![Field::new("x", DataType::Decimal128(15, 2), true)]);
        let stats = |_: usize| {
            Some(ColumnStats {
                min: Some(D(5, 15, 2)),
                max: Some(D(7, 15, 2)),
                null_count: Some(0),
            })
        };
        for (sql, expect) in [
            ("x < 0.05", false),
            ("x <= 0.050", true),
            ("x < 0.0501", true),
            ("x > 0.07", false),
            ("x > 0.0699", true),
            ("x >= 0.0701", false),
            ("x = 0.06", true),
            ("x = 0.04", false),
            ("x BETWEEN 0.05 AND 0.07", true),
            ("x BETWEEN 0.08 AND 1", false),
            ("x > 1", false),
            ("x < 1", true),
            ("x < 0", false),
            ("x IN (0.01, 0.1)", false),
            ("x IN (0.01, 0.070)", true),
            ("x < 5e-2", false),
        ] {
            let f = Filter::new(&schema, sql).unwrap();
            assert_eq!(may_be_true(f.typed_expr(), 10, &stats), expect, "{sql}");
        }
    }
}
