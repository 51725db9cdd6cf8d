//! Operators' operand rules beyond a signature: the exact types of decimal operands
//! and their result, and integer comparisons with a literal outside the type's range.

use arrow_schema::DataType;

use super::{err, Binder, Result};
use crate::expr::Span;
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};
use crate::types::common_type;

impl Binder<'_> {
    /// Gives the operands of an operator that meets a decimal their exact types, and
    /// returns the result type, following DuckDB (docs/semantics.md, "Decimals"):
    ///
    /// - comparisons and `%`: both in the type they meet in (the larger scale and the
    ///   larger number of integral digits), which `%` returns;
    /// - `+`, `-`: both in `DECIMAL(p, s)` with `s` the larger scale and `p` the larger
    ///   number of integral digits + `s` + 1, capped at 38 (76 for wide operands);
    /// - `*`: each keeps its type; the result is `DECIMAL(p1 + p2, s1 + s2)`, capped,
    ///   and `DECIMAL(18, s1 + s2)` when both have at most 18 digits and `s1 + s2 < 18`
    ///   (DuckDB computes those in 64 bits with an overflow check);
    /// - `/`: both as `DOUBLE` (DuckDB; PostgreSQL divides in `NUMERIC`).
    ///
    /// An integer operand is `DECIMAL(w, 0)` with its type's width, an integer literal
    /// `DECIMAL(10,0)` when it fits an `INTEGER` (`a * 100` on `DECIMAL(15,2)` is
    /// `DECIMAL(18,2)`, `a + 1` `DECIMAL(16,2)`), as in DuckDB. With a float
    /// operand, or no decimal operand, nothing changes (`None`).
    pub(super) fn decimal_operands(
        &self,
        name: &str,
        args: &mut [TypedExpr],
        span: Span,
    ) -> Result<Option<DataType>> {
        use crate::types::{as_decimal, common_decimal, decimal_parts, decimal_type};
        let comparison = matches!(
            name,
            "equal"
                | "not_equal"
                | "less_than"
                | "less_than_or_equal_to"
                | "greater_than"
                | "greater_than_or_equal_to"
                | "is_distinct_from"
                | "is_not_distinct_from"
        );
        let arithmetic = matches!(name, "add" | "subtract" | "multiply" | "divide" | "modulo");
        if !(comparison || arithmetic)
            || args.len() != 2
            || !args.iter().any(|a| decimal_parts(&a.data_type).is_some())
        {
            return Ok(None);
        }
        // A NULL operand takes the other's type.
        if let Some(i) = args.iter().position(|a| a.data_type == DataType::Null) {
            let other = args[1 - i].data_type.clone();
            args[i] = self.coerce(args[i].clone(), &other)?;
            return Ok(None);
        }
        // Each operand as a decimal: an integer literal as DuckDB's integer literals,
        // `INTEGER` when it fits one (`DECIMAL(10,0)`), else `BIGINT`, `UBIGINT`.
        let parts = |a: &TypedExpr| -> Option<(u8, i8)> {
            match a.as_literal().and_then(ScalarValue::as_i128) {
                Some(v) if i32::try_from(v).is_ok() => as_decimal(&DataType::Int32),
                Some(v) if i64::try_from(v).is_ok() => as_decimal(&DataType::Int64),
                Some(_) => as_decimal(&DataType::UInt64),
                None => as_decimal(&a.data_type),
            }
        };
        let (Some(l), Some(r)) = (parts(&args[0]), parts(&args[1])) else {
            return Ok(None);
        };
        if name == "divide" {
            for a in args.iter_mut() {
                *a = self.coerce(a.clone(), &DataType::Float64)?;
            }
            return Ok(None);
        }
        let wide = l.0.max(r.0) > crate::types::DECIMAL128_MAX_PRECISION;
        let cap = if wide {
            crate::types::DECIMAL256_MAX_PRECISION
        } else {
            crate::types::DECIMAL128_MAX_PRECISION
        };
        let too_wide = || -> Result<Option<DataType>> {
            err(
                span,
                format!(
                    "the result of this decimal operation needs more than {cap} digits of scale"
                ),
            )
        };
        let target = match name {
            "add" | "subtract" => {
                let s = l.1.max(r.1);
                let integral = (l.0 as i32 - l.1 as i32).max(r.0 as i32 - r.1 as i32);
                let p = (integral + s as i32 + 1).min(cap as i32) as u8;
                match decimal_type(p.max(s as u8), s) {
                    Some(t) => t,
                    None => return too_wide(),
                }
            }
            "multiply" => {
                for (i, (p, s)) in [l, r].into_iter().enumerate() {
                    if let Some(t) = decimal_type(p, s) {
                        args[i] = self.coerce(args[i].clone(), &t)?;
                    }
                }
                // Both operands in one width class: the wider one's.
                if wide {
                    for a in args.iter_mut() {
                        if let Some((p, s)) = decimal_parts(&a.data_type) {
                            let t = DataType::Decimal256(p.max(39), s);
                            *a = self.coerce(a.clone(), &t)?;
                        }
                    }
                }
                let s = l.1 as i32 + r.1 as i32;
                let mut p = (l.0 as i32 + r.0 as i32).min(cap as i32);
                // DuckDB: two operands of at most 18 digits multiply in 64 bits with
                // an overflow check, so the result is DECIMAL(18, s) when s < 18.
                const INT64_DIGITS: i32 = 18;
                if p > INT64_DIGITS
                    && l.0 as i32 <= INT64_DIGITS
                    && r.0 as i32 <= INT64_DIGITS
                    && s < INT64_DIGITS
                {
                    p = INT64_DIGITS;
                }
                if s > p {
                    return too_wide();
                }
                let ret = decimal_type(p as u8, s as i8);
                return match ret {
                    Some(t) => Ok(Some(t)),
                    None => too_wide(),
                };
            }
            _ => {
                // Comparisons and %: where both meet; a literal that fits the other
                // operand's type exactly keeps it (`price = 5`).
                let refs: Vec<&TypedExpr> = args.iter().collect();
                let adopted = self.unify(&refs).filter(|t| decimal_parts(t).is_some());
                match adopted.or_else(|| common_decimal(l, r)) {
                    Some(t) => t,
                    None => return too_wide(),
                }
            }
        };
        for a in args.iter_mut() {
            *a = self.coerce(a.clone(), &target)?;
        }
        Ok((!comparison).then_some(target))
    }

    /// A comparison of an integer value with an integer literal outside its type's
    /// range (`bigint_col > 18446744073709551615`, `ubigint_col <> -1`) is decided for
    /// every non-NULL value, as in PostgreSQL and DuckDB (which compare in a wider
    /// type): `CASE WHEN x IS NULL THEN NULL ELSE <answer> END`, with `x` computed once.
    /// Casting the literal to `x`'s type instead would fail on every row.
    pub(super) fn out_of_range_comparison(
        &self,
        name: &str,
        args: &mut Vec<TypedExpr>,
        span: Span,
    ) -> Option<Result<TypedExpr>> {
        // (x < literal) for a literal above x's range, by operator.
        let below_answer = match name {
            "equal" => false,
            "not_equal" => true,
            "less_than" | "less_than_or_equal_to" => true,
            "greater_than" | "greater_than_or_equal_to" => false,
            _ => return None,
        };
        if args.len() != 2 {
            return None;
        }
        let range = |t: &DataType| -> Option<(i128, i128)> {
            Some(match t {
                DataType::Int8 => (i8::MIN as i128, i8::MAX as i128),
                DataType::Int16 => (i16::MIN as i128, i16::MAX as i128),
                DataType::Int32 => (i32::MIN as i128, i32::MAX as i128),
                DataType::Int64 => (i64::MIN as i128, i64::MAX as i128),
                DataType::UInt8 => (0, u8::MAX as i128),
                DataType::UInt16 => (0, u16::MAX as i128),
                DataType::UInt32 => (0, u32::MAX as i128),
                DataType::UInt64 => (0, u64::MAX as i128),
                _ => return None,
            })
        };
        // The literal's side, and whether it lies above the other operand's range. Where
        // both meet in a wider integer type that holds the literal (`int_col >
        // 3000000000` is a BIGINT comparison) the ordinary rules apply.
        let (literal_at, above) = (0..2).find_map(|i| {
            let v = args[i].as_literal()?.as_i128()?;
            let (min, max) = range(&args[1 - i].data_type)?;
            let common = common_type(&args[0].data_type, &args[1].data_type);
            if let Some((lo, hi)) = common.as_ref().and_then(range) {
                if (lo..=hi).contains(&v) {
                    return None;
                }
            }
            (v > max || v < min).then_some((i, v > max))
        })?;
        // The answer for `x OP literal`; mirrored when the literal is on the left, and
        // negated (except for = and <>) when the literal lies below the range.
        let mut answer = below_answer;
        if !above && !matches!(name, "equal" | "not_equal") {
            answer = !answer;
        }
        if literal_at == 0 && !matches!(name, "equal" | "not_equal") {
            answer = !answer;
        }
        let x = args.swap_remove(1 - literal_at);
        Some(self.share(x, |x| {
            let is_null = TypedExpr::new(
                TypedKind::IsNull {
                    expr: Box::new(x.clone()),
                    negated: false,
                },
                DataType::Boolean,
                span,
            );
            Ok(TypedExpr::new(
                TypedKind::Case {
                    branches: vec![(
                        is_null,
                        TypedExpr::literal(ScalarValue::Null(DataType::Boolean), span),
                    )],
                    else_expr: Box::new(TypedExpr::literal(ScalarValue::Boolean(answer), span)),
                },
                DataType::Boolean,
                span,
            ))
        }))
    }
}
