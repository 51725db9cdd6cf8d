//! The optimizer: constant folding and boolean simplification on the typed tree.
//!
//! Folding evaluates constant subtrees with the interpreter, so it cannot disagree
//! with evaluation; a constant subtree whose evaluation fails (`1 / 0`) is left in
//! place, because it may sit in a branch no row takes.
//!
//! Conditions that every branch of an `OR` shares are taken out of it (TPC-H Q19's
//! `(a AND m AND s) OR (b AND m AND s)` is `m AND s AND (a OR b)`), so that they are
//! evaluated once, and so that a Parquet scan sees them as conjuncts of the whole
//! predicate: it can prune row groups and decode pages by them.

use std::collections::HashMap;

use arrow_schema::DataType;

use crate::expr::Span;
use crate::functions::{FuncId, NullBehavior};
use crate::interpret::evaluate_constant;
use crate::scalar::ScalarValue;
use crate::typed::{TypedExpr, TypedKind};

/// Simplifies `e` without changing its value on any row.
#[recursive::recursive]
pub fn optimize(e: TypedExpr) -> TypedExpr {
    let e = simplify_children(e);
    let e = simplify(e);
    fold(e)
}

fn simplify_children(e: TypedExpr) -> TypedExpr {
    if let TypedKind::Let { id, value, body } = e.kind {
        let value = optimize(*value);
        // A constant shared value is a literal at each use, so it folds there.
        if value.as_literal().is_some() {
            return optimize(substitute(*body, id, &value));
        }
        return TypedExpr {
            kind: TypedKind::Let {
                id,
                value: Box::new(value),
                body: Box::new(optimize(*body)),
            },
            ..e
        };
    }
    map_children(e, &mut optimize)
}

/// `e` with `f` applied to each direct child.
fn map_children(e: TypedExpr, f: &mut impl FnMut(TypedExpr) -> TypedExpr) -> TypedExpr {
    let TypedExpr {
        kind,
        data_type,
        span,
    } = e;
    let mut boxed = |x: Box<TypedExpr>| Box::new(f(*x));
    let kind = match kind {
        TypedKind::Call { sig, args } => TypedKind::Call {
            sig,
            args: args.into_iter().map(&mut *f).collect(),
        },
        TypedKind::And(c) => TypedKind::And(c.into_iter().map(&mut *f).collect()),
        TypedKind::Or(c) => TypedKind::Or(c.into_iter().map(&mut *f).collect()),
        TypedKind::Coalesce(c) => TypedKind::Coalesce(c.into_iter().map(&mut *f).collect()),
        TypedKind::Not(x) => TypedKind::Not(boxed(x)),
        TypedKind::Cast(x) => TypedKind::Cast(boxed(x)),
        TypedKind::TryCast(x) => TypedKind::TryCast(boxed(x)),
        TypedKind::IsNull { expr, negated } => TypedKind::IsNull {
            expr: boxed(expr),
            negated,
        },
        TypedKind::InList {
            expr,
            list,
            negated,
        } => TypedKind::InList {
            expr: boxed(expr),
            list,
            negated,
        },
        TypedKind::Case {
            branches,
            else_expr,
        } => TypedKind::Case {
            branches: branches.into_iter().map(|(c, v)| (f(c), f(v))).collect(),
            else_expr: Box::new(f(*else_expr)),
        },
        TypedKind::Let { id, value, body } => TypedKind::Let {
            id,
            value: Box::new(f(*value)),
            body: Box::new(f(*body)),
        },
        leaf @ (TypedKind::Column(_) | TypedKind::Literal(_) | TypedKind::Ref(_)) => leaf,
    };
    TypedExpr {
        kind,
        data_type,
        span,
    }
}

/// `e` with every `Ref(id)` replaced by `value`.
fn substitute(e: TypedExpr, id: usize, value: &TypedExpr) -> TypedExpr {
    match e.kind {
        TypedKind::Ref(r) if r == id => TypedExpr {
            span: e.span,
            ..value.clone()
        },
        _ => map_children(e, &mut |c| substitute(c, id, value)),
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
    if let Some(factored) = common_factors(&out, is_and, span) {
        return factored;
    }
    if !is_and {
        out = equalities_to_in(out, span);
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

/// The operands of `e` as a child of the dual of `AND` (`is_and`) or `OR`: a
/// nested `OR` (`AND`)'s children, any other node alone.
fn dual_operands(e: &TypedExpr, is_and: bool) -> &[TypedExpr] {
    match &e.kind {
        TypedKind::Or(c) if is_and => c,
        TypedKind::And(c) if !is_and => c,
        _ => std::slice::from_ref(e),
    }
}

/// `(c AND x) OR (c AND y)` as `c AND (x OR y)`, and `(c OR x) AND (c OR y)` as
/// `c OR (x AND y)`, for every `c` all `children` share (compared as trees, in the
/// order of the child with the fewest operands); a child that is `c` alone absorbs
/// the rest (`c OR (c AND y)` is `c`). `None` when no operand is shared.
///
/// Both laws hold in SQL's three-valued logic, but not for errors: with `c` NULL,
/// `(c AND TRUE) OR (c AND 1/0 > 0)` raises the division's error where
/// `c AND (TRUE OR 1/0 > 0)` is NULL. So nothing that can raise an error is moved.
fn common_factors(children: &[TypedExpr], is_and: bool, span: Span) -> Option<TypedExpr> {
    if children.len() < 2 {
        return None;
    }
    // The candidates are the operands of the child with the fewest; a wide one is
    // not searched for (the search compares every candidate with every operand).
    let (k, fewest) = children
        .iter()
        .map(|c| dual_operands(c, is_and))
        .enumerate()
        .min_by_key(|(_, operands)| operands.len())?;
    if fewest.len() > FACTORED_OPERANDS_MAX {
        return None;
    }
    let mut remainders: Vec<Vec<&TypedExpr>> = children
        .iter()
        .map(|c| dual_operands(c, is_and).iter().collect())
        .collect();
    remainders[k].clear();
    let mut shared = Vec::new();
    for candidate in fewest {
        let positions: Option<Vec<(usize, usize)>> = remainders
            .iter()
            .enumerate()
            .filter(|(r, _)| *r != k)
            .map(|(r, operands)| Some((r, operands.iter().position(|x| *x == candidate)?)))
            .collect();
        match positions {
            Some(positions) => {
                for (r, at) in positions {
                    remainders[r].remove(at);
                }
                shared.push(candidate.clone());
            }
            None => remainders[k].push(candidate),
        }
    }
    // Checked last: it walks every child's whole tree, at every AND and OR.
    if shared.is_empty() || children.iter().any(TypedExpr::can_error) {
        return None;
    }
    // Absorption: one child was the shared operands alone.
    if remainders.iter().all(|r| !r.is_empty()) {
        let branches = remainders
            .into_iter()
            .map(|r| logic(r.into_iter().cloned().collect(), !is_and, span))
            .collect();
        shared.push(logic(branches, is_and, span));
    }
    Some(logic(shared, !is_and, span))
}

/// The most operands the branch with the fewest may have for shared ones to be
/// looked for ([`common_factors`]).
const FACTORED_OPERANDS_MAX: usize = 64;

/// The fewest equalities of one value with literals that an `OR` turns into an `IN`.
const OR_TO_IN_MIN: usize = 8;

/// What an equality compares with a literal, when it is a column (possibly cast) or a
/// shared value: the key `OR` children are grouped by.
#[derive(PartialEq, Eq, Hash)]
enum Probe {
    Column(usize, DataType),
    Ref(usize, DataType),
}

/// The probe and literal of `probe = literal` (either way round), if `e` is one.
fn equality(e: &TypedExpr) -> Option<(Probe, &TypedExpr, &ScalarValue)> {
    let TypedKind::Call { sig, args } = &e.kind else {
        return None;
    };
    if sig.func != FuncId::Equal {
        return None;
    }
    let (x, v) = match (&args[0], &args[1]) {
        (x, l) | (l, x) if l.as_literal().is_some() && x.as_literal().is_none() => {
            (x, l.as_literal()?)
        }
        _ => return None,
    };
    if v.data_type() != x.data_type && !v.is_null() {
        return None;
    }
    let key = match &x.kind {
        TypedKind::Column(i) => Probe::Column(*i, x.data_type.clone()),
        TypedKind::Cast(inner) => match inner.kind {
            TypedKind::Column(i) => Probe::Column(i, x.data_type.clone()),
            _ => return None,
        },
        TypedKind::Ref(id) => Probe::Ref(*id, x.data_type.clone()),
        _ => return None,
    };
    Some((key, x, v))
}

/// `OR` children: [`OR_TO_IN_MIN`] or more equalities of one column with literals
/// become one `IN` list (SQL defines `x IN (a, b)` as `x = a OR x = b`, NULLs and
/// errors included), which the JIT compiles to a lookup instead of a chain.
fn equalities_to_in(children: Vec<TypedExpr>, span: Span) -> Vec<TypedExpr> {
    let mut counts: HashMap<Probe, usize> = HashMap::new();
    for c in &children {
        if let Some((key, _, _)) = equality(c) {
            *counts.entry(key).or_default() += 1;
        }
    }
    if counts.values().all(|&n| n < OR_TO_IN_MIN) {
        return children;
    }
    // Where each grouped probe's IN goes (the position of its first equality).
    let mut lists: HashMap<Probe, (usize, TypedExpr, Vec<ScalarValue>)> = HashMap::new();
    let mut out: Vec<Option<TypedExpr>> = Vec::with_capacity(children.len());
    for c in children {
        let grouped = match equality(&c) {
            Some((key, x, v)) if counts[&key] >= OR_TO_IN_MIN => {
                let (x, v) = (x.clone(), v.clone());
                let at = out.len();
                lists
                    .entry(key)
                    .or_insert_with(|| (at, x, Vec::new()))
                    .2
                    .push(v);
                true
            }
            _ => false,
        };
        out.push(if grouped { None } else { Some(c) });
    }
    for (_, (at, x, list)) in lists {
        out[at] = Some(TypedExpr::new(
            TypedKind::InList {
                expr: Box::new(x),
                list,
                negated: false,
            },
            DataType::Boolean,
            span,
        ));
    }
    out.into_iter().flatten().collect()
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

#[cfg(test)]
mod tests {
    use arrow_schema::{Field, Schema};

    use super::*;
    use crate::bind::bind_predicate;
    use crate::sql::parse_expr;

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("q", DataType::Float64, true),
            Field::new("d", DataType::Float64, true),
            Field::new("i", DataType::Int64, true),
            Field::new("m", DataType::Utf8, true),
            Field::new("s", DataType::Utf8, true),
        ])
    }

    fn optimized(sql: &str) -> String {
        let schema = schema();
        let typed = bind_predicate(&parse_expr(sql).expect("parses"), &schema).expect("binds");
        let text = optimize(typed).display(&schema).to_string();
        text
    }

    #[test]
    fn conditions_every_or_branch_shares_are_taken_out() {
        // TPC-H Q19's shape: the mode and the instruction are in all three branches.
        assert_eq!(
            optimized(
                "(q BETWEEN 1 AND 11 AND m IN ('AIR', 'AIR REG') AND s = 'DELIVER') \
                 OR (q BETWEEN 10 AND 20 AND m IN ('AIR', 'AIR REG') AND s = 'DELIVER' \
                     AND d > 0.05) \
                 OR (s = 'DELIVER' AND q BETWEEN 20 AND 30 AND m IN ('AIR', 'AIR REG'))"
            ),
            optimized(
                "m IN ('AIR', 'AIR REG') AND s = 'DELIVER' AND ((q >= 1 AND q <= 11) \
                 OR (q >= 10 AND q <= 20 AND d > 0.05) OR (q >= 20 AND q <= 30))"
            ),
        );
    }

    #[test]
    fn operands_every_and_branch_shares_are_taken_out() {
        assert_eq!(
            optimized("(m = 'a' OR q > 1) AND (d < 2 OR m = 'a')"),
            optimized("m = 'a' OR (q > 1 AND d < 2)")
        );
    }

    #[test]
    fn a_branch_that_is_only_the_shared_conditions_absorbs_the_others() {
        assert_eq!(
            optimized("(m = 'a' AND q > 1) OR m = 'a'"),
            optimized("m = 'a'")
        );
        assert_eq!(
            optimized("(m = 'a' AND q > 1) OR (q > 1 AND m = 'a')"),
            optimized("m = 'a' AND q > 1")
        );
    }

    #[test]
    fn branches_without_shared_conditions_are_left_alone() {
        let sql = "(m = 'a' AND q > 1) OR (m = 'b' AND q > 1.5)";
        assert_eq!(optimized(sql), optimized(&format!("({sql})")));
        assert!(optimized(sql).contains(" OR "), "{}", optimized(sql));
    }

    #[test]
    fn what_remains_of_the_branches_can_become_an_in_list() {
        let branches: Vec<String> = (1..=8).map(|v| format!("(m = 'a' AND i = {v})")).collect();
        assert_eq!(
            optimized(&branches.join(" OR ")),
            optimized("m = 'a' AND i IN (1, 2, 3, 4, 5, 6, 7, 8)")
        );
    }

    #[test]
    fn branches_of_more_than_the_limit_are_not_searched() {
        let wide = |c: &str| {
            let terms: Vec<String> = (0..=FACTORED_OPERANDS_MAX)
                .map(|v| format!("{c} <> {v}"))
                .collect();
            format!("(m = 'a' AND {})", terms.join(" AND "))
        };
        let out = optimized(&format!("{} OR {}", wide("i"), wide("q")));
        assert_eq!(out.matches("'a'").count(), 2, "{out}");
    }

    #[test]
    fn nothing_that_can_fail_is_moved() {
        // With `m = 'a'` NULL, the first form raises the division's error (the first
        // branch is NULL, the second an error) where `m = 'a' AND (TRUE OR ..)` is
        // NULL: the law does not hold for errors, so the tree stays as it is.
        let sql = "(m = 'a' AND q > 1) OR (m = 'a' AND 10 / i > 1)";
        let out = optimized(sql);
        assert!(out.contains(" OR "), "{out}");
        assert_eq!(out.matches("'a'").count(), 2, "{out}");
    }
}
