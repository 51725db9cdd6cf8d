//! The optimizer: constant folding and boolean simplification on the typed tree.
//!
//! Folding evaluates constant subtrees with the interpreter, so it cannot disagree
//! with evaluation; a constant subtree whose evaluation fails (`1 / 0`) is left in
//! place, because it may sit in a branch no row takes.

use arrow_schema::DataType;

use crate::expr::Span;
use crate::interpret::evaluate_constant;
use crate::registry::NullBehavior;
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};

/// Simplifies `e` without changing its value on any row.
pub fn optimize(e: TypedExpr) -> TypedExpr {
    let e = simplify_children(e);
    let e = simplify(e);
    fold(e)
}

fn simplify_children(e: TypedExpr) -> TypedExpr {
    let TypedExpr {
        kind,
        data_type,
        span,
    } = e;
    let kind = match kind {
        TypedKind::Call { sig, args } => TypedKind::Call {
            sig,
            args: args.into_iter().map(optimize).collect(),
        },
        TypedKind::And(c) => TypedKind::And(c.into_iter().map(optimize).collect()),
        TypedKind::Or(c) => TypedKind::Or(c.into_iter().map(optimize).collect()),
        TypedKind::Coalesce(c) => TypedKind::Coalesce(c.into_iter().map(optimize).collect()),
        TypedKind::Not(x) => TypedKind::Not(Box::new(optimize(*x))),
        TypedKind::Cast(x) => TypedKind::Cast(Box::new(optimize(*x))),
        TypedKind::IsNull { expr, negated } => TypedKind::IsNull {
            expr: Box::new(optimize(*expr)),
            negated,
        },
        TypedKind::InList {
            expr,
            list,
            negated,
        } => TypedKind::InList {
            expr: Box::new(optimize(*expr)),
            list,
            negated,
        },
        TypedKind::Case {
            branches,
            else_expr,
        } => TypedKind::Case {
            branches: branches
                .into_iter()
                .map(|(c, v)| (optimize(c), optimize(v)))
                .collect(),
            else_expr: Box::new(optimize(*else_expr)),
        },
        leaf => leaf,
    };
    TypedExpr {
        kind,
        data_type,
        span,
    }
}

fn bool_literal(e: &TypedExpr) -> Option<Option<bool>> {
    match e.as_literal()? {
        ScalarValue::Boolean(b) => Some(Some(*b)),
        ScalarValue::Null(_) => Some(None),
        _ => None,
    }
}

fn simplify(e: TypedExpr) -> TypedExpr {
    let TypedExpr {
        kind,
        data_type,
        span,
    } = e;
    match kind {
        TypedKind::And(children) => logic(children, true, span),
        TypedKind::Or(children) => logic(children, false, span),
        TypedKind::Not(x) => match x.kind {
            TypedKind::Not(inner) => *inner,
            kind => TypedExpr::new(
                TypedKind::Not(Box::new(TypedExpr { kind, ..*x })),
                data_type,
                span,
            ),
        },
        TypedKind::Case {
            branches,
            else_expr,
        } => case(branches, *else_expr, data_type, span),
        kind => TypedExpr {
            kind,
            data_type,
            span,
        },
    }
}

/// `CASE`: branches whose condition is the literal FALSE or NULL are never taken; a
/// literal TRUE condition makes its value the ELSE and ends the list.
fn case(
    branches: Vec<(TypedExpr, TypedExpr)>,
    else_expr: TypedExpr,
    data_type: DataType,
    span: Span,
) -> TypedExpr {
    let mut kept = Vec::with_capacity(branches.len());
    let mut otherwise = else_expr;
    for (c, v) in branches {
        match bool_literal(&c) {
            Some(Some(true)) => {
                otherwise = v;
                break;
            }
            Some(_) => {}
            None => kept.push((c, v)),
        }
    }
    if kept.is_empty() {
        return otherwise;
    }
    TypedExpr::new(
        TypedKind::Case {
            branches: kept,
            else_expr: Box::new(otherwise),
        },
        data_type,
        span,
    )
}

/// `AND`/`OR`: flatten, drop neutral literals, stop at an absorbing one.
fn logic(children: Vec<TypedExpr>, is_and: bool, span: Span) -> TypedExpr {
    let mut out = Vec::with_capacity(children.len());
    for c in children {
        let nested = match c.kind {
            TypedKind::And(inner) if is_and => inner,
            TypedKind::Or(inner) if !is_and => inner,
            kind => vec![TypedExpr { kind, ..c }],
        };
        for c in nested {
            match bool_literal(&c) {
                Some(Some(b)) if b == is_and => {}
                Some(Some(_)) => return TypedExpr::literal(ScalarValue::Boolean(!is_and), span),
                _ => out.push(c),
            }
        }
    }
    match out.len() {
        0 => TypedExpr::literal(ScalarValue::Boolean(is_and), span),
        1 => out.pop().expect("one child"),
        _ => {
            let kind = if is_and {
                TypedKind::And(out)
            } else {
                TypedKind::Or(out)
            };
            TypedExpr::new(kind, DataType::Boolean, span)
        }
    }
}

fn fold(e: TypedExpr) -> TypedExpr {
    if e.as_literal().is_some() {
        return e;
    }
    // A strict function with a NULL argument is NULL, when no other argument can
    // raise an error (an error in a used value must still be raised).
    if let TypedKind::Call { sig, args } = &e.kind {
        let null_arg = args
            .iter()
            .any(|a| matches!(a.as_literal(), Some(v) if v.is_null()));
        if sig.nulls == NullBehavior::NullIfAnyNull
            && null_arg
            && !args.iter().any(|a| a.can_error())
        {
            return TypedExpr::literal(ScalarValue::Null(e.data_type.clone()), e.span);
        }
    }
    if e.is_constant() {
        if let Ok(v) = evaluate_constant(&e) {
            if v.data_type() == e.data_type {
                return TypedExpr::literal(v, e.span);
            }
        }
    }
    e
}
