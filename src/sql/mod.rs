//! SQL text to [`crate::expr::Expr`], with sqlparser.
//!
//! [`parse_expr`] reads one scalar expression and [`parse_select_list`] a
//! comma-separated list of expressions with optional aliases. Both produce trees
//! in canonical form (see [`crate::expr`]): operators become calls with Gandiva's
//! names, parentheses vanish, `AND`/`OR` are flattened, `BETWEEN` on a column or
//! literal is lowered to two comparisons (on a computed value it stays a node, so
//! the value is not copied), and `CAST(NULL AS t)` is a typed `NULL` literal. Trees
//! larger than [`expr::MAX_NODES`] nodes are an error. Function
//! names are lower-cased but not checked: the binder does that.
//!
//! SQL's special forms are plain calls too (docs/semantics.md lists them): `a || b`
//! is `concat_op(a, b)`, `a ^ b` is `power(a, b)`, `a # b` is `bitwise_xor(a, b)`,
//! `s ~* p` is `regexp_like(s, p, 'i')`, `s SIMILAR TO p` is `similar_to(s, p)`,
//! `s LIKE p ESCAPE e` is `like(s, p, e)`, `EXTRACT(YEAR FROM d)` is
//! `date_part('year', d)`, `SUBSTRING(s FROM i FOR n)` is `substr(s, i, n)`,
//! `TRIM(LEADING c FROM s)` is `ltrim(s, c)`, `POSITION(x IN s)` is `strpos(s, x)`,
//! `CURRENT_DATE` is `current_date()`. Chains of arithmetic, string and bitwise
//! operators are grouped by PostgreSQL's precedences, which differ from
//! sqlparser's for `^` and `||`. `INTERVAL '…'` is a literal
//! ([`ScalarValue::IntervalMonthDayNano`](crate::scalar::ScalarValue::IntervalMonthDayNano))
//! and `TRY_CAST` an [`ExprKind::TryCast`](crate::expr::ExprKind::TryCast) node.
//!
//! Whatever sqlparser accepts but Broadhead does not support (subqueries,
//! arrays, `INTERVAL … TO …`, window functions, …) is a [`ParseError`] pointing at the
//! construct; no input makes the parser panic.
//!
//! Here are the entry points and `convert`, which dispatches over sqlparser's
//! node kinds to the files of one concept each: `operators`, `literals`,
//! `predicates` (`IS`, `BETWEEN`, `IN`, `LIKE`), `forms` (`CAST`, `CASE`, `EXTRACT`,
//! `SUBSTRING`, …) and `calls`; they call back into `convert` for their operands.
//! `tokens` rewrites the tokens before sqlparser reads them, `errors` turns
//! sqlparser's errors and spans into ours, and `dismantle` drops deep trees
//! without recursion.

mod calls;
mod dismantle;
mod errors;
mod fields;
mod forms;
mod literals;
mod operators;
mod predicates;
pub(crate) mod print;
#[cfg(test)]
mod test_util;
mod tokens;

use sqlparser::ast::{self, SelectItem, Spanned};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::{Token, Tokenizer};

use crate::error::ParseError;
use crate::expr::{self, Expr, ExprKind, Span};

use calls::function;
use dismantle::dismantle;
use errors::{
    error, expect_end, from_parser_error, node_span, parse_failure, shallow_span, span, too_deep,
    unsupported,
};
use fields::{compound_identifier, field_access};
use forms::{case_expr, cast, ceil_floor, extract, position, substring, trim};
use literals::{interval, literal, typed_string};
use operators::{binary, unary};
use predicates::{between, in_list, is_null, like, similar_to};
pub use tokens::rewrite_tokens;
use tokens::symmetric_low;

/// How deep the converted tree may nest: at most this many levels, a leaf
/// counting as one (`NOT NOT x` has three).
///
/// sqlparser limits the nesting of parentheses and prefix operators, but a chain
/// of left-associative operators (`a + b + c + …`) is parsed without recursion and
/// can be arbitrarily deep; converting it, printing it and compiling it recurse.
/// Chains of `AND`/`OR` are flattened and do not count.
const MAX_DEPTH: usize = expr::MAX_DEPTH;

/// The most tokens an input may have for sqlparser's recursive helpers (spans,
/// `Display`, `Drop`) to be safe on its tree.
///
/// A tree is never deeper than the input has tokens. Above this, errors describe
/// unsupported constructs without those helpers, and the tree is taken apart
/// iteratively instead of dropped.
const SHALLOW_TOKENS: usize = 1000;

/// How deep sqlparser may recurse (its default is 50, which made the documented
/// limit of [`MAX_DEPTH`] unreachable for `NOT`, `CASE` and parentheses).
///
/// sqlparser spends one or two levels per level of the converted tree (`NOT (x)`
/// costs two), so this leaves [`MAX_DEPTH`] the limit that applies; beyond it only
/// redundant parentheses are deeper, and the error points at the token where
/// sqlparser stopped. sqlparser's recursive functions grow the stack on demand
/// (its `recursive-protection` feature), so this depth is safe.
const PARSER_RECURSION_LIMIT: usize = 4 * MAX_DEPTH + 8;

/// What the conversion of a node needs to know about where it is.
#[derive(Debug, Clone, Copy)]
struct Cx {
    /// The number of enclosing nodes.
    depth: usize,
    /// Whether sqlparser's recursive helpers are safe on any node of the input.
    shallow: bool,
}

impl Cx {
    /// The context of a child node.
    fn deeper(self) -> Cx {
        Cx {
            depth: self.depth + 1,
            ..self
        }
    }
}

/// Parses one SQL scalar expression into an [`Expr`].
///
/// ```
/// use broadhead::{col, lit, sql::parse_expr, ScalarValue};
///
/// let e = parse_expr("l_quantity < 24 AND l_discount BETWEEN 0.05 AND 0.07").unwrap();
/// // `0.05` is DECIMAL(3,2), as in DuckDB (the binder makes it the DOUBLE 0.05 when
/// // it meets a DOUBLE column).
/// let (lo, hi) = (ScalarValue::Decimal128(5, 3, 2), ScalarValue::Decimal128(7, 3, 2));
/// assert_eq!(
///     e,
///     col("l_quantity")
///         .lt(lit(24i64))
///         .and(col("l_discount").gt_eq(lit(lo)))
///         .and(col("l_discount").lt_eq(lit(hi)))
/// );
/// ```
pub fn parse_expr(text: &str) -> Result<Expr, ParseError> {
    let dialect = GenericDialect {};
    let (mut parser, cx) = start(&dialect, text, "empty expression")?;
    let ast = parser
        .parse_expr()
        .map_err(|e| parse_failure(e, text, &parser))?;
    let result = expect_end(&parser)
        .and_then(|()| convert(&ast, cx))
        .and_then(checked_size);
    if !cx.shallow {
        dismantle(ast);
    }
    result
}

/// The tree, if it is within the size limits of [`Expr::check_size`].
fn checked_size(e: Expr) -> Result<Expr, ParseError> {
    match e.check_size() {
        Ok(()) => Ok(e),
        Err(message) => Err(error(message, e.span)),
    }
}

/// Parses a comma-separated select list `a, b * 2 AS x, abs(c)` into (expr, optional alias) pairs.
///
/// An alias may be written with or without `AS`; it is kept as written (quoted
/// or not, without case folding). A wildcard `*` is an error: every item must be
/// an expression.
///
/// ```
/// use broadhead::{col, lit, sql::parse_select_list};
///
/// let items = parse_select_list("a, b * 2 AS x").unwrap();
/// assert_eq!(items, vec![(col("a"), None), (col("b").mul(lit(2i64)), Some("x".to_string()))]);
/// ```
pub fn parse_select_list(text: &str) -> Result<Vec<(Expr, Option<String>)>, ParseError> {
    let dialect = GenericDialect {};
    let (mut parser, cx) = start(&dialect, text, "empty select list")?;
    let items = parser
        .parse_comma_separated(Parser::parse_select_item)
        .map_err(|e| parse_failure(e, text, &parser))?;
    let result = expect_end(&parser).and_then(|()| select_items(&items, cx));
    if !cx.shallow {
        for item in items {
            if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
                dismantle(e);
            }
        }
    }
    result
}

/// Converts one expression of a statement that the caller parsed with sqlparser (the
/// `broadhead sql` command parses whole `SELECT` statements) into an [`Expr`], as
/// [`parse_expr`] would; spans point into `source`, the statement's text.
pub fn expr_from_ast(e: &ast::Expr, source: &str) -> Result<Expr, ParseError> {
    let tokens = Tokenizer::new(&GenericDialect {}, source)
        .tokenize()
        .map_or(usize::MAX, |t| {
            t.iter()
                .filter(|t| !matches!(t, Token::Whitespace(_)))
                .count()
        });
    let cx = Cx {
        depth: 0,
        shallow: tokens <= SHALLOW_TOKENS,
    };
    convert(e, cx)
}

/// A sqlparser error about `source` as a [`ParseError`] with the position it names
/// (for callers that parse whole statements, as `broadhead sql` does).
pub fn parse_error_from(e: ParserError, source: &str) -> ParseError {
    from_parser_error(e, source)
}

fn select_items(items: &[SelectItem], cx: Cx) -> Result<Vec<(Expr, Option<String>)>, ParseError> {
    items
        .iter()
        .map(|item| match item {
            SelectItem::UnnamedExpr(e) => Ok((checked_size(convert(e, cx)?)?, None)),
            SelectItem::ExprWithAlias { expr, alias } => {
                Ok((checked_size(convert(expr, cx)?)?, Some(alias.value.clone())))
            }
            SelectItem::ExprWithAliases { aliases, .. } => Err(error(
                "a select list item can have only one alias",
                aliases
                    .iter()
                    .fold(Span::NONE, |s, a| s.union(span(a.span))),
            )),
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => Err(error(
                "a select list item must be an expression",
                span(item.span()),
            )),
        })
        .collect()
}

/// A parser over the tokens of `text` and the context of the root node, or an
/// error if there are no tokens.
fn start<'a>(
    dialect: &'a GenericDialect,
    text: &str,
    empty_message: &str,
) -> Result<(Parser<'a>, Cx), ParseError> {
    let tokens = Tokenizer::new(dialect, text)
        .with_unescape(true)
        .tokenize_with_location()
        .map_err(|e| from_parser_error(e.into(), text))?;
    let count = tokens
        .iter()
        .filter(|t| !matches!(t.token, Token::Whitespace(_)))
        .count();
    let cx = Cx {
        depth: 0,
        shallow: count <= SHALLOW_TOKENS,
    };
    let tokens = rewrite_tokens(tokens);
    let parser = Parser::new(dialect)
        .with_recursion_limit(PARSER_RECURSION_LIMIT)
        .with_tokens_with_locations(tokens);
    if parser.peek_token_ref().token == Token::EOF {
        return Err(error(
            empty_message,
            Span {
                line: 1,
                column: 1,
                end_column: 1,
            },
        ));
    }
    Ok((parser, cx))
}

/// Converts a sqlparser expression; `depth` counts the enclosing nodes.
///
/// This function only dispatches: the work is done in helpers so that the
/// frames of the recursion stay small (a debug build gives every temporary of a
/// function its own stack slot).
fn convert(e: &ast::Expr, cx: Cx) -> Result<Expr, ParseError> {
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
        // `x AT TIME ZONE z` is PostgreSQL's `timezone(z, x)`.
        E::AtTimeZone {
            timestamp,
            time_zone,
        } => binary_call("timezone", time_zone, timestamp, d),
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
        E::CompoundIdentifier(idents) => compound_identifier(idents),
        E::CompoundFieldAccess { root, access_chain } => field_access(e, root, access_chain, d),
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
        E::InSubquery { .. } => "IN (subquery) is not supported",
        E::InUnnest { .. } => "IN UNNEST is not supported",
        E::RLike { .. } => "RLIKE/REGEXP is not supported",
        _ => return Err(unsupported(e, d)),
    };
    Err(error(message, shallow_span(e, d)))
}

/// A call of a special form's operands (`CEIL`, `SUBSTRING`, `TRIM`, `LIKE … ESCAPE`),
/// spanning the whole node.
fn special_call<'a>(
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
fn binary_call(name: &str, a: &ast::Expr, b: &ast::Expr, d: Cx) -> Result<Expr, ParseError> {
    let (a, b) = (convert(a, d)?, convert(b, d)?);
    let at = a.span.union(b.span);
    Ok(Expr::call(name, vec![a, b]).with_span(at))
}

#[cfg(test)]
mod tests {
    use arrow_schema::{DataType, TimeUnit};

    use super::test_util::{err, message, p};
    use super::*;
    use crate::expr::{call, col, lit, null};
    use crate::scalar::ScalarValue;
    use crate::types::SQL_TIME_ZONE;

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
    fn at_time_zone_is_a_call_of_timezone() {
        assert_eq!(
            p("ts AT TIME ZONE 'UTC' > x"),
            call("timezone", vec![lit("UTC"), col("ts")]).gt(col("x"))
        );
    }

    #[test]
    fn qualified_names_and_subscripts_are_struct_fields() {
        assert_eq!(p("s.a"), col("s").field("a"));
        assert_eq!(p("s.a.b > 1"), col("s").field("a").field("b").gt(lit(1i64)));
        assert_eq!(p("\"s\".\"a.b\""), col("s").field("a.b"));
        assert_eq!(p("s['a']"), col("s").field("a"));
        assert_eq!(p("s.a['b c']"), col("s").field("a").field("b c"));
        assert_eq!(err("1 + s[1]").0, "list element access (x[i], x[a:b]) is not supported yet: a subscript must be a quoted field name, as s['f']");
        for text in ["s.a", "s.a.b", "\"s\".\"a.b\"", "\"s t\".\"select\""] {
            assert_eq!(p(&p(text).to_string()), p(text), "{text}");
        }
    }

    #[test]
    fn deep_operator_chains_are_an_error_not_a_crash() {
        let text = vec!["x"; 2000].join(" + ");

        assert!(message(&text).starts_with("the expression is nested too deeply"));
        let text = format!("{}x{}", "(".repeat(5000), ")".repeat(5000));
        assert!(message(&text).starts_with("the expression is nested too deeply"));
        let text = vec!["x"; 200].join(" + ");
        assert!(parse_expr(&text).is_ok());
    }

    #[test]
    fn size_limit_is_checked() {
        let items = |n: usize| (0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
        // `x IN (…)` with k items has k + 2 nodes.
        let at_limit = format!("x IN ({})", items(expr::MAX_NODES - 2));
        assert_eq!(p(&at_limit).size().0, expr::MAX_NODES);
        let over = format!("x IN ({})", items(expr::MAX_NODES - 1));
        let err = parse_expr(&over).unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "expression too large: {} nodes (limit {})",
                expr::MAX_NODES + 1,
                expr::MAX_NODES
            )
        );
    }

    #[test]
    fn empty_input() {
        assert_eq!(message(""), "empty expression");
        assert_eq!(message("  \n "), "empty expression");
        assert_eq!(message("-- just a comment"), "empty expression");
    }

    #[test]
    fn select_lists() {
        assert_eq!(
            parse_select_list("a, b * 2 AS x, abs(c)").unwrap(),
            vec![
                (col("a"), None),
                (col("b").mul(lit(2i64)), Some("x".into())),
                (call("abs", vec![col("c")]), None),
            ]
        );
        assert_eq!(
            parse_select_list("a AS \"My A\", b B").unwrap(),
            vec![
                (col("a"), Some("My A".into())),
                (col("b"), Some("B".into()))
            ]
        );
        let error = parse_select_list("a, *").unwrap_err();
        assert_eq!(error.message, "a select list item must be an expression");
        assert_eq!(error.span.column, 4);
        let error = parse_select_list("t.*").unwrap_err();
        assert_eq!(error.message, "a select list item must be an expression");
        assert_eq!(
            parse_select_list(" ").unwrap_err().message,
            "empty select list"
        );
        assert_eq!(
            parse_select_list("a, b c d").unwrap_err().message,
            "Expected: end of expression, found: d"
        );
        assert_eq!(
            parse_select_list("a, t.b").unwrap()[1],
            (col("t").field("b"), None)
        );
    }

    #[test]
    fn display_round_trips_examples() {
        for e in [
            lit(i64::MIN),
            lit(-0.0f64),
            lit(1.5f64),
            lit(ScalarValue::Decimal128(125, 3, 2)),
            lit(ScalarValue::Decimal128(-125, 3, 2)),
            lit(ScalarValue::Decimal128(125, 15, 2)),
            lit(ScalarValue::Decimal128(-5, 38, 10)),
            lit(ScalarValue::Decimal128(5, 1, 0)),
            lit(ScalarValue::Decimal256(
                arrow::datatypes::i256::from_i128(-12345),
                50,
                3,
            )),
            lit(f64::NAN),
            lit(f32::NEG_INFINITY),
            lit(1e300),
            lit(5e-324),
            lit(u32::MAX),
            lit(u64::MAX),
            lit(i8::MIN),
            lit("it's"),
            lit(ScalarValue::Date32(-1)),
            lit(ScalarValue::Timestamp(
                -1,
                TimeUnit::Nanosecond,
                Some(SQL_TIME_ZONE.into()),
            )),
            lit(ScalarValue::Timestamp(1, TimeUnit::Second, None)),
            lit(ScalarValue::Null(DataType::Timestamp(
                TimeUnit::Millisecond,
                None,
            ))),
            null(),
            lit(5i64).neg(),
            lit(-5i64).neg(),
            col("select").is_null(),
            col("x").cast(DataType::UInt32),
            lit(ScalarValue::Null(DataType::Int32)).cast(DataType::Int64),
            call("is_true", vec![col("x")]).not(),
            col("x").like(lit("a%")).not(),
            lit(ScalarValue::IntervalMonthDayNano(
                arrow::datatypes::IntervalMonthDayNano::MIN,
            )),
            lit(ScalarValue::IntervalMonthDayNano(
                arrow::datatypes::IntervalMonthDayNano::MAX,
            )),
            lit(ScalarValue::IntervalMonthDayNano(
                arrow::datatypes::IntervalMonthDayNano::new(-1, 1, -1),
            )),
            col("x").try_cast(DataType::Utf8),
            col("a").concat(col("b").concat(col("c"))),
            call(
                "power",
                vec![call("power", vec![col("a"), col("b")]), col("c")],
            ),
        ] {
            let text = e.to_string();
            assert_eq!(parse_expr(&text), Ok(e), "{text}");
        }
        assert_eq!(lit(7u32).to_string(), "UINT32 '7'");
    }

    /// The nesting limit is 256 levels (a leaf counts as one), whatever nests
    /// (sqlparser's own limit, 50 by default, used to cut `NOT` and `CASE` short
    /// without a position).
    #[test]
    fn the_nesting_limit_is_256_for_not_case_and_parentheses() {
        let nots = |n: usize| format!("{}x", "NOT ".repeat(n));
        assert!(parse_expr(&nots(50)).is_ok());
        assert!(parse_expr(&nots(255)).is_ok());
        let (msg, (column, _)) = err(&nots(256));
        assert_eq!(
            msg,
            "the expression is nested too deeply (more than 256 levels)"
        );
        assert_eq!(column, 4 * 256 + 1, "points at the operand past the limit");
        let cases = |n: usize| format!("{}x{}", "CASE WHEN ".repeat(n), " THEN 1 END".repeat(n));
        assert!(parse_expr(&cases(50)).is_ok());
        assert!(parse_expr(&cases(255)).is_ok());
        let (msg, (column, _)) = err(&cases(256));
        assert!(
            msg.starts_with("the expression is nested too deeply"),
            "{msg}"
        );
        assert_eq!(column, 10 * 256 + 1, "points at the operand past the limit");
        let parens = |n: usize| format!("{}NOT x{}", "NOT (".repeat(n), ")".repeat(n));
        assert!(parse_expr(&parens(254)).is_ok());
        let (msg, _) = err(&parens(255));
        assert!(
            msg.starts_with("the expression is nested too deeply"),
            "{msg}"
        );
        // Redundant parentheses do not nest the tree, up to sqlparser's limit.
        let redundant = |n: usize| format!("{}x{}", "(".repeat(n), ")".repeat(n));
        assert_eq!(p(&redundant(500)), col("x"));
        let (msg, (column, _)) = err(&redundant(5000));
        assert!(
            msg.starts_with("the expression is nested too deeply"),
            "{msg}"
        );
        assert!(
            column > 1000,
            "points into the input, not at its start: {column}"
        );
    }
}
