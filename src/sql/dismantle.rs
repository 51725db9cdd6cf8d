//! Dropping a sqlparser tree without recursion, for inputs too long for its
//! recursive `Drop`.

use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments, Value};

/// Drops a sqlparser tree without recursion (chains of infix operators make
/// trees as deep as they are long, and dropping recurses).
pub(super) fn dismantle(root: ast::Expr) {
    use ast::Expr as E;
    fn take(stack: &mut Vec<ast::Expr>, e: &mut ast::Expr) {
        stack.push(std::mem::replace(e, E::value(Value::Null)));
    }
    let mut stack = vec![root];
    while let Some(mut e) = stack.pop() {
        if let E::Like { escape_char, .. }
        | E::ILike { escape_char, .. }
        | E::SimilarTo { escape_char, .. } = &mut e
        {
            stack.extend(escape_char.take().map(|x| *x));
        }
        match &mut e {
            E::BinaryOp { left, right, .. }
            | E::IsDistinctFrom(left, right)
            | E::IsNotDistinctFrom(left, right)
            | E::AnyOp { left, right, .. }
            | E::AllOp { left, right, .. }
            | E::AtTimeZone {
                timestamp: left,
                time_zone: right,
            }
            | E::Like {
                expr: left,
                pattern: right,
                ..
            }
            | E::ILike {
                expr: left,
                pattern: right,
                ..
            }
            | E::SimilarTo {
                expr: left,
                pattern: right,
                ..
            }
            | E::RLike {
                expr: left,
                pattern: right,
                ..
            }
            | E::Position {
                expr: left,
                r#in: right,
            } => {
                take(&mut stack, left);
                take(&mut stack, right);
            }
            E::UnaryOp { expr: x, .. }
            | E::Nested(x)
            | E::IsNull(x)
            | E::IsNotNull(x)
            | E::IsTrue(x)
            | E::IsNotTrue(x)
            | E::IsFalse(x)
            | E::IsNotFalse(x)
            | E::IsUnknown(x)
            | E::IsNotUnknown(x)
            | E::Cast { expr: x, .. }
            | E::Collate { expr: x, .. }
            | E::InSubquery { expr: x, .. }
            | E::InUnnest { expr: x, .. }
            | E::JsonAccess { value: x, .. }
            | E::CompoundFieldAccess { root: x, .. }
            | E::Extract { expr: x, .. }
            | E::Ceil { expr: x, .. }
            | E::Floor { expr: x, .. } => take(&mut stack, x),
            E::Interval(iv) => take(&mut stack, &mut iv.value),
            E::Substring {
                expr: x,
                substring_from,
                substring_for,
                ..
            } => {
                take(&mut stack, x);
                stack.extend(substring_from.take().map(|x| *x));
                stack.extend(substring_for.take().map(|x| *x));
            }
            E::Trim {
                expr: x,
                trim_what,
                trim_characters,
                ..
            } => {
                take(&mut stack, x);
                stack.extend(trim_what.take().map(|x| *x));
                stack.extend(trim_characters.take().into_iter().flatten());
            }
            E::Between {
                expr: x, low, high, ..
            } => {
                take(&mut stack, x);
                take(&mut stack, low);
                take(&mut stack, high);
            }
            E::InList { expr: x, list, .. } => {
                take(&mut stack, x);
                stack.append(list);
            }
            E::Function(f) => {
                if let FunctionArguments::List(list) = &mut f.args {
                    for arg in list.args.drain(..) {
                        if let FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) = arg {
                            stack.push(x);
                        }
                    }
                }
            }
            E::Case {
                operand,
                conditions,
                else_result,
                ..
            } => {
                stack.extend(operand.take().map(|x| *x));
                stack.extend(else_result.take().map(|x| *x));
                for w in conditions.drain(..) {
                    stack.push(w.condition);
                    stack.push(w.result);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::message;
    use super::super::{parse_expr, parse_select_list};

    #[test]
    fn huge_inputs_do_not_overflow_the_stack() {
        let chain = |n: usize, op: &str| vec!["x"; n].join(op);
        for n in [900, 5_000, 60_000] {
            let concat = chain(n, " @> ");
            assert!(
                message(&concat).starts_with("unsupported SQL construct: "),
                "{n}"
            );
            assert_eq!(message(&format!("abs({concat})")), message(&concat), "{n}");
            let sum = chain(n, " + ");
            assert!(message(&sum).starts_with("the expression is nested too deeply"));
            assert!(message(&format!("abs(1, {sum})")).starts_with("the expression is nested"));
            // Chains regrouped by PostgreSQL's precedences are built without recursion.
            for op in [" || ", " ^ ", " + x ^ "] {
                let regrouped = chain(n, op);
                assert!(message(&regrouped).starts_with("the expression is nested too deeply"));
            }
            assert!(parse_expr(&chain(n, " AND ")).is_ok());
            assert!(parse_expr(&chain(n, " OR ")).is_ok());
            let casts = format!("x{}", "::INTEGER".repeat(n));
            assert!(message(&casts).starts_with("the expression is nested too deeply"));
            let tests = format!("x{}", " IS NULL".repeat(n));
            assert!(message(&tests).starts_with("the expression is nested too deeply"));
            let lists = format!("x{}", " IN (1)".repeat(n));
            assert!(message(&lists).starts_with("the expression is nested too deeply"));
            // Special forms holding a long chain are taken apart without recursion too.
            for form in [
                format!("EXTRACT(year FROM {sum})"),
                format!("CEIL({sum})"),
                format!("FLOOR({sum})"),
                format!("POSITION({sum} IN s)"),
                format!("POSITION(s IN {sum})"),
                format!("SUBSTRING(s FROM 1 FOR {sum})"),
                format!("TRIM(BOTH {sum} FROM s)"),
                format!("TRIM({sum})"),
                format!("s LIKE 'a' ESCAPE {sum}"),
                format!("s SIMILAR TO 'a' ESCAPE {sum}"),
                format!("TRY_CAST({sum} AS INTEGER)"),
            ] {
                assert!(message(&form).starts_with("the expression is nested too deeply"));
            }
            let items = [concat.as_str(); 2].join(", ");
            assert!(parse_select_list(&items).is_err());
        }
        // A supported operator nested past the limit is refused, not a stack overflow.
        assert!(message(&chain(60_000, " -> ")).starts_with("the expression is nested too deeply"));
        assert_eq!(
            message(&chain(5_000, " @> ")),
            "unsupported SQL construct: the @> operator"
        );
    }
}
