//! Errors and their positions: sqlparser's spans and messages as [`ParseError`]s,
//! and the errors for unsupported constructs and too deep nesting.

use sqlparser::ast::{self, Spanned};
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{self, Token};

use super::{Cx, MAX_DEPTH};
use crate::error::ParseError;
use crate::expr::{Expr, Span};

/// Fails unless the whole input was consumed.
pub(super) fn expect_end(parser: &Parser<'_>) -> Result<(), ParseError> {
    let next = parser.peek_token_ref();
    if next.token == Token::EOF {
        Ok(())
    } else {
        Err(error(
            format!("Expected: end of expression, found: {}", next.token),
            span(next.span),
        ))
    }
}

/// A [`ParseError`] at `span`.
pub(super) fn error(message: impl Into<String>, span: Span) -> ParseError {
    ParseError {
        message: message.into(),
        span,
    }
}

/// Converts a sqlparser span (1-based, end one past the last character) to ours.
pub(super) fn span(s: tokenizer::Span) -> Span {
    if s.start.line == 0 || s.start.column == 0 {
        return Span::NONE;
    }
    let line = u32::try_from(s.start.line).unwrap_or(u32::MAX);
    let column = u32::try_from(s.start.column).unwrap_or(u32::MAX);
    let end_column = if s.end.line == s.start.line && s.end.column > s.start.column {
        u32::try_from(s.end.column).unwrap_or(u32::MAX)
    } else {
        column.saturating_add(1)
    };
    Span {
        line,
        column,
        end_column,
    }
}

/// An error of the parser, which stopped at its current token.
pub(super) fn parse_failure(e: ParserError, source: &str, parser: &Parser<'_>) -> ParseError {
    match e {
        // sqlparser gives no position: the token it was about to read is where
        // the nesting went too deep.
        ParserError::RecursionLimitExceeded => error(
            format!("the expression is nested too deeply (more than {MAX_DEPTH} levels)"),
            span(parser.peek_token_ref().span),
        ),
        e => from_parser_error(e, source),
    }
}

/// A sqlparser error as a [`ParseError`], with the position its message names.
pub(super) fn from_parser_error(e: ParserError, source: &str) -> ParseError {
    let text = match e {
        ParserError::TokenizerError(s) | ParserError::ParserError(s) => s,
        ParserError::RecursionLimitExceeded => {
            return error(
                format!("the expression is nested too deeply (more than {MAX_DEPTH} levels)"),
                Span::NONE,
            )
        }
    };
    let Some((message, location)) = text.rsplit_once(" at Line: ") else {
        // sqlparser gives no position for the end of the input.
        let at = if text.ends_with("found: EOF") {
            end_of(source)
        } else {
            Span::NONE
        };
        return error(text, at);
    };
    let mut numbers = location
        .split(", Column: ")
        .map(|n| n.trim().parse::<u32>().ok());
    let (Some(Some(line)), Some(Some(column)), None) =
        (numbers.next(), numbers.next(), numbers.next())
    else {
        return error(text, Span::NONE);
    };
    // "Expected: …, found: TOKEN" names the token; underline all of it.
    let width = match message.rsplit_once("found: ") {
        Some((_, token)) if token != "EOF" && !token.is_empty() => token.chars().count(),
        _ => 1,
    };
    let width = u32::try_from(width).unwrap_or(1);
    error(
        message,
        Span {
            line,
            column,
            end_column: column.saturating_add(width),
        },
    )
}

/// The position just past the end of `source`.
fn end_of(source: &str) -> Span {
    let line = source.split('\n').count();
    let column = source
        .rsplit('\n')
        .next()
        .map_or(0, |last| last.chars().count())
        + 1;
    match (u32::try_from(line), u32::try_from(column)) {
        (Ok(line), Ok(column)) => Span {
            line,
            column,
            end_column: column.saturating_add(1),
        },
        _ => Span::NONE,
    }
}

/// The span sqlparser computes for a node, or the union of the children's spans.
pub(super) fn node_span(e: &ast::Expr, cx: Cx, children: &[&Expr]) -> Span {
    let own = shallow_span(e, cx);
    if own.is_known() {
        own
    } else {
        children.iter().fold(Span::NONE, |s, c| s.union(c.span))
    }
}

/// The span sqlparser computes for a node, if that is safe.
pub(super) fn shallow_span(e: &ast::Expr, cx: Cx) -> Span {
    match e {
        ast::Expr::Identifier(ident) => span(ident.span),
        ast::Expr::Value(v) => span(v.span),
        _ if cx.shallow => span(e.span()),
        _ => Span::NONE,
    }
}

/// Shortens the SQL text of an unsupported node for an error message.
pub(super) fn describe(node: &impl std::fmt::Display) -> String {
    const MAX: usize = 60;
    let text = node.to_string();
    if text.chars().count() <= MAX {
        text
    } else {
        let mut short: String = text.chars().take(MAX).collect();
        short.push('…');
        short
    }
}

/// An unsupported construct, described by its SQL text where that is safe.
pub(super) fn unsupported(e: &ast::Expr, cx: Cx) -> ParseError {
    use ast::Expr as E;
    let what = match e {
        _ if cx.shallow => describe(e),
        E::Value(v) => describe(v),
        E::BinaryOp { op, .. } => format!("the {op} operator"),
        E::UnaryOp { op, .. } => format!("the {op} operator"),
        E::Subquery(_) => "subquery".into(),
        E::Exists { .. } => "EXISTS".into(),
        E::Array(_) => "array".into(),
        E::Interval(_) => "INTERVAL".into(),
        E::Tuple(_) => "row value".into(),
        _ => "(an expression too long to show)".into(),
    };
    error(
        format!("unsupported SQL construct: {what}"),
        shallow_span(e, cx),
    )
}

/// The error for a node past the nesting limit [`MAX_DEPTH`].
pub(super) fn too_deep(e: &ast::Expr, cx: Cx) -> ParseError {
    // The right operand of an operator chain (the chain's own span would cover all
    // of it); otherwise the node, where its span is safe to compute.
    let at = match e {
        ast::Expr::BinaryOp { right, .. } => shallow_span(right, cx),
        _ => shallow_span(e, cx),
    };
    error(
        format!("the expression is nested too deeply (more than {MAX_DEPTH} levels)"),
        at,
    )
}

#[cfg(test)]
mod tests {
    use super::super::parse_expr;
    use super::super::test_util::{err, message, p};
    use crate::expr::{lit, ExprKind};
    use crate::scalar::ScalarValue;

    #[test]
    fn unsupported_constructs() {
        assert_eq!(
            err("a + ? "),
            ("unsupported SQL construct: ?".into(), (5, 6))
        );
        assert_eq!(err("a + $1").0, "unsupported SQL construct: $1");
        assert_eq!(err("(SELECT 1)").0, "unsupported SQL construct: (SELECT 1)");
        assert_eq!(
            message("EXISTS (SELECT 1)"),
            "unsupported SQL construct: EXISTS (SELECT 1)"
        );
        assert_eq!(message("[1, 2]"), "unsupported SQL construct: [1, 2]");
        assert_eq!(message("a @> 'b'"), "unsupported SQL construct: a @> 'b'");
        assert!(
            message("a[1]").starts_with("list element access (x[i], x[a:b]) is not supported yet")
        );
        assert_eq!(message("(1, 2)"), "unsupported SQL construct: (1, 2)");
        assert_eq!(message("a @> b"), "unsupported SQL construct: a @> b");
        assert_eq!(message("a // b"), "unsupported SQL construct: a // b");
        // BLOB literals are supported; a bad one says what is wrong.
        assert_eq!(p("x''"), lit(ScalarValue::Binary(vec![])));
        assert_eq!(p("X'41fF'"), lit(ScalarValue::Binary(vec![0x41, 0xff])));
        assert_eq!(
            message("X'414'"),
            "a BLOB literal X'…' needs an even number of hexadecimal digits"
        );
        let long = format!(
            "({})",
            (0..40)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert!(message(&long).ends_with('…'));
    }

    #[test]
    fn sqlparser_errors_carry_positions() {
        assert_eq!(
            err("a +"),
            ("Expected: an expression, found: EOF".into(), (4, 5))
        );
        assert_eq!(
            err("a b"),
            ("Expected: end of expression, found: b".into(), (3, 4))
        );
        assert_eq!(
            err("a > 1;"),
            ("Expected: end of expression, found: ;".into(), (6, 7))
        );
        assert_eq!(err("x = 'abc").1 .0, 5);
        assert!(message("x = 'abc").starts_with("Unterminated string literal"));
        assert_eq!(err("x +\n  (y"), ("Expected: ), found: EOF".into(), (5, 6)));
        assert_eq!(parse_expr("x +\n  (y").unwrap_err().span.line, 2);
    }

    #[test]
    fn spans_point_at_the_source() {
        let e = p("\"My Col\" > 12");
        assert_eq!((e.span.line, e.span.column, e.span.end_column), (1, 1, 14));
        let ExprKind::Call { args, .. } = &e.kind else {
            panic!("{e:?}")
        };
        assert_eq!((args[0].span.column, args[0].span.end_column), (1, 9));
        assert_eq!((args[1].span.column, args[1].span.end_column), (12, 14));
        // sqlparser's span of a call ends with its last argument.
        let e = p("  abs(x)");
        assert_eq!((e.span.column, e.span.end_column), (3, 8));
    }
}
