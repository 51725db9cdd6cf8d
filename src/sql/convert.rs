//! The conversion of a sqlparser expression: one dispatch over its kinds, the
//! leaves, and the calls built from converted children.

use sqlparser::ast;

use super::calls::function;
use super::errors::{error, node_span, shallow_span, span, too_deep, unsupported};
use super::forms::{case_expr, cast, ceil_floor, extract, position, substring, trim};
use super::literals::{interval, literal, typed_string};
use super::operators::{binary, unary};
use super::predicates::{between, in_list, is_null, like, similar_to};
use super::tokens::symmetric_low;
use super::{Cx, MAX_DEPTH};
use crate::error::ParseError;
use crate::expr::{Expr, ExprKind};

/// Converts a sqlparser expression; `depth` counts the enclosing nodes.
///
/// This function only dispatches: the work is done in helpers so that the
/// frames of the recursion stay small (a debug build gives every temporary of a
/// function its own stack slot).
pub(super) fn convert(e: &ast::Expr, cx: Cx) -> Result<Expr, ParseError> {
    use ast::Expr as E;
    // The root is at depth 0: a node at depth MAX_DEPTH is on level MAX_DEPTH + 1.
    if cx.depth >= MAX_DEPTH {
        return Err(too_deep(e, cx));
    }
    let d = cx.deeper();
    match e {
        E::Nested(inner) => convert(inner, cx),
        E::UnaryOp { op, expr } => unary(e, op, expr, cx),
        E::BinaryOp { left, op, right } => binary(e, left, op, right, cx),
        E::IsNull(x) | E::IsUnknown(x) => is_null(x, false, d),
        E::IsNotNull(x) | E::IsNotUnknown(x) => is_null(x, true, d),
        E::IsTrue(x) => unary_call("is_true", x, d),
        E::IsNotTrue(x) => unary_call("is_not_true", x, d),
        E::IsFalse(x) => unary_call("is_false", x, d),
        E::IsNotFalse(x) => unary_call("is_not_false", x, d),
        E::IsDistinctFrom(a, b) => binary_call("is_distinct_from", a, b, d),
        E::IsNotDistinctFrom(a, b) => binary_call("is_not_distinct_from", a, b, d),
        E::Between {
            expr,
            negated,
            low,
            high,
        } => match symmetric_low(low) {
            Some(low) => between(expr, *negated, true, low, high, d),
            None => between(expr, *negated, false, low, high, d),
        },
        E::InList {
            expr,
            list,
            negated,
        } => in_list(e, expr, list, *negated, d),
        E::Like {
            negated,
            any,
            expr,
            pattern,
            escape_char,
        }
        | E::ILike {
            negated,
            any,
            expr,
            pattern,
            escape_char,
        } => {
            let name = if matches!(e, E::Like { .. }) {
                "like"
            } else {
                "ilike"
            };
            like(
                e,
                name,
                *negated,
                *any,
                expr,
                pattern,
                escape_char.as_deref(),
                d,
            )
        }
        E::Cast {
            kind,
            expr,
            data_type,
            format,
        } => cast(e, kind, expr, data_type, format.is_some(), d),
        E::SimilarTo {
            negated,
            expr,
            pattern,
            escape_char,
        } => similar_to(e, *negated, expr, pattern, escape_char.as_deref(), d),
        E::Extract { field, expr, .. } => extract(e, field, expr, d),
        E::Ceil { expr, field } => ceil_floor(e, "ceil", expr, field, d),
        E::Floor { expr, field } => ceil_floor(e, "floor", expr, field, d),
        E::Substring {
            expr,
            substring_from,
            substring_for,
            ..
        } => substring(
            e,
            expr,
            substring_from.as_deref(),
            substring_for.as_deref(),
            d,
        ),
        E::Trim {
            expr,
            trim_where,
            trim_what,
            trim_characters,
        } => trim(
            e,
            expr,
            trim_where.as_ref(),
            trim_what.as_deref(),
            trim_characters.as_deref(),
            d,
        ),
        E::Position { expr, r#in } => position(e, expr, r#in, d),
        E::Interval(iv) => interval(e, iv, d),
        E::Case {
            operand,
            conditions,
            else_result,
            ..
        } => case_expr(e, operand.as_deref(), conditions, else_result.as_deref(), d),
        E::Function(f) => function(e, f, d),
        _ => other(e, d),
    }
}

/// The leaves (columns, literals, typed strings) and the errors.
fn other(e: &ast::Expr, d: Cx) -> Result<Expr, ParseError> {
    use ast::Expr as E;
    let message = match e {
        E::Identifier(ident) => {
            return Ok(Expr::new(ExprKind::Column(ident.value.clone())).with_span(span(ident.span)))
        }
        E::Value(v) => return literal(v, false),
        E::TypedString(ts) => {
            let at = span(ts.value.span);
            let v = typed_string(&ts.data_type, &ts.value, at)?;
            return Ok(Expr::new(ExprKind::Literal(v)).with_span(at));
        }
        E::CompoundIdentifier(_) => "qualified column names are not supported",
        E::InSubquery { .. } => "IN (subquery) is not supported",
        E::InUnnest { .. } => "IN UNNEST is not supported",
        E::RLike { .. } => "RLIKE/REGEXP is not supported",
        _ => return Err(unsupported(e, d)),
    };
    Err(error(message, shallow_span(e, d)))
}

/// A call of a special form's operands (`CEIL`, `SUBSTRING`, `TRIM`, `LIKE … ESCAPE`),
/// spanning the whole node.
pub(super) fn special_call<'a>(
    e: &ast::Expr,
    name: &str,
    args: impl Iterator<Item = &'a ast::Expr>,
    d: Cx,
) -> Result<Expr, ParseError> {
    let args = args.map(|x| convert(x, d)).collect::<Result<Vec<_>, _>>()?;
    let at = node_span(e, d, &args.iter().collect::<Vec<_>>());
    Ok(Expr::call(name, args).with_span(at))
}

/// A call of one operand, spanning it (`x IS TRUE`).
fn unary_call(name: &str, x: &ast::Expr, d: Cx) -> Result<Expr, ParseError> {
    let x = convert(x, d)?;
    let at = x.span;
    Ok(Expr::call(name, vec![x]).with_span(at))
}

/// A call of two operands, spanning both (`a IS DISTINCT FROM b`, `a + b`).
pub(super) fn binary_call(
    name: &str,
    a: &ast::Expr,
    b: &ast::Expr,
    d: Cx,
) -> Result<Expr, ParseError> {
    let (a, b) = (convert(a, d)?, convert(b, d)?);
    let at = a.span.union(b.span);
    Ok(Expr::call(name, vec![a, b]).with_span(at))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{err, p};
    use crate::expr::{col, lit};

    #[test]
    fn columns_keep_their_spelling() {
        assert_eq!(p("x"), col("x"));
        assert_eq!(p("MyCol"), col("MyCol"));
        assert_eq!(p("\"My Col\" > 1"), col("My Col").gt(lit(1i64)));
        assert_eq!(p("\"select\""), col("select"));
        assert_eq!(p("\"a\"\"b\""), col("a\"b"));
        assert_eq!(p("`tick`"), col("tick"));
    }

    #[test]
    fn qualified_columns_are_rejected() {
        assert_eq!(
            err("t.a"),
            ("qualified column names are not supported".into(), (1, 4))
        );
        assert_eq!(err("1 + s.t.a").1, (5, 10));
    }
}
