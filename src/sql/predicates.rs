//! The tests with their own syntax: `IS [NOT] NULL/TRUE/…`, `BETWEEN`, `IN (…)`,
//! `LIKE`/`ILIKE` and `SIMILAR TO`.

use sqlparser::ast;

use super::errors::{error, node_span, shallow_span, unsupported};
use super::{binary_call, convert, special_call, Cx};
use crate::error::ParseError;
use crate::expr::{Expr, ExprKind};

/// `x IS [NOT] NULL` (and `IS [NOT] UNKNOWN`).
pub(super) fn is_null(x: &ast::Expr, negated: bool, d: Cx) -> Result<Expr, ParseError> {
    let x = convert(x, d)?;
    Ok(if negated {
        x.is_not_null()
    } else {
        x.is_null()
    })
}

/// `x [NOT] BETWEEN [SYMMETRIC] low AND high`. The symmetric form is PostgreSQL's
/// `(x BETWEEN low AND high) OR (x BETWEEN high AND low)`, so a NULL bound gives NULL
/// (not what `least`/`greatest`, which skip NULLs, would give).
pub(super) fn between(
    x: &ast::Expr,
    negated: bool,
    symmetric: bool,
    low: &ast::Expr,
    high: &ast::Expr,
    d: Cx,
) -> Result<Expr, ParseError> {
    let (x, low, high) = (convert(x, d)?, convert(low, d)?, convert(high, d)?);
    Ok(match (symmetric, negated) {
        (true, _) => x.between_symmetric(low, high, negated),
        (false, true) => x.not_between(low, high),
        (false, false) => x.between(low, high),
    })
}

/// `x [NOT] IN (a, b, …)`.
pub(super) fn in_list(
    e: &ast::Expr,
    x: &ast::Expr,
    list: &[ast::Expr],
    negated: bool,
    d: Cx,
) -> Result<Expr, ParseError> {
    let x = convert(x, d)?;
    if list.is_empty() {
        return Err(error(
            "an IN list needs at least one value",
            shallow_span(e, d),
        ));
    }
    let list = list
        .iter()
        .map(|item| convert(item, d))
        .collect::<Result<Vec<_>, _>>()?;
    let at = node_span(e, d, &[&x]);
    Ok(Expr::new(ExprKind::InList {
        expr: Box::new(x),
        list,
        negated,
    })
    .with_span(at))
}

/// `x [NOT] LIKE|ILIKE p [ESCAPE e]`: `like(x, p[, e])` or `ilike(…)`.
#[allow(clippy::too_many_arguments)]
pub(super) fn like(
    e: &ast::Expr,
    name: &str,
    negated: bool,
    any: bool,
    x: &ast::Expr,
    pattern: &ast::Expr,
    escape: Option<&ast::Expr>,
    d: Cx,
) -> Result<Expr, ParseError> {
    if any {
        return Err(unsupported(e, d));
    }
    let call = match escape {
        None => binary_call(name, x, pattern, d)?,
        Some(escape) => special_call(e, name, [x, pattern, escape].into_iter(), d)?,
    };
    Ok(if negated { call.not() } else { call })
}

/// `s [NOT] SIMILAR TO p [ESCAPE e]`: `similar_to(s, p[, e])`.
pub(super) fn similar_to(
    e: &ast::Expr,
    negated: bool,
    x: &ast::Expr,
    pattern: &ast::Expr,
    escape: Option<&ast::Expr>,
    d: Cx,
) -> Result<Expr, ParseError> {
    let args = [Some(x), Some(pattern), escape];
    let call = special_call(e, "similar_to", args.into_iter().flatten(), d)?;
    Ok(if negated { call.not() } else { call })
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{err, message, p};
    use crate::expr::{and, call, col, lit, or, ExprKind};

    #[test]
    fn is_tests() {
        let x = col("x");
        assert_eq!(p("x IS NULL"), x.clone().is_null());
        assert_eq!(p("x IS NOT NULL"), x.clone().is_not_null());
        assert_eq!(p("x IS UNKNOWN"), x.clone().is_null());
        assert_eq!(p("x IS NOT UNKNOWN"), x.clone().is_not_null());
        assert_eq!(p("x IS TRUE"), call("is_true", vec![x.clone()]));
        assert_eq!(p("x IS NOT TRUE"), call("is_not_true", vec![x.clone()]));
        assert_eq!(p("x IS FALSE"), call("is_false", vec![x.clone()]));
        assert_eq!(p("x IS NOT FALSE"), call("is_not_false", vec![x.clone()]));
        assert_eq!(
            p("x IS DISTINCT FROM y"),
            x.clone().is_distinct_from(col("y"))
        );
        assert_eq!(
            p("x IS NOT DISTINCT FROM y"),
            x.is_not_distinct_from(col("y"))
        );
    }

    #[test]
    fn between_of_a_computed_value_is_a_node() {
        let x = col("x").add(lit(1i64));
        let e = p("x + 1 BETWEEN 1 AND 2");
        assert_eq!(e, x.clone().between(lit(1i64), lit(2i64)));
        assert!(matches!(e.kind, ExprKind::Between { negated: false, .. }));
        assert_eq!(e.to_string(), "((x + 1) BETWEEN 1 AND 2)");
        let n = p("x + 1 NOT BETWEEN 1 AND 2");
        assert_eq!(n, x.not_between(lit(1i64), lit(2i64)));
        assert_eq!(n.to_string(), "((x + 1) NOT BETWEEN 1 AND 2)");
        // Nested, the operand is written once per level: linear, not exponential.
        let mut text = "x".to_string();
        for _ in 0..40 {
            text = format!("({text} BETWEEN 1 AND 2)");
        }
        let e = p(&text);
        // The innermost is two comparisons (7 nodes, 3 levels), each level above adds 3 nodes.
        assert_eq!(e.size(), (7 + 3 * 39, 3 + 39));
        assert_eq!(p(&e.to_string()), e);
    }

    #[test]
    fn between_is_lowered() {
        let x = col("x");
        assert_eq!(
            p("x BETWEEN 1 AND 2"),
            and(vec![x.clone().gt_eq(lit(1i64)), x.clone().lt_eq(lit(2i64))])
        );
        assert_eq!(
            p("x BETWEEN 1 AND 2"),
            x.clone().between(lit(1i64), lit(2i64))
        );
        assert_eq!(
            p("x NOT BETWEEN 1 AND 2"),
            or(vec![x.clone().lt(lit(1i64)), x.clone().gt(lit(2i64))])
        );
        assert_eq!(
            p("a AND x BETWEEN 1 AND 2"),
            and(vec![
                col("a"),
                x.clone().gt_eq(lit(1i64)),
                x.lt_eq(lit(2i64))
            ])
        );
    }

    #[test]
    fn in_lists() {
        let list = vec![lit(1i64), lit(2i64)];
        assert_eq!(p("x IN (1, 2)"), col("x").in_list(list.clone()));
        assert_eq!(p("x NOT IN (1, 2)"), col("x").not_in_list(list));
        assert_eq!(err("x IN (SELECT 1)").0, "IN (subquery) is not supported");
        assert_eq!(message("x IN UNNEST(y)"), "IN UNNEST is not supported");
    }

    #[test]
    fn like_and_friends() {
        let (x, pat) = (col("x"), lit("a%"));
        assert_eq!(p("x LIKE 'a%'"), x.clone().like(pat.clone()));
        assert_eq!(p("x ILIKE 'a%'"), x.clone().ilike(pat.clone()));
        assert_eq!(p("x NOT LIKE 'a%'"), x.clone().like(pat.clone()).not());
        assert_eq!(p("x NOT ILIKE 'a%'"), x.ilike(pat).not());
        assert_eq!(message("x RLIKE 'a'"), "RLIKE/REGEXP is not supported");
        assert_eq!(message("x REGEXP 'a'"), "RLIKE/REGEXP is not supported");
        assert_eq!(
            message("x LIKE ANY ('a', 'b')"),
            "unsupported SQL construct: x LIKE ANY ('a', 'b')"
        );
    }

    #[test]
    fn similar_to_and_like_escape() {
        let (s, pat, bang) = (col("s"), lit("a!%"), lit("!"));
        let similar = call("similar_to", vec![s.clone(), pat.clone()]);
        assert_eq!(p("s SIMILAR TO 'a!%'"), similar);
        assert_eq!(p("s NOT SIMILAR TO 'a!%'"), similar.not());
        let escaped = call("similar_to", vec![s.clone(), pat.clone(), bang.clone()]);
        assert_eq!(p("s SIMILAR TO 'a!%' ESCAPE '!'"), escaped);
        let like = call("like", vec![s.clone(), pat.clone(), bang.clone()]);
        assert_eq!(p("s LIKE 'a!%' ESCAPE '!'"), like);
        assert_eq!(p("s NOT LIKE 'a!%' ESCAPE '!'"), like.clone().not());
        let ilike = call("ilike", vec![s, pat, bang]);
        assert_eq!(p("s ILIKE 'a!%' ESCAPE '!'"), ilike);
        assert_eq!(like.to_string(), "(s LIKE 'a!%' ESCAPE '!')");
        assert_eq!(ilike.to_string(), "(s ILIKE 'a!%' ESCAPE '!')");
        for e in [like.not(), ilike, escaped] {
            assert_eq!(p(&e.to_string()), e);
        }
    }
}
