//! Function calls: `name(args)`, lower-cased and unchecked, with `if(c, a, b)` as a
//! `CASE` and the call forms Broadhead rejects.

use sqlparser::ast::{
    self, DuplicateTreatment, FunctionArg, FunctionArgExpr, FunctionArgumentClause,
    FunctionArguments, ObjectNamePart, Spanned,
};

use super::errors::{describe, error, span, unsupported};
use super::tokens::SYMMETRIC_MARK;
use super::{convert, Cx};
use crate::error::ParseError;
use crate::expr::{Expr, ExprKind, Span};
use crate::scalar::ScalarValue;

/// A function call; `if(c, a, b)` is a `CASE`.
pub(super) fn function(e: &ast::Expr, f: &ast::Function, d: Cx) -> Result<Expr, ParseError> {
    let ident = match f.name.0.as_slice() {
        [ObjectNamePart::Identifier(ident)] => ident,
        _ => {
            let at = f
                .name
                .0
                .iter()
                .fold(Span::NONE, |s, part| s.union(span(part.span())));
            return Err(error("qualified function names are not supported", at));
        }
    };
    // Errors point at the name; the call's span is completed below.
    let mut at = span(ident.span);
    if ident.quote_style == Some(SYMMETRIC_MARK) {
        return Err(error("SYMMETRIC must follow BETWEEN", at));
    }
    let name = ident.value.to_lowercase();
    if f.filter.is_some() {
        return Err(error(
            format!("FILTER is not supported (in a call of {name})"),
            at,
        ));
    }
    if f.over.is_some() {
        return Err(error(
            format!("window functions (OVER) are not supported: {name}"),
            at,
        ));
    }
    if f.null_treatment.is_some() {
        return Err(error("IGNORE NULLS / RESPECT NULLS is not supported", at));
    }
    if !f.within_group.is_empty() {
        return Err(error("WITHIN GROUP is not supported", at));
    }
    if !matches!(f.parameters, FunctionArguments::None) || f.uses_odbc_syntax {
        return Err(unsupported(e, d));
    }
    let args = match &f.args {
        FunctionArguments::None => Vec::new(),
        FunctionArguments::Subquery(_) => {
            return Err(error(
                "a subquery as a function argument is not supported",
                at,
            ))
        }
        FunctionArguments::List(list) => {
            match list.duplicate_treatment {
                Some(DuplicateTreatment::Distinct) => {
                    return Err(error(
                        format!("DISTINCT in a call of {name} is not supported"),
                        at,
                    ))
                }
                Some(DuplicateTreatment::All) => {
                    return Err(error(
                        format!("ALL in a call of {name} is not supported"),
                        at,
                    ))
                }
                None => {}
            }
            if let Some(clause) = list.clauses.first() {
                let message = match clause {
                    FunctionArgumentClause::OrderBy(_) => {
                        format!("ORDER BY in a call of {name} is not supported")
                    }
                    other => format!("unsupported SQL construct: {}", describe(other)),
                };
                return Err(error(message, at));
            }
            let mut args = Vec::with_capacity(list.args.len());
            for arg in &list.args {
                match arg {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => args.push(convert(x, d)?),
                    FunctionArg::Unnamed(_) => {
                        return Err(error(
                            format!("{name}(*): `*` as a function argument is not supported"),
                            at,
                        ))
                    }
                    FunctionArg::Named { .. } | FunctionArg::ExprNamed { .. } => {
                        return Err(error("named function arguments are not supported", at))
                    }
                }
            }
            args
        }
    };
    at = args.iter().fold(at, |s, a| s.union(a.span));
    if name == "ceiling" && ident.quote_style.is_none() {
        return Ok(Expr::call("ceil", args).with_span(at));
    }
    // `struct_extract(s, 'f')` is `s.f`; other arguments are left for the binder
    // to reject.
    if name == "struct_extract" && ident.quote_style.is_none() && args.len() == 2 {
        if let ExprKind::Literal(ScalarValue::Utf8(field)) = &args[1].kind {
            let field = field.clone();
            let base = args.into_iter().next().expect("two arguments");
            return Ok(base.field(field).with_span(at));
        }
    }
    if name == "if" && ident.quote_style.is_none() {
        let n = args.len();
        let [condition, then, otherwise]: [Expr; 3] = args.try_into().map_err(|_| {
            error(
                format!("if takes 3 arguments (condition, then, else), not {n}"),
                at,
            )
        })?;
        return Ok(Expr::new(ExprKind::Case {
            operand: None,
            branches: vec![(condition, then)],
            else_expr: Some(Box::new(otherwise)),
        })
        .with_span(at));
    }
    Ok(Expr::call(name, args).with_span(at))
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{err, message, p};
    use crate::expr::{call, case, col, lit, null};

    #[test]
    fn function_calls() {
        assert_eq!(p("abs(x)"), call("abs", vec![col("x")]));
        assert_eq!(p("ABS(x)"), call("abs", vec![col("x")]));
        assert_eq!(p("\"Abs\"(x)"), call("abs", vec![col("x")]));
        assert_eq!(
            p("coalesce(a, b, 1)"),
            call("coalesce", vec![col("a"), col("b"), lit(1i64)])
        );
        assert_eq!(p("no_such_function()"), call("no_such_function", vec![]));
        assert_eq!(p("current_date"), call("current_date", vec![]));
        assert_eq!(p("ceil(x)"), call("ceil", vec![col("x")]));
        assert_eq!(p("FLOOR(x)"), call("floor", vec![col("x")]));
        assert_eq!(p("ceil(x, 2)"), call("ceil", vec![col("x"), lit(2i64)]));
    }

    #[test]
    fn current_date_and_time_are_calls_without_arguments() {
        for (text, name) in [
            ("CURRENT_DATE", "current_date"),
            ("current_date()", "current_date"),
            ("CURRENT_TIMESTAMP", "current_timestamp"),
            ("current_timestamp()", "current_timestamp"),
            ("now()", "now"),
            ("NOW()", "now"),
        ] {
            let e = call(name, vec![]);
            assert_eq!(p(text), e, "{text}");
            assert_eq!(e.to_string(), format!("{name}()"));
            assert_eq!(p(&e.to_string()), e);
        }
    }

    #[test]
    fn keyword_named_functions_print_bare_and_parse_back() {
        // Keywords that are function names print bare.
        for name in ["abs", "left", "lower", "year", "replace", "coalesce", "mod"] {
            let e = call(name, vec![col("a"), col("b")]);
            assert_eq!(e.to_string(), format!("{name}(a, b)"));
            assert_eq!(p(&e.to_string()), e, "{name}");
        }
        // Every registry name, at every arity, prints as text that parses back.
        for name in crate::functions::names() {
            for arity in 0..4 {
                let e = call(name, (0..arity).map(|i| col(format!("c{i}"))).collect());
                assert_eq!(p(&e.to_string()), e, "{e}");
            }
        }
        for (e, text) in [
            (call("ceil", vec![col("x")]), "ceil(x)"),
            (call("ceil", vec![col("x"), col("y")]), "ceil(x, y)"),
            (call("substr", vec![col("x"), lit(1i64)]), "substr(x, 1)"),
            (
                call("substring", vec![col("x"), lit(1i64)]),
                "\"substring\"(x, 1)",
            ),
            (call("trim", vec![col("x")]), "\"trim\"(x)"),
            (call("trim", vec![]), "\"trim\"()"),
            (call("case", vec![col("x")]), "case(x)"),
            (call("if", vec![col("x")]), "\"if\"(x)"),
            (call("current_date", vec![]), "current_date()"),
            (call("current_date", vec![col("x")]), "current_date(x)"),
            (call("position", vec![col("x")]), "position(x)"),
            (call("my func", vec![]), "\"my func\"()"),
        ] {
            assert_eq!(e.to_string(), text);
            assert_eq!(p(text), e, "{text}");
        }
    }

    #[test]
    fn if_is_a_case() {
        assert_eq!(
            p("if(x > 1, 'a', 'b')"),
            case(vec![(col("x").gt(lit(1i64)), lit("a"))], Some(lit("b")))
        );
        assert_eq!(
            p("IF(c, 1, NULL)"),
            case(vec![(col("c"), lit(1i64))], Some(null()))
        );
        assert_eq!(
            err("if(c, 1)"),
            (
                "if takes 3 arguments (condition, then, else), not 2".into(),
                (1, 8)
            )
        );
    }

    #[test]
    fn unsupported_function_forms() {
        assert_eq!(
            message("count(*)"),
            "count(*): `*` as a function argument is not supported"
        );
        assert_eq!(
            message("count(DISTINCT x)"),
            "DISTINCT in a call of count is not supported"
        );
        assert_eq!(
            message("sum(x) FILTER (WHERE x > 1)"),
            "FILTER is not supported (in a call of sum)"
        );
        assert_eq!(
            message("sum(x) OVER ()"),
            "window functions (OVER) are not supported: sum"
        );
        assert_eq!(
            message("array_agg(x ORDER BY y)"),
            "ORDER BY in a call of array_agg is not supported"
        );
        assert_eq!(
            message("f(a => 1)"),
            "named function arguments are not supported"
        );
        assert_eq!(
            message("s.f(x)"),
            "qualified function names are not supported"
        );
    }
}
